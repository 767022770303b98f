"""What the harness's use of each copy's result costs a body timed back to back.

Every timed body ends with one multiply by 1 of its result into another
register (csrc/timing.h, fc_use): single copies then all end alike. Timed
back to back (bench_diff, bench(unroll>1)) that multiply runs once per copy
beside the body, and on a core with one multiplier it competes with an imul
chain for it. This times plain C loops of a dependent chain (one link per
iteration) alone, with that multiply, and with a mov in its place
(benchmarks/result_use.c, compiled here), and prints Markdown with the host
named: core cycles per iteration, converted with the imul chain's own loop
(3 core cycles per iteration, no other clock). Not the add chain's: a loop
of one add, a count down and a branch runs at the loop's own pace, and on
the AuthenticAMD family 25 model 17 (Zen 4) guest that pace was 1.6 core
cycles an iteration in some processes (1.0 in most), by where the code
landed; three core cycles an iteration are beyond it.

    python benchmarks/result_use.py                 # under a second
    python benchmarks/result_use.py --rounds 50 --cpu 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cbuild import compile_c
from host import host_line, load_line

#: (variant, its truth in core cycles per iteration: the chain's latency alone)
TRUTH = {
    "add chain": 1, "add chain, result used by imul $1": 1, "add chain, result moved": 1,
    "imul chain": 3, "imul chain, result used by imul $1": 3, "imul chain, result moved": 3,
}


def measure(rounds: int, iters: int, cpu: int | None) -> dict[str, float]:
    """TSC ticks per iteration of each variant, best of `rounds`."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_c("result_use.c", os.path.join(tmp, "result_use"))
        out = subprocess.run([exe, str(rounds), str(iters), str(-1 if cpu is None else cpu)],
                             check=True, capture_output=True, text=True).stdout
    return {name: float(v) for name, v in (line.rsplit(":", 1) for line in out.splitlines())}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20, help="loops per variant, the best kept (default 20)")
    p.add_argument("--iters", type=int, default=100_000, help="iterations per loop (default 100000)")
    p.add_argument("--cpu", type=int, default=None, help="pin the program to this CPU")
    args = p.parse_args()
    if args.rounds < 1 or args.iters < 1:
        p.error("--rounds and --iters must be positive")
    ticks = measure(args.rounds, args.iters, args.cpu)
    cpt = 3 / ticks["imul chain"]  # the imul chain: 3 core cycles per iteration, beyond the loop's own pace
    print(f"Host: {host_line()}; load {load_line()}; best of {args.rounds} loops of {args.iters} iterations"
          f"{'' if args.cpu is None else f', CPU {args.cpu}'}; core cycles by the imul chain's own loop "
          f"({cpt:.3f} core cycles per TSC tick)\n")
    print("| loop body, one iteration | truth (core cycles) | core cycles per iteration |")
    print("| --- | ---: | ---: |")
    for name, t in ticks.items():
        truth = TRUTH.get(name)
        print(f"| {name} | {'' if truth is None else truth} | {t * cpt:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
