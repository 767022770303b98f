"""The one way a measurement becomes a result: the raw runs from the harness
(``_harness.raw_runs``: one ``_core.measure`` call, in this process or in a
row's child) into a BenchResult (:func:`timed`, uncorrected: what
:func:`fastcpu.bench` corrects and the self-test calibrates on) or a
DiffResult (:func:`timed_diff`, :func:`fastcpu.bench_diff`), each with the
fields its class's ``from_arrays`` gives.

On the TSC, ruler points between stretches of the runs (``_conversion``)
give the core cycles per tick stretch by stretch, which the result
converts with, and how the clock moved (``ClockMotion``); while the clock's two rulers
disagree, core cycles are NaN and the result says why (its caveats).
Arguments are not checked here: bench() checks them, the self-test passes
its own.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from . import _conversion
from ._harness import Method, Runs, raw_runs
from ._bench_result import BenchResult, DiffResult
from ._clock_motion import ClockMotion

__all__ = ["timed", "timed_diff"]


class _Converted(NamedTuple):
    """What the runs' ruler points say of the core clock, for the result."""

    #: core cycles per TSC tick (None: the clock's first-use figure; NaN:
    #: unknown while the rulers disagree) and its 95% half-width
    cycles_per_tick: float | None
    cycles_per_tick_ci95: float
    #: how the clock moved during the runs (None: no ruler points)
    motion: ClockMotion | None
    #: why core cycles cannot be trusted (the rulers disagree), or ()
    caveats: tuple[str, ...]


def _converted(runs: Runs) -> _Converted:
    """How `runs` convert to core cycles: on the TSC, their ruler points,
    converted stretch by stretch; none for a PMU counter (it counts core
    cycles itself); a child's runs come back without any and are converted
    with the clock's first-use figure."""
    got, clk = runs.measured, runs.clock
    conversion, motion = got.conversion, None
    if conversion is not None:
        motion = _conversion.motion_of(conversion, got.points, clk.tsc_hz)
        cpt = conversion["cycles_per_tick"]
        if math.isfinite(cpt):
            # its own add and imul rulers agreed inside it: a first-use calibration that could not
            # tell the two apart (a process started on a loaded host) is not this measurement's
            return _Converted(cpt, conversion["ci95"], motion, ())
    # no undisturbed point, or none taken: the clock's figure, its interval unknown
    caveats = clk.caveats(runs.counter)
    if caveats:  # core cycles unknown: ticks and ns stand
        return _Converted(math.nan, 0.0, motion, caveats)
    return _Converted(None, 0.0, motion, ())


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str, timeout_s: float = 0.0) -> BenchResult:
    """`runs` runs of `method` (a name or a user function) against the empty
    sequence, converted with the core cycles per tick measured around them
    (TSC; a PMU counter counts core cycles itself); uncorrected (bench()
    applies the harness bias to it, ``_selftest.corrected``). While the
    clock's rulers disagree, core cycles are NaN and the result says why
    (its caveats). `timeout_s` bounds a user function's measurement (0: no
    limit)."""
    took = raw_runs(method, runs=runs, serialize=serialize, copies=unroll, diff=False, counter=counter,
                    cpu=cpu, timeout_s=timeout_s)
    got, conv = took.measured, _converted(took)
    return BenchResult._from_measured(
        method=took.name,
        serialize=serialize,
        unroll=unroll,
        cpu=took.cpu,
        raw=got.a,
        empty=got.b,
        migrated=got.migrated,
        clock=took.clock,
        counter=took.counter,
        best=got.best,  # the C core's, computed without copying the arrays
        median=got.median,
        cycles_per_tick=conv.cycles_per_tick,
        cycles_per_tick_ci95=conv.cycles_per_tick_ci95,
        caveats=conv.caveats,
        clock_motion=conv.motion,
        # what its file will say of it: the catalog's row (none for a user function)
        catalog_row=took.catalog_row,
    )


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str, timeout_s: float = 0.0) -> DiffResult:
    """`runs` interleaved pairs of runs of `method` at 2k and k copies,
    converted as :func:`timed` converts."""
    took = raw_runs(method, runs=runs, serialize=serialize, copies=k, diff=True, counter=counter, cpu=cpu,
                    timeout_s=timeout_s)
    got, conv = took.measured, _converted(took)
    return DiffResult.from_arrays(
        method=took.name, serialize=serialize, k=k, cpu=cpu, long=got.a, short=got.b, migrated=got.migrated,
        clock=took.clock, counter=took.counter, cycles_per_tick=conv.cycles_per_tick,
        cycles_per_tick_ci95=conv.cycles_per_tick_ci95, caveats=conv.caveats, clock_motion=conv.motion)
