"""Locks that survive a fork.

A fork() made while another thread holds a lock leaves the child a copy of
the lock, held, by a thread that does not exist there: the child's first
use then waits forever. Every lock of the package is a :class:`ForkSafeLock`:
in the child each one held by another thread is replaced by a fresh one (a
first use it guarded is then done again there; what it had finished stays).
One held by the thread that forked stays as it is: that thread goes on in
the child and releases it. tests/test_fork.py walks the package for plain
``threading`` locks so that a new one cannot slip in.

:class:`cached_property` is ``functools.cached_property`` without its lock
(Python 3.8 to 3.11 hold one lock per property for every instance of the
class: a fork while another thread computes one leaves it held in the child,
and the child's first access waits forever). The package's cached values are
pure, so two threads that race compute the same value twice, harmlessly.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["ForkSafeLock", "cached_property"]

_T = TypeVar("_T")


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


class cached_property(Generic[_T]):  # noqa: N801 - named for the one it replaces
    """``functools.cached_property`` that takes no lock: computed on the
    first access and stored in the instance's ``__dict__`` (which then
    answers every later access, as a non-data descriptor allows), for pure
    values only: threads that race each compute it and store the same value.
    Works on frozen dataclasses too (the ``__dict__`` is written directly)."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        if self.attrname is not None and name != self.attrname:
            raise TypeError(f"cannot assign the same cached_property to two names "
                            f"({self.attrname!r} and {name!r})")
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("cannot use a cached_property without calling __set_name__ on it")
        value = self.func(instance)
        instance.__dict__[self.attrname] = value  # no lock: the value is pure
        return value
