"""compare()'s columns: one row per machine and method, in every unit, and the CSV schema.

One row per (machine, method). Every statistic is per copy of the sequence,
above the empty sequence, in three units: TSC ticks (``*_ticks``),
nanoseconds (``*_ns``) and core cycles (``*_core_cycles``), each converted
with the clock of the file it came from. Its CSV (``CSV_COLUMNS``) is the
one CSV schema: ``compare --csv`` and ``run --format csv``
(``export.write_csv``) write the same columns, each figure under one name,
an interval as its two ends (``NAME_ci_low_UNIT``, ``NAME_ci_high_UNIT``);
until 0.9.0 (``_deprecated.REMOVED_IN``) they also write the names 0.6 gave some figures
(``DEPRECATED_CSV_COLUMNS``: ``tsc_granularity_ticks``, ``migrated_runs``,
``NAME_ci95_UNIT``), and a table still answers ``tsc_granularity_ticks``,
deprecated.

Both questions are answered. The statistics' columns answer "one call
alone" (a single copy, the LKML seed's); ``BACK_TO_BACK_COLUMNS`` answer
"calls back to back" (``Results.back_to_back``: cost per call in a loop by
differencing 2k and k copies, the glibc seed's), ``back_to_back`` saying
``'not measured'`` for a file without them (before 0.7.0). Each machine's
cheapest way that reports the CPU for each question, and the line saying
the two differ, are ``ANSWER_COLUMNS``, repeated on its rows. The terminal
and HTML layouts show a table per question, each named by it, then each
machine's answers.

The statistics are ``_statistics.shown_in('compare')``, in that order:

- best: ``(min(raw) - min(empty)) / unroll`` (the seed's BEST);
- median: ``(median(raw) - median(empty)) / unroll`` (the seed's MEDIAN);
- estimate, with ``estimate_ci_low`` and ``estimate_ci_high``: the ESTIMATE,
  ``BenchResult.estimate``, the cost figure fastcpu shows everywhere (the
  recommended estimator, less the harness bias where the self-test trusts
  it), its interval's random part rescaled to the confidence asked for and
  its systematic part added;
- paired_mean: the fenced mean of the per-run differences ``(raw[i] -
  empty[i]) / unroll`` (the empty run interleaved with run i is its pair)
  with its confidence interval: the estimator ``'paired_mean'`` of
  ``BenchResult.estimate`` (``fastcpu._estimate.paired_mean``): pairs
  outside a fence around the median difference (interrupts) and pairs that
  migrated are left out, and the interval is Student's t at 95%, rescaled to
  the confidence asked for. On a counter that moves in coarse steps, a
  random start phase makes it unbiased where best and median are stuck on
  the step (see ``fastcpu.noise``). Its columns were called ``mean``,
  ``mean_ci_low`` and ``mean_ci_high``; a ComparisonTable still answers to
  those names, deprecated.
"""

from __future__ import annotations

import math
from typing import Any

from . import _deprecated
from ._args import UNITS as UNIT_TABLE
from ._machine_results import BACK_TO_BACK, NOT_MEASURED, ONE_CALL, Results
from ._statistics import shown_in, statistic

__all__ = ["COLUMNS", "CSV_COLUMNS", "DEPRECATED_CSV_COLUMNS", "UNITS", "MACHINE_COLUMNS",
           "RESULT_COLUMNS", "BACK_TO_BACK_COLUMNS", "ANSWER_COLUMNS", "COST", "OLD_COLUMNS", "new_column", "Row",
           "rows_of", "result_rows"]

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
#: Columns the CSV still writes, after COLUMNS, under the names 0.6's two
#: CSVs gave the same figures (``compare --csv``: ``tsc_granularity_ticks``;
#: ``run --format csv``: ``migrated_runs`` and each interval's 95%
#: half-width, ``NAME_ci95_UNIT``), until ``_deprecated.REMOVED_IN``.
DEPRECATED_CSV_COLUMNS = tuple(old for old, _ in _deprecated.CSV_COLUMNS)
#: The one CSV schema: ``compare --csv``, ``compare(...).to_csv()``,
#: ``run --format csv`` and ``export.write_csv()`` all write these columns.
CSV_COLUMNS = COLUMNS + DEPRECATED_CSV_COLUMNS
#: The figure that answers "what does this way cost", as everywhere
#: (BenchResult.estimate): the terminal layouts show it and its ratios.
COST = statistic("estimate")
#: Deprecated column names (the paired mean was called "mean" here) -> today's.
OLD_COLUMNS = _deprecated.renamed_keys(_deprecated.COLUMN)


def new_column(key: str) -> str:
    return _deprecated.warn_key(_deprecated.COLUMN, key, stacklevel=3)


class Row(dict):  # type: ignore[type-arg]
    """A row: a dict of COLUMNS that still answers to the old column names."""

    def __missing__(self, key: str) -> Any:
        if key in OLD_COLUMNS:
            return self[new_column(key)]
        raise KeyError(key)


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
        row: dict[str, Any] = Row({
            "machine": results.name, "method": r.method, "runs": r.runs, "unroll": r.unroll,
            "serialize": r.serialize, "source": source,
            "kind": r.catalog_row.kind if r.catalog_row is not None else "",
            "runs_used": r.runs_used, "estimator": r.estimator,
            "migrations": r.migrations, "resolved": r.resolved, "cycles_per_tick": float(r.cycles_per_tick),
            "harness_bias_core_cycles": float(r.harness_bias_core_cycles),
            **_machine_facts(results),
        })
        for unit in UNITS:
            for stat in shown_in("compare"):
                row.update(stat.cells(r, unit, confidence))
        row.update(_back_to_back_cells(results, r.method, confidence))
        row.update(answers)
        # DEPRECATED_CSV_COLUMNS: the CSV writes them until _deprecated.REMOVED_IN
        row.update({"tsc_granularity_ticks": row["tsc_step_ticks"], "migrated_runs": r.migrations,
                    **{f"{s.name}_ci95_{unit}": s.half_width(r, unit) for s in shown_in("compare")
                       for unit in UNITS if f"{s.name}_ci95_{unit}" in DEPRECATED_CSV_COLUMNS}})
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
