"""fastcpu.seed_table: the seed's layout across measured and published machines."""

import csv
from pathlib import Path

import pytest

import fastcpu
from fastcpu._seed_table import SEED_COLUMNS, reports_cpu_there

DATA = Path(__file__).resolve().parent.parent / "data"


def test_measured_rows_hold_best_and_median_in_core_cycles():
    files = sorted(DATA.glob("*.json"))
    table = fastcpu.seed_table(*files, published=False)
    assert len(table) == len(files)
    for f, row in zip(files, table):
        res = fastcpu.load(f)
        assert row.machine == res.name and row.kind == "measured"
        for c in SEED_COLUMNS:
            if c in res:
                assert row.best[c] == pytest.approx(res[c].best_core_cycles)
                assert row.median[c] == pytest.approx(res[c].median_core_cycles)


def test_the_cheapest_way_reports_the_cpu_and_is_cheapest_by_estimate():
    res = fastcpu.load(sorted(DATA.glob("*.json"))[0])
    row = fastcpu.seed_table(res, published=False)[0]
    name = row.cheapest.split(":")[0]
    assert reports_cpu_there(name)
    ways = [r for r in res.values() if reports_cpu_there(r.method)]
    assert res[name].estimate == min(r.estimate for r in ways)
    # SIDT under UMIP traps, is slow and never reports a CPU: never the answer
    assert not reports_cpu_there("sidt") and not reports_cpu_there("null_syscall")


def test_published_rows_are_dean_gaudets_take_2_table_and_the_seeds_range():
    rows = [r for r in fastcpu.seed_table() if r.kind == "published"]
    names = [r.machine for r in rows]
    assert names[0].startswith("the seed's 7 machines")
    assert rows[0].best["sidt"] == "4-21" and rows[0].best["gdt"] == "30-100"
    with open(DATA / "published_figures.csv", newline="") as f:
        take2 = [r for r in csv.DictReader(f) if "take 2" in r["source"] and "no cache" in r["what"]]
    for machine in ("K8 pre-revF", "K8 revF", "Core 2", "P4"):
        row = next(r for r in rows if r.machine.startswith(machine + " "))
        want = {r["what"].split(",")[0]: float(r["value"]) for r in take2 if r["machine"] == machine}
        assert row.best["gdt"] == want["baseline"] and row.best["sidt"] == want["patched"]
        assert not row.median and str(int(min(want.values()))) in row.cheapest


def test_the_printed_table_has_both_blocks_and_every_row():
    table = fastcpu.seed_table(*sorted(DATA.glob("*.json")))
    text = str(table).splitlines()
    assert "BEST" in text[1] and "MEDIAN" in text[1]
    assert text[2].split()[:7] == ["MACHINE", "GDT", "TSCP", "SIDT", "RDPID", "VDSO", "RSEQ"]
    assert all(any(r.machine in line for line in text) for r in table)
    assert not any("nan" in line for line in text)


def test_nothing_to_show_is_refused():
    with pytest.raises(ValueError, match="needs a result file"):
        fastcpu.seed_table(published=False)
    with pytest.raises(TypeError, match="published must be a bool"):
        fastcpu.seed_table(published=1)
    with pytest.raises(TypeError, match="takes fastcpu.Results or result file paths"):
        fastcpu.seed_table(3)
