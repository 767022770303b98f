"""sched_getcpu_norseq: glibc's sched_getcpu() without rseq, timed and read in
a child interpreter started with GLIBC_TUNABLES=glibc.pthread.rseq=0, beside
the in-process sched_getcpu. test_agreement.py sweeps it over every CPU with
the other CPU-reporting methods."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import fastcpu
from fastcpu import _core
from fastcpu.instrument import child as _child_runner
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
    out = subprocess.run([sys.executable, "-c", code], env=_child_runner._child_env("glibc.pthread.rseq=0"),
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
        assert _child_runner._child_env("glibc.pthread.rseq=0")["GLIBC_TUNABLES"] == "glibc.malloc.check=0:glibc.pthread.rseq=0"
        mp.delenv("GLIBC_TUNABLES")
        assert _child_runner._child_env("glibc.pthread.rseq=0")["GLIBC_TUNABLES"] == "glibc.pthread.rseq=0"
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
    import dataclasses

    from fastcpu.instrument import catalog, harness

    row = dataclasses.replace(INFO[NAME], tunable="glibc.malloc.check=0")  # the row is the one place to say it
    monkeypatch.setitem(catalog._by_name(), NAME, row)
    monkeypatch.setattr(harness, "_resolved", {})
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.read(NAME)
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.bench(NAME, 10)


def test_a_child_that_dies_is_an_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(fastcpu.Error, match="exited with status 1 without an answer"):
        fastcpu.read(NAME)


# ---- one child kept for the requests that follow -----------------------------


def _idle_pids():
    """The pids of this process's idle child interpreters."""
    with _child_runner._idle_lock:
        return sorted(server.proc.pid for _, server in _child_runner._idle)


def _one_kept():
    """The pid of this process's one idle child, started afresh by this
    thread (in the test's own phase: pytest's environment differs between
    setup and call, and a child is reused only by requests that would start
    it alike)."""
    _child_runner._close_idle()
    fastcpu.read(NAME)
    (pid,) = _idle_pids()
    return pid


def test_later_requests_reuse_the_child_on_each_threads_cpus():
    one_kept = _one_kept()
    for cpu in CPUS:  # re-pinned for each request: the asking thread's CPUs
        assert on_cpu(cpu, lambda: fastcpu.read(NAME).cpu) == cpu
        assert on_cpu(cpu, lambda: fastcpu.bench(NAME, 20).raw.shape) == (20,)
    assert _idle_pids() == [one_kept]


def test_a_kept_child_that_ended_is_replaced():
    pid = _one_kept()
    os.kill(pid, 9)
    assert fastcpu.read(NAME).cpu in CPUS
    assert _idle_pids() != [pid] and len(_idle_pids()) == 1


def test_a_child_that_ends_between_requests_is_replaced_once(monkeypatch):
    # the thread that started it ended (its parent-death signal) after poll() saw it alive
    pid = _one_kept()
    monkeypatch.setattr(_child_runner._Server, "alive", lambda self: True)
    os.kill(pid, 9)
    assert fastcpu.read(NAME).cpu in CPUS
    assert len(_idle_pids()) == 1 and _idle_pids() != [pid]  # a fresh one answered, and is kept


def test_a_child_interrupted_mid_answer_is_ended(monkeypatch):
    pid = _one_kept()

    def interrupted(self, most):
        raise KeyboardInterrupt

    monkeypatch.setattr(_child_runner._Reader, "_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fastcpu.read(NAME)
    assert _idle_pids() == []  # what it would send next is unknown: never asked again
    monkeypatch.undo()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped
    assert fastcpu.read(NAME).cpu in CPUS


def test_a_child_that_does_not_answer_a_reading_in_time_is_unsupported(monkeypatch):
    monkeypatch.setattr(_child_runner, "_BOOT", "import time; time.sleep(60)")
    monkeypatch.setattr(_child_runner, "_START_S", 0.5)
    with pytest.raises(fastcpu.Unsupported, match="did not answer within 0.5 s"):
        fastcpu.read(NAME)


KEPT = r"""
import json, os, sys
import fastcpu
from fastcpu.instrument import child as _child_runner
def idle():
    return [server.proc.pid for _, server in _child_runner._idle]
fastcpu.read("sched_getcpu_norseq")
parents = idle()
r, w = os.pipe()
pid = os.fork()
if pid == 0:  # a fork uses a child of its own, never its parent's
    fastcpu.read("sched_getcpu_norseq")
    os.write(w, json.dumps(idle()).encode())
    os._exit(0)
os.waitpid(pid, 0)
forks = json.loads(os.read(r, 4096))
fastcpu.read("sched_getcpu_norseq")
print(json.dumps({"parents": parents, "forks": forks, "after": idle()}))
"""


def test_a_fork_starts_its_own_child_and_none_outlives_the_process():
    p = run_python(KEPT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    out = json.loads(p.stdout)
    assert len(out["parents"]) == len(out["forks"]) == 1 and out["parents"] != out["forks"], out
    assert out["after"] == out["parents"]  # the parent's child still answers it
    deadline = time.monotonic() + 10  # told to end at exit, or killed with the thread that started them
    while not all(map(_ended, out["parents"] + out["forks"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(map(_ended, out["parents"] + out["forks"])), out


def _ended(pid):
    """Whether process `pid` is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


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
    # fastcpu imports its modules (and they the standard library's) on first
    # use: import them while the interpreter's own files (pyenv's, under a
    # private /root) can still be read, so that only the child's start meets
    # the locked directory
    import importlib, pkgutil
    for mod in pkgutil.iter_modules(fastcpu.__path__):
        if "plot" not in mod.name and mod.name != "__main__":
            importlib.import_module(f"fastcpu.{mod.name}")
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

    p = run_denied("import sys; from fastcpu.cli import main; "
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


# ---- the child dies with its parent (issue 28, item 2) ----------------------
# A reaper (a child subreaper, so the orphan comes back to it) starts a parent
# that measures sched_getcpu_norseq for minutes (10**5 runs of 65536 copies),
# waits until the parent's child interpreter has fastcpu._core loaded (it is
# measuring or about to), kills the parent with the signal and reports how the orphaned
# child ended and how long after the parent's death: killed by SIGKILL (its
# parent-death signal) at once, or still alive at the reaper's deadline.

REAPER = r"""
import ctypes, json, os, signal, subprocess, sys, time
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    print(json.dumps({"skip": "cannot become a child subreaper"})); sys.exit(0)
parent = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []
def loaded(pid):  # the child interpreter (not a fork of the parent) with fastcpu._core loaded
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"fastcpu.instrument.child" not in f.read():
                return False
        with open(f"/proc/{pid}/maps") as f:
            return "fastcpu/_core" in f.read()
    except OSError:
        return False
child, deadline = None, time.monotonic() + 60
while child is None and time.monotonic() < deadline and parent.poll() is None:
    child = next((c for c in children(parent.pid) if loaded(c)), None)
    time.sleep(0.01)
if child is None:
    parent.kill(); parent.wait()
    print(json.dumps({"error": "the parent started no child that loaded fastcpu._core"})); sys.exit(0)
time.sleep(0.2)
os.kill(parent.pid, int(sys.argv[2]))
parent.wait()
died = time.monotonic()
out = {"parent_status": parent.returncode, "child_alive_at_deadline": True}
while time.monotonic() < died + 10:
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        out.update(child_alive_at_deadline=False, child_status=os.waitstatus_to_exitcode(status),
                   child_gone_after_s=time.monotonic() - died)
        break
    time.sleep(0.01)
else:
    os.kill(child, signal.SIGKILL); os.waitpid(child, 0)
print(json.dumps(out))
"""

LONG_MEASUREMENT = "import fastcpu; fastcpu.bench('sched_getcpu_norseq', 10**5, unroll=65536)"


def _reap(parent_code, signum):
    p = subprocess.run([sys.executable, "-c", REAPER, parent_code, str(signum)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    if "skip" in out:
        pytest.skip(out["skip"])
    assert "error" not in out, out
    return out


@pytest.mark.parametrize("signum", [9, 15], ids=["SIGKILL", "SIGTERM"])
def test_the_child_dies_with_its_parent(signum):
    out = _reap(LONG_MEASUREMENT, signum)
    assert out["parent_status"] == -signum
    assert not out["child_alive_at_deadline"], out
    assert out["child_status"] == -9, out  # its parent-death signal, not the end of its runs
    assert out["child_gone_after_s"] < 2, out  # a loaded machine's bound; at once here


def test_a_child_whose_parent_died_before_it_could_tell_exits_at_once():
    # the race: the parent dies before the child sets its parent-death signal;
    # the child then finds another parent and ends before importing anything
    argv = _child_runner._child_argv()
    pid_at = argv.index(str(os.getpid()))
    argv[pid_at] = str(os.getpid() + 1 if os.getppid() != os.getpid() + 1 else os.getpid() + 2)
    p = subprocess.run(argv, input=b"", capture_output=True, timeout=60)
    assert (p.returncode, p.stdout) == (70, b"")
    assert p.stderr.decode() == (f"its parent is pid {os.getpid()}, not the process that started it (pid "
                                 f"{argv[pid_at]}), which is gone or ran it through a program that forks\n")


# ---- the child imports this fastcpu, nothing from the cwd (item 3) ----------

HOSTILE = {
    "fastcpu/__init__.py": "TRACE",
    "fastcpu/_child_runner.py": "TRACE",
    "numpy.py": "TRACE",
    "numpy/__init__.py": "TRACE",
    "json.py": "TRACE",
    "ctypes.py": "TRACE",
    "signal.py": "TRACE",
    "pickle.py": "TRACE",
    "sitecustomize.py": "TRACE",
    "usercustomize.py": "TRACE",
}

HOSTILE_PARENT = r"""
import json, os, sys
import fastcpu
r = fastcpu.read("sched_getcpu_norseq")
b = fastcpu.bench("sched_getcpu_norseq", 50)
print(json.dumps({"cpu": r.cpu, "runs": b.runs, "raw": b.raw.shape[0], "cwd": os.getcwd(),
                  "fastcpu": fastcpu.__file__}))
"""


def test_the_child_runs_nothing_from_the_working_directory(tmp_path):
    hostile = tmp_path / "hostile"
    traces = tmp_path / "traces"
    traces.mkdir()
    for rel in HOSTILE:
        path = hostile / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        # each file leaves a trace named for itself, then breaks what imported it
        trace = traces / rel.replace("/", "_")
        path.write_text(f"open({str(trace)!r}, 'w').close()\nraise SystemExit('imported {rel} from the cwd')\n")
    prog = tmp_path / "prog"
    prog.mkdir()
    (prog / "parent.py").write_text(HOSTILE_PARENT)
    # the parent is a script elsewhere (its own path is its directory, not the
    # cwd), so it imports the real fastcpu; its child starts in the hostile cwd
    p = subprocess.run([sys.executable, str(prog / "parent.py")], cwd=hostile, capture_output=True,
                       text=True, timeout=120)
    assert sorted(t.name for t in traces.iterdir()) == []
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert out["cwd"] == str(hostile) and out["fastcpu"] == fastcpu.__file__
    assert out["cpu"] in CPUS and out["runs"] == out["raw"] == 50


def test_the_child_imports_this_very_fastcpu_and_numpy():
    argv = _child_runner._child_argv()
    assert argv[:3] == [sys.executable, "-I", "-c"]
    homes = argv[5:]
    assert homes[0] == os.path.dirname(os.path.dirname(fastcpu.__file__))
    assert os.path.dirname(os.path.dirname(np.__file__)) in homes
    assert all(os.path.isabs(h) for h in homes)


# ---- the parent reads only the answer format it expects (item 3) ------------

MEASURE = {"op": "measure", "args": [4, "lfence", 1, False, "tsc"]}
READ = {"op": "read"}


def _answer(value=None, error=None):
    import io

    out = io.BytesIO()
    _child_runner._write_answer(out, value, error)
    return out.getvalue()


def _measured(runs=4):
    return (np.arange(runs, dtype=np.uint64) + 100, np.full(runs, 90, np.uint64), np.zeros(runs, bool),
            10.0, float("nan"), None, None)


def test_a_whole_answer_reads_back():
    got = _child_runner._read_answer(_answer(_measured()), MEASURE)
    want = _measured()
    assert [a.tolist() for a in got[:3]] == [a.tolist() for a in want[:3]]
    assert [a.dtype for a in got[:3]] == [np.uint64, np.uint64, np.bool_]
    # a result's arrays as the C core's are: read-only, owning their memory (no view of the answer)
    assert all(not a.flags.writeable and a.flags.owndata for a in got[:3])
    assert got[3] == 10.0 and np.isnan(got[4]) and got[5:] == (None, None)
    assert _child_runner._read_answer(_answer((3, None, 3, True)), READ) == (3, None, 3, True)
    assert _child_runner._read_answer(_answer((3, 1, 4099, False)), READ) == (3, 1, 4099, False)
    failed = _child_runner._read_answer(_answer(error=("Unsupported", "no rseq here")), READ)
    assert (failed.kind, failed.message) == ("Unsupported", "no rseq here")


def _bad_answers():
    import pickle

    good = _answer(_measured())
    header, body = good.split(b"\n", 1)
    return {
        "a pickle": (pickle.dumps({"value": _measured()}), MEASURE),
        "nothing": (b"", MEASURE),
        "no header line": (b"{" * 100, MEASURE),
        "a header too long": (b" " * (1 << 16) + good, MEASURE),
        "not JSON": (b"\x80\x04garbage\n", MEASURE),
        "a list header": (b"[1, 2]\n", MEASURE),
        "two keys": (b'{"value": [], "error": ["Error", "x"]}\n', MEASURE),
        "an unknown error kind": (_answer(error=("SystemExit", "x")), READ),
        "an error with bytes after it": (_answer(error=("Error", "x")) + b"x", READ),
        "a short array": (good[:-1], MEASURE),
        "bytes after the arrays": (good + b"\0", MEASURE),
        "runs it did not ask for": (_answer(_measured(5)), MEASURE),
        "an array of another dtype": (header.replace(b'"uint64"', b'"float64"', 1) + b"\n" + body, MEASURE),
        "an array where a number goes": (_answer(_measured()[:3] + (np.zeros(4, np.uint64),) * 4), MEASURE),
        "an int where a float goes": (_answer(_measured()[:3] + (10, 10.0, None, None)), MEASURE),
        "ruler points it did not ask for": (_answer(_measured()[:5] + (1.0, None)), MEASURE),
        "too few items": (_answer(_measured()[:6]), MEASURE),
        "too many items": (_answer(_measured() + (1.0,)), MEASURE),
        "a bool where an int goes": (_answer((True, None, 3, True)), READ),
        "a str where an int goes": (_answer(("3", None, 3, True)), READ),
        "a float where a bool goes": (_answer((3, None, 3, 1.0)), READ),
        "a measurement for a reading": (_answer(_measured()), READ),
    }


BAD_ANSWERS = ["a pickle", "nothing", "no header line", "a header too long", "not JSON", "a list header",
               "two keys", "an unknown error kind", "an error with bytes after it", "a short array",
               "bytes after the arrays", "runs it did not ask for", "an array of another dtype",
               "an array where a number goes", "an int where a float goes", "too few items", "too many items",
               "a bool where an int goes", "a str where an int goes", "a float where a bool goes", "ruler points it did not ask for",
               "a measurement for a reading"]


@pytest.mark.parametrize("what", BAD_ANSWERS)
def test_any_other_answer_is_refused_with_the_reason(what):
    bad = _bad_answers()
    assert sorted(bad) == sorted(BAD_ANSWERS)
    data, request = bad[what]
    with pytest.raises(ValueError):
        _child_runner._read_answer(data, request)


@pytest.mark.parametrize("sent", ["import pickle, sys; sys.stdout.buffer.write(pickle.dumps({'value': (1, 2)}))",
                                  "import sys; sys.stdout.buffer.write(b'{\"value\": [1, null, 1]}\\n')",
                                  "import sys; sys.stdout.buffer.write(b'{\"value\": 5}\\n')",
                                  "import sys; sys.stdout.buffer.write(b'[1, 2]\\n')"])
def test_a_child_that_sends_something_else_is_an_error(monkeypatch, sent):
    monkeypatch.setattr(_child_runner, "_BOOT", sent)
    with pytest.raises(fastcpu.Error, match="sent an answer this process does not read"):
        fastcpu.read(NAME)


# ---- what killed it (item 12) -------------------------------------------------


# (not SIGSEGV: under the sanitizer pass's LD_PRELOAD the shell's AddressSanitizer
# turns it into SIGABRT)
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGKILL", "SIGUSR1"])
def test_a_child_killed_by_a_signal_names_it(monkeypatch, tmp_path, signame):
    import signal

    script = tmp_path / "dies"
    script.write_text(f"#!/bin/sh\nkill -{signame[3:]} $$\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(script))
    number = int(getattr(signal, signame))
    with pytest.raises(fastcpu.Error) as info:
        fastcpu.read(NAME)
    assert str(info.value) == (f"{NAME}: the child interpreter was killed by {signame} (signal {number}) "
                               "without an answer: it wrote nothing on stderr")
    with pytest.raises(fastcpu.Error, match=f"was killed by {signame} "):
        fastcpu.bench(NAME, 10)


def test_a_child_that_exits_says_its_last_words(monkeypatch, tmp_path):
    script = tmp_path / "dies"
    script.write_text("#!/bin/sh\necho 'first line' >&2\necho 'the reason' >&2\nexit 3\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(script))
    with pytest.raises(fastcpu.Error) as info:
        fastcpu.read(NAME)
    assert str(info.value) == f"{NAME}: the child interpreter exited with status 3 without an answer: the reason"
