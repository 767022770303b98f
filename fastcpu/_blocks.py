"""Statistics of per-run counts read in fixed-size blocks, in bounded memory.

A measurement of 20 million runs holds 340 MB of arrays (``raw`` and
``empty``, uint64 TSC ticks or core cycles, and the ``migrated`` flags). Its
estimate needs medians and fenced means of derived vectors (the paired
differences raw - empty, the deviations from a median, the runs that did not
migrate): built whole, each is another 160 MB. Here a derived vector is a
:class:`Counts`, a recipe that yields it :data:`BLOCK` runs at a time, and
every statistic reads it block by block:

- order statistics are exact: a radix selection (16 bits a pass) over the
  integers' offsets from their minimum, with a 65,536-bin histogram a pass;
  counts spanning under 2**16 take one pass, TSC ticks with interrupts two
  (runs that fit in one block take numpy's partition of that block instead:
  the same values, without 65,536-bin histograms for a few thousand runs);
- sums are float64 sums per block (numpy's pairwise summation) added with
  ``math.fsum``: equal to numpy's whole-array sums within rounding.

Non-negative float64 values (nanobench's err%) are ordered by their bit
patterns read as int64, which IEEE 754 makes monotonic, so they go through
the same selection exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np

__all__ = ["BLOCK", "Counts", "counts", "size", "kth", "middle_ranks", "median", "fenced_sums"]

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
    """x - lo as uint64: exact whenever x - lo fits in 0..2**64-1 (wrap-around
    arithmetic, signed or unsigned x alike)."""
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
