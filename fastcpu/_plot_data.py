"""What the plots draw of per-run counts, in memory bounded by the picture, not by the runs.

A measurement may hold 10**8 runs (1.6 GB of ``raw`` and ``empty``); a plot draws a few
hundred stems or an ECDF a few inches wide. Nothing here copies an array whole: every pass
reads it :data:`fastcpu._blocks.BLOCK` runs at a time.

- :class:`Curve` is one distribution to draw: the runs of one or more arrays (a method's
  ``raw``; the empty sequences of several methods pooled), each with its scale (the unit,
  ns or core cycles, of one count). While the runs hold at most :data:`DISTINCT_MAX`
  distinct values it keeps their exact counts (``np.unique``'s, merged block by block):
  exact stems, and an ECDF with a step at every value. Past that (interrupts spread over
  millions of values, or a forged file) it keeps only the smallest and largest value.
- :func:`at_most` counts the runs at or below each of a bounded number of thresholds,
  exactly: the counts of bins, or an ECDF read on a grid.
- :func:`quantile` is exact (from the counts, or by :func:`fastcpu._blocks.kth`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _blocks

__all__ = ["DISTINCT_MAX", "GRID", "Curve", "at_most", "quantile", "grid", "ecdf_points"]

#: Distinct values counted exactly; a distribution with more is read on a grid.
DISTINCT_MAX = 1 << 16
#: Thresholds an ECDF without exact counts is read at: finer than the pixels of any axis.
GRID = 2048


def _tally(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct values of `a` (uint64, sorted) and how many runs read each, or None
    where there are more than DISTINCT_MAX."""
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
    """One distribution a plot draws: the runs of `parts`, each ``(array, scale)``: a
    1-D uint64 array of counts and what one count is in the plot's unit.

    Attributes:
        runs: how many runs.
        low, high: the smallest and largest value, in the unit.
        values, counts: every distinct value in the unit (sorted) and its number of
            runs, exact; ``None`` where there are more than :data:`DISTINCT_MAX`.
    """

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
    """The points of `curve`'s ECDF to draw as a step plot (``where='post'``) on an axis
    from `low` to `high`: at 0 at the smallest run (where the curve rises from nothing),
    then with exact counts every distinct value up to `high` and the first above it;
    else the ECDF read at :data:`GRID` thresholds across the axis (each drawn point exact;
    between two the curve is at most one threshold late). Both end at the largest run,
    at 1."""
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
