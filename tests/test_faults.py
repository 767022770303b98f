"""Faults are contained: an instruction CPUID hides, or one that faults in the
probe child, makes its methods Unsupported; the interpreter never dies.

The private test hooks FASTCPU_TEST_HIDE_CPUID and FASTCPU_TEST_FAULT_IN_PROBE
walk the paths this machine never takes; each case runs in a fresh process.
"""

import json
import os
import subprocess
import sys

import pytest

import fastcpu
from fastcpu import _core
from pinning import run_python

FEATURES = _core.features()

SCRIPT = r"""
import json, os, threading
import fastcpu
from fastcpu import _core
info = {m.name: m for m in fastcpu.methods()}
def outcome(fn, *args, **kw):
    try:
        fn(*args, **kw)
        return "ok"
    except fastcpu.Unsupported as exc:
        return "Unsupported: " + str(exc)
names = %r
out = {
    "methods": {n: [info[n].available, info[n].reason] for n in names},
    "read": {n: outcome(fastcpu.read, n) for n in names},
    "bench": {n: outcome(fastcpu.bench, n, 20) for n in names},
    "gdt": outcome(fastcpu.read, "gdt"),
    "getcpu_method": fastcpu.getcpu_method(),
    "getcpu_right": fastcpu.getcpu() == fastcpu.read("syscall").cpu,
    "all_agree": fastcpu.check().all_agree,
    "test_hooks": _core.features()["test_hooks"],
}
print(json.dumps(out))
"""


def run(names, **env):
    p = run_python(SCRIPT % (names,), **env)
    assert p.returncode == 0, f"the interpreter died: {p.returncode}\n{p.stderr}"
    return json.loads(p.stdout)


def test_rdpid_hidden_from_cpuid():
    if not FEATURES["rdpid"]:
        pytest.skip("this CPU has no RDPID to hide")
    out = run(["rdpid"], FASTCPU_TEST_HIDE_CPUID="rdpid")
    assert out["test_hooks"]
    assert out["methods"]["rdpid"] == [False, "CPUID lacks RDPID (7.0:ECX bit 22)"]
    assert out["read"]["rdpid"].startswith("Unsupported: rdpid: CPUID lacks RDPID")
    assert out["bench"]["rdpid"].startswith("Unsupported: rdpid: CPUID lacks RDPID")
    assert out["getcpu_method"] != "rdpid"
    assert out["getcpu_right"] and out["all_agree"]


def test_rdtscp_hidden_from_cpuid():
    models = ["tscp", "vgetcpu26_tscp", "getcpu_tscp", "getcpu_tscp_fp", "sched_getcpu_tscp"]
    out = run(models, FASTCPU_TEST_HIDE_CPUID="rdtscp")
    for n in models:
        assert out["methods"][n] == [False, "CPUID lacks RDTSCP (80000001H:EDX bit 27)"], n
        assert out["read"][n].startswith(f"Unsupported: {n}: CPUID lacks RDTSCP"), n
        # every timer closes with rdtscp: nothing can be timed
        assert "RDTSCP" in out["bench"][n]
    assert out["gdt"] == "ok"  # reading without timing still works
    assert out["getcpu_right"] and out["all_agree"]


def test_fsgsbase_hidden_from_cpuid():
    if not FEATURES["fsgsbase_enabled"]:
        pytest.skip("RDFSBASE/RDGSBASE are not enabled here: nothing to hide")
    out = run(["rdfsbase", "rdgsbase"], FASTCPU_TEST_HIDE_CPUID="fsgsbase")
    for n in ("rdfsbase", "rdgsbase"):
        assert out["methods"][n] == [False, "CPUID lacks FSGSBASE (7.0:EBX bit 0)"], n
        assert out["read"][n].startswith(f"Unsupported: {n}: CPUID lacks FSGSBASE"), n
        assert out["bench"][n].startswith(f"Unsupported: {n}: CPUID lacks FSGSBASE"), n
    assert out["getcpu_right"] and out["all_agree"]


def test_umip_hidden_from_cpuid():
    # A CPUID that hides UMIP while the kernel still emulates SIDT: the
    # instructions run (trapped and emulated), and what they read, not the
    # missing bit, tells fastcpu that no CPU is there.
    if not FEATURES["umip"]:
        pytest.skip("this CPU has no UMIP to hide")
    names = ["sidt", "sgdt", "sldt", "getcpu_sidt", "sched_getcpu_sidt"]
    out = run(names, FASTCPU_TEST_HIDE_CPUID="umip")
    for n in names:
        assert out["methods"][n] == [True, None], n
        assert out["bench"][n] == "ok", n
        assert out["read"][n].startswith(f"Unsupported: {n}: "), n
        assert "UMIP" not in out["read"][n], n
    assert out["getcpu_right"] and out["all_agree"]


# Every method whose instruction can fault: the real instructions and the
# models built on RDTSCP or SIDT. Each must be probed in a child first.
FAULT_PRONE = [
    "tscp", "rdpid", "sidt", "sgdt", "sldt", "rdfsbase", "rdgsbase", "gs_reload",
    "vgetcpu26_tscp", "getcpu_tscp", "getcpu_tscp_fp", "sched_getcpu_tscp",
    "getcpu_sidt", "getcpu_sidt_rz_fp", "getcpu_sidt_norz_nofp", "getcpu_sidt_norz_fp",
    "sched_getcpu_sidt",
]


def test_an_instruction_that_faults_in_the_probe_child():
    available = {m.name for m in fastcpu.methods() if m.available}
    faulting = [n for n in FAULT_PRONE if n in available]
    if not faulting:
        pytest.skip("no fault-prone method is available here")
    out = run(faulting, FASTCPU_TEST_FAULT_IN_PROBE=",".join(faulting))
    for n in faulting:
        available, reason = out["methods"][n]
        assert available is False, n
        assert "SIGILL in a probe child" in reason, n
        assert out["read"][n].startswith(f"Unsupported: {n}: the instruction raised SIGILL")
        assert out["bench"][n].startswith(f"Unsupported: {n}: the instruction raised SIGILL")
    assert out["getcpu_method"] != "rdpid"
    assert out["getcpu_right"] and out["all_agree"]


def test_hooks_are_off_by_default():
    assert FEATURES["test_hooks"] is False
    assert "FASTCPU_TEST_HIDE_CPUID" not in os.environ


SIGCHLD_IGNORED = r"""
import json, signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps children itself
import fastcpu
print(json.dumps({m.name: [m.available, m.reason] for m in fastcpu.methods()}))
"""


def _methods_with_sigchld_ignored(**env):
    # a probe that waited for a child the kernel had already reaped spun
    # forever: a short timeout makes that a failure, not a hung suite
    p = subprocess.run(
        [sys.executable, "-c", SIGCHLD_IGNORED], check=False, env=dict(os.environ, **env),
        cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_probes_work_with_sigchld_ignored():
    here = {m.name: [m.available, m.reason] for m in fastcpu.methods()}
    assert _methods_with_sigchld_ignored() == here


def test_a_fault_is_seen_with_sigchld_ignored():
    available = {m.name for m in fastcpu.methods() if m.available}
    faulting = [n for n in FAULT_PRONE if n in available]
    if not faulting:
        pytest.skip("no fault-prone method is available here")
    out = _methods_with_sigchld_ignored(FASTCPU_TEST_FAULT_IN_PROBE=",".join(faulting))
    for n in faulting:
        available, reason = out[n]
        # no exit status to name the signal by: the missing report says it
        assert available is False and "probe child died before reporting" in reason, (n, reason)


def test_a_calibration_chain_is_no_cpu_source_and_does_not_crash():
    # read_cpu() of a chain once indexed the catalog's caches with a pointer
    # into another array: SIGSEGV
    p = run_python(
        "import fastcpu\n"
        "from fastcpu import _core\n"
        "for call in (lambda: _core.read_cpu('add_chain_4'), lambda: fastcpu.read('imul_chain_1')):\n"
        "    try:\n"
        "        call()\n"
        "    except fastcpu.Unsupported as exc:\n"
        "        print(exc)\n"
        "print(_core.read('add_chain_4'))\n"
    )
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert p.stdout.splitlines() == [  # _core words it as for any row of the catalog
        "add_chain_4 does not report the CPU here: a known-cost chain reports no CPU",
        "imul_chain_1: a known-cost chain reports no CPU",
        "(0, True)",
    ]
