"""What fastcpu's arguments accept: the counters, the serialization modes
and the largest run count and unroll (copies per run), and the longest
timeout of a user function's measurement.
"""

from __future__ import annotations

from ._args import COUNTERS, RUNS_MAX, SERIALIZE_MODES, TIMEOUT_MAX_S, UNROLL_MAX


__all__ = ["COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "TIMEOUT_MAX_S", "UNROLL_MAX"]
