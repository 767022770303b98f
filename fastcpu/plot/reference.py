"""Published figures beside measured ones (:func:`published`): each way's
recommended ESTIMATE with its 95% interval against the figures published
over the years (``_seed_table.read_published``)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from .._args import UNITS as UNIT_TABLE
from .._base import printable
from ..results.results import Source
from .axes import CHOOSE, SERIES_MAX, SOURCES_MAX, check_methods, check_sources, curve_colors
from .axes import PLAIN, more, name, plain
from ..analysis.seed_table import read_published
from ..results.statistics import statistic


__all__ = ["published"]


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
    """Published figures against each source's ESTIMATE, per method: a core-cycles panel and an ns panel.

    The published values (``fastcpu/published_figures.csv``, or the CSV
    `figures`) in black, each source's estimate with its 95% interval beside;
    symmetric-log x axis. At most :data:`SERIES_MAX` methods and published
    series and :data:`SOURCES_MAX` sources; the legend says what was left out."""
    loaded = check_sources(sources)
    loaded, sources_left_out = loaded[:SOURCES_MAX], len(loaded) - SOURCES_MAX
    methods = check_methods(methods)
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
    colors = curve_colors(len(loaded))
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
            (methods_left_out, "methods", f"{SERIES_MAX} rows", CHOOSE),
            (series_left_out, "published series", f"{SERIES_MAX}", "give a shorter figures= CSV"),
            (sources_left_out, "sources", f"{SOURCES_MAX}", "pass fewer sources (files)")):
        if left_out > 0:
            title += "\n" + more(left_out, what, most, hint)
    # The title heads the legend (see machines()).
    legend = fig.legend(handles=handles, loc="outside upper center", ncol=3, frameon=False,
                        fontsize="small", title=title, title_fontproperties={"size": "large"})
    plain(*legend.get_texts(), legend.get_title())
    return fig
