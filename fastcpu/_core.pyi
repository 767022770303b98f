"""Type declarations of fastcpu._core, the C timing core (for editors and mypy)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

class Error(RuntimeError): ...
class Unsupported(Error): ...

RUNS_MAX: int
UNROLL_MAX: int
SANITIZED: int  # 1 in a FASTCPU_SANITIZE=1 build, whose timed code is instrumented
SERIALIZE_MODES: tuple[str, str, str]
BRACKET_CHAINS_MAX: int  # chains a bracket may time
BRACKET_RECENT: int  # brackets kept per thread
BRACKET_RECENT_NS: int  # how long a bracket counts as recent
BRACKET_REUSE_NS: int  # how soon a closing bracket may open the next measurement
RULER_BLOCK: int  # dependent instructions per block of a ruler chain

def measure(  # the one measurement (csrc/glue_bench.c)
    target: str | int,  # a catalog name, or a user function's address in an executable mapping
    runs: int, serialize: str,
    copies: int,  # copies a run against the empty sequence; with diff, k (2k against k)
    diff: bool, counter: str,  # 'tsc' or 'pmu'
    blocks: int, chains: int,  # each bracket: `chains` (0: no brackets, 1-16) chains of `blocks` x RULER_BLOCK adds
    fixed_ticks: float,  # the chain timer's own cost, TSC ticks, taken off each chain
    tolerance: float,  # the disturbance tolerance, a fraction in [0, 1)
    resolution: float,  # the clock's step over a chain's ticks, a fraction in [0, 1)
    timeout: float = ...,  # a user function's measurement, seconds (0, the default: none; TimeoutError)
    /,
) -> tuple[
    npt.NDArray[np.uint64],  # per run: raw (diff: 2k copies), TSC ticks or PMU core cycles
    npt.NDArray[np.uint64],  # per run: the empty sequence (diff: k copies)
    npt.NDArray[np.bool_],  # migrated per run (pair)
    float,  # best per copy above the empty sequence (NaN for diff)
    float,  # median per copy above the empty sequence (NaN for diff)
    float,  # core cycles per TSC tick around the runs (NaN without brackets)
    float,  # its 95% half-width
]: ...
def catalog() -> list[dict[str, Any]]: ...  # one dict a row: name, kind, role, description,
# encoding, needs, available, reason, reports_cpu, cpu_reason, chain ({op, length,
# latency_cycles} or None), in_child (a child's GLIBC_TUNABLES setting, or None),
# code_of (whose sequence it times); kind 'method' | 'model' | 'chain'; role
# 'cpu_source' | 'library_call' | 'entry_cost' | 'model' | 'chain'
def requirements() -> list[tuple[str, bool, str]]: ...  # name, present here, reason when missing
def catalog_problems() -> list[str]: ...  # 'name: problem'; [] when every row is whole
def pmu_open() -> str: ...
def median_u64(values: npt.ArrayLike, /) -> float: ...
def read(method: str, /) -> tuple[int, bool]: ...

_CpuRead = tuple[int, int | None, int, bool]  # cpu, node, raw value, valid

def read_cpu(method: str, /) -> _CpuRead: ...
def read_in_thread(method: str, cpu: int, /) -> _CpuRead: ...
def code(method: str, /) -> tuple[int, int | None, str, int]: ...
def getcpu() -> int: ...
def getcpu_node() -> tuple[int, int]: ...
def getcpu_ways() -> tuple[str, str, str]: ...  # each may be 'none': nothing verified
def features() -> dict[str, bool | int | str]: ...
def current_cpu() -> int: ...
def tsc_reads(count: int, spaced: bool, /) -> npt.NDArray[np.uint64]: ...  # count: 2 to 2**20
def tsc_ns_pair() -> tuple[int, int]: ...
def ruler_ticks(ruler: str, blocks: int, /) -> int: ...  # 'add', 'imul', 'immediate_add'; blocks: 1 to 2**20
def add_chain_samples(blocks: int, count: int, /) -> tuple[int, ...]:
    """TSC ticks of `count` chains of `blocks` x RULER_BLOCK dependent register-register adds, after a warm-up chain."""
    ...
def bracket_figure(
    before: Sequence[float], after: Sequence[float], recent: Sequence[float], tolerance: float,
    resolution: float, /,
) -> tuple[float, float]:
    """(core cycles per TSC tick, 95% half-width) from bracket samples (core
    cycles per tick; before and after 1-128 each, recent 0-128)."""
    ...
def bracket_recent(now_ns: int, cpu: int, /) -> tuple[float, ...]:
    """This thread's bracket samples taken on `cpu` in BRACKET_RECENT_NS before `now_ns`, newest first."""
    ...
def bracket_remember(samples: Sequence[float], now_ns: int, cpu: int, /) -> None: ...  # for tests
def bracket_forget() -> None: ...  # forget this thread's brackets
def bracket_tolerance(  # a bracket sample's disturbance tolerance, a fraction (>= 0.01)
    step_ticks: float, cycles_per_tick: float, blocks: int, /
) -> float: ...
def bracket_resolution(  # the clock's step over a bracket chain's ticks, a fraction
    step_ticks: float, cycles_per_tick: float, blocks: int, /
) -> float: ...
def user_chains() -> list[tuple[str, str, int, int, int]]:
    """(name, op, length, latency core cycles, address) of the known-cost
    chains compiled as out-of-line functions ``unsigned fn(void)``."""
    ...
