"""fastcpu: how fast can a Linux x86-64 process learn which CPU it runs on?

Times every way (LSL on the per-CPU GDT segment, RDTSCP, RDPID, SIDT/SGDT,
the vDSO, glibc's sched_getcpu, the rseq cpu_id load, the getcpu system call
and more) with cycle-level rigor, in a C harness, and returns raw per-run TSC
ticks as numpy arrays.

Units: TSC ticks (what the timestamp counter counts; constant rate), core
cycles (what the core executes at; ``Clock.cycles_per_tick`` converts) and
nanoseconds. On a constant-TSC CPU a TSC tick is not a core cycle.

    >>> import fastcpu
    >>> r = fastcpu.bench("rdpid", 1000)
    >>> r.best, r.median          # TSC ticks above the empty sequence
    >>> fastcpu.read("rdpid")     # CpuReading(method='rdpid', cpu=1, node=0, raw=1)
    >>> print(fastcpu.check())    # every method against sched_getcpu, on every CPU
    >>> fastcpu.getcpu()          # the current CPU, fast
    >>> r.estimate, r.estimate_ci95, r.estimator   # the recommended figure
"""

# The package's front door: it imports every room and adds nothing. Which
# module may import which is docs/architecture.md (tested by
# tests/test_architecture.py). Here: what users call and the types they
# meet first; the other record types are in fastcpu.types, the argument
# limits in fastcpu.limits.
from ._version import __version__
from ._errors import Error, Unsupported
from . import _deprecated
# The instrument: where the C core is not built (another platform than Linux
# x86-64, or FASTCPU_NO_CORE=1), each of these raises Unsupported naming the
# platform (_instrument), and the kit below works alone. First: the core's
# import refuses a sub-interpreter before anything imports numpy there.
from ._instrument import (CORE_MISSING, bench, bench_diff, chain_methods, check, clock, getcpu, getcpu_method,
                          getcpu_node, measure, method_code, methods, read, read_raw, selftest)
from ._clock_values import CalibrationWarning, Clock
from ._machine_results import Results, load
from ._json_document import ResultFileError
from ._compare import compare
from ._ab import compare_ab
from ._seed_table import seed_table
from . import limits as limits  # the submodule fastcpu.limits
from . import noise as noise  # the submodule fastcpu.noise
from . import types as types  # the submodule fastcpu.types
from ._bench_result import BenchResult, DiffResult, stability

if CORE_MISSING is None:
    from ._methods import MethodInfo

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


# Submodules: fastcpu.noise (the noise model), fastcpu.types, fastcpu.limits,
# and fastcpu.plot (matplotlib), loaded on first use.
def __getattr__(name: str) -> object:
    import importlib

    if name == "plot":  # imports matplotlib (slow): only when asked for
        return importlib.import_module(".plot", __name__)
    if name == "MethodInfo":  # the instrument's: no core here (else imported above)
        from ._instrument import missing_type

        missing_type(__name__, name)
    # the names that lived here before 0.6.0 (_deprecated.DEPRECATED), or AttributeError
    return _deprecated.attribute(__name__, name)
