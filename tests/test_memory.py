"""RSS and object counts stay flat over 10**5 calls."""

import gc
import os

import fastcpu
from fastcpu import _core

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
        _core.bench("gdt", 2, "lfence", 1)

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
            _core.bench("gdt", 0, "lfence", 1)
        except ValueError:
            pass
        try:
            fastcpu.read("null_syscall")  # reports no CPU
        except fastcpu.Unsupported:
            pass

    objs, rss = _growth(failing, 20_000)
    assert objs < 100
    assert rss < RSS_SLACK
