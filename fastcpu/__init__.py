"""fastcpu: how fast can a Linux x86-64 process learn which CPU it runs on? Every way, timed
in a C harness as raw per-run TSC ticks (``fastcpu.bench("rdpid", 1000)``), checked against
sched_getcpu on every CPU (``fastcpu.check()``), and the fastest one (``fastcpu.getcpu()``).
"""

from typing import TYPE_CHECKING

from ._base import Error, Unsupported, __version__
from .instrument import (CORE_MISSING, bench, bench_diff, chain_methods, clock, getcpu, getcpu_method, getcpu_node,
                         methods, read, read_raw, selftest)
from .results.values import CalibrationWarning, Clock
from . import limits
from .results.bench_result import BenchResult, DiffResult, stability


# The package's front door: it names every room's public names and adds
# nothing; what bench() does not need loads on first use (_ON_FIRST_USE). Which
# module may import which is docs/architecture.md (tested by
# tests/test_architecture.py). Here: what users call and the types they
# meet first; the other record types are in fastcpu.types, the argument
# limits in fastcpu.limits.

# The instrument: where the C core is not built (another platform than Linux
# x86-64, or FASTCPU_NO_CORE=1), each of these raises Unsupported naming the
# platform (instrument/__init__.py), and the kit works alone. The core's
# import refuses a sub-interpreter before anything imports numpy there.

if CORE_MISSING is None:
    from .instrument.catalog import MethodInfo

#: What `import fastcpu` leaves to its first use (name -> the module that
#: holds it; a module of its own where the name is the module's): the
#: result files, compare, A/B, the seed table, the noise model, the record
#: types and the instrument's table-makers import modules (and hashlib)
#: that bench() never needs (docs/performance.md times the import).
_ON_FIRST_USE = {
    "Results": ".results.results", "load": ".results.results", "ResultFileError": ".files.write",
    "compare": ".analysis.compare", "compare_ab": ".analysis.ab", "seed_table": ".analysis.seed_table",
    "check": ".instrument", "measure": ".instrument", "method_code": ".instrument",
    "noise": ".noise", "types": ".types",
}

if TYPE_CHECKING:  # what a type checker sees of them: the names themselves
    from .analysis.ab import compare_ab
    from .analysis.compare import compare
    from .instrument import check, measure, method_code
    from .files.write import ResultFileError
    from .results.results import Results, load
    from .analysis.seed_table import seed_table
    from . import noise
    from . import types

__all__ = [
    "__version__",
    # measuring
    "bench",
    "bench_diff",
    "measure",
    "selftest",
    "clock",
    # reading the CPU
    "getcpu",
    "getcpu_node",
    "getcpu_method",
    "read",
    "read_raw",
    "check",
    # the catalog
    "methods",
    "chain_methods",
    "method_code",
    # results and files
    "load",
    "compare",
    "compare_ab",
    "seed_table",
    "stability",
    # the types met first
    "BenchResult",
    "DiffResult",
    "Results",
    "Clock",
    "MethodInfo",
    # errors and warnings
    "Error",
    "Unsupported",
    "ResultFileError",
    "CalibrationWarning",
]

if CORE_MISSING is not None:
    __all__.remove("MethodInfo")


# Submodules: fastcpu.limits; fastcpu.noise (the noise model), fastcpu.types
# and fastcpu.plot (matplotlib), loaded on first use, as _ON_FIRST_USE's names are.
def __getattr__(name: str) -> object:
    import importlib

    if name == "plot":  # imports matplotlib (slow): only when asked for
        return importlib.import_module(".plot", __name__)
    where = _ON_FIRST_USE.get(name)
    if where is not None:
        module = importlib.import_module(where, __name__)
        value = module if where == f".{name}" else getattr(module, name)
        globals()[name] = value  # asked once
        return value
    if name == "MethodInfo":  # the instrument's: no core here (else imported above)
        from .instrument import missing_type

        missing_type(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with those loaded on first use (tab completion sees them)."""
    return sorted(set(globals()) | set(_ON_FIRST_USE) | {"plot"})
