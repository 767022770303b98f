"""The estimates read the runs in blocks (fastcpu.results.statistics): they must give what
the straightforward whole-array numpy computation gives. Order statistics
(medians, the fence, counts) exactly; means and intervals, whose summation
order differs, within 1e-12 relative. Random runs, the data files, and the
edges: one run, all equal, migrated pairs, huge outliers, many blocks."""

import math
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.results import statistics as _blocks
from fastcpu.results import estimate as _estimate
from fastcpu.results.estimate import FENCE_RELATIVE, FENCE_SIGMAS, FENCE_STEPS, MEDIAN_SPREAD_STEPS

DATA = sorted((Path(__file__).resolve().parent.parent / "data").glob("*.json*"))
REL = 1e-12
STEP = 26

# ---- the reference: whole arrays, plain numpy ----


def ref_sigma(x):
    x = np.asarray(x, np.float64)
    return 1.4826 * float(np.median(np.abs(x - np.median(x))))


def ref_fence(d, step):
    c = float(np.median(d))
    return c, max(FENCE_STEPS * step + 2.0, FENCE_SIGMAS * ref_sigma(d), FENCE_RELATIVE * abs(c))


def ref_keep(n, migrated):
    if migrated is None or not migrated.any() or migrated.all():
        return np.ones(n, bool)
    return ~migrated


def ref_paired_mean(raw, empty, step, per=1, migrated=None):
    keep = ref_keep(raw.size, migrated)
    d = raw[keep].astype(np.int64) - empty[keep].astype(np.int64)
    c, h = ref_fence(d, step)
    kept = d[np.abs(d - c) <= h].astype(np.float64)
    n = kept.size
    ci = math.inf if n < 2 else _estimate.t95(n - 1) * float(np.std(kept, ddof=1)) / math.sqrt(n)
    return float(np.mean(kept)) / per, ci / per, n


def ref_median_ci(x):
    n = x.size
    half = 1.959964 * math.sqrt(n) / 2
    s = np.sort(x)
    return (float(s[min(math.ceil(n / 2 + half), n - 1)]) - float(s[max(math.floor(n / 2 - half), 0)])) / 2


def ref_recommend(raw, empty, step, unroll=1, migrated=None):
    keep = ref_keep(raw.size, migrated)
    r, e = raw[keep], empty[keep]
    if ref_sigma(r) >= MEDIAN_SPREAD_STEPS * step:
        value = (float(np.median(r)) - float(np.median(e))) / unroll
        ci = math.sqrt(ref_median_ci(r) ** 2 + ref_median_ci(e) ** 2 + (1.959964 * step / math.sqrt(6)) ** 2)
        return "median", value, ci / unroll, r.size
    mean, ci, n = ref_paired_mean(raw, empty, step, unroll, migrated)
    return "paired_mean", mean, ci, n


def ref_mdape(raw):
    x = raw.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.abs(1.0 - np.median(x) / x)
    e[~np.isfinite(e)] = 0.0
    return 100.0 * float(np.median(e))


def ref_outliers(raw, empty, step):
    d = raw.astype(np.int64) - empty.astype(np.int64)
    c, h = ref_fence(d, step)
    return float(np.count_nonzero(np.abs(d - c) > h)) / d.size


def close(a, b):
    return a == b or (math.isinf(a) and math.isinf(b)) or abs(a - b) <= REL * max(abs(a), abs(b))


def check_result(raw, empty, step, unroll=1, migrated=None):
    """Every blocked statistic of one measurement against the reference."""
    est = _estimate.recommend(raw, empty, step, unroll, migrated)
    name, value, ci, n = ref_recommend(raw, empty, step, unroll, migrated)
    assert (est.estimator, est.runs_used) == (name, n)
    assert close(est.ticks, value) and close(est.ci95_ticks, ci), (est, value, ci)
    pm = _estimate.paired_mean(raw, empty, step, unroll, migrated)
    mean, ci, n = ref_paired_mean(raw, empty, step, unroll, migrated)
    assert pm.runs_used == n and close(pm.ticks, mean) and close(pm.ci95_ticks, ci)
    assert _estimate.median_ticks(raw, empty, unroll) == (float(np.median(raw)) - float(np.median(empty))) / unroll
    assert _estimate.mdape_percent(raw) == ref_mdape(raw)
    assert _estimate.outlier_fraction(raw, empty, step) == ref_outliers(raw, empty, step)
    d = raw.astype(np.int64) - empty.astype(np.int64)
    assert _estimate.fence(d, step) == ref_fence(d, step)
    assert _estimate.robust_sigma(raw) == pytest.approx(ref_sigma(raw), rel=REL)


@pytest.fixture(params=[_blocks.BLOCK, 7, 1], ids=["block", "block7", "block1"])
def block(request, monkeypatch):
    """The real block size, and tiny ones: every value its own block at worst."""
    monkeypatch.setattr(_blocks, "BLOCK", request.param)
    return request.param


def sized(block, large):
    """How many runs to test with: fewer the smaller the blocks (the Python loop runs per block)."""
    return {1: 150, 7: 1500}.get(block, large)


def quantized(rng, n, outliers=0.01, big=10**6):
    """Runs on a 26-tick grid with a share of interrupt-sized outliers."""
    empty = (rng.integers(0, 3, n) * STEP + 1000).astype(np.uint64)
    raw = empty + (rng.integers(0, 4, n) * STEP).astype(np.uint64)
    hit = rng.random(n) < outliers
    raw[hit] += rng.integers(1, big, int(hit.sum())).astype(np.uint64)
    return raw, empty


@pytest.mark.parametrize("seed", range(6))
def test_random_runs_match_the_reference(block, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, sized(block, 200_000)))
    raw, empty = quantized(rng, n, outliers=rng.choice([0.0, 0.01, 0.2]))
    migrated = rng.random(n) < rng.choice([0.0, 0.05, 0.5])
    check_result(raw, empty, STEP, int(rng.integers(1, 5)), migrated)


def test_spread_runs_take_the_median_and_match(block):
    rng = np.random.default_rng(11)
    n = sized(block, 300_000) + 1
    empty = rng.integers(900, 1100, n).astype(np.uint64)
    raw = empty + rng.integers(0, 2000, n).astype(np.uint64)
    assert _estimate.recommend(raw, empty, STEP).estimator == "median"
    check_result(raw, empty, STEP)
    check_result(raw, empty, STEP, 2, rng.random(n) < 0.1)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_few_runs_match(block, n):
    raw, empty = quantized(np.random.default_rng(n), n, outliers=0.0)
    check_result(raw, empty, STEP)
    assert math.isinf(_estimate.paired_mean(raw[:1], empty[:1], STEP).ci95_ticks)


def test_all_equal_runs_match(block):
    raw, empty = np.full(sized(block, 1000), 1052, np.uint64), np.full(sized(block, 1000), 1000, np.uint64)
    check_result(raw, empty, STEP)
    est = _estimate.recommend(raw, empty, STEP)
    assert (est.ticks, est.ci95_ticks, est.runs_used) == (52.0, 0.0, raw.size)


def test_migrated_pairs_match_some_or_all(block):
    n = sized(block, 2000)
    raw, empty = quantized(np.random.default_rng(3), n, outliers=0.0)
    some = np.zeros(n, bool)
    some[::3] = True
    raw[some] += np.uint64(10_000)  # migrated pairs are slow ones: leaving them out shows
    check_result(raw, empty, STEP, 1, some)
    check_result(raw, empty, STEP, 1, np.ones(n, bool))
    assert _estimate.recommend(raw, empty, STEP, 1, some).runs_used == n - int(some.sum())


def test_huge_outliers_and_wide_ranges_match(block):
    rng = np.random.default_rng(5)
    raw, empty = quantized(rng, sized(block, 4000), outliers=0.02, big=2**61)
    raw[0] = np.uint64(2**63 - 1)  # wider than a float64 holds exactly
    empty[1] = np.uint64(2**62)  # a difference far below zero
    check_result(raw, empty, STEP)


@pytest.mark.parametrize("path", DATA, ids=[p.stem for p in DATA])
def test_the_data_files_match(path):
    for r in fastcpu.load(path).values():
        check_result(r.raw, r.empty, r.step, r.unroll, r.migrated)


def test_kth_is_exact_over_the_whole_int64_and_uint64_ranges(block):
    rng = np.random.default_rng(9)
    n = sized(block, 100_000)
    signed = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    signed[:2] = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    unsigned = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    unsigned[:2] = 0, np.iinfo(np.uint64).max
    narrow = rng.integers(-3, 3, n).astype(np.int64)
    for a in (signed, unsigned, narrow):
        ranks = (0, 1, n // 2, n - 2, n - 1)
        assert _blocks.kth(_blocks.counts(a), ranks) == tuple(int(v) for v in np.sort(a)[list(ranks)])
    with pytest.raises(ValueError, match="out of range"):
        _blocks.kth(_blocks.counts(narrow), (n,))


def test_the_median_of_no_runs_is_nan_and_a_sigma_of_zero():
    none = _blocks.counts(np.zeros(4, np.uint64), drop=np.ones(4, bool))
    assert math.isnan(_blocks.median(none)) and _blocks.size(none) == 0
    assert _estimate._counts_center_and_sigma(none) == (0.0, 0.0)
