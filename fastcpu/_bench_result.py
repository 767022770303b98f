"""BenchResult and DiffResult: the raw per-run counts of one measurement and
their statistics, and :func:`stability`, the report on one result.

:meth:`BenchResult.from_arrays` is the one way to build a BenchResult from
arrays: :func:`fastcpu.bench`, a result file and the noise model all go
through it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from types import EllipsisType
from typing import Any

import numpy as np

from . import _display, _estimate, _statistics
from ._args import UNITS
from ._catalog_rows import CatalogRow, recorded_row
from ._clock_values import Clock, CounterUnits
from ._stability import Stability, assess

__all__ = ["BenchResult", "DiffResult", "stability"]


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
        subtracted."""
        return self._recommended.ticks - self.harness_bias_ticks

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
        systematic part), in TSC ticks per copy."""
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
            measured by register-register add chains just before and just
            after the runs (their mean), not at first use; NaN while the
            clock's two rulers disagree (see :attr:`caveats`).
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
        cycles_per_tick_ci95: the 95% half-width of ``cycles_per_tick``
            (half the range of the add chains that bracketed the runs; 0 when
            not known); widens :attr:`estimate_ci95_core_cycles`.
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
    catalog_row: CatalogRow | None = None
    clock: InitVar[str | None] = None  # deprecated: the old name of counter

    def __post_init__(self, clock: str | None) -> None:
        _take_old_clock(self, clock)

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
        catalog_row: CatalogRow | None | EllipsisType = ...,
    ) -> BenchResult:
        """The one way to build a BenchResult from per-run arrays.

        ``runs`` is their length; ``best`` and ``median`` are computed from
        them by the C core's formulas unless given (:func:`fastcpu.bench`
        passes the C core's own, computed without a copy of the arrays).

        Args:
            raw, empty: counts of `counter` per run (TSC ticks for the
                TSC; converted to uint64); migrated: one bool per run. All
                three of the same length, at least 1.
            clock: the :class:`fastcpu.Clock` of the measurement.
            counter: ``'tsc'``, ``'pmu'`` or ``'pmu_user'``.
            cycles_per_tick: core cycles per TSC tick, overriding the
                clock's, for a result converted with the figure measured
                around it (with its 95% half-width, `cycles_per_tick_ci95`).
            harness_bias_core_cycles, harness_bias_ci95_core_cycles: the
                harness bias applied (core cycles; 0: none).
            caveats: what the figures cannot be trusted for, and why.
            catalog_row: its method's catalog row (:func:`fastcpu.bench`
                gives the catalog's; None: none, as for a user function).
                Not given: the row of `method` in the newest catalog
                recorded in the package (``_catalog_rows``), or None for a
                name it lacks.

        Raises:
            ValueError: the arrays are empty, not one-dimensional or of
                different lengths.
            TypeError: `catalog_row` is not a CatalogRow or None.
        """
        if catalog_row is not None and catalog_row is not ... and not isinstance(catalog_row, CatalogRow):
            raise TypeError(f"catalog_row must be a CatalogRow or None, not {type(catalog_row).__name__}")
        if catalog_row is ...:
            catalog_row = recorded_row(method, "")
        raw, empty, migrated = _per_run_arrays(raw, empty, migrated, ("raw", "empty", "run"))
        # Every field at once, not through the dataclass's generated __init__:
        # a frozen class sets each of its 19 fields with object.__setattr__,
        # about 6 us a result on the Zen 3 guest (AuthenticAMD family 25
        # model 1), bench(m, 1000)'s largest Python cost. __post_init__ only
        # takes the deprecated keyword `clock`, which is not given here.
        result = object.__new__(cls)
        result.__dict__.update(
            method=method,
            runs=int(raw.size),
            serialize=serialize,
            unroll=unroll,
            cpu=cpu,
            raw=raw,
            empty=empty,
            migrated=migrated,
            best=_estimate.best_ticks(raw, empty, unroll) if best is None else best,
            median=_estimate.median_ticks(raw, empty, unroll) if median is None else median,
            tsc_hz=clock.tsc_hz,
            cycles_per_tick=clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
            tsc_step_ticks=clock.tsc_step_ticks,
            counter=counter,
            harness_bias_core_cycles=harness_bias_core_cycles,
            harness_bias_ci95_core_cycles=harness_bias_ci95_core_cycles,
            cycles_per_tick_ci95=cycles_per_tick_ci95,
            caveats=tuple(caveats),
            catalog_row=catalog_row,
        )
        return result

    def with_harness_bias(self, bias_core_cycles: float, ci95_core_cycles: float) -> BenchResult:
        """This result with the harness bias (core cycles per copy, and its
        95% half-width) applied to its estimate: :func:`fastcpu.bench`'s
        correction, from :func:`fastcpu.selftest`."""
        return dataclasses.replace(self, harness_bias_core_cycles=bias_core_cycles,
                                   harness_bias_ci95_core_cycles=ci95_core_cycles,
                                   clock=None)  # not the deprecated alias's value

    # ---- the recommended estimate (computed on first access) ----

    @functools.cached_property
    def _recommended(self) -> _estimate.Estimate:
        return _estimate.recommend(self.raw, self.empty, self.step, self.unroll, self.migrated)

    @functools.cached_property
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

    @functools.cached_property
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
        caveats: as for :class:`BenchResult`.
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
    ) -> DiffResult:
        """The one way to build a DiffResult from per-pair arrays, as
        :meth:`BenchResult.from_arrays` builds a BenchResult: ``runs`` is
        their length, `cycles_per_tick` overrides the clock's (None: the
        clock's).

        Raises:
            ValueError: the arrays are empty, not one-dimensional or of
                different lengths.
        """
        long, short, migrated = _per_run_arrays(long, short, migrated, ("long", "short", "pair"))
        return cls(
            method=method, runs=int(long.size), serialize=serialize, k=k, cpu=cpu, long=long,
            short=short, migrated=migrated, tsc_hz=clock.tsc_hz,
            cycles_per_tick=clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
            tsc_step_ticks=clock.tsc_step_ticks, counter=counter,
            cycles_per_tick_ci95=cycles_per_tick_ci95, caveats=tuple(caveats))

    @functools.cached_property
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
        ValueError: empty, not one-dimensional, or of different lengths.
    """
    a = np.ascontiguousarray(a, dtype=np.uint64)
    b = np.ascontiguousarray(b, dtype=np.uint64)
    migrated = np.ascontiguousarray(migrated, dtype=np.bool_)
    first, second, unit = names
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{first} must be a non-empty 1-D array of TSC ticks, not shape {a.shape}")
    if b.shape != a.shape or migrated.shape != a.shape:
        raise ValueError(
            f"{first}, {second} and migrated must have one value per {unit}: lengths "
            f"{a.size}, {b.size} and {migrated.size} differ"
        )
    return a, b, migrated


def _clock_alias(self: Any) -> str:
    _deprecated_clock(type(self).__name__)
    return self.counter


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
