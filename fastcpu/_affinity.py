"""Pinning the calling thread to one CPU for the length of a measurement."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

from ._args import affinity_mask, check_cpu, denied
from ._core import Error

__all__ = ["pinned", "refused", "set_affinity"]


def pinned(cpu: int | None) -> contextlib.AbstractContextManager[None]:
    """Run the body on `cpu` only (this thread), then restore the old mask.

    On Linux, sched_setaffinity(0, ...) applies to the calling thread alone,
    so other Python threads are unaffected. ``None`` leaves the mask alone
    (a shared do-nothing context: bench() enters one on every call).
    """
    return _UNPINNED if cpu is None else _pinned_to(cpu)


_UNPINNED = contextlib.nullcontext()


@contextlib.contextmanager
def _pinned_to(cpu: int) -> Iterator[None]:
    check_cpu(cpu)
    before = affinity_mask(f"pin this thread to CPU {cpu} (its mask is restored afterwards)",
                           "pass cpu=None to stay unpinned")
    set_affinity({cpu}, f"pin this thread to CPU {cpu}")
    try:
        yield
    finally:
        set_affinity(before, "restore this thread's affinity mask")


def set_affinity(cpus: set[int], doing: str) -> None:
    """``os.sched_setaffinity(0, cpus)``, a refusal raised as
    :class:`fastcpu.Error` saying what was being done and why it failed: the
    call denied (EPERM: a seccomp filter, a container or a security module),
    or the CPUs refused (EINVAL: offline, or outside this process's cpuset).

    Raises:
        fastcpu.Error: the call was denied, or the kernel refused the CPUs.
    """
    try:
        os.sched_setaffinity(0, cpus)
    except PermissionError as exc:
        raise Error(f"cannot {doing}: {denied('sched_setaffinity', exc)}: pass cpu=None to stay unpinned") from exc
    except (OSError, ValueError, OverflowError) as exc:
        raise Error(f"cannot {doing}: {refused('sched_setaffinity', sorted(cpus), exc)}: pass a CPU of "
                    "os.sched_getaffinity(0), or cpu=None to stay unpinned") from exc


def refused(call: str, cpus: int | list[int], exc: Exception) -> str:
    """Why the kernel refused to pin to `cpus`: ``'the kernel refused CPU 3
    (sched_setaffinity: Invalid argument; offline, or outside ...)'``."""
    which = f"CPU {cpus}" if isinstance(cpus, int) else f"CPU(s) {cpus}"
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    hint = ("; offline, or outside the CPUs this process's cpuset allows"
            if isinstance(exc, OSError) and exc.errno == errno.EINVAL else "")
    return f"the kernel refused {which} ({call}: {why}{hint})"
