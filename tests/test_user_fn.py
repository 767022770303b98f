"""User sequences: a C function `unsigned fn(void)` benched like a method,
against an empty function called the same way."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import fastcpu

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
    chain = fastcpu.bench(lib.fc_test_chain, 500)
    empty = fastcpu.bench(lib.fc_test_empty, 500)
    assert chain.method == "user:fc_test_chain"
    # 1000 dependent adds against a function that returns at once
    assert chain.estimate > empty.estimate + 10 * chain.estimate_ci95
    assert abs(empty.estimate) < chain.estimate / 4


def test_an_integer_address_is_the_same_function(lib):
    address = ctypes.cast(lib.fc_test_chain, ctypes.c_void_p).value
    r = fastcpu.bench(address, 200)
    assert r.method == f"user:0x{address:x}"
    assert r.estimate > 0


def test_unroll_calls_the_function_that_many_times(lib):
    one = fastcpu.bench(lib.fc_test_chain, 300)
    four = fastcpu.bench(lib.fc_test_chain, 300, unroll=4)
    assert np.median(four.raw) > 2.5 * np.median(one.raw)
    assert four.estimate == pytest.approx(one.estimate, rel=0.3)


@pytest.mark.parametrize("serialize", fastcpu.SERIALIZE_MODES)
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
