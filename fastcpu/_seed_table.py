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
empty. Measured rows pick the cheapest way by the recommended ESTIMATE, not
by BEST or MEDIAN, which sit on the counter's step.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._methods import methods
from ._machine_results import Results, Source, as_results

__all__ = ["seed_table", "SeedRow", "SeedTable", "SEED_COLUMNS", "reports_cpu_there"]

#: The columns of each block: the seed's three ways, then those added since.
SEED_COLUMNS = ("gdt", "tscp", "sidt", "rdpid", "vdso", "rseq")

#: Encodings from which a CPU number can be read (fastcpu.methods()).
_CPU_ENCODINGS = {"cpunode", "cpu"}

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


def reports_cpu_there(method: str) -> bool:
    """Whether `method` reads a CPU number on any released Linux kernel: its
    encoding holds one (LSL, TSC_AUX, RDPID, rseq, the vDSO, the system
    call, glibc). SIDT, SGDT and SLDT never do (no released kernel stores the
    CPU in a descriptor-table limit; under UMIP the emulation returns 0);
    kernel-entry costs report nothing."""
    info = {m.name: m for m in methods()}.get(method)
    return info is not None and info.encoding in _CPU_ENCODINGS


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
        mw = max([len("MACHINE")] + [len(r.machine) for r in self.rows])
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
            lines.append(f"{r.machine:{mw}}  {best}  {median}  {r.cheapest}")
        lines.append("dean gaudet's rows time whole vgetcpu() calls: GDT = the LSL vgetcpu of "
                     "2007, SIDT = his SIDT patch, no cache.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<fastcpu.types.SeedTable: {len(self)} machines>"


def _measured_row(res: Results) -> SeedRow:
    best = {c: res[c].best_core_cycles for c in SEED_COLUMNS if c in res}
    median = {c: res[c].median_core_cycles for c in SEED_COLUMNS if c in res}
    ways = [r for r in res.values() if reports_cpu_there(r.method)]
    if ways:
        w = min(ways, key=lambda r: r.estimate)
        cheapest = (f"{w.method}: {w.estimate_core_cycles:.1f} +- "
                    f"{w.estimate_ci95_core_cycles:.1f} (ESTIMATE)")
    else:
        cheapest = "none measured"
    return SeedRow(res.name, "measured", best, median, cheapest)


def _published_rows(path: Path) -> list[SeedRow]:
    rows = read_published(path)
    out = [SeedRow(
        "the seed's 7 machines (2008, range)", "published",
        best={"gdt": "30-100", "tscp": "30-100", "sidt": "4-21"},
        median={"gdt": "30-100", "tscp": "30-100", "sidt": "4-21"},
        cheapest="the proposals: 4-21 (machine E, a P4: some read 0)",
    )]
    # dean gaudet's "take 2" table: baseline (LSL vgetcpu) and patched (SIDT), no cache
    take2 = [r for r in rows if "take 2" in r["source"] and "no cache" in r["what"]]
    machines = list(dict.fromkeys(r["machine"] for r in take2))
    for m in machines:
        cells = {r["what"].split(",")[0]: float(r["value"]) for r in take2 if r["machine"] == m}
        gdt, sidt = cells.get("baseline", math.nan), cells.get("patched", math.nan)
        way = "SIDT (his patch)" if sidt < gdt else "LSL (vgetcpu of 2007)"
        out.append(SeedRow(f"{m} (dean gaudet, 2007)", "published",
                           best={"gdt": gdt, "sidt": sidt}, median={},
                           cheapest=f"{way}: {min(gdt, sidt):.0f}"))
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
