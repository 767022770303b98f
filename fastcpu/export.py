"""Results in formats other tools read: Google Benchmark's JSON and CSV (docs/files.md, "Exports").

``to_gbench``: one benchmark per method, ``real_time`` and ``cpu_time`` the
ESTIMATE in ns per call (its bound where not resolved), fastcpu's figures
as extra counters, the question at the start of ``label``; calls back to
back as ``NAME/back_to_back:K``. ``write_csv``: ``compare --csv``'s columns."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from typing import IO, Any

from .results.bench_result import BenchResult, DiffResult
from .analysis.compare import CSV_COLUMNS, result_rows
from .results.results import BACK_TO_BACK, ONE_CALL, QUESTION_WORDS, Results
from .results.statistics import shown_in, statistic


__all__ = ["to_gbench", "write_csv", "CSV_COLUMNS"]


def _benchmark_name(r: BenchResult) -> str:
    # Google Benchmark writes arguments after a slash: BM_x/64.
    return r.method if r.unroll == 1 else f"{r.method}/unroll:{r.unroll}"


def _finite_only(entry: dict[str, Any]) -> dict[str, Any]:
    """`entry` without its non-finite floats (Google Benchmark leaves out a counter it lacks)."""
    return {k: v for k, v in entry.items() if not (isinstance(v, float) and not math.isfinite(v))}


def _gbench_entry(r: BenchResult, index: int) -> dict[str, Any]:
    name = _benchmark_name(r)
    return _finite_only({
        "name": name,
        "family_index": index,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 1,
        "repetition_index": 0,
        "threads": 1,
        "iterations": r.runs_used,
        # a cost below what the harness resolves is at most its bound: that, never a negative time
        "real_time": r.estimate_ns if r.resolved else r.upper_bound_ns,
        "cpu_time": r.estimate_ns if r.resolved else r.upper_bound_ns,
        "time_unit": "ns",
        "resolved": r.resolved,
        "label": f"{QUESTION_WORDS[ONE_CALL]}: {r.estimator}, serialize={r.serialize}, unroll={r.unroll}",
        # fastcpu's figures (every statistic of _statistics.shown_in('export')),
        # each unit in its name
        **{k: v for s in shown_in("export") for k, v in s.figures(r).items()},
        "runs": r.runs,
        "migrated_runs": r.migrations,
    })


def _gbench_loop_entry(d: DiffResult, index: int) -> dict[str, Any]:
    """A method's calls back to back as its own benchmark, ``NAME/back_to_back:K``."""
    name = f"{d.method}/back_to_back:{d.k}"
    time = d.estimate_ns if d.resolved else d.upper_bound_ns
    return _finite_only({
        "name": name, "family_index": index, "per_family_instance_index": 0, "run_name": name,
        "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
        "iterations": d.runs_used, "real_time": time, "cpu_time": time, "time_unit": "ns",
        "resolved": d.resolved,
        "label": f"{QUESTION_WORDS[BACK_TO_BACK]}: {d.estimator} of {2 * d.k} and {d.k} copies, "
                 f"serialize={d.serialize}",
        **statistic("estimate").figures(d),
        "runs": d.runs, "migrated_runs": d.migrations, "k": d.k,
    })


def to_gbench(results: Results) -> dict[str, Any]:
    """`results` as Google Benchmark's JSON document (a dict for json.dump).

    Raises:
        TypeError: `results` is not a fastcpu.Results.
    """
    if not isinstance(results, Results):
        raise TypeError(f"to_gbench() takes a fastcpu.Results (from measure() or load()), "
                        f"not {type(results).__name__}")
    m, clk = results.machine, results.clock
    governors = m.get("governors") or {}
    context = {
        "date": results.date,
        "host_name": str(m.get("hostname", "")),
        "executable": f"fastcpu {results.fastcpu_version}".strip(),
        "num_cpus": len(m.get("online_cpus") or []) or os.cpu_count() or 1,  # type: ignore[arg-type]
        # the core clock by the rulers; the TSC's rate while they disagree
        # (then cycles_per_tick is null and core_cycles_problem says why)
        "mhz_per_cpu": round((clk.core_hz if math.isfinite(clk.core_hz) else clk.tsc_hz) / 1e6),
        "cpu_scaling_enabled": any(g != "performance" for g in governors.values())  # type: ignore[union-attr]
        if governors else False,
        "caches": [],
        "load_avg": [],
        "library_build_type": "release",
        "library_version": f"fastcpu {results.fastcpu_version}".strip(),
        # what a tick is worth there, and which machine it was
        "fastcpu_label": results.label or "",
        "cpu": f"{m.get('model_name', '')} family {m.get('family')} model {m.get('model')}",
        "tsc_hz": clk.tsc_hz,
        "tsc_step_ticks": clk.tsc_step_ticks,
        "cycles_per_tick": clk.cycles_per_tick if math.isfinite(clk.cycles_per_tick) else None,
        "tsc_read_spacing_ticks": clk.tsc_read_spacing_ticks
        if math.isfinite(clk.tsc_read_spacing_ticks) else None,
        **({"core_cycles_problem": clk.core_cycles_problem} if clk.core_cycles_problem else {}),
        **({"rulers": clk.rulers.to_dict()} if clk.rulers is not None else {}),
    }
    single = [_gbench_entry(r, i) for i, r in enumerate(results.values())]
    loop = [_gbench_loop_entry(d, len(single) + i) for i, d in enumerate(results.back_to_back.values())]
    return {"context": context, "benchmarks": single + loop}


# CSV_COLUMNS (imported above): the CSV's columns, units in their names, the
# one CSV schema (compare's).


def write_csv(results: Results | Sequence[Results], out: IO[str]) -> None:
    """Write one CSV row per machine and method (header first) to `out`.

    Raises:
        TypeError: `results` is not a Results or a list or tuple of them.
    """
    if isinstance(results, Results):
        many = [results]
    elif isinstance(results, (list, tuple)):
        many = list(results)
    else:
        raise TypeError(f"write_csv() takes fastcpu.Results or a list of them, "
                        f"not {type(results).__name__}")
    for res in many:
        if not isinstance(res, Results):
            raise TypeError(f"write_csv() takes fastcpu.Results, not {type(res).__name__}")
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for res in many:
        name = res.label or str(res.machine.get("model_name", "machine"))
        writer.writerows(result_rows(res, "", name))
