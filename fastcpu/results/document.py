"""What a result file holds of each result and how it is read back, every field checked (docs/files.md, "The file")."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._args import CYCLES_PER_TICK_RANGE, HARNESS_BIAS_MAX_CORE_CYCLES, SENTENCE_CHARS_MAX, SENTENCES_MAX, STEP_MAX_TICKS, TICKS_MAX, TSC_HZ_RANGE, RUNS_MAX, UNROLL_MAX
from .answers import CpuVerdict
from .bench_result import COUNTERS as _COUNTERS
from .bench_result import BenchResult, DiffResult
from .values import CatalogRow, file_method_name, recorded_row
from .parts import ClockMotion
from .values import Clock, Rulers, nan_equal
from ..files.write import FORMAT_VERSION, Reader, ResultFileError, encode_bools, encode_ticks
from .stability import CPU_NUMBER_MAX, fact_problem
from .selftest_report import SelfTest


__all__ = ["DOCUMENT_FIELDS", "ENTRY_FIELDS", "DIFF_FIELDS", "ROWS_VERSION", "result_entry", "result_from_entry",
           "diff_entry", "diff_from_entry", "clock_entry", "clock_from", "machine_from", "sentences_from",
           "selftest_from", "verdicts_from", "number_or_null", "same_bench_result", "same_diff_result"]


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
                "counter", "caveats", "copy_loop_core_cycles", "copy_loop_ci95_core_cycles", "catalog_row")
    return all(_same(getattr(a, s), getattr(b, s)) for s in settings) and all(
        np.array_equal(getattr(a, x), getattr(b, x)) for x in ("long", "short", "migrated"))


def _same(a: object, b: object) -> bool:
    """a == b, NaN equal to NaN (an unknown core-cycle figure)."""
    return nan_equal(a) == nan_equal(b)


def verdicts_from(rd: Reader, doc: dict[str, Any]) -> dict[str, CpuVerdict]:
    """The document's ``cpu_verdicts`` (absent before fastcpu 0.6), each checked."""
    if "cpu_verdicts" not in doc:
        return {}
    out = {}
    for name, v in rd.get(doc, "cpu_verdicts", (dict,), "").items():
        where = f"cpu_verdicts.{name}."
        if not isinstance(v, dict):
            raise rd.fail(f"cpu_verdicts.{name} must be an object, not {type(v).__name__}")
        rd.known(v, ("reports_cpu", "why"), where)
        out[file_method_name(name)] = CpuVerdict(rd.get(v, "reports_cpu", (bool,), where),
                                               rd.get(v, "why", (str,), where))
    return out


#: From this format version on each result carries its catalog row ("catalog_row"); an older
#: file's rows are its writer's catalog's, recorded in the package (``_catalog_rows``).
ROWS_VERSION = 4
assert ROWS_VERSION <= FORMAT_VERSION
#: The fields of a document ("checksum" is the codec's: read_document() takes it).
DOCUMENT_FIELDS = ("format", "version", "fastcpu_version", "date", "label", "serialize", "clock", "notes",
           "machine", "unavailable", "selftest", "cpu_verdicts", "results", "back_to_back", "checksum")
#: The fields of a result's entry ("clock" is the old name of "counter").
ENTRY_FIELDS = ("method", "runs", "serialize", "unroll", "cpu", "counter", "clock", "best_ticks",
                 "median_ticks", "cycles_per_tick", "cycles_per_tick_ci95", "harness_bias_core_cycles",
                 "harness_bias_ci95_core_cycles", "harness_resolution_core_cycles", "caveats", "clock_motion",
                 "catalog_row", "raw", "empty", "migrated")
_CLOCK_FIELDS = ("tsc_hz", "tsc_step_ticks", "cycles_per_tick", "tsc_read_spacing_ticks", "rulers",
                 "core_cycles_problem")
_RULER_FIELDS = ("add_cycles_per_tick", "imul_cycles_per_tick", "tolerance", "immediate_adds_per_core_cycle")

# What a stored figure may be is _args's (TICKS_MAX, TSC_HZ_RANGE,
# CYCLES_PER_TICK_RANGE, STEP_MAX_TICKS, HARNESS_BIAS_MAX_CORE_CYCLES): the
# constructors refuse what the reader here would, from the same constants.


def machine_from(rd: Reader, machine: dict[str, Any]) -> dict[str, Any]:
    """The stored machine facts, each that machine_info() records of its
    kind (or null); facts it does not record are the caller's own, any JSON."""
    for key, value in machine.items():
        must = fact_problem(key, value)
        if must:
            shown = json.dumps(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise rd.fail(f"field machine.{key!r} is {shown}, must be {must}")
    return machine


def result_entry(r: BenchResult) -> dict[str, Any]:
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
        "cycles_per_tick": number_or_null(r.cycles_per_tick), "cycles_per_tick_ci95": r.cycles_per_tick_ci95,
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


def number_or_null(x: float) -> float | None:
    """A figure for JSON: null where it is unknown (NaN)."""
    return x if math.isfinite(x) else None


def clock_entry(c: Clock) -> dict[str, Any]:
    """The clock's entry in a document (cycles_per_tick null while unknown,
    with the reason)."""
    entry: dict[str, Any] = {"tsc_hz": c.tsc_hz, "tsc_step_ticks": c.tsc_step_ticks,
                             "cycles_per_tick": None if c.core_cycles_problem
                             else number_or_null(c.cycles_per_tick)}
    if math.isfinite(c.tsc_read_spacing_ticks):
        entry["tsc_read_spacing_ticks"] = c.tsc_read_spacing_ticks
    if c.rulers is not None:
        entry["rulers"] = c.rulers.to_dict()
    if c.core_cycles_problem:
        entry["core_cycles_problem"] = c.core_cycles_problem
    return entry


def clock_from(rd: Reader, clk: dict[str, Any]) -> Clock:
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


def sentences_from(rd: Reader, obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
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
    """What the runs counted: ``"counter"``, its old name ``"clock"``, else the TSC."""
    key = "counter" if "counter" in entry else "clock" if "clock" in entry else None
    if key is None:
        return "tsc"
    counter = rd.get(entry, key, (str,), where)
    if counter not in _COUNTERS:
        raise rd.fail(f"{where}{key} is {counter!r}, must be one of {', '.join(_COUNTERS)}")
    return counter


def result_from_entry(rd: Reader, entry: object, i: int, clock: Clock, written_by: str,
                       version: int) -> BenchResult:
    """The BenchResult of one document entry, checked; its catalog row the entry's own, else `written_by`'s recorded one."""
    if not isinstance(entry, dict):
        raise rd.fail(f"results[{i}] is {type(entry).__name__}, expected an object")
    rd.known(entry, ENTRY_FIELDS, f"results[{i}].")
    method = file_method_name(rd.get(entry, "method", (str,), f"results[{i}]."))  # an old file's names
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
    """The entry's BenchResult, each field read and checked."""
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
        caveats=sentences_from(rd, entry, "caveats", where),
        clock_motion=_clock_motion(rd, entry, where),
        harness_resolution_core_cycles=_optional(rd, entry, "harness_resolution_core_cycles", 0,
                                                 HARNESS_BIAS_MAX_CORE_CYCLES, where, "core cycles"),
        catalog_row=_catalog_row_of(rd, entry, method, where, written_by, version),
    )


#: The fields of a back-to-back entry (a DiffResult).
DIFF_FIELDS = ("method", "runs", "serialize", "k", "cpu", "counter", "cycles_per_tick", "cycles_per_tick_ci95",
                "caveats", "clock_motion", "copy_loop_core_cycles", "copy_loop_ci95_core_cycles", "catalog_row",
                "long", "short", "migrated")


def diff_entry(d: DiffResult) -> dict[str, Any]:
    """One back-to-back result's entry (counts load() would refuse are refused: ValueError)."""
    for key, counts in (("long", d.long), ("short", d.short)):
        if int(counts.max()) >= TICKS_MAX:
            raise ValueError(f"{d.method}: back-to-back {key} holds a count of 2**53 or more: "
                             "what no TSC delta can be; measure again")
    return {
        "method": d.method, "runs": d.runs, "serialize": d.serialize, "k": d.k, "cpu": d.cpu,
        "counter": d.counter, "cycles_per_tick": number_or_null(d.cycles_per_tick),
        "cycles_per_tick_ci95": d.cycles_per_tick_ci95,
        **({"caveats": list(d.caveats)} if d.caveats else {}),
        **({"clock_motion": d.clock_motion.to_dict()} if d.clock_motion is not None else {}),
        **({"copy_loop_core_cycles": d.copy_loop_core_cycles,
            "copy_loop_ci95_core_cycles": d.copy_loop_ci95_core_cycles} if d.copy_loop_core_cycles else {}),
        **({"catalog_row": d.catalog_row.to_dict()} if d.catalog_row is not None else {}),
        "long": encode_ticks(d.long), "short": encode_ticks(d.short), "migrated": encode_bools(d.migrated),
    }


def diff_from_entry(rd: Reader, entry: object, i: int, clock: Clock,
                    one_call: Mapping[str, BenchResult]) -> DiffResult:
    """The DiffResult of one back-to-back entry, every field within its range;
    an entry without its catalog row (a file before fastcpu 0.9) takes the
    row of the one-call result of the same name in `one_call`."""
    if not isinstance(entry, dict):
        raise rd.fail(f"back_to_back[{i}] is {type(entry).__name__}, expected an object")
    rd.known(entry, DIFF_FIELDS, f"back_to_back[{i}].")
    method = file_method_name(rd.get(entry, "method", (str,), f"back_to_back[{i}]."))
    where = f"back_to_back[{i}] ({method}) "
    runs = rd.bounded(entry, "runs", 1, RUNS_MAX, where)
    k = rd.bounded(entry, "k", 2, UNROLL_MAX // 2, where)
    cpu = rd.get(entry, "cpu", (int, type(None)), where)
    if cpu is not None:
        cpu = rd.bounded(entry, "cpu", 0, CPU_NUMBER_MAX - 1, where)
    try:
        return _diff_of(rd, entry, where, method, k, cpu, runs, clock, one_call)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ResultFileError):
            raise
        raise rd.fail(f"{where}{exc}") from None


def _diff_of(rd: Reader, entry: dict[str, Any], where: str, method: str, k: int, cpu: int | None, runs: int,
             clock: Clock, one_call: Mapping[str, BenchResult]) -> DiffResult:
    """The back-to-back entry's DiffResult, each field read and checked."""
    if "catalog_row" in entry:
        try:
            row: CatalogRow | None = CatalogRow.from_dict(entry["catalog_row"])
        except ValueError as exc:
            raise rd.fail(f"{where}catalog_row: {exc}") from None
    else:  # before 0.9, or a user function: the one-call result's, as those files were read
        row = one_call[method].catalog_row if method in one_call else None
    return DiffResult.from_arrays(
        method=method, serialize=rd.get(entry, "serialize", (str,), where), k=k, cpu=cpu,
        long=_counts(rd, entry, "long", runs, where), short=_counts(rd, entry, "short", runs, where),
        migrated=rd.array(entry, "migrated", runs, where), clock=clock, counter=_counter_of(rd, entry, where),
        cycles_per_tick=_entry_cycles_per_tick(rd, entry, where, clock),
        cycles_per_tick_ci95=_optional(rd, entry, "cycles_per_tick_ci95", 0, CYCLES_PER_TICK_RANGE[1],
                                       where, "core cycles per TSC tick"),
        caveats=sentences_from(rd, entry, "caveats", where),
        clock_motion=_clock_motion(rd, entry, where),
        # optional (fastcpu >= 0.8.7): older files show their figures as read
        copy_loop_core_cycles=_optional(rd, entry, "copy_loop_core_cycles", 0, HARNESS_BIAS_MAX_CORE_CYCLES,
                                        where, "core cycles"),
        copy_loop_ci95_core_cycles=_optional(rd, entry, "copy_loop_ci95_core_cycles", 0,
                                             HARNESS_BIAS_MAX_CORE_CYCLES, where, "core cycles"),
        catalog_row=row,
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
    """The entry's ``catalog_row``, or in an older file the writer's catalog as recorded."""
    if "catalog_row" in entry:
        try:
            return CatalogRow.from_dict(entry["catalog_row"])
        except ValueError as exc:
            raise rd.fail(f"{where}catalog_row: {exc}") from None
    return recorded_row(method, written_by) if version < ROWS_VERSION else None


def _counts(rd: Reader, entry: dict[str, Any], key: str, runs: int, where: str) -> np.ndarray:
    """An array of counts per run, each below TICKS_MAX (so int64 differences do not wrap)."""
    a = rd.array(entry, key, runs, where)
    top = int(a.max())
    if top >= TICKS_MAX:
        at = int(np.argmax(a >= TICKS_MAX))
        raise rd.fail(f"{where}{key!r} holds {top} at run {at}: counts must be below 2**53, what a "
                      "TSC delta can be (35 days at 3 GHz; a counter read backwards wraps to near "
                      "2**64): the file was altered or damaged")
    return a


def _entry_cycles_per_tick(rd: Reader, entry: dict[str, Any], where: str, clock: Clock) -> float | None:
    """A result's own core cycles per tick: None when absent, NaN when null and the clock says why."""
    if "cycles_per_tick" not in entry:
        return None
    if entry["cycles_per_tick"] is None and clock.core_cycles_problem:
        return math.nan
    return rd.number(entry, "cycles_per_tick", *CYCLES_PER_TICK_RANGE, where, "core cycles per TSC tick")


def _optional(rd: Reader, entry: dict[str, Any], key: str, low: float, high: float, where: str,
              unit: str) -> float:
    """A number field within low..high that files before fastcpu 0.3.0 lack (then 0)."""
    return rd.number(entry, key, low, high, where, unit) if key in entry else 0.0


def selftest_from(rd: Reader, doc: dict[str, Any]) -> SelfTest | None:
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
