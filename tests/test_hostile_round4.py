"""Nothing escapes its bounds, round 4 (issue 40, items 1 to 5 and 7 to 11):
a signal handler that calls fastcpu during the first clock() gets an answer
or a clear error, never a wait for good; without /proc and /sys the
measuring calls work and a saved file keeps the umask; save() works where
the file system has no hard links; measure() takes one clock while another
thread refreshes it; junk is refused at its first chunk, not read whole; and
the command line tells a lost --help or --version, and answers Ctrl-C during
its imports with one line and 130; a user function's stop signal is
borrowed only while measuring, a timeout no timer can enforce is refused
before the call, fastcpu's first use inside the function poisons nothing, and
a spinning function stalls no other thread's first inline bench."""

import ctypes
import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import fastcpu
from fastcpu.files import paths as _paths

SANITIZED = bool(os.environ.get("FASTCPU_SANITIZED")) or fastcpu._core.SANITIZED
HERE = os.path.dirname(os.path.abspath(__file__))


def python(code, *args, timeout=120, env=None, **kw):
    """`code` run by this interpreter in a child, from the tests folder."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=HERE, env=env, **kw)


def small_results():
    return fastcpu.measure(runs=5, methods=["empty"], selftest=False, back_to_back=False)


# -- 1. a signal handler calling fastcpu while the first clock() measures ------

SIGNAL_DURING_FIRST = """
    import signal, sys, time
    import fastcpu

    call, delay = sys.argv[1], float(sys.argv[2])
    said = []

    def handler(signum, frame):
        try:
            if call == "clock":
                fastcpu.clock()
            else:
                fastcpu.bench("empty", 20)
            said.append("result")
        except fastcpu.Error as exc:
            said.append("error: " + str(exc))

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, delay)
    first = sys.argv[3]
    if first == "clock":
        fastcpu.clock()
    elif first == "selftest":
        fastcpu.selftest()
    else:
        fastcpu.bench("empty", 200)
    deadline = time.monotonic() + 5
    while not said and time.monotonic() < deadline:  # the timer may fire after a quick call
        time.sleep(0.01)
    print(said[0] if said else "no signal")
"""


@pytest.mark.parametrize("first", ["clock", "selftest", "bench"])
@pytest.mark.parametrize("call", ["clock", "bench"])
@pytest.mark.parametrize("delay", [0.002, 0.03, 0.07])
def test_a_signal_handler_calling_fastcpu_during_the_first_clock_never_waits_for_good(call, delay, first):
    # the first clock() sleeps 50 ms holding its lock: a handler on the same
    # thread that asked for the clock waited on that lock for good
    try:
        p = python(SIGNAL_DURING_FIRST, call, str(delay), first, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a SIGALRM handler calling {call}() during the first {first}() hung")
    assert p.returncode == 0, p.stderr[-2000:]
    out = p.stdout.strip()
    assert out == "result" or (out.startswith("error: fastcpu was called from a signal handler")
                               and "call it outside the handler" in out), (out, p.stderr[-2000:])


def test_a_lock_entered_again_on_its_own_thread_raises_naming_what_it_guards():
    from fastcpu._base import ForkSafeLock

    lock = ForkSafeLock("the frobnicator's calibration")
    with lock:
        with pytest.raises(fastcpu.Error, match="inside the frobnicator's calibration"):
            with lock:
                pass
        assert lock.locked()
    assert not lock.locked()
    with lock:  # still usable after the refusal
        pass


# -- 4. no /proc, no /sys -------------------------------------------------------

NO_PROC = """
    import ctypes, os, stat, sys
    import fastcpu

    out = sys.argv[1]
    assert not os.path.exists("/proc/self/maps"), "/proc is still mounted"
    os.umask(0o077)
    fastcpu.selftest()
    r = fastcpu.measure(runs=20, methods=["empty"], back_to_back=False)
    getpid = ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p).value
    fastcpu.bench(getpid, 20)
    data = ctypes.create_string_buffer(64)
    try:
        fastcpu.bench(ctypes.addressof(data), 5)
    except fastcpu.Unsupported as exc:
        assert "/proc/self/maps" in str(exc) and "mount /proc" in str(exc), exc
    else:
        raise AssertionError("an address in no loaded object's code was taken without /proc")
    r.save(out)
    print(oct(stat.S_IMODE(os.stat(out).st_mode)))
"""


def _unshare_without_proc():
    """The command prefix that runs a child in a mount namespace with /proc
    and /sys hidden under empty tmpfs, or a pytest.skip naming why not here."""
    if os.geteuid() != 0:
        pytest.skip("hiding /proc needs root (a mount namespace): CI's root pass runs this")
    if SANITIZED:  # the runtime LD_PRELOADed into every child reads /proc/self/maps itself
        pytest.skip("AddressSanitizer's own runtime cannot start without /proc: CI's plain root pass runs this")
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("util-linux's unshare is not installed")
    probe = subprocess.run([unshare, "--mount", "--fork", "sh", "-c", "mount -t tmpfs none /proc"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"this container may not make a mount namespace: {probe.stderr.strip()[:200]}")
    return [unshare, "--mount", "--fork", "sh", "-c",
            'mount -t tmpfs none /proc && mount -t tmpfs none /sys && exec "$@"', "sh"]


def test_measuring_calls_work_and_a_save_keeps_the_umask_without_proc(tmp_path):
    prefix = _unshare_without_proc()
    out = tmp_path / "r.json"
    p = subprocess.run([*prefix, sys.executable, "-c", textwrap.dedent(NO_PROC), str(out)], capture_output=True,
                       text=True, timeout=300, cwd=HERE)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split()[-1] == "0o600", p.stdout  # 0666 under umask 077


def test_the_cli_measures_without_proc(tmp_path):
    prefix = _unshare_without_proc()
    out = tmp_path / "r.json"
    p = subprocess.run([*prefix, sys.executable, "-m", "fastcpu", "run", "--runs", "20", "--methods", "empty",
                        "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=HERE)
    assert p.returncode == 0, p.stderr[-3000:]
    assert fastcpu.load(out).results["empty"].runs == 20


def test_the_umask_is_asked_of_the_kernel_where_proc_cannot_be_read(monkeypatch, tmp_path):
    # the in-process twin of the test above: /proc/self/status unreadable
    real_read_text = _paths.Path.read_text

    def no_proc(self, *args, **kw):
        if str(self).startswith("/proc/"):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self))
        return real_read_text(self, *args, **kw)

    monkeypatch.setattr(_paths.Path, "read_text", no_proc)
    r = small_results()
    before = os.umask(0o077)
    try:
        assert _paths._umask() == 0o077
        assert os.umask(0o077) == 0o077  # put back as it was
        r.save(tmp_path / "r.json")
    finally:
        os.umask(before)
    assert os.stat(tmp_path / "r.json").st_mode & 0o777 == 0o600


# -- 5. a file system without hard links ------------------------------------------

@pytest.mark.parametrize("code", [errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS])
def test_save_without_hard_links_still_creates_and_still_refuses_an_existing_file(monkeypatch, tmp_path, code):
    def no_link(src, dst, *args, **kw):
        raise OSError(code, os.strerror(code), src, None, dst)

    monkeypatch.setattr(os, "link", no_link)
    r = small_results()
    path = tmp_path / "r.json"
    r.save(path)
    assert fastcpu.load(path).results["empty"].runs == 5
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite=True"):
        small_results().save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["r.json"]  # no temporary file left
    r.save(path, overwrite=True)


def test_the_cli_run_keeps_its_measurement_without_hard_links(tmp_path):
    # the command line in a child whose os.link fails as on FAT
    out = tmp_path / "new.json"
    p = python("""
        import errno, os, sys
        def no_link(*a, **k):
            raise PermissionError(errno.EPERM, "Operation not permitted")
        os.link = no_link
        from fastcpu.cli import main
        sys.exit(main(["run", "--runs", "10", "--methods", "empty", "--out", sys.argv[1]]))
    """, str(out), timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert fastcpu.load(out).results["empty"].runs == 10


# -- 8. measure() beside clock(refresh=True) -----------------------------------------

def test_measure_takes_one_clock_while_another_thread_refreshes_it():
    fastcpu.clock()
    stop = threading.Event()
    refreshed = []

    def refresher():
        while not stop.is_set():
            refreshed.append(fastcpu.clock(refresh=True))

    t = threading.Thread(target=refresher)
    t.start()
    # until the clock was refreshed a few times meanwhile (a calibration takes seconds under
    # the sanitizer), within a minute
    calls, deadline = 0, time.monotonic() + 60
    try:
        while (calls < 300 or len(refreshed) < 3) and time.monotonic() < deadline:
            calls += 1
            r = fastcpu.measure(runs=5, methods=["empty", "sched_getcpu"], selftest=False, back_to_back=False)
            assert all(b.tsc_hz == r.clock.tsc_hz for b in r.results.values())
    finally:
        stop.set()
        t.join()
    assert len(refreshed) >= 2, "the clock was not refreshed while measure() ran"
    assert calls >= 20


# -- 10. junk refused at its first chunk ---------------------------------------------

JUNK = """
    import resource, sys, time
    import fastcpu

    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    room = mapped + (int(sys.argv[2]) << 20)
    resource.setrlimit(resource.RLIMIT_AS, (room, room))
    start = time.monotonic()
    try:
        fastcpu.load(sys.argv[1])
    except fastcpu.ResultFileError as exc:
        print(f"{time.monotonic() - start:.3f}", exc)
"""


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer reserves terabytes of address space for its shadow")
@pytest.mark.parametrize("kind", ["sparse", "x"])
def test_junk_is_refused_at_its_first_chunk_not_read_whole(tmp_path, kind):
    path = tmp_path / "junk.json"
    if kind == "sparse":  # 2 GiB of zeros that take no disk
        with open(path, "wb") as f:
            f.truncate(2 << 30)
        size_mib, expect = 2048, "byte 0x00 at offset 0"
    else:  # more text than the child's address space has room for
        size_mib, expect = 384, "it starts with b'x' at offset 0"
        chunk = b"x" * (1 << 20)
        with open(path, "wb") as f:
            for _ in range(size_mib):
                f.write(chunk)
    # room for 256 MiB more than the interpreter maps: reading it whole
    # (as 0.8.7 did) is a MemoryError
    p = python(JUNK, str(path), "256", timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    took, _, message = p.stdout.strip().partition(" ")
    assert expect in message and "not a fastcpu result file" in message, p.stdout
    assert float(took) < 5.0, f"{took} s to refuse {size_mib} MiB of junk"


def test_a_gigabyte_of_blanks_before_a_document_still_loads_as_before(tmp_path):
    # the first-byte check skips JSON's blanks (a padded gzip file starts with them)
    r = small_results()
    path = tmp_path / "r.json"
    r.save(path)
    padded = tmp_path / "padded.json"
    padded.write_bytes(b" \n\t\r" * 1000 + path.read_bytes())
    assert fastcpu.load(padded).results["empty"].runs == 5
    (tmp_path / "list.json").write_bytes(b"  [1, 2]")
    with pytest.raises(fastcpu.ResultFileError, match="JSON list, not an object"):
        fastcpu.load(tmp_path / "list.json")


# -- 11. the command line: lost output, Ctrl-C during its imports ----------------------

@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["--version"], ["compare", "--help"]])
@pytest.mark.parametrize("stdout", ["/dev/full", "closed"])
def test_help_and_version_that_cannot_be_written_exit_1_with_a_line(args, stdout):
    if stdout == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    cmd = [sys.executable, "-m", "fastcpu", *args]
    if stdout == "closed":
        p = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *cmd], stderr=subprocess.PIPE, text=True,
                           timeout=120, cwd=HERE)
        said = "standard output: it is closed"
    else:
        with open("/dev/full", "w") as full:
            p = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, cwd=HERE)
        said = "cannot write standard output: No space left on device"
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and said in lines[0], p.stderr


#: A sitecustomize that sends this process SIGINT when the module named in
#: SIGINT_AT_IMPORT is first imported: Ctrl-C at a chosen point of the start-up.
SIGINT_AT_IMPORT = """\
import os, signal, sys

_at = os.environ.get("SIGINT_AT_IMPORT")


class _Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        global _at
        if _at and name == _at:
            _at = None
            os.kill(os.getpid(), signal.SIGINT)
        return None


if _at:
    sys.meta_path.insert(0, _Finder)
"""


@pytest.mark.parametrize("module", ["numpy", "fastcpu.instrument", "fastcpu.results", "fastcpu.cli",
                                    "fastcpu.cli.output", "fastcpu.__main__", "argparse"])
def test_ctrl_c_during_the_clis_imports_is_one_line_and_130(tmp_path, module):
    (tmp_path / "sitecustomize.py").write_text(SIGINT_AT_IMPORT)
    env = dict(os.environ, SIGINT_AT_IMPORT=module,
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    p = subprocess.run([sys.executable, "-m", "fastcpu", "--version"], capture_output=True, text=True,
                       timeout=120, cwd=HERE, env=env)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert p.stderr == "fastcpu: interrupted\n"
    assert p.stdout == ""


def test_ctrl_c_during_the_scripts_imports_is_one_line_and_130(tmp_path):
    script = shutil.which("fastcpu", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the fastcpu script is not installed beside this interpreter")
    (tmp_path / "sitecustomize.py").write_text(SIGINT_AT_IMPORT)
    env = dict(os.environ, SIGINT_AT_IMPORT="numpy",
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    p = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=120, cwd=HERE, env=env)
    assert (p.returncode, p.stderr) == (130, "fastcpu: interrupted\n")


def test_ctrl_c_sent_again_and_again_at_start_up_never_shows_a_traceback():
    # as a person does: SIGINT from the start until the process is gone.
    # Before Python installs its own handler SIGINT kills it (-2, silent);
    # while Python's site imports run, before any fastcpu code, a
    # KeyboardInterrupt is Python's to print: only those two are excused
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-m", "fastcpu", "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=HERE)
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            p.send_signal(signal.SIGINT)
            time.sleep(0.01)
        out, err = p.communicate(timeout=60)
        if p.returncode == -signal.SIGINT and "fastcpu" not in err:
            continue
        if "Traceback" in err and "fastcpu" not in err:
            continue  # in site or runpy, before fastcpu's first module
        assert p.returncode in (0, 130), (p.returncode, err)
        assert "Traceback" not in err, err
        assert err in ("", "fastcpu: interrupted\n")


def test_a_script_that_imports_fastcpu_keeps_pythons_ctrl_c():
    # the start-up handler is the command line's alone: a program that
    # imports fastcpu gets KeyboardInterrupt as ever
    p = python("""
        import signal
        import fastcpu
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
    """)
    assert p.stdout.strip() == "KeyboardInterrupt", p.stderr


# -- items 2, 3, 7 and 9: a user function's stop signal, its timer, fastcpu
# -- inside the function, and the bias lock ------------------------------------

USER_SOURCE = r"""
volatile int entered;
unsigned spin(void) { entered = 1; for (;;) __asm__ volatile("pause"); return 0; }
unsigned fine(void) { return 0; }
"""


@pytest.fixture(scope="module")
def userlib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the test functions")
    d = tmp_path_factory.mktemp("round4")
    (d / "fns.c").write_text(USER_SOURCE)
    so = d / "libfns.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(d / "fns.c")], check=True)
    return str(so)


#: a signal's action as the kernel holds it (glibc x86-64's struct sigaction:
#: handler, the mask's first 64 signals, flags, restorer), read through libc,
#: to compare an action before and after
RAW_ACTION = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def raw_action(sig):
    buf = ctypes.create_string_buffer(152)
    assert libc.sigaction(sig, None, buf) == 0, ctypes.get_errno()
    return buf.raw[:16] + buf.raw[136:140] + buf.raw[144:152]
"""

STOP_SIGNAL_KEPT = RAW_ACTION + """
import os, signal, sys, time
import fastcpu
lib = ctypes.CDLL(sys.argv[1])
SIG = signal.SIGRTMIN + 7
seen = []
def handler(signum, frame):
    seen.append(signum)

signal.signal(SIG, handler)
before = raw_action(SIG)
# a signal the application sends itself while the function runs (from a
# callback inside it) is the application's
cb = ctypes.CFUNCTYPE(ctypes.c_uint)(lambda: 0 if seen else os.kill(os.getpid(), SIG) or 0)
fastcpu.bench(cb, 20, timeout=30)
print("during", len(seen), flush=True)
fastcpu.bench(lib.fine, 200, timeout=30)
assert raw_action(SIG) == before, "the action was not given back exactly"
os.kill(os.getpid(), SIG)
time.sleep(0.05)
print("after", len(seen), signal.getsignal(SIG) is handler, flush=True)
"""


def test_the_applications_stop_signal_handler_keeps_its_signal(userlib):
    # fastcpu's stop signal was taken for good at the first user-function
    # bench: the application's handler never saw the signal again, though
    # signal.getsignal still named it
    p = python(STOP_SIGNAL_KEPT, userlib, timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr[-2000:])
    assert p.stdout.split("\n")[:2] == ["during 1", "after 2 True"], (p.stdout, p.stderr[-2000:])


STOP_SIGNAL_TAKEN_LATER = RAW_ACTION + """
import signal, sys, time
import fastcpu
lib = ctypes.CDLL(sys.argv[1])
SIG = signal.SIGRTMIN + 7
fastcpu.bench(lib.fine, 200, timeout=30)
signal.signal(SIG, lambda s, f: None)  # the application's handler, installed after
mine = raw_action(SIG)
try:
    fastcpu.bench(lib.spin, 10, timeout=1)
except TimeoutError as e:
    print("TimeoutError", flush=True)
assert raw_action(SIG) == mine
print("given back", flush=True)
"""


def test_a_handler_installed_later_does_not_disable_the_timeout(userlib):
    # the stop signal's handler was installed once: an application that
    # installed its own afterwards left a spinning function running for good
    p = python(STOP_SIGNAL_TAKEN_LATER, userlib, timeout=60)
    assert p.returncode == 0, (p.stdout, p.stderr[-2000:])
    assert p.stdout.split() == ["TimeoutError", "given", "back"], (p.stdout, p.stderr[-2000:])


NO_STOP_TIMER = """
import ctypes, resource, sys
import fastcpu
lib = ctypes.CDLL(sys.argv[1])
if sys.argv[2] == "rlimit":
    resource.setrlimit(resource.RLIMIT_SIGPENDING, (0, 0))
entered = ctypes.c_int.in_dll(lib, "entered")
try:
    fastcpu.bench(lib.spin, 10, timeout=1)
except fastcpu.Unsupported as e:
    print("Unsupported:", e)
print("called", entered.value)
print("without a timeout", fastcpu.bench(lib.fine, 100).raw.shape)
"""


def _check_refused(p, err: str) -> None:
    assert p.returncode == 0, (p.stdout, p.stderr[-2000:])
    lines = p.stdout.splitlines()
    assert lines[0].startswith("Unsupported: a timeout cannot be enforced here"), p.stdout
    assert f"timer_create failed with {err}" in lines[0], p.stdout
    assert lines[1:] == ["called 0", "without a timeout (100,)"], p.stdout


def test_a_timeout_without_a_stop_timer_is_refused_before_the_call_rlimit(userlib):
    # RLIMIT_SIGPENDING 0: timer_create fails (EAGAIN) and a spinning
    # function ran on past its timeout and Ctrl-C, until SIGKILL
    p = python(NO_STOP_TIMER, userlib, "rlimit", timeout=60)
    _check_refused(p, "EAGAIN")


def test_a_timeout_without_a_stop_timer_is_refused_before_the_call_seccomp(userlib, monkeypatch):
    import seccomp_helper

    monkeypatch.setitem(seccomp_helper.SYS, "timer_create", 222)
    code = NO_STOP_TIMER.replace("sys.argv[1]", repr(userlib)).replace('sys.argv[2] == "rlimit"', "False")
    p = seccomp_helper.run_denied(textwrap.dedent(code), ["timer_create"], errno.EPERM, timeout=60)
    _check_refused(p, "EPERM")


FIRST_USE_IN_A_CALLBACK = """
import ctypes, sys
import fastcpu
what = sys.argv[1]
done = []
def cb():
    if not done:  # fastcpu's first verdicts, asked for inside the function
        done.append(1)
        if what == "methods":
            fastcpu.methods()
        elif what == "read":
            try:
                fastcpu.read("tscp")
            except fastcpu.Unsupported:
                pass
        else:
            fastcpu.bench("empty", 20)
    return 0
fn = ctypes.CFUNCTYPE(ctypes.c_uint)(cb)
r = fastcpu.bench(fn, 20, timeout=60)
print("outer", r.raw.shape)
print(sorted(m.name for m in fastcpu.methods() if m.available))
"""


@pytest.mark.parametrize("what", ["methods", "read", "bench"])
def test_fastcpus_first_use_inside_a_timed_callback_poisons_nothing(what):
    # the catalog's probe fork() inside the function ran the user-function
    # atfork handler: the outer bench said the function forked, and every
    # probed method stayed unavailable for the rest of the process
    p = python(FIRST_USE_IN_A_CALLBACK, what, timeout=180)
    assert p.returncode == 0, (p.stdout, p.stderr[-2000:])
    outer, available = p.stdout.splitlines()[:2]
    assert outer == "outer (20,)", p.stdout
    fresh = python("import fastcpu; print(sorted(m.name for m in fastcpu.methods() if m.available))")
    assert available == fresh.stdout.strip(), (available, fresh.stdout, fresh.stderr[-2000:])


BIAS_BEHIND_A_SPINNER = """
import ctypes, sys, threading, time
import fastcpu
from fastcpu.instrument import bias

lib = ctypes.CDLL(sys.argv[1])
entered = ctypes.c_int.in_dll(lib, "entered")
events = []
measuring, spinning = threading.Event(), threading.Event()
take = bias._take_bias

def take_bias(path, *args, **kw):
    # the user path's bias, measured on first use: held here until the
    # spinner has the user-function chunk, as a slower host interleaves them
    if path == "user":
        measuring.set()
        spinning.wait(60)
    return take(path, *args, **kw)

bias._take_bias = take_bias

def spinner():
    try:
        fastcpu.bench(lib.spin, 10, timeout=5)
    except TimeoutError:
        events.append("spinner stopped")

def user():
    fastcpu.bench(lib.fine, 100)
    events.append("user done")

def inline():
    fastcpu.bench("empty", 100)
    events.append("inline done")

threads = [threading.Thread(target=user)]
threads[0].start()
measuring.wait(60)
threads.append(threading.Thread(target=spinner))
threads[1].start()
while not entered.value:
    time.sleep(0.001)
spinning.set()
threads.append(threading.Thread(target=inline))
threads[2].start()
for t in threads:
    t.join()
print(" ".join(e.split()[0] for e in events))
"""


def test_a_spinning_function_does_not_stall_another_threads_first_inline_bench(userlib):
    # the bias lock was one for both paths: a user-path bias measurement
    # queued behind the spinner held it, and a cold bench of a catalog
    # method in a third thread waited out the spinner's whole timeout
    p = python(BIAS_BEHIND_A_SPINNER, userlib, timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr[-2000:])
    assert p.stdout.split() == ["inline", "spinner", "user"], (p.stdout, p.stderr[-2000:])
