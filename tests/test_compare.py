"""fastcpu.compare() and `python -m fastcpu compare`: one tidy table across files."""

import csv
import io
import json
import math

import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.results.estimate import FENCE_RELATIVE, FENCE_SIGMAS, FENCE_STEPS, t95
from fastcpu.cli import main
from fastcpu.analysis.compare import CSV_COLUMNS, COLUMNS, format_comparison
from fastcpu.noise import NoiseModel


@pytest.fixture(scope="module")
def measured():
    return fastcpu.measure(80, ["gdt", "syscall"], label="here")


def simulated(label, true_ticks=(10.0, 300.0), step=1):
    """Results built from the noise model: known arrays, no timing involved."""
    model = NoiseModel(step_ticks=step, overhead_ticks=50, jitter_ticks=2)
    clock = fastcpu.Clock(tsc_hz=2e9, tsc_step_ticks=step, cycles_per_tick=1.5)
    results = {
        f"m{i}": model.simulate(t, 500, seed=i, clock=clock, method=f"m{i}")
        for i, t in enumerate(true_ticks)
    }
    return fastcpu.Results(results, {"model_name": "model"}, clock, "model", "2025-01-01T00:00:00Z",
                           label=label)


def oracle_mean_interval(r, confidence=0.95):
    """The fenced paired mean, slowly: median +- max(8 steps + 2, 5 MAD sigmas,
    5% of |median|), then Student's t at 95% rescaled to `confidence`."""
    d = [float(a) - float(b) for a, b, moved in zip(r.raw, r.empty, r.migrated) if not moved]
    center = statistics.median(d)
    sigma = 1.4826 * statistics.median(abs(x - center) for x in d)
    half_fence = max(FENCE_STEPS * r.tsc_step_ticks + 2, FENCE_SIGMAS * sigma, FENCE_RELATIVE * abs(center))
    kept = [x / r.unroll for x in d if abs(x - center) <= half_fence]
    mean = statistics.fmean(kept)
    half = t95(len(kept) - 1) * statistics.stdev(kept) / math.sqrt(len(kept))
    half *= statistics.NormalDist().inv_cdf(0.5 + confidence / 2) / statistics.NormalDist().inv_cdf(0.975)
    return mean, mean - half, mean + half


def test_one_row_per_machine_and_method(measured, tmp_path):
    other = simulated("model machine")
    other.save(tmp_path / "other.json")
    table = fastcpu.compare(measured, tmp_path / "other.json", dataframe=False)
    assert isinstance(table, fastcpu.types.ComparisonTable)
    assert [(r["machine"], r["method"]) for r in table] == [
        ("here", "gdt"), ("here", "syscall"), ("model machine", "m0"), ("model machine", "m1")]
    assert table.columns == list(COLUMNS)
    assert table["source"] == ["results[0]", "results[0]", str(tmp_path / "other.json"),
                               str(tmp_path / "other.json")]


def test_statistics_and_units_match_a_numpy_oracle():
    res = simulated("m")
    table = fastcpu.compare(res, dataframe=False)
    for row in table:
        r = res[row["method"]]
        mean, low, high = oracle_mean_interval(r)
        assert row["best_ticks"] == r.best and row["median_ticks"] == r.median
        assert row["paired_mean_ticks"] == pytest.approx(mean)
        assert (row["paired_mean_ci_low_ticks"], row["paired_mean_ci_high_ticks"]) == pytest.approx((low, high))
        for stat in ("best", "median", "paired_mean", "paired_mean_ci_low", "paired_mean_ci_high"):
            ticks = row[f"{stat}_ticks"]
            assert row[f"{stat}_ns"] == pytest.approx(ticks / 2.0)  # 2 GHz TSC
            assert row[f"{stat}_core_cycles"] == pytest.approx(ticks * 1.5)
        assert row["runs"] == 500 and row["unroll"] == 1 and row["migrations"] == 0


def test_the_interval_covers_the_known_true_cost():
    # simulated with a known cost: the mean's interval must hold it
    table = fastcpu.compare(simulated("m", true_ticks=(7.3,)), dataframe=False)
    row = table[0]
    assert row["paired_mean_ci_low_ticks"] < 7.3 < row["paired_mean_ci_high_ticks"]


def test_a_higher_confidence_gives_a_wider_interval(measured):
    narrow = fastcpu.compare(measured, confidence=0.5, dataframe=False)[0]
    wide = fastcpu.compare(measured, confidence=0.99, dataframe=False)[0]
    assert narrow["paired_mean_ticks"] == wide["paired_mean_ticks"]
    assert (wide["paired_mean_ci_high_ticks"] - wide["paired_mean_ci_low_ticks"]
            > narrow["paired_mean_ci_high_ticks"] - narrow["paired_mean_ci_low_ticks"])


def test_one_run_has_no_interval():
    res = fastcpu.measure(1, ["gdt"])
    row = fastcpu.compare(res, dataframe=False)[0]
    assert math.isnan(row["paired_mean_ci_low_ticks"]) and math.isnan(row["paired_mean_ci_high_ns"])


def test_machines_with_the_same_name_are_told_apart():
    a, b = simulated("twin"), simulated("twin")
    assert set(fastcpu.compare(a, b, dataframe=False)["machine"]) == {"twin #1", "twin #2"}


def test_a_dataframe_when_pandas_is_installed(measured):
    pd = pytest.importorskip("pandas")
    df = fastcpu.compare(measured)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(COLUMNS) and len(df) == 2
    plain = fastcpu.compare(measured, dataframe=False)
    np.testing.assert_allclose(df["paired_mean_ns"], plain["paired_mean_ns"])


def test_a_plain_table_without_pandas(measured, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    assert isinstance(fastcpu.compare(measured), fastcpu.types.ComparisonTable)
    with pytest.raises(ImportError, match="fastcpu\\[pandas\\]"):
        fastcpu.compare(measured, dataframe=True)


def test_the_plain_table_prints_and_writes_csv(measured):
    table = fastcpu.compare(measured, dataframe=False)
    text = table.to_string()
    assert text == str(table)
    assert all(c in text.splitlines()[0] for c in COLUMNS)
    assert len(text.splitlines()) == 3
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert [r["method"] for r in rows] == ["gdt", "syscall"]
    assert float(rows[0]["best_ticks"]) == table[0]["best_ticks"]
    with pytest.raises(KeyError, match="no column 'nope'"):
        table["nope"]


def test_format_comparison_shows_one_unit(measured):
    table = fastcpu.compare(measured, dataframe=False)
    text = format_comparison(table, "ns", layout="rows")
    assert table.format("ns", layout="rows") == text
    assert table.format(layout="rows").startswith("core cycles per copy")
    assert text.splitlines()[0].startswith("ns per copy")
    assert "95% CI OF ESTIMATE" in text and "gdt" in text and "syscall" in text
    assert "PAIRED MEAN" not in text  # the cost figure is the ESTIMATE, named so everywhere
    assert table.format("ns") == format_comparison(table, "ns", layout="machines")
    with pytest.raises(ValueError, match="use one of ticks, ns, cycles"):
        format_comparison(table, "parsecs")
    with pytest.raises(ValueError, match="unknown layout 'wide': use one of machines, rows"):
        format_comparison(table, layout="wide")


DATA = sorted((Path(__file__).resolve().parent.parent / "data").glob("*.json*"))


def side_by_side(text):
    """The 'machines' layout read back: (machine names, {method: [(estimate
    cell, ratio cell or None) per machine]}), each name from the header
    lines over its columns."""
    lines = text.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("METHOD")))
    names_at = lines[lines.index("") + 1:head]
    header = lines[head]
    n = header.count("ESTIMATE")
    first = min(len(line) - len(line.lstrip()) for line in names_at)  # names start on their columns
    width = (len(header) - first - 3 * (n - 1)) // n
    spans = [(first + k * (width + 3), first + k * (width + 3) + width) for k in range(n)]
    names = [" ".join(line[a:b].strip() for line in names_at if line[a:b].strip()) for a, b in spans]
    rows = {}
    for line in lines[head + 1:]:
        if not line:  # the machines' rulers follow the methods
            break
        cells = [line[a:b].strip() for a, b in spans]
        rows[line.split()[0]] = [tuple(c.rsplit(None, 1)) if "RATIO" in header else (c, None) for c in cells]
    return names, rows


def test_compare_shows_each_machines_rulers():
    table = fastcpu.compare(*DATA, dataframe=False)
    machines = {r.name: r for r in map(fastcpu.load, DATA)}  # each file once, not once per row
    for row in table:
        res = machines[row["machine"]]
        assert row["tsc_step_ticks"] == res.clock.tsc_step_ticks
        assert row["clock_core_cycles_per_tick"] == res.clock.cycles_per_tick
        folded = None if res.clock.rulers is None else res.clock.rulers.immediate_adds_folded
        assert (row["immediate_adds_per_core_cycle"] > 1.25) == bool(folded)
    text = table.format("ns")
    rulers = text[text.index("each machine's rulers"):]
    for res in machines.values():
        assert res.name in rulers
        if res.clock.rulers is not None and res.clock.rulers.immediate_adds_folded:
            assert "folded at rename" in rulers


def test_compare_lays_methods_out_side_by_side_with_ratios():
    table = fastcpu.compare(*DATA, dataframe=False)
    text = table.format("cycles")
    assert text.startswith("ONE CALL ALONE (single copy above the empty sequence")
    assert text.splitlines()[1].startswith("core cycles per copy above the empty sequence")
    machines = list(dict.fromkeys(table["machine"]))
    names, rows = side_by_side(text)
    assert len(machines) == len(DATA)
    assert names == [machines[0] + " (baseline)", *machines[1:]]  # the header names each machine
    by = {(r["machine"], r["method"]): r for r in table}
    methods = list(dict.fromkeys(table["method"]))
    assert list(rows) == methods
    rows = {m: [(e.rstrip(), r) for e, r in cells] for m, cells in rows.items()}
    checked = 0
    for method, cells in rows.items():
        base = by.get((machines[0], method))
        for machine, (cell, ratio) in zip(machines, cells):
            r = by.get((machine, method))
            if r is None:  # not measured there
                assert (cell, ratio) == ("-", "-")
                continue
            # the ESTIMATE: the cost figure, as the CLI table, A/B and the HTML show it
            mean = r["estimate_core_cycles"]
            half = (r["estimate_ci_high_core_cycles"] - r["estimate_ci_low_core_cycles"]) / 2
            if r["resolved"]:
                assert cell == f"{mean:.2f} +- {half:.2f}"
            else:  # below what the harness resolves: its bound, never a cost
                assert r["estimate_ci_low_core_cycles"] == 0 and mean >= 0
                assert cell == f"< {r['estimate_ci_high_core_cycles']:.2f}"
            if not r["resolved"] or (base is not None and not base["resolved"]):
                assert ratio == "-"  # a bound has no ratio
            elif machine == machines[0]:
                assert ratio == "1.00x"
            elif base is not None and base["estimate_core_cycles"] > 0:
                assert ratio == f"{mean / base['estimate_core_cycles']:.2f}x"
                checked += 1
    assert checked > 20
    # one method by hand: the Zen 5 file's syscall over the Zen 3 file's
    a, b = by[(machines[0], "syscall")], by[(machines[1], "syscall")]
    ratio = rows["syscall"][1][1]
    assert float(ratio[:-1]) == pytest.approx(b["estimate_core_cycles"] / a["estimate_core_cycles"], abs=0.005)
    # and the same figure as the result's own ESTIMATE
    res = fastcpu.load(DATA[0])
    assert a["estimate_core_cycles"] == pytest.approx(res["syscall"].estimate_core_cycles)
    assert any(c == ("-", "-") for cells in rows.values() for c in cells)  # sldt: only on Zen 3


def test_one_machine_shows_its_estimates_and_no_ratios(measured):
    table = fastcpu.compare(measured, dataframe=False)
    text = table.format("ns")
    assert "RATIO" not in text and "baseline" not in text and "x" not in text.split("METHOD")[1]
    names, rows = side_by_side(text)
    assert names == ["here"]
    assert list(rows) == ["gdt", "syscall"]
    assert rows["gdt"][0][0] == f"{table[0]['estimate_ns']:.2f} +- " \
        f"{(table[0]['estimate_ci_high_ns'] - table[0]['estimate_ci_low_ns']) / 2:.2f}"
    assert table[0]["estimate_ns"] == pytest.approx(measured["gdt"].estimate_ns)


def test_ratios_say_nothing_against_a_baseline_at_or_below_zero():
    rows = [dict(machine=m, method="x", **{f"estimate{p}_core_cycles": v for p in ("", "_ci_low", "_ci_high")})
            for m, v in (("A", -1.0), ("B", 2.0))]
    text = format_comparison(fastcpu.types.ComparisonTable(rows, columns=list(rows[0])))
    assert next(line for line in text.splitlines() if line.startswith("x ")).split()[-1] == "-"
    assert "1.00x" not in text


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((), {}, ValueError, "at least one"),
        ((3,), {}, TypeError, "not int"),
        (("MEASURED",), {"confidence": 1.5}, ValueError, "between 0 and 1"),
        (("MEASURED",), {"confidence": "95%"}, TypeError, "confidence must be a number"),
        (("MEASURED",), {"dataframe": "yes"}, TypeError, "dataframe must be"),
    ],
)
def test_bad_arguments(measured, args, kwargs, exc, match):
    args = tuple(measured if a == "MEASURED" else a for a in args)
    with pytest.raises(exc, match=match):
        fastcpu.compare(*args, **kwargs)


def test_bad_files_raise_result_file_errors(tmp_path):
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(fastcpu.ResultFileError, match="not a fastcpu result file"):
        fastcpu.compare(tmp_path / "bad.json")


def test_cli_compare(measured, tmp_path, capsys):
    measured.save(tmp_path / "a.json")
    simulated("model machine").save(tmp_path / "b.json.gz")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json.gz")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ONE CALL ALONE") and "\ncore cycles per copy above the empty sequence" in out
    assert "\nCALLS BACK TO BACK (bench_diff" in out  # "here" measured them, the model machine did not
    for name in ("here", "model machine", "gdt", "syscall", "m0", "m1"):
        assert name in out
    assert main(["compare", str(tmp_path / "a.json"), "--unit", "ticks", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 2 and set(rows[0]) == set(CSV_COLUMNS)


@pytest.mark.parametrize("files", [["missing.json"], ["bad.json"], []])
def test_cli_compare_bad_files_exit_2_with_one_line(tmp_path, capsys, monkeypatch, files):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text("[]")
    assert main(["compare", *files]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastcpu: error:") and len(err.splitlines()) == 1


def test_cli_compare_formats(tmp_path):
    import subprocess

    def cli(*args):
        p = subprocess.run([sys.executable, "-m", "fastcpu", "compare", *map(str, args)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""  # piped: no progress
        return p.stdout

    table = fastcpu.compare(*DATA, dataframe=False)
    text = cli(*DATA)
    shown = table.format("cycles")
    assert text.startswith(shown + "\n")  # then each file's self-test, where it has one
    names, rows = side_by_side(shown)
    assert names[0] == f"{table[0]['machine']} (baseline)" and len(names) == len(DATA)
    assert all(cells[0][1] == "1.00x" for cells in rows.values())
    assert "\nRATIO" in text.split("METHOD")[0]

    doc = json.loads(cli(*DATA, "--format", "json"))
    assert isinstance(doc, list) and len(doc) == len(table)
    assert list(doc[0]) == list(COLUMNS)
    assert [r["source"] for r in doc] == [str(d) for d in DATA for _ in range(len(fastcpu.load(d)))]
    for got, want in zip(doc, table):
        assert got["machine"] == want["machine"] and got["method"] == want["method"]
        assert got["paired_mean_ns"] == pytest.approx(want["paired_mean_ns"], rel=1e-12)

    csv_text = cli(*DATA, "--format", "csv")
    assert csv_text == cli(*DATA, "--csv") == table.to_csv()  # --csv is its synonym
    assert csv_text.splitlines()[0] == ",".join(CSV_COLUMNS)


def test_to_json_writes_null_for_nan(measured):
    one = fastcpu.measure(1, ["gdt"])  # one run: no interval
    table = fastcpu.compare(one, dataframe=False)
    out = io.StringIO()
    text = table.to_json(out)
    assert out.getvalue() == text and "NaN" not in text
    rows = json.loads(text)
    assert rows[0]["paired_mean_ci_low_ticks"] is None and rows[0]["runs"] == 1
    assert fastcpu.types.ComparisonTable([]).to_json() == "[\n]\n" and json.loads("[\n]\n") == []


def test_compare_csv_and_run_csv_are_one_schema(tmp_path):
    # one name per figure in both CSVs (the names 0.6 gave some of them went in 0.9.0)
    from fastcpu import export

    res = fastcpu.load(DATA[0])
    out = io.StringIO()
    export.write_csv(res, out)
    exported = list(csv.DictReader(io.StringIO(out.getvalue())))
    compared = list(csv.DictReader(io.StringIO(fastcpu.compare(DATA[0], dataframe=False).to_csv())))
    assert list(exported[0]) == list(compared[0]) == list(CSV_COLUMNS)
    assert CSV_COLUMNS == COLUMNS
    assert not {"estimate_ci95_ns", "tsc_granularity_ticks", "migrated_runs"} & set(CSV_COLUMNS)
    for e, c in zip(exported, compared):
        assert e["method"] == c["method"]
        for column in CSV_COLUMNS:
            if column not in ("machine", "source"):
                assert e[column] == c[column], column
        r = res[e["method"]]
        assert float(e["estimate_ci_high_ns"]) - float(e["estimate_ns"]) == pytest.approx(r.estimate_ci95_ns)
        assert float(e["tsc_step_ticks"]) == r.tsc_step_ticks


def test_compare_marks_models_and_says_whose_estimates_carry_a_correction():
    models = {m.name for m in fastcpu.methods() if m.kind == "model"}
    table = fastcpu.compare(*DATA, dataframe=False)
    for layout in ("machines", "rows"):
        text = table.format("ns", layout=layout)
        for line in text.splitlines():
            words = line.split()
            if words and words[0] in models and layout == "machines":
                assert words[1] == "(model)", line
            if len(words) > 1 and layout == "rows" and any(w in models for w in words[:12]):
                assert "(model)" in line, line
        assert "(model): a C model" in text
    text = table.format("cycles")
    said = text[text.index("and harness correction:"):].splitlines()[1:]
    for path in DATA:
        res = fastcpu.load(path)
        line = next(x for x in said if x.strip().startswith(res.name + ":"))
        corrected = [r for r in res.values() if r.harness_bias_core_cycles != 0]
        assert ("ESTIMATE less the self-test's harness bias" in line) == bool(corrected), line
        assert ("ESTIMATE uncorrected" in line) == (not corrected), line
        # a machine whose results converted with figures of their own, away from its clock's, says so
        own = [r.cycles_per_tick for r in res.values()]
        moved = max(abs(c / res.clock.cycles_per_tick - 1) for c in own) > 0.01
        assert ("each result its own" in line) == moved, line


# -- both questions (issue 26 item 5) -------------------------------------------------------------

#: a recorded reading: the family 6 model 167 host's 0.6.0 file, re-derived (one question)
INTEL = Path(__file__).resolve().parent / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"


@pytest.fixture(scope="module")
def looped():
    """The recorded Intel file with calls back to back of known cost (TSC ticks per call), where
    the two questions' cheapest ways differ: rdpid alone is below resolution there, rseq the
    cheapest in a loop."""
    from loops import with_loops

    return with_loops(fastcpu.load(INTEL), {"rdpid": 5.0, "rseq": 0.7, "sched_getcpu": 2.2, "gdt": 20.0},
                      label="with loops")


def test_compare_answers_both_questions_in_its_columns(looped):
    old = fastcpu.load(DATA[0])
    table = fastcpu.compare(looped, old, dataframe=False)
    for row in table:
        res = looped if row["machine"] == "with loops" else old
        d = res.back_to_back.get(row["method"])
        if d is None:  # the old file, and a method the loops left out: said, never a failure
            assert row["back_to_back"] == "not measured" and row["back_to_back_k"] is None
            assert math.isnan(row["back_to_back_estimate_ns"])
        else:
            assert row["back_to_back"] == "measured" and row["back_to_back_k"] == d.k == 16
            assert row["back_to_back_resolved"] == d.resolved and row["back_to_back_runs_used"] == d.runs_used
            assert row["back_to_back_estimate_ns"] == pytest.approx(d.estimate_ns)
            assert row["back_to_back_estimate_ci_high_core_cycles"] == pytest.approx(
                d.estimate_core_cycles + d.estimate_ci95_core_cycles)
        for q in ("one_call", "back_to_back"):
            assert row[f"cheapest_{q}"] == res.cheapest_way_words(q)
        assert row["answers_differ"] == res.answers_differ()
    assert table[0]["answers_differ"].startswith("the two questions differ here: rdpid")
    # every output carries them: CSV, JSON (null for not measured), the HTML
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert {r["back_to_back"] for r in rows} == {"measured", "not measured"}
    assert json.loads(table.to_json())[-1]["back_to_back_estimate_ns"] is None
    html = table._repr_html_()
    assert "ONE CALL ALONE" in html and "CALLS BACK TO BACK" in html and "not measured" in html
    assert "the two questions differ here" in html


def test_the_terminal_table_names_each_question_and_its_answers(looped):
    old = fastcpu.load(DATA[0])
    text = fastcpu.compare(looped, old, dataframe=False).format("cycles")
    one, loop = text.split("\nCALLS BACK TO BACK (bench_diff")
    assert one.startswith("ONE CALL ALONE (single copy")
    names, rows = side_by_side("CALLS BACK TO BACK" + loop)
    assert names == ["with loops (baseline)", old.name]
    for method, cells in rows.items():
        d = looped.back_to_back.get(method.replace(" (model)", ""))
        assert cells[1][0] == "not measured"  # the old file's column
        if d is None:
            assert cells[0][0] == "not measured"
        elif d.resolved:
            assert cells[0][0].startswith(f"{d.estimate_core_cycles:.2f} +- ")
    answers = text[text.index("each machine's cheapest way that reports the CPU, for each question"):]
    for res in (looped, old):
        assert f"one call alone: {res.cheapest_way_words('one_call')}" in answers
        assert f"calls back to back: {res.cheapest_way_words('back_to_back')}" in answers
    assert "calls back to back: not measured back to back here" in answers
    assert answers.count("the two questions differ here") == 1
    rows_layout = fastcpu.compare(looped, old, dataframe=False).format("ns", layout="rows")
    assert "CALLS BACK TO BACK +-95%" in rows_layout.splitlines()[2]
    assert f"{looped.back_to_back['rseq'].estimate_ns:.2f} +- " in rows_layout


def test_files_without_calls_back_to_back_still_compare():
    old = [f for f in DATA if not fastcpu.load(f).back_to_back]  # files before 0.7.0
    assert len(old) >= 2
    table = fastcpu.compare(*old, dataframe=False)
    assert set(table["back_to_back"]) == {"not measured"}
    text = table.format("cycles")
    assert "calls back to back: not measured in any of these files" in text and "CALLS BACK TO BACK (" not in text
    assert text.count("calls back to back: not measured back to back here") == len(old)
    assert "calls back to back: not measured in any of these files" in table.format("ns", layout="rows")
    # with a file that holds them, its table is there, and the others' cells say not measured
    both = fastcpu.compare(*DATA, dataframe=False)
    assert {"measured", "not measured"} <= set(both["back_to_back"]) and "CALLS BACK TO BACK (" in both.format("cycles")


def test_ties_within_resolution_are_named_for_calls_back_to_back():
    from loops import with_loops

    # rseq and sched_getcpu cost the same per call in a loop: neither alone is the answer
    tied = with_loops(fastcpu.load(INTEL), {"rseq": 1.0, "sched_getcpu": 1.0, "gdt": 20.0})
    words = tied.cheapest_way_words("back_to_back")
    first, _, others = words.partition("; tied within resolution: ")
    assert others and {first.split(":")[0], others.split()[0]} == {"rseq", "sched_getcpu"}
    row = fastcpu.compare(tied, dataframe=False)[0]
    assert row["cheapest_back_to_back"] == words


def test_markdown_has_a_table_per_question_and_the_answers(looped, tmp_path, capsys):
    import dataclasses

    named = dataclasses.replace(looped, label="a | b *c*")  # a label that would end a cell or emphasize
    old = fastcpu.load(DATA[0])
    table = fastcpu.compare(named, old, dataframe=False)
    md = table.to_markdown("ns")
    assert md == format_comparison(table, "ns", layout="markdown")
    lines = md.splitlines()
    assert lines[0] == "### one call alone" and "### calls back to back" in lines
    heads = [line for line in lines if line.startswith("| method |")]
    assert len(heads) == 2 and all(r"a \| b \*c\* (baseline)" in h for h in heads)
    # every table row has as many cells as its header: no name broke a row
    for line in lines:
        if line.startswith("| ") and not line.startswith("| method"):
            assert line.count(" | ") == heads[0].count(" | "), line
    rseq = next(line for line in lines[lines.index("### calls back to back"):] if line.startswith("| rseq |"))
    assert rseq.split(" | ")[1] == f"{named.back_to_back['rseq'].estimate_ns:.2f} +- " \
        f"{named.back_to_back['rseq'].estimate_ci95_ns:.2f}" and rseq.split(" | ")[3] == "not measured"
    assert f"- calls back to back: {named.cheapest_way_words('back_to_back')}" in lines
    assert f"- {named.answers_differ()}" in lines
    # the CLI's --format markdown prints the same
    named.save(tmp_path / "a.json")
    assert main(["compare", str(tmp_path / "a.json"), str(DATA[0]), "--unit", "ns", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("### one call alone\n")
    old = [f for f in DATA if not fastcpu.load(f).back_to_back]  # files before 0.7.0
    assert "calls back to back: not measured in any of these files" in fastcpu.compare(
        *old, dataframe=False).to_markdown()


def test_results_show_both_questions_in_jupyter(looped):
    html = looped._repr_html_()
    assert "one call alone: each method timed as a single copy" in html
    assert "calls back to back: cost per call in a loop" in html
    for line in looped.answer_lines():
        assert _display_escape(line) in html
    rseq = looped.back_to_back["rseq"]
    assert rseq.cost_text("core_cycles", 2) in html
    old = fastcpu.load(DATA[0])._repr_html_()  # a file before 0.7.0: said, not a failure
    assert "not measured back to back here" in old and "cost per call in a loop" not in old


def _display_escape(text):
    import html

    return html.escape(text, quote=True)


def test_calls_back_to_back_take_their_ratios_to_the_first_file_that_has_them(looped):
    """An old file first (no calls back to back) leaves the second table's ratios to the first
    machine that measured them, named as the baseline, not a column of '-'."""
    old = fastcpu.load(DATA[0])
    text = fastcpu.compare(old, looped, dataframe=False).format("cycles")
    one, loop = text.split("\nCALLS BACK TO BACK (bench_diff")
    names, _ = side_by_side(one)
    assert names == [f"{old.name} (baseline)", "with loops"]
    names, rows = side_by_side("CALLS BACK TO BACK" + loop)
    assert names == [old.name, "with loops (baseline)"]
    assert "over the baseline's (the first machine's measured for this question)" in loop
    resolved = [m for m, d in looped.back_to_back.items() if d.resolved and d.estimate > 0]
    assert resolved
    for method in resolved:
        cells = rows[method]
        assert cells[0][0] == "not measured" and cells[1][1] == "1.00x", (method, cells)
