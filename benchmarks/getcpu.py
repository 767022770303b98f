"""How fast can Python learn its CPU? fastcpu.getcpu() against the usual ways.

    python benchmarks/getcpu.py [--repeat 15] [--number 200000] [--cpu N] [--json]

Each way is called `number` times in a timeit loop, `repeat` times, the ways
taking turns round-robin so that a change of core clock or load hits all of
them alike; the figures are nanoseconds per call, loop included: the minimum
over repeats (the least disturbed) and the median. Every callable is bound to a local
first, so no way pays an attribute lookup the others do not. The ways:

  sys.is_finalizing()         the floor: a C function without arguments that
                              does nothing (METH_NOARGS, returns a constant)
  fastcpu.getcpu()            the fastest way proven right here (see
                              fastcpu.getcpu_method())
  fastcpu.getcpu_node()       the same, (cpu, node)
  ctypes sched_getcpu()       ctypes.CDLL(None).sched_getcpu(), today's usual way
  /proc/self/stat             open, read, split, field 39 (what psutil does)
  psutil cpu_num()            psutil.Process().cpu_num(), when psutil is installed

Before timing, every way is checked to return the CPU the thread is pinned to.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import statistics
import sys
import timeit

import fastcpu


def proc_stat_cpu() -> int:
    with open("/proc/self/stat", "rb") as f:
        data = f.read()
    # the command name (field 2) may hold spaces and parentheses: split after it
    return int(data[data.rindex(b")") + 2 :].split()[36])


def ways() -> dict[str, object]:
    libc = ctypes.CDLL(None)
    out: dict[str, object] = {
        "sys.is_finalizing() (floor)": sys.is_finalizing,
        "fastcpu.getcpu()": fastcpu.getcpu,
        "fastcpu.getcpu_node()": fastcpu.getcpu_node,
        "ctypes sched_getcpu()": libc.sched_getcpu,
        "/proc/self/stat": proc_stat_cpu,
    }
    try:
        import psutil
    except ImportError:
        print("psutil is not installed: skipping psutil cpu_num()", file=sys.stderr)
    else:
        out["psutil cpu_num()"] = psutil.Process().cpu_num
    return out


def check(fns: dict[str, object], cpu: int) -> None:
    for name, fn in fns.items():
        if "floor" in name:
            continue
        got = fn()  # type: ignore[operator]
        got = got[0] if isinstance(got, tuple) else got
        if got != cpu:
            sys.exit(f"{name} returned CPU {got} on a thread pinned to CPU {cpu}")


def measure(fns: dict[str, object], numbers: dict[str, int], repeat: int) -> dict[str, tuple[float, float]]:
    """(min, median) ns per call of each way, the ways interleaved repeat by repeat."""
    timers = {name: timeit.Timer("f()", globals={"f": fn}) for name, fn in fns.items()}
    per_call: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, timer in timers.items():
            per_call[name].append(timer.timeit(numbers[name]) / numbers[name] * 1e9)
    return {name: (min(v), statistics.median(v)) for name, v in per_call.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--number", type=int, default=200_000, help="calls per repeat (slow ways get 1/100 of it)")
    p.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="CPU to pin to")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--record", metavar="DIR", help="also write the printed tables as a JSON record into DIR (benchmarks/records/; docs/reports.py renders them)")
    args = p.parse_args()
    if args.record:
        from record import start

        start(args.record, "getcpu")

    os.sched_setaffinity(0, {args.cpu})
    fns = ways()
    check(fns, args.cpu)
    slow = ("/proc/self/stat", "psutil cpu_num()")
    numbers = {name: max(args.number // 100, 100) if name in slow else args.number for name in fns}
    rows = measure(fns, numbers, args.repeat)
    base = rows["ctypes sched_getcpu()"][0]
    if args.json:
        print(json.dumps({
            "python": platform.python_version(), "cpu": args.cpu,
            "getcpu_method": fastcpu.getcpu_method(),
            "getcpu_node_method": fastcpu.getcpu_method(node=True),
            "ns_per_call": {k: {"min": v[0], "median": v[1]} for k, v in rows.items()},
        }, indent=2))
        return 0
    print(f"Python {platform.python_version()}, pinned to CPU {args.cpu}; fastcpu.getcpu() reads by "
          f"{fastcpu.getcpu_method()!r}, getcpu_node() by {fastcpu.getcpu_method(node=True)!r}")
    print(f"ns per call, loop included ({args.repeat} repeats)")
    print()
    print(f"| {'way':30} | {'min ns':>9} | {'median ns':>9} | {'vs ctypes':>9} |")
    print(f"|{'-' * 32}|{'-' * 11}|{'-' * 11}|{'-' * 11}|")
    for name, (lo, med) in rows.items():
        print(f"| {name:30} | {lo:9.1f} | {med:9.1f} | {base / lo:8.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
