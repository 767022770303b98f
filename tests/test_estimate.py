"""Sub-step estimates: each statistic against a slow, obvious oracle, and the
estimators against simulated quantized measurements of a known cost."""

import ctypes
import dataclasses
import math
import random
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core_probe
import fastcpu
from fastcpu import _core
from fastcpu.instrument import timebase as _conversion
from fastcpu.results import estimate as _estimate
from fastcpu.instrument import harness as _harness

STEP = 26

# ---- slow, obvious oracles (pure Python, sorted lists) ----


def o_median(xs):
    s = sorted(xs)
    n = len(s)
    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def o_sigma(xs):
    m = o_median(xs)
    return 1.4826 * o_median([abs(x - m) for x in xs])


def o_fence(d, step):
    return o_median(d), max(8 * step + 2.0, 5.0 * o_sigma(d), 0.05 * abs(o_median(d)))


def o_paired_mean(raw, empty, step, unroll):
    d = [int(a) - int(b) for a, b in zip(raw, empty)]
    c, h = o_fence(d, step)
    kept = [x for x in d if abs(x - c) <= h]
    mean = statistics.fmean(kept)
    ci = _estimate.t95(len(kept) - 1) * statistics.stdev(kept) / math.sqrt(len(kept)) if len(kept) > 1 else math.inf
    return mean / unroll, ci / unroll, len(kept)


def o_mdape(raw):
    m = o_median(raw)
    return 100 * o_median([abs(x - m) / x for x in raw])


def o_median_ci(xs):
    s = sorted(xs)
    n = len(s)
    h = 1.959964 * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - h), 0)
    hi = min(math.ceil(n / 2 + h), n - 1)
    return (s[hi] - s[lo]) / 2


def simulate(cost, runs, rng, step=STEP, overhead=57.3, jitter=0.0, outliers=0.0):
    """Quantized timings of a sequence of true cost `cost` ticks (normal
    jitter of the method's runs optional): each run starts at a random phase
    of the clock's step, as real runs do."""

    def timed(true, jitter):
        start = rng.uniform(0, step, runs)
        length = true + rng.normal(0, jitter, runs) if jitter else np.full(runs, true)
        hit = rng.random(runs) < outliers
        length = length + hit * rng.uniform(2000, 20000, runs)
        end = start + length
        return (np.floor(end / step) * step - np.floor(start / step) * step).astype(np.uint64)

    return timed(overhead + cost, jitter), timed(overhead, 0.0)


def result(raw, empty, unroll=1, step=STEP, migrated=None):
    raw = np.asarray(raw, dtype=np.uint64)
    empty = np.asarray(empty, dtype=np.uint64)
    return fastcpu.BenchResult(
        method="synthetic",
        runs=raw.size,
        serialize="lfence",
        unroll=unroll,
        cpu=None,
        raw=raw,
        empty=empty,
        migrated=np.zeros(raw.size, bool) if migrated is None else migrated,
        best=(float(raw.min()) - float(empty.min())) / unroll,
        median=(float(np.median(raw)) - float(np.median(empty))) / unroll,
        tsc_hz=2.6e9,
        cycles_per_tick=1.5,
        tsc_step_ticks=step,
    )


ticks = st.lists(st.integers(1, 10**6), min_size=1, max_size=60)
quantized = st.lists(st.sampled_from([26, 27, 52, 53, 78, 104, 25]), min_size=1, max_size=60)

# ---- each statistic against its oracle ----


@settings(max_examples=200, deadline=None)
@given(st.one_of(ticks, quantized), st.data())
def test_paired_mean_matches_the_oracle(raw, data):
    empty = data.draw(st.lists(st.integers(1, 10**6), min_size=len(raw), max_size=len(raw)))
    unroll = data.draw(st.integers(1, 64))
    est = _estimate.paired_mean(np.array(raw, np.uint64), np.array(empty, np.uint64), STEP, unroll)
    mean, ci, n = o_paired_mean(raw, empty, STEP, unroll)
    assert est.estimator == "paired_mean"
    assert est.runs_used == n
    assert est.ticks == pytest.approx(mean, rel=1e-12, abs=1e-9)
    if math.isinf(ci):
        assert math.isinf(est.ci95_ticks)
    else:
        assert est.ci95_ticks == pytest.approx(ci, rel=1e-9, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.one_of(ticks, quantized))
def test_robust_sigma_mdape_and_median_ci_match_the_oracle(xs):
    a = np.array(xs, np.uint64)
    assert _estimate.robust_sigma(a) == pytest.approx(o_sigma(xs), abs=1e-9)
    assert _estimate.mdape_percent(a) == pytest.approx(o_mdape(xs), abs=1e-9)
    assert _estimate._median_ci(a) == pytest.approx(o_median_ci(xs))


@settings(max_examples=100, deadline=None)
@given(st.one_of(ticks, quantized), st.data())
def test_outlier_fraction_matches_the_oracle(raw, data):
    empty = data.draw(st.lists(st.integers(1, 10**6), min_size=len(raw), max_size=len(raw)))
    d = [a - b for a, b in zip(raw, empty)]
    c, h = o_fence(d, STEP)
    expected = sum(abs(x - c) > h for x in d) / len(d)
    assert _estimate.outlier_fraction(np.array(raw, np.uint64), np.array(empty, np.uint64), STEP) == expected


@settings(max_examples=100, deadline=None)
@given(st.one_of(ticks, quantized), st.data())
def test_median_difference_matches_the_oracle(raw, data):
    empty = data.draw(st.lists(st.integers(1, 10**6), min_size=len(raw), max_size=len(raw)))
    est = _estimate.median_difference(np.array(raw, np.uint64), np.array(empty, np.uint64), STEP, 2)
    assert est.ticks == (o_median(raw) - o_median(empty)) / 2
    rounding = 1.959964 * STEP / math.sqrt(6)
    ci = math.sqrt(o_median_ci(raw) ** 2 + o_median_ci(empty) ** 2 + rounding**2) / 2
    assert est.ci95_ticks == pytest.approx(ci)


def test_c_median_matches_the_oracle():
    # the C core's median (no scratch copy: a radix select) against sorting,
    # through tests/core_probe.c: 300 drawn lists at once, one program run
    rng = random.Random(11)
    lists = [[rng.choice((rng.randrange(2**64), rng.randrange(61), 2**64 - 1 - rng.randrange(3)))
              for _ in range(rng.randrange(1, 51))] for _ in range(300)]
    lists += [[2**64 - 1, 2**64 - 2], [0, 2**64 - 1], [7] * 3, [2**63, 2**63 + 1, 1, 2], [5]]  # the corners
    expected = []
    for xs in lists:
        s, n = sorted(xs), len(xs)
        expected.append(float(s[n // 2]) if n % 2 else (float(s[n // 2 - 1]) + float(s[n // 2])) / 2)
    assert core_probe.medians(lists) == expected


def test_c_median_of_large_arrays_matches_numpy():
    rng = np.random.default_rng(7)
    arrays = []
    for n in (10**5, 10**5 + 1):
        a = (rng.integers(1, 60, n) * 26 + rng.integers(0, 2, n)).astype(np.uint64)
        a[::997] = rng.integers(10**4, 10**9, a[::997].size)  # interrupts
        arrays.append(a)
    assert core_probe.medians([a.tolist() for a in arrays]) == [np.median(a) for a in arrays]


def test_t95_follows_students_t():
    assert _estimate.t95(1) == 12.706
    assert _estimate.t95(30) == 2.042
    assert _estimate.t95(31) == pytest.approx(2.0395, abs=1e-3)
    assert _estimate.t95(10**9) == pytest.approx(1.95996, abs=1e-4)
    assert math.isinf(_estimate.t95(0))
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (40, 100, 1000):
        assert _estimate.t95(df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=2e-4)


# ---- the estimators against a known truth ----


@pytest.mark.parametrize("cost", [0.0, 3.7, 12.0, 40.5, 150.25])
def test_paired_mean_recovers_a_sub_step_cost(cost):
    rng = np.random.default_rng(int(cost * 100) + 1)
    raw, empty = simulate(cost, 20000, rng, outliers=0.005)
    r = result(raw, empty)
    assert r.estimator == "paired_mean"
    # the 95% interval holds the truth (4 half-widths: a fixed seed, no flakiness)
    assert abs(r.estimate - cost) <= 4 * r.estimate_ci95
    assert r.estimate_ci95 < 1.0
    # while best and median sit on the clock's grid
    assert r.median % STEP == 0 and r.best % STEP == 0


def test_median_is_recommended_when_the_spread_is_wide():
    rng = np.random.default_rng(3)
    raw, empty = simulate(400.0, 5000, rng, jitter=100.0)
    r = result(raw, empty)
    assert r.estimator == "median"
    assert r.estimate == r.median
    assert abs(r.estimate - 400.0) <= 4 * r.estimate_ci95


def test_a_second_mode_is_not_cut_as_outliers():
    # 80% of runs at one value, 20% four steps higher: both are the method
    raw = np.array([364] * 800 + [468] * 200, np.uint64)
    r = result(raw, np.full(1000, 52, np.uint64))
    assert r.stability.outlier_fraction == 0.0
    assert r.estimate == pytest.approx(364 + 0.2 * 104 - 52)


def test_outliers_do_not_move_the_paired_mean():
    rng = np.random.default_rng(11)
    raw, empty = simulate(10.0, 5000, rng)
    clean = result(raw, empty).estimate
    raw = raw.copy()
    raw[::50] += np.uint64(100000)  # 2% of runs hit an interrupt
    noisy = result(raw, empty)
    assert noisy.estimate == pytest.approx(clean, abs=0.5)
    assert noisy.stability.outlier_fraction == pytest.approx(0.02, abs=0.002)


def test_unroll_divides_the_estimate_and_its_interval():
    rng = np.random.default_rng(5)
    raw, empty = simulate(80.0, 3000, rng)
    one, eight = result(raw, empty, unroll=1), result(raw, empty, unroll=8)
    assert eight.estimate == pytest.approx(one.estimate / 8)
    assert eight.estimate_ci95 == pytest.approx(one.estimate_ci95 / 8)


def test_a_single_run_has_no_interval():
    r = result([52], [26])
    assert r.estimate == 26.0
    assert math.isinf(r.estimate_ci95)


def test_resolution_limited_is_about_steps():
    assert _estimate.resolution_limited(26.0, 52.0, 26)
    assert not _estimate.resolution_limited(400.0, 420.0, 26)
    assert not _estimate.resolution_limited(30.0, 30.0, 26, unroll=16)  # 480 ticks per run
    assert _estimate.resolution_limited(5.0, 6.0, 1)
    assert not _estimate.resolution_limited(12.0, 12.0, 1)


def test_paired_difference_is_the_fenced_mean_of_the_pairs_over_k():
    short = np.array([104, 78, 104, 104, 78, 5000, 104, 78], np.uint64)
    long = np.array([182, 182, 156, 182, 182, 182, 208, 156], np.uint64)
    d = _estimate.paired_difference(long, short, STEP, 4)
    kept = [78, 104, 52, 78, 104, 104, 78]  # 182 - 5000 is far outside the fence
    assert d.ticks == pytest.approx(statistics.mean(kept) / 4)
    assert d.ci95_ticks == pytest.approx(_estimate.t95(6) * statistics.stdev(kept) / math.sqrt(7) / 4)
    assert d.estimator == "diff" and d.runs_used == 7


def test_migrated_pairs_leave_the_recommended_estimate_but_not_best_and_median():
    raw = np.array([52, 52, 78, 52, 78, 52, 52, 78, 52, 78], np.uint64)
    empty = np.full(10, 26, np.uint64)
    migrated = np.zeros(10, bool)
    migrated[[2, 4]] = True  # two of the 78s
    est = _estimate.recommend(raw, empty, STEP, 1, migrated)
    assert est.estimator == "paired_mean" and est.runs_used == 8
    assert est.ticks == pytest.approx(statistics.mean([26, 26, 26, 26, 26, 52, 26, 52]))
    assert _estimate.paired_mean(raw, empty, STEP, 1, migrated) == est
    # every pair migrated: nothing else to go on, so all count
    assert _estimate.recommend(raw, empty, STEP, 1, np.ones(10, bool)) == _estimate.recommend(raw, empty, STEP)
    r = fastcpu.BenchResult(
        method="m", runs=10, serialize="lfence", unroll=1, cpu=None, raw=raw, empty=empty,
        migrated=migrated, best=26.0, median=26.0, tsc_hz=2.6e9, cycles_per_tick=1.4, tsc_step_ticks=STEP,
    )
    assert r.estimate == est.ticks and r.migrations == 2
    # the same pairs leave the differencing estimate
    d = _estimate.paired_difference(raw, empty, STEP, 2, migrated)
    assert d.ticks == pytest.approx(est.ticks / 2) and d.runs_used == 8


# ---- on BenchResult ----


def test_every_result_carries_the_estimate(available_method):
    r = fastcpu.bench(available_method, 100)
    assert r.estimator in ("median", "paired_mean")
    assert math.isfinite(r.estimate) and r.estimate_ci95 > 0
    assert isinstance(r.resolution_limited, bool)
    assert r.estimate_ns == pytest.approx(r.estimate * 1e9 / r.tsc_hz)
    # core cycles are NaN, and say why, where the measurement's rulers and the process's both failed
    assert math.isfinite(r.cycles_per_tick) or r.caveats
    assert r.estimate_core_cycles == pytest.approx(r.estimate * r.cycles_per_tick, nan_ok=True)
    assert r.estimate_ci95_ns == pytest.approx(r.estimate_ci95 * 1e9 / r.tsc_hz)
    # in core cycles the interval also carries the conversion's uncertainty
    assert r.estimate_ci95_core_cycles == pytest.approx(
        r.estimate_ci95 * r.cycles_per_tick + abs(r.estimate) * r.cycles_per_tick_ci95, nan_ok=True
    )
    expected = _estimate.recommend(r.raw, r.empty, r.tsc_step_ticks, r.unroll)
    # the recommended statistic, less the self-test's harness bias; its
    # interval, plus the bias's (systematic) half-width
    assert r.estimator == expected.estimator
    # (no bias is applied where core cycles are unknown: none to convert)
    bias_ci95_ticks = r.harness_bias_ci95_core_cycles / r.cycles_per_tick if r.harness_bias_ci95_core_cycles else 0.0
    # where the cost stands out from the empty sequence; below that it is a bound: uncorrected, its
    # interval lies above 0 and, corrected, above the smallest cost the harness resolves (issue 26,
    # item 4): never a cost whose interval reaches below 0, or below what the harness can see
    resolution_ticks = r.harness_resolution_core_cycles / r.cycles_per_tick if r.harness_resolution_core_cycles else 0.0
    assert r.resolved == (expected.ticks - expected.ci95_ticks > 0
                          and expected.ticks - expected.ci95_ticks - r.harness_bias_ticks - bias_ci95_ticks
                          > resolution_ticks)
    if r.resolved:
        assert r.estimate - r.estimate_ci95 > resolution_ticks
    applied = r.resolved
    assert r.estimate == pytest.approx(expected.ticks - r.harness_bias_ticks if applied else max(expected.ticks, 0.0))
    assert r.estimate_random_ci95 == expected.ci95_ticks
    assert r.estimate_ci95 == pytest.approx(expected.ci95_ticks + applied * bias_ci95_ticks)
    if not r.resolved:
        assert r.upper_bound >= max(expected.ticks + expected.ci95_ticks, 0.0)
        assert r.cost_text().startswith("< ") and r.upper_bound_core_cycles > 0
    assert r.harness_bias_ci95_core_cycles >= 0


def test_a_result_rebuilt_from_its_fields_has_them_too():
    r = fastcpu.bench("gdt", 300)
    fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
    again = fastcpu.BenchResult(**fields)
    assert again.estimate == r.estimate
    assert again.estimate_ci95 == r.estimate_ci95
    assert again.resolution_limited == r.resolution_limited
    # a file written before the counter field existed still loads
    del fields["counter"]
    assert fastcpu.BenchResult(**fields).counter == "tsc"


def test_str_shows_the_estimate():
    r = fastcpu.bench("gdt", 100)
    assert "estimate" in str(r) and r.estimator in str(r)


def test_bench_diff_on_a_calibration_chain():
    d = fastcpu.bench_diff("imul_chain_16", 300, k=4)
    assert isinstance(d, fastcpu.DiffResult)
    assert d.k == 4 and d.runs == 300 and d.method == "imul_chain_16"
    assert d.long.shape == d.short.shape == d.migrated.shape == (300,)
    assert d.long.dtype == d.short.dtype == np.uint64 and d.migrated.dtype == np.bool_
    assert d.estimator == "diff" and 0 < d.runs_used <= 300
    assert d.estimate > 0 and d.estimate_ci95 > 0
    # one interleaved measurement: the long runs are the longer ones, pair by pair
    assert np.median(d.long.astype(np.int64) - d.short.astype(np.int64)) > 0
    expected = _estimate.paired_difference(d.long, d.short, d.tsc_step_ticks, 4, d.migrated)
    # less half the copy loop's own cost, the other half in the interval (tests/test_copy_loop.py)
    assert d.resolved and d.estimate == pytest.approx(expected.ticks - d.harness_bias_ticks)
    assert d.estimate_random_ci95 == expected.ci95_ticks
    assert d.estimate_ci95 >= expected.ci95_ticks + d._bias_ci95_ticks - 1e-12
    assert d.estimate_core_cycles == pytest.approx(d.estimate * d.cycles_per_tick)
    assert d.estimate_ns == pytest.approx(d.estimate * 1e9 / d.tsc_hz)
    assert "differencing" in str(d)


def test_bench_diff_converts_with_the_core_clock_around_it(monkeypatch):
    figures = []

    real = _harness.raw_runs

    def raw_runs(*args, **kwargs):
        took = real(*args, **kwargs)
        figures.append(took.measured.conversion)
        return took

    monkeypatch.setattr(_harness, "raw_runs", raw_runs)
    d = fastcpu.bench_diff("imul_chain_16", 300, k=4)
    [conversion] = figures
    if math.isfinite(conversion.cycles_per_tick):
        assert (d.cycles_per_tick, d.cycles_per_tick_ci95) == (conversion.cycles_per_tick, conversion.ci95)
        assert d.cycles_per_tick == pytest.approx(fastcpu.clock().cycles_per_tick, rel=0.25)
    elif fastcpu.clock().core_cycles_problem:  # nor could the process's calibration: unknown, said why
        assert math.isnan(d.cycles_per_tick) and d.caveats
        return
    else:  # no undisturbed ruler point (a loaded host): between its rulers' readings and the first-use figure
        seen = (conversion.add_mean, conversion.imul_mean, fastcpu.clock().cycles_per_tick)
        assert d.cycles_per_tick - d.cycles_per_tick_ci95 == pytest.approx(min(seen))
        assert d.cycles_per_tick + d.cycles_per_tick_ci95 == pytest.approx(max(seen))
    assert d.cycles_per_tick_ci95 >= 0  # 0 when the chains read the same tick counts
    assert d.estimate_ci95_core_cycles == pytest.approx(
        d.estimate_ci95 * d.cycles_per_tick + abs(d.estimate) * d.cycles_per_tick_ci95)


def test_a_measurement_with_no_undisturbed_ruler_point_converts_within_its_rulers_and_the_clocks_figure(
        monkeypatch):
    # every point disturbed (a loaded host): the conversion says NaN, and the
    # result converts in the middle of what could be true (the points' add and
    # imul readings, the clock's first-use figure), its interval reaching each
    real = _harness.raw_runs

    def raw_runs(*args, **kwargs):
        took = real(*args, **kwargs)
        got = took.measured
        nan_figure = type(got.conversion)((math.nan, *got.conversion[1:]))  # the record, its figure NaN
        return _harness.RawRuns.of(took.name, type(got)((*got[:6], nan_figure)), took.clock, took.counter, took.cpu,
                                   took.catalog_row)

    monkeypatch.setattr(_harness, "raw_runs", raw_runs)
    for r in (fastcpu.bench_diff("imul_chain_16", 100, k=4), fastcpu.bench("imul_chain_16", 100, unroll=2)):
        clk = fastcpu.clock()
        if clk.core_cycles_problem:  # nor could the process's calibration: core cycles unknown, said why
            assert math.isnan(r.cycles_per_tick) and r.caveats == clk.caveats(r.counter)
        else:
            m = r.clock_motion
            seen = (m.add_core_cycles_per_tick, m.imul_core_cycles_per_tick, clk.cycles_per_tick)
            assert r.cycles_per_tick - r.cycles_per_tick_ci95 == pytest.approx(min(seen))
            assert r.cycles_per_tick + r.cycles_per_tick_ci95 == pytest.approx(max(seen))
            assert r.caveats == ()
        assert r.clock_motion is not None  # the points are still its own record


def test_bench_diff_rulers_are_checked():
    rulers = _conversion.rulers()

    def measure(copies, r=rulers):
        return _core.time_runs("gdt", runs=10, serialize="lfence", copies=copies, diff=True, counter="tsc",
                             rulers=r)

    with pytest.raises(ValueError, match="k must be between"):
        measure(1)
    with pytest.raises(ValueError, match="add_blocks"):
        measure(2, (0,) + rulers[1:])
    with pytest.raises(ValueError, match="tolerance"):
        measure(2, rulers[:5] + (1.0, rulers[6]))
    with pytest.raises(ValueError, match="resolution"):
        measure(2, rulers[:6] + (-1.0,))
    m = measure(2)
    assert m.a.shape == m.b.shape == m.migrated.shape == (10,)
    assert m.conversion.points >= 2 and m.conversion.ci95 >= 0
    assert math.isnan(m.best) and math.isnan(m.median)  # a difference has no best or median of its own


def test_bench_diff_times_user_functions():
    libc = ctypes.CDLL(None)
    d = fastcpu.bench_diff(libc.getppid, 50, k=2)
    assert d.method == "user:getppid" and d.long.shape == (50,)
    assert d.estimate > 0  # a system call per copy


@pytest.mark.parametrize("k", [0, 1, fastcpu.limits.UNROLL_MAX // 2 + 1])
def test_bench_diff_checks_k(k):
    with pytest.raises(ValueError, match="k must be between"):
        fastcpu.bench_diff("gdt", 10, k=k)
    with pytest.raises(TypeError, match="k must be an int"):
        fastcpu.bench_diff("gdt", 10, k=2.0)


@pytest.mark.parametrize("base", [0, 2**62 + 5, 2**63 + 7, 2**64 - 4000])
@pytest.mark.parametrize("n", [999, 1000])
def test_the_robust_sigma_of_counts_is_exact_up_to_2_64(base, n):
    """Counts near 2**64 (a result built from any uint64 arrays: from_arrays
    takes them) have the median absolute deviation of their offsets: twice
    a count does not fit in 64 bits, and str() once raised OverflowError there."""
    from fastcpu.results import statistics as _blocks
    from fastcpu.results import estimate as _estimate

    offsets = np.random.default_rng(n).integers(0, 1000, n)
    counts = np.uint64(base) + offsets.astype(np.uint64)
    center, sigma = _estimate._counts_center_and_sigma(_blocks.counts(counts))
    assert center == float(base) + float(np.median(offsets))
    assert sigma == pytest.approx(_estimate.robust_sigma(offsets.astype(np.uint64)), rel=1e-12)
    r = fastcpu.BenchResult.from_arrays(method="m", serialize="lfence", unroll=1, cpu=None, raw=counts,
                                        empty=np.full(n, 100, np.uint64), migrated=np.zeros(n, bool),
                                        clock=fastcpu.Clock(2e9, 1.0, 1.0))
    assert str(r) and r.estimate == pytest.approx(float(base) + np.median(offsets) - 100, rel=1e-6)


@pytest.mark.parametrize("seed", range(12))
def test_the_whole_array_path_gives_the_block_paths_figures(seed, monkeypatch):
    # bench(m, 1000)'s estimate is computed whole-array when the result is made
    # (issue 37): the same figures, to the bit, as the block-wise path
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    spread = int(rng.choice([1, 3, 40, 2000]))
    empty = rng.integers(30, 30 + spread, n).astype(np.uint64)
    raw = empty + rng.integers(0, 2 * spread + 5, n).astype(np.uint64)
    if seed % 3 == 0:
        raw[rng.integers(0, n, max(1, n // 50))] += np.uint64(10**6)  # outliers
    migrated = rng.random(n) < (0.05 if seed % 2 else 0.0)
    for step, unroll in ((1.0, 1), (24.5, 1), (1.0, 8)):
        whole = _estimate.recommend(raw, empty, step, unroll, migrated)
        monkeypatch.setattr(_estimate, "_SMALL", 0)
        blocks = _estimate.recommend(raw, empty, step, unroll, migrated)
        monkeypatch.undo()
        assert whole == blocks or (whole.estimator == blocks.estimator and whole.runs_used == blocks.runs_used
                                   and all(a == b or (a != a and b != b) for a, b in
                                           ((whole.ticks, blocks.ticks), (whole.ci95_ticks, blocks.ci95_ticks))))
