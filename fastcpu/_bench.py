"""fastcpu.bench(): time a method, or a user's C function, in the C harness;
fastcpu.bench_diff(): the differencing estimate from one interleaved
measurement at 2k and k copies."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Union

from . import _core, _norseq
from ._affinity import check_cpu, pinned
from ._bracket import bracket_cycles_per_tick, closing_samples, opening_samples
from ._clock import Clock
from ._clock import clock as clock_facts
from ._methods import method_info
from ._result import BenchResult, DiffResult
from ._selftest import harness_bias

__all__ = ["bench", "bench_diff", "RUNS_MAX", "UNROLL_MAX", "SERIALIZE_MODES", "CLOCKS", "Method"]

RUNS_MAX: int = _core.RUNS_MAX
UNROLL_MAX: int = _core.UNROLL_MAX
SERIALIZE_MODES: tuple[str, ...] = _core.SERIALIZE_MODES
#: What a run can be timed with: the TSC, or the PMU's core-cycle counter.
CLOCKS: tuple[str, ...] = ("tsc", "pmu")

#: A method name, a ctypes function pointer or the integer address of a C
#: function ``unsigned fn(void)``.
Method = Union[str, "ctypes._CFuncPtr", int]


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _check_serialize(serialize: object) -> str:
    if not isinstance(serialize, str):
        raise TypeError(f"serialize must be a str, not {type(serialize).__name__}")
    if serialize not in SERIALIZE_MODES:
        raise ValueError(
            f"unknown serialize mode {serialize!r}: use one of {', '.join(SERIALIZE_MODES)}"
        )
    return serialize


def _check_clock(clock: object, serialize: str) -> str:
    if not isinstance(clock, str):
        raise TypeError(f"clock must be a str, not {type(clock).__name__}")
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r}: use 'tsc' or 'pmu'")
    if clock == "pmu" and serialize == "rdtscp":
        raise ValueError("serialize='rdtscp' reads the TSC: with clock='pmu' use 'lfence' or 'cpuid'")
    return clock


def _check_signature(fn: object) -> None:
    """Refuse ctypes prototypes that cannot be ``unsigned fn(void)``.

    Calling a function that takes arguments without them, or one that returns
    a structure (through a hidden pointer argument), would read or write
    through garbage: refuse them rather than crash.
    """
    argtypes = getattr(fn, "argtypes", None)
    if argtypes:
        raise TypeError(
            f"a user function must take no arguments (unsigned fn(void)); this one "
            f"declares argtypes {argtypes!r}"
        )
    restype = getattr(fn, "restype", None)
    if isinstance(restype, type) and issubclass(restype, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        raise TypeError(
            f"a user function must return an integer (unsigned fn(void)), not {restype.__name__}"
        )


def _user_address(fn: object) -> tuple[int, str]:
    """The address and display name of a user function."""
    if isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        _check_signature(fn)
        address = ctypes.cast(fn, ctypes.c_void_p).value or 0
        name = getattr(fn, "__name__", None) or f"0x{address:x}"
    else:
        address = fn  # type: ignore[assignment]
        if not 0 < address < 1 << 64:
            raise ValueError(f"a function address must be in 1..2**64-1, not {address}")
        name = f"0x{address:x}"
    if address == 0:
        raise ValueError("the ctypes function pointer is NULL")
    return address, f"user:{name}"


def _resolve(method: object) -> tuple[str, str | int]:
    """(display name, what _core takes: a method's name or a function address)."""
    if isinstance(method, str):
        info = method_info(method)
        if not info.available:
            raise _core.Unsupported(f"{info.name}: {info.reason}")
        return info.name, info.name
    if isinstance(method, (int, ctypes._CFuncPtr)) and not isinstance(method, bool):  # type: ignore[attr-defined]
        address, name = _user_address(method)
        return name, address
    raise TypeError(
        "method must be a method name (str), a ctypes function pointer or an "
        f"int address, not {type(method).__name__}"
    )


def _units(clk: Clock, scope: str | None) -> tuple[float, float, int, str]:
    """(Hz, core cycles per tick, step in ticks, clock name) of what was read."""
    if scope is None:
        return clk.tsc_hz, clk.cycles_per_tick, clk.tsc_step_ticks, "tsc"
    # The counter counts core cycles: a "tick" is a cycle, at the core clock.
    return clk.core_hz, 1.0, 1, "pmu" if scope == "all" else "pmu_user"


def _run_pinned(
    method: Method, cpu: int | None, clock: str, run: Callable[[str | int], tuple]
) -> tuple[str, tuple, tuple[float, float, int, str]]:
    """Resolve `method`, pin to `cpu` (restored afterwards), open the PMU
    counter when asked, and call `run` with the method's name or address:
    (display name, what `run` returned, the units of what was read)."""
    if cpu is not None:
        check_cpu(cpu)
    name, target = _resolve(method)
    clk = clock_facts()
    with pinned(cpu):
        scope = _core.pmu_open() if clock == "pmu" else None
        arrays = run(target)
    return name, arrays, _units(clk, scope)


def bench(
    method: Method,
    runs: int = 1000,
    *,
    serialize: str = "lfence",
    unroll: int = 1,
    cpu: int | None = None,
    clock: str = "tsc",
) -> BenchResult:
    """Time `runs` single executions of `method`, each against the empty sequence.

    Args:
        method: a name from :func:`fastcpu.methods` (``'sidt'``, ``'rdpid'``,
            ...) or :func:`fastcpu.calibration_methods` (``'add_chain_100'``),
            or a user C function given as a ctypes function pointer or an
            integer address (see "User functions" below).
        runs: timed runs, 1 to ``RUNS_MAX``. Each run times the method once
            and the empty sequence once, interleaved.
        serialize: ``'lfence'`` (start ``lfence; rdtsc; lfence``, end
            ``rdtscp; lfence``), ``'cpuid'`` (Intel's white paper: start
            ``cpuid; rdtsc``, end ``rdtscp; cpuid``) or ``'rdtscp'``
            (``rdtscp; lfence`` at both ends).
        unroll: back-to-back copies per run, 1 to ``UNROLL_MAX``; ``best`` and
            ``median`` are then per copy (a throughput figure).
        cpu: pin this thread to that CPU for the call, restoring its affinity
            afterwards, even on error.
        clock: ``'tsc'`` (the default) or ``'pmu'``: read the PMU's core-cycle
            counter with ``rdpmc`` instead of the TSC, with the same fencing
            (``'lfence'``: ``lfence; rdpmc; lfence`` at both ends; ``'cpuid'``:
            start ``cpuid; rdpmc``, end ``lfence; rdpmc; cpuid``). Needs
            perf_event_open with user-space rdpmc; every figure of the result
            is then in core cycles (see :attr:`BenchResult.clock`).

    User functions:
        The signature is ``unsigned fn(void)`` (C), i.e.
        ``ctypes.CFUNCTYPE(ctypes.c_uint)``; the value returned is ignored,
        so any function taking no arguments and returning an integer,
        pointer or nothing (``void``) will do, e.g. libc's ``getpid``. It is
        timed through an indirect call (``unroll`` calls per run) against
        an empty function called the same way, from a call site of its own.
        A body of more than about 10-16 core cycles hides the call and
        return that the empty function pays, so the raw difference reads
        that much short; with one copy the estimate is corrected by the
        user path's bias from :func:`fastcpu.selftest` (out-of-line chain
        functions), which is right from about 16 core cycles on. A shorter
        body reads as the call's overhead (about 10 core cycles on an AMD
        Zen 3 guest); :func:`bench_diff` cancels the call entirely. The function is called
        from the calling thread with the GIL released, many times (64
        warm-up runs, then `runs`): it must be safe to call repeatedly, must
        not unwind (no C++ exceptions, no longjmp out) and should not block.
        A ctypes callback wrapping a Python function works (it takes the
        GIL itself) but times the interpreter, and ctypes reports and
        ignores any exception raised in it, KeyboardInterrupt included: such
        a measurement cannot be stopped with Ctrl-C. ctypes prototypes declaring
        arguments, or returning a structure, are refused with TypeError, and
        any address (ctypes or integer) outside the process's executable
        mappings (``/proc/self/maps``) with ValueError. An address inside one
        that is not the start of a function ``unsigned fn(void)``, or a
        library unloaded by another thread during the call, still crashes
        the process: fastcpu cannot check more.

    Harness bias:
        With one copy per run (``unroll=1``) on the TSC, the recommended
        estimate is corrected by the harness's own bias on this host, as
        :func:`fastcpu.selftest` measures it on the calibration chains
        (inline chains for a method, out-of-line chain functions for a user
        function; measured on first use per mode and path, tens of ms), and
        its interval includes the correction's uncertainty (see
        :attr:`BenchResult.harness_bias_core_cycles`). best and median are
        never corrected. Core cycles are converted with a cycles-per-tick
        measured just before and after the runs.

    Returns:
        A :class:`BenchResult` with raw per-run TSC ticks, best and median,
        the recommended :attr:`~BenchResult.estimate` with its 95% interval,
        and a stability report (:attr:`~BenchResult.warnings`), all in TSC
        ticks with ns and core-cycle conversions.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an argument is out of range or names no method, or a
            user function's address is not in an executable mapping.
        fastcpu.Unsupported: the method, or ``clock='pmu'``, cannot run on
            this machine (the message says why).
        fastcpu.Error: `cpu` was given but this thread may not be pinned to
            it (sched_setaffinity denied: a seccomp filter, a container);
            the message says why.
    """
    return _bench(method, runs, serialize=serialize, unroll=unroll, cpu=cpu, clock=clock, correct=True)


def _bench(
    method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None, clock: str, correct: bool
) -> BenchResult:
    """bench(), with the harness-bias correction optional (the self-test
    measures the uncorrected harness)."""
    runs = _check_int("runs", runs, 1, RUNS_MAX)
    unroll = _check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = _check_serialize(serialize)
    clock = _check_clock(clock, serialize)
    brackets: list[list[float]] = []

    def run(target: str | int) -> tuple:
        if target == _norseq.NAME:  # runs from a child without rseq (_norseq.py)
            return _norseq.run("bench", (runs, serialize, unroll, clock), clock)
        core = _core.bench if isinstance(target, str) else _core.bench_address
        if clock != "tsc":
            return core(target, runs, serialize, unroll, clock)
        # the core clock at the moment of measurement: one add chain on each side
        brackets.append(opening_samples())
        arrays = core(target, runs, serialize, unroll, clock)
        brackets.append(closing_samples())
        return arrays

    name, (raw, empty, migrated, best, median), units = _run_pinned(method, cpu, clock, run)
    tsc_hz, cycles_per_tick, step, clock_name = units
    cycles_per_tick_ci95 = 0.0
    if brackets:
        cycles_per_tick, cycles_per_tick_ci95 = bracket_cycles_per_tick(*brackets)
    bias = bias_ci = 0.0
    # the self-test measures single copies on the TSC: its correction is for those
    if correct and clock == "tsc" and unroll == 1:
        bias, bias_ci = harness_bias("inline" if isinstance(method, str) else "user", serialize, cpu)
    return BenchResult(
        method=name,
        runs=runs,
        serialize=serialize,
        unroll=unroll,
        cpu=cpu,
        raw=raw,
        empty=empty,
        migrated=migrated,
        best=best,
        median=median,
        tsc_hz=tsc_hz,
        cycles_per_tick=cycles_per_tick,
        tsc_step_ticks=step,
        clock=clock_name,
        harness_bias_core_cycles=bias,
        harness_bias_ci95_core_cycles=bias_ci,
        cycles_per_tick_ci95=cycles_per_tick_ci95,
    )


def bench_diff(
    method: Method,
    runs: int = 1000,
    *,
    k: int = 16,
    serialize: str = "lfence",
    cpu: int | None = None,
    clock: str = "tsc",
) -> DiffResult:
    """The differencing estimate: runs of `2k` and of `k` copies of the same
    sequence, interleaved in pairs like :func:`bench`'s method and empty runs
    (in alternating order), and ``mean((long - short) / k)`` over the pairs
    (outliers fenced, migrated pairs left out) per copy.

    Whatever the harness adds or hides once per run (the fences, the part of
    a latency that overlaps them) cancels, and the per-copy step is k times
    finer than the clock's. Both sides run the copy loop (hence k >= 2: one
    copy is timed without a loop), so its set-up cancels too. For a
    throughput-bound sequence the copies overlap and the figure is a
    throughput; for a dependent chain (the calibration chains continue from
    copy to copy) it is the latency. The loop's own cost (about 1-1.5 core
    cycles per copy here) overlaps the body: a body faster than that reads
    as the loop.

    Args:
        method, serialize, cpu, clock: as for :func:`bench` (user functions
            included).
        runs: timed pairs of runs (one at 2k copies, one at k).
        k: copies per run of the short side, 2 to ``UNROLL_MAX // 2``.

    Returns:
        A :class:`DiffResult` with ``estimate`` and ``estimate_ci95`` in TSC
        ticks per copy (and conversions), and both sides' raw runs.

    Raises:
        As :func:`bench`.
    """
    runs = _check_int("runs", runs, 1, RUNS_MAX)
    k = _check_int("k", k, 2, UNROLL_MAX // 2)
    serialize = _check_serialize(serialize)
    clock = _check_clock(clock, serialize)
    def run(target: str | int) -> tuple:
        if target == _norseq.NAME:  # runs from a child without rseq (_norseq.py)
            return _norseq.run("bench_diff", (runs, serialize, k, clock), clock)
        return _core.bench_diff(target, runs, serialize, k, clock)

    name, (long, short, migrated), units = _run_pinned(method, cpu, clock, run)
    tsc_hz, cycles_per_tick, step, clock_name = units
    return DiffResult(
        method=name,
        runs=runs,
        serialize=serialize,
        k=k,
        cpu=cpu,
        long=long,
        short=short,
        migrated=migrated,
        tsc_hz=tsc_hz,
        cycles_per_tick=cycles_per_tick,
        tsc_step_ticks=step,
        clock=clock_name,
    )
