"""fastcpu.selftest() and the harness bias: the harness checked against chains of known cost
on this host, inline and through the user-function path (csrc/usershapes.c adds bodies of other
shapes). How the bias is pooled and verified: docs/timing.md#the-self-test-what-the-harness-hides.
Figures are core cycles per copy unless a name says ticks.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping

import numpy as np

from .. import _core
from .._args import SERIALIZE_MODES, check_cpu, check_int, check_serialize
from .timebase import clock
from .._base import ForkSafeLock
from ..results.bench_result import BenchResult
from ..results.parts import HarnessBias
from .harness import bench_result, keep_bias, kept_bias, raw_runs, rulers_agree, set_verdict, timed
from ..results.selftest_report import PATHS, ChainCheck, PathCheck, SelfTest, within_goal


__all__ = [
    "selftest",
    "harness_bias",
    "residual_bias",
    "excess_scatter",
    "floor_of",
]

#: Runs per bias measurement, and passes over the chains. Each pass
#: gives a bias per instruction; the correction takes their median over the
#: passes, so one pass that an interrupt storm, a cold start or a move of
#: the core clock threw off (a first pass in a fresh process read add
#: chains +4 to +9 where later ones read +2 on the AuthenticAMD family 25 model 1 (Zen 3) host) does not
#: decide it.
BIAS_RUNS = 2000
BIAS_PASSES = 5


#: The instructions of the chains that exist inline too; the user path's
#: other shapes (csrc/usershapes.c: "mix", "memory", "branch", "apart", "frame") are
#: out-of-line functions only.
INLINE_OPS = ("add", "imul")


def _chains(path: str) -> list[tuple[str, str, float, str | int]]:
    """(name, op, truth core cycles, what bench takes) of each self-test chain: inline the add and
    imul chains; as user functions also other shapes, each its own "op" (issue 39).
    """
    return [
        (name, op, float(length * latency), name if path == "inline" else address)
        for name, op, length, latency, address in _core.user_chains()
        if path != "inline" or op in INLINE_OPS
    ]


def _chain_ticks(target: str | int, runs: int, serialize: str, cpu: int | None) -> tuple[float, float, float]:
    """(estimate, random 95% half-width) in TSC ticks, uncorrected, and the
    core cycles per TSC tick of the runs, converted inside the measurement."""
    r = timed(target, runs, serialize=serialize, unroll=1, cpu=cpu, counter="tsc")
    return r.estimate, r.estimate_ci95, r.cycles_per_tick


def residual_bias(points: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """(bias, its standard error) in TSC ticks from (truth core cycles, estimate ticks, random 95%
    half-width ticks, core cycles per tick) of chains of one instruction: the weighted mean of
    each chain's residual, each at its own clock; a chain of unknown clock is left out, and with
    none left both are NaN.
    """
    known = [p for p in points if math.isfinite(p[1]) and math.isfinite(p[3]) and p[3] > 0]
    if not known:
        return math.nan, math.nan
    r = np.array([est - truth / cpt for truth, est, _, cpt in known], dtype=np.float64)
    var = np.array([max((ci / 1.96) ** 2, 1e-6) if math.isfinite(ci) else 1.0 for _, _, ci, _ in known],
                   dtype=np.float64)
    w = 1.0 / var
    return float((w * r).sum() / w.sum()), float(math.sqrt(1.0 / w.sum()))


def excess_scatter(residuals: Mapping[str, list[float]], cis: Mapping[str, list[float]]) -> float:
    """How far one measurement of a chain strays from the next beyond its own runs' interval, as a
    standard deviation (the inputs' unit): per chain the robust spread of its residuals over the
    passes less, in quadrature, their claimed standard error; the median over chains with at
    least three passes, 0 where none has.
    """
    excess = []
    for name, values in residuals.items():
        if len(values) < 3:
            continue
        sd = _robust_sd(values)
        within = statistics.median(cis[name]) / 1.96 if cis.get(name) else 0.0
        excess.append(math.sqrt(max(0.0, sd * sd - within * within)))
    return statistics.median(excess) if excess else 0.0


def correction(op_bias: Mapping[str, tuple[float, float]],
               chain_bias: Mapping[str, float] | None = None, scatter: float = 0.0,
               unseen: bool = False) -> tuple[float, float]:
    """(bias, 95% half-width) from each op's (bias, standard error), optionally each chain's own bias
    and the :func:`excess_scatter` (one unit throughout). An op is a body's make-up: add and imul,
    and on the user path the other shapes of csrc/usershapes.c. The bias is pooled over the ops:
    their median (with two, the midpoint); the half-width is the furthest op from it or half the
    chains' spread, whichever is wider (the spread between makes, not only one make's runs: issue
    39), plus 1.96 standard errors of the pooled bias, plus 1.96 times the scatter. `unseen` (the
    user path, which times functions of makes the pool never saw): the ops' whole range rather
    than the furthest op, since such a function lies beyond the furthest make now and then.
    """
    values = [b for b, _ in op_bias.values()]
    center = statistics.median(values)
    spread = max(values) - min(values) if unseen else max(abs(v - center) for v in values)
    if chain_bias:
        spread = max(spread, (max(chain_bias.values()) - min(chain_bias.values())) / 2)
    se = math.sqrt(sum(e**2 for _, e in op_bias.values())) / len(op_bias)
    if len(values) > 2:  # a median's standard error: 1.253 times the mean's
        se *= 1.253
    return center, spread + 1.96 * se + 1.96 * scatter


def _robust_sd(values: list[float]) -> float:
    """The scatter of `values` as a standard deviation, robust to an
    outlier: 1.4826 times their median absolute deviation."""
    mid = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - mid) for v in values)


def _median_and_se(values: list[float], fallback_se: float) -> tuple[float, float]:
    """The median of `values` and its standard error (1.253 robust sigmas / sqrt(n)), else `fallback_se`."""
    mid = statistics.median(values)
    if len(values) < 3:
        return mid, fallback_se
    return mid, max(1.253 * _robust_sd(values) / math.sqrt(len(values)), fallback_se / math.sqrt(len(values)))


def _take_bias(path: str, serialize: str, runs: int, repeats: int, cpu: int | None) -> HarnessBias:
    """Time each chain of `path` `repeats` times and derive the correction (:func:`correction`)."""
    passes: dict[str, list[float]] = {}
    fit_se: dict[str, list[float]] = {}
    per_chain: dict[str, list[float]] = {}
    per_chain_ci: dict[str, list[float]] = {}
    cpts, zeros, zero_cis = [], [], []
    for _ in range(repeats):
        zero, zero_ci = _zero_ticks(path, serialize, runs, cpu)
        zeros.append(zero)
        zero_cis.append(zero_ci)
        points: dict[str, list[tuple[float, float, float, float]]] = {}
        for name, op, truth, target in _chains(path):
            est, ci, cpt = _chain_ticks(target, runs, serialize, cpu)
            points.setdefault(op, []).append((truth, est, ci, cpt))
            if math.isfinite(est) and math.isfinite(cpt) and cpt > 0:
                per_chain.setdefault(name, []).append(est - truth / cpt)
                if math.isfinite(ci):
                    per_chain_ci.setdefault(name, []).append(ci)
                cpts.append(cpt)
        for op, pts in points.items():
            b, se = residual_bias(pts)
            if math.isfinite(b):
                passes.setdefault(op, []).append(b)
                fit_se.setdefault(op, []).append(se)
    zero, zero_se = _median_and_se(zeros, statistics.median(zero_cis) / 1.96)
    if not passes:  # no chain's clock known: no bias to subtract, and HarnessBias.at says so
        return HarnessBias(math.nan, math.nan, {}, math.nan, time.monotonic(), zero, 1.96 * zero_se)
    op_bias = {op: _median_and_se(values, statistics.median(fit_se[op])) for op, values in passes.items()}
    chain_bias = {name: _median_and_se(v, statistics.median(per_chain_ci.get(name) or [math.nan]) / 1.96)
                  for name, v in per_chain.items()}
    chains = {name: b for name, (b, _) in chain_bias.items()}
    scatter = excess_scatter(per_chain, per_chain_ci)
    bias, ci = correction(op_bias, chains, scatter, unseen=path == "user")
    cpt = statistics.median(cpts)
    chain_ci = {name: 1.96 * se for name, (_, se) in chain_bias.items()}
    truths = {name: truth / cpt for name, _, truth, _ in _chains(path)}
    # the floor is judged against the makes' interval alone: the chains' spread, which a hidden
    # chain widens, would hide it
    ops_ci = correction(op_bias, None, scatter, unseen=path == "user")[1]
    return HarnessBias(bias, ci, {op: b for op, (b, _) in op_bias.items()}, cpt, time.monotonic(), zero,
                       1.96 * zero_se, chains, chain_ci, floor_ticks=floor_of(truths, chains, chain_ci, bias, ops_ci))


def floor_of(truths: Mapping[str, float], chain_bias: Mapping[str, float], chain_ci: Mapping[str, float],
             bias: float, ci: float) -> float:
    """What a body the harness hides whole reads once corrected (0: none seen), in the unit of the
    arguments (chain -> truth, its bias and 95% half-width; the pooled bias and the makes' half-width).

    A chain that reads above the pooled bias by more than both half-widths is one the harness
    hid in part: a body up to its length reads about as it does, the correction only moving
    it (on an AuthenticAMD family 26 model 2 guest about 1 fresh process in 100 read the user
    path's chains 7 core cycles below the truth but its 16-add chain 4, and then 5- and 9-cycle
    functions 17.7 +- 2.9). Its corrected reading and half-width is then the floor."""
    floor = 0.0
    for name, b in chain_bias.items():
        half = chain_ci.get(name, math.inf)
        if name in truths and b - bias > half + ci:
            floor = max(floor, truths[name] + b - bias + half)
    return floor


def _zero_ticks(path: str, serialize: str, runs: int, cpu: int | None) -> tuple[float, float]:
    """(zero, random 95% half-width) in TSC ticks: a body of no cost timed through `path`, uncorrected."""
    target: str | int = "empty" if path == "inline" else _core.user_empty()
    r = timed(target, runs, serialize=serialize, unroll=1, cpu=cpu, counter="tsc")
    ci = r.estimate_random_ci95
    return r.estimate, ci if math.isfinite(ci) else 0.0


#: One lock per path, held while a first bench() measures that path's bias:
#: the user path's queues behind any user function being measured (one that
#: spins until its timeout), and the inline path's never waits on it.
_lock = ForkSafeLock("the inline path's harness bias (a first bench() of a catalog method, or selftest())")
_user_lock = ForkSafeLock("the user path's harness bias (a first bench() of a user function, or selftest())")


def _lock_of(path: str) -> ForkSafeLock:
    return _user_lock if path == "user" else _lock


def harness_bias(path: str, serialize: str, cpu: int | None = None) -> HarnessBias:
    """The harness bias for `path` (``'inline'`` or ``'user'``) in `serialize` mode: the one
    ``harness.kept_bias`` holds (at most ``CORRECTION_MAX_AGE_S`` old, or after a failed
    :func:`selftest` there, with ``why_not`` saying why bench() does not subtract it), else
    measured now pinned to `cpu` and kept.
    """
    known = kept_bias(path, serialize)
    if known is None:
        with _lock_of(path):
            known = kept_bias(path, serialize)
            if known is None:
                known = _take_bias(path, serialize, BIAS_RUNS, BIAS_PASSES, cpu)
                keep_bias(path, serialize, known)
    return known


def _as_bench_corrects(target: str | int, runs: int, serialize: str, cpu: int | None, path: str) -> BenchResult:
    """What bench() returns for single copies on the TSC (``timing.timed_corrected``, which imports
    this module): the runs corrected by :func:`harness_bias` where their rulers agree."""
    raw = raw_runs(target, runs=runs, serialize=serialize, copies=1, diff=False, counter="tsc", cpu=cpu)
    bias = harness_bias(path, serialize, cpu) if rulers_agree(raw) else None
    return bench_result(raw, serialize=serialize, unroll=1, bias=bias, corrected=True)


def selftest(
    *,
    runs: int = 1000,
    rounds: int = 6,
    serialize: tuple[str, ...] | str | None = None,
    paths: tuple[str, ...] = PATHS,
    cpu: int | None = None,
    progress: Callable[[int, int, str | None], None] | None = None,
) -> SelfTest:
    """Measure the harness's bias on this host and check the accuracy goals.

    See docs/timing.md#the-self-test-what-the-harness-hides.

    Args:
        runs: runs per verification measurement (``bench()``'s default, 1000).
        rounds: verification measurements per chain.
        serialize: the modes to test and judge (default ``'lfence'``; pass
            ``fastcpu.limits.SERIALIZE_MODES`` for every mode: ``'cpuid'`` takes seconds on a
            guest; see :attr:`SelfTest.judged`).
        paths: ``'inline'``, ``'user'`` or both.
        cpu: pin to this CPU while measuring.
        progress: ``progress(done, total, step)``, called before each step and once at the end
            with ``step`` ``None``.

    Returns:
        A :class:`SelfTest`; ``passed`` says whether every goal held. :func:`fastcpu.bench` uses
        its corrections from then on in this process, except on a path and mode whose goals
        failed (``BenchResult.caveats`` says so). While the rulers disagree nothing is measured
        (``SelfTest.problem`` says why).
    """
    runs = check_int("runs", runs, 10, 10**6)
    rounds = check_int("rounds", rounds, 1, 1000)
    judged: tuple[str, ...]
    modes: tuple[str, ...]
    if serialize is None:  # not cpuid: a VM exit per read on a guest takes seconds (7-10 s on KVM)
        modes = judged = ("lfence",)
    elif isinstance(serialize, str):
        modes = judged = (check_serialize(serialize),)
    elif isinstance(serialize, (tuple, list)):
        modes = judged = tuple(check_serialize(m) for m in serialize)
    else:
        raise TypeError(f"serialize must be a str, a tuple of them or None, not {type(serialize).__name__}")
    if not modes:
        raise ValueError("serialize must name at least one mode (or be None: 'lfence')")
    if not isinstance(paths, (tuple, list)):
        raise TypeError(f"paths must be a tuple of 'inline' and/or 'user', not {type(paths).__name__}")
    if not paths:
        raise ValueError("paths must hold 'inline', 'user' or both: a self-test of nothing passes nothing")
    for p in paths:
        if p not in PATHS:
            raise ValueError(f"unknown path {p!r}: use 'inline' or 'user'")
    if cpu is not None:
        check_cpu(cpu)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None, not {type(progress).__name__}")
    total = sum(1 + len(_chains(path)) for _ in modes for path in paths)
    done = 0

    def step(name: str | None) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, name)
        done += 1

    t0 = time.monotonic()
    problem = clock().core_cycles_problem
    if problem:  # no truth in core cycles to check against
        step(None)
        return SelfTest((), runs, rounds, time.monotonic() - t0, judged=judged, problem=problem)
    checks = []
    for mode in modes:
        for path in paths:
            step(f"{mode} {path} bias")
            known = _take_bias(path, mode, BIAS_RUNS, BIAS_PASSES, cpu)
            with _lock_of(path):
                keep_bias(path, mode, known)
            bias, bias_ci = known.core_cycles()
            op_bias = {op: b * known.cycles_per_tick for op, b in known.op_bias_ticks.items()}
            zero, zero_ci = known.zero_ticks * known.cycles_per_tick, known.zero_ci95_ticks * known.cycles_per_tick
            rows, apart, hops, placed, slowdowns = [], [], 0, 0, 0
            for name, _op, truth, target in _chains(path):
                step(f"{mode} {path} {name}")
                errors, conversion, covered = [], [], 0
                for _ in range(rounds):
                    # what bench() prints: corrected as it corrects (the
                    # correction above or, past its age, measured again, at
                    # this measurement's clock), with its interval (random,
                    # conversion and correction)
                    r = _as_bench_corrects(target, runs, mode, cpu, path)
                    err = r.estimate_core_cycles - truth
                    errors.append(err)
                    conversion.append(truth * r.cycles_per_tick_ci95 / r.cycles_per_tick)
                    covered += abs(err) <= r.estimate_ci95_core_cycles
                    if r.clock_motion is not None:
                        apart.append(r.clock_motion.rulers_disagree_percent)
                        hops += r.clock_motion.hops
                        placed += r.clock_motion.hops_located
                        slowdowns += r.clock_motion.slowdowns
                mid = statistics.median(errors)
                rows.append(ChainCheck(name, truth, mid, rounds, within_goal(mid, truth, path), covered,
                                       statistics.median(conversion),
                                       known.chain_bias_ticks.get(name, math.nan) * known.cycles_per_tick,
                                       known.chain_bias_ci95_ticks.get(name, math.nan) * known.cycles_per_tick,
                                       path))
            check = PathCheck(path, mode, bias, bias_ci, op_bias, tuple(rows), zero, zero_ci,
                              statistics.median(apart) if apart else 0.0, hops, placed, slowdowns)
            checks.append(check)
            with _lock_of(path):
                set_verdict(path, mode, "" if check.passed else (
                    f"no harness correction applied: the self-test failed the {path} path's goals "
                    f"with serialize={mode!r} ({'; '.join(check.failures())})"))
    step(None)
    return SelfTest(tuple(checks), runs, rounds, time.monotonic() - t0, judged=judged)
