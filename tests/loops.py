"""Results with calls back to back added from known costs: DiffResults built
from synthetic paired runs (no timing involved), for the tests of what the
analysis kit shows of the second question."""

from __future__ import annotations

import dataclasses

import numpy as np

import fastcpu


def loop_result(method: str, cost_ticks: float, res: fastcpu.Results, k: int = 16, runs: int = 400,
                seed: int = 0, jitter_ticks: float = 2.0) -> fastcpu.DiffResult:
    """A DiffResult of `method` costing `cost_ticks` per call, on `res`'s clock:
    runs of k and 2k copies over a harness of 60-62 ticks, with jitter."""
    rng = np.random.default_rng(seed)
    base = 60 + rng.integers(0, 3, runs)
    short = base + np.round(k * cost_ticks + rng.normal(0, jitter_ticks, runs)).clip(0)
    long = base + np.round(2 * k * cost_ticks + rng.normal(0, jitter_ticks, runs)).clip(0)
    return fastcpu.DiffResult.from_arrays(method=method, serialize=res.serialize, k=k, cpu=None,
                                          long=long.astype("u8"), short=short.astype("u8"),
                                          migrated=np.zeros(runs, bool), clock=res.clock)


def with_loops(res: fastcpu.Results, costs: dict[str, float], label: str | None = None) -> fastcpu.Results:
    """`res` with calls back to back of each method of `costs` (TSC ticks per call)."""
    loops = {m: loop_result(m, c, res, seed=i) for i, (m, c) in enumerate(costs.items())}
    return dataclasses.replace(res, back_to_back=loops, label=label or res.label)
