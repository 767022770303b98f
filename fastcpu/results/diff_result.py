"""DiffResult: the differencing estimate of :func:`fastcpu.bench_diff`, one
interleaved measurement at 2k and k copies per run. ``DiffResult.from_arrays``
is the one way to build one."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import EllipsisType

import numpy as np

from .. import _base as _display
from . import estimate as _estimate
from .values import CatalogRow, Clock, recorded_row
from .parts import ClockMotion
from .estimated import Estimated, per_run_arrays, read_only


__all__ = ["DiffResult"]


@dataclass(frozen=True, eq=False)
class DiffResult(Estimated):
    """The differencing estimate of :func:`fastcpu.bench_diff` (docs/timing.md, "Calls back to back").

    Interleaved runs of 2k and k copies through the same copy loop; the cost
    per copy is the fenced mean of ``(long[i] - short[i]) / k``. Half the copy
    loop's own cost is taken off (:attr:`harness_bias_core_cycles`) and half is
    in the interval; a figure not above the loop's is the bound :attr:`upper_bound`.

    Attributes:
        method: the method's name (``'user:NAME'`` for a user function).
        runs, k: timed pairs; copies per run of the short side (long: 2k).
        serialize, cpu: the serialization mode; the pinned CPU or None.
        long, short: uint64 TSC ticks per run at 2k and k copies, harness included.
        migrated: bool per pair: the CPU changed across it.
        tsc_hz, cycles_per_tick, cycles_per_tick_ci95, tsc_step_ticks, counter,
        caveats, clock_motion: as for :class:`BenchResult`.
        copy_loop_core_cycles, copy_loop_ci95_core_cycles: the copy loop's own
            cost per copy and its 95% half-width, core cycles (0: not measured).
        catalog_row: its method's catalog row as measured, saved with it (as
            :attr:`BenchResult.catalog_row`; a file before 0.9 gives none and
            lends it the one-call result's of the same name); None for a user
            function."""

    method: str
    runs: int
    serialize: str
    k: int
    cpu: int | None
    long: np.ndarray = field(repr=False)
    short: np.ndarray = field(repr=False)
    migrated: np.ndarray = field(repr=False)
    tsc_hz: float
    cycles_per_tick: float
    tsc_step_ticks: float
    counter: str = "tsc"
    cycles_per_tick_ci95: float = 0.0
    caveats: tuple[str, ...] = ()
    clock_motion: ClockMotion | None = None
    copy_loop_core_cycles: float = 0.0
    copy_loop_ci95_core_cycles: float = 0.0
    catalog_row: CatalogRow | None = None

    def __post_init__(self) -> None:
        # finished when made: the arrays read-only views, the estimate computed
        self.__dict__.update(long=read_only(self.long), short=read_only(self.short),
                             migrated=read_only(self.migrated))
        self.__dict__["_recommended"] = _estimate.paired_difference(self.long, self.short, self.step, self.k,
                                                                    self.migrated)

    @classmethod
    def from_arrays(
        cls,
        *,
        method: str,
        serialize: str,
        k: int,
        cpu: int | None,
        long: np.ndarray,
        short: np.ndarray,
        migrated: np.ndarray,
        clock: Clock,
        counter: str = "tsc",
        cycles_per_tick: float | None = None,
        cycles_per_tick_ci95: float = 0.0,
        caveats: tuple[str, ...] = (),
        clock_motion: ClockMotion | None = None,
        copy_loop_core_cycles: float = 0.0,
        copy_loop_ci95_core_cycles: float = 0.0,
        catalog_row: CatalogRow | None | EllipsisType = ...,
    ) -> DiffResult:
        """The one way to build a DiffResult from per-pair arrays (as
        :meth:`BenchResult.from_arrays`; `catalog_row` not given: the newest
        recorded row of `method`).

        Raises:
            TypeError: the counts are not numbers, or `catalog_row` is no CatalogRow.
            ValueError: empty, multi-dimensional or unequal arrays, or a count out
                of range (the message names the array and the run)."""
        if catalog_row is ...:
            catalog_row = recorded_row(method, "")
        elif catalog_row is not None and not isinstance(catalog_row, CatalogRow):
            raise TypeError(f"catalog_row must be a CatalogRow or None, not {type(catalog_row).__name__}")
        long, short, migrated = per_run_arrays(long, short, migrated, ("long", "short", "pair"))
        return cls(
            method=method, runs=int(long.size), serialize=serialize, k=k, cpu=cpu, long=long,
            short=short, migrated=migrated, tsc_hz=clock.tsc_hz,
            cycles_per_tick=clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
            tsc_step_ticks=clock.tsc_step_ticks, counter=counter,
            cycles_per_tick_ci95=cycles_per_tick_ci95, caveats=tuple(caveats), clock_motion=clock_motion,
            copy_loop_core_cycles=float(copy_loop_core_cycles),
            copy_loop_ci95_core_cycles=float(copy_loop_ci95_core_cycles), catalog_row=catalog_row)

    @property
    def _loop_ticks(self) -> float:
        """The top of the copy loop's interval in counts (0: not measured or core cycles unknown)."""
        top = self.copy_loop_core_cycles + self.copy_loop_ci95_core_cycles
        per = self.units.cycles_per_count
        return top / per if top > 0 and math.isfinite(per) and per > 0 else 0.0

    @property
    def harness_bias_core_cycles(self) -> float:  # type: ignore[override]
        """Half the copy loop's cost, core cycles per copy, subtracted from :attr:`estimate` (0: unknown)."""
        return self.copy_loop_core_cycles / 2 if self._loop_ticks else 0.0

    @property
    def harness_bias_ci95_core_cycles(self) -> float:  # type: ignore[override]
        """The 95% half-width of :attr:`harness_bias_core_cycles`: the other
        half of the loop's cost, plus the loop's own half-width (core cycles)."""
        if not self._loop_ticks:
            return 0.0
        return self.copy_loop_core_cycles / 2 + self.copy_loop_ci95_core_cycles

    @property
    def resolved(self) -> bool:
        """Whether the 95% interval lies above the top of the copy loop's and above 0."""
        loop = self._loop_ticks
        if loop == 0:
            return super().resolved
        ticks, half = self._reading
        return ticks - half > loop

    @property
    def upper_bound(self) -> float:
        """For a cost not :attr:`resolved`, the top of its interval or the loop's, TSC ticks per copy; NaN if resolved."""
        loop = self._loop_ticks
        if loop == 0 or self.resolved:
            return super().upper_bound
        ticks, half = self._reading
        return max(ticks + half, loop, 1.0 / self._copies)

    @property
    def below_resolution_words(self) -> str:
        """Why a bound is shown: what hides a cost below it."""
        if self._loop_ticks:
            return "within the copy loop's own cost per copy"
        return super().below_resolution_words

    def __repr__(self) -> str:
        """One line: the method, its estimate per copy in core cycles (and TSC
        ticks, ns) with the 95% half-width, k and the pairs of runs."""
        counter = f", counter={self.counter!r}" if self.counter != "tsc" else ""
        return (f"<fastcpu.DiffResult {_display.one_line(self.method)}: {self._estimate_words()} "
                f"per copy by differencing {self.k} and {2 * self.k} copies, {self.runs} pairs, "
                f"serialize={self.serialize!r}{counter}{self._caveat_words()}>")

    def _repr_html_(self) -> str:
        """The result as an HTML table, for Jupyter."""
        d = _display
        where = f"pinned to CPU {self.cpu}" if self.cpu is not None else "not pinned"
        facts = (f"{self.runs} interleaved pairs of runs at {self.k} and {2 * self.k} copies "
                 f"({self.runs_used} used, {self.migrations} migrated), "
                 f"serialize={self.serialize!r}, {where}")
        return d.block(
            d.table(["", *self._units_columns()], self._statistic_rows(),
                    caption=f"fastcpu.DiffResult {self.method}: cost per copy by differencing"),
            d.paragraph(facts),
            d.paragraph("differencing cancels what the harness adds once per run; the copy loop's own "
                        "cost may add to the body wholly, partly or not at all, and a body faster than "
                        "the loop reads as the loop"
                        + (f" (the loop: {_display.figure(self.copy_loop_core_cycles, self.copy_loop_ci95_core_cycles)} "
                           "core cycles per copy here; half of it taken off, the other half in the interval)"
                           if self.copy_loop_core_cycles else "")),
            d.paragraph(self._clock_words()),
            d.bullets(self.caveats, "caveats"),
        )

    def __str__(self) -> str:
        if self.resolved:
            cost = (f"{self.estimate:.2f} +- {self.estimate_ci95:.2f} ticks per copy "
                    f"({self.estimate_core_cycles:.2f} core cycles)")
        else:
            cost = (f"< {self.upper_bound:.2f} ticks per copy (< {self.upper_bound_core_cycles:.2f} core cycles: "
                    f"{self.below_resolution_words})")
        return (f"{self.method}: {cost} by differencing "
                f"{self.k} and {2 * self.k} copies over {self.runs} interleaved pairs of runs")

