"""BenchResult and DiffResult: the raw per-run counts of one measurement and
their statistics, and :func:`stability`, the report on one result.

:meth:`BenchResult.from_arrays` is the one way to build a BenchResult from
arrays: :func:`fastcpu.bench`, a result file and the noise model all go
through it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from types import EllipsisType
from typing import Any

import numpy as np

from . import _display, _estimate, _statistics
from ._args import (CYCLES_PER_TICK_RANGE, HARNESS_BIAS_MAX_CORE_CYCLES, RUNS_MAX, UNITS, UNROLL_MAX,
                    check_figure, check_int, check_label, check_sentences)
from ._machine import CPU_NUMBER_MAX
from ._catalog_rows import CatalogRow, recorded_row
from ._clock_values import Clock, CounterUnits
from ._clock_motion import ClockMotion
from ._locks import cached_property
from ._stability import Stability, assess

__all__ = ["BenchResult", "DiffResult", "stability"]


#: What a result may have counted (BenchResult.counter).
COUNTERS = ("tsc", "pmu", "pmu_user")


def _checked_fields(method: object, serialize: object, unroll: object, cpu: object, counter: object,
                    cycles_per_tick: object, cycles_per_tick_ci95: object, bias: object, bias_ci95: object,
                    caveats: object) -> dict[str, Any]:
    """A BenchResult's settings and figures as a result file's reader takes
    them back (the same ranges, from ``_args``), or TypeError/ValueError
    naming the field: whatever a constructor accepts saves and loads back."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, not {type(method).__name__}")
    check_label(method, "method")  # text UTF-8 can hold, as a file does
    if not isinstance(serialize, str):
        raise TypeError(f"serialize must be a str, not {type(serialize).__name__}")
    check_label(serialize, "serialize")
    if not isinstance(counter, str) or counter not in COUNTERS:
        raise ValueError(f"counter must be one of {', '.join(map(repr, COUNTERS))}, not {counter!r}")
    cpt = check_figure("cycles_per_tick", cycles_per_tick, *CYCLES_PER_TICK_RANGE, "core cycles per TSC tick",
                       nan=True)
    fields = {
        "unroll": check_int("unroll", unroll, 1, UNROLL_MAX),
        "cpu": None if cpu is None else check_int("cpu", cpu, 0, CPU_NUMBER_MAX - 1),
        "cycles_per_tick": cpt,
        "cycles_per_tick_ci95": check_figure("cycles_per_tick_ci95", cycles_per_tick_ci95, 0,
                                             CYCLES_PER_TICK_RANGE[1], "core cycles per TSC tick"),
        "caveats": check_sentences("caveats", caveats),
    }
    fields.update(_checked_bias(bias, bias_ci95, cpt))
    return fields


def _checked_motion(motion: object) -> ClockMotion | None:
    """`motion` a ClockMotion or None (how the core clock moved: no other kind)."""
    if motion is not None and not isinstance(motion, ClockMotion):
        raise TypeError(f"clock_motion must be a fastcpu.types.ClockMotion or None, not {type(motion).__name__}")
    return motion


def _checked_bias(bias: object, bias_ci95: object, cycles_per_tick: float) -> dict[str, float]:
    """The harness bias and its 95% half-width, core cycles, within what a
    result file holds (none where core cycles are unknown)."""
    out = {"harness_bias_core_cycles": check_figure(
               "harness_bias_core_cycles", bias, -HARNESS_BIAS_MAX_CORE_CYCLES, HARNESS_BIAS_MAX_CORE_CYCLES,
               "core cycles"),
           "harness_bias_ci95_core_cycles": check_figure(
               "harness_bias_ci95_core_cycles", bias_ci95, 0, HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles")}
    if math.isnan(cycles_per_tick) and any(out.values()):
        raise ValueError("a harness bias in core cycles where core cycles per tick are unknown (NaN): "
                         "give 0.0, 0.0")
    return out


def _deprecated_clock(cls_name: str) -> None:
    warnings.warn(f"{cls_name}.clock (the counter a result was timed with) is now "
                  f"{cls_name}.counter; .clock will be removed", DeprecationWarning, stacklevel=3)


def _take_old_clock(result: Any, clock: str | None) -> None:
    """The deprecated constructor keyword ``clock=``: the counter's old name."""
    if clock is None:
        return
    warnings.warn(f"{type(result).__name__}(clock=...) is now counter=...; clock= will be "
                  "removed", DeprecationWarning, stacklevel=4)
    if result.counter != "tsc" and result.counter != clock:
        raise TypeError("give counter= or its old name clock=, not both")
    object.__setattr__(result, "counter", clock)


class _Estimated:
    """What BenchResult and DiffResult share: unit conversions with the
    result's clock and counter, and the recommended estimate (a subclass
    defines ``_recommended``) with its interval, in TSC ticks, ns and core
    cycles."""

    tsc_hz: float
    cycles_per_tick: float
    tsc_step_ticks: float
    counter: str
    migrated: np.ndarray
    _recommended: _estimate.Estimate  # each result type says how it estimates
    # The harness's own systematic error and its 95% half-width, core cycles
    # per copy, as the self-test measured it (fastcpu.selftest): subtracted
    # from the estimate and added to its interval. 0 where none was applied
    # (DiffResult, unrolled or PMU results, files written before 0.3.0).
    harness_bias_core_cycles: float = 0.0
    harness_bias_ci95_core_cycles: float = 0.0
    # The 95% half-width of cycles_per_tick (0: not known).
    cycles_per_tick_ci95: float = 0.0
    # The smallest cost the harness resolves, core cycles (0: not measured).
    harness_resolution_core_cycles: float = 0.0
    # What the figures cannot be trusted for, and why (rulers that disagree,
    # a failed self-test): one sentence each, shown with the warnings.
    caveats: tuple[str, ...] = ()

    @property
    def units(self) -> CounterUnits:
        """What one count of :attr:`counter` was worth: a TSC tick, or one
        core cycle for a PMU counter (the Hz, the step, core cycles per count)."""
        return Clock(self.tsc_hz, self.tsc_step_ticks, self.cycles_per_tick).units(self.counter)

    @property
    def step(self) -> float:
        """The granularity of what was counted, in its counts: ``tsc_step_ticks``
        for the TSC, 1 for a PMU counter."""
        return self.units.step

    def ticks_to_ns(self, ticks: float) -> float:
        """Convert counts of this result's counter (TSC ticks, or core cycles
        for a PMU counter) to nanoseconds."""
        return self.units.to_ns(ticks)

    def ticks_to_core_cycles(self, ticks: float) -> float:
        """Convert counts of this result's counter (TSC ticks, or core cycles
        for a PMU counter) to core cycles."""
        return self.units.to_core_cycles(ticks)

    @property
    def estimate(self) -> float:
        """The cost per copy fastcpu recommends, in TSC ticks (above the empty
        sequence for a BenchResult; core cycles when measured with a PMU
        counter), with the harness bias (:attr:`harness_bias_core_cycles`)
        subtracted where the cost is resolved (:attr:`resolved`). An
        unresolved cost is the reading as it came, at least 0 (never a
        negative cost): what it tells is the bound :attr:`upper_bound`, which
        every table shows instead."""
        if self.resolved:
            return self._recommended.ticks - self.harness_bias_ticks
        return max(self._recommended.ticks, 0.0)

    @property
    def resolved(self) -> bool:
        """Whether the cost stands out from the empty sequence: the
        uncorrected estimate's 95% interval lies above 0. The harness hides
        what a body's latency overlaps with its closing fence (the self-test's
        bias, a few core cycles on some hosts) and the counter has a step:
        a body that reads within its interval of the empty one is below what
        the harness resolves, and its cost is known only as a bound
        (:attr:`upper_bound`), never as a negative or zero cost."""
        rec = self._recommended
        half = rec.ci95_ticks if math.isfinite(rec.ci95_ticks) else 0.0
        return rec.ticks - half > 0

    @property
    def upper_bound(self) -> float:
        """For a cost that is not :attr:`resolved`, what it is below, in TSC
        ticks per copy (core cycles with a PMU counter): the top of the
        reading's interval (at least 0), plus how far a negative reading fell
        below 0 (an error of the harness at least that large), plus what the
        harness hides (the self-test's bias where negative, with its
        interval) and how far its zero strays: the smallest cost it resolves
        (:attr:`harness_resolution_core_cycles`), at least one count over
        the copies of a run. NaN for a resolved cost."""
        if self.resolved:
            return math.nan
        rec = self._recommended
        half = rec.ci95_ticks if math.isfinite(rec.ci95_ticks) else 0.0
        bound = max(rec.ticks + half, 0.0) + max(-rec.ticks, 0.0) + self._resolution_ticks
        return max(bound, 1.0 / self._copies)

    @property
    def _resolution_ticks(self) -> float:
        """:attr:`harness_resolution_core_cycles` in counts of the counter (0 where unknown)."""
        res = self.harness_resolution_core_cycles
        if res == 0:
            return 0.0
        per = self.units.cycles_per_count
        return res / per if math.isfinite(per) and per > 0 else 0.0

    @property
    def upper_bound_ns(self) -> float:
        """:attr:`upper_bound` in ns (NaN for a resolved cost)."""
        return self.units.convert(self.upper_bound, "ns")

    @property
    def upper_bound_core_cycles(self) -> float:
        """:attr:`upper_bound` in core cycles, widened by the conversion's own
        uncertainty (NaN for a resolved cost, or where core cycles are unknown)."""
        bound = self.upper_bound
        extra = bound * self.cycles_per_tick_ci95 if self.counter == "tsc" else 0.0
        return self.units.convert(bound, "core_cycles") + extra

    def cost_text(self, unit: str = "core_cycles", digits: int = 1) -> str:
        """The cost as every table shows it, in `unit` (``'ticks'``, ``'ns'``
        or ``'core_cycles'``), without the unit's name: ``'4.2 +- 0.9'`` for
        a resolved cost, ``'< 3.1'`` for one below what the harness resolves
        (:attr:`upper_bound`), never a negative cost."""
        if not self.resolved:
            bound = {"ticks": self.upper_bound, "ns": self.upper_bound_ns,
                     "core_cycles": self.upper_bound_core_cycles}[unit]
            return f"< {bound:.{digits}f}"
        stat = _statistics.statistic("estimate")
        return f"{stat.value(self, unit):.{digits}f} +- {stat.half_width(self, unit):.{digits}f}"

    @property
    def _copies(self) -> int:
        """Copies of the sequence a run times: the finest a count can say per copy."""
        return int(getattr(self, "unroll", None) or getattr(self, "k", 1) or 1)

    @property
    def harness_bias_ticks(self) -> float:
        """:attr:`harness_bias_core_cycles` in counts of this result's counter
        (TSC ticks) per copy (this result's conversion; 0 where none was applied,
        even while core cycles are unknown)."""
        if self.harness_bias_core_cycles == 0:
            return 0.0
        return self.harness_bias_core_cycles / self.units.cycles_per_count

    @property
    def estimate_random_ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`estimate` from the runs'
        scatter alone (the random part), in TSC ticks per copy."""
        return self._recommended.ci95_ticks

    @property
    def estimate_systematic_ci95(self) -> float:
        """Half-width of the uncertainty of the harness-bias correction (the
        systematic part), in TSC ticks per copy; 0 where the cost is not
        :attr:`resolved` (no correction applied to it)."""
        return self._bias_ci95_ticks if self.resolved else 0.0

    @property
    def _bias_ci95_ticks(self) -> float:
        if self.harness_bias_ci95_core_cycles == 0:
            return 0.0
        return self.harness_bias_ci95_core_cycles / self.units.cycles_per_count

    @property
    def estimate_ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`estimate`, in TSC ticks per
        copy: the random part plus the systematic part, added linearly (a
        bound, not a quadrature sum: the systematic error is not random from
        one measurement to the next)."""
        return self.estimate_random_ci95 + self.estimate_systematic_ci95

    @property
    def estimator(self) -> str:
        """Which statistic :attr:`estimate` is: ``'median'``, ``'paired_mean'`` or ``'diff'``."""
        return self._recommended.estimator

    @property
    def runs_used(self) -> int:
        """Runs (pairs) the estimate rests on: not migrated, inside the outlier fence."""
        return self._recommended.runs_used

    @property
    def migrations(self) -> int:
        """How many runs (pairs) migrated to another CPU."""
        return int(np.count_nonzero(self.migrated))

    def __getattr__(self, name: str) -> float:
        """``NAME_ns``, ``NAME_core_cycles``, ``NAME_ci95_ns`` and
        ``NAME_ci95_core_cycles`` of every statistic of ``_statistics.STATISTICS``
        (``best_ns``, ``estimate_ci95_core_cycles``): the statistic in that unit,
        converted with this result's clock; a half-width in core cycles is
        widened by what :attr:`cycles_per_tick_ci95` does to the value."""
        if name.startswith("__"):  # copy, pickle and friends probe for dunders
            raise AttributeError(name)
        return _statistics.attribute(self, name)

    # ---- how a result shows itself (repr, and HTML in a notebook) ----

    @property
    def _counts_unit(self) -> str:
        """What one count of the counter is, in words."""
        return "TSC ticks" if self.counter == "tsc" else "core cycles"

    def _estimate_words(self) -> str:
        """The estimate for a repr(): core cycles, then TSC ticks (for the
        TSC; a PMU count is a core cycle) and ns."""
        fig = _display.figure
        others = [f"{fig(self.estimate_ns, self.estimate_ci95_ns)} ns"]
        if self.counter == "tsc":
            others.insert(0, f"{fig(self.estimate, self.estimate_ci95)} TSC ticks")
        if math.isnan(self.estimate_core_cycles) and self.caveats:  # the rulers disagree
            return f"estimate {', '.join(others)} (core cycles unknown here)"
        return (f"estimate {fig(self.estimate_core_cycles, self.estimate_ci95_core_cycles)} "
                f"core cycles ({', '.join(others)})")

    def _caveat_words(self) -> str:
        """Each caveat's gist (up to its colon) for a one-line repr; '' when none."""
        return "".join(f"; {_display.one_line(c.split(':', 1)[0], 80)}" for c in self.caveats)

    def _units(self) -> list[str]:
        """The units of the HTML table: the counter's counts (TSC ticks; none
        apart for a PMU counter, whose count is a core cycle), ns, core cycles."""
        return [u for u in UNITS if u != "ticks" or self.counter == "tsc"]

    def _units_columns(self) -> list[str]:
        return [UNITS[u].words for u in self._units()]

    def _statistic_rows(self) -> list[list[object]]:
        """The HTML rows of each statistic shown there: one with an interval
        as value +- 95% and the interval, one without as its value, in every unit."""
        rows: list[list[object]] = []
        for s in _statistics.shown_in("html"):
            if not s.applies_to(self):
                continue
            value = [s.value(self, u) for u in self._units()]
            if not s.has_interval:
                rows.append([f"{s.name} (above empty)", *(f"{v:.2f}" for v in value)])
                continue
            half = [s.half_width(self, u) for u in self._units()]
            label = f"{s.name} ({self.estimator})" if s.name == "estimate" else s.name
            rows.append([f"{label} \u00b1 95%", *(_display.plus_minus(v, h) for v, h in zip(value, half))])
            rows.append([f"{s.name} 95% interval" if s.name != "estimate" else "95% interval",
                         *(_display.interval(v, h) for v, h in zip(value, half))])
        return rows

    def _correction_words(self) -> str:
        """The harness-bias correction, and the interval's two parts."""
        unit = self._counts_unit
        if self.harness_bias_core_cycles == 0 and self.harness_bias_ci95_core_cycles == 0:
            return (f"no harness-bias correction applied; the 95% interval is the runs' scatter, "
                    f"\u00b1 {self.estimate_random_ci95:.2f} {unit}")
        if self.harness_bias_core_cycles == 0:
            return (f"no harness-bias correction applied (the self-test failed); the 95% interval adds "
                    f"the bias it did not subtract, \u00b1 {self.estimate_systematic_ci95:.2f} {unit} "
                    f"(systematic), to the runs' \u00b1 {self.estimate_random_ci95:.2f} {unit} (random)")
        return (f"harness bias {self.harness_bias_core_cycles:.2f} \u00b1 "
                f"{self.harness_bias_ci95_core_cycles:.2f} core cycles per copy subtracted "
                f"(fastcpu.selftest's, from the known-cost chains on the measuring host); the "
                f"95% interval adds its \u00b1 {self.estimate_systematic_ci95:.2f} {unit} "
                f"(systematic) to the runs' \u00b1 {self.estimate_random_ci95:.2f} {unit} (random)")

    def _clock_words(self) -> str:
        return (f"clock: TSC {self.tsc_hz / 1e6:.2f} MHz, step {self.tsc_step_ticks:.4g} TSC ticks, "
                f"{self.cycles_per_tick:.3f} core cycles per TSC tick; counter={self.counter!r}")


@dataclass(frozen=True, eq=False)
class BenchResult(_Estimated):
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
        migrated: bool per run: the CPU changed across the pair (read
            before its first timed run and after its second). The
            recommended estimate leaves such pairs out; best and median
            keep them.
        best: min(raw) - min(empty), per copy, in TSC ticks (core cycles
            when ``counter`` is a PMU counter, as for every "ticks" figure).
        median: median(raw) - median(empty), per copy, in TSC ticks (core
            cycles with a PMU counter).
        tsc_hz: TSC ticks per second of the clock it was measured with
            (:class:`fastcpu.Clock`), whatever the counter.
        cycles_per_tick: core cycles per TSC tick: for :func:`fastcpu.bench`,
            measured inside the measurement by ruler points (an add chain
            and an imul chain) between stretches of the runs, each stretch
            converted with the points around it (``fastcpu._conversion``),
            not at first use; NaN while the clock's two rulers disagree (see
            :attr:`caveats`).
        tsc_step_ticks: the TSC's granularity, in TSC ticks.
        counter: the counter the runs were timed with: ``'tsc'`` (the
            default), or with ``counter='pmu'`` the PMU's core-cycle counter,
            ``'pmu'`` (user and kernel cycles) or ``'pmu_user'`` (user-mode
            cycles only, as perf_event_paranoid allowed). With a PMU counter
            every count is one core cycle: :attr:`units` says what a count
            is worth, and the conversions use it. Its old name ``clock``
            still works, deprecated.
        harness_bias_core_cycles: what the harness itself adds to a
            single-copy estimate on this host, in core cycles, as measured by
            :func:`fastcpu.selftest` on the known-cost chains; subtracted
            from :attr:`estimate` (0: none applied).
        harness_bias_ci95_core_cycles: the 95% half-width of that correction
            in core cycles (its spread over chains and its own scatter);
            added to :attr:`estimate_ci95`.
        cycles_per_tick_ci95: the 95% half-width of ``cycles_per_tick`` (how
            far the clock moved inside each stretch, the counter's step in the
            ruler points and half the two rulers' disagreement; 0 when not
            known); widens :attr:`estimate_ci95_core_cycles`.
        clock_motion: how the core clock moved during the runs (levels,
            hops, disturbed ruler points: :class:`fastcpu.types.ClockMotion`);
            None without ruler points (a PMU counter, a file before 0.7).
        harness_resolution_core_cycles: the smallest cost the harness
            resolves on this host, core cycles per copy (what it hides of a
            body and how far its zero strays, with their intervals, as
            :func:`fastcpu.selftest` measured them; 0: not measured): an
            ESTIMATE that does not stand out from it is shown as a bound
            (:attr:`upper_bound`).
        caveats: what the figures cannot be trusted for here, one sentence
            each: core cycles unknown because the clock's rulers disagree,
            no harness correction because the self-test failed. Shown first
            among :attr:`warnings`.
        catalog_row: its method's catalog row as the fastcpu that measured
            it had it (:class:`~fastcpu._catalog_rows.CatalogRow`: kind,
            role, encoding, description), saved with it: what every reader
            of its file goes by, never the reading machine's catalog (a
            file of format version 1 to 3 gets its writer's, as recorded in
            the package; one built by hand, by :meth:`from_arrays`, the
            package's newest recorded row of its name). None for a user
            function: then it is no way to learn the CPU, and plots show it
            with the user functions.

    Besides best and median, every result carries the estimate fastcpu
    recommends for it (:attr:`estimate`, :attr:`estimate_ci95`,
    :attr:`estimator`; see :mod:`fastcpu._estimate`), whether best and median
    are too close to the clock's step to be trusted alone
    (:attr:`resolution_limited`), and a stability report (:attr:`warnings`).
    These are computed from the arrays on first access, so a result rebuilt
    from saved constructor fields has them too. ``repr()`` is one line with
    the estimate; in Jupyter the result shows as an HTML table.
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
    tsc_step_ticks: float
    counter: str = "tsc"
    harness_bias_core_cycles: float = 0.0
    harness_bias_ci95_core_cycles: float = 0.0
    cycles_per_tick_ci95: float = 0.0
    caveats: tuple[str, ...] = ()
    clock_motion: ClockMotion | None = None
    harness_resolution_core_cycles: float = 0.0
    catalog_row: CatalogRow | None = None
    clock: InitVar[str | None] = None  # deprecated: the old name of counter

    def __post_init__(self, clock: str | None) -> None:
        _take_old_clock(self, clock)
        # the constructor checks what from_arrays() checks, and that the
        # figures it is given are those of its arrays (as load() does)
        raw, empty, migrated = _per_run_arrays(self.raw, self.empty, self.migrated, ("raw", "empty", "run"))
        fields = _checked_fields(self.method, self.serialize, self.unroll, self.cpu, self.counter,
                                 self.cycles_per_tick, self.cycles_per_tick_ci95, self.harness_bias_core_cycles,
                                 self.harness_bias_ci95_core_cycles, self.caveats)
        Clock(self.tsc_hz, self.tsc_step_ticks, self.cycles_per_tick)  # the clock's ranges
        if self.runs != raw.size:
            raise ValueError(f"runs is {self.runs!r}, but the arrays hold {raw.size} runs")
        for name, given, computed in (("best", self.best, _estimate.best_ticks(raw, empty, fields["unroll"])),
                                      ("median", self.median, _estimate.median_ticks(raw, empty, fields["unroll"]))):
            if not isinstance(given, (int, float)) or not math.isclose(float(given), computed, rel_tol=1e-9,
                                                                        abs_tol=1e-9):
                raise ValueError(f"{name} is {given!r}, but its arrays give {computed!r}: leave it to "
                                 "BenchResult.from_arrays()")
        self.__dict__.update(fields, raw=raw, empty=empty, migrated=migrated, runs=int(raw.size),
                             best=float(self.best), median=float(self.median),
                             tsc_hz=float(self.tsc_hz), tsc_step_ticks=float(self.tsc_step_ticks))

    @classmethod
    def from_arrays(
        cls,
        *,
        method: str,
        serialize: str,
        unroll: int,
        cpu: int | None,
        raw: np.ndarray,
        empty: np.ndarray,
        migrated: np.ndarray,
        clock: Clock,
        counter: str = "tsc",
        best: float | None = None,
        median: float | None = None,
        cycles_per_tick: float | None = None,
        cycles_per_tick_ci95: float = 0.0,
        harness_bias_core_cycles: float = 0.0,
        harness_bias_ci95_core_cycles: float = 0.0,
        caveats: tuple[str, ...] = (),
        clock_motion: ClockMotion | None = None,
        harness_resolution_core_cycles: float = 0.0,
        catalog_row: CatalogRow | None | EllipsisType = ...,
    ) -> BenchResult:
        """The one way to build a BenchResult from per-run arrays.

        ``runs`` is their length; ``best`` and ``median`` are computed from
        them by the C core's formulas unless given (:func:`fastcpu.bench`
        passes the C core's own, computed without a copy of the arrays).

        Args:
            raw, empty: counts of `counter` per run (TSC ticks for the
                TSC): whole numbers from 0 to 2**64-1 of any numeric dtype,
                converted to uint64; migrated: one bool per run. All three
                of the same length, at least 1.
            clock: the :class:`fastcpu.Clock` of the measurement.
            counter: ``'tsc'``, ``'pmu'`` or ``'pmu_user'``.
            cycles_per_tick: core cycles per TSC tick, overriding the
                clock's, for a result converted with the figure measured
                around it (with its 95% half-width, `cycles_per_tick_ci95`).
            harness_bias_core_cycles, harness_bias_ci95_core_cycles: the
                harness bias applied (core cycles; 0: none).
            caveats: what the figures cannot be trusted for, and why.
            clock_motion: how the core clock moved during the runs, as
                their ruler points saw it (None: no ruler points).
            harness_resolution_core_cycles: the smallest cost the harness
                resolves (core cycles; 0: not measured).
            catalog_row: its method's catalog row (:func:`fastcpu.bench`
                gives the catalog's; None: none, as for a user function).
                Not given: the row of `method` in the newest catalog
                recorded in the package (``_catalog_rows``), or None for a
                name it lacks.

        Raises:
            TypeError: a field of the wrong type, the counts not numbers,
                `clock` not a Clock, or `catalog_row` not a CatalogRow or None.
            ValueError: the arrays are empty, not one-dimensional, of
                different lengths or longer than ``RUNS_MAX``; a count is NaN,
                infinite, negative, fractional or 2**64 or more (the message
                names the array and the run); a setting or figure outside
                what a result file holds (the message names it: unroll
                1..UNROLL_MAX, a cpu 0 or more, a counter of ``'tsc'``,
                ``'pmu'``, ``'pmu_user'``, core cycles per tick from 1e-3 to
                1e3 or NaN, a harness bias or resolution within +-1e6 core
                cycles and none where core cycles are unknown, at most 100
                caveats of 2,000 characters, a clock_motion that is no
                ClockMotion). Counts of 2**53 or more are refused by
                :meth:`Results.save`, naming the run.
        """
        if catalog_row is not None and catalog_row is not ... and not isinstance(catalog_row, CatalogRow):
            raise TypeError(f"catalog_row must be a CatalogRow or None, not {type(catalog_row).__name__}")
        if catalog_row is ...:
            catalog_row = recorded_row(method, "")
        raw, empty, migrated = _per_run_arrays(raw, empty, migrated, ("raw", "empty", "run"))
        if raw.size > RUNS_MAX:
            raise ValueError(f"the arrays hold {raw.size} runs, more than the {RUNS_MAX} (RUNS_MAX) "
                             "one measurement may")
        if not isinstance(clock, Clock):
            raise TypeError(f"clock must be a fastcpu.Clock, not {type(clock).__name__}")
        fields = _checked_fields(method, serialize, unroll, cpu, counter,
                                 clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
                                 cycles_per_tick_ci95, harness_bias_core_cycles, harness_bias_ci95_core_cycles,
                                 caveats)
        unroll = fields["unroll"]
        # Every field at once, not through the dataclass's generated __init__:
        # a frozen class sets each of its 19 fields with object.__setattr__,
        # about 6 us a result on the Zen 3 guest (AuthenticAMD family 25
        # model 1), bench(m, 1000)'s largest Python cost. __post_init__ checks
        # what is checked above, and the arrays' best and median, which are
        # computed here.
        result = object.__new__(cls)
        result.__dict__.update(
            method=method,
            runs=int(raw.size),
            serialize=serialize,
            raw=raw,
            empty=empty,
            migrated=migrated,
            best=_estimate.best_ticks(raw, empty, unroll) if best is None else best,
            median=_estimate.median_ticks(raw, empty, unroll) if median is None else median,
            tsc_hz=clock.tsc_hz,
            tsc_step_ticks=clock.tsc_step_ticks,
            counter=counter,
            **fields,
            clock_motion=_checked_motion(clock_motion),
            harness_resolution_core_cycles=check_figure(
                "harness_resolution_core_cycles", harness_resolution_core_cycles, 0,
                HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles"),
            catalog_row=catalog_row,
        )
        return result

    def with_harness_bias(self, bias_core_cycles: float, ci95_core_cycles: float) -> BenchResult:
        """This result with the harness bias (core cycles per copy, and its
        95% half-width) applied to its estimate, its resolution and caveats
        as they are (:meth:`with_harness_correction` sets those too).

        Raises:
            TypeError: a figure is not a number.
            ValueError: a figure outside what a result file holds (the bias
                within +-1e6 core cycles, its half-width 0 to 1e6), or a
                bias where core cycles per tick are unknown.
        """
        return self.with_harness_correction(bias_core_cycles, ci95_core_cycles,
                                            self.harness_resolution_core_cycles, self.caveats)

    def with_harness_correction(self, bias_core_cycles: float, ci95_core_cycles: float,
                                resolution_core_cycles: float, caveats: tuple[str, ...]) -> BenchResult:
        """This result corrected: the harness bias (core cycles per copy) and
        its 95% half-width applied to its estimate, the smallest cost the
        harness resolves (core cycles; 0: not measured) and its `caveats` in
        place of its own; every figure that follows from them (the estimate,
        its interval, :attr:`resolved`, :attr:`upper_bound`, the warnings)
        derived afresh, as :meth:`from_arrays` would with these fields.
        :func:`fastcpu.bench`'s correction, from :func:`fastcpu.selftest`
        (``_selftest.corrected``).

        Raises:
            TypeError: a figure is not a number, or caveats not a tuple of str.
            ValueError: a figure outside what a result file holds (the bias
                and resolution within +-1e6 core cycles, the half-width 0 to
                1e6), a bias where core cycles per tick are unknown, or more
                caveats, or longer, than a file holds.
        """
        bias = _checked_bias(bias_core_cycles, ci95_core_cycles, self.cycles_per_tick)
        resolution = check_figure("harness_resolution_core_cycles", resolution_core_cycles, 0,
                                  HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles")
        # every other field as it is (checked when this one was built), none
        # of the figures cached from the old ones (a copy of the instance's
        # dict less its cached values: a third of a comprehension's cost,
        # and this runs on every bench())
        state = self.__dict__.copy()
        for name in _CACHED:
            state.pop(name, None)
        state.update(bias, harness_resolution_core_cycles=resolution,
                     caveats=check_sentences("caveats", caveats))
        result = object.__new__(type(self))
        result.__dict__.update(state)
        return result

    # ---- the recommended estimate (computed on first access) ----

    @cached_property
    def _recommended(self) -> _estimate.Estimate:
        return _estimate.recommend(self.raw, self.empty, self.step, self.unroll, self.migrated)

    @cached_property
    def _paired_mean(self) -> _estimate.Estimate:
        if self._recommended.estimator == "paired_mean":
            return self._recommended
        return _estimate.paired_mean(self.raw, self.empty, self.step, self.unroll, self.migrated)

    @property
    def paired_mean(self) -> float:
        """The fenced mean of the paired differences raw[i] - empty[i] per copy,
        in TSC ticks (core cycles with a PMU counter), uncorrected: the estimator
        ``'paired_mean'``, whichever :attr:`estimator` is recommended."""
        return self._paired_mean.ticks

    @property
    def paired_mean_ci95(self) -> float:
        """The 95% half-width of :attr:`paired_mean`, TSC ticks per copy."""
        return self._paired_mean.ci95_ticks

    @property
    def resolution_limited(self) -> bool:
        """True when best or median is within a few clock steps (fewer than
        ``RESOLUTION_STEPS`` = 10 per run): a one-step error is then 10% or
        more, so trust :attr:`estimate` and its interval rather than them."""
        return _estimate.resolution_limited(self.best, self.median, self.step, self.unroll)

    # ---- the stability report ----

    @cached_property
    def stability(self) -> Stability:
        """Spread, outliers, migrations and this machine's settings, with
        warnings (see :func:`fastcpu.stability`). The machine checks read
        the machine the result is looked at on."""
        return stability(self)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Why this result may be less trustworthy than it looks (never raises)."""
        return self.stability.warnings

    def __repr__(self) -> str:
        """One line: the method, its estimate in core cycles (and TSC ticks,
        ns) with the 95% half-width, the runs and the settings."""
        settings = f"serialize={self.serialize!r}"
        if self.unroll != 1:
            settings += f", unroll={self.unroll}"
        if self.counter != "tsc":
            settings += f", counter={self.counter!r}"
        return (f"<fastcpu.BenchResult {_display.one_line(self.method)}: {self._estimate_words()}, "
                f"{self.runs} runs, {settings}{self._caveat_words()}>")

    def _repr_html_(self) -> str:
        """The result as an HTML table, for Jupyter: the estimate with its
        95% interval, best and median, in TSC ticks, ns and core cycles; the
        harness-bias correction; the warnings."""
        d = _display
        rows = self._statistic_rows()
        where = f"pinned to CPU {self.cpu}" if self.cpu is not None else "not pinned"
        facts = (f"{self.runs} runs ({self.runs_used} used by the estimate, {self.migrations} "
                 f"migrated), serialize={self.serialize!r}, unroll={self.unroll}, {where}")
        notes = [d.paragraph(facts), d.paragraph(self._correction_words()), d.paragraph(self._clock_words())]
        if self.resolution_limited:
            notes.append(d.paragraph("best and median sit within a few clock steps (resolution "
                                     "limited): trust the estimate and its interval rather than them"))
        return d.block(
            d.table(["", *self._units_columns()], rows,
                    caption=f"fastcpu.BenchResult {self.method}: cost per copy above the empty sequence"),
            *notes,
            d.bullets(self.warnings, "warnings (the figures stand; these say what may skew them)"),
        )

    def __str__(self) -> str:
        unit = "ticks" if self.counter == "tsc" else "PMU cycles"
        return (
            f"{self.method}: best {self.best:.1f} {unit} ({self.best_ns:.2f} ns, "
            f"{self.best_core_cycles:.1f} core cycles), median {self.median:.1f} {unit} "
            f"({self.median_ns:.2f} ns, {self.median_core_cycles:.1f} core cycles) "
            f"over {self.runs} runs, serialize={self.serialize}, unroll={self.unroll}; "
            f"estimate {self.estimate:.2f} +- {self.estimate_ci95:.2f} {unit} "
            f"({self.estimate_core_cycles:.1f} core cycles, {self.estimator})"
        )


@dataclass(frozen=True, eq=False)
class DiffResult(_Estimated):
    """The differencing estimate of :func:`fastcpu.bench_diff`.

    One interleaved measurement of the same sequence at 2k and at k
    back-to-back copies per run (alternating which comes first, like
    :func:`fastcpu.bench`'s method and empty runs), both through the same
    copy loop. The cost per copy is the mean of the paired differences
    ``(long[i] - short[i]) / k`` inside an outlier fence, migrated pairs
    left out, which cancels whatever the harness adds or hides once per run
    (nanoBench's and uarch-bench's method). For a throughput-bound sequence
    it is a throughput figure; for a dependent chain, its latency. It
    includes the copy loop's own cost per copy (an add and a fused cmp/jne,
    about 1-1.5 core cycles per copy here) where the body is faster than
    that loop: below about 2 core cycles per copy it reads the loop.

    Attributes:
        method: the method's name (``'user:NAME'`` for a user function).
        runs: number of timed pairs.
        serialize: the serialization mode.
        k: copies per run of the short side (the long side has 2k).
        cpu: the CPU the thread was pinned to, or ``None``.
        long: uint64 TSC ticks of each run at 2k copies, harness included.
        short: uint64 TSC ticks of each run at k copies, harness included.
        migrated: bool per pair: the CPU changed across it.
        tsc_hz, cycles_per_tick, tsc_step_ticks, counter: as for
            :class:`BenchResult` (``clock``, the old name of ``counter``,
            still works, deprecated); on the TSC, ``cycles_per_tick`` is
            measured around the runs, as bench() brackets its own.
        cycles_per_tick_ci95: the 95% half-width of ``cycles_per_tick``
            (0: not known, e.g. the first-use figure).
        caveats, clock_motion: as for :class:`BenchResult`.
    """

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
    clock: InitVar[str | None] = None  # deprecated: the old name of counter
    cycles_per_tick_ci95: float = 0.0
    caveats: tuple[str, ...] = ()
    clock_motion: ClockMotion | None = None

    def __post_init__(self, clock: str | None) -> None:
        _take_old_clock(self, clock)

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
    ) -> DiffResult:
        """The one way to build a DiffResult from per-pair arrays, as
        :meth:`BenchResult.from_arrays` builds a BenchResult: ``runs`` is
        their length, `cycles_per_tick` overrides the clock's (None: the
        clock's).

        Raises:
            TypeError: the counts are not numbers.
            ValueError: the arrays are empty, not one-dimensional or of
                different lengths, or a count is NaN, infinite, negative,
                fractional or 2**64 or more (the message names the array
                and the run).
        """
        long, short, migrated = _per_run_arrays(long, short, migrated, ("long", "short", "pair"))
        return cls(
            method=method, runs=int(long.size), serialize=serialize, k=k, cpu=cpu, long=long,
            short=short, migrated=migrated, tsc_hz=clock.tsc_hz,
            cycles_per_tick=clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
            tsc_step_ticks=clock.tsc_step_ticks, counter=counter,
            cycles_per_tick_ci95=cycles_per_tick_ci95, caveats=tuple(caveats), clock_motion=clock_motion)

    @cached_property
    def _recommended(self) -> _estimate.Estimate:
        return _estimate.paired_difference(self.long, self.short, self.step, self.k, self.migrated)

    def __repr__(self) -> str:
        """One line: the method, its estimate per copy in core cycles (and TSC
        ticks, ns) with the 95% half-width, k and the pairs of runs."""
        counter = f", counter={self.counter!r}" if self.counter != "tsc" else ""
        return (f"<fastcpu.DiffResult {_display.one_line(self.method)}: {self._estimate_words()} "
                f"per copy by differencing {self.k} and {2 * self.k} copies, {self.runs} pairs, "
                f"serialize={self.serialize!r}{counter}{self._caveat_words()}>")

    def _repr_html_(self) -> str:
        """The result as an HTML table, for Jupyter: the differencing estimate
        with its 95% interval in TSC ticks, ns and core cycles."""
        d = _display
        where = f"pinned to CPU {self.cpu}" if self.cpu is not None else "not pinned"
        facts = (f"{self.runs} interleaved pairs of runs at {self.k} and {2 * self.k} copies "
                 f"({self.runs_used} used, {self.migrations} migrated), "
                 f"serialize={self.serialize!r}, {where}")
        return d.block(
            d.table(["", *self._units_columns()], self._statistic_rows(),
                    caption=f"fastcpu.DiffResult {self.method}: cost per copy by differencing"),
            d.paragraph(facts),
            d.paragraph("no harness-bias correction: differencing cancels what the harness adds "
                        "once per run; below about 2 core cycles per copy it reads the copy loop"),
            d.paragraph(self._clock_words()),
            d.bullets(self.caveats, "caveats"),
        )

    def __str__(self) -> str:
        return (
            f"{self.method}: {self.estimate:.2f} +- {self.estimate_ci95:.2f} ticks per copy "
            f"({self.estimate_core_cycles:.2f} core cycles) by differencing "
            f"{self.k} and {2 * self.k} copies over {self.runs} interleaved pairs of runs"
        )


def _per_run_arrays(a: Any, b: Any, migrated: Any, names: tuple[str, str, str]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two arrays of counts (uint64) and one of migrations (bool), one value
    per run (pair), contiguous: what from_arrays() takes. `names`: the two
    arrays' names and what one value stands for, for the messages.

    Raises:
        TypeError: the counts are not numbers.
        ValueError: empty, not one-dimensional, of different lengths, or a
            count that is no count (NaN, infinite, negative, fractional,
            2**64 or more): converted to uint64 it would read as a huge or
            wrong number of ticks.
    """
    first, second, unit = names
    a, b = np.asarray(a), np.asarray(b)
    migrated = np.ascontiguousarray(migrated, dtype=np.bool_)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{first} must be a non-empty 1-D array of TSC ticks, not shape {a.shape}")
    if b.shape != a.shape or migrated.shape != a.shape:
        raise ValueError(
            f"{first}, {second} and migrated must have one value per {unit}: lengths "
            f"{a.size}, {b.size} and {migrated.size} differ"
        )
    return _counts(a, first, unit), _counts(b, second, unit), migrated


def _counts(a: np.ndarray, name: str, unit: str) -> np.ndarray:
    """`a` (1-D) as contiguous uint64 counts, refused (naming `name` and the
    first bad `unit`) where a value is no count: a cast would turn NaN or a
    negative into a count near 2**63 or 2**64, and a fraction into another
    count, silently."""
    kind = a.dtype.kind
    if kind == "u":  # what bench() passes: nothing to check
        return np.ascontiguousarray(a, dtype=np.uint64)
    if kind not in "if":
        raise TypeError(f"{name} must hold counts (whole TSC ticks, or core cycles), not {a.dtype} "
                        "values: pass the measurement's counts as integers (uint64)")
    if kind == "i":
        bad = a < 0
    else:
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(a) | (a < 0) | (a >= 2.0**64) | (a != np.floor(a))
    if bad.any():
        at = int(np.argmax(bad))
        value = a[at].item()
        what = ("NaN" if value != value else "infinite" if kind == "f" and math.isinf(value)
                else "negative" if value < 0 else "2**64 or more" if value >= 2.0**64 else "fractional")
        raise ValueError(
            f"{name} holds {value!r} at {unit} {at}, which is {what}: a count of TSC ticks (or core "
            f"cycles) is a whole number from 0 to 2**64-1; leave that {unit} out of every array "
            "(or measure again), and pass counts as integers, e.g. the uint64 arrays bench() gives")
    return np.ascontiguousarray(a, dtype=np.uint64)


def _clock_alias(self: Any) -> str:
    _deprecated_clock(type(self).__name__)
    return self.counter


#: What a BenchResult computes from its fields on first access and keeps in
#: its ``__dict__`` (every cached_property of the class and its bases): what
#: with_harness_correction() leaves out of its copy.
_CACHED = tuple(name for klass in BenchResult.__mro__ for name, value in vars(klass).items()
                if isinstance(value, cached_property))

# The old name of `counter`, read-only, deprecated. Set after the classes are
# made: the dataclass takes `clock` as a constructor keyword (an InitVar).
BenchResult.clock = property(_clock_alias, doc="Deprecated: the old name of :attr:`counter`.")  # type: ignore[assignment,method-assign]
DiffResult.clock = property(_clock_alias, doc="Deprecated: the old name of :attr:`counter`.")  # type: ignore[assignment,method-assign]


def stability(result: BenchResult, machine: Mapping[str, Any] | None = None) -> Stability:
    """The stability report of one result. Never raises for a bad measurement:
    it only says what to distrust.

    Args:
        result: a :class:`fastcpu.BenchResult`.
        machine: the machine's settings as a ``machine_info()``-style dict,
            for a result measured elsewhere; ``None`` reads this machine.

    Raises:
        TypeError: `result` is not a BenchResult, or `machine` not a dict of
            facts of the types machine_info() gives.
    """
    if not isinstance(result, BenchResult):
        raise TypeError(f"stability() reports on one fastcpu.BenchResult, not {type(result).__name__}"
                        + (": pick one, e.g. results['gdt']" if isinstance(result, Mapping) else ""))
    extra = list(result.caveats)
    # A user function's call and return cost the empty baseline about
    # -harness_bias core cycles that a longer body hides: a body shorter than
    # that reads as the overhead, whatever it is (docs/accuracy.md).
    overhead = -result.harness_bias_core_cycles
    if result.method.startswith("user:") and overhead > 0 and (
        result.estimate_core_cycles - result.estimate_ci95_core_cycles < overhead
    ):
        extra.append(
            f"the function may be shorter than its call's own cost (about {overhead:.0f} core "
            "cycles here), which a body that short does not hide: it then reads as that cost; "
            "bench_diff() cancels the call's latency, though not the pace of calls back to back "
            "(a few core cycles)"
        )
    return assess(result.raw, result.empty, result.migrated, result.step, result.cpu,
                  result.counter, machine, extra)
