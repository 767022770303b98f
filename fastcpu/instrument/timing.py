"""The copy loop's own cost per copy: what a figure timed in copies cannot
tell from the body, and the smallest cost per call it resolves.

:func:`fastcpu.bench_diff` and ``bench(m, unroll=k)`` time copies of a body
in a loop (csrc/timing.h: an add and a fused compare-and-branch per copy;
through the user path also the call and the return). The loop runs at its
own pace, and a body cheaper than that pace hides in it:

- bench_diff() then reads the loop, not the body. On the AuthenticAMD family
  25 model 17 (Zen 4) guest the empty sequence read 1.0 core cycles per copy
  at 16 copies, and rseq 1.03 core cycles.
- bench(unroll=64) reads about 0: the empty sequence pays the same loop.
  rseq read 0.1 core cycles per copy there, where back to back it read 1.0
  core cycles per call.

A body dearer than the loop overlaps anything from none to all of it, by
code alignment and loop shape: back to back it reads the body plus 0 to L (L
the loop's cost, core cycles per copy), unrolled the body less 0 to L.

So the loop's own cost is measured on the host at hand. It is the empty
sequence (or, through the user path, a user function of no cost) timed by
bench_diff() with the same copies, mode, counter and CPU. It is kept
``CORRECTION_MAX_AGE_S``, like the harness bias, and in core cycles:
the loop is work, not time. A back-to-back figure loses L/2
(``DiffResult.harness_bias_core_cycles``) and an unrolled one gains it
(``results.correction.applied``), the other half in the interval; one
whose interval reaches down to L (from 0 when unrolled) is shown as a bound
("< X core cycles"), never as the loop's cost.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

from .. import _core
from .harness import Method
from ..results.correction import CORRECTION_MAX_AGE_S
from .._base import ForkSafeLock
from .harness import timed_diff
from .._args import check_timeout, COUNTERS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX, check_counter, check_int, check_serialize
from ..results.bench_result import BenchResult, DiffResult
from .bias import timed_corrected
from .harness import timed, timed_diff

__all__ = ['LoopFloor', 'FLOOR_RUNS', 'FLOOR_MEASUREMENTS', 'loop_floor', 'path_of', 'floor_k', 'bench', 'bench_diff', 'RUNS_MAX', 'UNROLL_MAX', 'SERIALIZE_MODES', 'COUNTERS', 'Method']


#: Pairs of runs per measurement of the loop's cost (about a millisecond
#: inline at 16 and 32 copies), after as many to warm up; the loop's cost
#: is the median of FLOOR_MEASUREMENTS such measurements.
FLOOR_RUNS = 1000
FLOOR_MEASUREMENTS = 3


class LoopFloor(NamedTuple):
    """The copy loop's own cost per copy, as bench_diff() of a body of no
    cost measured it."""

    #: core cycles per copy (at least 0), and its 95% half-width
    core_cycles: float
    ci95_core_cycles: float
    #: ``time.monotonic()`` when it was measured, seconds
    measured_at: float

    @property
    def top_core_cycles(self) -> float:
        """The top of its 95% interval, core cycles per copy: below this a
        body cannot be told from the loop."""
        return self.core_cycles + self.ci95_core_cycles


_lock = ForkSafeLock()
#: (path, mode, counter, copies on the short side, CPU) -> the loop's cost.
_floors: dict[tuple[str, str, str, int, int | None], LoopFloor] = {}


def path_of(method: Method) -> str:
    """``'inline'`` for a method named by its catalog name, ``'user'`` for a
    user function (its address, or a ctypes function)."""
    return "inline" if isinstance(method, str) else "user"


def floor_k(unroll: int) -> int:
    """The short side's copies whose difference with twice as many gives
    the loop's cost per copy around `unroll` copies a run (unroll >= 2)."""
    return max(2, unroll // 2)


def loop_floor(path: str, serialize: str, counter: str, k: int, cpu: int | None) -> LoopFloor | None:
    """The copy loop's cost per copy for `path` (``'inline'`` or
    ``'user'``) at `k` and `2k` copies a run in `serialize` mode on
    `counter`, pinned to `cpu`: the last measurement of this process while
    it is at most ``CORRECTION_MAX_AGE_S`` old, or measured now. None where
    its core cycles are unknown (the rulers disagreed during it): the
    figures then stay as they were read."""
    key = (path, serialize, counter, k, cpu)
    known = _fresh(key)
    if known is not None:
        return known
    with _lock:
        known = _fresh(key)
        if known is None:
            target: Method = "empty" if path == "inline" else _core.user_empty()
            # the first measurements of a process read the loop low (0.42-0.88 core cycles per
            # copy, then 0.93-0.96, against 0.96-1.04 later; AuthenticAMD family 25 model 17):
            # warmed up, left out
            timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
            # the median of three, so that one disturbed measurement (1.54 core cycles per
            # copy once, among 0.99-1.01, AuthenticAMD family 25 model 17) does not set it
            taken = [timed_diff(target, FLOOR_RUNS, serialize=serialize, k=k, cpu=cpu, counter=counter)
                     for _ in range(FLOOR_MEASUREMENTS)]
            figures = sorted((d.estimate_core_cycles, d.estimate_ci95_core_cycles) for d in taken
                             if math.isfinite(d.estimate_core_cycles) and math.isfinite(d.estimate_ci95_core_cycles))
            if not figures:
                return None
            cc, ci = figures[len(figures) // 2]
            known = _floors[key] = LoopFloor(max(cc, 0.0), ci, time.monotonic())
    return known


def _fresh(key: tuple[str, str, str, int, int | None]) -> LoopFloor | None:
    known = _floors.get(key)
    return known if known is not None and time.monotonic() - known.measured_at <= CORRECTION_MAX_AGE_S else None


def bench(
    method: Method,
    runs: int = 1000,
    *,
    serialize: str = "lfence",
    unroll: int = 1,
    cpu: int | None = None,
    counter: str = "tsc",
    timeout: float | None = None,
) -> BenchResult:
    """Time `runs` single executions of `method`, each against the empty sequence.

    Args:
        method: a name from :func:`fastcpu.methods` (``'sidt'``, ``'rdpid'``,
            ...) or :func:`fastcpu.chain_methods` (``'add_chain_100'``),
            or a user C function given as a ctypes function pointer or an
            integer address (see "User functions" below).
        runs: timed runs, 1 to ``RUNS_MAX``. Each run times the method once
            and the empty sequence once, interleaved.
        serialize: ``'lfence'`` (start ``lfence; rdtsc; lfence``, end
            ``lfence; rdtscp; lfence``), ``'cpuid'`` (Intel's white paper: start
            ``cpuid; rdtsc``, end ``rdtscp; cpuid``) or ``'rdtscp'``
            (``rdtscp; lfence`` at both ends).
        unroll: back-to-back copies per run, 1 to ``UNROLL_MAX``; ``best`` and
            ``median`` are then per copy (a throughput figure). The copies run
            in a loop that the empty sequence pays too, and a body overlaps
            anything from none to all of the loop's own pace: the estimate
            reads the body less 0 to L, L the loop's cost in core cycles per copy, measured
            on first use (``_copy_loop``, a few ms, kept 30 s). So the
            estimate adds back L/2 with L/2 in its interval
            (:attr:`BenchResult.harness_bias_core_cycles` -L/2), and L is the
            smallest cost resolved
            (:attr:`BenchResult.harness_resolution_core_cycles`): a figure
            within it is shown as a bound.
        cpu: pin this thread to that CPU for the call, restoring its affinity
            afterwards, even on error.
        counter: ``'tsc'`` (the default) or ``'pmu'``: read the PMU's core-cycle
            counter with ``rdpmc`` instead of the TSC, with the same fencing
            (``'lfence'``: ``lfence; rdpmc; lfence`` at both ends; ``'cpuid'``:
            start ``cpuid; rdpmc``, end ``lfence; rdpmc; cpuid``). Needs
            perf_event_open with user-space rdpmc; every figure of the result
            is then in core cycles (see :attr:`BenchResult.counter`).
        timeout: for a user function, the most seconds the measurement may
            take (None, the default: no limit; at most ``fastcpu.limits.TIMEOUT_MAX_S``):
            past it, TimeoutError. Runs stop between chunks of about 13 ms;
            a call that has not come back 0.5 s after the deadline is
            abandoned (see "User functions").

    User functions:
        The signature is ``unsigned fn(void)`` (C), i.e.
        ``ctypes.CFUNCTYPE(ctypes.c_uint)``; the value returned is used by
        one multiply, as every timed result is, and otherwise ignored, so
        any function taking no arguments and returning an integer, pointer
        or nothing (``void``) will do, e.g. libc's ``getpid``. It is timed
        through an indirect call (``unroll`` calls per run) against an
        empty function called the same way, from a call site of its own;
        one copy through a trampoline that opens the timed region and jumps
        to the function, so that the call's push happens before it. A body
        of more than about 4 core cycles hides the return that the empty
        function pays, so the raw difference reads that much short; with
        one copy the estimate is corrected by the user path's bias from
        :func:`fastcpu.selftest` (out-of-line chain functions). A shorter
        body reads as the return's own cost (about 4 core cycles on an
        AuthenticAMD family 25 model 1 (Zen 3) guest, 9-10 before the
        trampoline); :func:`bench_diff` cancels the call's latency, though
        not the pace of calls back to back (3-6 core cycles there for a
        1-4-add function). The function
        is called from the calling thread with the GIL released, many times (64
        warm-up runs, then `runs`): it must be safe to call repeatedly, must
        not unwind (no C++ exceptions, no longjmp out) and should not block.
        A ctypes callback wrapping a Python function works (it takes the
        GIL itself) but times the interpreter, and ctypes reports and
        ignores any exception raised in it, KeyboardInterrupt included: such
        a measurement cannot be stopped with Ctrl-C. ctypes prototypes declaring
        arguments, or returning a structure, are refused with TypeError, and
        any address (ctypes or integer) outside the process's executable
        mappings (``/proc/self/maps``) with ValueError. An address inside one
        that is not the start of a function ``unsigned fn(void)``, or a
        library unloaded by another thread during the call, still crashes
        the process: fastcpu cannot check more.

        The calling convention is checked around every call, outside the
        timed region (the empty function goes through the same check): a
        function that changes a callee-saved register (``%rbx``, ``%rbp``,
        ``%r12``-``%r15``), ``%rsp``, the direction flag, MXCSR's control
        bits (rounding, flush-to-zero, exception masks) or the x87 control
        word has them restored after the call, and the measurement raises
        :class:`fastcpu.Error` naming each. A fault inside the function
        (SIGSEGV, SIGBUS, SIGILL, SIGFPE), a return to a bad address (an
        unbalanced push or pop) among them, raises :class:`fastcpu.Error`
        instead of killing the process. A function that calls ``fork()``
        raises it too; its copies are ended with ``_exit(0)`` before they
        return anywhere (a fork by a raw system call: when they come back
        from the function), and are left for the process to reap. Ctrl-C
        raises KeyboardInterrupt when the current chunk of runs ends, and
        abandons a call that has not come back 0.5 s later; `timeout` does
        the same, except inside a ctypes callback running Python, which is
        never abandoned (a bench() of a user function inside one is
        refused). A function abandoned there (or at a fault) is stopped
        where it was, with whatever it held (a lock inside malloc, a
        half-written structure): the process may deadlock or misbehave
        later. Nothing can mend a function that writes over memory it does
        not own (the harness's stack above its return address included),
        changes ``%fs``, calls ``vfork()`` and returns, or jumps to code
        that runs on: such a function can still crash the process, as an
        address that is not a function can. One user-function measurement
        runs at a time in a process (another thread's waits for it chunk by
        chunk), and during its chunks fastcpu's handlers stand in front of
        those of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGINT (Python's
        SIGINT handler is still called), and a real-time signal
        (``SIGRTMIN + 7``) stops the call.

    Harness bias:
        With one copy per run (``unroll=1``) on the TSC counter, the recommended
        estimate is corrected by the harness's own bias on this host, as
        :func:`fastcpu.selftest` measures it on the known-cost chains
        (inline chains for a method, out-of-line chain functions for a user
        function; measured on first use per mode and path, about 30 ms,
        and again when it is over 30 s old; kept in TSC ticks and converted
        at the core clock measured around the runs), and
        its interval includes the correction's uncertainty (see
        :attr:`BenchResult.harness_bias_core_cycles`). best and median are
        never corrected. Core cycles are converted inside the runs: ruler
        points (an add and an imul chain) between stretches of about 1 ms,
        each stretch at the clock measured around it
        (:attr:`BenchResult.clock_motion` reports the clock's hops).

    Returns:
        A :class:`BenchResult` with raw per-run TSC ticks, best and median,
        the recommended :attr:`~BenchResult.estimate` with its 95% interval,
        and a stability report (:attr:`~BenchResult.warnings`), all in TSC
        ticks with ns and core-cycle conversions: finished and immutable
        (``type(r) is BenchResult``, its arrays read-only), converted at the
        runs' own clock and corrected in one place
        (``instrument.harness.bench_result``).

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an argument is out of range or names no method, or a
            user function's address is not in an executable mapping.
        fastcpu.Unsupported: the method, or ``counter='pmu'``, cannot run on
            this machine (the message says why).
        fastcpu.Error: `cpu` was given but this thread may not be pinned to
            it (sched_setaffinity denied: a seccomp filter, a container);
            the message says why. Or a user function broke the calling
            convention, crashed or forked (the message says which).
        TimeoutError: a user function's measurement took longer than
            `timeout`.
    """
    timeout_s = check_timeout(timeout, method)
    runs = check_int("runs", runs, 1, RUNS_MAX)
    unroll = check_int("unroll", unroll, 1, UNROLL_MAX)
    serialize = check_serialize(serialize)
    counter = check_counter(counter, serialize)

    # the self-test measures single copies on the TSC: its correction is for
    # those, kept in ticks and converted at the clock around these runs
    if counter == "tsc" and unroll == 1:
        return timed_corrected(method, runs, serialize=serialize, cpu=cpu,
                               path="inline" if isinstance(method, str) else "user", timeout_s=timeout_s)
    loop = (0.0, 0.0)
    if unroll > 1:  # the body overlaps 0 to all of the loop's own pace, which the empty sequence pays
        floor = loop_floor(path_of(method), serialize, counter, floor_k(unroll), cpu)
        loop = (0.0, 0.0) if floor is None else (floor.core_cycles, floor.ci95_core_cycles)
    return timed(method, runs, serialize=serialize, unroll=unroll, cpu=cpu, counter=counter, timeout_s=timeout_s,
                 loop=loop)


def bench_diff(
    method: Method,
    runs: int = 1000,
    *,
    k: int = 16,
    serialize: str = "lfence",
    cpu: int | None = None,
    counter: str = "tsc",
    timeout: float | None = None,
) -> DiffResult:
    """The differencing estimate: runs of `2k` and of `k` copies of the same
    sequence, interleaved in pairs like :func:`bench`'s method and empty runs
    (in alternating order), and ``mean((long - short) / k)`` over the pairs
    (outliers fenced, migrated pairs left out) per copy.

    Whatever the harness adds or hides once per run (the fences, the part of
    a latency that overlaps them) cancels, and the per-copy step is k times
    finer than the clock's. Both sides run the copy loop (hence k >= 2: one
    copy is timed without a loop), so its set-up cancels too. For a
    throughput-bound sequence the copies overlap and the figure is a
    throughput; for a dependent chain (the known-cost chains continue from
    copy to copy) it is the latency. The copy loop has a pace of its own, L
    core cycles per copy, measured on first use (the empty sequence, or a
    user function of no cost, timed the same way: ``_copy_loop``, a few ms,
    kept 30 s). A body overlaps none to all of it and reads as the body plus
    0 to L: the estimate loses L/2, with the other half in its interval
    (:attr:`DiffResult.harness_bias_core_cycles`), and a body faster than the
    loop reads as the loop, so a figure whose interval reaches down to L is
    shown as a bound (:attr:`DiffResult.copy_loop_core_cycles`,
    :attr:`DiffResult.resolved`).
    On the AuthenticAMD family 25 model 17 (Zen 4) guest the loop cost 1.0
    core cycles per copy inline at 16 copies, 3.1 through the user path.

    Args:
        method, serialize, cpu, counter, timeout: as for :func:`bench`
            (user functions included, checked as there).
        runs: timed pairs of runs (one at 2k copies, one at k).
        k: copies per run of the short side, 2 to ``UNROLL_MAX // 2``.

    Returns:
        A :class:`DiffResult` with ``estimate`` and ``estimate_ci95`` in TSC
        ticks per copy (and conversions: core cycles at the core clock
        measured inside the runs, as for :func:`bench`), and
        both sides' raw runs.

    Raises:
        As :func:`bench`.
    """
    timeout_s = check_timeout(timeout, method)
    runs = check_int("runs", runs, 1, RUNS_MAX)
    k = check_int("k", k, 2, UNROLL_MAX // 2)
    serialize = check_serialize(serialize)
    counter = check_counter(counter, serialize)
    floor = loop_floor(path_of(method), serialize, counter, k, cpu)
    return timed_diff(method, runs, serialize=serialize, k=k, cpu=cpu, counter=counter, timeout_s=timeout_s,
                      loop=(0.0, 0.0) if floor is None else (floor.core_cycles, floor.ci95_core_cycles))
