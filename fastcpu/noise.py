"""A noise model of single-shot timing: what each estimator recovers (TSC ticks throughout).

One run of ``unroll`` copies of a sequence costing ``c`` TSC ticks a copy lasts
``D = overhead + max(0, unroll * c - shadow) + jitter + interrupt`` and reads as
``step * floor((phase + D) / step)`` with a random phase; the mean is unbiased
where best and median stick to the step (docs/timing.md, "Below the clock's
step"). :func:`fit_p4_regime` fits the P4 regime's shadow to published figures."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ._args import RUNS_MAX, UNROLL_MAX, check_int, plain_int, plain_number
from .results.values import Clock
from .results.statistics import STATISTICS, statistic
from .results.bench_result import BenchResult
from .results.estimated import Estimated


__all__ = [
    "NoiseModel",
    "REGIMES",
    "RECOVERY_ESTIMATORS",
    "estimates",
    "mean_ticks",
    "paired_mean_ticks",
    "unroll_difference",
    "recovery",
    "P4Figure",
    "P4_FIT_FIGURES",
    "P4_HELD_OUT_FIGURES",
    "SEED_IN_USE_CORE_CYCLES",
    "SEED_PROPOSED_CORE_CYCLES",
    "p4_shadow_interval",
    "fit_p4_regime",
    "p4_held_out",
    "SHADOW_VERDICTS",
    "cost_interval_ticks",
    "shadow_verdict",
]


def _check_result(name: str, value: object) -> BenchResult:
    if not isinstance(value, BenchResult):
        raise TypeError(f"{name} must be a fastcpu.BenchResult, not {type(value).__name__}")
    return value


def _rng(seed: object) -> np.random.Generator:
    """numpy's generator for `seed` (an int, a Generator or None)."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = plain_int("seed", seed)
    return np.random.default_rng(seed)  # type: ignore[arg-type]


@dataclass(frozen=True)
class NoiseModel:
    """How a true cost becomes observed TSC ticks (the module docstring's formula).

    Attributes:
        step_ticks: the counter's granularity, TSC ticks (>= 1, not necessarily whole).
        overhead_ticks: mean duration of the empty sequence, TSC ticks.
        jitter_ticks: standard deviation of each run's duration, TSC ticks.
        interrupt_rate: probability that a run absorbs an interrupt (0..1).
        interrupt_ticks: mean extra TSC ticks of an interrupted run.
        shadow_ticks: work hidden under a slow timer read, TSC ticks."""

    step_ticks: float = 1
    overhead_ticks: float = 60.0
    jitter_ticks: float = 0.0
    interrupt_rate: float = 0.0
    interrupt_ticks: float = 0.0
    shadow_ticks: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = plain_number(f.name, getattr(self, f.name))  # a subclass's comparisons may lie
            object.__setattr__(self, f.name, value)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{f.name} must be a finite number >= 0, not {value}")
        if not 1 <= self.step_ticks <= 1 << 32:
            raise ValueError(f"step_ticks must be between 1 and {1 << 32} TSC ticks (the counter's step, "
                             f"whole or not), not {self.step_ticks}")
        if self.interrupt_rate > 1:
            raise ValueError(f"interrupt_rate is a probability: 0 to 1, not {self.interrupt_rate}")

    def durations(self, work_ticks: float, runs: int, rng: np.random.Generator) -> np.ndarray:
        """Real-time duration of each run, TSC ticks (float), before quantization."""
        runs = check_int("runs", runs, 1, RUNS_MAX)
        d = np.full(runs, self.overhead_ticks + max(0.0, work_ticks - self.shadow_ticks))
        if self.jitter_ticks > 0:
            d += rng.normal(0.0, self.jitter_ticks, runs)
        if self.interrupt_rate > 0 and self.interrupt_ticks > 0:
            hit = rng.random(runs) < self.interrupt_rate
            d[hit] += rng.exponential(self.interrupt_ticks, int(hit.sum()))
        return np.maximum(d, 0.0)

    def observe(self, durations: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """What the counter shows for each duration, as uint64 TSC ticks (a fractional step reads as either neighbouring tick)."""
        phase = rng.random(durations.size) * self.step_ticks
        steps = np.floor((phase + durations) / self.step_ticks)
        return np.floor(steps * self.step_ticks + rng.random(durations.size)).astype(np.uint64)

    def simulate(
        self,
        true_ticks: float,
        runs: int = 1000,
        *,
        unroll: int = 1,
        seed: int | np.random.Generator | None = None,
        clock: Clock | None = None,
        method: str = "model",
    ) -> BenchResult:
        """Simulate ``bench`` of a sequence truly costing `true_ticks` TSC ticks per copy (>= 0).

        Args:
            runs, unroll: 1 to ``RUNS_MAX``; 1 to ``UNROLL_MAX``.
            seed: a seed or numpy Generator; clock: default 1 GHz, 1 core cycle a tick.
            method: the name the result carries.

        Returns a :class:`fastcpu.BenchResult` like a real one."""
        true_ticks = plain_number("true_ticks", true_ticks)
        if not (math.isfinite(true_ticks) and true_ticks >= 0):
            raise ValueError(f"true_ticks must be a finite number >= 0, not {true_ticks}")
        runs = check_int("runs", runs, 1, RUNS_MAX)
        unroll = check_int("unroll", unroll, 1, UNROLL_MAX)
        if self.overhead_ticks + unroll * true_ticks + self.step_ticks >= 2.0**62:
            raise ValueError(f"a run of {unroll} x {true_ticks} ticks overflows the simulated "
                             "64-bit counter: give a smaller true_ticks or unroll")
        if clock is not None and not isinstance(clock, Clock):
            raise TypeError(f"clock must be a fastcpu.Clock or None, not {type(clock).__name__}")
        if not isinstance(method, str):
            raise TypeError(f"method must be a str (the name the result carries), not {type(method).__name__}")
        rng = _rng(seed)
        raw = self.observe(self.durations(unroll * true_ticks, runs, rng), rng)
        empty = self.observe(self.durations(0.0, runs, rng), rng)
        return BenchResult.from_arrays(
            method=method,
            serialize="model",
            unroll=unroll,
            cpu=None,
            raw=raw,
            empty=empty,
            migrated=np.zeros(runs, np.bool_),
            clock=clock or Clock(tsc_hz=1e9, tsc_step_ticks=self.step_ticks, cycles_per_tick=1.0),
        )

    @classmethod
    def fit(cls, result: BenchResult) -> NoiseModel:
        """A model of the harness fitted to the empty-sequence runs of a real result.

        Runs above the median by more than ``max(2 * step, 5 * 1.4826 * MAD,
        median)`` count as interrupted (their share and mean excess); the rest give
        the overhead (their mean) and the jitter (their variance less the
        quantization's). The shadow cannot be seen: 0."""
        empty = _check_result("result", result).empty.astype(np.float64)
        step = float(result.step)
        median = float(np.median(empty))
        mad = float(np.median(np.abs(empty - median)))
        cut = median + max(2.0 * step, 5 * 1.4826 * mad, median)
        body, tail = empty[empty <= cut], empty[empty > cut]
        overhead = float(body.mean())
        f = overhead / step - math.floor(overhead / step)
        jitter2 = float(body.var()) - step * step * f * (1 - f)
        return cls(
            step_ticks=step,
            overhead_ticks=overhead,
            jitter_ticks=math.sqrt(max(0.0, jitter2)),
            interrupt_rate=tail.size / empty.size,
            interrupt_ticks=float(tail.mean()) - overhead if tail.size else 0.0,
        )


#: The seed's 2008 figures over its seven machines (machine E, a P4, among
#: them), best and median of 1000 single-shot runs, empty sequence
#: subtracted: the ways in use then, and the proposals (core cycles).
SEED_IN_USE_CORE_CYCLES: tuple[float, float] = (30.0, 100.0)
SEED_PROPOSED_CORE_CYCLES: tuple[float, float] = (4.0, 21.0)


@dataclass(frozen=True)
class P4Figure:
    """A published Pentium 4 cost and where the seed's harness read such a cost.

    Attributes:
        what, source: the sequence and its label; where it was published.
        core_cycles: its cost on a P4, core cycles (= TSC ticks on a P4).
        seed_low_core_cycles, seed_high_core_cycles: the seed's single-shot
            range for sequences of its kind, core cycles."""

    what: str
    core_cycles: float
    seed_low_core_cycles: float
    seed_high_core_cycles: float
    source: str

    def __post_init__(self) -> None:
        for name in ("what", "source"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, not {type(getattr(self, name)).__name__}")
        for name in ("core_cycles", "seed_low_core_cycles", "seed_high_core_cycles"):
            value = plain_number(name, getattr(self, name))  # a subclass's comparisons may lie
            object.__setattr__(self, name, value)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, not {value}")
        if self.seed_low_core_cycles > self.seed_high_core_cycles:
            raise ValueError(f"seed_low_core_cycles ({self.seed_low_core_cycles}) must not exceed "
                             f"seed_high_core_cycles ({self.seed_high_core_cycles})")


_DEAN_0108 = 'dean gaudet, LKML 2007-01-08, follow-up to "faster vgetcpu using sidt", P4 row'
_DEAN_0113 = 'dean gaudet, LKML 2007-01-13, "faster vgetcpu using sidt (take 2)", P4 row'
_DEAN_SAYS = 'dean gaudet, LKML January 2007: "on p4 processors lsl tends to be 150 cycles ' \
             'whereas the s*dt instructions are 15 cycles or less"'

#: What the P4 regime is fitted to. The row's third figure, "baseline cache"
#: (24), is left out: the seed's grouping does not say whether a cache hit
#: counted as a way in use or as a proposal.
P4_FIT_FIGURES: tuple[P4Figure, ...] = (
    P4Figure("baseline no cache: vgetcpu() on LSL, a way in use", 49.0,
             *SEED_IN_USE_CORE_CYCLES, _DEAN_0108),
    P4Figure("patched: vgetcpu() on SIDT, a proposal", 37.0,
             *SEED_PROPOSED_CORE_CYCLES, _DEAN_0108),
)

#: The P4 figures the fit does not use, to check it against.
P4_HELD_OUT_FIGURES: tuple[P4Figure, ...] = (
    P4Figure("baseline, no cache: vgetcpu() on LSL, a way in use", 49.0,
             *SEED_IN_USE_CORE_CYCLES, _DEAN_0113),
    P4Figure("patched, no cache: vgetcpu() on SIDT, a proposal", 41.0,
             *SEED_PROPOSED_CORE_CYCLES, _DEAN_0113),
    P4Figure("SIDT/SGDT/SLDT alone, '15 cycles or less': machine E's zeros", 15.0,
             0.0, 0.0, _DEAN_SAYS),
    P4Figure("LSL alone, 'tends to be 150 cycles': what the ways in use executed", 150.0,
             *SEED_IN_USE_CORE_CYCLES, _DEAN_SAYS),
)


def p4_shadow_interval(figures: Iterable[P4Figure] = P4_FIT_FIGURES) -> tuple[float, float]:
    """The shadows, TSC ticks, under which every figure's ``max(0, c - shadow)`` lands in its seed range.

    Raises:
        ValueError: no figures, or no shadow fits them all."""
    figures = list(figures)
    if not all(isinstance(f, P4Figure) for f in figures):
        raise TypeError("figures must be fastcpu.noise.P4Figure instances")
    if not figures:
        raise ValueError("give at least one fastcpu.noise.P4Figure")
    low = max(max(0.0, f.core_cycles - f.seed_high_core_cycles) for f in figures)
    high = min(f.core_cycles - f.seed_low_core_cycles if f.seed_high_core_cycles > 0 else math.inf
               for f in figures)
    if low > high:
        raise ValueError(f"no shadow fits these figures: they need at least {low:g} "
                         f"and at most {high:g} TSC ticks")
    return low, high


def fit_p4_regime(figures: Iterable[P4Figure] = P4_FIT_FIGURES) -> NoiseModel:
    """The P4 regime: step 1 (a P4's TSC counts core clocks), shadow fitted.

    The shadow is the middle of :func:`p4_shadow_interval` over dean gaudet's
    LSL and SIDT vgetcpu() figures against the seed's ranges for the ways in use
    and the proposals. Overhead, jitter and interrupts are not fitted: published
    figures are differences, in which they cancel."""
    low, high = p4_shadow_interval(figures)
    return NoiseModel(step_ticks=1, overhead_ticks=120.0, jitter_ticks=3.0,
                      interrupt_rate=0.001, interrupt_ticks=3000.0, shadow_ticks=(low + high) / 2)


def p4_held_out(
    model: NoiseModel | None = None,
    figures: Iterable[P4Figure] = P4_HELD_OUT_FIGURES,
    runs: int = 1000,
    *,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """What the fitted P4 regime predicts for the P4 figures it was not fitted to.

    Per figure: the reading at `model`'s shadow and over the fitted interval
    (``predicted_low``/``predicted_high``), simulated BEST and MEDIAN of `runs`
    runs, the seed's range and ``inside``. Core cycles (= TSC ticks on a P4)."""
    model = fit_p4_regime() if model is None else model
    if not isinstance(model, NoiseModel):
        raise TypeError(f"model must be a fastcpu.noise.NoiseModel, not {type(model).__name__}")
    figures = list(figures)
    if not all(isinstance(f, P4Figure) for f in figures):
        raise TypeError("figures must be fastcpu.noise.P4Figure instances")
    low, high = p4_shadow_interval()
    rng = _rng(seed)
    rows = []
    for f in figures:
        sim = model.simulate(f.core_cycles, runs, seed=rng)
        predicted = max(0.0, f.core_cycles - model.shadow_ticks)
        rows.append({
            "what": f.what, "source": f.source, "core_cycles": f.core_cycles,
            "predicted": predicted,
            "predicted_low": max(0.0, f.core_cycles - high),
            "predicted_high": max(0.0, f.core_cycles - low),
            "best": sim.best, "median": sim.median,
            "seed_low": f.seed_low_core_cycles, "seed_high": f.seed_high_core_cycles,
            "inside": f.seed_low_core_cycles <= predicted <= f.seed_high_core_cycles,
        })
    return rows


#: Illustrative regimes (TSC ticks). "10 ns steps (Zen 4 guest)" is
#: NoiseModel.fit() of the 270,000 empty-sequence runs in
#: data/amd-epyc-kvm-guest.json (AMD EPYC family 25 model 17, Zen 4, KVM
#: guest, 2.6 GHz TSC, measured on a quiet moment), rounded; "P4-like slow
#: timer" is fit_p4_regime(), its shadow fitted to published P4 figures (see
#: its docstring); the other two are round numbers chosen to isolate
#: one effect each, not measurements of any machine.
REGIMES: dict[str, NoiseModel] = {
    "fine counter": NoiseModel(step_ticks=1, overhead_ticks=40.0, jitter_ticks=1.5,
                               interrupt_rate=0.001, interrupt_ticks=3000.0),
    "10 ns steps (Zen 4 guest)": NoiseModel(step_ticks=26, overhead_ticks=59.1, jitter_ticks=0.0,
                                            interrupt_rate=0.00008, interrupt_ticks=11900.0),
    "P4-like slow timer": fit_p4_regime(),
    "interrupt-heavy": NoiseModel(step_ticks=1, overhead_ticks=40.0, jitter_ticks=1.5,
                                  interrupt_rate=0.05, interrupt_ticks=3000.0),
}

#: The estimators :func:`recovery` compares, in TSC ticks per copy: the
#: seed's ``best`` and ``median`` (``median`` is also the estimator
#: ``'median'`` of ``BenchResult.estimate``), the plain ``mean`` of the paired
#: differences, the estimator ``'paired_mean'`` (the same fenced mean as
#: ``BenchResult.estimate``; it was called ``clean_mean`` here) and
#: ``unroll``, the difference of two unroll counts. ``fastcpu.results.estimate.ESTIMATORS``
#: lists what ``BenchResult.estimator`` can be.
RECOVERY_ESTIMATORS = ("best", "median", "mean", "paired_mean", "unroll")


def mean_ticks(result: BenchResult) -> float:
    """Mean of ``(raw - empty) / unroll`` over the runs: TSC ticks per copy above the empty."""
    _check_result("result", result)
    return float((result.raw.astype(np.float64) - result.empty.astype(np.float64)).mean()) / result.unroll


def paired_mean_ticks(result: BenchResult) -> float:
    """:func:`mean_ticks` inside the outlier fence, migrated pairs out: the ``'paired_mean'`` estimator, TSC ticks per copy."""
    _check_result("result", result)
    return statistic("paired_mean").counts(result)


def estimates(result: BenchResult) -> dict[str, float]:
    """best, median, mean and paired_mean of one result, TSC ticks per copy above the empty."""
    _check_result("result", result)
    # the declared statistics it compares (_statistics), and the plain mean, which is none
    declared = {s.name: s.counts(result) for s in STATISTICS if s.name in RECOVERY_ESTIMATORS}
    return {name: declared[name] if name in declared else mean_ticks(result)
            for name in ("best", "median", "mean", "paired_mean")}


_STATISTICS: dict[str, Callable[[np.ndarray], Any]] = {
    "min": np.min, "median": np.median, "mean": np.mean}


def unroll_difference(short: BenchResult, long: BenchResult, statistic: str = "median") -> float:
    """Cost per copy from two unroll counts, TSC ticks: ``(stat(long.raw) - stat(short.raw)) / (k2 - k1)``.

    `statistic` is ``'min'`` (uarch-bench), ``'median'`` or ``'mean'``."""
    _check_result("short", short)
    _check_result("long", long)
    if not isinstance(statistic, str):
        raise TypeError(f"statistic must be a str, one of {', '.join(_STATISTICS)}; not {type(statistic).__name__}")
    if statistic not in _STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}: use one of {', '.join(_STATISTICS)}")
    if long.unroll <= short.unroll:
        raise ValueError(f"long.unroll ({long.unroll}) must exceed short.unroll ({short.unroll})")
    stat = _STATISTICS[statistic]
    diff = float(stat(long.raw.astype(np.float64))) - float(stat(short.raw.astype(np.float64)))
    return diff / (long.unroll - short.unroll)


def recovery(
    model: NoiseModel,
    true_ticks: Iterable[float],
    runs: int = 1000,
    *,
    unroll: int = 16,
    seed: int = 0,
) -> list[dict[str, float]]:
    """What each estimator reports for each known true cost under `model`, TSC ticks per copy.

    One row per true cost: ``best``, ``median``, ``mean``, ``paired_mean`` of
    single copies, ``unroll`` (median difference of `unroll` and 2 * `unroll` copies).

    Raises:
        TypeError, ValueError: a bad `model`, `true_ticks`, `runs`, `unroll` or
            `seed` (the message names it)."""
    if not isinstance(model, NoiseModel):
        raise TypeError(f"model must be a fastcpu.noise.NoiseModel, not {type(model).__name__}")
    if isinstance(true_ticks, (str, bytes)) or not isinstance(true_ticks, Iterable):
        raise TypeError(f"true_ticks must be a list of numbers, not {type(true_ticks).__name__}")
    true_ticks = list(true_ticks)
    if not true_ticks:
        raise ValueError("true_ticks is empty: give at least one true cost in TSC ticks")
    runs = check_int("runs", runs, 1, RUNS_MAX)
    unroll = check_int("unroll", unroll, 1, UNROLL_MAX // 2)  # 2 * unroll copies are simulated too
    rng = _rng(seed)
    rows: list[dict[str, float]] = []
    for c in true_ticks:
        single = model.simulate(c, runs, seed=rng)
        k1 = model.simulate(c, runs, unroll=unroll, seed=rng)
        k2 = model.simulate(c, runs, unroll=2 * unroll, seed=rng)
        rows.append(dict(true=float(c), **estimates(single), unroll=unroll_difference(k1, k2)))
    return rows


#: What :func:`shadow_verdict` can say, in that order.
SHADOW_VERDICTS = ("present", "absent", "cannot tell")


def cost_interval_ticks(result: Estimated) -> tuple[float, float]:
    """A cost's 95% interval, TSC ticks per copy: ``estimate -+ estimate_ci95``, or ``(0, upper_bound)`` for a bound.

    Raises TypeError for what is not a BenchResult or DiffResult."""
    if not isinstance(result, Estimated):
        raise TypeError(f"result must be a fastcpu.BenchResult or DiffResult, not {type(result).__name__}")
    if result.resolved:
        return result.estimate - result.estimate_ci95, result.estimate + result.estimate_ci95
    return 0.0, float(result.upper_bound)


def _interval(name: str, value: object) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of numbers, TSC ticks per copy; not {value!r}")
    low, high = (plain_number(f"{name}[{i}]", v) for i, v in enumerate(value))
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"{name} must be a finite (low, high) pair with low <= high, TSC ticks per copy; "
                         f"got ({low}, {high})")
    return low, high


def shadow_verdict(single: tuple[float, float], back_to_back: tuple[float, float]) -> str:
    """The P4-like shadow, from the 95% intervals ``(low, high)`` of one cost per copy, timed alone and back to
    back, in one unit (TSC ticks per copy, as :func:`cost_interval_ticks` gives): ``'present'`` where `single`
    ends below `back_to_back`'s start, ``'absent'`` where it starts at or above its end, else ``'cannot tell'``.

    Raises TypeError or ValueError for what is not a finite ``(low, high)`` pair."""
    s_low, s_high = _interval("single", single)
    d_low, d_high = _interval("back_to_back", back_to_back)
    if s_high < d_low:
        return "present"
    if s_low >= d_high:
        return "absent"
    return "cannot tell"
