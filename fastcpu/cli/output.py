"""The standard streams of a command, and the progress of long work on a terminal: one plain
line on stderr, ``[n/N]``, what is under way and about how long is left, blanked at the end;
nothing when stderr is not a terminal.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO
import contextlib
import errno
import io
import warnings
from collections.abc import Iterator

from .._base import printable

__all__ = ['ProgressLine', 'seconds_left', 'format_time_left', 'is_terminal', 'csv_bytes', 'write_stdout', 'printable_streams', 'stdout_closed', 'open_streams', 'flushes', 'say', 'warnings_in_one_line']


def seconds_left(elapsed_s: float, done: int, total: int) -> float:
    """Seconds still to go when `done` of `total` steps took `elapsed_s`
    seconds, at the pace so far (each step as long as the average one); NaN
    before the first step is done."""
    if done <= 0 or total < done or not math.isfinite(elapsed_s) or elapsed_s < 0:
        return math.nan
    return elapsed_s / done * (total - done)


def format_time_left(seconds: float) -> str:
    """``'about 12s left'``, ``'about 3m05s left'``, ``'about 1h02m left'``,
    ``'under 1s left'``; ``''`` when it is not known (NaN, infinite or negative)."""
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 1:
        return "under 1s left"
    whole = round(seconds)
    if whole < 60:
        return f"about {whole}s left"
    if whole < 3600:
        return f"about {whole // 60}m{whole % 60:02d}s left"
    hours, rest = divmod(whole, 3600)
    return f"about {hours}h{rest // 60:02d}m left"


def is_terminal(stream: TextIO | None) -> bool:
    """Whether `stream` is a terminal (not a pipe, a file, closed or None)."""
    if stream is None:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


def _columns(stream: TextIO) -> int:
    """The terminal's width: a line as wide wraps, and a carriage return then
    goes back to the start of its last row only."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80
    return columns if columns > 0 else 80  # a terminal that never said its size (a fresh pty)


class ProgressLine:
    """A progress line on `stream`, shown only when it is a terminal.

    Call it as ``progress(done, total, name)``, the callback :func:`fastcpu.measure` takes;
    ``name`` ``None`` blanks the line, as leaving it as a context manager does (errors included).

    Args:
        verb: what each step does (``'measuring'``, ``'reading'``).
        stream: where the line goes (default ``sys.stderr`` at the time of the call).
        enabled: ``None`` (default): when `stream` is a terminal; ``True``/``False`` force it.
        clock: the time in seconds (``time.monotonic``).
    """

    def __init__(self, verb: str = "measuring", stream: TextIO | None = None, *,
                 enabled: bool | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.verb = verb
        self.stream = sys.stderr if stream is None else stream
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self._clock = clock
        self._start: float | None = None
        self._shown = 0  # characters on the line now

    def __call__(self, done: int, total: int, name: str | None) -> None:
        if name is None:
            self.clear()
            return
        if not self.enabled:
            return
        now = self._clock()
        if self._start is None:
            self._start = now
        left = format_time_left(seconds_left(now - self._start, done, total))
        self.show(f"[{done + 1}/{total}] {self.verb} {name}..." + (f" {left}" if left else ""))

    def show(self, text: str) -> None:
        """Replace the line with `text` (cut to the terminal's width)."""
        if not self.enabled:
            return
        # the name may be a path from the command line: escaped, it cannot
        # move the cursor or retitle the terminal
        text = printable(text)[:max(_columns(self.stream) - 1, 1)]
        self._write("\r" + text + " " * max(self._shown - len(text), 0))
        self._shown = len(text)

    def clear(self) -> None:
        """Blank the line and go back to its start (nothing when nothing is shown)."""
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on without it
            self.enabled = False
            self._shown = 0

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.clear()


def csv_bytes(text: str, terminal: bool = False) -> bytes:
    """CSV `text` as UTF-8, a lone surrogate written as its escape; for a `terminal` each line through printable()."""
    if terminal:
        text = "\n".join(printable(line) for line in text.split("\n"))
    return text.encode("utf-8", "backslashreplace")


def write_stdout(data: bytes) -> None:
    """`data` on standard output as it would be in a file: bytes, not
    re-encoded for the terminal."""
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # replaced by a text-only stream (tests, IDEs)
        sys.stdout.write(data.decode("utf-8"))
    else:
        # a raw or buffered write may take part of a large one and return its
        # count (a pipe whose reader left mid-write): the rest is written
        # again, where the closed pipe is told (BrokenPipeError: 141)
        view = memoryview(data)
        while view:
            view = view[raw.write(view) or 0:]
        raw.flush()


#: Error handlers of a text stream that raise for a character its encoding
#: cannot hold (surrogateescape writes only lone surrogates, U+DC80..U+DCFF).
_FAILING_HANDLERS = ("strict", "surrogateescape")


@contextlib.contextmanager
def printable_streams() -> Iterator[None]:
    """Print what the terminal's encoding cannot show as escapes instead of failing after the work
    (surrogateescape replaced too); the streams' error handlers are restored afterwards.
    """
    changed = []
    for stream in (sys.stdout, sys.stderr):
        errors = getattr(stream, "errors", None)
        if errors in _FAILING_HANDLERS and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):
                continue
            changed.append((stream, errors))
    try:
        yield
    finally:
        for stream, errors in changed:
            try:
                stream.reconfigure(errors=errors)
            except (AttributeError, ValueError, OSError):
                pass


class _ClosedOutput(io.TextIOBase):
    """Standard output when its descriptor was closed before Python started
    (``>&-``), where Python leaves ``sys.stdout`` None and print() drops
    everything: each write fails instead, as one to a closed descriptor does."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "cannot write standard output: it is closed "
                                   "(redirect it to /dev/null instead of closing it)")


def stdout_closed() -> bool:
    return isinstance(sys.stdout, _ClosedOutput)


@contextlib.contextmanager
def open_streams() -> Iterator[None]:
    """Standard streams that exist while a command runs: a closed stdout fails on the first write
    (exit 1); a closed stderr discards what is said.
    """
    saved = sys.stdout, sys.stderr
    null = None
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()
    if sys.stderr is None:
        sys.stderr = null = open(os.devnull, "w")
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        if null is not None:
            null.close()


def _discard(stream: TextIO) -> None:
    """Point `stream`'s descriptor at /dev/null: what its buffer holds, and
    Python's flush at exit, then go nowhere instead of failing (which would
    print 'Exception ignored' and make the exit status 120)."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def flushes(stream: TextIO) -> bool:
    """Whether `stream` can be flushed; if not (a pipe whose reader left, a
    full disk), it is :func:`_discard`-ed."""
    try:
        stream.flush()
    except (OSError, ValueError):
        _discard(stream)
        return False
    return True


def say(text: str) -> None:
    """`text` as one line on stderr, escaped (it may quote a file or an
    argument); nothing when stderr cannot take it (a pipe nobody reads):
    the exit status still tells."""
    try:
        print(printable(text), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        _discard(sys.stderr)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """warnings.showwarning while a command runs: one line, escaped, instead
    of two naming fastcpu's source."""
    say(f"fastcpu: warning: {message}")


@contextlib.contextmanager
def warnings_in_one_line() -> Iterator[None]:
    with warnings.catch_warnings():  # restores showwarning afterwards
        warnings.showwarning = _show_warning
        yield
