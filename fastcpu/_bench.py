"""fastcpu.bench(): time a method, or a user's C function, in the C harness."""

from __future__ import annotations

import ctypes
from typing import Union

from . import _core
from ._affinity import check_cpu, pinned
from ._clock import clock
from ._methods import method_info
from ._result import BenchResult

__all__ = ["bench", "RUNS_MAX", "UNROLL_MAX", "SERIALIZE_MODES", "Method"]

RUNS_MAX: int = _core.RUNS_MAX
UNROLL_MAX: int = _core.UNROLL_MAX
SERIALIZE_MODES: tuple[str, ...] = _core.SERIALIZE_MODES

#: A method name, a ctypes function pointer or the integer address of a C
#: function ``unsigned fn(void)``.
Method = Union[str, "ctypes._CFuncPtr", int]


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _check_serialize(serialize: object) -> str:
    if not isinstance(serialize, str):
        raise TypeError(f"serialize must be a str, not {type(serialize).__name__}")
    if serialize not in SERIALIZE_MODES:
        raise ValueError(
            f"unknown serialize mode {serialize!r}: use one of {', '.join(SERIALIZE_MODES)}"
        )
    return serialize


def _user_address(fn: object) -> tuple[int, str]:
    """The address and display name of a user function."""
    if isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        address = ctypes.cast(fn, ctypes.c_void_p).value or 0
        name = getattr(fn, "__name__", None) or f"0x{address:x}"
    else:
        address = fn  # type: ignore[assignment]
        if not 0 < address < 1 << 64:
            raise ValueError(f"a function address must be in 1..2**64-1, not {address}")
        name = f"0x{address:x}"
    if address == 0:
        raise ValueError("the ctypes function pointer is NULL")
    return address, f"user:{name}"


def bench(
    method: Method,
    runs: int = 1000,
    *,
    serialize: str = "lfence",
    unroll: int = 1,
    cpu: int | None = None,
) -> BenchResult:
    """Time `runs` single executions of `method`, each against the empty sequence.

    Args:
        method: a name from :func:`fastcpu.methods` (``'sidt'``, ``'rdpid'``,
            ...), or a user C function ``unsigned fn(void)`` given as a ctypes
            function pointer or an integer address. A user function is timed
            through an indirect call against an empty function called the
            same way; it must be safe to call any number of times from any
            thread and must not unwind.
        runs: timed runs, 1 to ``RUNS_MAX``. Each run times the method once
            and the empty sequence once, interleaved.
        serialize: ``'lfence'`` (start ``lfence; rdtsc; lfence``, end
            ``rdtscp; lfence``), ``'cpuid'`` (Intel's white paper: start
            ``cpuid; rdtsc``, end ``rdtscp; cpuid``) or ``'rdtscp'``
            (``rdtscp; lfence`` at both ends).
        unroll: back-to-back copies per run, 1 to ``UNROLL_MAX``; ``best`` and
            ``median`` are then per copy (a throughput figure).
        cpu: pin this thread to that CPU for the call, restoring its affinity
            afterwards, even on error.

    Returns:
        A :class:`BenchResult` with raw per-run TSC ticks and statistics in
        TSC ticks (with ns and core-cycle conversions).

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an argument is out of range or names no method.
        fastcpu.Unsupported: the method cannot run on this machine (the
            message says why).
    """
    runs = _check_int("runs", runs, 1, RUNS_MAX)
    unroll = _check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = _check_serialize(serialize)
    if cpu is not None:
        check_cpu(cpu)

    if isinstance(method, str):
        info = method_info(method)
        if not info.available:
            raise _core.Unsupported(f"{info.name}: {info.reason}")
        name = info.name

        def run() -> tuple:
            return _core.bench(name, runs, serialize, unroll)

    elif isinstance(method, (int, ctypes._CFuncPtr)) and not isinstance(method, bool):  # type: ignore[attr-defined]
        address, name = _user_address(method)

        def run() -> tuple:
            return _core.bench_address(address, runs, serialize, unroll)

    else:
        raise TypeError(
            "method must be a method name (str), a ctypes function pointer or an "
            f"int address, not {type(method).__name__}"
        )

    clk = clock()
    with pinned(cpu):
        raw, empty, migrated, best, median = run()
    return BenchResult(
        method=name,
        runs=runs,
        serialize=serialize,
        unroll=unroll,
        cpu=cpu,
        raw=raw,
        empty=empty,
        migrated=migrated,
        best=best,
        median=median,
        tsc_hz=clk.tsc_hz,
        cycles_per_tick=clk.cycles_per_tick,
        tsc_step_ticks=clk.tsc_step_ticks,
    )
