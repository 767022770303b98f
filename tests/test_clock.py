"""fastcpu.clock(): frequency, step and core cycles per tick."""

import time

import numpy as np
import pytest

import fastcpu
from fastcpu import _core


def test_clock_is_plausible_and_cached():
    clk = fastcpu.clock()
    assert 1e8 < clk.tsc_hz < 1e10
    assert clk.tsc_step_ticks >= 1
    assert 0.2 < clk.cycles_per_tick < 10
    assert fastcpu.clock() is clk


def test_tsc_hz_agrees_with_the_monotonic_clock():
    clk = fastcpu.clock()
    ns0, t0 = _core.tsc_ns_pair()
    time.sleep(0.02)
    ns1, t1 = _core.tsc_ns_pair()
    assert abs((t1 - t0) * 1e9 / (ns1 - ns0) / clk.tsc_hz - 1) < 0.01


def test_step_divides_back_to_back_reads():
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
    a, b = _core.tsc_step(4096), _core.tsc_step(4096)
    assert isinstance(a, float) and a >= 1
    if a >= 5:
        assert abs(a - b) < 0.01 * a / 24
        assert abs(a - b) < 0.02


def test_add_chain_is_linear():
    one = min(_core.add_chain_ticks(1000) for _ in range(5))
    two = min(_core.add_chain_ticks(2000) for _ in range(5))
    assert 1.8 < two / one < 2.2


def test_refresh_measures_again_and_is_kept():
    old = fastcpu.clock()
    new = fastcpu.clock(refresh=True)
    assert new is not old
    assert fastcpu.clock() is new
    assert abs(new.tsc_step_ticks - old.tsc_step_ticks) < 0.02
    assert 0.2 < new.cycles_per_tick < 10


# -- disturbed calibration samples (issue 10, item 4) -----------------------------------

def test_disturbed_and_migrated_samples_are_left_out():
    from fastcpu._clock import clean_samples

    pairs = [(1000, 2000, False), (1004, 2003, False), (1300, 2001, False),  # interrupted in t(N)
             (1001, 2600, False), (900, 1500, True), (1002, 2002, False)]   # in t(2N); migrated
    assert clean_samples(pairs) == ([1000, 1004, 1001, 1002], [2000, 2003, 2001, 2002])
    assert clean_samples([(1, 2, True)]) == ([], [])


def test_a_calibration_with_too_few_clean_samples_warns(monkeypatch):
    import itertools

    from fastcpu import _clock

    # all but one pair in eight migrated: five rounds of four, three clean
    counter = itertools.count()
    monkeypatch.setattr(_clock, "_chain_pair", lambda blocks: (1000, 2000, next(counter) % 8 != 0))
    with pytest.warns(fastcpu.CalibrationWarning, match=r"cycles_per_tick could not be calibrated cleanly: "
                      r"3 of 20 add-chain samples were undisturbed"):
        value = _clock.add_chain_cycles_per_tick(10, 4)
    assert value == pytest.approx(1.0)


def test_a_clean_calibration_does_not_warn(monkeypatch):
    import warnings

    from fastcpu import _clock

    monkeypatch.setattr(_clock, "_chain_pair", lambda blocks: (1000, 2000, False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _clock.add_chain_cycles_per_tick(10, 21) == pytest.approx(1.0)


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
    import statistics

    from pinning import run_python

    from hostnoise import on_some_try

    def check():
        p = run_python(SIGNAL_STORM)
        assert p.returncode == 0, p.stderr[-2000:]
        out = json.loads(p.stdout)
        calm = statistics.median(out["calm"])
        assert out["warned"] or out["stormy"] == pytest.approx(calm, rel=0.05), out

    on_some_try(check)


def test_a_calibration_takes_another_round_rather_than_warn_of_too_few(monkeypatch):
    import warnings

    from fastcpu import _clock

    # three of each seven pairs disturbed: one round leaves 4 clean, fewer
    # than the warning's minimum; a second round makes 8
    calls = []

    def pair(blocks):
        calls.append(blocks)
        return (1000, 2000, False) if len(calls) % 7 not in (1, 2, 3) else (1100, 2200, False)

    monkeypatch.setattr(_clock, "_chain_pair", pair)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _clock.add_chain_cycles_per_tick(10, 7) == pytest.approx(1.0)
    assert len(calls) == 14
