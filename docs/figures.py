"""Draw the figures README.md shows, from the result files in data/.

    python docs/figures.py            # writes docs/images/*.png

Each figure is drawn by the public plot functions from committed data, so
what the README shows is what a user gets from the same files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fastcpu  # noqa: E402
from fastcpu import plot  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
#: The host README's answer comes from (Zen 3), and the methods the machines
#: grid shows: the ways that report the CPU, cheapest to dearest.
HOST_FILE = ROOT / "data" / "amd-epyc-family25-model1-kvm-guest.json"
MACHINE_METHODS = ["rseq", "rdpid", "tscp", "gdt", "vdso", "syscall"]
COUNT_METHODS = ["rseq", "rdpid", "tscp", "gdt", "vdso", "sidt"]
DPI = 72

#: file name -> what README says it shows (checked by tests/test_readme.py)
FIGURES = {
    "counts.png": "exact counts per method, one host",
    "ecdf.png": "every method's distribution, panels by kind",
    "machines.png": "each way across the hosts in data/",
    "published.png": "measured against the published figures",
}


def draw() -> dict[str, plt.Figure]:
    here = fastcpu.load(HOST_FILE)
    files = [fastcpu.load(p) for p in sorted((ROOT / "data").glob("*.json*"))]
    return {
        "counts.png": plot.distributions(here, COUNT_METHODS, unit="core_cycles"),
        "ecdf.png": plot.ecdf_groups(here, unit="core_cycles"),
        "machines.png": plot.machines(files, MACHINE_METHODS, unit="ns"),
        "published.png": plot.published(files),
    }


def main() -> int:
    IMAGES.mkdir(exist_ok=True)
    for name, fig in draw().items():
        fig.savefig(IMAGES / name, dpi=DPI)
        plt.close(fig)
        print(f"wrote {(IMAGES / name).relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
