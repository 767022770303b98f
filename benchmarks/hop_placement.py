"""Does placing a hop by the runs convert a stretch better than its midpoint?

Since fastcpu 0.8.6 a stretch of runs that the core clock hopped in (its
two ruler points at different levels) is converted apart: the runs' ticks
step by the ratio of the two levels where the clock hopped, so each side is
converted at its own level (csrc/conversion.c). Before, the whole stretch
was converted at the midpoint of the two levels, half their gap in the
interval. This times one known-cost chain many times, exactly as bench()
does (the C core's measurement with its ruler points), and for every
measurement the clock hopped in converts it both ways: with its runs (the
product's conversion) and from its points alone (the midpoint). It reports
each way's error against the truth, less the harness's own error (the
median error of the measurements without a hop, converted at a level that
held), and how often each way's interval held that.

    python benchmarks/hop_placement.py                        # 4,000 measurements, about 2 s
    python benchmarks/hop_placement.py -n 20000 --cpu 1 --chain add_chain_128

Prints Markdown with the host named; docs/accuracy.md keeps recorded runs.
On a host whose clock held still nothing hopped, and it says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fastcpu
from fastcpu import _core
from fastcpu.instrument import timebase as _conversion
from fastcpu.results.estimate import paired_mean
from host import host_line, load_line

#: How a measurement's level changes were converted: its kind's label.
KINDS = {"placed": "a hop, placed by the runs", "midpoint": "a hop the runs did not show",
         "slowdown": "a slowdown (the rulers moved apart, or the body held: not a hop)"}


def measure(chain: str, runs: int, n: int, cpu: int | None) -> tuple[list[tuple[float, float]], list[tuple]]:
    """(error, half-width) in core cycles of the measurements whose level held, and per
    measurement with a hop or a slowdown: (kind, error as converted, its
    half-width, error at the midpoint, its half-width), half-widths random
    and conversion."""
    truth = next(c.truth_core_cycles for c in fastcpu.chain_methods() if c.name == chain)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    rulers = _conversion.rulers()
    tolerance, resolution = rulers[5:]
    step_ticks = fastcpu.clock().tsc_step_ticks
    steady, hopped = [], []
    for _ in range(n):
        m = _core.time_runs(chain, runs=runs, serialize="lfence", copies=1, diff=False, counter="tsc",
                          rulers=rulers)
        c = m.conversion
        if c is None or not np.isfinite(c.cycles_per_tick):
            continue
        est = paired_mean(m.a, m.b, step_ticks)  # bench()'s own estimator, in TSC ticks
        ticks, half = est.ticks, est.ci95_ticks
        if c.hops == 0 and c.slowdowns == 0:
            steady.append((ticks * c.cycles_per_tick - truth, half * c.cycles_per_tick + ticks * c.ci95))
            continue
        blind = _core.convert(m.points, tolerance, resolution)  # the points alone
        row: list = ["placed" if c.hops_located else "midpoint" if c.hops else "slowdown"]
        for conv in (c, blind):
            row += [ticks * conv.cycles_per_tick - truth, half * conv.cycles_per_tick + ticks * conv.ci95]
        hopped.append(tuple(row))
    return steady, hopped


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=4000, help="measurements (default 4000)")
    p.add_argument("--runs", type=int, default=1000, help="runs per measurement (default 1000, bench's default)")
    p.add_argument("--chain", default="imul_chain_64", help="the known-cost chain (default imul_chain_64)")
    p.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    args = p.parse_args()
    if args.n < 1 or args.runs < 100:
        p.error("-n must be at least 1 and --runs at least 100")
    if args.chain not in {c.name for c in fastcpu.chain_methods()}:
        p.error(f"--chain must name a known-cost chain (fastcpu.chain_methods()), not {args.chain!r}")
    before = load_line()
    steady, hopped = measure(args.chain, args.runs, args.n, args.cpu)
    print(f"### A hop placed by the runs, or converted at the midpoint: {args.chain}\n")
    print(f"Host: {host_line()}; load average {before} before. fastcpu {fastcpu.__version__}, "
          f"{args.n} measurements of {args.runs} runs, serialize=lfence"
          f"{f', CPU {args.cpu}' if args.cpu is not None else ''}.\n")
    if not steady:
        print("Every measurement saw a hop: no steady measurement to take the harness's own error from.")
        return
    ref = statistics.median(e for e, _ in steady)
    counts = {k: sum(1 for h in hopped if h[0] == k) for k in KINDS}
    print(f"{len(steady)} measurements saw the level hold (the harness's own error, their median: {ref:+.2f} "
          f"core cycles); {counts['placed'] + counts['midpoint']} saw a hop, {counts['placed']} of them placed by "
          f"their runs; {counts['slowdown']} saw a slowdown.\n")
    if not hopped:
        print("The clock held still through every measurement: nothing to compare.")
        return
    print("| measurements with | how converted | n | error - harness's own, median | its spread (sd) "
          "| interval half-width, median | interval holds it |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    err, half = [e - ref for e, _ in steady], [h for _, h in steady]
    held = sum(abs(e) <= h for e, h in zip(err, half))
    print(f"| the level held (the baseline) | fastcpu's | {len(steady)} | {statistics.median(err):+.2f} | "
          f"{statistics.pstdev(err):.2f} | {statistics.median(half):.2f} | {held} of {len(steady)} "
          f"({held / len(steady):.0%}) |")
    for kind, label in KINDS.items():
        rows = [h for h in hopped if h[0] == kind]
        if not rows:
            continue
        for way, at in (("fastcpu's", 1), ("the midpoint", 3)):
            err = [r[at] - ref for r in rows]
            half = [r[at + 1] for r in rows]
            held = sum(abs(e) <= h for e, h in zip(err, half))
            sd = statistics.pstdev(err) if len(err) > 1 else 0.0
            print(f"| {label} | {way} | {len(rows)} | {statistics.median(err):+.2f} | {sd:.2f} | "
                  f"{statistics.median(half):.2f} | {held} of {len(rows)} ({held / len(rows):.0%}) |")
    print(f"\n(core cycles; load average {load_line()} after)")


if __name__ == "__main__":
    main()
