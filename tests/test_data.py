"""data/: every result file loads, is listed in data/README.md, and is picked up by
`compare` and by the across-machines notebook (its committed outputs name every file)."""

import csv
import gzip
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
NOTEBOOK = DATA.parent / "notebooks" / "across_machines.ipynb"
#: The model 167 host's 0.6.0 file, re-derived (data/rederive_intel.py): kept with the tests' recorded
#: readings since data/ holds that host's file measured with the current fastcpu
REDERIVED_167 = Path(__file__).resolve().parent / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"

if not DATA.is_dir():  # CI's unprivileged pass runs a copy of tests/ alone
    pytest.skip("no data/ beside tests/", allow_module_level=True)

FILES = sorted(p for p in DATA.iterdir() if p.name.endswith((".json", ".json.gz")))


def test_data_holds_result_files_from_at_least_two_host_cpus():
    cpus = {(m["vendor"], m["family"], m["model"]) for m in (fastcpu.load(f).machine for f in FILES)}
    assert len(FILES) >= 2 and len(cpus) >= 2, f"{[f.name for f in FILES]}: CPUs {sorted(cpus)}"


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_every_result_file_loads_with_its_label_and_machine_facts(path):
    res = fastcpu.load(path)
    assert res.name.strip(), "no label"
    assert len(res) > 0 and all(r.runs > 0 for r in res.values())
    for key in ("vendor", "family", "model", "stepping", "kernel", "glibc", "hypervisor"):
        assert key in res.machine, f"{path.name}: machine facts lack {key}"
    assert res.clock.tsc_hz > 0 and res.clock.tsc_step_ticks >= 1


def test_labels_tell_the_files_apart():
    labels = [fastcpu.load(f).name for f in FILES]
    assert len(set(labels)) == len(labels), labels


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_every_result_file_has_its_row_in_the_readme_hosts_table(path):
    m = fastcpu.load(path).machine
    version = json.loads(path.read_text())["fastcpu_version"] if path.suffix == ".json" else None
    rows = [line for line in (DATA / "README.md").read_text().splitlines()
            if line.startswith(f"| `{path.name}` |")]
    assert len(rows) == 1, f"data/README.md: no row (or several) for {path.name} in 'The hosts'"
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[2] == m["vendor"]
    assert cells[3] == f"{m['family']} / {m['model']} / {m['stepping']}"
    assert str(m["kernel"]).startswith(cells[7]) and cells[8] == m["glibc"]
    if version is not None:
        assert cells[9] == version


def test_compare_on_the_command_line_takes_every_file(capsys):
    assert main(["compare", *map(str, FILES), "--unit", "ticks", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["machine"] for r in rows} == {fastcpu.load(f).name for f in FILES}
    for f in FILES:
        res = fastcpu.load(f)
        assert sorted(r["method"] for r in rows if r["machine"] == res.name) == sorted(res)


def _notebook_text() -> str:
    nb = json.loads(NOTEBOOK.read_text())
    return "".join("".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []))


def test_the_across_machines_notebook_was_executed_with_every_file():
    text = _notebook_text()
    found = re.search(r"(\d+) result file\(s\) in data/: (.*)", text)
    assert found, "across_machines.ipynb does not say which files it read"
    assert found[2].split(", ") == [f.name for f in FILES], (
        "data/ changed since across_machines.ipynb was executed: "
        "run python notebooks/execute.py across_machines.ipynb")
    assert int(found[1]) == len(FILES)
    for f in FILES:
        assert fastcpu.load(f).name in text, f"the notebook's tables do not show {f.name}"


def test_the_intel_file_was_re_derived_from_that_hosts_rulers_and_says_so():
    res = fastcpu.load(DATA / "intel-xeon-family6-model207-kvm-guest.json")
    assert (res.machine["vendor"], res.machine["family"], res.machine["model"]) == ("GenuineIntel", 6, 207)
    notes = " ".join(res.notes)
    assert "Re-derived by data/rederive_intel.py" in notes and "folds at rename" in notes
    clk = res.clock
    # the lattice of that host, not the spacing of its reads; rulers that agree; folded adds
    assert clk.tsc_step_ticks == 2 and clk.tsc_read_spacing_ticks >= 20
    assert clk.rulers.agree and clk.rulers.immediate_adds_folded
    assert 1.246 <= clk.cycles_per_tick <= 1.275
    assert clk.rulers.add_cycles_per_tick == pytest.approx(clk.cycles_per_tick, rel=0.05)
    for r in res.values():  # every conversion the re-derived one, no correction from folded chains
        assert r.cycles_per_tick == clk.cycles_per_tick and r.cycles_per_tick_ci95 > 0
        assert r.harness_bias_core_cycles == 0 and r.harness_bias_ci95_core_cycles == 0
        assert r.caveats and "folded" in r.caveats[0]
        assert r.estimate_core_cycles == pytest.approx(r.estimate * clk.cycles_per_tick)
    assert res.selftest is None


def test_the_intel_re_derivation_reproduces_the_file_from_the_hosts_files():
    # from ../shared/hosts where CI has it beside the clone; elsewhere the
    # shipped file's own consistency (above) is what can be checked
    hosts = Path(__file__).resolve().parents[2] / "shared" / "hosts"
    script = DATA / "rederive_intel.py"
    if not (hosts / "intel-xeon-family6-model207-rulers.npz").exists() or not script.exists():
        pytest.skip("../shared/hosts (the Intel host's 0.4.0 file and rulers) is not beside this checkout")
    import importlib.util

    spec = importlib.util.spec_from_file_location("rederive_intel", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.rederive(hosts) == fastcpu.load(DATA / "intel-xeon-family6-model207-kvm-guest.json")


@pytest.mark.parametrize("name", ["intel-xeon-family6-model167-tsc2000-kvm-guest.json",
                                  "intel-xeon-family6-model167-tsc2600-kvm-guest.json"])
def test_the_hopping_clock_hosts_files_answer_both_questions_with_each_stretch_converted_by_its_own_rulers(name):
    # family 6 model 167 (two hosts: TSC 2000 and 2600 MHz), measured with the current fastcpu:
    # a core clock that hops between 100 MHz steps, so each result converts its runs stretch by
    # stretch with the ruler points taken among them, and keeps how the clock moved; every
    # method answers both questions
    res = fastcpu.load(DATA / name)
    assert (res.machine["vendor"], res.machine["family"], res.machine["model"]) == ("GenuineIntel", 6, 167)
    assert tuple(int(v) for v in res.fastcpu_version.split(".")) >= (0, 8, 2) and res.verified
    assert len(res) == 37 and sorted(res.back_to_back) == sorted(res)
    assert {r.runs for r in res.values()} == {10_000} and {r.cpu for r in res.values()} == {1}
    in_process = [r for r in res.values() if r.clock_motion is not None]
    assert len(in_process) == 36  # all but the child process's (sched_getcpu_norseq): its own clock
    for r in in_process:
        motion = r.clock_motion
        assert motion.points >= 2 and motion.seconds > 0 and motion.levels_core_cycles_per_tick
        assert list(motion.levels_core_cycles_per_tick) == sorted(motion.levels_core_cycles_per_tick)
        if math.isfinite(r.cycles_per_tick):  # converted at the levels its own points saw
            assert motion.levels_core_cycles_per_tick[0] * 0.97 <= r.cycles_per_tick <= \
                motion.levels_core_cycles_per_tick[-1] * 1.03, r.method
    assert res.selftest is not None  # the self-test run with it, whatever its verdict
    # the cheapest way, each question: one call alone a bound here (below what the harness
    # resolves), calls back to back a cost
    alone = [r for r in res.values() if r.method in ("rdpid", "rseq", "vdso", "gdt")]
    assert any(not r.resolved for r in alone) and all(r.resolved for r in res.back_to_back.values()
                                                      if r.method in ("rseq", "gdt"))


def test_the_re_derived_060_file_of_the_hopping_clock_host_converts_each_result_with_its_own_rulers():
    # the same host's 0.6.0 file, re-derived: the clock's one figure (its first-use ruler)
    # converts no result; each result's brackets do, and a result without brackets of its own
    # carries the span of the clock's levels
    res = fastcpu.load(REDERIVED_167)
    assert (res.machine["vendor"], res.machine["family"], res.machine["model"]) == ("GenuineIntel", 6, 167)
    assert res.fastcpu_version == "0.6.0" and len(res) == 37
    notes = " ".join(res.notes)
    assert "Re-derived by data/rederive_intel.py" in notes and "no one figure holds for the file" in notes
    first_use = res.clock.cycles_per_tick
    for r in res.values():
        assert r.cycles_per_tick_ci95 > 0, f"{r.method}: a conversion with no uncertainty on a hopping clock"
        assert not (r.cycles_per_tick == first_use and r.cycles_per_tick_ci95 == 0), r.method
        assert r.harness_bias_core_cycles == 0  # the self-test failed there: no correction
    spanned = [r for r in res.values() if any("child process" in c for c in r.caveats)]
    assert [r.method for r in spanned] == ["sched_getcpu_norseq"]
    low, high = (float(x) for x in re.search(r"([\d.]+) to ([\d.]+) core cycles per tick, every", notes).groups())
    for r in spanned:
        assert r.cycles_per_tick - r.cycles_per_tick_ci95 == pytest.approx(low)
        assert r.cycles_per_tick + r.cycles_per_tick_ci95 == pytest.approx(high)
    assert low < first_use * 1.01 and high > first_use * 1.05  # the span the first-use figure misses


def test_the_hopping_clock_re_derivation_reproduces_the_file_from_the_hosts_files():
    hosts = Path(__file__).resolve().parents[2] / "shared" / "hosts"
    script = DATA / "rederive_intel.py"
    if not (hosts / "intel-xeon-family6-model167-drift.npz").exists() or not script.exists():
        pytest.skip("../shared/hosts (the model 167 host's 0.6.0 file and clock trace) is not beside this checkout")
    import importlib.util

    spec = importlib.util.spec_from_file_location("rederive_intel", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # the levels of the trace, as the host's page gives them (1.381 ... 1.573)
    levels = module.clock_levels(hosts / "intel-xeon-family6-model167-drift.npz")
    assert len(levels) == 5 and levels[0] == pytest.approx(1.381, abs=0.002) and levels[-1] == pytest.approx(1.573, abs=0.002)
    assert module.rederive_167(hosts) == fastcpu.load(REDERIVED_167)


def test_clock_levels_finds_the_levels_of_a_synthetic_hopping_clock(tmp_path):
    script = DATA / "rederive_intel.py"
    import importlib.util

    spec = importlib.util.spec_from_file_location("rederive_intel", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(29)
    true = np.array([1.25, 1.31, 1.44, 1.62])
    add = rng.choice(true, 3000) + rng.normal(0, 0.0003, 3000)
    imul = add * (1 + rng.normal(0, 0.001, 3000))
    hop = rng.random(3000) < 0.15  # a hop inside the sample: the rulers read between levels, apart
    add[hop] = rng.uniform(1.2, 1.7, hop.sum())
    imul[hop] = add[hop] * 1.03
    np.savez(tmp_path / "trace.npz", seconds=np.arange(3000) * 0.02, add_cycles_per_tick=add,
             imul_cycles_per_tick=imul)
    assert module.clock_levels(tmp_path / "trace.npz") == pytest.approx(tuple(true), abs=0.002)


def _readme_text() -> str:
    return " ".join((DATA / "README.md").read_text().split())


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_the_readmes_format_list_says_each_files_version_and_checks(path):
    data = path.read_bytes()
    gzipped = path.name.endswith(".gz")
    doc = json.loads(gzip.decompress(data) if gzipped else data)
    text = (DATA / "README.md").read_text()
    item = re.search(rf"^- [^\n]*`{re.escape(path.name)}`[^\n]*:(.*?)(?=\n- |\n\n)", text, re.M | re.S)
    assert item, f"data/README.md's format list does not name {path.name}"
    words = " ".join(item[1].split())
    assert f"version {doc['version']}" in words
    assert ("verified" in words.split(", ")) == fastcpu.load(path).verified
    crc = any("crc32" in r["raw"] for r in doc["results"])
    assert ("without array CRC-32s" in words) == (not crc) and ("with array CRC-32s" in words) == crc
    rederived = any(n.startswith("Re-derived") for n in doc.get("notes", []))
    assert ("re-derived" in words) == rederived and ("as first written" in words) == (not rederived)
    assert ("gzipped" in words) == gzipped


def test_the_readmes_file_sizes_are_the_files():
    text = " ".join(_readme_text().split())
    # each size a range, or one figure where the files of that many methods round alike
    size = r"([\d.]+)(?:-([\d.]+))? MB for (\d+) methods"
    sizes = re.search(rf"10,000 runs of every method: {size}, {size}; with both questions, {size}", text)
    assert sizes, "data/README.md: the file sizes sentence"

    def span(i: int) -> tuple[float, float]:
        return float(sizes[i]), float(sizes[i + 1] or sizes[i])

    ranges = {int(sizes[3]): span(1), int(sizes[6]): span(4)}
    both = int(sizes[9]), span(7)
    for f in FILES:
        res = fastcpu.load(f)
        if {r.runs for r in res.values()} != {10_000}:
            continue
        # the document's own size (uncompressed JSON), gzipped or not
        mb = (len(gzip.decompress(f.read_bytes())) if f.name.endswith(".gz") else f.stat().st_size) / 1e6
        if res.back_to_back:
            assert len(res) == both[0], f.name
            assert both[1][0] - 0.05 <= mb <= both[1][1] + 0.05, (f.name, mb)
        else:
            low, high = ranges[len(res)]
            assert low - 0.05 <= mb <= high + 0.05, (f.name, f.stat().st_size)


# --- published_figures.csv ---------------------------------------------------------------

COLUMNS = ["source", "date", "machine", "what", "fastcpu_method", "value", "value_high", "unit",
           "statistic", "note"]

# dean gaudet's tables as ../shared/REFERENCE.md gives them, core cycles.
TAKE_2 = {  # 2007-01-13: baseline, no cache / patched, no cache / baseline, cache / patched, cache
    "K8 pre-revF": (21, 16, 14, 17), "K8 revF": (31, 17, 14, 17), "Core 2": (38, 16, 12, 14),
    "P4": (49, 41, 24, 24)}
TAKE_2_LABELS = ("baseline, no cache", "patched, no cache", "baseline, cache", "patched, cache")
FOLLOW_UP = {  # 2007-01-08: baseline no cache / baseline cache / patched
    "K8 pre-revF": (21, 14, 16), "K8 revF": (31, 14, 17), "Core 2": (38, 12, 17), "P4": (49, 24, 37)}
FOLLOW_UP_LABELS = ("baseline no cache", "baseline cache", "patched")


def _published() -> list[dict[str, str]]:
    with open(DATA / "published_figures.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def test_every_published_figure_has_a_source_a_number_a_unit_and_a_real_method():
    names = {m.name for m in fastcpu.methods()}
    for row in _published():
        assert row["source"] and row["machine"] and row["what"], row
        float(row["value"])
        if row["value_high"]:
            assert float(row["value_high"]) > float(row["value"]), row
        assert row["unit"] in ("core cycles", "ns", "us"), row
        assert row["fastcpu_method"] in names | {""}, row


def _dean(date: str) -> dict[tuple[str, str], float]:
    return {(r["machine"], r["what"].split(" (")[0]): float(r["value"]) for r in _published()
            if r["source"].startswith("dean gaudet") and r["date"] == date}


def test_dean_gaudets_tables_are_there_with_their_exact_labels():
    assert _dean("2007-01-13") == {(m, label): v for m, row in TAKE_2.items()
                                   for label, v in zip(TAKE_2_LABELS, row)}
    assert _dean("2007-01-08") == {(m, label): v for m, row in FOLLOW_UP.items()
                                   for label, v in zip(FOLLOW_UP_LABELS, row)}
    assert _dean("2007-01") == {("P4", "LSL"): 150, ("P4", "SIDT"): 15, ("P4", "SGDT"): 15,
                                ("P4", "SLDT"): 15}


def test_the_noise_models_p4_figures_are_the_published_ones():
    from fastcpu.noise import P4_FIT_FIGURES, P4_HELD_OUT_FIGURES
    published = {(r["date"], r["machine"], float(r["value"])) for r in _published()}
    for f in (*P4_FIT_FIGURES, *P4_HELD_OUT_FIGURES):
        date = re.search(r"2007-01-\d\d", f.source)
        assert (date[0] if date else "2007-01", "P4", f.core_cycles) in published, f


def test_old_files_load_with_former_names_renamed_and_compare_with_new_ones(tmp_path):
    # the committed files predate the split of getcpu_sidt_fp into the four
    # red zone x frame pointer corners: they load under the new name
    old = fastcpu.load(DATA / "amd-epyc-kvm-guest.json")
    assert "getcpu_sidt_fp" not in old.results and "getcpu_sidt_norz_fp" in old.results
    with pytest.raises(KeyError):  # the file's old name only: a user names today's method
        old["getcpu_sidt_fp"]  # noqa: B018
    new = fastcpu.measure(20, methods=["getcpu_sidt_norz_fp", "gdt"])
    rows = fastcpu.compare(old, new)
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    methods = {(r["method"] if isinstance(r, dict) else r.method) for r in rows}
    assert "getcpu_sidt_norz_fp" in methods and "getcpu_sidt_fp" not in methods
