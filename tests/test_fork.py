"""os.fork() after import: the child measures and reads the CPU correctly."""

import ctypes
import dataclasses
import json
import os
import threading

import pytest

import fastcpu
from fastcpu import _core
from pinning import run_python


def test_child_of_fork_benches_and_reads_right():
    fastcpu.clock()
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        status = 0
        try:
            r = fastcpu.bench("gdt", 200)
            if r.raw.shape != (200,):
                status = 2
            for cpu in sorted(os.sched_getaffinity(0)):
                os.sched_setaffinity(0, {cpu})
                if _core.current_cpu() != cpu or libc.sched_getcpu() != cpu:
                    status = 3
        except BaseException:
            status = 4
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    assert os.WEXITSTATUS(status) == 0


# The child pins itself to each CPU and reads it every way that reports it
# here; the parent compares. getcpu() may have chosen its way before the fork
# (the child inherits the choice) or not (the child makes it).
CHILD_READS = r"""
import json, os
import fastcpu
if %(chosen_before)r:
    fastcpu.getcpu()
ways = [m.name for m in fastcpu.methods() if m.reports_cpu and m.name in ("rdpid", "rseq", "tscp", "gdt", "vdso")]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    seen = []
    try:
        for cpu in sorted(os.sched_getaffinity(0)):
            os.sched_setaffinity(0, {cpu})
            got = {"getcpu": fastcpu.getcpu(), "getcpu_node": fastcpu.getcpu_node()[0],
                   "syscall": fastcpu.read("syscall").cpu}
            got.update((n, fastcpu.read(n).cpu) for n in ways)
            seen.append([cpu, got])
        out = {"seen": seen, "method": fastcpu.getcpu_method()}
    except BaseException as exc:
        out = {"error": repr(exc)}
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
_, status = os.waitpid(pid, 0)
print(json.dumps({"child": json.loads(data), "status": status, "ways": ways,
                  "parent_method": fastcpu.getcpu_method()}))
"""


@pytest.mark.parametrize("chosen_before", [True, False], ids=["chosen-in-parent", "chosen-in-child"])
def test_forked_child_reads_the_right_cpu_every_way(chosen_before):
    p = run_python(CHILD_READS % {"chosen_before": chosen_before})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["status"] == 0
    child = out["child"]
    assert "error" not in child, child
    assert child["method"] == out["parent_method"]
    if "rdpid" in {m.name for m in fastcpu.methods() if m.reports_cpu}:
        assert "rdpid" in out["ways"]
    assert [cpu for cpu, _ in child["seen"]] == sorted(os.sched_getaffinity(0))
    for cpu, got in child["seen"]:
        assert set(got) == {"getcpu", "getcpu_node", "syscall", *out["ways"]}
        assert all(v == cpu for v in got.values()), (cpu, got)


# -- fork while another thread is inside a first use (issue 10, item 4) --------------

# How each parent script below ends: wait up to 60 s for its forked child and
# say how it ended ("child 0"), or kill it and say it deadlocked.
WAIT_FOR_CHILD = r"""
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("child", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    print("child deadlocked")
"""

FORK_DURING_FIRST_CLOCK = r"""
import os, sys, threading, time
import fastcpu
from fastcpu.instrument import timebase as _clock
inside, release = threading.Event(), threading.Event()
real = _clock._count_tsc_hz
def slow():  # holds clock()'s lock until the fork is done
    inside.set()
    release.wait(30)
    return real()
_clock._count_tsc_hz = slow
t = threading.Thread(target=fastcpu.clock)
t.start()
inside.wait(30)
pid = os.fork()
if pid == 0:
    _clock._count_tsc_hz = real
    c = fastcpu.clock()          # deadlocked here before: the lock was inherited held
    r = fastcpu.bench("gdt", 20)
    os._exit(0 if c.tsc_hz > 0 and r.raw.shape == (20,) else 3)
release.set()
t.join()
""" + WAIT_FOR_CHILD


def test_fork_while_another_thread_is_inside_the_first_clock():
    p = run_python(FORK_DURING_FIRST_CLOCK)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "child 0"


# The C core's first uses (feature detection, fork probes, getcpu()'s choice)
# run for milliseconds with the GIL released: fork from the main thread at
# once, in several fresh processes, and the child must finish its own.
FORK_DURING_FIRST_C_USE = r"""
import os, sys, threading, time
import fastcpu
from fastcpu import _core
delay = float(sys.argv[1])
t = threading.Thread(target=lambda: (_core.getcpu(), _core.catalog(), _core.getcpu_node()))
t.start()
time.sleep(delay)
pid = os.fork()
if pid == 0:
    ok = _core.getcpu() >= 0 and len(_core.catalog()) > 10 and _core.getcpu_node()[0] >= 0
    fastcpu.bench("gdt", 10)
    os._exit(0 if ok else 3)
t.join()
""" + WAIT_FOR_CHILD


@pytest.mark.parametrize("delay_s", [0.0, 0.0005, 0.001, 0.002, 0.004])
def test_fork_while_another_thread_is_inside_a_first_c_use(delay_s):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", FORK_DURING_FIRST_C_USE,
                        str(delay_s)], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "child 0"


# Every lock of the package, held by another thread across a fork: the
# child must get a fresh one and finish the first use itself (issue 22).
FORK_WHILE_A_THREAD_HOLDS = r"""
import os, sys, threading, time, importlib
import fastcpu
module = importlib.import_module("fastcpu." + sys.argv[1])
held, release = threading.Event(), threading.Event()
def hold():
    with getattr(module, sys.argv[2]):
        held.set()
        release.wait()
t = threading.Thread(target=hold)
t.start()
held.wait()
pid = os.fork()
if pid == 0:
    # the first uses each lock guards: the clock, the ruler timers' cost,
    # the harness-bias measurement (bench's correction)
    fastcpu.clock(refresh=True)
    from fastcpu.instrument import timebase as _conversion
    from fastcpu.instrument import harness as _harness
    _conversion._fixed.clear()
    _conversion.fixed_cost_core_cycles("add", 2)
    _harness._kept_biases.clear()
    r = fastcpu.bench("gdt", 20)
    os._exit(0 if r.runs == 20 else 3)
release.set()
t.join()
""" + WAIT_FOR_CHILD


@pytest.mark.parametrize("module, lock", [("instrument.timebase", "_lock"),
                                          ("instrument.timebase", "_conversion_lock"),
                                          ("instrument.bias", "_lock")])
def test_a_lock_held_by_another_thread_across_a_fork_is_fresh_in_the_child(module, lock):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", FORK_WHILE_A_THREAD_HOLDS, module, lock], capture_output=True,
                       text=True, timeout=120, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "child 0", (p.stdout, p.stderr[-2000:])


def test_a_lock_the_forking_thread_holds_stays_its_own_in_the_child():
    from fastcpu._base import ForkSafeLock

    lock = ForkSafeLock()
    with lock:
        pid = os.fork()
        if pid == 0:  # the child goes on inside the with block and releases it
            os._exit(0 if lock.locked() else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_every_lock_of_the_package_is_fork_safe():
    # a plain threading lock at module level would deadlock a fork's child
    import importlib
    import pkgutil
    import threading

    from fastcpu._base import ForkSafeLock

    plain = (type(threading.Lock()), type(threading.RLock()))
    found, safe = [], []
    for info in pkgutil.walk_packages(fastcpu.__path__, "fastcpu."):
        if info.name == "fastcpu.__main__":  # the CLI, run on import
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, plain):
                found.append(f"{info.name}.{name}")
            elif isinstance(value, ForkSafeLock):
                safe.append(f"{info.name}.{name}")
    assert found == []
    assert {"fastcpu.instrument.timebase._lock", "fastcpu.instrument.timebase._conversion_lock",
            "fastcpu.instrument.bias._lock"} <= set(safe)


# -- fork while another thread computes a cached property (issue 28, item 8) -----
# Python 3.8-3.11's functools.cached_property holds one RLock per property for
# every instance of the class: a fork while another thread computed one left it
# held in the child, whose first lookup of that property on any result then waited
# forever. The package's cached properties take no lock; since 0.9 a result's one
# cached property is BenchResult.stability (it reads the machine it is looked at on).

FORK_DURING_A_CACHED_PROPERTY = r"""
import os, sys, threading, time
import numpy as np
import fastcpu
from fastcpu.results import bench_result as _bench_result
inside, release = threading.Event(), threading.Event()
real = _bench_result.stability
def slow(*args):  # inside the first stability report until the fork is done
    inside.set()
    release.wait(30)
    return real(*args)
_bench_result.stability = slow
clk = fastcpu.clock()
def result():
    return fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                           raw=np.arange(100, 200, dtype=np.uint64),
                                           empty=np.full(100, 50, np.uint64),
                                           migrated=np.zeros(100, bool), clock=clk)
first = result()
t = threading.Thread(target=lambda: first.stability)
t.start()
inside.wait(30)
pid = os.fork()
if pid == 0:
    _bench_result.stability = real
    other = result()
    ok = other.stability.warnings == real(other).warnings   # waited forever here before
    ok = ok and fastcpu.bench("gdt", 20).stability is not None
    os._exit(0 if ok else 3)
release.set()
t.join()
""" + WAIT_FOR_CHILD


def test_fork_while_another_thread_computes_a_cached_property():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", FORK_DURING_A_CACHED_PROPERTY], capture_output=True, text=True,
                       timeout=120, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "child 0", (p.stdout, p.stderr[-2000:])


def _package_objects():
    """(where, value) for every module-level value of the package, every
    attribute of each class it defines, and every cell of each function's
    closure (an lru_cache in pure Python keeps its RLock there)."""
    import importlib
    import inspect
    import pkgutil

    seen = set()
    for info in pkgutil.walk_packages(fastcpu.__path__, "fastcpu."):
        if info.name == "fastcpu.__main__":
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            yield f"{info.name}.{name}", value
            if inspect.isclass(value) and value.__module__.startswith("fastcpu") and id(value) not in seen:
                seen.add(id(value))
                home = value.__module__.rsplit(".", 1)[-1]
                for attr, member in vars(value).items():
                    yield f"{home}.{value.__qualname__}.{attr}", member
            for fn in (value, getattr(value, "__wrapped__", None)):
                for i, cell in enumerate(getattr(fn, "__closure__", None) or ()):
                    try:
                        yield f"{info.name}.{name} closure[{i}]", cell.cell_contents
                    except ValueError:  # an empty cell
                        pass


def test_no_cached_property_or_stdlib_lock_of_the_package_can_be_held_across_a_fork():
    import functools
    import threading

    from fastcpu._base import cached_property

    plain = (type(threading.Lock()), type(threading.RLock()), threading.Condition, threading.Semaphore)
    locked, lock_free = [], []
    for where, value in _package_objects():
        if isinstance(value, (functools.cached_property, *plain)):
            locked.append(where)
        elif isinstance(value, cached_property):
            lock_free.append(where)
    assert locked == []
    assert {"bench_result.BenchResult.stability", "values.Clock.core_cycles_problem"} <= set(lock_free)
    # a result's figures of its own fields are made at birth (issue 37 item 2): only the stability
    # report, which reads the machine the result is looked at on, is worked out when read
    assert [w for w in lock_free if w.startswith(("bench_result.", "diff_result.", "estimated."))] == [
        "bench_result.BenchResult.stability"]


def test_the_lock_free_cached_property_computes_once_per_instance_and_stores_it():
    from fastcpu._base import cached_property

    calls = []

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int

        @cached_property
        def double(self) -> int:
            """Twice x."""
            calls.append(self.x)
            return 2 * self.x

    a, b = Point(1), Point(2)
    assert (a.double, a.double, b.double) == (2, 2, 4) and calls == [1, 2]
    assert vars(a)["double"] == 2 and Point.double.__doc__ == "Twice x."
    assert isinstance(Point.double, cached_property) and Point.double.attrname == "double"
    assert not any(isinstance(v, (type(threading.Lock()), type(threading.RLock()))) for v in vars(Point.double).values())
