"""The one way a measurement becomes a result: the runs from the C harness
(``_harness.measure``, one C call) into a BenchResult (:func:`timed`, what
:func:`fastcpu.bench` corrects and the self-test calibrates on) or a
DiffResult (:func:`timed_diff`, :func:`fastcpu.bench_diff`), each built by
its class's ``from_arrays``.

On the TSC, register-register add chains just before and just after the
runs (``_bracket.py``) give the core cycles per tick at the moment of
measurement, which the result converts with; while the clock's two rulers
disagree, core cycles are NaN and the result says why (its caveats).
Arguments are not checked here: bench() checks them, the self-test passes
its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import _bracket
from ._harness import NO_BRACKETS, Method, measure, run_pinned
from ._methods import method_info
from ._bench_result import BenchResult, DiffResult

__all__ = ["timed", "timed_diff"]


def _measured(method: Method, runs: int, serialize: str, copies: int, diff: bool, cpu: int | None,
              counter: str) -> tuple:
    """(name, (a, b, migrated, best, median, core cycles per tick or None,
    its 95% half-width), the clock, the counter that counted, caveats):
    the runs between brackets on the TSC, none for a PMU counter (it
    counts core cycles itself); another process's runs come back without
    (``_harness.measure``)."""

    def run(target: str | int) -> tuple:
        return measure(target, runs, serialize, copies, diff, counter,
                       _bracket.brackets() if counter == "tsc" else NO_BRACKETS)

    name, (a, b, migrated, best, median, cpt, cpt_ci95), clk, counted = run_pinned(method, cpu, counter, run)
    caveats = clk.caveats(counted)
    if caveats:  # core cycles unknown: ticks and ns stand
        cpt, cpt_ci95 = math.nan, 0.0
    elif math.isnan(cpt):  # no brackets: the clock's figure
        cpt, cpt_ci95 = None, 0.0
    return name, (a, b, migrated, best, median, cpt, cpt_ci95), clk, counted, caveats


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
    name, (raw, empty, migrated, best, median, cpt, cpt_ci95), clk, counted, caveats = _measured(
        method, runs, serialize, unroll, False, cpu, counter)
    bias, bias_ci = 0.0, 0.0
    if caveats:
        if correction is not None:
            caveats = (caveats[0] + "; no harness correction applied",)
    elif correction is not None:
        bias, bias_ci, why_not = correction(cpt)
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
        cycles_per_tick=cpt,
        cycles_per_tick_ci95=cpt_ci95,
        harness_bias_core_cycles=bias,
        harness_bias_ci95_core_cycles=bias_ci,
        caveats=caveats,
        # what its file will say of it: the catalog's row (none for a user function)
        catalog_row=method_info(method).catalog_row if isinstance(method, str) else None,
    )


def timed_diff(method: Method, runs: int, *, serialize: str, k: int, cpu: int | None,
               counter: str) -> DiffResult:
    """`runs` interleaved pairs of runs of `method` at 2k and k copies,
    converted as :func:`timed` converts."""
    name, (long, short, migrated, _, _, cpt, cpt_ci95), clk, counted, caveats = _measured(
        method, runs, serialize, k, True, cpu, counter)
    return DiffResult.from_arrays(
        method=name, serialize=serialize, k=k, cpu=cpu, long=long, short=short, migrated=migrated,
        clock=clk, counter=counted, cycles_per_tick=cpt, cycles_per_tick_ci95=cpt_ci95,
        caveats=caveats)
