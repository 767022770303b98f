"""ECDFs: methods overlaid (:func:`ecdf`), a whole Results split into panels
by kind of method (:func:`ecdf_groups`), machines overlaid
(:func:`ecdf_machines`) and each machine's methods side by side
(:func:`machines`); at most 10 curves to a panel, each its own colour,
legends outside the axes, a logarithmic axis for trap-scale methods."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .._args import check_unit
from ..results.bench_result import BenchResult
from ..results.results import Results, Source
from .axes import CHOOSE, ECDF_PANELS_MAX, GROUPS, OTHER, PANEL_MAX, PANELS_MAX, SERIES_MAX, SLOW_RATIO, SOURCES_MAX, UNITS, bench_results, check_methods, check_ncols, check_options, check_sources, check_upto, curve_colors, is_slow, method_group, round_ticks, run_median, set_log_x, unit_scale, unit_step
from .axes import Curve, ecdf_points, quantile
from .axes import PLAIN, more, name, plain


__all__ = ["ecdf", "ecdf_groups", "ecdf_machines", "machines", "SLOW_PANEL"]


# -- ECDFs ------------------------------------------------------------------------------

def _legend_outside(ax: Axes, ncol: int = 1) -> None:
    """The legend to the right of the axes, top-aligned: never on the curves."""
    legend = ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       borderaxespad=0, ncol=ncol)
    plain(*legend.get_texts(), legend.get_title())


def _empties(chosen: Sequence[BenchResult], unit: str) -> Curve:
    """The empty sequence's runs of every result in `chosen`, pooled (in `unit`)."""
    return Curve([(r.empty, unit_scale(r, unit)) for r in chosen])


def _ecdf_panel(ax: Axes, chosen: list[BenchResult], pooled: Curve, unit: str,
                log_x: bool | None, upto: float, left_out: int = 0) -> None:
    medians = [run_median(r.raw) for r in chosen]
    log = (max(medians) >= SLOW_RATIO * max(1.0, min(medians))) if log_x is None else log_x
    curves = [(pooled, {"color": "black", "linestyle": "--", "linewidth": 1, "label": "empty sequence"})]
    curves += [(Curve([(r.raw, unit_scale(r, unit))]), {"color": color, "label": name(r.method)})
               for r, color in zip(chosen, curve_colors(len(chosen)))]
    _draw_ecdfs(ax, curves, unit, log, upto, unit_step(chosen, unit))
    if left_out > 0:  # a line in the legend, drawn nowhere
        ax.plot([], [], " ", label=more(left_out, "methods", f"{SERIES_MAX} curves", CHOOSE))


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

    `unit`: ``'ticks'``, ``'ns'`` or ``'cycles'``. ``log_x`` None: log when the
    medians span more than 5x. The x axis ends a step past the largest `upto`
    quantile. The pooled empty sequence is dashed. At most :data:`SERIES_MAX`
    methods. Without `methods` and `ax`, a Results of several groups gets one
    panel per group (:func:`ecdf_groups`) and the first panel is returned."""
    unit = check_unit(unit)
    chosen = _chosen(results, methods, ax, log_x, upto)
    if ax is None and methods is None and len(_panels(chosen)) > 1:
        return _grouped_figure(chosen, _title(results), unit, log_x, upto, 2).axes[0]
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
    """`chosen` by :func:`method_group` in :data:`GROUPS` order, trap-scale methods on a panel
    of their own (a trapped SIDT would squeeze instruction-scale differences against the
    axis), a part of more than ``PANEL_MAX`` split evenly ("models, 1 of 2")."""
    by_group: dict[tuple[str, bool], list[BenchResult]] = {}
    for r in chosen:
        by_group.setdefault((method_group(r), is_slow(r)), []).append(r)
    panels = []
    for group in (*GROUPS, OTHER):
        for title, slow in ((group, False), (SLOW_PANEL.format(group=group), True)):
            part = by_group.get((group, slow), [])
            if part:
                pieces = -(-len(part) // PANEL_MAX)
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
    """:func:`ecdf` in panels, one per group of methods (slow ones apart), at most :data:`ECDF_PANELS_MAX` panels."""
    unit = check_unit(unit)
    ncols = check_ncols(ncols)
    return _grouped_figure(_chosen(results, methods, None, log_x, upto), _title(results), unit, log_x, upto,
                           ncols)


def _chosen(results: Results | Iterable[BenchResult], methods: Sequence[str] | None, ax: Axes | None,
            log_x: bool | None, upto: float) -> list[BenchResult]:
    """The results an ECDF plot draws, after the checks both entry points make."""
    check_options(ax, log_x)
    check_upto(upto)
    chosen = bench_results(results, methods)
    if not chosen:
        raise ValueError("nothing to plot: no method measured (or none of those named)")
    return chosen


def _title(results: Results | Iterable[BenchResult]) -> str | None:
    """A figure's title: the machine's name, where the runs came as a Results."""
    return name(results.name) if isinstance(results, Results) else None


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
        text += "\n" + more(left_out, "methods", f"{ECDF_PANELS_MAX} panels", CHOOSE)
    fig.suptitle(text, **PLAIN)
    return fig


def _draw_ecdfs(ax: Axes, curves: Sequence[tuple[Curve, dict[str, Any]]], unit: str, log: bool,
                upto: float, step: float = 0.0) -> None:
    """Each curve's ECDF as a step plot, x from the smallest run past the `upto` quantile's step."""
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
        set_log_x(ax, low, high)
    ax.set_xlim(left, right)
    if not log:
        round_ticks(ax, step, left, right, unit == "ticks")
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

    `unit`: ``'ns'`` (default), ``'cycles'`` or ``'ticks'`` (ticks differ between
    machines). Each machine's empty sequence is dashed; `upto` as in :func:`ecdf`.
    ``legend=False`` leaves the legend to the caller (draw its names with
    ``fastcpu.plot.axes.plain``). At most :data:`SOURCES_MAX` sources."""
    unit = check_unit(unit)
    if not isinstance(method, str):
        raise TypeError(f"method must be a method name (str), not {type(method).__name__}")
    check_options(ax, log_x)
    check_upto(upto)
    if not isinstance(legend, bool):
        raise TypeError(f"legend must be a bool, not {type(legend).__name__}")
    loaded = check_sources(sources)
    loaded, left_out = loaded[:SOURCES_MAX], len(loaded) - SOURCES_MAX
    present = [res[method] for res in loaded if method in res]
    if not present:
        raise ValueError(f"{method!r} was measured on none of these machines"
                         + (f" (the first {SOURCES_MAX} drawn)" if left_out > 0 else ""))
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.5), layout="constrained")
    log = any(is_slow(r) for r in present) if log_x is None else log_x
    curves = []
    for res, color in zip(loaded, curve_colors(len(loaded))):
        if method not in res:
            ax.plot([], [], " ", label=f"{name(res.name)}: not measured")
            continue
        r = res[method]
        scale = unit_scale(r, unit)
        curves += [(Curve([(r.raw, scale)]), {"color": color, "label": name(res.name)}),
                   (Curve([(r.empty, scale)]), {"color": color, "linestyle": "--", "linewidth": 1})]
    _draw_ecdfs(ax, curves, unit, log, upto, unit_step(present, unit))
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
    ncols = check_ncols(ncols)
    methods = check_methods(methods)
    loaded = check_sources(sources)
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
    colors = curve_colors(len(loaded))
    handles = [Line2D([], [], color=c, label=name(res.name)) for res, c in zip(loaded, colors)]
    handles.append(Line2D([], [], color="0.4", linestyle="--", linewidth=1,
                          label="dashed: its empty sequence"))
    n = len(loaded)
    title = (f"each method across {n} source{'s' if n != 1 else ''} "
             f"(machines, or one machine at different times): ECDF of runs")
    for left_out, what, most, hint in (
            (sources_left_out, "sources", f"{SOURCES_MAX}", "pass fewer sources (files)"),
            (methods_left_out, "methods", f"{PANELS_MAX} panels", CHOOSE)):
        if left_out > 0:
            title += "\n" + more(left_out, what, most, hint)
    # The title heads the legend: a suptitle and an "outside upper" legend
    # would be laid out on top of each other.
    legend = fig.legend(handles=handles, loc="outside upper center", ncol=min(2, len(handles)),
                        frameon=False, title=title, title_fontproperties={"size": "large"})
    plain(*legend.get_texts(), legend.get_title())
    return fig
