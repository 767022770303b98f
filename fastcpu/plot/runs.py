"""One method's runs as exact counts (:func:`counts`) and one panel of them
per method (:func:`distributions`): the counts of each observed value,
never automatic bins or densities, the empty sequence's drawn downward on
the same axis; bins only where a method's runs hold more distinct values
than :data:`fastcpu.plot.axes.DISTINCT_MAX`, said on the plot."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .._args import UNITS as UNIT_TABLE
from .._args import check_unit
from ..results.bench_result import BenchResult
from ..results.results import Results
from .axes import CHOOSE, PANELS_MAX, UNITS, bench_results, check_ncols, check_options, check_tail, decimals_of, estimate_text, is_slow, round_ticks, set_log_x, unit_scale, wrap_title
from .axes import DISTINCT_MAX, Curve, at_most, quantile
from .axes import PLAIN, more, name, plain


__all__ = ["counts", "distributions"]


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
        unit: ``'ticks'`` (TSC ticks, as read), ``'ns'`` or ``'cycles'`` (core cycles).
        log_x: logarithmic x axis; None chooses it for slow methods (:func:`is_slow`).
        tail: a linear axis ends at the largest value seen in at least this
            fraction of the runs; rarer values are counted, not drawn (0: all).

    Returns:
        The Axes: x in `unit` per run (harness included), y in runs, titled
        with the ESTIMATE per copy and its 95% interval."""
    if not isinstance(result, BenchResult):
        raise TypeError(f"counts() draws one BenchResult, not {type(result).__name__}")
    unit = check_unit(unit)
    check_options(ax, log_x)
    check_tail(tail)
    scale = unit_scale(result, unit)
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
        set_log_x(ax, low_x, high_x)
    else:
        step = max(1.0, result.step) * scale
        ax.set_xlim(low_x - step, high_x + step)
        round_ticks(ax, result.step * scale, low_x - step, high_x + step, unit == "ticks", most=6)
    ax.set_xlabel(UNITS[unit] + (", log scale" if log else ""), **PLAIN)
    ax.set_ylabel("runs (count)")
    title = f"{label}: {estimate_text(result, unit)}"
    title += f" per copy (x{result.unroll})" if result.unroll > 1 else ""
    ax.set_title(title, fontsize="medium", pad=14, **PLAIN)
    notes = [binned] if binned else []
    if beyond:
        notes.append(f"{beyond} {'run' if beyond == 1 else 'runs'} > {high_x:.{decimals_of(high_x)}f} "
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
    """Bin edges (in the unit), whole counts wide and half a count off the values (geometric
    on a log axis from 1 up), whether they are geometric, and the note that says so."""
    low_t, high_t = both.low / scale, high / scale
    geometric = log and low_t >= 1 and high_t > low_t
    if geometric:
        ends = np.unique(np.floor(np.geomspace(low_t, high_t + 1, _COUNT_BINS + 1)))
        what = f"{ends.size - 1} bins, log-spaced"
    else:
        width = max(1, math.ceil((high_t - low_t + 1) / _COUNT_BINS))
        ends = low_t + width * np.arange(math.ceil((high_t - low_t + 1) / width) + 1)
        what = f"bins of {width * scale:.{decimals_of(width * scale)}f} {UNIT_TABLE[unit].words}"
    note = f"{_BINNED} {what} (over {DISTINCT_MAX:,} distinct values)"
    return (ends - 0.5) * scale, geometric, note


def _bulk_end(both: Curve, tail: float) -> float:
    """Where a linear axis ends: the largest value seen in at least max(2, tail * runs) runs, or the (1 - tail) quantile."""
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
    ncols = check_ncols(ncols)
    check_tail(tail)
    chosen = bench_results(results, methods)
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
        lines.append(more(left_out, "methods", f"{PANELS_MAX} panels", CHOOSE))
    if lines:
        fig.suptitle(wrap_title("\n".join(lines), width - 0.3, 12), **PLAIN)
    return fig


def _runs_words(runs: Sequence[int]) -> str:
    """``10000 runs``, ``200/400 runs``, ``200 to 100000 runs`` (over three run counts)."""
    if len(runs) > 3:
        return f"{min(runs)} to {max(runs)} runs"
    return f"{'/'.join(map(str, runs))} runs"
