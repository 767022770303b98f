"""compare()'s tables for a terminal and for Jupyter: a table per question
(one call alone, calls back to back), the methods in rows and the machines
side by side with ratios to the first ('machines'), or a row per machine and
method ('rows'); each machine's rulers; each machine's cheapest way for each
question and a line where the two differ. Everything is read off the rows of
``_compare_columns`` (a ComparisonTable's or a DataFrame's records), never a
Results.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _display
from ._args import check_choice, check_unit
from ._compare_columns import ANSWER_COLUMNS, COST, MACHINE_COLUMNS, UNITS
from ._machine_results import BACK_TO_BACK, NOT_MEASURED, ONE_CALL, QUESTION_WORDS
from ._statistics import shown_in

__all__ = ["format_comparison", "LAYOUTS", "NAME_LINES_MAX", "MODEL_MARK", "MODEL_NOTE", "QUESTION_HEADINGS",
           "NONE_BACK_TO_BACK", "SideBySide", "side_by_side", "models_of", "measured_for", "estimate_cell", "answers"]


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
    from ._clock_values import FOLDED_ABOVE

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
    """A terminal table of one unit, per copy above the empty sequence.

    ``layout='machines'`` (the default, what ``fastcpu compare`` prints): a
    row per method and, per machine (in the order of the table, its name
    above), a column with the ESTIMATE (``BenchResult.estimate``, the cost
    figure everywhere: the recommended estimator less the harness bias where
    the self-test trusts it) +- the half-width of its interval, and a RATIO
    column, that estimate over the first machine's (the baseline: ``1.00x``
    in its own column; taken in ns when `unit` is ticks, which differ
    between hosts); a method a machine lacks shows ``-``, as does a ratio
    against a baseline estimate that is not above 0. With one machine, no
    ratios. That table answers one call alone; a second one, named by its
    question, calls back to back (``back_to_back_*``: a machine whose file
    has none shows ``not measured``, and the ratios are to the first machine
    that has them; one line instead where no file has any).
    ``layout='rows'``: a row per machine and method with runs, unroll,
    BEST, MEDIAN (the seed's figures), the ESTIMATE and its interval, and
    calls back to back's ESTIMATE. Both end with each machine's
    cheapest way that reports the CPU for each question, ties within
    resolution named, and a line where the two differ. ``layout='markdown'``:
    the 'machines' layout as Markdown, a heading and a table per question,
    then each machine's answers as a list.

    Args:
        table: what :func:`compare` returns (DataFrame or ComparisonTable).
        unit: ``'ticks'`` (TSC ticks), ``'ns'`` or ``'cycles'`` (core cycles).
        confidence: the confidence of the table's intervals, for the header
            (the intervals are computed by :func:`compare`, at its `confidence`).
        layout: ``'machines'``, ``'rows'`` or ``'markdown'``.

    Raises:
        TypeError, ValueError: an unknown unit or layout.
    """
    suffix = check_unit(unit)
    layout = check_choice("layout", layout, LAYOUTS)
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    if layout == "rows":
        return _format_rows(rows, suffix, confidence)
    if layout == "markdown":
        return _format_markdown(rows, suffix, confidence)
    return _format_machines(rows, suffix, confidence)


def _md(text: object) -> str:
    """Text from a file in a Markdown table cell: escaped as a terminal gets it,
    its pipes and backslashes escaped (each would end the cell or escape what follows)."""
    return _display.printable(text).replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")


def _format_markdown(rows: list[dict[str, Any]], suffix: str, confidence: float) -> str:
    """The 'machines' layout in Markdown: a heading and a table per question
    (calls back to back one line where no file has them), then the answers."""
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
    """One question's table in the 'machines' layout: its heading, a row per
    method, a column group per machine (the ESTIMATE, and its ratio to the
    first machine's)."""
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
    """The answers under a terminal table: per machine, each question's
    cheapest way that reports the CPU (by ESTIMATE at 95%, ties named), and
    a line where the two differ."""
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
    """Where a machine's results converted with figures of their own more
    than 1% from its clock's (a core clock that moved): their range."""
    own = [float(r["cycles_per_tick"]) for r in rows if "cycles_per_tick" in r]
    own = [c for c in own if math.isfinite(c)]
    if not own or not math.isfinite(clock_cpt) or max(abs(c / clock_cpt - 1) for c in own) <= 0.01:
        return ""
    return f" at first use, each result its own: {min(own):.3f} to {max(own):.3f}"


def _format_rows(rows: list[dict[str, Any]], suffix: str, confidence: float) -> str:
    """A row per machine and method: runs, unroll, the seed's figures (BEST,
    MEDIAN) and the cost figure (ESTIMATE) with its interval."""
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
