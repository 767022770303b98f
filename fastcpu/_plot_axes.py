"""What every plot of fastcpu.plot shares: the argument checks, the limits
on panels and curves, the groups of methods (:func:`method_group`, the one
place that decides), the units and the axes' ticks (major ticks on round
values, minor ticks on multiples of the counter's step), and the titles'
text. Drawing is :mod:`fastcpu._plot_runs` (one method's runs),
:mod:`fastcpu._plot_ecdf` (ECDFs) and :mod:`fastcpu._plot_published`."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullFormatter

from . import _blocks
from ._args import UNITS as UNIT_TABLE
from ._args import check_method_names, plain_int, plain_number
from ._bench_result import BenchResult
from ._catalog_rows import recorded_row
from ._machine_results import Results, as_results
from ._plot_text import name, with_interval
from ._statistics import statistic

UNITS = {u.name: f"{u.words} per run (harness included)" for u in UNIT_TABLE.values()}
SLOW_RATIO = 5.0
#: The most panels one figure draws, a method each (every method of the catalog fits): the
#: rest are counted as left out.
PANELS_MAX = 40
#: The most panels of ECDFs (10 methods each) one figure draws.
ECDF_PANELS_MAX = 12
#: The most curves one panel draws (methods, or sources with their empty sequences).
SERIES_MAX = 40
#: The most sources (result files) one ECDF panel overlays, each with its empty sequence.
SOURCES_MAX = SERIES_MAX // 2


def check_number(name: str, value: object) -> float:
    return plain_number(name, value)  # a plain float: a subclass's comparisons may lie


def check_options(ax: object, log_x: object) -> None:
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}")
    if log_x is not None and not isinstance(log_x, bool):
        raise TypeError(f"log_x must be True, False or None (automatic), not {log_x!r}")


def check_ncols(ncols: object) -> int:
    ncols = plain_int("ncols", ncols, "an int >= 1")  # the plain int: a subclass's comparisons may lie
    if ncols < 1:
        raise ValueError(f"ncols must be an int >= 1, not {ncols!r}")
    return ncols


def check_methods(methods: object) -> list[str] | None:
    # Names are not looked up in the catalog: a file may come from another
    # fastcpu, with other methods. An empty list draws nothing (said later).
    return None if methods is None else check_method_names(methods, allow_empty=True)


def check_sources(sources: object) -> list[Results]:
    if isinstance(sources, (Results, str, os.PathLike)):
        raise TypeError("sources must be a list of fastcpu.Results or result file paths, "
                        f"not one {type(sources).__name__}: wrap it in a list")
    if not isinstance(sources, Iterable):
        raise TypeError(f"sources must be a list of fastcpu.Results or result file paths, "
                        f"not {type(sources).__name__}")
    loaded = [as_results(s) for s in sources]
    if not loaded:
        raise ValueError("give at least one Results or result file")
    return loaded


def set_log_x(ax: Axes, low: float, high: float) -> None:
    """A log x axis labelled in plain numbers: 10, 20, 50, 100 ... over up to two decades,
    10, 100, 1000 ... beyond."""
    ax.set_xscale("log")
    subs = (1.0, 2.0, 5.0) if high <= 100 * max(low, 1e-300) else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def is_slow(r: BenchResult) -> bool:
    """Whether `r` is system-call or trap scale: median raw >= 5x median empty (log x)."""
    if not isinstance(r, BenchResult):
        raise TypeError(f"is_slow() takes one BenchResult, not {type(r).__name__}")
    return run_median(r.raw) >= SLOW_RATIO * max(1.0, run_median(r.empty))


def run_median(ticks: np.ndarray) -> float:
    """The median of one array of counts, without a copy of it."""
    return _blocks.median(_blocks.counts(ticks))


def bench_results(
    results: Results | Iterable[BenchResult], methods: Sequence[str] | None
) -> list[BenchResult]:
    methods = check_methods(methods)
    if not isinstance(results, (Results, BenchResult, Iterable)):
        raise TypeError(f"expected fastcpu.Results or BenchResults, not {type(results).__name__}")
    if isinstance(results, Results):
        if methods is None:
            return list(results.values())
        missing = [m for m in methods if m not in results]
        if missing:
            raise ValueError(f"{', '.join(map(repr, missing))} not measured in {results.name!r}; "
                             f"measured: {', '.join(results)}")
        return [results[m] for m in methods]
    chosen: list[BenchResult] = [results] if isinstance(results, BenchResult) else list(results)
    for r in chosen:
        if not isinstance(r, BenchResult):
            raise TypeError(f"expected fastcpu.Results or BenchResults, not {type(r).__name__}")
    if methods is not None:
        chosen = [r for r in chosen if r.method in methods]
    return chosen


def curve_colors(n: int) -> list[Any]:
    """`n` colours, all different: tab10 up to 10, tab20 up to 20, then evenly spaced hues."""
    if n <= 20:
        cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
        return [cmap(i) for i in range(n)]
    cmap = plt.get_cmap("turbo")
    return [cmap(i / (n - 1)) for i in range(n)]


# -- the groups of methods: decided here, and only here ---------------------------

#: The panels of :func:`ecdf_groups`, in order; methods outside the catalog
#: (user functions) make a last panel, ``"other"``.
GROUPS = ("instructions", "library calls", "models", "kernel entries and comparison costs")
OTHER = "other"
#: A catalog row's role (MethodInfo.role, set in csrc/sequences.c) -> its panel.
_GROUP_OF_ROLE = {
    "cpu_source": "instructions",
    "library_call": "library calls",
    "model": "models",
    "entry_cost": "kernel entries and comparison costs",
    "chain": "kernel entries and comparison costs",
}
PANEL_MAX = 10  # curves per ECDF panel: a group with more is split


def method_group(method: str | BenchResult) -> str:
    """Which panel of :func:`ecdf_groups` a result (or method name) belongs to: one of
    :data:`GROUPS`, or ``"other"`` for a user function or a role this fastcpu does not know.

    The catalog row decides, by its role (:attr:`fastcpu.MethodInfo.role`): a result's own
    row, from the fastcpu that measured it (:attr:`BenchResult.catalog_row`, saved in its file),
    never this machine's catalog; for a name, the newest catalog recorded in the package. A new
    row lands in its panel with no edit here.
    """
    if isinstance(method, BenchResult):
        row = method.catalog_row
    elif isinstance(method, str):
        row = recorded_row(method, "")
    else:
        raise TypeError(f"method_group() takes a method name (str) or a BenchResult, not {type(method).__name__}")
    return OTHER if row is None else _GROUP_OF_ROLE.get(row.role, OTHER)


# -- units, steps and the axes' ticks ----------------------------------------------

def unit_scale(r: BenchResult, unit: str) -> float:
    """How many of `unit` one count (TSC tick) of `r` is.

    Raises:
        ValueError: `r` has no figures in `unit` (core cycles while the clock's rulers
            disagree: its caveats say why).
    """
    scale = float(r.units.convert(1.0, unit))
    if not (math.isfinite(scale) and scale > 0):
        why = "; ".join(r.caveats) or f"its counts are worth {scale} {UNIT_TABLE[unit].words}"
        raise ValueError(f"{name(r.method)!r} has no figures in {UNIT_TABLE[unit].words} ({why}): "
                         f"plot it in ticks or ns")
    return scale


def unit_step(results: Sequence[BenchResult], unit: str) -> float:
    """The counter's step in `unit`: the coarsest of `results` (0 where none is known)."""
    return max((r.step * unit_scale(r, unit) for r in results), default=0.0)


def decimals_of(x: float) -> int:
    """Decimals that write `x` within 1% (24.5 -> 1, 10.02 -> 0, 2.6 -> 1)."""
    for d in range(4):
        if abs(round(x, d) - x) <= 0.01 * abs(x):
            return d
    return 4


#: How a figure that left methods out says how to choose them.
CHOOSE = "name the ones to draw with methods= (the CLI's --methods)"
#: The most minor ticks (the counter's steps) an axis shows: each is an artist to lay out.
_MINOR_MAX = 30


class _StepMultiples(Locator):
    """Minor ticks on every multiple of the counter's step in view, while there are at
    most `most` of them (none beyond: a step of 1 tick on counts near 2**53 would
    otherwise ask for billions)."""

    def __init__(self, step: float, most: int = _MINOR_MAX):
        self.step, self.most = step, most

    def __call__(self) -> Any:
        low, high = self.axis.get_view_interval()
        return self.tick_values(low, high)

    def tick_values(self, vmin: float, vmax: float) -> Any:
        low, high = sorted((vmin, vmax))
        if not (math.isfinite(low) and math.isfinite(high)) or (high - low) / self.step > self.most:
            return []
        first, last = math.ceil(low / self.step), math.floor(high / self.step)
        return [k * self.step for k in range(first, last + 1)]


def round_ticks(ax: Axes, step: float, low: float, high: float, whole: bool, most: int = 8) -> None:
    """Major ticks on round values of the axis's unit: 1, 2 or 5 times a power of ten, at
    most `most` intervals, whole numbers only where `whole` (TSC ticks: nothing lies
    between two). Minor ticks on the multiples of the counter's step, where the major
    ticks are further apart than a step and at most _MINOR_MAX steps are in view. A linear axis
    only."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=most, steps=[1, 2, 5, 10], integer=whole))
    if step > 0 and high > low and step < (high - low) / most and (high - low) / step <= _MINOR_MAX:
        ax.xaxis.set_minor_locator(_StepMultiples(step))


def estimate_text(r: BenchResult, unit: str) -> str:
    """``ESTIMATE 21.7 ± 1.1 ns``: the recommended estimate per copy and its 95% interval,
    to the precision the interval allows (:func:`fastcpu._plot_text.with_interval`)."""
    cost = statistic("estimate")  # the cost figure, as everywhere
    value, half = cost.value(r, unit), cost.half_width(r, unit)
    words = UNIT_TABLE[unit].words if unit != "ticks" else ("ticks" if r.counter == "tsc" else "PMU cycles")
    if not math.isfinite(half):
        return f"ESTIMATE {value:.3g} {words} (no interval: too few runs)"
    return f"ESTIMATE {with_interval(value, half)} {words}"


def wrap_title(text: str, width_in: float, fontsize_pt: float) -> str:
    """Break `text` at ", " / ": " / " " so that no line is wider than `width_in` inches
    (a character taken as 0.6 of the font size)."""
    most = max(12, int(width_in * 72 / (0.6 * fontsize_pt)))
    lines: list[str] = []
    for line in text.split("\n"):
        while len(line) > most:
            cut = max(line.rfind(sep, 0, most) for sep in (", ", ": ", " ("))
            if cut <= 0:
                cut = line.rfind(" ", 0, most)
            if cut <= 0:
                break
            lines.append(line[: cut + (1 if line[cut] in ",:" else 0)])
            line = line[cut:].lstrip(",: ") if line[cut] in ",:" else line[cut:].lstrip()
        lines.append(line)
    return "\n".join(lines)



def check_tail(tail: object) -> None:
    if not 0 <= check_number("tail", tail) < 1:
        raise ValueError(f"tail must be a fraction of the runs in [0, 1), not {tail}")


def check_upto(upto: object) -> None:
    if not 0 < check_number("upto", upto) <= 1:
        raise ValueError(f"upto must be a quantile in (0, 1], not {upto}")

