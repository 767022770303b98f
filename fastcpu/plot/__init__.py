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
grow with the runs (:mod:`fastcpu.plot.axes`: exact counts while a method's
runs hold at most 65,536 distinct values, else bins and an ECDF read at 2,048
thresholds, said on the plot; no array is copied whole), a figure holds at
most :data:`PANELS_MAX` panels (:data:`ECDF_PANELS_MAX` of ECDFs) and a panel at
most :data:`SERIES_MAX` curves
(what is left out is said in the figure, with the argument that chooses),
and names are cut to 60 characters.

Every function returns the Figure or Axes it drew on and accepts an existing
Axes where that makes sense. fastcpu never selects a matplotlib backend.
Names from files (machines, methods) are drawn as plain text
(:mod:`fastcpu.plot.axes`): never parsed as mathtext or LaTeX, a control
character or lone surrogate shown as its escape
(:func:`fastcpu._base.printable`).
"""

from __future__ import annotations

from .axes import ECDF_PANELS_MAX, GROUPS, PANELS_MAX, SERIES_MAX, SOURCES_MAX, UNITS, is_slow, method_group
from .curves import SLOW_PANEL, ecdf, ecdf_groups, ecdf_machines, machines
from .reference import published
from .runs import counts, distributions


# The drawing lives in _plot_runs (counts), _plot_ecdf (ECDFs) and
# _plot_published, over what they share (_plot_axes: checks, limits, groups,
# ticks); this module is the public face, fastcpu.plot.


__all__ = ["counts", "distributions", "ecdf", "ecdf_groups", "ecdf_machines", "machines", "published",
           "method_group", "is_slow", "GROUPS", "UNITS", "PANELS_MAX", "ECDF_PANELS_MAX", "SERIES_MAX",
           "SOURCES_MAX"]
