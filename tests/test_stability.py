"""The stability report: warnings from the machine and from the runs, never failures."""

import numpy as np
import pytest

import fastcpu
from fastcpu import _core
from fastcpu.cli import main
from fastcpu.results.stability import machine_warnings

QUIET = {"governors": {}, "boost": None, "hypervisor": None, "isolated_cpus": [0]}


def synthetic(raw, empty, migrated=None, cpu=0, counter="tsc"):
    raw = np.asarray(raw, np.uint64)
    empty = np.asarray(empty, np.uint64)
    return fastcpu.BenchResult(
        method="synthetic", runs=raw.size, serialize="lfence", unroll=1, cpu=cpu,
        raw=raw, empty=empty,
        migrated=np.zeros(raw.size, bool) if migrated is None else np.asarray(migrated, bool),
        best=float(raw.min()) - float(empty.min()),
        median=float(np.median(raw)) - float(np.median(empty)),
        tsc_hz=2.6e9, cycles_per_tick=1.5, tsc_step_ticks=26, counter=counter,
    )  # fmt: skip


def test_a_quiet_machine_draws_no_warning():
    assert machine_warnings(0, QUIET) == ()


@pytest.mark.parametrize(
    "change, words",
    [
        ({"governors": {0: "powersave", 1: "performance"}}, "governor 'powersave'"),
        ({"governors": {"0": "schedutil"}}, "governor 'schedutil'"),  # keys as JSON writes them
        ({"boost": True}, "turbo/boost is on"),
        ({"hypervisor": "KVMKVMKVM"}, "hypervisor (KVMKVMKVM)"),
        ({"hypervisor": None, "flags": {"hypervisor": True}}, "hypervisor (unknown)"),
        ({"isolated_cpus": []}, "CPU 0 is not isolated"),
    ],
)
def test_each_machine_setting_warns(change, words):
    w = machine_warnings(0, {**QUIET, **change})
    assert len(w) == 1 and words in w[0]


def test_only_the_pinned_cpus_governor_counts():
    m = {**QUIET, "governors": {0: "performance", 1: "powersave"}, "isolated_cpus": [0, 1]}
    assert machine_warnings(0, m) == ()
    assert "CPU 1" in machine_warnings(1, m)[0]


def test_an_unpinned_thread_is_not_on_an_isolated_cpu():
    w = machine_warnings(None, QUIET)
    assert len(w) == 1 and "not pinned" in w[0]


def test_unknown_facts_draw_no_warning():
    assert machine_warnings(3, {"governors": None, "boost": None, "isolated_cpus": None}) == ()


def test_steady_runs_draw_no_run_warning():
    s = fastcpu.stability(synthetic([78] * 90 + [104] * 10, [52] * 100), QUIET)
    assert s.run_warnings == () and s.warnings == ()
    assert s.mdape_percent == 0.0 and s.outlier_fraction == 0.0 and s.migrated_fraction == 0.0


def test_high_spread_warns_at_five_percent():
    rng = np.random.default_rng(1)
    raw = (2000 + rng.normal(0, 300, 500)).astype(np.uint64)
    s = fastcpu.stability(synthetic(raw, np.full(500, 52)), QUIET)
    assert s.mdape_percent >= 5
    assert any("median absolute percentage error" in w for w in s.run_warnings)


def test_one_clock_step_of_spread_is_resolution_not_instability():
    # runs 4-5 steps long, half a step apart: err% is 17%, all of it the step
    raw = np.array([104, 130] * 100, np.uint64)
    s = fastcpu.stability(synthetic(raw, np.full(200, 52)), QUIET)
    assert s.mdape_percent >= 5
    assert s.run_warnings == ()


def test_migrations_and_outliers_warn():
    raw = np.full(200, 78)
    raw[:20] = 50000  # 10% hit an interrupt
    migrated = np.zeros(200, bool)
    migrated[:4] = True  # 2% migrated
    s = fastcpu.stability(synthetic(raw, np.full(200, 52), migrated), QUIET)
    assert s.outlier_fraction == pytest.approx(0.10)
    assert s.migrated_fraction == pytest.approx(0.02)
    assert any("4 of 200 runs migrated" in w for w in s.run_warnings)
    assert any("10.0% of the runs hit an outlier" in w for w in s.run_warnings)


def test_user_mode_only_pmu_cycles_warn():
    s = fastcpu.stability(synthetic([78] * 10, [52] * 10, counter="pmu_user"), QUIET)
    assert any("user-mode cycles only" in w for w in s.run_warnings)


def test_real_results_carry_warnings_about_this_machine():
    r = fastcpu.bench("gdt", 200)
    assert isinstance(r.warnings, tuple) and all(isinstance(w, str) for w in r.warnings)
    assert r.warnings == r.stability.machine_warnings + r.stability.run_warnings
    hyper = any("hypervisor" in w for w in r.warnings)
    assert hyper == bool(_core.features()["hypervisor"])
    assert any("not pinned" in w for w in r.warnings)  # cpu=None


def test_the_cli_prints_warnings_below_the_table(capsys):
    assert main(["--runs", "50", "--methods", "gdt,syscall"]) == 0
    out = capsys.readouterr().out
    table_end = out.index("syscall")
    assert out.index("warnings") > table_end
    assert "not pinned" in out[table_end:]
