"""The seeds' two questions: which methods report the CPU (``CpuVerdict``) and which is cheapest for each, ties named."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .bench_result import BenchResult, DiffResult
from .values import CatalogRow


__all__ = ["ONE_CALL", "BACK_TO_BACK", "QUESTIONS", "QUESTION_WORDS", "NOT_MEASURED", "NOT_MEASURED_BACK_TO_BACK",
           "NOT_WAYS", "CpuVerdict", "infer_cpu_verdict", "cheapest", "ties", "cheapest_words", "differ_words",
           "central_ns", "low_ns", "high_ns", "way_words"]

#: A way's result for either question: a single copy, or calls back to back.
Way = Any  # BenchResult | DiffResult


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
        reports_cpu: it read the CPU it ran on across the pinned sweep (``fastcpu.check()``).
        why: what the sweep saw, or ``'inferred: ...'`` for a file before fastcpu 0.6."""

    reports_cpu: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"reports_cpu": self.reports_cpu, "why": self.why}


def infer_cpu_verdict(row: CatalogRow | None, machine: Mapping[str, object]) -> CpuVerdict:
    """What a method's catalog `row` says of it on `machine` where no sweep was recorded."""
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


def central_ns(r: BenchResult | DiffResult) -> float:
    """A way's cost for ranking, ns: its ESTIMATE, or 0 below resolution."""
    return r.estimate_ns if r.resolved else 0.0


def low_ns(r: BenchResult | DiffResult) -> float:
    return r.estimate_ns - r.estimate_ci95_ns if r.resolved else 0.0


def high_ns(r: BenchResult | DiffResult) -> float:
    return r.estimate_ns + r.estimate_ci95_ns if r.resolved else r.upper_bound_ns


def way_words(r: BenchResult | DiffResult, named: bool = True) -> str:
    """A way's cost in words: core cycles (ns), or ns alone where core cycles
    are unknown; a bound where the cost is below what the harness resolves."""
    head = f"{r.method}: " if named else ""
    if math.isnan(r.estimate_core_cycles):  # core cycles unknown there
        if not r.resolved:
            return f"{head}{r.cost_text('ns')} ns ({r.below_resolution_words}; core cycles unknown)"
        return f"{head}{r.cost_text('ns')} ns, ESTIMATE (core cycles unknown)"
    ns = f"{r.upper_bound_ns:.1f}" if not r.resolved else f"{r.estimate_ns:.1f}"
    if not r.resolved:
        return f"{head}{r.cost_text('core_cycles')} core cycles (< {ns} ns: {r.below_resolution_words})"
    return f"{head}{r.cost_text('core_cycles')} core cycles ({ns} ns), ESTIMATE"

def cheapest(ways: Sequence[Way]) -> Way | None:
    """The way of the lowest ESTIMATE (a cost below what the harness resolves
    counts as 0: it is known only as a bound), in ns (a file may mix
    counters, never two units); None where there is none."""
    return min(ways, key=central_ns, default=None)


def ties(ways: Sequence[Way]) -> list[Way]:
    """The ways that tie with :func:`cheapest` within resolution: each whose
    interval (from 0 for a bound) reaches the top of the cheapest's (its
    bound), the cheapest first; [] where there is none."""
    best = cheapest(ways)
    if best is None:
        return []
    top = high_ns(best)
    return [best] + sorted((r for r in ways if r is not best and low_ns(r) <= top), key=central_ns)


def cheapest_words(tied: Sequence[Way]) -> str:
    """:func:`ties`'s answer in words: ``'rseq: 0.3 +- 0.1 core cycles (0.1
    ns), ESTIMATE'``, with every way that ties with it within resolution;
    '' where there is none."""
    if not tied:
        return ""
    words = way_words(tied[0])
    if len(tied) > 1:
        words += "; tied within resolution: " + ", ".join(f"{r.method} {way_words(r, named=False)}"
                                                         for r in tied[1:])
    return words


def differ_words(one_call: Sequence[Way], back_to_back: Sequence[Way]) -> str:
    """One line where the two questions' cheapest ways (each question's
    :func:`ties`) differ: '' where they agree, share a tie, or one question
    has no answer."""
    if not one_call or not back_to_back:
        return ""
    one, loop = one_call[0], back_to_back[0]
    if one.method == loop.method or {r.method for r in one_call} & {r.method for r in back_to_back}:
        return ""
    return (f"the two questions differ here: {one.method} is the cheapest call alone, {loop.method} "
            f"the cheapest in a loop (a call alone pays its latency, calls back to back overlap "
            f"and pay their throughput)")
