"""The one way a measurement becomes a result: the raw runs from the harness
(``_harness.raw_runs``: one ``_core.measure`` call, in this process or in a
row's child) and what their ruler points say (:func:`take`), into a
BenchResult (:func:`bench_result`, built once with the harness correction
it is given: :func:`fastcpu.bench`'s, worked out by ``_selftest`` from the
runs' own clock; :func:`timed`, uncorrected, what the self-test calibrates
on) or a DiffResult (:func:`timed_diff`, :func:`fastcpu.bench_diff`), each
with the fields its class's ``from_arrays`` gives.

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

from ._harness import Method, Runs, raw_runs
from ._bench_result import BenchResult, DiffResult, HarnessCorrection
from ._clock_motion import ClockMotion

__all__ = ["Taken", "take", "bench_result", "timed", "timed_diff"]


class Taken(NamedTuple):
    """Runs and what their ruler points say of the core clock: what a
    result is built from (:func:`take`)."""

    #: the raw runs and what they were taken with
    runs: Runs
    #: core cycles per TSC tick the runs convert with (the points', or the
    #: clock's first-use figure; NaN: unknown while the rulers disagree) and
    #: its 95% half-width
    cycles_per_tick: float
    cycles_per_tick_ci95: float
    #: how the clock moved during the runs (None: no ruler points)
    motion: ClockMotion | None
    #: why core cycles cannot be trusted (the rulers disagree), or ()
    caveats: tuple[str, ...]


def take(method: Method, runs: int, *, serialize: str, copies: int, diff: bool, counter: str,
         cpu: int | None, timeout_s: float = 0.0) -> Taken:
    """The runs of `method` (as ``_harness.raw_runs`` takes them) and how
    they convert to core cycles: on the TSC, their ruler points, converted
    stretch by stretch; none for a PMU counter (it counts core cycles
    itself); a child's runs come back without any and are converted with
    the clock's first-use figure. `timeout_s` bounds a user function's
    measurement (0: no limit)."""
    took = raw_runs(method, runs=runs, serialize=serialize, copies=copies, diff=diff, counter=counter,
                    cpu=cpu, timeout_s=timeout_s)
    clk, conversion, motion = took.clock, took.measured.conversion, None
    if conversion is not None:
        motion = ClockMotion.from_conversion(conversion, clk.tsc_hz)
        cpt = conversion.cycles_per_tick
        if math.isfinite(cpt):
            # its own add and imul rulers agreed inside it: a first-use calibration that could not
            # tell the two apart (a process started on a loaded host) is not this measurement's
            return Taken(took, cpt, conversion.ci95, motion, ())
    # no undisturbed point, or none taken: the clock's figure, its interval unknown
    caveats = clk.caveats(took.counter)
    if caveats:  # core cycles unknown: ticks and ns stand
        return Taken(took, math.nan, 0.0, motion, caveats)
    return Taken(took, clk.cycles_per_tick, 0.0, motion, ())


def bench_result(taken: Taken, *, serialize: str, unroll: int,
                 correction: HarnessCorrection | None = None) -> BenchResult:
    """The BenchResult of `taken` (runs of `unroll` copies against the empty
    sequence in `serialize` mode), built once: with the harness
    `correction` (figures and the caveats that then stand, from
    ``_selftest.correction_for``: what :func:`fastcpu.bench` applies), or
    uncorrected (None)."""
    took = taken.runs
    got = took.measured
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
        cycles_per_tick=taken.cycles_per_tick,
        cycles_per_tick_ci95=taken.cycles_per_tick_ci95,
        clock_motion=taken.motion,
        correction=correction or HarnessCorrection(0.0, 0.0, 0.0, taken.caveats),
        # what its file will say of it: the catalog's row (none for a user function)
        catalog_row=took.catalog_row,
    )


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str, timeout_s: float = 0.0) -> BenchResult:
    """`runs` runs of `method` (a name or a user function) against the empty
    sequence, converted with the core cycles per tick measured around them
    (TSC; a PMU counter counts core cycles itself); uncorrected: what
    :func:`fastcpu.bench` returns for copies or a PMU counter, and what the
    self-test calibrates on. While the clock's rulers disagree, core cycles
    are NaN and the result says why (its caveats). `timeout_s` bounds a user
    function's measurement (0: no limit)."""
    taken = take(method, runs, serialize=serialize, copies=unroll, diff=False, counter=counter, cpu=cpu,
                 timeout_s=timeout_s)
    return bench_result(taken, serialize=serialize, unroll=unroll)


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str, timeout_s: float = 0.0) -> DiffResult:
    """`runs` interleaved pairs of runs of `method` at 2k and k copies,
    converted as :func:`timed` converts."""
    taken = take(method, runs, serialize=serialize, copies=k, diff=True, counter=counter, cpu=cpu,
                 timeout_s=timeout_s)
    took, got = taken.runs, taken.runs.measured
    return DiffResult.from_arrays(
        method=took.name, serialize=serialize, k=k, cpu=cpu, long=got.a, short=got.b, migrated=got.migrated,
        clock=took.clock, counter=took.counter, cycles_per_tick=taken.cycles_per_tick,
        cycles_per_tick_ci95=taken.cycles_per_tick_ci95, caveats=taken.caveats, clock_motion=taken.motion)
