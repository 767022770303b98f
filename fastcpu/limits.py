"""What fastcpu's arguments accept: the counters, the serialization modes
and the largest run count and unroll (copies per run).

These were ``fastcpu.X`` before 0.6.0 and still answer there, deprecated.
"""

from __future__ import annotations

from ._args import CLOCKS, COUNTERS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX

__all__ = ["CLOCKS", "COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "UNROLL_MAX"]
