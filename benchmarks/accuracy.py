"""How close fastcpu's figures come to the truth: the known-cost chains.

Times every known-cost chain (dependent register-register `add` chains of
1 core cycle per link, dependent `imul` chains of 3) in every serialization mode, inline
(``bench('add_chain_8')``) and as user functions (the same chains compiled
here with the C compiler into a shared library, benchmarks/user_chains.c,
and timed through ``bench(ctypes_function)``), and reports each estimate in
core cycles against the truth (length x latency), with the host named.
Prints Markdown; docs/accuracy.md holds recorded runs, one section per host.

    python benchmarks/accuracy.py                 # a minute or two
    python benchmarks/accuracy.py --rounds 20 --cpu 1

Every ``bench()`` converts ticks to core cycles inside its own runs: ruler
points between stretches of runs, each a dependent register-register add
chain and an imul chain that check each other (fastcpu/_conversion.py), and
corrects its single-copy estimate by the harness bias that
:func:`fastcpu.selftest` measured on this host (printed first). Without a
PMU the conversion itself comes from those two chains, so the add and imul
rows are partly circular: they check the harness and the estimators more
than the conversion. The imul/add ratio section needs no conversion at all.
The goal sections repeat the default settings and count
the measurements within the goal and those whose printed figure holds the
truth (coverage): the 95% interval of a resolved cost, the bound ("< X") of
one below what the harness resolves (benchmarks/printed.py).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fastcpu
from cbuild import compile_c
from host import host_line, load_line
from printed import holds
from fastcpu.results.selftest_report import GOAL_COVERAGE, within_goal

STEADY_PERCENT = 0.5


def build_user_chains(directory: str) -> ctypes.CDLL:
    return ctypes.CDLL(compile_c("user_chains.c", os.path.join(directory, "libuserchains.so"), "-shared", "-fPIC"))


def user_fn(lib: ctypes.CDLL, chain: fastcpu.types.ChainInfo) -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    fn = getattr(lib, f"user_{chain.name}")
    fn.restype = ctypes.c_uint
    fn.argtypes = []
    fn.__name__ = f"user_{chain.name}"
    return fn


def err(measured: float, truth: float) -> str:
    return f"{(measured / truth - 1) * 100:+.1f}%"


def moved(r: fastcpu.BenchResult) -> bool:
    """Whether the core clock moved by STEADY_PERCENT or more across the measurement."""
    return r.cycles_per_tick_ci95 / r.cycles_per_tick * 100 >= STEADY_PERCENT


def mode_table(mode: str, chains: list[fastcpu.types.ChainInfo], target, runs: int, k: int,
               cpu: int | None) -> list[str]:
    out = [
        "| chain | truth | best | median | estimate +-95% (estimator) | diff +-95% (k) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in chains:
        t = c.truth_core_cycles
        r = fastcpu.bench(target(c), runs, serialize=mode, cpu=cpu)
        cpt = r.cycles_per_tick
        ck = max(2, min(k, 1024 // t))  # about 2000 core cycles per long run at most
        d = fastcpu.bench_diff(target(c), runs, k=ck, serialize=mode, cpu=cpu)  # bracketed too
        est = r.estimate_core_cycles
        diff = d.estimate_core_cycles
        out.append(
            f"| {c.name}{' (moved)' if moved(r) else ''} | {t} "
            f"| {r.best * cpt:.1f} ({err(r.best * cpt, t)}) "
            f"| {r.median * cpt:.1f} ({err(r.median * cpt, t)}) "
            f"| {est:.1f} +-{r.estimate_ci95_core_cycles:.1f} ({err(est, t)}, {r.estimator}) "
            f"| {diff:.2f} +-{d.estimate_ci95_core_cycles:.2f} ({err(diff, t)}, k={ck}) |"
        )
    out.append("")
    return out


def goal_rows(path: str, chains: list[fastcpu.types.ChainInfo], target, runs: int, rounds: int,
              cpu: int | None, floor: float = 0.0
              ) -> tuple[list[str], dict[str, list[float]], tuple[int, int, int, int]]:
    """Default settings, `rounds` times: per chain, mean and worst error in
    core cycles, rounds within the goal, coverage of the printed figure
    (an interval, or the bound of a cost below resolution).
    Chains shorter than `floor` (the user path's call-and-return floor, core
    cycles, from the self-test) are shown but not judged: they read as the
    floor, and bench_diff() measures them."""
    errors: dict[str, list[float]] = {c.name: [] for c in chains}
    covered: dict[str, int] = {c.name: 0 for c in chains}
    estimates: dict[str, list[float]] = {c.name: [] for c in chains}
    for _ in range(rounds):
        for c in chains:
            r = fastcpu.bench(target(c), runs, cpu=cpu)
            e = r.estimate_core_cycles - c.truth_core_cycles
            errors[c.name].append(e)
            covered[c.name] += holds(r, c.truth_core_cycles)  # as printed: an interval, or a bound
            estimates[c.name].append(r.estimate)
    out = [
        "| chain | truth | mean error | worst error | rounds within the goal | interval or bound holds the truth |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    chains_ok = total_cover = judged = 0
    for c in chains:
        e = errors[c.name]
        mean = statistics.fmean(e)
        below = c.truth_core_cycles < floor
        ok = within_goal(mean, c.truth_core_cycles, path)
        if not below:
            judged += 1
            chains_ok += ok
            total_cover += covered[c.name]
        within = sum(within_goal(x, c.truth_core_cycles, path) for x in e)
        mark = f" (below the floor of {floor:.1f}: not judged)" if below else "" if ok else " (goal missed)"
        out.append(
            f"| {c.name} | {c.truth_core_cycles} | {mean:+.2f}{mark} "
            f"| {max(e, key=abs):+.2f} | {within}/{len(e)} | {covered[c.name]}/{len(e)} |"
        )
    return out, estimates, (chains_ok, judged, total_cover, rounds * judged)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000, help="runs per measurement (default 1000, bench's default)")
    p.add_argument("--rounds", type=int, default=10, help="repetitions of the default-settings check (default 10)")
    p.add_argument("--k", type=int, default=8, help="copies of the short half of the differencing estimate, at most (default 8; fewer for long chains)")
    p.add_argument("--cpu", type=int, default=None, help="pin to this CPU (default: unpinned, like bench's default)")
    p.add_argument("--record", metavar="DIR", help="also write the printed tables as a JSON record into DIR (benchmarks/records/; docs/reports.py renders them)")
    args = p.parse_args()
    if args.record:
        from record import start

        start(args.record, "accuracy")

    chains = fastcpu.chain_methods()
    clk = fastcpu.clock()
    started = time.perf_counter()
    load_before = load_line()
    with tempfile.TemporaryDirectory() as d:
        lib = build_user_chains(d)
        paths = {"inline": lambda c: c.name, "user": lambda c: user_fn(lib, c)}
        print("## Accuracy against the known-cost chains")
        print()
        print(
            f"Host: {host_line()}. fastcpu {fastcpu.__version__}. TSC {clk.tsc_hz / 1e6:.2f} MHz; "
            f"at first use {clk.ruler_words()}. "
            f"{args.runs} runs per measurement, {'unpinned' if args.cpu is None else f'pinned to CPU {args.cpu}'}."
        )
        print()
        st = fastcpu.selftest(serialize=fastcpu.limits.SERIALIZE_MODES, cpu=args.cpu)  # every mode it times
        print("```")
        print(st)
        print("```")
        print()
        print(
            "Figures in core cycles per copy (bench()'s own conversion: add and imul ruler points "
            "inside its runs), error against the truth in parentheses; estimates corrected by the self-test's "
            "bias, their interval the random, conversion and correction parts together. Each row of the "
            "mode tables is one measurement; '(moved)' marks one across which the core clock moved by "
            f"{STEADY_PERCENT:g}% or more. 'user' rows time the chains compiled as a user's shared library "
            "(benchmarks/user_chains.c) through bench(ctypes function)."
        )
        print()
        for mode in fastcpu.limits.SERIALIZE_MODES:
            for path, target in paths.items():
                print(f"### serialize='{mode}', {path}")
                print()
                print("\n".join(mode_table(mode, chains, target, args.runs, args.k, args.cpu)))
        summary = []
        estimates = {}
        floor = next((c.floor_core_cycles for c in st.checks if c.path == "user" and c.serialize == "lfence"), 0.0)
        for path, target in paths.items():
            rows, estimates[path], (ok, n, cover, total) = goal_rows(
                path, chains, target, args.runs, args.rounds, args.cpu, floor if path == "user" else 0.0)
            goal = ("+-1.5 core cycles, or 1% where wider from 100 cycles on" if path == "inline"
                    else f"+-2 core cycles, or 2% where wider from 100 cycles on, from the self-test's "
                         f"call-and-return floor of {floor:.1f} core cycles on")
            print(f"### Default settings, {path}, {args.rounds} rounds (goal: mean error within {goal}; "
                  f"interval, or bound below resolution, holding the truth in {GOAL_COVERAGE:.0%})")
            print()
            print("\n".join(rows))
            print()
            summary.append(f"- {path}: {ok} of {n} chains{' from the floor on' if path == 'user' else ''} within "
                           f"the goal; the printed interval or bound held the truth in {cover} of {total} measurements "
                           f"({cover / total:.0%})")
        print("### Summary")
        print()
        print("\n".join(summary))
        print()
        print("### No conversion needed: imul chains against add chains of the same length (inline)")
        print()
        print("| length | estimate(imul) / estimate(add), median of rounds (truth 3) |")
        print("| ---: | ---: |")
        for n in (64, 100, 128, 256, 300, 512, 1024):
            ratios = [i / a for i, a in zip(estimates["inline"][f"imul_chain_{n}"], estimates["inline"][f"add_chain_{n}"])]
            print(f"| {n} | {statistics.median(ratios):.4f} |")
        print()
        print(f"(ran in {time.perf_counter() - started:.0f} s; load average {load_before} before, "
              f"{load_line()} after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
