"""Core cycles per TSC tick at the moment of a measurement.

A guest's core clock follows the host's load: on the hosts fastcpu has run
on, ``cycles_per_tick`` moved by several percent within minutes, so the
figure measured at first use (:func:`fastcpu.clock`) can be stale by the
time a measurement is converted. :func:`bench` therefore times dependent
register-register add chains (the add ruler of :mod:`fastcpu._clock`, which
the imul ruler checks there) just before and just after each measurement
and converts with the mean of the two brackets.

Each bracket is a short warm-up chain and two measured chains of 4,000 adds
(about 1.3 us each); a closing bracket serves as the next measurement's
opening one when that starts within 2 ms on the same thread and CPU, so
back-to-back calls pay about 3 us each. The brackets, the runs between them
and the figure are one C call (the one measurement, with :func:`brackets`;
csrc/bracket.c keeps each thread's recent brackets): in Python the same steps cost a
bench(m, 1000) about 30 us on the AuthenticAMD family 25 model 1 (Zen 3)
guest, a fifth of the runs' own time. The chain timer's fixed
cost (the fences around it) is measured once per process from chains of N
and 2N blocks and subtracted. Nothing here assumes a clock step or a core:
the fixed cost is a mean over random phases of whatever step the counter
has, measured on the host at hand.

A chain can only be slowed (an interrupt, the host's other work on the
core), never sped up. Now and then both chains of a bracket read slow
together: on the AuthenticAMD family 25 model 1 (Zen 3) guest 2.3% of brackets read 3-13% below the
brackets around them, while imul chains timed at the same moments kept
their tick counts exactly (the core clock had not moved). So each
measurement's brackets are also held against the chains of the last
RECENT_NS on the same thread and CPU: a side that reads slower than those
by more than the disturbance tolerance is left out, and when both are,
the recent chains give the figure, with an interval widened by the gap.
"""

from __future__ import annotations

import statistics
import time

from . import _core
from ._clock import Clock, clock
from ._locks import ForkSafeLock

__all__ = [
    "BRACKET_BLOCKS",
    "BRACKET_CHAINS",
    "REUSE_NS",
    "brackets",
    "bracket_cycles_per_tick",
    "chain_resolution",
    "fixed_cost_ticks",
    "recent_samples",
    "RECENT_NS",
]

#: Blocks of RULER_BLOCK (1,000) dependent adds: 4,000 adds, about 1.3 us at
#: 3.2 GHz, about 125 clock steps of 10 ns: one step is 0.8% of a chain, and
#: the mean of the two brackets' medians over random phases comes within
#: about 0.4%.
BRACKET_BLOCKS = 4
#: Measured chains per bracket (their median: with two, their mean). Two
#: keep bench(m, 1000) near the plain C loop's cost (benchmarks/performance.py).
BRACKET_CHAINS = 2
#: The fixed cost's pairs of chains: _FIXED_GROUPS groups of _FIXED_REPEATS
#: (about 3 ms once per process). With 41 pairs in all it scattered from 62
#: to 82 TSC ticks between processes on the AuthenticAMD family 25 model 1
#: (Zen 3) guest, 0.7% of a bracket chain, which every conversion of that
#: process then carried; with 401, 63-71, and once 21 (a disturbed stretch),
#: which the median of groups leaves out.
_FIXED_GROUPS = 7
_FIXED_REPEATS = 81

_lock = ForkSafeLock()
_fixed: float | None = None


def fixed_cost_ticks() -> float:
    """The add-chain timer's own cost in TSC ticks (fences, reads), measured
    once per process: 2 t(N) - t(2N) over _FIXED_REPEATS pairs, the mean of
    their middle half, in each of _FIXED_GROUPS groups, and the median of
    the groups. Within a group a mean, not a median: each value is a
    multiple of the clock's step apart from the next, and only a mean over
    random phases lands between them (a median was a whole step, 0.3% of
    the chain, off from one process to the next)."""
    global _fixed
    if _fixed is not None:  # bench() asks on every call: no lock once known
        return _fixed
    with _lock:
        if _fixed is None:
            _core.ruler_ticks("add", BRACKET_BLOCKS)  # warm up
            groups = []
            for _ in range(_FIXED_GROUPS):
                est = []
                for _ in range(_FIXED_REPEATS):
                    single = _core.ruler_ticks("add", BRACKET_BLOCKS)
                    double = _core.ruler_ticks("add", 2 * BRACKET_BLOCKS)
                    est.append(2 * single - double)
                est.sort()
                middle = est[len(est) // 4: len(est) - len(est) // 4]
                groups.append(statistics.fmean(middle))
            _fixed = max(statistics.median(groups), 0.0)
        return _fixed


#: A bracket taken after one measurement serves as the next one's opening
#: bracket when the next starts within this many ns, on the same thread and
#: CPU: back-to-back bench() calls (a table, measure()) pay one bracket each.
#: (The C core keeps the brackets: csrc/fastcpu.h.)
REUSE_NS: int = _core.BRACKET_REUSE_NS

#: How far back a measurement's brackets are compared with earlier ones,
#: and how many earlier brackets at most: enough to hold a run of
#: back-to-back bench() calls' brackets, short against the minutes over
#: which the host moves the guest's core clock.
RECENT_NS: int = _core.BRACKET_RECENT_NS
RECENT_BRACKETS: int = _core.BRACKET_RECENT


def recent_samples() -> list[float]:
    """The bracket samples this thread took on its current CPU in the last
    RECENT_NS (core cycles per tick), from at most RECENT_BRACKETS brackets,
    newest first."""
    return list(_core.bracket_recent(time.monotonic_ns(), _core.current_cpu()))


#: (the clock, brackets() for it): the brackets depend on the clock alone,
#: and every bench() asks.
_brackets_of: tuple[Clock, tuple[int, int, float, float, float]] | None = None


def brackets() -> tuple[int, int, float, float, float]:
    """How the one measurement (``_harness.measure``) times its brackets, in
    the same C call as the runs: the opening one (the last closing one when
    recent, else timed now), the runs, the closing one straight after them,
    and the figure from both held against this thread's recent brackets
    (:func:`bracket_cycles_per_tick`'s rules, in csrc/bracket.c: bench()
    pays them on every call). Each bracket is a short warm-up chain (the
    first after other work runs slow now and then: about 1%, one time in
    three) and BRACKET_CHAINS chains of BRACKET_BLOCKS x RULER_BLOCK adds less the
    timer's fixed cost; one chain alone scatters by a few percent on a guest
    (on an AuthenticAMD family 25 model 1 (Zen 3) guest, 10,000 adds read
    7595-8134 TSC ticks, 5th-95th percentile 1.27-1.33 core cycles per tick
    around 1.317). (blocks, chains, the chain timer's fixed cost in TSC
    ticks, the disturbance tolerance, a chain's resolution)."""
    global _brackets_of
    clk, known = clock(), _brackets_of
    if known is None or known[0] is not clk:
        known = _brackets_of = (clk, (BRACKET_BLOCKS, BRACKET_CHAINS, fixed_cost_ticks(),
                                      disturbance_tolerance(), chain_resolution()))
    return known[1]


def chain_resolution() -> float:
    """One step of the clock over the TSC ticks of a bracket chain (a
    fraction): how far apart the tick counts a chain can read lie. On a
    counter moving in 24.5-tick steps a 4,000-add chain spans about 125
    steps: 0.8%. The rule is the C core's."""
    clk = clock()
    return _core.bracket_resolution(clk.tsc_step_ticks, _chain_cycles_per_tick(clk), BRACKET_BLOCKS)


def disturbance_tolerance() -> float:
    """How far below the fastest chain of its side a bracket sample may read
    before it counts as disturbed (an interrupt or a preemption only ever
    lengthens a chain): three clock steps' worth of a chain, at least 1%.
    On a counter moving in 24.5-tick steps a 4,000-add chain spans about 125
    steps: 2.4%. The rule is the C core's (the one bench() uses)."""
    clk = clock()
    return _core.bracket_tolerance(clk.tsc_step_ticks, _chain_cycles_per_tick(clk), BRACKET_BLOCKS)


def _chain_cycles_per_tick(clk: Clock) -> float:
    """The add ruler's core cycles per tick, to size a chain in ticks: the
    clock's figure, or, while the imul ruler disagrees with it and the
    clock's is NaN, the add ruler's own (a chain's length in ticks is what
    it is, whatever a core cycle turns out to be)."""
    return clk.rulers.add_cycles_per_tick if clk.rulers is not None else clk.cycles_per_tick


def bracket_cycles_per_tick(
    before: list[float], after: list[float], tolerance: float | None = None,
    recent: list[float] | tuple[float, ...] = (), resolution: float | None = None,
) -> tuple[float, float]:
    """(core cycles per TSC tick, its 95% half-width) for a measurement
    bracketed by the samples `before` and `after` (BRACKET_CHAINS each).

    Each side keeps its samples within `tolerance` (a fraction; default
    :func:`disturbance_tolerance`) of its fastest: with two chains a side a
    median is their mean, and one interrupted chain (on an AuthenticAMD family 25 model 1 (Zen 3) guest, once
    in a few dozen brackets, reading 0.99 for 1.31) moved it by 12%. A side
    whose median reads slower than the fastest of `recent` (the samples of
    earlier brackets, :func:`recent_samples`) by more than `tolerance` is
    left out as disturbed too; when both are, the recent samples within
    `tolerance` of their fastest give the figure. The figure is the mean of
    the kept sides' medians, its half-width half the gap between the two
    sides (how far the core clock may have moved across the measurement)
    plus two median absolute deviations of the kept samples (their
    scatter) plus what the clock's step leaves in a mean of that many
    samples, 1.96 x `resolution` (default :func:`chain_resolution`) /
    sqrt(12 n): the chains start at random phases of the step, and samples
    that all read the same tick count are no more exact than that (on the
    AuthenticAMD family 25 model 1 (Zen 3) guest the four samples of a
    bracket often agree to the tick, and the half-width was then 0)."""
    tol = disturbance_tolerance() if tolerance is None else tolerance
    res = chain_resolution() if resolution is None else resolution
    return _core.bracket_figure(before, after, recent, tol, res)  # csrc/bracket.c: bench() pays it every call
