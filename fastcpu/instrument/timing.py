"""bench() and bench_diff(), and the copy loop's own cost per copy (core cycles): what a figure
timed in copies cannot tell from the body, and the smallest cost per call it resolves.

A body overlaps none to all of the loop: back to back it reads the body plus 0 to L (L the
loop's cost), unrolled the body less 0 to L; half of L is corrected and half goes into the
interval. See docs/timing.md#calls-back-to-back.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

from .. import _core
from .._args import (COUNTERS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX, check_counter, check_int, check_serialize,
                     check_timeout)
from .._base import ForkSafeLock
from ..results.bench_result import BenchResult, DiffResult
from ..results.parts import CORRECTION_MAX_AGE_S
from .bias import harness_bias
from .harness import Method, bench_result, kept_bias, raw_runs, rulers_agree, timed, timed_diff

__all__ = ['LoopFloor', 'FLOOR_RUNS', 'FLOOR_MEASUREMENTS', 'loop_floor', 'path_of', 'floor_k', 'bench', 'bench_diff', 'timed_corrected', 'RUNS_MAX', 'UNROLL_MAX', 'SERIALIZE_MODES', 'COUNTERS', 'Method']


#: Pairs of runs per measurement of the loop's cost (about a millisecond
#: inline at 16 and 32 copies), after as many to warm up; the loop's cost
#: is the median of FLOOR_MEASUREMENTS such measurements.
FLOOR_RUNS = 1000
FLOOR_MEASUREMENTS = 3


class LoopFloor(NamedTuple):
    """The copy loop's own cost per copy, as bench_diff() of a body of no cost measured it."""

    #: core cycles per copy (at least 0), and its 95% half-width
    core_cycles: float
    ci95_core_cycles: float
    #: ``time.monotonic()`` when it was measured, seconds
    measured_at: float

    @property
    def top_core_cycles(self) -> float:
        """The top of its 95% interval, core cycles per copy: below it a body cannot be told from the loop."""
        return self.core_cycles + self.ci95_core_cycles


_lock = ForkSafeLock()
#: (path, mode, counter, copies on the short side, CPU) -> the loop's cost.
_floors: dict[tuple[str, str, str, int, int | None], LoopFloor] = {}


def path_of(method: Method) -> str:
    """``'inline'`` for a method named by its catalog name, ``'user'`` for a user function."""
    return "inline" if isinstance(method, str) else "user"


def floor_k(unroll: int) -> int:
    """The short side's copies for the loop's cost around `unroll` copies a run (unroll >= 2)."""
    return max(2, unroll // 2)


def loop_floor(path: str, serialize: str, counter: str, k: int, cpu: int | None) -> LoopFloor | None:
    """The copy loop's cost per copy for `path` at `k` and `2k` copies in `serialize` mode on
    `counter`, pinned to `cpu`: kept ``CORRECTION_MAX_AGE_S``, else measured now. None where
    its core cycles are unknown (the rulers disagreed): the figures then stay as read.
    """
    key = (path, serialize, counter, k, cpu)
    known = _fresh(key)
    if known is not None:
        return known
    with _lock:
        known = _fresh(key)
        if known is None:
            target: Method = "empty" if path == "inline" else _core.user_empty()
            # the first measurements of a process read the loop low (0.42-0.88 core cycles per
            # copy, then 0.93-0.96, against 0.96-1.04 later; AuthenticAMD family 25 model 17):
            # warmed up, left out
            timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
            # the median of three, so that one disturbed measurement (1.54 core cycles per
            # copy once, among 0.99-1.01, AuthenticAMD family 25 model 17) does not set it
            taken = [timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
                     for _ in range(FLOOR_MEASUREMENTS)]
            figures = sorted((d.estimate_core_cycles, d.estimate_ci95_core_cycles) for d in taken
                             if math.isfinite(d.estimate_core_cycles) and math.isfinite(d.estimate_ci95_core_cycles))
            if not figures:
                return None
            cc, ci = figures[len(figures) // 2]
            known = _floors[key] = LoopFloor(max(cc, 0.0), ci, time.monotonic())
    return known


def _fresh(key: tuple[str, str, str, int, int | None]) -> LoopFloor | None:
    known = _floors.get(key)
    return known if known is not None and time.monotonic() - known.measured_at <= CORRECTION_MAX_AGE_S else None


def timed_corrected(method: Method, runs: int, *, serialize: str, cpu: int | None, path: str,
                    timeout_s: float = 0.0) -> BenchResult:
    """`runs` single copies of `method` on the TSC, converted at the runs' own clock and corrected by
    the harness bias of `path` (``harness.kept_bias``; measured by ``bias.harness_bias`` on a miss):
    what :func:`bench` returns. While the runs' rulers disagree nothing is corrected. `timeout_s`
    bounds a user function (0: no limit).
    """
    raw = raw_runs(method, runs=runs, serialize=serialize, copies=1, diff=False, counter="tsc", cpu=cpu,
                   timeout_s=timeout_s)
    bias = None
    if rulers_agree(raw):
        bias = kept_bias(path, serialize)
        if bias is None:  # first use, or too old: measured now (instrument.bias)
            bias = harness_bias(path, serialize, cpu)
    return bench_result(raw, serialize=serialize, unroll=1, bias=bias, corrected=True)


def bench(
    method: Method,
    runs: int = 1000,
    *,
    serialize: str = "lfence",
    unroll: int = 1,
    cpu: int | None = None,
    counter: str = "tsc",
    timeout: float | None = None,
) -> BenchResult:
    """Time `runs` single executions of `method`, each against the empty sequence.

    How a run is timed, the harness bias and the copy loop: docs/timing.md; what a user
    function must obey and what the harness guards: docs/timing.md#user-functions.

    Args:
        method: a name from :func:`fastcpu.methods` or :func:`fastcpu.chain_methods`
            (``'rdpid'``, ``'add_chain_100'``), or a user C function ``unsigned fn(void)``
            given as a ctypes function pointer or an integer address.
        runs: timed runs, 1 to ``RUNS_MAX``, each interleaved with a run of the empty sequence.
        serialize: ``'lfence'``, ``'cpuid'`` or ``'rdtscp'``: the fences around the counter
            reads (docs/timing.md#one-run).
        unroll: copies per run, 1 to ``UNROLL_MAX``; the figures are then per copy (a
            throughput), corrected by half the copy loop's cost (core cycles per copy,
            measured on first use, kept ``CORRECTION_MAX_AGE_S``).
        cpu: pin this thread to that CPU for the call; its affinity is restored, even on error.
        counter: ``'tsc'`` or ``'pmu'`` (``rdpmc`` of core cycles: every figure is then in core
            cycles, see :attr:`BenchResult.counter`).
        timeout: for a user function, the most seconds the measurement may take (None: no
            limit; at most ``fastcpu.limits.TIMEOUT_MAX_S``), checked between chunks of runs.

    Returns:
        A finished, immutable :class:`BenchResult`: raw per-run TSC ticks, best, median and
        the recommended ``estimate`` with its 95% interval, in TSC ticks with ns and core-cycle
        conversions. With ``unroll=1`` on the TSC the estimate is corrected by the harness bias
        :func:`fastcpu.selftest` measures (best and median never are).

    Raises:
        TypeError: an argument has the wrong type (a ctypes prototype with arguments included).
        ValueError: an argument is out of range or names no method, or a user function's
            address is not in an executable mapping (``/proc/self/maps``).
        fastcpu.Unsupported: the method, or ``counter='pmu'``, cannot run here (the message
            says why).
        fastcpu.Error: `cpu` was given but this thread may not be pinned to it, or a user
            function broke the calling convention, faulted or forked (the message says which).
        TimeoutError: a user function's measurement took longer than `timeout`.
    """
    timeout_s = check_timeout(timeout, method)
    runs = check_int("runs", runs, 1, RUNS_MAX)
    unroll = check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = check_serialize(serialize)
    counter = check_counter(counter, serialize)

    # the self-test measures single copies on the TSC: its correction is for
    # those, kept in ticks and converted at the clock around these runs
    if counter == "tsc" and unroll == 1:
        return timed_corrected(method, runs, serialize=serialize, cpu=cpu,
                               path="inline" if isinstance(method, str) else "user", timeout_s=timeout_s)
    loop = (0.0, 0.0)
    if unroll > 1:  # the body overlaps 0 to all of the loop's own pace, which the empty sequence pays
        floor = loop_floor(path_of(method), serialize, counter, floor_k(unroll), cpu)
        loop = (0.0, 0.0) if floor is None else (floor.core_cycles, floor.ci95_core_cycles)
    return timed(method, runs, serialize=serialize, unroll=unroll, cpu=cpu, counter=counter, timeout_s=timeout_s,
                 loop=loop)


def bench_diff(
    method: Method,
    runs: int = 1000,
    *,
    k: int = 16,
    serialize: str = "lfence",
    cpu: int | None = None,
    counter: str = "tsc",
    timeout: float | None = None,
) -> DiffResult:
    """The differencing estimate: the cost per copy back to back, from pairs of runs of `2k` and
    `k` copies, ``mean((long - short) / k)`` over the pairs (outliers fenced, migrated pairs
    left out).

    What the harness adds once per run cancels; the copy loop's own cost L (core cycles per
    copy) does not: the estimate loses L/2 with the other half in its interval, and a figure
    whose interval reaches down to L is a bound (:attr:`DiffResult.resolved`). See
    docs/timing.md#calls-back-to-back.

    Args:
        method, serialize, cpu, counter, timeout: as for :func:`bench`.
        runs: timed pairs of runs (one at 2k copies, one at k), 1 to ``RUNS_MAX``.
        k: copies per run of the short side, 2 to ``UNROLL_MAX // 2``.

    Returns:
        A :class:`DiffResult` with ``estimate`` and ``estimate_ci95`` in TSC ticks per copy
        (with ns and core-cycle conversions) and both sides' raw runs.

    Raises:
        As :func:`bench`.
    """
    timeout_s = check_timeout(timeout, method)
    runs = check_int("runs", runs, 1, RUNS_MAX)
    k = check_int("k", k, 2, UNROLL_MAX // 2)
    serialize = check_serialize(serialize)
    counter = check_counter(counter, serialize)
    floor = loop_floor(path_of(method), serialize, counter, k, cpu)
    return timed_diff(method, runs, serialize=serialize, k=k, cpu=cpu, counter=counter, timeout_s=timeout_s,
                      loop=(0.0, 0.0) if floor is None else (floor.core_cycles, floor.ci95_core_cycles))
