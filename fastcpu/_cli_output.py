"""The command line's standard streams: text a terminal's encoding cannot
show printed as escapes, a closed stdout that fails on its first write and
a closed stderr that discards, a reader that left (``| head``) told once,
warnings in one escaped line, and a document written to stdout as the bytes
a file would hold (CSV escaped line by line for a terminal)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
import warnings
from collections.abc import Iterator
from typing import TextIO

from ._display import printable

__all__ = ["csv_bytes", "write_stdout", "printable_streams", "stdout_closed", "open_streams", "flushes", "say",
           "warnings_in_one_line"]


def csv_bytes(text: str, terminal: bool = False) -> bytes:
    """CSV `text` as UTF-8: as it is, but for a lone surrogate (a name
    undecodable bytes left), which UTF-8 cannot hold, written as its escape
    (``\\udcff``); for a `terminal`, each line through printable(), so that
    a label's ESC sequences show instead of acting."""
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
        raw.write(data)
        raw.flush()


#: Error handlers of a text stream that raise for a character its encoding
#: cannot hold (surrogateescape writes only lone surrogates, U+DC80..U+DCFF).
_FAILING_HANDLERS = ("strict", "surrogateescape")


@contextlib.contextmanager
def printable_streams() -> Iterator[None]:
    """Print what the terminal's encoding cannot show as escapes (``caf\\xe9``
    under ``PYTHONIOENCODING=ascii``, ``Z\\xfcrich`` under ``LC_ALL=C``)
    instead of failing after the work is done; the streams' error handlers
    are restored afterwards. Under the POSIX locale Python's stdout has the
    handler surrogateescape, which writes back undecodable bytes but fails
    on any other character outside ASCII: it is replaced too."""
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
    """Standard streams that exist while a command runs. A closed stdout
    fails on the first write (exit 1, said on stderr). A closed stderr
    discards what is said (there is no one to say it to; the exit status
    tells) where ``print(file=None)`` would have put the messages on stdout,
    after a document written there."""
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
