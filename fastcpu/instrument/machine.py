"""fastcpu.measure(): every method on this machine, both questions, the self-test and the
machine's facts (/proc, /sys and the C core's CPUID facts) in one Results."""

from __future__ import annotations

import platform
import datetime
from collections.abc import Callable, Iterable
from typing import NoReturn, Union

from .. import _core
from ..results.stability import affinity, boost_enabled, cpu_governors, cpuinfo_first, glibc_version, isolated_cpus, parse_cpu_list, read_text
from .._args import RUNS_MAX, UNROLL_MAX, check_counter, check_cpu, check_int, check_label, check_method_names, check_serialize
from .timing import bench, bench_diff
from .harness import runner
from .timebase import Clock, clock, one_clock
from .catalog import MethodInfo, method_info, methods_named
from .catalog import methods as all_methods
from .cpu import check
from .._core import Error
from ..results.results import CpuVerdict, Results, infer_cpu_verdict
from .bias import selftest as run_selftest
from .._base import __version__

__all__ = ['machine_info', 'measure', 'Progress', 'chosen_methods', 'utc_now', 'BACK_TO_BACK_K']


_SYS_CPU = "/sys/devices/system/cpu"

#: features() entries that say nothing of the machine: whether the private
#: test hooks (FASTCPU_TEST_*) are set.
_NOT_MACHINE_FACTS = frozenset({"test_hooks"})


def machine_info() -> dict[str, object]:
    """Everything fastcpu records about this machine, as JSON-ready values."""
    cpu = cpuinfo_first()
    feats = _core.features()
    flags = set(cpu.get("flags", "").split())
    return {
        "vendor": cpu.get("vendor_id"),
        "model_name": cpu.get("model name"),
        "family": int(cpu["cpu family"]) if "cpu family" in cpu else None,
        "model": int(cpu["model"]) if "model" in cpu else None,
        "stepping": int(cpu["stepping"]) if cpu.get("stepping", "").isdigit() else None,
        "microcode": cpu.get("microcode"),
        # every yes-or-no fact the C core decides availability from (a new
        # one is recorded with no edit here), and the kernel's TSC flags
        "flags": {
            **{k: v for k, v in feats.items() if type(v) is bool and k not in _NOT_MACHINE_FACTS},
            "constant_tsc": "constant_tsc" in flags,
            "nonstop_tsc": "nonstop_tsc" in flags,
        },
        "hypervisor": feats["hypervisor_vendor"] or None,
        "kernel": platform.release(),
        "glibc": glibc_version(),
        "rseq_registered": bool(feats["rseq_registered"]),
        "rseq_size": feats["rseq_size"],
        "online_cpus": parse_cpu_list(read_text(f"{_SYS_CPU}/online")),
        "affinity": affinity(),
        "isolated_cpus": isolated_cpus(),
        "nohz_full": parse_cpu_list(read_text(f"{_SYS_CPU}/nohz_full")),
        "governors": cpu_governors(),
        "boost": boost_enabled(),
        "hostname": platform.node(),
        "python": platform.python_version(),
    }


#: Copies a run of the short side when measure() answers "calls back to
#: back" (the long side has twice as many): bench_diff()'s default.
BACK_TO_BACK_K = 16

#: ``progress(done, total, method)``: called before each method is measured
#: (``done`` methods finished out of ``total``) and once at the end with
#: ``done == total`` and ``method`` ``None``.
Progress = Callable[[int, int, Union[str, None]], None]


def utc_now() -> str:
    """The current UTC time as ISO 8601, to the second (``2025-01-31T12:00:00Z``)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def chosen_methods(names: object, name: str = "methods") -> list[MethodInfo]:
    """The catalog entries of `names` (one str is a list of one), or of every
    method but ``'empty'`` for ``None``; `name` names the argument in messages."""
    if names is None:
        return [m for m in all_methods() if m.name != "empty"]
    return methods_named(check_method_names(names, name, one_str=True))


def measure(
    runs: int = 1000,
    methods: Iterable[str] | str | None = None,
    serialize: str = "lfence",
    *,
    unroll: int = 1,
    cpu: int | None = None,
    progress: Progress | None = None,
    label: str | None = None,
    selftest: bool = True,
    counter: str = "tsc",
    back_to_back: bool = True,
) -> Results:
    """Time every available method (or those named) and record the machine.

    Each method is one :func:`fastcpu.bench` call with these settings. A named method this
    machine cannot run (refused by the catalog, or whose bench() raised
    :class:`fastcpu.Unsupported`) is recorded in ``Results.unavailable`` with the reason, so one
    script serves every machine.

    Args:
        runs: timed runs per method, 1 to ``RUNS_MAX``.
        methods: method names, or ``None`` for every method but ``'empty'``.
        serialize: ``'lfence'``, ``'cpuid'`` or ``'rdtscp'`` (as for ``bench``).
        unroll: back-to-back copies per run, 1 to ``UNROLL_MAX``.
        cpu: pin the measuring thread to this CPU (restored afterwards).
        progress: ``progress(done, total, method)``, called before each method and once at
            the end (``method`` ``None``).
        label: a free-form name for the machine, kept in the file (no lone surrogate).
        selftest: run :func:`fastcpu.selftest` for this mode first (a fraction of a second
            with 'lfence'; seconds with 'cpuid' on a guest): its bias corrections go into the
            single-copy TSC estimates and its report into ``Results.selftest``.
        counter: ``'tsc'`` (the default) or ``'pmu'`` (as for ``bench``).
        back_to_back: also time calls back to back with :func:`fastcpu.bench_diff`
            (``Results.back_to_back``), with ``unroll=1`` only.

    Returns:
        A :class:`Results` holding both questions' answers (``Results.results``,
        ``Results.back_to_back``, ``Results.cheapest_way(question)``) and the machine.

    Raises:
        TypeError, ValueError: a bad argument (checked before measuring).
        fastcpu.Unsupported: no method at all can run here, or ``counter='pmu'`` cannot.
        fastcpu.Error: `cpu` was given but this thread's affinity may not be read or changed
            (sched_getaffinity or sched_setaffinity denied); the message says which.
    """
    runs = check_int("runs", runs, 1, RUNS_MAX)
    unroll = check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = check_serialize(serialize)
    counter = check_counter(counter, serialize)
    if cpu is not None:
        check_cpu(cpu)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None, not {type(progress).__name__}")
    check_label(label)  # before measuring: Results() would refuse it after
    if not isinstance(selftest, bool):
        raise TypeError(f"selftest must be a bool, not {type(selftest).__name__}")
    if not isinstance(back_to_back, bool):
        raise TypeError(f"back_to_back must be a bool, not {type(back_to_back).__name__}")
    chosen = chosen_methods(methods)
    todo = [m for m in chosen if m.available]
    if not todo:
        _none_can_run({m.name: m.reason or "not available" for m in chosen})
    if counter == "pmu":  # the process's counter: once, not as every method's reason
        _core.pmu_open()

    # one clock for every part (a Results holds one): another thread's
    # clock(refresh=True) while this runs changes none of them
    with one_clock(clock()) as clk:
        return _measure(todo, chosen, clk, runs=runs, serialize=serialize, unroll=unroll, cpu=cpu,
                        progress=progress, label=label, selftest=selftest, counter=counter,
                        back_to_back=back_to_back)


def _measure(todo: list[MethodInfo], chosen: list[MethodInfo], clk: Clock, *, runs: int, serialize: str,
             unroll: int, cpu: int | None, progress: Progress | None, label: str | None, selftest: bool,
             counter: str, back_to_back: bool) -> Results:
    """measure()'s work, its arguments checked, on the clock `clk`."""
    date = utc_now()
    machine = machine_info()
    report = run_selftest(serialize=serialize, cpu=cpu) if selftest and unroll == 1 and counter == "tsc" else None
    results = {}
    diffs = {}
    failed: dict[str, str] = {}
    for done, m in enumerate(todo):
        if progress is not None:
            progress(done, len(todo), m.name)
        try:
            results[m.name] = bench(m.name, runs, serialize=serialize, unroll=unroll, cpu=cpu, counter=counter)
            if back_to_back and unroll == 1:
                diffs[m.name] = bench_diff(m.name, runs, k=BACK_TO_BACK_K, serialize=serialize, cpu=cpu,
                                           counter=counter)
        except _core.Unsupported as exc:  # it could not run after all: a reason, not the end
            failed[m.name] = _reason(m.name, exc)
        except _core.Error as exc:
            if not runner(m).separate_process:  # this process's own measurement failed: that is the end
                raise
            # another process (a child) that started but died without answering: its row, not the whole run
            failed[m.name] = _reason(m.name, exc)
    if progress is not None:
        progress(len(todo), len(todo), None)
    # in the order asked for, whether refused up front or when it ran
    unavailable = {m.name: failed[m.name] if m.available else m.reason or "not available"
                   for m in chosen if not m.available or m.name in failed}
    if not results:
        _none_can_run(unavailable)
    return Results(
        results=results,
        machine=machine,
        clock=clk,
        serialize=serialize,
        date=date,
        label=label,
        fastcpu_version=__version__,
        unavailable=unavailable,
        selftest=report,
        cpu_verdicts=cpu_verdicts(list(results), machine),
        back_to_back={name: d for name, d in diffs.items() if name in results},
    )


def cpu_verdicts(names: list[str], machine: dict) -> dict[str, CpuVerdict]:
    """What each of `names` read on the pinned agreement sweep (``check()``): whether it reported
    the CPU, and why; where the sweep cannot run, what the catalog says, with that reason.
    """
    try:
        table = check(names)
    except Error as exc:
        return {n: CpuVerdict((v := infer_cpu_verdict(method_info(n).catalog_row, machine)).reports_cpu,
                              f"{v.why}; the agreement sweep could not run: {exc}") for n in names}
    out = {}
    cpus = ", ".join(map(str, table.cpus))
    for n in names:
        if n in table.not_checked:
            out[n] = CpuVerdict(False, f"no CPU source here: {table.not_checked[n]}")
            continue
        cells = [table.cell(n, c) for c in table.cpus]
        wrong = [a for a in cells if a.outcome == "disagree"]
        failed = [a for a in cells if a.outcome == "error"]
        if wrong:
            out[n] = CpuVerdict(False, "read a wrong CPU: " + "; ".join(
                f"{a.reading.cpu} on CPU {a.cpu}" for a in wrong if a.reading is not None))
        elif failed or not cells:
            out[n] = CpuVerdict(False, "could not read: " + ("; ".join(
                f"CPU {a.cpu}: {a.error}" for a in failed) or "no CPU could be checked"))
        else:
            out[n] = CpuVerdict(True, f"agreed with sched_getcpu() and the getcpu system call on CPU(s) {cpus}")
    return out


def _reason(name: str, exc: Exception) -> str:
    """An Unsupported's message as a reason beside `name` (without the
    ``'name: '`` it starts with)."""
    text = str(exc)
    return text[len(name) + 2:] if text.startswith(f"{name}: ") else text


def _none_can_run(reasons: dict[str, str]) -> NoReturn:
    raise _core.Unsupported(
        "none of the methods can run here: " + "; ".join(f"{name}: {why}" for name, why in reasons.items())
    )
