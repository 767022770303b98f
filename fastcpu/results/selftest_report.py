"""What a self-test found, as plain data a result file keeps (docs/timing.md, "The self-test").

``fastcpu.selftest()`` measures it; this module only holds and shows it.
Figures are core cycles per copy unless the name says ticks."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._args import SERIALIZE_MODES, plain_number
from .._base import printable


__all__ = [
    "ChainCheck",
    "PathCheck",
    "SelfTest",
    "within_goal",
    "goal_core_cycles",
    "one_correction_fits",
    "PATHS",
    "GOAL_CYCLES",
    "GOAL_PERCENT",
    "GOAL_PERCENT_FROM_CYCLES",
    "GOAL_COVERAGE",
    "CONVERSION_GOAL_PERCENT",
]

#: The two ways fastcpu times a body: inlined in the timer, or a user
#: function called through a function pointer.
PATHS = ("inline", "user")
#: Goals (issue 9), per path: a chain's median error (over the rounds) within GOAL_CYCLES core
#: cycles, or (from GOAL_PERCENT_FROM_CYCLES on, where it is the wider)
#: within GOAL_PERCENT of the truth; the
#: printed intervals covering the truth in GOAL_COVERAGE of the measurements.
#: A user function's call and return add a cost that its body partly hides,
#: hence the wider goal there.
GOAL_CYCLES = {"inline": 1.5, "user": 2.0}
GOAL_PERCENT = {"inline": 1.0, "user": 2.0}
GOAL_PERCENT_FROM_CYCLES = 100
GOAL_COVERAGE = 0.90
#: The conversion's goal (issue 26: a clock hopping every 20 ms converted
#: within 0.5%): the conversion takes the mean of the add and imul rulers, so
#: it is off by at most half their disagreement, which must stay within this
#: many percent.
CONVERSION_GOAL_PERCENT = 0.5


def goal_core_cycles(truth_core_cycles: float, path: str = "inline") -> float:
    """The largest error, core cycles, that meets `path`'s goal for a chain
    of that truth: GOAL_CYCLES, or, from GOAL_PERCENT_FROM_CYCLES on,
    GOAL_PERCENT of the truth where that is wider."""
    goal = GOAL_CYCLES[path]
    if truth_core_cycles >= GOAL_PERCENT_FROM_CYCLES:
        goal = max(goal, truth_core_cycles * GOAL_PERCENT[path] / 100)
    return goal


def one_correction_fits(reach: Sequence[tuple[float, float]]) -> bool:
    """Whether some one correction puts every bias within its allowance:
    each (bias, allowance) in one unit; their windows share a point."""
    return bool(reach) and max(b - r for b, r in reach) <= min(b + r for b, r in reach)


def within_goal(error_core_cycles: float, truth_core_cycles: float, path: str = "inline") -> bool:
    """Whether an error (core cycles) meets `path`'s goal for a chain of that
    truth (:func:`goal_core_cycles`)."""
    return abs(error_core_cycles) <= goal_core_cycles(truth_core_cycles, path)


@dataclass(frozen=True)
class ChainCheck:
    """One known-cost chain, verified through one path and mode.

    Attributes:
        name: the chain (``'add_chain_8'``).
        truth_core_cycles: what one copy costs, core cycles.
        median_error_core_cycles: median over the rounds of corrected estimate
            minus truth, core cycles.
        rounds, covered: measurements made; those whose 95% interval held the truth.
        within_goal: whether the median error meets the goal.
        conversion_core_cycles: what the conversion's 95% uncertainty makes of
            the truth, core cycles (median over the rounds).
        bias_core_cycles, bias_ci95_core_cycles: the chain's own bias before
            correction and its 95% half-width, core cycles (NaN: unknown).
        path: ``'inline'`` or ``'user'``, whose goal it is judged by."""

    name: str
    truth_core_cycles: float
    median_error_core_cycles: float
    rounds: int
    within_goal: bool
    covered: int
    conversion_core_cycles: float = 0.0
    bias_core_cycles: float = math.nan
    bias_ci95_core_cycles: float = math.nan
    path: str = "inline"

    @property
    def bias_known(self) -> bool:
        """Whether the chain's own bias and its interval are known."""
        return math.isfinite(self.bias_core_cycles) and math.isfinite(self.bias_ci95_core_cycles)

    @property
    def failed_by(self) -> str:
        """Why its goal failed ('' where it holds): ``'conversion'`` (within the conversion's uncertainty) or ``'harness'``."""
        if self.within_goal:
            return ""
        allowed = abs(self.median_error_core_cycles) - self.conversion_core_cycles
        return "conversion" if within_goal(allowed, self.truth_core_cycles, self.path) else "harness"


@dataclass(frozen=True)
class PathCheck:
    """The harness bias of one path and serialization mode, and its check.

    Attributes:
        path, serialize: ``'inline'`` or ``'user'``; the serialization mode.
        bias_core_cycles, bias_ci95_core_cycles: the correction (midpoint of the
            per-instruction biases) and its 95% half-width, core cycles per copy.
        op_bias_core_cycles: instruction -> mean bias of its chains, core cycles.
        chains: the :class:`ChainCheck` of each chain.
        zero_core_cycles, zero_ci95_core_cycles: the empty sequence timed as a
            body against the empty baseline (the harness's zero), core cycles.
        rulers_apart_percent: median disagreement of the add and imul rulers, percent.
        clock_hops, clock_hops_placed, slowdowns: as :class:`ClockMotion` counts
            them over the verification (0 in files before fastcpu 0.8.6)."""

    path: str
    serialize: str
    bias_core_cycles: float
    bias_ci95_core_cycles: float
    op_bias_core_cycles: Mapping[str, float]
    chains: tuple[ChainCheck, ...] = ()
    zero_core_cycles: float = 0.0
    zero_ci95_core_cycles: float = 0.0
    rulers_apart_percent: float = 0.0
    clock_hops: int = 0
    clock_hops_placed: int = 0
    slowdowns: int = 0

    def __post_init__(self) -> None:
        if self.clock_hops_placed > self.clock_hops:
            raise ValueError(f"clock_hops_placed ({self.clock_hops_placed}) exceeds clock_hops "
                             f"({self.clock_hops})")
        # each chain is judged by this path's goal
        object.__setattr__(self, "chains", tuple(c if c.path == self.path else dataclasses.replace(c, path=self.path)
                                                 for c in self.chains))

    @property
    def resolution_core_cycles(self) -> float:
        """The smallest cost this path resolves, core cycles: what the harness hides (negative bias) plus the zero's stray, with intervals."""
        return (max(0.0, -self.bias_core_cycles) + self.bias_ci95_core_cycles
                + abs(self.zero_core_cycles) + self.zero_ci95_core_cycles)

    @property
    def conversion_failed(self) -> bool:
        """Whether half the rulers' disagreement exceeds CONVERSION_GOAL_PERCENT during the verification."""
        return self.rulers_apart_percent / 2 > CONVERSION_GOAL_PERCENT

    @property
    def floor_core_cycles(self) -> float:
        """The shortest body this path reads right, core cycles: a user function's call and return less the bias; 0 inline."""
        return max(0.0, -self.bias_core_cycles) if self.path == "user" else 0.0

    @property
    def coverage(self) -> float:
        """Share of the verification measurements whose interval held the truth."""
        total = sum(c.rounds for c in self.chains)
        return sum(c.covered for c in self.chains) / total if total else math.nan

    @property
    def passed(self) -> bool:
        """Every chain within the goal, coverage at least GOAL_COVERAGE, and
        the rulers within the conversion's goal."""
        return bool(self.chains) and all(c.within_goal for c in self.chains) and (
            self.coverage >= GOAL_COVERAGE
        ) and not self.conversion_failed

    def failures(self) -> list[str]:
        """What failed, in words: the conversion, the harness, or the intervals' coverage."""
        out = []
        if self.conversion_failed:
            out.append(f"conversion: the add and imul rulers read {self.rulers_apart_percent:.2f}% apart, "
                       f"their mean off by up to half that (goal {CONVERSION_GOAL_PERCENT}%)")
        for who, why in (("conversion", "within the conversion's uncertainty"),
                         ("harness", "beyond the conversion's uncertainty")):
            failing = [c for c in self.chains if c.failed_by == who]
            if failing:
                out.append(f"{who}: {', '.join(c.name for c in failing)} off the goal, {why}"
                           f"{self._harness_why(failing) if who == 'harness' else ''}")
        if self.chains and self.coverage < GOAL_COVERAGE:
            out.append(f"intervals: coverage {self.coverage:.0%} below {GOAL_COVERAGE:.0%}")
        return out

    @property
    def one_correction_reaches_goal(self) -> bool | None:
        """Whether one correction could put every chain within its goal (each bias within its 95% interval); None: biases unknown."""
        known = [c for c in self.chains if c.bias_known]
        if len(known) < 2:
            return None
        return one_correction_fits([(c.bias_core_cycles,
                                     c.bias_ci95_core_cycles + goal_core_cycles(c.truth_core_cycles, self.path))
                                    for c in known])

    def _harness_why(self, failing: list[ChainCheck]) -> str:
        """Why the harness missed on `failing`, in words ('' where nothing is known)."""
        reaches = self.one_correction_reaches_goal
        if reaches is None:
            return self._op_split()
        body = [c for c in failing if c.bias_known and abs(c.bias_core_cycles - self.bias_core_cycles)
                - c.bias_ci95_core_cycles > goal_core_cycles(c.truth_core_cycles, self.path)]
        scatter = [c for c in failing if c not in body]
        parts = []
        if body:
            parts.append("before correction " + ", ".join(
                f"{c.name} read {c.bias_core_cycles:+.2f} +-{c.bias_ci95_core_cycles:.2f}" for c in body)
                + f" as the bias was measured, beyond the goal from the correction's {self.bias_core_cycles:+.2f}:"
                " its own bias (what the harness hides of it, or how the host slows it), not scatter")
        if scatter:
            parts.append(", ".join(c.name for c in scatter) + " within the goal of the correction as the bias "
                         "was measured, or too uncertain to tell: the check read it differently")
        if not reaches:
            known = [c for c in self.chains if c.bias_known]
            lo = min(known, key=lambda c: c.bias_core_cycles)
            hi = max(known, key=lambda c: c.bias_core_cycles)
            parts.append(f"the chains read {lo.bias_core_cycles:+.2f} ({lo.name}) to {hi.bias_core_cycles:+.2f} "
                         f"({hi.name}) before correction, too far apart, beyond their intervals, for any one "
                         f"correction to hold every chain within the goal in this run")
        return f" ({'; '.join(parts)})"

    def _op_split(self) -> str:
        """Why one correction cannot hold every chain, from the per-instruction biases alone ('' otherwise)."""
        biases = self.op_bias_core_cycles
        if len(biases) < 2:
            return ""
        spread = max(biases.values()) - min(biases.values())
        if spread / 2 < GOAL_CYCLES[self.path] / 2:
            return ""
        each = ", ".join(f"{op} {b:+.2f}" for op, b in biases.items())
        return (f" (the bodies hide different amounts, {each}: {spread:.2f} apart, so one correction "
                f"leaves each chain {spread / 2:.2f} off before noise)")

    def line(self) -> str:
        worst = max(self.chains, key=lambda c: abs(c.median_error_core_cycles), default=None)
        ops = ", ".join(f"{op} {b:+.2f}" for op, b in self.op_bias_core_cycles.items())
        text = (
            f"{self.path:6} {self.serialize:6}  bias {self.bias_core_cycles:+6.2f} "
            f"+-{self.bias_ci95_core_cycles:.2f} core cycles ({ops})"
        )
        if self.path == "user":
            text += f"; call-and-return floor {self.floor_core_cycles:.1f}"
        text += (f"; zero {self.zero_core_cycles:+.2f} +-{self.zero_ci95_core_cycles:.2f}, "
                 f"resolves {self.resolution_core_cycles:.1f}")
        if worst is not None:
            text += (
                f"; corrected, worst {worst.name} {worst.median_error_core_cycles:+.2f}, "
                f"coverage {self.coverage:.0%}; rulers {self.rulers_apart_percent:.2f}% apart, "
                f"{self.clock_hops} clock hops"
            )
            if self.clock_hops:
                text += f" ({self.clock_hops_placed} placed by the runs)"
            if self.slowdowns:
                text += f", {self.slowdowns} slowdown{'s' if self.slowdowns != 1 else ''} by other work"
            text += ": goals hold" if self.passed else f": GOAL FAILS ({'; '.join(self.failures())})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "serialize": self.serialize,
            "bias_core_cycles": self.bias_core_cycles,
            "bias_ci95_core_cycles": self.bias_ci95_core_cycles,
            "op_bias_core_cycles": dict(self.op_bias_core_cycles),
            "chains": [_chain_dict(c) for c in self.chains],
            "zero_core_cycles": self.zero_core_cycles,
            "zero_ci95_core_cycles": self.zero_ci95_core_cycles,
            "rulers_apart_percent": self.rulers_apart_percent,
            "clock_hops": self.clock_hops,
            "clock_hops_placed": self.clock_hops_placed,
            "slowdowns": self.slowdowns,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "") -> PathCheck:
        """Raises ValueError (or TypeError) for a report no selftest() could
        have written, naming the field (`where` comes before its name)."""
        _known(d, ("path", "serialize", "bias_core_cycles", "bias_ci95_core_cycles", "op_bias_core_cycles",
                   "chains", "zero_core_cycles", "zero_ci95_core_cycles", "rulers_apart_percent",
                   "clock_hops", "clock_hops_placed", "slowdowns"), where)
        chains = []
        for i, c in enumerate(_list(d.get("chains", []), f"{where}chains")):
            at = f"{where}chains[{i}]."
            _known(c, ("name", "truth_core_cycles", "median_error_core_cycles", "rounds", "within_goal",
                       "covered", "conversion_core_cycles", "bias_core_cycles", "bias_ci95_core_cycles"), at)
            if ("bias_core_cycles" in c) != ("bias_ci95_core_cycles" in c):
                raise ValueError(f"{at}bias_core_cycles and {at}bias_ci95_core_cycles come together or not at all")
            rounds = _count(_field(c, "rounds", at), f"{at}rounds")
            covered = _count(_field(c, "covered", at), f"{at}covered")
            if covered > rounds:
                raise ValueError(f"{at}covered ({covered}) exceeds {at}rounds ({rounds})")
            chains.append(ChainCheck(
                name=_text(_field(c, "name", at), f"{at}name", 200),
                truth_core_cycles=_finite(_field(c, "truth_core_cycles", at), f"{at}truth_core_cycles",
                                          1e-9, _FIGURE_MAX_CORE_CYCLES),
                median_error_core_cycles=_finite(_field(c, "median_error_core_cycles", at),
                                                 f"{at}median_error_core_cycles"),
                rounds=rounds,
                within_goal=_yes_no(_field(c, "within_goal", at), f"{at}within_goal"),
                covered=covered,
                conversion_core_cycles=_finite(c.get("conversion_core_cycles", 0.0),
                                               f"{at}conversion_core_cycles", 0.0),
                bias_core_cycles=(_finite(c["bias_core_cycles"], f"{at}bias_core_cycles")
                                  if "bias_core_cycles" in c else math.nan),
                bias_ci95_core_cycles=(_finite(c["bias_ci95_core_cycles"], f"{at}bias_ci95_core_cycles", 0.0)
                                       if "bias_ci95_core_cycles" in c else math.nan),
            ))
        ops = _field(d, "op_bias_core_cycles", where)
        if not isinstance(ops, Mapping) or len(ops) > 16:
            raise TypeError(f"{where}op_bias_core_cycles must be an object of at most 16 instructions, "
                            f"not {type(ops).__name__}")
        return cls(
            path=_one_of(_field(d, "path", where), PATHS, f"{where}path"),
            serialize=_one_of(_field(d, "serialize", where), SERIALIZE_MODES, f"{where}serialize"),
            bias_core_cycles=_finite(_field(d, "bias_core_cycles", where), f"{where}bias_core_cycles"),
            bias_ci95_core_cycles=_finite(_field(d, "bias_ci95_core_cycles", where),
                                          f"{where}bias_ci95_core_cycles", 0.0),
            op_bias_core_cycles={_text(k, f"{where}op_bias_core_cycles key", 32):
                                 _finite(v, f"{where}op_bias_core_cycles.{k}") for k, v in ops.items()},
            chains=tuple(chains),
            zero_core_cycles=_finite(d.get("zero_core_cycles", 0.0), f"{where}zero_core_cycles"),
            zero_ci95_core_cycles=_finite(d.get("zero_ci95_core_cycles", 0.0), f"{where}zero_ci95_core_cycles",
                                          0.0),
            rulers_apart_percent=_finite(d.get("rulers_apart_percent", 0.0), f"{where}rulers_apart_percent",
                                         0.0, 100.0),
            clock_hops=_count(d.get("clock_hops", 0), f"{where}clock_hops"),
            clock_hops_placed=_count(d.get("clock_hops_placed", 0), f"{where}clock_hops_placed"),
            slowdowns=_count(d.get("slowdowns", 0), f"{where}slowdowns"),
        )


def _chain_dict(c: ChainCheck) -> dict[str, Any]:
    """A chain check as a file keeps it (its bias only where known)."""
    d = c.__dict__.copy()
    del d["path"]
    if not c.bias_known:
        del d["bias_core_cycles"], d["bias_ci95_core_cycles"]
    return d


#: The most rounds or runs a stored self-test can claim (selftest() allows 1000 and 10**6).
_COUNT_MAX = 10**6
#: The largest figure (a bias, an error, a chain's cost) a stored self-test may
#: hold, core cycles: wide of any, small enough that every line of it prints.
_FIGURE_MAX_CORE_CYCLES = 1e9


def _field(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise KeyError(f"{where}{key} is missing")
    return d[key]


def _known(d: object, fields: tuple[str, ...], where: str) -> None:
    """`d` an object holding no field but `fields` (a misspelt one would go unread)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"{where.rstrip('.') or 'selftest'} must be an object, not {type(d).__name__}")
    unknown = [k for k in d if k not in fields]
    if unknown:
        raise ValueError(f"unknown field {where}{unknown[0]} (it holds only {', '.join(fields)})")


def _list(value: object, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list, not {type(value).__name__}")
    return value


def _count(value: object, name: str) -> int:
    """A stored count: an int (not a bool) within 0.._COUNT_MAX."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= int.__index__(value) <= _COUNT_MAX:
        raise ValueError(f"{name} must be an int from 0 to {_COUNT_MAX}, not {value!r:.80}")
    return int.__index__(value)  # the plain int: a subclass's comparisons may lie


def _finite(value: object, name: str, low: float = -_FIGURE_MAX_CORE_CYCLES,
            high: float = _FIGURE_MAX_CORE_CYCLES) -> float:
    """A stored figure: a number within low..high."""
    x = plain_number(name, value)  # a subclass's comparisons may lie
    if not low <= x <= high:
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}, not {value!r:.80}")
    return x


def _yes_no(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false, not {value!r:.80}")
    return value


def _one_of(value: object, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r:.80}")
    return value


@dataclass(frozen=True)
class SelfTest:
    """What :func:`selftest` found: one :class:`PathCheck` per path and mode.

    Attributes:
        checks: the paths and modes tested.
        runs, rounds: runs per verification measurement; measurements per chain.
        seconds: how long it took, wall-clock seconds.
        judged: the modes whose checks decide :attr:`passed` (empty: all);
            by default ``'lfence'``, the one the goals are stated for.
        problem: why the self-test could not run ('' when it ran)."""

    checks: tuple[PathCheck, ...]
    runs: int = 1000
    rounds: int = 6
    seconds: float = 0.0
    judged: tuple[str, ...] = ()
    problem: str = ""

    def is_judged(self, check: PathCheck) -> bool:
        """Whether `check`'s mode decides :attr:`passed`."""
        return not self.judged or check.serialize in self.judged

    @property
    def passed(self) -> bool:
        """Whether it ran and every judged path and mode met the goals."""
        return not self.problem and all(c.passed for c in self.checks if self.is_judged(c))

    def lines(self) -> list[str]:
        """The report, one line per path and mode, after a heading line; text
        read from a file (names, the problem) shown by :func:`_display.printable`."""
        return [printable(line) for line in self._lines()]

    def _lines(self) -> list[str]:
        head = (
            f"self-test: harness bias on the known-cost chains (estimate - truth, "
            f"core cycles, +-95%), corrected and re-checked ({self.rounds} x {self.runs} runs "
            f"per chain, {self.seconds:.1f} s): {'PASS' if self.passed else 'FAIL'}"
        )
        if self.problem:  # its gist: the clock's line says the rest
            return [f"self-test: FAIL, not run: {self.problem.split(':', 1)[0]} (no truth in core cycles "
                    "to check the harness against)"]
        if self.judged and any(not self.is_judged(c) for c in self.checks):
            head += f" (judged on serialize={', '.join(self.judged)}; the other modes are reported)"
        return [head] + ["  " + c.line() + ("" if self.is_judged(c) else " (reported, not judged)")
                         for c in self.checks]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "rounds": self.rounds,
            "seconds": self.seconds,
            "passed": self.passed,
            "judged": list(self.judged),
            "checks": [c.to_dict() for c in self.checks],
            **({"problem": self.problem} if self.problem else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SelfTest:
        """Raises ValueError, TypeError or KeyError for a report no selftest()
        could have written, naming the field."""
        _known(d, ("runs", "rounds", "seconds", "passed", "judged", "checks", "problem"), "selftest.")
        _yes_no(d.get("passed", False), "selftest.passed")  # worked out again from the checks
        return cls(
            checks=tuple(PathCheck.from_dict(c, f"selftest.checks[{i}].")
                         for i, c in enumerate(_list(d.get("checks", []), "selftest.checks"))),
            runs=_count(d.get("runs", 0), "selftest.runs"),
            rounds=_count(d.get("rounds", 0), "selftest.rounds"),
            seconds=_finite(d.get("seconds", 0.0), "selftest.seconds", 0.0),
            judged=_modes(d.get("judged", [])),
            problem=_text(d.get("problem", ""), "selftest.problem"),
        )


def _text(value: object, name: str, most: int = 2000) -> str:
    """A stored string of at most `most` characters."""
    if not isinstance(value, str) or len(value) > most:
        raise ValueError(f"{name} must be a str of at most {most} characters, not {value!r:.80}")
    return value


def _modes(value: object) -> tuple[str, ...]:
    """A stored list of serialization modes, checked."""
    if not isinstance(value, list) or not all(isinstance(m, str) and m in SERIALIZE_MODES for m in value):
        raise ValueError(f"selftest.judged must be a list of serialization modes "
                         f"({', '.join(SERIALIZE_MODES)}), not {value!r:.80}")
    return tuple(value)
