"""fastcpu's figures against an independent check: the known-cost chains
timed by a small C program of their own (benchmarks/held_out.c), each of its
measurements converted with a held-out ruler (long add and imul chains)
taken just before and just after it and kept only where the clock held
still across it; beside them fastcpu's own: uncorrected
(``_measurement.timed``, the harness and its conversion inside the
measurement) and as ``bench()`` reports them (corrected by the self-test's
bias where the cost is resolved), with the share of what fastcpu prints
that holds the truth: the 95% interval of a resolved cost, the bound
("< X core cycles") of one below the resolution. Prints Markdown with the host named:

    python benchmarks/held_out.py                     # about ten seconds
    python benchmarks/held_out.py --rounds 40 --cpu 1

Every figure is core cycles; an error is the figure minus the truth.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cbuild import compile_c
from host import host_line, load_line
from printed import holds

import fastcpu
from fastcpu.instrument.harness import timed


def held_out(rounds: int, runs: int, cpu: int | None) -> dict[str, tuple[int, float, float, float]]:
    """name -> (kept measurements, median error, 5th and 95th percentile) from held_out.c."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_c("held_out.c", os.path.join(tmp, "held_out"))
        args = [exe, str(rounds), str(runs)] + ([str(cpu)] if cpu is not None else [])
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        name, _truth, kept, *rest = line.split()
        rows[name] = (int(kept), *(float(x) for x in rest)) if rest else (0, float("nan"), float("nan"),
                                                                              float("nan"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20, help="measurements per chain (default 20)")
    ap.add_argument("--runs", type=int, default=1000, help="runs per measurement (default 1000)")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    args = ap.parse_args()
    truth = {c.name: c.truth_core_cycles for c in fastcpu.chain_methods()}
    c_rows = held_out(args.rounds, args.runs, args.cpu)
    st = fastcpu.selftest(serialize="lfence", cpu=args.cpu)
    print(f"Host: {host_line()}; load {load_line()}; fastcpu {fastcpu.__version__}, "
          f"{args.rounds} x {args.runs} runs per chain, serialize=lfence"
          + (f", CPU {args.cpu}" if args.cpu is not None else ""))
    print()
    print("\n".join(st.lines()))
    print()
    print("| chain | truth | held-out C: kept, median error (5th..95th) | fastcpu uncorrected: median error "
          "| bench(): median error | bench(): coverage |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for name, (kept, med, lo, hi) in c_rows.items():
        t = truth[name]
        raw, corrected, covered = [], [], 0
        for _ in range(args.rounds):
            u = timed(name, args.runs, serialize="lfence", unroll=1, cpu=args.cpu, counter="tsc")
            raw.append(u.estimate_core_cycles - t)
            r = fastcpu.bench(name, args.runs, cpu=args.cpu)
            corrected.append(r.estimate_core_cycles - t)
            covered += holds(r, t)  # as printed: an interval, or the bound of a cost below resolution
        c = f"{kept}, {med:+.2f} ({lo:+.2f}..{hi:+.2f})" if kept else "0 (the clock never held still)"
        print(f"| {name} | {t:.0f} | {c} | {statistics.median(raw):+.2f} | {statistics.median(corrected):+.2f} "
              f"| {covered / args.rounds:.0%} |")


if __name__ == "__main__":
    main()
