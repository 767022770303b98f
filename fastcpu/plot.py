"""Plots of raw per-run timings (matplotlib): exact counts and ECDFs.

The data is quantized (a TSC that moves in 10 ns steps gives values 26 ticks
apart) and heavy-tailed (interrupts, traps), so:

- distributions are exact counts of each observed value (``np.unique``'s,
  built block by block), never automatic bins or densities, with the empty
  sequence beside the method (its counts drawn downward on the same axis);
- methods and machines are overlaid as ECDFs; a whole Results is split into
  panels by kind of method (:func:`method_group`, the one place that
  decides), at most 10 curves to a panel, each its own colour, legends
  outside the axes;
- linear axes put their major ticks on round values of their unit (1, 2 or 5
  times a power of ten) and their minor ticks on multiples of the counter's
  step while those stay apart;
- titles give the recommended ESTIMATE with its 95% interval, to the
  precision the interval allows, and :func:`published` sets it beside the
  figures published over the years;
- the x axis is logarithmic for system-call and trap-scale methods (median
  at least 5x the empty sequence's), linear for the rest;
- every axis names its unit.

What a plot draws is bounded by the picture, not by the file: memory does not
grow with the runs (:mod:`fastcpu._plot_data`: exact counts while a method's
runs hold at most 65,536 distinct values, else bins and an ECDF read at 2,048
thresholds, said on the plot; no array is copied whole), a figure holds at
most :data:`PANELS_MAX` panels (:data:`ECDF_PANELS_MAX` of ECDFs) and a panel at
most :data:`SERIES_MAX` curves
(what is left out is said in the figure, with the argument that chooses),
and names are cut to 60 characters.

Every function returns the Figure or Axes it drew on and accepts an existing
Axes where that makes sense. fastcpu never selects a matplotlib backend.
Names from files (machines, methods) are drawn as plain text
(:mod:`fastcpu._plot_text`): never parsed as mathtext or LaTeX, a control
character or lone surrogate shown as its escape
(:func:`fastcpu._display.printable`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullFormatter

from . import _blocks
from ._args import UNITS as UNIT_TABLE
from ._args import check_method_names, check_unit, plain_int, plain_number
from ._statistics import statistic
from ._catalog_rows import recorded_row
from ._bench_result import BenchResult
from ._display import printable
from ._machine_results import Results, Source, as_results
from ._plot_data import DISTINCT_MAX, Curve, at_most, ecdf_points, quantile
from ._plot_text import PLAIN, more, name, plain, with_interval
from ._seed_table import read_published

__all__ = ["counts", "distributions", "ecdf", "ecdf_groups", "ecdf_machines", "machines", "published",
           "method_group", "is_slow", "GROUPS", "UNITS", "PANELS_MAX", "ECDF_PANELS_MAX", "SERIES_MAX",
           "SOURCES_MAX"]

#: unit -> axis label of a per-run quantity in that unit (_args.UNITS's words).
UNITS = {u.name: f"{u.words} per run (harness included)" for u in UNIT_TABLE.values()}
_SLOW_RATIO = 5.0
#: The most panels one figure draws, a method each (every method of the catalog fits): the
#: rest are counted as left out.
PANELS_MAX = 40
#: The most panels of ECDFs (10 methods each) one figure draws.
ECDF_PANELS_MAX = 12
#: The most curves one panel draws (methods, or sources with their empty sequences).
SERIES_MAX = 40
#: The most sources (result files) one ECDF panel overlays, each with its empty sequence.
SOURCES_MAX = SERIES_MAX // 2


def _check_number(name: str, value: object) -> float:
    return plain_number(name, value)  # a plain float: a subclass's comparisons may lie


def _check_options(ax: object, log_x: object) -> None:
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}")
    if log_x is not None and not isinstance(log_x, bool):
        raise TypeError(f"log_x must be True, False or None (automatic), not {log_x!r}")


def _check_ncols(ncols: object) -> int:
    ncols = plain_int("ncols", ncols, "an int >= 1")  # the plain int: a subclass's comparisons may lie
    if ncols < 1:
        raise ValueError(f"ncols must be an int >= 1, not {ncols!r}")
    return ncols


def _check_methods(methods: object) -> list[str] | None:
    # Names are not looked up in the catalog: a file may come from another
    # fastcpu, with other methods. An empty list draws nothing (said later).
    return None if methods is None else check_method_names(methods, allow_empty=True)


def _check_sources(sources: object) -> list[Results]:
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


def _log_x(ax: Axes, low: float, high: float) -> None:
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
    return _median(r.raw) >= _SLOW_RATIO * max(1.0, _median(r.empty))


def _median(ticks: np.ndarray) -> float:
    """The median of one array of counts, without a copy of it."""
    return _blocks.median(_blocks.counts(ticks))


def _bench_results(
    results: Results | Iterable[BenchResult], methods: Sequence[str] | None
) -> list[BenchResult]:
    methods = _check_methods(methods)
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


def _colors(n: int) -> list[Any]:
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
_OTHER = "other"
#: A catalog row's role (MethodInfo.role, set in csrc/sequences.c) -> its panel.
_GROUP_OF_ROLE = {
    "cpu_source": "instructions",
    "library_call": "library calls",
    "model": "models",
    "entry_cost": "kernel entries and comparison costs",
    "chain": "kernel entries and comparison costs",
}
_PANEL_MAX = 10  # curves per ECDF panel: a group with more is split


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
    return _OTHER if row is None else _GROUP_OF_ROLE.get(row.role, _OTHER)


# -- units, steps and the axes' ticks ----------------------------------------------

def _scale(r: BenchResult, unit: str) -> float:
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


def _step(results: Sequence[BenchResult], unit: str) -> float:
    """The counter's step in `unit`: the coarsest of `results` (0 where none is known)."""
    return max((r.step * _scale(r, unit) for r in results), default=0.0)


def _decimals(x: float) -> int:
    """Decimals that write `x` within 1% (24.5 -> 1, 10.02 -> 0, 2.6 -> 1)."""
    for d in range(4):
        if abs(round(x, d) - x) <= 0.01 * abs(x):
            return d
    return 4


#: How a figure that left methods out says how to choose them.
_CHOOSE = "name the ones to draw with methods= (the CLI's --methods)"
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


def _round_ticks(ax: Axes, step: float, low: float, high: float, whole: bool, most: int = 8) -> None:
    """Major ticks on round values of the axis's unit: 1, 2 or 5 times a power of ten, at
    most `most` intervals, whole numbers only where `whole` (TSC ticks: nothing lies
    between two). Minor ticks on the multiples of the counter's step, where the major
    ticks are further apart than a step and at most _MINOR_MAX steps are in view. A linear axis
    only."""
    ax.xaxis.set_major_locator(MaxNLocator(nbins=most, steps=[1, 2, 5, 10], integer=whole))
    if step > 0 and high > low and step < (high - low) / most and (high - low) / step <= _MINOR_MAX:
        ax.xaxis.set_minor_locator(_StepMultiples(step))


def _estimate_text(r: BenchResult, unit: str) -> str:
    """``ESTIMATE 21.7 ± 1.1 ns``: the recommended estimate per copy and its 95% interval,
    to the precision the interval allows (:func:`fastcpu._plot_text.with_interval`)."""
    cost = statistic("estimate")  # the cost figure, as everywhere
    value, half = cost.value(r, unit), cost.half_width(r, unit)
    words = UNIT_TABLE[unit].words if unit != "ticks" else ("ticks" if r.counter == "tsc" else "PMU cycles")
    if not math.isfinite(half):
        return f"ESTIMATE {value:.3g} {words} (no interval: too few runs)"
    return f"ESTIMATE {with_interval(value, half)} {words}"


def _wrap_title(text: str, width_in: float, fontsize_pt: float) -> str:
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


# -- one method: exact counts --------------------------------------------------------

def counts(
    result: BenchResult,
    *,
    ax: Axes | None = None,
    unit: str = "ticks",
    log_x: bool | None = None,
    tail: float = 0.001,
) -> Axes:
    """Exact counts of each raw per-run value of one method, the empty sequence beside it.

    Args:
        result: one method's BenchResult.
        ax: draw here (default: a new figure).
        unit: the x axis: ``'ticks'`` (TSC ticks, the values as read),
            ``'ns'`` or ``'cycles'`` (core cycles), each value converted
            with the result's clock; the counts stay exact.
        log_x: logarithmic x axis; ``None`` chooses it for slow methods
            (:func:`is_slow`).
        tail: a linear axis ends at the largest value seen in at least
            this fraction of the runs (and at least twice); rarer values
            beyond it are counted under the axis, not drawn. 0 shows all.
            Runs of more than 65,536 distinct values (``_plot_data.DISTINCT_MAX``)
            are counted in at most 400 bins, a whole number of counts wide,
            and the axis ends at their (1 - tail) quantile; a note says so.

    Returns:
        The Axes: x in `unit` per run (harness included), y in runs. Its
        title gives the recommended estimate per copy with its 95% interval
        (:attr:`BenchResult.estimate`, in `unit`).
    """
    if not isinstance(result, BenchResult):
        raise TypeError(f"counts() draws one BenchResult, not {type(result).__name__}")
    unit = check_unit(unit)
    _check_options(ax, log_x)
    _check_tail(tail)
    scale = _scale(result, unit)
    log = is_slow(result) if log_x is None else log_x
    raw, empty = Curve([(result.raw, scale)]), Curve([(result.empty, scale)])
    both = Curve.pooled([raw, empty])
    high = both.high if log else _bulk_end(both, tail)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    label = name(result.method)
    if both.exact:
        stems = [(c.values, c.counts) for c in (raw, empty)]
        binned, drawn_to = "", high
    else:
        edges, geometric, binned = _bins(both, high, log, scale, unit)
        centres = np.sqrt(edges[:-1] * edges[1:]) if geometric else (edges[:-1] + edges[1:]) / 2
        stems = [(centres, np.diff(at_most(c, edges))) for c in (raw, empty)]
        drawn_to = float(edges[-1])
    beyond = both.runs - int(at_most(both, [drawn_to])[0])
    # The method's counts point up, the empty sequence's down, on one exact
    # x axis: equal values stay visible without shifting either.
    for (x, n), label_, color, sign in zip(stems, (f"{label} \u2191", "empty sequence \u2193"),
                                           ("C0", "0.5"), (1, -1)):
        keep = (x <= drawn_to) & (n > 0)
        x, n = x[keep], n[keep]
        ax.vlines(x, 0, sign * n, color=color, linewidth=1.5)
        ax.plot(x, sign * n, "o", color=color, markersize=3, label=label_)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{abs(y):g}"))
    low_x, high_x = both.low, high
    if log:
        _log_x(ax, low_x, high_x)
    else:
        step = max(1.0, result.step) * scale
        ax.set_xlim(low_x - step, high_x + step)
        _round_ticks(ax, result.step * scale, low_x - step, high_x + step, unit == "ticks", most=6)
    ax.set_xlabel(UNITS[unit] + (", log scale" if log else ""), **PLAIN)
    ax.set_ylabel("runs (count)")
    title = f"{label}: {_estimate_text(result, unit)}"
    title += f" per copy (x{result.unroll})" if result.unroll > 1 else ""
    ax.set_title(title, fontsize="medium", pad=14, **PLAIN)
    notes = [binned] if binned else []
    if beyond:
        notes.append(f"{beyond} {'run' if beyond == 1 else 'runs'} > {high_x:.{_decimals(high_x)}f} "
                     f"{UNIT_TABLE[unit].words}\nnot shown")
    if notes:
        # Under the x axis label, outside the axes: nothing drawn can sit there.
        ax.annotate("\n".join(notes), xy=(1.0, 0.0),
                    xycoords=("axes fraction", ax.xaxis.label), xytext=(0, -2),
                    textcoords="offset points", ha="right", va="top", fontsize="small",
                    annotation_clip=False, **PLAIN)
    # Under the title, outside the axes: stems fill the inside.
    legend = ax.legend(fontsize="small", frameon=False, loc="lower center", bbox_to_anchor=(0.5, 0.98),
                       ncol=2, handletextpad=0.2, columnspacing=1.2, borderaxespad=0)
    plain(*legend.get_texts())
    return ax


#: Bins of a count plot whose runs hold too many distinct values to draw each.
_COUNT_BINS = 400
_BINNED = "runs counted in"


def _bins(both: Curve, high: float, log: bool, scale: float, unit: str) -> tuple[np.ndarray, bool, str]:
    """Bin edges (in the unit) from `both`'s smallest value to `high` for a count plot
    that cannot draw every value: a whole number of counts wide (geometrically spaced on
    a log axis where the smallest value is at least 1), each edge half a count off the
    values so that none sits on one; whether they are geometric; and the note that says
    so."""
    low_t, high_t = both.low / scale, high / scale
    geometric = log and low_t >= 1 and high_t > low_t
    if geometric:
        ends = np.unique(np.floor(np.geomspace(low_t, high_t + 1, _COUNT_BINS + 1)))
        what = f"{ends.size - 1} bins, log-spaced"
    else:
        width = max(1, math.ceil((high_t - low_t + 1) / _COUNT_BINS))
        ends = low_t + width * np.arange(math.ceil((high_t - low_t + 1) / width) + 1)
        what = f"bins of {width * scale:.{_decimals(width * scale)}f} {UNIT_TABLE[unit].words}"
    note = f"{_BINNED} {what} (over {DISTINCT_MAX:,} distinct values)"
    return (ends - 0.5) * scale, geometric, note


def _bulk_end(both: Curve, tail: float) -> float:
    """Where a linear axis ends: the largest value seen in at least max(2, tail * runs)
    runs (the median at least), from exact counts; without them, the (1 - tail) quantile.

    Values seen once or twice far out (interrupts) would squeeze the bulk
    into a corner; they are counted on the plot instead of drawn.
    """
    if tail == 0:
        return both.high
    median = quantile(both, 0.5)
    if both.values is None or both.counts is None:
        return max(quantile(both, 1 - tail), median)
    common = both.values[both.counts >= max(2.0, tail * both.runs)]
    end = float(common.max()) if common.size else both.high
    return max(end, median)


def distributions(
    results: Results | Iterable[BenchResult],
    methods: Sequence[str] | None = None,
    *,
    unit: str = "ticks",
    ncols: int = 3,
    tail: float = 0.001,
) -> Figure:
    """A grid of :func:`counts` in `unit`, one panel per method (all measured ones by default),
    at most :data:`PANELS_MAX` of them: the title says how many more there were."""
    unit = check_unit(unit)
    ncols = _check_ncols(ncols)
    _check_tail(tail)
    chosen = _bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    chosen, left_out = chosen[:PANELS_MAX], len(chosen) - PANELS_MAX
    ncols = min(ncols, len(chosen))
    nrows = -(-len(chosen) // ncols)
    # At least 6.4 inches wide, so that one panel's figure holds its titles.
    width = max(4.8 * ncols, 6.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, 3.3 * nrows),
                             layout="constrained", squeeze=False)
    for ax, r in zip(axes.flat, chosen):
        counts(r, ax=ax, unit=unit, tail=tail)
    for ax in axes.flat[len(chosen):]:
        ax.set_visible(False)
    lines = []
    if isinstance(results, Results):
        runs = sorted({r.runs for r in chosen})
        what = ("raw " if unit == "ticks" else "") + UNIT_TABLE[unit].words
        binned = any(_BINNED in t.get_text() for ax in axes.flat for t in ax.texts)
        how = "exact counts, binned where a panel says so" if binned else "exact counts"
        lines += [name(results.name), f"{what} per run, {how} ({_runs_words(runs)}, "
                                      f"serialize={name(results.serialize)})"]
    if left_out > 0:
        lines.append(more(left_out, "methods", f"{PANELS_MAX} panels", _CHOOSE))
    if lines:
        fig.suptitle(_wrap_title("\n".join(lines), width - 0.3, 12), **PLAIN)
    return fig


def _runs_words(runs: Sequence[int]) -> str:
    """``10000 runs``, ``200/400 runs``, ``200 to 100000 runs`` (over three run counts)."""
    if len(runs) > 3:
        return f"{min(runs)} to {max(runs)} runs"
    return f"{'/'.join(map(str, runs))} runs"


# -- ECDFs ------------------------------------------------------------------------------

def _legend_outside(ax: Axes, ncol: int = 1) -> None:
    """The legend to the right of the axes, top-aligned: never on the curves."""
    legend = ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       borderaxespad=0, ncol=ncol)
    plain(*legend.get_texts(), legend.get_title())


def _empties(chosen: Sequence[BenchResult], unit: str) -> Curve:
    """The empty sequence's runs of every result in `chosen`, pooled (in `unit`)."""
    return Curve([(r.empty, _scale(r, unit)) for r in chosen])


def _ecdf_panel(ax: Axes, chosen: list[BenchResult], pooled: Curve, unit: str,
                log_x: bool | None, upto: float, left_out: int = 0) -> None:
    medians = [_median(r.raw) for r in chosen]
    log = (max(medians) >= _SLOW_RATIO * max(1.0, min(medians))) if log_x is None else log_x
    curves = [(pooled, {"color": "black", "linestyle": "--", "linewidth": 1, "label": "empty sequence"})]
    curves += [(Curve([(r.raw, _scale(r, unit))]), {"color": color, "label": name(r.method)})
               for r, color in zip(chosen, _colors(len(chosen)))]
    _draw_ecdfs(ax, curves, unit, log, upto, _step(chosen, unit))
    if left_out > 0:  # a line in the legend, drawn nowhere
        ax.plot([], [], " ", label=more(left_out, "methods", f"{SERIES_MAX} curves", _CHOOSE))


def ecdf(
    results: Results | Iterable[BenchResult],
    methods: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    unit: str = "ticks",
    log_x: bool | None = None,
    upto: float = 0.995,
) -> Axes:
    """ECDFs of raw per-run timings of several methods of one machine, overlaid on one Axes.

    The empty sequence's runs (of every method, pooled) are drawn dashed:
    the floor every method sits on. `unit` is ``'ticks'``, ``'ns'`` or
    ``'cycles'``; ``log_x`` ``None`` picks a log axis when the methods'
    medians span more than 5x. The x axis ends one counter step past the
    largest `upto` quantile of any method (1: at the largest run), where
    the curves are flat, so that a few interrupted runs do not squeeze the
    rest. The legend sits to the right of the axes. At most
    :data:`SERIES_MAX` methods are drawn; the legend says how many more
    there were.

    Without `methods` and `ax`, on a Results whose methods fall into more
    than one group (:func:`method_group`), the figure holds one panel per
    group (:func:`ecdf_groups`) and the first panel is returned: its
    ``.figure`` is the whole figure. Name the methods, or pass `ax`, for
    one panel.
    """
    unit = check_unit(unit)
    _check_options(ax, log_x)
    _check_upto(upto)
    chosen = _bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    if ax is None and methods is None and len(_panels(chosen)) > 1:
        title = name(results.name) if isinstance(results, Results) else None
        return _grouped_figure(chosen, title, unit, log_x, upto, 2).axes[0]
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.5), layout="constrained")
    chosen, left_out = chosen[:SERIES_MAX], len(chosen) - SERIES_MAX
    _ecdf_panel(ax, chosen, _empties(chosen, unit), unit, log_x, upto, left_out)
    if isinstance(results, Results):
        ax.set_title(f"{name(results.name)}: ECDF of each method's runs", fontsize="medium", **PLAIN)
    _legend_outside(ax, ncol=2 if len(chosen) > 14 else 1)
    return ax


#: The title a group's trap-scale methods get on a panel of their own.
SLOW_PANEL = "{group}: trap and system-call scale"


def _panels(chosen: list[BenchResult]) -> list[tuple[str, list[BenchResult]]]:
    """`chosen` by :func:`method_group`, in :data:`GROUPS` order; in each group the
    trap- and system-call-scale methods (:func:`is_slow`) on a panel of their own
    (``SLOW_PANEL``), so that a trapped SIDT's thousands of ticks do not squeeze a
    2-tick difference between instructions against the axis; a part of more than
    ``_PANEL_MAX`` split evenly ("models, 1 of 2")."""
    by_group: dict[tuple[str, bool], list[BenchResult]] = {}
    for r in chosen:
        by_group.setdefault((method_group(r), is_slow(r)), []).append(r)
    panels = []
    for group in (*GROUPS, _OTHER):
        for title, slow in ((group, False), (SLOW_PANEL.format(group=group), True)):
            part = by_group.get((group, slow), [])
            if part:
                pieces = -(-len(part) // _PANEL_MAX)
                for i in range(pieces):
                    piece = part[i * len(part) // pieces:(i + 1) * len(part) // pieces]
                    panels.append((title if pieces == 1 else f"{title}, {i + 1} of {pieces}", piece))
    return panels


def ecdf_groups(
    results: Results | Iterable[BenchResult],
    methods: Sequence[str] | None = None,
    *,
    unit: str = "ticks",
    log_x: bool | None = None,
    upto: float = 0.995,
    ncols: int = 2,
) -> Figure:
    """:func:`ecdf` in panels, one per group of methods (:func:`method_group`: instructions,
    library calls, models, kernel entries and comparison costs, then any others), the
    group's trap- and system-call-scale methods (:func:`is_slow`) on a panel of their own,
    at most 10 methods to a panel so that each curve has its own colour; each panel has
    the pooled empty sequence dashed, its own x axis, and its legend to its right. At most
    :data:`ECDF_PANELS_MAX` panels are drawn; the title says how many methods were left out."""
    unit = check_unit(unit)
    ncols = _check_ncols(ncols)
    _check_options(None, log_x)
    _check_upto(upto)
    chosen = _bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    return _grouped_figure(chosen, name(results.name) if isinstance(results, Results) else None,
                           unit, log_x, upto, ncols)


def _grouped_figure(chosen: list[BenchResult], title: str | None, unit: str, log_x: bool | None,
                    upto: float, ncols: int) -> Figure:
    panels = _panels(chosen)
    panels, left_out = panels[:ECDF_PANELS_MAX], sum(len(m) for _, m in panels[ECDF_PANELS_MAX:])
    ncols = min(ncols, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.6 * ncols, 3.6 * nrows),
                             layout="constrained", squeeze=False)
    pooled = _empties([r for _, members in panels for r in members], unit)
    for ax, (panel, members) in zip(axes.flat, panels):
        _ecdf_panel(ax, members, pooled, unit, log_x, upto)
        ax.set_title(panel, fontsize="medium", **PLAIN)
        _legend_outside(ax)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    text = f"{title + ': ' if title else ''}ECDF of each method's runs, by kind of method"
    if left_out > 0:
        text += "\n" + more(left_out, "methods", f"{ECDF_PANELS_MAX} panels", _CHOOSE)
    fig.suptitle(text, **PLAIN)
    return fig


def _check_tail(tail: object) -> None:
    if not 0 <= _check_number("tail", tail) < 1:
        raise ValueError(f"tail must be a fraction of the runs in [0, 1), not {tail}")


def _check_upto(upto: object) -> None:
    if not 0 < _check_number("upto", upto) <= 1:
        raise ValueError(f"upto must be a quantile in (0, 1], not {upto}")


def _draw_ecdfs(ax: Axes, curves: Sequence[tuple[Curve, dict[str, Any]]], unit: str, log: bool,
                upto: float, step: float = 0.0) -> None:
    """Each curve's ECDF (a step plot with the keywords beside it), on an x axis from the
    smallest run to past the step that holds the largest `upto` quantile."""
    low = min(c.low for c, _ in curves)
    # The x axis ends past the step that holds the `upto` quantile, not on it:
    # the last rise of each curve stays inside the axes.
    high = max(c.high if upto == 1 else quantile(c, upto) for c, _ in curves)
    if log:
        left, right = low / 1.15, high * max(1.15, 1 + step / high if high > 0 else 1.15)
    else:
        pad = step if step > 0 else (0.04 * (high - low) or 1.0)
        left, right = low - pad, high + pad
    for curve, style in curves:
        x, y = ecdf_points(curve, low, right, log)
        ax.step(x, y, where="post", **style)
    if log:
        _log_x(ax, low, high)
    ax.set_xlim(left, right)
    if not log:
        _round_ticks(ax, step, left, right, unit == "ticks")
    clipped = "" if upto == 1 else f", up to the {upto:.3g} quantile"
    ax.set_xlabel(UNITS[unit] + (", log scale" if log else "") + clipped, **PLAIN)
    ax.set_ylabel("fraction of runs <= x")
    ax.set_ylim(0, 1.005)


def ecdf_machines(
    sources: Iterable[Source],
    method: str,
    *,
    ax: Axes | None = None,
    unit: str = "ns",
    log_x: bool | None = None,
    upto: float = 0.995,
    legend: bool = True,
) -> Axes:
    """ECDFs of one method's raw per-run timings on several machines, overlaid.

    Each machine's empty sequence is drawn dashed in its colour. `unit` is
    ``'ns'`` (default), ``'cycles'`` or ``'ticks'``; TSC ticks of different
    machines are different units, so prefer ns or cycles. Machines where
    `method` was not measured are listed in the legend as such. `upto`
    ends the x axis as in :func:`ecdf`; a linear axis has its major ticks
    on round values of `unit`, its minor ticks on the counter's step (the
    coarsest of the machines', in `unit`). ``legend=False`` leaves the
    legend to the caller (labels stay on the lines, names from the files as
    they are: draw them with ``parse_math=False``, as the plots' own legends
    are, e.g. through ``fastcpu._plot_text.plain(*legend.get_texts())``). At most
    :data:`SOURCES_MAX` sources are drawn; the legend says how many more
    there were.
    """
    unit = check_unit(unit)
    if not isinstance(method, str):
        raise TypeError(f"method must be a method name (str), not {type(method).__name__}")
    _check_options(ax, log_x)
    _check_upto(upto)
    if not isinstance(legend, bool):
        raise TypeError(f"legend must be a bool, not {type(legend).__name__}")
    loaded = _check_sources(sources)
    loaded, left_out = loaded[:SOURCES_MAX], len(loaded) - SOURCES_MAX
    present = [res[method] for res in loaded if method in res]
    if not present:
        raise ValueError(f"{method!r} was measured on none of these machines"
                         + (f" (the first {SOURCES_MAX} drawn)" if left_out > 0 else ""))
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.5), layout="constrained")
    log = any(is_slow(r) for r in present) if log_x is None else log_x
    curves = []
    for res, color in zip(loaded, _colors(len(loaded))):
        if method not in res:
            ax.plot([], [], " ", label=f"{name(res.name)}: not measured")
            continue
        r = res[method]
        scale = _scale(r, unit)
        curves += [(Curve([(r.raw, scale)]), {"color": color, "label": name(res.name)}),
                   (Curve([(r.empty, scale)]), {"color": color, "linestyle": "--", "linewidth": 1})]
    _draw_ecdfs(ax, curves, unit, log, upto, _step(present, unit))
    ax.plot([], [], "--", color="0.4", linewidth=1, label="dashed: its empty sequence")
    if left_out > 0:
        ax.plot([], [], " ", label=more(left_out, "sources", f"{SOURCES_MAX}", "pass fewer sources (files)"))
    ax.set_title(name(method), fontsize="medium", **PLAIN)
    if legend:
        _legend_outside(ax)
    return ax


def machines(
    sources: Iterable[Source],
    methods: Sequence[str] | None = None,
    *,
    unit: str = "ns",
    ncols: int = 3,
) -> Figure:
    """A grid of :func:`ecdf_machines`, one panel per method measured on any of the sources,
    with one legend at the top: at most :data:`PANELS_MAX` panels of :data:`SOURCES_MAX`
    sources each, the legend saying how many more there were."""
    unit = check_unit(unit)
    ncols = _check_ncols(ncols)
    methods = _check_methods(methods)
    loaded = _check_sources(sources)
    loaded, sources_left_out = loaded[:SOURCES_MAX], len(loaded) - SOURCES_MAX
    if methods is None:
        methods = list(dict.fromkeys(m for res in loaded for m in res))
    if not methods:
        raise ValueError("nothing to plot: no method measured")
    for m in methods:
        if not any(m in res for res in loaded):
            raise ValueError(f"{m!r} was measured on none of these machines"
                             + (f" (the first {SOURCES_MAX} drawn)" if sources_left_out > 0 else ""))
    methods, methods_left_out = methods[:PANELS_MAX], len(methods) - PANELS_MAX
    ncols = min(ncols, len(methods))
    nrows = -(-len(methods) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.4 * nrows),
                             layout="constrained", squeeze=False)
    for ax, m in zip(axes.flat, methods):
        ecdf_machines(loaded, m, ax=ax, unit=unit, legend=False)
    for ax in axes.flat[len(methods):]:
        ax.set_visible(False)
    # One legend for the grid, at its top: every panel has the same sources.
    colors = _colors(len(loaded))
    handles = [Line2D([], [], color=c, label=name(res.name)) for res, c in zip(loaded, colors)]
    handles.append(Line2D([], [], color="0.4", linestyle="--", linewidth=1,
                          label="dashed: its empty sequence"))
    n = len(loaded)
    title = (f"each method across {n} source{'s' if n != 1 else ''} "
             f"(machines, or one machine at different times): ECDF of runs")
    for left_out, what, most, hint in (
            (sources_left_out, "sources", f"{SOURCES_MAX}", "pass fewer sources (files)"),
            (methods_left_out, "methods", f"{PANELS_MAX} panels", _CHOOSE)):
        if left_out > 0:
            title += "\n" + more(left_out, what, most, hint)
    # The title heads the legend: a suptitle and an "outside upper" legend
    # would be laid out on top of each other.
    legend = fig.legend(handles=handles, loc="outside upper center", ncol=min(2, len(handles)),
                        frameon=False, title=title, title_fontproperties={"size": "large"})
    plain(*legend.get_texts(), legend.get_title())
    return fig


# -- published figures against measured ones --------------------------------------------

_PUBLISHED_UNITS = {"core cycles": ("core_cycles", 1.0), "ns": ("ns", 1.0), "us": ("ns", 1000.0)}
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")
#: How a published machine's posts are told apart: open, filled, half-filled.
_FILLS = ("none", "full", "left", "bottom")


def _post(row: Mapping[str, str]) -> str:
    """Which post a published figure comes from, briefly: its date, else its source's head."""
    return row.get("date") or row["source"].split(",")[0][:40]


def published(
    sources: Iterable[Source],
    methods: Sequence[str] | None = None,
    *,
    figures: str | os.PathLike[str] | None = None,
) -> Figure:
    """Published figures against each source's recommended estimate, per method.

    Two panels: core cycles (figures published in core cycles) and ns
    (figures published in ns or us). One row per method that has a
    published figure (``fastcpu/published_figures.csv``, or the CSV
    `figures`) and was measured in a source: the published values (black,
    one marker shape per published machine), then each source's
    :attr:`~BenchResult.estimate_core_cycles` / :attr:`~BenchResult.estimate_ns`
    with its 95% interval as an error bar (colour and shape per source),
    each at its own height in the row so that none hides another. The x
    axis is symmetric-log (linear within 1 of 0), which shows 0 and the
    small negative estimates of the cheapest sequences. At most
    :data:`SERIES_MAX` methods, published series (a machine in one post)
    and :data:`SOURCES_MAX` sources are drawn; the legend says how many
    more there were.
    """
    loaded = _check_sources(sources)
    loaded, sources_left_out = loaded[:SOURCES_MAX], len(loaded) - SOURCES_MAX
    methods = _check_methods(methods)
    if figures is not None and not isinstance(figures, (str, os.PathLike)):
        raise TypeError(f"figures must be a CSV path or None, not {type(figures).__name__}")
    rows = read_published() if figures is None else read_published(figures)
    matched = [row for row in rows if row["fastcpu_method"] and row["unit"] in _PUBLISHED_UNITS]
    order = list(dict.fromkeys(row["fastcpu_method"] for row in matched))
    if methods is not None:
        unknown = [m for m in methods if m not in order]
        if unknown:
            raise ValueError(f"no published figure for {', '.join(map(repr, unknown))}; "
                             f"published: {', '.join(order)}")
        order = [m for m in order if m in methods]
    order = [m for m in order if any(m in res for res in loaded)]
    if not order:
        raise ValueError("nothing to plot: no method with a published figure was measured "
                         "in these sources")
    order, methods_left_out = order[:SERIES_MAX], len(order) - SERIES_MAX
    # value per (method, unit, published series), each once (a row posted twice counts once);
    # a series is one machine in one post: the same machine in two posts (dean gaudet's
    # P4 in take 2 and in the follow-up of 01-08) is two series, told apart by the fill
    pub: dict[tuple[str, str], dict[tuple[str, str], list[float]]] = {}
    for row in matched:
        unit, factor = _PUBLISHED_UNITS[row["unit"]]
        series = (row["machine"], _post(row))
        values = pub.setdefault((row["fastcpu_method"], unit), {}).setdefault(series, [])
        v = float(row["value"]) * factor
        if v not in values:
            values.append(v)
    pub_series = list(dict.fromkeys((row["machine"], _post(row)) for row in matched
                                    if row["fastcpu_method"] in order))
    pub_series, series_left_out = pub_series[:SERIES_MAX], len(pub_series) - SERIES_MAX
    drawn = set(pub_series)
    pub_machines = list(dict.fromkeys(m for m, _ in pub_series))
    # published: black, a shape per machine, open for its first post, then filled, half...;
    # measured: coloured, filled shapes
    shape = {m: _MARKERS[i % len(_MARKERS)] for i, m in enumerate(pub_machines)}
    fill = {}
    for m in pub_machines:
        posts = [p for mm, p in pub_series if mm == m]
        fill.update({(m, p): _FILLS[k % len(_FILLS)] for k, p in enumerate(posts)})
    colors = _colors(len(loaded))
    fig, axes = plt.subplots(1, 2, figsize=(14, 0.55 * len(order) * (1 + 0.12 * len(loaded)) + 2.6),
                             layout="constrained", sharey=True)
    for ax, unit in zip(axes, ("core_cycles", "ns")):
        for y, method in enumerate(order):
            here = {k: v for k, v in pub.get((method, unit), {}).items() if k in drawn}
            slots = len(here) + len(loaded)
            offsets = (np.arange(slots) - (slots - 1) / 2) * min(0.8 / max(slots - 1, 1), 0.16)
            for k, ((machine, post), values) in enumerate(here.items()):
                ax.plot(values, [y + offsets[k]] * len(values), shape[machine], color="black",
                        fillstyle=fill[(machine, post)], markerfacecoloralt="white", markersize=6,
                        linestyle="none", gid=f"published|{method}|{machine}|{post}")
            for i, res in enumerate(loaded):
                if method not in res:
                    continue
                r = res[method]
                cost = statistic("estimate")  # the cost figure, as everywhere
                v, half = cost.value(r, unit), cost.half_width(r, unit)
                bars = ax.errorbar([v], [y + offsets[len(here) + i]],
                                   xerr=[[half], [half]] if math.isfinite(half) else None,
                                   fmt=_MARKERS[i % len(_MARKERS)], color=colors[i], alpha=0.75,
                                   markersize=5, capsize=2, linewidth=1)
                bars.lines[0].set_gid(f"measured|{method}|{printable(res.name)}")
        ax.set_xscale("symlog", linthresh=1)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(UNIT_TABLE[unit].words + " per call, symmetric log scale", **PLAIN)
        ax.set_title("figures published in core cycles" if unit == "core_cycles"
                     else "figures published in ns or us", fontsize="medium", **PLAIN)
        ax.grid(axis="x", alpha=0.3)
        for y in range(len(order) - 1):
            ax.axhline(y + 0.5, color="0.85", linewidth=0.6)
    axes[0].set_yticks(range(len(order)))
    axes[0].set_ylim(len(order) - 0.5, -0.5)
    # Each row's method: a text of ours (plain), not a tick label, which matplotlib
    # may rebuild at any draw with the default text properties.
    axes[0].tick_params(axis="y", labelleft=False)
    for y, method in enumerate(order):
        axes[0].annotate(name(method), xy=(0, y), xycoords=axes[0].get_yaxis_transform(), xytext=(-5, 0),
                         textcoords="offset points", ha="right", va="center", gid="method", **PLAIN)
    several = {m for m in pub_machines if sum(mm == m for mm, _ in pub_series) > 1}
    handles = [Line2D([], [], marker=shape[m], color="black", fillstyle=fill[(m, p)],
                      markerfacecoloralt="white", linestyle="none",
                      label=f"published: {name(m)}" + (f" ({name(p)})" if m in several else ""))
               for m, p in pub_series]
    handles += [Line2D([], [], marker=_MARKERS[i % len(_MARKERS)], color=c, alpha=0.75,
                       label=f"{name(res.name)}: ESTIMATE \u00b1 95% interval")
                for i, (res, c) in enumerate(zip(loaded, colors))]
    title = "Published figures against each source's ESTIMATE, per call"
    for left_out, what, most, hint in (
            (methods_left_out, "methods", f"{SERIES_MAX} rows", _CHOOSE),
            (series_left_out, "published series", f"{SERIES_MAX}", "give a shorter figures= CSV"),
            (sources_left_out, "sources", f"{SOURCES_MAX}", "pass fewer sources (files)")):
        if left_out > 0:
            title += "\n" + more(left_out, what, most, hint)
    # The title heads the legend (see machines()).
    legend = fig.legend(handles=handles, loc="outside upper center", ncol=3, frameon=False,
                        fontsize="small", title=title, title_fontproperties={"size": "large"})
    plain(*legend.get_texts(), legend.get_title())
    return fig
