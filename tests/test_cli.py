"""python -m fastcpu: the table, its options, and bad options."""

import subprocess
import sys

import pytest

from fastcpu._cli import main


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "fastcpu", *args], capture_output=True, text=True, timeout=300
    )


def test_table_prints_every_available_method_and_the_clock():
    out = run_cli("--runs", "50")
    assert out.returncode == 0, out.stderr
    assert "clock: TSC" in out.stdout
    assert "BEST" in out.stdout and "MEDIAN" in out.stdout
    import fastcpu

    for m in fastcpu.methods():
        if m.name != "empty":
            assert m.name in out.stdout


def test_methods_serialize_cpu_options(capsys):
    assert main(["--runs", "20", "--methods", "gdt,syscall", "--serialize", "rdtscp", "--cpu", "0"]) == 0
    out = capsys.readouterr().out
    assert "gdt" in out and "syscall" in out and "rdpid " not in out
    assert "serialize=rdtscp" in out and "pinned to CPU 0" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--runs", "x"],
        ["--runs", "0"],
        ["--methods", "nope"],
        ["--serialize", "mfence"],
        ["--cpu", "99999"],
        ["--cpu", "zero"],
        ["--bogus"],
    ],
)
def test_bad_options_exit_2_with_one_line(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastcpu: error:")
    assert len(err.splitlines()) == 1


def test_console_script_is_installed():
    import shutil

    assert shutil.which("fastcpu") is not None
