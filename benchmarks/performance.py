"""fastcpu's own performance: overhead against plain C, scaling, calibration.

    python benchmarks/performance.py            # about a minute
    python benchmarks/performance.py --max-runs 1000000

Prints Markdown; docs/performance.md holds a recorded run.

1. ``bench(m, 1000)`` wall time against the same measurement loop in plain C
   (benchmarks/c_baseline.c, compiled here with the system cc), loaded in
   this process and called alternately with bench(), so that each ratio is
   taken at one level of a core clock that moves; the same C as a program in
   its own process beside it. Goal: within 1.15x. bench() returns a
   finished result (its estimate computed, nothing deferred), so its wall
   time is everything a user reads of bench(m, 1000).
2. ``bench()`` from 10^3 to 10^7 runs, each size in a fresh interpreter: wall
   time, peak memory traced by tracemalloc and the growth of the process's
   peak RSS, against the bytes of the three arrays a result holds (8 + 8 + 1
   per run). Goal: linear time, memory no more than the arrays. Computing the
   estimate and the stability report afterwards is measured separately: it
   makes transient int64/float64 copies.
3. What the first use costs: ``import fastcpu``, the clock calibration of
   the first ``clock()`` (or first ``bench()``), the catalog's probes, the
   start of sched_getcpu_norseq's child interpreter (and a reading once it
   runs), and a whole ``python -m fastcpu``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import fastcpu
from cbuild import compile_c
from host import host_line, load_line
from fastcpu import _core

GOAL_RATIO = 1.15


def build_c_baseline(directory: str) -> tuple[str, ctypes.CDLL]:
    """benchmarks/c_baseline.c as a program and as a library loaded here."""
    exe = compile_c("c_baseline.c", os.path.join(directory, "c_baseline"))
    lib = ctypes.CDLL(compile_c("c_baseline.c", os.path.join(directory, "c_baseline.so"), "-shared", "-fPIC"))
    lib.c_baseline_wall_ns.restype = ctypes.c_double
    lib.c_baseline_wall_ns.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    return exe, lib


def c_program(exe: str, method: str, runs: int, repeats: int) -> float:
    """Median wall ns per measurement of the plain C program in its own process."""
    out = subprocess.run([exe, method, str(runs), str(repeats)], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[3])


def interleaved(lib: ctypes.CDLL, method: str, runs: int, repeats: int) -> tuple[list[float], ...]:
    """`repeats` triples, each within about a millisecond: the C loop's wall
    ns per measurement (its second back to back, as a program's loop runs
    it), fastcpu.bench's, and the bare C core call's (no ruler points),
    in alternating order. On a core clock that hops every 20-200 ms most
    triples share one level, which rounds seconds apart do not."""
    name = method.encode()
    c, wrapper, core = [], [], []
    for i in range(repeats):
        if not i & 1:  # C first on even triples, after bench() on odd ones
            c.append(lib.c_baseline_wall_ns(name, runs, 2))
        t0 = time.perf_counter_ns()
        fastcpu.bench(method, runs)  # a finished result: nothing left to work out
        t1 = time.perf_counter_ns()
        if i & 1:
            c.append(lib.c_baseline_wall_ns(name, runs, 2))
        t3 = time.perf_counter_ns()
        _core.time_runs(method, runs=runs, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
        t4 = time.perf_counter_ns()
        wrapper.append(t1 - t0)
        core.append(t4 - t3)
    return c, wrapper, core


def quartiles(v: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(v, n=4)
    return q[0], statistics.median(v), q[2]


def overhead_rows(repeats: int) -> list[str]:
    """Per method: the interleaved triples' medians and the median of their
    ratios, with the plain C program's own median beside them."""
    rows = []
    with tempfile.TemporaryDirectory() as d:
        exe, lib = build_c_baseline(d)
        for method in ("gdt", "rdpid", "empty"):
            fastcpu.bench(method, 1000)  # first use out of the way
            program = c_program(exe, method, 1000, repeats)
            c, w, k = interleaved(lib, method, 1000, repeats)
            lo, mid, hi = quartiles([wi / ci for wi, ci in zip(w, c)])
            rows.append(
                f"| {method} | {statistics.median(c) / 1e3:.1f} us | {program / 1e3:.1f} us "
                f"| {statistics.median(w) / 1e3:.1f} us | {statistics.median(k) / 1e3:.1f} us "
                f"| {mid:.2f} ({lo:.2f}-{hi:.2f}) |"
            )
    return rows


# Runs in a fresh interpreter per size, so that each peak is its own.
SCALING_CHILD = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, sys.argv[3])
import fastcpu
method, runs = sys.argv[1], int(sys.argv[2])
fastcpu.bench(method, 100).estimate            # first use out of the way
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
t0 = time.perf_counter()
r = fastcpu.bench(method, runs)
t1 = time.perf_counter()
bench_peak = tracemalloc.get_traced_memory()[1]
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.reset_peak()
held = tracemalloc.get_traced_memory()[0]
t2 = time.perf_counter()
r.estimate, r.warnings
t3 = time.perf_counter()
post_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
arrays = r.raw.nbytes + r.empty.nbytes + r.migrated.nbytes
print(json.dumps({"runs": runs, "bench_s": t1 - t0, "bench_peak": bench_peak,
                  "rss_growth": (rss1 - rss0) * 1024, "arrays": arrays,
                  "post_s": t3 - t2, "post_peak": post_peak - held}))
"""

FIRST_USE_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import fastcpu
t1 = time.perf_counter()
fastcpu.clock()
t2 = time.perf_counter()
fastcpu.methods()
t3 = time.perf_counter()
fastcpu.bench("gdt", 1000)
t4 = time.perf_counter()
fastcpu.bench("gdt", 1000)
t5 = time.perf_counter()
child = {}
if any(m.name == "sched_getcpu_norseq" and m.available for m in fastcpu.methods()):  # its child: started, then kept
    fastcpu.read("sched_getcpu_norseq")
    t6 = time.perf_counter()
    fastcpu.read("sched_getcpu_norseq")
    child = {"first_child_read": t6 - t5, "second_child_read": time.perf_counter() - t6}
print(json.dumps({"import": t1 - t0, "clock": t2 - t1, "methods": t3 - t2,
                  "first_bench": t4 - t3, "second_bench": t5 - t4, **child}))
"""


def whole_run_s() -> float:
    """Wall seconds of one ``python -m fastcpu`` (the default table: every
    method, 1000 runs each, one copy and back to back, the self-test and the
    agreement sweep), output discarded."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fastcpu"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=500, help="interleaved measurements per method (default 500)")
    p.add_argument("--max-runs", type=int, default=10**7, help="largest run count of the scaling table")
    p.add_argument("--first-use", type=int, default=5, help="fresh interpreters for the first-use costs")
    p.add_argument("--record", metavar="DIR", help="also write the printed tables as a JSON record into DIR (benchmarks/records/; docs/reports.py renders them)")
    args = p.parse_args()
    if args.record:
        from record import start

        start(args.record, "performance")

    clk = fastcpu.clock()
    print("## fastcpu's own performance")
    print()
    print(
        f"Host: {host_line()}. fastcpu {fastcpu.__version__}, Python {sys.version.split()[0]}, "
        f"numpy {__import__('numpy').__version__}, TSC {clk.tsc_hz / 1e6:.0f} MHz, "
        f"load average {load_line()} at the start."
    )
    print()
    print(f"### bench(m, 1000) against the same loop in plain C ({args.repeats} interleaved triples)")
    print()
    print(
        "| method | plain C, in this process | plain C program, own process | fastcpu.bench "
        f"| _core.time_runs alone (no ruler points) | everything a user reads of bench(m, 1000) / C: "
        f"median of the triples' ratios (quartiles); goal <= {GOAL_RATIO} |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(overhead_rows(args.repeats)))
    print()
    print("(each figure: the median wall time of one whole measurement: arrays, 64 warm-up runs, "
          "1000 runs, min and median)")
    print()
    print("### bench('rdpid', N): time and memory (a fresh interpreter per N)")
    print()
    print(
        "| runs | bench() | per run | tracemalloc peak | peak RSS growth | arrays (17 B/run) "
        "| then estimate + warnings: time, transient peak beyond the result |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    n = 1000
    while n <= args.max_runs:
        row = child(SCALING_CHILD, "rdpid", str(n), ROOT)
        print(
            f"| {n:,} | {row['bench_s'] * 1e3:.1f} ms | {row['bench_s'] / n * 1e9:.0f} ns "
            f"| {mb(row['bench_peak'])} MB | {mb(row['rss_growth'])} MB | {mb(row['arrays'])} MB "
            f"| {row['post_s'] * 1e3:.1f} ms, {mb(row['post_peak'])} MB |"
        )
        n *= 10
    print()
    print(f"### First use ({args.first_use} fresh interpreters, median)")
    print()
    rows = [child(FIRST_USE_CHILD, ROOT) for _ in range(args.first_use)]
    labels = {
        "import": "import fastcpu",
        "clock": "first fastcpu.clock(): TSC Hz (50 ms sleep), step, core cycles per tick",
        "methods": "first fastcpu.methods(): CPUID, vDSO, rseq, fork probes",
        "first_bench": "first bench('gdt', 1000) after those",
        "second_bench": "second bench('gdt', 1000)",
        "first_child_read": "first read('sched_getcpu_norseq'): starts its child interpreter",
        "second_child_read": "second read('sched_getcpu_norseq'): the same child",
    }
    print("| step | median | min | max |")
    print("| --- | ---: | ---: | ---: |")
    for key, label in labels.items():
        v = [r[key] * 1e3 for r in rows if key in r]
        if v:
            print(f"| {label} | {statistics.median(v):.1f} ms | {min(v):.1f} ms | {max(v):.1f} ms |")
    v = [whole_run_s() * 1e3 for _ in range(args.first_use)]
    print(f"| python -m fastcpu, the whole default run | {statistics.median(v):.1f} ms | {min(v):.1f} ms "
          f"| {max(v):.1f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
