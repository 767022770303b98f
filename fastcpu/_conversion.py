"""Core cycles per TSC tick inside each measurement.

A guest's core clock need not hold still while fastcpu measures. On a
GenuineIntel family 6 model 167 guest it hops between 100 MHz steps (1.381
to 1.573 core cycles per tick) every 20-200 ms; on an AuthenticAMD family 25
model 1 (Zen 3) guest it flipped between about 1.25 and 1.33 several times a
second. A figure taken once per process (:func:`fastcpu.clock`), or once
before and once after a long measurement, converts with a level the clock
has left. So the C core times the runs in stretches of SPACING_S with a
*ruler point* between each two: a dependent chain of register-register adds
(1 core cycle each) and one of imuls (3 each), two rulers of different kinds
that check each other. It converts each stretch with the points around it
(csrc/conversion.c):

- a point whose two rulers disagree was disturbed (an interrupt slows one
  chain, not both alike) and is left out, and counted;
- two neighbouring points that agree within themselves but not with each
  other saw the clock hop between them. The runs of that stretch show where:
  the body's ticks (each run's two sides' difference, which follows the
  core clock) step there by the ratio of the two levels, so each side of
  the hop is converted at its own level, and what the hop's place may be
  off by, times the levels' gap, widens the interval. Where the two rulers
  moved apart rather than together, or the body held, other work slowed a
  ruler point (a *slowdown*, counted apart from the hops); such a stretch,
  and one whose body shows neither (too short to tell from its scatter),
  is converted at the midpoint of the two levels, and half their gap
  widens the interval by its share of the runs;
- the measurement's figure converts its runs as the stretches would, one by
  one (the harmonic mean of the stretches' levels, weighted by their runs:
  a cost of X core cycles reads X / level ticks in each).

Each ruler chain is sized to span at least RULER_STEPS steps of the counter
(two add blocks of 1,000 adds at least, four on a counter moving in
26-tick steps; one imul block of 1,000, two there), and each timer's own cost (fences and reads)
is measured once per process in core cycles, so that it stays right at every
level of the clock. The hops and levels seen are a fact about the machine,
kept with each result (:class:`fastcpu.types.ClockMotion`).
"""

from __future__ import annotations

import math
import statistics

import numpy as np

from . import _core
from ._clock import Clock, clock
from ._locks import ForkSafeLock

__all__ = [
    "RULER_STEPS",
    "SPACING_S",
    "fixed_cost_core_cycles",
    "rulers",
    "ruler_blocks",
    "convert",
]

#: Each ruler chain spans at least this many steps of the counter: one step is
#: then at most 1% of a reading.
RULER_STEPS = 100
#: Runs between two ruler points, seconds of TSC time: on a host whose clock
#: hops every 20 ms at the soonest, a hop falls into one stretch of twenty,
#: whose runs are converted at the midpoint of the two levels, within half
#: their gap (6.5% at most where levels span 1.381-1.573 core cycles per
#: tick: 0.3% of the figure, and the interval widens by it). A point (a
#: 2,000-add and a 1,000-imul chain, fenced) cost about 3 us on the
#: GenuineIntel family 6 model 167 guest: 0.3% of the time between points.
#: Every measurement opens and closes with one; at 200 us apart, bench(m,
#: 1000) (230 us of runs) took a third, 1.5% of its time.
SPACING_S = 1e-3
#: The fixed cost's pairs of chains: _FIXED_GROUPS groups of _FIXED_REPEATS
#: (about 3 ms per ruler, once per process); within a group the mean of the
#: middle half, then the median of the groups, so that a stretch the clock
#: hopped in or an interrupt disturbed does not decide it.
_FIXED_GROUPS = 7
_FIXED_REPEATS = 41
#: The add chain's blocks at least: its timer's fixed cost (about 100 core
#: cycles of fences and reads in a KVM guest) is measured once per process
#: and its error (0.7% of a one-block chain on the GenuineIntel family 6
#: model 167 guest, add reading that much below imul) shrinks with the chain.
_ADD_BLOCKS_MIN = 2
#: Core cycles per instruction of each ruler.
_LATENCY = {"add": 1.0, "imul": 3.0}

_lock = ForkSafeLock()
_fixed: dict[tuple[str, int], float] = {}


def ruler_blocks(clk: Clock) -> tuple[int, int]:
    """(add blocks, imul blocks) of RULER_BLOCK instructions per ruler chain:
    each chain at least RULER_STEPS steps of the counter long at the clock's
    add ruler (or its own figure while the imul ruler disagrees)."""
    cpt = _chain_cycles_per_tick(clk)
    step = clk.tsc_step_ticks if math.isfinite(clk.tsc_step_ticks) and clk.tsc_step_ticks > 0 else 1.0
    cycles = RULER_STEPS * step * (cpt if math.isfinite(cpt) and cpt > 0 else 1.0)
    add = min(max(math.ceil(cycles / _core.RULER_BLOCK), _ADD_BLOCKS_MIN), 16)
    imul = min(max(math.ceil(cycles / (_LATENCY["imul"] * _core.RULER_BLOCK)), 1), 16)
    return add, imul


def fixed_cost_core_cycles(ruler: str, blocks: int) -> float:
    """The `ruler` chain timer's own cost in core cycles (fences, reads) for
    chains of `blocks` blocks, measured once per process: from pairs of
    chains of N and 2N instructions, N (2 t(N) - t(2N)) / (t(2N) - t(N)), so
    each pair's own clock level cancels. Within a group a mean, not a
    median: the tick counts are multiples of the counter's step apart, and
    only a mean over random phases lands between them."""
    key = (ruler, blocks)
    known = _fixed.get(key)
    if known is not None:  # bench() asks on every call: no lock once known
        return known
    with _lock:
        if key not in _fixed:
            cycles = _LATENCY[ruler] * _core.RULER_BLOCK * blocks
            _core.ruler_ticks(ruler, blocks)  # warm up
            groups = []
            for _ in range(_FIXED_GROUPS):
                est = []
                for _ in range(_FIXED_REPEATS):
                    single = _core.ruler_ticks(ruler, blocks)
                    double = _core.ruler_ticks(ruler, 2 * blocks)
                    if double > single:
                        est.append(cycles * (2 * single - double) / (double - single))
                est.sort()
                middle = est[len(est) // 4: len(est) - len(est) // 4] or est
                if middle:
                    groups.append(statistics.fmean(middle))
            _fixed[key] = max(statistics.median(groups), 0.0) if groups else 0.0
        return _fixed[key]


#: (the clock, rulers() for it): they depend on the clock alone, and every
#: bench() asks.
_rulers_of: tuple[Clock, tuple[int, int, float, float, int, float, float]] | None = None


def rulers() -> tuple[int, int, float, float, int, float, float]:
    """What the C core's measure takes as its `rulers` on this host: (add blocks,
    imul blocks, each timer's fixed cost in core cycles, the spacing of the
    points in TSC ticks, the tolerance within which two points' levels
    agree, a reading's resolution), from :func:`fastcpu.clock`. A point's
    two rulers must agree within 3 resolutions, at least
    ``_core.RULERS_AGREE`` (3%): an interrupt slows a chain many times
    over, and the rulers' systematic difference stays well inside it."""
    global _rulers_of
    clk, known = clock(), _rulers_of
    if known is None or known[0] is not clk:
        add, imul = ruler_blocks(clk)
        res = resolution(clk, add, imul)
        # TSC ticks between points; 1 ms at 2.5 GHz where the TSC's rate is unknown
        spacing = max(int(SPACING_S * clk.tsc_hz), 1) if math.isfinite(clk.tsc_hz) else int(SPACING_S * 2.5e9)
        known = _rulers_of = (clk, (add, imul, fixed_cost_core_cycles("add", add),
                                    fixed_cost_core_cycles("imul", imul), spacing,
                                    _core.ruler_tolerance(res), res))
    return known[1]


def resolution(clk: Clock, add_blocks: int, imul_blocks: int) -> float:
    """One counter step over the TSC ticks of the shorter ruler chain (a
    fraction): how far apart two readings of one level can lie."""
    step = clk.tsc_step_ticks if math.isfinite(clk.tsc_step_ticks) else 1.0
    return _core.ruler_resolution(step, _chain_cycles_per_tick(clk), add_blocks, imul_blocks)


def _chain_cycles_per_tick(clk: Clock) -> float:
    """The add ruler's core cycles per tick, to size a chain in ticks: the
    clock's figure, or, while the imul ruler disagrees with it and the
    clock's is NaN, the add ruler's own."""
    cpt = clk.rulers.add_cycles_per_tick if clk.rulers is not None else clk.cycles_per_tick
    return cpt if math.isfinite(cpt) and cpt > 0 else 1.0


def convert(points: np.ndarray, tolerance: float, resolution: float,
            runs: tuple[np.ndarray, np.ndarray] | None = None) -> _core.Conversion:
    """What ruler points say (the C core's arithmetic, which measure() applies
    to its own): `points` an (n, 4) array of (runs before the point, TSC
    ticks since the start, add ruler, imul ruler in core cycles per tick);
    `runs` both sides' TSC ticks of each run (uint64), whose difference
    shows where in its stretch a hop fell, or that the clock did not move
    (None: the points alone, each such stretch converted at the midpoint of
    its two levels and counted a hop where both rulers moved alike)."""
    p = np.asarray(points, dtype=np.float64)
    if runs is None:
        return _core.convert(p, tolerance, resolution)
    return _core.convert(p, tolerance, resolution, *runs)
