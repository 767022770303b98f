"""The CLI's tables of results in TSC ticks, ns and core cycles; file text shown through :func:`fastcpu._base.printable`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .values import Clock
from .bench_result import BenchResult, DiffResult
from .._base import printable
from .statistics import Statistic, shown_in
from .. import _base as _display
from .answers import BACK_TO_BACK, NOT_MEASURED_BACK_TO_BACK, ONE_CALL, QUESTION_WORDS
from .bench_result import BenchResult, stability
from .stability import Stability

__all__ = ['format_clock', 'format_table', 'format_back_to_back', 'format_warnings', 'results_html']


def format_clock(clk: Clock) -> str:
    """The clock in a header: the TSC's rate and granularity (and, apart, the
    spacing of back-to-back reads), core cycles per tick with the rulers'
    verdict, and what the core does with immediate-add chains."""
    spacing = (f"; back-to-back reads {clk.tsc_read_spacing_ticks:.0f} ticks apart"
               if math.isfinite(clk.tsc_read_spacing_ticks) else "")
    head = (f"clock: TSC {clk.tsc_hz / 1e6:.2f} MHz, granularity {clk.tsc_step_ticks:.4g} ticks "
            f"({clk.tsc_step_ns:.1f} ns{spacing}), ")
    problem = clk.core_cycles_problem
    if problem:
        return head + f"core cycles per tick UNKNOWN: {problem}"
    r = clk.rulers
    if r is None:
        return head + f"{clk.cycles_per_tick:.3f} core cycles per tick (core {clk.core_hz / 1e9:.2f} GHz)"
    return head + (
        f"{clk.cycles_per_tick:.3f} core cycles per tick (core {clk.core_hz / 1e9:.2f} GHz by "
        f"register-register adds; imul/3 reads {r.imul_cycles_per_tick:.3f}, tolerance "
        f"{r.tolerance:.1%}); {r.immediate_add_words()}"
    )


def _head(s: Statistic) -> tuple[str, list[tuple[str, int]]]:
    """A statistic's group heading and its (column head, width) pairs."""
    if s.has_interval:
        return s.heading, [("ticks", 8), ("+-95%", 6), ("cycles", 8)]
    return s.heading, [("ticks", 9), ("ns", 8), ("cycles", 8)]


def _cells(s: Statistic, r: BenchResult) -> list[str]:
    if s.name == "estimate" and not r.resolved:  # below resolution: a bound, never a cost
        return [f"{'< ' + format(r.upper_bound, '.2f'):>8}", f"{'':6}",
                f"{'< ' + format(r.upper_bound_core_cycles, '.2f'):>8}"]
    if s.has_interval:
        return [f"{s.value(r):8.2f}", f"{s.half_width(r):6.2f}", f"{s.value(r, 'core_cycles'):8.2f}"]
    if s.value(r) < 0:  # the seed's figures: a run quicker than the empty one's says "no more than 0"
        return [f"{'<= 0':>9}", f"{'<= 0':>8}", f"{'<= 0':>8}"]
    return [f"{s.value(r):9.1f}", f"{s.value(r, 'ns'):8.2f}", f"{s.value(r, 'core_cycles'):8.1f}"]


def format_table(results: Iterable[BenchResult], unavailable: Iterable[tuple[str, str | None]] = ()) -> str:
    """A row per result: BEST, MEDIAN and ESTIMATE in TSC ticks (with 95% half-width), ns and core cycles; then what could not run.

    ``*`` marks a resolution-limited best or median; an unresolved ESTIMATE
    shows as ``< X``, a negative BEST or MEDIAN as ``<= 0``."""
    results = list(results)
    names = [printable(r.method) for r in results]
    missing = [(printable(name), printable(reason)) for name, reason in unavailable]
    stats = shown_in("table")
    last_seed = max((i for i, s in enumerate(stats) if s.seed), default=-1)
    w = max([14] + [len(name) for name in names] + [len(name) for name, _ in missing])

    def head_gap(i: int) -> str:  # the resolution mark's column follows the last seed figure
        return " " if i == 0 else "    " if i == last_seed + 1 else "   "

    heads, units = [f"{'':{w}}"], [f"{'METHOD':{w}}"]
    for i, s in enumerate(stats):
        heading, cols = _head(s)
        width = sum(c for _, c in cols) + len(cols) - 1
        heads.append(head_gap(i) + f"{heading:^{width}}")
        units.append(head_gap(i) + " ".join(f"{h:>{c}}" for h, c in cols))
    lines = ["".join(heads).rstrip(), "".join(units) + f" {'estimator':11} migrated"]
    for r, name in zip(results, names):
        mark = "*" if r.resolution_limited else " "
        row = [f"{name:{w}}"]
        for i, s in enumerate(stats):
            row.append((" " if i == 0 else "   ") + " ".join(_cells(s, r)) + (mark if i == last_seed else ""))
        lines.append("".join(row) + f" {r.estimator:11} {r.migrations:8d}")
    if missing:
        lines.append("")
        lines.append("not available here:")
        lines.extend(f"  {name:{w}} {reason}" for name, reason in missing)
    return "\n".join(lines)


def format_back_to_back(results: Iterable[DiffResult]) -> str:
    """The calls-back-to-back table: per way the ESTIMATE in TSC ticks +- 95% half-width, ns and core cycles; ``< X`` if unresolved."""
    results = list(results)
    names = [printable(r.method) for r in results]
    w = max([14] + [len(n) for n in names])
    loops = sorted({(r.copy_loop_core_cycles, r.copy_loop_ci95_core_cycles) for r in results
                    if r.copy_loop_core_cycles})
    loop = ""
    if loops:  # one figure where every result took the same loop
        own = (f"the copy loop itself {loops[0][0]:.2f} +- {loops[0][1]:.2f} core cycles per copy" if len(loops) == 1
               else "the copy loop's own cost")
        loop = (f"; {own}, which a call overlaps wholly to not at all: half of it taken off, half in the interval, "
                "and a call that does not stand out from it shows as < X")
    lines = [f"calls back to back (bench_diff: {'/'.join(sorted({str(2 * r.k) for r in results}))} against "
             f"{'/'.join(sorted({str(r.k) for r in results}))} copies a run; cost per call{loop})",
             f"{'METHOD':{w}} {'ticks':>9} {'+-95%':>6} {'ns':>8} {'cycles':>9} {'estimator':11} migrated"]
    for r, name in zip(results, names):
        if r.resolved:
            cells = (f"{r.estimate:9.2f} {r.estimate_ci95:6.2f} {r.estimate_ns:8.2f} "
                     f"{r.estimate_core_cycles:9.2f}")
        else:
            cells = (f"{'< ' + format(r.upper_bound, '.2f'):>9} {'':6} {'< ' + format(r.upper_bound_ns, '.2f'):>8} "
                     f"{'< ' + format(r.upper_bound_core_cycles, '.2f'):>9}")
        lines.append(f"{name:{w}} {cells} {r.estimator:11} {r.migrations:8d}")
    return "\n".join(lines)


def format_warnings(results: Iterable[BenchResult]) -> str:
    """The stability warnings of `results`: the machine's once, then each
    method's own. Empty when there is nothing to say."""
    results = list(results)
    machine: list[str] = []
    per_method: list[str] = []
    for r in results:
        report = r.stability
        # a caveat (core cycles unknown, no correction) is said once, not per method
        machine.extend(w for w in (*report.machine_warnings, *r.caveats) if w not in machine)
        per_method.extend(f"{r.method}: {w}" for w in report.run_warnings if w not in r.caveats)
    if not machine and not per_method:
        return ""
    lines = ["warnings (the figures stand; these say what may skew them):"]
    lines.extend(f"  - {printable(w)}" for w in machine + per_method)
    return "\n".join(lines)


def _stability(res: Any, r: BenchResult) -> Stability:
    """r's stability report against the facts of the machine it ran on."""
    try:
        return stability(r, res.machine)
    except TypeError:  # facts of the wrong types (an edited file): judge the runs alone
        return stability(r, {})

def results_html(res: Any, unverified: str) -> str:
    """`res` (a Results) as HTML for Jupyter: both questions' tables, the answers, warnings and self-test; `unverified` as said of unchecked figures."""
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
    """Calls back to back's HTML table, or a line saying they were not measured."""
    d = _display
    if not res.back_to_back:
        return d.paragraph(NOT_MEASURED_BACK_TO_BACK, bold=f"{QUESTION_WORDS[BACK_TO_BACK]}:")
    rows = [[r.method, r.cost_text("core_cycles", 2), r.cost_text("ns", 2), r.k, f"{r.runs_used} of {r.runs}",
             r.migrations] for r in res.back_to_back.values()]
    return d.table(["method", "core cycles \u00b1 95%", "ns \u00b1 95%", "k", "pairs used", "migrated"], rows,
                   caption=f"{QUESTION_WORDS[BACK_TO_BACK]}: cost per call in a loop (bench_diff: runs of 2k copies "
                           "against k, the difference over k)")
