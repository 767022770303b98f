"""Results: every method measured on one machine, with that machine's facts.

:func:`measure` produces one; :meth:`Results.save` and :func:`fastcpu.load`
move it through a file (see ``_resultfile.py`` for the format).
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Union

import numpy as np

from . import _core
from ._affinity import check_cpu
from ._bench import RUNS_MAX, UNROLL_MAX, _check_int, _check_serialize, bench
from ._clock import Clock, clock
from ._machine import machine_info
from ._methods import MethodInfo, canonical_name, method_info, methods as all_methods
from ._result import BenchResult
from ._selftest import SelfTest
from ._selftest import selftest as run_selftest
from ._table import format_clock, format_table

__all__ = ["Results", "measure", "Progress"]

#: ``progress(done, total, method)``: called before each method is measured
#: (``done`` methods finished out of ``total``) and once at the end with
#: ``done == total`` and ``method`` ``None``.
Progress = Callable[[int, int, Union[str, None]], None]


def _json_normal(value: object, what: str) -> object:
    """`value` as it reads back from JSON (int keys become str), or ValueError."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must hold only JSON values (str, int, float, bool, None, "
                         f"lists, dicts): {exc}") from None


def utc_now() -> str:
    """The current UTC time as ISO 8601, to the second (``2025-01-31T12:00:00Z``)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def _same_arrays(a: BenchResult, b: BenchResult) -> bool:
    return all(
        x.dtype == y.dtype and np.array_equal(x, y)
        for x, y in ((a.raw, b.raw), (a.empty, b.empty), (a.migrated, b.migrated))
    )


def same_bench_result(a: BenchResult, b: BenchResult) -> bool:
    """Whether two BenchResults hold the same settings, clock and arrays."""
    settings = ("method", "runs", "serialize", "unroll", "cpu", "best", "median",
                "tsc_hz", "cycles_per_tick", "tsc_step_ticks")
    return all(getattr(a, s) == getattr(b, s) for s in settings) and _same_arrays(a, b)


@dataclass(frozen=True, eq=False)
class Results(Mapping[str, BenchResult]):
    """Every method measured on one machine, with the machine's facts.

    A read-only mapping from method name to :class:`BenchResult`, in the order
    measured. Two Results are equal when their metadata and every array are.

    Attributes:
        results: method name -> BenchResult (raw per-run TSC ticks).
        machine: facts about the machine (``fastcpu._machine.machine_info()``:
            CPU vendor, model, family/model/stepping, microcode, flags,
            kernel, glibc, hypervisor, governors, boost, affinity, isolated
            CPUs, ...), as JSON values.
        clock: what a TSC tick was worth there (``tsc_hz``, ``tsc_step_ticks``,
            ``cycles_per_tick``); every result was converted with it.
        serialize: the serialization mode of every result.
        date: when it was measured, ISO 8601 UTC (``2025-01-31T12:00:00Z``).
        label: a free-form name for the machine (``None``: use the model
            name and host name).
        fastcpu_version: the fastcpu that measured it.
        unavailable: methods asked for but not runnable there -> the reason.
        selftest: the harness self-test made with the measurement (its bias
            corrections are in the results' estimates), or ``None``.
    """

    results: Mapping[str, BenchResult]
    machine: Mapping[str, object]
    clock: Clock
    serialize: str
    date: str
    label: str | None = None
    fastcpu_version: str = ""
    unavailable: Mapping[str, str] = field(default_factory=dict)
    selftest: SelfTest | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.clock, Clock):
            raise TypeError(f"clock must be a fastcpu.Clock, not {type(self.clock).__name__}")
        if self.label is not None and not isinstance(self.label, str):
            raise TypeError(f"label must be a str or None, not {type(self.label).__name__}")
        results: dict[str, BenchResult] = {}
        for name, r in dict(self.results).items():
            if not isinstance(r, BenchResult):
                raise TypeError(f"results[{name!r}] must be a BenchResult, not {type(r).__name__}")
            if name != r.method:
                raise ValueError(f"results[{name!r}] holds method {r.method!r}: key it by its method")
            if r.serialize != self.serialize:
                raise ValueError(f"{name}: measured with serialize={r.serialize!r}, "
                                 f"not the file's {self.serialize!r}")
            # each result's cycles_per_tick is its own (measured around it)
            if (r.tsc_hz, r.tsc_step_ticks) != (self.clock.tsc_hz, self.clock.tsc_step_ticks):
                raise ValueError(f"{name}: its clock differs from the Results' clock; "
                                 "put results of one clock together")
            results[name] = r
        unavailable = {str(k): str(v) for k, v in dict(self.unavailable).items()}
        machine = _json_normal(dict(self.machine), "machine")
        object.__setattr__(self, "results", MappingProxyType(results))
        object.__setattr__(self, "unavailable", MappingProxyType(unavailable))
        object.__setattr__(self, "machine", MappingProxyType(machine))  # type: ignore[arg-type]

    # -- the mapping ---------------------------------------------------------
    def __getitem__(self, method: str) -> BenchResult:
        try:
            return self.results[canonical_name(method) if isinstance(method, str) else method]
        except KeyError:
            raise KeyError(f"{method!r} was not measured here; measured: "
                           f"{', '.join(self.results) or 'nothing'}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Results):
            return NotImplemented
        meta = ("machine", "clock", "serialize", "date", "label", "fastcpu_version", "unavailable",
                "selftest")
        if any(getattr(self, m) != getattr(other, m) for m in meta):
            return False
        if list(self.results) != list(other.results):
            return False
        return all(same_bench_result(self.results[k], other.results[k]) for k in self.results)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        # The read-only views cannot be pickled; rebuild from plain dicts.
        return (Results, (dict(self.results), dict(self.machine), self.clock, self.serialize,
                          self.date, self.label, self.fastcpu_version, dict(self.unavailable),
                          self.selftest))

    # -- reading -------------------------------------------------------------
    @property
    def name(self) -> str:
        """The label, else ``'MODEL NAME on HOSTNAME'`` from the machine facts."""
        if self.label:
            return self.label
        model = self.machine.get("model_name") or "unknown CPU"
        host = self.machine.get("hostname")
        return f"{model} on {host}" if host else str(model)

    def table(self) -> str:
        """The seed-style BEST/MEDIAN table (above the empty sequence, per copy)."""
        return format_table(self.results.values(), self.unavailable.items())

    def __repr__(self) -> str:
        return (f"<fastcpu.Results {self.name!r}: {len(self)} methods, "
                f"serialize={self.serialize}, {self.date}>")

    def __str__(self) -> str:
        runs = sorted({r.runs for r in self.results.values()})
        return "\n".join([
            f"{self.name}, measured {self.date} with fastcpu {self.fastcpu_version}, "
            f"{'/'.join(map(str, runs)) or 0} runs per method, serialize={self.serialize}",
            format_clock(self.clock),
            *(self.selftest.lines() if self.selftest is not None else []),
            "",
            self.table(),
        ])

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> None:
        """Write one portable, versioned file (JSON; gzip-compressed if `path` ends in ``.gz``).

        The write is atomic: a temporary file in the same directory is
        written, synced and renamed over `path`, so `path` holds either the
        old contents or the complete new file, never a torn one. The
        temporary file is hidden and says what it is and who wrote it
        (``.NAME.fastcpu-save-PID-XXXXXXXX.tmp``); one left by a save that
        was killed (SIGKILL, power loss) is removed by the next save to the
        same `path`, once no process with that pid runs.

        Raises:
            TypeError: `path` is not a str or os.PathLike, or `overwrite` not a bool.
            ValueError: `path` is empty, a symbolic link, or names something
                other than a regular file (a device, a FIFO).
            FileExistsError: `path` exists and `overwrite` is false.
            IsADirectoryError: `path` is a directory.
            FileNotFoundError: its directory does not exist.
            OSError: the directory cannot be written.
        """
        from ._resultfile import save

        save(self, path, overwrite=overwrite)


def _chosen_methods(names: object) -> list[MethodInfo]:
    if names is None:
        return [m for m in all_methods() if m.name != "empty"]
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, Iterable):
        raise TypeError(f"methods must be a list of method names or None, not {type(names).__name__}")
    chosen = [method_info(n) for n in names]  # TypeError / ValueError with suggestions
    if not chosen:
        raise ValueError("methods is empty: name at least one method, or pass None for all")
    seen: set[str] = set()
    for m in chosen:
        if m.name in seen:
            raise ValueError(f"method {m.name!r} is named twice: name each once")
        seen.add(m.name)
    return chosen


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
) -> Results:
    """Time every available method (or those named) and record the machine.

    Each method is one :func:`fastcpu.bench` call with these settings. A
    named method this machine cannot run is recorded in
    ``Results.unavailable`` with the reason instead of raising, so one script
    serves every machine.

    Args:
        runs: timed runs per method, 1 to ``RUNS_MAX``.
        methods: method names, or ``None`` for every method but ``'empty'``.
        serialize: ``'lfence'``, ``'cpuid'`` or ``'rdtscp'`` (see ``bench``).
        unroll: back-to-back copies per run, 1 to ``UNROLL_MAX``.
        cpu: pin the measuring thread to this CPU (restored afterwards).
        progress: ``progress(done, total, method)``, called before each
            method and once at the end (``method`` ``None``).
        label: a free-form name for the machine, kept in the file.
        selftest: run :func:`fastcpu.selftest` for this mode first (well
            under a second in 'lfence' mode): its bias corrections go into
            the estimates and its report into ``Results.selftest``.

    Raises:
        TypeError, ValueError: a bad argument (checked before measuring).
        fastcpu.Unsupported: no method at all can run here.
        fastcpu.Error: `cpu` was given but this thread may not be pinned to
            it (sched_setaffinity denied); the message says why.
    """
    runs = _check_int("runs", runs, 1, RUNS_MAX)
    unroll = _check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = _check_serialize(serialize)
    if cpu is not None:
        check_cpu(cpu)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None, not {type(progress).__name__}")
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label must be a str or None, not {type(label).__name__}")
    chosen = _chosen_methods(methods)
    todo = [m for m in chosen if m.available]
    if not todo:
        raise _core.Unsupported(
            "none of the methods can run here: "
            + "; ".join(f"{m.name}: {m.reason}" for m in chosen)
        )

    clk = clock()
    date = utc_now()
    machine = machine_info()
    if not isinstance(selftest, bool):
        raise TypeError(f"selftest must be a bool, not {type(selftest).__name__}")
    report = run_selftest(serialize=serialize, cpu=cpu) if selftest and unroll == 1 else None
    results = {}
    for done, m in enumerate(todo):
        if progress is not None:
            progress(done, len(todo), m.name)
        results[m.name] = bench(m.name, runs, serialize=serialize, unroll=unroll, cpu=cpu)
    if progress is not None:
        progress(len(todo), len(todo), None)
    from . import __version__

    return Results(
        results=results,
        machine=machine,
        clock=clk,
        serialize=serialize,
        date=date,
        label=label,
        fastcpu_version=__version__,
        unavailable={m.name: m.reason or "not available" for m in chosen if not m.available},
        selftest=report,
    )
