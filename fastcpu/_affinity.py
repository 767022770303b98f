"""Pinning the calling thread to one CPU for the length of a measurement."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["pinned", "check_cpu"]


def check_cpu(cpu: object) -> int:
    """Validate a CPU number against this thread's affinity mask.

    Raises:
        TypeError: `cpu` is not an int.
        ValueError: `cpu` is negative or outside the mask.
    """
    if isinstance(cpu, bool) or not isinstance(cpu, int):
        raise TypeError(f"cpu must be an int or None, not {type(cpu).__name__}")
    allowed = os.sched_getaffinity(0)
    if cpu not in allowed:
        raise ValueError(
            f"cpu {cpu} is not in this thread's affinity mask {sorted(allowed)}: "
            "pass one of those, or None to stay unpinned"
        )
    return cpu


@contextlib.contextmanager
def pinned(cpu: int | None) -> Iterator[None]:
    """Run the body on `cpu` only (this thread), then restore the old mask.

    On Linux, sched_setaffinity(0, ...) applies to the calling thread alone,
    so other Python threads are unaffected. ``None`` leaves the mask alone.
    """
    if cpu is None:
        yield
        return
    check_cpu(cpu)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
