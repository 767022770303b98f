"""Estimates below the clock's step (docs/timing.md): ``'median'``, ``'paired_mean'`` (the
fenced mean of raw[i] - empty[i]) or bench_diff's ``'diff'``, with 95% half-widths; TSC ticks
per copy (counter units with a PMU counter); migrated pairs left out unless all are."""

from __future__ import annotations

import math

import numpy as np

from . import statistics as _blocks
from .parts import Estimate


__all__ = [
    "ESTIMATORS",
    "FENCE_STEPS",
    "FENCE_SIGMAS",
    "FENCE_RELATIVE",
    "MEDIAN_SPREAD_STEPS",
    "RESOLUTION_STEPS",
    "best_ticks",
    "median_ticks",
    "median_per_run",
    "robust_sigma",
    "fence",
    "paired_mean",
    "paired_difference",
    "median_difference",
    "recommend",
    "resolution_limited",
    "mdape_percent",
    "outlier_fraction",
    "t95",
]

ESTIMATORS = ("median", "paired_mean", "diff")

#: The median is recommended once the raw runs' robust sigma spans this many
#: clock steps; below that, quantization dominates and the paired mean is.
MEDIAN_SPREAD_STEPS = 2.0
#: Paired differences further from their median than the widest of
#: FENCE_STEPS steps + 2 ticks, FENCE_SIGMAS robust sigmas and
#: FENCE_RELATIVE x |median| are outliers. Rounding alone moves a difference
#: by up to 2 steps; an interrupt or a preempted vCPU costs microseconds,
#: hundreds of 10 ns steps. 8 steps keep a second mode or a cache miss of
#: the method itself even when over half the runs read the same value
#: (robust sigma 0); 5% of the median lets long (unrolled) runs vary with
#: their length.
FENCE_STEPS = 8
FENCE_SIGMAS = 5.0
FENCE_RELATIVE = 0.05
#: best or median (per run) below this many clock steps: a one-step error
#: would be 10% or more, so they should not be trusted alone.
RESOLUTION_STEPS = 10

# Student's t, 97.5th percentile, for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964
# Robust sigma from the median absolute deviation (normal consistency).
_MAD_SIGMA = 1.4826


def t95(df: int) -> float:
    """Two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def best_ticks(raw: np.ndarray, empty: np.ndarray, unroll: int) -> float:
    """``(min(raw) - min(empty)) / unroll``: the seed's BEST, TSC ticks per copy above the empty sequence."""
    return (float(raw.min()) - float(empty.min())) / unroll


def median_per_run(values: np.ndarray) -> float:
    """numpy's median of `values` (TSC ticks or counts per run); integer
    counts are read in blocks, not copied."""
    if values.dtype.kind in "iu":
        return _blocks.median(_blocks.counts(values))
    return float(np.median(values))


def median_ticks(raw: np.ndarray, empty: np.ndarray, unroll: int) -> float:
    """``(median(raw) - median(empty)) / unroll``: the seed's MEDIAN, TSC ticks per copy above the empty sequence."""
    return (median_per_run(raw) - median_per_run(empty)) / unroll


def _median_inplace(x: np.ndarray) -> float:
    """numpy's median of `x`, reordering `x` (which the caller owns) instead of copying it."""
    n = x.size
    k = n // 2
    if n % 2:
        x.partition(k)
        return float(x[k])
    x.partition((k - 1, k))
    return (float(x[k - 1]) + float(x[k])) / 2


def _center_and_sigma(x: np.ndarray) -> tuple[float, float]:
    """(median, robust sigma) of float64 `x`, which it reorders and overwrites."""
    if x.size == 0:
        return 0.0, 0.0
    center = _median_inplace(x)
    np.subtract(x, center, out=x)
    np.abs(x, out=x)
    return center, _MAD_SIGMA * _median_inplace(x)


def _counts_center_and_sigma(v: _blocks.Counts) -> tuple[float, float]:
    """(median, robust sigma) of integer counts, read in blocks."""
    middle = _blocks.kth(v, _blocks.middle_ranks)
    if not middle:  # no values
        return 0.0, 0.0
    center = float(middle[0]) if len(middle) == 1 else (float(middle[0]) + float(middle[1])) / 2  # _blocks.median
    # twice the median, exact (a float loses counts above 2**53): deviations stay exact
    twice = 2 * middle[0] if len(middle) == 1 else middle[0] + middle[1]
    c0, half = divmod(twice, 2)  # the median is c0 or c0 + 1/2

    def deviations(x: np.ndarray) -> np.ndarray:
        """|2x - twice| as uint64, exact for counts up to 2**64 - 1 while they lie
        within 2**62 of the median (2x itself would not fit in 64 bits)."""
        d = (x.view(np.uint64) - np.uint64(c0 % (1 << 64))).view(np.int64)  # x - c0: a fresh array
        y = np.abs(d).view(np.uint64)
        np.multiply(y, np.uint64(2), out=y)
        if half:  # |2(x - c0) - 1|: one less above c0, one more at or below it
            y += np.where(d > 0, np.uint64(2**64 - 1), np.uint64(1))
        return y

    return center, _MAD_SIGMA * _blocks.median(v.map(deviations)) / 2


def _center_and_sigma_of(values: np.ndarray) -> tuple[float, float]:
    if values.dtype.kind in "iu":
        return _counts_center_and_sigma(_blocks.counts(values))
    return _center_and_sigma(values.astype(np.float64))


def robust_sigma(values: np.ndarray) -> float:
    """1.4826 x the median absolute deviation: the standard deviation a normal
    sample with the same MAD would have, in the units of `values`."""
    return _center_and_sigma_of(values)[1]


def _half_width(center: float, sigma: float, step: float) -> float:
    return max(FENCE_STEPS * step + 2.0, FENCE_SIGMAS * sigma, FENCE_RELATIVE * abs(center))


def _counts_fence(v: _blocks.Counts, step: float) -> tuple[float, float]:
    center, sigma = _counts_center_and_sigma(v)
    return center, _half_width(center, sigma, step)


def fence(d: np.ndarray, step: float) -> tuple[float, float]:
    """(center, half-width) of the outlier fence for paired differences `d`, in ticks per run."""
    center, sigma = _center_and_sigma_of(d)
    return center, _half_width(center, sigma, step)


def _counts_fenced_summary(v: _blocks.Counts, center: float, half: float) -> tuple[float, float, int]:
    """(mean, 95% t half-width, count) of the values within the fence, in blocks."""
    n, total, squares = _blocks.fenced_sums(v, center - half, center + half)
    mean = total / n if n else math.nan
    if n < 2:
        return mean, math.inf, n
    sd = math.sqrt(squares(mean) / (n - 1))
    return mean, t95(n - 1) * sd / math.sqrt(n), n


def _dropped(migrated: np.ndarray | None) -> np.ndarray | None:
    """The pairs to leave out (those that migrated), or None for none."""
    if migrated is None:
        return None
    moved = np.asarray(migrated, dtype=bool)
    if not moved.any() or moved.all():
        return None
    return moved


def _paired(raw: np.ndarray, empty: np.ndarray, step: float, per: int, estimator: str,
            migrated: np.ndarray | None) -> Estimate:
    # the differences are read in blocks, twice for the fence's median and
    # MAD and twice for the mean and its interval, and never held whole
    d = _blocks.counts(raw, empty, _dropped(migrated))
    center, half = _counts_fence(d, step)
    mean, ci, n = _counts_fenced_summary(d, center, half)
    return Estimate(mean / per, ci / per, estimator, n)


def paired_mean(raw: np.ndarray, empty: np.ndarray, step: float, unroll: int = 1,
                migrated: np.ndarray | None = None) -> Estimate:
    """Mean of the paired differences inside the outlier fence, per copy, with
    a t interval; pairs flagged in `migrated` are left out (unless all are)."""
    return _paired(raw, empty, step, unroll, "paired_mean", migrated)


def paired_difference(long: np.ndarray, short: np.ndarray, step: float, k: int,
                      migrated: np.ndarray | None = None) -> Estimate:
    """The differencing estimate, TSC ticks per copy: fenced mean of (long[i] - short[i]) / k, migrated pairs out."""
    return _paired(long, short, step, k, "diff", migrated)


def _median_ranks(n: int) -> tuple[int, int]:
    """The order statistics bounding the distribution-free 95% interval of the median of n values."""
    half_rank = _Z975 * math.sqrt(n) / 2
    return max(math.floor(n / 2 - half_rank), 0), min(math.ceil(n / 2 + half_rank), n - 1)


def _counts_median_ci(v: _blocks.Counts) -> float:
    lo, hi = _blocks.kth(v, _median_ranks)
    return (float(hi) - float(lo)) / 2


def _median_ci(values: np.ndarray) -> float:
    """Half-width of the distribution-free 95% interval of the median (order statistics)."""
    if values.dtype.kind in "iu":
        return _counts_median_ci(_blocks.counts(values))
    lo, hi = _median_ranks(values.size)
    part = np.partition(values, (lo, hi))
    return (float(part[hi]) - float(part[lo])) / 2


def _counts_median_difference(raw: _blocks.Counts, empty: _blocks.Counts, step: float, unroll: int) -> Estimate:
    value = (_blocks.median(raw) - _blocks.median(empty)) / unroll
    rounding = _Z975 * step / math.sqrt(6)  # sum of two uniform(+-step/2) errors
    ci = math.sqrt(_counts_median_ci(raw) ** 2 + _counts_median_ci(empty) ** 2 + rounding**2)
    return Estimate(value, ci / unroll, "median", _blocks.size(raw))


def median_difference(raw: np.ndarray, empty: np.ndarray, step: float, unroll: int = 1) -> Estimate:
    """median(raw) - median(empty) per copy, with its interval (order statistics plus rounding to the clock's grid)."""
    return _counts_median_difference(_blocks.counts(raw), _blocks.counts(empty), step, unroll)


#: Runs up to which :func:`recommend` works on whole arrays (one block of
#: ``statistics.BLOCK``: what the block-wise path reads in one piece anyway).
_SMALL = _blocks.BLOCK
#: Counts below this keep every step of the small path exact in int64
#: (twice a count, and differences of two).
_EXACT_BELOW = 1 << 61


def _middle(x: np.ndarray) -> tuple[int, ...]:
    """numpy's median ranks of integer `x` as Python ints."""
    ks = list(_blocks.middle_ranks(x.size))
    return tuple(int(v) for v in np.partition(x, ks)[ks])


def _small_center_and_sigma(x: np.ndarray) -> tuple[float, float]:
    """``_counts_center_and_sigma`` of int64 `x` within ``_EXACT_BELOW`` of 0, whole-array."""
    middle = _middle(x)
    center = float(middle[0]) if len(middle) == 1 else (float(middle[0]) + float(middle[1])) / 2
    twice = 2 * middle[0] if len(middle) == 1 else middle[0] + middle[1]
    y = np.abs(2 * x - np.int64(twice))
    dev = _middle(y)
    mad2 = float(dev[0]) if len(dev) == 1 else (float(dev[0]) + float(dev[1])) / 2
    return center, _MAD_SIGMA * mad2 / 2


def _recommend_small(raw: np.ndarray, empty: np.ndarray, step: float, unroll: int,
                     drop: np.ndarray | None) -> Estimate | None:
    """:func:`recommend` of up to ``_SMALL`` runs on whole arrays, with the same figures as the block-wise path; None where int64 is not exact."""
    if int(raw.max()) >= _EXACT_BELOW or int(empty.max()) >= _EXACT_BELOW:
        return None
    r, e = raw.view(np.int64), empty.view(np.int64)
    if drop is not None:
        keep = ~drop
        r, e = r[keep], e[keep]
    if _small_center_and_sigma(r)[1] >= MEDIAN_SPREAD_STEPS * step:
        mr, me = _middle(r), _middle(e)
        value = ((sum(map(float, mr)) / len(mr) if len(mr) == 2 else float(mr[0]))
                 - (sum(map(float, me)) / len(me) if len(me) == 2 else float(me[0]))) / unroll
        ranks = list(_median_ranks(r.size))
        ci_r = (lambda lo, hi: (float(hi) - float(lo)) / 2)(*np.partition(r, ranks)[ranks])
        ci_e = (lambda lo, hi: (float(hi) - float(lo)) / 2)(*np.partition(e, ranks)[ranks])
        rounding = _Z975 * step / math.sqrt(6)
        ci = math.sqrt(ci_r**2 + ci_e**2 + rounding**2)
        return Estimate(value, ci / unroll, "median", int(r.size))
    d = r - e
    center, sigma = _small_center_and_sigma(d)
    half = _half_width(center, sigma, step)
    keep = d >= center - half
    keep &= d <= center + half
    kept = d[keep]
    n = int(kept.size)
    mean = float(kept.sum(dtype=np.float64)) / n if n else math.nan
    if n < 2:
        return Estimate(mean / unroll, math.inf / unroll, "paired_mean", n)
    dev = kept.astype(np.float64)
    dev -= mean
    sd = math.sqrt(float(np.dot(dev, dev)) / (n - 1))
    return Estimate(mean / unroll, t95(n - 1) * sd / math.sqrt(n) / unroll, "paired_mean", n)


def recommend(raw: np.ndarray, empty: np.ndarray, step: float, unroll: int = 1,
              migrated: np.ndarray | None = None) -> Estimate:
    """The estimate fastcpu recommends for one result: the median when the raw
    runs spread over several clock steps, else the paired mean; either from
    the pairs not flagged in `migrated` (all of them when every one is)."""
    drop = _dropped(migrated)
    if raw.size <= _SMALL and raw.dtype == np.uint64 and empty.dtype == np.uint64:
        small = _recommend_small(raw, empty, step, unroll, drop)
        if small is not None:
            return small
    kept_raw = _blocks.counts(raw, drop=drop)
    if _counts_center_and_sigma(kept_raw)[1] >= MEDIAN_SPREAD_STEPS * step:
        return _counts_median_difference(kept_raw, _blocks.counts(empty, drop=drop), step, unroll)
    return _paired(raw, empty, step, unroll, "paired_mean", migrated)


def resolution_limited(best: float, median: float, step: float, unroll: int = 1) -> bool:
    """Whether best or median (per copy) sits within RESOLUTION_STEPS clock steps per run."""
    return min(abs(best), abs(median)) * unroll < RESOLUTION_STEPS * step


def mdape_percent(raw: np.ndarray) -> float:
    """nanobench's err%: the median of |raw - median(raw)| / raw, in percent."""
    v = _blocks.counts(raw) if raw.dtype.kind in "iu" else _blocks.Counts(
        lambda s: raw[s].astype(np.float64), int(raw.size))
    center = median_per_run(raw)

    def errors(x: np.ndarray) -> np.ndarray:
        y = x.astype(np.float64)  # a copy: `x` may be the caller's array
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(center, y, out=y)  # |x - c| / x = |1 - c / x|
        np.subtract(1.0, y, out=y)
        np.abs(y, out=y)
        y[~np.isfinite(y)] = 0.0
        # non-negative floats order as their bit patterns read as int64
        return y.view(np.int64)

    middle = _blocks.kth(v.map(errors), _blocks.middle_ranks)
    as_float = [float(np.int64(m).view(np.float64)) for m in middle]
    return 100.0 * (as_float[0] if len(as_float) == 1 else (as_float[0] + as_float[1]) / 2)


def outlier_fraction(raw: np.ndarray, empty: np.ndarray, step: float) -> float:
    """Share of runs whose paired difference falls outside the outlier fence."""
    d = _blocks.counts(raw, empty)
    center, half = _counts_fence(d, step)
    inside, _, _ = _blocks.fenced_sums(d, center - half, center + half)
    return float(raw.size - inside) / raw.size
