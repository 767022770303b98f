"""The seed-style BEST/MEDIAN table, in TSC ticks, ns and core cycles."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ._clock import Clock
from ._bench_result import BenchResult

__all__ = ["format_clock", "format_table", "format_warnings"]


def format_clock(clk: Clock) -> str:
    """The clock in a header: the TSC's rate and granularity (and, apart, the
    spacing of back-to-back reads), core cycles per tick with the rulers'
    verdict, and what the core does with immediate-add chains."""
    spacing = (f"; back-to-back reads {clk.tsc_read_spacing_ticks:.0f} ticks apart"
               if math.isfinite(clk.tsc_read_spacing_ticks) else "")
    head = (f"clock: TSC {clk.tsc_hz / 1e6:.2f} MHz, granularity {clk.tsc_step_ticks:.4g} ticks "
            f"({clk.tsc_step_ns:.1f} ns{spacing}), ")
    problem = clk.core_cycles_problem
    if problem:
        return head + f"core cycles per tick UNKNOWN: {problem}"
    r = clk.rulers
    if r is None:
        return head + f"{clk.cycles_per_tick:.3f} core cycles per tick (core {clk.core_hz / 1e9:.2f} GHz)"
    return head + (
        f"{clk.cycles_per_tick:.3f} core cycles per tick (core {clk.core_hz / 1e9:.2f} GHz by "
        f"register-register adds; imul/3 reads {r.imul_cycles_per_tick:.3f}, tolerance "
        f"{r.tolerance:.1%}); {r.immediate_add_words()}"
    )


def format_table(results: Iterable[BenchResult], unavailable: Iterable[tuple[str, str | None]] = ()) -> str:
    """Rows of BEST, MEDIAN and the recommended ESTIMATE above the empty
    sequence, then (name, reason) of what could not run. A ``*`` after a
    MEDIAN marks a result whose best or median sits within a few clock steps
    (resolution limited)."""
    results = list(results)
    missing = list(unavailable)
    w = max([14] + [len(r.method) for r in results] + [len(name) for name, _ in missing])
    lines = [
        (
            f"{'':{w}} {'BEST (above empty)':^27}   {'MEDIAN (above empty)':^27}    "
            f"{'ESTIMATE (recommended)':^24}"
        ).rstrip(),
        (
            f"{'METHOD':{w}} {'ticks':>9} {'ns':>8} {'cycles':>8}   "
            f"{'ticks':>9} {'ns':>8} {'cycles':>8}    {'ticks':>8} {'+-95%':>6} {'cycles':>8}"
            f" {'estimator':11} migrated"
        ),
    ]
    for r in results:
        mark = "*" if r.resolution_limited else " "
        lines.append(
            f"{r.method:{w}} {r.best:9.1f} {r.best_ns:8.2f} {r.best_core_cycles:8.1f}   "
            f"{r.median:9.1f} {r.median_ns:8.2f} {r.median_core_cycles:8.1f}{mark}   "
            f"{r.estimate:8.2f} {r.estimate_ci95:6.2f} {r.estimate_core_cycles:8.2f} "
            f"{r.estimator:11} {r.migrations:8d}"
        )
    if missing:
        lines.append("")
        lines.append("not available here:")
        lines.extend(f"  {name:{w}} {reason}" for name, reason in missing)
    return "\n".join(lines)


def format_warnings(results: Iterable[BenchResult]) -> str:
    """The stability warnings of `results`: the machine's once, then each
    method's own. Empty when there is nothing to say."""
    results = list(results)
    machine: list[str] = []
    per_method: list[str] = []
    for r in results:
        report = r.stability
        # a caveat (core cycles unknown, no correction) is said once, not per method
        machine.extend(w for w in (*report.machine_warnings, *r.caveats) if w not in machine)
        per_method.extend(f"{r.method}: {w}" for w in report.run_warnings if w not in r.caveats)
    if not machine and not per_method:
        return ""
    lines = ["warnings (the figures stand; these say what may skew them):"]
    lines.extend(f"  - {w}" for w in machine + per_method)
    return "\n".join(lines)
