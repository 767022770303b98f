"""What fastcpu's arguments accept: counters, serialization modes, the most runs, unroll and timeout."""

from __future__ import annotations

from ._args import COUNTERS, RUNS_MAX, SERIALIZE_MODES, TIMEOUT_MAX_S, UNROLL_MAX


__all__ = ["COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "TIMEOUT_MAX_S", "UNROLL_MAX"]
