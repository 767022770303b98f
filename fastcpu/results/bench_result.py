"""BenchResult, one measurement against the empty sequence, and :func:`stability`.

:meth:`BenchResult.from_arrays` builds one from arrays someone hands over (a
result file, the noise model); :func:`fastcpu.bench` uses ``BenchResult._of_runs``.
A result is finished when made: estimate computed, arrays read-only."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

import numpy as np

from .. import _base as _display
from . import estimate as _estimate
from .._args import CYCLES_PER_TICK_RANGE, HARNESS_BIAS_MAX_CORE_CYCLES, RUNS_MAX, check_figure, check_sentences
from .values import CatalogRow, recorded_row
from .values import Clock
from .parts import ClockMotion
from .._base import cached_property
from .stability import Stability, assess
from .diff_result import DiffResult
from .estimated import COUNTERS, checked_bias, checked_fields, checked_motion, Estimated, Figure, per_run_arrays, read_only


__all__ = ["BenchResult", "DiffResult", "stability", "COUNTERS"]


@dataclass(frozen=True, eq=False)
class BenchResult(Estimated):
    """One call of :func:`fastcpu.bench` (how it is timed: docs/timing.md).

    Figures are TSC ticks per copy of the sequence above the empty sequence
    (core cycles when ``counter`` is a PMU counter): ``best = (min(raw) -
    min(empty)) / unroll``, ``median`` likewise.

    Attributes:
        method: the method's name (``'user:NAME'`` for a user function).
        runs, unroll, cpu: timed runs; copies per run; the pinned CPU or None.
        serialize: ``'lfence'``, ``'cpuid'`` or ``'rdtscp'``.
        raw, empty: uint64 TSC ticks per run of the method and of the empty
            sequence, harness included; read-only.
        migrated: bool per run: the CPU changed across the pair (ESTIMATE
            leaves such pairs out).
        best, median: TSC ticks per copy (see above).
        tsc_hz: TSC ticks per second of the clock (:class:`fastcpu.Clock`).
        cycles_per_tick, cycles_per_tick_ci95: core cycles per TSC tick measured
            by the ruler points around the runs, and its 95% half-width; NaN
            while the rulers disagree (:attr:`caveats`).
        tsc_step_ticks: the TSC's granularity, in TSC ticks.
        counter: ``'tsc'``, ``'pmu'`` or ``'pmu_user'`` (:attr:`units`).
        harness_bias_core_cycles, harness_bias_ci95_core_cycles: the self-test's
            harness bias subtracted from :attr:`estimate` and its 95% half-width,
            core cycles (0: none applied).
        harness_resolution_core_cycles: the smallest cost the harness resolves,
            core cycles per copy (0: not measured); below it: :attr:`upper_bound`.
        clock_motion: :class:`fastcpu.types.ClockMotion`, or None without ruler
            points.
        caveats: what the figures cannot be trusted for, one sentence each.
        catalog_row: the method's :class:`~fastcpu.results.values.CatalogRow` as
            the measuring fastcpu had it; None for a user function.

    Also :attr:`estimate`, :attr:`estimate_ci95`, :attr:`estimator`,
    :attr:`resolution_limited` and :attr:`warnings` (the stability report,
    read on first use)."""

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

    def __post_init__(self) -> None:
        # the constructor checks what from_arrays() checks, and that the
        # figures it is given are those of its arrays (as load() does)
        raw, empty, migrated = per_run_arrays(self.raw, self.empty, self.migrated, ("raw", "empty", "run"))
        fields = checked_fields(self.method, self.serialize, self.unroll, self.cpu, self.counter,
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
        self.__dict__.update(fields, raw=read_only(raw), empty=read_only(empty), migrated=read_only(migrated),
                             runs=int(raw.size), best=float(self.best), median=float(self.median),
                             tsc_hz=float(self.tsc_hz), tsc_step_ticks=float(self.tsc_step_ticks))
        self.__dict__["_recommended"], self.__dict__["_paired_mean"] = self._estimated()

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

        Args:
            raw, empty: counts of `counter` per run (TSC ticks for the TSC), whole
                numbers 0 to 2**64-1, converted to uint64; migrated: bool per run.
                Same length, at least 1. best/median: computed unless given.
            clock: the :class:`fastcpu.Clock`; counter: ``'tsc'``, ``'pmu'``, ``'pmu_user'``.
            cycles_per_tick, cycles_per_tick_ci95: core cycles per TSC tick, overriding the clock's.
            harness_bias_core_cycles, harness_bias_ci95_core_cycles,
            harness_resolution_core_cycles: core cycles (0: none / not measured).
            caveats, clock_motion: as the attributes.
            catalog_row: a CatalogRow or None; not given: the newest recorded row
                of `method`, or None.

        Raises:
            TypeError: a field of the wrong type (the message names it).
            ValueError: empty, multi-dimensional or unequal arrays, more than
                ``RUNS_MAX`` runs, a count out of range (names the array and run),
                or a setting or figure outside what a result file holds (names it)."""
        if catalog_row is not None and catalog_row is not ... and not isinstance(catalog_row, CatalogRow):
            raise TypeError(f"catalog_row must be a CatalogRow or None, not {type(catalog_row).__name__}")
        if catalog_row is ...:
            catalog_row = recorded_row(method, "")
        raw, empty, migrated = per_run_arrays(raw, empty, migrated, ("raw", "empty", "run"))
        if raw.size > RUNS_MAX:
            raise ValueError(f"the arrays hold {raw.size} runs, more than the {RUNS_MAX} (RUNS_MAX) "
                             "one measurement may")
        if not isinstance(clock, Clock):
            raise TypeError(f"clock must be a fastcpu.Clock, not {type(clock).__name__}")
        fields = checked_fields(method, serialize, unroll, cpu, counter,
                                 clock.cycles_per_tick if cycles_per_tick is None else cycles_per_tick,
                                 cycles_per_tick_ci95, harness_bias_core_cycles, harness_bias_ci95_core_cycles,
                                 caveats)
        unroll = fields["unroll"]
        return cls._assembled(
            method=method, serialize=serialize, raw=raw, empty=empty, migrated=migrated,
            best=_estimate.best_ticks(raw, empty, unroll) if best is None else best,
            median=_estimate.median_ticks(raw, empty, unroll) if median is None else median,
            clock=clock, counter=counter, fields=fields, clock_motion=checked_motion(clock_motion),
            harness_resolution_core_cycles=check_figure(
                "harness_resolution_core_cycles", harness_resolution_core_cycles, 0,
                HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles"),
            catalog_row=catalog_row)

    @classmethod
    def _of_runs(cls, method: str, serialize: str, unroll: int, cpu: int | None, raw: np.ndarray,
                 empty: np.ndarray, migrated: np.ndarray, best: float, median: float, clock: Clock, counter: str,
                 cpt: float, cpt_ci: float, bias: float, ci: float, resolution: float, caveats: tuple[str, ...],
                 clock_motion: ClockMotion | None, catalog_row: CatalogRow | None,
                 estimate: _estimate.Estimate | None, paired: _estimate.Estimate | None, /) -> BenchResult:
        """The result of the C core's runs (``instrument.harness.bench_result``), the fields by position
        (a keyword call binds them twice); checks only the ranges of figures a file bounds."""
        # cpt, cpt_ci: cycles_per_tick and its half-width; bias, ci, resolution: the harness_*_core_cycles
        # figures. estimate, paired: recommend() and paired_mean() of these arrays at this step and unroll
        # as the C core computed them in one pass (csrc/estimate.c; tests/test_c_estimate.py holds them to
        # the Python), or None: computed here. raw, empty, migrated: read-only as made (glue_bench.c, and
        # instrument.child for a child's runs), kept as they are
        low, high = CYCLES_PER_TICK_RANGE
        if not (low <= cpt <= high or cpt != cpt):
            # the one figure of the core's that a file bounds (NaN: unknown): check_figure says why
            check_figure("cycles_per_tick", cpt, low, high, "core cycles per TSC tick", nan=True)
        top = HARNESS_BIAS_MAX_CORE_CYCLES
        if not (abs(bias) <= top and 0 <= ci <= top and 0 <= resolution <= top and (cpt == cpt or not (bias or ci))):
            # the rare case (NaN compares false above): checked as a file checks it, which says why
            checked = checked_bias(bias, ci, cpt)
            bias, ci = checked["harness_bias_core_cycles"], checked["harness_bias_ci95_core_cycles"]
            resolution = check_figure("harness_resolution_core_cycles", resolution, 0,
                                      HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles")
        if estimate is None or paired is None:  # computed from the arrays: the one assembly that works it out
            fields = dict(unroll=unroll, cpu=cpu, cycles_per_tick=cpt, cycles_per_tick_ci95=cpt_ci,
                          caveats=caveats, harness_bias_core_cycles=bias, harness_bias_ci95_core_cycles=ci)
            return cls._assembled(method=method, serialize=serialize, raw=raw, empty=empty, migrated=migrated,
                                  best=best, median=median, clock=clock, counter=counter, fields=fields,
                                  clock_motion=clock_motion, harness_resolution_core_cycles=resolution,
                                  catalog_row=catalog_row)
        # bench()'s path: every field in one dict, the same ones _assembled sets (tests/test_results.py)
        result = object.__new__(cls)
        object.__setattr__(result, "__dict__", {
            "method": method, "runs": raw.size, "serialize": serialize, "raw": raw,
            "empty": empty, "migrated": migrated, "best": best, "median": median,
            "tsc_hz": clock.tsc_hz, "tsc_step_ticks": clock.tsc_step_ticks, "counter": counter, "unroll": unroll,
            "cpu": cpu, "cycles_per_tick": cpt, "cycles_per_tick_ci95": cpt_ci, "caveats": caveats,
            "harness_bias_core_cycles": bias, "harness_bias_ci95_core_cycles": ci, "clock_motion": clock_motion,
            "harness_resolution_core_cycles": resolution, "catalog_row": catalog_row, "_recommended": estimate,
            "_paired_mean": paired})
        return result

    @classmethod
    def _assembled(cls, *, method: str, serialize: str, raw: np.ndarray, empty: np.ndarray,
                   migrated: np.ndarray, best: float, median: float, clock: Clock, counter: str,
                   fields: dict[str, Any], clock_motion: ClockMotion | None,
                   harness_resolution_core_cycles: float, catalog_row: CatalogRow | None) -> BenchResult:
        """A result of checked fields, set at once (not through the generated __init__, which is slow)."""
        result = object.__new__(cls)
        result.__dict__.update(
            method=method, runs=int(raw.size), serialize=serialize, raw=read_only(raw), empty=read_only(empty),
            migrated=read_only(migrated), best=best, median=median, tsc_hz=clock.tsc_hz,
            tsc_step_ticks=clock.tsc_step_ticks, counter=counter, **fields, clock_motion=clock_motion,
            harness_resolution_core_cycles=harness_resolution_core_cycles, catalog_row=catalog_row)
        # finished when made: nothing deferred
        result.__dict__["_recommended"], result.__dict__["_paired_mean"] = result._estimated()
        return result

    def with_harness_bias(self, bias_core_cycles: float, ci95_core_cycles: float) -> BenchResult:
        """This result with the harness bias and its 95% half-width (core cycles per copy) applied.

        Raises:
            TypeError: a figure is not a number.
            ValueError: a figure outside what a result file holds, or a bias where
                core cycles per tick are unknown."""
        return self.with_harness_correction(bias_core_cycles, ci95_core_cycles,
                                            self.harness_resolution_core_cycles, self.caveats)

    def with_harness_correction(self, bias_core_cycles: float, ci95_core_cycles: float,
                                resolution_core_cycles: float, caveats: tuple[str, ...]) -> BenchResult:
        """This result corrected as :func:`fastcpu.bench` corrects (``results.parts.applied``).

        Takes the harness bias and its 95% half-width and the resolution (core
        cycles per copy; 0: not measured) and `caveats`; every derived figure is
        recomputed.

        Raises:
            TypeError: a figure is not a number, or caveats not a tuple of str.
            ValueError: a figure, or caveats, beyond what a result file holds, or
                a bias where core cycles per tick are unknown."""
        bias = checked_bias(bias_core_cycles, ci95_core_cycles, self.cycles_per_tick)
        # every other field as it is (checked when this one was built), none
        # of the figures cached from the old ones
        state = {k: v for k, v in self.__dict__.items() if k not in _CACHED}
        state.update(harness_bias_core_cycles=bias["harness_bias_core_cycles"],
                     harness_bias_ci95_core_cycles=bias["harness_bias_ci95_core_cycles"],
                     harness_resolution_core_cycles=check_figure(
                         "harness_resolution_core_cycles", resolution_core_cycles, 0,
                         HARNESS_BIAS_MAX_CORE_CYCLES, "core cycles"),
                     caveats=check_sentences("caveats", caveats))
        result = object.__new__(type(self))
        result.__dict__.update(state)
        return result

    # ---- the recommended estimate (computed when the result is made) ----

    # _recommended (Estimated's): the recommended estimator's reading, and
    # _paired_mean: the paired mean's (the same Estimate where that is the one
    # recommended), both uncorrected; set by every constructor from the arrays,
    # the step and the copies (bench(): by the C core, in the pass that timed them)

    def _estimated(self) -> tuple[_estimate.Estimate, _estimate.Estimate]:
        """(recommended, paired mean) of the arrays, in Python (the oracle of csrc/estimate.c)."""
        recommended = _estimate.recommend(self.raw, self.empty, self.step, self.unroll, self.migrated)
        if recommended.estimator == "paired_mean":
            return recommended, recommended
        return recommended, _estimate.paired_mean(self.raw, self.empty, self.step, self.unroll, self.migrated)

    best_ns = Figure("best", "ns")
    best_core_cycles = Figure("best", "core_cycles")
    median_ns = Figure("median", "ns")
    median_core_cycles = Figure("median", "core_cycles")
    paired_mean_ns = Figure("paired_mean", "ns")
    paired_mean_core_cycles = Figure("paired_mean", "core_cycles")
    paired_mean_ci95_ns = Figure("paired_mean", "ns", ci95=True)
    paired_mean_ci95_core_cycles = Figure("paired_mean", "core_cycles", ci95=True)

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
        warnings (see :func:`fastcpu.stability`).

        Computed when first read, not when the result is made, and kept: its
        machine checks read the machine the result is looked at on (a result
        read from a file is judged by the reader's machine), so it is no
        figure of the result's own fields; the only such attribute."""
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
        """The result as an HTML table, for Jupyter."""
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


#: What a BenchResult computes on first access and keeps in its ``__dict__``
#: (every cached_property of the class and its bases: the stability report,
#: which reads the machine): what with_harness_correction() leaves out of its copy.
_CACHED = tuple(name for klass in BenchResult.__mro__ for name, value in vars(klass).items()
                if isinstance(value, cached_property))


def stability(result: BenchResult, machine: Mapping[str, Any] | None = None) -> Stability:
    """The stability report of one result; never raises for a bad measurement.

    Args:
        result: a :class:`fastcpu.BenchResult`.
        machine: ``machine_info()``-style dict for a result measured elsewhere;
            None reads this machine.

    Raises:
        TypeError: `result` is not a BenchResult, or `machine` not such a dict."""
    if not isinstance(result, BenchResult):
        raise TypeError(f"stability() reports on one fastcpu.BenchResult, not {type(result).__name__}"
                        + (": pick one, e.g. results['gdt']" if isinstance(result, Mapping) else ""))
    extra = list(result.caveats)
    # A user function's call and return cost the empty baseline about
    # -harness_bias core cycles that a longer body hides: a body shorter than
    # that reads as the overhead, whatever it is (docs/accuracy.md).
    overhead = -result.harness_bias_core_cycles
    if result.catalog_row is None and overhead > 0 and (  # no catalog row: a user function
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
