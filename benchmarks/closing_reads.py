"""Whether another closing read makes the single-copy harness hide the same
amount of every body.

fastcpu's single-copy estimate of a known-cost chain is off by an amount
that depends on the body: on the GenuineIntel family 6 model 167 guest an
add_chain_128 read about +0.3 core cycles before correction while
imul_chain_64 read about -4, further apart than the self-test's one
correction can serve within its +-1.5 goal (docs/accuracy.md). This times,
in a plain C program (benchmarks/closing_reads.c, compiled here), add and
imul chains of 4 to 192 core cycles under fastcpu's closing read until
0.8.4 (``rdtscp; lfence``) and two that wait for the body to complete, not
only to execute (``lfence; rdtsc; lfence``, and ``lfence; rdtscp; lfence``,
fastcpu's since 0.8.5),
each against the empty body closed the same way, every variant interleaved
run by run. Each round converts at its own core clock: the mean of a long
add ruler (add 1024 - add 512) and a long imul ruler (imul 342 - imul 171),
as fastcpu converts with the mean of its two rulers. Prints Markdown with
the host named:

    python benchmarks/closing_reads.py                  # about five seconds
    python benchmarks/closing_reads.py --rounds 241 --runs 5000 --cpu 1

Every figure is core cycles; an error is the median over the rounds of the
figure minus the truth, before any correction.
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

from fastcpu.results.selftest_report import goal_core_cycles, one_correction_fits

#: The rulers (closing_reads.c names them "ruler_..."): (long, short, core cycles between them).
RULERS = {"add": ("ruler_add1024", "ruler_add512", 512), "imul": ("ruler_imul342", "ruler_imul171", 513)}


def measure(rounds: int, runs: int, cpu: int) -> tuple[list[str], dict[str, dict[str, float]], list[dict[str, float]]]:
    """(closing reads in order, truth of each body, one {"close|body": mean ticks} per round)."""
    with tempfile.TemporaryDirectory() as d:
        exe = compile_c("closing_reads.c", os.path.join(d, "closing_reads"), "-Wall", "-Wextra")
        out = subprocess.run([exe, str(rounds), str(runs), str(cpu)], check=True, capture_output=True,
                             text=True).stdout
    header, *lines = out.splitlines()
    keys = [field.rsplit(":", 1)[0] for field in header.split("\t")]
    closes = list(dict.fromkeys(key.split("|")[0] for key in keys))
    truth: dict[str, dict[str, float]] = {}
    for field in header.split("\t"):
        key, value = field.rsplit(":", 1)
        close, body = key.split("|")
        if int(value) >= 0:
            truth.setdefault(close, {})[body] = float(value)
    return closes, truth, [dict(zip(keys, map(float, line.split("\t")))) for line in lines]


def errors(close: str, bodies: dict[str, float], rows: list[dict[str, float]]) -> tuple[dict[str, float], float, float]:
    """({body: median error over the rounds}, median core cycles per tick, median rulers' disagreement, %)."""
    per_body: dict[str, list[float]] = {body: [] for body in bodies if body != "empty"}
    cpts, apart = [], []
    for ticks in rows:
        by_ruler = {op: cycles / (ticks[f"{close}|{long}"] - ticks[f"{close}|{short}"])
                    for op, (long, short, cycles) in RULERS.items()}
        cpt = statistics.fmean(by_ruler.values())
        cpts.append(cpt)
        apart.append(100 * abs(by_ruler["add"] - by_ruler["imul"]) / cpt)
        for body in per_body:
            per_body[body].append((ticks[f"{close}|{body}"] - ticks[f"{close}|empty"]) * cpt - bodies[body])
    return ({body: statistics.median(v) for body, v in per_body.items()}, statistics.median(cpts),
            statistics.median(apart))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=121, help="rounds; figures are medians over them (default 121)")
    p.add_argument("--runs", type=int, default=5000, help="runs of each variant per round (default 5000)")
    p.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                   help="CPU to pin to (default: the last allowed)")
    args = p.parse_args()
    closes, truth, rows = measure(args.rounds, args.runs, args.cpu)
    found = {close: errors(close, truth[close], rows) for close in closes}
    empty = {close: statistics.median(r[f"{close}|empty"] for r in rows) for close in closes}

    print("## Would another closing read help")
    print()
    print(f"Host: {host_line()}. Pinned to CPU {args.cpu}; {args.rounds} rounds of {args.runs} runs per variant, "
          f"load average {load_line()} at the end.")
    print()
    print("Error before correction (core cycles over the empty body closed the same way, minus the truth; "
          "median of rounds):")
    print()
    print("| body | truth | " + " | ".join(f"`{c}`" for c in closes) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in closes) + " |")
    for body, t in truth[closes[0]].items():
        if body != "empty":
            print(f"| {body} | {t:g} | " + " | ".join(f"{found[c][0][body]:+.2f}" for c in closes) + " |")
    print("| the empty body, TSC ticks | | " + " | ".join(f"{empty[c]:.1f}" for c in closes) + " |")
    print("| core cycles per tick (rulers apart) | | "
          + " | ".join(f"{found[c][1]:.4f} ({found[c][2]:.2f}%)" for c in closes) + " |")
    print()
    print("| closing read | lowest | highest | spread | one correction (their midpoint) leaves each at most | "
          "one correction holds every chain within its goal (+-1.5, 1% from 100)? |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for c in closes:
        values = found[c][0]
        lo, hi = min(values, key=values.__getitem__), max(values, key=values.__getitem__)
        spread = values[hi] - values[lo]
        fits = one_correction_fits([(values[b], goal_core_cycles(truth[c][b])) for b in values])
        print(f"| `{c}` | {values[lo]:+.2f} ({lo}) | {values[hi]:+.2f} ({hi}) | {spread:.2f} | {spread / 2:.2f} | "
              f"{'yes' if fits else 'no'}, before noise |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
