"""The child runner: a catalog row measured and read in a child interpreter.

A row with ``in_child`` (csrc/sequences.c: ``FC_CHILD_ROW``) times another
row's sequence (its ``code_of``) in a process started with a GLIBC_TUNABLES
setting of its own, because glibc reads its tunables once, when the process
starts. The one such row is ``sched_getcpu_norseq``: since glibc 2.35,
``sched_getcpu()`` loads the CPU from the rseq area the library registered
for the thread; with ``GLIBC_TUNABLES=glibc.pthread.rseq=0`` it never
registers and ``sched_getcpu()`` calls the vDSO's getcpu instead (the seed's
13.7 ns row, Desnoyers 2020). Its runs come from a child interpreter started
with the row's tunable added to ``GLIBC_TUNABLES``, which times the very same
``sched_getcpu`` sequence and hands the raw arrays back. The parent converts
them with its own clock, so they sit beside the in-process ``sched_getcpu`` in
a table. Nothing here names a method: the tunable and the sequence come from
the row (``_harness`` chooses this runner from it).

The child inherits the calling thread's CPU affinity (fork copies the calling
thread's mask), so a thread pinned to a CPU reads that CPU in the child too,
and ``bench(..., cpu=N)``, which pins the caller first, pins the child. The child refuses to measure if
glibc registered rseq all the same (a glibc that ignores the tunable, a
setuid interpreter: what the one row's tunable turns off): ``fastcpu.Unsupported`` says so. A child that cannot be
started (pipes denied by a seccomp filter, no file descriptor left, an
interpreter this user may not run) is ``fastcpu.Unsupported`` with the
reason too: ``measure()`` records it in ``Results.unavailable`` and
``check()`` as an error cell.

The child dies with its parent (``PR_SET_PDEATHSIG``: SIGKILL when the thread
that started it, or the whole parent, dies), and runs nothing from the
caller's working directory: it is started isolated (``python -I``) and
imports this very fastcpu and the parent's numpy from their absolute paths.
It answers in one fixed format, a JSON header and the raw bytes of the arrays
it announces, which the parent checks item by item (never unpickled). A child
that dies without an answer is ``fastcpu.Error`` saying how it ended (its exit
status, or the signal that killed it, by name) and its last line on stderr.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from typing import IO, Any

import numpy as np

from . import _core

__all__ = ["available_reason", "read_cpu", "raw_runs"]


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
    """The child's environment: this one with `tunable` added to
    ``GLIBC_TUNABLES``. (The child is isolated, ``-I``: PYTHONPATH and the
    other PYTHON* variables do not reach it; its path is set explicitly.)"""
    env = dict(os.environ)
    tunables = env.get("GLIBC_TUNABLES", "")
    env["GLIBC_TUNABLES"] = f"{tunables}:{tunable}" if tunables else tunable
    return env


# The child's first lines, before it imports anything but the standard
# library: die with the parent (PR_SET_PDEATHSIG, SIGKILL: a measurement of
# 10**8 runs would otherwise go on for minutes after its parent is gone), then
# make sure the parent did not die before that was set (the child would have
# been reparented already), then import this very copy of fastcpu and numpy,
# from the absolute paths given, never from the working directory: ``-I``
# leaves the cwd (and PYTHONPATH, the user site) off sys.path. argv: the
# parent's pid, then the directories to import fastcpu and numpy from.
_BOOT = """\
import os, sys
why = ""
try:
    import ctypes, signal
    if ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0) != 0:
        why = os.strerror(ctypes.get_errno())
except Exception as exc:
    why = str(exc) or type(exc).__name__
if os.getppid() != int(sys.argv[1]):
    sys.stderr.write(f"its parent is pid {os.getppid()}, not the process that started it (pid "
                     f"{sys.argv[1]}), which is gone or ran it through a program that forks\\n")
    os._exit(70)
sys.path[:0] = sys.argv[2:]
from fastcpu._child_runner import _child
_child(why)
"""


def _child_argv() -> list[str]:
    """The command line of the child: this interpreter, isolated, running
    :data:`_BOOT` with this process's pid and the homes of this fastcpu and
    of the numpy this process imported."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    numpy_home = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    homes = [here] if numpy_home == here else [here, numpy_home]
    return [sys.executable, "-I", "-c", _BOOT, str(os.getpid()), *homes]


def _ask(name: str, request: dict[str, Any], timeout_s: float | None) -> Any:
    """Run `request` for the row `name` in a child started with its tunable;
    the child's answer, read as :func:`_read_answer` expects it for
    ``request['op']``."""
    tunable, code_of = _row(name)
    request = {**request, "tunable": tunable, "code_of": code_of}
    try:
        done = subprocess.run(
            _child_argv(),
            input=json.dumps(request).encode(),
            capture_output=True,
            env=_child_env(tunable),
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _core.Unsupported(f"{name}: could not run the child interpreter {sys.executable}: "
                                f"{_why_not_started(exc)}") from None
    try:  # a whole answer stands whatever the exit status (a sanitizer's report at exit)
        answer = _read_answer(done.stdout, request)
    except ValueError as exc:
        if done.returncode != 0 or not done.stdout:
            raise _core.Error(f"{name}: the child interpreter {_how_it_ended(done.returncode)} without "
                              f"an answer: {_last_words(done.stderr)}") from None
        raise _core.Error(f"{name}: the child interpreter sent an answer this process does not "
                          f"read ({exc}); its stderr: {_last_words(done.stderr)}") from None
    if isinstance(answer, _Failed):
        raise (_core.Unsupported if answer.kind == "Unsupported" else _core.Error)(f"{name}: {answer.message}")
    return answer


def _how_it_ended(status: int) -> str:
    """``'exited with status 1'``, or ``'was killed by SIGTERM (signal 15)'``
    for subprocess's negative status."""
    if status >= 0:
        return f"exited with status {status}"
    try:
        signame = signal.Signals(-status).name
    except ValueError:
        signame = "a signal"
    return f"was killed by {signame} (signal {-status})"


def _last_words(stderr: bytes) -> str:
    """The last line the child wrote on stderr, or that it wrote none."""
    lines = stderr.decode(errors="replace").strip().splitlines()
    return lines[-1][:500] if lines else "it wrote nothing on stderr"


# ---- the answer: a fixed format, read back checked (never unpickled) -------
#
# One line of JSON, then the raw bytes of the arrays it announces:
#   {"error": ["Unsupported" | "Error", message]}
#   {"value": [item, ...]}, each item a JSON number, bool or null, or
#       {"array": "uint64" | "bool", "length": n} (n values follow, in order)
# The parent takes only the items its request asks for (_SHAPES), arrays of
# exactly the runs it asked for, and exactly as many bytes as they fill.

#: The longest header line the parent reads (a few hundred bytes in use).
_HEADER_MAX = 1 << 16
_DTYPES = {"uint64": np.dtype(np.uint64), "bool": np.dtype(np.bool_)}
#: What each request's value holds, item by item: a dtype name (an array of
#: the request's runs), or the Python types the item may be.
_SHAPES: dict[str, tuple[Any, ...]] = {
    # cpu, node (None: gives none), raw, valid: _core.read_cpu
    "read": ((int,), (int, type(None)), (int,), (bool,)),
    # a _core.Measured without ruler points: raw, empty, migrated per run; best,
    # median; no points, no conversion
    "measure": ("uint64", "uint64", "bool", (float,), (float,), (type(None),), (type(None),)),
}


class _Failed:
    """The child's refusal: ``_core.Unsupported`` or ``_core.Error`` and its message."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind, self.message = kind, message


def _write_answer(out: IO[bytes], value: Any = None, error: tuple[str, str] | None = None) -> None:
    """The child's side of the answer format."""
    if error is not None:
        out.write(json.dumps({"error": list(error)}).encode() + b"\n")
        return
    items, arrays = [], []
    for v in value:
        if isinstance(v, np.ndarray):
            items.append({"array": v.dtype.name, "length": int(v.size)})
            arrays.append(np.ascontiguousarray(v))
        else:
            items.append(v)
    out.write(json.dumps({"value": items}).encode() + b"\n")
    for a in arrays:
        out.write(memoryview(a).cast("B"))


def _read_answer(data: bytes, request: dict[str, Any]) -> tuple | _Failed:
    """What the child answered `request`, checked against its shape.

    Raises:
        ValueError: anything else (the reason).
    """
    end = data.find(b"\n", 0, _HEADER_MAX)
    if end < 0:
        raise ValueError(f"no header line in its first {min(len(data), _HEADER_MAX)} bytes")
    try:
        header = json.loads(data[:end])
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"the header is not JSON: {exc}") from None
    if not isinstance(header, dict) or len(header) != 1:
        raise ValueError("the header is not an object of one key")
    if "error" in header:
        error = header["error"]
        if (not isinstance(error, list) or len(error) != 2 or error[0] not in ("Unsupported", "Error")
                or not isinstance(error[1], str) or end + 1 != len(data)):
            raise ValueError("a malformed error")
        return _Failed(error[0], error[1][:2000])
    items = header.get("value")
    shape = _SHAPES[request["op"]]
    if not isinstance(items, list) or len(items) != len(shape):
        raise ValueError(f"the value is not a list of {len(shape)} items")
    runs = request["args"][0] if request["op"] == "measure" else 0
    out: list[Any] = []
    at = end + 1
    for i, (item, want) in enumerate(zip(items, shape)):
        if isinstance(want, str):
            if item != {"array": want, "length": runs}:
                raise ValueError(f"item {i} is not an array of {runs} {want} values")
            dtype = _DTYPES[want]
            size = runs * dtype.itemsize
            if len(data) - at < size:
                raise ValueError(f"item {i}: {len(data) - at} bytes left for {size}")
            out.append(np.frombuffer(data, dtype, runs, at).copy())
            at += size
        elif type(item) not in want:  # exactly: a bool is no int here, nor an int a float
            raise ValueError(f"item {i} is {type(item).__name__}, not {' or '.join(t.__name__ for t in want)}")
        else:
            out.append(item)
    if at != len(data):
        raise ValueError(f"{len(data) - at} bytes after the last array")
    return tuple(out)


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


def raw_runs(name: str, *, runs: int, serialize: str, copies: int, diff: bool, counter: str) -> _core.Measured:
    """``_core.measure`` of the row `name`'s sequence (runs, serialize,
    copies, diff, counter as there) without ruler points, in its child, which
    runs on the calling thread's CPUs (``_harness`` pins the caller first),
    with its own PMU counter opened when `counter` is ``'pmu'``: the record
    the child's ``_core.measure`` returned (TSC ticks or core cycles, as
    in-process). No time limit: a long measurement is legitimate, and Ctrl-C
    reaches the child too."""
    request = {"op": "measure", "args": (runs, serialize, copies, diff, counter), "counter": counter}
    return _core.Measured(_ask(name, request, None))


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


def _child(no_deathsig: str) -> None:
    """The child's side: one JSON request on stdin, one answer on stdout
    (:func:`_write_answer`). `no_deathsig`: why it could not be set to die
    with its parent ('' when it is): it then refuses to measure, since a
    measurement could outlive its parent by minutes."""
    out = sys.stdout.buffer
    try:
        request = json.loads(sys.stdin.buffer.read())
        if no_deathsig:
            raise _core.Unsupported(f"the child could not be set to die with its parent "
                                    f"(prctl PR_SET_PDEATHSIG: {no_deathsig})")
        _write_answer(out, _serve(request))
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent
        kind = "Unsupported" if isinstance(exc, _core.Unsupported) else "Error"
        _write_answer(out, error=(kind, f"{type(exc).__name__}: {exc}" if kind == "Error" and
                                  not isinstance(exc, _core.Error) else str(exc)))
    out.flush()
