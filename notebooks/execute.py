"""Execute the notebooks in place, keeping their outputs (how the committed outputs were made).

    python notebooks/execute.py                 # all of them, 10,000 runs per method
    FASTCPU_NOTEBOOK_RUNS=500 python notebooks/execute.py noise.ipynb

Each runs with notebooks/ as its working directory, in a kernel of this Python
(so it imports the fastcpu this Python imports).
"""

import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path, timeout_s: int = 600) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=timeout_s, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}}).execute()
    return nb


def main(names: list[str]) -> None:
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name}...", file=sys.stderr, flush=True)
        nbformat.write(execute(path), path)


if __name__ == "__main__":
    main(sys.argv[1:])
