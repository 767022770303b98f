"""How close fastcpu's figures come to the truth: the calibration chains.

Times every calibration chain (dependent `add` chains of 1 core cycle per
link, dependent `imul` chains of 3) in every serialization mode and reports,
for each estimator, the measured cost in core cycles against the truth
(length x latency). Prints Markdown; docs/accuracy.md holds a recorded run.

    python benchmarks/accuracy.py                 # about a minute
    python benchmarks/accuracy.py --rounds 20 --cpu 1

Core cycles come from a TSC figure times core cycles per TSC tick, and
without a PMU that ratio itself comes from a (long) dependent add chain, so
the add rows are partly circular: they check the harness and the estimators
(quantization, the fences, the empty-sequence subtraction) rather than the
ratio. The imul rows are the independent check, and the imul/add ratio
section needs no conversion at all. The core clock of a guest moves with
the host's load, so the ratio is re-measured around every measurement
(``fresh cpt``) rather than taken from ``fastcpu.clock()`` at first use; the
last section shows what the first-use figure would have given.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fastcpu
from fastcpu._clock import add_chain_cycles_per_tick
from fastcpu._machine import machine_info

GOAL_PERCENT = 2.0
GOAL_MIN_CYCLES = 100


BRACKET_BLOCKS = 200  # 20,000 dependent adds: ~5 us, 0.2% of the step
BRACKET_REPEATS = 7
STEADY_PERCENT = 0.5


def fresh_cpt() -> float:
    """Core cycles per TSC tick now: clock()'s add-chain method, shortened to
    about 0.3 ms so that it brackets a measurement tightly."""
    return add_chain_cycles_per_tick(BRACKET_BLOCKS, BRACKET_REPEATS)


def timed(name: str, runs: int, serialize: str, cpu: int | None) -> tuple[fastcpu.BenchResult, float, float]:
    """One default measurement, the core cycles per tick around it, and how
    far (percent) the core clock moved between the two brackets."""
    before = fresh_cpt()
    r = fastcpu.bench(name, runs, serialize=serialize, cpu=cpu)
    after = fresh_cpt()
    mean = (before + after) / 2
    return r, mean, abs(after - before) / mean * 100


def timed_diff(name: str, runs: int, serialize: str, k: int, cpu: int | None) -> tuple[fastcpu.DiffResult, float]:
    before = fresh_cpt()
    d = fastcpu.bench_diff(name, runs, k=k, serialize=serialize, cpu=cpu)
    after = fresh_cpt()
    return d, (before + after) / 2


def err(measured: float, truth: float) -> str:
    return f"{(measured / truth - 1) * 100:+.1f}%"


def mode_table(mode: str, chains: list[fastcpu.CalibrationInfo], runs: int, k: int, cpu: int | None) -> list[str]:
    out = [
        f"### serialize='{mode}'",
        "",
        "| chain | truth | best | median | estimate +-95% (estimator) | diff +-95% (k) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in chains:
        t = c.truth_core_cycles
        r, cpt, moved = timed(c.name, runs, mode, cpu)
        # about 2000 core cycles per long run at most: longer runs catch more interrupts
        ck = max(2, min(k, 1024 // t))  # bench_diff needs k >= 2
        d, dcpt = timed_diff(c.name, runs, mode, ck, cpu)
        est = r.estimate * cpt
        diff = d.estimate * dcpt
        out.append(
            f"| {c.name}{' (moved)' if moved >= STEADY_PERCENT else ''} | {t} "
            f"| {r.best * cpt:.1f} ({err(r.best * cpt, t)}) "
            f"| {r.median * cpt:.1f} ({err(r.median * cpt, t)}) "
            f"| {est:.1f} +-{r.estimate_ci95 * cpt:.1f} ({err(est, t)}, {r.estimator}) "
            f"| {diff:.2f} +-{d.estimate_ci95 * dcpt:.2f} ({err(diff, t)}, k={ck}) |"
        )
    out.append("")
    return out


def goal_check(chains: list[fastcpu.CalibrationInfo], runs: int, rounds: int, cpu: int | None) -> tuple[list[str], list[str]]:
    """Default settings (serialize='lfence', unroll=1, the recommended estimate), repeated."""
    big = [c for c in chains if c.truth_core_cycles >= GOAL_MIN_CYCLES]
    errors: dict[str, list[tuple[float, float]]] = {c.name: [] for c in big}
    stale: dict[str, list[float]] = {c.name: [] for c in big}
    cached = fastcpu.clock().cycles_per_tick
    estimates: dict[str, list[float]] = {c.name: [] for c in chains}
    for _ in range(rounds):
        for c in chains:
            r, cpt, moved = timed(c.name, runs, "lfence", cpu)
            estimates[c.name].append(r.estimate)
            if c in big:
                errors[c.name].append(((r.estimate * cpt / c.truth_core_cycles - 1) * 100, moved))
                stale[c.name].append((r.estimate * cached / c.truth_core_cycles - 1) * 100)
    out = [
        (
            f"| chain | truth | mean error | worst error | rounds within {GOAL_PERCENT:g}% "
            f"| steady rounds (clock moved < {STEADY_PERCENT:g}%): within {GOAL_PERCENT:g}%, worst "
            "| worst error with the first-use cycles/tick |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in big:
        e = [x for x, _ in errors[c.name]]
        steady = [x for x, moved in errors[c.name] if moved < STEADY_PERCENT]
        within = sum(abs(x) <= GOAL_PERCENT for x in e)
        steady_within = sum(abs(x) <= GOAL_PERCENT for x in steady)
        steady_worst = f"{max(steady, key=abs):+.2f}%" if steady else "-"
        out.append(
            f"| {c.name} | {c.truth_core_cycles} | {statistics.fmean(e):+.2f}% "
            f"| {max(e, key=abs):+.2f}% | {within}/{len(e)} "
            f"| {steady_within}/{len(steady)}, {steady_worst} | {max(stale[c.name], key=abs):+.2f}% |"
        )
    ratio = [
        "| length | estimate(imul) / estimate(add), median of rounds (truth 3) |",
        "| ---: | ---: |",
    ]
    for n in (64, 100, 128, 256, 300, 512, 1024):
        ratios = [i / a for i, a in zip(estimates[f"imul_chain_{n}"], estimates[f"add_chain_{n}"])]
        ratio.append(f"| {n} | {statistics.median(ratios):.4f} |")
    return out, ratio


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000, help="runs per measurement (default 1000, bench's default)")
    p.add_argument("--rounds", type=int, default=10, help="repetitions of the default-settings check (default 10)")
    p.add_argument("--k", type=int, default=8, help="copies of the short half of the differencing estimate, at most (default 8; fewer for long chains)")
    p.add_argument("--cpu", type=int, default=None, help="pin to this CPU (default: unpinned, like bench's default)")
    args = p.parse_args()

    chains = fastcpu.calibration_methods()
    clk = fastcpu.clock()
    info = machine_info()
    started = time.perf_counter()
    print("## Accuracy against the calibration chains")
    print()
    print(
        f"Machine: {info['model_name']} ({info['hypervisor'] or 'bare metal'}), Linux {platform.release()}, "
        f"fastcpu {fastcpu.__version__}. TSC {clk.tsc_hz / 1e6:.2f} MHz, step {clk.tsc_step_ticks:.4g} ticks; "
        f"{clk.cycles_per_tick:.4f} core cycles per tick at first use. {args.runs} runs per measurement, "
        f"{'unpinned' if args.cpu is None else f'pinned to CPU {args.cpu}'}."
    )
    print()
    print(
        "Figures in core cycles per copy (TSC ticks x core cycles per tick re-measured just before "
        "and after each measurement, averaged), error against the truth in parentheses. Each row of "
        "the mode tables is one measurement; '(moved)' marks one across which the core clock moved "
        f"by {STEADY_PERCENT:g}% or more, so its conversion to cycles is doubtful."
    )
    print()
    for mode in fastcpu.SERIALIZE_MODES:
        print("\n".join(mode_table(mode, chains, args.runs, args.k, args.cpu)))
    goal, ratio = goal_check(chains, args.runs, args.rounds, args.cpu)
    print(
        f"### Default settings, {args.rounds} rounds: chains of {GOAL_MIN_CYCLES} cycles and more "
        f"(goal: within {GOAL_PERCENT:g}%)"
    )
    print()
    print("\n".join(goal))
    print()
    print("### No conversion needed: imul chains against add chains of the same length")
    print()
    print("\n".join(ratio))
    print()
    print(f"(ran in {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
