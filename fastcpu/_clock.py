"""What a TSC tick is worth on this machine: frequency, step and core cycles.

The TSC of a modern x86 CPU counts at a constant rate (the "invariant TSC"),
whatever the core clock does. A TSC tick is therefore *not* a core cycle:
on the AMD guest fastcpu was written on, the TSC runs at 2596 MHz while the
core runs near 3.3-4.1 GHz, about 1.27-1.6 core cycles per tick, and the
counter only moves every 10 ns: in steps of 25.96 ticks there, of 24.5 ticks on
a 2445 MHz host. The step need not be a whole number of ticks.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any

from . import _core

__all__ = ["Clock", "CounterUnits", "clock", "CalibrationWarning"]

# Calibration sizes: about 65 ms in all, once per process.
_FREQ_INTERVAL_S = 0.05
_STEP_READS = 4096
_CHAIN_BLOCKS = 2000  # 200,000 dependent adds (~55 us at 3.6 GHz)
_CHAIN_REPEATS = 21


@dataclass(frozen=True)
class CounterUnits:
    """What one count of the counter a result was read with is worth: the one
    place counts become nanoseconds and core cycles.

    For the TSC a count is a TSC tick; for the PMU's cycle counter it is one
    core cycle, counted at the core clock (steps of 1).

    Attributes:
        counter: ``'tsc'``, ``'pmu'`` or ``'pmu_user'``.
        hz: counts per second (the TSC's Hz, or the core clock's).
        step: the counter's granularity, in counts.
        cycles_per_count: core cycles per count (1 for the PMU).
    """

    counter: str
    hz: float
    step: float
    cycles_per_count: float

    def to_ns(self, counts: Any) -> Any:
        """Counts (a number or a numpy array) in nanoseconds."""
        return counts * 1e9 / self.hz

    def to_core_cycles(self, counts: Any) -> Any:
        """Counts (a number or a numpy array) in core cycles."""
        return counts * self.cycles_per_count

    def convert(self, counts: Any, unit: str) -> Any:
        """Counts in `unit`: ``'ticks'`` (unchanged), ``'ns'`` or ``'core_cycles'``."""
        if unit == "ns":
            return self.to_ns(counts)
        if unit == "core_cycles":
            return self.to_core_cycles(counts)
        if unit == "ticks":
            return counts
        raise ValueError(f"unknown unit {unit!r}: use one of ticks, ns, core_cycles")


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

    def units(self, counter: str = "tsc") -> CounterUnits:
        """What one count of `counter` is worth with this clock: a TSC tick
        (``'tsc'``), or one core cycle at :attr:`core_hz` (``'pmu'``,
        ``'pmu_user'``)."""
        if counter == "tsc":
            return CounterUnits(counter, self.tsc_hz, self.tsc_step_ticks, self.cycles_per_tick)
        if counter in ("pmu", "pmu_user"):
            return CounterUnits(counter, self.core_hz, 1, 1.0)
        raise ValueError(f"unknown counter {counter!r}: 'tsc', 'pmu' or 'pmu_user'")

    def ticks_to_ns(self, ticks: float) -> float:
        """Convert TSC ticks to nanoseconds."""
        return self.units().to_ns(ticks)

    def ticks_to_core_cycles(self, ticks: float) -> float:
        """Convert TSC ticks to core cycles (at the add chain's core clock)."""
        return self.units().to_core_cycles(ticks)


def _measure_tsc_hz() -> float:
    ns0, tsc0 = _core.tsc_ns_pair()
    time.sleep(_FREQ_INTERVAL_S)
    ns1, tsc1 = _core.tsc_ns_pair()
    return (tsc1 - tsc0) * 1e9 / (ns1 - ns0)


#: A chain timing this much above the fastest of its size was disturbed (an
#: interrupt, a signal, a preemption): the work is fixed, only time was added.
_DISTURBED_ABOVE_FASTEST = 0.015
#: Rounds of `repeats` pairs at most, stopping once half a round is clean.
_CHAIN_ROUNDS = 5
#: Fewer clean pairs than this: the figure is kept, with a warning.
_CHAIN_CLEAN_MIN = 5


class CalibrationWarning(RuntimeWarning):
    """The core-cycle calibration could not be trusted (most of its samples
    were disturbed); the message says how many were clean."""


def _chain_pair(blocks: int) -> tuple[int, int, bool]:
    """(ticks of N blocks, ticks of 2N blocks, migrated in between)."""
    before = _core.current_cpu()
    single = _core.add_chain_ticks(blocks)
    double = _core.add_chain_ticks(2 * blocks)
    return single, double, _core.current_cpu() != before


def clean_samples(pairs: list[tuple[int, int, bool]]) -> tuple[list[int], list[int]]:
    """(t(N), t(2N)) timings of the pairs that did not migrate, each within
    ``_DISTURBED_ABOVE_FASTEST`` of the fastest of its size: the undisturbed
    ones. Each size is kept on its own: a periodic disturbance (a timer
    signal) can land in every pair, in one half or the other."""
    settled = [(s, d) for s, d, migrated in pairs if not migrated]
    if not settled:
        return [], []
    fastest_single = min(s for s, _ in settled)
    fastest_double = min(d for _, d in settled)
    return ([s for s, _ in settled if s <= fastest_single * (1 + _DISTURBED_ABOVE_FASTEST)],
            [d for _, d in settled if d <= fastest_double * (1 + _DISTURBED_ABOVE_FASTEST)])


def add_chain_cycles_per_tick(blocks: int, repeats: int) -> float:
    """Core cycles per TSC tick: 100 * N dependent adds (N = `blocks`) over
    median t(2N) - median t(N) in TSC ticks, over timings that were neither
    migrated nor disturbed (:func:`clean_samples`). Takes `repeats` pairs,
    and more rounds of them (up to ``_CHAIN_ROUNDS``) until more than half a
    round, and at least ``_CHAIN_CLEAN_MIN``, of each size are clean; warns with :class:`CalibrationWarning` when fewer
    than ``_CHAIN_CLEAN_MIN`` of either are (a signal storm, a busy host)."""
    pairs: list[tuple[int, int, bool]] = []
    singles: list[int] = []
    doubles: list[int] = []
    for _ in range(_CHAIN_ROUNDS):
        pairs.extend(_chain_pair(blocks) for _ in range(repeats))
        singles, doubles = clean_samples(pairs)
        # enough for a figure without a warning: more than half a round,
        # and never fewer than the warning asks for (7 repeats stopped at 4
        # clean and then warned that 4 were too few)
        if min(len(singles), len(doubles)) >= max(repeats // 2 + 1, _CHAIN_CLEAN_MIN):
            break
    clean = min(len(singles), len(doubles))
    if not clean:  # every pair migrated: use them all, and say so
        singles, doubles = [s for s, _, _ in pairs], [d for _, d, _ in pairs]
    value = 100 * blocks / (statistics.median(doubles) - statistics.median(singles))
    if clean < _CHAIN_CLEAN_MIN:
        warnings.warn(
            f"cycles_per_tick could not be calibrated cleanly: {clean} of {len(pairs)} "
            f"add-chain samples were undisturbed (the rest interrupted, preempted or migrated); "
            f"core-cycle figures use {value:.3f} core cycles per TSC tick and may be off. Calibrate "
            "again on a quieter machine with fastcpu.clock(refresh=True)",
            CalibrationWarning, stacklevel=3)
    return value


def _measure_cycles_per_tick() -> float:
    """Core cycles per tick at clock()'s sizes, after a warm-up chain."""
    _core.add_chain_ticks(_CHAIN_BLOCKS)  # warm up the core clock and caches
    return add_chain_cycles_per_tick(_CHAIN_BLOCKS, _CHAIN_REPEATS)


_lock = threading.Lock()
_cached: Clock | None = None


def _after_fork_in_child() -> None:
    """A fork while another thread measured left `_lock` held in the child,
    where that thread does not exist: give the child a fresh one (it measures
    again on first use if nothing was cached)."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def clock(*, refresh: bool = False) -> Clock:
    """Measure this machine's clock once per process (about 65 ms) and return it.

    Args:
        refresh: measure again, and use the new figures from now on (results
            already returned keep theirs). A guest's core clock follows the
            host's load: on the machine fastcpu was written on,
            ``cycles_per_tick`` wanders by 2-3% over seconds, which moves
            every core-cycle conversion with it (docs/accuracy.md).

    Warns:
        CalibrationWarning: most samples of the core-cycle calibration were
            disturbed (interrupted, preempted or migrated), so
            ``cycles_per_tick`` may be off; disturbed samples are never used
            while clean ones exist.

    Raises:
        TypeError: `refresh` is not a bool.
        fastcpu.Unsupported: the TSC cannot be read here.
    """
    global _cached
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be a bool, not {type(refresh).__name__}")
    known = _cached
    if known is not None and not refresh:  # every bench() asks: no lock once measured
        return known
    with _lock:
        if _cached is None or refresh:
            _cached = Clock(
                tsc_hz=_measure_tsc_hz(),
                tsc_step_ticks=_core.tsc_step(_STEP_READS),
                cycles_per_tick=_measure_cycles_per_tick(),
            )
        return _cached
