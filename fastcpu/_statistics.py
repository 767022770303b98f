"""Every statistic of a result, declared once: its name, what it means, how
to read it off a result, its interval, and where it is shown.

A renderer (the CLI table, ``compare()``'s columns, the CSV and Google
Benchmark exports, a result's HTML and its ``NAME_UNIT`` attributes) loops
over ``STATISTICS`` and asks each one for its value and interval in a unit
of ``_args.UNITS``; none of them names a statistic. Adding one is a
declaration here (docs/extending.md, "Where to add").

Every figure is per copy of the sequence: in counts of the result's counter
(TSC ticks; core cycles for a PMU counter) as read off the result, then
converted with the result's own clock (``result.units``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._args import UNITS

__all__ = ["Statistic", "STATISTICS", "SHOWN_IN", "statistic", "shown_in", "attribute"]

#: Where a statistic can be shown: the CLI's table, compare()'s columns, the
#: exports (CSV, Google Benchmark's JSON), a result's HTML table.
SHOWN_IN = ("table", "compare", "export", "html")

_Z95 = statistics.NormalDist().inv_cdf(0.975)


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class Statistic:
    """One statistic of a result.

    Attributes:
        name: its name: the attribute (``result.best``), the column stem
            (``best_ns``) and the key everywhere.
        heading: its name in a table's header (``'BEST (above empty)'``).
        meaning: what it is, in one sentence.
        counts: reads it off a result, in counts of the result's counter per copy.
        random_ci95: the 95% half-width of its random part (the runs'
            scatter), counts per copy; None: it has no interval.
        systematic_ci95: the half-width of its systematic part (a
            correction's uncertainty), counts per copy, added linearly.
        shown_in: where it is shown (``SHOWN_IN``).
        seed: one of the seed's figures (best, median): marked in the table
            when the clock's step makes it coarse.
    """

    name: str
    heading: str
    meaning: str
    counts: Callable[[Any], float]
    random_ci95: Callable[[Any], float] | None = None
    systematic_ci95: Callable[[Any], float] | None = None
    shown_in: tuple[str, ...] = SHOWN_IN
    seed: bool = False

    @property
    def has_interval(self) -> bool:
        return self.random_ci95 is not None

    def applies_to(self, result: Any) -> bool:
        """Whether `result` has this statistic (a DiffResult has no best)."""
        try:
            self.counts(result)
        except AttributeError:
            return False
        return True

    def value(self, result: Any, unit: str = "ticks") -> float:
        """Its value for `result` in `unit` (a name of ``UNITS``)."""
        return float(result.units.convert(self.counts(result), unit))

    def half_width(self, result: Any, unit: str = "ticks", confidence: float = 0.95) -> float:
        """The half-width of its interval at `confidence`, in `unit`: the
        random part rescaled from 95%, plus the systematic part; in core
        cycles widened by what the conversion's own uncertainty
        (``cycles_per_tick_ci95``) does to the value. NaN without an interval."""
        if self.random_ci95 is None:
            return math.nan
        counts = self.random_ci95(result)
        if confidence != 0.95:
            counts *= _z(confidence) / _Z95
        if self.systematic_ci95 is not None:
            counts += self.systematic_ci95(result)
        half = float(result.units.convert(counts, unit))
        if unit == "core_cycles" and result.counter == "tsc":
            # the value in TSC ticks times the uncertainty of core cycles per tick
            # (a PMU count is a core cycle: no conversion to be unsure of)
            half += abs(self.counts(result)) * result.cycles_per_tick_ci95
        return half

    def columns(self, unit: str) -> tuple[str, ...]:
        """Its columns in a table of `unit`: the value, then the interval's ends."""
        if not self.has_interval:
            return (f"{self.name}_{unit}",)
        return (f"{self.name}_{unit}", f"{self.name}_ci_low_{unit}", f"{self.name}_ci_high_{unit}")

    def figure_names(self) -> tuple[str, ...]:
        """Its value and 95% half-width in every unit, as an export names them:
        ``NAME_UNIT`` and ``NAME_ci95_UNIT``."""
        return tuple(n for u in UNITS for n in (f"{self.name}_{u}",)
                     + ((f"{self.name}_ci95_{u}",) if self.has_interval else ()))

    def figures(self, result: Any) -> dict[str, float]:
        """:meth:`figure_names` -> their values for `result`."""
        out = {}
        for u in UNITS:
            out[f"{self.name}_{u}"] = self.value(result, u)
            if self.has_interval:
                out[f"{self.name}_ci95_{u}"] = self.half_width(result, u)
        return out

    def cells(self, result: Any, unit: str, confidence: float = 0.95) -> dict[str, float]:
        """Its columns (:meth:`columns`) for `result`: the value and the interval's ends."""
        v = self.value(result, unit)
        if not self.has_interval:
            return {f"{self.name}_{unit}": v}
        if self.name == "estimate" and getattr(result, "resolved", True) is False:
            # below what the harness resolves: from 0 to the bound, never negative
            bound = result.upper_bound_in(unit)
            return {f"{self.name}_{unit}": max(v, 0.0), f"{self.name}_ci_low_{unit}": 0.0,
                    f"{self.name}_ci_high_{unit}": bound}
        h = self.half_width(result, unit, confidence)
        if not math.isfinite(h):  # one run gives no interval: its ends are unknown, not infinite
            h = math.nan
        return {f"{self.name}_{unit}": v, f"{self.name}_ci_low_{unit}": v - h,
                f"{self.name}_ci_high_{unit}": v + h}


#: The statistics, in the order every renderer shows them.
STATISTICS: tuple[Statistic, ...] = (
    Statistic(
        "best", "BEST (above empty)",
        "min(raw) - min(empty): the seed's BEST, stuck on the clock's step",
        lambda r: r.best, seed=True, shown_in=("table", "compare", "export", "html")),
    Statistic(
        "median", "MEDIAN (above empty)",
        "median(raw) - median(empty): the seed's MEDIAN, stuck on the clock's step",
        lambda r: r.median, seed=True, shown_in=("table", "compare", "export", "html")),
    Statistic(
        "estimate", "ESTIMATE",
        "the cost fastcpu recommends (BenchResult.estimate): the recommended estimator, less "
        "the harness bias where the self-test trusts it",
        lambda r: r.estimate, lambda r: r.estimate_random_ci95, lambda r: r.estimate_systematic_ci95),
    Statistic(
        "paired_mean", "PAIRED MEAN",
        "the fenced mean of the paired differences raw[i] - empty[i], uncorrected",
        lambda r: r.paired_mean, lambda r: r.paired_mean_ci95, shown_in=("compare", "export")),
)


def shown_in(where: str) -> tuple[Statistic, ...]:
    """The statistics shown in `where` (one of ``SHOWN_IN``), in order."""
    if where not in SHOWN_IN:
        raise ValueError(f"no renderer {where!r}: one of {', '.join(SHOWN_IN)}")
    return tuple(s for s in STATISTICS if where in s.shown_in)


def statistic(name: str) -> Statistic:
    """The statistic called `name`."""
    for s in STATISTICS:
        if s.name == name:
            return s
    raise KeyError(f"no statistic {name!r}: one of {', '.join(s.name for s in STATISTICS)}")


def attribute(result: Any, name: str) -> float:
    """``result.NAME_UNIT`` and ``result.NAME_ci95_UNIT`` for every statistic
    and every unit but ticks (the statistic itself): ``best_ns``,
    ``estimate_ci95_core_cycles``. AttributeError for any other name."""
    for unit in UNITS:
        if unit != "ticks" and name.endswith(f"_{unit}"):
            stem = name[: -len(unit) - 1]
            ci = stem.endswith("_ci95")
            stem = stem[:-5] if ci else stem
            for s in STATISTICS:
                if s.name == stem and s.applies_to(result) and (s.has_interval or not ci):
                    return s.half_width(result, unit) if ci else s.value(result, unit)
    raise AttributeError(f"{type(result).__name__!r} object has no attribute {name!r}")
