"""fastcpu.clock(): frequency, step and core cycles per tick."""

import time

import numpy as np

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
