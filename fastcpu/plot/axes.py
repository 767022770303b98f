"""Text on the plots: names from files as plain text, figures to their interval's precision, notes of what was left out.

Every text artist is made with :data:`PLAIN` (no mathtext, no LaTeX: a
file's name could break or hang them) and names are cut to
:data:`NAME_MAX` characters after :func:`fastcpu._base.printable`."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Sequence
import os
from collections.abc import Iterable, Sequence

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullFormatter

from .._base import printable
from ..results import statistics as _blocks
from .._args import UNITS as UNIT_TABLE
from .._args import check_method_names, plain_int, plain_number
from ..results.bench_result import BenchResult
from ..results.values import recorded_row
from ..results.results import Results, as_results
from ..results.statistics import statistic

__all__ = ['PLAIN', 'NAME_MAX', 'name', 'plain', 'plus_minus_decimals', 'with_interval', 'more', 'DISTINCT_MAX', 'GRID', 'Curve', 'at_most', 'quantile', 'grid', 'ecdf_points']


#: The keyword arguments that make a matplotlib Text draw its string as written.
PLAIN: dict[str, Any] = {"parse_math": False, "usetex": False}
#: The longest name drawn; longer ones end in an ellipsis.
NAME_MAX = 60


def name(value: object, limit: int = NAME_MAX) -> str:
    """`value` as a plot draws it: :func:`printable`, at most `limit` characters
    (the last an ellipsis where it was cut)."""
    text = str(value)
    if len(text) > 4 * limit:  # escaping can only lengthen it: cut the rest unread
        text = text[: 4 * limit]
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def plain(*texts: Any) -> None:
    """Make each matplotlib Text (a legend's labels and title, a tick label) draw its
    string as written: no mathtext, no LaTeX."""
    for t in texts:
        t.set_parse_math(False)
        t.set_usetex(False)


def plus_minus_decimals(half: float) -> int:
    """Decimals for a figure with a 95% half-width `half`: down to the half-width's first
    significant digit, or its second where the first two read 10 to 35 (the Particle Data
    Group's rule: 0.094 -> 2 decimals, 0.3 -> 1, 1.1 -> 1, 12 -> 0, 1840 -> -2: hundreds),
    at most 4; 1 where there is no half-width."""
    if not (math.isfinite(half) and half > 0):
        return 1
    exponent = math.floor(math.log10(half))
    leading = half / 10.0 ** (exponent - 2)  # the first three digits, 100 to 999
    if leading >= 949.5:  # rounds up to the next power of ten
        exponent, leading = exponent + 1, 100.0
    digits = 2 if leading < 354.5 else 1
    return min(4, digits - 1 - exponent)


def _fixed(x: float, decimals: int) -> str:
    return f"{x:.{decimals}f}" if decimals >= 0 else f"{round(x, decimals):.0f}"


def with_interval(value: float, half: float) -> str:
    """``21.7 ± 1.1``: `value` and its 95% half-width `half` rounded to the decimal
    :func:`plus_minus_decimals` chooses from the interval (``555100 ± 1800``); `value`
    alone, to three significant digits, where there is no interval."""
    if not math.isfinite(value):
        return str(value)
    if not math.isfinite(half):
        return f"{value:.3g}"
    d = plus_minus_decimals(half)
    return f"{_fixed(value, d)} \u00b1 {_fixed(half, d)}"


def more(left_out: int, what: str, most: str, hint: str) -> str:
    """The note a figure shows for what it left out: ``"1,960 more methods not drawn (40
    panels at most): choose them with methods="``."""
    return f"{left_out:,} more {what} not drawn ({most} at most): {hint}"


#: Distinct values counted exactly; a distribution with more is read on a grid.
DISTINCT_MAX = 1 << 16
#: Thresholds an ECDF without exact counts is read at: finer than the pixels of any axis.
GRID = 2048


def _tally(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct values of uint64 `a` and their runs, or None beyond DISTINCT_MAX."""
    values = np.empty(0, np.uint64)
    counts = np.empty(0, np.int64)
    for start in range(0, a.size, _blocks.BLOCK):
        x = a[start:start + _blocks.BLOCK]
        lo, hi = int(x.min()), int(x.max())
        if hi - lo < _blocks.BLOCK:  # a narrow block: a histogram, no sort
            n = np.bincount((x - np.uint64(lo)).view(np.int64))
            seen = np.flatnonzero(n)
            v, c = seen.astype(np.uint64) + np.uint64(lo), n[seen]
        else:
            v, c = np.unique(x, return_counts=True)
            if v.size > DISTINCT_MAX:
                return None
        values, counts = _merge(values, counts, v, c)
        if values.size > DISTINCT_MAX:
            return None
    return values, counts


def _merge(v1: np.ndarray, c1: np.ndarray, v2: np.ndarray, c2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted tallies as one (the counts of equal values added)."""
    if not v1.size:
        return v2, c2.astype(np.int64)
    v = np.concatenate((v1, v2))
    c = np.concatenate((c1, c2.astype(np.int64)))
    order = np.argsort(v, kind="stable")
    v, c = v[order], c[order]
    first = np.ones(v.size, bool)
    first[1:] = v[1:] != v[:-1]
    starts = np.flatnonzero(first)
    return v[starts], np.add.reduceat(c, starts)


def _min_max(a: np.ndarray) -> tuple[int, int]:
    lo, hi = None, None
    for start in range(0, a.size, _blocks.BLOCK):
        x = a[start:start + _blocks.BLOCK]
        xlo, xhi = int(x.min()), int(x.max())
        lo = xlo if lo is None else min(lo, xlo)
        hi = xhi if hi is None else max(hi, xhi)
    assert lo is not None and hi is not None
    return lo, hi


class Curve:
    """One distribution a plot draws, from `parts` (``(uint64 array, scale to the plot's unit)`` each).

    Attributes:
        runs: how many runs.
        low, high: the smallest and largest value, in the unit.
        values, counts: each distinct value (sorted) and its runs, exact; None
            beyond :data:`DISTINCT_MAX`."""

    def __init__(self, parts: Sequence[tuple[np.ndarray, float]]):
        self.parts = [(a, float(scale)) for a, scale in parts if a.size]
        if not self.parts:
            raise ValueError("a curve of no runs")
        self.runs = sum(a.size for a, _ in self.parts)
        values, counts = np.empty(0, np.float64), np.empty(0, np.int64)
        exact = True
        for a, scale in self.parts:
            t = _tally(a) if exact else None
            if t is None:
                exact = False
                continue
            values, counts = _merge(values, counts, t[0].astype(np.float64) * scale, t[1])
            if values.size > DISTINCT_MAX:
                exact = False
        self.values: np.ndarray | None = values if exact else None
        self.counts: np.ndarray | None = counts if exact else None
        if exact:
            self.low, self.high = float(values[0]), float(values[-1])
        else:
            ends = [(lambda lo_hi, s: (lo_hi[0] * s, lo_hi[1] * s))(_min_max(a), scale)
                    for a, scale in self.parts]
            self.low, self.high = min(e[0] for e in ends), max(e[1] for e in ends)

    @property
    def exact(self) -> bool:
        return self.values is not None

    @classmethod
    def pooled(cls, curves: Sequence[Curve]) -> Curve:
        """The runs of `curves` together, from their counts (no array read again)."""
        pool = cls.__new__(cls)
        pool.parts = [p for c in curves for p in c.parts]
        pool.runs = sum(c.runs for c in curves)
        pool.low, pool.high = min(c.low for c in curves), max(c.high for c in curves)
        pool.values = pool.counts = None
        if all(c.values is not None and c.counts is not None for c in curves):
            values, counts = np.empty(0, np.float64), np.empty(0, np.int64)
            for c in curves:
                values, counts = _merge(values, counts, c.values, c.counts)  # type: ignore[arg-type]
            if values.size <= DISTINCT_MAX:
                pool.values, pool.counts = values, counts
        return pool


def _at_most_ticks(a: np.ndarray, cuts: list[int]) -> np.ndarray:
    """How many values of `a` (uint64) lie at or below each integer of `cuts` (ascending)."""
    top = (1 << 64) - 1
    out = np.array([a.size if c >= top else 0 for c in cuts], np.int64)
    inside = [i for i, c in enumerate(cuts) if 0 <= c < top]
    if inside:
        edges = np.array([cuts[i] for i in inside], np.uint64)
        hist = np.zeros(edges.size + 1, np.int64)
        for start in range(0, a.size, _blocks.BLOCK):
            # bin i holds edges[i - 1] < x <= edges[i]
            bins = np.searchsorted(edges, a[start:start + _blocks.BLOCK], side="left")
            hist += np.bincount(bins, minlength=edges.size + 1)
        out[inside] = np.cumsum(hist)[:-1]
    return out


def at_most(curve: Curve, thresholds: np.ndarray) -> np.ndarray:
    """How many runs of `curve` lie at or below each of `thresholds` (in the unit,
    ascending), exactly: int64, one per threshold."""
    thresholds = np.asarray(thresholds, np.float64)
    if curve.values is not None and curve.counts is not None:
        below = np.concatenate(([0], np.cumsum(curve.counts)))
        return below[np.searchsorted(curve.values, thresholds, side="right")]
    total = np.zeros(thresholds.size, np.int64)
    for a, scale in curve.parts:
        # an integer count x is at or below t exactly where x <= floor(t / scale)
        cuts = [int(min(max(math.floor(t / scale), -1), 2 ** 64)) for t in thresholds]
        total += _at_most_ticks(a, cuts)
    return total


def quantile(curve: Curve, q: float) -> float:
    """The `q` quantile of `curve` (numpy's ``inverted_cdf``: the smallest value at
    least a fraction `q` of the runs are at or below), in the unit; exact where the
    counts are, or where the curve is one array. A curve of several arrays without
    exact counts gives the largest of their quantiles: at or above the pooled one."""
    if curve.values is not None and curve.counts is not None:
        need = max(1, math.ceil(q * curve.runs))
        return float(curve.values[np.searchsorted(np.cumsum(curve.counts), need)])
    out = []
    for a, scale in curve.parts:
        k = max(0, math.ceil(q * a.size) - 1)
        (v,) = _blocks.kth(_blocks.counts(a), [k])
        out.append(v * scale)
    return max(out)


def grid(low: float, high: float, log: bool, points: int = GRID) -> np.ndarray:
    """`points` thresholds from `low` to `high`, evenly spaced (geometrically where
    `log`, for a log axis, above 0)."""
    if log and low > 0 and high > low:
        return np.geomspace(low, high, points)
    return np.linspace(low, high, points)


def ecdf_points(curve: Curve, low: float, high: float, log: bool) -> tuple[np.ndarray, np.ndarray]:
    """The points of `curve`'s ECDF as a step plot from `low` to `high`: exact, or read at :data:`GRID` thresholds."""
    if curve.values is not None and curve.counts is not None:
        end = min(int(np.searchsorted(curve.values, high, side="right")) + 1, curve.values.size)
        x = curve.values[:end]
        y = np.cumsum(curve.counts[:end]) / curve.runs
        if end < curve.values.size:  # and the largest run, where the curve reaches 1
            x, y = np.append(x, curve.high), np.append(y, 1.0)
    else:
        lo = max(low, curve.low)
        hi = min(high, curve.high)
        x = grid(lo, hi, log) if hi > lo else np.array([lo])
        x = np.concatenate((x, [curve.high])) if curve.high > x[-1] else x
        y = at_most(curve, x) / curve.runs
    return np.concatenate(([curve.low], x)), np.concatenate(([0.0], y))


UNITS = {u.name: f"{u.words} per run (harness included)" for u in UNIT_TABLE.values()}
SLOW_RATIO = 5.0
#: The most panels one figure draws, a method each (every method of the catalog fits): the
#: rest are counted as left out.
PANELS_MAX = 40
#: The most panels of ECDFs (10 methods each) one figure draws.
ECDF_PANELS_MAX = 12
#: The most curves one panel draws (methods, or sources with their empty sequences).
SERIES_MAX = 40
#: The most sources (result files) one ECDF panel overlays, each with its empty sequence.
SOURCES_MAX = SERIES_MAX // 2


def check_number(name: str, value: object) -> float:
    return plain_number(name, value)  # a plain float: a subclass's comparisons may lie


def check_options(ax: object, log_x: object) -> None:
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}")
    if log_x is not None and not isinstance(log_x, bool):
        raise TypeError(f"log_x must be True, False or None (automatic), not {log_x!r}")


def check_ncols(ncols: object) -> int:
    ncols = plain_int("ncols", ncols, "an int >= 1")  # the plain int: a subclass's comparisons may lie
    if ncols < 1:
        raise ValueError(f"ncols must be an int >= 1, not {ncols!r}")
    return ncols


def check_methods(methods: object) -> list[str] | None:
    # Names are not looked up in the catalog: a file may come from another
    # fastcpu, with other methods. An empty list draws nothing (said later).
    return None if methods is None else check_method_names(methods, allow_empty=True)


def check_sources(sources: object) -> list[Results]:
    if isinstance(sources, (Results, str, os.PathLike)):
        raise TypeError("sources must be a list of fastcpu.Results or result file paths, "
                        f"not one {type(sources).__name__}: wrap it in a list")
    if not isinstance(sources, Iterable):
        raise TypeError(f"sources must be a list of fastcpu.Results or result file paths, "
                        f"not {type(sources).__name__}")
    loaded = [as_results(s) for s in sources]
    if not loaded:
        raise ValueError("give at least one Results or result file")
    return loaded


def set_log_x(ax: Axes, low: float, high: float) -> None:
    """A log x axis labelled in plain numbers: 10, 20, 50, 100 ... over up to two decades,
    10, 100, 1000 ... beyond."""
    ax.set_xscale("log")
    subs = (1.0, 2.0, 5.0) if high <= 100 * max(low, 1e-300) else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def is_slow(r: BenchResult) -> bool:
    """Whether `r` is system-call or trap scale: median raw >= 5x median empty (log x)."""
    if not isinstance(r, BenchResult):
        raise TypeError(f"is_slow() takes one BenchResult, not {type(r).__name__}")
    return run_median(r.raw) >= SLOW_RATIO * max(1.0, run_median(r.empty))


def run_median(ticks: np.ndarray) -> float:
    """The median of one array of counts, without a copy of it."""
    return _blocks.median(_blocks.counts(ticks))


def bench_results(
    results: Results | Iterable[BenchResult], methods: Sequence[str] | None
) -> list[BenchResult]:
    methods = check_methods(methods)
    if not isinstance(results, (Results, BenchResult, Iterable)):
        raise TypeError(f"expected fastcpu.Results or BenchResults, not {type(results).__name__}")
    if isinstance(results, Results):
        if methods is None:
            return list(results.values())
        missing = [m for m in methods if m not in results]
        if missing:
            raise ValueError(f"{', '.join(map(repr, missing))} not measured in {results.name!r}; "
                             f"measured: {', '.join(results)}")
        return [results[m] for m in methods]
    chosen: list[BenchResult] = [results] if isinstance(results, BenchResult) else list(results)
    for r in chosen:
        if not isinstance(r, BenchResult):
            raise TypeError(f"expected fastcpu.Results or BenchResults, not {type(r).__name__}")
    if methods is not None:
        chosen = [r for r in chosen if r.method in methods]
    return chosen


def curve_colors(n: int) -> list[Any]:
    """`n` colours, all different: tab10 up to 10, tab20 up to 20, then evenly spaced hues."""
    if n <= 20:
        cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
        return [cmap(i) for i in range(n)]
    cmap = plt.get_cmap("turbo")
    return [cmap(i / (n - 1)) for i in range(n)]


# -- the groups of methods: decided here, and only here ---------------------------

#: The panels of :func:`ecdf_groups`, in order; methods outside the catalog
#: (user functions) make a last panel, ``"other"``.
GROUPS = ("instructions", "library calls", "models", "kernel entries and comparison costs")
OTHER = "other"
#: A catalog row's role (MethodInfo.role, set in csrc/sequences.c) -> its panel.
_GROUP_OF_ROLE = {
    "cpu_source": "instructions",
    "library_call": "library calls",
    "model": "models",
    "entry_cost": "kernel entries and comparison costs",
    "chain": "kernel entries and comparison costs",
}
PANEL_MAX = 10  # curves per ECDF panel: a group with more is split


def method_group(method: str | BenchResult) -> str:
    """Which panel of :func:`ecdf_groups` a result or method name belongs to (one of :data:`GROUPS`, or ``"other"``), by its catalog row's role."""
    if isinstance(method, BenchResult):
        row = method.catalog_row
    elif isinstance(method, str):
        row = recorded_row(method, "")
    else:
        raise TypeError(f"method_group() takes a method name (str) or a BenchResult, not {type(method).__name__}")
    return OTHER if row is None else _GROUP_OF_ROLE.get(row.role, OTHER)


# -- units, steps and the axes' ticks ----------------------------------------------

def unit_scale(r: BenchResult, unit: str) -> float:
    """How many of `unit` one count (TSC tick) of `r` is.

    Raises:
        ValueError: `r` has no figures in `unit` (core cycles unknown: its caveats say why)."""
    scale = float(r.units.convert(1.0, unit))
    if not (math.isfinite(scale) and scale > 0):
        why = "; ".join(r.caveats) or f"its counts are worth {scale} {UNIT_TABLE[unit].words}"
        raise ValueError(f"{name(r.method)!r} has no figures in {UNIT_TABLE[unit].words} ({why}): "
                         f"plot it in ticks or ns")
    return scale


def unit_step(results: Sequence[BenchResult], unit: str) -> float:
    """The counter's step in `unit`: the coarsest of `results` (0 where none is known)."""
    return max((r.step * unit_scale(r, unit) for r in results), default=0.0)


def decimals_of(x: float) -> int:
    """Decimals that write `x` within 1% (24.5 -> 1, 10.02 -> 0, 2.6 -> 1)."""
    for d in range(4):
        if abs(round(x, d) - x) <= 0.01 * abs(x):
            return d
    return 4


#: How a figure that left methods out says how to choose them.
CHOOSE = "name the ones to draw with methods= (the CLI's --methods)"
#: The most minor ticks (the counter's steps) an axis shows: each is an artist to lay out.
_MINOR_MAX = 30


class _StepMultiples(Locator):
    """Minor ticks on each multiple of the counter's step in view, while at most `most`."""

    def __init__(self, step: float, most: int = _MINOR_MAX):
        self.step, self.most = step, most

    def __call__(self) -> Any:
        low, high = self.axis.get_view_interval()
        return self.tick_values(low, high)

    def tick_values(self, vmin: float, vmax: float) -> Any:
        low, high = sorted((vmin, vmax))
        if not (math.isfinite(low) and math.isfinite(high)) or (high - low) / self.step > self.most:
            return []
        first, last = math.ceil(low / self.step), math.floor(high / self.step)
        return [k * self.step for k in range(first, last + 1)]


def round_ticks(ax: Axes, step: float, low: float, high: float, whole: bool, most: int = 8) -> None:
    """Major ticks on round values of the axis's unit: 1, 2 or 5 times a power of ten, at
    most `most` intervals, whole numbers only where `whole` (TSC ticks: nothing lies
    between two). Minor ticks on the multiples of the counter's step, where the major
    ticks are further apart than a step and at most _MINOR_MAX steps are in view. A linear axis
    only."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=most, steps=[1, 2, 5, 10], integer=whole))
    if step > 0 and high > low and step < (high - low) / most and (high - low) / step <= _MINOR_MAX:
        ax.xaxis.set_minor_locator(_StepMultiples(step))


def estimate_text(r: BenchResult, unit: str) -> str:
    """``ESTIMATE 21.7 ± 1.1 ns``: the recommended estimate per copy and its 95% interval,
    to the precision the interval allows (:func:`fastcpu.plot.axes.with_interval`)."""
    cost = statistic("estimate")  # the cost figure, as everywhere
    value, half = cost.value(r, unit), cost.half_width(r, unit)
    words = UNIT_TABLE[unit].words if unit != "ticks" else ("ticks" if r.counter == "tsc" else "PMU cycles")
    if not math.isfinite(half):
        return f"ESTIMATE {value:.3g} {words} (no interval: too few runs)"
    return f"ESTIMATE {with_interval(value, half)} {words}"


def wrap_title(text: str, width_in: float, fontsize_pt: float) -> str:
    """Break `text` at ", " / ": " / " " so that no line is wider than `width_in` inches
    (a character taken as 0.6 of the font size)."""
    most = max(12, int(width_in * 72 / (0.6 * fontsize_pt)))
    lines: list[str] = []
    for line in text.split("\n"):
        while len(line) > most:
            cut = max(line.rfind(sep, 0, most) for sep in (", ", ": ", " ("))
            if cut <= 0:
                cut = line.rfind(" ", 0, most)
            if cut <= 0:
                break
            lines.append(line[: cut + (1 if line[cut] in ",:" else 0)])
            line = line[cut:].lstrip(",: ") if line[cut] in ",:" else line[cut:].lstrip()
        lines.append(line)
    return "\n".join(lines)


def check_tail(tail: object) -> None:
    if not 0 <= check_number("tail", tail) < 1:
        raise ValueError(f"tail must be a fraction of the runs in [0, 1), not {tail}")


def check_upto(upto: object) -> None:
    if not 0 < check_number("upto", upto) <= 1:
        raise ValueError(f"upto must be a quantile in (0, 1], not {upto}")
