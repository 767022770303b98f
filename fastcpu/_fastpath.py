"""bench()'s common call, ``bench(name, runs)`` on the TSC without pinning,
in one C call (``_core.bench_result``): the brackets, the runs, the figure
and the result's construction. The checked path in Python (``_timing.py``)
cost about 15 us more per call than this on the AuthenticAMD family 25
model 1 (Zen 3) guest, a tenth of ``bench(m, 1000)``'s own time
(docs/performance.md).

It serves only what the checked path has already served once: a method
name that path resolved (availability is fixed for the process), a clock
and bracket timer already measured, and a harness-bias correction still
fresh. Anything else, bad arguments included, returns None and bench()
takes the checked path, which measures what is missing or says what is
wrong. The result is the one the checked path builds (tests/test_fastpath.py
holds them field for field).
"""

from __future__ import annotations

from . import _core, _norseq
from ._bracket import BRACKET_BLOCKS, BRACKET_CHAINS, fixed_cost_ticks
from ._clock import clock
from ._result import BenchResult
from ._selftest import failed_verdict, fresh_correction

__all__ = ["bench", "learn"]

#: Method names the checked path resolved -> their display names.
_names: dict[str, str] = {}


def learn(method: object, name: str) -> None:
    """Let the plain call of `method` take the fast path from now on, once
    the checked path has resolved it to `name` (a name's availability is
    fixed for the process; the method without rseq runs in a child, never
    here)."""
    if type(method) is str and name != _norseq.NAME:
        _names[method] = name


def bench(method: object, runs: object, serialize: object, unroll: object) -> BenchResult | None:
    """The result of ``bench(method, runs, serialize=serialize,
    unroll=unroll)`` on the TSC without pinning, or None (nothing measured)
    when the checked path has to serve it."""
    if type(method) is not str or type(serialize) is not str:
        return None
    name = _names.get(method)
    clk = clock()
    if name is None or clk.core_cycles_problem:  # the checked path says why core cycles are unknown
        return None
    correction = None
    if unroll == 1:  # the self-test's correction is for single copies
        correction = fresh_correction("inline", serialize)
        # not measured yet, too old, or no such mode; or a failed self-test
        # that the checked path names
        if correction is None or failed_verdict("inline", serialize):
            return None
    return _core.bench_result(BenchResult, clk, name, runs, serialize, unroll,
                              BRACKET_BLOCKS, BRACKET_CHAINS, fixed_cost_ticks(), correction)
