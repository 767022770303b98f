"""What a TSC tick is worth here: frequency, granularity (fitted to the lattice reads fall on)
and core cycles per tick (add chains checked by imul chains: NaN with the reason while they
disagree). Nothing is assumed of a host (docs/timing.md#units, #core-cycles-the-rulers).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .. import _core
from ..results.values import CalibrationWarning, Clock, CounterUnits, FOLDED_ABOVE, RULER_TOLERANCE_MIN, RULER_TOLERANCE_SIGMAS, Rulers, RulerTiming, judge_rulers, nan_equal
from .._base import ForkSafeLock

__all__ = ['Clock', 'CounterUnits', 'Rulers', 'RulerTiming', 'clock', 'CalibrationWarning', 'fit_granularity', 'read_spacing', 'judge_rulers', 'RULER_STEPS', 'SPACING_S', 'fixed_cost_core_cycles', 'rulers', 'ruler_blocks', 'convert']


# the values (a Clock, its Rulers) live in _clock_values, which needs no C core; named here too


# Calibration sizes: about 80 ms in all, once per process.
_FREQ_INTERVAL_S = 0.05
_STEP_READS = 4096
#: Dependent instructions per block of each chain (``_core``): about 1,000
#: core cycles a block (an imul takes 3, the others 1 or less).
BLOCK_INSTRUCTIONS = {"add": _core.RULER_BLOCK, "imul": _core.IMUL_RULER_BLOCK, "immediate_add": _core.RULER_BLOCK}
#: Each chain's blocks at N: about 200,000 core cycles each (some 60 us).
_RULER_BLOCKS = {"add": 200, "imul": 200, "immediate_add": 200}
_CHAIN_REPEATS = 21


def _count_tsc_hz() -> float:
    ns0, tsc0 = _core.tsc_ns_pair()
    time.sleep(_FREQ_INTERVAL_S)
    ns1, tsc1 = _core.tsc_ns_pair()
    return (tsc1 - tsc0) * 1e9 / (ns1 - ns0)


#: A chain timing this much above the fastest of its size was disturbed (an
#: interrupt, a signal, a preemption): the work is fixed, only time was added.
_DISTURBED_ABOVE_FASTEST = 0.015
#: A turn's add and imul rulers agree within this fraction: a move of the
#: core clock between 100 MHz steps is 2.5% or more, and moves both; an
#: interrupt slows one chain by far more.
_TURN_AGREE = 0.03
#: Neighbouring turns of a clock that moves read the same level to within
#: this fraction, most of them (the median step): a level lasts 20 ms or
#: more, a turn about a millisecond. On the GenuineIntel family 6 model 167
#: guest the median step read 0.14-0.57% (a quarter to half of its turns'
#: rulers agreeing, the rest slowed on one ruler by the host's other work);
#: under a 5 kHz signal storm, several percent.
_STEADY_NEIGHBOURS = 0.01
#: Rounds of `repeats` pairs at most, stopping once half a round is clean.
_CHAIN_ROUNDS = 5
#: Fewer clean pairs than this: the figure is kept, with a warning.
_CHAIN_CLEAN_MIN = 5


def _chain_pair(ruler: str, blocks: int) -> tuple[int, int, bool]:
    """(ticks of N blocks, ticks of 2N blocks, migrated in between) of `ruler`."""
    before = _core.current_cpu()
    single = _core.ruler_ticks(ruler, blocks)
    double = _core.ruler_ticks(ruler, 2 * blocks)
    return single, double, _core.current_cpu() != before


def turns_agreeing(add: Sequence[tuple[int, int, bool]], imul: Sequence[tuple[int, int, bool]],
                   add_blocks: int, imul_blocks: int) -> list[bool]:
    """Per turn of :func:`_interleaved_pairs`, whether its add and imul pairs read the same core
    clock within ``_TURN_AGREE`` and neither migrated: a moving clock moves both rulers alike, an
    interrupt slows one.
    """
    out = []
    for (a1, a2, am), (m1, m2, mm) in zip(add, imul):
        if am or mm or a2 <= a1 or m2 <= m1:
            out.append(False)
            continue
        add_rate = _core.RULER_BLOCK * add_blocks / (a2 - a1)
        imul_rate = 3 * _core.IMUL_RULER_BLOCK * imul_blocks / (m2 - m1)
        out.append(abs(add_rate - imul_rate) <= _TURN_AGREE * max(add_rate, imul_rate))
    return out


def clean_samples(pairs: list[tuple[int, int, bool]]) -> tuple[list[int], list[int]]:
    """(t(N), t(2N)) timings of the pairs that did not migrate, each within
    ``_DISTURBED_ABOVE_FASTEST`` of the fastest of its size, each size kept on its own.
    """
    settled = [(s, d) for s, d, migrated in pairs if not migrated]
    if not settled:
        return [], []
    fastest_single = min(s for s, _ in settled)
    fastest_double = min(d for _, d in settled)
    return ([s for s, _ in settled if s <= fastest_single * (1 + _DISTURBED_ABOVE_FASTEST)],
            [d for _, d in settled if d <= fastest_double * (1 + _DISTURBED_ABOVE_FASTEST)])


def clock_moved(add: Sequence[tuple[int, int, bool]], imul: Sequence[tuple[int, int, bool]],
                add_blocks: int, imul_blocks: int) -> list[bool] | None:
    """The turns whose rulers agreed (:func:`turns_agreeing`) where the pairs say the core clock
    moved during the calibration (most neighbouring turns on one level within
    ``_STEADY_NEIGHBOURS``), else None (they were disturbed).
    """
    agreeing = turns_agreeing(add, imul, add_blocks, imul_blocks)
    levels = [_core.RULER_BLOCK * add_blocks / (a2 - a1) for (a1, a2, _), ok in zip(add, agreeing) if ok]
    if len(levels) < max(_CHAIN_CLEAN_MIN, len(add) // 4):
        return None
    steps = sorted(abs(b - a) / max(a, b) for a, b in zip(levels, levels[1:]))
    return agreeing if steps[len(steps) // 2] <= _STEADY_NEIGHBOURS else None


def _median_se(values: Sequence[float], step_ticks: float) -> float:
    """The standard error of the median of `values` (TSC ticks): 1.253 robust
    sigmas over sqrt(n), and at least what a counter of `step_ticks`
    granularity leaves in it (step / sqrt(12 n))."""
    n = len(values)
    mid = statistics.median(values)
    mad = statistics.median(abs(v - mid) for v in values)
    return math.hypot(1.253 * 1.4826 * mad, step_ticks / math.sqrt(12)) / math.sqrt(n)


def _enough(pairs: list[tuple[int, int, bool]], repeats: int) -> bool:
    """More than half a round, and at least _CHAIN_CLEAN_MIN, of each size
    clean: enough for a figure without a warning (7 repeats stopped at 4
    clean and then warned that 4 were too few)."""
    singles, doubles = clean_samples(pairs)
    return min(len(singles), len(doubles)) >= max(repeats // 2 + 1, _CHAIN_CLEAN_MIN)


def _moved(pairs: Mapping[str, list[tuple[int, int, bool]]], blocks: Mapping[str, int]) -> list[bool] | None:
    """:func:`clock_moved` where both rulers were timed (None otherwise)."""
    if "add" not in pairs or "imul" not in pairs:
        return None
    return clock_moved(pairs["add"], pairs["imul"], blocks["add"], blocks["imul"])


def _interleaved_pairs(blocks: Mapping[str, int], repeats: int) -> dict[str, list[tuple[int, int, bool]]]:
    """Pairs (t(N), t(2N), migrated) of each ruler in `blocks`, the rulers taking turns pair by pair,
    in rounds (up to ``_CHAIN_ROUNDS``) until every ruler has enough clean pairs.
    """
    pairs: dict[str, list[tuple[int, int, bool]]] = {r: [] for r in blocks}
    for _ in range(_CHAIN_ROUNDS):
        for _ in range(repeats):
            for ruler, n in blocks.items():
                pairs[ruler].append(_chain_pair(ruler, n))
        if all(_enough(p, repeats) for p in pairs.values()) or _moved(pairs, blocks) is not None:
            break
    return pairs


def _timing_of(ruler: str, blocks: int, pairs: list[tuple[int, int, bool]], step_ticks: float,
               moved: Sequence[bool] | None = None) -> RulerTiming:
    """`ruler`'s timing: median t(2N) - median t(N) over the clean pairs, warning with
    :class:`CalibrationWarning` when fewer than ``_CHAIN_CLEAN_MIN`` are clean; where the clock
    moved (`moved`, :func:`clock_moved`), those turns at whatever level, with no warning.
    """
    singles, doubles = clean_samples(pairs)
    clean = min(len(singles), len(doubles))
    if moved is not None:  # every ruler from the same turns, or the two would read different levels
        singles = [s for (s, _, _), ok in zip(pairs, moved) if ok]
        doubles = [d for (_, d, _), ok in zip(pairs, moved) if ok]
        clean = len(singles)
    if not clean:  # every pair migrated: use them all, and say so
        singles, doubles = [s for s, _, _ in pairs], [d for _, d, _ in pairs]
    ticks = statistics.median(doubles) - statistics.median(singles)
    se = math.hypot(_median_se(singles, step_ticks), _median_se(doubles, step_ticks))
    timing = RulerTiming(ruler, BLOCK_INSTRUCTIONS[ruler] * blocks, float(ticks), se, clean, len(pairs))
    if clean < _CHAIN_CLEAN_MIN and ruler != "immediate_add":  # a fact about the core, no ruler
        warnings.warn(
            f"cycles_per_tick could not be calibrated cleanly: {clean} of {len(pairs)} "
            f"{ruler}-chain samples were undisturbed (the rest interrupted, preempted or migrated: "
            f"their levels scattered from turn to turn, as a core clock that moves does not); "
            f"that ruler reads {timing.ticks_per_instruction:.4f} TSC ticks per instruction and may be "
            "off. Calibrate again on a quieter machine with fastcpu.clock(refresh=True)",
            CalibrationWarning, stacklevel=4)
    return timing


def ruler_timing(ruler: str, blocks: int, repeats: int, step_ticks: float = 1.0) -> RulerTiming:
    """`ruler`'s chain timed alone at N = BLOCK_INSTRUCTIONS[ruler] x `blocks` instructions and at
    2N (:func:`_interleaved_pairs` with one ruler, :func:`_timing_of`)."""
    return _timing_of(ruler, blocks, _interleaved_pairs({ruler: blocks}, repeats)[ruler], step_ticks)


def take_rulers(step_ticks: float = 1.0) -> Rulers:
    """Both rulers and the immediate-add chain, timed taking turns pair by pair (so that a move of
    the core clock falls on all alike) after a warm-up chain, judged by :func:`judge_rulers`.
    """
    _core.ruler_ticks("add", _RULER_BLOCKS["add"])  # warm up the core clock and caches
    pairs = _interleaved_pairs(_RULER_BLOCKS, _CHAIN_REPEATS)
    # where a ruler has too few samples near its fastest and the clock moved, every ruler takes the
    # turns whose rulers agreed: one ruler's fastest samples against the other's turns at every
    # level would read the spread of the levels as a disagreement
    short = any(min(map(len, clean_samples(pairs[r]))) < _CHAIN_CLEAN_MIN for r in ("add", "imul"))
    moved = _moved(pairs, _RULER_BLOCKS) if short else None
    timings = {r: _timing_of(r, _RULER_BLOCKS[r], p, step_ticks, moved) for r, p in pairs.items()}
    return judge_rulers(timings["add"], timings["imul"], timings["immediate_add"])


#: A spaced delta must lie this close to a whole number of steps (TSC ticks):
#: the rounding of both reads, and a tick of jitter.
_ROUNDING_TICKS = 1.5
#: Below this a +-1.5-tick tolerance fits any delta: smaller granularities
#: are found only as exact divisors.
_ROUNDED_MIN_TICKS = 5.0
_STEP_MAX_TICKS = 1024
#: Deltas of more steps than this (a preemption) say nothing of the step.
_STEP_K_MAX = 64
#: Shares of the deltas that must fit: every one but the odd jittered or
#: preempted read on an exact lattice, 95% within the rounding otherwise.
_EXACT_SHARE = 0.99
_ROUNDED_SHARE = 0.95


def _share_on_steps(d: np.ndarray, step: float) -> float:
    """The share of the deltas (of up to _STEP_K_MAX steps) within
    _ROUNDING_TICKS of a whole number of steps; 0 when fewer than half qualify."""
    k = np.rint(d / step)
    near = k <= _STEP_K_MAX
    if near.sum() < len(d) / 2:
        return 0.0
    return float(np.mean(np.abs(d[near] - k[near] * step) <= _ROUNDING_TICKS))


def _refit(d: np.ndarray, step: float, k_max: float) -> float:
    """Least squares of delta = k x step over the deltas of 1 to k_max steps."""
    k = np.rint(d / step)
    use = (k >= 1) & (k <= k_max)
    return float((k[use] * d[use]).sum() / (k[use] ** 2).sum()) if use.any() else step


def _rounded_lattice(d: np.ndarray) -> float:
    """The largest step of at least _ROUNDED_MIN_TICKS that _ROUNDED_SHARE of the deltas lie on to
    within the rounding (a 24.5-tick lattice reads 24 or 25 a step); 0 when none.
    """
    big = d[d >= _ROUNDED_MIN_TICKS - 1]
    if len(big) == 0:
        return 0.0
    lo = float(big.min())
    guess = float(big[big < 1.5 * lo].mean())
    for divisor in range(1, 9):
        step = guess / divisor
        if step < _ROUNDED_MIN_TICKS:
            break
        # k is certain while the step's error times k_max stays under half a
        # step: refit with ever longer deltas
        for k_max in (4, 16, _STEP_K_MAX):
            step = _refit(d, step, k_max)
        if _ROUNDED_MIN_TICKS <= step < _STEP_MAX_TICKS and _share_on_steps(d, step) >= _ROUNDED_SHARE:
            return step
    return 0.0


def _exact_lattice(d: np.ndarray) -> int:
    """The largest whole number of ticks (2 to _STEP_MAX_TICKS) that divides
    _EXACT_SHARE of the deltas; 1 when none does."""
    top = int(min(_STEP_MAX_TICKS, d.max()))
    for g in range(top, 1, -1):
        if np.mean(d % g == 0) >= _EXACT_SHARE:
            return g
    return 1


def fit_granularity(reads: Sequence[int] | np.ndarray) -> float:
    """The counter's granularity in TSC ticks (a float) from reads separated by varying work: the
    largest step whose lattice the deltas fall on, exactly or to within the rounding of both
    reads; 1 when every tick is read; NaN with fewer than 32 rising deltas. Never the spacing of
    back-to-back reads (:func:`read_spacing`).
    """
    values = np.asarray(reads, dtype=np.uint64)
    d = np.diff(values)
    d = d[(d > 0) & (d < 1 << 53)].astype(np.float64)  # equal reads fit every step
    if len(d) < 32:
        return math.nan
    return float(max(_exact_lattice(d), _rounded_lattice(d)))


def read_spacing(reads: Sequence[int] | np.ndarray) -> float:
    """The median spacing of back-to-back reads in TSC ticks (deltas of 0
    included: a counter that did not move between two reads)."""
    d = np.diff(np.asarray(reads, dtype=np.uint64))
    d = d[d < 1 << 53]  # a read that went backwards (another CPU's TSC) is no spacing
    return float(np.median(d)) if len(d) else math.nan


# fresh in a fork's child: it measures again if nothing was cached
_lock = ForkSafeLock("the clock's measurement (the first clock(), or clock(refresh=True))")
_cached: Clock | None = None
class _Held(threading.local):
    """The clock each thread's measure() holds for all of its parts (None: none). A class
    default, so that reading it on a thread that holds none raises nothing (every bench()
    reads it twice: an AttributeError caught inside getattr cost about 0.4 us each)."""

    clock: Clock | None = None


_held = _Held()


@contextlib.contextmanager
def one_clock(clk: Clock) -> Iterator[Clock]:
    """Within the block, clock() on this thread answers `clk` (unless asked
    to refresh): every part of one measure() (each bench(), its rulers, the
    self-test) takes the same clock while another thread refreshes it."""
    before = _held.clock
    _held.clock = clk
    try:
        yield clk
    finally:
        _held.clock = before


def clock(*, refresh: bool = False) -> Clock:
    """Measure this machine's clock once per process (about 80 ms) and return it.

    Args:
        refresh: measure again and use the new figures from now on (results already returned,
            and a measure() under way, keep theirs). A guest's core clock follows the host's
            load (docs/accuracy.md).

    Returns:
        A :class:`Clock`. Its ``cycles_per_tick`` is NaN, and ``core_cycles_problem`` says why,
        while the imul ruler disagrees with the add ruler: core-cycle figures are then NaN and
        bench() applies no harness correction.

    Warns:
        CalibrationWarning: most calibration samples were disturbed, so ``cycles_per_tick``
            may be off.

    Raises:
        TypeError: `refresh` is not a bool.
        fastcpu.Unsupported: the TSC cannot be read here.
        fastcpu.Error: called from a signal handler on a thread measuring the clock itself.
    """
    global _cached
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be a bool, not {type(refresh).__name__}")
    held = _held.clock
    if held is not None and not refresh:  # inside measure() on this thread: its one clock
        return held
    known = _cached
    if known is not None and not refresh:  # every bench() asks: no lock once measured
        return known
    with _lock:
        if _cached is None or refresh:
            _cached = _calibrate_clock()
        return _cached


def _calibrate_clock() -> Clock:
    """TSC Hz, the granularity fit and the back-to-back spacing, both rulers."""
    hz = _count_tsc_hz()
    step = fit_granularity(_core.tsc_reads(_STEP_READS, True))
    if not step >= 1:
        step = 1.0
    rulers = take_rulers(step)
    return Clock(
        tsc_hz=hz,
        tsc_step_ticks=step,
        cycles_per_tick=rulers.add_cycles_per_tick if rulers.agree else math.nan,
        tsc_read_spacing_ticks=read_spacing(_core.tsc_reads(_STEP_READS, False)),
        rulers=rulers,
    )


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
#: Each ruler chain's blocks at least: its timer's fixed cost (about 100 core
#: cycles of fences and reads in a KVM guest) is measured once per process
#: and its error (0.7% of a one-block chain on the GenuineIntel family 6
#: model 167 guest, add reading that much below imul) shrinks with the chain.
_BLOCKS_MIN = 2
#: Core cycles per instruction of each ruler.
_LATENCY = {"add": 1.0, "imul": 3.0}

_conversion_lock = ForkSafeLock("the core-cycle conversion's calibration (the first bench())")
_fixed: dict[tuple[str, int], float] = {}


def ruler_blocks(clk: Clock) -> tuple[int, int]:
    """(add blocks, imul blocks) of BLOCK_INSTRUCTIONS per ruler chain:
    each chain at least RULER_STEPS steps of the counter long at the clock's
    add ruler (or its own figure while the imul ruler disagrees)."""
    cpt = _chain_cycles_per_tick(clk)
    step = clk.tsc_step_ticks if math.isfinite(clk.tsc_step_ticks) and clk.tsc_step_ticks > 0 else 1.0
    core_cycles = RULER_STEPS * step * (cpt if math.isfinite(cpt) and cpt > 0 else 1.0)
    add = min(max(math.ceil(core_cycles / _core.RULER_BLOCK), _BLOCKS_MIN), 16)
    imul = min(max(math.ceil(core_cycles / (_LATENCY["imul"] * _core.IMUL_RULER_BLOCK)), _BLOCKS_MIN), 16)
    return add, imul


def fixed_cost_core_cycles(ruler: str, blocks: int) -> float:
    """The `ruler` chain timer's own cost in core cycles for chains of `blocks` blocks, once per
    process: N (2 t(N) - t(2N)) / (t(2N) - t(N)) over pairs, a mean (over random phases).
    """
    key = (ruler, blocks)
    known = _fixed.get(key)
    if known is not None:  # bench() asks on every call: no lock once known
        return known
    with _conversion_lock:
        if key not in _fixed:
            core_cycles = _LATENCY[ruler] * BLOCK_INSTRUCTIONS[ruler] * blocks
            _core.ruler_ticks(ruler, blocks)  # warm up
            groups = []
            for _ in range(_FIXED_GROUPS):
                est = []
                for _ in range(_FIXED_REPEATS):
                    single = _core.ruler_ticks(ruler, blocks)
                    double = _core.ruler_ticks(ruler, 2 * blocks)
                    if double > single:
                        est.append(core_cycles * (2 * single - double) / (double - single))
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
    """The C core's `rulers` on this host, from :func:`fastcpu.clock`: (add blocks, imul blocks,
    each timer's fixed cost in core cycles, the points' spacing in TSC ticks, the tolerance
    within which two points' levels agree, a reading's resolution).
    """
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
    """What ruler points say (the C core's arithmetic): `points` an (n, 4) array of (runs before,
    TSC ticks since the start, add and imul ruler in core cycles per tick); `runs` both sides'
    TSC ticks per run (uint64) to place a hop, or None (each such stretch at its levels' midpoint).
    """
    p = np.asarray(points, dtype=np.float64)
    if runs is None:
        return _core.convert(p, tolerance, resolution)
    return _core.convert(p, tolerance, resolution, *runs)
