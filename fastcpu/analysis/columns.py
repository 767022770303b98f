"""compare()'s columns (per copy above the empty sequence, in ``*_ticks``, ``*_ns`` and
``*_core_cycles``; an interval as ``NAME_ci_low_UNIT``/``NAME_ci_high_UNIT``) and the one CSV
schema, ``CSV_COLUMNS`` (docs/files.md, "Comparing")."""

from __future__ import annotations

import math
from typing import Any
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from .._args import UNITS as UNIT_TABLE
from ..results.results import BACK_TO_BACK, NOT_MEASURED, ONE_CALL, Results
from ..results.statistics import shown_in, statistic
from .. import _base as _display
from .._args import check_choice, check_unit
from ..results.results import BACK_TO_BACK, NOT_MEASURED, ONE_CALL, QUESTION_WORDS
from ..results.statistics import shown_in

__all__ = ['COLUMNS', 'CSV_COLUMNS', 'UNITS', 'MACHINE_COLUMNS', 'RESULT_COLUMNS', 'BACK_TO_BACK_COLUMNS', 'ANSWER_COLUMNS', 'COST', 'rows_of', 'result_rows', 'format_comparison', 'LAYOUTS', 'NAME_LINES_MAX', 'MODEL_MARK', 'MODEL_NOTE', 'QUESTION_HEADINGS', 'NONE_BACK_TO_BACK', 'SideBySide', 'side_by_side', 'models_of', 'measured_for', 'estimate_cell', 'answers']


#: Column suffix -> how to read it (the package's one unit table, _args.UNITS).
UNITS = {u.name: u.words for u in UNIT_TABLE.values()}
#: The machine's own rulers, repeated on each of its rows: its TSC's rate
#: (ticks per second), the counter's granularity (TSC ticks; called
#: ``tsc_granularity_ticks`` before 0.7), its core cycles per TSC tick at first
#: use (NaN: unknown there; each result converts with its own,
#: ``cycles_per_tick``) and how many dependent ``add $imm`` its core runs per
#: core cycle (folded at rename above 1.25; NaN: not recorded, files before
#: fastcpu 0.5).
MACHINE_COLUMNS = ("tsc_hz", "tsc_step_ticks", "clock_core_cycles_per_tick", "immediate_adds_per_core_cycle")
#: Each result's own: its method's kind as its file has it (``'method'``,
#: ``'model'``, ``'chain'``; '' for a user function), the runs its ESTIMATE rests on, its estimator, whether it
#: stands out from the empty sequence (False: its ESTIMATE is a bound, from 0 to
#: estimate_ci_high, BenchResult.resolved), the core
#: cycles per TSC tick it converts with, and the harness bias subtracted from
#: its ESTIMATE (core cycles; 0: none, see ``Results.selftest``).
RESULT_COLUMNS = ("kind", "runs_used", "estimator", "migrations", "resolved", "cycles_per_tick",
                  "harness_bias_core_cycles")
#: The second question, calls back to back (``Results.back_to_back``:
#: ``bench_diff``, runs of 2k copies against k, cost per call in a loop), beside
#: the first (every column above: one call alone). ``back_to_back`` says
#: ``'measured'`` or ``'not measured'`` (a file before 0.7.0, or measured with
#: --unroll: then the other columns are empty, NaN); its k, the pairs its
#: ESTIMATE rests on, whether it stands out from zero, and its ESTIMATE with
#: the interval's ends in every unit (``back_to_back_estimate_ns``, ...).
BACK_TO_BACK_COLUMNS = ("back_to_back", "back_to_back_k", "back_to_back_runs_used", "back_to_back_resolved") + tuple(
    f"back_to_back_{c}" for unit in UNITS for c in statistic("estimate").columns(unit))
#: Each machine's answers, repeated on each of its rows as its rulers are:
#: the cheapest way that reports the CPU there for each question
#: (``Results.cheapest_way_words``: ties within resolution named), and the
#: line saying that the two differ ('' where they agree or one is not measured).
ANSWER_COLUMNS = ("cheapest_one_call", "cheapest_back_to_back", "answers_differ")
COLUMNS = ("machine", "method", "runs", "unroll", "serialize", "source") + RESULT_COLUMNS + MACHINE_COLUMNS + tuple(
    c for unit in UNITS for s in shown_in("compare") for c in s.columns(unit)
) + BACK_TO_BACK_COLUMNS + ANSWER_COLUMNS
#: The one CSV schema: ``compare --csv``, ``compare(...).to_csv()``,
#: ``run --format csv`` and ``export.write_csv()`` all write these columns.
CSV_COLUMNS = COLUMNS
#: The figure that answers "what does this way cost", as everywhere
#: (BenchResult.estimate): the terminal layouts show it and its ratios.
COST = statistic("estimate")

def _machine_facts(results: Results) -> dict[str, float]:
    """MACHINE_COLUMNS of one file's clock."""
    clk = results.clock
    return {"tsc_hz": float(clk.tsc_hz), "tsc_step_ticks": float(clk.tsc_step_ticks),
            "clock_core_cycles_per_tick": float(clk.cycles_per_tick),
            "immediate_adds_per_core_cycle": math.nan if clk.rulers is None
            else clk.rulers.immediate_adds_per_core_cycle}


def _back_to_back_cells(results: Results, method: str, confidence: float) -> dict[str, Any]:
    """BACK_TO_BACK_COLUMNS of one method: its DiffResult's, or 'not measured'."""
    d = results.back_to_back.get(method)
    if d is None:
        return {"back_to_back": NOT_MEASURED, "back_to_back_k": None, "back_to_back_runs_used": None,
                "back_to_back_resolved": None,
                **{c: math.nan for c in BACK_TO_BACK_COLUMNS[4:]}}
    cells: dict[str, Any] = {"back_to_back": "measured", "back_to_back_k": d.k,
                             "back_to_back_runs_used": d.runs_used, "back_to_back_resolved": d.resolved}
    for unit in UNITS:
        cells.update({f"back_to_back_{k}": v for k, v in COST.cells(d, unit, confidence).items()})
    return cells


def _answer_cells(results: Results) -> dict[str, str]:
    """ANSWER_COLUMNS of one machine (Results' one answer per question)."""
    return {"cheapest_one_call": results.cheapest_way_words(ONE_CALL),
            "cheapest_back_to_back": results.cheapest_way_words(BACK_TO_BACK),
            "answers_differ": results.answers_differ()}


def rows_of(results: Results, confidence: float, source: str) -> list[dict[str, Any]]:
    rows = []
    answers = _answer_cells(results)
    for r in results.values():
        row: dict[str, Any] = {
            "machine": results.name, "method": r.method, "runs": r.runs, "unroll": r.unroll,
            "serialize": r.serialize, "source": source,
            "kind": r.catalog_row.kind if r.catalog_row is not None else "",
            "runs_used": r.runs_used, "estimator": r.estimator,
            "migrations": r.migrations, "resolved": r.resolved, "cycles_per_tick": float(r.cycles_per_tick),
            "harness_bias_core_cycles": float(r.harness_bias_core_cycles),
            **_machine_facts(results),
        }
        for unit in UNITS:
            for stat in shown_in("compare"):
                row.update(stat.cells(r, unit, confidence))
        row.update(_back_to_back_cells(results, r.method, confidence))
        row.update(answers)
        rows.append(row)
    return rows


def result_rows(results: Results, source: str = "", machine: str | None = None) -> list[dict[str, Any]]:
    """The rows of one Results in the one CSV schema (CSV_COLUMNS), intervals
    at 95%: what ``export.write_csv`` writes; `machine` names them (default
    ``results.name``)."""
    rows = rows_of(results, 0.95, source)
    for row in rows:
        row["machine"] = results.name if machine is None else machine
    return rows


#: How a model's name shows in compare's tables, and the line saying so.
MODEL_MARK = " (model)"
MODEL_NOTE = ("(model): a C model of a historical or proposed implementation, timed as its callers pay it: "
              "not a way a process has (fastcpu.methods(), kind 'model')")


def models_of(rows: Sequence[dict[str, Any]]) -> set[str]:
    """The methods the rows' own files call models (kind 'model'): not ways a
    process has. From each result's catalog row, as its file has it, never
    the reading machine's catalog (which a machine without the C core lacks)."""
    return {str(r["method"]) for r in rows if r.get("kind") == "model"}


def _correction_words(rows: list[dict[str, Any]]) -> str:
    """Whether a machine's ESTIMATEs carry a harness correction, from its rows."""
    biases = sorted({float(r["harness_bias_core_cycles"]) for r in rows
                     if "harness_bias_core_cycles" in r and math.isfinite(float(r["harness_bias_core_cycles"]))})
    applied = [b for b in biases if b != 0]
    if not applied:
        return "ESTIMATE uncorrected (no harness correction: no self-test stored, or it failed)"
    low, high = f"{applied[0]:+.2f}", f"{applied[-1]:+.2f}"
    shown = low if low == high else f"{low} to {high}"
    some = "" if len(applied) == len(biases) else ", some results none"
    return f"ESTIMATE less the self-test's harness bias ({shown} core cycles{some})"


def _immediate_add_words(per_cycle: float) -> str:
    if math.isnan(per_cycle):
        return "immediate adds not recorded"
    from ..results.values import FOLDED_ABOVE

    return (f"add $imm folded at rename ({per_cycle:.1f} per core cycle)" if per_cycle > FOLDED_ABOVE
            else f"add $imm not folded ({per_cycle:.2f} per core cycle)")


#: format_comparison's layouts: a column per machine (with ratios to the
#: first), or a row per machine and method, for a terminal; the first as
#: Markdown (GitHub's tables), for a README or an issue.
LAYOUTS = ("machines", "rows", "markdown")
#: The most header lines a machine's name takes in the 'machines' layout.
NAME_LINES_MAX = 4


def format_comparison(table: Any, unit: str = "cycles", confidence: float = 0.95,
                      layout: str = "machines") -> str:
    """A terminal table of one unit, per copy above the empty sequence (docs/files.md, "Comparing").

    Layouts: ``'machines'`` (default) a row per method, per machine the ESTIMATE
    +- its half-width and its RATIO to the first machine's (in ns for ticks),
    a table per question; ``'rows'`` a row per machine and method with BEST,
    MEDIAN and the ESTIMATE; ``'markdown'`` the 'machines' layout in Markdown.
    Each ends with each machine's cheapest way per question.

    Args:
        table: what :func:`compare` returns (DataFrame or ComparisonTable).
        unit: ``'ticks'`` (TSC ticks), ``'ns'`` or ``'cycles'`` (core cycles).
        confidence: the intervals' confidence, for the header.
        layout: ``'machines'``, ``'rows'`` or ``'markdown'``.

    Raises:
        TypeError, ValueError: an unknown unit or layout."""
    suffix = check_unit(unit)
    layout = check_choice("layout", layout, LAYOUTS)
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    if layout == "rows":
        return _format_rows(rows, suffix, confidence)
    if layout == "markdown":
        return _format_markdown(rows, suffix, confidence)
    return _format_machines(rows, suffix, confidence)


def _md(text: object) -> str:
    """File text for a Markdown table cell: escaped, pipes and backslashes too."""
    return _display.printable(text).replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")


def _format_markdown(rows: list[dict[str, Any]], suffix: str, confidence: float) -> str:
    """The 'machines' layout in Markdown: a heading and table per question, then the answers."""
    lines = []
    models = models_of(rows)
    for question in (ONE_CALL, BACK_TO_BACK):
        lines.append(f"### {QUESTION_WORDS[question]}")
        lines.append("")
        if question == BACK_TO_BACK and not any(measured_for(r, question) for r in rows):
            lines += [NONE_BACK_TO_BACK, ""]
            continue
        side = side_by_side(rows, suffix, confidence, question)
        lines += [x for t in side.title[1:] for x in (_md(t), "")]
        head = ["method"]
        for i, m in enumerate(side.machines):
            head.append(_md(m) + (" (baseline)" if side.ratios and i == side.baseline else ""))
            if side.ratios:
                head.append("RATIO")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for k, method in enumerate(side.methods):
            cells = [_md(method) + (MODEL_MARK if method in models else "")]
            for i in range(len(side.machines)):
                cells.append(side.cells[k][i])
                if side.ratios:
                    cells.append(side.ratios[k][i])
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if models:
        lines += [_md(MODEL_NOTE), ""]
    for machine, said in answers(rows).items():
        lines.append(f"**{_md(machine)}**: cheapest way that reports the CPU (by ESTIMATE, 95%)")
        lines.append("")
        lines += [f"- {q}: {_md(w)}" if q else f"- {_md(w)}" for q, w in said]
        lines.append("")
    return "\n".join(lines).rstrip("\n")


@dataclass(frozen=True)
class SideBySide:
    """The 'machines' layout as data: what the terminal and HTML both show."""

    machines: list[str]
    methods: list[str]
    cells: list[list[str]]  # [method][machine]: the ESTIMATE +- its half-width
    ratios: list[list[str]]  # the same shape, RATIO cells; [] with one machine
    title: list[str]
    #: the machine the ratios are to: the first one measured for the table's question
    baseline: int = 0


#: Where each question's figures are in a row: the columns' prefix, and what
#: the heading over its table says of it.
_QUESTION_PREFIX = {ONE_CALL: "", BACK_TO_BACK: "back_to_back_"}
QUESTION_HEADINGS = {
    ONE_CALL: f"{QUESTION_WORDS[ONE_CALL].upper()} (single copy above the empty sequence: the LKML seed's question)",
    BACK_TO_BACK: f"{QUESTION_WORDS[BACK_TO_BACK].upper()} (bench_diff: runs of 2k copies against k, cost per call "
                  "in a loop: the glibc seed's question)",
}


#: What a back-to-back ESTIMATE is (DiffResult.estimate).
_BACK_TO_BACK_MEANING = ("the differencing estimate (DiffResult.estimate: the fenced mean of the paired "
                         "differences of 2k and k copies, over k), which cancels what the harness adds once a run, "
                         "less half the copy loop's own cost per copy where measured (fastcpu 0.8.7 on)")
#: What the terminal says where no file measured calls back to back.
NONE_BACK_TO_BACK = (f"{QUESTION_WORDS[BACK_TO_BACK]}: {NOT_MEASURED} in any of these files (written before "
                     "fastcpu 0.7.0, or measured with --unroll): only one call alone is compared")


def measured_for(r: dict[str, Any] | None, question: str) -> bool:
    """Whether a row holds figures for `question` (calls back to back: not in a file before 0.7.0)."""
    return r is not None and (question == ONE_CALL or r.get("back_to_back", NOT_MEASURED) != NOT_MEASURED)


def estimate_cell(r: dict[str, Any], suffix: str, question: str = ONE_CALL) -> str:
    """A row's ESTIMATE for `question` as the tables show it: ``X +- H``, or
    ``< B`` below what the harness resolves, or 'not measured'."""
    if not measured_for(r, question):
        return NOT_MEASURED
    pre = _QUESTION_PREFIX[question]
    mean, low, high = (float(r[f"{pre}{COST.name}{part}_{suffix}"]) for part in ("", "_ci_low", "_ci_high"))
    if math.isnan(mean):
        return "nan"
    if r.get(f"{pre}resolved") is False:  # below what the harness resolves: a bound, never a cost
        return f"< {high:.2f}"
    # compare()'s interval is the mean +- a half-width: the narrower way to write it
    return f"{mean:.2f}" if math.isnan(low) else f"{mean:.2f} +- {(high - low) / 2:.2f}"


def side_by_side(rows: list[dict[str, Any]], suffix: str, confidence: float,
                  question: str = ONE_CALL) -> SideBySide:
    machines = list(dict.fromkeys(str(r["machine"]) for r in rows))
    methods = list(dict.fromkeys(str(r["method"]) for r in rows))
    by = {(str(r["machine"]), str(r["method"])): r for r in rows}
    pct = round(confidence * 100)
    pre = _QUESTION_PREFIX[question]

    # TSC ticks differ between hosts (their TSCs tick at different rates):
    # a ratio of ticks across machines would mix that in, so take it in ns
    ratio_suffix = "ns" if suffix == "ticks" else suffix
    cost = COST.name

    def estimate(machine: str, method: str) -> float:
        r = by.get((machine, method))
        return math.nan if not measured_for(r, question) else float(r[f"{pre}{cost}_{ratio_suffix}"])  # type: ignore[index]

    def cell(machine: str, method: str) -> str:
        r = by.get((machine, method))
        return "-" if r is None else estimate_cell(r, suffix, question)

    # the baseline: the first machine with a figure for this question (a file written before
    # calls back to back were measured has none: ratios to it would all be '-')
    baseline = next((i for i, m in enumerate(machines)
                     if any(measured_for(by.get((m, t)), question) for t in methods)), 0)

    def ratio(machine: str, method: str) -> str:
        rows_of = (by.get((machines[baseline], method)), by.get((machine, method)))
        if any(r is not None and r.get(f"{pre}resolved") is False for r in rows_of):
            return "-"  # a bound: no ratio to or of it
        base, value = estimate(machines[baseline], method), estimate(machine, method)
        # a ratio to nothing, or to an estimate at or below 0, says nothing
        if not (math.isfinite(base) and math.isfinite(value)) or base <= 0:
            return "-"
        return f"{value / base:.2f}x"

    meaning = COST.meaning if question == ONE_CALL else _BACK_TO_BACK_MEANING
    title = [QUESTION_HEADINGS[question],
             f"{UNITS[suffix]} per {'copy above the empty sequence' if question == ONE_CALL else 'call'}; "
             f"{COST.heading}: {meaning} +- its {pct}% interval"]
    if len(machines) > 1:
        title.append(f"RATIO: a machine's {COST.heading} over the baseline's (the first machine's"
                     + (" measured for this question)" if baseline else ")")
                     + (", in ns: TSC ticks differ between hosts" if ratio_suffix != suffix else ""))
    return SideBySide(machines, methods, [[cell(m, t) for m in machines] for t in methods],
                       [[ratio(m, t) for m in machines] for t in methods] if len(machines) > 1 else [],
                       title, baseline)


def _question_lines(rows: list[dict[str, Any]], suffix: str, confidence: float, question: str) -> list[str]:
    """One question's table in the 'machines' layout: ESTIMATE and ratio per machine."""
    side = side_by_side(rows, suffix, confidence, question)
    machines, methods = side.machines, side.methods
    ratios = bool(side.ratios)
    pct = round(confidence * 100)
    est_head, ratio_head = f"{COST.heading} +-{pct}%", "RATIO"
    cells, ratio_cells = side.cells, side.ratios
    est_w = max([len(est_head)] + [len(c[i]) for c in cells for i in range(len(machines))])
    ratio_w = max([len(ratio_head)] + [len(c) for r in ratio_cells for c in r])
    group_w = est_w + (2 + ratio_w if ratios else 0)
    # names come from files: a terminal gets them through printable(); models marked
    models = models_of(rows)
    shown = {name: _display.printable(name) for name in machines}
    shown.update({name: _display.printable(name) + (MODEL_MARK if name in models else "") for name in methods})
    method_w = max([len("METHOD")] + [len(shown[t]) for t in methods])

    names = [textwrap.wrap(shown[m] + (" (baseline)" if ratios and i == side.baseline else ""), group_w,
                           max_lines=NAME_LINES_MAX, placeholder=" ...") or [""]
             for i, m in enumerate(machines)]
    depth = max((len(n) for n in names), default=0)
    names = [[""] * (depth - len(n)) + n for n in names]  # bottom-aligned: each name sits on its column

    gap = "   "
    lines = [*side.title, ""]
    for k in range(depth):
        lines.append((" " * method_w + gap + gap.join(n[k].ljust(group_w) for n in names)).rstrip())

    def group(est: str, rat: str | None) -> str:
        return est.rjust(est_w) + ("" if rat is None else "  " + rat.rjust(ratio_w))

    lines.append(f"{'METHOD':{method_w}}" + gap
                 + gap.join(group(est_head, ratio_head if ratios else None) for _ in machines))
    for k, method in enumerate(methods):
        lines.append(f"{shown[method]:{method_w}}" + gap + gap.join(
            group(cells[k][i], ratio_cells[k][i] if ratios else None) for i in range(len(machines))))
    return lines


def _format_machines(rows: list[dict[str, Any]], suffix: str, confidence: float) -> str:
    lines = _question_lines(rows, suffix, confidence, ONE_CALL)
    lines.append("")
    if any(measured_for(r, BACK_TO_BACK) for r in rows):
        lines += _question_lines(rows, suffix, confidence, BACK_TO_BACK)
    else:
        lines.append(NONE_BACK_TO_BACK)
    machines = list(dict.fromkeys(str(r["machine"]) for r in rows))
    shown = {name: _display.printable(name) for name in machines}
    if models_of(rows):
        lines += ["", MODEL_NOTE]
    if not rows or any(c not in rows[0] for c in MACHINE_COLUMNS):  # a table of other columns
        return "\n".join(lines)
    lines.append("")
    lines.append("each machine's rulers (TSC granularity; core cycles per TSC tick; immediate-add chains) "
                 "and harness correction:")
    for m in machines:
        mine = [r for r in rows if str(r["machine"]) == m]
        first = mine[0]
        cpt = float(first["clock_core_cycles_per_tick"])
        lines.append(f"  {shown[m]}: granularity {float(first['tsc_step_ticks']):.4g} ticks; "
                     + (f"{cpt:.3f} core cycles per tick" if math.isfinite(cpt) else "core cycles unknown")
                     + _own_rulers_words(mine, cpt)
                     + f"; {_immediate_add_words(float(first['immediate_adds_per_core_cycle']))}; "
                     + _correction_words(mine))
    lines += _answer_lines(rows)
    return "\n".join(lines)


def answers(rows: Sequence[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Each machine's answers from its rows' ANSWER_COLUMNS: machine ->
    [(the question in words, the cheapest way in words), ...] and, where
    the two differ, ('', the line saying so); {} for rows without them."""
    out: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        machine = str(r["machine"])
        if machine in out or any(c not in r for c in ANSWER_COLUMNS):
            continue
        out[machine] = [(QUESTION_WORDS[ONE_CALL], str(r["cheapest_one_call"])),
                        (QUESTION_WORDS[BACK_TO_BACK], str(r["cheapest_back_to_back"]))]
        if r["answers_differ"]:
            out[machine].append(("", str(r["answers_differ"])))
    return out


def _answer_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Per machine, each question's cheapest way (ties named), and a line where they differ."""
    found = answers(rows)
    if not found:
        return []
    lines = ["", "each machine's cheapest way that reports the CPU, for each question (by ESTIMATE, 95%; "
                 "Results.cheapest_way):"]
    for machine, said in found.items():
        lines.append(f"  {_display.printable(machine)}:")
        lines += [f"    {question}: {_display.printable(words)}" if question else f"    {_display.printable(words)}"
                  for question, words in said]
    return lines


def _own_rulers_words(rows: list[dict[str, Any]], clock_cpt: float) -> str:
    """The range of a machine's own conversions more than 1% from its clock's."""
    own = [float(r["cycles_per_tick"]) for r in rows if "cycles_per_tick" in r]
    own = [c for c in own if math.isfinite(c)]
    if not own or not math.isfinite(clock_cpt) or max(abs(c / clock_cpt - 1) for c in own) <= 0.01:
        return ""
    return f" at first use, each result its own: {min(own):.3f} to {max(own):.3f}"


def _format_rows(rows: list[dict[str, Any]], suffix: str, confidence: float) -> str:
    """A row per machine and method: runs, unroll, BEST, MEDIAN, ESTIMATE and interval."""
    models = models_of(rows)

    def shown(name: object, method: bool = False) -> str:
        return _display.printable(name) + (MODEL_MARK if method and name in models else "")

    mw = max([len("MACHINE")] + [len(shown(r["machine"])) for r in rows])
    tw = max([len("METHOD")] + [len(shown(r["method"], True)) for r in rows])
    seed = [s for s in shown_in("compare") if s.seed]
    pct = round(confidence * 100)
    ci = f"{pct}% CI OF {COST.heading}"
    loop = any(measured_for(r, BACK_TO_BACK) for r in rows)
    loop_head = f"{QUESTION_WORDS[BACK_TO_BACK].upper()} +-{pct}%"
    loop_cells = [estimate_cell(r, suffix, BACK_TO_BACK) for r in rows] if loop else []
    lw = max([len(loop_head)] + [len(c) for c in loop_cells])
    intervals = []
    for r in rows:
        low, high = r[f"{COST.name}_ci_low_{suffix}"], r[f"{COST.name}_ci_high_{suffix}"]
        intervals.append("" if math.isnan(low) else f"[{low:.2f}, {high:.2f}]")
    iw = max([len(ci)] + [len(i) for i in intervals])
    lines = [
        f"{UNITS[suffix]} per copy above the empty sequence ({QUESTION_WORDS[ONE_CALL]}); {COST.heading}: "
        f"{COST.meaning}",
        *([f"{QUESTION_WORDS[BACK_TO_BACK].upper()}: {UNITS[suffix]} per call in a loop, {COST.heading}: "
           f"{_BACK_TO_BACK_MEANING}"]
          if loop else [NONE_BACK_TO_BACK]),
        f"{'MACHINE':{mw}}  {'METHOD':{tw}}  {'RUNS':>7} {'UNROLL':>6}  "
        + "".join(f"{s.heading.split()[0]:>9} " for s in seed) + f"{COST.heading:>11}  "
        + (f"{ci:{iw}}  {loop_head:>{lw}}" if loop else ci),
    ]
    for i, r in enumerate(rows):
        lines.append((
            f"{shown(r['machine']):{mw}}  {shown(r['method'], True):{tw}}  {r['runs']:7d} {r['unroll']:6d}  "
            + "".join(f"{r[f'{s.name}_{suffix}']:9.2f} " for s in seed)
            + f"{r[f'{COST.name}_{suffix}']:11.2f}  "
            + (f"{intervals[i]:{iw}}  {loop_cells[i]:>{lw}}" if loop else intervals[i])).rstrip()
        )
    if any(r["method"] in models for r in rows):
        lines.append(MODEL_NOTE)
    lines += _answer_lines(rows)
    return "\n".join(lines)
