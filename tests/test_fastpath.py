"""bench()'s common call in one C call (fastcpu/_fastpath.py): taken only for
what the checked path served before, and giving the result that path builds."""

import dataclasses
import gc
import sys
import warnings

import numpy as np
import pytest

import fastcpu
from fastcpu import _bench, _bracket, _core, _fastpath, _norseq, _selftest
from fastcpu._result import BenchResult


@pytest.fixture
def learned():
    """'gdt' served once by the checked path, with a fresh correction."""
    fastcpu.bench("gdt", 50)
    return "gdt"


def _refuse_checked_path(monkeypatch):
    def checked(*args, **kwargs):
        raise AssertionError("bench() took the checked path")

    monkeypatch.setattr(_bench, "timed", checked)


def test_the_plain_call_takes_the_fast_path(learned, monkeypatch):
    _refuse_checked_path(monkeypatch)
    r = fastcpu.bench(learned, 200)
    assert r.method == learned and r.runs == 200 and r.cpu is None and r.counter == "tsc"
    assert r.raw.shape == r.empty.shape == r.migrated.shape == (200,)
    # corrected as the checked path does: the fresh correction, at the clock around the runs
    expected = _selftest.fresh_correction("inline", "lfence").core_cycles(r.cycles_per_tick)
    assert (r.harness_bias_core_cycles, r.harness_bias_ci95_core_cycles) == pytest.approx(expected)
    r4 = fastcpu.bench(learned, 100, unroll=4, serialize="rdtscp")
    assert (r4.unroll, r4.serialize) == (4, "rdtscp")
    assert r4.harness_bias_core_cycles == 0 == r4.harness_bias_ci95_core_cycles  # single copies only


@pytest.mark.parametrize("kwargs", [{"cpu": 0}, {"counter": "pmu"}, {"clock": "tsc"}])
def test_pinning_another_counter_or_the_old_keyword_take_the_checked_path(learned, monkeypatch, kwargs):
    _refuse_checked_path(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # clock=, the old keyword
        with pytest.raises(AssertionError, match="checked path"):
            fastcpu.bench(learned, 10, **kwargs)


def test_a_name_not_served_yet_takes_the_checked_path(monkeypatch):
    monkeypatch.setattr(_fastpath, "_names", {})
    assert _fastpath.bench("gdt", 10, "lfence", 1) is None
    r = fastcpu.bench("gdt", 10)
    assert _fastpath._names == {"gdt": r.method}


def test_the_method_without_rseq_is_never_served_here(monkeypatch):
    monkeypatch.setattr(_fastpath, "_names", {})
    _fastpath.learn(_norseq.NAME, _norseq.NAME)
    _fastpath.learn(12345, "user:0x3039")
    assert _fastpath._names == {}


def test_the_fast_result_is_the_checked_paths(learned):
    correction = _selftest.fresh_correction("inline", "lfence")
    assert correction is not None
    clk = fastcpu.clock()
    fast = _core.bench_result(BenchResult, clk, learned, 300, "lfence", 1, _bracket.BRACKET_BLOCKS,
                              _bracket.BRACKET_CHAINS, _bracket.fixed_cost_ticks(), correction)
    bias, bias_ci = correction.core_cycles(fast.cycles_per_tick)
    checked = BenchResult.from_arrays(
        method=learned, serialize="lfence", unroll=1, cpu=None, raw=fast.raw, empty=fast.empty,
        migrated=fast.migrated, clock=clk, counter="tsc", best=fast.best, median=fast.median,
        cycles_per_tick=fast.cycles_per_tick, cycles_per_tick_ci95=fast.cycles_per_tick_ci95,
        harness_bias_core_cycles=bias, harness_bias_ci95_core_cycles=bias_ci)
    assert type(fast) is BenchResult
    assert list(vars(fast)) == list(vars(checked))  # every field, in the same order
    for field, value in vars(checked).items():
        assert type(vars(fast)[field]) is type(value), field
        if isinstance(value, np.ndarray):
            assert vars(fast)[field] is value
        else:
            assert vars(fast)[field] == value, field
    assert (fast.estimate, fast.estimate_ci95, fast.warnings) == (
        checked.estimate, checked.estimate_ci95, checked.warnings)
    # best and median are the C core's formulas over the arrays
    assert fast.best == float(fast.raw.min()) - float(fast.empty.min())
    assert 0 < fast.cycles_per_tick and fast.cycles_per_tick_ci95 >= 0


def test_the_brackets_tolerance_is_one_rule():
    clk = fastcpu.clock()
    for step, cpt, blocks in [(clk.tsc_step_ticks, clk.cycles_per_tick, 40), (24.5, 1.3, 40),
                              (1.0, 1.0, 40), (26.0, 1.6, 10), (0.0, 1.0, 1)]:
        expected = max(0.01, 3 * step / (100 * blocks / cpt))
        assert _core.bracket_tolerance(step, cpt, blocks) == pytest.approx(expected, rel=1e-12)
    assert _bracket.disturbance_tolerance() == _core.bracket_tolerance(
        clk.tsc_step_ticks, clk.cycles_per_tick, _bracket.BRACKET_BLOCKS)
    with pytest.raises(ValueError, match="cycles_per_tick"):
        _core.bracket_tolerance(24.5, 0.0, 40)
    with pytest.raises(ValueError, match="blocks"):
        _core.bracket_tolerance(24.5, 1.3, 0)


# Every argument that is not the plain call's: the fast path measures
# nothing and the checked path raises what it always raised.
NOT_PLAIN = [
    ({"runs": 0}, ValueError, "runs"),
    ({"runs": _core.RUNS_MAX + 1}, ValueError, "runs"),
    ({"runs": 2**70}, ValueError, "runs"),
    ({"runs": True}, TypeError, "runs"),
    ({"runs": 10.0}, TypeError, "runs"),
    ({"unroll": 0}, ValueError, "unroll"),
    ({"unroll": True}, TypeError, "unroll"),
    ({"unroll": 1.0}, TypeError, "unroll"),
    ({"serialize": "bogus"}, ValueError, "serialize"),
    ({"serialize": "LFENCE"}, ValueError, "serialize"),
    ({"serialize": "\udcff"}, ValueError, "serialize"),
    ({"serialize": ["lfence"]}, TypeError, "serialize"),
    ({"serialize": None}, TypeError, "serialize"),
]


@pytest.mark.parametrize("changed, error, word", NOT_PLAIN)
def test_arguments_that_are_not_the_plain_calls_get_the_checked_paths_errors(learned, changed, error, word):
    call = {"runs": 10, "serialize": "lfence", "unroll": 1, **changed}
    assert _fastpath.bench(learned, call["runs"], call["serialize"], call["unroll"]) is None
    assert _core.bench_result(BenchResult, fastcpu.clock(), learned, call["runs"], call["serialize"],
                              call["unroll"], 40, 2, 0.0, None) is None
    with pytest.raises(error, match=word):
        fastcpu.bench(learned, **call)


@pytest.mark.parametrize("method", [["gdt"], None, 3.5, "nope", "GDT"])
def test_methods_the_checked_path_never_served_get_its_errors(learned, method):
    assert _fastpath.bench(method, 10, "lfence", 1) is None
    with pytest.raises((TypeError, ValueError)):
        fastcpu.bench(method, 10)


def test_an_old_correction_is_measured_again_by_the_checked_path(learned, monkeypatch):
    key = ("inline", "lfence")
    old = dataclasses.replace(_selftest._corrections[key],
                              measured_at=_selftest.time.monotonic() - 2 * _selftest.CORRECTION_MAX_AGE_S)
    monkeypatch.setitem(_selftest._corrections, key, old)
    assert _selftest.fresh_correction(*key) is None
    assert _fastpath.bench(learned, 10, "lfence", 1) is None
    r = fastcpu.bench(learned, 10)
    again = _selftest._corrections[key]
    assert again is not old and _selftest.fresh_correction(*key) is again
    assert r.harness_bias_core_cycles == pytest.approx(again.core_cycles(r.cycles_per_tick)[0])


def test_a_refreshed_clock_is_the_one_converted_with(learned, monkeypatch):
    fake = dataclasses.replace(fastcpu.clock(), tsc_hz=1.25e9, tsc_step_ticks=7.0)
    monkeypatch.setattr(_fastpath, "clock", lambda: fake)
    _refuse_checked_path(monkeypatch)
    r = fastcpu.bench(learned, 20)
    assert (r.tsc_hz, r.tsc_step_ticks) == (1.25e9, 7.0)
    assert r.best_ns == pytest.approx(r.best / 1.25)


def test_internal_arguments_are_checked(learned):
    clk, c = fastcpu.clock(), _selftest.fresh_correction("inline", "lfence")
    good = [BenchResult, clk, learned, 10, "lfence", 1, 40, 2, 0.0, c]
    with pytest.raises(TypeError, match="10 arguments"):
        _core.bench_result(*good[:9])
    for at, bad, error in [(0, "BenchResult", TypeError), (2, b"gdt", TypeError), (1, object(), AttributeError),
                           (9, object(), AttributeError), (6, 0, ValueError), (7, 99, ValueError),
                           (8, -1.0, ValueError), (8, "x", TypeError)]:
        args = list(good)
        args[at] = bad
        with pytest.raises(error):
            _core.bench_result(*args)
    args = list(good)
    args[2] = "nope"
    with pytest.raises(ValueError, match="unknown method"):
        _core.bench_result(*args)


def test_no_references_leak(learned):
    # objects of this test's own, so that no other code moves their counts
    clk = dataclasses.replace(fastcpu.clock())
    c = dataclasses.replace(_selftest.fresh_correction("inline", "lfence"))
    name, mode = "".join(["g", learned[1:]]), "".join(["lf", "ence"])
    mine = (BenchResult, clk, name, mode, c)
    for _ in range(20):
        _core.bench_result(BenchResult, clk, name, 5, mode, 1, 40, 2, 0.0, c)
    gc.collect()
    before = [sys.getrefcount(a) for a in mine]
    for _ in range(300):
        _core.bench_result(BenchResult, clk, name, 5, mode, 1, 40, 2, 0.0, c)
        _core.bench_result(BenchResult, clk, name, 0, mode, 1, 40, 2, 0.0, c)  # None
    gc.collect()
    assert [sys.getrefcount(a) for a in mine] == before
