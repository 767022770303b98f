"""fastcpu's clock against rulers of a plain C program's own make.

`python -m fastcpu` prints the counter's granularity and core cycles per
TSC tick; this checks both with a C program that shares no code with
fastcpu (benchmarks/rulers.c, compiled here): medians of 16,384-instruction
chains of register-register adds, imuls and immediate adds, and the plain
gcd of the deltas of reads separated by varying work. It prints Markdown
with the host named: each figure by fastcpu and by the program, and how far
apart they are.

    python benchmarks/rulers.py                 # about a second
    python benchmarks/rulers.py --runs 2001 --cpu 1

Where the counter's lattice is not a whole number of ticks (24.5 on an AMD
Zen 3 guest) the gcd is 1; the program's deltas are then held to fastcpu's
granularity and to granularities a tick off it: only the right one holds
nearly all of them within the rounding of both reads.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fastcpu
from cbuild import compile_c
from host import host_line, load_line

INSTRUCTIONS = 16 * 1024


def run_program(runs: int, cpu: int | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as d:
        exe = compile_c("rulers.c", os.path.join(d, "rulers"))
        args = [exe, str(runs)] + ([str(cpu)] if cpu is not None else [])
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    facts: dict[str, object] = {}
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        facts[key] = np.array(rest.split(), dtype=np.float64) if key == "deltas" else float(rest)
    return facts


def share_on(deltas: np.ndarray, step: float) -> float:
    """The share of deltas within the rounding of both reads of whole steps."""
    k = np.rint(deltas / step)
    return float(np.mean(np.abs(deltas - k * step) <= (0 if step == int(step) else 1.5)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=501, help="timings per chain (default 501)")
    p.add_argument("--cpu", type=int, default=None, help="pin both to this CPU (default: unpinned)")
    args = p.parse_args()

    clk = fastcpu.clock(refresh=True)
    c = run_program(args.runs, args.cpu)
    after = fastcpu.clock(refresh=True)
    empty = float(c["empty"])  # type: ignore[arg-type]
    add = INSTRUCTIONS / (float(c["add_rr"]) - empty)  # type: ignore[arg-type]
    imul = 3 * INSTRUCTIONS / (float(c["imul"]) - empty)  # type: ignore[arg-type]
    imm_per_cycle = INSTRUCTIONS / (float(c["add_imm"]) - empty) / add  # type: ignore[arg-type]
    deltas = c["deltas"]
    assert isinstance(deltas, np.ndarray)
    g = clk.tsc_step_ticks

    def pct(a: float, b: float) -> str:
        return f"{(a / b - 1) * 100:+.2f}%"

    rulers = clk.rulers
    assert rulers is not None
    print("## fastcpu's clock against a C program's rulers")
    print()
    print(f"Host: {host_line()}. fastcpu {fastcpu.__version__}; {args.runs} timings per chain, "
          f"{'unpinned' if args.cpu is None else f'pinned to CPU {args.cpu}'}; fastcpu measured just "
          "before and just after the program.")
    print()
    print("| figure | fastcpu before | fastcpu after | C program | C against fastcpu before |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| core cycles per tick, register-register adds | {rulers.add_cycles_per_tick:.4f} | "
          f"{after.rulers.add_cycles_per_tick:.4f} | {add:.4f} | {pct(add, rulers.add_cycles_per_tick)} |")
    print(f"| core cycles per tick, imul / 3 | {rulers.imul_cycles_per_tick:.4f} | "
          f"{after.rulers.imul_cycles_per_tick:.4f} | {imul:.4f} | {pct(imul, rulers.imul_cycles_per_tick)} |")
    print(f"| imul in register-register adds (3 where both are rulers) | {rulers.imul_in_adds:.3f} | "
          f"{after.rulers.imul_in_adds:.3f} | {3 * add / imul:.3f} | |")
    print(f"| immediate adds per core cycle | {rulers.immediate_adds_per_core_cycle:.2f} | "
          f"{after.rulers.immediate_adds_per_core_cycle:.2f} | {imm_per_cycle:.2f} | |")
    print(f"| granularity, TSC ticks | {g:.4g} | {after.tsc_step_ticks:.4g} | gcd {c['gcd']:.0f} | |")
    print(f"| back-to-back read spacing, TSC ticks | {clk.tsc_read_spacing_ticks:.4g} | "
          f"{after.tsc_read_spacing_ticks:.4g} | {c['spacing']:.0f} | |")
    print()
    lattice = ", ".join(f"{s:.4g} ticks: {share_on(deltas, s):.1%}" for s in (g - 1, g, g + 1) if s >= 1)
    print(f"The C program's {len(deltas)} spaced deltas on fastcpu's lattice and on lattices a tick off "
          f"(share within the reads' rounding): {lattice}.")
    print()
    print(f"(load average {load_line()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
