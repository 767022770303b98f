"""What a result is made of at birth: the runs' clock (:class:`ClockMotion`, :func:`runs_clock`), the
harness bias (:class:`HarnessBias`, :func:`applied`, docs/timing.md, "The self-test") and the
estimate record (:class:`Estimate`). A *hop*: two neighbouring ruler points at different levels; a
*disturbed* point: its add and imul rulers disagree (docs/timing.md, "Core cycles: the rulers")."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from .values import Clock


__all__ = ["CORRECTION_MAX_AGE_S", "ClockMotion", "Conversion", "Estimate", "HarnessBias", "NOT_CORRECTED",
           "UNMEASURED", "applied", "merge_motion", "runs_clock"]


# ---- the runs' clock ----

class Conversion(Protocol):
    """The fields this room reads of the C core's ``_core.Conversion`` record."""

    @property
    def cycles_per_tick(self) -> float: ...  # converting the runs stretch by stretch; NaN: no point agreed
    @property
    def ci95(self) -> float: ...
    @property
    def points(self) -> int: ...
    @property
    def disturbed(self) -> int: ...
    @property
    def hops(self) -> int: ...
    @property
    def hop_runs(self) -> int: ...
    @property
    def add_mean(self) -> float: ...
    @property
    def imul_mean(self) -> float: ...
    @property
    def levels(self) -> tuple[float, ...]: ...
    @property
    def level_points(self) -> tuple[int, ...]: ...
    @property
    def span_ticks(self) -> float: ...
    @property
    def hops_located(self) -> int: ...
    @property
    def slowdowns(self) -> int: ...

#: Levels a merged record keeps at most; readings within LEVEL_TOLERANCE of a
#: kept level join it.
LEVELS_MAX = 8
LEVEL_TOLERANCE = 0.01


@dataclass(frozen=True)
class ClockMotion:
    """The core clock during one or more measurements, as their ruler points saw it.

    Attributes:
        points, disturbed: ruler points timed; those left out (rulers disagreed).
        hops, hops_located: level changes whose rulers moved alike; of them,
            those the body's ticks placed (0 before fastcpu 0.8.6).
        hop_runs: runs in the hops' stretches.
        slowdowns: level changes whose rulers moved apart, or across which the
            body's ticks held: other work, not the clock (0 before 0.8.6).
        seconds: TSC time from the first point to the last, seconds.
        levels_core_cycles_per_tick, level_points: the levels seen, core cycles
            per TSC tick, lowest first; undisturbed points at each.
        add_core_cycles_per_tick, imul_core_cycles_per_tick: each ruler's mean
            over the undisturbed points."""

    points: int
    disturbed: int
    hops: int
    hop_runs: int
    seconds: float
    levels_core_cycles_per_tick: tuple[float, ...]
    level_points: tuple[int, ...]
    add_core_cycles_per_tick: float
    imul_core_cycles_per_tick: float
    hops_located: int = 0
    slowdowns: int = 0

    def __post_init__(self) -> None:
        order = sorted(range(len(self.levels_core_cycles_per_tick)),
                       key=lambda i: self.levels_core_cycles_per_tick[i])
        object.__setattr__(self, "levels_core_cycles_per_tick",
                           tuple(self.levels_core_cycles_per_tick[i] for i in order))
        object.__setattr__(self, "level_points", tuple(self.level_points[i] for i in order))

    @classmethod
    def from_conversion(cls, conversion: Conversion, tsc_hz: float) -> ClockMotion:
        """The record of one measurement's C-core ``Conversion``, its span at `tsc_hz` (built without __init__, for speed)."""
        motion = object.__new__(cls)
        object.__setattr__(motion, "__dict__", {
            "points": conversion.points, "disturbed": conversion.disturbed, "hops": conversion.hops,
            "hop_runs": conversion.hop_runs, "seconds": conversion.span_ticks / tsc_hz if tsc_hz > 0 else 0.0,
            "levels_core_cycles_per_tick": conversion.levels, "level_points": conversion.level_points,
            "add_core_cycles_per_tick": conversion.add_mean, "imul_core_cycles_per_tick": conversion.imul_mean,
            "hops_located": conversion.hops_located, "slowdowns": conversion.slowdowns})
        return motion

    @property
    def hops_per_second(self) -> float:
        """Hops per second of TSC time measured (NaN: no time measured)."""
        return self.hops / self.seconds if self.seconds > 0 else math.nan

    @property
    def rulers_disagree_percent(self) -> float:
        """How far the add and imul rulers read apart, percent of their mean."""
        a, m = self.add_core_cycles_per_tick, self.imul_core_cycles_per_tick
        return 200 * abs(a - m) / (a + m) if a + m > 0 else math.nan

    def describe(self, tsc_hz: float = math.nan) -> str:
        """One line for a header: the levels seen (and the core clock they
        are, given the TSC's Hz), the hops and the disturbed points."""
        lv = self.levels_core_cycles_per_tick
        if not lv:
            return f"core clock: no undisturbed ruler point of {self.points}"
        if len(lv) == 1:
            where = f"held at {lv[0]:.3f} core cycles per tick"
        else:
            where = f"{len(lv)} levels, {lv[0]:.3f} to {lv[-1]:.3f} core cycles per tick"
        if math.isfinite(tsc_hz) and tsc_hz > 0:
            ghz = [v * tsc_hz / 1e9 for v in lv]
            where += f" ({ghz[0]:.2f} GHz)" if len(lv) == 1 else f" ({ghz[0]:.2f}-{ghz[-1]:.2f} GHz)"
        span = f"{self.seconds:.2f} s" if self.seconds >= 1 else f"{self.seconds * 1e3:.1f} ms"
        moved = f"{self.hops} hop{'s' if self.hops != 1 else ''} in {span} of runs"
        if self.hops:
            moved += f" ({self.hops_located} placed by the runs themselves)"
        if self.slowdowns:
            moved += (f", {self.slowdowns} slowdown{'s' if self.slowdowns != 1 else ''} (the rulers moved apart "
                      "or the body held: other work, not the clock alone)")
        return (f"core clock: {where}; {moved}, each stretch of runs converted with the ruler "
                f"points around it; {self.disturbed} of {self.points} points disturbed "
                f"(add and imul rulers disagreed: left out); rulers {self.rulers_disagree_percent:.2f}% apart")

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "disturbed": self.disturbed,
            "hops": self.hops,
            "hop_runs": self.hop_runs,
            "seconds": self.seconds,
            "levels_core_cycles_per_tick": list(self.levels_core_cycles_per_tick),
            "level_points": list(self.level_points),
            "add_core_cycles_per_tick": self.add_core_cycles_per_tick,
            "imul_core_cycles_per_tick": self.imul_core_cycles_per_tick,
            "hops_located": self.hops_located,
            "slowdowns": self.slowdowns,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "") -> ClockMotion:
        """Raises ValueError or TypeError naming the field for a record no
        measurement could have made."""
        if not isinstance(d, Mapping):
            raise TypeError(f"{where} must be an object, not {type(d).__name__}")
        fields = ("points", "disturbed", "hops", "hop_runs", "seconds", "levels_core_cycles_per_tick",
                  "level_points", "add_core_cycles_per_tick", "imul_core_cycles_per_tick")
        unknown = set(d) - set(fields) - {"hops_located", "slowdowns"}  # those since 0.8.6
        if unknown:
            raise ValueError(f"{where} has unknown fields {sorted(unknown)}")
        missing = [f for f in fields if f not in d]
        if missing:
            raise ValueError(f"{where} lacks {missing}")

        def count(name: str) -> int:
            v = d[name]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**53:
                raise ValueError(f"{where}.{name} must be a count from 0 to 2**53, not {v!r}")
            return v

        def rate(v: Any, name: str, low: float = 0.0) -> float:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v < 1e6:
                raise ValueError(f"{where}.{name} must be a number from {low:g} to 1e6, not {v!r}")
            return float(v)

        levels, counts = d["levels_core_cycles_per_tick"], d["level_points"]
        if not isinstance(levels, list) or not isinstance(counts, list) or len(levels) != len(counts) \
                or len(levels) > LEVELS_MAX:
            raise ValueError(f"{where}: levels_core_cycles_per_tick and level_points must be lists of "
                             f"one length, at most {LEVELS_MAX}")
        motion = cls(
            points=count("points"), disturbed=count("disturbed"), hops=count("hops"),
            hop_runs=count("hop_runs"), seconds=rate(d["seconds"], "seconds"),
            levels_core_cycles_per_tick=tuple(rate(v, "levels_core_cycles_per_tick", 1e-6) for v in levels),
            level_points=tuple(count_of(v, f"{where}.level_points", 1) for v in counts),
            add_core_cycles_per_tick=rate(d["add_core_cycles_per_tick"], "add_core_cycles_per_tick"),
            imul_core_cycles_per_tick=rate(d["imul_core_cycles_per_tick"], "imul_core_cycles_per_tick"),
            hops_located=count("hops_located") if "hops_located" in d else 0,
            slowdowns=count("slowdowns") if "slowdowns" in d else 0,
        )
        if motion.disturbed > motion.points:
            raise ValueError(f"{where}.disturbed ({motion.disturbed}) exceeds {where}.points ({motion.points})")
        if motion.hops_located > motion.hops:
            raise ValueError(f"{where}.hops_located ({motion.hops_located}) exceeds {where}.hops ({motion.hops})")
        return motion


def count_of(v: Any, where: str, low: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v < 2**53:
        raise ValueError(f"{where} must hold counts from {low} to 2**53, not {v!r}")
    return v


def merge_motion(motions: Iterable[ClockMotion | None]) -> ClockMotion | None:
    """One record for many measurements, levels joined within LEVEL_TOLERANCE; None when none had rulers."""
    kept = [m for m in motions if m is not None]
    if not kept:
        return None
    sums: list[list[float]] = []  # [level x points, points]
    for m in kept:
        for v, n in zip(m.levels_core_cycles_per_tick, m.level_points):
            if not n:  # a level no point saw (built by hand: a file's are refused at load)
                continue
            for s in sums:
                if abs(s[0] / s[1] - v) <= LEVEL_TOLERANCE * max(v, s[0] / s[1]):
                    s[0] += v * n
                    s[1] += n
                    break
            else:
                if len(sums) < LEVELS_MAX:
                    sums.append([v * n, float(n)])
    weights = [m.points - m.disturbed for m in kept]
    if not any(weights):  # every point disturbed: their rulers' plain means
        weights = [1] * len(kept)
    total = sum(weights)

    def mean(attr: str) -> float:
        return sum(getattr(m, attr) * w for m, w in zip(kept, weights) if w) / total

    return ClockMotion(
        points=sum(m.points for m in kept), disturbed=sum(m.disturbed for m in kept),
        hops=sum(m.hops for m in kept), hop_runs=sum(m.hop_runs for m in kept),
        seconds=sum(m.seconds for m in kept),
        levels_core_cycles_per_tick=tuple(s[0] / s[1] for s in sums if s[1]),
        level_points=tuple(int(s[1]) for s in sums if s[1]),
        add_core_cycles_per_tick=mean("add_core_cycles_per_tick"),
        imul_core_cycles_per_tick=mean("imul_core_cycles_per_tick"),
        hops_located=sum(m.hops_located for m in kept), slowdowns=sum(m.slowdowns for m in kept),
    )


def runs_clock(conversion: Conversion | None, clock: Clock, counter: str) -> tuple[float, float, tuple[str, ...]]:
    """(core cycles per TSC tick, 95% half-width, caveats) that runs convert with.

    From their ruler points (`conversion`; None: none) and the process's
    `clock` on `counter`: the points' figure where their rulers agreed; where
    every point was disturbed, the middle of the points' and the clock's
    figures, the interval reaching both; with no points, the clock's, interval
    0; NaN and the clock's caveat while its rulers disagree."""
    if conversion is not None:
        cpt = conversion.cycles_per_tick
        if math.isfinite(cpt):
            return cpt, conversion.ci95, ()
    caveats = clock.caveats(counter)
    if caveats:  # core cycles unknown: ticks and ns stand
        return math.nan, 0.0, caveats
    if conversion is None or not conversion.points:
        return clock.cycles_per_tick, 0.0, ()
    seen = [v for v in (conversion.add_mean, conversion.imul_mean, clock.cycles_per_tick) if 0 < v < math.inf]
    low, high = min(seen), max(seen)
    return (low + high) / 2, (high - low) / 2, ()


# ---- the harness bias ----

#: bench()'s correction is measured again when it is older than this: the
#: bias follows what the host does (docs/accuracy.md).
CORRECTION_MAX_AGE_S = 30.0

#: Why bench() applies no correction where the bias measurement converted
#: none of its chains: each chain's own rulers were all disturbed, and the
#: process's first-use calibration could not tell its rulers apart either.
UNMEASURED = ("no harness correction applied: the harness bias could not be converted to core cycles "
              "(no undisturbed ruler point in its measurements, and the process's clock calibration "
              "failed); measure again on a quieter machine")

#: What a result's caveat adds while its clock's rulers disagree: there is
#: no core-cycle figure to correct, and so no correction.
NOT_CORRECTED = "; no harness correction applied"


@dataclass(frozen=True)
class HarnessBias:
    """The harness bias of one path and mode, kept in TSC ticks (what the harness adds is time, not work).

    Attributes:
        bias_ticks, ci95_ticks: the correction and its 95% half-width, TSC ticks
            per copy (NaN: no chain could be converted).
        op_bias_ticks: instruction -> its bias, TSC ticks.
        cycles_per_tick: the core clock during the measurement, core cycles per TSC tick.
        measured_at: ``time.monotonic()`` when measured, seconds.
        zero_ticks, zero_ci95_ticks: the harness's zero and its 95% half-width, TSC ticks.
        chain_bias_ticks, chain_bias_ci95_ticks: chain -> its own bias before
            correction and its 95% half-width, TSC ticks.
        why_not: why bench() does not subtract it ('' when it does).
        floor_ticks: what a body reads, corrected, that the harness hides whole (0: none
            seen), TSC ticks: the top of a chain that read above the pooled bias beyond both
            intervals (:func:`instrument.bias.floor_of`); the resolution is at least that."""

    bias_ticks: float
    ci95_ticks: float
    op_bias_ticks: Mapping[str, float]
    cycles_per_tick: float
    measured_at: float
    zero_ticks: float = 0.0
    zero_ci95_ticks: float = 0.0
    chain_bias_ticks: Mapping[str, float] = field(default_factory=dict)
    chain_bias_ci95_ticks: Mapping[str, float] = field(default_factory=dict)
    why_not: str = ""
    floor_ticks: float = 0.0

    @property
    def resolution_ticks(self) -> float:
        """The smallest cost the path resolves, TSC ticks (as ``PathCheck.resolution_core_cycles``, or
        the floor where that is higher)."""
        hidden = max(0.0, -self.bias_ticks) + self.ci95_ticks + abs(self.zero_ticks) + self.zero_ci95_ticks
        return max(hidden, self.floor_ticks)

    def holds_at(self, now: float) -> bool:
        """Whether this bias still applies at `now` (``time.monotonic()``)."""
        return now - self.measured_at <= CORRECTION_MAX_AGE_S

    def core_cycles(self, cycles_per_tick: float = math.nan) -> tuple[float, float]:
        """(bias, 95% half-width) in core cycles at `cycles_per_tick` (core
        cycles per TSC tick; NaN: the bias measurement's own)."""
        cpt = cycles_per_tick if math.isfinite(cycles_per_tick) and cycles_per_tick > 0 else self.cycles_per_tick
        return self.bias_ticks * cpt, self.ci95_ticks * cpt

    def at(self, cycles_per_tick: float) -> tuple[float, float, float, str]:
        """(bias, 95% half-width, resolution) in core cycles per copy at `cycles_per_tick`, and why none applies ('' when it does).

        After a failed self-test: (0, the bias's size plus its half-width, the
        resolution, the reason)."""
        # the measurement's clock, or the bias measurement's where that is unknown (core_cycles())
        cpt = cycles_per_tick if 0 < cycles_per_tick < math.inf else self.cycles_per_tick
        bias, ci = self.bias_ticks * cpt, self.ci95_ticks * cpt
        if not math.isfinite(bias + ci):
            return 0.0, 0.0, 0.0, self.why_not or UNMEASURED
        if self.why_not:  # not subtracted, but not hidden either: the interval holds the bias it did not take off
            return 0.0, abs(bias) + ci, self.resolution_ticks * cpt, self.why_not
        return bias, ci, self.resolution_ticks * cpt, ""


def applied(bias: HarnessBias | None, loop: tuple[float, float], corrected: bool, cycles_per_tick: float,
            caveats: tuple[str, ...]) -> tuple[float, float, float, tuple[str, ...]]:
    """(bias, 95% half-width, resolution, caveats) a result is built with, core cycles per copy at `cycles_per_tick`.

    `corrected` (single copies on the TSC): `bias` converted (:meth:`HarnessBias.at`;
    None: nothing applied). Otherwise the copy loop `loop` (core cycles per copy,
    half-width): half its cost added back, half in the interval. Nothing while
    the runs' rulers disagree (`caveats`)."""
    if corrected:
        if caveats:
            return 0.0, 0.0, 0.0, (caveats[0] + NOT_CORRECTED,)
        if bias is None:
            return 0.0, 0.0, 0.0, ()
        b, ci, resolution, why_not = bias.at(cycles_per_tick)
        return b, ci, resolution, (why_not,) if why_not else ()
    cost, half = loop
    if caveats or not cost > 0:
        return 0.0, 0.0, 0.0, caveats
    return -cost / 2, cost / 2 + half, cost + half, caveats


# ---- the estimate record ----

class Estimate(NamedTuple):
    """A cost estimate (a tuple: the C core's figures become one as they are).

    Attributes:
        ticks: the cost per copy, TSC ticks above the empty sequence.
        ci95_ticks: half-width of its 95% interval, TSC ticks per copy (``inf`` from one run).
        estimator: ``'median'``, ``'paired_mean'`` or ``'diff'``.
        runs_used: runs the figure rests on (after the outlier fence)."""

    ticks: float
    ci95_ticks: float
    estimator: str
    runs_used: int
