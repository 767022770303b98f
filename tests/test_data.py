"""data/: every result file loads, is listed in data/README.md, and is picked up by
`compare` and by the across-machines notebook (its committed outputs name every file)."""

import csv
import io
import json
import re
from pathlib import Path

import pytest

import fastcpu
from fastcpu._cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
NOTEBOOK = DATA.parent / "notebooks" / "across_machines.ipynb"

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
