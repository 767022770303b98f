"""Core cycles per TSC tick at the moment of a measurement.

A guest's core clock follows the host's load: on the hosts fastcpu has run
on, ``cycles_per_tick`` moved by several percent within minutes, so the
figure measured at first use (:func:`fastcpu.clock`) can be stale by the
time a measurement is converted. :func:`bench` therefore times one
dependent add chain just before and one just after each measurement and
converts with their mean.

A warm-up chain and three measured ones per bracket keep it cheap (about 2.5 us each, 20 us a measurement): its fixed cost (the
fences around it) is measured once per process, from chains of N and 2N
blocks, and subtracted. Nothing here assumes a clock step or a core: the
chain's length is long against any 10 ns step (about 0.3% of it), and the
fixed cost is measured on the host at hand.
"""

from __future__ import annotations

import statistics
import threading

from . import _core

__all__ = ["BRACKET_BLOCKS", "BRACKET_CHAINS", "bracket_samples", "bracket_cycles_per_tick", "fixed_cost_ticks"]

#: 100 dependent adds per block: 8,000 adds, about 2.5 us at 3.2 GHz, about
#: 250 clock steps of 10 ns, so one step is 0.4% of the chain.
BRACKET_BLOCKS = 80
#: Chains per bracket (their median).
BRACKET_CHAINS = 3
_FIXED_REPEATS = 41

_lock = threading.Lock()
_fixed: float | None = None


def fixed_cost_ticks() -> float:
    """The add-chain timer's own cost in TSC ticks (fences, reads), measured
    once per process: 2 t(N) - t(2N) over _FIXED_REPEATS pairs, the mean of
    their middle half. A mean, not a median: each value is a multiple of
    the clock's step apart from the next, and only a mean over random
    phases lands between them (a median was a whole step, 0.3% of the
    chain, off from one process to the next)."""
    global _fixed
    with _lock:
        if _fixed is None:
            _core.add_chain_ticks(BRACKET_BLOCKS)  # warm up
            est = []
            for _ in range(_FIXED_REPEATS):
                single = _core.add_chain_ticks(BRACKET_BLOCKS)
                double = _core.add_chain_ticks(2 * BRACKET_BLOCKS)
                est.append(2 * single - double)
            est.sort()
            middle = est[len(est) // 4: len(est) - len(est) // 4]
            _fixed = max(statistics.fmean(middle), 0.0)
        return _fixed


def bracket_samples() -> list[float]:
    """Core cycles per TSC tick now, BRACKET_CHAINS times: chains of
    BRACKET_BLOCKS x 100 adds, less the timer's fixed cost. On a guest one
    chain alone scatters by a few percent (the host's other work on the
    core, interrupts): on an AMD Zen 3 guest, 10,000 adds read 7595-8134
    ticks, 5th-95th percentile 1.27-1.33 core cycles per tick around 1.317."""
    fixed = fixed_cost_ticks()
    # the first chain after other work runs slow now and then (about 1%
    # here, 1 time in 3): it warms up and is dropped
    _core.add_chain_ticks(BRACKET_BLOCKS)
    return [
        100 * BRACKET_BLOCKS / max(_core.add_chain_ticks(BRACKET_BLOCKS) - fixed, 1.0)
        for _ in range(BRACKET_CHAINS)
    ]


def bracket_cycles_per_tick(before: list[float], after: list[float]) -> tuple[float, float]:
    """(core cycles per TSC tick, its 95% half-width) for a measurement
    bracketed by the samples `before` and `after`: the mean of the two
    medians (the median drops a slow chain), and as half-width half the gap
    between the medians (how far the core clock moved across the
    measurement) plus two median absolute deviations of all the samples
    (their scatter, the clock's step included; robust to the one chain an
    interrupt lengthened)."""
    mb, ma = statistics.median(before), statistics.median(after)
    everything = before + after
    center = statistics.median(everything)
    mad = statistics.median(abs(v - center) for v in everything)
    return (mb + ma) / 2, abs(ma - mb) / 2 + 2 * mad
