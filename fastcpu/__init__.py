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
    >>> r.estimate, r.estimate_ci95, r.estimator   # the recommended figure
"""

from ._core import Error, Unsupported
from ._bench import CLOCKS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX, bench, bench_diff
from ._calibration import CalibrationInfo, calibration_methods
from ._clock import Clock, clock
from ._methods import MethodInfo, methods
from ._result import BenchResult, DiffResult
from ._stability import Stability, stability

__version__ = "0.1.0"

__all__ = [
    "BenchResult",
    "CLOCKS",
    "CalibrationInfo",
    "Clock",
    "DiffResult",
    "Error",
    "MethodInfo",
    "RUNS_MAX",
    "SERIALIZE_MODES",
    "Stability",
    "UNROLL_MAX",
    "Unsupported",
    "bench",
    "bench_diff",
    "calibration_methods",
    "clock",
    "methods",
    "stability",
    "__version__",
]
