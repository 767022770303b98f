"""Progress of long work on a terminal: one line on stderr, rewritten in
place, saying ``[n/N]``, what is under way and about how long is left.

Only a terminal sees it: piped or redirected, nothing is written, so logs
and captured stderr hold only what the command has to say. The line is plain
text (no colours, no escape sequences): a carriage return goes back to its
start, spaces blank what is left of a longer line before, and the line is
blanked when the work ends (or stops), so what the command prints next
starts on a clean line.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from ._display import printable

__all__ = ["ProgressLine", "seconds_left", "format_time_left", "is_terminal"]


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
    """A progress line on `stream` (default ``sys.stderr``), shown only when
    it is a terminal.

    Call it as ``progress(done, total, name)``, the callback
    :func:`fastcpu.measure` takes: before step ``done + 1`` of `total`
    (``done`` finished) it shows ``[done+1/total] VERB name... about Ns
    left``, the time left from the average step so far; ``name`` ``None``
    (the work is over) blanks the line. As a context manager it blanks the
    line on the way out, an error or Ctrl-C included.

    Args:
        verb: what each step does (``'measuring'``, ``'reading'``).
        stream: where the line goes (default ``sys.stderr`` at the time of the call).
        enabled: ``None`` (default): when `stream` is a terminal;
            ``True``/``False`` force it (tests).
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
