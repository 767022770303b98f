"""Values with no C core: what a TSC tick is worth (:class:`Clock`, :class:`Rulers`,
:class:`CounterUnits`; docs/timing.md, "Units") and each result's catalog row
(:class:`CatalogRow`, with the catalogs of 0.2.0 to 0.6.0 for old files)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
import functools
import json
import re

from .._args import CYCLES_PER_TICK_RANGE, STEP_MAX_TICKS, TSC_HZ_RANGE, check_figure, plain_number
from .._base import cached_property

__all__ = ['Clock', 'CounterUnits', 'Rulers', 'RulerTiming', 'CalibrationWarning', 'judge_rulers', 'nan_equal', 'FOLDED_ABOVE', 'RULER_TOLERANCE_MIN', 'RULER_TOLERANCE_SIGMAS', 'CatalogRow', 'OLD_FILE_NAMES', 'file_method_name', 'recorded_row', 'recorded_versions', 'ROW_TEXT_MAX']


@dataclass(frozen=True)
class CounterUnits:
    """What one count of a result's counter is worth: where counts become ns and core cycles.

    Attributes:
        counter: ``'tsc'``, ``'pmu'`` or ``'pmu_user'``.
        hz: counts per second (the TSC's Hz, or the core clock's).
        step: the counter's granularity, in counts.
        cycles_per_count: core cycles per count (1 for the PMU)."""

    counter: str
    hz: float
    step: float
    cycles_per_count: float

    def to_ns(self, counts: Any) -> Any:
        """Counts (a number or a numpy array) in nanoseconds."""
        return counts * 1e9 / self.hz

    def to_core_cycles(self, counts: Any) -> Any:
        """Counts (a number or a numpy array) in core cycles."""
        return counts * self.cycles_per_count

    def convert(self, counts: Any, unit: str) -> Any:
        """Counts in `unit`: ``'ticks'`` (unchanged), ``'ns'`` or ``'core_cycles'``."""
        if unit == "ns":
            return self.to_ns(counts)
        if unit == "core_cycles":
            return self.to_core_cycles(counts)
        if unit == "ticks":
            return counts
        raise ValueError(f"unknown unit {unit!r}: use one of ticks, ns, core_cycles")


@dataclass(frozen=True)
class RulerTiming:
    """One ruler chain timed at N and 2N instructions.

    Attributes:
        ruler: ``'add'``, ``'imul'`` or ``'immediate_add'``.
        instructions: dependent instructions in the difference (N).
        ticks, se_ticks: median TSC ticks of 2N less N, and its standard error.
        clean, total: samples of each size kept; pairs timed."""

    ruler: str
    instructions: int
    ticks: float
    se_ticks: float
    clean: int = 0
    total: int = 0

    @property
    def ticks_per_instruction(self) -> float:
        return self.ticks / self.instructions

    @property
    def relative_se(self) -> float:
        return self.se_ticks / self.ticks if self.ticks > 0 else math.inf


def nan_equal(*values: object) -> tuple:
    """`values` as a key that compares NaN (an unknown figure) equal to NaN:
    a clock read back from its file is the same clock."""
    return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in values)


#: The rulers agree when imul/add reads 3 within this fraction at least, or
#: within four standard errors of their ratio where their scatter is wider.
#: The floor is what the scatter cannot show: in 40 fresh processes on an
#: AuthenticAMD family 25 model 17 (Zen 4) guest the two read 0.0-0.9%
#: apart, the same all through one process (up to 2.2% with blocks of 100
#: instructions), while what the check exists for is tens of percent off
#: (immediate adds folded at rename: 250-500%; an imul of 4 core cycles: 33%).
RULER_TOLERANCE_MIN = 0.03
RULER_TOLERANCE_SIGMAS = 4.0
#: A dependent chain cannot run faster than one instruction per core cycle
#: unless the core folds it: above this many immediate adds per core cycle
#: (by the register-register add ruler), they are folded at rename.
FOLDED_ABOVE = 1.25


class _NanEqual:
    """Equality and hash over a dataclass's fields with NaN equal to NaN."""

    def _key(self) -> tuple:
        return nan_equal(*(getattr(self, f.name) for f in dataclasses.fields(self)))  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())


#: The largest figure of a ruler (core cycles per tick, a tolerance, adds per core cycle).
RULER_FIGURE_MAX = 1e6


@dataclass(frozen=True, eq=False)
class Rulers(_NanEqual):
    """The two rulers of core cycles, checked against each other, and the immediate-add fact.

    Attributes:
        add_cycles_per_tick, imul_cycles_per_tick: core cycles per TSC tick by
            register-register adds and by 64-bit imuls.
        tolerance: how far apart (a fraction) the two may read and agree.
        immediate_adds_per_core_cycle: dependent ``add $1, reg`` per core cycle."""

    add_cycles_per_tick: float
    imul_cycles_per_tick: float
    tolerance: float
    immediate_adds_per_core_cycle: float = math.nan

    def __post_init__(self) -> None:
        # what a result file holds of them (to_dict, from_dict): each figure
        # from 0 to 1e6, NaN where a ruler read no time; the tolerance known
        for name in ("add_cycles_per_tick", "imul_cycles_per_tick", "tolerance",
                     "immediate_adds_per_core_cycle"):
            value = check_figure(f"rulers.{name}", getattr(self, name), 0, RULER_FIGURE_MAX,
                                 nan=name != "tolerance")
            if value == 0:
                raise ValueError(f"rulers.{name} must be above 0, not 0.0")
            object.__setattr__(self, name, value)

    @property
    def imul_in_adds(self) -> float:
        """An imul's latency in register-register adds: 3 where both are rulers."""
        return 3 * self.add_cycles_per_tick / self.imul_cycles_per_tick

    @property
    def agree(self) -> bool:
        """Whether imul/add reads 3 within :attr:`tolerance` (never while
        either ruler read no time)."""
        return abs(self.imul_in_adds / 3 - 1) <= self.tolerance

    @property
    def problem(self) -> str:
        """Why core cycles cannot be trusted here ('' while the rulers agree)."""
        if self.agree:
            return ""
        if not (self.add_cycles_per_tick > 0 and self.imul_cycles_per_tick > 0):
            return ("the core-cycle rulers disagree: a ruler chain read no time at all, so core-cycle "
                    "figures are unknown; TSC ticks and ns stand. Measure again with "
                    "fastcpu.clock(refresh=True)")
        return (f"the core-cycle rulers disagree: a 64-bit imul chain reads {self.imul_in_adds:.2f} "
                f"register-register adds per imul, not 3 (tolerance {self.tolerance:.1%}; add ruler "
                f"{self.add_cycles_per_tick:.3f}, imul ruler {self.imul_cycles_per_tick:.3f} core cycles "
                "per TSC tick), so core-cycle figures are unknown; TSC ticks and ns stand. Measure again "
                "with fastcpu.clock(refresh=True) on a quieter machine")

    @property
    def immediate_adds_folded(self) -> bool | None:
        """Whether the core folds chains of ``add $1, reg`` at rename (None: not measured)."""
        x = self.immediate_adds_per_core_cycle
        return None if not math.isfinite(x) else x > FOLDED_ABOVE

    def immediate_add_words(self) -> str:
        """The immediate-add fact in words, for headers and tables."""
        folded = self.immediate_adds_folded
        if folded is None:
            return "immediate-add chains not measured"
        x = self.immediate_adds_per_core_cycle
        if folded:
            return f"add $imm chains folded at rename: {x:.1f} per core cycle"
        return f"add $imm chains not folded: {x:.2f} per core cycle"

    def words(self) -> str:
        """The rulers in one line."""
        verdict = "agree" if self.agree else "DISAGREE"
        return (f"rulers {verdict}: add r,r {self.add_cycles_per_tick:.3f}, imul/3 "
                f"{self.imul_cycles_per_tick:.3f} core cycles per TSC tick (imul = "
                f"{self.imul_in_adds:.2f} adds, tolerance {self.tolerance:.1%}); "
                f"{self.immediate_add_words()}")

    def to_dict(self) -> dict[str, float | None]:
        """As JSON values (None: not measured, or a chain that read no time)."""
        return {k: v if math.isfinite(v) else None for k, v in (
            ("add_cycles_per_tick", self.add_cycles_per_tick),
            ("imul_cycles_per_tick", self.imul_cycles_per_tick),
            ("tolerance", self.tolerance),
            ("immediate_adds_per_core_cycle", self.immediate_adds_per_core_cycle))}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rulers:
        """Raises ValueError or TypeError for values no clock() could have written."""
        def positive(key: str, nullable: bool = True) -> float:
            """A positive number; null (None) where `nullable`: unknown."""
            if key not in d:
                raise TypeError(f"rulers.{key} is missing")
            v = d[key]
            if v is None and nullable:
                return math.nan
            v = plain_number(f"rulers.{key}", v)  # a subclass's comparisons may lie
            if not (math.isfinite(v) and 0 < v <= RULER_FIGURE_MAX):
                raise ValueError(f"rulers.{key} out of range: {v!r}")
            return v

        return cls(positive("add_cycles_per_tick"), positive("imul_cycles_per_tick"),
                   positive("tolerance", nullable=False), positive("immediate_adds_per_core_cycle"))


def judge_rulers(add: RulerTiming, imul: RulerTiming, immediate: RulerTiming | None = None) -> Rulers:
    """The rulers from their timings, their tolerance from the scatter of both."""
    # a chain that read no time (or less than none) gives no rate: NaN, which
    # agrees with nothing, so the clock says why core cycles are unknown
    add_cpt = 1 / add.ticks_per_instruction if add.ticks > 0 else math.nan
    imul_cpt = 3 / imul.ticks_per_instruction if imul.ticks > 0 else math.nan
    spread = RULER_TOLERANCE_SIGMAS * math.hypot(add.relative_se, imul.relative_se)
    tolerance = max(RULER_TOLERANCE_MIN, spread if math.isfinite(spread) else RULER_TOLERANCE_MIN)
    per_cycle = math.nan
    if immediate is not None and immediate.ticks > 0 and math.isfinite(add_cpt):
        per_cycle = 1 / (immediate.ticks_per_instruction * add_cpt)
    return Rulers(add_cpt, imul_cpt, tolerance, per_cycle)


@dataclass(frozen=True, eq=False)
class Clock(_NanEqual):
    """The clock fastcpu measures with.

    Attributes:
        tsc_hz: TSC ticks per second, measured against CLOCK_MONOTONIC_RAW.
        tsc_step_ticks: the counter's granularity, TSC ticks (a float).
        cycles_per_tick: core cycles per TSC tick by the add ruler; NaN while
            the imul ruler disagrees (:attr:`core_cycles_problem`).
        tsc_read_spacing_ticks: median spacing of back-to-back reads, TSC ticks (NaN: not measured).
        rulers: the :class:`Rulers`, or None (files before fastcpu 0.5)."""

    tsc_hz: float
    tsc_step_ticks: float
    cycles_per_tick: float
    tsc_read_spacing_ticks: float = math.nan
    rulers: Rulers | None = None

    def __post_init__(self) -> None:
        # the ranges a result file's reader checks: a clock built here saves and loads back
        set_ = object.__setattr__
        set_(self, "tsc_hz", check_figure("tsc_hz", self.tsc_hz, *TSC_HZ_RANGE, "TSC ticks per second"))
        set_(self, "tsc_step_ticks", check_figure("tsc_step_ticks", self.tsc_step_ticks, 1, STEP_MAX_TICKS,
                                                  "TSC ticks"))
        set_(self, "cycles_per_tick", check_figure("cycles_per_tick", self.cycles_per_tick,
                                                   *CYCLES_PER_TICK_RANGE, "core cycles per TSC tick", nan=True))
        set_(self, "tsc_read_spacing_ticks", check_figure("tsc_read_spacing_ticks", self.tsc_read_spacing_ticks,
                                                          0, STEP_MAX_TICKS, "TSC ticks", nan=True))
        if self.rulers is not None and not isinstance(self.rulers, Rulers):
            raise TypeError(f"rulers must be a Rulers or None, not {type(self.rulers).__name__}")
        # rulers that disagree leave no figure to convert with, whoever built the clock
        if self.rulers is not None and not self.rulers.agree and not math.isnan(self.cycles_per_tick):
            set_(self, "cycles_per_tick", math.nan)
        if self.rulers is not None and self.rulers.agree and math.isnan(self.cycles_per_tick):
            raise ValueError("cycles_per_tick is NaN (unknown) while the rulers agree: give the add "
                             "ruler's figure, rulers.add_cycles_per_tick")

    @property
    def core_hz(self) -> float:
        """Core cycles per second implied by the add ruler (NaN while untrusted)."""
        return self.tsc_hz * self.cycles_per_tick

    @property
    def tsc_step_ns(self) -> float:
        """The counter's granularity in nanoseconds."""
        return self.tsc_step_ticks * 1e9 / self.tsc_hz

    @cached_property
    def core_cycles_problem(self) -> str:
        """Why core-cycle figures are unknown here ('' when they stand).
        Worked out once per clock: every bench() asks."""
        if self.rulers is not None and self.rulers.problem:
            return self.rulers.problem
        if not (self.cycles_per_tick > 0):
            return "core cycles per TSC tick unknown: no ruler measured them"
        return ""

    def caveats(self, counter: str = "tsc") -> tuple[str, ...]:
        """What a result counted on `counter` must carry while core cycles per tick are unknown."""
        problem = self.core_cycles_problem
        if not problem:
            return ()
        if counter == "tsc":
            return (problem,)
        return (f"{problem.split(':', 1)[0]}: the PMU's core cycles stand, but ns need the core "
                "clock, which is unknown here",)

    def ruler_words(self) -> str:
        """The rulers and the granularity in one line (CLI header, reports)."""
        grain = f"granularity {self.tsc_step_ticks:.2f} TSC ticks"
        if math.isfinite(self.tsc_read_spacing_ticks):
            grain += f", back-to-back reads {self.tsc_read_spacing_ticks:.0f} apart"
        rulers = self.rulers.words() if self.rulers is not None else "rulers not recorded"
        return f"{grain}; {rulers}"

    def units(self, counter: str = "tsc") -> CounterUnits:
        """What one count of `counter` is worth with this clock: a TSC tick
        (``'tsc'``), or one core cycle at :attr:`core_hz` (``'pmu'``,
        ``'pmu_user'``)."""
        if counter == "tsc":
            return CounterUnits(counter, self.tsc_hz, self.tsc_step_ticks, self.cycles_per_tick)
        if counter in ("pmu", "pmu_user"):
            return CounterUnits(counter, self.core_hz, 1, 1.0)
        raise ValueError(f"unknown counter {counter!r}: 'tsc', 'pmu' or 'pmu_user'")

    def ticks_to_ns(self, ticks: float) -> float:
        """Convert TSC ticks to nanoseconds."""
        return self.units().to_ns(ticks)

    def ticks_to_core_cycles(self, ticks: float) -> float:
        """Convert TSC ticks to core cycles (at the add ruler's core clock; NaN while untrusted)."""
        return self.units().to_core_cycles(ticks)


class CalibrationWarning(RuntimeWarning):
    """The core-cycle calibration could not be trusted (most of its samples
    were disturbed); the message says how many were clean."""


#: Method names that result files written by an old fastcpu carry -> the
#: method's name now, applied when such a file is read (never to a name a
#: user gives), so that old files load for good and compare with new ones.
#: getcpu_sidt_fp changed both knobs at once (no red zone and a frame
#: pointer); the four corners now have a name each.
OLD_FILE_NAMES: dict[str, str] = {"getcpu_sidt_fp": "getcpu_sidt_norz_fp"}

#: The longest kind, role or encoding a file may give (characters); a
#: description may hold 2,000.
ROW_TEXT_MAX = 64
_DESCRIPTION_MAX = 2000


def file_method_name(name: str) -> str:
    """A method name as read from a result file: `name`, or the method an
    old file's name now stands for (OLD_FILE_NAMES)."""
    return OLD_FILE_NAMES.get(name, name)


@dataclass(frozen=True)
class CatalogRow:
    """A method's catalog row as the fastcpu that measured it had it, in the file's words.

    Attributes:
        kind: ``'method'``, ``'model'`` or ``'chain'`` (a newer fastcpu may name another).
        role: ``'cpu_source'``, ``'library_call'``, ``'entry_cost'``, ``'model'``
            or ``'chain'``; an unknown role is shown with the user functions.
        encoding: what its raw value reads (:attr:`fastcpu.MethodInfo.encoding`).
        description: what the sequence is, one line."""

    kind: str
    role: str
    encoding: str
    description: str

    @property
    def reads_cpu_number(self) -> bool:
        """Whether its raw value holds a CPU number: a ``'cpu'`` or
        ``'cpunode'`` encoding (a descriptor table's limit or selector, which
        no released kernel sets to the CPU, does not)."""
        return self.encoding in ("cpu", "cpunode")

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "role": self.role, "encoding": self.encoding,
                "description": self.description}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CatalogRow:
        """The row of a file's entry, every field checked.

        Raises:
            ValueError: a field missing, unknown, not a string, or too long (named)."""
        if not isinstance(d, Mapping):
            raise ValueError(f"must be an object, not {type(d).__name__}")
        unknown = sorted(set(d) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}: a catalog row holds {', '.join(_FIELDS)}")
        values = {}
        for key in _FIELDS:
            if key not in d:
                raise ValueError(f"field {key!r} is missing")
            v = d[key]
            most = _DESCRIPTION_MAX if key == "description" else ROW_TEXT_MAX
            if not isinstance(v, str) or len(v) > most or (key != "description" and not _WORD.fullmatch(v)):
                what = ("a string of at most 2000 characters" if key == "description"
                        else f"a word of at most {ROW_TEXT_MAX} letters, digits or underscores")
                raise ValueError(f"field {key!r} is {json.dumps(v)[:60]}, must be {what}")
            values[key] = v
        return cls(**values)


_FIELDS = ("kind", "role", "encoding", "description")
_WORD = re.compile(r"[a-z0-9_]+")


@functools.lru_cache(maxsize=1)
def _recorded() -> tuple[tuple[tuple[int, ...], str, dict[str, CatalogRow]], ...]:
    """The recorded catalogs, oldest first: (version as numbers, version, name -> row)."""
    from importlib import resources  # on first use: importlib.resources costs 15 ms to import

    doc = json.loads(resources.files("fastcpu").joinpath("catalog_rows.json").read_text("utf-8"))
    catalogs: dict[str, dict[str, CatalogRow]] = {v: {} for v in doc["versions"]}
    for row in doc["rows"]:
        words = CatalogRow.from_dict({k: row[k] for k in _FIELDS})
        for v in row["versions"]:
            catalogs[v][row["name"]] = words
    return tuple(sorted((_version_key(v), v, rows) for v, rows in catalogs.items()))


def _version_key(version: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(g or 0) for g in m.groups()) if m else ()


def recorded_versions() -> tuple[str, ...]:
    """The fastcpu versions whose catalogs are recorded, oldest first."""
    return tuple(v for _, v, _ in _recorded())


def recorded_row(method: str, fastcpu_version: str) -> CatalogRow | None:
    """The row of `method` in the recorded catalog of `fastcpu_version` (the nearest older one); None where it lacks it."""
    catalogs = _recorded()
    key = _version_key(fastcpu_version)
    chosen = catalogs[-1][2] if not key else next(
        (rows for k, _, rows in reversed(catalogs) if k <= key), catalogs[0][2])
    return chosen.get(method)
