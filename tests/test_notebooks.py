"""The notebooks in notebooks/ execute top to bottom, and are committed with their outputs."""

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
    assert "200 runs" in "".join(o.get("text", "") for o in outputs)
