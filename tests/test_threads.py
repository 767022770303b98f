"""Several Python threads calling bench() at once get correct, independent results."""

import os
import threading

import numpy as np

import fastcpu


def _check(result, method, runs, unroll):
    assert result.method == method
    assert result.raw.shape == result.empty.shape == (runs,)
    raw = result.raw.astype(float)
    empty = result.empty.astype(float)
    assert result.best == (raw.min() - empty.min()) / unroll
    assert result.median == (np.median(raw) - np.median(empty)) / unroll


def test_concurrent_benches_are_independent():
    plan = [("gdt", 3000, 1), ("syscall", 2000, 2), ("empty", 5000, 1), ("sched_getcpu", 4000, 4)] * 2
    results = [None] * len(plan)
    errors = []

    def work(i, method, runs, unroll):
        try:
            results[i] = fastcpu.bench(method, runs, unroll=unroll)
        except Exception as exc:  # reported below, with the thread's plan
            errors.append((method, exc))

    threads = [threading.Thread(target=work, args=(i, *p)) for i, p in enumerate(plan)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for result, (method, runs, unroll) in zip(results, plan):
        _check(result, method, runs, unroll)
    # a system call costs far more than the empty sequence: nothing got mixed up
    assert results[1].median > results[2].median + 100


def test_pinning_in_one_thread_leaves_the_others_alone():
    before = os.sched_getaffinity(0)
    seen = {}

    def pinned_worker():
        fastcpu.bench("gdt", 2000, cpu=min(before))
        seen["after"] = os.sched_getaffinity(0)

    t = threading.Thread(target=pinned_worker)
    t.start()
    during = os.sched_getaffinity(0)
    t.join()
    assert during == before
    assert seen["after"] == before
    assert os.sched_getaffinity(0) == before
