"""The seed-style BEST/MEDIAN table, in TSC ticks, ns and core cycles."""

from __future__ import annotations

from collections.abc import Iterable

from ._clock import Clock
from ._result import BenchResult

__all__ = ["format_clock", "format_table"]


def format_clock(clk: Clock) -> str:
    return (
        f"clock: TSC {clk.tsc_hz / 1e6:.2f} MHz, step {clk.tsc_step_ticks} ticks "
        f"({clk.tsc_step_ns:.1f} ns), {clk.cycles_per_tick:.3f} core cycles per tick "
        f"(core {clk.core_hz / 1e9:.2f} GHz by a dependent add chain)"
    )


def format_table(results: Iterable[BenchResult], unavailable: Iterable[tuple[str, str | None]] = ()) -> str:
    """Rows of BEST and MEDIAN above the empty sequence, then (name, reason) of what could not run."""
    results = list(results)
    missing = list(unavailable)
    w = max([14] + [len(r.method) for r in results] + [len(name) for name, _ in missing])
    lines = [
        f"{'':{w}} {'BEST (above empty)':^27}   {'MEDIAN (above empty)':^27}",
        f"{'METHOD':{w}} {'ticks':>9} {'ns':>8} {'cycles':>8}   "
        f"{'ticks':>9} {'ns':>8} {'cycles':>8}  migrated",
    ]
    for r in results:
        lines.append(
            f"{r.method:{w}} {r.best:9.1f} {r.best_ns:8.2f} {r.best_core_cycles:8.1f}   "
            f"{r.median:9.1f} {r.median_ns:8.2f} {r.median_core_cycles:8.1f}  {r.migrations:8d}"
        )
    if missing:
        lines.append("")
        lines.append("not available here:")
        lines.extend(f"  {name:{w}} {reason}" for name, reason in missing)
    return "\n".join(lines)
