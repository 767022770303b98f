"""Plots of raw per-run timings (matplotlib): exact counts of each value and ECDFs, every axis
with its unit, at most :data:`PANELS_MAX` panels and :data:`SERIES_MAX` curves a panel (what is
left out is said); each returns the Figure or Axes it drew on (docs/files.md, "Plots")."""

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
