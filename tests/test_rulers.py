"""The rulers' logic on readings shaped like every host fastcpu has met.

fastcpu's figures rest on two facts it measures on the host at hand: the
counter's granularity (the lattice its readings fall on) and core cycles
per TSC tick (register-register adds, checked by imuls). Here the logic is
held to readings of each shape seen: AMD Zen 3 (a 24.5-tick lattice, not a
whole number), Zen 4 and 5 (26 ticks, with a tick of jitter now and then),
Intel Xeon family 6 model 207 (2-tick steps while back-to-back reads land
20-24 ticks apart, and immediate adds folded at rename, with real readings
from that host in tests/data/), bare metal (every tick), and a host whose
rulers disagree. No figure of the host running the tests is assumed.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.instrument import timebase as _clock
from fastcpu.instrument import timebase as _conversion
from fastcpu.instrument.timebase import Clock, Rulers, RulerTiming, fit_granularity, judge_rulers, read_spacing

INTEL = Path(__file__).parent / "data" / "intel-xeon-family6-model207-rulers.npz"


def _reads(step: float, work_ticks: np.ndarray, *, offset: float = 0.37, jitter: float = 0.0,
           seed: int = 0) -> np.ndarray:
    """Counter values of a TSC that moves `step` ticks at a time (a float:
    values are the lattice points rounded down to the tick), read after
    `work_ticks` of work each; `jitter`: the share of reads one tick low."""
    t = offset * step + np.cumsum(work_ticks)
    values = np.floor(np.floor(t / step) * step)
    if jitter:
        rng = np.random.default_rng(seed)
        values -= rng.random(len(values)) < jitter
    return (values + 10**9).astype(np.uint64)


def _work(n: int, spacing_ticks: float, seed: int = 1) -> np.ndarray:
    """A read's own cost plus 0-255 dependent adds at about 0.7 ticks each."""
    rng = np.random.default_rng(seed)
    return spacing_ticks + rng.integers(0, 256, n) * 0.7 + rng.random(n)


# -- the granularity ----------------------------------------------------------

@pytest.mark.parametrize("host, step, spacing, jitter", [
    ("AMD Zen 3 (family 25 model 1): 2445.43 MHz, 10 ns", 24.5443, 24.6, 0.0),
    ("AMD Zen 4 (family 25 model 17): 2596.13 MHz, 10 ns", 25.9613, 26.0, 0.0),
    ("AMD Zen 4/5 with a tick of jitter", 26.0, 26.0, 0.04),
    ("Intel Xeon family 6 model 207: 2-tick steps, reads 22 apart", 2.0, 22.0, 0.0),
    ("bare metal: every tick", 1.0, 19.0, 0.0),
])
def test_the_lattice_is_fitted_whatever_its_shape(host, step, spacing, jitter):
    reads = _reads(step, _work(4096, spacing), jitter=jitter)
    g = fit_granularity(reads)
    if step == int(step) and not jitter:
        assert g == step, host
    else:
        assert g == pytest.approx(step, abs=0.02 if step != int(step) else 0.5), host


def test_the_intel_hosts_real_reads_give_two_ticks_not_their_spacing():
    z = np.load(INTEL)
    deltas = z["read_deltas_varied"]
    reads = np.concatenate([[10**9], 10**9 + np.cumsum(deltas)]).astype(np.uint64)
    for chunk in range(4):
        assert fit_granularity(reads[chunk * 4096:(chunk + 1) * 4096 + 1]) == 2.0
    spacing = read_spacing(z["back_to_back_reads"])
    assert 20 <= spacing <= 24  # a different fact, ten steps
    assert read_spacing(z["back_to_back_reads"]) != fit_granularity(reads[:4097])


def test_back_to_back_reads_alone_cannot_tell_the_step():
    # read 22 ticks apart on a 2-tick counter: the spacing is 22, and reads
    # that never vary their spacing fit the spacing's lattice, which is why
    # clock() fits only reads separated by varying work
    values = (10**9 + 22 * np.arange(4096)).astype(np.uint64)
    assert read_spacing(values) == 22
    assert fit_granularity(_reads(2.0, _work(4096, 22.0))) == 2.0


def test_too_few_reads_give_no_granularity():
    assert math.isnan(fit_granularity(np.arange(10, dtype=np.uint64)))


def test_a_preempted_read_does_not_move_the_fit():
    work = _work(4096, 26.0)
    work[100] = 3e6  # a millisecond away
    work[2000] = 7e5
    assert fit_granularity(_reads(26.0, work)) == 26.0


# -- the rulers ---------------------------------------------------------------

def _timing(ruler: str, ticks_per_instruction: float, relative_se: float = 1e-4) -> RulerTiming:
    n = 200_000
    ticks = n * ticks_per_instruction
    return RulerTiming(ruler, n, ticks, ticks * relative_se, 21, 21)


def _intel_timings() -> tuple[RulerTiming, RulerTiming, RulerTiming]:
    """The Intel host's own chains (256 each, less the empty sequence)."""
    z = np.load(INTEL)
    empty = float(np.median(z["empty"]))

    def timing(key: str, ruler: str, n: int) -> RulerTiming:
        v = z[key].astype(np.float64)
        se = 1.253 * 1.4826 * np.median(np.abs(v - np.median(v))) / math.sqrt(len(v))
        return RulerTiming(ruler, n, float(np.median(v)) - empty, math.hypot(se, 2 / math.sqrt(12 * len(v))))

    return timing("add_reg_256", "add", 256), timing("imul_256", "imul", 256), timing("add_imm_256", "immediate_add", 256)


def test_the_intel_host_has_rulers_and_folds_immediate_adds():
    add, imul, immediate = _intel_timings()
    r = judge_rulers(add, imul, immediate)
    assert r.agree, r.words()
    assert r.add_cycles_per_tick == pytest.approx(1.306, rel=0.01)  # 1.25-1.31 by the host's own C programs
    assert r.imul_cycles_per_tick == pytest.approx(r.add_cycles_per_tick, rel=0.01)
    assert r.immediate_adds_folded is True
    assert 3.5 <= r.immediate_adds_per_core_cycle <= 6
    assert "folded at rename" in r.immediate_add_words()
    # the old ruler: an immediate-add chain read as one core cycle per add
    folded_ruler = 1 / immediate.ticks_per_instruction
    assert folded_ruler / r.add_cycles_per_tick > 3.5


@pytest.mark.parametrize("host, cycles_per_tick", [
    ("AMD Zen 3 (family 25 model 1)", 1.32), ("AMD Zen 4 (family 25 model 17)", 1.42),
    ("AMD Zen 5 (family 26 model 2)", 1.62), ("Intel Xeon family 6 model 207", 1.28),
])
def test_rulers_that_agree_give_the_add_rulers_figure(host, cycles_per_tick):
    folds = host.startswith("Intel")
    r = judge_rulers(_timing("add", 1 / cycles_per_tick), _timing("imul", 3 / cycles_per_tick),
                     _timing("immediate_add", 1 / (cycles_per_tick * (4.8 if folds else 1.0))))
    assert r.agree and r.problem == "", host
    assert r.add_cycles_per_tick == pytest.approx(cycles_per_tick)
    assert r.immediate_adds_folded is folds
    assert r.immediate_adds_per_core_cycle == pytest.approx(4.8 if folds else 1.0)


def test_rulers_that_disagree_say_so_and_leave_core_cycles_unknown():
    # an imul of 4 core cycles, or a ruler thrown off: 33% apart
    r = judge_rulers(_timing("add", 1 / 1.4), _timing("imul", 4 / 1.4))
    assert not r.agree
    assert "rulers disagree" in r.problem and "4.00 register-register adds per imul" in r.problem
    clk = Clock(2.6e9, 26.0, math.nan, 26.0, r)
    assert clk.core_cycles_problem == r.problem
    assert clk.caveats("tsc") == (r.problem,) and "ns need the core clock" in clk.caveats("pmu")[0]
    assert math.isnan(clk.ticks_to_core_cycles(100.0)) and clk.ticks_to_ns(26.0) == pytest.approx(10.0)


def test_the_tolerance_follows_the_rulers_scatter():
    apart = 1 + 1.5 * _clock.RULER_TOLERANCE_MIN  # beyond the floor
    quiet = judge_rulers(_timing("add", 0.7), _timing("imul", 2.1 * apart))
    assert quiet.tolerance == _clock.RULER_TOLERANCE_MIN and not quiet.agree
    se = _clock.RULER_TOLERANCE_MIN / 2
    noisy = judge_rulers(_timing("add", 0.7, se), _timing("imul", 2.1 * apart, se))
    assert noisy.tolerance == pytest.approx(4 * math.hypot(se, se))
    assert noisy.agree  # as far apart, within the scatter there


def test_measuring_the_rulers_on_an_intel_shaped_core(monkeypatch):
    # clock()'s own path, each chain timed as that host's core times it:
    # immediate adds 4.8 a core cycle, the rulers at 1.28 core cycles per tick
    per_instruction = {"add": 1 / 1.28, "imul": 3 / 1.28, "immediate_add": 1 / (1.28 * 4.8)}

    def pair(ruler, blocks):
        n = _clock.BLOCK_INSTRUCTIONS[ruler] * blocks
        return round(60 + n * per_instruction[ruler]), round(60 + 2 * n * per_instruction[ruler]), False

    monkeypatch.setattr(_clock, "_chain_pair", pair)
    monkeypatch.setattr(_clock._core, "ruler_ticks", lambda ruler, blocks: 0)  # the warm-up
    r = _clock.take_rulers(2.0)
    assert r.agree
    assert r.add_cycles_per_tick == pytest.approx(1.28, rel=1e-4)
    assert r.immediate_adds_folded and r.immediate_adds_per_core_cycle == pytest.approx(4.8, rel=1e-3)


def test_rulers_round_trip_and_refuse_nonsense():
    r = Rulers(1.3, 1.29, 0.01, 4.8)
    assert Rulers.from_dict(r.to_dict()) == r
    assert Rulers.from_dict({**r.to_dict(), "immediate_adds_per_core_cycle": None}).immediate_adds_folded is None
    for bad in ({"add_cycles_per_tick": -1}, {"imul_cycles_per_tick": "1.3"}, {"tolerance": float("inf")}):
        with pytest.raises((TypeError, ValueError)):
            Rulers.from_dict({**r.to_dict(), **bad})


# -- what a host whose rulers disagree gets from fastcpu --------------------------

@pytest.fixture
def disagreeing(monkeypatch):
    """This process's clock as a host whose imul ruler reads 4 adds. There
    every ruler point inside a measurement would disagree too and be left out
    as disturbed, leaving the clock's figure, which is unknown; here the
    measurements take no ruler points, which comes to the same without the
    chance (about 1 in 80 calls on a loaded guest) that an interrupt slows a
    point's add chain by just the factor that makes it agree."""
    clk = fastcpu.clock()
    bad = dataclasses.replace(clk, cycles_per_tick=math.nan,
                              rulers=Rulers(1.4, 1.05, 0.01, 1.0))
    monkeypatch.setattr(_clock, "_cached", bad)
    monkeypatch.setattr(_conversion, "rulers", lambda: None)
    return bad


def test_bench_keeps_ticks_and_ns_and_says_why_core_cycles_are_unknown(disagreeing):
    for _ in range(2):  # the second call would take the fast path
        r = fastcpu.bench("gdt", 200)
        assert math.isnan(r.cycles_per_tick) and math.isnan(r.estimate_core_cycles)
        assert math.isfinite(r.estimate) and math.isfinite(r.estimate_ns)
        assert r.harness_bias_core_cycles == 0  # no correction
        assert r.caveats and "rulers disagree" in r.caveats[0] and "no harness correction" in r.caveats[0]
        assert r.caveats[0] in r.warnings
        assert "core cycles unknown" in repr(r) and "the core-cycle rulers disagree>" in repr(r)
        assert "rulers disagree" in r._repr_html_()
    d = fastcpu.bench_diff("imul_chain_4", 50, k=4)
    assert math.isnan(d.estimate_core_cycles) and math.isfinite(d.estimate) and d.caveats


def test_the_self_test_does_not_run_against_disagreeing_rulers(disagreeing):
    st = fastcpu.selftest(rounds=1, paths=("inline",), serialize="lfence")
    assert not st.passed and st.checks == () and st.problem == disagreeing.core_cycles_problem
    assert "not run" in str(st)


def test_a_result_file_keeps_unknown_core_cycles_unknown(disagreeing, tmp_path):
    import json

    res = fastcpu.measure(50, ["gdt", "rdpid"])
    path = tmp_path / "r.json"
    res.save(path)
    assert json.loads(path.read_text())["version"] >= 3  # version 1 readers would take null for a number
    back = fastcpu.load(path)
    assert back == res
    assert back.clock.core_cycles_problem == disagreeing.core_cycles_problem
    assert math.isnan(back["gdt"].estimate_core_cycles) and back["gdt"].caveats == res["gdt"].caveats
    assert "UNKNOWN" in str(back)


def test_the_cli_header_names_the_rulers_and_the_granularity():
    from fastcpu.results.display import format_clock

    clk = Clock(2.3e9, 2.0, 1.28, 22.0, Rulers(1.28, 1.279, 0.01, 4.8))
    line = format_clock(clk)
    assert "granularity 2 ticks" in line and "back-to-back reads 22 ticks apart" in line
    assert "1.280 core cycles per tick" in line and "folded at rename: 4.8 per core cycle" in line
    unknown = format_clock(dataclasses.replace(clk, cycles_per_tick=math.nan, rulers=Rulers(1.28, 0.9, 0.01, 4.8)))
    assert "core cycles per tick UNKNOWN" in unknown and "rulers disagree" in unknown


def test_the_cli_says_once_that_core_cycles_are_unknown(disagreeing, capsys):
    from fastcpu.cli import main

    assert main(["--methods", "gdt,rdpid", "--runs", "50"]) == 0
    out = capsys.readouterr().out
    assert "core cycles per tick UNKNOWN" in out
    # the reason in full in the header and once among the warnings, not once per method
    assert out.count(disagreeing.core_cycles_problem) == 2
    assert "self-test: FAIL, not run" in out


def test_a_clock_whose_rulers_disagree_has_no_figure_whoever_builds_it(tmp_path):
    # built by hand with a figure: the figure goes, and the file it writes loads
    bad = Clock(2.6e9, 26.0, 1.4, 26.0, Rulers(1.4, 1.05, 0.03, 1.0))
    assert math.isnan(bad.cycles_per_tick) and bad.core_cycles_problem
    doc = {"tsc_hz": 2.6e9, "tsc_step_ticks": 26.0, "cycles_per_tick": None, "core_cycles_problem": "x",
           "rulers": Rulers(1.4, 1.4, 0.03, 1.0).to_dict()}
    from fastcpu.results.results import _clock_from
    from fastcpu.files.write import Reader, ResultFileError

    with pytest.raises(ResultFileError, match="clock.rulers agree"):
        _clock_from(Reader(tmp_path / "f.json"), doc)


def test_a_ruler_that_read_no_time_is_a_disagreement_with_the_reason():
    r = judge_rulers(RulerTiming("add", 1000, 0.0, 1.0), _timing("imul", 2.1))
    assert not r.agree and "read no time" in r.problem
    assert Rulers.from_dict(r.to_dict()) == r  # null where unknown, and back


def test_pmu_results_say_their_ns_are_unknown_while_the_rulers_disagree():
    clk = Clock(2.6e9, 26.0, math.nan, 26.0, Rulers(1.4, 1.05, 0.03, 1.0))
    (caveat,) = clk.caveats("pmu")
    assert "the PMU's core cycles stand, but ns need the core clock" in caveat
