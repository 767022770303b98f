"""fastcpu.compare_ab(): two result files, method by method, with a verdict (docs/files.md, "Comparing").

Independent runs: ``B - A`` has 95% half-width ``sqrt(ciA**2 + ciB**2)``,
``B / A`` the delta method's (nan where A's interval reaches 0); the verdict
is ``slower``/``faster`` only where the difference's interval excludes 0. A
cost below resolution (bound X) is compared as X/2 +- X/2."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .. import _base as _display
from .._args import UNITS
from ..results.bench_result import BenchResult, DiffResult
from ..results.results import BACK_TO_BACK, NOT_MEASURED, ONE_CALL, QUESTION_WORDS, Results, Source, as_results
from ..results.statistics import statistic


__all__ = ["compare_ab", "ABRow", "ABComparison", "AB_UNITS"]

#: The units an A/B comparison is made in (a unit of ``_args.UNITS`` by
#: its short name -> the unit): not TSC ticks, which differ between hosts.
AB_UNITS = {u.short: u for u in UNITS.values() if u.name != "ticks"}
#: The figure compared: the cost fastcpu recommends.
_COST = statistic("estimate")
#: Each question's table, named by it.
QUESTION_HEADINGS = {ONE_CALL: QUESTION_WORDS[ONE_CALL].upper(), BACK_TO_BACK: QUESTION_WORDS[BACK_TO_BACK].upper()}
#: What each question's figure is per.
_PER = {ONE_CALL: "per call above the empty sequence", BACK_TO_BACK: "per call in a loop, by bench_diff"}


@dataclass(frozen=True)
class ABRow:
    """One method in A and B, in the comparison's unit, per copy above the empty sequence.

    Attributes:
        method: the method.
        a, a_ci95, b, b_ci95: each estimate and its 95% half-width.
        difference, difference_ci95, ratio, ratio_ci95: ``b - a``, ``b / a``
            and their 95% half-widths (ratio nan where A's interval reaches 0).
        verdict: ``'slower'``, ``'faster'`` or ``'no detectable difference'``.
        a_below, b_below: the bound X of a cost below resolution; NaN if resolved."""

    method: str
    a: float
    a_ci95: float
    b: float
    b_ci95: float
    difference: float
    difference_ci95: float
    ratio: float
    ratio_ci95: float
    verdict: str
    #: the question the figures answer: ``'one call alone'`` (single copies,
    #: BenchResult) or ``'calls back to back'`` (Results.back_to_back, DiffResult)
    question: str = QUESTION_WORDS[ONE_CALL]
    a_below: float = math.nan
    b_below: float = math.nan


def _cost(r: BenchResult | DiffResult, unit: str) -> tuple[float, float, float]:
    """(cost, 95% half-width, bound) in `unit`; a cost below resolution as 0 to its bound."""
    if not r.resolved:
        bound = r.upper_bound_in(unit)
        return bound / 2, bound / 2, bound
    return _COST.value(r, unit), _COST.half_width(r, unit), math.nan


def _row(method: str, ra: BenchResult | DiffResult, rb: BenchResult | DiffResult, unit: str,
         question: str = ONE_CALL) -> ABRow:
    u = AB_UNITS[unit].name
    a, a_ci, a_below = _cost(ra, u)
    b, b_ci, b_below = _cost(rb, u)
    diff_ci = math.hypot(a_ci, b_ci)
    diff = b - a
    if abs(a) > a_ci and a != 0:
        ratio = b / a
        ratio_ci = abs(ratio) * math.hypot(a_ci / a, b_ci / b if b else math.inf)
    else:
        ratio = ratio_ci = math.nan
    if not math.isfinite(diff_ci) or abs(diff) <= diff_ci:
        verdict = "no detectable difference"
    else:
        verdict = "slower" if diff > 0 else "faster"
    return ABRow(method, a, a_ci, b, b_ci, diff, diff_ci, ratio, ratio_ci, verdict, QUESTION_WORDS[question],
                 a_below, b_below)


def _text_cost(value: float, half: float, below: float) -> str:
    """A cost's two text columns in the comparison's unit: estimate and half-width, or ``< X``."""
    return f"{'< ' + format(below, '.2f'):>10} {'':6}" if below == below else f"{value:10.2f} {half:6.2f}"


def _html_cost(value: float, half: float, below: float) -> str:
    """A cost's HTML cell, in the comparison's unit: ``X +- H``, or ``< X``."""
    return f"< {below:.2f}" if below == below else _display.plus_minus(value, half)


class ABComparison(Sequence[ABRow]):
    """The rows of :func:`compare_ab` (one call alone), :attr:`back_to_back` and :attr:`answers`; ``str()`` prints them."""

    def __init__(self, a_name: str, b_name: str, unit: str, rows: list[ABRow],
                 only_a: list[str], only_b: list[str], back_to_back: Sequence[ABRow] = (),
                 back_to_back_missing: str = "", answers: Sequence[tuple[str, list[str]]] = ()) -> None:
        self.a_name, self.b_name, self.unit = a_name, b_name, unit
        self.rows, self.only_a, self.only_b = rows, only_a, only_b
        #: calls back to back: a row per method measured so in both files
        self.back_to_back = list(back_to_back)
        #: why there are no such rows ('' where there are): which file measured none
        self.back_to_back_missing = back_to_back_missing
        #: ('A' or 'B', that file's answer lines: Results.answer_lines(), each
        #: question's cheapest way "here", in that file), A first
        self.answers = list(answers)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[ABRow]:
        return iter(self.rows)

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        if isinstance(key, str):
            for row in self.rows:
                if row.method == key:
                    return row
            raise KeyError(f"{key!r} was not measured in both files")
        return self.rows[key]

    def __str__(self) -> str:
        """The table a terminal shows (names from the files through
        :func:`_display.printable`)."""
        shown = _display.printable
        what = AB_UNITS[self.unit].words
        every = self.rows + self.back_to_back
        w = max([len("METHOD")] + [len(shown(r.method)) for r in every])
        lines = [f"A: {shown(self.a_name)}", f"B: {shown(self.b_name)}"]
        for question, rows in ((ONE_CALL, self.rows), (BACK_TO_BACK, self.back_to_back)):
            lines.append("")
            if not rows:
                lines.append(f"{QUESTION_HEADINGS[question]}: {self.back_to_back_missing}")
                continue
            lines += [
                f"{QUESTION_HEADINGS[question]}: {what} {_PER[question]} (ESTIMATE +- 95%); ratio B/A",
                f"{'METHOD':{w}}  {'A':>10} {'+-':>6}  {'B':>10} {'+-':>6}  {'B - A':>10} {'+-':>6}"
                f"  {'B / A':>7} {'+-':>6}  VERDICT",
            ]
            for r in rows:
                ratio = "      -        -" if math.isnan(r.ratio) else f"{r.ratio:7.3f} {r.ratio_ci95:6.3f}"
                lines.append(
                    f"{shown(r.method):{w}}  {_text_cost(r.a, r.a_ci95, r.a_below)}  "
                    f"{_text_cost(r.b, r.b_ci95, r.b_below)}  "
                    f"{r.difference:+10.2f} {r.difference_ci95:6.2f}  {ratio}  {r.verdict}"
                )
        lines.append("")
        if any(r.a_below == r.a_below or r.b_below == r.b_below for r in every):
            lines.append(_BELOW)
        if any(math.isnan(r.ratio) for r in every):
            lines.append("B / A left out where A's interval reaches 0: a ratio to a cost that "
                         "may be nothing says nothing.")
        for name, only in (("A", self.only_a), ("B", self.only_b)):
            if only:
                lines.append(f"only in {name}: {', '.join(map(shown, only))}")
        for name, said in self.answers:
            lines.append(f"answers in {name}:")
            lines += [f"  {line}" for line in said]
        return "\n".join(lines).rstrip("\n")

    def _verdict_counts(self) -> str:
        return _verdict_counts(self.rows)

    def __repr__(self) -> str:
        """One line: how many methods, the unit, the verdicts, B and A."""
        one = _display.one_line
        return (f"<fastcpu.types.ABComparison: {len(self)} methods in {AB_UNITS[self.unit].words} "
                f"({self._verdict_counts()}), B={one(repr(self.b_name), 60)} "
                f"vs A={one(repr(self.a_name), 60)}>")

    def _repr_html_(self) -> str:
        """The comparison as an HTML table, for Jupyter."""
        d = _display
        what = AB_UNITS[self.unit].words
        columns = ["method", f"A ({what})", f"B ({what})", f"B - A ({what})", "B / A", "verdict"]
        tables = []
        for question, of in ((ONE_CALL, self.rows), (BACK_TO_BACK, self.back_to_back)):
            if not of:
                tables.append(d.paragraph(self.back_to_back_missing, bold=f"{QUESTION_HEADINGS[question]}:"))
                continue
            rows = [
                [r.method, _html_cost(r.a, r.a_ci95, r.a_below), _html_cost(r.b, r.b_ci95, r.b_below),
                 d.plus_minus(r.difference, r.difference_ci95),
                 d.plus_minus(r.ratio, r.ratio_ci95, digits=3), r.verdict]
                for r in of
            ]
            tables.append(d.table(columns, rows, caption=f"{QUESTION_HEADINGS[question]}: {what} {_PER[question]} "
                                                         f"(estimate \u00b1 95%): {_verdict_counts(of)}"))
        notes = []
        if any(r.a_below == r.a_below or r.b_below == r.b_below for r in self.rows + self.back_to_back):
            notes.append(d.paragraph(_BELOW))
        if any(math.isnan(r.ratio) for r in self.rows + self.back_to_back):
            notes.append(d.paragraph("B / A left out where A's interval reaches 0: a ratio to a "
                                     "cost that may be nothing says nothing."))
        for name, only in (("A", self.only_a), ("B", self.only_b)):
            if only:
                notes.append(d.paragraph(", ".join(only), bold=f"only in {name}:"))
        for name, said in self.answers:
            notes.append(d.bullets(said, f"answers in {name}:"))
        return d.block(
            d.paragraph(self.a_name, bold="A (baseline):"),
            d.paragraph(self.b_name, bold="B:"),
            *tables,
            *notes,
        )


#: The note under a table that shows a bound.
_BELOW = ("< X: a cost below what that file's harness resolves, known only to lie between 0 and X; "
          "B - A compares it as X/2 +- X/2.")


def _verdict_counts(rows: Sequence[ABRow]) -> str:
    verdicts = [r.verdict for r in rows]
    return ", ".join(f"{verdicts.count(v)} {v}" for v in ("slower", "faster", "no detectable difference")
                     if v in verdicts)


def _missing_words(ra: Results, rb: Results) -> str:
    """Why no method has calls back to back in both files ('' where some has)."""
    lacking = [name for name, r in (("A", ra), ("B", rb)) if not r.back_to_back]
    if not lacking:
        return "no method measured back to back in both files"
    return (f"{NOT_MEASURED} in {' and '.join(lacking)} (a file before fastcpu 0.7.0, or measured with --unroll): "
            "only one call alone is compared")


def _resolve(source: object, which: str) -> Results:
    return as_results(source, f"compare_ab() takes fastcpu.Results or a result file path for {which}, "
                              "not {type}")


def compare_ab(a: Source, b: Source, *, unit: str = "ns") -> ABComparison:
    """B against A (baseline), method by method: difference, ratio, verdict.

    Args:
        a, b: :class:`fastcpu.Results` or result file paths; A is the baseline.
        unit: ``'ns'`` (default) or ``'cycles'`` (core cycles); TSC ticks are
            refused (a tick is worth different times on different hosts).

    Returns:
        An :class:`ABComparison`, one :class:`ABRow` per method in both.

    Raises:
        TypeError: `a` or `b` is neither Results nor a path; `unit` not a str.
        ValueError: an unknown unit, or no method measured in both.
        fastcpu.ResultFileError, OSError: a file cannot be read."""
    if not isinstance(unit, str):
        raise TypeError(f"unit must be a str ('ns' or 'cycles'), not {type(unit).__name__}")
    if unit not in AB_UNITS and unit in UNITS and unit != "ticks":
        unit = UNITS[unit].short  # 'core_cycles', the unit's name, is 'cycles' here
    if unit not in AB_UNITS:
        raise ValueError(f"unknown unit {unit!r} for an A/B comparison: use 'ns' or 'cycles' "
                         "(TSC ticks differ between hosts)")
    ra, rb = _resolve(a, "a"), _resolve(b, "b")
    both = [m for m in ra if m in rb]
    if not both:
        raise ValueError(f"no method was measured in both {ra.name!r} and {rb.name!r}")
    rows = [_row(m, ra[m], rb[m], unit) for m in both]
    loop = [_row(m, ra.back_to_back[m], rb.back_to_back[m], unit, BACK_TO_BACK)
            for m in ra.back_to_back if m in rb.back_to_back]
    return ABComparison(ra.name, rb.name, unit, rows,
                        [m for m in ra if m not in rb], [m for m in rb if m not in ra],
                        back_to_back=loop, back_to_back_missing="" if loop else _missing_words(ra, rb),
                        answers=[("A", ra.answer_lines()), ("B", rb.answer_lines())])
