"""fastcpu.clock() on the host at hand: frequency, granularity and core
cycles per tick, each held to what a second ruler of another kind reads
here (tests/test_rulers.py holds the logic to readings shaped like each
host seen)."""

import time

import numpy as np
import pytest

import fastcpu
from fastcpu import _core
from hostnoise import on_some_try


def test_clock_is_plausible_and_cached():
    clk = fastcpu.clock()
    assert 1e8 < clk.tsc_hz < 1e10
    assert clk.tsc_step_ticks >= 1
    assert clk.rulers is not None
    # the two rulers agree here, or core cycles are unknown and say why
    assert clk.rulers.agree == (clk.core_cycles_problem == "")
    if clk.rulers.agree:
        assert 0.2 < clk.cycles_per_tick < 10
        assert clk.cycles_per_tick == clk.rulers.add_cycles_per_tick
    assert fastcpu.clock() is clk


def test_the_rulers_agree_on_this_host():
    # register-register adds and imuls are clocks on every x86-64 core fastcpu
    # has met; a disagreement here is a finding, reported with both figures.
    # One calibration may fall across a hop of the core clock (the GenuineIntel
    # family 6 model 167 guest's, once in CI: add 1.241, imul/3 1.145): a finding
    # holds on every fresh calibration, a hop on few
    def agree():
        clk = fastcpu.clock(refresh=True)
        assert clk.rulers.agree, clk.rulers.words()
        assert clk.rulers.imul_in_adds == pytest.approx(3.0, rel=clk.rulers.tolerance)

    on_some_try(agree)


def test_the_immediate_add_fact_is_measured():
    # 1 per core cycle where the core runs them one by one, several where it
    # folds them at rename (Intel since Golden Cove); never much below 1
    r = fastcpu.clock().rulers
    assert r.immediate_adds_folded is not None
    assert r.immediate_adds_per_core_cycle > 0.9
    assert r.immediate_adds_folded == (r.immediate_adds_per_core_cycle > 1.25)


def test_tsc_hz_agrees_with_the_monotonic_clock():
    clk = fastcpu.clock()
    ns0, t0 = _core.tsc_ns_pair()
    time.sleep(0.02)
    ns1, t1 = _core.tsc_ns_pair()
    assert abs((t1 - t0) * 1e9 / (ns1 - ns0) / clk.tsc_hz - 1) < 0.01


def test_step_divides_timed_runs():
    # Every reading the counter gives lies (within a tick of rounding) on the
    # lattice of its step, whole or not: each timed run, the difference of
    # two readings, is a multiple of it to within two ticks.
    clk = fastcpu.clock()
    r = fastcpu.bench("gdt", 500)
    if clk.tsc_step_ticks >= 5:
        off = np.mod(r.raw.astype(np.float64), clk.tsc_step_ticks)
        near = (off <= 2) | (off >= clk.tsc_step_ticks - 2)
        assert near.mean() > 0.9


def test_step_is_found_to_a_small_fraction_of_a_tick():
    # Two independent fits of the lattice agree closely: a step found only to
    # the nearest tick would put values a whole tick off within a few steps.
    from fastcpu.instrument.timebase import fit_granularity

    a = fit_granularity(_core.tsc_reads(4096, True))
    b = fit_granularity(_core.tsc_reads(4096, True))
    assert isinstance(a, float) and a >= 1
    if a >= 5:
        assert abs(a - b) < 0.01 * a / 24
        assert abs(a - b) < 0.02
    else:
        assert a == b


def test_every_spaced_read_lies_on_the_granularitys_lattice():
    # the second ruler of the step: whatever the fit says, the deltas of a
    # fresh set of reads are whole multiples of it (to within the rounding
    # of both reads where the step is not a whole number of ticks)
    clk = fastcpu.clock()
    d = np.diff(_core.tsc_reads(4096, True).astype(np.float64))
    d = d[(d > 0) & (d < 64 * clk.tsc_step_ticks)]
    off = np.abs(d - np.rint(d / clk.tsc_step_ticks) * clk.tsc_step_ticks)
    slack = 0 if clk.tsc_step_ticks == int(clk.tsc_step_ticks) else 1.5
    assert np.mean(off <= slack + 1) > 0.95  # a tick of jitter on some guests


def test_the_read_spacing_is_reported_apart_from_the_granularity():
    clk = fastcpu.clock()
    assert clk.tsc_read_spacing_ticks >= 0
    # back-to-back reads are at least no closer than one step, whenever they move
    reads = _core.tsc_reads(4096, False).astype(np.int64)
    moved = np.diff(reads)
    moved = moved[moved > 0]
    assert np.median(moved) >= clk.tsc_step_ticks - 1.5


@pytest.mark.parametrize("ruler", ["add", "imul", "immediate_add"])
def test_ruler_chains_are_linear(ruler):
    # each pair back to back, the median of their ratios: a core clock that hops between the
    # pairs (the GenuineIntel family 6 model 167 guest's moves by up to 14%) moves both alike
    import statistics

    # chains long enough that a folded immediate-add chain (several a core cycle) is not all fences
    ratios = [_core.ruler_ticks(ruler, 600) / _core.ruler_ticks(ruler, 300) for _ in range(41)]
    assert 1.8 < statistics.median(ratios) < 2.2, ratios


def test_refresh_measures_again_and_is_kept():
    old = fastcpu.clock()
    new = fastcpu.clock(refresh=True)
    assert new is not old
    assert fastcpu.clock() is new
    assert abs(new.tsc_step_ticks - old.tsc_step_ticks) < 0.02
    assert new.rulers is not None and new.rulers is not old.rulers


# -- disturbed calibration samples (issue 10, item 4) -----------------------------------

def test_disturbed_and_migrated_samples_are_left_out():
    from fastcpu.instrument.timebase import clean_samples

    pairs = [(1000, 2000, False), (1004, 2003, False), (1300, 2001, False),  # interrupted in t(N)
             (1001, 2600, False), (900, 1500, True), (1002, 2002, False)]   # in t(2N); migrated
    assert clean_samples(pairs) == ([1000, 1004, 1001, 1002], [2000, 2003, 2001, 2002])
    assert clean_samples([(1, 2, True)]) == ([], [])


def test_a_calibration_with_too_few_clean_samples_warns(monkeypatch):
    import itertools

    from fastcpu.instrument import timebase as _clock

    # all but one pair in eight migrated: five rounds of four, three clean
    counter = itertools.count()
    monkeypatch.setattr(_clock, "_chain_pair", lambda ruler, blocks: (1000, 2000, next(counter) % 8 != 0))
    with pytest.warns(fastcpu.CalibrationWarning, match=r"cycles_per_tick could not be calibrated cleanly: "
                      r"3 of 20 add-chain samples were undisturbed"):
        timing = _clock.ruler_timing("add", 10, 4)
    assert timing.ticks == pytest.approx(1000)


def test_a_clean_calibration_does_not_warn(monkeypatch):
    import warnings

    from fastcpu.instrument import timebase as _clock

    monkeypatch.setattr(_clock, "_chain_pair", lambda ruler, blocks: (1000, 2000, False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _clock.ruler_timing("imul", 10, 21).ticks == pytest.approx(1000)


SIGNAL_STORM = r"""
import json, signal, warnings
import fastcpu
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)    # 5 kHz during the first clock()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    stormy = fastcpu.clock().cycles_per_tick
signal.setitimer(signal.ITIMER_REAL, 0, 0)
calm = [fastcpu.clock(refresh=True).cycles_per_tick for _ in range(3)]
print(json.dumps({"stormy": stormy, "calm": calm,
                  "warned": [str(w.message) for w in caught if w.category is fastcpu.CalibrationWarning]}))
"""


def test_a_signal_storm_during_calibration_is_rejected_or_warned():
    # before: 1.17-1.37 cycles per tick under the storm against 1.60-1.65 calm,
    # kept silently for the whole process
    import json
    import math

    from pinning import run_python

    from hostnoise import on_some_try

    def check():
        p = run_python(SIGNAL_STORM)
        assert p.returncode == 0, p.stderr[-2000:]
        out = json.loads(p.stdout)
        # the calm calibrations' own range, as this host's clock gives it: steady
        # on some hosts, hopping among 100 MHz steps (several percent) on others
        low, high = min(out["calm"]) * 0.97, max(out["calm"]) * 1.03
        # warned, or rejected (the rulers disagreed: NaN, with the reason), or right
        assert out["warned"] or math.isnan(out["stormy"]) or low <= out["stormy"] <= high, out

    on_some_try(check)


def test_a_calibration_takes_another_round_rather_than_warn_of_too_few(monkeypatch):
    import warnings

    from fastcpu.instrument import timebase as _clock

    # three of each seven pairs disturbed: one round leaves 4 clean, fewer
    # than the warning's minimum; a second round makes 8
    calls = []

    def pair(ruler, blocks):
        calls.append(blocks)
        return (1000, 2000, False) if len(calls) % 7 not in (1, 2, 3) else (1100, 2200, False)

    monkeypatch.setattr(_clock, "_chain_pair", pair)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _clock.ruler_timing("add", 10, 7).ticks == pytest.approx(1000)
    assert len(calls) == 14


def _turns(levels, seed=3, scatter=0.0):
    """Pairs of add and imul chains of 200 blocks each at `levels` (core
    cycles per tick, one a turn), each turn slowed by up to `scatter` (both
    rulers alike, as a storm of signals slows them)."""
    import random

    rng = random.Random(seed)
    add, imul = [], []
    for level in levels:
        slow = 1 + rng.uniform(0, scatter)
        n_add, n_imul = 200 * _core.RULER_BLOCK, 3 * 200 * _core.IMUL_RULER_BLOCK
        add.append((round(n_add / level * slow) + 40, round(2 * n_add / level * slow) + 40, False))
        imul.append((round(n_imul / level * slow) + 40, round(2 * n_imul / level * slow) + 40, False))
    return add, imul


def test_a_clock_that_moves_is_told_from_a_disturbance():
    from fastcpu.instrument.timebase import clean_samples, clock_moved

    # five levels, each held for 20-40 turns (a GenuineIntel family 6 model
    # 167 guest's hops): few samples lie near the fastest, yet the clock moved
    hopping = [lv for lv, n in ((1.458, 30), (1.381, 25), (1.573, 20), (1.420, 40), (1.535, 20)) for _ in range(n)]
    add, imul = _turns(hopping)
    assert len(clean_samples(add)[0]) < len(add) // 2
    moved = clock_moved(add, imul, 200, 200)
    assert moved is not None and all(moved)
    # every turn slowed anew by 3-10%, both rulers alike (a 5 kHz signal storm): no moving clock
    add, imul = _turns([1.5] * 105, scatter=0.10)
    assert clock_moved(add, imul, 200, 200) is None


def _hopping_pairs(monkeypatch, held):
    """Replace the calibration's chain pairs by those of a clock that holds each of `held`'s
    (level, turns) in turn: made-up levels in core cycles per tick, no host's."""
    from fastcpu.instrument import timebase as _clock

    levels = iter([lv for lv, n in held for _ in range(n)] * 10)
    turn = {}

    def pair(ruler, blocks):
        if ruler == "add":
            turn["level"] = next(levels)
        n = blocks * _clock.BLOCK_INSTRUCTIONS[ruler] * (3 if ruler == "imul" else 1)
        rate = turn["level"] * (5 if ruler == "immediate_add" else 1)
        return round(n / rate) + 40, round(2 * n / rate) + 40, False

    monkeypatch.setattr(_clock, "_chain_pair", pair)


def test_a_calibration_on_a_clock_that_moves_does_not_warn(monkeypatch):
    import warnings

    from fastcpu.instrument import timebase as _clock

    _hopping_pairs(monkeypatch, ((1.458, 30), (1.381, 25), (1.573, 20), (1.420, 40)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CalibrationWarning fails the test
        rulers = _clock.take_rulers(2.0)
    assert rulers.agree and 1.381 <= rulers.add_cycles_per_tick <= 1.573


def test_a_moving_clock_gives_both_rulers_the_same_turns(monkeypatch):
    # the add ruler's samples mostly near its fastest, the imul ruler's not (a disturbance on
    # one kind of chain): both rulers must still be read from the same turns, or they would
    # disagree by the spread of the clock's levels and core cycles would go unknown
    from fastcpu.instrument import timebase as _clock

    _hopping_pairs(monkeypatch, ((1.458, 30), (1.381, 25), (1.573, 20)))
    rulers = _clock.take_rulers(2.0)
    assert rulers.agree, rulers
    assert abs(rulers.add_cycles_per_tick - rulers.imul_cycles_per_tick) < 0.01 * rulers.add_cycles_per_tick
