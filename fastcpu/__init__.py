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
from ._core import Error, Unsupported
from ._bench import bench, bench_diff
from ._chains import chain_methods
from ._clock import CalibrationWarning, Clock, clock
from ._methods import MethodInfo, methods
from ._machine_results import Results, load
from ._measure import measure
from ._json_document import ResultFileError
from ._compare import compare
from ._ab import compare_ab
from ._seed_table import seed_table
from . import limits as limits  # the submodule fastcpu.limits
from . import noise as noise  # the submodule fastcpu.noise
from . import types as types  # the submodule fastcpu.types
from ._read import read, read_raw
from ._check import check
from ._getcpu import getcpu, getcpu_method, getcpu_node
from ._show import method_code
from ._bench_result import BenchResult, DiffResult, stability
from ._selftest import selftest

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

#: Names that moved in 0.6.0 -> (where they live now, why a user meets it).
#: They still answer here, with a DeprecationWarning naming the new place.
_MOVED = {
    # the types that were at the top before 0.6.0 (ChainInfo was CalibrationInfo: _RENAMED)
    **{name: "types" for name in types.__all__ if name not in ("ChainCheck", "ChainInfo", "CpuVerdict")},
    **{name: "limits" for name in limits.__all__},
}
#: Renamed in 0.6.0: the old name -> the new one (one meaning of
#: "calibration": the clock's; the chains of known cost are chains).
_RENAMED = {"CalibrationInfo": ("types", "ChainInfo"), "calibration_methods": ("", "chain_methods")}


# Submodules: fastcpu.noise (the noise model), fastcpu.types, fastcpu.limits,
# and fastcpu.plot (matplotlib), loaded on first use.
def __getattr__(name: str) -> object:
    import importlib
    import warnings

    if name == "plot":  # imports matplotlib (slow): only when asked for
        return importlib.import_module(".plot", __name__)
    if name in _MOVED or name in _RENAMED:
        where, new = _RENAMED.get(name, (_MOVED.get(name, ""), name))
        home = importlib.import_module(f".{where}", __name__) if where else globals()
        value = getattr(home, new) if where else home[new]
        spelled = f"fastcpu.{where}.{new}" if where else f"fastcpu.{new}"
        warnings.warn(f"fastcpu.{name} is now {spelled} (moved in fastcpu 0.6.0); the old name will go",
                      DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
