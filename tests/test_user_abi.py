"""A user function that breaks the x86-64 calling convention, crashes, forks or
never returns (issue 28 item 7): bench() and bench_diff() raise naming what
it broke, restore what it changed, end its forked copies, and stop it on a
timeout or Ctrl-C. Each case runs in a child interpreter, which could crash
or hang; the hostile functions are assembly compiled here."""

import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import fastcpu

CALLEE_SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15")


def _asm_fn(name: str, body: str) -> str:
    lines = "".join(f'"\\t{line}\\n"\n' for line in body.strip().splitlines())
    return (f'__asm__(".text\\n.globl {name}\\n.type {name}, @function\\n{name}:\\n"\n'
            f'{lines}".size {name}, .-{name}\\n");\n')


HOSTILE = {
    **{f"clobber_{r}": f"mov $0x7ead, %{r}\nxor %eax, %eax\nret" for r in CALLEE_SAVED},
    "clobber_all": "\n".join(f"mov $0x7ead, %{r}" for r in CALLEE_SAVED) + "\nxor %eax, %eax\nret",
    # returns to the right place with the stack pointer moved
    "rsp_down": "pop %rcx\nsub $64, %rsp\nxor %eax, %eax\njmp *%rcx",
    "rsp_up": "pop %rcx\nadd $64, %rsp\nxor %eax, %eax\njmp *%rcx",
    # returns to what it pushed
    "push_unbalanced": "push $8\nxor %eax, %eax\nret",
    "df_set": "std\nxor %eax, %eax\nret",
    "mxcsr_round_up": "stmxcsr -4(%rsp)\norl $0x4000, -4(%rsp)\nldmxcsr -4(%rsp)\nxor %eax, %eax\nret",
    "mxcsr_ftz_daz": "stmxcsr -4(%rsp)\norl $0x8040, -4(%rsp)\nldmxcsr -4(%rsp)\nxor %eax, %eax\nret",
    "mxcsr_unmask": "stmxcsr -4(%rsp)\nandl $~0x1f80, -4(%rsp)\nldmxcsr -4(%rsp)\nxor %eax, %eax\nret",
    "x87_round_zero": "fnstcw -2(%rsp)\norw $0x0c00, -2(%rsp)\nfldcw -2(%rsp)\nxor %eax, %eax\nret",
    "x87_unmask": "fnstcw -2(%rsp)\nandw $~0x3f, -2(%rsp)\nfldcw -2(%rsp)\nxor %eax, %eax\nret",
    "null_read": "mov 0, %eax\nret",
    "endless": "1: pause\njmp 1b",
    "fine": "xor %eax, %eax\nret",
    # well-behaved for its first 1000 calls (the check's first call passes),
    # then the copy loop's count in %rbx is lost on every call
    "late_clobber_rbx": ("incl late_calls(%rip)\ncmpl $1000, late_calls(%rip)\njle 1f\n"
                         "mov $0x7ead, %ebx\n1: xor %eax, %eax\nret"),
}

SOURCE = "".join(_asm_fn(name, body) for name, body in HOSTILE.items()) + r"""
static int late_calls __attribute__((used));
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
unsigned raw_fork(void) { return (unsigned)syscall(SYS_fork); }
"""

#: what the child prints after the call: floats as the interpreter computes
#: them afterwards (a subnormal, a rounding, a division by zero in numpy)
AFTER = """
import math
assert 1e-310 != 0.0, "flush-to-zero"
assert repr(1 / 3) == "0.3333333333333333", repr(1 / 3)
assert math.fsum([0.1] * 10) == 1.0
import numpy as np
with np.errstate(all="ignore"):
    np.array([1.0]) / np.array([0.0])
assert repr(float(np.float64(2.0) / 3)) == "0.6666666666666666"
print("after: ok")
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the hostile functions")
    d = tmp_path_factory.mktemp("userabi")
    (d / "hostile.c").write_text(SOURCE)
    so = d / "libhostile.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(d / "hostile.c")],
                   check=True)
    return str(so)


def run_child(lib: str, call: str, *, timeout: float = 120, after: bool = True,
              **popen) -> subprocess.CompletedProcess:
    body = textwrap.indent(textwrap.dedent(call), "    ")
    code = textwrap.dedent(f"""
        import ctypes, sys
        import fastcpu
        lib = ctypes.CDLL({lib!r})
        try:
        %s
        except fastcpu.Error as e:
            print("Error:", e)
        except TimeoutError as e:
            print("TimeoutError:", e)
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e)
        else:
            print("returned")
        import os
        print("pid", os.getpid())  # every process that gets back here
        sys.stdout.flush()
    """) % body + (AFTER if after else "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, **popen)


def assert_names(p: subprocess.CompletedProcess, *names: str) -> None:
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    line = p.stdout.splitlines()[0]
    assert line.startswith("Error: the function broke the x86-64 calling convention"), p.stdout
    for name in names:
        assert name in line, (name, line)
    assert "after: ok" in p.stdout, p.stdout


@pytest.mark.parametrize("reg", CALLEE_SAVED)
@pytest.mark.parametrize("how", ["bench", "bench_diff", "bench_cpuid", "bench_unroll"])
def test_every_callee_saved_register_is_named_and_restored(lib, reg, how):
    call = {"bench": "fastcpu.bench(lib.clobber_{r}, 50)",
            "bench_diff": "fastcpu.bench_diff(lib.clobber_{r}, 50)",
            "bench_cpuid": "fastcpu.bench(lib.clobber_{r}, 50, serialize='cpuid')",
            "bench_unroll": "fastcpu.bench(lib.clobber_{r}, 50, unroll=4)"}[how]
    p = run_child(lib, call.format(r=reg))
    assert_names(p, f"%{reg}")


def test_all_callee_saved_registers_at_once(lib):
    p = run_child(lib, "fastcpu.bench(lib.clobber_all, 50)")
    assert_names(p, *(f"%{r}" for r in CALLEE_SAVED))


@pytest.mark.parametrize("fn", ["rsp_down", "rsp_up"])
def test_a_moved_stack_pointer_is_named_and_restored(lib, fn):
    p = run_child(lib, f"fastcpu.bench(lib.{fn}, 50)")
    assert_names(p, "%rsp")


def test_a_return_after_an_unbalanced_push_raises(lib):
    p = run_child(lib, "fastcpu.bench(lib.push_unbalanced, 50)")
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout.startswith("Error: the function crashed: SIGSEGV"), p.stdout
    assert "unbalanced push" in p.stdout and "after: ok" in p.stdout, p.stdout


def test_a_fault_in_the_function_raises(lib):
    p = run_child(lib, "fastcpu.bench(lib.null_read, 50)")
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout.startswith("Error: the function crashed: SIGSEGV"), p.stdout
    assert "after: ok" in p.stdout


def test_the_direction_flag_is_named_and_cleared(lib):
    p = run_child(lib, "fastcpu.bench(lib.df_set, 50)")
    assert_names(p, "DF")


@pytest.mark.parametrize("fn", ["mxcsr_round_up", "mxcsr_ftz_daz", "mxcsr_unmask"])
def test_mxcsr_is_named_and_restored(lib, fn):
    p = run_child(lib, f"fastcpu.bench(lib.{fn}, 50)")
    assert_names(p, "MXCSR")


@pytest.mark.parametrize("fn", ["x87_round_zero", "x87_unmask"])
def test_the_x87_control_word_is_named_and_restored(lib, fn):
    p = run_child(lib, f"fastcpu.bench(lib.{fn}, 50)")
    assert_names(p, "x87 control word")


def test_a_well_behaved_function_still_benches(lib):
    p = run_child(lib, "r = fastcpu.bench(lib.fine, 200); d = fastcpu.bench_diff(lib.fine, 50)")
    assert p.returncode == 0 and p.stdout.startswith("returned"), (p.stdout, p.stderr[-2000:])


@pytest.mark.parametrize("fork", ["ctypes.CDLL(None).fork", "lib.raw_fork"])
def test_forked_copies_never_return_into_python(lib, fork):
    p = run_child(lib, f"fastcpu.bench({fork}, 20)", after=False)
    pids = re.findall(r"^pid (\d+)$", p.stdout, re.M)
    assert len(pids) == 1, p.stdout
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    if fork.endswith(".fork"):  # libc's fork: the parent learns of it
        assert "Error: the function called fork()" in p.stdout, p.stdout


def test_an_endless_function_stops_at_the_timeout(lib):
    t = time.monotonic()
    p = run_child(lib, "fastcpu.bench(lib.endless, 10, timeout=1.0)", timeout=60)
    took = time.monotonic() - t
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout.startswith("TimeoutError: the measurement took longer than timeout=1 s"), p.stdout
    assert "after: ok" in p.stdout
    assert took < 30, took  # seconds, not the minutes of a hang


def test_an_endless_function_stops_at_the_timeout_in_bench_diff(lib):
    p = run_child(lib, "fastcpu.bench_diff(lib.endless, 10, timeout=0.5)", timeout=60)
    assert p.stdout.startswith("TimeoutError:"), (p.stdout, p.stderr[-2000:])


def test_the_timeout_bounds_a_slow_but_finite_measurement(lib):
    # getpid returns; a million runs take longer than 0.2 s, and the
    # measurement stops between chunks without abandoning a call
    p = run_child(lib, "fastcpu.bench(ctypes.CDLL(None).getpid, 10**7, timeout=0.2)", timeout=60)
    assert p.stdout.startswith("TimeoutError: the measurement took longer than timeout=0.2 s"), \
        (p.stdout, p.stderr[-2000:])
    assert "abandoned" not in p.stdout.splitlines()[0]


def test_ctrl_c_stops_an_endless_function(lib):
    code = textwrap.dedent(f"""
        import ctypes, sys
        import fastcpu
        lib = ctypes.CDLL({lib!r})
        print("start", flush=True)
        try:
            fastcpu.bench(lib.endless, 10)
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt", flush=True)
    """) + AFTER
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "start"
        time.sleep(1.0)  # inside the function by now (imports done)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, (proc.returncode, out, err[-2000:])
    assert "KeyboardInterrupt" in out and "after: ok" in out, (out, err)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1", 2e6])
def test_timeout_is_checked(bad):
    with pytest.raises((ValueError, TypeError), match="timeout"):
        fastcpu.bench(_getpid_address(), 10, timeout=bad)
    with pytest.raises((ValueError, TypeError), match="timeout"):
        fastcpu.bench_diff(_getpid_address(), 10, timeout=bad)


def test_timeout_is_for_user_functions_only():
    with pytest.raises(ValueError, match="timeout"):
        fastcpu.bench("empty", 10, timeout=1.0)


def _getpid_address() -> int:
    import ctypes
    return ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p).value


def test_a_python_callback_is_never_abandoned(lib):
    # a ctypes callback runs Python inside the function: the timeout stops
    # the measurement between chunks, never by jumping out of the interpreter
    call = """
        import time
        cb = ctypes.CFUNCTYPE(ctypes.c_uint)(lambda: time.sleep(0.3) or 0)
        fastcpu.bench(cb, 10, timeout=0.1)
    """
    p = run_child(lib, call, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout.startswith("TimeoutError:"), p.stdout
    assert "abandoned" not in p.stdout.splitlines()[0] and "after: ok" in p.stdout


def test_a_measurement_inside_the_function_is_refused(lib):
    # the function's callback benches a user function itself: refused there
    # (ctypes prints and ignores the callback's exception), the outer one ends
    call = """
        inner = []
        def cb():
            try:
                fastcpu.bench(lib.fine, 5)
            except fastcpu.Error as e:
                inner.append(str(e))
            return 0
        f = ctypes.CFUNCTYPE(ctypes.c_uint)(cb)
        fastcpu.bench(f, 5)
        print("inner:", inner[0])
    """
    p = run_child(lib, call, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert "inner: a user function's measurement cannot run inside another's" in p.stdout, p.stdout


def test_a_function_that_breaks_the_copy_loop_later_is_stopped_by_the_timeout(lib):
    # bench_diff's copy loop keeps its count in %rbx: a function that starts
    # changing it after the first call passes the check's first call and
    # keeps the loop going; the timeout stops it and the interpreter lives on
    p = run_child(lib, "fastcpu.bench_diff(lib.late_clobber_rbx, 1000, timeout=1.0)", timeout=60)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout.startswith("TimeoutError:") and "after: ok" in p.stdout, p.stdout
