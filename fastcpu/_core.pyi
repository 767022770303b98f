"""Type declarations of fastcpu._core, the C timing core (for editors and mypy)."""

from typing import Any

import numpy as np
import numpy.typing as npt

class Error(RuntimeError): ...
class Unsupported(Error): ...

RUNS_MAX: int
UNROLL_MAX: int
SANITIZED: int  # 1 in a FASTCPU_SANITIZE=1 build, whose timed code is instrumented
SERIALIZE_MODES: tuple[str, str, str]
LEVELS_MAX: int  # levels of the core clock a measurement reports at most
RULERS_AGREE: float  # a ruler point's add and imul rulers agree within this fraction at least
RULER_BLOCK: int  # dependent instructions per block of a ruler chain (adds)
IMUL_RULER_BLOCK: int  # imuls per block of the imul ruler chain (as many core cycles as an add block)

class Conversion:  # what ruler points say: convert() and TimedRuns.conversion (a struct sequence)
    cycles_per_tick: float  # converting the runs stretch by stretch; NaN: no point's rulers agree
    ci95: float  # its 95% half-width
    points: int
    disturbed: int  # points whose add and imul rulers disagreed
    hops: int
    hop_runs: int
    add_mean: float
    imul_mean: float
    levels: tuple[float, ...]  # core cycles per tick, lowest first
    level_points: tuple[int, ...]  # undisturbed points at each level
    level_min: float  # NaN: no undisturbed point
    level_max: float
    span_ticks: float  # from the first point to the last
    hops_located: int  # of the hops: those whose place in their stretch the runs showed
    slowdowns: int  # level changes whose rulers moved apart or whose body held: other work, not the clock

class TimedRuns:  # what time_runs() returns (a struct sequence)
    a: npt.NDArray[np.uint64]  # per run: raw (diff: 2k copies), TSC ticks or PMU core cycles
    b: npt.NDArray[np.uint64]  # per run: the empty sequence (diff: k copies)
    migrated: npt.NDArray[np.bool_]  # per run (pair)
    best: float  # per copy above the empty sequence (NaN for diff)
    median: float  # per copy above the empty sequence (NaN for diff)
    points: npt.NDArray[np.float64] | None  # (n, 4): runs before, TSC ticks since the start, add, imul
    conversion: Conversion | None  # what the points say, as convert() says it
    # (not in the sequence) recommend() of the runs at estimate_step, computed in C
    # (csrc/estimate.c): (ticks, ci95_ticks, estimator, runs_used) per copy, or None
    estimate: tuple[float, float, str, int] | None

def time_runs(  # the one way a target is timed (csrc/glue_bench.c)
    target: str | int,  # a catalog name, or a user function's address in an executable mapping
    /,
    runs: int, serialize: str,
    copies: int,  # copies a run against the empty sequence; with diff, k (2k against k)
    diff: bool, counter: str,  # 'tsc' or 'pmu'
    rulers: tuple[int, int, float, float, int, float, float] | None,  # add blocks, imul blocks,
    # their timers' fixed core cycles, spacing in TSC ticks, tolerance, resolution; None: none
    timeout: float = ...,  # a user function's timing, seconds (0, the default: none; TimeoutError)
    estimate_step: float | None = ...,  # bench only: the counter's step in counts, for .estimate
) -> TimedRuns: ...
def recommend(  # time_runs()'s estimate of given runs (csrc/estimate.c), for the tests
    raw: npt.NDArray[np.uint64], empty: npt.NDArray[np.uint64], migrated: npt.NDArray[np.bool_] | None,
    step: float, unroll: int, /,
) -> tuple[tuple[float, float, str, int], tuple[float, float, str, int], tuple[float, float]] | None: ...
# (recommended, paired mean, (best, median) per copy); None: more than 2**18 runs, or a count >= 2**61
def catalog() -> list[dict[str, Any]]: ...  # one dict a row: name, kind, role, description,
# encoding, needs, available, reason, reports_cpu, cpu_reason, chain ({op, length,
# latency_cycles} or None), in_child (a child's GLIBC_TUNABLES setting, or None),
# code_of (whose sequence it times), read_failure (what a failed reading means, or None:
# it never fails), read_errno (a failed reading's raw value is the call's errno), reference
# ('library' | 'kernel': check() compares every row with it, or None); kind 'method' | 'model' | 'chain'; role
# 'cpu_source' | 'library_call' | 'entry_cost' | 'model' | 'chain'
def pmu_open() -> str: ...
def read(method: str, /) -> tuple[int, bool]: ...

_CpuRead = tuple[int, int | None, int, bool]  # cpu, node, raw value, valid

def read_cpu(method: str, /) -> _CpuRead: ...
def code(method: str, /) -> tuple[int, int | None, str, int]: ...
def getcpu() -> int: ...
def getcpu_node() -> tuple[int, int]: ...
def getcpu_ways() -> tuple[str, str, str]: ...  # each may be 'none': nothing verified
def features() -> dict[str, bool | int | str]: ...
def current_cpu() -> int: ...
def tsc_reads(count: int, spaced: bool, /) -> npt.NDArray[np.uint64]: ...  # count: 2 to 2**20
def tsc_ns_pair() -> tuple[int, int]: ...
def ruler_ticks(ruler: str, blocks: int, /) -> int: ...  # 'add', 'imul', 'immediate_add'; blocks: 1 to 2**20
def convert(points: npt.ArrayLike, tolerance: float, resolution: float,
            a: npt.ArrayLike | None = None, b: npt.ArrayLike | None = None, /) -> Conversion:
    """What ruler points ((n, 4): runs before, TSC ticks since the start, add
    and imul rulers in core cycles per tick) say: cycles_per_tick, ci95,
    points, disturbed, hops, hop_runs, add_mean, imul_mean, levels (lowest
    first), level_points, level_min, level_max, span_ticks, hops_located,
    slowdowns.
    `a` and `b` (together): both sides' TSC ticks of each run, which show
    where in its stretch a hop fell."""
    ...
def ruler_resolution(  # one counter step over the shorter ruler chain's ticks, a fraction
    step_ticks: float, cycles_per_tick: float, add_blocks: int, imul_blocks: int, /
) -> float: ...
def ruler_tolerance(resolution: float, /) -> float: ...  # 3 x resolution, at least 0.01
def user_chains() -> list[tuple[str, str, int, int, int]]:
    """(name, op, length, latency core cycles, address) of the known-cost
    chains compiled as out-of-line functions ``unsigned fn(void)``."""
    ...
def user_empty() -> int: ...  # the address of a user function of no cost: the user path's zero
