"""Do the printed intervals hold from one fresh process to the next?

Issue 26's goals are per process: what a harness adds can move between
processes (code placement, the counter's phase, the other CPU's load), and a
process sees only its own. So this starts N fresh interpreters, each of
which runs what a user runs first, ``bench(chain, 1000)`` on the known-cost
chains and ``bench('empty', 1000)``, and counts per chain the processes whose
printed 95% interval holds the truth, and those whose 'empty' holds 0.
``--busy`` keeps the other CPUs busy (a spinning process per CPU but one)
while it runs. Prints Markdown with the host named; docs/accuracy.md keeps
recorded runs.

    python benchmarks/fresh_processes.py              # 10 processes, a minute
    python benchmarks/fresh_processes.py -n 20 --busy
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from host import host_line, load_line
from printed import holds as printed_holds

CHAINS = ("add_chain_4", "add_chain_16", "add_chain_64", "add_chain_128",
          "imul_chain_4", "imul_chain_16", "imul_chain_64")

#: What each fresh process runs: the figures its results print, as JSON.
CHILD = r"""
import json, sys
import fastcpu
truths = {c.name: c.truth_core_cycles for c in fastcpu.chain_methods()}
out = {}
for name in sys.argv[1:]:
    r = fastcpu.bench(name, 1000)
    truth = truths.get(name, 0)  # 'empty' costs nothing
    out[name] = dict(truth_core_cycles=truth, estimate_core_cycles=r.estimate_core_cycles,
                     ci95_core_cycles=r.estimate_ci95_core_cycles, resolved=r.resolved,
                     upper_core_cycles=r.upper_bound_core_cycles, text=r.cost_text(),
                     estimate_ticks=r.estimate, ci95_ticks=r.estimate_ci95,
                     resolution_core_cycles=r.harness_resolution_core_cycles,
                     hops=getattr(r.clock_motion, "hops", 0))
print(json.dumps(out))
"""


def _spin() -> None:
    while True:
        pass


def run(n: int, busy: bool) -> list[dict]:
    spinners = []
    if busy:
        for _ in range(max((os.cpu_count() or 1) - 1, 1)):
            p = multiprocessing.Process(target=_spin, daemon=True)
            p.start()
            spinners.append(p)
    try:
        got = []
        for _ in range(n):
            p = subprocess.run([sys.executable, "-c", CHILD, "empty", *CHAINS],
                               capture_output=True, text=True, timeout=600, check=True)
            got.append(json.loads(p.stdout.strip().splitlines()[-1]))
        return got
    finally:
        for p in spinners:
            p.terminate()


def holds(row: dict) -> bool:
    """Whether the printed figure of a child's `row` holds the truth
    (``printed.holds``: an interval around the estimate, or, for an
    unresolved cost, the bound above 0)."""
    shown = SimpleNamespace(resolved=row["resolved"], estimate_core_cycles=row["estimate_core_cycles"],
                            estimate_ci95_core_cycles=row["ci95_core_cycles"],
                            upper_bound_core_cycles=row["upper_core_cycles"])
    return printed_holds(shown, row["truth_core_cycles"])


def report(got: list[dict], busy: bool) -> None:
    print(f"### {len(got)} fresh processes, other CPUs {'busy' if busy else 'idle'}")
    print(f"host: {host_line()}; load average {load_line()}\n")
    print("| chain | truth (core cycles) | estimates, core cycles (min / median / max) | 95% interval holds truth "
          "| unresolved (shown as < X) |")
    print("| --- | ---: | --- | ---: | ---: |")
    for name in ("empty", *CHAINS):
        rows = [g[name] for g in got]
        est = sorted(r["estimate_core_cycles"] for r in rows)
        held = sum(holds(r) for r in rows)
        unresolved = sum(not r["resolved"] for r in rows)
        print(f"| {name} | {rows[0]['truth_core_cycles']} | {est[0]:.2f} / {est[len(est) // 2]:.2f} / {est[-1]:.2f} "
              f"| {held} of {len(rows)} ({held / len(rows):.0%}) | {unresolved} |")
    zero = [g["empty"] for g in got]
    print("\n'empty' (the harness's zero) in ticks: "
          + ", ".join(f"{r['estimate_ticks']:+.2f} +- {r['ci95_ticks']:.2f}" for r in zero))
    print("resolution (core cycles) per process: " + ", ".join(f"{r['resolution_core_cycles']:.2f}" for r in zero))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=10, help="fresh processes (default 10)")
    p.add_argument("--busy", action="store_true", help="keep the other CPUs busy meanwhile")
    p.add_argument("--idle-and-busy", action="store_true",
                   help="-n processes with the other CPUs idle, then -n with them busy: both tables, one record")
    p.add_argument("--record", metavar="DIR", help="also write the printed tables as a JSON record into DIR (benchmarks/records/; docs/reports.py renders them)")
    args = p.parse_args()
    if args.record:
        from record import start

        start(args.record, "fresh_processes")
    for busy in ((False, True) if args.idle_and_busy else (args.busy,)):
        report(run(args.n, busy), busy)


if __name__ == "__main__":
    main()
