"""Which end of a dependent chain carries the single-copy harness's offset.

fastcpu's single-copy estimate of an add chain and of an imul chain are off
by different constants on the same host (docs/accuracy.md: +2 against 0
core cycles on the AuthenticAMD family 25 model 1 (Zen 3) host, 0 against
-2 on the family 25 model 17 (Zen 4) one). This times,
in a plain C program (benchmarks/chain_ends.c, compiled here), add and imul
chains alone and mixed (the same instructions in either order) between
fastcpu's 'lfence' fences, minus the empty body, and prints Markdown with
the host named. Each is timed twice: as it ends, and with its result used by
one multiply by 1 into another register, as fastcpu's timers end since
(timing.h, fc_use), against an empty body with that multiply:

    python benchmarks/chain_ends.py                 # about a second
    python benchmarks/chain_ends.py --rounds 41 --runs 40000 --cpu 1

Core cycles come from the chains' own slopes, no other clock: imul x32 -
imul x16 is 48 core cycles, add x32 - add x16 is 16. The two need not
agree: a dependent add can be slowed by what else runs on the core (on a
guest, the host's other work), never sped up, so where they differ the
larger figure of core cycles per tick is the nearer one.
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


#: The same instructions in either order: (ending with an add, ending with an imul).
PAIRS = [
    ("imul x16, then add x1", "add x1, then imul x16"),
    ("imul x16, then add x4", "add x4, then imul x16"),
    ("imul x1, then add x16", "add x16, then imul x1"),
    ("imul x1, then add x16, used", "add x16, then imul x1, used"),
]

#: A variant whose result is used is measured against the empty body that uses its own.
USED = ", used"


def empty_of(name: str) -> str:
    return "empty" + USED if name.endswith(USED) else "empty"


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=41, help="rounds; figures are medians over them (default 41)")
    p.add_argument("--runs", type=int, default=20000, help="runs of each variant per round (default 20000)")
    p.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="CPU to pin to (default: the last allowed)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        exe = compile_c("chain_ends.c", os.path.join(d, "chain_ends"))
        out = subprocess.run([exe, str(args.rounds), str(args.runs), str(args.cpu)],
                             check=True, capture_output=True, text=True).stdout
    header, *lines = out.splitlines()
    names = [field.rsplit(":", 1)[0] for field in header.split("\t")]
    truth = {field.rsplit(":", 1)[0]: int(field.rsplit(":", 1)[1]) for field in header.split("\t")}
    # per round: ticks over that round's empty body, and core cycles at that
    # round's imul clock (imul x32 - imul x16 is 48 core cycles)
    core_cycles: dict[str, list[float]] = {name: [] for name in names}
    cpt_imul, cpt_add = [], []
    for line in lines:
        ticks = dict(zip(names, map(float, line.split("\t"))))
        net = {name: ticks[name] - ticks[empty_of(name)] for name in names}
        cpt = 48 / (net["imul x32"] - net["imul x16"])
        cpt_imul.append(cpt)
        cpt_add.append(16 / (net["add x32"] - net["add x16"]))
        for name in names:
            core_cycles[name].append(net[name] * cpt)

    print("## Where a chain's offset sits")
    print()
    print(f"Host: {host_line()}. Pinned to CPU {args.cpu}; {args.rounds} rounds of {args.runs} runs per variant, "
          f"load average {load_line()} at the end.")
    print()
    ci, ca = statistics.median(cpt_imul), statistics.median(cpt_add)
    print(f"Core cycles per TSC tick, median of rounds: {ci:.4f} from the imul chains' slope (what the table "
          f"converts with, round by round), {ca:.4f} from the add chains' (a dependent add took {ci / ca:.3f} "
          "core cycles by the imul clock).")
    print()
    print("| body | truth | core cycles over the empty body: median of rounds (quartiles) | error |")
    print("| --- | ---: | ---: | ---: |")
    for name in names:
        if name == empty_of(name):
            continue
        lo, mid, hi = quartiles(core_cycles[name])
        print(f"| {name} | {truth[name]} | {mid:.2f} ({lo:.2f}-{hi:.2f}) | {mid - truth[name]:+.2f} |")
    print()
    print("| same instructions | ending with an add minus ending with an imul (then used, where marked), "
          "core cycles: median of rounds (quartiles) |")
    print("| --- | ---: |")
    for add_last, imul_last in PAIRS:
        lo, mid, hi = quartiles([a - b for a, b in zip(core_cycles[add_last], core_cycles[imul_last])])
        print(f"| {add_last} / {imul_last} | {mid:+.2f} ({lo:+.2f} to {hi:+.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
