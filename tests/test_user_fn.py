"""User sequences: a C function `unsigned fn(void)` benched like a method,
against an empty function called the same way."""

import ctypes
import re
import shutil
import subprocess

import numpy as np
import pytest

import fastcpu
from hostnoise import on_some_try

SOURCE = r"""
unsigned fc_test_empty(void) { return 0; }

/* 1000 dependent adds: about 1000 core cycles on any x86-64 core */
unsigned fc_test_chain(void)
{
    unsigned long acc = 0;
    __asm__ volatile(".rept 1000\n\tadd $1, %0\n\t.endr" : "+r"(acc));
    return (unsigned)acc;
}

struct fc_pair { long a, b, c; };
struct fc_pair fc_test_struct(void) { struct fc_pair p = {1, 2, 3}; return p; }
int fc_test_arg(int x) { return x + 1; }
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the test library")
    d = tmp_path_factory.mktemp("userfn")
    (d / "userfn.c").write_text(SOURCE)
    so = d / "libuserfn.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(d / "userfn.c")], check=True)
    return ctypes.CDLL(str(so))


def test_libc_getpid_benches_as_a_user_function():
    libc = ctypes.CDLL(None)
    r = fastcpu.bench(libc.getpid, 300)
    assert r.method == "user:getpid"
    assert r.raw.shape == r.empty.shape == r.migrated.shape == (300,)
    assert r.raw.dtype == np.uint64
    # getpid enters the kernel; the empty function does not
    assert r.estimate > 0 and r.median > 0


def test_a_compiled_chain_costs_more_than_an_empty_function(lib):
    def check():
        chain = fastcpu.bench(lib.fc_test_chain, 500)
        empty = fastcpu.bench(lib.fc_test_empty, 500)
        assert chain.method == "user:fc_test_chain"
        # 1000 dependent adds against a function that returns at once
        assert chain.estimate > empty.estimate + 10 * chain.estimate_ci95
        assert abs(empty.estimate) < chain.estimate / 4

    on_some_try(check)


def test_an_integer_address_is_the_same_function(lib):
    address = ctypes.cast(lib.fc_test_chain, ctypes.c_void_p).value
    r = fastcpu.bench(address, 200)
    assert r.method == f"user:0x{address:x}"
    assert r.estimate > 0


def test_unroll_calls_the_function_that_many_times(lib):
    def check():
        one = fastcpu.bench(lib.fc_test_chain, 300)
        four = fastcpu.bench(lib.fc_test_chain, 300, unroll=4)
        assert np.median(four.raw) > 2.5 * np.median(one.raw)
        assert four.estimate == pytest.approx(one.estimate, rel=0.3)

    on_some_try(check)


@pytest.mark.parametrize("serialize", fastcpu.limits.SERIALIZE_MODES)
def test_every_serialize_mode_times_user_functions(lib, serialize):
    r = fastcpu.bench(lib.fc_test_empty, 50, serialize=serialize)
    assert r.serialize == serialize and r.raw.shape == (50,)


def test_a_python_callback_runs_without_crashing():
    calls = []
    cb = ctypes.CFUNCTYPE(ctypes.c_uint)(lambda: calls.append(1) or 7)
    r = fastcpu.bench(cb, 20)
    assert r.raw.shape == (20,)
    assert len(calls) >= 20  # it took the GIL itself, every time


def test_prototypes_that_cannot_be_unsigned_fn_void_are_refused(lib):
    f = lib.fc_test_arg
    f.argtypes = [ctypes.c_int]
    with pytest.raises(TypeError, match="must take no arguments"):
        fastcpu.bench(f, 10)

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_long), ("b", ctypes.c_long), ("c", ctypes.c_long)]

    g = lib.fc_test_struct
    g.restype = Pair
    with pytest.raises(TypeError, match="must return an integer"):
        fastcpu.bench(g, 10)


def test_null_and_bad_addresses_are_refused():
    with pytest.raises(ValueError, match="NULL"):
        fastcpu.bench(ctypes.CFUNCTYPE(ctypes.c_uint)(), 10)
    for address in (0, -1, 1 << 64):
        with pytest.raises(ValueError, match="address must be in"):
            fastcpu.bench(address, 10)
    with pytest.raises(ValueError, match="not in an executable mapping"):
        fastcpu.bench(ctypes.addressof(ctypes.create_string_buffer(8)), 10)


# -- addresses outside executable memory (issue 10, item 5) ------------------------
# In a subprocess: before the fix each of these killed the interpreter.

NOT_CODE = r"""
import ctypes, json
import fastcpu
from fastcpu import _core
buf = ctypes.create_string_buffer(64)
proto = ctypes.CFUNCTYPE(ctypes.c_uint)
data = ctypes.addressof(buf)
cases = {
    "bench(ctypes data)": lambda: fastcpu.bench(ctypes.cast(buf, proto), 10),
    "bench_diff(ctypes data)": lambda: fastcpu.bench_diff(ctypes.cast(buf, proto), 10),
    "bench(CFUNCTYPE(1))": lambda: fastcpu.bench(proto(1), 10),
    "bench_diff(CFUNCTYPE(1))": lambda: fastcpu.bench_diff(proto(1), 10),
    "bench(int data)": lambda: fastcpu.bench(data, 10),
    "bench_diff(int data)": lambda: fastcpu.bench_diff(data, 10),
    "bench(4096)": lambda: fastcpu.bench(4096, 10),
    "_core.time_runs(data)": lambda: _core.time_runs(data, runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None),
    "_core.time_runs(-1)": lambda: _core.time_runs(-1, runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None),
    "_core.time_runs(2**64)": lambda: _core.time_runs(2**64, runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None),
    "_core.time_runs(1.5)": lambda: _core.time_runs(1.5, runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None),
    "_core.time_runs(-1, diff)": lambda: _core.time_runs(-1, runs=10, serialize="lfence", copies=2, diff=True, counter="tsc", rulers=None),
    "_core.time_runs(data, diff)": lambda: _core.time_runs(data, runs=10, serialize="lfence", copies=2, diff=True, counter="tsc", rulers=None),
}
out = {}
for name, call in cases.items():
    try:
        call()
        out[name] = "no error"
    except Exception as exc:
        out[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_addresses_outside_executable_mappings_are_refused():
    import json

    from pinning import run_python

    p = run_python(NOT_CODE)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    not_code = "ValueError: address 0x[0-9a-f]+ is not in an executable mapping of this process \\(/proc/self/maps\\)"
    for name in ("bench(ctypes data)", "bench_diff(ctypes data)", "bench(CFUNCTYPE(1))",
                 "bench_diff(CFUNCTYPE(1))", "bench(int data)", "bench_diff(int data)", "bench(4096)",
                 "_core.time_runs(data)", "_core.time_runs(data, diff)"):
        assert re.match(not_code, out[name]), (name, out[name])
    for name in ("_core.time_runs(-1)", "_core.time_runs(2**64)", "_core.time_runs(-1, diff)"):
        assert re.match(r"ValueError: a function address must be in 1\.\.2\*\*64-1", out[name]), (name, out[name])
    assert out["_core.time_runs(1.5)"] == "TypeError: method must be a str or an int address, not float"


@pytest.mark.parametrize("call, match", [
    (lambda c: c.ruler_ticks("add", -1), "blocks must be between 1 and 1048576, not -1"),
    (lambda c: c.ruler_ticks("imul", 0), "blocks must be between 1 and 1048576, not 0"),
    (lambda c: c.ruler_ticks("add", 1 << 32), "blocks must be between 1 and 1048576"),
    (lambda c: c.ruler_ticks("immediate_add", 10**30), "blocks must be between 1 and 1048576"),
    (lambda c: c.ruler_ticks("sub", 10), "ruler must be 'add', 'imul' or 'immediate_add', not 'sub'"),
    (lambda c: c.tsc_reads(-1, True), "count must be between 2 and 1048576, not -1"),
    (lambda c: c.tsc_reads(1 << 32, False), "count must be between 2 and 1048576"),
    (lambda c: c.ruler_resolution(2.0, 1.4, -1, 1), "add_blocks must be between 1 and 1048576, not -1"),
    (lambda c: c.ruler_resolution(2.0, 1.4, 2, 0), "imul_blocks must be between 1 and 1048576, not 0"),
    (lambda c: c.ruler_resolution(2.0, 1.4, 2, 1 << 32), "imul_blocks must be between 1 and 1048576"),
], ids=["chain -1", "chain 0", "chain 2**32", "chain huge", "no such ruler", "reads -1", "reads 2**32",
        "resolution -1", "resolution 0", "resolution 2**32"])
def test_private_entry_points_validate_counts(call, match):
    # add_chain_ticks(-1) (now ruler_ticks) used to wrap round to 2**32 - 1 blocks: 100 s, uninterruptible
    from fastcpu import _core

    with pytest.raises(ValueError, match=re.escape(match)):
        call(_core)
    with pytest.raises(TypeError, match="must be an int, not str"):
        _core.ruler_ticks("add", "1")


VSYSCALL = r"""
import json, fastcpu
out = {}
for address in (0xffffffffff600000, 0xffffffffff600800):
    for name, call in (("bench", fastcpu.bench), ("bench_diff", fastcpu.bench_diff)):
        try:
            call(address, 10)
            out[f"{name} {address:#x}"] = "no error"
        except Exception as exc:
            out[f"{name} {address:#x}"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def test_the_vsyscall_page_is_refused_not_called():
    # listed executable in /proc/self/maps, but emulated by the kernel at a
    # few entry points: calling into it killed the interpreter (issue 22)
    import json

    from pinning import run_python

    p = run_python(VSYSCALL)
    assert p.returncode == 0, p.stderr[-2000:]  # not SIGSEGV
    with open("/proc/self/maps") as maps:
        mapped = "[vsyscall]" in maps.read()
    expected = "is in the [vsyscall] page" if mapped else "is not in an executable mapping"
    for name, error in json.loads(p.stdout).items():
        assert error.startswith("ValueError: address 0xffffffffff60") and expected in error, (name, error)
