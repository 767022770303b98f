"""What fastcpu's arguments accept: the counters, the serialization modes
and the largest run count and unroll (copies per run), and the longest
timeout of a user function's measurement.

These were ``fastcpu.X`` before 0.6.0 and still answer there, deprecated.
"""

from __future__ import annotations

from ._args import CLOCKS, COUNTERS, RUNS_MAX, SERIALIZE_MODES, TIMEOUT_MAX_S, UNROLL_MAX

__all__ = ["CLOCKS", "COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "TIMEOUT_MAX_S", "UNROLL_MAX"]
