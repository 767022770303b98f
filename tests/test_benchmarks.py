"""The benchmarks' own C programs: C11, warning-free under -Wall -Wextra like
the extension, chain_ends.c's and rulers.c's output as their scripts read
it, and fastcpu's rulers held to rulers.c's own on the host at hand (within
what a guest's core clock moves). (The benchmarks' figures are recorded in
docs/, never asserted here.)"""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hostnoise import on_some_try

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "benchmarks"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

pytestmark = [
    pytest.mark.skipif(CC is None, reason="no C compiler"),
    pytest.mark.skipif(not BENCHMARKS.is_dir(), reason="a copy of tests/ without the repository's benchmarks/"),
]

SOURCES = sorted(p.name for p in BENCHMARKS.glob("*.c")) if BENCHMARKS.is_dir() else []


@pytest.mark.parametrize("source", SOURCES)
def test_compiles_warning_free_as_c11(source, tmp_path):
    done = subprocess.run([CC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "-o",
                           str(tmp_path / "x.o"), str(BENCHMARKS / source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _rounds_program(tmp_path, name: str, rounds: int, runs: int) -> list[list[str]]:
    """Build benchmarks/NAME.c, run it for `rounds` rounds of `runs` runs on
    the last allowed CPU, check its rounds against its header (a mean of
    ticks per variant, every one above 0: the fences alone take time) and
    that bad arguments exit 2; its header's fields, each [variant, truth]."""
    exe = tmp_path / name
    subprocess.run([CC, "-std=c11", "-O2", "-o", str(exe), str(BENCHMARKS / f"{name}.c")], check=True)
    cpu = max(os.sched_getaffinity(0))
    out = subprocess.run([str(exe), str(rounds), str(runs), str(cpu)], capture_output=True, text=True,
                         check=True).stdout
    header, *lines = out.splitlines()
    fields = [f.rsplit(":", 1) for f in header.split("\t")]
    assert len(lines) == rounds
    for line in lines:
        ticks = [float(v) for v in line.split("\t")]
        assert len(ticks) == len(fields) and all(t > 0 for t in ticks)
    for bad in (["0", str(runs), str(cpu)], [str(rounds), str(runs)]):
        assert subprocess.run([str(exe), *bad], capture_output=True).returncode == 2
    return fields


def test_chain_ends_prints_a_header_and_a_line_per_round(tmp_path):
    fields = _rounds_program(tmp_path, "chain_ends", 3, 50)
    assert fields[0] == ["empty", "0"] and ["imul x32", "96"] in fields and ["add x16", "16"] in fields
    assert ["empty, used", "0"] in fields and ["imul x1, then add x16, used", "19"] in fields


def test_chain_ends_script_prints_its_tables():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "chain_ends.py"), "--rounds", "3", "--runs", "200"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Host: " in done.stdout and "| imul x16, then add x1 / add x1, then imul x16 |" in done.stdout
    # the used variants are measured against the empty body that uses its own result
    assert "| add x16, used | 16 |" in done.stdout and "| empty, used |" not in done.stdout
    assert "| imul x1, then add x16, used / add x16, then imul x1, used |" in done.stdout


def test_closing_reads_prints_a_header_and_a_line_per_round(tmp_path):
    fields = _rounds_program(tmp_path, "closing_reads", 2, 20)
    closes = {name.split("|")[0] for name, _ in fields}
    assert closes == {"rdtscp; lfence", "lfence; rdtsc; lfence", "lfence; rdtscp; lfence"}
    for close in closes:  # every closing read times the same bodies and rulers
        assert [f"{close}|empty", "0"] in fields and [f"{close}|imul64", "192"] in fields
        assert [f"{close}|ruler_add1024", "-1024"] in fields and [f"{close}|ruler_imul342", "-1026"] in fields


def test_closing_reads_script_prints_its_tables():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "closing_reads.py"), "--rounds", "3", "--runs", "100"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Host: " in done.stdout and "| add128 | 128 |" in done.stdout and "| imul64 | 192 |" in done.stdout
    assert "ruler" not in done.stdout.split("| body |")[1].split("| the empty body")[0]  # rulers are no rows
    for close in ("rdtscp; lfence", "lfence; rdtsc; lfence", "lfence; rdtscp; lfence"):
        assert f"| `{close}` | " in done.stdout


def test_coverage_counts_what_a_result_prints():
    # benchmarks/printed.py: a resolved cost by its interval, one below resolution by its bound
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from printed import holds
    finally:
        sys.path.remove(str(BENCHMARKS))
    nan = float("nan")
    cost = SimpleNamespace(resolved=True, estimate_core_cycles=10.0, estimate_ci95_core_cycles=1.0,
                           upper_bound_core_cycles=nan)
    assert holds(cost, 10.9) and holds(cost, 9.0) and not holds(cost, 11.1)
    bound = SimpleNamespace(resolved=False, estimate_core_cycles=-3.0, estimate_ci95_core_cycles=0.5,
                            upper_bound_core_cycles=4.0)
    assert holds(bound, 4.0) and holds(bound, 0.0) and not holds(bound, 4.1)  # not judged by its interval


def _rulers_program(tmp_path, *args):
    exe = tmp_path / "rulers"
    subprocess.run([CC, "-std=c11", "-O2", "-o", str(exe), str(BENCHMARKS / "rulers.c")], check=True)
    done = subprocess.run([str(exe), *args], capture_output=True, text=True)
    return done, exe


def test_the_rulers_program_prints_its_facts(tmp_path):
    cpu = max(os.sched_getaffinity(0))
    done, exe = _rulers_program(tmp_path, "51", str(cpu))
    assert done.returncode == 0, done.stderr
    facts = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines()}
    assert set(facts) == {"empty", "add_rr", "imul", "add_imm", "gcd", "spacing", "deltas"}
    assert 0 < int(facts["empty"]) < int(facts["add_rr"]) < int(facts["imul"])
    gcd, deltas = int(facts["gcd"]), [int(d) for d in facts["deltas"].split()]
    assert gcd >= 1 and len(deltas) > 1000 and sum(d % gcd == 0 for d in deltas) > 0.9 * len(deltas)
    for bad in (["0"], ["-3"], ["x"]):
        assert subprocess.run([str(exe), *bad], capture_output=True).returncode == 2


def test_fastcpus_rulers_agree_with_a_c_programs_own(tmp_path):
    # a ruler of another make, on the host at hand: fastcpu's granularity is
    # the program's gcd where the lattice is a whole number of ticks (1 where
    # it is not), and both read core cycles per tick alike; the tolerance is
    # the few percent a guest's core clock moves within seconds
    # (where it hops by up to 14%, as on the GenuineIntel family 6 model 167 guest, the two may
    # fall on different levels: on some of a few fresh pairs they share one)
    import fastcpu

    def agree():
        clk = fastcpu.clock(refresh=True)
        done, _ = _rulers_program(tmp_path, "201", str(max(os.sched_getaffinity(0))))
        assert done.returncode == 0, done.stderr
        facts = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines()}
        gcd = int(facts["gcd"])
        if clk.tsc_step_ticks == int(clk.tsc_step_ticks):
            assert gcd == clk.tsc_step_ticks
        else:
            assert gcd == 1
        empty, n = int(facts["empty"]), 16 * 1024
        add = n / (int(facts["add_rr"]) - empty)
        imul = 3 * n / (int(facts["imul"]) - empty)
        assert add == pytest.approx(clk.rulers.add_cycles_per_tick, rel=0.08)
        assert imul == pytest.approx(clk.rulers.imul_cycles_per_tick, rel=0.08)
        folded = n / (int(facts["add_imm"]) - empty) / add > 1.25
        assert folded == clk.rulers.immediate_adds_folded

    on_some_try(agree)


def test_rulers_script_prints_its_table():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "rulers.py"), "--runs", "31"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Host: " in done.stdout and "| core cycles per tick, register-register adds |" in done.stdout
    assert "spaced deltas on fastcpu's lattice" in done.stdout


def test_performance_script_prints_its_tables():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "performance.py"), "--repeats", "6", "--max-runs", "1000",
                           "--first-use", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| gdt |", "| rdpid |", "| empty |"))]
    assert len(rows) == 3, done.stdout
    for row in rows:  # the C loop in this process and as a program, bench (a finished result), the bare
        # core, the ratio: one column, nothing deferred to a first lookup
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 6, row
        assert all(c.endswith(" us") and float(c[:-3]) > 0 for c in cells[1:5]), row
        assert float(cells[5].split()[0]) > 0, row
    assert "| import fastcpu |" in done.stdout and "| python -m fastcpu, the whole default run |" in done.stdout


def test_hop_placement_script_compares_the_two_conversions_or_says_nothing_hopped():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "hop_placement.py"), "-n", "300", "--chain",
                           "imul_chain_16"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Host: " in done.stdout and "imul_chain_16" in done.stdout
    # a host whose clock held still has nothing to compare, and says so
    if "The clock held still" in done.stdout or "no steady measurement" in done.stdout:
        return
    assert sum(line.startswith("| the level held (the baseline) |") for line in done.stdout.splitlines()) == 1
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| a hop", "| a slowdown"))]
    assert rows and len(rows) % 2 == 0, done.stdout
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert int(cells[2]) >= 1 and float(cells[4]) >= 0 and float(cells[5]) >= 0, row
        held, n = cells[6].split(" (")[0].split(" of ")
        assert 0 <= int(held) <= int(n) == int(cells[2]), row


def test_hop_placement_script_refuses_what_it_cannot_run():
    for args, why in ((["--chain", "gdt"], "known-cost chain"), (["-n", "0"], "-n must be")):
        done = subprocess.run([sys.executable, str(BENCHMARKS / "hop_placement.py"), *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and why in done.stderr, done.stderr


def test_result_use_prints_every_variant_and_refuses_bad_arguments(tmp_path):
    exe = tmp_path / "result_use"
    subprocess.run([CC, "-O2", "-std=c11", "-o", str(exe), str(BENCHMARKS / "result_use.c")], check=True)
    out = subprocess.run([str(exe), "2", "1000", "-1"], capture_output=True, text=True, check=True).stdout
    rows = dict(line.rsplit(":", 1) for line in out.splitlines())
    assert set(rows) == {"add chain", "add chain, result used by imul $1", "add chain, result moved", "imul chain",
                         "imul chain, result used by imul $1", "imul chain, result moved", "imul $1 alone"}
    assert all(float(v) > 0 for v in rows.values())  # TSC ticks per iteration: every loop takes time
    bad = subprocess.run([str(exe), "0", "1000", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "positive" in bad.stderr


def test_result_use_script_converts_by_the_imul_chains_own_loop():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "result_use.py"), "--rounds", "2", "--iters", "2000"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Host: " in done.stdout and "core cycles by the imul chain's own loop" in done.stdout
    assert "| imul chain | 3 | 3.00 |" in done.stdout  # its own line: 3 core cycles an iteration, by definition
    assert "| imul chain, result used by imul $1 | 3 |" in done.stdout and "| add chain | 1 |" in done.stdout


def test_copy_loop_script_prints_its_three_tables():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "copy_loop.py"), "--rounds", "1", "--runs", "100",
                           "--unroll", "4"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Host: " in out and "| 16 / 32 |" in out and "#### 4 copies a run" in out and "#### Back to back" in out
    assert "| add_chain_4 | 4 |" in out and "| imul_chain_300 | 900 |" in out
    assert "with the correction" in out and out.count("Held the truth:") == 2
    assert "through the user path." in out and "| user path: median error, held |" in out
    bad = subprocess.run([sys.executable, str(BENCHMARKS / "copy_loop.py"), "--unroll", "1"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "--unroll" in bad.stderr
