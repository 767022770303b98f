"""The child runner: a catalog row measured and read in a child interpreter started with its
own GLIBC_TUNABLES (``sched_getcpu_norseq``: glibc reads tunables only at process start).

The child pins itself to the asking thread's CPUs, hands back raw arrays (a JSON header and raw
bytes, checked item by item, never unpickled) and dies with its parent; the parent converts
them with its own clock. Nothing here names a method: tunable and sequence come from the row.
A child that cannot start, or registered rseq anyway, is ``fastcpu.Unsupported``; one that dies
without an answer is ``fastcpu.Error`` naming its exit status and its last line on stderr.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any, Protocol

import numpy as np

from .. import _core
from .._base import ForkSafeLock


class MethodInfo(Protocol):
    """What the child runner reads of its row: the catalog's ``MethodInfo``, handed it by the harness."""
    @property
    def name(self) -> str: ...
    @property
    def tunable(self) -> str | None: ...
    @property
    def code_of(self) -> str: ...


__all__ = ["InChild", "available_reason", "read_cpu", "raw_runs"]


@dataclass(frozen=True, slots=True)
class InChild:
    """The runner of a row measured in a child interpreter (``harness.runner`` chooses it from the
    row, which gives the child's GLIBC_TUNABLES setting and the row whose sequence it times)."""

    row: MethodInfo
    separate_process = True  # a failure is the child's: this row's alone (measure() goes on)

    def time_runs(self, runs: int, serialize: str, copies: int, diff: bool, counter: str, timeout_s: float,
                  estimate_step: float | None, /) -> _core.TimedRuns:
        """:func:`raw_runs` (no `timeout_s`, a user function's; no `estimate_step`: estimated in Python)."""
        return raw_runs(self.row, runs=runs, serialize=serialize, copies=copies, diff=diff, counter=counter)

    def read_cpu(self) -> tuple[int, int | None, int, bool]:
        return read_cpu(self.row)

    def read(self) -> tuple[int, bool]:
        return read_cpu(self.row)[2:]  # type: ignore[return-value]  # (raw, valid)

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
from fastcpu.instrument.child import _child
_child(why)
"""


def _child_argv() -> list[str]:
    """The command line of the child: this interpreter, isolated, running
    :data:`_BOOT` with this process's pid and the homes of this fastcpu and
    of the numpy this process imported."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    numpy_home = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    homes = [here] if numpy_home == here else [here, numpy_home]
    return [sys.executable, "-I", "-c", _BOOT, str(os.getpid()), *homes]


class _Server:
    """One child interpreter started with one row's tunable, kept for later requests: one request
    per line on its stdin; it ends with the pipe, with the thread that started it, or killed.
    """

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.owner = os.getpid()
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.stderr, env=env)
        except BaseException:
            self.stderr.close()
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, request: dict[str, Any], timeout_s: float | None) -> tuple[bytes | bytearray, bool]:
        """(the answer's bytes, whether the child closed its stdout before
        they were whole). Raises TimeoutError when no whole answer came in
        `timeout_s` seconds (None: no limit)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # gone already: what it said, if anything, is on its stdout
            pass
        reader = _Reader(self.proc.stdout.fileno(), timeout_s)
        header = reader.until_newline(_HEADER_MAX)
        if reader.eof or not header.endswith(b"\n"):
            return header, reader.eof
        data = bytearray(header)  # read into, never copied: 17 bytes a run of a measurement
        reader.into(data, _body_bytes(header, request))
        return data, reader.eof

    def last_words(self) -> str:
        self.stderr.seek(0)
        return _last_words(self.stderr.read())

    def ended(self) -> int:
        """Its exit status (negative: the signal), waiting for it to end."""
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def close(self, kill: bool = True) -> None:
        """End it (killed, or told to end by closing its stdin) and free what it held."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        if self.owner == os.getpid():  # never another process's (a fork's parent's) child
            if kill:
                self.proc.kill()
            self.ended()
        self.stderr.close()


class _Reader:
    """Reads a pipe's bytes as they come, within a deadline."""

    def __init__(self, fd: int, timeout_s: float | None) -> None:
        self.fd, self.eof = fd, False
        self.deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self.pending = b""

    def _chunk(self, most: int) -> bytes:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(self.fd, most)
        self.eof = not chunk
        return chunk

    def until_newline(self, most: int) -> bytes:
        """Up to and with the first newline, or what came before `most` bytes or the end."""
        data = bytearray()
        while len(data) < most:
            chunk = self._chunk(min(1 << 16, most - len(data)))
            if not chunk:
                break
            end = chunk.find(b"\n")
            if end >= 0:
                data += chunk[:end + 1]
                self.pending = chunk[end + 1:]
                break
            data += chunk
        return bytes(data)

    def into(self, data: bytearray, size: int) -> None:
        """Append `size` more bytes to `data`, or what came before the end."""
        want = len(data) + size
        data += self.pending[:size]
        self.pending = self.pending[size:]
        while len(data) < want:
            chunk = self._chunk(min(1 << 20, want - len(data)))
            if not chunk:
                return
            data += chunk


def _body_bytes(header: bytes, request: dict[str, Any]) -> int:
    """How many bytes of arrays follow `header`, as far as it announces
    arrays of the runs `request` asked for (:func:`_read_answer` judges the
    rest)."""
    try:
        items = json.loads(header).get("value")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return 0
    if not isinstance(items, list):  # no arrays announced: _read_answer says what is wrong
        return 0
    runs = request["args"][0] if request["op"] == "measure" else 0
    return sum(runs * _DTYPES[item["array"]].itemsize for item in items
               if isinstance(item, dict) and item.get("array") in _DTYPES and item.get("length") == runs)


#: The idle child interpreters, each with what it was started with (argv and
#: environment), the most recently used last: at most _IDLE_MAX in all. A
#: request takes one started as it would start one (or starts one) and gives
#: it back when answered, so threads measuring at once each have their own.
_idle: list[tuple[tuple[Any, ...], _Server]] = []
_idle_lock = ForkSafeLock()
_IDLE_MAX = 2
#: The process whose children _idle holds (a fork's child finds its parent's there).
_idle_pid = os.getpid()


def _close_idle() -> None:
    """Each idle child told to end (its stdin closed) and waited for: at
    exit, and by tests that want a fresh start."""
    with _idle_lock:
        servers = [server for _, server in _idle]
        _idle.clear()
    for server in servers:  # all told first, then waited for: they end together
        try:
            if server.proc.stdin is not None:
                server.proc.stdin.close()
        except OSError:
            pass
    for server in servers:
        server.close(kill=False)


atexit.register(_close_idle)


def _take(key: tuple[Any, ...]) -> _Server | None:
    """An idle server started with `key`, alive, or None."""
    global _idle_pid
    with _idle_lock:
        if _idle_pid != os.getpid():  # forked: the parent's children, their pipes closed here, nothing more
            for _, server in _idle:
                server.close()
            _idle.clear()
            _idle_pid = os.getpid()
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i][0] == key:
                server = _idle.pop(i)[1]
                if server.alive():
                    return server
                server.close()
    return None


def _give_back(key: tuple[Any, ...], server: _Server) -> None:
    with _idle_lock:
        _idle.append((key, server))
        evicted = _idle.pop(0)[1] if len(_idle) > _IDLE_MAX else None
    if evicted is not None:
        evicted.close(kill=False)


def _ask(row: MethodInfo, request: dict[str, Any], timeout_s: float | None) -> Any:
    """Run `request` for the catalog row `row` in a child started with its tunable, on the calling thread's
    CPUs (an idle child reused; one that ended replaced once); the answer per :func:`_read_answer`.
    """
    label, setting = row.name, str(row.tunable)
    try:
        cpus: list[int] | None = sorted(os.sched_getaffinity(0))
    except OSError:  # no mask to give: the child keeps its own
        cpus = None
    request = {**request, "tunable": setting, "code_of": row.code_of, "cpus": cpus}
    argv, env = _child_argv(), _child_env(setting)
    key = (tuple(argv), tuple(sorted(env.items())))
    server = _take(key)
    if server is not None:
        try:
            return _answer_of(label, server, request, timeout_s, key)
        except _Gone:
            pass  # it ended between two requests: a fresh one answers
    try:
        server = _Server(argv, env)
    except OSError as exc:
        raise _core.Unsupported(f"{label}: could not run the child interpreter {sys.executable}: "
                                f"{_why_not_started(exc)}") from None
    try:
        return _answer_of(label, server, request, timeout_s, key)
    except _Gone as gone:
        raise gone.error from None


class _Gone(Exception):
    """A child that ended without a byte of answer (`error`: what to say)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _answer_of(name: str, server: _Server, request: dict[str, Any], timeout_s: float | None,
               key: tuple[Any, ...]) -> Any:
    """`server`'s answer to `request`, checked; the server goes back idle
    after a whole answer and is ended after anything else."""
    try:
        data, ended = server.ask(request, timeout_s)
    except TimeoutError:
        server.close()
        raise _core.Unsupported(f"{name}: could not run the child interpreter {sys.executable}: "
                                f"it did not answer within {timeout_s:g} s") from None
    except BaseException:  # Ctrl-C mid-answer: what it would send next is unknown
        server.close()
        raise
    try:  # a whole answer stands whatever follows (a sanitizer's report at exit)
        answer = _read_answer(data, request)
    except ValueError as exc:
        if not ended:  # alive, and saying something else: ended here
            server.proc.kill()
        status = server.ended() if ended else 0
        words = server.last_words()
        server.close(kill=False)
        if status != 0 or not data:
            error = _core.Error(f"{name}: the child interpreter {_how_it_ended(status)} without "
                                f"an answer: {words}")
            raise (_Gone(error) if not data else error) from None
        raise _core.Error(f"{name}: the child interpreter sent an answer this process does not "
                          f"read ({exc}); its stderr: {words}") from None
    if ended:
        server.close(kill=False)
    else:
        _give_back(key, server)
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
    # a _core.TimedRuns without ruler points: raw, empty, migrated per run; best,
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


def _read_answer(data: bytes | bytearray, request: dict[str, Any]) -> tuple | _Failed:
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
            runs_array = np.frombuffer(data, dtype, runs, at).copy()
            runs_array.flags.writeable = False  # a result's from here on, as the C core's are
            out.append(runs_array)
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


def _why_not_started(exc: OSError) -> str:
    """The reason a child could not be started."""
    text = exc.strerror or str(exc)
    hint = _START_ERRNOS.get(exc.errno or 0)
    return f"{text}: {hint}" if hint else text


def read_cpu(row: MethodInfo) -> tuple[int, int | None, int, bool]:
    """One reading of the catalog row `row` in its child (sched_getcpu() without
    rseq): (cpu, node, raw, valid), as ``_core.read_cpu`` returns them; the
    child runs on the calling thread's CPUs."""
    return _ask(row, {"op": "read"}, _START_S)


def raw_runs(row: MethodInfo, *, runs: int, serialize: str, copies: int, diff: bool, counter: str) -> _core.TimedRuns:
    """``_core.time_runs`` of row `name`'s sequence in its child, without ruler points, on the
    calling thread's CPUs: the child's record (TSC ticks, or core cycles for ``'pmu'``). No time
    limit; Ctrl-C reaches the child too.
    """
    request = {"op": "measure", "args": (runs, serialize, copies, diff, counter), "counter": counter}
    return _core.TimedRuns(_ask(row, request, None))


def _serve(request: dict[str, Any]) -> Any:
    if _core.features()["rseq_registered"]:
        raise _core.Unsupported(
            "glibc registered rseq in the child although GLIBC_TUNABLES held "
            f"{request['tunable']} (a glibc that ignores it, or a secure-execution interpreter)"
        )
    if request["cpus"] is not None:  # the asking thread's CPUs, as a fork would have inherited them
        os.sched_setaffinity(0, request["cpus"])
    if request["op"] == "read":
        return _core.read_cpu(request["code_of"])
    if request["counter"] == "pmu":
        _core.pmu_open()
    runs, serialize, copies, diff, counter = request["args"]
    return _core.time_runs(request["code_of"], runs=runs, serialize=serialize, copies=copies, diff=diff,
                         counter=counter, rulers=None)  # no ruler points there


def _child(no_deathsig: str) -> None:
    """The child's side: one JSON request per line on stdin, one answer each on stdout, until stdin
    closes. Refuses to measure where `no_deathsig` says it cannot die with its parent.
    """
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            if no_deathsig:
                raise _core.Unsupported(f"the child could not be set to die with its parent "
                                        f"(prctl PR_SET_PDEATHSIG: {no_deathsig})")
            _write_answer(out, _serve(request))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent
            kind = "Unsupported" if isinstance(exc, _core.Unsupported) else "Error"
            _write_answer(out, error=(kind, f"{type(exc).__name__}: {exc}" if kind == "Error" and
                                      not isinstance(exc, _core.Error) else str(exc)))
        out.flush()
