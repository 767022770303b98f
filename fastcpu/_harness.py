"""The Python side of the harness, from a request to raw runs: resolve what
to time (a method's name, or a user's C function by its address), pin the
thread, open the PMU counter when asked, and take the runs (:func:`raw_runs`)
where the method's catalog row says they run: in this process
(``_core.measure``, with ruler points between stretches on the TSC), or in a
child interpreter (``_child_runner``, a row with ``in_child``), chosen once
per name. One reading of a row goes the same way (:func:`read_cpu`,
:func:`read_raw`). It builds no result: ``_measurement`` does, from the
record it returns.
"""

from __future__ import annotations

import ctypes
import operator
from typing import NamedTuple, Union

from . import _child_runner, _conversion, _core
from ._affinity import pinned
from ._args import check_cpu
from ._catalog_rows import CatalogRow
from ._clock import Clock
from ._clock import clock as clock_facts
from ._methods import method_info

__all__ = ["Method", "Runs", "resolve", "raw_runs", "read_cpu", "read_raw"]

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


class Target(NamedTuple):
    """What :func:`resolve` makes of a method."""

    #: the result's name: the method's, or ``'user:NAME'`` for a user function
    name: str
    #: what ``_core.measure`` takes: a method's name or a function's address
    core: str | int
    #: its catalog row says it runs in a child interpreter (``MethodInfo.in_child``)
    in_child: bool = False
    #: the row's words a result carries into its file (None: a user function)
    catalog_row: CatalogRow | None = None


def resolve(method: object) -> Target:
    """What `method` (a name, a ctypes function pointer or an address) is to
    the harness, and where it runs (from its catalog row).

    Raises:
        TypeError, ValueError: `method` names no method or is no function.
        fastcpu.Unsupported: its catalog row cannot run here (the reason).
    """
    if isinstance(method, str):
        known = _resolved.get(method)
        if known is None:  # a method's availability is fixed for the process
            info = method_info(method)
            if not info.available:
                raise _core.Unsupported(f"{info.name}: {info.reason}")
            known = _resolved[method] = Target(info.name, info.name, info.in_child, info.catalog_row)
        return known
    if isinstance(method, (int, ctypes._CFuncPtr)) and not isinstance(method, bool):  # type: ignore[attr-defined]
        address, name = _user_address(method)
        return Target(name, address)
    raise TypeError(
        "method must be a method name (str), a ctypes function pointer or an "
        f"int address, not {type(method).__name__}"
    )


#: Names bench() was given -> what resolve() made of them (bench() resolves
#: on every call).
_resolved: dict[str, Target] = {}


class Runs(NamedTuple):
    """What :func:`raw_runs` took: the raw record and what it was taken with."""

    #: the result's name (``'user:NAME'`` for a user function)
    name: str
    #: the runs (``_core.Measured``): per-run counts, best and median, and on
    #: the TSC in this process the ruler points and what they say
    measured: _core.Measured
    #: the process's clock (what a TSC tick is worth; its first-use figures)
    clock: Clock
    #: the counter that counted: ``'tsc'``, ``'pmu'`` or, user-mode cycles
    #: only, ``'pmu_user'``
    counter: str
    #: the CPU the thread was pinned to for the runs (a plain int), or None
    cpu: int | None
    #: the method's catalog row (None: a user function)
    catalog_row: CatalogRow | None


def raw_runs(method: object, *, runs: int, serialize: str, copies: int, diff: bool, counter: str,
             cpu: int | None, timeout_s: float = 0.0) -> Runs:
    """The runs of `method` (a name or a user function): `runs` runs of
    `copies` copies against the empty sequence, or (`diff`) `runs` pairs of
    2k against k copies (k = `copies`), counted by `counter` (``'tsc'`` or
    ``'pmu'``), pinned to `cpu` for the call (restored afterwards; None: not
    pinned). Where the method's catalog row says (:func:`resolve`): in this
    process, one ``_core.measure`` call with ruler points between stretches
    of the runs on the TSC (``_conversion.rulers()``); or in its child
    interpreter (``_child_runner``), which runs on this thread's CPUs and
    returns runs without ruler points (another process's clock: converted
    by nothing there). `timeout_s` bounds a user function's measurement in
    seconds (0: none; TimeoutError). Arguments are checked by the caller
    (bench()), but `cpu`, which is checked here.
    """
    if cpu is not None:
        cpu = check_cpu(cpu)
    target = resolve(method)
    clk = clock_facts()
    if cpu is None:  # bench()'s common case: no context to enter (2.4 us on the AuthenticAMD family 25 model 1 guest)
        measured, counted = _take(target, runs, serialize, copies, diff, counter, timeout_s)
    else:
        with pinned(cpu):
            measured, counted = _take(target, runs, serialize, copies, diff, counter, timeout_s)
    return Runs(target.name, measured, clk, counted, cpu, target.catalog_row)


def _take(target: Target, runs: int, serialize: str, copies: int, diff: bool, counter: str,
          timeout_s: float) -> tuple[_core.Measured, str]:
    """(the runs, the counter that counted), on the thread as it is pinned:
    the PMU counter opened first when `counter` is ``'pmu'``."""
    counted = counter
    if counter == "pmu":
        counted = "pmu" if _core.pmu_open() == "all" else "pmu_user"
    if target.in_child:
        return _child_runner.raw_runs(str(target.core), runs=runs, serialize=serialize, copies=copies,
                                     diff=diff, counter=counter), counted
    return _core.measure(target.core, runs=runs, serialize=serialize, copies=copies, diff=diff, counter=counter,
                         rulers=_conversion.rulers() if counter == "tsc" else None,
                         timeout=timeout_s), counted


def read_cpu(name: str) -> tuple[int, int | None, int, bool]:
    """One reading of the method `name` where its catalog row says it runs
    (:func:`resolve`: Unsupported where it cannot run): (cpu, node or None, raw value,
    valid), as ``_core.read_cpu`` returns them."""
    if resolve(name).in_child:
        return _child_runner.read_cpu(name)
    return _core.read_cpu(name)


def read_raw(name: str) -> tuple[int, bool]:
    """One execution of the method `name` where its catalog row says it runs
    (:func:`resolve`: Unsupported where it cannot run): (raw value, valid), as
    ``_core.read`` returns them."""
    if resolve(name).in_child:
        _, _, raw, valid = _child_runner.read_cpu(name)
        return raw, valid
    return _core.read(name)
