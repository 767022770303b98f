"""Core cycles per TSC tick at the moment of a measurement.

A guest's core clock follows the host's load: on the hosts fastcpu has run
on, ``cycles_per_tick`` moved by several percent within minutes, so the
figure measured at first use (:func:`fastcpu.clock`) can be stale by the
time a measurement is converted. :func:`bench` therefore times dependent
add chains just before and just after each measurement and converts with
the mean of the two brackets.

Each bracket is a short warm-up chain and two measured chains of 4,000 adds
(about 1.3 us each); a closing bracket serves as the next measurement's
opening one when that starts within 2 ms on the same thread and CPU, so
back-to-back calls pay about 3 us each. The brackets, the runs between them
and the figure are one C call (:func:`bracketed`, csrc/bracket.c, which
keeps each thread's recent brackets): in Python the same steps cost a
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

Add chains are not the only clock a core has: a chain of dependent imuls
counts 3 core cycles a link, and on the hosts fastcpu has run on the two
did not agree: an imul chain took 2.97-2.98 times the TSC ticks of an add
chain of the same length (truth 3) on the AuthenticAMD family 25 model 1
(Zen 3) guest, the adds slowed by 0.8% more than the imuls (by up to 3.7%
under load), so core cycles by the add clock read imul chains of 768 core
cycles 2 short and add chains by the imul clock 1% long. Which is right is
not known without a PMU; :func:`clock_kind_ratio` measures the two against
each other (at most KIND_RATIO_MAX_AGE_S old), and every bracket figure is
moved to their midpoint with half their gap in its half-width
(``_core.bracket_kinds``), as the harness-bias correction takes the
midpoint of the add and imul chains' biases.
"""

from __future__ import annotations

import statistics
import threading
import time

from . import _core
from ._clock import clock

__all__ = [
    "BRACKET_BLOCKS",
    "BRACKET_CHAINS",
    "REUSE_NS",
    "bracketed",
    "diff_bracketed",
    "bracket_cycles_per_tick",
    "clock_kind_ratio",
    "fixed_cost_ticks",
    "fresh_kind_ratio",
    "KIND_IMUL_BLOCKS",
    "KIND_RATIO_MAX_AGE_S",
    "recent_samples",
    "RECENT_NS",
]

#: 100 dependent adds per block: 4,000 adds, about 1.3 us at 3.2 GHz, about
#: 125 clock steps of 10 ns: one step is 0.8% of a chain, and the mean of
#: the two brackets' medians over random phases comes within about 0.4%.
BRACKET_BLOCKS = 40
#: Measured chains per bracket (their median: with two, their mean). Two
#: keep bench(m, 1000) near the plain C loop's cost (benchmarks/performance.py).
BRACKET_CHAINS = 2
_FIXED_REPEATS = 41

#: The kind ratio's imul chains: 13 blocks of 100 imuls, 3,900 core cycles,
#: timed against 39 blocks of 100 adds, the same core cycles, about the
#: brackets' length; _KIND_REPEATS of each, interleaved.
KIND_IMUL_BLOCKS = 13
_KIND_REPEATS = 41
#: How long a measured kind ratio holds, seconds: the host's load moves it.
KIND_RATIO_MAX_AGE_S = 30.0

_lock = threading.Lock()
_fixed: float | None = None
_kind_lock = threading.Lock()
_kind: tuple[float, float] | None = None  # (ratio, time.monotonic() when measured)


def fixed_cost_ticks() -> float:
    """The add-chain timer's own cost in TSC ticks (fences, reads), measured
    once per process: 2 t(N) - t(2N) over _FIXED_REPEATS pairs, the mean of
    their middle half. A mean, not a median: each value is a multiple of
    the clock's step apart from the next, and only a mean over random
    phases lands between them (a median was a whole step, 0.3% of the
    chain, off from one process to the next)."""
    global _fixed
    if _fixed is not None:  # bench() asks on every call: no lock once known
        return _fixed
    with _lock:
        if _fixed is None:
            _core.add_chain_ticks(BRACKET_BLOCKS)  # warm up
            est = []
            for _ in range(_FIXED_REPEATS):
                single = _core.add_chain_ticks(BRACKET_BLOCKS)
                double = _core.add_chain_ticks(2 * BRACKET_BLOCKS)
                est.append(2 * single - double)
            _fixed = max(_middle_mean(est), 0.0)
        return _fixed


def _middle_mean(values: list[float]) -> float:
    """The mean of the middle half of `values`: a chain is only ever slowed,
    and each value sits on the clock's step, which a mean over random
    phases (not a median) lands between."""
    ordered = sorted(values)
    quarter = len(ordered) // 4
    return statistics.fmean(ordered[quarter: len(ordered) - quarter])


def clock_kind_ratio() -> float:
    """Core cycles per TSC tick by dependent imul chains over those by
    dependent add chains, measured now or within the last
    KIND_RATIO_MAX_AGE_S seconds: the TSC ticks of _KIND_REPEATS chains of
    3 x KIND_IMUL_BLOCKS x 100 adds over those of as many chains of
    KIND_IMUL_BLOCKS x 100 imuls (the same core cycles), each less the
    chain timer's fixed cost, means of their middle halves. 1 where the two
    clocks agree; above 1 where the adds run slower than one core cycle a
    link by the imul clock. About 0.2 ms."""
    known = fresh_kind_ratio()  # bench() asks on every call: no lock while it holds
    if known is not None:
        return known
    fixed = fixed_cost_ticks()
    with _kind_lock:
        known = fresh_kind_ratio()
        if known is None:
            global _kind
            _core.imul_chain_ticks(KIND_IMUL_BLOCKS)  # warm up
            adds, imuls = [], []
            for _ in range(_KIND_REPEATS):
                adds.append(_core.add_chain_ticks(3 * KIND_IMUL_BLOCKS) - fixed)
                imuls.append(_core.imul_chain_ticks(KIND_IMUL_BLOCKS) - fixed)
            known = _middle_mean(adds) / _middle_mean(imuls)
            _kind = (known, time.monotonic())
        return known


def fresh_kind_ratio() -> float | None:
    """The kind ratio while it holds (see :func:`clock_kind_ratio`), else
    None: not measured yet, or too old."""
    known = _kind
    return known[0] if known is not None and time.monotonic() - known[1] <= KIND_RATIO_MAX_AGE_S else None


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


def bracketed(target: str | int, runs: int, serialize: str,
              unroll: int) -> tuple[tuple, float, float]:
    """Time `target` (a method's name or a function's address) on the TSC
    between its brackets, in one C call: the opening one (the last closing
    one when recent, else timed now), the runs, the closing one straight
    after them, and the figure from both held against this thread's recent
    brackets (:func:`bracket_cycles_per_tick`'s rules, in csrc/bracket.c:
    bench() pays them on every call). Each bracket is a short warm-up chain
    (the first after other work runs slow now and then: about 1%, one time
    in three) and BRACKET_CHAINS chains of BRACKET_BLOCKS x 100 adds less
    the timer's fixed cost; one chain alone scatters by a few percent on a
    guest (on an AuthenticAMD family 25 model 1 (Zen 3) guest, 10,000 adds
    read 7595-8134 TSC ticks, 5th-95th percentile 1.27-1.33 core cycles per
    tick around 1.317). The figure is then moved to the midpoint of the add
    and imul clocks (:func:`clock_kind_ratio`). ((raw, empty, migrated,
    best, median), core cycles per TSC tick at the moment, its 95%
    half-width)."""
    raw, empty, migrated, best, median, value, ci95 = _core.bench_bracketed(
        target, runs, serialize, unroll, *_brackets())
    return (raw, empty, migrated, best, median), value, ci95


def diff_bracketed(target: str | int, runs: int, serialize: str,
                   k: int) -> tuple[tuple, float, float]:
    """:func:`bracketed` for bench_diff()'s runs of 2k against k copies:
    ((long, short, migrated), core cycles per TSC tick at the moment, its
    95% half-width)."""
    long, short, migrated, value, ci95 = _core.bench_diff_bracketed(target, runs, serialize, k, *_brackets())
    return (long, short, migrated), value, ci95


def _brackets() -> tuple[int, int, float, float, float]:
    """How the C core times the brackets: blocks and chains of each, the
    chain timer's fixed cost in TSC ticks, the disturbance tolerance, the
    imul clock over the add clock."""
    return BRACKET_BLOCKS, BRACKET_CHAINS, fixed_cost_ticks(), disturbance_tolerance(), clock_kind_ratio()


def disturbance_tolerance() -> float:
    """How far below the fastest chain of its side a bracket sample may read
    before it counts as disturbed (an interrupt or a preemption only ever
    lengthens a chain): three clock steps' worth of a chain, at least 1%.
    On a counter moving in 24.5-tick steps a 4,000-add chain spans about 125
    steps: 2.4%. The rule is the C core's (the one bench() uses)."""
    clk = clock()
    return _core.bracket_tolerance(clk.tsc_step_ticks, clk.cycles_per_tick, BRACKET_BLOCKS)


def bracket_cycles_per_tick(
    before: list[float], after: list[float], tolerance: float | None = None,
    recent: list[float] | tuple[float, ...] = (),
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
    scatter, the clock's step included)."""
    tol = disturbance_tolerance() if tolerance is None else tolerance
    return _core.bracket_figure(before, after, recent, tol)  # csrc/bracket.c: bench() pays it every call
