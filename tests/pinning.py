"""Helpers for tests that run code on a thread pinned to one CPU, and the
references they compare with, called through ctypes (not through fastcpu)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.sched_getcpu.restype = ctypes.c_int
_libc.syscall.restype = ctypes.c_long
SYS_getcpu = 309  # x86-64

CPUS = sorted(os.sched_getaffinity(0))


def libc_sched_getcpu() -> int:
    """glibc's sched_getcpu(), the way a Python user calls it today."""
    return _libc.sched_getcpu()


def syscall_getcpu() -> tuple[int, int]:
    """(cpu, node) from the getcpu system call itself."""
    cpu, node = ctypes.c_uint(), ctypes.c_uint()
    rc = _libc.syscall(ctypes.c_long(SYS_getcpu), ctypes.byref(cpu), ctypes.byref(node), None)
    assert rc == 0, f"getcpu failed: errno {ctypes.get_errno()}"
    return cpu.value, node.value


def on_cpu(cpu: int, fn: Callable[[], T]) -> T:
    """Run `fn` on a new Python thread pinned to `cpu` (sched_setaffinity on
    the thread itself) and return its result, or raise what it raised."""
    out: dict[str, object] = {}

    def body() -> None:
        try:
            os.sched_setaffinity(0, {cpu})
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the caller
            out["error"] = exc

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]  # type: ignore[return-value]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with `env` added to the environment.

    Its working directory is this tests directory, not the repository root:
    there `import fastcpu` would find the source tree, which holds no built
    extension when fastcpu was installed with pip.
    """
    return subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, **env), cwd=os.path.dirname(os.path.abspath(__file__)),
        capture_output=True, text=True, timeout=120,
    )
