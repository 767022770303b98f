"""Results: every method measured on one machine, with its facts, and its document.

:meth:`Results.save` and :func:`load` move it through a file (docs/files.md);
:meth:`Results.to_document` and :meth:`Results.from_document` build and take
apart the document the codec (``files``) writes and reads."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Union

from .. import _base as _display
from .._base import printable
from .._args import check_label, check_sentences
from .values import Clock
from .values import file_method_name
from .stability import fact_problem
from .bench_result import BenchResult, DiffResult
from .parts import ClockMotion, merge_motion
from .selftest_report import SelfTest
from ..files.write import FORMAT_NAME, FORMAT_VERSION, Reader, read_document, write_document
from .answers import BACK_TO_BACK, NOT_MEASURED, NOT_MEASURED_BACK_TO_BACK, NOT_WAYS, ONE_CALL, QUESTION_WORDS, QUESTIONS, CpuVerdict, cheapest, cheapest_words, differ_words, infer_cpu_verdict, ties
from .document import DOCUMENT_FIELDS, clock_entry, clock_from, diff_entry, diff_from_entry, machine_from, result_entry, result_from_entry, same_bench_result, same_diff_result, selftest_from, sentences_from, verdicts_from
from .display import results_html
from .display import format_back_to_back, format_clock, format_table


# what tests and older callers import from here (the file's reading moved to _result_document)
_clock_from = clock_from

__all__ = ["Results", "Source", "load", "as_results", "CpuVerdict", "NOT_WAYS", "infer_cpu_verdict", "ONE_CALL",
           "BACK_TO_BACK", "QUESTIONS", "QUESTION_WORDS", "NOT_MEASURED", "same_bench_result", "same_diff_result"]

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


@dataclass(frozen=True, eq=False)
class Results(Mapping[str, BenchResult]):
    """Every method measured on one machine, with the machine's facts.

    A read-only mapping from method name to :class:`BenchResult`, in the order
    measured; equal when metadata and every array are.

    Attributes:
        results: method name -> BenchResult (raw per-run TSC ticks).
        machine: the machine's facts (``machine_info()``), as JSON values.
        clock: what a TSC tick was worth there at first use (``tsc_hz``, ``tsc_step_ticks``,
            ``cycles_per_tick``); every result shares its TSC, and converts to core cycles
            with its own ``cycles_per_tick``, measured around its runs.
        serialize: the serialization mode of every result.
        date: when measured, ISO 8601 UTC.
        label: a free-form name for the machine, or None.
        fastcpu_version: the fastcpu that measured it.
        unavailable: methods asked for but not runnable there -> the reason.
        selftest: the harness self-test made with the measurement, or None.
        notes: what was done to the file after it was measured, one sentence each.
        cpu_verdicts: method -> :class:`CpuVerdict` from the pinned sweep (empty
            for files before fastcpu 0.6).
        verified: False for figures no checksum protected (an old file, a
            document given to :meth:`from_document`); not part of equality."""

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
            return self.results[method]
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
        """Whether `method` reported the CPU here: the pinned sweep's verdict, else its catalog row's (:func:`infer_cpu_verdict`)."""
        verdict = self.cpu_verdicts.get(method)
        if verdict is not None:
            return verdict
        measured = self.results.get(method)
        return infer_cpu_verdict(measured.catalog_row if measured is not None else None, self.machine)

    def ways(self) -> list[BenchResult]:
        """The results of the ways to learn the CPU (catalog rows but ``NOT_WAYS``) that reported it, in the order measured."""
        return [r for r in self.results.values() if self._is_way(r)]

    def _is_way(self, r: BenchResult | DiffResult) -> bool:
        """`r` is a way to learn the CPU that reported it here."""
        row = r.catalog_row
        if row is None or row.role in NOT_WAYS:
            return False
        verdict = self.cpu_verdicts.get(r.method)
        return (verdict if verdict is not None else infer_cpu_verdict(row, self.machine)).reports_cpu

    @property
    def clock_motion(self) -> ClockMotion | None:
        """How the core clock moved over all the measurements (their ruler
        points merged: levels seen, hops, disturbed points); None for a file
        before 0.7.0 or without ruler points (a PMU counter)."""
        return merge_motion(r.clock_motion for r in self.results.values())

    def ways_back_to_back(self) -> list[DiffResult]:
        """:meth:`ways`, answering "calls back to back": each way's
        :attr:`back_to_back` result (cost per call in a loop), where measured,
        each judged by its own catalog row."""
        return [d for d in self.back_to_back.values() if self._is_way(d)]

    def cheapest_way(self, question: str = ONE_CALL) -> BenchResult | DiffResult | None:
        """The way of lowest ESTIMATE for `question` (``'one_call'`` or ``'back_to_back'``), or None.

        A cost below what the harness resolves counts as 0 (it is only a bound)."""
        return cheapest(self._ways_of(question))  # type: ignore[no-any-return]

    def _ways_of(self, question: str) -> list[Any]:
        if question not in QUESTIONS:
            raise ValueError(f"question must be one of {', '.join(QUESTIONS)}, not {question!r}")
        return self.ways() if question == ONE_CALL else self.ways_back_to_back()

    def cheapest_ties(self, question: str = ONE_CALL) -> list[Any]:
        """The ways whose interval reaches the top of :meth:`cheapest_way`'s, the cheapest first; [] when none."""
        return ties(self._ways_of(question))

    def cheapest_way_words(self, question: str = ONE_CALL) -> str:
        """:meth:`cheapest_way` in words, as the CLI, the seed table and the
        README say it: ``'rseq: 0.3 +- 0.1 core cycles (0.1 ns), ESTIMATE'``,
        with every way that ties with it within resolution."""
        tied = self.cheapest_ties(question)
        if not tied:
            if question == BACK_TO_BACK and not self.back_to_back:
                return NOT_MEASURED_BACK_TO_BACK
            return "none measured here reported the CPU"
        return cheapest_words(tied)

    def answers_differ(self) -> str:
        """One line where the two questions' cheapest ways differ ('' where
        they agree, or where calls back to back were not measured)."""
        return differ_words(self.cheapest_ties(ONE_CALL), self.cheapest_ties(BACK_TO_BACK))

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

    def _repr_html_(self) -> str:
        """The results as HTML, for Jupyter (``results_html``)."""
        return results_html(self, UNVERIFIED)

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
        """Write one versioned file, atomically (JSON; gzip if `path` ends in ``.gz``; docs/files.md).

        A hidden temporary file is written, synced and renamed over `path`; Ctrl-C
        leaves the old file; a killed save's leftover is removed by the next one.

        Raises:
            TypeError: `path` is not a str or os.PathLike, or `overwrite` not a bool.
            ValueError: `path` empty, a symbolic link, not a regular file or too
                long; the document over ``TEXT_MAX_BYTES`` (save in several files);
                a count of 2**53 or more.
            FileExistsError: `path` exists and `overwrite` is false.
            IsADirectoryError, FileNotFoundError: `path` is a directory; its directory is missing.
            OSError: the directory cannot be written (``filename`` is `path`)."""
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
            "clock": clock_entry(c),
            **({"notes": list(self.notes)} if self.notes else {}),
            "machine": dict(self.machine),
            "unavailable": dict(self.unavailable),
            **({"selftest": self.selftest.to_dict()} if self.selftest is not None else {}),
            **({"cpu_verdicts": {k: v.to_dict() for k, v in self.cpu_verdicts.items()}}
               if self.cpu_verdicts else {}),
            "results": [result_entry(r) for r in self.results.values()],
            **({"back_to_back": [diff_entry(d) for d in self.back_to_back.values()]}
               if self.back_to_back else {}),
        }

    @classmethod
    def from_document(cls, doc: dict[str, Any], source: str | os.PathLike[str] = "<document>", *,
                      verified: bool = False) -> Results:
        """Results from a parsed, version-checked document, every field checked; `source` names it in messages.

        Raises:
            fastcpu.ResultFileError: a field missing, mistyped or out of range, or
                contents that disagree."""
        rd = Reader(Path(source))
        rd.known(doc, DOCUMENT_FIELDS, "")
        clock = clock_from(rd, rd.get(doc, "clock", (dict,), ""))
        serialize = rd.get(doc, "serialize", (str,), "")
        entries = rd.get(doc, "results", (list,), "")
        written_by = rd.get(doc, "fastcpu_version", (str,), "")
        version = doc.get("version")  # read_document() checked it; a document built by hand may lack it
        version = version if type(version) is int else FORMAT_VERSION
        results: dict[str, BenchResult] = {}
        for i, entry in enumerate(entries):
            r = result_from_entry(rd, entry, i, clock, written_by, version)
            if r.method in results:
                raise rd.fail(f"method {r.method!r} appears twice")
            results[r.method] = r
        diffs: dict[str, DiffResult] = {}
        for i, entry in enumerate(rd.get(doc, "back_to_back", (list,), "") if "back_to_back" in doc else []):
            d = diff_from_entry(rd, entry, i, clock, results)
            if d.method in diffs:
                raise rd.fail(f"method {d.method!r} appears twice in back_to_back")
            diffs[d.method] = d
        label = rd.get(doc, "label", (str, type(None)), "")
        stored = rd.get(doc, "unavailable", (dict,), "")
        unavailable = {file_method_name(name): rd.get(stored, name, (str,), "unavailable.") for name in stored}
        try:
            return cls(
                results=results,
                machine=machine_from(rd, rd.get(doc, "machine", (dict,), "")),
                clock=clock,
                serialize=serialize,
                date=rd.get(doc, "date", (str,), ""),
                label=label,
                fastcpu_version=rd.get(doc, "fastcpu_version", (str,), ""),
                unavailable=unavailable,
                selftest=selftest_from(rd, doc),
                notes=sentences_from(rd, doc, "notes", ""),
                cpu_verdicts=verdicts_from(rd, doc),
                verified=verified,
                back_to_back=diffs,
            )
        except (TypeError, ValueError) as exc:
            raise rd.fail(f"inconsistent contents: {exc}") from None


def load(path: str | os.PathLike[str]) -> Results:
    """Read a result file written by :meth:`Results.save` (plain or gzip JSON; docs/files.md).

    Returns:
        Results equal to the saved ones, statistics recomputed from the arrays;
        ``verified`` False for a file before format version 3.

    Only a regular file of at most ``TEXT_MAX_BYTES`` of JSON text is read; a
    gzip stream is bounded as it is decompressed; too many values or too deep
    nesting are refused before parsing. Lone surrogates become U+FFFD. Memory:
    at most ``LOAD_MEMORY_MULTIPLE`` times the text plus 64 MiB at the peak.

    Raises:
        TypeError: `path` is not a str or os.PathLike.
        ValueError: `path` is empty.
        OSError: the file cannot be read; its ``filename`` is `path`.
        fastcpu.ResultFileError (a ValueError): not a regular file, too large,
            truncated, binary, not JSON or not a result file, a newer format,
            damaged (checksum or CRC-32) or inconsistent; the message names
            the field and what it must be."""
    doc, where, verified = read_document(path)
    return Results.from_document(doc, where, verified=verified)


def as_results(
    source: object, error: str = "expected fastcpu.Results or a result file path, not {type}"
) -> Results:
    """`source` if it is Results, else the result file it names, loaded.

    Raises:
        TypeError: neither Results nor a path (`error`, its ``{type}`` filled in).
        As :func:`load` for a path."""
    if isinstance(source, Results):
        return source
    if isinstance(source, (str, os.PathLike)):
        return load(source)
    raise TypeError(error.format(type=type(source).__name__))
