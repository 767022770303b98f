"""Nothing pins outside the CPUs it was given (issue 28, item 1).

Under ``taskset -c 0`` (as in a container's cpuset) the first getcpu() swept
every configured CPU from its helper thread, so getcpu(), getcpu_node(),
getcpu_method(), check() and CLI ``check`` called sched_setaffinity naming
CPU 1. Every entry point that pins runs here in a process whose affinity mask
is cut down before fastcpu is imported, and every sched_setaffinity call it
makes, from C threads and forked children too, is recorded (a seccomp user
notification: tests/affinity_recorder.py). Each call must name CPUs of that
mask only, unless the caller named another CPU itself; one the kernel refuses
is a clear fastcpu.Error (or, for check(), a skipped CPU with the kernel's
reason).

On a machine with one CPU the mask is that CPU, and each test still asserts
that the calls were made and recorded (the sweep pinned to the CPU it may
use), that getcpu() verified a way there, and the refusals.
"""

import json
import os

import pytest

import fastcpu

from affinity_recorder import run
from pinning import CPUS

#: Masks to run under: the first CPU alone, and (with two or more) the last.
MASKS = [[CPUS[0]]] + ([[CPUS[-1]]] if len(CPUS) > 1 else [])

# Each entry point, as code run in the cut-down process; C is the one CPU of
# its mask. SWEEPS: pins to each CPU of the mask in turn (getcpu()'s first
# call, check()); PINS: pins to C; the rest may pin or not, but never outside.
ENTRY_POINTS = {
    "getcpu()": ("fastcpu.getcpu()", "sweeps"),
    "getcpu_node()": ("fastcpu.getcpu_node()", "sweeps"),
    "getcpu_method()": ("fastcpu.getcpu_method()", "sweeps"),
    "getcpu_method(node=True)": ("fastcpu.getcpu_method(node=True)", "sweeps"),
    "check()": ("fastcpu.check()", "sweeps"),
    "check(names)": ("fastcpu.check(['syscall'])", "sweeps"),
    "CLI check": ("from fastcpu.cli import main; main(['check'])", "sweeps"),
    "bench()": ("fastcpu.bench('gdt', 20)", "may"),
    "bench(cpu=)": ("fastcpu.bench('gdt', 20, cpu=C)", "pins"),
    "bench_diff(cpu=)": ("fastcpu.bench_diff('gdt', 20, k=2, cpu=C)", "pins"),
    "measure()": ("fastcpu.measure(20, ['gdt', 'syscall'], selftest=False)", "sweeps"),
    "measure(cpu=)": ("fastcpu.measure(20, ['gdt'], cpu=C, selftest=False)", "pins"),
    # pins unless the clock's rulers disagree (a loaded machine): then it
    # measures nothing, and says why (PROBLEM)
    "selftest(cpu=)": ("PROBLEM = fastcpu.selftest(runs=100, rounds=1, serialize='lfence', paths=('inline',), "
                       "cpu=C).problem", "pins"),
    "read()": ("fastcpu.read('syscall'); fastcpu.read_raw('gdt')", "may"),
    "machine_info()": ("from fastcpu.instrument.machine import machine_info; machine_info()", "may"),
    "CLI run": ("from fastcpu.cli import main; main(['run', '--runs', '20', '--methods', 'gdt', '--out', '-'])",
                "may"),
    "CLI run --cpu": ("from fastcpu.cli import main; "
                      "main(['run', '--runs', '20', '--methods', 'gdt', '--cpu', str(C), '--out', '-'])", "pins"),
}

PROLOGUE = """
import os, warnings
warnings.simplefilter('ignore')
import fastcpu
C = sorted(os.sched_getaffinity(0))[0]
"""


def _recorded(code, mask, refuse=()):
    out = run(PROLOGUE + code, set(mask), set(refuse))
    if "unavailable" in out:  # the kernel refuses seccomp user notification here
        pytest.skip(f"cannot record sched_setaffinity calls: {out['unavailable']}")
    assert out["status"] == 0 and "error" not in out, out
    return out


@pytest.mark.parametrize("mask", MASKS, ids=[f"mask{m}" for m in MASKS])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_no_entry_point_pins_outside_the_affinity_mask(entry, mask):
    code, kind = ENTRY_POINTS[entry]
    out = _recorded(code + "\nreport([fastcpu.getcpu_method() if %r == 'sweeps' else None, "
                           "globals().get('PROBLEM', '')])" % kind, mask)
    way, problem = out["report"]
    masks = [c["cpus"] for c in out["calls"]]
    assert all(isinstance(m, list) for m in masks), masks  # each mask was read
    outside = [m for m in masks if not set(m) <= set(mask)]
    assert outside == [], f"{entry} pinned outside {mask}: {masks}"
    if kind == "sweeps":  # it pinned to the CPU of its mask, and verified a way there
        assert [mask[0]] in masks, masks
        assert way in ("rseq", "rdpid", "vdso", "syscall"), out
    if kind == "pins" and not problem:
        assert [mask[0]] in masks, out


def test_getcpu_sweeps_each_cpu_of_a_wider_mask_and_no_other():
    if len(CPUS) < 3:
        mask = CPUS  # every CPU: the sweep must still pin to each
    else:
        mask = CPUS[::2]
    out = _recorded("fastcpu.getcpu()\nreport(fastcpu.getcpu_method())", mask)
    masks = [c["cpus"] for c in out["calls"]]
    assert sorted(m[0] for m in masks) == mask and all(len(m) == 1 for m in masks), masks
    assert out["report"] != "none"


def test_a_cpu_the_caller_names_outside_the_mask_is_pinned_to_by_check_only_when_named():
    if len(CPUS) < 2:
        pytest.skip("one CPU here: no CPU outside the mask to name")
    inside, outside = CPUS[0], CPUS[-1]
    code = f"t = fastcpu.check(['syscall'], cpus=[{outside}])\nreport([t.cpus, t.skipped, t.outcome])"
    out = _recorded(code, [inside])
    cpus, skipped, outcome = out["report"]
    assert (cpus, skipped, outcome) == ([outside], {}, "agree")  # the kernel allows it: taskset is no cpuset
    masks = [c["cpus"] for c in out["calls"]]
    assert [outside] in masks and masks[-1] == [inside], masks  # and the mask is restored


def test_bench_refuses_a_cpu_outside_the_mask_before_pinning():
    if len(CPUS) < 2:
        pytest.skip("one CPU here: no CPU outside the mask to name")
    inside, outside = CPUS[0], CPUS[-1]
    code = (f"try:\n    fastcpu.bench('gdt', 20, cpu={outside})\nexcept ValueError as exc:\n"
            "    report(str(exc))")
    out = _recorded(code, [inside])
    assert out["report"] == (f"cpu {outside} is not in this thread's affinity mask [{inside}]: "
                             "pass one of those, or None to stay unpinned")
    assert all(set(c["cpus"]) <= {inside} for c in out["calls"]), out["calls"]


# The kernel refusing the CPU (EINVAL: offline, or outside the cpuset since
# the mask was read): the recorder refuses every call naming it, as the kernel
# would. Each entry point that pins to a CPU the caller names says so clearly.
REFUSED = {
    "bench(cpu=)": "fastcpu.bench('gdt', 20, cpu=C)",
    "bench_diff(cpu=)": "fastcpu.bench_diff('gdt', 20, k=2, cpu=C)",
    "measure(cpu=)": "fastcpu.measure(20, ['gdt'], cpu=C, selftest=False)",
    "selftest(cpu=)": "PROBLEM = fastcpu.selftest(runs=100, rounds=1, serialize='lfence', paths=('inline',), "
                      "cpu=C).problem",
}


@pytest.mark.parametrize("entry", list(REFUSED))
def test_a_cpu_the_kernel_refuses_is_a_clear_error(entry):
    mask = MASKS[0]
    code = (f"try:\n    {REFUSED[entry]}\n    report(['returned', globals().get('PROBLEM', '')])\n"
            "except fastcpu.Error as exc:\n    report([type(exc).__name__, str(exc)])")
    out = _recorded(code, mask, refuse=mask)
    kind, message = out["report"]
    if kind == "returned":  # selftest() with the clock's rulers in disagreement: it pinned nowhere
        assert entry == "selftest(cpu=)" and message and out["calls"] == [], out
        return
    assert kind == "Error"
    assert message == (f"cannot pin this thread to CPU {mask[0]}: the kernel refused CPU(s) {mask} "
                       "(sched_setaffinity: Invalid argument; offline, or outside the CPUs this process's "
                       "cpuset allows): pass a CPU of os.sched_getaffinity(0), or cpu=None to stay unpinned")
    assert any(c["refused"] for c in out["calls"])


def test_check_records_a_cpu_the_kernel_refuses_as_skipped_with_the_reason():
    mask = MASKS[0]
    code = "t = fastcpu.check(['syscall'], cpus=[C])\nreport([t.cpus, {str(k): v for k, v in t.skipped.items()}])"
    out = _recorded(code, mask, refuse=mask)
    cpus, skipped = out["report"]
    assert cpus == [] and skipped == {
        str(mask[0]): f"cannot pin to it: the kernel refused CPU {mask[0]} (sched_setaffinity: Invalid "
                      "argument; offline, or outside the CPUs this process's cpuset allows)"}


def test_getcpu_whose_only_cpu_is_refused_falls_back_to_the_kernels_answer():
    mask = MASKS[0]
    out = _recorded("report([fastcpu.getcpu(), fastcpu.getcpu_method()])", mask, refuse=mask)
    assert out["report"] == [mask[0], "syscall"]
    assert [c["cpus"] for c in out["calls"]] == [mask]


# The mask cannot be read (sched_getaffinity denied): the helper knows no CPU
# that is its own, so it pins to none and getcpu() trusts the kernel's answer,
# or, with the system call denied too, says why nothing could be verified.
MASK_DENIED = r"""
import json, fastcpu
try:
    print(json.dumps([fastcpu.getcpu() >= 0, fastcpu.getcpu_method()]))
except fastcpu.Unsupported as exc:
    print(json.dumps(["Unsupported", str(exc)]))
"""


def test_getcpu_with_the_mask_unreadable_pins_nowhere():
    from seccomp_helper import run_denied

    if os.environ.get("FASTCPU_SANITIZED") or fastcpu._core.SANITIZED:
        # as in test_errors.py: AddressSanitizer's own thread start reads the
        # affinity (pthread_getattr_np) and aborts where it is denied
        pytest.skip("AddressSanitizer cannot start a thread with sched_getaffinity denied")

    p = run_denied(MASK_DENIED, ["sched_getaffinity"])
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [True, "syscall"]
    p = run_denied(MASK_DENIED, ["sched_getaffinity", "getcpu"])
    assert p.returncode == 0, p.stderr
    kind, message = json.loads(p.stdout)
    assert kind == "Unsupported" and message == (
        "getcpu(): no way of reading the CPU could be verified: the helper thread could not read its "
        "affinity mask, the CPUs it may pin itself to (sched_getaffinity: errno 1, Operation not "
        "permitted), and the getcpu system call failed: errno 1, Operation not permitted; a seccomp "
        "filter or a container may deny them")
