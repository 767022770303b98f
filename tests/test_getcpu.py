"""fastcpu.getcpu() and getcpu_node(): right on every CPU, from any thread."""

import json
import os

import pytest

import fastcpu
from fastcpu import _core
from pinning import CPUS, libc_sched_getcpu, on_cpu, run_python, syscall_getcpu

WAYS = {"rseq", "rdpid", "vdso", "syscall"}
INFO = {m.name: m for m in fastcpu.methods()}


@pytest.mark.parametrize("cpu", CPUS)
def test_getcpu_on_a_pinned_thread(cpu):
    got, sched, (sys_cpu, sys_node) = on_cpu(
        cpu, lambda: ((fastcpu.getcpu(), fastcpu.getcpu_node()), libc_sched_getcpu(), syscall_getcpu())
    )
    assert got == (cpu, (cpu, sys_node))
    assert sched == sys_cpu == cpu


def test_the_chosen_ways_are_the_fastest_that_report_the_cpu():
    cpu_way, node_way = fastcpu.getcpu_method(), fastcpu.getcpu_method(node=True)
    assert {cpu_way, node_way} <= WAYS
    # the order is rseq, rdpid, vdso, syscall; a way is skipped only when it
    # does not report the CPU here (or disagreed in the sweep, which it must not)
    for way in ["rseq", "rdpid", "vdso"]:
        if way == cpu_way:
            break
        assert not INFO[way].reports_cpu, f"{way} reports the CPU but getcpu chose {cpu_way}"
    if not _core.features()["rseq_node_id"]:
        assert node_way != "rseq"  # cpu_id alone carries no node
    fallback = _core.getcpu_ways()[2]
    assert fallback in WAYS - {"rseq"}


def test_getcpu_types_and_signature():
    assert type(fastcpu.getcpu()) is int
    cpu, node = fastcpu.getcpu_node()
    assert type(cpu) is int and type(node) is int
    with pytest.raises(TypeError):
        fastcpu.getcpu(1)
    with pytest.raises(TypeError):
        fastcpu.getcpu_method(node="yes")
    assert "fastest way proven right" in fastcpu.getcpu.__doc__


FIRST_CALL_RACE = r"""
import json, os, threading
import fastcpu
cpus = sorted(os.sched_getaffinity(0))
barrier = threading.Barrier(16)
bad = []
def body(i):
    cpu = cpus[i % len(cpus)]
    os.sched_setaffinity(0, {cpu})
    barrier.wait()
    for _ in range(1000):
        if fastcpu.getcpu() != cpu or fastcpu.getcpu_node()[0] != cpu:
            bad.append(cpu)
ts = [threading.Thread(target=body, args=(i,)) for i in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps({"bad": bad, "method": fastcpu.getcpu_method()}))
"""


def test_the_first_call_from_many_threads_at_once():
    p = run_python(FIRST_CALL_RACE)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["bad"] == []
    assert out["method"] in WAYS


def test_getcpu_node_hands_out_one_tuple_per_cpu():
    first, second = on_cpu(CPUS[0], lambda: (fastcpu.getcpu_node(), fastcpu.getcpu_node()))
    assert first == second == (CPUS[0], on_cpu(CPUS[0], syscall_getcpu)[1])
    assert first is second  # built once, then shared: tuples are immutable


# -- with the getcpu system call denied (issue 10, item 2) -------------------------
# Pinned to the last CPU, so that a wrong way reading 0 (or the errno) shows.

DENIED = r"""
import ctypes, json, os
import fastcpu
from fastcpu import _core
cpu = max(os.sched_getaffinity(0))
os.sched_setaffinity(0, {cpu})
libc = ctypes.CDLL(None)
out = {"cpu": cpu, "sched_getcpu": libc.sched_getcpu()}
for name, call in [("getcpu", fastcpu.getcpu), ("getcpu_node", fastcpu.getcpu_node),
                   ("ways", _core.getcpu_ways), ("method", fastcpu.getcpu_method),
                   ("node_method", lambda: fastcpu.getcpu_method(node=True)),
                   ("syscall", lambda: fastcpu.read("syscall").cpu),
                   ("syscall_raw", lambda: fastcpu.read_raw("syscall")),
                   ("check", lambda: (lambda t: [[(a.method, a.error) for a in t.disagreements()],
                                                 t.references[cpu].errors,
                                                 str(t).splitlines()[-4:]])(fastcpu.check(None, [cpu])))]:
    try:
        out[name] = call()
    except fastcpu.Error as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@pytest.mark.parametrize("err", ["EPERM", "ENOSYS"])
def test_getcpu_with_the_system_call_denied_reads_the_right_cpu(err):
    import errno

    from seccomp_helper import run_denied

    p = run_denied(DENIED, ["getcpu"], getattr(errno, err))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    cpu = out["cpu"]
    assert out["sched_getcpu"] == cpu
    assert out["getcpu"] == cpu, out
    assert "syscall" not in out["ways"], out
    # the node: verified against sysfs, or refused with the reason
    if isinstance(out["getcpu_node"], list):
        assert out["getcpu_node"][0] == cpu
        assert out["node_method"] != "syscall"
    else:
        assert out["getcpu_node"].startswith("Unsupported: getcpu_node(): the NUMA node cannot be verified")
    # read() names the real cause, not LSL
    for key in ("syscall", "syscall_raw"):
        assert out[key].startswith(f"Unsupported: syscall: the getcpu system call failed: errno "
                                   f"{getattr(errno, err)} ({err}, "), out[key]
        assert "LSL" not in out[key]
    # check() checks against the references that answered and says which did
    # not; only the system call's own row fails, an error and no wrong CPU
    disagreements, errors, tail = out["check"]
    failure = (f"syscall: the getcpu system call failed: errno {getattr(errno, err)} ({err}, "
               f"{os.strerror(getattr(errno, err))}) (a seccomp filter may deny it)")
    assert errors == [failure]
    assert disagreements == []
    assert tail == ["references that failed (-1 above; the methods were checked against the others):",
                    f"  CPU {cpu}: {failure}", "",
                    "ERROR: 1 cell(s) could not read (errors above); every cell that read agrees"]


def test_getcpu_with_nothing_verifiable_raises_unsupported_with_the_reason():
    from seccomp_helper import run_denied

    # the helper thread cannot pin itself and the system call fails: nothing
    # the fast ways say can be checked
    p = run_denied(DENIED.replace("os.sched_setaffinity(0, {cpu})", ""), ["getcpu", "sched_setaffinity"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ways"] == ["none", "none", "none"]
    for key in ("getcpu", "method"):
        assert out[key].startswith("Unsupported: getcpu(): no way of reading the CPU could be verified: "
                                   "the helper thread could not be pinned to any CPU (sched_setaffinity: "
                                   "errno 1, "), out[key]
        assert "getcpu system call failed: errno 1" in out[key]
    assert out["getcpu_node"].startswith("Unsupported: getcpu_node(): no way of reading the CPU")


def test_getcpu_without_pinning_trusts_a_working_system_call():
    from seccomp_helper import run_denied

    # Pinning is denied inside the child, so pin it from outside (the mask is
    # inherited): unpinned, it could migrate between its three reads.
    cpu = max(os.sched_getaffinity(0))
    p = on_cpu(cpu, lambda: run_denied(DENIED.replace("os.sched_setaffinity(0, {cpu})", ""),
                                       ["sched_setaffinity"]))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ways"] == ["syscall", "syscall", "syscall"]
    assert out["getcpu"] == out["sched_getcpu"] == out["syscall"]


# The system call chosen (pinning denied), then denied too: a second filter,
# installed from Python, makes the next call fail. Its error return is checked.
DENIED_LATER = r"""
import ctypes, json
import fastcpu
from fastcpu import _core

class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]

class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

def deny_getcpu():
    LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06
    prog = (SockFilter * 4)(SockFilter(LD_W_ABS, 0, 0, 0),              # seccomp_data.nr
                            SockFilter(JEQ_K, 0, 1, 309),                # getcpu?
                            SockFilter(RET_K, 0, 0, 0x00050000 | 1),     # SECCOMP_RET_ERRNO | EPERM
                            SockFilter(RET_K, 0, 0, 0x7fff0000))         # SECCOMP_RET_ALLOW
    fprog = SockFprog(4, prog)
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)

out = {"ways": _core.getcpu_ways(), "first": fastcpu.getcpu()}
out["filter"] = deny_getcpu()
for name, call in [("getcpu", fastcpu.getcpu), ("getcpu_node", fastcpu.getcpu_node)]:
    try:
        out[name] = call()
    except fastcpu.Error as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_a_chosen_system_call_that_fails_later_raises_with_its_errno():
    from seccomp_helper import run_denied

    p = run_denied(DENIED_LATER, ["sched_setaffinity"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ways"] == ["syscall", "syscall", "syscall"] and out["first"] >= 0
    if out["filter"] != 0:
        pytest.skip("the kernel refused the second seccomp filter")
    assert out["getcpu"] == ("Error: getcpu(): the getcpu system call failed on this call: "
                             "errno 1, Operation not permitted")
    assert out["getcpu_node"] == ("Error: getcpu_node(): the getcpu system call failed on this call: "
                                  "errno 1, Operation not permitted")
