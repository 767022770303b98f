"""What fastcpu's arguments accept: the counters, the serialization modes
and the largest run count and unroll (copies per run), and the longest
timeout of a user function's measurement.

These were ``fastcpu.X`` before 0.6.0 and still answer there, deprecated
(``fastcpu._deprecated``). ``CLOCKS``, the old name of ``COUNTERS``, still
answers here, deprecated.
"""

from __future__ import annotations

from . import _deprecated
from ._args import COUNTERS, RUNS_MAX, SERIALIZE_MODES, TIMEOUT_MAX_S, UNROLL_MAX


__all__ = ["COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "TIMEOUT_MAX_S", "UNROLL_MAX"]


def __getattr__(name: str) -> object:
    return _deprecated.attribute(__name__, name)  # CLOCKS, or AttributeError
