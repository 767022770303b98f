"""How Results show themselves in Jupyter: a table per question (one call
alone, calls back to back), both questions' answers, the machine's warnings,
what could not run and the self-test. Read off a Results (duck-typed: this
module sits below ``_machine_results``, whose ``Results._repr_html_`` calls
it), every string escaped by ``_display``."""

from __future__ import annotations

from typing import Any

from . import _display
from ._answers import BACK_TO_BACK, NOT_MEASURED_BACK_TO_BACK, ONE_CALL, QUESTION_WORDS
from ._bench_result import BenchResult, stability
from ._stability import Stability
from ._table import format_clock

__all__ = ["results_html"]


def _stability(res: Any, r: BenchResult) -> Stability:
    """r's stability report against the facts of the machine it ran on
    (not the one looking at it)."""
    try:
        return stability(r, res.machine)
    except TypeError:  # facts of the wrong types (an edited file): judge the runs alone
        return stability(r, {})

def results_html(res: Any, unverified: str) -> str:
    """`res` (a Results) as HTML, for Jupyter: one call alone, a table of
    each method's estimate with its 95% interval (core cycles, ns, TSC
    ticks), best, median, the harness-bias correction applied and its
    warnings; calls back to back, a table of each method's differencing
    estimate (or a line saying they were not measured); each question's
    cheapest way and a line where they differ; then the machine's warnings,
    what could not run and the self-test. `unverified` is what is said of
    figures no checksum protects."""
    d = _display
    rows = []
    machine_warnings: list[str] = []
    for r in res.results.values():
        report = _stability(res, r)
        machine_warnings.extend(w for w in report.machine_warnings if w not in machine_warnings)
        notes = list(report.run_warnings)
        if r.resolution_limited:
            notes.insert(0, "best and median resolution limited: trust the estimate")
        bias = ("none" if r.harness_bias_core_cycles == 0 and r.harness_bias_ci95_core_cycles == 0
                else d.plus_minus(r.harness_bias_core_cycles, r.harness_bias_ci95_core_cycles))
        below = not r.resolved  # a bound, never a cost below what the harness resolves
        rows.append([
            r.method,
            r.cost_text("core_cycles", 2) if below else d.plus_minus(r.estimate_core_cycles,
                                                                      r.estimate_ci95_core_cycles),
            f"[0, {r.upper_bound_core_cycles:.2f}]" if below else d.interval(r.estimate_core_cycles,
                                                                             r.estimate_ci95_core_cycles),
            r.cost_text("ns", 2) if below else d.plus_minus(r.estimate_ns, r.estimate_ci95_ns),
            (r.cost_text("ticks", 2) if below else d.plus_minus(r.estimate, r.estimate_ci95))
            if r.counter == "tsc" else d.DASH,
            f"{r.best_core_cycles:.2f}", f"{r.median_core_cycles:.2f}",
            r.estimator, f"{r.runs_used} of {r.runs}", r.migrations, bias,
            "; ".join(notes) or d.DASH,
        ])
    runs = "/".join(map(str, sorted({r.runs for r in res.results.values()}))) or "0"
    columns = ["method", "core cycles", "95% interval (core cycles)", "ns", "TSC ticks",
               "best (core cycles)", "median (core cycles)", "estimator", "runs used",
               "migrated", "harness bias subtracted (core cycles)", "notes"]
    groups = [("", 1), ("estimate \u00b1 95%, per copy above the empty sequence", 4),
              ("above the empty sequence", 2), ("", 5)]
    parts = [
        d.paragraph(f"measured {res.date} with fastcpu {res.fastcpu_version}: {len(res)} "
                    f"methods, {runs} runs per method, serialize={res.serialize}",
                    bold=f"fastcpu.Results {res.name}"),
        d.paragraph(format_clock(res.clock)),
        d.bullets(([] if res.verified else [unverified]) + list(res.notes), "notes on this file"),
        d.table(columns, rows, groups=groups, caption=f"{QUESTION_WORDS[ONE_CALL]}: each method timed as a single "
                                                      "copy against the empty sequence"),
        _back_to_back_html(res),
        d.bullets(res.answer_lines(), "cheapest way that reports the CPU, for each question"),
        d.bullets(machine_warnings, "machine warnings (from the facts saved with the results)"),
        d.bullets((f"{name}: {reason}" for name, reason in res.unavailable.items()),
                  "not available there"),
    ]
    if res.selftest is not None:
        st = res.selftest
        parts.append(d.details(
            f"self-test: {'PASS' if st.passed else 'FAIL'} (its harness-bias corrections are "
            "subtracted from the estimates above)", st.lines()))
    return d.block(*parts)


def _back_to_back_html(res: Any) -> str:
    """Calls back to back's table (``Results.back_to_back``): each method's
    cost per call in a loop, or a line saying they were not measured."""
    d = _display
    if not res.back_to_back:
        return d.paragraph(NOT_MEASURED_BACK_TO_BACK, bold=f"{QUESTION_WORDS[BACK_TO_BACK]}:")
    rows = [[r.method, r.cost_text("core_cycles", 2), r.cost_text("ns", 2), r.k, f"{r.runs_used} of {r.runs}",
             r.migrations] for r in res.back_to_back.values()]
    return d.table(["method", "core cycles \u00b1 95%", "ns \u00b1 95%", "k", "pairs used", "migrated"], rows,
                   caption=f"{QUESTION_WORDS[BACK_TO_BACK]}: cost per call in a loop (bench_diff: runs of 2k copies "
                           "against k, the difference over k)")
