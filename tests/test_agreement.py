"""Every CPU-reporting method agrees with sched_getcpu() and the getcpu system
call on threads pinned to each CPU, and fastcpu.check() says so."""

import json
import os
import subprocess
import sys
import threading

import pytest

import fastcpu
from fastcpu import _core
from fastcpu.cli import main
import core_probe
from pinning import CPUS, libc_sched_getcpu, on_cpu, run_python, syscall_getcpu

METHODS = {m.name: m for m in fastcpu.methods()}
SOURCES = [m.name for m in METHODS.values() if m.reports_cpu]
FEATURES = _core.features()


def needs(*names):
    for n in names:
        if not METHODS[n].available:
            pytest.skip(f"{n}: {METHODS[n].reason}")


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("name", SOURCES)
def test_method_agrees_with_sched_getcpu_on_a_pinned_python_thread(name, cpu):
    r, sched, (sys_cpu, sys_node) = on_cpu(
        cpu, lambda: (fastcpu.read(name), libc_sched_getcpu(), syscall_getcpu())
    )
    assert r.cpu == sched == sys_cpu == cpu, f"{name} read {r.cpu} on CPU {cpu}"
    if r.node is not None:
        assert r.node == sys_node


@pytest.mark.parametrize("cpu", CPUS)
def test_rdpid_equals_rdtscp_tsc_aux(cpu):
    needs("rdpid", "tscp")
    rdpid, aux, (c, node) = on_cpu(
        cpu, lambda: (fastcpu.read_raw("rdpid"), fastcpu.read_raw("tscp"), syscall_getcpu())
    )
    assert rdpid == aux == c | node << 12


@pytest.mark.parametrize("cpu", CPUS)
def test_lsl_sets_zf_and_its_limit_is_cpu_and_node(cpu):
    (limit, zf), (c, node) = on_cpu(cpu, lambda: (_core.read("gdt"), syscall_getcpu()))
    assert zf is True
    assert limit == c | node << 12
    assert on_cpu(cpu, lambda: fastcpu.read_raw("gdt")) == limit


def test_sidt_and_sgdt_under_umip_give_limit_0_and_no_cpu():
    if not FEATURES["umip"]:
        pytest.skip("this CPU has no UMIP")
    needs("sidt", "sgdt")
    assert fastcpu.read_raw("sidt") == 0
    assert fastcpu.read_raw("sgdt") == 0
    sidt_models = [n for n in METHODS if "sidt" in n and n != "sidt"]
    assert len(sidt_models) >= 5  # the four red zone x frame pointer corners, sched_getcpu
    for name in ("sidt", "sgdt", *sidt_models):
        info = METHODS[name]
        assert not info.reports_cpu
        assert info.cpu_reason.startswith("UMIP: the kernel emulates")
        with pytest.raises(fastcpu.Unsupported, match="UMIP"):
            fastcpu.read(name)
    assert METHODS["sidt"].cpu_reason == "UMIP: the kernel emulates SIDT and the limit is always 0"


def test_sldt_under_umip_gives_selector_0_and_no_cpu():
    # Linux emulates SLDT for 64-bit processes since 5.10; earlier ones
    # SIGSEGV, which the probe child reports as unavailable.
    if not FEATURES["umip"]:
        pytest.skip("this CPU has no UMIP")
    needs("sldt")
    assert fastcpu.read_raw("sldt") == 0  # no LDT in this process
    info = METHODS["sldt"]
    assert info.encoding == "selector" and not info.reports_cpu
    assert info.cpu_reason.startswith("UMIP: the kernel emulates SLDT")
    with pytest.raises(fastcpu.Unsupported, match="SLDT"):
        fastcpu.read("sldt")


@pytest.mark.parametrize("cpu", CPUS)
def test_a_new_pthread_reads_correct_values(cpu):
    _, node = on_cpu(cpu, syscall_getcpu)
    for name in SOURCES:
        if name == "sched_getcpu_norseq":
            continue  # read in a child process, not a thread: test_child_runner.py
        c, n, raw, valid = core_probe.read_in_thread(name, cpu)  # a C pthread, created pinned
        assert valid, name
        assert c == cpu, f"{name} read {c} in a new pthread on CPU {cpu}"
        assert n is None or n == node, name


def test_many_new_python_threads_at_once_read_correct_values():
    errors = []
    barrier = threading.Barrier(8)

    def body(cpu):
        try:
            os.sched_setaffinity(0, {cpu})
            barrier.wait()
            for _ in range(20):
                for name in SOURCES:
                    r = fastcpu.read(name)
                    if r.cpu != cpu:
                        errors.append((name, cpu, r.cpu))
                if fastcpu.getcpu() != cpu:
                    errors.append(("getcpu", cpu))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(CPUS[i % len(CPUS)],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# ---- fastcpu.check() ---------------------------------------------------------


def test_check_sweeps_every_cpu_and_restores_the_mask():
    before = os.sched_getaffinity(0)
    table = fastcpu.check()
    assert os.sched_getaffinity(0) == before
    assert table.cpus == tuple(CPUS)
    assert table.all_agree, str(table)
    assert table.disagreements() == []
    for name in SOURCES:
        assert name in table.methods
        for cpu in CPUS:
            cell = table.cell(name, cpu)
            assert cell.agrees and cell.reading.cpu == cpu
    for name in ("getcpu()", "getcpu_node()"):
        assert all(table.cell(name, c).agrees for c in CPUS)
    for m in METHODS.values():
        if not m.reports_cpu:
            assert table.not_checked[m.name] == (m.reason or m.cpu_reason)
    for cpu, ref in table.references.items():
        assert ref.consistent and ref.cpu == cpu


def refuse_pinning_to(monkeypatch, gap):
    """Make sched_setaffinity refuse a mask of `gap` alone, as for a CPU that
    exists but is offline or outside the cpuset."""
    real = os.sched_setaffinity

    def refuse_gap(pid, mask):
        if set(mask) == {gap}:
            raise OSError(22, "Invalid argument")
        real(pid, mask)

    monkeypatch.setattr(os, "sched_setaffinity", refuse_gap)


def test_check_skips_a_gap_and_goes_on(monkeypatch):
    # A CPU that exists but refuses the thread (offline, outside the cpuset):
    # simulated, since every CPU here is online and allowed.
    if len(CPUS) < 2:
        pytest.skip("needs two CPUs: one to refuse the thread, one to check")
    before = os.sched_getaffinity(0)
    gap = CPUS[-1]
    refuse_pinning_to(monkeypatch, gap)
    others = CPUS[:-1]
    table = fastcpu.check(["syscall", "gdt"], cpus=[*others, gap])
    monkeypatch.undo()
    assert os.sched_getaffinity(0) == before
    assert table.cpus == tuple(others)
    assert set(table.skipped) == {gap}
    assert table.all_agree
    assert "cannot pin" in table.skipped[gap]
    assert "CPUs skipped" in str(table)


def test_check_refuses_cpus_that_cannot_exist():
    with pytest.raises(ValueError, match="CPU numbers are 0 or more"):
        fastcpu.check(["syscall"], cpus=[CPUS[0], -1])
    with pytest.raises(ValueError, match="this kernel has CPUs 0 to"):
        fastcpu.check(["syscall"], cpus=[max(CPUS) + 100_000])


def test_check_lists_a_method_that_reports_no_cpu():
    table = fastcpu.check(["null_syscall", "syscall"])
    assert table.methods == ("syscall",)
    assert "reports no CPU" in table.not_checked["null_syscall"]


def test_check_restores_the_mask_on_error():
    before = os.sched_getaffinity(0)
    with pytest.raises(ValueError):
        fastcpu.check(["nope"])
    with pytest.raises(TypeError):
        fastcpu.check("syscall")
    with pytest.raises(TypeError):
        fastcpu.check(cpus=["0"])
    assert os.sched_getaffinity(0) == before


def test_a_disagreement_is_shown(monkeypatch):
    real = fastcpu.instrument.cpu.read

    def lying_read(name):
        r = real(name)
        return fastcpu.types.CpuReading(r.method, r.cpu + 1, r.node, r.raw) if name == "gdt" else r

    monkeypatch.setattr(fastcpu.instrument.cpu, "read", lying_read)
    table = fastcpu.check(["gdt", "syscall"])
    assert not table.all_agree
    assert [a.method for a in table.disagreements()] == ["gdt"] * len(CPUS)
    assert "DISAGREEMENT" in str(table)
    row = next(line for line in str(table).splitlines() if line.startswith("gdt "))
    assert row.split()[1::2] == ["NO"] * len(CPUS)


# ---- three outcomes: agree, disagree (a wrong CPU), error (could not read) ----


def _check_with(monkeypatch, replies, names=("gdt", "syscall"), cpus=None):
    """check(names) with `replies[name](reading)` standing in for what each
    named method read: a reading, or an exception raised."""
    real = fastcpu.instrument.cpu.read

    def read(name):
        r = real(name)
        return replies[name](r) if name in replies else r

    monkeypatch.setattr(fastcpu.instrument.cpu, "read", read)
    table = fastcpu.check(list(names), cpus)
    monkeypatch.undo()
    return table


def _raise(exc):
    def reply(reading):
        raise exc
    return reply


def _wrong_cpu(r):
    return fastcpu.types.CpuReading(r.method, r.cpu + 1, r.node, r.raw)


def test_a_method_that_cannot_read_is_an_error_not_a_disagreement(monkeypatch, capsys):
    before = os.sched_getaffinity(0)
    table = _check_with(monkeypatch, {"gdt": _raise(fastcpu.Unsupported("gdt: refused here"))})
    assert os.sched_getaffinity(0) == before
    assert table.outcome == "error" and not table.all_agree
    assert table.disagreements() == []
    assert [(a.method, a.cpu, a.error) for a in table.errors()] == [("gdt", c, "gdt: refused here") for c in CPUS]
    for c in CPUS:
        cell = table.cell("gdt", c)
        assert cell.outcome == "error" and cell.reading is None and not cell.agrees
        assert table.cell("syscall", c).outcome == "agree"
    text = str(table)
    assert "DISAGREEMENT" not in text
    assert text.splitlines()[-1] == table.summary() == (
        f"ERROR: {len(CPUS)} cell(s) could not read (errors above); every cell that read agrees")
    row = next(line for line in text.splitlines() if line.startswith("gdt "))
    assert row.split() == ["gdt"] + ["error"] * len(CPUS)
    assert f"  gdt on CPU {CPUS[0]}: gdt: refused here" in text


def test_any_fastcpu_error_of_a_read_is_an_error_cell(monkeypatch):
    # not only Unsupported: a child that died without an answer, say; the
    # sweep goes on over every CPU
    table = _check_with(monkeypatch, {"gdt": _raise(fastcpu.Error("gdt: the child died"))})
    assert table.cpus == tuple(CPUS) and table.outcome == "error"
    assert [a.error for a in table.errors()] == ["gdt: the child died"] * len(CPUS)


def test_a_wrong_cpu_beside_an_error_is_a_disagreement(monkeypatch, capsys):
    table = _check_with(monkeypatch, {"gdt": _wrong_cpu, "syscall": _raise(fastcpu.Unsupported("syscall: denied"))})
    assert table.outcome == "disagree" and not table.all_agree
    assert [a.method for a in table.disagreements()] == ["gdt"] * len(CPUS)
    assert [a.method for a in table.errors()] == ["syscall"] * len(CPUS)
    assert table.summary() == (f"DISAGREEMENT: {len(CPUS)} cell(s) read a wrong CPU; "
                               f"{len(CPUS)} cell(s) could not read (errors above)")


def test_references_that_disagree_are_a_disagreement(monkeypatch):
    real = _core.read_cpu

    def lying(name):
        cpu, node, raw, ok = real(name)
        return (cpu + 1, node, raw + 1, ok) if name == "sched_getcpu" else (cpu, node, raw, ok)

    monkeypatch.setattr(_core, "read_cpu", lying)
    table = fastcpu.check(["gdt"])
    monkeypatch.undo()
    assert table.outcome == "disagree"
    assert [r.cpu for r in table.inconsistent_references()] == CPUS
    assert table.summary().startswith(f"DISAGREEMENT: {len(CPUS)} cell(s) read a wrong CPU, "
                                      f"the references disagree on {len(CPUS)} CPU(s)")


def test_no_cpu_checked_is_an_error(monkeypatch):
    refuse_pinning_to(monkeypatch, CPUS[0])
    table = fastcpu.check(["gdt"], cpus=[CPUS[0]])
    monkeypatch.undo()
    assert table.cpus == () and table.outcome == "error" and not table.all_agree
    assert table.summary() == "ERROR: no CPU could be checked"


@pytest.mark.parametrize("replies, status", [
    ({}, 0),
    ({"gdt": _wrong_cpu}, 1),
    ({"gdt": _raise(fastcpu.Unsupported("gdt: refused here"))}, 3),
    ({"gdt": _wrong_cpu, "syscall": _raise(fastcpu.Unsupported("syscall: denied"))}, 1),
], ids=["agree", "disagree", "error", "disagree-and-error"])
def test_cli_check_exit_status_says_which_outcome(monkeypatch, capsys, replies, status):
    real = fastcpu.instrument.cpu.read
    monkeypatch.setattr(fastcpu.instrument.cpu, "read", lambda name: replies[name](real(name)) if name in replies else real(name))
    assert main(["check", "--methods", "gdt,syscall"]) == status
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(("all agree", "DISAGREEMENT", "ERROR")[[0, 1, 3].index(status)])


GETCPU_DENIED = r"""
import json, sys
import fastcpu
from fastcpu.cli import main
table = fastcpu.check(["gdt", "syscall"])
print(json.dumps({"outcome": table.outcome, "summary": table.summary(),
                  "errors": [[a.method, a.error] for a in table.errors()],
                  "ref_errors": [list(table.references[c].errors) for c in table.cpus],
                  "status": main(["check", "--methods", "gdt,syscall"])}))
"""


def test_the_getcpu_syscall_denied_is_an_error(capfd):
    # the syscall row cannot read: an error, and the reference that failed is
    # left out of the comparison; nothing read a wrong CPU
    from seccomp_helper import run_denied

    p = run_denied(GETCPU_DENIED, ["getcpu"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert out["outcome"] == "error" and out["status"] == 3
    assert out["summary"].startswith("ERROR: ") and "DISAGREEMENT" not in p.stdout
    assert [m for m, _ in out["errors"]] == ["syscall"] * len(CPUS)
    assert all("the getcpu system call failed: errno 1 (EPERM" in e for _, e in out["errors"])
    assert all(len(e) == 1 and e[0].startswith("syscall: ") for e in out["ref_errors"])


def test_cli_check_prints_the_table(capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "all agree" in out
    for name in SOURCES:
        assert name in out


@pytest.mark.parametrize("args", [["check", "--cpus", "x"], ["check", "--methods", "nope"], ["check", "--bogus"]])
def test_cli_check_bad_options(args, capsys):
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("fastcpu: error:")


# ---- glibc with rseq turned off ---------------------------------------------

RSEQ_OFF_SCRIPT = r"""
import json, os, threading, ctypes
import fastcpu
from fastcpu import _core
libc = ctypes.CDLL(None)
info = {m.name: m for m in fastcpu.methods()}
out = {"rseq_available": info["rseq"].available, "rseq_reason": info["rseq"].reason,
       "registered": _core.features()["rseq_registered"],
       "inline_reports": info["sched_getcpu_rseq_inline"].reports_cpu,
       "getcpu_method": fastcpu.getcpu_method(), "sched": {}, "getcpu": {}}
for cpu in sorted(os.sched_getaffinity(0)):
    res = {}
    def body():
        os.sched_setaffinity(0, {cpu})
        res["v"] = (libc.sched_getcpu(), fastcpu.getcpu(), fastcpu.read("sched_getcpu_rseq_inline").cpu,
                    fastcpu.read("syscall").cpu)
    t = threading.Thread(target=body); t.start(); t.join()
    out["sched"][cpu] = res["v"]
out["all_agree"] = fastcpu.check().all_agree
print(json.dumps(out))
"""


def test_rseq_off_by_tunable():
    p = run_python(RSEQ_OFF_SCRIPT, GLIBC_TUNABLES="glibc.pthread.rseq=0")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    if out["registered"]:
        pytest.skip("this glibc ignores glibc.pthread.rseq (older than 2.35)")
    assert out["rseq_available"] is False
    assert "GLIBC_TUNABLES=glibc.pthread.rseq=0" in out["rseq_reason"]
    assert out["getcpu_method"] != "rseq"
    for cpu, values in out["sched"].items():
        # sched_getcpu, getcpu(), glibc's inline logic (falling back) and the system call
        assert values == [int(cpu)] * 4
    assert out["inline_reports"] is True
    assert out["all_agree"] is True


def test_cli_check_fails_when_a_named_cpu_was_skipped(monkeypatch, capsys):
    # --cpus names the CPUs to check: one that refuses the thread is a failure
    if len(CPUS) < 2:
        pytest.skip("needs two CPUs: one to refuse the thread, one to check")
    from fastcpu.cli import main

    gap = CPUS[-1]
    refuse_pinning_to(monkeypatch, gap)
    cpus = ",".join(map(str, CPUS))
    assert main(["check", "--methods", "syscall", "--cpus", cpus]) == 3  # not checked, not wrong
    assert "CPUs skipped" in capsys.readouterr().out
    monkeypatch.undo()
    assert main(["check", "--methods", "syscall", "--cpus", cpus]) == 0


def test_nothing_checked_is_never_all_agree():
    # a kernel-entry cost reports no CPU anywhere: asked for alone, nothing is checked
    table = fastcpu.check(["null_syscall"])
    assert list(table.methods) == []
    assert "null_syscall" in table.not_checked
    assert table.outcome == "error" and not table.all_agree
    assert table.summary().startswith("NOTHING CHECKED") and "all agree" not in str(table)
    p = subprocess.run([sys.executable, "-m", "fastcpu", "check", "--methods", "null_syscall"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stderr
    assert "all agree" not in p.stdout and "NOTHING CHECKED" in p.stdout
