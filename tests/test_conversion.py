"""Core cycles per tick inside each measurement (fastcpu.instrument.timebase,
csrc/conversion.c): ruler points between stretches of runs, each stretch
converted with the points around it.

The logic is tested on ruler points made up here: a steady clock, one that
hops among 3-6 levels every 20-200 ms, disturbed points, excursions, a hop
inside a stretch placed by runs made up with it (and a neighbour's slowdown
that must not be); and on
the recorded 60 s clock trace of a GenuineIntel family 6 model 167 guest
(tests/data/intel-xeon-family6-model167-drift.npz: core cycles per tick by
add and imul chains every 20 ms). None of it holds a host's constant: the
levels, steps and tolerances are the tests' own, and the live checks derive
theirs from the host at hand.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu import _core
from fastcpu.instrument import timebase as _conversion
from fastcpu.results.parts import ClockMotion, merge_motion, runs_clock

DATA = Path(__file__).resolve().parent / "data"
RES = 0.002  # a ruler reading's resolution here: one step over 500 of the counter
TOL = _core.ruler_tolerance(RES)


def points_of(levels, runs_per_stretch=1000, noise=RES, seed=1, disturb=()):
    """Ruler points reading `levels` (one per point, core cycles per tick),
    each ruler off by up to half a resolution, evenly; the points in
    `disturb` have their add chain interrupted (read 40% slow)."""
    rng = np.random.default_rng(seed)
    n = len(levels)
    p = np.empty((n, 4))
    p[:, 0] = np.arange(n) * runs_per_stretch
    p[:, 1] = np.arange(n) * 520_000.0
    p[:, 2] = np.asarray(levels) * (1 + rng.uniform(-noise / 2, noise / 2, n))
    p[:, 3] = np.asarray(levels) * (1 + rng.uniform(-noise / 2, noise / 2, n))
    for j in disturb:
        p[j, 2] *= 0.6
    return p


def convert(p):
    return _conversion.convert(p, TOL, RES)


#: Core cycles per tick at the ends of the ranges ../shared/REFERENCE.md gives for each host
#: (AuthenticAMD family 25 model 1, 25/17, 26/2; GenuineIntel family 6 model 207, 6/167).
HOST_LEVELS = (1.20, 1.33, 1.27, 1.60, 1.58, 1.66, 1.25, 1.31, 1.38, 1.57)


@pytest.mark.parametrize("level", HOST_LEVELS)
def test_a_steady_clock_converts_to_its_level(level):
    c = convert(points_of([level] * 50))
    assert c.cycles_per_tick == pytest.approx(level, rel=RES)
    assert c.hops == 0 and c.disturbed == 0 and c.points == 50
    assert [round(v, 2) for v in c.levels] == [level] and sum(c.level_points) == c.points - c.disturbed
    # what the counter's step leaves in a mean of 50 points: well under 0.5%
    assert 0 < c.ci95 / c.cycles_per_tick < 0.005


@pytest.mark.parametrize("level", HOST_LEVELS)
def test_a_point_whose_rulers_disagree_is_left_out_and_counted(level):
    clean = convert(points_of([level] * 10))
    c = convert(points_of([level] * 10, disturb=[4]))
    assert c.disturbed == 1 and c.hops == 0
    assert c.cycles_per_tick == pytest.approx(clean.cycles_per_tick, rel=RES)


def test_every_point_disturbed_gives_no_figure():
    c = convert(points_of([1.42] * 3, disturb=[0, 1, 2]))
    assert math.isnan(c.cycles_per_tick) and c.disturbed == 3 and c.levels == ()


@pytest.mark.parametrize("first_use", [1.30, 1.42, 1.55])
def test_a_measurement_whose_points_were_all_disturbed_converts_within_what_could_be_true(first_use):
    # its clock at 1.42: the add rulers read 40% slow, the imul rulers right; the process's
    # first-use figure wherever the clock was then. The interval reaches every reading and the
    # first-use figure, so it holds the level the clock ran at.
    c = convert(points_of([1.42] * 2, disturb=[0, 1]))
    clock = fastcpu.Clock(2.0e9, 1.0, first_use)
    cpt, ci, caveats = runs_clock(c, clock, "tsc")
    assert caveats == () and ci > 0
    for v in (c.add_mean, c.imul_mean, first_use, 1.42):
        assert cpt - ci - 1e-12 <= v <= cpt + ci + 1e-12
    assert cpt - ci == pytest.approx(min(c.add_mean, c.imul_mean, first_use))
    # no points at all (a PMU counter, a child's runs): the clock's figure, its interval unknown
    assert runs_clock(None, clock, "tsc") == (first_use, 0.0, ())
    # and while the clock's own rulers disagree too: unknown, and why
    unknown = fastcpu.Clock(2.0e9, 1.0, math.nan)
    cpt, ci, caveats = runs_clock(c, unknown, "tsc")
    assert math.isnan(cpt) and caveats == unknown.caveats("tsc") and caveats


def test_a_hop_converts_each_stretch_with_its_own_level():
    levels = [1.381] * 20 + [1.573] * 30
    c = convert(points_of(levels))
    # 19 stretches at 1.381, one across the hop, 29 at 1.573: each run
    # converted at its stretch's level (the harmonic mean, weighted by runs)
    per = [1.381] * 19 + [(1.381 + 1.573) / 2] + [1.573] * 29
    assert c.cycles_per_tick == pytest.approx(len(per) / sum(1 / v for v in per), rel=2 * RES)
    assert c.hops == 1 and c.hop_runs == 1000
    assert [round(v, 3) for v in c.levels] == [1.381, 1.573]  # lowest first
    # the hop's stretch widens the interval by half the gap, for its share of the runs
    assert c.ci95 >= c.cycles_per_tick * (1.573 - 1.381) / 2 / 1.477 / 49


def test_the_levels_come_lowest_first_with_their_points_and_the_span():
    # the clock seen high first, then low, then high again: the record a
    # result keeps (ClockMotion) takes the levels as they come
    c = convert(points_of([1.573] * 6 + [1.381] * 10 + [1.479] * 4))
    assert c.levels == pytest.approx((1.381, 1.479, 1.573), rel=RES)
    assert c.level_points == (10, 4, 6) and c.hops == 2
    assert c.span_ticks == 19 * 520_000.0
    assert c.level_min == pytest.approx(1.381, rel=RES) and c.level_max == pytest.approx(1.573, rel=RES)
    motion = ClockMotion.from_conversion(c, 2.6e9)
    assert motion.levels_core_cycles_per_tick == c.levels and motion.level_points == (10, 4, 6)
    assert motion.seconds == pytest.approx(19 * 520_000 / 2.6e9)
    assert type(motion.hop_runs) is int and motion.hop_runs == 2000
    assert ClockMotion.from_dict(motion.to_dict()) == motion  # what its file keeps, read back the same
    assert ClockMotion.from_conversion(c, math.nan).seconds == 0.0  # the TSC's rate unknown: no span


def test_one_point_off_between_two_that_agree_is_an_excursion_not_two_hops():
    levels = [1.42] * 10
    levels[5] = 1.30
    c = convert(points_of(levels))
    assert c.hops == 0 and c.disturbed == 1
    assert c.cycles_per_tick == pytest.approx(1.42, rel=RES)


def _hopping_clock(rng, seconds, levels):
    """A clock hopping among `levels` every 20-200 ms: (change times, level after each)."""
    times, values, t = [0.0], [rng.choice(levels)], 0.0
    while t < seconds:
        t += rng.uniform(0.020, 0.200)
        times.append(t)
        values.append(rng.choice([v for v in levels if v != values[-1]]))
    return np.array(times), np.array(values)


def _simulate(level_at, seconds, cost_core_cycles=192.0, spacing_s=200e-6, runs_per_s=5e6, seed=2):
    """A measurement of a body of `cost_core_cycles` under a clock
    `level_at(t)`: runs every 1/runs_per_s, a ruler point every spacing_s
    reading the level there. (mean ticks per run, points)."""
    rng = np.random.default_rng(seed)
    t_points = np.arange(0.0, seconds + spacing_s / 2, spacing_s)
    p = np.empty((len(t_points), 4))
    p[:, 0] = np.round(t_points * runs_per_s)
    p[:, 1] = t_points * 2.6e9
    lv = level_at(t_points)
    p[:, 2] = lv * (1 + rng.uniform(-RES / 2, RES / 2, len(lv)))
    p[:, 3] = lv * (1 + rng.uniform(-RES / 2, RES / 2, len(lv)))
    t_runs = np.arange(0.0, seconds, 1 / runs_per_s)
    ticks = cost_core_cycles / level_at(t_runs)
    return float(ticks.mean()), p


@pytest.mark.parametrize("n_levels", [3, 4, 5, 6])
def test_a_clock_hopping_every_20_to_200_ms_converts_within_half_a_percent(n_levels):
    rng = np.random.default_rng(n_levels)
    levels = list(np.linspace(1.381, 1.573, n_levels))
    times, values = _hopping_clock(rng, 2.0, levels)

    def level_at(t):
        return values[np.searchsorted(times, t, side="right") - 1]

    mean_ticks, p = _simulate(level_at, 2.0)
    c = convert(p)
    assert mean_ticks * c.cycles_per_tick == pytest.approx(192.0, rel=0.005)
    assert c.hops >= (len(times) - 1) // 2 and len(c.levels) == n_levels
    # one figure for the whole measurement, as 0.6.0 took it at first use, misses by percents
    assert abs(mean_ticks * p[0, 2] - 192.0) > 0.005 * 192 or abs(mean_ticks * p[-1, 2] - 192.0) > 0.005 * 192


def test_the_recorded_hopping_clock_converts_within_half_a_percent():
    # 60 s of a GenuineIntel family 6 model 167 guest's core clock, sampled
    # every 20 ms by add and imul chains: levels between 1.381 and 1.573
    trace = np.load(DATA / "intel-xeon-family6-model167-drift.npz")
    t = trace["seconds"]
    level = (trace["add_cycles_per_tick"] + trace["imul_cycles_per_tick"]) / 2
    assert level.max() / level.min() > 1.1  # the clock in the trace really moves

    def level_at(x):
        return level[np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)]

    for start in (0.2, 10.0, 30.0):  # 2 s windows of the trace
        mean_ticks, p = _simulate(lambda x, s=start: level_at(x + s), 2.0)
        c = convert(p)
        assert mean_ticks * c.cycles_per_tick == pytest.approx(192.0, rel=0.005), start
        assert c.hops > 0


# ---- a hop inside a stretch, placed by the runs ----


def _runs(level_of_run, body=192.0, other=60.0, step=2, jitter=3.0, interrupts=0.002, seed=3):
    """Both sides' ticks of each run of a pair (a body of `body` core cycles
    plus the timer's `other`, and the empty side's `other`) under a clock
    reading level_of_run[i] core cycles per tick: on a counter moving in
    `step` ticks, with `jitter` ticks of scatter and a share of the runs
    interrupted (thousands of ticks)."""
    rng = np.random.default_rng(seed)
    lv = np.asarray(level_of_run, dtype=np.float64)
    n = len(lv)

    def side(cycles):
        ticks = cycles / lv + rng.normal(0.0, jitter, n)
        ticks = step * np.rint(ticks / step)
        ticks += np.where(rng.random(n) < interrupts, rng.uniform(2000, 9000, n), 0.0)
        return np.maximum(ticks, 0).astype(np.uint64)

    return side(body + other), side(other)


def _true_cpt(level_of_run):
    """What converts those runs exactly: their harmonic mean level."""
    lv = np.asarray(level_of_run, dtype=np.float64)
    return len(lv) / float(np.sum(1.0 / lv))


@pytest.mark.parametrize("la, lb, at", [(1.381, 1.573, 300), (1.573, 1.381, 300), (1.479, 1.426, 820),
                                        (1.381, 1.426, 50)])
def test_a_hop_inside_a_stretch_is_placed_by_the_runs_and_each_side_converted_at_its_level(la, lb, at):
    # two points, a thousand runs between them, the clock hopping at run `at`
    p = points_of([la, lb])
    level = np.where(np.arange(1000) < at, la, lb)
    truth = _true_cpt(level)
    blind = convert(p)  # the points alone: the midpoint, half the gap in the interval
    c = _conversion.convert(p, TOL, RES, _runs(level))
    assert c.hops == 1 and c.hops_located == 1 and blind.hops_located == 0
    assert c.cycles_per_tick == pytest.approx(truth, rel=0.002)
    assert abs(c.cycles_per_tick - truth) <= c.ci95 < blind.ci95  # narrower, and still holding it
    assert abs(blind.cycles_per_tick - truth) > abs(c.cycles_per_tick - truth)
    assert ClockMotion.from_conversion(c, 2.6e9).hops_located == 1


def test_a_body_that_held_through_a_level_change_makes_it_a_slowdown():
    # the rulers read 3% apart from one point to the next, both alike, but the body's ticks held
    # to well within that: other work slowed a ruler point, the clock did not hop (converted at
    # the midpoint still: which point was slowed the runs cannot say)
    p = points_of([1.382, 1.426])
    flat = _runs(np.full(1000, 1.404))
    blind = convert(p)
    c = _conversion.convert(p, TOL, RES, flat)
    assert (c.hops, c.hops_located, c.slowdowns) == (0, 0, 1)
    assert (c.cycles_per_tick, c.ci95) == (blind.cycles_per_tick, blind.ci95)
    # and a body whose ticks are all alike (its scatter none) held too
    same = (np.full(1000, 300, np.uint64), np.full(1000, 80, np.uint64))
    assert _conversion.convert(p, TOL, RES, same).slowdowns == 1


@pytest.mark.parametrize("why, runs", [
    # a step the wrong way: the runs slowed where the clock sped up (the host, not the clock)
    ("wrong way", _runs(np.where(np.arange(1000) < 400, 1.573, 1.381))),
    # a step three times the levels' ratio: something else moved
    ("too large", _runs(np.where(np.arange(1000) < 400, 1.381, 1.381 * 1.0325 ** 3))),
    # a body so short that its step is lost in the scatter
    ("lost in scatter", _runs(np.where(np.arange(1000) < 400, 1.381, 1.426), body=4.0, other=20.0,
                              jitter=12.0)),
    # no body at all (an empty sequence timed against itself)
    ("no body", _runs(np.where(np.arange(1000) < 400, 1.381, 1.426), body=0.0)),
])
def test_a_hop_the_runs_do_not_show_is_converted_at_the_midpoint(why, runs):
    p = points_of([1.381, 1.426])
    blind = convert(p)
    c = _conversion.convert(p, TOL, RES, runs)
    assert c.hops == 1 and c.hops_located == 0, why
    assert (c.cycles_per_tick, c.ci95) == (blind.cycles_per_tick, blind.ci95), why


def test_a_neighbour_slowing_the_work_is_a_slowdown_not_a_hop_to_place():
    # the shape a busy sibling thread left on a GenuineIntel family 6 model 167 guest: the add
    # ruler read 3% fewer core cycles per tick at the closing point and the imul ruler 0.4%
    # (within the points' own agreement), the clock where it was, the runs slower from run 400
    # on (here by just what the mean of the two rulers moved, 1.7%, so that only the rulers'
    # moving apart tells it from a hop): the runs' step is not the clock's and is not placed
    p = points_of([1.382, 1.382])
    p[1, 2] *= 0.970
    p[1, 3] *= 0.996
    level = np.where(np.arange(1000) < 400, 1.382, 1.382 * 0.983)
    blind = convert(p)
    c = _conversion.convert(p, TOL, RES, _runs(level))
    assert (c.hops, c.hops_located, c.slowdowns, c.hop_runs) == (0, 0, 1, 0)  # a slowdown, not a hop
    assert (c.cycles_per_tick, c.ci95) == (blind.cycles_per_tick, blind.ci95)  # at the midpoint
    text = ClockMotion.from_conversion(c, 2.6e9).describe()
    assert "0 hops" in text and "1 slowdown (the rulers moved apart or the body held" in text


def test_too_few_runs_in_the_hops_stretch_leave_it_at_the_midpoint():
    p = points_of([1.381, 1.573], runs_per_stretch=10)
    c = _conversion.convert(p, TOL, RES, _runs(np.where(np.arange(10) < 5, 1.381, 1.573)))
    assert c.hops == 1 and c.hops_located == 0


@pytest.mark.parametrize("n_levels", [3, 6])
def test_a_clock_hopping_every_20_to_200_ms_converts_within_a_tenth_of_a_percent_with_its_runs(n_levels):
    # ruler points 1 ms apart, as bench() takes them, and every run's ticks: a
    # hop inside a stretch is placed by the runs, so each run converts at the
    # level it ran at
    rng = np.random.default_rng(10 + n_levels)
    levels = list(np.linspace(1.381, 1.573, n_levels))
    times, values = _hopping_clock(rng, 0.5, levels)
    runs_per_s, spacing = 1e6, 1e-3
    t_runs = np.arange(0.0, 0.5, 1 / runs_per_s)
    level = values[np.searchsorted(times, t_runs, side="right") - 1]
    t_points = np.arange(0.0, 0.5 + spacing / 2, spacing)
    lv = values[np.searchsorted(times, t_points, side="right") - 1]
    p = np.column_stack([np.minimum(np.round(t_points * runs_per_s), len(t_runs)), t_points * 2.6e9,
                         lv * (1 + rng.uniform(-RES / 2, RES / 2, len(lv))),
                         lv * (1 + rng.uniform(-RES / 2, RES / 2, len(lv)))])
    truth = _true_cpt(level)
    blind = convert(p)
    c = _conversion.convert(p, TOL, RES, _runs(level, seed=n_levels))
    assert c.hops >= 1 and c.hops_located == c.hops
    assert c.cycles_per_tick == pytest.approx(truth, rel=0.001)
    assert abs(c.cycles_per_tick - truth) <= c.ci95 <= blind.ci95


@pytest.mark.parametrize("a, b, err, match", [
    (np.zeros(10, np.uint64), None, TypeError, "both"),
    (None, np.zeros(10, np.uint64), TypeError, "both"),
    (np.zeros(10, np.uint64), np.zeros(9, np.uint64), ValueError, "same runs"),
    (np.zeros(500, np.uint64), np.zeros(500, np.uint64), ValueError, "every run"),
    (np.zeros((10, 2), np.uint64), np.zeros((10, 2), np.uint64), ValueError, "1-d"),
])
def test_convert_refuses_runs_that_do_not_fit_the_points(a, b, err, match):
    with pytest.raises(err, match=match):
        _core.convert(points_of([1.4, 1.4]), TOL, RES, a, b)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((3, 3)), r"\(n, 4\)"),
    (np.array([[0, 0, 1.4, 1.4], [5, 1, float("nan"), 1.4]]), "points\\[1\\]"),
    (np.array([[5, 0, 1.4, 1.4], [1, 1, 1.4, 1.4]]), "in order"),
    (np.array([[0, 0, 0.0, 1.4]]), "positive"),
])
def test_convert_refuses_points_no_measurement_makes(bad, match):
    with pytest.raises(ValueError, match=match):
        _core.convert(bad, TOL, RES)


@pytest.mark.parametrize("tol, res, match", [(1.0, RES, "tolerance"), (TOL, -0.1, "resolution"),
                                             (TOL, float("nan"), "resolution")])
def test_convert_refuses_bad_fractions(tol, res, match):
    with pytest.raises(ValueError, match=match):
        _core.convert(points_of([1.4] * 3), tol, res)


def test_the_tolerance_and_resolution_rules():
    assert _core.ruler_tolerance(0.001) == 0.01  # at least 1%
    assert _core.ruler_tolerance(0.01) == pytest.approx(0.03)
    # one step over the shorter chain's ticks: 2,000 adds at 1.5 core cycles per tick
    assert _core.ruler_resolution(2.0, 1.5, 2, 3) == pytest.approx(2.0 / (2000 / 1.5))
    # or one block of imuls (3 core cycles each), where that is shorter
    assert _core.ruler_resolution(2.0, 1.5, 2, 1) == pytest.approx(2.0 / (3 * _core.IMUL_RULER_BLOCK / 1.5))
    with pytest.raises(ValueError, match="cycles_per_tick"):
        _core.ruler_resolution(26.0, 0.0, 2, 1)


def test_ruler_chains_span_enough_counter_steps():
    clk = fastcpu.clock()
    add, imul = _conversion.ruler_blocks(clk)
    cpt = clk.cycles_per_tick if math.isfinite(clk.cycles_per_tick) else 1.0
    for blocks, per_block, latency in ((add, _core.RULER_BLOCK, 1), (imul, _core.IMUL_RULER_BLOCK, 3)):
        ticks = blocks * per_block * latency / cpt
        assert ticks >= min(_conversion.RULER_STEPS * clk.tsc_step_ticks, 16 * per_block * latency / cpt) * 0.99


def test_the_timers_fixed_cost_shrugs_off_a_disturbed_stretch(monkeypatch):
    calls = []

    def ticks(ruler, blocks):  # 1.25 core cycles per tick, 80 core cycles of fences; one group disturbed
        calls.append(blocks)
        pair = (len(calls) - 2) // 2  # after the warm-up chain
        disturbed = blocks == 4 and pair // _conversion._FIXED_REPEATS == 3
        return round((1000 * blocks + 80) / 1.25) + (2000 if disturbed else 0)

    monkeypatch.setattr(_conversion, "_fixed", {})
    monkeypatch.setattr(_core, "ruler_ticks", ticks)
    assert _conversion.fixed_cost_core_cycles("add", 2) == pytest.approx(80, abs=1)
    assert len(calls) == 1 + 2 * _conversion._FIXED_GROUPS * _conversion._FIXED_REPEATS
    assert _conversion.fixed_cost_core_cycles("add", 2) == pytest.approx(80, abs=1)  # once per process
    assert len(calls) == 1 + 2 * _conversion._FIXED_GROUPS * _conversion._FIXED_REPEATS


# ---- the measurement's own points ----


def test_a_measurement_carries_its_ruler_points_and_what_they_say():
    m = _core.time_runs("gdt", runs=3000, serialize="lfence", copies=1, diff=False, counter="tsc",
                      rulers=_conversion.rulers())
    p = m.points
    assert p.shape[1] == 4 and len(p) >= 2
    assert p[0, 0] == 0 and p[-1, 0] == 3000  # one before the first run, one after the last
    assert np.all(np.diff(p[:, 0]) >= 0) and np.all(np.diff(p[:, 1]) > 0)
    assert type(m.conversion) is _core.Conversion and m.conversion.points == len(p)
    assert m.conversion.span_ticks == p[-1, 1] - p[0, 1]
    # the C core's conversion is convert()'s on the same points and runs, field for field
    again = _core.convert(p, *_conversion.rulers()[5:], m.a, m.b)
    assert [v if v == v else "nan" for v in again] == [v if v == v else "nan" for v in m.conversion]


def test_no_rulers_no_points_and_the_pmu_takes_none():
    m = _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
    assert m.points is None and m.conversion is None
    with pytest.raises(ValueError, match="rulers time the TSC"):
        _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="pmu",
                      rulers=_conversion.rulers())


@pytest.mark.parametrize("rulers, match", [
    ((0, 1, 80.0, 80.0, 1000, 0.01, 0.002), "add_blocks"),
    ((2, 65, 80.0, 80.0, 1000, 0.01, 0.002), "imul_blocks"),
    ((2, 1, -1.0, 80.0, 1000, 0.01, 0.002), "fixed cost"),
    ((2, 1, 80.0, float("inf"), 1000, 0.01, 0.002), "fixed cost"),
    ((2, 1, 80.0, 80.0, 0, 0.01, 0.002), "spacing_ticks"),
    ((2, 1, 80.0, 80.0, 1000, 1.5, 0.002), "tolerance"),
    ((2, 1, 80.0, 80.0, 1000, 0.01, -1.0), "resolution"),
])
def test_the_measurement_refuses_bad_rulers(rulers, match):
    with pytest.raises(ValueError, match=match):
        _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=rulers)


def test_time_runs_takes_its_arguments_named_or_in_order():
    by_position = _core.time_runs("gdt", 10, "lfence", 1, False, "tsc", None)  # type: ignore[misc]
    by_name = _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
    assert by_position.a.shape == by_name.a.shape == (10,)
    with pytest.raises(TypeError, match="takes runs, serialize, copies, diff, counter and rulers"):
        _core.time_runs("gdt", runs=10)  # type: ignore[call-arg]


def test_bench_reports_how_the_clock_moved():
    r = fastcpu.bench("gdt", 2000)
    m = r.clock_motion
    assert m is not None and m.points >= 2 and m.disturbed <= m.points
    if m.levels_core_cycles_per_tick:
        assert min(m.levels_core_cycles_per_tick) <= r.cycles_per_tick * (1 + 0.02)
        assert max(m.levels_core_cycles_per_tick) >= r.cycles_per_tick * (1 - 0.02)
    assert "core clock:" in m.describe(r.tsc_hz)
    d = fastcpu.bench_diff("gdt", 200)
    assert d.clock_motion is not None and d.clock_motion.points >= 2


# ---- the record ----


def _motion(levels=(1.381, 1.573), counts=(10, 20), hops=1):
    return ClockMotion(points=sum(counts) + 1, disturbed=1, hops=hops, hop_runs=1000, seconds=0.006,
                       levels_core_cycles_per_tick=levels, level_points=counts,
                       add_core_cycles_per_tick=1.5, imul_core_cycles_per_tick=1.51)


def test_a_motion_says_its_levels_and_hops_and_calls_nothing_an_interrupt_but_the_disturbed():
    text = _motion().describe(2.6e9)
    assert "2 levels, 1.381 to 1.573 core cycles per tick (3.59-4.09 GHz)" in text
    assert "1 hop in 6.0 ms of runs" in text and "1 of 31 points disturbed" in text
    assert ClockMotion.from_dict(_motion().to_dict(), "m") == _motion()


def test_motions_merge_their_levels_and_counts():
    a, b = _motion(), _motion(levels=(1.382, 1.458), counts=(5, 5), hops=3)
    m = merge_motion([a, None, b])
    assert m is not None and m.hops == 4 and m.points == a.points + b.points
    assert [round(v, 2) for v in m.levels_core_cycles_per_tick] == [1.38, 1.46, 1.57]
    assert merge_motion([None, None]) is None
    # a level no point saw (only a record built by hand has one) adds nothing
    m = merge_motion([_motion(counts=(0, 20)), _motion(levels=(1.382,), counts=(5,))])
    assert m is not None and m.level_points == (5, 20)


def test_a_motion_keeps_its_located_hops_and_files_before_them_read_as_none():
    m = dataclasses.replace(_motion(hops=3), hops_located=2)
    assert "3 hops in 6.0 ms of runs (2 placed by the runs themselves)" in m.describe(2.6e9)
    assert ClockMotion.from_dict(m.to_dict(), "m") == m
    old = m.to_dict()
    del old["hops_located"]  # a file of 0.8.5 or older: every hop's stretch at the midpoint
    assert ClockMotion.from_dict(old, "m").hops_located == 0
    assert merge_motion([m, m]).hops_located == 4
    slowed = dataclasses.replace(m, slowdowns=2)
    assert ClockMotion.from_dict(slowed.to_dict(), "m") == slowed and merge_motion([slowed, m]).slowdowns == 2
    assert "2 slowdowns (the rulers moved apart or the body held: other work, not the clock alone)" in \
        slowed.describe()
    del old["slowdowns"]
    assert ClockMotion.from_dict(old, "m").slowdowns == 0
    with pytest.raises(ValueError, match="hops_located"):
        ClockMotion.from_dict(dict(m.to_dict(), hops_located=4), "m")


@pytest.mark.parametrize("field, value", [("points", -1), ("hops", 1.5), ("seconds", float("nan")),
                                          ("levels_core_cycles_per_tick", [0.0, 1.5]),
                                          ("level_points", [1]), ("level_points", [0, 20]),
                                          ("disturbed", 10**6), ("hops_located", -1),
                                          ("hops_located", True), ("slowdowns", 1.5)])
def test_a_motion_no_measurement_makes_is_refused(field, value):
    d = _motion().to_dict()
    d[field] = value
    with pytest.raises((ValueError, TypeError)):
        ClockMotion.from_dict(d, "m")


# -- the rulers' disagreement is in the interval (issue 39, item 3) -------------------------

@pytest.mark.parametrize("level", HOST_LEVELS)
@pytest.mark.parametrize("share", [0.1, 0.5, 0.95])
def test_an_interval_reaches_what_either_ruler_alone_would_give(level, share):
    # the add and imul rulers reading steadily apart (0.2-1.4% from minute to minute on the
    # AuthenticAMD family 25 model 17 guest) by a share of the tolerance that still calls them
    # agreeing (beyond it core cycles are unknown: test_rulers.py): converting by one ruler alone
    # moves every figure that much, so the interval holds both readings
    apart = share * TOL
    p = points_of([level] * 50, noise=0)
    p[:, 3] *= 1 + apart  # the imul ruler reads `apart` above the add ruler at every point
    c = convert(p)
    low, high = c.cycles_per_tick - c.ci95, c.cycles_per_tick + c.ci95
    for alone in (p[:, 2].mean(), p[:, 3].mean()):
        assert low <= alone * (1 + 1e-9) and alone <= high * (1 + 1e-9), (alone, low, high)
    # and a result converted with it carries that share in its own interval, in core cycles
    runs = np.random.default_rng(2).integers(900, 1100, 400).astype(np.uint64)
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                        raw=runs, empty=np.full(400, 100, np.uint64),
                                        migrated=np.zeros(400, bool), clock=fastcpu.Clock(2.6e9, 1, level),
                                        cycles_per_tick=c.cycles_per_tick, cycles_per_tick_ci95=c.ci95)
    assert r.estimate_ci95_core_cycles >= r.estimate * c.ci95 * (1 - 1e-9)
