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
# tests/test_architecture.py).
from ._version import __version__
from ._core import Error, Unsupported
from ._args import CLOCKS, COUNTERS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX
from ._bench import bench, bench_diff
from ._calibration import CalibrationInfo, calibration_methods
from ._clock import CalibrationWarning, Clock, CounterUnits, Rulers, clock
from ._methods import MethodInfo, methods
from ._results import Results, load
from ._measure import measure
from ._resultfile import ResultFileError
from ._compare import ComparisonTable, compare
from ._ab import ABComparison, ABRow, compare_ab
from ._seed_table import SeedRow, SeedTable, seed_table
from . import noise as noise  # the submodule fastcpu.noise
from ._read import CpuReading, read, read_raw
from ._check import Agreement, AgreementTable, Reference, check
from ._getcpu import getcpu, getcpu_method, getcpu_node
from ._show import CodeBlock, MethodCode, method_code
from ._result import BenchResult, DiffResult, stability
from ._stability import Stability
from ._selftest import PathCheck, SelfTest, selftest

__all__ = [
    "ABComparison",
    "ABRow",
    "SeedRow",
    "SeedTable",
    "compare_ab",
    "seed_table",
    "Agreement",
    "AgreementTable",
    "BenchResult",
    "CLOCKS",
    "COUNTERS",
    "CalibrationInfo",
    "CalibrationWarning",
    "Clock",
    "Rulers",
    "CodeBlock",
    "CounterUnits",
    "CpuReading",
    "DiffResult",
    "Error",
    "MethodCode",
    "MethodInfo",
    "RUNS_MAX",
    "Reference",
    "SERIALIZE_MODES",
    "Stability",
    "UNROLL_MAX",
    "Unsupported",
    "bench",
    "check",
    "bench_diff",
    "calibration_methods",
    "clock",
    "getcpu",
    "getcpu_method",
    "getcpu_node",
    "method_code",
    "methods",
    "Results",
    "ResultFileError",
    "ComparisonTable",
    "compare",
    "load",
    "measure",
    "read",
    "read_raw",
    "stability",
    "selftest",
    "SelfTest",
    "PathCheck",
    "__version__",
]


# Submodules: fastcpu.noise (the noise model) and fastcpu.plot (matplotlib).
def __getattr__(name: str) -> object:
    # fastcpu.plot imports matplotlib (slow): load it on first use only.
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
