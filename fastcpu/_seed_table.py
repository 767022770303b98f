"""fastcpu.seed_table(): the seed's own table, across machines and eras.

The seed's post laid its results out one row per machine, a BEST block and a
MEDIAN block with a column per way (GDT, TSCP, SIDT), core cycles above the
empty sequence. This table keeps that layout, adds the ways that came since
(RDPID, the vDSO, the rseq load), puts the published machines beside the
measured ones, and ends each row with the seed's question answered for that
machine: the cheapest way that reports the CPU there.

Published rows: the seed's seven machines as the ranges it gave (the
machine-by-machine table is not in the record), and dean gaudet's four
machines (2007), whose figures time whole vgetcpu() calls with his own tool,
one figure per cell: they stand in the BEST block, the MEDIAN block is
empty. Measured rows name the cheapest way as ``Results.cheapest_way()``
does everywhere: by the ESTIMATE (not BEST or MEDIAN, which sit on the
counter's step), among the ways that reported the CPU on that machine's
pinned sweep (inferred from the catalog and the host's UMIP flag for files
written before fastcpu 0.6, which hold none); published rows by the same
rule over their own columns (dean gaudet's cached calls included).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._display import printable
from ._machine_results import Results, Source, as_results

__all__ = ["seed_table", "SeedRow", "SeedTable", "SEED_COLUMNS", "published_cheapest"]

#: The columns of each block: the seed's three ways, then those added since.
SEED_COLUMNS = ("gdt", "tscp", "sidt", "rdpid", "vdso", "rseq")

#: The published figures ship inside the package (data/published_figures.csv
#: in the source tree is a link to it).
_PUBLISHED_CSV = Path(__file__).resolve().parent / "published_figures.csv"


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
        lines = [
            "core cycles per call above the empty sequence; published rows as published",
            f"{'':{mw}}  {'BEST':^{bw}}  {'MEDIAN':^{bw}}",
            f"{'MACHINE':{mw}}  {block}  {block}  CHEAPEST WAY THAT REPORTS THE CPU",
        ]
        for r in self.rows:
            best = " ".join(f"{_cell(r.best.get(c)):>7}" for c in SEED_COLUMNS)
            median = " ".join(f"{_cell(r.median.get(c)):>7}" for c in SEED_COLUMNS)
            lines.append(f"{printable(r.machine):{mw}}  {best}  {median}  {printable(r.cheapest)}")
        lines.append("dean gaudet's rows time whole vgetcpu() calls: GDT = the LSL vgetcpu of "
                     "2007, SIDT = his SIDT patch, no cache; his cached calls count among the ways.")
        inferred = any(r.inferred for r in self.rows)
        lines.append("CHEAPEST: the lowest ESTIMATE among the ways that reported the CPU on that "
                     "machine's pinned sweep (fastcpu.Results.cheapest_way)"
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
    return SeedRow(res.name, "measured", best, median, res.cheapest_way_words(), inferred)


#: dean gaudet's "take 2" columns: each a way that reported the CPU on his
#: kernels (the SIDT ones on his patched kernel, which stored it in the IDT
#: limit), by its name in the published table -> how the seed table says it.
_GAUDET_WAYS = {
    "baseline, no cache": "LSL vgetcpu of 2007",
    "patched, no cache": "SIDT (his patch)",
    "baseline, cache": "LSL vgetcpu of 2007, cached",
    "patched, cache": "SIDT (his patch), cached",
}


def published_cheapest(costs: Mapping[str, float]) -> str:
    """The cheapest of a published machine's ways (way -> core cycles), by the
    rule the measured rows follow (the lowest cost among the ways that
    reported the CPU there), every way named where several tie."""
    known = {w: c for w, c in costs.items() if not math.isnan(c)}
    if not known:
        return "none published"
    low = min(known.values())
    return " = ".join(w for w, c in known.items() if c == low) + f": {low:.0f}"


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
    return out


def seed_table(*sources: Source, published: bool = True) -> SeedTable:
    """The seed's table: one row per machine, BEST and MEDIAN blocks (GDT,
    TSCP, SIDT, RDPID, vDSO, rseq; core cycles) and the cheapest way that
    reports the CPU there.

    Args:
        sources: :class:`fastcpu.Results` and/or result file paths.
        published: add the published machines (``published_figures.csv``,
            shipped with fastcpu and linked from data/) after the measured ones.

    Raises:
        TypeError: a source is neither Results nor a path, or `published`
            is not a bool.
        ValueError: nothing to show (no source and published=False).
        fastcpu.ResultFileError, OSError: a file cannot be read.
    """
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
