"""The instrument's functions, or where no C core is built, stand-ins that say so.

The one place that asks whether ``fastcpu._core`` imports: where it cannot (another platform,
``FASTCPU_NO_CORE=1``), each of bench(), measure(), check(), ... raises
:class:`fastcpu.Unsupported` naming the platform, and the analysis kit still imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from .._base import no_core


__all__ = ["CORE_MISSING", "INSTRUMENT_TYPES", "missing_type", "bench", "bench_diff", "chain_methods", "check",
           "chosen_methods", "clock", "getcpu", "getcpu_method", "getcpu_node", "measure", "method_code",
           "methods", "pmu_open", "read", "read_raw", "selftest"]

#: The record types only the instrument returns: absent where there is no core.
INSTRUMENT_TYPES = ("MethodInfo", "ChainInfo", "Agreement", "AgreementTable", "Reference", "CpuReading",
                    "CodeBlock", "MethodCode")


def _core_missing() -> str | None:
    """Why the C core cannot be imported here (its ModuleNotFoundError's
    words), or None where it can. Any other failure to import it (a broken
    build, a sub-interpreter) is raised: that is no platform without a core."""
    name = "fastcpu._core"
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # something the core needs (numpy) is missing: not ours to hide
            raise
        return str(exc)
    return None


#: Why the C core cannot be imported here, or None where it can.
CORE_MISSING: str | None = _core_missing()


def missing_type(module: str, name: str) -> NoReturn:
    """An instrument record type asked for where there is no core: AttributeError saying why."""
    raise AttributeError(f"module {module!r} has no attribute {name!r}: {no_core(name, str(CORE_MISSING))}")


def _stand_in(name: str) -> Callable[..., NoReturn]:
    def stand_in(*args: Any, **kwargs: Any) -> NoReturn:
        raise no_core(f"fastcpu.{name}()", str(CORE_MISSING))

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__doc__ = (f"fastcpu.{name}() needs the C core, which is not importable here "
                        f"({CORE_MISSING}): it raises fastcpu.Unsupported.")
    return stand_in


#: The instrument's functions that import more than bench() needs (result
#: files, ELF symbols), loaded on their first use (name -> module).
_ON_FIRST_USE = {"check": ".cpu", "chosen_methods": ".machine", "measure": ".machine",
                 "method_code": ".show"}

if CORE_MISSING is None:
    from .timing import bench, bench_diff
    from .catalog import chain_methods
    from .timebase import clock
    from .._core import pmu_open
    from .cpu import getcpu, getcpu_method, getcpu_node
    from .catalog import methods
    from .cpu import read, read_raw
    from .bias import selftest
    from .._core import features as _features
    from ..results.stability import read_hypervisor_vendor_with

    def _hypervisor_vendor() -> str | None:
        """CPUID leaf 0x40000000's vendor signature (``'KVMKVMKVM'``), None on metal."""
        return _features()["hypervisor_vendor"] or None

    read_hypervisor_vendor_with(_hypervisor_vendor)

    if TYPE_CHECKING:
        from .cpu import check
        from .machine import chosen_methods, measure
        from .show import method_code

    def __getattr__(name: str) -> object:
        where = _ON_FIRST_USE.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, __package__), name)
        globals()[name] = value
        return value
else:
    bench = _stand_in("bench")
    bench_diff = _stand_in("bench_diff")
    chain_methods = _stand_in("chain_methods")
    check = _stand_in("check")
    chosen_methods = _stand_in("measure")  # the CLI's table and run: measure()'s methods first
    clock = _stand_in("clock")
    getcpu = _stand_in("getcpu")
    getcpu_method = _stand_in("getcpu_method")
    getcpu_node = _stand_in("getcpu_node")
    measure = _stand_in("measure")
    method_code = _stand_in("method_code")
    methods = _stand_in("methods")
    pmu_open = _stand_in("bench")  # counter='pmu'
    read = _stand_in("read")
    read_raw = _stand_in("read_raw")
    selftest = _stand_in("selftest")
