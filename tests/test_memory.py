"""RSS and object counts stay flat over 10**5 calls, and a measurement's
peak stays within its arrays plus a bounded scratch."""

import gc
import os
import subprocess
import sys

import pytest

import fastcpu
from fastcpu import _core
from fastcpu.results import statistics as _blocks

# AddressSanitizer holds freed memory in quarantine, so RSS grows under it by
# design; the CI sanitizer pass sets this and checks object counts only.
SANITIZED = bool(os.environ.get("FASTCPU_SANITIZED"))
RSS_SLACK = float("inf") if SANITIZED else 4 << 20


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _growth(call, n):
    for _ in range(n // 10):  # warm caches and allocator pools first
        call()
    gc.collect()
    objects, rss = len(gc.get_objects()), _rss_bytes()
    for _ in range(n):
        call()
    gc.collect()
    return len(gc.get_objects()) - objects, _rss_bytes() - rss


def test_bench_does_not_leak():
    objs, rss = _growth(lambda: fastcpu.bench("empty", 4), 100_000)
    assert objs < 100
    assert rss < RSS_SLACK


def test_core_calls_do_not_leak():
    def calls():
        _core.read("gdt")
        _core.current_cpu()
        _core.time_runs("gdt", runs=2, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)

    objs, rss = _growth(calls, 100_000)
    assert objs < 100
    assert rss < RSS_SLACK


# The first CPU source of the catalog (LSL on most machines): read() decodes it.
SOURCE = next(m.name for m in fastcpu.methods() if m.reports_cpu)


def test_read_does_not_leak():
    def reads():
        fastcpu.read(SOURCE)
        fastcpu.read_raw(SOURCE)

    objs, rss = _growth(reads, 100_000)
    assert objs < 100
    assert rss < RSS_SLACK


def test_getcpu_does_not_leak():
    def calls():
        fastcpu.getcpu()
        fastcpu.getcpu_node()

    objs, rss = _growth(calls, 100_000)
    assert objs < 100
    assert rss < RSS_SLACK


def test_errors_do_not_leak():
    def failing():
        try:
            fastcpu.bench("nope", 4)
        except ValueError:
            pass
        try:
            _core.time_runs("gdt", runs=0, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
        except ValueError:
            pass
        try:
            fastcpu.read("null_syscall")  # reports no CPU
        except fastcpu.Unsupported:
            pass

    objs, rss = _growth(failing, 20_000)
    assert objs < 100
    assert rss < RSS_SLACK


# ---- the peak of one large measurement ----

#: Runs for the peak checks: enough that one more full-size int64 array (32 MB)
#: stands out against the bounded scratch, few enough to run in seconds.
PEAK_RUNS = 4_000_000
#: What the estimates may hold beyond the arrays: a handful of int64 blocks
#: (2 MB each) alive at once, with room for the allocator and a noisy VM.
#: Two full-size copies of the differences, as before, would be 64 MB.
SCRATCH = 16 * _blocks.BLOCK * 8
needs_plain_rss = pytest.mark.skipif(SANITIZED, reason="AddressSanitizer quarantines freed memory")


def _peak_of(code, *args):
    """The child's peak RSS in bytes, and what it printed."""
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


# The arrays are filled a block at a time (no temporaries of their size),
# then every figure the table, the warnings and the reprs show is computed.
SYNTHETIC = """
import resource, sys
import numpy as np
import fastcpu
from fastcpu.results.display import format_table, format_warnings
n = int(sys.argv[1])
rng = np.random.default_rng(1)
raw, empty, migrated = np.empty(n, np.uint64), np.empty(n, np.uint64), np.zeros(n, bool)
for s in range(0, n, 1 << 16):
    e = slice(s, min(s + (1 << 16), n))
    m = e.stop - e.start
    empty[e] = rng.integers(0, 3, m) * 26 + 1000
    raw[e] = empty[e] + rng.integers(0, 4, m) * 26 + (rng.random(m) < 0.01) * 10**6
    migrated[e] = rng.random(m) < 0.02  # some migrated pairs: the estimate leaves them out
clk = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=26, cycles_per_tick=1.3)
r = fastcpu.BenchResult.from_arrays(method="m", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                    empty=empty, migrated=migrated, clock=clk)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = format_table([r]) + format_warnings([r]) + repr(r) + str(r) + r._repr_html_()
assert r.estimator == "paired_mean" and 0 < r.runs_used < n
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


@needs_plain_rss
def test_the_estimates_and_warnings_of_a_large_result_take_bounded_scratch():
    grew = int(_peak_of(SYNTHETIC, PEAK_RUNS))
    assert grew < SCRATCH, f"peak grew {grew / 2**20:.0f} MiB beyond the arrays (bound {SCRATCH / 2**20:.0f} MiB)"


# The CLI in a child of a child: RUSAGE_CHILDREN's ru_maxrss is that one process's peak.
CLI_PEAK = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "fastcpu", "--methods", sys.argv[1], "--runs", sys.argv[2]],
               check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


@needs_plain_rss
def test_the_cli_peak_is_the_arrays_plus_bounded_scratch():
    """python -m fastcpu --runs N: its peak less that of --runs 1 is the
    arrays of both questions (one call alone: raw and empty uint64, migrated
    bool, 17 bytes a run; calls back to back: long and short, migrated, 17
    more) and a bounded scratch, not one more copy of them per statistic."""
    small = int(_peak_of(CLI_PEAK, SOURCE, 1))
    large = int(_peak_of(CLI_PEAK, SOURCE, PEAK_RUNS))
    arrays = PEAK_RUNS * 17 * 2
    extra = large - small - arrays
    assert extra < SCRATCH, (f"peak {large / 2**20:.0f} MiB = {small / 2**20:.0f} MiB at 1 run + arrays "
                             f"{arrays / 2**20:.0f} MiB + {extra / 2**20:.0f} MiB (bound {SCRATCH / 2**20:.0f} MiB)")
