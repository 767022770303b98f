"""The raw runs and their result: pinning, the target (a catalog row and its one runner, or a
user function), ``_core.time_runs``, the harness bias kept (:func:`kept_bias`), and
:func:`bench_result`, where the harness correction is applied."""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import math
import operator
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple, Union

from .. import _core
from .._args import affinity_mask, check_cpu, denied
from .._core import Error
from . import child as _child_runner
from . import timebase as _conversion
from ..results.values import CatalogRow
from .timebase import Clock, clock as clock_facts
from .catalog import MethodInfo, method_info
from ..results.bench_result import BenchResult, DiffResult
from ..results.parts import ClockMotion, Estimate, HarnessBias, applied, runs_clock

__all__ = ['pinned', 'refused', 'set_affinity', 'Method', 'RawRuns', 'InProcess', 'Runner', 'runner', 'resolve', 'raw_runs', 'read_cpu', 'read_raw', 'rulers_agree', 'bench_result', 'timed', 'timed_diff', 'kept_bias', 'keep_bias', 'failed_verdict', 'set_verdict']


def pinned(cpu: int | None) -> contextlib.AbstractContextManager[None]:
    """Run the body on `cpu` only (this thread), then restore the old mask; ``None`` leaves it alone."""
    return _UNPINNED if cpu is None else _pinned_to(cpu)


_UNPINNED = contextlib.nullcontext()


@contextlib.contextmanager
def _pinned_to(cpu: int) -> Iterator[None]:
    check_cpu(cpu)
    before = affinity_mask(f"pin this thread to CPU {cpu} (its mask is restored afterwards)",
                           "pass cpu=None to stay unpinned")
    set_affinity({cpu}, f"pin this thread to CPU {cpu}")
    try:
        yield
    finally:
        set_affinity(before, "restore this thread's affinity mask")


def set_affinity(cpus: set[int], doing: str) -> None:
    """``os.sched_setaffinity(0, cpus)``.

    Raises:
        fastcpu.Error: the call was denied (EPERM: seccomp, a container) or the kernel refused
            the CPUs (EINVAL: offline, outside the cpuset); the message says which.
    """
    try:
        os.sched_setaffinity(0, cpus)
    except PermissionError as exc:
        raise Error(f"cannot {doing}: {denied('sched_setaffinity', exc)}: pass cpu=None to stay unpinned") from exc
    except (OSError, ValueError, OverflowError) as exc:
        raise Error(f"cannot {doing}: {refused('sched_setaffinity', sorted(cpus), exc)}: pass a CPU of "
                    "os.sched_getaffinity(0), or cpu=None to stay unpinned") from exc


def refused(call: str, cpus: int | list[int], exc: Exception) -> str:
    """Why the kernel refused to pin to `cpus`: ``'the kernel refused CPU 3
    (sched_setaffinity: Invalid argument; offline, or outside ...)'``."""
    which = f"CPU {cpus}" if isinstance(cpus, int) else f"CPU(s) {cpus}"
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    hint = ("; offline, or outside the CPUs this process's cpuset allows"
            if isinstance(exc, OSError) and exc.errno == errno.EINVAL else "")
    return f"the kernel refused {which} ({call}: {why}{hint})"


#: A method name, a ctypes function pointer or the integer address of a C
#: function ``unsigned fn(void)``.
Method = Union[str, "ctypes._CFuncPtr", int]


def _check_signature(fn: object) -> None:
    """Refuse ctypes prototypes that cannot be ``unsigned fn(void)`` (arguments, a structure returned) rather than crash."""
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
        address = operator.index(fn)  # type: ignore[call-overload]  # the plain int: a subclass's comparisons may lie
        if not 0 < address < 1 << 64:
            raise ValueError(f"a function address must be in 1..2**64-1, not {address}")
        name = f"0x{address:x}"
    if address == 0:
        raise ValueError("the ctypes function pointer is NULL")
    return address, f"user:{name}"


@dataclass(frozen=True, slots=True)
class InProcess:
    """The runner of a catalog row this process times, and of a user
    function: the C core, on the calling thread."""

    #: what the C core takes: a row's name or a user function's address
    core: str | int
    #: a failure is this process's own, not one row's alone (``fastcpu.measure()`` stops)
    separate_process = False

    def time_runs(self, runs: int, serialize: str, copies: int, diff: bool, counter: str, timeout_s: float,
                  estimate_step: float | None, /) -> _core.TimedRuns:
        """One ``_core.time_runs`` call, with ruler points between stretches
        of the runs on the TSC (``_conversion.rulers()``)."""
        # estimate_step: the counter's step in counts, for the estimate computed in C (None: none)
        # by position, in _core.time_runs's order (a keyword call builds a dict for every bench())
        rulers = _conversion.rulers() if counter == "tsc" else None
        return _core.time_runs(self.core, runs, serialize, copies, diff, counter, rulers, timeout_s, estimate_step)

    def read_cpu(self) -> tuple[int, int | None, int, bool]:
        return _core.read_cpu(self.core)

    def read(self) -> tuple[int, bool]:
        return _core.read(self.core)


#: Where a target runs: this process, or its catalog row's child interpreter.
Runner = Union[InProcess, _child_runner.InChild]


def runner(row: MethodInfo) -> Runner:
    """Where the catalog row `row` runs, chosen here and nowhere else: in
    its child interpreter where the row says so (``MethodInfo.in_child``:
    ``_child_runner``), else in this process."""
    return _child_runner.InChild(row) if row.in_child else InProcess(row.name)


class Target(NamedTuple):
    """What :func:`resolve` makes of a method."""

    #: the result's name: the method's, or ``'user:NAME'`` for a user function
    name: str
    #: where it runs (:func:`runner`; a user function: in this process)
    runner: Runner
    #: its catalog row (None: a user function, which has none)
    row: MethodInfo | None = None

    @property
    def catalog_row(self) -> CatalogRow | None:
        """The row's words a result carries into its file (None: a user function)."""
        return None if self.row is None else self.row.catalog_row


def resolve(method: object) -> Target:
    """What `method` (a name, a ctypes function pointer or an address) is to
    the harness, and where it runs (:func:`runner`, from its catalog row).

    Raises:
        TypeError, ValueError: `method` names no method or is no function.
        fastcpu.Unsupported: its catalog row cannot run here (the reason).
    """
    if isinstance(method, str):
        known = _resolved.get(method)
        if known is None:  # a method's availability is fixed for the process
            info = method_info(method)
            if not info.available:
                raise _core.Unsupported(f"{info.name}: {info.reason}")
            known = _resolved[method] = Target(info.name, runner(info), info)
        return known
    if isinstance(method, (int, ctypes._CFuncPtr)) and not isinstance(method, bool):  # type: ignore[attr-defined]
        address, name = _user_address(method)
        return Target(name, InProcess(address))
    raise TypeError(
        "method must be a method name (str), a ctypes function pointer or an "
        f"int address, not {type(method).__name__}"
    )


#: Names bench() was given -> what resolve() made of them (bench() resolves
#: on every call).
_resolved: dict[str, Target] = {}


class RawRuns(NamedTuple):
    """What :func:`raw_runs` took: the C core's record of the runs and what
    they were taken with. The one hand-off from measuring to a result
    (:func:`bench_result`); a tuple, made in a fraction of a frozen dataclass's time."""

    #: the result's name (``'user:NAME'`` for a user function)
    name: str
    #: the runs (``_core.TimedRuns``): per-run counts, best and median, and on
    #: the TSC in this process the ruler points and what they say
    measured: _core.TimedRuns
    #: the process's clock (what a TSC tick is worth; its first-use figures)
    clock: Clock
    #: the counter that counted: ``'tsc'``, ``'pmu'`` or, user-mode cycles
    #: only, ``'pmu_user'``
    counter: str
    #: the CPU the thread was pinned to for the runs (a plain int), or None
    cpu: int | None
    #: the method's catalog row (None: a user function)
    catalog_row: CatalogRow | None
    #: ``runs_clock`` of the runs: core cycles per tick, 95% half-width, caveats
    converted: tuple[float, float, tuple[str, ...]]

    @classmethod
    def of(cls, name: str, measured: _core.TimedRuns, clock: Clock, counter: str, cpu: int | None,
           row: CatalogRow | None) -> RawRuns:
        """The record, its conversion worked out once (``runs_clock``) for both readers
        (:func:`rulers_agree`, :func:`bench_result`)."""
        return cls(name, measured, clock, counter, cpu, row, runs_clock(measured.conversion, clock, counter))


def raw_runs(method: object, *, runs: int, serialize: str, copies: int, diff: bool, counter: str,
             cpu: int | None, timeout_s: float = 0.0) -> RawRuns:
    """The raw runs of `method` (a name or a user function): `runs` runs of `copies` copies against
    the empty sequence, or (`diff`) `runs` pairs of 2k against k copies (k = `copies`), counted by
    `counter`, pinned to `cpu` for the call. In this process (``_core.time_runs`` with ruler
    points), or in the row's child interpreter (no ruler points). `timeout_s` bounds a user
    function in seconds (0: none). The caller checks the arguments, but `cpu`.
    """
    target = resolve(method)
    clk = clock_facts()
    # the counter's step in counts, for the estimate the C core computes beside best and median (a
    # child's runner takes it and leaves the estimate to Python)
    step = None if diff else clk.tsc_step_ticks if counter == "tsc" else 1.0
    if cpu is None and counter == "tsc":  # bench()'s common case: nothing to enter or open first
        measured = target.runner.time_runs(runs, serialize, copies, diff, counter, timeout_s, step)
        return RawRuns.of(target.name, measured, clk, counter, cpu, target.catalog_row)
    if cpu is not None:
        cpu = check_cpu(cpu)
    with pinned(cpu):  # the PMU counter is opened on the thread as it is pinned
        counted = counter
        if counter == "pmu":
            counted = "pmu" if _core.pmu_open() == "all" else "pmu_user"
        measured = target.runner.time_runs(runs, serialize, copies, diff, counter, timeout_s, step)
    return RawRuns.of(target.name, measured, clk, counted, cpu, target.catalog_row)


def read_cpu(name: str) -> tuple[int, int | None, int, bool]:
    """One reading of the method `name` where its catalog row says it runs
    (:func:`resolve`: Unsupported where it cannot run): (cpu, node or None, raw value,
    valid), as ``_core.read_cpu`` returns them."""
    return resolve(name).runner.read_cpu()


def read_raw(name: str) -> tuple[int, bool]:
    """One execution of the method `name` where its catalog row says it runs
    (:func:`resolve`: Unsupported where it cannot run): (raw value, valid), as
    ``_core.read`` returns them."""
    return resolve(name).runner.read()


def rulers_agree(raw: RawRuns) -> bool:
    """Whether the core cycles of `raw` can be trusted: their ruler points'
    add and imul rulers agreed, or else the clock's (``runs_clock``)."""
    return not raw.converted[2]


def bench_result(raw: RawRuns, *, serialize: str, unroll: int, bias: HarnessBias | None = None,
                 corrected: bool = False, loop: tuple[float, float] = (0.0, 0.0)) -> BenchResult:
    """The finished BenchResult of `raw`, converted at the runs' own clock and corrected in one
    place (``results.parts.applied``): by the harness `bias` where `corrected` (None: none
    known), else by half the copy loop's cost `loop` (core cycles per copy, 95% half-width;
    (0, 0): uncorrected).
    """
    got, clk = raw.measured, raw.clock
    conversion = got.conversion
    cpt, cpt_ci, caveats = raw.converted
    bias_cc, bias_ci, resolution, caveats = applied(bias, loop, corrected, cpt, caveats)
    # the C core's recommended estimate and paired mean (one Estimate where the paired mean is the
    # one recommended), or None: BenchResult computes them
    estimate = paired = None
    if got.estimate is not None and got.paired_mean is not None:
        estimate = Estimate._make(got.estimate)
        paired = estimate if estimate.estimator == "paired_mean" else Estimate._make(got.paired_mean)
    motion = None if conversion is None else ClockMotion.from_conversion(conversion, clk.tsc_hz)
    return BenchResult._of_runs(raw.name, serialize, unroll, raw.cpu, got.a, got.b, got.migrated, got.best,
                                got.median, clk, raw.counter, cpt, cpt_ci, bias_cc, bias_ci, resolution, caveats,
                                motion, raw.catalog_row, estimate, paired)


#: (path, mode) -> the harness bias this process measured there (``instrument.bias`` writes it).
_kept_biases: dict[tuple[str, str], HarnessBias] = {}
#: (path, mode) -> why bench() applies no correction there: the last selftest() of this
#: process failed that path and mode's goals (cleared when a later one passes them).
_failed_verdicts: dict[tuple[str, str], str] = {}


def kept_bias(path: str, serialize: str) -> HarnessBias | None:
    """The harness bias in force for `path` in `serialize` mode, read without a lock (bench() asks on
    every call): the kept one while ``CORRECTION_MAX_AGE_S`` old, or after a failed self-test there
    its last (or an unmeasured one), with ``why_not`` saying why it is not subtracted; else None."""
    key = (path, serialize)
    known = _kept_biases.get(key)
    why_not = _failed_verdicts.get(key)
    if why_not:  # the last self-test's bias, not subtracted: none measured now
        if known is None:
            return HarnessBias(math.nan, math.nan, {}, math.nan, math.nan, why_not=why_not)
        return dataclasses.replace(known, why_not=why_not)
    return known if known is not None and known.holds_at(time.monotonic()) else None


def keep_bias(path: str, serialize: str, bias: HarnessBias) -> None:
    _kept_biases[(path, serialize)] = bias


def failed_verdict(path: str, serialize: str) -> str:
    """Why bench() applies no harness correction to `path` in `serialize` mode ('' when none)."""
    return _failed_verdicts.get((path, serialize), "")


def set_verdict(path: str, serialize: str, why_not: str) -> None:
    """Record the last self-test's verdict on `path` in `serialize` mode ('': it passed)."""
    if why_not:
        _failed_verdicts[(path, serialize)] = why_not
    else:
        _failed_verdicts.pop((path, serialize), None)


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str, timeout_s: float = 0.0, loop: tuple[float, float] = (0.0, 0.0)) -> BenchResult:
    """`runs` runs of `method` against the empty sequence, converted at the core cycles per tick
    measured around them, uncorrected but for `loop` (:func:`bench_result`); `timeout_s` bounds a
    user function (0: no limit).
    """
    raw = raw_runs(method, runs=runs, serialize=serialize, copies=unroll, diff=False, counter=counter,
                   cpu=cpu, timeout_s=timeout_s)
    return bench_result(raw, serialize=serialize, unroll=unroll, loop=loop)


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str, timeout_s: float = 0.0, loop: tuple[float, float] = (0.0, 0.0)) -> DiffResult:
    """`runs` pairs of runs of `method` at 2k and k copies, converted as :func:`timed` converts;
    `loop`: the copy loop's cost per copy and its 95% half-width, core cycles (0: not measured).
    """
    raw = raw_runs(method, runs=runs, serialize=serialize, copies=k, diff=True, counter=counter, cpu=cpu,
                   timeout_s=timeout_s)
    got, clk = raw.measured, raw.clock
    conversion = got.conversion
    cpt, cpt_ci, caveats = runs_clock(conversion, clk, raw.counter)
    return DiffResult.from_arrays(
        method=raw.name, serialize=serialize, k=k, cpu=cpu, long=got.a, short=got.b, migrated=got.migrated,
        clock=clk, counter=raw.counter, cycles_per_tick=cpt, cycles_per_tick_ci95=cpt_ci, caveats=caveats,
        clock_motion=None if conversion is None else ClockMotion.from_conversion(conversion, clk.tsc_hz),
        copy_loop_core_cycles=loop[0], copy_loop_ci95_core_cycles=loop[1], catalog_row=raw.catalog_row)
