"""Nothing escapes its bounds, round 4 (issue 40, items 1, 4, 5, 8, 10 and 11):
a signal handler that calls fastcpu during the first clock() gets an answer
or a clear error, never a wait for good; without /proc and /sys the
measuring calls work and a saved file keeps the umask; save() works where
the file system has no hard links; measure() takes one clock while another
thread refreshes it; junk is refused at its first chunk, not read whole; and
the command line tells a lost --help or --version, and answers Ctrl-C during
its imports with one line and 130."""

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
    calls, deadline = 0, time.monotonic() + 15
    try:
        while calls < 300 and time.monotonic() < deadline:
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
