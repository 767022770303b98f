"""Results: every method measured on one machine, with that machine's facts,
and how it becomes a document and is built from one.

:func:`fastcpu.measure` (``_measure.py``) produces one; :meth:`Results.save`
and :func:`load` move it through a file: :meth:`Results.to_document` and
:meth:`Results.from_document` say what a document holds, the codec
(``_json_document.py``) writes and reads documents without knowing Results.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Union

import numpy as np

from . import _display
from ._display import printable
from ._args import (CYCLES_PER_TICK_RANGE, HARNESS_BIAS_MAX_CORE_CYCLES, RUNS_MAX, SENTENCE_CHARS_MAX,
                    SENTENCES_MAX, STEP_MAX_TICKS, TICKS_MAX, TSC_HZ_RANGE, UNROLL_MAX, check_label,
                    check_sentences)
from ._clock_values import Clock, Rulers, nan_equal
from ._catalog_rows import CatalogRow, canonical_name, recorded_row
from ._machine import CPU_NUMBER_MAX, fact_problem
from ._bench_result import COUNTERS as _COUNTERS
from ._bench_result import BenchResult, DiffResult, stability
from ._clock_motion import ClockMotion, merge_motion
from ._stability import Stability
from ._selftest_report import SelfTest
from ._json_document import (
    FORMAT_NAME,
    FORMAT_VERSION,
    Reader,
    ResultFileError,
    encode_bools,
    encode_ticks,
    read_document,
    write_document,
)
from ._table import format_back_to_back, format_clock, format_table

__all__ = ["Results", "Source", "load", "as_results", "CpuVerdict", "NOT_WAYS", "infer_cpu_verdict", "ONE_CALL",
           "BACK_TO_BACK", "QUESTIONS", "QUESTION_WORDS", "NOT_MEASURED"]

#: A Results, or the path of a result file to load one from.
Source = Union["Results", str, "os.PathLike[str]"]
#: What Results say of figures no checksum protects (Results.verified False).
UNVERIFIED = ("not verified: its file carries no checksum (written before format version 3), so a "
              "damaged figure in it would have loaded unnoticed; saving these Results writes one, "
              "for the figures as they read now")


def _json_normal(value: object, what: str) -> object:
    """`value` as it reads back from JSON (int keys become str), or ValueError."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must hold only JSON values (str, int, float, bool, None, "
                         f"lists, dicts): {exc}") from None


def _same_arrays(a: BenchResult, b: BenchResult) -> bool:
    return all(
        x.dtype == y.dtype and np.array_equal(x, y)
        for x, y in ((a.raw, b.raw), (a.empty, b.empty), (a.migrated, b.migrated))
    )


def same_bench_result(a: BenchResult, b: BenchResult) -> bool:
    """Whether two BenchResults hold the same settings, clock and arrays."""
    settings = ("method", "runs", "serialize", "unroll", "cpu", "best", "median",
                "tsc_hz", "cycles_per_tick", "tsc_step_ticks", "counter", "caveats", "catalog_row")
    return all(_same(getattr(a, s), getattr(b, s)) for s in settings) and _same_arrays(a, b)


def same_diff_result(a: DiffResult, b: DiffResult) -> bool:
    """Whether two DiffResults hold the same settings, clock and arrays."""
    settings = ("method", "runs", "serialize", "k", "cpu", "tsc_hz", "cycles_per_tick", "tsc_step_ticks",
                "counter", "caveats")
    return all(_same(getattr(a, s), getattr(b, s)) for s in settings) and all(
        np.array_equal(getattr(a, x), getattr(b, x)) for x in ("long", "short", "migrated"))


def _same(a: object, b: object) -> bool:
    """a == b, NaN equal to NaN (an unknown core-cycle figure)."""
    return nan_equal(a) == nan_equal(b)


#: The two questions a file answers: one call timed alone (the LKML seed's,
#: ``Results.results``) and calls back to back, per call (glibc's 13.7 ->
#: 2.5 ns, ``Results.back_to_back``).
ONE_CALL = "one_call"
BACK_TO_BACK = "back_to_back"
QUESTIONS = (ONE_CALL, BACK_TO_BACK)
#: The headings that name them.
QUESTION_WORDS = {ONE_CALL: "one call alone", BACK_TO_BACK: "calls back to back"}
#: What a file without calls back to back says of them (data/ files before 0.7.0).
NOT_MEASURED = "not measured"
NOT_MEASURED_BACK_TO_BACK = (f"{NOT_MEASURED} back to back here (a file before fastcpu 0.7.0, or measured with "
                             "--unroll or back_to_back=False)")

#: Catalog roles that are no way a process has on the kernel it runs: models
#: of historical and proposed implementations (MethodInfo.role).
NOT_WAYS = ("model",)
#: Encodings that read a descriptor table's limit or selector: no released
#: kernel stores the CPU there (MethodInfo.encoding).
_DESCRIPTOR_TABLE = ("sidt", "limit", "selector")


@dataclass(frozen=True)
class CpuVerdict:
    """Whether a method reported the CPU on the machine of a Results, and why.

    Attributes:
        reports_cpu: it read the CPU it ran on, on every CPU of the pinned
            sweep (``fastcpu.check()``), as sched_getcpu() and the getcpu
            system call did there.
        why: what the sweep saw (``'agreed on CPUs 0, 1'``, the wrong CPU,
            the error, why it is no CPU source there), or, for a file
            written before fastcpu 0.6 recorded the sweep, ``'inferred: ...'``.
    """

    reports_cpu: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"reports_cpu": self.reports_cpu, "why": self.why}


def infer_cpu_verdict(row: CatalogRow | None, machine: Mapping[str, object]) -> CpuVerdict:
    """What a method's catalog row (`row`, its result's own: the file's words)
    says of it on a machine described by `machine` (``machine_info()``'s
    facts), where no sweep was recorded: its encoding holds a CPU number,
    except a descriptor-table limit, which no released kernel sets to one
    (and which UMIP's emulation reads as 0)."""
    info = row
    if info is None:
        return CpuVerdict(False, "inferred: its file does not say what it reads (a user function, or "
                                 "a method no recorded catalog has)")
    if info.encoding in _DESCRIPTOR_TABLE:
        flags = machine.get("flags")
        umip = isinstance(flags, Mapping) and bool(flags.get("umip"))
        return CpuVerdict(False, "inferred: a descriptor table's limit or selector, which no released "
                          "kernel sets to the CPU" + ("; UMIP's emulation reads it as 0 there" if umip else ""))
    if info.encoding not in ("cpu", "cpunode"):
        return CpuVerdict(False, "inferred: it reads no CPU number (a cost, not a way)")
    if info.role in NOT_WAYS:
        return CpuVerdict(False, "inferred: a model of an implementation, and the file has no sweep "
                                 "to say what it read (written before fastcpu 0.6)")
    return CpuVerdict(True, "inferred from the catalog: the file has no agreement sweep "
                            "(written before fastcpu 0.6)")


@dataclass(frozen=True, eq=False)
class Results(Mapping[str, BenchResult]):
    """Every method measured on one machine, with the machine's facts.

    A read-only mapping from method name to :class:`BenchResult`, in the order
    measured. Two Results are equal when their metadata and every array are.
    In Jupyter they show as an HTML table, one row per method.

    Attributes:
        results: method name -> BenchResult (raw per-run TSC ticks).
        machine: facts about the machine (``fastcpu._machine.machine_info()``:
            CPU vendor, model, family/model/stepping, microcode, flags,
            kernel, glibc, hypervisor, governors, boost, affinity, isolated
            CPUs, ...), as JSON values.
        clock: what a TSC tick was worth there (``tsc_hz``, ``tsc_step_ticks``,
            ``cycles_per_tick``); every result was converted with it.
        serialize: the serialization mode of every result.
        date: when it was measured, ISO 8601 UTC (``2025-01-31T12:00:00Z``).
        label: a free-form name for the machine (``None``: use the model
            name and host name); text UTF-8 can hold (a lone surrogate is
            refused with ValueError).
        fastcpu_version: the fastcpu that measured it.
        unavailable: methods asked for but not runnable there -> the reason.
        selftest: the harness self-test made with the measurement (its bias
            corrections are in the results' estimates), or ``None``.
        notes: what was done to the file after it was measured, one
            sentence each (e.g. core cycles re-derived from a ruler measured
            on that host): shown with the clock.
        cpu_verdicts: method -> :class:`CpuVerdict`, what the pinned
            agreement sweep made with the measurement saw each method read
            (empty for files before fastcpu 0.6: :meth:`reports_cpu` infers).
        verified: False where these Results come from a result file whose
            figures no checksum protects (one written before format version
            3, or a document given to :meth:`from_document`): a damaged
            figure there would have loaded unnoticed, and printing them says
            so. True for Results measured here or loaded from a file whose
            checksum matched. Not part of equality: it says where they came
            from, not what they hold.
    """

    results: Mapping[str, BenchResult]
    machine: Mapping[str, object]
    clock: Clock
    serialize: str
    date: str
    label: str | None = None
    fastcpu_version: str = ""
    unavailable: Mapping[str, str] = field(default_factory=dict)
    selftest: SelfTest | None = None
    notes: tuple[str, ...] = ()
    cpu_verdicts: Mapping[str, CpuVerdict] = field(default_factory=dict)
    verified: bool = True
    back_to_back: Mapping[str, DiffResult] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.clock, Clock):
            raise TypeError(f"clock must be a fastcpu.Clock, not {type(self.clock).__name__}")
        check_label(self.label)
        # what load() checks of a file, checked here: Results that are built save and load back
        for name in ("serialize", "date", "fastcpu_version"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, not {type(getattr(self, name)).__name__}")
            check_label(getattr(self, name), name)
        object.__setattr__(self, "notes", check_sentences("notes", self.notes))
        if self.selftest is not None:
            if not isinstance(self.selftest, SelfTest):
                raise TypeError(f"selftest must be a SelfTest or None, not {type(self.selftest).__name__}")
            try:
                SelfTest.from_dict(self.selftest.to_dict()).lines()
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f"selftest: a report no result file can hold: {exc}") from None
        results: dict[str, BenchResult] = {}
        for name, r in dict(self.results).items():
            if not isinstance(r, BenchResult):
                raise TypeError(f"results[{name!r}] must be a BenchResult, not {type(r).__name__}")
            if name != r.method:
                raise ValueError(f"results[{name!r}] holds method {r.method!r}: key it by its method")
            if r.serialize != self.serialize:
                raise ValueError(f"{name}: measured with serialize={r.serialize!r}, "
                                 f"not the file's {self.serialize!r}")
            # each result's cycles_per_tick is its own (measured around it)
            if (r.tsc_hz, r.tsc_step_ticks) != (self.clock.tsc_hz, self.clock.tsc_step_ticks):
                raise ValueError(f"{name}: its clock differs from the Results' clock; "
                                 "put results of one clock together")
            if math.isnan(r.cycles_per_tick) and not self.clock.core_cycles_problem:
                raise ValueError(f"{name}: its core cycles per tick are unknown (NaN) where the Results' "
                                 "clock knows them: give the figure measured around it, or the clock's")
            results[name] = r
        unavailable = {str(k): str(v) for k, v in dict(self.unavailable).items()}
        machine = _json_normal(dict(self.machine), "machine")
        for key, value in machine.items():
            must = fact_problem(key, value)
            if must:
                raise ValueError(f"machine[{key!r}] is {json.dumps(value)[:60]}, must be {must}")
        object.__setattr__(self, "results", MappingProxyType(results))
        verdicts = dict(self.cpu_verdicts)
        for name, v in verdicts.items():
            if not isinstance(v, CpuVerdict):
                raise TypeError(f"cpu_verdicts[{name!r}] must be a CpuVerdict, not {type(v).__name__}")
            if not (isinstance(name, str) and isinstance(v.reports_cpu, bool) and isinstance(v.why, str)):
                raise TypeError(f"cpu_verdicts[{name!r}] must be keyed by a method name (str) and hold a bool "
                                "and a str")
        object.__setattr__(self, "unavailable", MappingProxyType(unavailable))
        object.__setattr__(self, "machine", MappingProxyType(machine))  # type: ignore[arg-type]
        object.__setattr__(self, "cpu_verdicts", MappingProxyType(verdicts))
        diffs: dict[str, DiffResult] = {}
        for name, d in dict(self.back_to_back).items():
            if not isinstance(d, DiffResult):
                raise TypeError(f"back_to_back[{name!r}] must be a DiffResult, not {type(d).__name__}")
            if name != d.method:
                raise ValueError(f"back_to_back[{name!r}] holds method {d.method!r}: key it by its method")
            if d.serialize != self.serialize or (d.tsc_hz, d.tsc_step_ticks) != (
                    self.clock.tsc_hz, self.clock.tsc_step_ticks):
                raise ValueError(f"back_to_back[{name!r}]: measured with another serialization mode or "
                                 "clock than the Results'")
            diffs[name] = d
        object.__setattr__(self, "back_to_back", MappingProxyType(diffs))

    # -- the mapping ---------------------------------------------------------
    def __getitem__(self, method: str) -> BenchResult:
        try:
            return self.results[canonical_name(method) if isinstance(method, str) else method]
        except KeyError:
            raise KeyError(f"{method!r} was not measured here; measured: "
                           f"{', '.join(self.results) or 'nothing'}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Results):
            return NotImplemented
        meta = ("machine", "clock", "serialize", "date", "label", "fastcpu_version", "unavailable",
                "selftest", "notes", "cpu_verdicts")
        if any(getattr(self, m) != getattr(other, m) for m in meta):
            return False
        if list(self.results) != list(other.results) or list(self.back_to_back) != list(other.back_to_back):
            return False
        return all(same_bench_result(self.results[k], other.results[k]) for k in self.results) and all(
            same_diff_result(self.back_to_back[k], other.back_to_back[k]) for k in self.back_to_back)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        # The read-only views cannot be pickled; rebuild from plain dicts.
        return (Results, (dict(self.results), dict(self.machine), self.clock, self.serialize,
                          self.date, self.label, self.fastcpu_version, dict(self.unavailable),
                          self.selftest, self.notes, dict(self.cpu_verdicts), self.verified,
                          dict(self.back_to_back)))

    # -- reading -------------------------------------------------------------
    @property
    def name(self) -> str:
        """The label, else ``'MODEL NAME on HOSTNAME'`` from the machine facts."""
        if self.label:
            return self.label
        model = self.machine.get("model_name") or "unknown CPU"
        host = self.machine.get("hostname")
        return f"{model} on {host}" if host else str(model)

    def reports_cpu(self, method: str) -> CpuVerdict:
        """Whether `method` reported the CPU on this machine: what the pinned
        sweep recorded with the measurement saw, else (a file from before
        fastcpu 0.6) what its result's catalog row says there
        (:func:`infer_cpu_verdict`, the file's words, never this machine's
        catalog). The one definition every "cheapest way" answer uses."""
        name = canonical_name(method) if isinstance(method, str) else method
        verdict = self.cpu_verdicts.get(name)
        if verdict is not None:
            return verdict
        measured = self.results.get(name)
        return infer_cpu_verdict(measured.catalog_row if measured is not None else None, self.machine)

    def ways(self) -> list[BenchResult]:
        """The results of the ways a process can learn its CPU with here (every
        catalog row but the models, ``NOT_WAYS``, by the role its file gives)
        that reported the CPU (:meth:`reports_cpu`), in the order measured;
        a result whose file gives no catalog row (a user function) is none."""
        out = []
        for name, r in self.results.items():
            if r.catalog_row is None:
                continue
            if r.catalog_row.role not in NOT_WAYS and self.reports_cpu(name).reports_cpu:
                out.append(r)
        return out

    @property
    def clock_motion(self) -> ClockMotion | None:
        """How the core clock moved over all the measurements (their ruler
        points merged: levels seen, hops, disturbed points); None for a file
        before 0.7.0 or without ruler points (a PMU counter)."""
        return merge_motion(r.clock_motion for r in self.results.values())

    def ways_back_to_back(self) -> list[DiffResult]:
        """:meth:`ways`, answering "calls back to back": each way's
        :attr:`back_to_back` result (cost per call in a loop), where measured."""
        return [self.back_to_back[r.method] for r in self.ways() if r.method in self.back_to_back]

    def cheapest_way(self, question: str = ONE_CALL) -> BenchResult | DiffResult | None:
        """The answer to one of the seeds' questions here: of :meth:`ways`
        (``question`` ``'one_call'``: one call timed alone, the LKML seed's)
        or :meth:`ways_back_to_back` (``'back_to_back'``: cost per call in a
        loop, glibc's 13.7 -> 2.5 ns), the one of the lowest ESTIMATE (a cost
        below what the harness resolves counts as 0: it is known only as a
        bound); ``None`` when none reported the CPU (or none was measured
        back to back)."""
        # in ns: a file may mix counters (TSC ticks, PMU core cycles), never two units
        return min(self._ways_of(question), key=_central_ns, default=None)

    def _ways_of(self, question: str) -> list[Any]:
        if question not in QUESTIONS:
            raise ValueError(f"question must be one of {', '.join(QUESTIONS)}, not {question!r}")
        return self.ways() if question == ONE_CALL else self.ways_back_to_back()

    def cheapest_ties(self, question: str = ONE_CALL) -> list[Any]:
        """The ways that tie with :meth:`cheapest_way` within resolution: each
        whose interval (from 0 for a bound) reaches the top of the
        cheapest's (its bound), the cheapest first; [] when none reported
        the CPU."""
        best = self.cheapest_way(question)
        if best is None:
            return []
        top = _high_ns(best)
        return [best] + sorted((r for r in self._ways_of(question) if r is not best and _low_ns(r) <= top),
                               key=_central_ns)

    def cheapest_way_words(self, question: str = ONE_CALL) -> str:
        """:meth:`cheapest_way` in words, as the CLI, the seed table and the
        README say it: ``'rseq: 0.3 +- 0.1 core cycles (0.1 ns), ESTIMATE'``,
        with every way that ties with it within resolution."""
        ties = self.cheapest_ties(question)
        if not ties:
            if question == BACK_TO_BACK and not self.back_to_back:
                return NOT_MEASURED_BACK_TO_BACK
            return "none measured here reported the CPU"
        words = _way_words(ties[0])
        if len(ties) > 1:
            words += "; tied within resolution: " + ", ".join(
                f"{r.method} {_way_words(r, named=False)}" for r in ties[1:])
        return words

    def answers_differ(self) -> str:
        """One line where the two questions' cheapest ways differ ('' where
        they agree, or where calls back to back were not measured)."""
        one, loop = self.cheapest_way(ONE_CALL), self.cheapest_way(BACK_TO_BACK)
        if one is None or loop is None:
            return ""
        tied = {r.method for r in self.cheapest_ties(ONE_CALL)} & {r.method for r in self.cheapest_ties(BACK_TO_BACK)}
        if one.method == loop.method or tied:
            return ""
        return (f"the two questions differ here: {one.method} is the cheapest call alone, {loop.method} "
                f"the cheapest in a loop (a call alone pays its latency, calls back to back overlap "
                f"and pay their throughput)")



    def table(self) -> str:
        """The seed-style BEST/MEDIAN table (above the empty sequence, per copy)."""
        return format_table(self.results.values(), self.unavailable.items())

    def __repr__(self) -> str:
        """One line: the machine, how many methods (and how many could not
        run), the serialization mode and the date."""
        one = _display.one_line
        missing = f" ({len(self.unavailable)} unavailable)" if self.unavailable else ""
        return (f"<fastcpu.Results {one(repr(self.name), 80)}: {len(self)} methods{missing}, "
                f"serialize={one(self.serialize, 16)}, {one(self.date, 32)}>")

    def _stability(self, r: BenchResult) -> Stability:
        """r's stability report against the facts of the machine it ran on
        (not the one looking at it)."""
        try:
            return stability(r, self.machine)
        except TypeError:  # facts of the wrong types (an edited file): judge the runs alone
            return stability(r, {})

    def _repr_html_(self) -> str:
        """The results as an HTML table, for Jupyter: each method's estimate
        with its 95% interval (core cycles, ns, TSC ticks), best, median, the
        harness-bias correction applied and its warnings; then the machine's
        warnings, what could not run and the self-test."""
        d = _display
        rows = []
        machine_warnings: list[str] = []
        for r in self.results.values():
            report = self._stability(r)
            machine_warnings.extend(w for w in report.machine_warnings if w not in machine_warnings)
            notes = list(report.run_warnings)
            if r.resolution_limited:
                notes.insert(0, "best and median resolution limited: trust the estimate")
            bias = ("none" if r.harness_bias_core_cycles == 0 and r.harness_bias_ci95_core_cycles == 0
                    else d.plus_minus(r.harness_bias_core_cycles, r.harness_bias_ci95_core_cycles))
            below = not r.resolved  # a bound, never a cost below what the harness resolves
            rows.append([
                r.method,
                r.cost_text("core_cycles", 2) if below else d.plus_minus(r.estimate_core_cycles,
                                                                          r.estimate_ci95_core_cycles),
                f"[0, {r.upper_bound_core_cycles:.2f}]" if below else d.interval(r.estimate_core_cycles,
                                                                                 r.estimate_ci95_core_cycles),
                r.cost_text("ns", 2) if below else d.plus_minus(r.estimate_ns, r.estimate_ci95_ns),
                (r.cost_text("ticks", 2) if below else d.plus_minus(r.estimate, r.estimate_ci95))
                if r.counter == "tsc" else d.DASH,
                f"{r.best_core_cycles:.2f}", f"{r.median_core_cycles:.2f}",
                r.estimator, f"{r.runs_used} of {r.runs}", r.migrations, bias,
                "; ".join(notes) or d.DASH,
            ])
        runs = "/".join(map(str, sorted({r.runs for r in self.results.values()}))) or "0"
        columns = ["method", "core cycles", "95% interval (core cycles)", "ns", "TSC ticks",
                   "best (core cycles)", "median (core cycles)", "estimator", "runs used",
                   "migrated", "harness bias subtracted (core cycles)", "notes"]
        groups = [("", 1), ("estimate \u00b1 95%, per copy above the empty sequence", 4),
                  ("above the empty sequence", 2), ("", 5)]
        parts = [
            d.paragraph(f"measured {self.date} with fastcpu {self.fastcpu_version}: {len(self)} "
                        f"methods, {runs} runs per method, serialize={self.serialize}",
                        bold=f"fastcpu.Results {self.name}"),
            d.paragraph(format_clock(self.clock)),
            d.bullets(([] if self.verified else [UNVERIFIED]) + list(self.notes), "notes on this file"),
            d.table(columns, rows, groups=groups),
            d.bullets(machine_warnings, "machine warnings (from the facts saved with the results)"),
            d.bullets((f"{name}: {reason}" for name, reason in self.unavailable.items()),
                      "not available there"),
        ]
        if self.selftest is not None:
            st = self.selftest
            parts.append(d.details(
                f"self-test: {'PASS' if st.passed else 'FAIL'} (its harness-bias corrections are "
                "subtracted from the estimates above)", st.lines()))
        return d.block(*parts)

    def __str__(self) -> str:
        """The summary a terminal shows: every text from the file through
        :func:`_display.printable`."""
        shown = _display.printable
        runs = sorted({r.runs for r in self.results.values()})
        return "\n".join([
            f"{shown(self.name)}, measured {shown(self.date)} with fastcpu {shown(self.fastcpu_version)}, "
            f"{'/'.join(map(str, runs)) or 0} runs per method, serialize={shown(self.serialize)}",
            format_clock(self.clock),
            *([self.clock_motion.describe(self.clock.tsc_hz)] if self.clock_motion is not None else []),
            *([] if self.verified else [f"note: {UNVERIFIED}"]),
            *(f"note: {shown(n)}" for n in self.notes),
            *(self.selftest.lines() if self.selftest is not None else []),
            "",
            self.table(),
            *self._back_to_back_lines(),
        ])

    def _back_to_back_lines(self) -> list[str]:
        """The back-to-back table and both questions' answers, for a terminal."""
        if not self.back_to_back:
            return []
        return ["", format_back_to_back(self.back_to_back.values()), "", *self.answer_lines()]

    def answer_lines(self) -> list[str]:
        """Each question's cheapest way that reports the CPU, named by its
        question (calls back to back "not measured" in a file without
        them), and a line where the two differ: what the CLI and str() end with."""
        lines = [f"cheapest way that reports the CPU here, {QUESTION_WORDS[q]} (by ESTIMATE): "
                 f"{self.cheapest_way_words(q)}" for q in QUESTIONS]
        differ = self.answers_differ()
        return [printable(x) for x in lines + ([differ] if differ else [])]

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> None:
        """Write one portable, versioned file (JSON; gzip-compressed if `path` ends in ``.gz``).

        The write is atomic: a temporary file in the same directory is
        written, synced and renamed over `path`, so `path` holds either the
        old contents or the complete new file, never a torn one. Every step
        works a megabyte at a time (gzip at level 6), so that Ctrl-C stops
        it within a second, the old file left as it was. What is written
        loads back: the constructors refuse what a file cannot hold. The
        temporary file is hidden and says what it is and who wrote it
        (``.NAME.fastcpu-save-PID-XXXXXXXX.tmp``); one left by a save that
        was killed (SIGKILL, power loss) is removed by the next save to the
        same `path`, once no process with that pid runs.

        Raises:
            TypeError: `path` is not a str or os.PathLike, or `overwrite` not a bool.
            ValueError: `path` is empty, a symbolic link, names something
                other than a regular file (a device, a FIFO), or is longer
                than its file system takes (NAME_MAX); the document is over
                ``TEXT_MAX_BYTES`` of text (several large results: save them
                in several files), or a count is 2**53 or more.
            FileExistsError: `path` exists and `overwrite` is false.
            IsADirectoryError: `path` is a directory.
            FileNotFoundError: its directory does not exist.
            OSError: the directory cannot be written; every OSError's
                ``filename`` is `path`, never the temporary file.
        """
        write_document(self.to_document(), path, overwrite=overwrite)

    # -- documents -----------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        """The JSON document of these Results ("format" first, so a reader
        sees it at once; the layout is in ``fastcpu/_json_document.py``)."""
        c = self.clock
        return {
            "format": FORMAT_NAME,
            # 4: each result carries its catalog row (3: the codec adds the checksum every
            # reader of 3 on requires)
            "version": FORMAT_VERSION,
            "fastcpu_version": self.fastcpu_version,
            "date": self.date,
            "label": self.label,
            "serialize": self.serialize,
            "clock": _clock_entry(c),
            **({"notes": list(self.notes)} if self.notes else {}),
            "machine": dict(self.machine),
            "unavailable": dict(self.unavailable),
            **({"selftest": self.selftest.to_dict()} if self.selftest is not None else {}),
            **({"cpu_verdicts": {k: v.to_dict() for k, v in self.cpu_verdicts.items()}}
               if self.cpu_verdicts else {}),
            "results": [_entry(r) for r in self.results.values()],
            **({"back_to_back": [_diff_entry(d) for d in self.back_to_back.values()]}
               if self.back_to_back else {}),
        }

    @classmethod
    def from_document(cls, doc: dict[str, Any], source: str | os.PathLike[str] = "<document>", *,
                      verified: bool = False) -> Results:
        """Results from a parsed, version-checked document (what
        :func:`fastcpu._json_document.read_document` returns), every field
        checked; `source` names it in messages, `verified` says whether its
        checksum was checked (:attr:`verified`).

        Raises:
            fastcpu.ResultFileError: a field is missing, mistyped or out of
                range, or the contents disagree (statistics with arrays,
                results with the clock).
        """
        rd = Reader(Path(source))
        rd.known(doc, _FIELDS, "")
        clock = _clock_from(rd, rd.get(doc, "clock", (dict,), ""))
        serialize = rd.get(doc, "serialize", (str,), "")
        entries = rd.get(doc, "results", (list,), "")
        written_by = rd.get(doc, "fastcpu_version", (str,), "")
        version = doc.get("version")  # read_document() checked it; a document built by hand may lack it
        version = version if type(version) is int else FORMAT_VERSION
        results: dict[str, BenchResult] = {}
        for i, entry in enumerate(entries):
            r = _result_from_entry(rd, entry, i, clock, written_by, version)
            if r.method in results:
                raise rd.fail(f"method {r.method!r} appears twice")
            results[r.method] = r
        diffs: dict[str, DiffResult] = {}
        for i, entry in enumerate(rd.get(doc, "back_to_back", (list,), "") if "back_to_back" in doc else []):
            d = _diff_from_entry(rd, entry, i, clock)
            if d.method in diffs:
                raise rd.fail(f"method {d.method!r} appears twice in back_to_back")
            diffs[d.method] = d
        label = rd.get(doc, "label", (str, type(None)), "")
        stored = rd.get(doc, "unavailable", (dict,), "")
        unavailable = {canonical_name(name): rd.get(stored, name, (str,), "unavailable.") for name in stored}
        try:
            return cls(
                results=results,
                machine=_machine_from(rd, rd.get(doc, "machine", (dict,), "")),
                clock=clock,
                serialize=serialize,
                date=rd.get(doc, "date", (str,), ""),
                label=label,
                fastcpu_version=rd.get(doc, "fastcpu_version", (str,), ""),
                unavailable=unavailable,
                selftest=_selftest_from(rd, doc),
                notes=_sentences(rd, doc, "notes", ""),
                cpu_verdicts=_verdicts_from(rd, doc),
                verified=verified,
                back_to_back=diffs,
            )
        except (TypeError, ValueError) as exc:
            raise rd.fail(f"inconsistent contents: {exc}") from None


def _verdicts_from(rd: Reader, doc: dict[str, Any]) -> dict[str, CpuVerdict]:
    """The document's ``cpu_verdicts`` (absent before fastcpu 0.6), each checked."""
    if "cpu_verdicts" not in doc:
        return {}
    out = {}
    for name, v in rd.get(doc, "cpu_verdicts", (dict,), "").items():
        where = f"cpu_verdicts.{name}."
        if not isinstance(v, dict):
            raise rd.fail(f"cpu_verdicts.{name} must be an object, not {type(v).__name__}")
        rd.known(v, ("reports_cpu", "why"), where)
        out[canonical_name(name)] = CpuVerdict(rd.get(v, "reports_cpu", (bool,), where),
                                               rd.get(v, "why", (str,), where))
    return out


#: From this format version on each result carries its catalog row ("catalog_row"); an older
#: file's rows are its writer's catalog's, recorded in the package (``_catalog_rows``).
ROWS_VERSION = 4
assert ROWS_VERSION <= FORMAT_VERSION
#: The fields of a document ("checksum" is the codec's: read_document() takes it).
_FIELDS = ("format", "version", "fastcpu_version", "date", "label", "serialize", "clock", "notes",
           "machine", "unavailable", "selftest", "cpu_verdicts", "results", "back_to_back", "checksum")
#: The fields of a result's entry ("clock" is the old name of "counter").
_ENTRY_FIELDS = ("method", "runs", "serialize", "unroll", "cpu", "counter", "clock", "best_ticks",
                 "median_ticks", "cycles_per_tick", "cycles_per_tick_ci95", "harness_bias_core_cycles",
                 "harness_bias_ci95_core_cycles", "harness_resolution_core_cycles", "caveats", "clock_motion",
                 "catalog_row", "raw", "empty", "migrated")
_CLOCK_FIELDS = ("tsc_hz", "tsc_step_ticks", "cycles_per_tick", "tsc_read_spacing_ticks", "rulers",
                 "core_cycles_problem")
_RULER_FIELDS = ("add_cycles_per_tick", "imul_cycles_per_tick", "tolerance", "immediate_adds_per_core_cycle")

# What a stored figure may be is _args's (TICKS_MAX, TSC_HZ_RANGE,
# CYCLES_PER_TICK_RANGE, STEP_MAX_TICKS, HARNESS_BIAS_MAX_CORE_CYCLES): the
# constructors refuse what the reader here would, from the same constants.


def _machine_from(rd: Reader, machine: dict[str, Any]) -> dict[str, Any]:
    """The stored machine facts, each that machine_info() records of its
    kind (or null); facts it does not record are the caller's own, any JSON."""
    for key, value in machine.items():
        must = fact_problem(key, value)
        if must:
            shown = json.dumps(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise rd.fail(f"field machine.{key!r} is {shown}, must be {must}")
    return machine


def _entry(r: BenchResult) -> dict[str, Any]:
    """One result's entry in a document (a count load() would refuse is
    refused here: ValueError)."""
    for key, counts in (("raw", r.raw), ("empty", r.empty)):
        top = int(counts.max())
        if top >= TICKS_MAX:
            raise ValueError(f"{r.method}: {key} holds {top} at run {int(np.argmax(counts >= TICKS_MAX))}: "
                             "counts must be below 2**53, what a TSC delta can be (a counter read "
                             "backwards wraps to near 2**64); leave that run out, or measure again")
    return {
        "method": r.method, "runs": r.runs, "serialize": r.serialize,
        "unroll": r.unroll, "cpu": r.cpu, "counter": r.counter,
        "best_ticks": r.best, "median_ticks": r.median,
        "cycles_per_tick": _number_or_null(r.cycles_per_tick), "cycles_per_tick_ci95": r.cycles_per_tick_ci95,
        "harness_bias_core_cycles": r.harness_bias_core_cycles,
        "harness_bias_ci95_core_cycles": r.harness_bias_ci95_core_cycles,
        **({"harness_resolution_core_cycles": r.harness_resolution_core_cycles}
           if r.harness_resolution_core_cycles else {}),
        "raw": encode_ticks(r.raw), "empty": encode_ticks(r.empty),
        "migrated": encode_bools(r.migrated),
        **({"caveats": list(r.caveats)} if r.caveats else {}),
        **({"clock_motion": r.clock_motion.to_dict()} if r.clock_motion is not None else {}),
        # what a reader needs of its method, in the measuring fastcpu's words (format version 4)
        **({"catalog_row": r.catalog_row.to_dict()} if r.catalog_row is not None else {}),
    }


def _central_ns(r: BenchResult) -> float:
    """A way's cost for ranking, ns: its ESTIMATE, or 0 below resolution."""
    return r.estimate_ns if r.resolved else 0.0


def _low_ns(r: BenchResult) -> float:
    return r.estimate_ns - r.estimate_ci95_ns if r.resolved else 0.0


def _high_ns(r: BenchResult) -> float:
    return r.estimate_ns + r.estimate_ci95_ns if r.resolved else r.upper_bound_ns


def _way_words(r: BenchResult, named: bool = True) -> str:
    """A way's cost in words: core cycles (ns), or ns alone where core cycles
    are unknown; a bound where the cost is below what the harness resolves."""
    head = f"{r.method}: " if named else ""
    if math.isnan(r.estimate_core_cycles):  # core cycles unknown there
        return f"{head}{r.cost_text('ns')} ns, ESTIMATE"
    ns = f"{r.upper_bound_ns:.1f}" if not r.resolved else f"{r.estimate_ns:.1f}"
    if not r.resolved:
        return f"{head}{r.cost_text('core_cycles')} core cycles (< {ns} ns: below what the harness resolves)"
    return f"{head}{r.cost_text('core_cycles')} core cycles ({ns} ns), ESTIMATE"


def _number_or_null(x: float) -> float | None:
    """A figure for JSON: null where it is unknown (NaN)."""
    return x if math.isfinite(x) else None


def _clock_entry(c: Clock) -> dict[str, Any]:
    """The clock's entry in a document (cycles_per_tick null while unknown,
    with the reason)."""
    entry: dict[str, Any] = {"tsc_hz": c.tsc_hz, "tsc_step_ticks": c.tsc_step_ticks,
                             "cycles_per_tick": None if c.core_cycles_problem
                             else _number_or_null(c.cycles_per_tick)}
    if math.isfinite(c.tsc_read_spacing_ticks):
        entry["tsc_read_spacing_ticks"] = c.tsc_read_spacing_ticks
    if c.rulers is not None:
        entry["rulers"] = c.rulers.to_dict()
    if c.core_cycles_problem:
        entry["core_cycles_problem"] = c.core_cycles_problem
    return entry


def _clock_from(rd: Reader, clk: dict[str, Any]) -> Clock:
    """The clock of a document, checked: cycles_per_tick may be null only
    with the reason (core_cycles_problem); rulers and the read spacing are
    optional (files before fastcpu 0.5 lack them)."""
    rd.known(clk, _CLOCK_FIELDS, "clock.")
    problem = rd.get(clk, "core_cycles_problem", (str,), "clock.") if "core_cycles_problem" in clk else ""
    if problem and clk.get("cycles_per_tick") is not None:
        raise rd.fail("clock.cycles_per_tick must be null where clock.core_cycles_problem says why "
                      "core cycles are unknown")
    if len(problem) > 2000:
        raise rd.fail("clock.core_cycles_problem is longer than 2000 characters")
    cpt = math.nan if problem else rd.number(clk, "cycles_per_tick", *CYCLES_PER_TICK_RANGE, "clock.",
                                             "core cycles per TSC tick")
    rulers = None
    if "rulers" in clk:
        rd.known(rd.get(clk, "rulers", (dict,), "clock."), _RULER_FIELDS, "clock.rulers.")
        try:
            rulers = Rulers.from_dict(clk["rulers"])
        except (TypeError, ValueError) as exc:
            raise rd.fail(f"clock.rulers: {exc}") from None
    spacing = (rd.number(clk, "tsc_read_spacing_ticks", 0, STEP_MAX_TICKS, "clock.", "TSC ticks")
               if "tsc_read_spacing_ticks" in clk else math.nan)
    if rulers is not None and not problem and not rulers.agree:
        raise rd.fail("clock.rulers disagree, yet clock.core_cycles_problem does not say so")
    if problem and rulers is not None and rulers.agree:
        # without rulers the problem is that none measured them (Clock(..., nan))
        raise rd.fail("clock.core_cycles_problem says core cycles are unknown, yet clock.rulers agree")
    tsc_hz = rd.number(clk, "tsc_hz", *TSC_HZ_RANGE, "clock.", "TSC ticks per second")
    step = rd.number(clk, "tsc_step_ticks", 1, STEP_MAX_TICKS, "clock.", "TSC ticks")
    try:
        clock = Clock(tsc_hz=tsc_hz, tsc_step_ticks=step, cycles_per_tick=cpt, tsc_read_spacing_ticks=spacing,
                      rulers=rulers)
    except (TypeError, ValueError) as exc:  # what the checks above let through, if anything
        raise rd.fail(f"clock: {exc}") from None
    return clock


def _sentences(rd: Reader, obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    """An optional list of sentences (at most SENTENCES_MAX of SENTENCE_CHARS_MAX characters)."""
    if key not in obj:
        return ()
    items = rd.get(obj, key, (list,), where)
    if len(items) > SENTENCES_MAX or not all(isinstance(x, str) and len(x) <= SENTENCE_CHARS_MAX for x in items):
        raise rd.fail(f"field {where}{key!r} must be a list of at most {SENTENCES_MAX} strings of at most "
                      f"{SENTENCE_CHARS_MAX} characters")
    return tuple(items)


def _close(stored: float, computed: float) -> bool:
    return math.isclose(stored, computed, rel_tol=1e-9, abs_tol=1e-9)


def _counter_of(rd: Reader, entry: dict[str, Any], where: str) -> str:
    """What the runs counted: ``"counter"``, or its old name ``"clock"``, or
    (files written before either) the TSC."""
    key = "counter" if "counter" in entry else "clock" if "clock" in entry else None
    if key is None:
        return "tsc"
    counter = rd.get(entry, key, (str,), where)
    if counter not in _COUNTERS:
        raise rd.fail(f"{where}{key} is {counter!r}, must be one of {', '.join(_COUNTERS)}")
    return counter


def _result_from_entry(rd: Reader, entry: object, i: int, clock: Clock, written_by: str,
                       version: int) -> BenchResult:
    """The BenchResult of one document entry, every field within its range
    and its stored statistics checked against its arrays; its catalog row
    the entry's own, or in a file of format version 1 to 3 (which carried
    none) the row of the catalog of the fastcpu that wrote it (`written_by`)."""
    if not isinstance(entry, dict):
        raise rd.fail(f"results[{i}] is {type(entry).__name__}, expected an object")
    rd.known(entry, _ENTRY_FIELDS, f"results[{i}].")
    method = canonical_name(rd.get(entry, "method", (str,), f"results[{i}]."))  # former names
    where = f"results[{i}] ({method}) "
    runs = rd.bounded(entry, "runs", 1, RUNS_MAX, where)
    unroll = rd.bounded(entry, "unroll", 1, UNROLL_MAX, where)
    cpu = rd.get(entry, "cpu", (int, type(None)), where)
    if cpu is not None:
        cpu = rd.bounded(entry, "cpu", 0, CPU_NUMBER_MAX - 1, where)
    try:
        r = _bench_result_of(rd, entry, where, method, unroll, cpu, runs, clock, written_by, version)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ResultFileError):
            raise
        raise rd.fail(f"{where}{exc}") from None
    for key, computed in (("best_ticks", r.best), ("median_ticks", r.median)):
        if key in entry:
            stored = rd.finite(entry, key, where)
            if not _close(stored, computed):
                raise rd.fail(f"{where}stored {key} {stored} disagrees with its arrays "
                              f"({computed}): the file was altered or damaged")
    return r


def _bench_result_of(rd: Reader, entry: dict[str, Any], where: str, method: str, unroll: int, cpu: int | None,
                     runs: int, clock: Clock, written_by: str, version: int) -> BenchResult:
    """The entry's BenchResult, each field read and checked; what
    from_arrays() refuses besides is the caller's to name."""
    if entry.get("cycles_per_tick", 0) is None and (entry.get("harness_bias_core_cycles")
                                                     or entry.get("harness_bias_ci95_core_cycles")):
        raise rd.fail(f"{where}a harness correction in core cycles where core cycles are unknown")
    return BenchResult.from_arrays(
        method=method,
        serialize=rd.get(entry, "serialize", (str,), where),
        unroll=unroll,
        cpu=cpu,
        raw=_counts(rd, entry, "raw", runs, where),
        empty=_counts(rd, entry, "empty", runs, where),
        migrated=rd.array(entry, "migrated", runs, where),
        clock=clock,
        counter=_counter_of(rd, entry, where),
        # optional (fastcpu >= 0.3.0): older files convert with the file's clock, uncorrected;
        # null where the file's clock says core cycles are unknown
        cycles_per_tick=_entry_cycles_per_tick(rd, entry, where, clock),
        cycles_per_tick_ci95=_optional(rd, entry, "cycles_per_tick_ci95", 0, CYCLES_PER_TICK_RANGE[1],
                                       where, "core cycles per TSC tick"),
        harness_bias_core_cycles=_optional(rd, entry, "harness_bias_core_cycles", -HARNESS_BIAS_MAX_CORE_CYCLES,
                                           HARNESS_BIAS_MAX_CORE_CYCLES, where, "core cycles"),
        harness_bias_ci95_core_cycles=_optional(rd, entry, "harness_bias_ci95_core_cycles", 0,
                                                HARNESS_BIAS_MAX_CORE_CYCLES, where, "core cycles"),
        caveats=_sentences(rd, entry, "caveats", where),
        clock_motion=_clock_motion(rd, entry, where),
        harness_resolution_core_cycles=_optional(rd, entry, "harness_resolution_core_cycles", 0,
                                                 HARNESS_BIAS_MAX_CORE_CYCLES, where, "core cycles"),
        catalog_row=_catalog_row_of(rd, entry, method, where, written_by, version),
    )


#: The fields of a back-to-back entry (a DiffResult).
_DIFF_FIELDS = ("method", "runs", "serialize", "k", "cpu", "counter", "cycles_per_tick", "cycles_per_tick_ci95",
                "caveats", "clock_motion", "long", "short", "migrated")


def _diff_entry(d: DiffResult) -> dict[str, Any]:
    """One back-to-back result's entry (counts load() would refuse are refused: ValueError)."""
    for key, counts in (("long", d.long), ("short", d.short)):
        if int(counts.max()) >= TICKS_MAX:
            raise ValueError(f"{d.method}: back-to-back {key} holds a count of 2**53 or more: "
                             "what no TSC delta can be; measure again")
    return {
        "method": d.method, "runs": d.runs, "serialize": d.serialize, "k": d.k, "cpu": d.cpu,
        "counter": d.counter, "cycles_per_tick": _number_or_null(d.cycles_per_tick),
        "cycles_per_tick_ci95": d.cycles_per_tick_ci95,
        **({"caveats": list(d.caveats)} if d.caveats else {}),
        **({"clock_motion": d.clock_motion.to_dict()} if d.clock_motion is not None else {}),
        "long": encode_ticks(d.long), "short": encode_ticks(d.short), "migrated": encode_bools(d.migrated),
    }


def _diff_from_entry(rd: Reader, entry: object, i: int, clock: Clock) -> DiffResult:
    """The DiffResult of one back-to-back entry, every field within its range."""
    if not isinstance(entry, dict):
        raise rd.fail(f"back_to_back[{i}] is {type(entry).__name__}, expected an object")
    rd.known(entry, _DIFF_FIELDS, f"back_to_back[{i}].")
    method = canonical_name(rd.get(entry, "method", (str,), f"back_to_back[{i}]."))
    where = f"back_to_back[{i}] ({method}) "
    runs = rd.bounded(entry, "runs", 1, RUNS_MAX, where)
    k = rd.bounded(entry, "k", 2, UNROLL_MAX // 2, where)
    cpu = rd.get(entry, "cpu", (int, type(None)), where)
    if cpu is not None:
        cpu = rd.bounded(entry, "cpu", 0, CPU_NUMBER_MAX - 1, where)
    try:
        return _diff_of(rd, entry, where, method, k, cpu, runs, clock)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ResultFileError):
            raise
        raise rd.fail(f"{where}{exc}") from None


def _diff_of(rd: Reader, entry: dict[str, Any], where: str, method: str, k: int, cpu: int | None, runs: int,
             clock: Clock) -> DiffResult:
    """The back-to-back entry's DiffResult, each field read and checked."""
    return DiffResult.from_arrays(
        method=method, serialize=rd.get(entry, "serialize", (str,), where), k=k, cpu=cpu,
        long=_counts(rd, entry, "long", runs, where), short=_counts(rd, entry, "short", runs, where),
        migrated=rd.array(entry, "migrated", runs, where), clock=clock, counter=_counter_of(rd, entry, where),
        cycles_per_tick=_entry_cycles_per_tick(rd, entry, where, clock),
        cycles_per_tick_ci95=_optional(rd, entry, "cycles_per_tick_ci95", 0, CYCLES_PER_TICK_RANGE[1],
                                       where, "core cycles per TSC tick"),
        caveats=_sentences(rd, entry, "caveats", where),
        clock_motion=_clock_motion(rd, entry, where),
    )


def _clock_motion(rd: Reader, entry: dict[str, Any], where: str) -> ClockMotion | None:
    """How the core clock moved during the runs (fastcpu >= 0.7.0; None before)."""
    if "clock_motion" not in entry:
        return None
    try:
        return ClockMotion.from_dict(entry["clock_motion"], f"{where}clock_motion")
    except (TypeError, ValueError) as exc:
        raise rd.fail(str(exc)) from None


def _catalog_row_of(rd: Reader, entry: dict[str, Any], method: str, where: str, written_by: str,
                    version: int) -> CatalogRow | None:
    """The entry's ``catalog_row`` (format version 4 on; absent for a user
    function); in an older file, the writer's catalog as recorded."""
    if "catalog_row" in entry:
        try:
            return CatalogRow.from_dict(entry["catalog_row"])
        except ValueError as exc:
            raise rd.fail(f"{where}catalog_row: {exc}") from None
    return recorded_row(method, written_by) if version < ROWS_VERSION else None


def _counts(rd: Reader, entry: dict[str, Any], key: str, runs: int, where: str) -> np.ndarray:
    """An array of counts per run, each below TICKS_MAX: so that every
    statistic reads them alike (the medians as floats, the paired
    differences as int64, which a count of 2**63 or more would wrap)."""
    a = rd.array(entry, key, runs, where)
    top = int(a.max())
    if top >= TICKS_MAX:
        at = int(np.argmax(a >= TICKS_MAX))
        raise rd.fail(f"{where}{key!r} holds {top} at run {at}: counts must be below 2**53, what a "
                      "TSC delta can be (35 days at 3 GHz; a counter read backwards wraps to near "
                      "2**64): the file was altered or damaged")
    return a


def _entry_cycles_per_tick(rd: Reader, entry: dict[str, Any], where: str, clock: Clock) -> float | None:
    """A result's own core cycles per tick: None (the clock's) when absent,
    NaN when null and the clock says why core cycles are unknown."""
    if "cycles_per_tick" not in entry:
        return None
    if entry["cycles_per_tick"] is None and clock.core_cycles_problem:
        return math.nan
    return rd.number(entry, "cycles_per_tick", *CYCLES_PER_TICK_RANGE, where, "core cycles per TSC tick")


def _optional(rd: Reader, entry: dict[str, Any], key: str, low: float, high: float, where: str,
              unit: str) -> float:
    """A number field within low..high that files written before fastcpu
    0.3.0 lack (then 0)."""
    return rd.number(entry, key, low, high, where, unit) if key in entry else 0.0


def _selftest_from(rd: Reader, doc: dict[str, Any]) -> SelfTest | None:
    """The stored self-test report (absent before fastcpu 0.3.0)."""
    if "selftest" not in doc:
        return None
    st = rd.get(doc, "selftest", (dict,), "")
    try:
        report = SelfTest.from_dict(st)
        report.lines()  # every figure can be shown (a number too large for a float cannot)
        return report
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        problem = exc.args[0] if isinstance(exc, KeyError) else exc  # a KeyError's str() quotes it
        raise rd.fail(f"selftest: unreadable report: {problem}") from None


def load(path: str | os.PathLike[str]) -> Results:
    """Read a result file written by :meth:`Results.save` (plain or gzip JSON).

    Returns:
        Results equal to the saved ones: same metadata, equal arrays (uint64
        ticks, bool migrations), statistics recomputed from the arrays;
        ``verified`` False for a file written before format version 3,
        whose figures no checksum protects.

    Limits: only a regular file is read (a FIFO, a device or a socket is
    refused before anything is read), of at most ``TEXT_MAX_BYTES`` (2.06
    GiB, derived from ``RUNS_MAX``: one result of the most runs, of any
    counts, always fits; :meth:`Results.save` refuses a bigger document) of
    JSON text; a gzip file is decompressed as a stream into one buffer
    and refused at its first chunk of binary data, or as soon as its text
    passes 32 MiB plus 64 times the compressed bytes read so far (result
    files compress 8-17 times; a decompression bomb up to 1032; save()
    pads a file of near-identical runs, which compresses like one, to load);
    a text with more JSON values than a result file holds (262,144 plus one
    per 128 bytes: its bulk is base64 arrays), or nested more than 32 levels
    deep, is refused before it is parsed (json's parser recurses on the C
    stack, which a thread's may not hold); an object with a key given twice
    is refused, naming it.

    Text: every lone surrogate in a string of the file (a label, a machine
    fact, a note) is replaced by U+FFFD, so that any UTF-8 output (a
    terminal, a CSV file, a plot) can write it; control characters stay,
    and every terminal output shows them escaped (``_display.printable``).

    Memory: at its peak load() holds at most ``LOAD_MEMORY_MULTIPLE`` = 10
    times the file's text (a plain file's size; a gzip file's decompressed
    text, bounded as above) plus 64 MiB, whatever the file holds. The
    densest real files come near 8: one-byte ticks take 6 bytes in memory
    per byte of base64, and a text with a character outside the Basic
    Multilingual Plane takes 4 bytes a character while it is parsed.

    Raises:
        TypeError: `path` is not a str or os.PathLike.
        ValueError: `path` is empty.
        OSError: the file cannot be read (FileNotFoundError,
            IsADirectoryError, PermissionError, an EIO, ...); its
            ``filename`` is `path`.
        fastcpu.ResultFileError (a ValueError): the file is not a regular
            file, too large, empty or truncated, binary, not JSON (or JSON
            nested too deeply, with more values than a result file holds, or
            with a number too long to read or not finite), JSON of another
            kind, of a newer format version, altered or damaged since it was
            saved (its checksum does not match: the message names the fields
            that differ), or inconsistent (an array whose length disagrees
            with ``runs`` or fails its CRC-32, a count of 2**53 or more,
            statistics that disagree with the arrays, a missing, unknown or
            mistyped field, a figure out of its range: the message names the
            field and what it must be).
    """
    doc, where, verified = read_document(path)
    return Results.from_document(doc, where, verified=verified)


def as_results(
    source: object, error: str = "expected fastcpu.Results or a result file path, not {type}"
) -> Results:
    """`source` if it is Results, else the result file it names, loaded: how
    compare() and the plots take either.

    Raises:
        TypeError: neither Results nor a path (`error`, its ``{type}`` filled in).
        As :func:`load` for a path.
    """
    if isinstance(source, Results):
        return source
    if isinstance(source, (str, os.PathLike)):
        return load(source)
    raise TypeError(error.format(type=type(source).__name__))
