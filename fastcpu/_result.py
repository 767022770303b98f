"""BenchResult: the raw per-run TSC ticks of one measurement and its statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["BenchResult"]


@dataclass(frozen=True, eq=False)
class BenchResult:
    """One call of :func:`fastcpu.bench`.

    The seed's statistics, in TSC ticks per copy of the sequence, with the
    empty sequence (the harness alone, timed the same way and interleaved
    with the method's runs) subtracted: ``best = (min(raw) - min(empty)) /
    unroll`` and ``median = (median(raw) - median(empty)) / unroll``. "best
    20" means "20 ticks more than the empty sequence".

    Attributes:
        method: the method's name (``'user:NAME'`` for a user function).
        runs: number of timed runs.
        serialize: the serialization mode (``'lfence'``, ``'cpuid'``,
            ``'rdtscp'``).
        unroll: back-to-back copies of the sequence per run.
        cpu: the CPU the thread was pinned to, or ``None``.
        raw: uint64 TSC ticks of each run of the method, harness included.
        empty: uint64 TSC ticks of each run of the empty sequence.
        migrated: bool per run: the CPU differed at the end of the method's run.
        best: min(raw) - min(empty), per copy, in TSC ticks.
        median: median(raw) - median(empty), per copy, in TSC ticks.
        tsc_hz: TSC ticks per second of the clock it was measured with.
        cycles_per_tick: core cycles per TSC tick of that clock.
        tsc_step_ticks: the counter's granularity, in TSC ticks.
    """

    method: str
    runs: int
    serialize: str
    unroll: int
    cpu: int | None
    raw: np.ndarray = field(repr=False)
    empty: np.ndarray = field(repr=False)
    migrated: np.ndarray = field(repr=False)
    best: float
    median: float
    tsc_hz: float
    cycles_per_tick: float
    tsc_step_ticks: int

    def ticks_to_ns(self, ticks: float) -> float:
        """Convert TSC ticks to nanoseconds with this result's clock."""
        return ticks * 1e9 / self.tsc_hz

    def ticks_to_core_cycles(self, ticks: float) -> float:
        """Convert TSC ticks to core cycles with this result's clock."""
        return ticks * self.cycles_per_tick

    @property
    def best_ns(self) -> float:
        """``best`` in nanoseconds."""
        return self.ticks_to_ns(self.best)

    @property
    def median_ns(self) -> float:
        """``median`` in nanoseconds."""
        return self.ticks_to_ns(self.median)

    @property
    def best_core_cycles(self) -> float:
        """``best`` in core cycles."""
        return self.ticks_to_core_cycles(self.best)

    @property
    def median_core_cycles(self) -> float:
        """``median`` in core cycles."""
        return self.ticks_to_core_cycles(self.median)

    @property
    def migrations(self) -> int:
        """How many runs migrated to another CPU."""
        return int(np.count_nonzero(self.migrated))

    def __str__(self) -> str:
        return (
            f"{self.method}: best {self.best:.1f} ticks ({self.best_ns:.2f} ns, "
            f"{self.best_core_cycles:.1f} core cycles), median {self.median:.1f} ticks "
            f"({self.median_ns:.2f} ns, {self.median_core_cycles:.1f} core cycles) "
            f"over {self.runs} runs, serialize={self.serialize}, unroll={self.unroll}"
        )
