"""The one way to build a BenchResult from raw per-run arrays.

Loading a result file and simulating one with the noise model both go
through :func:`bench_result_from_arrays`, so the statistics are always
computed from the arrays by the same formula the C core uses, and a new
field of BenchResult needs handling in one place only.
"""

from __future__ import annotations

import numpy as np

from ._clock import Clock
from ._result import BenchResult

__all__ = ["bench_result_from_arrays", "best_ticks", "median_ticks"]


def best_ticks(raw: np.ndarray, empty: np.ndarray, unroll: int) -> float:
    """``(min(raw) - min(empty)) / unroll``: TSC ticks per copy above the empty sequence."""
    return (float(raw.min()) - float(empty.min())) / unroll


def median_ticks(raw: np.ndarray, empty: np.ndarray, unroll: int) -> float:
    """``(median(raw) - median(empty)) / unroll``: TSC ticks per copy above the empty sequence."""
    return (float(np.median(raw)) - float(np.median(empty))) / unroll


def bench_result_from_arrays(
    *,
    method: str,
    serialize: str,
    unroll: int,
    cpu: int | None,
    raw: np.ndarray,
    empty: np.ndarray,
    migrated: np.ndarray,
    clock: Clock,
    cycles_per_tick: float | None = None,
    harness_bias_core_cycles: float = 0.0,
    harness_bias_ci95_core_cycles: float = 0.0,
    cycles_per_tick_ci95: float = 0.0,
) -> BenchResult:
    """A BenchResult whose ``runs``, ``best`` and ``median`` come from its arrays.

    `cycles_per_tick` (core cycles per TSC tick) overrides the clock's, for a
    result converted with the figure measured around it; the harness bias
    (core cycles, see :class:`BenchResult`) is 0 unless given.
    `raw` and `empty` are TSC ticks per run (converted to uint64), `migrated`
    one bool per run; all three must have the same length, at least 1.

    Raises:
        ValueError: the arrays are empty, not one-dimensional or of
            different lengths.
    """
    raw = np.ascontiguousarray(raw, dtype=np.uint64)
    empty = np.ascontiguousarray(empty, dtype=np.uint64)
    migrated = np.ascontiguousarray(migrated, dtype=np.bool_)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"raw must be a non-empty 1-D array of TSC ticks, not shape {raw.shape}")
    if empty.shape != raw.shape or migrated.shape != raw.shape:
        raise ValueError(
            f"raw, empty and migrated must have one value per run: lengths "
            f"{raw.size}, {empty.size} and {migrated.size} differ"
        )
    return BenchResult(
        method=method,
        runs=int(raw.size),
        serialize=serialize,
        unroll=unroll,
        cpu=cpu,
        raw=raw,
        empty=empty,
        migrated=migrated,
        best=best_ticks(raw, empty, unroll),
        median=median_ticks(raw, empty, unroll),
        tsc_hz=clock.tsc_hz,
        cycles_per_tick=clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
        tsc_step_ticks=clock.tsc_step_ticks,
        harness_bias_core_cycles=harness_bias_core_cycles,
        harness_bias_ci95_core_cycles=harness_bias_ci95_core_cycles,
        cycles_per_tick_ci95=cycles_per_tick_ci95,
    )
