"""fastcpu.selftest(): the harness bias on the known-cost chains, its
correction in bench(), its report in the CLI and in result files; and the
known-cost chains as user functions in a shared library built here."""

import ctypes
import dataclasses
import math
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu import _bracket, _cli, _core, _selftest, _selftest_report
from fastcpu._selftest_report import ChainCheck, PathCheck, SelfTest
from hostnoise import on_some_try

REPO = Path(__file__).resolve().parent.parent
CPU = min(os.sched_getaffinity(0))


# ---- the logic, on made-up numbers ----


def test_intercept_keeps_a_conversion_error_in_the_slope():
    # estimate ticks = 3 + truth / 1.3, read with a conversion 2% off: the
    # intercept (a zero-cost body) is still 3 ticks
    points = [(t, 3.0 + t / 1.3, 0.5) for t in (16, 32, 128)]
    b, se = _selftest.intercept(points)
    assert b == pytest.approx(3.0)
    assert se > 0


def test_intercept_of_one_length_is_its_mean():
    b, se = _selftest.intercept([(32, 10.0, 1.0), (32, 12.0, 1.0)])
    assert b == pytest.approx(11.0) and se > 0


def test_correction_is_the_midpoint_and_covers_both_ops():
    bias, ci = _selftest.correction({"add": (2.0, 0.1), "imul": (0.0, 0.1)})
    assert bias == pytest.approx(1.0)
    # half the spread, plus the midpoint's own scatter
    assert ci == pytest.approx(1.0 + 1.96 * math.sqrt(0.02) / 2)
    for op_bias in (2.0, 0.0):
        assert abs(op_bias - bias) <= ci


@pytest.mark.parametrize("path,truth,error,ok", [
    ("inline", 16, 1.5, True), ("inline", 16, -1.6, False),
    ("inline", 128, 1.45, True), ("inline", 128, 1.6, False),  # 1% of 128 is narrower than 1.5
    ("inline", 200, 1.9, True), ("inline", 200, 2.1, False),
    ("user", 16, -2.0, True), ("user", 16, 2.1, False),
    ("user", 200, 3.9, True), ("user", 200, -4.1, False),
])
def test_goals_per_path(path, truth, error, ok):
    assert _selftest_report.within_goal(error, truth, path) is ok


def _report(passed: bool) -> SelfTest:
    chains = (ChainCheck("add_chain_16", 16.0, 0.3 if passed else 3.0, 4, passed, 4),)
    check = PathCheck("inline", "lfence", 1.2, 1.4, {"add": 2.2, "imul": 0.2}, chains)
    return SelfTest((check,), runs=1000, rounds=4, seconds=0.5)


def test_report_round_trips_and_says_pass_or_fail():
    for passed in (True, False):
        st = _report(passed)
        assert st.passed is passed
        assert SelfTest.from_dict(st.to_dict()) == st
        text = str(st)
        assert ("PASS" if passed else "FAIL") in text.splitlines()[0]
        assert "inline lfence" in text and "+1.20" in text


def test_the_modes_judged_decide_pass_and_the_others_are_reported():
    good = (ChainCheck("add_chain_16", 16.0, 0.3, 4, True, 4),)
    bad = (ChainCheck("add_chain_16", 16.0, 30.0, 4, False, 1),)
    checks = (PathCheck("inline", "lfence", 1.2, 1.4, {"add": 2.2}, good),
              PathCheck("inline", "cpuid", -4.0, 1.4, {"add": -4.0}, bad))
    judged = SelfTest(checks, judged=("lfence",))
    assert judged.passed
    lines = judged.lines()
    assert "PASS (judged on serialize=lfence; the other modes are reported)" in lines[0]
    assert lines[2].endswith("GOAL FAILS (reported, not judged)") and "not judged" not in lines[1]
    assert SelfTest.from_dict(judged.to_dict()) == judged
    assert not SelfTest(checks).passed  # nothing named: every mode judged (files before 'judged')
    assert not SelfTest(checks, judged=("lfence", "cpuid")).passed
    with pytest.raises(ValueError, match="judged must be a list of serialization modes"):
        SelfTest.from_dict({**judged.to_dict(), "judged": ["fence"]})


def test_selftest_judges_what_it_was_asked_for(monkeypatch):
    monkeypatch.setattr(_selftest, "_measure_bias", lambda *a: _selftest.Correction(0.0, 0.5, {"add": 0.0}, 1.3, 0.0))
    monkeypatch.setattr(_selftest, "_chains", lambda path: [])
    assert fastcpu.selftest(serialize="rdtscp").judged == ("rdtscp",)
    assert fastcpu.selftest(serialize=("cpuid", "lfence")).judged == ("cpuid", "lfence")
    default = fastcpu.selftest()
    assert default.judged == ("lfence",)
    # not cpuid: a VM exit before every read on a guest (7-10 s of them on a KVM guest)
    assert {c.serialize for c in default.checks} == {"lfence"}
    everything = fastcpu.selftest(serialize=fastcpu.limits.SERIALIZE_MODES)
    assert {c.serialize for c in everything.checks} == set(fastcpu.limits.SERIALIZE_MODES)


def test_coverage_counts_measurements():
    chains = (ChainCheck("a", 16, 0.0, 4, True, 4), ChainCheck("b", 48, 0.0, 6, True, 3))
    check = PathCheck("inline", "lfence", 0.0, 1.0, {"add": 0.0}, chains)
    assert check.coverage == pytest.approx(7 / 10)
    assert not check.passed  # 70% < 90%


def test_bracket_interval_shrugs_off_one_interrupted_chain():
    value, ci = _bracket.bracket_cycles_per_tick([1.31, 1.31, 0.9], [1.31, 1.30, 1.31])
    assert value == pytest.approx(1.31)
    assert ci < 0.02
    # two chains a side, as bench() takes them: one interrupted chain (seen
    # here: 0.99 for 1.31) leaves the figure and its interval alone
    value, ci = _bracket.bracket_cycles_per_tick([1.31, 0.99], [1.30, 1.31], tolerance=0.024)
    assert value == pytest.approx(1.3075) and ci < 0.02
    # a core clock that really moved across the measurement widens the interval
    value, ci = _bracket.bracket_cycles_per_tick([1.31, 1.30], [1.20, 1.21], tolerance=0.024)
    assert value == pytest.approx(1.255) and ci > 0.05
    assert 0.01 <= _bracket.disturbance_tolerance() < 0.2


def test_brackets_both_slower_than_the_recent_ones_are_left_out():
    recent = [1.32, 1.33, 1.32, 1.31]
    # both chains of both sides slowed together (seen: 2% of brackets on a
    # AuthenticAMD family 25 model 1 (Zen 3) guest, while imul chains kept their tick counts): the recent
    # chains give the figure, the interval widened by the gap
    value, ci = _bracket.bracket_cycles_per_tick([1.18, 1.19], [1.17, 1.18], tolerance=0.024, recent=recent)
    assert value == pytest.approx(1.32, abs=0.006) and ci >= (1.32 - 1.18) / 2
    # one slow side: the other one
    value, ci = _bracket.bracket_cycles_per_tick([1.32, 1.33], [1.20, 1.21], tolerance=0.024, recent=recent)
    assert value == pytest.approx(1.325) and ci < 0.03
    # sides that agree with the recent ones: as without them
    assert _bracket.bracket_cycles_per_tick([1.31, 1.32], [1.32, 1.31], tolerance=0.024, recent=recent) == (
        _bracket.bracket_cycles_per_tick([1.31, 1.32], [1.32, 1.31], tolerance=0.024))


def test_the_bracket_timers_fixed_cost_shrugs_off_a_disturbed_stretch(monkeypatch):
    calls = []

    def ticks(ruler, blocks):  # 100 ticks a block and 60 of fences; one group's doubles disturbed
        calls.append(blocks)
        pair = (len(calls) - 2) // 2  # after the warm-up chain
        disturbed = blocks == 2 * _bracket.BRACKET_BLOCKS and pair // _bracket._FIXED_REPEATS == 3
        return 100 * blocks + 60 + (2000 if disturbed else 0)

    monkeypatch.setattr(_bracket, "_fixed", None)
    monkeypatch.setattr(_core, "ruler_ticks", ticks)
    assert _bracket.fixed_cost_ticks() == 60.0
    assert len(calls) == 1 + 2 * _bracket._FIXED_GROUPS * _bracket._FIXED_REPEATS
    assert _bracket.fixed_cost_ticks() == 60.0 and len(calls) == 1 + 2 * _bracket._FIXED_GROUPS * _bracket._FIXED_REPEATS


def test_the_bracket_timers_fixed_cost_is_small_against_its_chain():
    fixed = _bracket.fixed_cost_ticks()
    assert 0 <= fixed < 0.2 * _core.ruler_ticks("add", _bracket.BRACKET_BLOCKS)


def test_the_clocks_step_leaves_its_share_in_the_bracket_interval():
    # four samples that read the same tick count: no scatter of their own,
    # yet each is off by up to half a step, evenly
    res = 0.008  # a 24.5-tick step over a 3,060-tick chain
    value, ci = _bracket.bracket_cycles_per_tick([1.31, 1.31], [1.31, 1.31], tolerance=0.024, resolution=res)
    assert value == pytest.approx(1.31)
    assert ci == pytest.approx(1.96 * 1.31 * res / math.sqrt(12 * 4))
    assert _bracket.bracket_cycles_per_tick([1.31] * 2, [1.31] * 2, tolerance=0.024, resolution=0.0)[1] == 0
    # one side left out (disturbed): half as many samples, a wider share
    _, one_side = _bracket.bracket_cycles_per_tick([1.31, 1.31], [1.10, 1.10], tolerance=0.024,
                                                   recent=[1.31, 1.31], resolution=res)
    assert one_side == pytest.approx(1.96 * 1.31 * res / math.sqrt(12 * 2))
    # the rule: a step over a chain's ticks, and the tolerance is three of those (at least 1%)
    clk = fastcpu.clock()
    expected = clk.tsc_step_ticks / (_core.RULER_BLOCK * _bracket.BRACKET_BLOCKS / clk.cycles_per_tick)
    assert _bracket.chain_resolution() == pytest.approx(expected, rel=1e-12)
    assert _bracket.disturbance_tolerance() == pytest.approx(max(0.01, 3 * expected), rel=1e-12)
    with pytest.raises(ValueError, match="cycles_per_tick"):
        _core.bracket_resolution(24.5, 0.0, 40)


def test_recent_samples_are_this_threads_on_this_cpu_and_recent():
    now = 10**15
    _core.bracket_forget()
    _core.bracket_remember([1.30, 1.31], now, 0)
    now += _bracket.RECENT_NS // 2
    _core.bracket_remember([1.32], now, 0)
    assert _core.bracket_recent(now, 0) == (1.32, 1.30, 1.31)  # newest first
    now += _bracket.RECENT_NS // 2 + 1
    assert _core.bracket_recent(now, 0) == (1.32,)  # the first is too old
    assert _core.bracket_recent(now, 1) == ()  # taken on another CPU
    # another thread has brackets of its own
    seen = []
    t = threading.Thread(target=lambda: seen.append(_core.bracket_recent(now, 0)))
    t.start()
    t.join()
    assert seen == [()]
    # at most RECENT_BRACKETS are kept
    for i in range(_bracket.RECENT_BRACKETS + 3):
        _core.bracket_remember([1.0 + i / 100], now, 0)
    assert len(_core.bracket_recent(now, 0)) == _bracket.RECENT_BRACKETS
    _core.bracket_forget()
    assert _core.bracket_recent(now, 0) == ()


def test_bench_keeps_its_brackets_and_reuses_the_closing_one():
    fastcpu.bench("gdt", 50, cpu=CPU)  # the self-test's correction, and its brackets, out of the way
    _core.bracket_forget()
    fastcpu.bench("gdt", 50, cpu=CPU)
    with_opening = _bracket.recent_samples()
    assert len(with_opening) == 2 * _bracket.BRACKET_CHAINS  # opening and closing
    fastcpu.bench("gdt", 50, cpu=CPU)
    # within REUSE_NS the closing bracket opened the next run: one bracket more
    assert len(_bracket.recent_samples()) == 3 * _bracket.BRACKET_CHAINS
    assert all(0.2 < v < 10 for v in _bracket.recent_samples())


@pytest.mark.parametrize("args,error,match", [
    (([], [1.3], [], 0.02, 0.008), ValueError, "before must hold 1 to"),
    (([1.3], [1.3] * 200, [], 0.02, 0.008), ValueError, "after must hold 1 to 128"),
    (([1.3], [1.3], [0.0], 0.02, 0.008), ValueError, "positive finite"),
    (([1.3], [1.3], [float("nan")], 0.02, 0.008), ValueError, "positive finite"),
    (([1.3], [1.3], [], 1.0, 0.008), ValueError, "tolerance"),
    (([1.3], [1.3], [], 0.02, -0.1), ValueError, "resolution"),
    (([1.3], [1.3], [], 0.02, float("nan")), ValueError, "resolution"),
    ((1.3, [1.3], [], 0.02, 0.008), TypeError, "sequence of floats"),
    ((["x"], [1.3], [], 0.02, 0.008), TypeError, "must be real number"),
])
def test_bracket_figure_refuses_bad_samples(args, error, match):
    with pytest.raises(error, match=match):
        _core.bracket_figure(*args)


@pytest.mark.parametrize("blocks,chains,fixed,tol,res,match", [
    (0, 2, 10.0, 0.02, 0.008, "blocks must be between"),
    (40, -1, 10.0, 0.02, 0.008, "chains must be between"),
    (40, 17, 10.0, 0.02, 0.008, "chains must be between"),
    (40, 2, -1.0, 0.02, 0.008, "fixed_ticks"),
    (40, 2, float("inf"), 0.02, 0.008, "fixed_ticks"),
    (40, 2, 10.0, -0.1, 0.008, "tolerance"),
    (40, 2, 10.0, 0.02, 1.0, "resolution"),
])
def test_the_measurement_refuses_bad_brackets(blocks, chains, fixed, tol, res, match):
    with pytest.raises(ValueError, match=match):
        _core.measure("gdt", 10, "lfence", 1, False, "tsc", blocks, chains, fixed, tol, res)


def test_no_brackets_give_no_core_clock_and_the_pmu_takes_none():
    *_, cpt, ci95 = _core.measure("gdt", 10, "lfence", 1, False, "tsc", 0, 0, 0.0, 0.0, 0.0)
    assert math.isnan(cpt) and math.isnan(ci95)
    with pytest.raises(ValueError, match="brackets time the TSC"):
        _core.measure("gdt", 10, "lfence", 1, False, "pmu", 40, 2, 10.0, 0.02, 0.008)


# ---- on this machine ----


def test_selftest_measures_both_paths():
    st = fastcpu.selftest(runs=200, rounds=2, serialize="lfence", cpu=CPU)
    assert [(c.path, c.serialize) for c in st.checks] == [("inline", "lfence"), ("user", "lfence")]
    for c in st.checks:
        assert math.isfinite(c.bias_core_cycles) and c.bias_ci95_core_cycles >= 0
        assert set(c.op_bias_core_cycles) == {"add", "imul"}
        assert len(c.chains) == len(_core.user_chains())
        assert all(ch.rounds == 2 and 0 <= ch.covered <= 2 for ch in c.chains)
    # a harness whose bias were tens of cycles would be broken, not biased
    assert abs(st.checks[0].bias_core_cycles) < 20
    assert st.seconds < 60


def test_bench_applies_the_selftest_correction():
    st = fastcpu.selftest(runs=200, rounds=1, serialize="rdtscp", cpu=CPU)
    inline = st.checks[0]
    # a failed path and mode withdraws its correction (next test); here the
    # correction as such, whatever this short self-test's verdict
    assert bool(_selftest.failed_verdict("inline", "rdtscp")) == (not inline.passed)
    _selftest._failed.clear()
    r = fastcpu.bench("add_chain_32", 300, serialize="rdtscp", cpu=CPU)
    # the self-test's correction (kept in ticks), at the clock around the runs
    assert _selftest._corrections[("inline", "rdtscp")].measured_at <= _selftest.time.monotonic()
    assert r.harness_bias_core_cycles / r.cycles_per_tick == pytest.approx(
        inline.bias_core_cycles / _selftest._corrections[("inline", "rdtscp")].cycles_per_tick)
    assert r.harness_bias_ci95_core_cycles / r.cycles_per_tick == pytest.approx(
        inline.bias_ci95_core_cycles / _selftest._corrections[("inline", "rdtscp")].cycles_per_tick)
    # unrolled runs and bench_diff are not single copies: no correction
    assert fastcpu.bench("add_chain_32", 50, serialize="rdtscp", unroll=2).harness_bias_core_cycles == 0
    assert fastcpu.bench_diff("add_chain_32", 50, k=2).harness_bias_core_cycles == 0


def test_a_failed_selftest_withdraws_the_correction_and_says_so(monkeypatch):
    fastcpu.bench("add_chain_32", 100)  # measured once: the fast path would serve the next call
    why = "no harness correction applied: the self-test failed the inline path's goals (scripted)"
    monkeypatch.setitem(_selftest._failed, ("inline", "lfence"), why)
    for _ in range(2):
        r = fastcpu.bench("add_chain_32", 100)
        assert r.harness_bias_core_cycles == 0 and r.harness_bias_ci95_core_cycles == 0
        assert r.caveats == (why,) and why in r.warnings and "self-test failed" in r._repr_html_()
        assert repr(r).endswith("; no harness correction applied>")
    # the user path, and other modes, keep theirs
    assert fastcpu.bench("add_chain_32", 100, serialize="rdtscp").caveats == ()


def test_a_selftest_records_its_verdict_per_path_and_mode(monkeypatch):
    def check(path, mode, error):
        chains = (_selftest_report.ChainCheck("imul_chain_16", 48.0, error, 1, abs(error) <= 1.5, 1),)
        return _selftest_report.PathCheck(path, mode, 0.5, 0.3, {"add": 0.4, "imul": 0.6}, chains)

    # the self-test's measuring replaced by scripted verdicts: inline fails, user passes
    monkeypatch.setattr(_selftest, "_measure_bias", lambda *a: _correction(0.5))
    monkeypatch.setattr(_selftest, "_chains", lambda path: [])
    made = iter([check("inline", "lfence", 3.0), check("user", "lfence", 0.2)])
    monkeypatch.setattr(_selftest, "PathCheck", lambda *a: next(made))
    st = fastcpu.selftest(serialize="lfence")
    assert not st.passed and "FAIL" in str(st) and "GOAL FAILS" in str(st)
    assert "inline path's goals" in _selftest.failed_verdict("inline", "lfence")
    assert _selftest.failed_verdict("user", "lfence") == ""
    assert _selftest.harness_bias("inline", "lfence")[:2] == (0.0, 0.0)


def _correction(bias_ticks, cpt=1.3, at=100.0):
    return _selftest.Correction(bias_ticks, 1.0, {"add": bias_ticks + 1, "imul": bias_ticks - 1}, cpt, at)


def test_a_correction_is_kept_in_ticks_and_converted_at_the_clock_of_each_measurement():
    c = _correction(2.0, cpt=1.3)
    assert c.core_cycles(1.25) == pytest.approx((2.5, 1.25))
    assert c.core_cycles(1.33) == pytest.approx((2.66, 1.33))
    assert c.core_cycles() == pytest.approx((2.6, 1.3))  # unknown clock: the bias measurement's
    assert c.core_cycles(math.nan) == c.core_cycles(0.0) == c.core_cycles()


def test_a_correction_holds_until_it_is_old():
    c = _correction(1.0)
    assert c.holds_at(100.0) and c.holds_at(100.0 + _selftest.CORRECTION_MAX_AGE_S)
    assert not c.holds_at(100.0 + _selftest.CORRECTION_MAX_AGE_S + 0.1)


def test_harness_bias_measures_again_when_old(monkeypatch):
    made = []
    now = [1000.0]

    def calibrate(path, serialize, runs, repeats, cpu):
        made.append((path, serialize, repeats))
        return _correction(float(len(made)), at=now[0])

    monkeypatch.setattr(_selftest, "_measure_bias", calibrate)
    monkeypatch.setattr(_selftest, "_corrections", {})
    monkeypatch.setattr(_selftest.time, "monotonic", lambda: now[0])
    assert _selftest.harness_bias("inline", "lfence", None, 1.5)[:2] == pytest.approx((1.5, 1.5))
    now[0] += _selftest.CORRECTION_MAX_AGE_S / 2
    assert _selftest.harness_bias("inline", "lfence", None, 1.2)[:2] == pytest.approx((1.2, 1.2))
    now[0] += _selftest.CORRECTION_MAX_AGE_S
    assert _selftest.harness_bias("inline", "lfence", None, 1.0)[:2] == pytest.approx((2.0, 1.0))  # old
    assert _selftest.harness_bias("user", "lfence", None, 1.0)[:2] == pytest.approx((3.0, 1.0))  # its own
    assert made == [("inline", "lfence", _selftest.BIAS_PASSES)] * 2 + [
        ("user", "lfence", _selftest.BIAS_PASSES)]


def test_one_thrown_pass_does_not_decide_the_correction():
    mid, se = _selftest._median_and_se([2.0, 2.1, 1.9, 9.0, 2.05], fallback_se=0.1)
    assert mid == 2.05 and se < 0.2
    assert _selftest._median_and_se([2.0], fallback_se=0.3) == (2.0, 0.3)


def test_bench_converts_with_cycles_per_tick_measured_around_it():
    r = fastcpu.bench("empty", 100)
    assert r.cycles_per_tick > 0 and r.cycles_per_tick_ci95 >= 0
    assert r.cycles_per_tick == pytest.approx(fastcpu.clock().cycles_per_tick, rel=0.25)
    assert r.estimate_ci95_core_cycles >= r.estimate_ci95 * r.cycles_per_tick


def test_user_chains_in_the_extension():
    rows = _core.user_chains()
    names = {c.name for c in fastcpu.chain_methods()}
    assert {op for _, op, _, _, _ in rows} == {"add", "imul"}
    for name, op, length, latency, address in rows:
        assert name in names and name == f"{op}_chain_{length}"
        assert latency == (1 if op == "add" else 3) and address > 0
        # callable as a user function
        assert ctypes.CFUNCTYPE(ctypes.c_uint)(address)() in range(2**32)


# ---- the CLI and result files ----


def test_cli_selftest_exits_nonzero_when_a_goal_fails(monkeypatch, capsys):
    for passed, code in ((True, 0), (False, 1)):
        monkeypatch.setattr(_cli, "selftest", lambda **kw: _report(passed))
        assert _cli.main(["selftest"]) == code
        out = capsys.readouterr().out
        assert "self-test:" in out and ("PASS" if passed else "FAIL") in out


def test_cli_selftest_runs():
    out = subprocess.run(
        [sys.executable, "-m", "fastcpu", "selftest", "--serialize", "lfence", "--runs", "200",
         "--rounds", "1", "--cpu", str(CPU)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr
    assert "self-test:" in out.stdout and "inline lfence" in out.stdout and "user   lfence" in out.stdout


def test_table_header_carries_the_selftest():
    out = subprocess.run([sys.executable, "-m", "fastcpu", "--methods", "rdpid,gdt", "--runs", "100"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    head = out.stdout.split("METHOD")[0]
    assert "self-test:" in head and "inline lfence" in head


def test_result_files_keep_the_report_and_the_corrections(tmp_path):
    res = fastcpu.measure(100, ["gdt", "rdpid"], cpu=CPU)
    assert res.selftest is not None and res.selftest.checks[0].serialize == "lfence"
    path = tmp_path / "r.json"
    res.save(path)
    back = fastcpu.load(path)
    assert back == res and back.selftest == res.selftest
    for name, r in res.items():
        b = back[name]
        assert (b.cycles_per_tick, b.harness_bias_core_cycles, b.harness_bias_ci95_core_cycles,
                b.cycles_per_tick_ci95) == (r.cycles_per_tick, r.harness_bias_core_cycles,
                                            r.harness_bias_ci95_core_cycles, r.cycles_per_tick_ci95)
        assert b.estimate == r.estimate
    assert "self-test:" in str(back)
    out = subprocess.run([sys.executable, "-m", "fastcpu", "compare", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "self-test:" in out.stdout


def test_old_result_files_load_uncorrected():
    old = [res for res in map(fastcpu.load, sorted((REPO / "data").glob("*.json*")))
           if res.fastcpu_version in ("0.1.0", "0.2.0")]
    if not old:
        pytest.skip("no result file of fastcpu 0.2.0 or older in data/")
    for res in old:
        assert res.selftest is None
        for r in res.values():
            assert r.harness_bias_core_cycles == 0 and r.cycles_per_tick == res.clock.cycles_per_tick


# ---- the known-cost chains as a user's shared library ----


@pytest.fixture(scope="module")
def user_chains(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build benchmarks/user_chains.c")
    if not (REPO / "benchmarks" / "user_chains.c").is_file():
        pytest.skip("a copy of tests/ without the repository's benchmarks/")
    so = tmp_path_factory.mktemp("chains") / "libuserchains.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(REPO / "benchmarks" / "user_chains.c")],
                   check=True)
    return ctypes.CDLL(str(so))


@pytest.mark.skipif(bool(_core.SANITIZED), reason="a sanitizer build instruments the harness: its accuracy is not the product's")
@pytest.mark.parametrize("op,length,latency", [("add", 32, 1), ("add", 128, 1), ("imul", 16, 3), ("imul", 64, 3)])
def test_user_function_chains_read_their_latency(user_chains, op, length, latency):
    fn = getattr(user_chains, f"user_{op}_chain_{length}")
    fn.restype = ctypes.c_uint
    truth = length * latency

    def single_copy():
        errors = []
        for _ in range(3):
            r = fastcpu.bench(fn, 2000, cpu=CPU)
            errors.append(r.estimate_core_cycles - truth)
        # the median of three, with room for a loaded 2-vCPU guest: the goal
        # (2 cycles, 2% from 100) is checked by benchmarks/accuracy.py
        error = float(np.median(errors))
        assert abs(error) <= max(6.0, 0.06 * truth), (errors, r.harness_bias_core_cycles)

    def differenced():
        # bench_diff cancels the call's latency
        readings = [fastcpu.bench_diff(fn, 500, k=2, cpu=CPU).estimate_core_cycles for _ in range(3)]
        assert float(np.median(readings)) == pytest.approx(truth, rel=0.1, abs=3), readings

    on_some_try(single_copy)
    on_some_try(differenced)


def test_a_short_user_function_is_flagged(user_chains):
    short = user_chains.user_add_chain_1
    short.restype = ctypes.c_uint

    def flagged():
        r = fastcpu.bench(short, 500, cpu=CPU)
        if r.harness_bias_core_cycles >= 0:
            pytest.skip("no call overhead measured on this host")
        # the function reads as the return's own cost, give or take its
        # interval; once in a while a burst on the host reads it above that
        assert any("shorter than its call's own cost" in w for w in r.warnings), (
            r.estimate_core_cycles, r.estimate_ci95_core_cycles, r.harness_bias_core_cycles)

    on_some_try(flagged)
    assert not any("shorter than its call" in w for w in fastcpu.bench("add_chain_1", 100).warnings)


@pytest.mark.parametrize("field, value", [("covered", 10**30), ("rounds", -1), ("covered", 10**6 + 1),
                                          ("rounds", True), ("truth_core_cycles", float("inf"))])
def test_a_stored_report_no_selftest_could_write_is_refused(tmp_path, field, value):
    import copy
    import json

    from fastcpu import _json_document

    res = fastcpu.measure(10, ["gdt"])
    st = fastcpu.selftest(serialize="lfence", paths=("inline",), runs=10, rounds=1)
    res = dataclasses.replace(res, selftest=st)
    res.save(tmp_path / "ok.json")
    doc = json.loads((tmp_path / "ok.json").read_text())
    bad = copy.deepcopy(doc)
    bad["selftest"]["checks"][0]["chains"][0][field] = value
    try:  # with a fresh checksum: the report's checks are what is tested
        (tmp_path / "bad.json").write_bytes(_json_document.encode_document(bad))
    except ValueError:  # Infinity, which save() never writes: as Python's json writes it
        (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(fastcpu.ResultFileError, match="selftest: unreadable report|JSON with Infinity"):
        fastcpu.load(tmp_path / "bad.json")
    str(fastcpu.load(tmp_path / "ok.json"))  # a sound report prints


def test_a_selftest_of_nothing_is_refused():
    # it used to pass with 0 checks (issue 22)
    with pytest.raises(ValueError, match="serialize must name at least one mode"):
        fastcpu.selftest(serialize=())
    with pytest.raises(ValueError, match="paths must hold 'inline', 'user' or both"):
        fastcpu.selftest(paths=())
