"""Plots of raw per-run timings (matplotlib): exact counts and ECDFs.

The data is quantized (a TSC that moves in 10 ns steps gives values 26 ticks
apart) and heavy-tailed (interrupts, traps), so:

- distributions are exact counts of each observed value
  (``np.unique(..., return_counts=True)``), never automatic bins or
  densities, with the empty sequence beside the method (its counts drawn
  downward on the same axis);
- methods and machines are overlaid as ECDFs;
- the x axis is logarithmic for system-call and trap-scale methods (median
  at least 5x the empty sequence's), linear for the rest;
- every axis names its unit.

Every function returns the Figure or Axes it drew on and accepts an existing
Axes where that makes sense. fastcpu never selects a matplotlib backend.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ._args import check_method_names, check_unit
from ._result import BenchResult
from ._results import Results, Source, as_results

__all__ = ["counts", "distributions", "ecdf", "ecdf_machines", "machines", "is_slow", "UNITS"]

#: unit -> axis label of a per-run quantity in that unit.
UNITS = {
    "ticks": "TSC ticks per run (harness included)",
    "ns": "ns per run (harness included)",
    "core_cycles": "core cycles per run (harness included)",
}
_SLOW_RATIO = 5.0


def _check_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return value


def _check_options(ax: object, log_x: object) -> None:
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, not {type(ax).__name__}")
    if log_x is not None and not isinstance(log_x, bool):
        raise TypeError(f"log_x must be True, False or None (automatic), not {log_x!r}")


def _check_ncols(ncols: object) -> int:
    if isinstance(ncols, bool) or not isinstance(ncols, int):
        raise TypeError(f"ncols must be an int >= 1, not {type(ncols).__name__}")
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


def _convert(r: BenchResult, ticks: np.ndarray, unit: str) -> np.ndarray:
    return r.units.convert(ticks.astype(np.float64), unit)


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
    return float(np.median(r.raw)) >= _SLOW_RATIO * max(1.0, float(np.median(r.empty)))


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
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def counts(
    result: BenchResult,
    *,
    ax: Axes | None = None,
    log_x: bool | None = None,
    tail: float = 0.001,
) -> Axes:
    """Exact counts of each raw TSC-tick value of one method, the empty sequence beside it.

    Args:
        result: one method's BenchResult.
        ax: draw here (default: a new figure).
        log_x: logarithmic x axis; ``None`` chooses it for slow methods
            (:func:`is_slow`).
        tail: a linear axis ends at the largest value seen in at least
            this fraction of the runs (and at least twice); rarer values
            beyond it are counted on the plot, not drawn. 0 shows all.

    Returns:
        The Axes: x in TSC ticks per run (harness included), y in runs.
    """
    if not isinstance(result, BenchResult):
        raise TypeError(f"counts() draws one BenchResult, not {type(result).__name__}")
    _check_options(ax, log_x)
    _check_tail(tail)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    log = is_slow(result) if log_x is None else log_x
    both = np.concatenate([result.raw, result.empty])
    high = float(both.max()) if log else _bulk_end(both, tail)
    beyond = int(np.count_nonzero(both > high))
    # The method's counts point up, the empty sequence's down, on one exact
    # x axis: equal values stay visible without shifting either.
    for ticks, label, color, sign in (
        (result.raw, f"{result.method} \u2191", "C0", 1),
        (result.empty, "empty sequence \u2193", "0.5", -1),
    ):
        values, n = np.unique(ticks[ticks <= high], return_counts=True)
        x = values.astype(np.float64)
        ax.vlines(x, 0, sign * n, color=color, linewidth=1.5)
        ax.plot(x, sign * n, "o", color=color, markersize=3, label=label)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{abs(y):g}"))
    if log:
        _log_x(ax, float(both.min()), high)
    else:
        step = max(1, result.step)
        ax.set_xlim(float(both.min()) - step, high + step)
    ax.set_xlabel(UNITS["ticks"] + (", log scale" if log else ""))
    ax.set_ylabel("runs (count)")
    title = f"{result.method}: median {result.median:g} ticks above empty"
    if result.unroll > 1:
        title += f" (x{result.unroll} copies)"
    ax.set_title(title, fontsize="medium", pad=14)
    if beyond:
        # The bulk sits at the left of a linear axis: its upper right is free.
        ax.text(0.98, 0.95, f"{beyond} runs > {high:.0f}\nnot shown", transform=ax.transAxes,
                ha="right", va="top", fontsize="small")
    # Under the title, outside the axes: stems fill the inside.
    ax.legend(fontsize="small", frameon=False, loc="lower center", bbox_to_anchor=(0.5, 0.98),
              ncol=2, handletextpad=0.2, columnspacing=1.2, borderaxespad=0)
    return ax


def _bulk_end(ticks: np.ndarray, tail: float) -> float:
    """The largest value seen in at least max(2, tail * runs) runs: where a linear axis ends.

    Values seen once or twice far out (interrupts) would squeeze the bulk
    into a corner; they are counted on the plot instead of drawn.
    """
    values, n = np.unique(ticks, return_counts=True)
    if tail == 0:
        return float(values.max())
    common = values[n >= max(2.0, tail * ticks.size)]
    end = float(common.max()) if common.size else float(values.max())
    return max(end, float(np.median(ticks)))


def distributions(
    results: Results | Iterable[BenchResult],
    methods: Sequence[str] | None = None,
    *,
    ncols: int = 3,
    tail: float = 0.001,
) -> Figure:
    """A grid of :func:`counts`, one panel per method (all measured ones by default)."""
    ncols = _check_ncols(ncols)
    _check_tail(tail)
    chosen = _bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    ncols = min(ncols, len(chosen))
    nrows = -(-len(chosen) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.1 * nrows),
                             layout="constrained", squeeze=False)
    for ax, r in zip(axes.flat, chosen):
        counts(r, ax=ax, tail=tail)
    for ax in axes.flat[len(chosen):]:
        ax.set_visible(False)
    if isinstance(results, Results):
        runs = sorted({r.runs for r in chosen})
        fig.suptitle(f"{results.name}\nraw TSC ticks per run, exact counts "
                     f"({'/'.join(map(str, runs))} runs, serialize={results.serialize})")
    return fig


def _ecdf(ax: Axes, x: np.ndarray, **kwargs: Any) -> None:
    xs = np.sort(x)
    ys = np.arange(1, xs.size + 1) / xs.size
    ax.step(xs, ys, where="post", **kwargs)


def ecdf(
    results: Results | Iterable[BenchResult],
    methods: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    unit: str = "ticks",
    log_x: bool | None = None,
    upto: float = 0.995,
) -> Axes:
    """ECDFs of raw per-run timings of several methods of one machine, overlaid.

    The empty sequence's runs (of every method, pooled) are drawn dashed:
    the floor every method sits on. `unit` is ``'ticks'``, ``'ns'`` or
    ``'cycles'``; ``log_x`` ``None`` picks a log axis when the methods'
    medians span more than 5x. The x axis ends at the largest `upto`
    quantile of any method (1: at the largest run), where the curves are
    nearly flat, so that a few interrupted runs do not squeeze the rest.
    """
    unit = check_unit(unit)
    _check_options(ax, log_x)
    _check_upto(upto)
    chosen = _bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    medians = [float(np.median(r.raw)) for r in chosen]
    log = (max(medians) >= _SLOW_RATIO * max(1.0, min(medians))) if log_x is None else log_x
    pooled = np.concatenate([_convert(r, r.empty, unit) for r in chosen])
    _ecdf(ax, pooled, color="black", linestyle="--", linewidth=1, label="empty sequence")
    curves = [pooled]
    for r, color in zip(chosen, _colors(len(chosen))):
        curves.append(_convert(r, r.raw, unit))
        _ecdf(ax, curves[-1], color=color, label=r.method)
    _finish_ecdf_axis(ax, curves, unit, log, upto)
    if isinstance(results, Results):
        ax.set_title(f"{results.name}: ECDF of each method's runs", fontsize="medium")
    ax.legend(fontsize="small", frameon=False, ncol=2 if len(chosen) > 6 else 1, loc="lower right")
    return ax


def _check_tail(tail: object) -> None:
    if not 0 <= _check_number("tail", tail) < 1:
        raise ValueError(f"tail must be a fraction of the runs in [0, 1), not {tail}")


def _check_upto(upto: object) -> None:
    if not 0 < _check_number("upto", upto) <= 1:
        raise ValueError(f"upto must be a quantile in (0, 1], not {upto}")


def _finish_ecdf_axis(ax: Axes, curves: list[np.ndarray], unit: str, log: bool, upto: float) -> None:
    low = min(float(c.min()) for c in curves)
    high = max(float(np.quantile(c, upto)) for c in curves)
    if log:
        _log_x(ax, low, high)
        ax.set_xlim(low / 1.15, high * 1.15)
    else:
        pad = 0.04 * (high - low) or 1.0
        ax.set_xlim(low - pad, high + pad)
    clipped = "" if upto == 1 else f", up to the {upto:.3g} quantile"
    ax.set_xlabel(UNITS[unit] + (", log scale" if log else "") + clipped)
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
    ends the x axis as in :func:`ecdf`; ``legend=False`` leaves the legend
    to the caller (labels stay on the lines).
    """
    unit = check_unit(unit)
    if not isinstance(method, str):
        raise TypeError(f"method must be a method name (str), not {type(method).__name__}")
    _check_options(ax, log_x)
    _check_upto(upto)
    if not isinstance(legend, bool):
        raise TypeError(f"legend must be a bool, not {type(legend).__name__}")
    loaded = _check_sources(sources)
    present = [res[method] for res in loaded if method in res]
    if not present:
        raise ValueError(f"{method!r} was measured on none of these machines")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    log = any(is_slow(r) for r in present) if log_x is None else log_x
    curves = []
    for res, color in zip(loaded, _colors(len(loaded))):
        if method not in res:
            ax.plot([], [], " ", label=f"{res.name}: not measured")
            continue
        r = res[method]
        curves += [_convert(r, r.raw, unit), _convert(r, r.empty, unit)]
        _ecdf(ax, curves[-2], color=color, label=res.name)
        _ecdf(ax, curves[-1], color=color, linestyle="--", linewidth=1)
    ax.plot([], [], "--", color="0.4", linewidth=1, label="dashed: its empty sequence")
    _finish_ecdf_axis(ax, curves, unit, log, upto)
    ax.set_title(method, fontsize="medium")
    if legend:
        ax.legend(fontsize="small", frameon=False, loc="lower right")
    return ax


def machines(
    sources: Iterable[Source],
    methods: Sequence[str] | None = None,
    *,
    unit: str = "ns",
    ncols: int = 3,
) -> Figure:
    """A grid of :func:`ecdf_machines`, one panel per method measured on any of the machines."""
    unit = check_unit(unit)
    ncols = _check_ncols(ncols)
    methods = _check_methods(methods)
    loaded = _check_sources(sources)
    if methods is None:
        methods = list(dict.fromkeys(m for res in loaded for m in res))
    if not methods:
        raise ValueError("nothing to plot: no method measured")
    for m in methods:
        if not any(m in res for res in loaded):
            raise ValueError(f"{m!r} was measured on none of these machines")
    ncols = min(ncols, len(methods))
    nrows = -(-len(methods) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.4 * nrows),
                             layout="constrained", squeeze=False)
    for ax, m in zip(axes.flat, methods):
        ecdf_machines(loaded, m, ax=ax, unit=unit, legend=False)
    for ax in axes.flat[len(methods):]:
        ax.set_visible(False)
    # One legend for the grid: every panel has the same machines.
    colors = _colors(len(loaded))
    handles = [Line2D([], [], color=c, label=res.name) for res, c in zip(loaded, colors)]
    handles.append(Line2D([], [], color="0.4", linestyle="--", linewidth=1,
                          label="dashed: its empty sequence"))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(4, len(handles)),
               frameon=False)
    fig.suptitle(f"each method across {len(loaded)} result file(s): ECDF of runs")
    return fig
