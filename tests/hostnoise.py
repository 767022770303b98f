"""Accuracy checks against real timings, on a host that disturbs them.

The project's machines are KVM guests with 2 vCPUs. The host slows the
guest's core for a second or more at a time (on the AuthenticAMD family 25
model 1 (Zen 3) guest: add chains 1-10% slow while imul chains keep their
TSC tick counts, a calibration reading 1.23 core cycles per TSC tick among
readings of 1.33), so one measurement, or the median of
three taken back to back, can fall outside any tolerance that still means
something. ``on_some_try`` runs the whole check again after a pause, up to
``tries`` times: a fault in fastcpu (a wrong baseline, a wrong conversion)
fails every try; a burst on the host fails one. Every failed try's message
is kept in the final failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TRIES = 3
PAUSE_S = 1.0  # longer than the host's usual bursts seen on these guests


def on_some_try(check: Callable[[], T], tries: int = TRIES, pause_s: float = PAUSE_S) -> T:
    """Return check()'s value from the first try whose assertions hold;
    raise AssertionError naming every try's failure when none does."""
    failures = []
    for attempt in range(tries):
        if attempt:
            time.sleep(pause_s)
        try:
            return check()
        except AssertionError as e:
            failures.append(f"try {attempt + 1}: {e}")
    raise AssertionError(f"failed on all {tries} tries (not a burst on the host):\n" + "\n".join(failures))
