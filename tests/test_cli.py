"""python -m fastcpu: the table, its options, and bad options."""

import json
import os
import re
import subprocess
import sys

import pytest

import fastcpu
from fastcpu.cli import main


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
    from fastcpu import cli as _cli

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
    assert p.returncode == 3  # nothing checked: not a wrong CPU
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


# -- run's outputs: standard output, formats, the counter; one overwrite policy ----------

def _measured(names):
    """Those of `names` this machine can time (the others are recorded as unavailable)."""
    available = {m.name for m in fastcpu.methods() if m.available}
    return [n for n in names if n in available]


def test_run_out_dash_prints_the_result_document_alone_and_load_reads_it(tmp_path):
    p = subprocess.run([sys.executable, "-m", "fastcpu", "run", "--out", "-", "--runs", "50",
                        "--methods", "rdpid,gdt"], cwd=tmp_path, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert os.listdir(tmp_path) == []  # no file named "-"
    doc = json.loads(p.stdout)  # the document alone: no table, no "wrote" line
    assert doc["format"] == "fastcpu-results"
    assert not p.stdout.startswith(b"\x1f\x8b")  # plain JSON, not gzip
    (tmp_path / "r.json").write_bytes(p.stdout)
    res = fastcpu.load(tmp_path / "r.json")
    assert list(res) == _measured(["rdpid", "gdt"])
    assert set(res.unavailable) == {"rdpid", "gdt"} - set(res)
    err = p.stderr.decode()
    assert "BEST" in err  # the people's part went to stderr
    assert "measuring" not in err  # progress only on a terminal (tests/test_progress.py)


def test_run_out_dev_stdout_writes_where_stdout_points(tmp_path):
    with open(tmp_path / "r.json", "wb") as f:  # as `> r.json` in a shell
        p = subprocess.run([sys.executable, "-m", "fastcpu", "run", "--out", "/dev/stdout", "--runs", "50",
                            "--methods", "gdt"], cwd=tmp_path, stdout=f, stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 0, p.stderr
    assert list(fastcpu.load(tmp_path / "r.json")) == ["gdt"]
    assert b"BEST" in p.stderr


def test_a_file_named_dash_is_written_as_dot_slash_dash(tmp_path):
    p = subprocess.run([sys.executable, "-m", "fastcpu", "run", "--out", "./-", "--runs", "20",
                        "--methods", "gdt"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "BEST" in p.stdout and "wrote ./-" in p.stderr
    assert list(fastcpu.load(tmp_path / "-")) == ["gdt"]


def test_run_format_gbench_is_google_benchmarks_schema_with_every_method(tmp_path):
    from test_export import check_gbench_schema

    p = _cli("run", "--out", str(tmp_path / "g.json"), "--format", "gbench", "--runs", "50",
             "--methods", "rdpid,gdt,syscall")
    assert p.returncode == 0, p.stderr
    assert "an export, not a result file" in p.stderr
    doc = json.loads((tmp_path / "g.json").read_text())
    check_gbench_schema(doc)
    measured = _measured(["rdpid", "gdt", "syscall"])
    # each method's single copies, then its calls back to back (the second question), each label naming its question
    assert [b["name"] for b in doc["benchmarks"]] == measured + [f"{m}/back_to_back:16" for m in measured]
    assert [b["label"].split(":")[0] for b in doc["benchmarks"]] == (
        ["one call alone"] * len(measured) + ["calls back to back"] * len(measured))
    assert all(b["time_unit"] == "ns" and b["real_time"] == b["cpu_time"] for b in doc["benchmarks"])
    with pytest.raises(fastcpu.ResultFileError):  # an export: fastcpu does not read it back
        fastcpu.load(tmp_path / "g.json")


def test_run_format_csv_on_stdout_has_the_header_and_a_row_per_method():
    from fastcpu import export

    p = _cli("run", "--out", "-", "--format", "csv", "--runs", "50", "--methods", "gdt,syscall")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ",".join(export.CSV_COLUMNS)
    assert [line.split(",")[1] for line in lines[1:]] == _measured(["gdt", "syscall"])


def test_run_counter_pmu_measures_core_cycles_or_says_why_not(tmp_path):
    try:
        fastcpu.bench("gdt", 10, counter="pmu")
    except fastcpu.Unsupported as exc:
        reason = str(exc)
    else:
        reason = None
    p = _cli("run", "--out", str(tmp_path / "r.json"), "--counter", "pmu", "--runs", "50", "--methods", "gdt")
    if reason is None:  # this machine has a usable PMU
        assert p.returncode == 0, p.stderr
        assert fastcpu.load(tmp_path / "r.json")["gdt"].counter in ("pmu", "pmu_user")
    else:
        assert p.returncode == 1
        assert p.stderr.splitlines() == [f"fastcpu: {reason}"]  # before measuring: no progress
        assert p.stdout == "" and not (tmp_path / "r.json").exists()


def test_plot_refuses_an_existing_image_unless_overwrite(tmp_path):
    fastcpu.measure(50, ["gdt"]).save(tmp_path / "r.json")
    image = tmp_path / "r.png"
    image.write_bytes(b"old")
    p = _cli("plot", str(tmp_path / "r.json"), "--out", str(image))
    assert p.returncode == 2
    assert p.stderr.splitlines() == [f"fastcpu: error: {image} exists: pass --overwrite to replace it, "
                                     f"or choose another --out"]
    assert image.read_bytes() == b"old"
    p = _cli("plot", str(tmp_path / "r.json"), "--out", str(image), "--overwrite")
    assert p.returncode == 0, p.stderr
    assert image.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert sorted(os.listdir(tmp_path)) == ["r.json", "r.png"]  # no temporary file left


# -- issue 38 item 5: the command line, alike everywhere ---------------------------------------

def _in(cwd, *args, **kw):
    """python -m fastcpu ARGS run from `cwd` (a neutral directory), bytes out."""
    return subprocess.run([sys.executable, "-m", "fastcpu", *map(str, args)], cwd=cwd, timeout=300,
                          capture_output=True, **kw)


def _two_files(tmp_path, methods=("gdt", "rdpid")):
    from test_cli_hostile import simulated

    simulated("a", methods=methods).save(tmp_path / "a.json")
    simulated("b", methods=methods).save(tmp_path / "b.json")
    return "a.json", "b.json"


@pytest.mark.parametrize("view", [[], ["--format", "csv"], ["--csv"], ["--format", "json"],
                                  ["--format", "markdown"], ["--seed-table"], ["--ab"]])
def test_compare_out_writes_what_stdout_would_get(tmp_path, view):
    files = _two_files(tmp_path)
    printed = _in(tmp_path, "compare", *view, *files)
    assert printed.returncode == 0, printed.stderr
    p = _in(tmp_path, "compare", *view, "-o", "cmp.out", *files)
    assert (p.returncode, p.stdout, p.stderr.decode()) == (0, b"", "wrote cmp.out\n")
    assert (tmp_path / "cmp.out").read_bytes() == printed.stdout
    # an existing --out is refused before reading, as run's and plot's are
    p = _in(tmp_path, "compare", *view, "--out", "cmp.out", *files)
    assert p.returncode == 2 and b"pass --overwrite" in p.stderr
    assert _in(tmp_path, "compare", *view, "--out", "cmp.out", "--overwrite", *files).returncode == 0
    assert _in(tmp_path, "compare", *view, "--out", "-", *files).stdout == printed.stdout


def test_every_command_that_writes_a_file_spells_it_o_out():
    for command in ("run", "compare", "plot"):
        usage = " ".join(_cli(command, "--help").stdout.split())
        assert "-o OUT, --out OUT" in usage and "--overwrite" in usage, command


def test_check_takes_the_cpu_option_of_every_command_and_says_why_it_is_a_list(tmp_path):
    text = " ".join(_in(tmp_path, "check", "--help").stdout.decode().split())
    assert "--cpu CPU [CPU ...], --cpus CPU [CPU ...]" in text
    assert "check takes as a list because it sweeps CPUs" in text
    for option in ("--cpu", "--cpus"):
        p = _in(tmp_path, "check", "--methods", "gdt", option, "0")
        assert p.returncode in (0, 3), p.stderr  # 3: CPU 0 outside a cpuset here


@pytest.mark.parametrize("option", ["--cpus", "--cpu"])
@pytest.mark.parametrize("cpus, words", [("99999", "holds 99999, but this kernel has CPUs 0 to"),
                                         ("0,0", "names CPU 0 twice"), ("-1", "holds -1")])
def test_check_names_the_option_given_not_the_python_parameter(tmp_path, option, cpus, words):
    p = _in(tmp_path, "check", option, cpus)
    err = p.stderr.decode()
    assert p.returncode == 2 and err.startswith(f"fastcpu: error: {option} {words}"), err
    assert len(err.splitlines()) == 1


def test_plot_usage_shows_its_files_as_required(tmp_path):
    usage = _in(tmp_path, "plot", "--help").stdout.decode().split("\n\n")[0]
    assert re.search(r"(?<!\[)FILE \[FILE \.\.\.\]", usage), usage
    p = _in(tmp_path, "plot", "-o", "x.png")
    assert p.returncode == 2 and b"required: FILE" in p.stderr


def _piped_to_head(tmp_path, args, pipe_bytes=None):
    """`python -m fastcpu ARGS | head -n 1` with a real pipe: the first line
    read, then the read end closed while the command may still write;
    `pipe_bytes` shrinks the pipe's buffer. Returns (status, line, stderr)."""
    import fcntl

    read, write = os.pipe()
    if pipe_bytes is not None:
        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, pipe_bytes)
    proc = subprocess.Popen([sys.executable, "-m", "fastcpu", *args], cwd=tmp_path, stdout=write,
                            stderr=subprocess.PIPE)
    os.close(write)
    with os.fdopen(read, "rb") as head:
        line = head.readline()
    # the reader has left: what is still to write meets a closed pipe
    err = proc.stderr.read().decode()
    return proc.wait(timeout=300), line, err


def test_compare_csv_piped_to_head_exits_as_documented(tmp_path):
    # many methods: more CSV than one page of pipe buffer holds
    files = _two_files(tmp_path, methods=tuple(f"m{i}" for i in range(40)))
    whole = _in(tmp_path, "compare", "--csv", *files).stdout
    page = os.sysconf("SC_PAGE_SIZE")
    assert len(whole) > 4 * page
    # the reader left before all was written: 141, in silence
    status, line, err = _piped_to_head(tmp_path, ["compare", "--csv", *files], pipe_bytes=page)
    assert (status, line, err) == (141, whole.splitlines(keepends=True)[0], "")
    # all of it fit in the pipe before the reader left: done, 0 (as `seq 3 | head -n 1`)
    (tmp_path / "small").mkdir()
    _two_files(tmp_path / "small")
    status, line, err = _piped_to_head(tmp_path / "small", ["compare", "--csv", "a.json", "b.json"])
    assert (status, err) == (0, "") and line.startswith(b"machine,method,")
    # both said where the statuses are documented
    text = " ".join(_cli("compare", "--help").stdout.split())
    assert "141 the reader of the output left before all of it was written" in text
    assert "output the pipe held whole was written: 0" in text


def test_the_hypervisor_is_named_by_cpuid_not_unknown(tmp_path):
    """A report reading this machine now names the hypervisor as CPUID's leaf
    0x40000000 does (KVMKVMKVM), as a result file's facts do."""
    from fastcpu import _core

    vendor = _core.features()["hypervisor_vendor"]
    p = _in(tmp_path, "--runs", "20", "--methods", "gdt")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr
    if vendor:
        assert f"running under a hypervisor ({vendor})" in out
    else:  # metal: no hypervisor warning at all
        assert "running under a hypervisor" not in out
    assert "hypervisor (unknown)" not in out
