"""The C core's estimates (csrc/estimate.c) against the Python that defines them
(fastcpu/results/estimate.py recommend(), and paired_mean(), which the C core
computes in the same pass so that a result holds it from birth): the same runs
give the same figures.

The estimator, the runs used and the estimate itself are compared bit for
bit. Its interval too, but for the one sum numpy hands to its BLAS (np.dot of
the deviations): the C sums it as OpenBLAS's AVX2 kernel does (exact on
hosts running that kernel single-threaded, up to 10,000 runs), and where a
BLAS orders it otherwise (another kernel, or threads above 10,000 runs) the
two agree within INTERVAL_REL_TOL.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcpu
from fastcpu import _core
from fastcpu.instrument import timebase
from fastcpu.results import statistics as _blocks
from fastcpu.results.estimate import paired_mean, recommend

#: Relative difference allowed between the intervals, only where the sum of
#: squares is ordered differently (about 80 ulps at 20,000 runs, threaded).
INTERVAL_REL_TOL = 1e-12
#: Counts from which the C core leaves the estimate to Python (estimate.py _EXACT_BELOW).
EXACT_BELOW = 1 << 61


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def same_estimate(c, p):
    """The C core's (ticks, ci95_ticks, estimator, runs_used) is the Python Estimate `p`."""
    ticks, ci, estimator, used = c
    assert (estimator, used) == (p.estimator, p.runs_used)
    assert same(ticks, p.ticks), (ticks, p.ticks)
    assert same(ci, p.ci95_ticks) or math.isclose(ci, p.ci95_ticks, rel_tol=INTERVAL_REL_TOL), (ci, p.ci95_ticks)


def check(raw, empty, step, unroll=1, migrated=None):
    """C == Python for these runs, the recommended estimate and the paired mean; returns the C
    core's recommended figures (None: left to Python)."""
    raw = np.ascontiguousarray(raw, dtype=np.uint64)
    empty = np.ascontiguousarray(empty, dtype=np.uint64)
    if migrated is not None:
        migrated = np.ascontiguousarray(migrated, dtype=bool)
    c = _core.recommend(raw, empty, migrated, float(step), unroll)
    p = recommend(raw, empty, step, unroll, migrated)
    if c is None:
        return None
    c, c_paired, (best, median) = c
    # bench()'s best and median of every run, migrated pairs included, from the same passes
    assert best == (raw.astype(np.float64).min() - empty.astype(np.float64).min()) / unroll
    assert median == (np.median(raw.astype(np.float64)) - np.median(empty.astype(np.float64))) / unroll
    same_estimate(c, p)
    same_estimate(c_paired, paired_mean(raw, empty, step, unroll, migrated))
    if p.estimator == "paired_mean":  # the one recommended: the same figures
        assert c_paired == c
    return c


def lattice(rng, n, base, lattice_ticks, spread):
    return base + rng.integers(0, spread, n) * lattice_ticks


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 2**32 - 1), st.sampled_from([1.0, 2.0, 24.5, 26.0, 26.5]),
       st.sampled_from([1, 2, 16, 64]), st.sampled_from(["lattice", "ties", "equal", "outliers", "wide", "huge"]),
       st.sampled_from([None, "some", "all"]))
def test_c_is_the_python_on_random_runs(n, seed, step, unroll, shape, moved):
    rng = np.random.default_rng(seed)
    base = int(rng.integers(0, 10**6))
    if shape == "lattice":  # AMD's 26-tick steps: a 5-cycle body reads as 0 or 26 more
        raw, empty = lattice(rng, n, base + 26, 26, 3), lattice(rng, n, base, 26, 3)
    elif shape == "ties":
        raw, empty = base + rng.integers(0, 2, n), np.full(n, base)
    elif shape == "equal":
        raw = empty = np.full(n, base)
    elif shape == "outliers":  # interrupts and preemptions: microseconds to seconds
        raw, empty = lattice(rng, n, base + 52, 26, 2), lattice(rng, n, base, 26, 2)
        hit = rng.integers(0, n, max(1, n // 25))
        raw[hit] += rng.integers(10**4, 10**12, hit.size)
    elif shape == "wide":  # spread over many steps: the median
        raw, empty = base + rng.integers(0, 5000, n), base + rng.integers(0, 3000, n)
    else:  # counts near the top of what the C core takes, differences near +-2**61
        raw, empty = rng.integers(0, EXACT_BELOW, n), rng.integers(0, EXACT_BELOW, n)
    migrated = None if moved is None else (rng.random(n) < 0.2 if moved == "some" else np.ones(n, bool))
    assert check(raw, empty, step, unroll, migrated) is not None


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 127, 128, 129, 8191, 8192, 8193, 10001])
def test_c_is_the_python_at_every_edge_of_the_sums(n):
    # numpy sums in pairs below 8 and within 128, in buffers of 8192; the BLAS in lanes of 16
    rng = np.random.default_rng(n)
    for raw, empty in ((lattice(rng, n, 1000, 26, 4), lattice(rng, n, 990, 26, 4)),
                       (rng.integers(0, EXACT_BELOW, n), rng.integers(0, EXACT_BELOW, n)),
                       (np.full(n, 7), np.full(n, 7))):
        for step in (1.0, 26.0):
            assert check(raw, empty, step) is not None


def test_a_single_run_and_a_single_kept_run():
    c = check([100], [50], 26.0)
    assert c[3] == 1 and math.isinf(c[1])
    # one pair kept by the fence among huge outliers: no interval
    c = check([100, 10**15, 2 * 10**15], [50, 0, 0], 1.0)
    assert c[2] == "median" or c[3] >= 1
    # every pair but one migrated: that one
    c = check([100, 200, 300], [50, 50, 50], 26.0, migrated=[True, False, True])
    assert c[3] == 1


def test_counts_past_the_exact_range_and_past_a_block_are_left_to_python():
    assert _core.recommend(np.array([EXACT_BELOW], np.uint64), np.array([0], np.uint64), None, 1.0, 1) is None
    assert _core.recommend(np.array([5], np.uint64), np.array([2**64 - 1], np.uint64), None, 1.0, 1) is None
    rng = np.random.default_rng(5)
    block = _blocks.BLOCK
    raw, empty = lattice(rng, block + 1, 2000, 26, 3), lattice(rng, block + 1, 1974, 26, 3)
    assert check(raw[:block], empty[:block], 26.0) is not None  # a whole block: in C, as Python's one block
    assert check(raw, empty, 26.0) is None  # past it: Python reads it in blocks
    assert check(raw[:block - 1] * 3, empty[:block - 1], 26.0) is not None


def test_recommend_refuses_what_it_cannot_read():
    a = np.zeros(4, np.uint64)
    with pytest.raises(TypeError, match="uint64"):
        _core.recommend(a.astype(np.int64), a, None, 1.0, 1)
    with pytest.raises(TypeError, match="C-contiguous"):
        _core.recommend(np.zeros(8, np.uint64)[::2], a, None, 1.0, 1)
    with pytest.raises(ValueError, match="holds 3 values"):
        _core.recommend(a, a[:3], None, 1.0, 1)
    with pytest.raises(TypeError, match="bool"):
        _core.recommend(a, a, np.zeros(4, np.uint8), 1.0, 1)
    with pytest.raises(ValueError, match="step"):
        _core.recommend(a, a, None, 0.0, 1)
    with pytest.raises(ValueError, match="unroll"):
        _core.recommend(a, a, None, 1.0, 0)


def test_time_runs_estimates_its_own_runs_as_python_does():
    clk = fastcpu.clock()
    for method, copies in (("gdt", 1), ("empty", 1), ("gdt", 4)):
        got = _core.time_runs(method, runs=1000, serialize="lfence", copies=copies, diff=False, counter="tsc",
                              rulers=timebase.rulers(), estimate_step=clk.tsc_step_ticks)
        assert got.estimate is not None and got.paired_mean is not None
        same_estimate(got.estimate, recommend(got.a, got.b, clk.tsc_step_ticks, copies, got.migrated))
        same_estimate(got.paired_mean, paired_mean(got.a, got.b, clk.tsc_step_ticks, copies, got.migrated))
        # the runs are a result's as made: read-only
        assert not (got.a.flags.writeable or got.b.flags.writeable or got.migrated.flags.writeable)
        with pytest.raises(ValueError, match="read-only"):
            got.a[0] = 0
    # not asked for, or a diff: none
    for got in (_core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc",
                                rulers=None),
                _core.time_runs("gdt", runs=10, serialize="lfence", copies=2, diff=True, counter="tsc",
                                rulers=None, estimate_step=26.0)):
        assert got.estimate is None and got.paired_mean is None
    with pytest.raises(ValueError, match="estimate_step"):
        _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None,
                        estimate_step=-1.0)


def test_bench_result_carries_the_c_estimate_that_python_would_compute():
    r = fastcpu.bench("gdt", 1000)
    p = recommend(r.raw, r.empty, r.step, r.unroll, r.migrated)
    assert (r.estimator, r.runs_used) == (p.estimator, p.runs_used)
    got = r._recommended  # the estimator's reading, before any harness correction
    assert same(got.ticks, p.ticks)
    assert same(got.ci95_ticks, p.ci95_ticks) or math.isclose(got.ci95_ticks, p.ci95_ticks,
                                                              rel_tol=INTERVAL_REL_TOL)
    # the paired mean too, held from birth (a plain field, not worked out when read)
    pm = paired_mean(r.raw, r.empty, r.step, r.unroll, r.migrated)
    assert "_paired_mean" in vars(r) and r._paired_mean.estimator == "paired_mean"
    assert r._paired_mean.runs_used == pm.runs_used and same(r.paired_mean, pm.ticks)
    assert same(r.paired_mean_ci95, pm.ci95_ticks) or math.isclose(r.paired_mean_ci95, pm.ci95_ticks,
                                                                   rel_tol=INTERVAL_REL_TOL)
    # a result rebuilt from its arrays (as a file is read) computes it in Python: the same figures
    again = fastcpu.BenchResult.from_arrays(
        method=r.method, serialize=r.serialize, unroll=r.unroll, cpu=r.cpu, raw=r.raw, empty=r.empty,
        migrated=r.migrated, clock=fastcpu.clock(), counter=r.counter, cycles_per_tick=r.cycles_per_tick)
    assert again._recommended.estimator == r._recommended.estimator
    assert same(again._recommended.ticks, r._recommended.ticks)
    assert "_paired_mean" in vars(again) and same(again.paired_mean, r.paired_mean)
    assert again._paired_mean.runs_used == r._paired_mean.runs_used


@pytest.mark.parametrize("n", [999, 1000])
@pytest.mark.parametrize("shape", ["bunched_outliers", "two_bunches", "wide", "across_zero"])
def test_c_is_the_python_where_the_window_holds_a_rank_and_where_it_does_not(n, shape):
    # the C core reads ranks and the MAD off a 256-value window around a middle run, and falls back
    # to its radix select where a rank (or a deviation) lies outside: both ways give Python's figures
    rng = np.random.default_rng(n)
    if shape == "bunched_outliers":  # the window holds every rank; outliers on both sides of it
        raw = 1000 + rng.choice([0, 24, 25, 49], n)
        empty = 1000 + rng.choice([0, 24, 25], n)
        raw[rng.integers(0, n, 20)] = rng.integers(0, 10**6, 20)
        empty[rng.integers(0, n, 5)] = rng.integers(0, 900, 5)
    elif shape == "two_bunches":  # the deviations from the middle reach past the window
        raw = 5000 + rng.choice([0, 1, 150, 151, 400], n)
        empty = 5000 + rng.choice([0, 300], n)
    elif shape == "wide":  # spread over more than the window: ranks outside it
        raw = 7000 + rng.integers(0, 600, n)
        empty = 7000 + rng.integers(0, 300, n)
    else:  # paired differences on both sides of zero, one far outlier
        raw = 100 + rng.choice([0, 25, 49], n)
        empty = 100 + rng.choice([0, 24, 49], n)
        empty[7] = 60000
    for step in (1.0, 24.5):
        assert check(raw, empty, step) is not None
