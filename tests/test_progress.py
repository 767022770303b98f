"""Progress on a terminal: [n/N] and the time left on stderr when it is a
terminal, nothing at all when it is piped or redirected."""

import io
import math
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from fastcpu.cli.output import ProgressLine, format_time_left, seconds_left
from hostnoise import on_some_try

DATA = sorted(str(p) for p in (Path(__file__).resolve().parent.parent / "data").glob("*.json*"))


@pytest.mark.parametrize("seconds, text", [
    (0.0, "under 1s left"),
    (0.4, "under 1s left"),
    (1.0, "about 1s left"),
    (12.4, "about 12s left"),
    (59.4, "about 59s left"),
    (59.6, "about 1m00s left"),  # rounded first: never "about 60s"
    (185.0, "about 3m05s left"),
    (3599.4, "about 59m59s left"),
    (3720.0, "about 1h02m left"),
    (90000.0, "about 25h00m left"),
    (math.nan, ""),
    (math.inf, ""),
    (-1.0, ""),
])
def test_format_time_left(seconds, text):
    assert format_time_left(seconds) == text


def test_seconds_left_is_the_average_step_times_the_steps_to_go():
    assert seconds_left(10.0, 2, 5) == 15.0
    assert seconds_left(3.0, 3, 3) == 0.0
    assert math.isnan(seconds_left(0.0, 0, 5))  # nothing done: no pace yet
    assert math.isnan(seconds_left(-1.0, 1, 5))
    assert math.isnan(seconds_left(1.0, 6, 5))


class FakeTerminal(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


def screen(text):
    """What a terminal shows of `text`'s last line, carriage returns obeyed."""
    line = []
    for part in text.split("\n")[-1].split("\r"):
        line[:len(part)] = part
    return "".join(line).rstrip()


def fake_clock(*times):
    it = iter(times)
    return lambda: next(it)


def test_a_progress_line_rewrites_itself_and_is_blanked_at_the_end():
    term = FakeTerminal(tty=True)
    progress = ProgressLine("measuring", term, clock=fake_clock(100.0, 104.0, 106.0))
    assert progress.enabled
    progress(0, 3, "a_long_method_name")
    assert screen(term.getvalue()) == "[1/3] measuring a_long_method_name..."
    progress(1, 3, "b")
    # 4 s for one step, two to go; the longer line before is blanked
    assert screen(term.getvalue()) == "[2/3] measuring b... about 8s left"
    progress(2, 3, "c")
    assert screen(term.getvalue()) == "[3/3] measuring c... about 3s left"
    progress(3, 3, None)
    assert screen(term.getvalue()) == "" and term.getvalue().endswith("\r")
    assert "\x1b" not in term.getvalue()  # plain text: no escape sequences
    progress(3, 3, None)  # a second end writes nothing more
    assert term.getvalue().count("\n") == 0


def test_nothing_is_written_where_the_stream_is_not_a_terminal():
    piped = FakeTerminal(tty=False)
    progress = ProgressLine("reading", piped)
    assert not progress.enabled
    with progress:
        progress(0, 2, "a.json")
        progress(1, 2, "b.json")
    progress(2, 2, None)
    assert piped.getvalue() == ""


def test_the_context_manager_blanks_the_line_on_an_error():
    term = FakeTerminal(tty=True)
    with pytest.raises(KeyboardInterrupt):
        with ProgressLine("measuring", term, clock=fake_clock(0.0)) as progress:
            progress(0, 2, "gdt")
            raise KeyboardInterrupt
    assert screen(term.getvalue()) == ""


def test_a_line_wider_than_the_terminal_is_cut():
    term = FakeTerminal(tty=True)  # no fileno: taken as 80 columns
    progress = ProgressLine("reading", term, clock=fake_clock(0.0))
    progress(0, 1, "x" * 200)
    assert len(screen(term.getvalue())) == 79  # the last column left free: no wrap


def test_a_terminal_that_went_away_stops_the_line_not_the_work():
    class Gone(FakeTerminal):
        def write(self, text):
            raise OSError(5, "Input/output error")

    progress = ProgressLine("measuring", Gone(tty=True), clock=fake_clock(0.0))
    progress(0, 2, "gdt")
    assert not progress.enabled
    progress(1, 2, "rdpid")
    progress(2, 2, None)


# -- through the CLI ---------------------------------------------------------------------

def cli(*args, cwd, stderr):
    return subprocess.run([sys.executable, "-m", "fastcpu", *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=stderr, timeout=300)


@pytest.mark.parametrize("args", [
    ["run", "--runs", "50", "--methods", "gdt,syscall", "--out", "r.json"],
    ["--runs", "50", "--methods", "gdt,syscall"],
    ["compare", *DATA],
], ids=["run", "table", "compare"])
def test_piped_stderr_gets_no_progress(tmp_path, args):
    p = cli(*args, cwd=tmp_path, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr
    err = p.stderr.decode()
    assert "[1/" not in err and "left" not in err and "measuring" not in err and "\r" not in err, err


def under_a_terminal(args, cwd, stream="stderr"):
    """Run the CLI with `stream` (stderr, or stdout) on a pseudo-terminal and
    the other discarded: (exit status, what the terminal got)."""
    master, slave = pty.openpty()
    other = "stdout" if stream == "stderr" else "stderr"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "fastcpu", *map(str, args)], cwd=cwd,
                                **{stream: slave, other: subprocess.DEVNULL})
    finally:
        os.close(slave)
    got = b""
    try:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            got += chunk
    finally:
        os.close(master)
        rc = proc.wait(timeout=300)
    return rc, got.decode(errors="replace")


def test_run_on_a_terminal_shows_n_of_n_and_the_time_left(tmp_path):
    rc, err = under_a_terminal(["run", "--runs", "200", "--methods", "gdt,syscall", "--out", "r.json"],
                               tmp_path)
    assert rc == 0, err
    assert "[1/2] measuring gdt..." in err
    assert "[2/2] measuring syscall..." in err and "left" in err
    before_wrote = err.split("wrote")[0]
    assert screen(before_wrote) == ""  # blanked before the command's own last line


def test_compare_on_a_terminal_shows_each_file_it_reads():
    names = [Path(d).name for d in DATA]  # short: the line fits a terminal's 80 columns
    rc, err = under_a_terminal(["compare", *names], Path(DATA[0]).parent)
    assert rc == 0, err
    assert f"[1/{len(names)}] reading {names[0]}..." in err
    assert f"[{len(names)}/{len(names)}] reading {names[-1]}..." in err and "left" in err
    assert screen(err) == ""


def test_selftest_on_a_terminal_shows_its_steps(tmp_path):
    def check():
        rc, err = under_a_terminal(["selftest", "--serialize", "lfence", "--runs", "10", "--rounds", "1"], tmp_path)
        assert rc in (0, 1), err  # 10 runs may miss a goal: the progress is what is checked here
        # (a process whose first-use rulers disagree, on a loaded host, runs no step: the next try)
        assert "self-testing lfence inline bias..." in err and "left" in err, err
        total = err.split("[1/")[1].split("]")[0]
        assert f"[{total}/{total}] self-testing lfence user " in err
        assert screen(err) == ""

    on_some_try(check)


def test_selftest_calls_progress_for_every_step():
    import fastcpu

    calls = []
    fastcpu.selftest(serialize="lfence", runs=10, rounds=1, paths=("inline",),
                     progress=lambda *a: calls.append(a))
    total = calls[0][1]
    assert [c[0] for c in calls] == list(range(total + 1))
    assert calls[0][2] == "lfence inline bias" and calls[-1] == (total, total, None)
    assert all(c[1] == total for c in calls) and total > 2
