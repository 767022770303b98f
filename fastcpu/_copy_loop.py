"""The copy loop's own cost per copy: what a figure timed in copies cannot
tell from the body, and the smallest cost per call it resolves.

:func:`fastcpu.bench_diff` and ``bench(m, unroll=k)`` time copies of a body
in a loop (csrc/timing.h: an add and a fused compare-and-branch per copy;
through the user path also the call and the return). The loop runs at its
own pace, and a body cheaper than that pace hides in it:

- bench_diff() then reads the loop, not the body. On the AuthenticAMD family
  25 model 17 (Zen 4) guest the empty sequence read 1.0 core cycles per copy
  at 16 copies, and rseq 1.03 core cycles.
- bench(unroll=64) reads about 0: the empty sequence pays the same loop.
  rseq read 0.1 core cycles per copy there, where back to back it read 1.0
  core cycles per call.

A body dearer than the loop overlaps anything from none to all of it, by
code alignment and loop shape: back to back it reads the body plus 0 to L (L
the loop's cost, core cycles per copy), unrolled the body less 0 to L.

So the loop's own cost is measured on the host at hand. It is the empty
sequence (or, through the user path, a user function of no cost) timed by
bench_diff() with the same copies, mode, counter and CPU. It is kept
``CORRECTION_MAX_AGE_S``, like the harness bias, and in core cycles:
the loop is work, not time. A back-to-back figure loses L/2
(``DiffResult.harness_bias_core_cycles``) and an unrolled one gains it
(``_bench_result.loop_correction``), the other half in the interval; one
whose interval reaches down to L (from 0 when unrolled) is shown as a bound
("< X core cycles"), never as the loop's cost.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

from . import _core
from ._harness import Method
from ._harness_correction import CORRECTION_MAX_AGE_S
from ._locks import ForkSafeLock
from ._measurement import timed_diff

__all__ = ["LoopFloor", "FLOOR_RUNS", "FLOOR_MEASUREMENTS", "loop_floor", "path_of", "floor_k"]

#: Pairs of runs per measurement of the loop's cost (about a millisecond
#: inline at 16 and 32 copies), after as many to warm up; the loop's cost
#: is the median of FLOOR_MEASUREMENTS such measurements.
FLOOR_RUNS = 1000
FLOOR_MEASUREMENTS = 3


class LoopFloor(NamedTuple):
    """The copy loop's own cost per copy, as bench_diff() of a body of no
    cost measured it."""

    #: core cycles per copy (at least 0), and its 95% half-width
    core_cycles: float
    ci95_core_cycles: float
    #: ``time.monotonic()`` when it was measured, seconds
    measured_at: float

    @property
    def top_core_cycles(self) -> float:
        """The top of its 95% interval, core cycles per copy: below this a
        body cannot be told from the loop."""
        return self.core_cycles + self.ci95_core_cycles


_lock = ForkSafeLock()
#: (path, mode, counter, copies on the short side, CPU) -> the loop's cost.
_floors: dict[tuple[str, str, str, int, int | None], LoopFloor] = {}


def path_of(method: Method) -> str:
    """``'inline'`` for a method named by its catalog name, ``'user'`` for a
    user function (its address, or a ctypes function)."""
    return "inline" if isinstance(method, str) else "user"


def floor_k(unroll: int) -> int:
    """The short side's copies whose difference with twice as many gives
    the loop's cost per copy around `unroll` copies a run (unroll >= 2)."""
    return max(2, unroll // 2)


def loop_floor(path: str, serialize: str, counter: str, k: int, cpu: int | None) -> LoopFloor | None:
    """The copy loop's cost per copy for `path` (``'inline'`` or
    ``'user'``) at `k` and `2k` copies a run in `serialize` mode on
    `counter`, pinned to `cpu`: the last measurement of this process while
    it is at most ``CORRECTION_MAX_AGE_S`` old, or measured now. None where
    its core cycles are unknown (the rulers disagreed during it): the
    figures then stay as they were read."""
    key = (path, serialize, counter, k, cpu)
    known = _fresh(key)
    if known is not None:
        return known
    with _lock:
        known = _fresh(key)
        if known is None:
            target: Method = "empty" if path == "inline" else _core.user_empty()
            # the first measurements of a process read the loop low (0.42-0.88 core cycles per
            # copy, then 0.93-0.96, against 0.96-1.04 later; AuthenticAMD family 25 model 17):
            # warmed up, left out
            timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
            # the median of three, so that one disturbed measurement (1.54 core cycles per
            # copy once, among 0.99-1.01, AuthenticAMD family 25 model 17) does not set it
            taken = [timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
                     for _ in range(FLOOR_MEASUREMENTS)]
            figures = sorted((d.estimate_core_cycles, d.estimate_ci95_core_cycles) for d in taken
                             if math.isfinite(d.estimate_core_cycles) and math.isfinite(d.estimate_ci95_core_cycles))
            if not figures:
                return None
            cc, ci = figures[len(figures) // 2]
            known = _floors[key] = LoopFloor(max(cc, 0.0), ci, time.monotonic())
    return known


def _fresh(key: tuple[str, str, str, int, int | None]) -> LoopFloor | None:
    known = _floors.get(key)
    return known if known is not None and time.monotonic() - known.measured_at <= CORRECTION_MAX_AGE_S else None
