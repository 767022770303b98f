"""The one way a measurement becomes a result: the runs from the C harness
(``_harness.measure``, one C call) into a BenchResult (:func:`timed`, what
:func:`fastcpu.bench` corrects and the self-test calibrates on) or a
DiffResult (:func:`timed_diff`, :func:`fastcpu.bench_diff`), each built by
its class's ``from_arrays``.

On the TSC, ruler points between stretches of the runs (``_conversion``)
give the core cycles per tick stretch by stretch, which the result
converts with, and how the clock moved (``ClockMotion``); while the clock's two rulers
disagree, core cycles are NaN and the result says why (its caveats).
Arguments are not checked here: bench() checks them, the self-test passes
its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import _conversion
from ._harness import Method, measure, run_pinned
from ._methods import method_info
from ._bench_result import BenchResult, DiffResult

__all__ = ["timed", "timed_diff"]


def _measured(method: Method, runs: int, serialize: str, copies: int, diff: bool, cpu: int | None,
              counter: str, timeout_s: float = 0.0) -> tuple:
    """(name, the ``_core.Measured`` record, core cycles per tick or None,
    its 95% half-width, the clock's motion or None, the clock, the counter
    that counted, caveats): on the TSC the runs with ruler points between
    their stretches, converted stretch by stretch; none for a PMU counter
    (it counts core cycles itself); another process's runs come back without
    (``_harness.measure``), converted with the clock's first-use figure."""

    def run(target: str | int) -> tuple:
        return measure(target, runs, serialize, copies, diff, counter,
                       _conversion.rulers() if counter == "tsc" else None, timeout_s)

    name, got, clk, counted = run_pinned(method, cpu, counter, run)
    caveats = clk.caveats(counted)
    conversion, cpt, cpt_ci95, motion = got.conversion, None, 0.0, None
    if conversion is not None:
        motion = _conversion.motion_of(conversion, got.points, clk.tsc_hz)
        cpt, cpt_ci95 = conversion["cycles_per_tick"], conversion["ci95"]
        if math.isfinite(cpt):
            # its own add and imul rulers agreed inside it: a first-use calibration that could not
            # tell the two apart (a process started on a loaded host) is not this measurement's
            caveats = ()
        else:  # no undisturbed point: the clock's figure, its interval unknown
            cpt, cpt_ci95 = None, 0.0
    if caveats:  # core cycles unknown: ticks and ns stand
        cpt, cpt_ci95 = math.nan, 0.0
    return name, got, cpt, cpt_ci95, motion, clk, counted, caveats


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str,
          correction: Callable[[float | None], tuple[float, float, float, str]] | None = None,
          timeout_s: float = 0.0) -> BenchResult:
    """`runs` runs of `method` (a name or a user function) against the empty
    sequence, converted with the core cycles per tick measured around them
    (TSC; a PMU counter counts core cycles itself). `correction`, given that
    figure, returns the harness bias and its 95% half-width (core cycles)
    to apply, the smallest cost the harness resolves (core cycles), and why
    no correction is applied ('' when it is); without it the result
    is uncorrected. While the clock's rulers disagree, core cycles are NaN,
    no correction is applied and the result says why (its caveats).
    `timeout_s` bounds a user function's measurement (0: no limit)."""
    name, got, cpt, cpt_ci95, motion, clk, counted, caveats = _measured(
        method, runs, serialize, unroll, False, cpu, counter, timeout_s)
    bias, bias_ci, resolution = 0.0, 0.0, 0.0
    if caveats:
        if correction is not None:
            caveats = (caveats[0] + "; no harness correction applied",)
    elif correction is not None:
        bias, bias_ci, resolution, why_not = correction(cpt)
        caveats = (why_not,) if why_not else ()
    return BenchResult.from_arrays(
        method=name,
        serialize=serialize,
        unroll=unroll,
        cpu=cpu,
        raw=got.a,
        empty=got.b,
        migrated=got.migrated,
        clock=clk,
        counter=counted,
        best=got.best,  # the C core's, computed without copying the arrays
        median=got.median,
        cycles_per_tick=cpt,
        cycles_per_tick_ci95=cpt_ci95,
        harness_bias_core_cycles=bias,
        harness_bias_ci95_core_cycles=bias_ci,
        harness_resolution_core_cycles=resolution,
        caveats=caveats,
        clock_motion=motion,
        # what its file will say of it: the catalog's row (none for a user function)
        catalog_row=method_info(method).catalog_row if isinstance(method, str) else None,
    )


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str, timeout_s: float = 0.0) -> DiffResult:
    """`runs` interleaved pairs of runs of `method` at 2k and k copies,
    converted as :func:`timed` converts."""
    name, got, cpt, cpt_ci95, motion, clk, counted, caveats = _measured(
        method, runs, serialize, k, True, cpu, counter, timeout_s)
    return DiffResult.from_arrays(
        method=name, serialize=serialize, k=k, cpu=cpu, long=got.a, short=got.b, migrated=got.migrated,
        clock=clk, counter=counted, cycles_per_tick=cpt, cycles_per_tick_ci95=cpt_ci95,
        caveats=caveats, clock_motion=motion)
