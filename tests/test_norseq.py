"""sched_getcpu_norseq: glibc's sched_getcpu() without rseq, timed and read in
a child interpreter started with GLIBC_TUNABLES=glibc.pthread.rseq=0, beside
the in-process sched_getcpu. test_agreement.py sweeps it over every CPU with
the other CPU-reporting methods."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fastcpu
from fastcpu import _core, _norseq
from pinning import CPUS, on_cpu, run_python, syscall_getcpu

NAME = "sched_getcpu_norseq"
INFO = {m.name: m for m in fastcpu.methods()}

pytestmark = pytest.mark.skipif(not INFO[NAME].available, reason=str(INFO[NAME].reason))


def test_it_sits_beside_sched_getcpu_in_the_catalog():
    names = [m.name for m in fastcpu.methods()]
    assert names[names.index("sched_getcpu") + 1] == NAME
    info = INFO[NAME]
    assert info.encoding == "cpu" and info.reports_cpu and info.cpu_reason is None
    assert "GLIBC_TUNABLES=glibc.pthread.rseq=0" in info.description


def _child_says(code):
    out = subprocess.run([sys.executable, "-c", code], env=_norseq._child_env("glibc.pthread.rseq=0"),
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_child_runs_without_rseq_and_the_parent_with_it():
    feats = _core.features()
    if not feats["rseq_registered"]:
        pytest.skip("this process has no rseq either: both rows time the same thing")
    said = _child_says("from fastcpu import _core; f = _core.features(); "
                       "print(f['rseq_registered'], f['rseq_size'])")
    assert said == "False 0"


def test_an_existing_tunable_is_kept():
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("GLIBC_TUNABLES", "glibc.malloc.check=0")
        assert _norseq._child_env("glibc.pthread.rseq=0")["GLIBC_TUNABLES"] == "glibc.malloc.check=0:glibc.pthread.rseq=0"
        mp.delenv("GLIBC_TUNABLES")
        assert _norseq._child_env("glibc.pthread.rseq=0")["GLIBC_TUNABLES"] == "glibc.pthread.rseq=0"
    finally:
        mp.undo()


@pytest.mark.parametrize("cpu", CPUS)
def test_read_in_the_child_follows_the_calling_threads_cpu(cpu):
    r, raw, (sys_cpu, _) = on_cpu(
        cpu, lambda: (fastcpu.read(NAME), fastcpu.read_raw(NAME), syscall_getcpu())
    )
    assert r.method == NAME and r.cpu == raw == sys_cpu == cpu and r.node is None


def test_bench_returns_the_childs_runs_in_this_processs_units():
    r = fastcpu.bench(NAME, 300, cpu=CPUS[-1])
    assert r.method == NAME and r.runs == 300 and r.cpu == CPUS[-1]
    assert r.raw.dtype == np.uint64 and r.raw.shape == r.empty.shape == r.migrated.shape == (300,)
    clk = fastcpu.clock()
    assert (r.tsc_hz, r.cycles_per_tick, r.tsc_step_ticks) == (clk.tsc_hz, clk.cycles_per_tick, clk.tsc_step_ticks)
    assert r.best == float(r.raw.min()) - float(r.empty.min())
    d = fastcpu.bench_diff(NAME, 100, k=4)
    assert d.method == NAME and d.long.shape == (100,) and d.k == 4
    # the child's runs are not bracketed here: the first-use figure, no interval
    assert (d.cycles_per_tick, d.cycles_per_tick_ci95) == (clk.cycles_per_tick, 0.0)


def test_measure_and_result_files_carry_it(tmp_path):
    res = fastcpu.measure(200, methods=["sched_getcpu", NAME])
    assert list(res) == ["sched_getcpu", NAME]
    res.save(tmp_path / "r.json")
    assert fastcpu.load(tmp_path / "r.json") == res


def test_show_prints_sched_getcpus_code():
    code = fastcpu.method_code(NAME, disassembler="none")
    assert code.method == NAME and code.blocks[0].symbol == "time_sched_getcpu_lfence"


def test_a_child_that_keeps_rseq_is_refused(monkeypatch):
    # a tunable that leaves rseq on: the child must refuse rather than time
    # the rseq path under the norseq name
    if not _core.features()["rseq_registered"]:
        pytest.skip("glibc registers no rseq here")
    monkeypatch.setattr(_norseq, "_row", lambda name: ("glibc.malloc.check=0", "sched_getcpu"))
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.read(NAME)
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.bench(NAME, 10)


def test_a_child_that_dies_is_an_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(fastcpu.Error, match="exited with status 1 without an answer"):
        fastcpu.read(NAME)


# ---- a child that cannot start (issue 22, item 6) ----------------------------
# Each way runs in a fresh interpreter: a seccomp filter, a resource limit or
# another user. measure() records the method in Results.unavailable with the
# reason and measures the rest; check() makes its cells errors, not
# disagreements.

CANNOT_START = r"""
import json, os, sys
import fastcpu
SETUP
res = fastcpu.measure(20, ["gdt", "sched_getcpu_norseq"], selftest=False)
table = fastcpu.check(["gdt", "sched_getcpu_norseq"])
try:
    fastcpu.measure(20, ["sched_getcpu_norseq"], selftest=False)
    alone = None
except fastcpu.Unsupported as exc:
    alone = str(exc)
print(json.dumps({
    "measured": list(res), "unavailable": dict(res.unavailable), "alone": alone,
    "outcome": table.outcome, "all_agree": table.all_agree, "summary": table.summary(),
    "errors": [[a.method, a.cpu, a.error] for a in table.errors()],
    "disagreements": len(table.disagreements()), "cpus": list(table.cpus),
    "gdt": [table.cell("gdt", c).outcome for c in table.cpus],
}))
"""


def _cannot_start(p, why):
    """What the script printed, checked for the method being refused with `why`."""
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["measured"] == ["gdt"]
    reason = out["unavailable"][NAME]
    assert reason.startswith("could not run the child interpreter ") and why in reason, reason
    assert out["alone"] == f"none of the methods can run here: {NAME}: {reason}"
    # check(): an error per CPU with the same reason, and no disagreement
    assert out["outcome"] == "error" and not out["all_agree"] and out["disagreements"] == 0
    assert [(m, c) for m, c, _ in out["errors"]] == [(NAME, c) for c in out["cpus"]]
    assert all(e == f"{NAME}: {reason}" for _, _, e in out["errors"])
    assert out["gdt"] == ["agree"] * len(out["cpus"])
    assert out["summary"].startswith(f"ERROR: {len(out['cpus'])} cell(s) could not read")
    return out


def test_pipes_denied_put_it_in_unavailable():
    from seccomp_helper import run_denied

    p = run_denied(CANNOT_START.replace("SETUP", ""), ["pipe", "pipe2"])
    _cannot_start(p, "Operation not permitted: a seccomp filter or a security module denied a pipe")


def test_no_file_descriptors_left_put_it_in_unavailable():
    setup = ("import resource\n"
             "resource.setrlimit(resource.RLIMIT_NOFILE, (4, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))")
    p = run_python(CANNOT_START.replace("SETUP", setup))
    _cannot_start(p, "no file descriptor left for its pipes (RLIMIT_NOFILE)")


# The interpreter is reached through a directory the measuring user may not
# enter, as a venv's base interpreter under /root is for another user: as
# root, the script drops to nobody first (root enters any directory).
UNPRIVILEGED = r"""
LOCKED = LOCKED_PATH
sys.executable = os.path.join(LOCKED, "python")
if os.geteuid() == 0:
    try:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    except OSError as exc:
        print(json.dumps({"skip": f"cannot become an unprivileged user (uid 65534): {exc}"}))
        sys.exit(0)
"""


def test_an_interpreter_this_user_may_not_run_puts_it_in_unavailable(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    os.symlink(sys.executable, locked / "python")
    locked.chmod(0)
    try:
        setup = UNPRIVILEGED.replace("LOCKED_PATH", repr(str(locked)))
        p = run_python(CANNOT_START.replace("SETUP", setup))
    finally:
        locked.chmod(0o700)
    if p.returncode == 0 and '"skip"' in p.stdout:
        pytest.skip(json.loads(p.stdout)["skip"])
    _cannot_start(p, "Permission denied: this user may not run it")


def test_measure_records_a_child_that_cannot_start(monkeypatch):
    # in-process: an interpreter that is not there
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    res = fastcpu.measure(20, ["sched_getcpu", NAME, "gdt"], selftest=False)
    assert list(res) == ["sched_getcpu", "gdt"]
    assert list(res.unavailable) == [NAME]
    assert res.unavailable[NAME] == ("could not run the child interpreter /nonexistent/python: "
                                     "No such file or directory: it does not exist")
    assert NAME in str(res) and "not available here" in str(res)


def test_cli_run_completes_and_shows_the_reason():
    from seccomp_helper import run_denied

    p = run_denied("import sys; from fastcpu._cli import main; "
                   "sys.exit(main(['run', '--runs', '20', '--methods', 'gdt,sched_getcpu_norseq', '--out', '-']))",
                   ["pipe", "pipe2"])
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert list(doc["unavailable"]) == [NAME]
    assert "not available here" in p.stderr
    assert f"{NAME} could not run the child interpreter" in " ".join(p.stderr.split())


def test_a_child_that_dies_is_a_reason_in_measure_not_the_end(monkeypatch):
    # the child started and died without an answer: its row is unavailable with
    # the reason, and the other methods are measured
    monkeypatch.setattr(sys, "executable", "/bin/false")
    res = fastcpu.measure(20, ["gdt", NAME], selftest=False)
    assert list(res) == ["gdt"]
    assert "exited with status 1 without an answer" in res.unavailable[NAME]
