"""The notebooks in notebooks/ execute top to bottom, and are committed with their outputs."""

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXPECTED = ["across_machines.ipynb", "noise.ipynb", "this_machine.ipynb"]
SMALL_RUNS = "200"  # each notebook reads FASTCPU_NOTEBOOK_RUNS


def test_the_three_notebooks_are_there():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_with_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "run notebooks/execute.py"
    counts = [c.execution_count for c in code]
    assert counts == sorted(counts), "executed top to bottom in one go"
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure saved"
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 5, "prose explains what is shown"


@pytest.mark.notebook
@pytest.mark.parametrize("name", EXPECTED)
def test_executes(name, monkeypatch):
    monkeypatch.setenv("FASTCPU_NOTEBOOK_RUNS", SMALL_RUNS)
    # The kernel draws inline, as for a reader (conftest sets Agg for the tests).
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any failure
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    text = "".join(o.get("text", "") for o in outputs)
    assert "200 runs" in text
    check_generated_sentences(name, text)


def check_generated_sentences(name: str, text: str) -> None:
    """The sentences a notebook prints about its own figures agree with them."""
    if name == "noise.ipynb":
        best = float(re.search(r"BEST (\S+) ticks, MEDIAN \S+ ticks above the empty", text).group(1))
        said = re.search(r"The minima are (equal|different), so BEST is (\S+) ticks", text)
        assert float(said.group(2)) == best and (said.group(1) == "equal") == (best == 0)
    if name == "this_machine.ipynb":
        step = float(re.search(r"step (\S+) ticks = ", text).group(1))
        said = re.search(r"With a (\S+)-tick step, (\d+) of (\d+) methods read 0", text)
        assert float(said.group(1)) == step and int(said.group(2)) <= int(said.group(3))
        assert re.search(r"host: .* \(vendor \S+, family \d+, model \d+\)", text)


# Figures of one host typed into prose: where a markdown cell needs one, it
# says which committed data file it is about.
HOST_FIGURES = re.compile(r"\b26[- ]ticks?\b|\b2596\b|\b24\.5[- ]ticks?\b|development (guest|machine)")


@pytest.mark.parametrize("name", EXPECTED)
def test_prose_states_no_host_figure_by_hand(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for para in cell.source.split("\n\n"):
            if HOST_FIGURES.search(para):
                assert "data/" in para or "Zen 4" in para, para
