"""sched_getcpu_norseq: glibc's sched_getcpu() with rseq turned off, on this host.

Since glibc 2.35, ``sched_getcpu()`` loads the CPU from the rseq area the
library registered for the thread; with ``GLIBC_TUNABLES=glibc.pthread.rseq=0``
it never registers and ``sched_getcpu()`` calls the vDSO's getcpu instead
(the seed's 13.7 ns row, Desnoyers 2020). The tunable is read once, when the
process starts, so the only way to time both on one host is another process:
this method's runs come from a child interpreter started with the tunable
added to ``GLIBC_TUNABLES``, which times the very same ``sched_getcpu``
sequence and hands the raw arrays back. The parent converts them with its own
clock, so they sit beside the in-process ``sched_getcpu`` in a table.

The child inherits the calling thread's CPU affinity (fork copies the calling
thread's mask), so a thread pinned to a CPU reads that CPU in the child too,
and ``bench(..., cpu=N)``, which pins the caller first, pins the child. The child refuses to measure if
glibc registered rseq all the same (a glibc that ignores the tunable, a
setuid interpreter): ``fastcpu.Unsupported`` says so. A child that cannot be
started (pipes denied by a seccomp filter, no file descriptor left, an
interpreter this user may not run) is ``fastcpu.Unsupported`` with the
reason too: ``measure()`` records it in ``Results.unavailable`` and
``check()`` as an error cell.
"""

from __future__ import annotations

import errno
import os
import pickle
import subprocess
import sys
from typing import Any

from . import _core

__all__ = ["available_reason", "read_cpu", "run"]


def _row(name: str) -> tuple[str, str]:
    """(the GLIBC_TUNABLES setting, the row whose sequence it times) of the
    catalog row `name` that runs in a child (csrc/sequences.c: in_child)."""
    for row in _core.catalog():
        if row["name"] == name and row["in_child"] is not None:
            return str(row["in_child"]), str(row["code_of"])
    raise ValueError(f"{name} is no catalog row measured in a child")

# How long a child that only reads (start an interpreter, import numpy and
# fastcpu, one call) may take before it is taken for hung, in seconds.
# Measuring children have no limit.
_START_S = 60.0


def available_reason() -> str | None:
    """Why the method cannot run here, or None. Decided without starting a
    child: the child itself refuses if glibc ignores the tunable."""
    libc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else None
    if not libc or not libc.startswith("glibc"):
        return "the C library is not glibc: no glibc.pthread.rseq tunable"
    if not sys.executable:
        return "sys.executable is unknown: no interpreter to start the child with"
    return None


def _child_env(tunable: str) -> dict[str, str]:
    env = dict(os.environ)
    tunables = env.get("GLIBC_TUNABLES", "")
    env["GLIBC_TUNABLES"] = f"{tunables}:{tunable}" if tunables else tunable
    # the child imports this very copy of fastcpu, wherever it was loaded from
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = f"{here}{os.pathsep}{path}" if path else here
    return env


def _ask(name: str, request: dict[str, Any], timeout_s: float | None) -> Any:
    """Run `request` for the row `name` in a child started with its tunable;
    the child's answer."""
    tunable, code_of = _row(name)
    request = {**request, "tunable": tunable, "code_of": code_of}
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from fastcpu._norseq import _child; _child()"],
            input=pickle.dumps(request),
            capture_output=True,
            env=_child_env(tunable),
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _core.Unsupported(f"{name}: could not run the child interpreter {sys.executable}: "
                                f"{_why_not_started(exc)}") from None
    try:
        answer = pickle.loads(done.stdout)
    except Exception:  # noqa: BLE001 - whatever a dying child left on stdout
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise _core.Error(
            f"{name}: the child interpreter exited with status {done.returncode} "
            f"without an answer: {tail[0]}"
        ) from None
    if "error" in answer:
        kind, message = answer["error"]
        raise (_core.Unsupported if kind == "Unsupported" else _core.Error)(f"{name}: {message}")
    return answer["value"]


#: What an errno of starting the child most likely means, for the reason.
_START_ERRNOS = {
    errno.EACCES: "this user may not run it (a directory on its path is closed to it)",
    errno.EPERM: "a seccomp filter or a security module denied a pipe or the new process",
    errno.EMFILE: "no file descriptor left for its pipes (RLIMIT_NOFILE)",
    errno.ENFILE: "the system is out of file descriptors",
    errno.EAGAIN: "no process may be created (RLIMIT_NPROC or a pids cgroup)",
    errno.ENOENT: "it does not exist",
}


def _why_not_started(exc: OSError | subprocess.TimeoutExpired) -> str:
    """The reason a child could not be started (or did not answer in time)."""
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"it did not answer within {exc.timeout:g} s"
    text = exc.strerror or str(exc)
    hint = _START_ERRNOS.get(exc.errno or 0)
    return f"{text}: {hint}" if hint else text


def read_cpu(name: str) -> tuple[int, int | None, int, bool]:
    """One reading of the row `name` in its child (sched_getcpu() without
    rseq): (cpu, node, raw, valid), as ``_core.read_cpu`` returns them; the
    child runs on the calling thread's CPUs."""
    return _ask(name, {"op": "read"}, _START_S)


def run(name: str, args: tuple, counter: str) -> tuple:
    """``_core.measure`` of the row `name`'s sequence with `args` (runs,
    serialize, copies, diff, counter) and no ruler points, in its child (without
    rseq), which runs on the calling thread's CPUs (bench() pins the caller
    first), with its own PMU counter opened when `counter` is ``'pmu'``: what
    measure() returned (TSC ticks or core cycles, as in-process). No time
    limit: a long measurement is legitimate, and Ctrl-C reaches the child too."""
    return _ask(name, {"op": "measure", "args": args, "counter": counter}, None)


def _serve(request: dict[str, Any]) -> Any:
    if _core.features()["rseq_registered"]:
        raise _core.Unsupported(
            "glibc registered rseq in the child although GLIBC_TUNABLES held "
            f"{request['tunable']} (a glibc that ignores it, or a secure-execution interpreter)"
        )
    if request["op"] == "read":
        return _core.read_cpu(request["code_of"])
    if request["counter"] == "pmu":
        _core.pmu_open()
    runs, serialize, copies, diff, counter = request["args"]
    return _core.measure(request["code_of"], runs=runs, serialize=serialize, copies=copies, diff=diff,
                         counter=counter, rulers=None)  # no ruler points there


def _child() -> None:
    """The child's side: one pickled request on stdin, one answer on stdout."""
    request = pickle.loads(sys.stdin.buffer.read())
    try:
        answer: dict[str, Any] = {"value": _serve(request)}
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent
        answer = {"error": (type(exc).__name__, str(exc))}
    sys.stdout.buffer.write(pickle.dumps(answer))
    sys.stdout.buffer.flush()
