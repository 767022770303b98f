"""The one way a measurement becomes a result: the raw runs from the harness
(``_harness.raw_runs``: one ``_core.measure`` call, in this process or in a
row's child) into a BenchResult (:func:`bench_result`: the runs and the
harness bias as it stood, ``_selftest.known_bias``, handed over as figures,
from which the result works out its fields when first looked at;
:func:`fastcpu.bench`'s corrected, :func:`timed`'s uncorrected, what the
self-test calibrates on) or, with what their ruler points say
(:func:`take`), a DiffResult (:func:`timed_diff`, :func:`fastcpu.bench_diff`),
with the fields its class's ``from_arrays`` gives.

On the TSC, ruler points between stretches of the runs (``_conversion``)
give the core cycles per tick stretch by stretch, which the result
converts with, and how the clock moved (``ClockMotion``); while the clock's two rulers
disagree, core cycles are NaN and the result says why (its caveats).
Arguments are not checked here: bench() checks them, the self-test passes
its own.
"""

from __future__ import annotations

from typing import NamedTuple

from ._harness import Method, Runs, raw_runs
from ._bench_result import BenchResult, DiffResult, Measurement
from ._clock_motion import ClockMotion, runs_clock
from ._harness_correction import KnownBias

__all__ = ["Taken", "take", "rulers_agree", "bench_result", "timed", "timed_diff"]


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
    they convert to core cycles (``_clock_motion.runs_clock``): on the TSC,
    their ruler points, converted stretch by stretch; none for a PMU counter
    (it counts core cycles itself); a child's runs come back without any and
    are converted with the clock's first-use figure. `timeout_s` bounds a
    user function's measurement (0: no limit)."""
    took = raw_runs(method, runs=runs, serialize=serialize, copies=copies, diff=diff, counter=counter,
                    cpu=cpu, timeout_s=timeout_s)
    conversion = took.measured.conversion
    cpt, ci, caveats = runs_clock(conversion, took.clock, took.counter)
    motion = None if conversion is None else ClockMotion.from_conversion(conversion, took.clock.tsc_hz)
    return Taken(took, cpt, ci, motion, caveats)


def rulers_agree(took: Runs) -> bool:
    """Whether the core cycles of `took` can be trusted: their ruler points'
    add and imul rulers agreed, or else the clock's (``runs_clock``)."""
    return not runs_clock(took.measured.conversion, took.clock, took.counter)[2]


def bench_result(took: Runs, *, serialize: str, unroll: int, bias: KnownBias | None = None,
                 loop: tuple[float, float] = (0.0, 0.0)) -> BenchResult:
    """The BenchResult of `took` (runs of `unroll` copies against the empty
    sequence in `serialize` mode), with the harness `bias` as it stood when
    they were measured (``_selftest.known_bias``: what :func:`fastcpu.bench`
    applies), or uncorrected (None). The result works out its fields, the
    conversion at the runs' own clock and the correction among them, when it
    is first looked at (``BenchResult`` of a ``Measurement``): right after
    the runs, where every Python statement runs cold, bench() does no more
    than hand them over. `loop`: for copies a run, the copy loop's own cost
    per copy and its 95% half-width, core cycles (``_copy_loop``; (0, 0):
    not measured), which the result corrects for
    (``_bench_result.loop_correction``)."""
    return BenchResult._of(Measurement(took, serialize, unroll, bias, loop))


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str, timeout_s: float = 0.0, loop: tuple[float, float] = (0.0, 0.0)) -> BenchResult:
    """`runs` runs of `method` (a name or a user function) against the empty
    sequence, converted with the core cycles per tick measured around them
    (TSC; a PMU counter counts core cycles itself); uncorrected: what
    :func:`fastcpu.bench` returns for copies or a PMU counter, and what the
    self-test calibrates on. While the clock's rulers disagree, core cycles
    are NaN and the result says why (its caveats). `timeout_s` bounds a user
    function's measurement (0: no limit). `loop`: as for
    :func:`bench_result`."""
    took = raw_runs(method, runs=runs, serialize=serialize, copies=unroll, diff=False, counter=counter,
                    cpu=cpu, timeout_s=timeout_s)
    return bench_result(took, serialize=serialize, unroll=unroll, loop=loop)


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str, timeout_s: float = 0.0, loop: tuple[float, float] = (0.0, 0.0)) -> DiffResult:
    """`runs` interleaved pairs of runs of `method` at 2k and k copies,
    converted as :func:`timed` converts; `loop`: the copy loop's own cost
    per copy and its 95% half-width, core cycles (``_copy_loop``; 0: not
    measured)."""
    taken = take(method, runs, serialize=serialize, copies=k, diff=True, counter=counter, cpu=cpu,
                 timeout_s=timeout_s)
    took, got = taken.runs, taken.runs.measured
    return DiffResult.from_arrays(
        method=took.name, serialize=serialize, k=k, cpu=cpu, long=got.a, short=got.b, migrated=got.migrated,
        clock=took.clock, counter=took.counter, cycles_per_tick=taken.cycles_per_tick,
        cycles_per_tick_ci95=taken.cycles_per_tick_ci95, caveats=taken.caveats, clock_motion=taken.motion,
        copy_loop_core_cycles=loop[0], copy_loop_ci95_core_cycles=loop[1])
