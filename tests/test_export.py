"""fastcpu.export: Google Benchmark's JSON schema and CSV."""

import csv
import io
import json
import math

import pytest

import fastcpu
from fastcpu import export
from test_rulers import disagreeing  # noqa: F401  (a fixture: this process's clock rulers disagree)

TIME_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@pytest.fixture(scope="module")
def res():
    names = [m.name for m in fastcpu.methods() if m.available][:3]
    return fastcpu.measure(200, names, label="export test")


def check_gbench_schema(doc):
    """What Google Benchmark's compare tool (tools/gbench) reads from a file:
    a context object and benchmarks with name, real_time, cpu_time and
    time_unit; run_type and the indices it sorts by, when present, typed as
    the library writes them."""
    assert isinstance(doc, dict) and isinstance(doc["context"], dict)
    assert isinstance(doc["context"]["date"], str) and isinstance(doc["context"]["num_cpus"], int)
    names = [b["name"] for b in doc["benchmarks"]]
    assert len(names) == len(set(names))
    for b in doc["benchmarks"]:
        assert isinstance(b["name"], str) and b["name"]
        assert b["time_unit"] in TIME_UNITS
        for key in ("real_time", "cpu_time"):
            assert isinstance(b[key], float) and math.isfinite(b[key])
        assert b["run_type"] in ("iteration", "aggregate")
        for key in ("iterations", "repetitions", "repetition_index", "threads", "family_index",
                    "per_family_instance_index"):
            assert isinstance(b[key], int) and b[key] >= 0
        # user counters are numbers, as the library writes them
        extra = set(b) - {"name", "run_name", "run_type", "time_unit", "label", "aggregate_name"}
        assert all(isinstance(b[k], (int, float)) for k in extra)


def test_gbench_document_follows_the_schema_and_survives_json(res):
    doc = json.loads(json.dumps(export.to_gbench(res)))
    check_gbench_schema(doc)
    assert [b["name"] for b in doc["benchmarks"]] == list(res) + [
        f"{m}/back_to_back:{d.k}" for m, d in res.back_to_back.items()]


def _result_of(res, name):
    """The result a benchmark's name stands for: a single copy, or calls back to back."""
    method, _, loop = name.partition("/back_to_back:")
    return res.back_to_back[method] if loop else res[method]


def test_gbench_times_are_the_recommended_estimate_in_ns(res):
    doc = export.to_gbench(res)
    for b in doc["benchmarks"]:
        r = _result_of(res, b["name"])
        # the ESTIMATE, or below what the harness resolves its bound (never a negative time)
        assert b["resolved"] == r.resolved
        assert b["real_time"] == b["cpu_time"] == pytest.approx(r.estimate_ns if r.resolved else r.upper_bound_ns)
        assert b["real_time"] > 0
        assert b["estimate_ci95_ns"] == pytest.approx(r.estimate_ci95_ns)
        assert b["estimate_core_cycles"] == pytest.approx(r.estimate_core_cycles)
        assert b["iterations"] == r.runs_used
    assert doc["context"]["tsc_hz"] == res.clock.tsc_hz


def test_the_compare_tools_relative_change_is_the_ratio_of_estimates(res):
    # compare.py reports (new - old) / |old| per benchmark name, matched by name
    old, new = export.to_gbench(res), export.to_gbench(res)
    for b in new["benchmarks"]:
        b["real_time"] += 1.5  # 1.5 ns slower
    by_name = {b["name"]: b for b in old["benchmarks"]}
    for b in new["benchmarks"]:
        o = by_name[b["name"]]
        change = (b["real_time"] - o["real_time"]) / abs(o["real_time"])
        r = _result_of(res, b["name"])
        assert change == pytest.approx(1.5 / abs(r.estimate_ns if r.resolved else r.upper_bound_ns))


def test_unrolled_results_get_an_argument_in_their_name():
    r = fastcpu.measure(50, ["empty"], unroll=4)
    assert export.to_gbench(r)["benchmarks"][0]["name"] == "empty/unroll:4"


def test_csv_has_one_row_per_machine_and_method_with_units_named(res):
    out = io.StringIO()
    export.write_csv([res, res], out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 2 * len(res)
    assert tuple(rows[0]) == export.CSV_COLUMNS
    for row in rows[: len(res)]:
        r = res[row["method"]]
        assert row["machine"] == "export test"
        assert float(row["estimate_ns"]) == pytest.approx(r.estimate_ns)
        if r.resolved:  # the interval's ends (the old NAME_ci95_UNIT half-widths went in 0.9.0)
            assert float(row["estimate_ci_high_ns"]) - float(row["estimate_ns"]) == pytest.approx(r.estimate_ci95_ns)
        else:  # below what the harness resolves: 0 to the bound
            assert float(row["estimate_ci_high_ns"]) == pytest.approx(r.upper_bound_ns)
        assert int(row["runs"]) == r.runs


@pytest.mark.parametrize("bad", [None, {}, "x.json", 3])
def test_exports_refuse_what_is_not_results(bad):
    with pytest.raises(TypeError, match="fastcpu.Results"):
        export.to_gbench(bad)
    with pytest.raises(TypeError, match="fastcpu.Results"):
        export.write_csv(bad if bad is not None else [None], io.StringIO())


def test_each_benchmark_names_its_question(res):
    assert res.back_to_back  # measure() answers both questions by default
    doc = export.to_gbench(res)
    for b in doc["benchmarks"]:
        loop = "/back_to_back:" in b["name"]
        assert b["label"].startswith("calls back to back: " if loop else "one call alone: "), b
        if loop:
            d = _result_of(res, b["name"])
            assert b["k"] == d.k and b["iterations"] == d.runs_used
            assert b["estimate_core_cycles"] == pytest.approx(d.estimate_core_cycles)
    # the CSV: one call alone in the statistics' columns, calls back to back in back_to_back_*
    out = io.StringIO()
    export.write_csv(res, out)
    for row in csv.DictReader(io.StringIO(out.getvalue())):
        d = res.back_to_back.get(row["method"])
        assert row["back_to_back"] == ("measured" if d is not None else "not measured")
        if d is not None:
            assert float(row["back_to_back_estimate_ns"]) == pytest.approx(d.estimate_ns)
        assert row["cheapest_one_call"] == res.cheapest_way_words("one_call")
        assert row["cheapest_back_to_back"] == res.cheapest_way_words("back_to_back")


def test_a_file_without_calls_back_to_back_exports_one_question():
    from pathlib import Path

    path = sorted((Path(__file__).resolve().parent.parent / "data").glob("*.json*"))[0]
    old = fastcpu.load(path)
    doc = export.to_gbench(old)
    check_gbench_schema(json.loads(json.dumps(doc)))
    assert len(doc["benchmarks"]) == len(old)
    assert all(b["label"].startswith("one call alone: ") for b in doc["benchmarks"])


def test_figures_unknown_here_are_left_out_of_the_gbench_document(disagreeing):
    # core cycles unknown (the clock's rulers disagree): the ns stand, the core-cycle counters
    # are absent (Google Benchmark writes no null), and the document still follows the schema
    res = fastcpu.measure(50, ["gdt", "rdpid"])
    assert all(math.isnan(r.estimate_core_cycles) for r in res.values())
    doc = json.loads(json.dumps(export.to_gbench(res), allow_nan=False))
    check_gbench_schema(doc)
    for b in doc["benchmarks"]:
        assert not any(k.endswith("core_cycles") for k in b), b
        assert any(k.endswith("_ns") for k in b)
