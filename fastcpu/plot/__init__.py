"""Plots of raw per-run timings (matplotlib): exact counts and ECDFs (docs/files.md, "Plots").

Distributions are exact counts of each observed value, the empty sequence
beside; methods and machines are overlaid as ECDFs, a Results split into
panels by kind (:func:`method_group`); every axis names its unit; titles
give the ESTIMATE with its 95% interval. Memory is bounded by the picture,
at most :data:`PANELS_MAX` panels and :data:`SERIES_MAX` curves a panel
(what is left out is said); names from files are drawn as plain text. Each
function returns the Figure or Axes it drew on; no backend is selected."""

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
