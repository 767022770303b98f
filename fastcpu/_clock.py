"""What a TSC tick is worth on this machine: frequency, step and core cycles.

The TSC of a modern x86 CPU counts at a constant rate (the "invariant TSC"),
whatever the core clock does. A TSC tick is therefore *not* a core cycle:
on the AMD guest fastcpu was written on, the TSC runs at 2596 MHz while the
core runs near 3.3-4.1 GHz, about 1.27-1.6 core cycles per tick, and the
counter only moves every 10 ns: in steps of 25.96 ticks there, of 24.5 ticks on
a 2445 MHz host. The step need not be a whole number of ticks.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

from . import _core

__all__ = ["Clock", "clock"]

# Calibration sizes: about 65 ms in all, once per process.
_FREQ_INTERVAL_S = 0.05
_STEP_READS = 4096
_CHAIN_BLOCKS = 2000  # 200,000 dependent adds (~55 us at 3.6 GHz)
_CHAIN_REPEATS = 21


@dataclass(frozen=True)
class Clock:
    """The clock fastcpu measures with.

    Attributes:
        tsc_hz: TSC ticks per second, measured against CLOCK_MONOTONIC_RAW.
        tsc_step_ticks: the counter's granularity in TSC ticks, a float (about
            26 or 24.5 on guests whose TSC advances every 10 ns; 1 on most bare
            metal).
        cycles_per_tick: core cycles per TSC tick, from a dependent chain of
            1-cycle adds timed at N and 2N (no PMU needed).
    """

    tsc_hz: float
    tsc_step_ticks: float
    cycles_per_tick: float

    @property
    def core_hz(self) -> float:
        """Core cycles per second implied by the add chain."""
        return self.tsc_hz * self.cycles_per_tick

    @property
    def tsc_step_ns(self) -> float:
        """The counter's granularity in nanoseconds."""
        return self.tsc_step_ticks * 1e9 / self.tsc_hz

    def ticks_to_ns(self, ticks: float) -> float:
        """Convert TSC ticks to nanoseconds."""
        return ticks * 1e9 / self.tsc_hz

    def ticks_to_core_cycles(self, ticks: float) -> float:
        """Convert TSC ticks to core cycles (at the add chain's core clock)."""
        return ticks * self.cycles_per_tick


def _measure_tsc_hz() -> float:
    ns0, tsc0 = _core.tsc_ns_pair()
    time.sleep(_FREQ_INTERVAL_S)
    ns1, tsc1 = _core.tsc_ns_pair()
    return (tsc1 - tsc0) * 1e9 / (ns1 - ns0)


def add_chain_cycles_per_tick(blocks: int, repeats: int) -> float:
    """Core cycles per TSC tick: 100 * N dependent adds (N = `blocks`) over
    the median of t(2N) - t(N) in TSC ticks, over `repeats` pairs."""
    diffs = []
    for _ in range(repeats):
        single = _core.add_chain_ticks(blocks)
        double = _core.add_chain_ticks(2 * blocks)
        diffs.append(double - single)
    return 100 * blocks / statistics.median(diffs)


def _measure_cycles_per_tick() -> float:
    """Core cycles per tick at clock()'s sizes, after a warm-up chain."""
    _core.add_chain_ticks(_CHAIN_BLOCKS)  # warm up the core clock and caches
    return add_chain_cycles_per_tick(_CHAIN_BLOCKS, _CHAIN_REPEATS)


_lock = threading.Lock()
_cached: Clock | None = None


def clock(*, refresh: bool = False) -> Clock:
    """Measure this machine's clock once per process (about 65 ms) and return it.

    Args:
        refresh: measure again, and use the new figures from now on (results
            already returned keep theirs). A guest's core clock follows the
            host's load: on the machine fastcpu was written on,
            ``cycles_per_tick`` wanders by 2-3% over seconds, which moves
            every core-cycle conversion with it (docs/accuracy.md).

    Raises:
        TypeError: `refresh` is not a bool.
        fastcpu.Unsupported: the TSC cannot be read here.
    """
    global _cached
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be a bool, not {type(refresh).__name__}")
    with _lock:
        if _cached is None or refresh:
            _cached = Clock(
                tsc_hz=_measure_tsc_hz(),
                tsc_step_ticks=_core.tsc_step(_STEP_READS),
                cycles_per_tick=_measure_cycles_per_tick(),
            )
        return _cached
