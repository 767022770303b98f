"""python -m fastcpu: the table, its options, and bad options."""

import os
import subprocess
import sys

import pytest

import fastcpu
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


def test_a_label_the_terminal_cannot_encode_is_escaped_not_fatal(tmp_path):
    # PYTHONIOENCODING=ascii: the file keeps the label, the summary escapes it
    # (before: exit 2 with a codec error, after the file was written)
    p = subprocess.run([sys.executable, "-m", "fastcpu", "run", "--runs", "10", "--methods", "gdt",
                        "--out", "x.json", "--label", "café"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONIOENCODING="ascii"))
    assert p.returncode == 0, p.stderr
    assert "caf\\xe9" in p.stdout
    assert fastcpu.load(tmp_path / "x.json").label == "café"


def test_running_out_of_memory_is_one_line_exit_1(monkeypatch, capsys):
    from fastcpu import _cli

    def exhausted(args):
        raise MemoryError

    add, _, text = _cli.COMMANDS["compare"]
    monkeypatch.setitem(_cli.COMMANDS, "compare", (add, exhausted, text))
    assert main(["compare", "x.json"]) == 1
    assert capsys.readouterr().err == "fastcpu: out of memory\n"


def test_compare_seed_table_and_ab_from_the_shell(tmp_path):
    import glob

    data = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "data", "*.json")))
    p = subprocess.run([sys.executable, "-m", "fastcpu", "compare", "--seed-table", *data],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "BEST" in lines[1] and "MEDIAN" in lines[1] and "CHEAPEST WAY" in lines[2]
    assert sum("dean gaudet, 2007" in line for line in lines) == 4
    p = subprocess.run([sys.executable, "-m", "fastcpu", "compare", "--ab", data[0], data[-1]],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "ns per call" in p.stdout and "VERDICT" in p.stdout
    assert any(v in p.stdout for v in ("faster", "slower", "no detectable difference"))


def _cli(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "fastcpu", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_help_says_what_each_command_does_and_names_the_estimate():
    p = _cli("--help")
    assert p.returncode == 0
    assert "ESTIMATE" in p.stdout
    for command in ("run", "compare", "plot", "check", "selftest", "show"):
        line = next(l for l in p.stdout.splitlines() if l.strip().startswith(command + " "))
        assert len(line.split()) > 3, line  # a description follows the name


def test_a_mistyped_command_is_named_with_the_nearest_one():
    p = _cli("compar", "x.json")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == "fastcpu: error: unknown command 'compar': did you mean 'compare'?"


def test_check_of_only_methods_that_report_no_cpu_checks_nothing_and_fails():
    quiet = [m.name for m in fastcpu.methods() if m.available and not m.reports_cpu]
    if not quiet:
        pytest.skip("every available method reports the CPU on this machine")
    p = _cli("check", "--methods", quiet[0])
    assert p.returncode == 1
    assert "nothing asked for was checked" in p.stderr and quiet[0] in p.stderr


def test_a_single_run_says_why_the_interval_is_missing():
    p = _cli("--runs", "1", "--methods", "gdt")
    assert p.returncode == 0, p.stderr
    assert "too few undisturbed pairs for an interval (gdt)" in p.stdout


def test_plot_counts_in_ns_draws_ns(tmp_path):
    res = fastcpu.measure(50, ["gdt"])
    res.save(tmp_path / "r.json")
    p = _cli("plot", str(tmp_path / "r.json"), "--kind", "counts", "--unit", "ns", "--out", str(tmp_path / "r.png"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.png").stat().st_size > 0
    import matplotlib
    matplotlib.use("Agg")
    from fastcpu import plot
    ax = plot.distributions(res, unit="ns").axes[0]
    assert "ns" in ax.get_xlabel()
