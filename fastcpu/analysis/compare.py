"""fastcpu.compare(): one tidy table across machines and methods (columns: ``analysis.columns``)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

from .. import _base as _display
from .._args import plain_number
from .columns import ANSWER_COLUMNS, BACK_TO_BACK_COLUMNS, COLUMNS, COST, CSV_COLUMNS, MACHINE_COLUMNS, RESULT_COLUMNS, UNITS, result_rows, rows_of
from .columns import LAYOUTS, MODEL_MARK, MODEL_NOTE, NAME_LINES_MAX, NONE_BACK_TO_BACK, QUESTION_HEADINGS, answers, format_comparison, measured_for, models_of, side_by_side
from ..results.results import BACK_TO_BACK, ONE_CALL, Results, Source, as_results


__all__ = ["compare", "ComparisonTable", "COLUMNS", "CSV_COLUMNS", "UNITS",
           "LAYOUTS", "format_comparison", "tidy_table", "result_rows", "BACK_TO_BACK_COLUMNS", "ANSWER_COLUMNS",
           "answers", "MACHINE_COLUMNS", "RESULT_COLUMNS", "MODEL_MARK", "MODEL_NOTE", "NAME_LINES_MAX",
           "QUESTION_HEADINGS", "NONE_BACK_TO_BACK"]


class ComparisonTable(Sequence[dict]):
    """The comparison without pandas: a list of row dicts, in COLUMNS order.

    ``table[i]`` is a row, ``table["best_ns"]`` a column; ``to_string()``,
    ``format(unit)``, ``to_csv()``, ``to_json()``; HTML in Jupyter."""

    def __init__(self, rows: list[dict[str, Any]], columns: Sequence[str] = COLUMNS,
                 confidence: float = 0.95) -> None:
        self.rows = rows
        self.columns = list(columns)
        #: the confidence of the intervals in the rows (compare()'s)
        self.confidence = confidence

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            if key not in self.columns:
                raise KeyError(f"no column {key!r}; columns: {', '.join(self.columns)}")
            return [row[key] for row in self.rows]
        return self.rows[key]

    def to_csv(self, file: io.TextIOBase | None = None) -> str:
        """The table as CSV text (also written to `file` when given): the
        one CSV schema, CSV_COLUMNS, where the table holds every column."""
        out = io.StringIO()
        columns = list(self.columns)
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(self.rows)
        if file is not None:
            file.write(out.getvalue())
        return out.getvalue()

    def to_json(self, file: io.TextIOBase | None = None) -> str:
        """The rows as a JSON array of objects, one row a line (also written
        to `file` when given). A figure that is not a number (NaN: an
        interval of too few runs) is ``null``, as JSON has no NaN."""
        lines = [json.dumps({c: _plain(row.get(c)) for c in self.columns}, allow_nan=False)
                 for row in self.rows]
        text = "[\n" + ",\n".join(lines) + ("\n" if lines else "") + "]\n"
        if file is not None:
            file.write(text)
        return text

    def to_markdown(self, unit: str = "cycles") -> str:
        """The terminal's layout (:meth:`format`) as Markdown: a heading and a
        table per question, one call alone and calls back to back, then each
        machine's cheapest way for each."""
        return format_comparison(self, unit, self.confidence, "markdown")

    def to_string(self) -> str:
        """Every column, aligned (wide: one line per row)."""
        cells = [[_cell(row[c]) for c in self.columns] for row in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        lines = ["  ".join(c.rjust(w) for c, w in zip(self.columns, widths))]
        lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
        return "\n".join(lines)

    def format(self, unit: str = "cycles", confidence: float | None = None, layout: str = "machines") -> str:
        """A terminal table in one unit (``'ticks'``, ``'ns'`` or ``'cycles'``): see :func:`format_comparison`."""
        return format_comparison(self, unit, self.confidence if confidence is None else confidence, layout)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        """One line: rows, machines and methods, columns."""
        what = [f"{len({row[key] for row in self.rows})} {key}s" for key in ("machine", "method")
                if key in self.columns]
        within = f" ({', '.join(what)})" if what else ""
        return f"<fastcpu.types.ComparisonTable: {len(self)} rows{within} x {len(self.columns)} columns>"

    def _repr_html_(self) -> str:
        """The table as HTML for Jupyter, in the terminal's layout in core cycles."""
        needed = {f"{COST.name}{part}_core_cycles" for part in ("", "_ci_low", "_ci_high")}
        if not needed <= set(self.columns) or not {"machine", "method"} <= set(self.columns):
            rows = [[_cell(row.get(c)) for c in self.columns] for row in self.rows]  # other columns
            return _display.block(_display.table(self.columns, rows))
        parts = []
        rows_of = list(self.rows)
        for question in (ONE_CALL, BACK_TO_BACK):
            if question == BACK_TO_BACK and not any(measured_for(r, question) for r in rows_of):
                parts.append(_display.paragraph(NONE_BACK_TO_BACK))
                continue
            parts += self._question_html(rows_of, question)
        shown = _display.printable
        for machine, said in answers(rows_of).items():
            parts.append(_display.bullets([f"{q}: {w}" if q else w for q, w in said],
                                          f"{shown(machine)}: cheapest way that reports the CPU (by ESTIMATE, 95%)"))
        return _display.block(*parts)

    def _question_html(self, rows_of: list[dict[str, Any]], question: str) -> list[str]:
        """One question's side-by-side HTML table, under its heading."""
        side = side_by_side(rows_of, "core_cycles", self.confidence, question)
        per = 2 if side.ratios else 1
        heads = [f"{COST.heading} \u00b1 {round(self.confidence * 100)}%"] + (["RATIO"] if side.ratios else [])
        shown = _display.printable  # names from files, as every other view shows them
        groups = [("", 1)] + [(shown(name) + (" (baseline)" if side.ratios and i == side.baseline else ""), per)
                              for i, name in enumerate(side.machines)]
        models = models_of(self.rows)
        rows = [[shown(method) + (MODEL_MARK if method in models else ""), *(c for k in range(len(side.machines))
                           for c in ([side.cells[i][k]] + ([side.ratios[i][k]] if side.ratios else [])))]
                for i, method in enumerate(side.methods)]
        return [_display.table(["method", *heads * len(side.machines)], rows, groups=groups,
                               caption=side.title[0]),
                *(_display.paragraph(line) for line in side.title[1:])]


def _plain(value: object) -> object:
    """`value` as JSON has it: numpy scalars as Python values, NaN and infinities as None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.3f}"
    return "" if value is None else _display.printable(value)  # names from files


def _resolve(item: object, i: int) -> tuple[Results, str]:
    source = f"results[{i}]" if isinstance(item, Results) else None
    results = as_results(item, "compare() takes fastcpu.Results or paths of result files, "
                               f"not {{type}} (argument {i})")
    return results, source or os.fspath(item)  # type: ignore[arg-type]


def _unique_names(loaded: list[Results]) -> list[str]:
    """Machine names, with ' #2', ' #3' added where two files share one."""
    names = [r.name for r in loaded]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if names.count(name) == 1 else f"{name} #{seen[name]}")
    return out


def compare(*results_or_paths: Source, confidence: float = 0.95, dataframe: bool | None = None) -> Any:
    """One row per machine and method: best, median, the ESTIMATE and the paired mean with their intervals, in three units.

    Args:
        results_or_paths: :class:`fastcpu.Results` and/or result file paths, at least one.
        confidence: the intervals' confidence level (0 < c < 1).
        dataframe: None: a pandas DataFrame when pandas is installed, else a
            :class:`ComparisonTable`; True requires pandas; False: ComparisonTable.

    Returns:
        A table with the columns ``analysis.compare.COLUMNS``: figures suffixed
        ``_ticks`` (TSC ticks), ``_ns`` and ``_core_cycles``, per copy above the
        empty sequence; ``back_to_back_*`` for calls back to back; each
        machine's cheapest way per question.

    Raises:
        TypeError: an argument is neither Results nor a path.
        ValueError: no argument, or `confidence` outside (0, 1).
        fastcpu.ResultFileError, OSError: a file cannot be read.
        ImportError: ``dataframe=True`` without pandas."""
    if not results_or_paths:
        raise ValueError("compare() needs at least one Results or result file path")
    confidence = plain_number("confidence", confidence)  # a subclass's comparisons may lie
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    if dataframe is not None and not isinstance(dataframe, bool):
        raise TypeError(f"dataframe must be None, True or False, not {dataframe!r}")
    resolved = [_resolve(item, i) for i, item in enumerate(results_or_paths)]
    rows = _tidy_rows(resolved, confidence)

    if dataframe is not False:
        try:
            import pandas as pd
        except ImportError:
            if dataframe:
                raise ImportError("compare(dataframe=True) needs pandas: "
                                  "pip install 'fastcpu[pandas]'") from None
        else:
            return pd.DataFrame(rows, columns=list(COLUMNS))
    return ComparisonTable(rows, confidence=confidence)


def _tidy_rows(resolved: Sequence[tuple[Results, str]], confidence: float) -> list[dict[str, Any]]:
    names = _unique_names([r for r, _ in resolved])
    rows = []
    for (results, source), name in zip(resolved, names):
        for row in rows_of(results, confidence, source):
            row["machine"] = name
            rows.append(row)
    return rows


def tidy_table(loaded: Sequence[tuple[Results, str]], confidence: float = 0.95) -> ComparisonTable:
    """compare()'s ComparisonTable of Results already loaded, each with the
    source its rows name (the path it was read from): for a caller that
    loaded the files itself (the CLI, to show its progress)."""
    return ComparisonTable(_tidy_rows(loaded, confidence), confidence=confidence)

