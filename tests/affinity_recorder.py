"""Record every sched_setaffinity call of a process, C's included.

:func:`run` runs Python code in a process (the target) that a seccomp filter
makes send each of its sched_setaffinity system calls (whatever thread,
whatever library makes it, in it or in a process it forks) to its parent
(the supervisor) through the kernel's user notification
(SECCOMP_RET_USER_NOTIF, Linux 5.0; SECCOMP_USER_NOTIF_FLAG_CONTINUE, 5.5).
The supervisor reads the mask each call names from the caller's memory
(/proc/TID/mem: a parent may read its child's), records it and lets the call
go on to the kernel, or refuses it with EINVAL as the kernel refuses an
offline CPU. Another process, not a thread: os.sched_setaffinity holds the
GIL across the system call. Nothing is compiled, preloaded or traced: ctypes
only. Where the kernel refuses the filter, :func:`run` says why
(``{"unavailable": reason}``).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

__all__ = ["run"]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.ioctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)

SYS_seccomp, SYS_sched_setaffinity = 317, 203  # x86-64
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3
SECCOMP_RET_ALLOW, SECCOMP_RET_USER_NOTIF = 0x7FFF0000, 0x7FC00000
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1
AUDIT_ARCH_X86_64 = 0xC000003E


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


class _Data(ctypes.Structure):
    _fields_ = [("nr", ctypes.c_int), ("arch", ctypes.c_uint32), ("ip", ctypes.c_uint64),
                ("args", ctypes.c_uint64 * 6)]


class _Notif(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("pid", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("data", _Data)]


class _Resp(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("val", ctypes.c_int64), ("error", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


def _iowr(nr: int, size: int) -> int:
    return (3 << 30) | (size << 16) | (ord("!") << 8) | nr


NOTIF_RECV = _iowr(0, ctypes.sizeof(_Notif))
NOTIF_SEND = _iowr(1, ctypes.sizeof(_Resp))

# BPF: x86-64 sched_setaffinity -> user notification; everything else allowed
_LD_W_ABS, _JEQ_K, _RET_K = 0x20, 0x15, 0x06
_PROGRAM = [
    (_LD_W_ABS, 0, 0, 4),  # arch
    (_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
    (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    (_LD_W_ABS, 0, 0, 0),  # nr
    (_JEQ_K, 0, 1, SYS_sched_setaffinity),
    (_RET_K, 0, 0, SECCOMP_RET_USER_NOTIF),
    (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
]


def _install() -> int:
    """The filter on this (single-threaded) process: the listener's fd.

    Raises:
        OSError: no_new_privs, the filter or its listener refused.
    """
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    filters = (_Filter * len(_PROGRAM))(*(_Filter(*f) for f in _PROGRAM))
    prog = _Prog(len(_PROGRAM), filters)
    fd = _libc.syscall(ctypes.c_long(SYS_seccomp), ctypes.c_long(SECCOMP_SET_MODE_FILTER),
                       ctypes.c_long(SECCOMP_FILTER_FLAG_NEW_LISTENER), ctypes.byref(prog))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): {os.strerror(err)}")
    return fd


def _mask(tid: int, address: int, size: int) -> list[int] | str:
    """The CPUs set in the cpu_set_t of `size` bytes at `address` in thread
    `tid`, or why it could not be read."""
    try:
        fd = os.open(f"/proc/{tid}/mem", os.O_RDONLY)
        try:
            raw = os.pread(fd, min(size, 1 << 16), address)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"cannot read the mask: {exc}"
    bits = int.from_bytes(raw, "little")
    return [i for i in range(len(raw) * 8) if bits >> i & 1]


def _supervise(listener: int, target: int, refuse: set[int], deadline_s: float) -> tuple[list[dict], int | None]:
    """Answer the target's calls until it exits: (the calls, its exit status
    or None when it was killed at the deadline)."""
    calls: list[dict] = []
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    deadline = time.monotonic() + deadline_s
    while True:
        done, status = os.waitpid(target, os.WNOHANG)
        if done:
            return calls, os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(target, signal.SIGKILL)
            os.waitpid(target, 0)
            return calls, None
        for _, event in poller.poll(20):
            if not event & select.POLLIN:
                continue
            notif = _Notif()
            if _libc.ioctl(listener, NOTIF_RECV, ctypes.byref(notif)) != 0:
                continue  # the caller went away, or interrupted
            cpus = _mask(notif.pid, notif.data.args[2], notif.data.args[1])
            no = isinstance(cpus, list) and bool(refuse.intersection(cpus))
            calls.append({"tid": notif.pid, "target": notif.data.args[0], "cpus": cpus, "refused": no})
            resp = _Resp(notif.id, 0, -errno.EINVAL if no else 0, 0 if no else SECCOMP_USER_NOTIF_FLAG_CONTINUE)
            _libc.ioctl(listener, NOTIF_SEND, ctypes.byref(resp))


def _main(config: dict) -> None:
    """The supervisor: restrict the affinity, fork the target (which installs
    the filter, hands over the listener and runs the code), answer it, print
    ``{"calls": [...], "status": ..., "report": what the code reported}``."""
    os.sched_setaffinity(0, config["allowed"])
    ours, theirs = socket.socketpair()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the target
        os.close(r)
        try:
            listener = _install()
        except OSError as exc:
            socket.send_fds(theirs, [json.dumps({"unavailable": str(exc)}).encode()], [])
            os._exit(0)
        socket.send_fds(theirs, [b"{}"], [listener])
        os.close(listener)

        out = tempfile.TemporaryFile()  # the code's stdout: the supervisor's is its answer
        os.dup2(out.fileno(), 1)
        said = {"report": None}
        try:
            exec(config["code"], {"report": lambda value: said.update(report=value), "__name__": "__target__"})
        except BaseException:  # noqa: BLE001 - the traceback is the report
            import traceback

            said["error"] = traceback.format_exc()
        sys.stdout.flush()
        out.seek(0)
        said["stdout"] = out.read().decode(errors="replace")
        os.write(w, json.dumps(said).encode())
        os._exit(0)
    os.close(w)
    msg, fds, _, _ = socket.recv_fds(ours, 4096, 1)
    said = json.loads(msg)
    if "unavailable" in said:
        os.waitpid(pid, 0)
        print(json.dumps(said))
        return
    calls, status = _supervise(fds[0], pid, set(config["refuse"]), config["deadline_s"])
    out = b""
    while chunk := os.read(r, 1 << 16):
        out += chunk
    print(json.dumps({"calls": calls, "status": status, **(json.loads(out) if out else {})}))


def run(code: str, allowed: set[int], refuse: set[int] = frozenset(), deadline_s: float = 90) -> dict:
    """Run `code` (which may call ``report(value)`` once, with JSON) in a
    target process whose affinity mask is `allowed` from the start, recording
    its sched_setaffinity calls and refusing, with EINVAL, those that name a
    CPU of `refuse`. ``{"calls": [{"tid", "target", "cpus", "refused"}],
    "status": the target's exit status (None: killed at the deadline),
    "report": what it reported, "stdout": what it printed, "error": the
    traceback of what it raised (absent if nothing)}``, or
    ``{"unavailable": why}``."""
    config = {"code": code, "allowed": sorted(allowed), "refuse": sorted(refuse), "deadline_s": deadline_s}
    p = subprocess.run([sys.executable, os.path.abspath(__file__), json.dumps(config)], capture_output=True,
                       text=True, timeout=deadline_s + 60, cwd=os.path.dirname(os.path.abspath(__file__)))
    if p.returncode != 0:
        raise RuntimeError(f"the supervisor failed ({p.returncode}): {p.stderr[-3000:]}")
    return json.loads(p.stdout)


if __name__ == "__main__":
    _main(json.loads(sys.argv[1]))
