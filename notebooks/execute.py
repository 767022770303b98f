"""Execute the notebooks in place, keeping their outputs (how the committed outputs were made).

    python notebooks/execute.py                 # all of them, 10,000 runs per method
    FASTCPU_NOTEBOOK_RUNS=500 python notebooks/execute.py noise.ipynb
    FASTCPU_NOTEBOOK_SOURCE=data/intel-xeon-family6-model207-kvm-guest.json \\
        python notebooks/execute.py noise.ipynb this_machine.ipynb

Two environment variables shape a run:

- ``FASTCPU_NOTEBOOK_RUNS``: how many runs each method is measured with (and, in noise.ipynb,
  how many are simulated); 10,000 when unset, as in the committed outputs.
- ``FASTCPU_NOTEBOOK_SOURCE``: a result file written by ``python -m fastcpu run`` (such as
  those in data/) that noise.ipynb and this_machine.ipynb read instead of measuring this
  machine. They name the file's host and print every figure and sentence from its runs, and
  skip what a file does not keep (runs of 64 and 128 copies). A relative path is taken from
  the directory this script is run in. across_machines.ipynb reads every file in data/ and
  measures this machine whatever the variable says. The committed outputs are measured (the
  variable unset), on the host named in their first lines.

Each runs with notebooks/ as its working directory, in a kernel of this Python
(so it imports the fastcpu this Python imports).
"""

import os
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
    source = os.environ.get("FASTCPU_NOTEBOOK_SOURCE")
    if source:  # the kernels run in notebooks/: give them the path from here
        os.environ["FASTCPU_NOTEBOOK_SOURCE"] = str(Path(source).resolve())
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name}...", file=sys.stderr, flush=True)
        nbformat.write(execute(path), path)


if __name__ == "__main__":
    main(sys.argv[1:])
