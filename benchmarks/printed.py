"""Whether what a result prints holds the truth, as the benchmarks count
coverage: the 95% interval of a resolved cost, the bound ("< X core
cycles") of one below what the harness resolves. The caller puts the
checkout on sys.path."""

from __future__ import annotations

import fastcpu


def holds(r: fastcpu.BenchResult, truth_core_cycles: float) -> bool:
    """Whether `r`'s printed figure holds `truth_core_cycles` (core cycles
    per copy): its interval where :attr:`~fastcpu.BenchResult.resolved`,
    else its bound :attr:`~fastcpu.BenchResult.upper_bound` (in core
    cycles), which the truth must not exceed."""
    if r.resolved:
        return abs(r.estimate_core_cycles - truth_core_cycles) <= r.estimate_ci95_core_cycles
    return truth_core_cycles <= r.upper_bound_core_cycles
