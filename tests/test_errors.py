"""Bad input raises precise exceptions; unavailable methods raise Unsupported."""

import json
import os

import pytest

import fastcpu
from conftest import UNAVAILABLE


def test_exception_hierarchy():
    assert issubclass(fastcpu.Unsupported, fastcpu.Error)
    assert issubclass(fastcpu.Error, RuntimeError)


def test_unknown_method_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid methods are .*rdpid"):
        fastcpu.bench("rdpidd", 10)
    with pytest.raises(ValueError, match="did you mean 'rdpid'"):
        fastcpu.bench("rdpidd", 10)


@pytest.mark.parametrize("runs", [0, -1, fastcpu.limits.RUNS_MAX + 1, 10**30])
def test_runs_out_of_range(runs):
    with pytest.raises(ValueError, match="runs must be between 1 and"):
        fastcpu.bench("gdt", runs)


@pytest.mark.parametrize("runs", [None, "10", 10.0, True])
def test_runs_wrong_type(runs):
    with pytest.raises(TypeError, match="runs must be an int"):
        fastcpu.bench("gdt", runs)


@pytest.mark.parametrize("method", [None, 1.5, b"gdt", ["gdt"], True])
def test_method_wrong_type(method):
    with pytest.raises(TypeError):
        fastcpu.bench(method, 10)


@pytest.mark.parametrize("unroll", [0, -3, fastcpu.limits.UNROLL_MAX + 1])
def test_unroll_out_of_range(unroll):
    with pytest.raises(ValueError, match="unroll must be between"):
        fastcpu.bench("gdt", 10, unroll=unroll)


def test_unroll_wrong_type():
    with pytest.raises(TypeError, match="unroll must be an int"):
        fastcpu.bench("gdt", 10, unroll=2.0)


def test_unknown_serialize_mode():
    with pytest.raises(ValueError, match="use one of lfence, cpuid, rdtscp"):
        fastcpu.bench("gdt", 10, serialize="mfence")
    with pytest.raises(TypeError):
        fastcpu.bench("gdt", 10, serialize=None)


@pytest.mark.parametrize("cpu", [-1, 10**6])
def test_cpu_outside_the_mask(cpu):
    with pytest.raises(ValueError, match="not in this thread's affinity mask"):
        fastcpu.bench("gdt", 10, cpu=cpu)


@pytest.mark.parametrize("cpu", ["0", 0.0, True])
def test_cpu_wrong_type(cpu):
    with pytest.raises(TypeError, match="cpu must be an int or None"):
        fastcpu.bench("gdt", 10, cpu=cpu)


def test_core_checks_its_own_arguments():
    # the C layer does not trust the Python layer
    from fastcpu import _core

    with pytest.raises(ValueError):
        _core.time_runs("gdt", runs=0, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
    with pytest.raises(ValueError):
        _core.time_runs("gdt", runs=10, serialize="nope", copies=1, diff=False, counter="tsc", rulers=None)
    with pytest.raises(ValueError):
        _core.time_runs("nope", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None)
    with pytest.raises(ValueError):
        _core.time_runs("gdt", runs=10, serialize="lfence", copies=0, diff=False, counter="tsc", rulers=None)


@pytest.mark.skipif(not UNAVAILABLE, reason="every method is available on this machine")
@pytest.mark.parametrize("info", UNAVAILABLE, ids=lambda m: m.name)
def test_unavailable_method_raises_unsupported_with_reason(info):
    with pytest.raises(fastcpu.Unsupported, match=info.reason[:20]):
        fastcpu.bench(info.name, 10)


# -- affinity calls denied (issue 10, item 6) ----------------------------------------

PINNING_DENIED = r"""
import json, os
import fastcpu
cpu = min(os.sched_getaffinity(0))
out = {}
for name, call in [("bench", lambda: fastcpu.bench("gdt", 10, cpu=cpu)),
                   ("bench_diff", lambda: fastcpu.bench_diff("gdt", 10, cpu=cpu)),
                   ("measure", lambda: fastcpu.measure(10, ["gdt"], cpu=cpu)),
                   ("check", lambda: fastcpu.check(["gdt"])),
                   ("unpinned", lambda: fastcpu.bench("gdt", 10).runs)]:
    try:
        out[name] = call()
    except Exception as exc:
        out[name] = [type(exc).__name__, isinstance(exc, fastcpu.Error), str(exc)]
print(json.dumps(out))
"""


def test_denied_affinity_calls_raise_fastcpu_error_with_the_reason():
    from seccomp_helper import run_denied

    p = run_denied(PINNING_DENIED, ["sched_setaffinity"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for name in ("bench", "bench_diff", "measure"):
        kind, is_error, message = out[name]
        assert kind == "Error" and is_error, out[name]
        assert message.startswith("cannot pin this thread to CPU "), message
        assert "sched_setaffinity was denied (Operation not permitted; a seccomp filter" in message
    kind, is_error, message = out["check"]
    assert is_error and message.startswith("check() pins this thread to each CPU, but sched_setaffinity "
                                           "was denied"), out["check"]
    assert out["unpinned"] == 10  # nothing to pin: nothing refused


AFFINITY_UNREADABLE = r"""
import contextlib, io, json
import fastcpu
from fastcpu.cli import main
cpu = %d
out = {}
for name, call in [("bench", lambda: fastcpu.bench("gdt", 10, cpu=cpu)),
                   ("bench_diff", lambda: fastcpu.bench_diff("gdt", 10, cpu=cpu)),
                   ("measure", lambda: fastcpu.measure(10, ["gdt"], cpu=cpu)),
                   ("selftest", lambda: fastcpu.selftest(cpu=cpu)),
                   ("check", lambda: fastcpu.check(["gdt"])),
                   ("check_cpus", lambda: fastcpu.check(["gdt"], [cpu])),
                   ("unpinned", lambda: fastcpu.bench("gdt", 10).runs),
                   ("measure_unpinned", lambda: fastcpu.measure(10, ["gdt"], selftest=False).machine["affinity"])]:
    try:
        out[name] = call()
    except Exception as exc:
        out[name] = [type(exc).__name__, isinstance(exc, fastcpu.Error), str(exc)]
for name, argv in [("cli_check", ["check", "--methods", "gdt"]),
                   ("cli_cpu", ["--runs", "10", "--methods", "gdt", "--cpu", str(cpu)])]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        out[name] = [main(argv), err.getvalue()]
print(json.dumps(out))
"""


def test_an_unreadable_affinity_mask_raises_fastcpu_error_with_the_fix():
    # sched_getaffinity denied (issue 22, item 6): a bare PermissionError before
    from seccomp_helper import run_denied

    if os.environ.get("FASTCPU_SANITIZED") or fastcpu._core.SANITIZED:
        # AddressSanitizer's own thread start reads the affinity (pthread_getattr_np)
        # and aborts where it is denied, before fastcpu runs: the sanitizer's limit
        pytest.skip("AddressSanitizer cannot start a thread with sched_getaffinity denied")

    p = run_denied(AFFINITY_UNREADABLE % min(os.sched_getaffinity(0)), ["sched_getaffinity"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    denied = "sched_getaffinity was denied (Operation not permitted; a seccomp filter"
    for name in ("bench", "bench_diff", "measure", "selftest"):
        kind, is_error, message = out[name]
        assert kind == "Error" and is_error, out[name]
        assert message.startswith("cannot check cpu ") and denied in message, message
        assert message.endswith(": pass cpu=None to stay unpinned"), message
    for name in ("check", "check_cpus"):
        kind, is_error, message = out[name]
        assert kind == "Error" and is_error, out[name]
        assert message.startswith("cannot read this thread's affinity mask, which check() restores"), message
        assert denied in message and "fastcpu.read()" in message, message
    assert out["unpinned"] == 10
    assert out["measure_unpinned"] is None  # a machine fact that cannot be read is None
    status, err = out["cli_check"]
    assert status == 3 and denied in err and "Traceback" not in err
    status, err = out["cli_cpu"]
    assert status == 1 and denied in err and err.rstrip().endswith("leave --cpu out"), err


def test_core_messages_show_the_number_they_refuse():
    # PyErr_Format knows no %g: the messages printed a literal "%g" (issue 22)
    from fastcpu import _core

    cases = [
        (lambda: _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc",
                               rulers=(2, 1, -1.5, 80.0, 1000, 0.02, 0.008)), "not -1.5"),
        (lambda: _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc",
                               rulers=(2, 1, 80.0, 80.0, 1000, 1.25, 0.008)), "not 1.25"),
        (lambda: _core.time_runs("gdt", runs=10, serialize="lfence", copies=1, diff=False, counter="tsc",
                               rulers=(2, 1, 80.0, 80.0, 1000, 0.02, -0.5)), "not -0.5"),
        (lambda: _core.convert([[0, 0, 1.3, 1.3]], 2.5, 0.01), "not 2.5"),
        (lambda: _core.convert([[0, 0, 1.3, 1.3]], 0.01, 1.5), "not 1.5"),
        (lambda: _core.ruler_resolution(26.0, -1.0, 4, 1), "not -1"),
    ]
    for call, shown in cases:
        with pytest.raises(ValueError) as raised:
            call()
        assert shown in str(raised.value) and "%g" not in str(raised.value), str(raised.value)
