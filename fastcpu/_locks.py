"""Locks that survive a fork.

A fork() made while another thread holds a lock leaves the child a copy of
the lock, held, by a thread that does not exist there: the child's first
use then waits forever. Every lock of the package is a :class:`ForkSafeLock`:
in the child each one held by another thread is replaced by a fresh one (a
first use it guarded is then done again there; what it had finished stays).
One held by the thread that forked stays as it is: that thread goes on in
the child and releases it. tests/test_fork.py walks the package for plain
``threading`` locks so that a new one cannot slip in.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

__all__ = ["ForkSafeLock"]


class ForkSafeLock:
    """A ``threading.Lock`` for ``with`` blocks, fresh in a fork's child
    unless the forking thread held it."""

    __slots__ = ("_lock", "_owner", "__weakref__")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None
        _every.add(self)

    def __enter__(self) -> ForkSafeLock:
        self._lock.acquire()
        self._owner = threading.get_ident()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._owner = None
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def _after_fork_in_child(self) -> None:
        if self._owner != threading.get_ident():  # another thread's, gone
            self._lock = threading.Lock()
            self._owner = None


_every: weakref.WeakSet[ForkSafeLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_every):
        lock._after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
