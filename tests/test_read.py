"""fastcpu.read() and read_raw(): decoding, raw values, and what cannot be read."""

import ctypes
import dataclasses
import os
import re

import pytest

import fastcpu
from fastcpu import _core
from pinning import CPUS, on_cpu, syscall_getcpu

METHODS = fastcpu.methods()
SOURCES = [m for m in METHODS if m.reports_cpu]
NOT_SOURCES = [m for m in METHODS if m.available and not m.reports_cpu]
UNAVAILABLE = [m for m in METHODS if not m.available]
FEATURES = _core.features()


def by_name(name):
    return next(m for m in METHODS if m.name == name)


def decode(encoding, raw):
    """The slow, obvious decoding, the oracle for the C one."""
    if encoding == "cpunode":
        return raw & 0xFFF, raw >> 12
    if encoding == "sidt":
        v = (raw - 0x1000) & 0xFFFFFFFF
        return v >> 6, v & 0x3F
    return raw, None


def test_catalog_says_who_reports_the_cpu():
    for m in METHODS:
        assert m.reports_cpu == (m.cpu_reason is None)
        if not m.available:
            assert not m.reports_cpu
        if m.encoding in ("none", "limit", "selector"):
            assert not m.reports_cpu and m.cpu_reason
    # the references themselves always do
    assert by_name("syscall").reports_cpu
    assert by_name("sched_getcpu").reports_cpu


@pytest.mark.parametrize("info", SOURCES, ids=lambda m: m.name)
def test_read_decodes_the_raw_value_per_encoding(info):
    def both():
        return fastcpu.read(info.name), fastcpu.read_raw(info.name)

    r, raw = on_cpu(CPUS[0], both)
    assert isinstance(r, fastcpu.types.CpuReading)
    assert r.method == info.name
    assert r.raw == raw  # pinned: the same value twice
    cpu, node = decode(info.encoding, r.raw)
    assert r.cpu == cpu
    if info.name == "rseq":
        assert (r.node is None) == (not FEATURES["rseq_node_id"])
    else:
        assert r.node == node


def test_rseq_node_only_where_both_sizes_cover_it():
    covered = (
        FEATURES["rseq_registered"]
        and FEATURES["rseq_size"] >= 24
        and FEATURES["rseq_feature_size"] >= 24
    )
    assert FEATURES["rseq_node_id"] == covered
    if not by_name("rseq").reports_cpu:
        pytest.skip(f"rseq reports no CPU here: {by_name('rseq').cpu_reason}")
    r, (_, node) = on_cpu(CPUS[-1], lambda: (fastcpu.read("rseq"), syscall_getcpu()))
    assert r.node == (node if covered else None)


@pytest.mark.skipif(not NOT_SOURCES, reason="every available method reports the CPU here")
@pytest.mark.parametrize("info", NOT_SOURCES, ids=lambda m: m.name)
def test_a_method_that_reports_no_cpu_raises_unsupported_saying_why(info):
    with pytest.raises(fastcpu.Unsupported, match=re.escape(info.cpu_reason)):
        fastcpu.read(info.name)
    # the C layer refuses too
    with pytest.raises(fastcpu.Unsupported, match="does not report the CPU"):
        _core.read_cpu(info.name)
    # but its raw value can still be inspected
    assert isinstance(fastcpu.read_raw(info.name), int)


@pytest.mark.skipif(not UNAVAILABLE, reason="every method is available on this machine")
@pytest.mark.parametrize("info", UNAVAILABLE, ids=lambda m: m.name)
def test_an_unavailable_method_raises_unsupported(info):
    for fn in (fastcpu.read, fastcpu.read_raw):
        with pytest.raises(fastcpu.Unsupported, match=re.escape(info.reason)):
            fn(info.name)


def test_bad_names():
    with pytest.raises(ValueError, match="did you mean 'rdpid'"):
        fastcpu.read("rdpidd")
    with pytest.raises(ValueError, match="valid methods are"):
        fastcpu.read_raw("nope")
    for bad in (None, 3, b"gdt"):
        with pytest.raises(TypeError):
            fastcpu.read(bad)
        with pytest.raises(TypeError):
            fastcpu.read_raw(bad)


def test_reading_is_a_frozen_value():
    r = fastcpu.read("syscall")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.cpu = 7
    assert r == dataclasses.replace(r)


def test_raw_of_the_null_syscall_is_getppid():
    assert fastcpu.read_raw("null_syscall") == os.getppid()


def test_raw_of_rdfsbase_is_the_thread_pointer():
    if not by_name("rdfsbase").available:
        pytest.skip(by_name("rdfsbase").reason)
    libc = ctypes.CDLL(None, use_errno=True)
    fs = ctypes.c_ulong()
    ARCH_GET_FS, SYS_arch_prctl = 0x1003, 158
    assert libc.syscall(ctypes.c_long(SYS_arch_prctl), ctypes.c_long(ARCH_GET_FS), ctypes.byref(fs)) == 0
    assert fastcpu.read_raw("rdfsbase") == fs.value & 0xFFFFFFFF


# ---- why a reading failed: the catalog row's words (issue 27, item 3) --------

def test_a_failed_reading_is_named_from_its_catalog_row():
    import errno

    from fastcpu.instrument.cpu import failure_reason

    rows = {r["name"]: r for r in _core.catalog()}
    for m in METHODS:
        row = rows[m.name]
        assert (m.read_failure, m.read_errno) == (row["read_failure"], row["read_errno"])
        why = failure_reason(m.name, errno.EPERM)
        if row["read_failure"] is None:  # a reader that never fails
            assert why == f"its reader reported failure (raw value {errno.EPERM:#x})"
        elif row["read_errno"]:
            assert why == (f"{row['read_failure']} failed: errno {errno.EPERM} (EPERM, {os.strerror(errno.EPERM)})"
                           " (a seccomp filter may deny it)")
        else:
            assert why == row["read_failure"]
    # the readers that can fail say how: the calls by their errno, LSL and rseq by what they saw
    assert {m.name for m in METHODS if m.read_errno} == {"vdso", "syscall", "sched_getcpu", "sched_getcpu_norseq"}
    assert {m.name for m in METHODS if m.read_failure and not m.read_errno} == {"gdt", "rseq"}


def test_the_row_read_in_a_child_fails_in_its_own_words_not_lsls():
    from fastcpu.instrument.cpu import failure_reason

    why = failure_reason("sched_getcpu_norseq", 1)
    assert "LSL" not in why
    assert why == failure_reason("sched_getcpu", 1)  # it times and reads sched_getcpu's code
    assert why.startswith("glibc's sched_getcpu() failed: errno 1 (EPERM")


def test_a_failed_reading_in_the_child_raises_its_reason(monkeypatch):
    # the reading comes back from the child runner marked failed: read() and
    # read_raw() name glibc's sched_getcpu() and its errno
    from fastcpu.instrument import child as _child_runner

    if not by_name("sched_getcpu_norseq").available:
        pytest.skip(f"sched_getcpu_norseq cannot run here: {by_name('sched_getcpu_norseq').reason}")
    monkeypatch.setattr(_child_runner, "read_cpu", lambda row: (0, None, 1, False))
    for read in (fastcpu.read, fastcpu.read_raw):
        with pytest.raises(fastcpu.Unsupported, match=r"sched_getcpu_norseq: glibc's sched_getcpu\(\) failed: errno 1"):
            read("sched_getcpu_norseq")
