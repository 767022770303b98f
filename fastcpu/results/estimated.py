"""What BenchResult and DiffResult share: field checks, per-run arrays, and ``Estimated``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _base as _display
from . import estimate as _estimate
from . import statistics as _statistics
from .._args import CYCLES_PER_TICK_RANGE, HARNESS_BIAS_MAX_CORE_CYCLES, UNITS, UNROLL_MAX, check_figure, check_int, check_label, check_sentences
from .stability import CPU_NUMBER_MAX
from .values import Clock, CounterUnits
from .parts import ClockMotion


__all__ = ["COUNTERS", "Estimated", "Figure", "checked_fields", "checked_motion", "checked_bias", "per_run_arrays",
           "counts", "read_only"]


#: What a result may have counted (BenchResult.counter).
COUNTERS = ("tsc", "pmu", "pmu_user")


def checked_fields(method: object, serialize: object, unroll: object, cpu: object, counter: object,
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
    fields.update(checked_bias(bias, bias_ci95, cpt))
    return fields


def checked_motion(motion: object) -> ClockMotion | None:
    """`motion` a ClockMotion or None (how the core clock moved: no other kind)."""
    if motion is not None and not isinstance(motion, ClockMotion):
        raise TypeError(f"clock_motion must be a fastcpu.types.ClockMotion or None, not {type(motion).__name__}")
    return motion


def checked_bias(bias: object, bias_ci95: object, cycles_per_tick: float) -> dict[str, float]:
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


class Figure:
    """One statistic in one unit as a result attribute (``best_ns = Figure("best", "ns")``); `ci95`: its 95% half-width."""

    def __init__(self, statistic: str, unit: str, *, ci95: bool = False) -> None:
        self.statistic = _statistics.statistic(statistic)
        if unit not in UNITS or unit == "ticks":
            raise ValueError(f"no unit {unit!r} to convert to: one of {', '.join(u for u in UNITS if u != 'ticks')}")
        if ci95 and not self.statistic.has_interval:
            raise ValueError(f"{statistic} has no interval")
        self.unit = unit
        self.ci95 = ci95
        words = "the 95% half-width of " if ci95 else ""
        self.__doc__ = f"{words}:attr:`{statistic}` in {UNITS[unit].words}"

    def __set_name__(self, owner: type, name: str) -> None:
        expected = f"{self.statistic.name}{'_ci95' if self.ci95 else ''}_{self.unit}"
        if name != expected:
            raise TypeError(f"the Figure of {expected} is named {name}")

    def __get__(self, result: Any, owner: type | None = None) -> Any:
        if result is None:
            return self
        if self.ci95:
            return self.statistic.half_width(result, self.unit)
        return self.statistic.value(result, self.unit)


class Estimated:
    """Unit conversions with the result's clock and counter, and the recommended estimate in TSC ticks, ns and core cycles."""

    tsc_hz: float
    cycles_per_tick: float
    tsc_step_ticks: float
    counter: str
    migrated: np.ndarray
    _recommended: _estimate.Estimate  # each result type says how it estimates
    # The harness's own systematic error and its 95% half-width, core cycles
    # per copy, as the self-test measured it (fastcpu.selftest), or for
    # copies a run (unroll > 1, since 0.8.7) half the copy loop's own cost
    # (results.parts.applied): subtracted from the estimate and added
    # to its interval. 0 where none was applied (DiffResult, PMU results,
    # unrolled ones before 0.8.7, files written before 0.3.0).
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
        """The cost per copy fastcpu recommends, TSC ticks (core cycles with a PMU counter), harness bias subtracted where resolved.

        An unresolved cost is the reading, at least 0; tables show :attr:`upper_bound`."""
        if self.resolved:
            return self._recommended.ticks - self.harness_bias_ticks
        return max(self._recommended.ticks, 0.0)

    @property
    def resolved(self) -> bool:
        """Whether the cost stands out from the empty sequence (docs/timing.md, "The self-test").

        The estimate's 95% interval lies above 0, and the corrected interval above
        :attr:`harness_resolution_core_cycles`; otherwise it is only a bound
        (:attr:`upper_bound`)."""
        ticks, half = self._reading
        low = ticks - half
        return low > 0 and low - self.harness_bias_ticks - self._bias_ci95_ticks > self._resolution_ticks

    @property
    def upper_bound(self) -> float:
        """For a cost not :attr:`resolved`, what it is below, TSC ticks per copy (core cycles with a PMU counter); NaN if resolved."""
        if self.resolved:
            return math.nan
        ticks, half = self._reading
        bound = max(ticks + half, 0.0) + max(-ticks, 0.0) + self._resolution_ticks
        corrected_top = ticks - self.harness_bias_ticks + half + self._bias_ci95_ticks
        return max(bound, corrected_top, 1.0 / self._copies)

    @property
    def _reading(self) -> tuple[float, float]:
        """The estimator's uncorrected reading and random 95% half-width, TSC ticks per copy."""
        rec = self._recommended
        return rec.ticks, rec.ci95_ticks if math.isfinite(rec.ci95_ticks) else 0.0

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

    def upper_bound_in(self, unit: str) -> float:
        """:attr:`upper_bound` in `unit` (``'ticks'``, ``'ns'`` or
        ``'core_cycles'``): NaN for a resolved cost."""
        return {"ticks": self.upper_bound, "ns": self.upper_bound_ns,
                "core_cycles": self.upper_bound_core_cycles}[unit] if not self.resolved else math.nan

    def cost_text(self, unit: str = "core_cycles", digits: int = 1) -> str:
        """The cost as tables show it in `unit`, without the unit's name: ``'4.2 +- 0.9'`` or ``'< 3.1'``."""
        if not self.resolved:
            return f"< {self.upper_bound_in(unit):.{digits}f}"
        stat = _statistics.statistic("estimate")
        return f"{stat.value(self, unit):.{digits}f} +- {stat.half_width(self, unit):.{digits}f}"

    @property
    def below_resolution_words(self) -> str:
        """Why a cost is shown as a bound: the copy loop's cost (``unroll`` > 1), else the harness's bias, zero and step."""
        if self._copies > 1 and self.harness_resolution_core_cycles > 0:
            return "within the copy loop's own cost per copy"
        return "below what the harness resolves"

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
        """Half-width of the 95% interval of :attr:`estimate`, TSC ticks per copy: random plus systematic parts, added linearly."""
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

    estimate_ns = Figure("estimate", "ns")
    estimate_core_cycles = Figure("estimate", "core_cycles")
    estimate_ci95_ns = Figure("estimate", "ns", ci95=True)
    estimate_ci95_core_cycles = Figure("estimate", "core_cycles", ci95=True)

    # ---- how a result shows itself (repr, and HTML in a notebook) ----

    @property
    def _counts_unit(self) -> str:
        """What one count of the counter is, in words."""
        return "TSC ticks" if self.counter == "tsc" else "core cycles"

    def _estimate_words(self) -> str:
        """The estimate for a repr(): core cycles, then TSC ticks and ns."""
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
        """The units of the HTML table: the counter's counts, ns, core cycles."""
        return [u for u in UNITS if u != "ticks" or self.counter == "tsc"]

    def _units_columns(self) -> list[str]:
        return [UNITS[u].words for u in self._units()]

    def _statistic_rows(self) -> list[list[object]]:
        """The HTML rows of each statistic shown, in every unit."""
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


def read_only(a: Any) -> np.ndarray:
    """A read-only view of `a`, so that ``r.raw *= 3`` raises ValueError."""
    view = np.asarray(a).view()
    view.setflags(write=False)  # not through .flags: a flags object made per call
    return view


def per_run_arrays(a: Any, b: Any, migrated: Any, names: tuple[str, str, str]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two uint64 count arrays and one bool migration array, one value per run, contiguous.

    Raises:
        TypeError: the counts are not numbers.
        ValueError: empty, multi-dimensional or unequal arrays, or a count that
            is no count (NaN, infinite, negative, fractional, 2**64 or more)."""
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
    return counts(a, first, unit), counts(b, second, unit), migrated


def counts(a: np.ndarray, name: str, unit: str) -> np.ndarray:
    """`a` (1-D) as contiguous uint64 counts; ValueError naming `name` and the first bad `unit` where a value is no count."""
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

