"""Every statistic of a result, declared once (``STATISTICS``): renderers loop over it (docs/extending.md).

Figures are per copy, in counts of the result's counter (TSC ticks; core
cycles for a PMU counter), converted with ``result.units``."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from .._args import UNITS

__all__ = ['Statistic', 'STATISTICS', 'SHOWN_IN', 'statistic', 'shown_in', 'attribute', 'BLOCK', 'Counts', 'counts', 'size', 'kth', 'middle_ranks', 'median', 'fenced_sums']


#: Where a statistic can be shown: the CLI's table, compare()'s columns, the
#: exports (CSV, Google Benchmark's JSON), a result's HTML table.
SHOWN_IN = ("table", "compare", "export", "html")

_Z95 = statistics.NormalDist().inv_cdf(0.975)


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class Statistic:
    """One statistic of a result.

    Attributes:
        name: the attribute, column stem and key (``best``).
        heading, meaning: its table header; what it is, one sentence.
        counts: reads it off a result, counts per copy.
        random_ci95, systematic_ci95: 95% half-widths of its random part (None:
            no interval) and of its systematic part, counts per copy.
        shown_in: where it is shown (``SHOWN_IN``).
        seed: one of the seed's figures (best, median)."""

    name: str
    heading: str
    meaning: str
    counts: Callable[[Any], float]
    random_ci95: Callable[[Any], float] | None = None
    systematic_ci95: Callable[[Any], float] | None = None
    shown_in: tuple[str, ...] = SHOWN_IN
    seed: bool = False

    @property
    def has_interval(self) -> bool:
        return self.random_ci95 is not None

    def applies_to(self, result: Any) -> bool:
        """Whether `result` has this statistic (a DiffResult has no best)."""
        try:
            self.counts(result)
        except AttributeError:
            return False
        return True

    def value(self, result: Any, unit: str = "ticks") -> float:
        """Its value for `result` in `unit` (a name of ``UNITS``)."""
        return float(result.units.convert(self.counts(result), unit))

    def half_width(self, result: Any, unit: str = "ticks", confidence: float = 0.95) -> float:
        """The half-width of its interval at `confidence`, in `unit` (random part rescaled plus systematic); NaN without one."""
        if self.random_ci95 is None:
            return math.nan
        counts = self.random_ci95(result)
        if confidence != 0.95:
            counts *= _z(confidence) / _Z95
        if self.systematic_ci95 is not None:
            counts += self.systematic_ci95(result)
        half = float(result.units.convert(counts, unit))
        if unit == "core_cycles" and result.counter == "tsc":
            # the value in TSC ticks times the uncertainty of core cycles per tick
            # (a PMU count is a core cycle: no conversion to be unsure of)
            half += abs(self.counts(result)) * result.cycles_per_tick_ci95
        return half

    def columns(self, unit: str) -> tuple[str, ...]:
        """Its columns in a table of `unit`: the value, then the interval's ends."""
        if not self.has_interval:
            return (f"{self.name}_{unit}",)
        return (f"{self.name}_{unit}", f"{self.name}_ci_low_{unit}", f"{self.name}_ci_high_{unit}")

    def figure_names(self) -> tuple[str, ...]:
        """Its value and 95% half-width in every unit, as an export names them:
        ``NAME_UNIT`` and ``NAME_ci95_UNIT``."""
        return tuple(n for u in UNITS for n in (f"{self.name}_{u}",)
                     + ((f"{self.name}_ci95_{u}",) if self.has_interval else ()))

    def figures(self, result: Any) -> dict[str, float]:
        """:meth:`figure_names` -> their values for `result`."""
        out = {}
        for u in UNITS:
            out[f"{self.name}_{u}"] = self.value(result, u)
            if self.has_interval:
                out[f"{self.name}_ci95_{u}"] = self.half_width(result, u)
        return out

    def cells(self, result: Any, unit: str, confidence: float = 0.95) -> dict[str, float]:
        """Its columns (:meth:`columns`) for `result`: the value and the interval's ends."""
        v = self.value(result, unit)
        if not self.has_interval:
            return {f"{self.name}_{unit}": v}
        if self.name == "estimate" and getattr(result, "resolved", True) is False:
            # below what the harness resolves: from 0 to the bound, never negative
            bound = result.upper_bound_in(unit)
            return {f"{self.name}_{unit}": max(v, 0.0), f"{self.name}_ci_low_{unit}": 0.0,
                    f"{self.name}_ci_high_{unit}": bound}
        h = self.half_width(result, unit, confidence)
        if not math.isfinite(h):  # one run gives no interval: its ends are unknown, not infinite
            h = math.nan
        return {f"{self.name}_{unit}": v, f"{self.name}_ci_low_{unit}": v - h,
                f"{self.name}_ci_high_{unit}": v + h}


#: The statistics, in the order every renderer shows them.
STATISTICS: tuple[Statistic, ...] = (
    Statistic(
        "best", "BEST (above empty)",
        "min(raw) - min(empty): the seed's BEST, stuck on the clock's step",
        lambda r: r.best, seed=True, shown_in=("table", "compare", "export", "html")),
    Statistic(
        "median", "MEDIAN (above empty)",
        "median(raw) - median(empty): the seed's MEDIAN, stuck on the clock's step",
        lambda r: r.median, seed=True, shown_in=("table", "compare", "export", "html")),
    Statistic(
        "estimate", "ESTIMATE",
        "the cost fastcpu recommends (BenchResult.estimate): the recommended estimator, less "
        "the harness bias where the self-test trusts it",
        lambda r: r.estimate, lambda r: r.estimate_random_ci95, lambda r: r.estimate_systematic_ci95),
    Statistic(
        "paired_mean", "PAIRED MEAN",
        "the fenced mean of the paired differences raw[i] - empty[i], uncorrected",
        lambda r: r.paired_mean, lambda r: r.paired_mean_ci95, shown_in=("compare", "export")),
)


def shown_in(where: str) -> tuple[Statistic, ...]:
    """The statistics shown in `where` (one of ``SHOWN_IN``), in order."""
    if where not in SHOWN_IN:
        raise ValueError(f"no renderer {where!r}: one of {', '.join(SHOWN_IN)}")
    return tuple(s for s in STATISTICS if where in s.shown_in)


def statistic(name: str) -> Statistic:
    """The statistic called `name`."""
    for s in STATISTICS:
        if s.name == name:
            return s
    raise KeyError(f"no statistic {name!r}: one of {', '.join(s.name for s in STATISTICS)}")


def attribute(result: Any, name: str) -> float:
    """``result.NAME_UNIT`` and ``result.NAME_ci95_UNIT`` for every statistic
    and every unit but ticks (the statistic itself): ``best_ns``,
    ``estimate_ci95_core_cycles``. AttributeError for any other name."""
    for unit in UNITS:
        if unit != "ticks" and name.endswith(f"_{unit}"):
            stem = name[: -len(unit) - 1]
            ci = stem.endswith("_ci95")
            stem = stem[:-5] if ci else stem
            for s in STATISTICS:
                if s.name == stem and s.applies_to(result) and (s.has_interval or not ci):
                    return s.half_width(result, unit) if ci else s.value(result, unit)
    raise AttributeError(f"{type(result).__name__!r} object has no attribute {name!r}")


#: Runs per block: 2 MB per int64 temporary, few enough to stay in cache
#: levels numpy is fast in, many enough that the Python loop costs little.
BLOCK = 1 << 18

_DIGIT = 16  # bits chosen per selection pass
_BINS = 1 << _DIGIT


class Counts:
    """An integer vector read block by block: ``block(s)`` gives the values of
    the runs in slice `s` of the underlying arrays (fewer where runs are left
    out), int64 or uint64; `runs` is the underlying length."""

    def __init__(self, block: Callable[[slice], np.ndarray], runs: int, whole: np.ndarray | None = None):
        self.block = block
        self.runs = runs
        self.whole = whole  # a plain uint64 array, when that is all it is

    def blocks(self) -> Iterator[np.ndarray]:
        for start in range(0, self.runs, BLOCK):
            yield self.block(slice(start, min(start + BLOCK, self.runs)))

    def map(self, fn: Callable[[np.ndarray], np.ndarray]) -> Counts:
        """The vector fn(values), block by block (fn may reuse its argument)."""
        return Counts(lambda s: fn(self.block(s)), self.runs)


def counts(a: np.ndarray, b: np.ndarray | None = None, drop: np.ndarray | None = None) -> Counts:
    """`a` (or the paired differences a[i] - b[i] as int64, as
    ``np.subtract(a, b, dtype=np.int64, casting='unsafe')`` gives them),
    without the runs flagged in `drop` (a bool array, or ``None``)."""

    def block(s: slice) -> np.ndarray:
        x = a[s] if b is None else np.subtract(a[s], b[s], dtype=np.int64, casting="unsafe")
        if drop is not None:
            x = x[~drop[s]]
        return x

    plain = b is None and drop is None and a.dtype == np.uint64 and a.flags.c_contiguous
    return Counts(block, int(a.size), a if plain else None)


def size(values: Counts) -> int:
    """How many values there are (the runs left in)."""
    return sum(x.size for x in values.blocks())


def _offsets(x: np.ndarray, lo: int) -> np.ndarray:
    """x - lo as uint64, exact whenever it fits (wrap-around arithmetic)."""
    return x.view(np.uint64) - np.uint64(lo % (1 << 64))


def kth(values: Counts, ranks: Sequence[int] | Callable[[int], Sequence[int]]) -> tuple[int, ...]:
    """The k-th smallest values of `values` for each 0-based rank k in `ranks`
    (or in ``ranks(n)`` for n values), exact, as Python ints. Raises
    ValueError when a rank is out of range."""
    if values.runs <= BLOCK:  # one block: numpy's selection on its (bounded) copy
        x = values.block(slice(0, values.runs))
        ks = list(ranks(x.size) if callable(ranks) else ranks)
        if any(not 0 <= k < x.size for k in ks):
            raise ValueError(f"ranks {ks} out of range for {x.size} values")
        return tuple(int(v) for v in np.partition(x, ks)[ks]) if ks else ()
    n, lo, hi = 0, None, None
    for x in values.blocks():
        if x.size:
            n += x.size
            xmin, xmax = int(x.min()), int(x.max())
            lo = xmin if lo is None else min(lo, xmin)
            hi = xmax if hi is None else max(hi, xmax)
    ks = list(ranks(n) if callable(ranks) else ranks)
    if not ks:
        return ()
    if any(not 0 <= k < n for k in ks):
        raise ValueError(f"ranks {ks} out of range for {n} values")
    assert lo is not None and hi is not None
    # each rank: the high bits of its offset found so far, and its rank among
    # the values that share them
    found = {k: (0, k) for k in ks}
    shift = -(-max((hi - lo).bit_length() - _DIGIT, 0) // _DIGIT) * _DIGIT
    first = True
    while True:
        prefixes = sorted({p for p, _ in found.values()})
        hist = {p: np.zeros(_BINS, np.int64) for p in prefixes}
        for x in values.blocks():
            u = _offsets(x, lo)  # a fresh array: shifted in place
            np.right_shift(u, np.uint64(shift), out=u)
            if first:  # every offset is below 2**(shift + 16): one prefix, 0
                hist[0] += np.bincount(u.view(np.int64), minlength=_BINS)
                continue
            for p in prefixes:
                # the digit below prefix p, or a value >= 2**16 (wrapped) elsewhere
                digits = u - np.uint64(p << _DIGIT)
                hist[p] += np.bincount(digits[digits < _BINS].view(np.int64), minlength=_BINS)
        below = {p: np.cumsum(h) for p, h in hist.items()}
        for k, (p, rank) in found.items():
            digit = int(np.searchsorted(below[p], rank, side="right"))
            before = int(below[p][digit - 1]) if digit else 0
            found[k] = ((p << _DIGIT) | digit, rank - before)
        if shift == 0:
            return tuple(lo + found[k][0] for k in ks)
        shift -= _DIGIT
        first = False


def middle_ranks(n: int) -> tuple[int, ...]:
    """The ranks numpy's median reads among n values: the middle one, or the
    two middle ones (none for no values)."""
    if n == 0:
        return ()
    return (n // 2,) if n % 2 else (n // 2 - 1, n // 2)


def median(values: Counts) -> float:
    """numpy's median of `values`: the middle value, or the mean of the two
    middle values, as float64 (NaN for no values)."""
    middle = kth(values, middle_ranks)
    if not middle:
        return math.nan
    if len(middle) == 1:
        return float(middle[0])
    return (float(middle[0]) + float(middle[1])) / 2


def fenced_sums(values: Counts, low: float, high: float) -> tuple[int, float, Callable[[float], float]]:
    """(count, sum, squares) of the values within [low, high]: count and float64
    sum at once, and ``squares(mean)``, the sum of (value - mean)**2 over the
    same values, for a second pass (the two-pass variance numpy's std uses)."""

    def inside(x: np.ndarray) -> np.ndarray:
        keep = x >= low
        keep &= x <= high
        return x[keep]

    n, sums = 0, []
    for x in values.blocks():
        kept = inside(x)
        n += kept.size
        sums.append(float(kept.sum(dtype=np.float64)))

    def squares(mean: float) -> float:
        parts = []
        for x in values.blocks():
            dev = inside(x).astype(np.float64)
            dev -= mean
            parts.append(float(np.dot(dev, dev)))
        return math.fsum(parts)

    return n, math.fsum(sums), squares
