"""Hostile text and hostile surroundings (issue 22, items 4 and 5): what a
file or the command line holds is shown, never obeyed, by every output meant
for a terminal, and `python -m fastcpu` answers everything with a line and a
documented exit status, never a traceback."""

import csv
import io
import json
import os
import subprocess
import sys

import pytest

import fastcpu
from fastcpu import _base as _display
from fastcpu.files import write as _json_document
from fastcpu.analysis.compare import format_comparison
from fastcpu.results.display import format_warnings
from fastcpu.noise import NoiseModel

#: What a hostile label holds: retitle the terminal (OSC 0 ... BEL), clear it
#: (CSI 2J), go back to the start of the line (CR), a newline to fake a row,
#: and a bidi override that reverses what follows.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rX\n\u202eevil"
#: How every terminal output must show it: as repr() writes it.
SHOWN = repr(HOSTILE)[1:-1]


def terminal_safe(text):
    """Nothing in `text` a terminal would act on: every character printable
    but the newlines between lines."""
    bad = sorted({c for c in text if not c.isprintable() and c != "\n"})
    assert not bad, f"{bad} in {text!r:.300}"
    return text


def cli(*args, cwd=None, env=None, python=(), shell="", **kw):
    """python -m fastcpu in a subprocess, its output as text (invalid UTF-8
    fails here: every output must be valid); `python`: options for Python
    (``-W error``); `shell`: redirections applied by sh before Python starts
    (``>&-`` closes stdout)."""
    if "stdout" not in kw and "stderr" not in kw:
        kw["capture_output"] = True
    command = [sys.executable, *python, "-m", "fastcpu", *map(str, args)]
    if shell:
        command = ["sh", "-c", f'exec "$@" {shell}', "sh", *command]
    p = subprocess.run(command, cwd=cwd, timeout=300, env=None if env is None else dict(os.environ, **env), **kw)
    for stream in ("stdout", "stderr"):
        data = getattr(p, stream)
        if isinstance(data, bytes):
            setattr(p, stream, data.decode("utf-8"))
    return p


def no_traceback(p):
    for sign in ("Traceback", "internal error", "Exception ignored"):
        assert sign not in p.stderr, p.stderr
    return p


def simulated(label=None, methods=("gdt", "rdpid"), machine=None, **kw):
    """Results from the noise model (no timing), with what a file could hold."""
    model = NoiseModel(step_ticks=1, overhead_ticks=50, jitter_ticks=2)
    clock = fastcpu.Clock(tsc_hz=2e9, tsc_step_ticks=1, cycles_per_tick=1.5)
    results = {m: model.simulate(10.0 + 20 * i, 300, seed=i, clock=clock, method=m)
               for i, m in enumerate(methods)}
    return fastcpu.Results(results, machine or {"model_name": "model"}, clock, "model",
                           "2025-01-01T00:00:00Z", label=label, **kw)


def save_with_surrogate_method(res, path):
    """`res` saved with its method "m_surrogate" named "m\\udcfe" in the
    file: a lone surrogate, which the constructors refuse (issue 28, item
    4) but a file written by another tool or an older fastcpu may hold."""
    from fastcpu.files import write as _json_document

    doc = res.to_document()
    for entry in doc["results"]:
        if entry["method"] == "m_surrogate":
            entry["method"] = "m\udcfe"
    path.write_bytes(_json_document.encode_document(doc, compress=path.name.endswith(".gz")))


def hostile():
    """Every text field a terminal output shows, hostile."""
    return simulated(HOSTILE, methods=("gdt", "rdpid", "m" + HOSTILE),
                     unavailable={"x" + HOSTILE: "reason " + HOSTILE}, notes=("note " + HOSTILE,))


@pytest.fixture
def files(tmp_path):
    hostile().save(tmp_path / "evil.json")
    simulated("plain").save(tmp_path / "plain.json")
    return tmp_path / "evil.json", tmp_path / "plain.json"


# -- 4. text from a file or the command line is shown, not obeyed -----------------------------

#: What printable() must escape: C0, DEL and C1 controls, the bidi controls
#: and other format characters, a line separator, lone surrogates.
UNSAFE = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200B, 0x200E, 0x200F,
                           *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0xFEFF, 0xD800, 0xDCFF]]


def test_printable_writes_controls_bidi_and_surrogates_as_repr_does():
    for char in UNSAFE:
        shown = _display.printable(f"a{char}b")
        assert shown == "a" + repr(char)[1:-1] + "b", hex(ord(char))
        assert shown.isascii() and shown.isprintable()


def test_printable_leaves_text_as_it_is():
    text = "café 日本 \\x1b 'quoted' ☃"
    assert _display.printable(text) is text
    assert _display.one_line(HOSTILE, 20) == SHOWN[:17] + "..."


def test_every_terminal_format_of_the_library_shows_file_text_escaped(tmp_path):
    hostile().save(tmp_path / "evil.json")
    doc = json.loads((tmp_path / "evil.json").read_text())
    doc["results"][0]["caveats"] = ["caveat " + HOSTILE]  # a file may say anything
    (tmp_path / "evil.json").write_bytes(_json_document.encode_document(doc))  # sealed anew
    res, plain = fastcpu.load(tmp_path / "evil.json"), simulated("plain")
    table = fastcpu.compare(res, plain, dataframe=False)
    shown = {
        "str(Results)": str(res),
        "compare machines": format_comparison(table, "ns"),
        "compare rows": format_comparison(table, "ns", layout="rows"),
        "ComparisonTable.to_string": table.to_string(),
        "compare_ab": str(fastcpu.compare_ab(res, plain)),
        "compare_ab B": str(fastcpu.compare_ab(plain, res)),
        "seed_table": str(fastcpu.seed_table(res, published=False)),
        "warnings": format_warnings(res.values()),
    }
    for what, text in shown.items():
        terminal_safe(text)
        assert SHOWN in text, what
    assert f"note: note {SHOWN}" in shown["str(Results)"] and f"reason {SHOWN}" in shown["str(Results)"]
    assert f"only in A: m{SHOWN}" in shown["compare_ab"] and f"only in B: m{SHOWN}" in shown["compare_ab B"]
    # the table still lines up: each name padded as it is shown
    rows = res.table().splitlines()[1:2 + len(res)]
    assert len({len(line) for line in rows}) == 1, rows


def test_a_self_test_from_a_file_is_escaped():
    from fastcpu.results.selftest_report import PathCheck, SelfTest

    check = PathCheck("user" + HOSTILE, "lfence", 0.0, 0.1, {"add" + HOSTILE: 0.0})
    lines = SelfTest((check,)).lines() + SelfTest((), problem=HOSTILE + ": x").lines()
    assert all(terminal_safe(line) for line in lines)
    assert f"user{SHOWN}" in lines[1] and SHOWN in lines[2]


def test_run_prints_a_hostile_label_escaped_and_keeps_it_in_the_file(tmp_path):
    p = no_traceback(cli("run", "--runs", "10", "--methods", "gdt", "--out", "r.json", "--label", HOSTILE,
                         cwd=tmp_path))
    assert p.returncode == 0, p.stderr
    terminal_safe(p.stdout + p.stderr)
    assert p.stdout.startswith(SHOWN + ", measured ")
    assert fastcpu.load(tmp_path / "r.json").label == HOSTILE  # the file is faithful


@pytest.mark.parametrize("view", [[], ["--ab"], ["--seed-table"], ["--unit", "ticks"]],
                         ids=["table", "ab", "seed-table", "ticks"])
def test_compare_shows_a_hostile_file_escaped(files, view):
    evil, plain = files
    p = no_traceback(cli("compare", *view, evil, plain))
    assert p.returncode == 0, p.stderr
    terminal_safe(p.stdout + p.stderr)
    assert SHOWN in p.stdout


def test_compare_csv_and_json_stay_faithful_when_piped(files):
    evil, plain = files
    p = no_traceback(cli("compare", "--format", "csv", evil, plain))
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert {r["machine"] for r in rows} == {HOSTILE, "plain"}
    assert "m" + HOSTILE in {r["method"] for r in rows}
    p = no_traceback(cli("compare", "--format", "json", evil, plain))
    assert p.returncode == 0, p.stderr
    assert p.stdout.isascii()  # JSON escapes control characters itself
    assert {r["machine"] for r in json.loads(p.stdout)} == {HOSTILE, "plain"}


def test_csv_printed_on_a_terminal_is_escaped_as_ls_escapes_names(files):
    evil, plain = files
    from test_progress import under_a_terminal

    rc, out = under_a_terminal(["compare", "--format", "csv", evil, plain], evil.parent, stream="stdout")
    assert rc == 0
    terminal_safe(out.replace("\r\n", "\n"))  # the terminal's own line ends
    assert "\ufffd" not in out  # valid UTF-8
    assert SHOWN.split("\\n")[0] in out  # the newline in the label is a quoted line break of the CSV


def test_messages_quoting_a_hostile_path_or_argument_are_escaped(tmp_path):
    for args in (["compare", f"missing{HOSTILE}.json"],
                 ["plot", "--out", f"x{HOSTILE}.png", "missing.json"],
                 ["run", "--out", f"nodir{HOSTILE}/x.json"],
                 ["show", HOSTILE],
                 ["check", "--methods", HOSTILE],
                 ["--methods", HOSTILE],
                 [f"--{HOSTILE}"]):
        p = no_traceback(cli(*args, cwd=tmp_path))
        assert p.returncode == 2, (args, p.stderr)
        terminal_safe(p.stderr)
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("fastcpu: error: "), p.stderr


def test_the_progress_line_escapes_a_hostile_path():
    from fastcpu.cli.output import ProgressLine

    out = io.StringIO()
    line = ProgressLine("reading", out, enabled=True)
    line(0, 2, HOSTILE)
    assert out.getvalue().startswith("\r") and SHOWN in out.getvalue()
    terminal_safe(out.getvalue()[1:])  # the one carriage return is the line's own


# -- 4. text UTF-8 cannot hold: refused at the door, shown escaped everywhere else ----------

def test_a_label_of_bytes_that_are_not_utf8_is_refused_before_measuring(tmp_path):
    # the shell hands Python $'\xff\xfe' as '\udcff\udcfe' (surrogateescape); before,
    # run wrote it into the file and plot failed on it with a 4-line matplotlib message
    p = no_traceback(cli("run", "--runs", "10", "--methods", "gdt", "--out", "r.json",
                         "--label", os.fsdecode(b"\xff\xfe"), cwd=tmp_path))
    assert p.returncode == 2
    assert p.stderr.splitlines() == ["fastcpu: error: argument --label: the label '\\udcff\\udcfe' holds "
                                     "the byte 0xff, which is not UTF-8: give the label as UTF-8 text"]
    assert os.listdir(tmp_path) == [] and p.stdout == ""


@pytest.fixture
def unencodable(tmp_path):
    """A file whose machine and method names hold lone surrogates (which
    JSON's \\ud800 escape can carry, and a host whose name is not UTF-8
    gives): loading replaces each with U+FFFD, once, so every output can
    write them."""
    machine = {"model_name": "CPU\ud800", "hostname": "host" + os.fsdecode(b"\xff")}
    save_with_surrogate_method(simulated(None, methods=("gdt", "rdpid", "m_surrogate"), machine=machine),
                               tmp_path / "u.json")
    save_with_surrogate_method(simulated("plain", methods=("gdt", "rdpid", "m_surrogate")), tmp_path / "plain.json")
    return tmp_path / "u.json", tmp_path / "plain.json"


@pytest.mark.parametrize("view", [[], ["--format", "csv"], ["--format", "json"], ["--ab"], ["--seed-table"]],
                         ids=["table", "csv", "json", "ab", "seed-table"])
def test_compare_never_fails_to_encode_a_name(unencodable, view):
    # before: exit 2, "'utf-8' codec can't encode character '\ud800'"
    p = no_traceback(cli("compare", *view, *unencodable))  # cli() decodes stdout as strict UTF-8
    assert p.returncode == 0, p.stderr
    assert "codec" not in p.stderr
    terminal_safe(p.stderr)
    if view == ["--format", "json"]:
        assert {r["machine"] for r in json.loads(p.stdout)} == {"CPU\ufffd on host\ufffd", "plain"}
    else:
        assert "CPU\ufffd on host\ufffd" in p.stdout
    if view != ["--format", "csv"]:
        terminal_safe(p.stdout)


def test_plot_draws_names_it_cannot_encode_escaped(unencodable):
    u, plain = unencodable
    for args in (["plot", u, "--out", "one.png"], ["plot", u, plain, "--out", "two.svg"],
                 ["plot", u, "--kind", "ecdf", "--out", "e.png"]):
        p = no_traceback(cli(*args, cwd=u.parent))
        assert p.returncode == 0, p.stderr
        assert (u.parent / args[-1]).stat().st_size > 0
    assert "CPU\ufffd" in (u.parent / "two.svg").read_text()


def test_a_file_holding_such_a_label_loads_it_replaced_once(tmp_path):
    simulated("plain").save(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    doc["label"] = "x\ud800"  # JSON can carry it; no output can write it
    (tmp_path / "s.json").write_bytes(_json_document.encode_document(doc))
    assert fastcpu.load(tmp_path / "s.json").label == "x\ufffd"
    for view in ([], ["--format", "csv"], ["--ab"], ["--seed-table"]):
        p = no_traceback(cli("compare", *view, "s.json", "s.json", cwd=tmp_path))
        assert p.returncode == 0 and "x\ufffd" in p.stdout, p.stderr
        assert "codec" not in p.stderr


# -- 5. whatever surrounds it, a line and a documented exit status, never a traceback ------------

def test_run_to_a_closed_stdout_is_refused_before_measuring(tmp_path):
    # before: AttributeError: 'NoneType' object has no attribute 'flush', after measuring
    p = no_traceback(cli("run", "--runs", "10", "--methods", "gdt", "--out", "-", shell=">&-", cwd=tmp_path))
    assert p.returncode == 2
    assert p.stderr.splitlines() == ["fastcpu: error: --out -: standard output is closed: name a file, or "
                                     "redirect standard output instead of closing it"]


def test_a_table_for_a_closed_stdout_fails_in_one_line(files):
    # before: print() dropped everything and the status was 0
    p = no_traceback(cli("compare", files[0], shell=">&-"))
    assert p.returncode == 1
    assert p.stderr.splitlines() == ["fastcpu: cannot write standard output: it is closed (redirect it to "
                                     "/dev/null instead of closing it)"]


def test_a_closed_stderr_never_sends_messages_into_stdout(tmp_path, files):
    # before: print(file=None) wrote the table after the document on stdout
    p = no_traceback(cli("run", "--runs", "10", "--methods", "gdt", "--out", "-", shell="2>&-", cwd=tmp_path))
    assert p.returncode == 0
    assert list(json.loads(p.stdout)["results"][0]) and p.stdout.rstrip().endswith("}")
    p = cli("compare", "missing.json", shell="2>&-", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")


def with_a_broken(stream, *args, cwd=None):
    """python -m fastcpu with `stream` ('stdout' or 'stderr') a pipe whose reader has left."""
    read, write = os.pipe()
    os.close(read)
    try:
        other = "stderr" if stream == "stdout" else "stdout"
        p = subprocess.run([sys.executable, "-m", "fastcpu", *map(str, args)], cwd=cwd, timeout=300,
                           **{stream: write, other: subprocess.PIPE})
    finally:
        os.close(write)
    return p.returncode, getattr(p, other).decode()


@pytest.mark.parametrize("view", [[], ["--format", "csv"], ["--format", "json"], ["--seed-table"]],
                         ids=["table", "csv", "json", "seed-table"])
def test_a_reader_gone_from_stdout_is_status_141_in_silence(files, view):
    rc, err = with_a_broken("stdout", "compare", *view, *files)
    assert (rc, err) == (141, "")


def test_a_reader_gone_from_stdout_of_run_out_dash(tmp_path):
    rc, err = with_a_broken("stdout", "run", "--runs", "10", "--methods", "gdt", "--out", "-", cwd=tmp_path)
    # nothing on stderr but, on a busy host, the clock's calibration warning
    said = [line for line in err.splitlines()
            if not line.startswith("fastcpu: warning: cycles_per_tick could not be calibrated cleanly")]
    assert (rc, said) == (141, [])


def test_a_reader_gone_from_stderr_keeps_the_status(tmp_path):
    # before: the message's own BrokenPipeError made a bad file exit 1
    rc, out = with_a_broken("stderr", "compare", "missing.json", cwd=tmp_path)
    assert (rc, out) == (2, "")
    rc, out = with_a_broken("stderr", "run", "--runs", "10", "--methods", "gdt", "--out", "-", cwd=tmp_path)
    assert rc in (0, 141) and json.loads(out)["format"] == "fastcpu-results"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_disk_under_stdout_is_one_line(files):
    with open("/dev/full", "w") as full:
        p = no_traceback(cli("compare", files[0], stdout=full, stderr=subprocess.PIPE))
    assert p.returncode == 1 and p.stderr == "fastcpu: No space left on device\n"


#: run, with measure() warning as clock() does on a busy host (CalibrationWarning):
#: a host-independent stand-in for the warning that escaped as a traceback in
#: about half of quiet runs under -W error.
WARNING_RUN = """
import sys, warnings
from fastcpu import cli as _cli
from fastcpu.instrument.timebase import CalibrationWarning
measure = _cli.measure
def warning_measure(*args, **kw):
    warnings.warn("cycles_per_tick could not be calibrated cleanly \x1b[2J", CalibrationWarning)
    return measure(*args, **kw)
_cli.measure = warning_measure
sys.exit(_cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("python", [[], ["-W", "error"]], ids=["shown", "-W error"])
def test_a_warning_is_one_line_and_under_w_error_exit_status_1(tmp_path, python):
    p = no_traceback(subprocess.run([sys.executable, *python, "-c", WARNING_RUN, "run", "--runs", "10",
                                     "--methods", "gdt", "--out", "-"], cwd=tmp_path, capture_output=True,
                                    text=True, timeout=300))
    terminal_safe(p.stderr)
    if python:
        assert (p.returncode, p.stdout) == (1, "")
        assert p.stderr.splitlines() == ["fastcpu: error: CalibrationWarning: cycles_per_tick could not be "
                                         "calibrated cleanly \\x1b[2J (a warning, made an error by -W error)"]
    else:
        assert p.returncode == 0 and json.loads(p.stdout)
        assert p.stderr.splitlines()[0] == "fastcpu: warning: cycles_per_tick could not be calibrated cleanly " \
                                           "\\x1b[2J"


def test_a_real_run_under_w_error_ends_in_a_line_either_way(tmp_path):
    p = no_traceback(cli("run", "--runs", "50", "--methods", "gdt", "--out", "-", python=["-W", "error"],
                         cwd=tmp_path))
    if p.returncode:  # a warning on this host, now: its line, exit status 1
        assert p.returncode == 1 and len(p.stderr.splitlines()) == 1, p.stderr
        assert p.stderr.startswith("fastcpu: error: ") and "-W error" in p.stderr
    else:
        assert json.loads(p.stdout)["format"] == "fastcpu-results"


def test_help_documents_every_exit_status():
    p = cli("--help")
    text = " ".join(p.stdout.split())
    for status in ("0 done", "1 failed", "2 a bad option", "130 interrupted", "141 the reader"):
        assert status in text


# -- 5. a legal name is written; the temporary file beside it stays within NAME_MAX ---------------

def name_of(tmp_path, size, char="a", suffix=".json"):
    """A file name of `size` bytes in UTF-8."""
    width = len(char.encode())
    stem = char * ((size - len(suffix)) // width)
    return stem + "b" * (size - len(suffix) - len(stem.encode())) + suffix


@pytest.mark.parametrize("char", ["a", "é", "日"])
def test_a_name_of_name_max_bytes_is_saved_through_a_temporary_name_that_fits(tmp_path, char):
    from fastcpu.files.paths import tmp_prefix

    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    res = simulated("plain")
    for size in (230, most):  # before: ENAMETOOLONG from the temporary name, about 35 bytes longer
        path = tmp_path / name_of(tmp_path, size, char)
        assert len(os.fsencode(path.name)) == size
        res.save(path)
        assert fastcpu.load(path) == res
        prefix = tmp_prefix(path)
        assert len(os.fsencode(f"{prefix}4194304-abcdef12.tmp")) <= most  # the largest pid Linux gives
        assert path.name.startswith(prefix[1:prefix.index(".fastcpu-save-")])  # cut at a whole character
    too_long = tmp_path / name_of(tmp_path, most + 1)
    with pytest.raises(ValueError, match=f"a name of {most + 1} bytes; its file system takes at most {most}"):
        res.save(too_long)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        name_of(tmp_path, s, char) for s in (230, most))  # no temporary file left


def test_a_cut_temporary_name_is_still_found_as_a_leftover(tmp_path):
    from fastcpu.files.paths import tmp_prefix

    path = tmp_path / name_of(tmp_path, os.pathconf(tmp_path, "PC_NAME_MAX"))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()  # a pid no process has now
    leftover = tmp_path / f"{tmp_prefix(path)}{gone}-abcdef12.tmp"
    leftover.write_text("x")
    simulated("plain").save(path)
    assert not leftover.exists() and fastcpu.load(path).label == "plain"


@pytest.mark.parametrize("where", ["fsync", "link", "replace"])
def test_a_failed_write_names_the_target_not_the_temporary_file(tmp_path, monkeypatch, where):
    import errno

    from fastcpu.files import paths as _atomicfile

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))

    monkeypatch.setattr(_atomicfile.os, where, full)
    path = tmp_path / "r.json"
    with pytest.raises(OSError) as info:
        simulated("plain").save(path, overwrite=where == "replace")
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert ".tmp" not in str(info.value)
    assert os.listdir(tmp_path) == []  # the temporary file is gone too


def test_run_writes_a_230_byte_name_and_refuses_a_too_long_one_before_measuring(tmp_path):
    name = name_of(tmp_path, 230)
    p = no_traceback(cli("run", "--runs", "10", "--methods", "gdt", "--out", name, cwd=tmp_path))
    assert p.returncode == 0, p.stderr
    # the host may add its clock's calibration warning (a busy or moving core clock); nothing else
    said = [line for line in p.stderr.splitlines()
            if not line.startswith("fastcpu: warning: cycles_per_tick could not be calibrated cleanly")]
    assert os.listdir(tmp_path) == [name] and said == [f"wrote {name}"]
    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    for command in (["run", "--runs", "10", "--methods", "gdt"], ["plot", name]):
        p = no_traceback(cli(*command, "--out", name_of(tmp_path, most + 1, suffix=".png"), cwd=tmp_path))
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr.endswith(f": a name of {most + 1} bytes; its file system takes at most {most}: "
                                 "choose a shorter name\n") and len(p.stderr.splitlines()) == 1
    assert os.listdir(tmp_path) == [name]


# -- every subcommand, hostile inputs: a line and a documented status, never a traceback ----------

@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    """Files a hostile or broken world hands the CLI."""
    d = tmp_path_factory.mktemp("hostile")
    hostile().save(d / "evil.json")
    save_with_surrogate_method(simulated(None, machine={"model_name": "CPU\ud800"}, methods=("gdt", "m_surrogate")),
                               d / "unenc.json")
    (d / "garbage.json").write_bytes(b"\xff\xfe\x1b[2J\x00" * 50)
    (d / "empty.json").write_bytes(b"")
    simulated("plain").save(d / "whole.json.gz")
    (d / "cut.json.gz").write_bytes((d / "whole.json.gz").read_bytes()[:200])
    doc = json.loads((d / "evil.json").read_text())
    doc["results"][0]["runs"] = 10**30
    (d / "huge.json").write_text(json.dumps(doc))
    doc = json.loads((d / "evil.json").read_text())
    doc["label"] = "\ud800" + HOSTILE
    (d / "surrogate.json").write_text(json.dumps(doc))
    doc["label"], doc["results"] = None, "\x1b[2J"
    (d / "types.json").write_text(json.dumps(doc))
    (d / "dir.json").mkdir()
    return d


FILES = ["evil.json", "unenc.json", "garbage.json", "empty.json", "cut.json.gz", "huge.json", "surrogate.json",
         "types.json", "dir.json", f"missing{HOSTILE}.json"]
MEASURE = ["--runs", "10", "--methods", "gdt"]
HOSTILE_RUNS = [
    [*MEASURE, "--cpu", HOSTILE],
    ["--runs", str(10**30)],
    ["--methods", f"gdt,{HOSTILE}"],
    ["run", *MEASURE, "--out", "-", "--label", HOSTILE],
    ["run", *MEASURE, "--out", "-", "--label", os.fsdecode(b"\xff")],
    ["run", *MEASURE, "--out", "dir.json", "--overwrite"],
    ["run", *MEASURE, "--out", f"{HOSTILE}/x.json"],
    ["run", "--runs", "10", "--methods", "gdt", "--out", "-", "--format", "csv", "--label", HOSTILE],
    *(["compare", f] for f in FILES),
    ["compare", "evil.json", "unenc.json", "whole.json.gz"],
    ["compare", "--ab", "evil.json", "unenc.json"],
    ["compare", "--seed-table", "evil.json", "unenc.json"],
    ["compare", "--format", "csv", "evil.json", "unenc.json"],
    ["compare", "--unit", HOSTILE, "evil.json"],
    *(["plot", f, "--out", "x.png", "--overwrite"] for f in FILES[:4]),
    ["plot", "evil.json", "unenc.json", "--out", "y.svg", "--overwrite"],
    ["plot", "evil.json", "--methods", HOSTILE, "--out", "z.png"],
    ["plot", "evil.json", "--out", f"{HOSTILE}.png"],
    ["check", "--methods", HOSTILE],
    ["check", "--cpus", HOSTILE],
    ["check", "--methods", "rdpid", "--cpus", "0"],
    ["selftest", "--cpu", HOSTILE],
    ["selftest", "--runs", "10", "--rounds", "1", "--serialize", "lfence"],
    ["show", HOSTILE],
    ["show", "gdt", "--disassembler", "none"],
    [HOSTILE],
    [f"--{HOSTILE}"],
]


@pytest.mark.parametrize("python", [[], ["-W", "error"]], ids=["plain", "-W error"])
@pytest.mark.parametrize("args", HOSTILE_RUNS, ids=lambda a: " ".join(_display.one_line(x, 20) for x in a))
def test_every_subcommand_answers_hostile_input_without_a_traceback(hostile_dir, args, python):
    p = no_traceback(cli(*args, python=python, cwd=hostile_dir))
    assert p.returncode in (0, 1, 2), (p.returncode, p.stderr)
    terminal_safe(p.stderr)
    if "csv" not in args:
        terminal_safe(p.stdout)
    if p.returncode:  # said on stderr, or a report on stdout that says FAIL (selftest, check)
        assert p.stderr.splitlines()[-1:] and p.stderr.splitlines()[-1].startswith("fastcpu") \
            or "FAIL" in p.stdout or "disagree" in p.stdout, (p.stdout, p.stderr)
