"""The copy loop: what bench_diff() and bench(unroll>1) cannot see below, and
what the loop's correction does to the known-cost chains timed in copies.

Copies of a body run in a loop (csrc/timing.h) that the empty sequence pays
too, and the body overlaps anything from none to all of the loop's own pace.
Since fastcpu 0.8.7 the loop's cost per copy is measured on the host
(fastcpu/_copy_loop.py). bench_diff() reads the body plus 0 to L (L the
loop's cost, core cycles per copy) and takes half of L off; bench(unroll>1)
reads the body less 0 to L and adds half of L back; either way the other
half is in the interval, and a figure within L is shown as a bound. This
prints Markdown with the host named:

1. the loop's own cost per copy, inline (the empty sequence) and through the
   user path (a user function of no cost), at each number of copies;
2. the known-cost chains timed with `--unroll` copies a run, with the loop's
   correction (bench()'s own) and without it (as before 0.8.7): the median
   error against the truth and how often the printed interval or bound held
   it;
3. the same chains back to back (bench_diff, k=16): median error and
   coverage, inline and through the user path (the chains compiled here as a
   user's shared library, benchmarks/user_chains.c, where the loop holds a
   call and a return).

    python benchmarks/copy_loop.py                  # about ten seconds
    python benchmarks/copy_loop.py --rounds 10 --cpu 1 --unroll 8 64
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fastcpu
from fastcpu.instrument import timing as _bench
from fastcpu.instrument import timing as _copy_loop
from accuracy import build_user_chains, user_fn
from host import host_line, load_line
from printed import holds

#: copies a run whose loop is shown (the short side's; the long side has twice as many)
K_SHOWN = (2, 4, 8, 16, 32)


def loop_table(cpu: int | None) -> list[str]:
    out = ["| copies a run (k / 2k) | inline: the empty sequence | user path: a function of no cost |",
           "| ---: | ---: | ---: |"]

    def cell(floor: _copy_loop.LoopFloor | None) -> str:
        return "unknown (rulers disagreed)" if floor is None else f"{floor.core_cycles:.2f} +- {floor.ci95_core_cycles:.2f}"

    for k in K_SHOWN:
        inline = _copy_loop.loop_floor("inline", "lfence", "tsc", k, cpu)
        user = _copy_loop.loop_floor("user", "lfence", "tsc", k, cpu)
        out.append(f"| {k} / {2 * k} | {cell(inline)} | {cell(user)} |")
    return out + [""]


def chains(max_core_cycles: float) -> list[fastcpu.types.ChainInfo]:
    return [c for c in fastcpu.chain_methods() if c.truth_core_cycles <= max_core_cycles]


def judge(take: Callable[[], fastcpu.BenchResult | fastcpu.DiffResult], truth: float, rounds: int
          ) -> tuple[float, int]:
    """(median error of the resolved figures, or NaN where none was; rounds whose printed figure held the truth)."""
    errors, held = [], 0
    for _ in range(rounds):
        r = take()
        held += holds(r, truth)
        if r.resolved:
            errors.append(r.estimate_core_cycles - truth)
    return (statistics.median(errors) if errors else math.nan), held


def unrolled_table(unroll: int, rounds: int, runs: int, cpu: int | None) -> list[str]:
    out = [f"#### {unroll} copies a run (`bench(chain, {runs}, unroll={unroll})`)", "",
           "| chain | truth | with the loop's correction: median error, held | without (before 0.8.7) |",
           "| --- | ---: | ---: | ---: |"]
    measured = _bench.loop_floor
    totals = [0, 0]
    # about 20,000 core cycles a run at most (16 a copy at least), so that a run stays short
    for c in chains(max(16.0, 20_000 / unroll)):
        t = c.truth_core_cycles
        cells = []
        for i, floor in enumerate((measured, lambda *a: None)):
            _bench.loop_floor = floor  # bench()'s own, or none: the figures as before 0.8.7
            try:
                err, held = judge(lambda: fastcpu.bench(c.name, runs, unroll=unroll, cpu=cpu), t, rounds)
            finally:
                _bench.loop_floor = measured
            totals[i] += held
            cells.append(f"{'bound' if math.isnan(err) else f'{err:+.2f}'}, {held}/{rounds}")
        out.append(f"| {c.name} | {t} | {cells[0]} | {cells[1]} |")
    n = len(out) - 4
    out += ["", f"Held the truth: {totals[0]} of {n * rounds} with the correction, {totals[1]} without.", ""]
    return out


def diff_table(rounds: int, runs: int, cpu: int | None) -> list[str]:
    out = ["| chain | truth | inline, bench_diff (k=16): median error, held | user path: median error, held |",
           "| --- | ---: | ---: | ---: |"]
    totals = [0, 0]
    with tempfile.TemporaryDirectory() as d:
        lib = build_user_chains(d)
        for c in chains(1024):
            cells = []
            for i, target in enumerate((c.name, user_fn(lib, c))):
                err, held = judge(lambda: fastcpu.bench_diff(target, runs, cpu=cpu), c.truth_core_cycles, rounds)
                totals[i] += held
                cells.append(f"{'bound' if math.isnan(err) else f'{err:+.2f}'}, {held}/{rounds}")
            out.append(f"| {c.name} | {c.truth_core_cycles} | {cells[0]} | {cells[1]} |")
    n = (len(out) - 2) * rounds
    return out + ["", f"Held the truth: {totals[0]} of {n} inline, {totals[1]} of {n} through the user path.", ""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5, help="measurements per chain and setting (default 5)")
    p.add_argument("--runs", type=int, default=1000, help="runs per measurement (default 1000)")
    p.add_argument("--unroll", type=int, nargs="+", default=[8, 64], help="copies a run to test (default 8 64)")
    p.add_argument("--cpu", type=int, default=None, help="pin the measuring thread to this CPU")
    args = p.parse_args()
    if args.rounds < 1 or args.runs < 1 or any(u < 2 for u in args.unroll):
        p.error("--rounds and --runs must be positive, each --unroll at least 2")
    print(f"### The copy loop\n\nHost: {host_line()}; load average {load_line()}; fastcpu {fastcpu.__version__}, "
          f"serialize=lfence{'' if args.cpu is None else f', CPU {args.cpu}'}. Core cycles per copy; an error "
          "is the figure minus the truth; 'held' counts the measurements whose printed interval, or bound "
          "('< X'), held the truth; 'bound': every figure was one.\n")
    print("\n".join(loop_table(args.cpu)))
    for unroll in args.unroll:
        print("\n".join(unrolled_table(unroll, args.rounds, args.runs, args.cpu)))
    print("#### Back to back (`bench_diff(chain, runs)`)\n")
    print("\n".join(diff_table(args.rounds, args.runs, args.cpu)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
