"""fastcpu.seed_table: the seed's layout across measured and published machines."""

import csv
from pathlib import Path

import pytest

import fastcpu
from fastcpu.analysis.seed_table import SEED_COLUMNS, published_cheapest

DATA = Path(__file__).resolve().parent.parent / "data"
#: the model 167 host's re-derived 0.6.0 file, one question (tests/data: a recorded reading)
RECORDED_167 = Path(__file__).resolve().parent / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"


def test_measured_rows_hold_best_and_median_in_core_cycles():
    files = sorted(DATA.glob("*.json*"))
    table = fastcpu.seed_table(*files, published=False)
    assert len(table) == len(files)
    for f, row in zip(files, table):
        res = fastcpu.load(f)
        assert row.machine == res.name and row.kind == "measured"
        for c in SEED_COLUMNS:
            if c in res:
                assert row.best[c] == pytest.approx(res[c].best_core_cycles)
                assert row.median[c] == pytest.approx(res[c].median_core_cycles)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json*")), ids=lambda p: p.stem)
def test_the_cheapest_way_is_results_one_answer(path):
    res = fastcpu.load(path)
    row = fastcpu.seed_table(res, published=False)[0]
    assert row.cheapest == res.cheapest_way_words()
    best = res.cheapest_way()
    assert best is not None and row.cheapest.startswith(best.method + ":")
    assert res.reports_cpu(best.method).reports_cpu
    assert best.estimate == min(r.estimate for r in res.ways())
    # SIDT never reports a CPU on a released kernel (under UMIP it reads limit 0), the
    # models are not ways a process has, and a kernel-entry cost reads no CPU
    names = {r.method for r in res.ways()}
    assert not names & {"sidt", "sgdt", "sldt", "null_syscall", "getcpu_sidt", "sched_getcpu_rseq_inline"}
    for name in ("sidt", "null_syscall"):
        if name in res:
            assert not res.reports_cpu(name).reports_cpu


def test_published_rows_are_dean_gaudets_take_2_table_and_the_seeds_range():
    rows = [r for r in fastcpu.seed_table() if r.kind == "published"]
    names = [r.machine for r in rows]
    assert names[0].startswith("the seed's 7 machines")
    # the seed's ranges where it put them: 4-21 is its proposals together, no column's
    assert rows[0].best["gdt"] == "30-100" and "sidt" not in rows[0].best and "4-21" in rows[0].cheapest
    with open(DATA / "published_figures.csv", newline="") as f:
        take2 = [r for r in csv.DictReader(f) if "take 2" in r["source"]]
    for machine in ("K8 pre-revF", "K8 revF", "Core 2", "P4"):
        row = next(r for r in rows if r.machine.startswith(machine + " "))
        want = {r["what"].split(" (")[0]: float(r["value"]) for r in take2 if r["machine"] == machine}
        assert row.best["gdt"] == want["baseline, no cache"] and row.best["sidt"] == want["patched, no cache"]
        # the same rule as the measured rows, over all of his ways: the cached call included
        assert not row.median and row.cheapest.endswith(f": {min(want.values()):.0f}")
    # by his own table the cached LSL vgetcpu was the cheapest on every machine
    gaudet = [r for r in rows if "dean gaudet" in r.machine]
    assert len(gaudet) == 4 and all("LSL vgetcpu of 2007, cached" in r.cheapest for r in gaudet)
    # the seed and dean gaudet time one call alone
    assert {r.question for r in rows[:1] + gaudet} == {"one call alone"}


def test_published_ties_name_every_way():
    assert published_cheapest({"a": 24.0, "b": 24.0, "c": 30.0}) == "a = b: 24"
    assert published_cheapest({"a": float("nan")}) == "none published"


def test_the_printed_table_has_both_blocks_and_every_row():
    table = fastcpu.seed_table(*sorted(DATA.glob("*.json*")))
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


def test_each_row_names_the_question_it_asked():
    rows = {r.machine: r for r in fastcpu.seed_table()}
    glibc = next(r for name, r in rows.items() if "glibc's rseq patch" in name)
    # glibc's 13.7 -> 2.5 ns (0.8 ns inline) is calls back to back, in ns as published
    assert glibc.question == "calls back to back" and glibc.cheapest == "inline rseq cpu_id load: 0.8 ns"
    assert not glibc.best and not glibc.median
    commit = next(r for name, r in rows.items() if "rseq commit" in name)
    assert commit.question == "calls back to back" and commit.cheapest.startswith("rseq cpu_id read: 0.8 ns")
    assert rows["the seed's 7 machines (2008, range)"].question == "one call alone"


def test_a_measured_row_answers_both_questions():
    from loops import with_loops

    res = with_loops(fastcpu.load(RECORDED_167),
                     {"rdpid": 5.0, "rseq": 0.7, "gdt": 20.0}, label="with loops")
    old = fastcpu.load(sorted(DATA.glob("*.json*"))[0])
    table = fastcpu.seed_table(res, old)
    row, old_row = table[0], table[1]
    assert row.answers() == [("one call alone", res.cheapest_way_words("one_call")),
                             ("calls back to back", res.cheapest_way_words("back_to_back"))]
    assert row.cheapest_back_to_back.startswith("rseq: ") and row.answers_differ == res.answers_differ() != ""
    # a file before 0.7.0 says so, and loads
    assert old_row.cheapest_back_to_back.startswith("not measured back to back here") and not old_row.answers_differ
    text = str(table).splitlines()
    assert "QUESTION" in text[2]
    first = next(i for i, line in enumerate(text) if line.startswith("with loops "))
    assert f"one call alone      {row.cheapest}" in text[first]
    assert text[first + 1].strip() == f"calls back to back  {row.cheapest_back_to_back}"
    assert text[first + 2].strip() == row.answers_differ
    assert any(line.rstrip().endswith("calls back to back  inline rseq cpu_id load: 0.8 ns") for line in text)
