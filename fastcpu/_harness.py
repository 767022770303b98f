"""The Python side of the harness: resolve what to time (a method's name, or
a user's C function by its address), pin the thread, open the PMU counter
when asked, and make the one measurement (:func:`measure`) for raw per-run counts.
bench(), bench_diff() and the self-test build on it; it builds no result."""

from __future__ import annotations

import ctypes
import operator
from collections.abc import Callable
from typing import Union

from . import _core, _norseq
from ._affinity import pinned
from ._args import check_cpu
from ._clock import Clock
from ._clock import clock as clock_facts
from ._methods import method_info

__all__ = ["Method", "resolve", "run_pinned", "measure"]

#: A method name, a ctypes function pointer or the integer address of a C
#: function ``unsigned fn(void)``.
Method = Union[str, "ctypes._CFuncPtr", int]


def _check_signature(fn: object) -> None:
    """Refuse ctypes prototypes that cannot be ``unsigned fn(void)``.

    Calling a function that takes arguments without them, or one that returns
    a structure (through a hidden pointer argument), would read or write
    through garbage: refuse them rather than crash.
    """
    argtypes = getattr(fn, "argtypes", None)
    if argtypes:
        raise TypeError(
            f"a user function must take no arguments (unsigned fn(void)); this one "
            f"declares argtypes {argtypes!r}"
        )
    restype = getattr(fn, "restype", None)
    if isinstance(restype, type) and issubclass(restype, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        raise TypeError(
            f"a user function must return an integer (unsigned fn(void)), not {restype.__name__}"
        )


def _user_address(fn: object) -> tuple[int, str]:
    """The address and display name of a user function."""
    if isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        _check_signature(fn)
        address = ctypes.cast(fn, ctypes.c_void_p).value or 0
        name = getattr(fn, "__name__", None) or f"0x{address:x}"
    else:
        address = operator.index(fn)  # type: ignore[call-overload]  # the plain int: a subclass's comparisons may lie
        if not 0 < address < 1 << 64:
            raise ValueError(f"a function address must be in 1..2**64-1, not {address}")
        name = f"0x{address:x}"
    if address == 0:
        raise ValueError("the ctypes function pointer is NULL")
    return address, f"user:{name}"


def resolve(method: object) -> tuple[str, str | int]:
    """(display name, what _core takes: a method's name or a function address)."""
    if isinstance(method, str):
        known = _resolved.get(method)
        if known is None:  # a method's availability is fixed for the process
            info = method_info(method)
            if not info.available:
                raise _core.Unsupported(f"{info.name}: {info.reason}")
            known = _resolved[method] = (info.name, info.name)
        return known
    if isinstance(method, (int, ctypes._CFuncPtr)) and not isinstance(method, bool):  # type: ignore[attr-defined]
        address, name = _user_address(method)
        return name, address
    raise TypeError(
        "method must be a method name (str), a ctypes function pointer or an "
        f"int address, not {type(method).__name__}"
    )


#: Names bench() was given -> what resolve() made of them (bench() resolves
#: on every call).
_resolved: dict[str, tuple[str, str]] = {}


def run_pinned(
    method: Method, cpu: int | None, counter: str, run: Callable[[str | int], tuple]
) -> tuple[str, tuple, Clock, str]:
    """Resolve `method`, pin to `cpu` (restored afterwards), open the PMU
    counter when asked, and call `run` with the method's name or address:
    (display name, what `run` returned, the clock, the counter that counted:
    ``'tsc'``, ``'pmu'`` or, user-mode cycles only, ``'pmu_user'``)."""
    if cpu is not None:
        check_cpu(cpu)
    name, target = resolve(method)
    clk = clock_facts()
    if cpu is None:  # bench()'s common case: no context to enter (2.4 us on the AuthenticAMD family 25 model 1 guest)
        arrays, counter = _counted(run, target, counter)
    else:
        with pinned(cpu):
            arrays, counter = _counted(run, target, counter)
    return name, arrays, clk, counter


def _counted(run: Callable[[str | int], tuple], target: str | int, counter: str) -> tuple[tuple, str]:
    """run(target) with the PMU counter opened when `counter` is ``'pmu'``:
    (what it returned, the counter that counted)."""
    if counter != "pmu":
        return run(target), counter
    scope = _core.pmu_open()
    return run(target), "pmu" if scope == "all" else "pmu_user"


def measure(target: str | int, runs: int, serialize: str, copies: int, diff: bool, counter: str,
            rulers: tuple | None = None, timeout_s: float = 0.0) -> _core.Measured:
    """The one measurement (``_core.measure``) of `target` (what
    :func:`resolve` gave: a method by name, a user function by address;
    ``sched_getcpu_norseq`` in a child without rseq, ``_norseq.py``): `copies`
    copies a run against the empty sequence, or (`diff`) 2k against k
    copies. `rulers` (``_conversion.rulers()``; None: none) times ruler
    points between stretches of the runs on the TSC, except for a row
    measured in a child (``MethodInfo.in_child``): its runs are another
    process's, converted there by nothing. `timeout_s` (a user function's;
    0: none) bounds the measurement in seconds (TimeoutError). A
    ``_core.Measured`` record."""
    if isinstance(target, str) and method_info(target).in_child:
        return _norseq.run(target, (runs, serialize, copies, diff, counter), counter)
    return _core.measure(target, runs=runs, serialize=serialize, copies=copies, diff=diff, counter=counter,
                         rulers=rulers, timeout=timeout_s)
