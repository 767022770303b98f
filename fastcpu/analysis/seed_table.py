"""fastcpu.seed_table(): the seed's own table, across machines and eras (docs/files.md, "Comparing").

A row per machine, BEST and MEDIAN blocks with a column per way, core
cycles above the empty sequence, the published machines beside the measured
ones, and each row's cheapest way that reports the CPU, by the rule of
``Results.cheapest_way()`` (published rows over their own columns)."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._base import printable
from ..results.results import BACK_TO_BACK, ONE_CALL, QUESTION_WORDS, Results, Source, as_results


__all__ = ["seed_table", "SeedRow", "SeedTable", "SEED_COLUMNS", "published_cheapest"]

#: The columns of each block: the seed's three ways, then those added since.
SEED_COLUMNS = ("gdt", "tscp", "sidt", "rdpid", "vdso", "rseq")

#: The published figures ship inside the package (data/published_figures.csv
#: in the source tree is a link to it).
_PUBLISHED_CSV = Path(__file__).resolve().parent.parent / "published_figures.csv"


def read_published(path: str | os.PathLike[str] = _PUBLISHED_CSV) -> list[dict[str, str]]:
    """The rows of a published-figures CSV (default: the one fastcpu ships),
    as dicts; the columns the seed table and the plots read must be there."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"fastcpu_method", "value", "unit", "machine"}
    missing = need - set(rows[0] if rows else ())
    if missing:
        raise ValueError(f"{os.fspath(path)} is not a published-figures CSV: no column "
                         f"{', '.join(sorted(missing))}")
    return rows


@dataclass(frozen=True)
class SeedRow:
    """One machine: BEST and MEDIAN per way (core cycles, nan where not
    measured or not published; text where the record gives a range), and the
    cheapest way that reports the CPU there."""

    machine: str
    kind: str  # 'measured' or 'published'
    best: Mapping[str, float | str] = field(default_factory=dict)
    median: Mapping[str, float | str] = field(default_factory=dict)
    cheapest: str = ""
    #: the cheapest way's "reports the CPU" was inferred (a file before
    #: fastcpu 0.6 holds no agreement sweep), not read on a sweep
    inferred: bool = False
    #: the question `cheapest` answers: "one call alone" (a single copy
    #: timed against the empty sequence: the LKML seed's, and dean gaudet's
    #: SIDT figures) or "calls back to back" (cost per call in a loop: the
    #: glibc seed's 13.7 -> 2.5 ns, 0.8 ns inline)
    question: str = QUESTION_WORDS[ONE_CALL]
    #: a measured row's answer to the other question, calls back to back
    #: (``Results.cheapest_way_words('back_to_back')``: "not measured ..."
    #: for a file before 0.7.0); '' for a published row, which asked one
    cheapest_back_to_back: str = ""
    #: a measured row's line saying its two answers differ ('' where they agree)
    answers_differ: str = ""

    def answers(self) -> list[tuple[str, str]]:
        """(question, cheapest way) for each question this row answers."""
        out = [(self.question, self.cheapest)]
        if self.kind == "measured":
            out.append((QUESTION_WORDS[BACK_TO_BACK], self.cheapest_back_to_back))
        return out


def _cell(v: float | str | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return v if isinstance(v, str) else f"{v:.1f}"


class SeedTable(Sequence[SeedRow]):
    """The rows of :func:`seed_table`; ``str()`` prints the seed's layout."""

    def __init__(self, rows: list[SeedRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[SeedRow]:
        return iter(self.rows)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self.rows[i]

    def __str__(self) -> str:
        """The seed's layout, for a terminal (names from the files through
        :func:`_display.printable`)."""
        mw = max([len("MACHINE")] + [len(printable(r.machine)) for r in self.rows])
        cols = [c.upper() for c in SEED_COLUMNS]
        block = " ".join(f"{c:>7}" for c in cols)
        bw = len(block)
        qw = max(len(q) for q in QUESTION_WORDS.values())
        lines = [
            "core cycles per call above the empty sequence; published rows as published",
            f"{'':{mw}}  {'BEST':^{bw}}  {'MEDIAN':^{bw}}",
            f"{'MACHINE':{mw}}  {block}  {block}  {'QUESTION':{qw}}  CHEAPEST WAY THAT REPORTS THE CPU",
        ]
        blank = " " * (mw + 2 * bw + 4)
        for r in self.rows:
            best = " ".join(f"{_cell(r.best.get(c)):>7}" for c in SEED_COLUMNS)
            median = " ".join(f"{_cell(r.median.get(c)):>7}" for c in SEED_COLUMNS)
            for i, (question, words) in enumerate(r.answers()):
                head = f"{printable(r.machine):{mw}}  {best}  {median}" if i == 0 else blank
                lines.append(f"{head}  {question:{qw}}  {printable(words)}")
            if r.answers_differ:
                lines.append(f"{blank}  {'':{qw}}  {printable(r.answers_differ)}")
        lines.append("QUESTION: what a row's cheapest way answers: one call alone (a single copy timed "
                     "against the empty sequence: the seed's LKML post, dean gaudet's SIDT figures) or "
                     "calls back to back (cost per call in a loop: glibc's 13.7 -> 2.5 ns, 0.8 ns inline); "
                     "a measured machine answers both, a published row the one it asked.")
        lines.append("dean gaudet's rows time whole vgetcpu() calls: GDT = the LSL vgetcpu of "
                     "2007, SIDT = his SIDT patch, no cache; his cached calls count among the ways.")
        if any(r.best == {} and r.question == QUESTION_WORDS[BACK_TO_BACK] for r in self.rows):
            lines.append("The Xeon E5-2630 v3 rows are in ns per call as published (no core clock given); "
                         "the measured rows' answers give ns too.")
        inferred = any(r.inferred for r in self.rows)
        lines.append("CHEAPEST: the lowest ESTIMATE among the ways that reported the CPU on that "
                     "machine's pinned sweep (fastcpu.Results.cheapest_way), ties within resolution named"
                     + ("; for files written before fastcpu 0.6, which hold no sweep, inferred from "
                        "the catalog and the host's UMIP flag" if inferred else "")
                     + "; published rows by the same rule over their own columns.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<fastcpu.types.SeedTable: {len(self)} machines>"


def _measured_row(res: Results) -> SeedRow:
    best = {c: res[c].best_core_cycles for c in SEED_COLUMNS if c in res}
    median = {c: res[c].median_core_cycles for c in SEED_COLUMNS if c in res}
    # the one answer: Results.cheapest_way(), by the ESTIMATE, among the ways
    # that reported the CPU on that machine's pinned sweep
    way = res.cheapest_way()
    inferred = way is not None and res.reports_cpu(way.method).why.startswith("inferred")
    return SeedRow(res.name, "measured", best, median, res.cheapest_way_words(ONE_CALL), inferred,
                   cheapest_back_to_back=res.cheapest_way_words(BACK_TO_BACK), answers_differ=res.answers_differ())


#: dean gaudet's "take 2" columns: each a way that reported the CPU on his
#: kernels (the SIDT ones on his patched kernel, which stored it in the IDT
#: limit), by its name in the published table -> how the seed table says it.
_GAUDET_WAYS = {
    "baseline, no cache": "LSL vgetcpu of 2007",
    "patched, no cache": "SIDT (his patch)",
    "baseline, cache": "LSL vgetcpu of 2007, cached",
    "patched, cache": "SIDT (his patch), cached",
}


def published_cheapest(costs: Mapping[str, float], unit: str = "") -> str:
    """The cheapest of a published machine's ways (way -> core cycles, or `unit`), ties named."""
    known = {w: c for w, c in costs.items() if not math.isnan(c)}
    if not known:
        return "none published"
    low = min(known.values())
    return " = ".join(w for w, c in known.items() if c == low) + (f": {low:g} {unit}" if unit else f": {low:.0f}")


#: The published figures of calls back to back, in ns per call on a Xeon
#: E5-2630 v3: glibc's rseq patch (13.7 -> 2.5 ns, 0.8 ns inline) and the
#: kernel's rseq commit (its loop of reads). source prefix -> the row's name.
_LOOP_SOURCES = {
    "Mathieu Desnoyers, glibc patch": "glibc's rseq patch, 2020",
    "Linux commit d7822b1e24f2": "the kernel's rseq commit d7822b1e24f2",
}
#: What these sources time that is no way to read the CPU (the loop itself).
_NO_WAY = ("empty loop",)


def _loop_rows(rows: list[dict[str, str]]) -> list[SeedRow]:
    """The published rows of calls back to back, each its own cheapest way in ns."""
    out = []
    for prefix, name in _LOOP_SOURCES.items():
        mine = [r for r in rows if r["source"].startswith(prefix) and r["unit"] == "ns"]
        if not mine:
            continue
        ways = {r["what"]: float(r["value"]) for r in mine if r["what"] not in _NO_WAY}
        loop = [r for r in mine if r["what"] in _NO_WAY]
        cheapest = published_cheapest(ways, "ns") + "".join(
            f"; the {r['what']} alone: {float(r['value']):g} ns" for r in loop)
        out.append(SeedRow(f"{mine[0]['machine']} ({name})", "published", cheapest=cheapest,
                           question=QUESTION_WORDS[BACK_TO_BACK]))
    return out


def _published_rows(path: Path) -> list[SeedRow]:
    rows = read_published(path)
    out = [SeedRow(
        # the seed's ranges stand where it put them: 30-100 for the ways in use
        # then (LSL, RDTSCP), 4-21 for all of its proposals together
        "the seed's 7 machines (2008, range)", "published",
        best={"gdt": "30-100", "tscp": "30-100"},
        median={"gdt": "30-100", "tscp": "30-100"},
        cheapest="its proposals, together: 4-21 (machine E, a P4: some read 0)",
    )]
    take2 = [r for r in rows if "take 2" in r["source"]]
    machines = list(dict.fromkeys(r["machine"] for r in take2))
    for m in machines:
        cells = {r["what"].split(" (")[0]: float(r["value"]) for r in take2 if r["machine"] == m}
        ways = {label: cells.get(what, math.nan) for what, label in _GAUDET_WAYS.items()}
        out.append(SeedRow(f"{m} (dean gaudet, 2007)", "published",
                           best={"gdt": cells.get("baseline, no cache", math.nan),
                                 "sidt": cells.get("patched, no cache", math.nan)},
                           median={}, cheapest=published_cheapest(ways)))
    return out + _loop_rows(rows)


def seed_table(*sources: Source, published: bool = True) -> SeedTable:
    """The seed's table: per machine BEST and MEDIAN blocks (core cycles) and the cheapest way.

    Args:
        sources: :class:`fastcpu.Results` and/or result file paths.
        published: add the published machines (``published_figures.csv``).

    Raises:
        TypeError: a source is neither Results nor a path, or `published` not a bool.
        ValueError: nothing to show (no source and published=False).
        fastcpu.ResultFileError, OSError: a file cannot be read."""
    if not isinstance(published, bool):
        raise TypeError(f"published must be a bool, not {type(published).__name__}")
    rows = []
    for i, s in enumerate(sources):
        rows.append(_measured_row(as_results(s, "seed_table() takes fastcpu.Results or result file "
                                                f"paths, not {{type}} (argument {i})")))
    if published:
        rows += _published_rows(_PUBLISHED_CSV)
    if not rows:
        raise ValueError("seed_table() needs a result file, or published=True")
    return SeedTable(rows)
