"""sched_getcpu_norseq: glibc's sched_getcpu() without rseq, timed and read in
a child interpreter started with GLIBC_TUNABLES=glibc.pthread.rseq=0, beside
the in-process sched_getcpu. test_agreement.py sweeps it over every CPU with
the other CPU-reporting methods."""

import subprocess
import sys

import numpy as np
import pytest

import fastcpu
from fastcpu import _core, _norseq
from pinning import CPUS, on_cpu, syscall_getcpu

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
    out = subprocess.run([sys.executable, "-c", code], env=_norseq._child_env(),
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
        assert _norseq._child_env()["GLIBC_TUNABLES"] == "glibc.malloc.check=0:glibc.pthread.rseq=0"
        mp.delenv("GLIBC_TUNABLES")
        assert _norseq._child_env()["GLIBC_TUNABLES"] == "glibc.pthread.rseq=0"
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
    monkeypatch.setattr(_norseq, "TUNABLE", "glibc.malloc.check=0")
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.read(NAME)
    with pytest.raises(fastcpu.Unsupported, match="registered rseq in the child"):
        fastcpu.bench(NAME, 10)


def test_a_child_that_dies_is_an_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(fastcpu.Error, match="exited with status 1 without an answer"):
        fastcpu.read(NAME)
