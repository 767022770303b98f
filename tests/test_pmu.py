"""counter='pmu': core cycles from the PMU where perf_event_open and user-space
rdpmc work; fastcpu.Unsupported with the reason where they do not."""

import ctypes

import pytest

import fastcpu
from fastcpu import _core
from pinning import run_python


def pmu_reason():
    try:
        _core.pmu_open()
    except fastcpu.Unsupported as exc:
        return str(exc)
    return None


REASON = pmu_reason()
needs_pmu = pytest.mark.skipif(REASON is not None, reason=f"no usable PMU here: {REASON}")


@pytest.mark.parametrize("counter, error", [("bogus", ValueError), (1, TypeError)])
def test_counter_is_checked(counter, error):
    with pytest.raises(error, match="counter"):
        fastcpu.bench("gdt", 10, counter=counter)


def test_the_rdtscp_mode_has_no_pmu_counterpart():
    with pytest.raises(ValueError, match="with counter='pmu' use 'lfence' or 'cpuid'"):
        fastcpu.bench("gdt", 10, serialize="rdtscp", counter="pmu")
    with pytest.raises(ValueError, match="with counter='pmu'"):
        _core.time_runs("gdt", runs=10, serialize="rdtscp", copies=1, diff=False, counter="pmu", rulers=None)
    with pytest.raises(ValueError, match="unknown counter"):
        _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="hpet", rulers=None)


@pytest.mark.skipif(REASON is None, reason="this machine has a usable PMU")
def test_without_a_pmu_bench_says_why():
    assert REASON.startswith("counter='pmu': ")
    assert "perf_event_open" in REASON or "rdpmc" in REASON or "counter" in REASON
    with pytest.raises(fastcpu.Unsupported) as info:
        fastcpu.bench("add_chain_100", 10, counter="pmu")
    assert str(info.value) == REASON
    libc = ctypes.CDLL(None)
    with pytest.raises(fastcpu.Unsupported, match="counter='pmu'"):
        fastcpu.bench(libc.getpid, 10, counter="pmu")
    with pytest.raises(fastcpu.Unsupported, match="counter='pmu'"):
        fastcpu.bench_diff("add_chain_1", 10, counter="pmu")


@needs_pmu
@pytest.mark.parametrize("serialize", ["lfence", "cpuid"])
def test_pmu_counts_the_core_cycles_of_a_chain(serialize):
    r = fastcpu.bench("imul_chain_1024", 500, serialize=serialize, counter="pmu")
    assert r.counter in ("pmu", "pmu_user")
    # a count is a core cycle at the core clock; the tsc_* fields still describe the TSC
    assert r.units.cycles_per_count == 1.0 and r.step == 1
    assert r.tsc_hz == fastcpu.clock().tsc_hz and r.units.hz == pytest.approx(fastcpu.clock().core_hz)
    assert r.estimate_core_cycles == r.estimate
    # 3072 cycles of dependent imuls, counted by the core itself
    assert r.estimate == pytest.approx(3072, rel=0.05)
    add = fastcpu.bench("add_chain_1024", 500, serialize=serialize, counter="pmu")
    assert add.estimate == pytest.approx(1024, rel=0.05)


@needs_pmu
def test_pmu_times_user_functions_and_other_threads():
    import threading

    libc = ctypes.CDLL(None)
    r = fastcpu.bench(libc.getpid, 200, counter="pmu")
    assert r.method == "user:getpid" and r.raw.shape == (200,)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fastcpu.bench("add_chain_256", 200, counter="pmu")))
    t.start()
    t.join()
    assert out["r"].estimate == pytest.approx(256, rel=0.10)


@pytest.mark.skipif(REASON is None, reason="this machine has a usable PMU")
def test_the_cli_says_why_before_measuring(capsys):
    from fastcpu.cli import main

    assert main(["--counter", "pmu", "--methods", "gdt"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.strip() == f"fastcpu: {REASON}"
    assert main(["--counter", "pmu", "--serialize", "rdtscp"]) == 2


FORK_SCRIPT = r"""
import os
import fastcpu
from fastcpu import _core
from pinning import run_python

def attempt():
    try:
        return "open: " + _core.pmu_open()
    except fastcpu.Unsupported as exc:
        return str(exc)

print(attempt(), flush=True)
pid = os.fork()
if pid == 0:
    # the parent's event page is not mapped in a child (VM_DONTCOPY)
    os.write(1, (attempt() + "\n").encode())
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status)
"""


def test_a_forked_child_opens_its_own_counter():
    # FASTCPU_TEST_PMU_SOFTWARE opens a software event in its place, so the
    # open-then-fork path runs without a PMU (nothing can be timed with it:
    # its page has index 0, which pmu_open() reports)
    p = run_python(FORK_SCRIPT, FASTCPU_TEST_PMU_SOFTWARE="1")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    if "mmap page index 0" not in lines[0]:
        pytest.skip(f"perf_event_open cannot open even a software event here: {lines[0]}")
    # a child that read the parent's unmapped page died of SIGSEGV, silently
    assert len(lines) == 3, lines
    parent, child, exited = lines
    assert child == parent
    assert exited.startswith("True"), exited
