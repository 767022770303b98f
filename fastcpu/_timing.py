"""One measurement into a BenchResult, before any harness-bias correction:
what :func:`fastcpu.bench` corrects and what the self-test calibrates on.

The runs come from the C harness (``_harness.py``); on the TSC, register-register add chains
just before and just after them (``_bracket.py``) give the core cycles per
tick at the moment of measurement, which the result converts with.
Arguments are not checked here: bench() checks them, the self-test passes
its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import _norseq
from ._bracket import bracketed
from ._harness import Method, core_bench, run_pinned
from ._result import BenchResult

__all__ = ["timed"]


def timed(method: Method, runs: int, *, serialize: str, unroll: int, cpu: int | None,
          counter: str,
          correction: Callable[[float | None], tuple[float, float, str]] | None = None) -> BenchResult:
    """`runs` runs of `method` (a name or a user function) against the empty
    sequence, converted with the core cycles per tick measured around them
    (TSC; a PMU counter counts core cycles itself). `correction`, given that
    figure, returns the harness bias and its 95% half-width (core cycles)
    to apply, and why none is applied ('' when it is); without it the result
    is uncorrected. While the clock's rulers disagree, core cycles are NaN,
    no correction is applied and the result says why (its caveats)."""

    def run(target: str | int) -> tuple:
        if counter != "tsc" or target == _norseq.NAME:  # no bracket for another process's runs
            return core_bench(target, runs, serialize, unroll, counter), None, 0.0
        # the core clock at the moment of measurement: add chains on each
        # side, held against those of the measurements just before
        return bracketed(target, runs, serialize, unroll)

    name, measured, clk, counted = run_pinned(method, cpu, counter, run)
    (raw, empty, migrated, best, median), cycles_per_tick, cycles_per_tick_ci95 = measured
    bias, bias_ci, caveats = 0.0, 0.0, clk.caveats(counted)
    if caveats:  # core cycles unknown: ticks and ns stand, nothing to correct with
        cycles_per_tick, cycles_per_tick_ci95 = math.nan, 0.0
        if correction is not None:
            caveats = (caveats[0] + "; no harness correction applied",)
    elif correction is not None:
        bias, bias_ci, why_not = correction(cycles_per_tick)
        caveats = (why_not,) if why_not else ()
    return BenchResult.from_arrays(
        method=name,
        serialize=serialize,
        unroll=unroll,
        cpu=cpu,
        raw=raw,
        empty=empty,
        migrated=migrated,
        clock=clk,
        counter=counted,
        best=best,  # the C core's, computed without copying the arrays
        median=median,
        cycles_per_tick=cycles_per_tick,
        cycles_per_tick_ci95=cycles_per_tick_ci95,
        harness_bias_core_cycles=bias,
        harness_bias_ci95_core_cycles=bias_ci,
        caveats=caveats,
    )
