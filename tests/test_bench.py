"""fastcpu.bench(): shapes, dtypes, statistics and pinning."""

import dataclasses
import math
import os

import numpy as np
import pytest

import fastcpu


def test_every_available_method_runs(available_method):
    r = fastcpu.bench(available_method, 200)
    assert r.method == available_method
    assert r.runs == 200
    for arr in (r.raw, r.empty):
        assert arr.dtype == np.uint64
        assert arr.shape == (200,)
        assert (arr > 0).all()  # the harness itself takes time
    assert r.migrated.dtype == np.bool_
    assert r.migrated.shape == (200,)


def test_sidt_1000_returns_the_arrays():
    if not any(m.name == "sidt" and m.available for m in fastcpu.methods()):
        pytest.skip("SIDT faults on this kernel (UMIP without emulation)")
    r = fastcpu.bench("sidt", 1000)
    assert r.raw.shape == r.empty.shape == r.migrated.shape == (1000,)


@pytest.mark.parametrize("runs", [1, 2, 3, 1000, 1001])
@pytest.mark.parametrize("unroll", [1, 4])
def test_statistics_match_numpy(runs, unroll):
    r = fastcpu.bench("gdt", runs, unroll=unroll)
    raw = r.raw.astype(np.float64)
    empty = r.empty.astype(np.float64)
    assert r.best == (raw.min() - empty.min()) / unroll
    assert r.median == (np.median(raw) - np.median(empty)) / unroll


def test_unroll_reports_per_copy():
    r = fastcpu.bench("syscall", 300, unroll=8)
    # each run holds eight system calls: the raw ticks show it
    single = fastcpu.bench("syscall", 300)
    assert np.median(r.raw) > 4 * np.median(single.raw)
    # while the per-copy figure stays that of one call
    assert 0.5 * single.median < r.median < 2 * single.median


def test_empty_against_itself_is_near_zero():
    r = fastcpu.bench("empty", 2000)
    step = fastcpu.clock().tsc_step_ticks
    assert abs(r.median) <= step + 1  # a fractional step rounds to either neighbouring tick


@pytest.mark.parametrize("mode", fastcpu.limits.SERIALIZE_MODES)
def test_every_serialize_mode(mode):
    r = fastcpu.bench("rdpid" if _has("rdpid") else "gdt", 100, serialize=mode)
    assert r.serialize == mode
    assert r.raw.shape == (100,)


def _has(name):
    return any(m.name == name and m.available for m in fastcpu.methods())


def test_cpu_pins_and_restores_affinity():
    before = os.sched_getaffinity(0)
    cpu = max(before)
    r = fastcpu.bench("syscall", 100, cpu=cpu)
    assert r.cpu == cpu
    assert not r.migrated.any()  # pinned: nowhere to go
    assert os.sched_getaffinity(0) == before


def test_affinity_restored_when_the_call_fails():
    before = os.sched_getaffinity(0)
    with pytest.raises(ValueError):
        fastcpu.bench("nope", 10, cpu=min(before))
    assert os.sched_getaffinity(0) == before


def test_units_convert_with_the_clock():
    r = fastcpu.bench("syscall", 100)
    clk = fastcpu.clock()
    assert r.tsc_hz == clk.tsc_hz
    assert r.best_ns == pytest.approx(r.best * 1e9 / clk.tsc_hz)
    # core cycles convert with the cycles per tick measured around the runs,
    # which the core clock may have moved from the first-use figure
    if math.isnan(r.cycles_per_tick):
        # no undisturbed ruler point inside the runs, and a first use that could not tell its
        # rulers apart either (seen once in CI on the GenuineIntel family 6 model 167 guest):
        # core cycles unknown, and the result says why
        assert math.isnan(clk.cycles_per_tick) and math.isnan(r.median_core_cycles) and r.caveats
        return
    assert r.median_core_cycles == pytest.approx(r.median * r.cycles_per_tick)
    # its own rulers, taken inside the measurement; near the first-use figure where that is known
    # (a process that started on a loaded host may have none: the measurement's own still stands)
    assert 0 < r.cycles_per_tick < 1e3
    if clk.cycles_per_tick == clk.cycles_per_tick:
        if r.clock_motion is not None and r.clock_motion.levels_core_cycles_per_tick:  # a point agreed
            assert r.cycles_per_tick == pytest.approx(clk.cycles_per_tick, rel=0.2)
        else:  # every point disturbed: an interval that reaches the first-use figure
            assert abs(r.cycles_per_tick - clk.cycles_per_tick) <= r.cycles_per_tick_ci95 + 1e-12


def test_syscall_costs_more_than_a_user_mode_read():
    # an invariant, not a timing threshold: entering the kernel is slower
    # than any instruction that stays in user mode
    sys_r = fastcpu.bench("syscall", 500)
    user_r = fastcpu.bench("gdt", 500)
    assert sys_r.median > user_r.median


@pytest.mark.parametrize("cpu", [None, 0])
def test_bench_builds_the_result_from_arrays_would(cpu):
    """bench() builds its result from what the C core returned without
    checking it again: every field is what the checked constructor makes
    of the same arrays and figures, and the copy passes the dataclass's
    own checks."""
    if cpu is not None and cpu not in os.sched_getaffinity(0):
        pytest.skip(f"CPU {cpu} is not in this process's affinity mask")
    r = fastcpu.bench("empty", 300, cpu=cpu)
    clock = fastcpu.Clock(r.tsc_hz, r.tsc_step_ticks, r.cycles_per_tick)
    again = fastcpu.BenchResult.from_arrays(
        method=r.method, serialize=r.serialize, unroll=r.unroll, cpu=r.cpu, raw=r.raw, empty=r.empty,
        migrated=r.migrated, clock=clock, counter=r.counter, cycles_per_tick=r.cycles_per_tick,
        cycles_per_tick_ci95=r.cycles_per_tick_ci95, harness_bias_core_cycles=r.harness_bias_core_cycles,
        harness_bias_ci95_core_cycles=r.harness_bias_ci95_core_cycles, caveats=r.caveats,
        clock_motion=r.clock_motion, harness_resolution_core_cycles=r.harness_resolution_core_cycles,
        catalog_row=r.catalog_row)
    assert r.cpu == cpu and type(r.cpu) is type(cpu)
    for f in dataclasses.fields(fastcpu.BenchResult):
        mine, checked = getattr(r, f.name), getattr(again, f.name)
        if isinstance(mine, np.ndarray):
            assert mine.dtype == checked.dtype and mine.flags.c_contiguous and np.array_equal(mine, checked), f.name
        else:
            assert type(mine) is type(checked) and (mine == checked or mine != mine and checked != checked), f.name
    dataclasses.replace(r)  # the generated constructor and __post_init__ accept every field as it is
    assert r.estimate == again.estimate and r.estimate_ci95 == again.estimate_ci95


# ---- results plain from birth (issue 37 item 2; issue 40 item 6) ----

def test_bench_returns_a_finished_bench_result():
    # 'empty' runs wherever the harness does: no skip
    r = fastcpu.bench("empty", 1000)
    assert type(r) is fastcpu.BenchResult
    assert "_recommended" in vars(r)  # the estimate was computed when the result was made
    d = fastcpu.bench_diff("empty", 200, k=2)
    assert type(d) is fastcpu.DiffResult and "_recommended" in vars(d)
    assert type(fastcpu.bench("empty", 200, unroll=4)) is fastcpu.BenchResult


def test_bench_of_rdpid_is_a_bench_result():
    if not any(m.name == "rdpid" and m.available for m in fastcpu.methods()):
        pytest.skip("RDPID is missing on this CPU (CPUID.7.0:ECX bit 22)")
    assert type(fastcpu.bench("rdpid", 1000)) is fastcpu.BenchResult


def test_a_results_arrays_are_read_only_and_its_figures_stay_consistent():
    # from either runner: this process's C core, or a row's child interpreter
    child = [m.name for m in fastcpu.methods() if m.available and m.in_child]
    for got in [fastcpu.bench(name, 50) for name in child[:1]]:
        assert not any(a.flags.writeable for a in (got.raw, got.empty, got.migrated))
    r = fastcpu.bench("empty", 300)
    before = (r.best, r.median, r.estimate, r.raw.copy(), r.empty.copy(), r.migrated.copy())
    for name in ("raw", "empty", "migrated"):
        a = getattr(r, name)
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        r.raw *= 3
    assert (r.best, r.median, r.estimate) == before[:3]
    assert all(np.array_equal(a, b) for a, b in zip((r.raw, r.empty, r.migrated), before[3:]))
    # the figures are still those of the arrays
    again = fastcpu.BenchResult.from_arrays(method=r.method, serialize=r.serialize, unroll=r.unroll, cpu=r.cpu,
                                            raw=r.raw, empty=r.empty, migrated=r.migrated, clock=fastcpu.clock())
    assert (again.best, again.median) == pytest.approx((r.best, r.median))
    d = fastcpu.bench_diff("empty", 100, k=2)
    with pytest.raises(ValueError, match="read-only"):
        d.long += 1
    # the caller's own arrays stay writable: a result holds read-only views of them
    raw = np.arange(10, 20, dtype=np.uint64)
    mine = fastcpu.BenchResult.from_arrays(method="m", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                           empty=raw - 5, migrated=np.zeros(10, bool), clock=fastcpu.clock())
    raw[0] = 99
    assert not mine.raw.flags.writeable and raw.flags.writeable


def test_every_statistic_in_every_unit_is_an_attribute_of_its_class():
    from fastcpu.results import statistics as _statistics
    from fastcpu.results.estimated import Figure
    r = fastcpu.bench("empty", 200)
    for s in _statistics.STATISTICS:
        for unit in ("ns", "core_cycles"):
            names = [f"{s.name}_{unit}"] + ([f"{s.name}_ci95_{unit}"] if s.has_interval else [])
            for name in names:
                assert isinstance(vars(fastcpu.BenchResult).get(name) or vars(type(r).__mro__[1]).get(name),
                                  Figure), name
                assert getattr(r, name) == getattr(r, name)
    assert r.estimate_ns == pytest.approx(r.estimate * 1e9 / r.tsc_hz)
    with pytest.raises(AttributeError):
        r.nonsense_ns  # noqa: B018  (no attribute is made up)
