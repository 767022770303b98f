"""The base every room stands on: ``__version__``, ``fastcpu.Error`` and ``Unsupported``
(the C core raises these), fork-safe locks, the one deprecation warning, and text made safe
to print (:func:`printable`)."""

from __future__ import annotations

import sys
import os
import signal
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload
import html
import math
from collections.abc import Iterable, Sequence


def _cli_starting() -> bool:
    """Whether this process is fastcpu's command line being started: ``python
    -m fastcpu`` while runpy imports the package (``sys.argv[0]`` is
    ``'-m'`` until the module is found), or the ``fastcpu`` script pip wrote
    (its ``__main__`` imports ``fastcpu.cli``)."""
    argv = sys.argv or [""]
    orig = getattr(sys, "orig_argv", [])
    if argv[0] == "-m":
        return any(a == "-mfastcpu" or (a == "-m" and b == "fastcpu") for a, b in zip(orig, orig[1:] + [""]))
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if not (isinstance(argv[0], str) and os.path.basename(argv[0]) == "fastcpu" and main == argv[0]):
        return False
    try:
        with open(main, "rb") as f:
            return b"fastcpu.cli" in f.read(4096)
    except OSError:
        return False


def _interrupted_starting(signum: int, frame: object) -> None:
    """SIGINT while the command line's modules are imported: nothing is done
    yet, so one line and exit 130, as main() says for Ctrl-C later (Python's
    own handling would print the import chain's traceback and die by SIGINT)."""
    try:
        os.write(2, b"fastcpu: interrupted\n")
    except OSError:
        pass
    os._exit(130)


def cli_started() -> None:
    """The command line's imports are done (main() runs): Ctrl-C raises
    KeyboardInterrupt again, which main() answers (files cleaned up)."""
    if signal.getsignal(signal.SIGINT) is _interrupted_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# in the first of fastcpu's modules: the package imports numpy and the
# rest for a fifth of a second, in which Ctrl-C must not print a traceback
if _cli_starting() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    try:
        signal.signal(signal.SIGINT, _interrupted_starting)
    except ValueError:  # not the main thread
        pass


__all__ = ['Error', 'Unsupported', 'no_core', 'deprecated', 'ForkSafeLock', 'cached_property', 'escape', 'printable', 'one_line', 'figure', 'plus_minus', 'interval', 'table', 'paragraph', 'bullets', 'details', 'block', 'DASH']


__version__ = "0.9.0"


class Error(RuntimeError):
    """Base class of fastcpu's own errors."""


class Unsupported(Error):
    """This machine, kernel or libc cannot run what was asked; the message says why."""


Error.__module__ = Unsupported.__module__ = "fastcpu"


def deprecated(old: str, new: str, since: str, removed_in: str, stacklevel: int = 2) -> None:
    """Warn (DeprecationWarning) that `old` is deprecated since `since`, goes in `removed_in`, naming
    `new`, at the line that used it (`stacklevel` counted from this function's caller).
    """
    import warnings

    for release in (since, removed_in):
        if not isinstance(release, str) or release.count(".") != 2:
            raise ValueError(f"deprecated(): a release is written X.Y.Z, not {release!r}")
    warnings.warn(f"{old} is deprecated since fastcpu {since} and goes in fastcpu {removed_in}: use {new}",
                  DeprecationWarning, stacklevel=stacklevel + 1)


def no_core(what: str, why: str) -> Unsupported:
    """The error of `what` (``'fastcpu.bench()'``) where the C core could not be imported
    (`why`: the ImportError's words): it names this platform and what still works."""
    import platform

    here = f"{sys.platform}/{platform.machine() or 'unknown machine'}"
    return Unsupported(
        f"{what} needs fastcpu's C core (fastcpu._core), which times x86-64 instructions and is "
        f"built only on Linux x86-64; this is {here}, where it is not importable ({why}). "
        "The analysis kit works here: load(), Results, compare(), seed_table(), compare_ab(), "
        "the exports, fastcpu.plot and fastcpu.noise.")


_T = TypeVar("_T")


class ForkSafeLock:
    """A lock for ``with`` blocks, fresh in a fork's child unless the forking thread held it; a
    re-entry on the thread already inside it (a signal handler) raises :class:`Error` naming `what`
    it guards instead of waiting forever.
    """

    __slots__ = ("_lock", "_owner", "_depth", "what", "__weakref__")

    def __init__(self, what: str = "a fastcpu measurement (clock(), bench(), selftest() or measure())") -> None:
        self._lock = threading.RLock()  # re-entered only as said above: _depth refuses the rest
        self._owner: int | None = None
        self._depth = 0
        self.what = what
        _every.add(self)

    def __enter__(self) -> ForkSafeLock:
        me = threading.get_ident()
        if self._owner == me:  # this thread is inside already: a handler or a callback
            raise Error(f"fastcpu was called from a signal handler (or a callback) while this thread was "
                        f"inside {self.what}, which would wait for itself for good: call it outside the "
                        "handler, or set a flag there and call it after")
        self._lock.acquire()
        self._depth += 1
        self._owner = me
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        if not self._depth:
            self._owner = None
        self._lock.release()

    def locked(self) -> bool:
        if self._depth:
            return True
        if self._lock.acquire(blocking=False):  # RLock has no locked() before Python 3.14
            self._lock.release()
            return False
        return True

    def _after_fork_in_child(self) -> None:
        if self._owner != threading.get_ident():  # another thread's, gone
            self._lock = threading.RLock()
            self._owner = None
            self._depth = 0


_every: weakref.WeakSet[ForkSafeLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_every):
        lock._after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)


class cached_property(Generic[_T]):  # noqa: N801 - named for the one it replaces
    """``functools.cached_property`` without a lock, for pure values (racing threads store the same);
    works on frozen dataclasses.
    """

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        if self.attrname is not None and name != self.attrname:
            raise TypeError(f"cannot assign the same cached_property to two names "
                            f"({self.attrname!r} and {name!r})")
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("cannot use a cached_property without calling __set_name__ on it")
        value = self.func(instance)
        instance.__dict__[self.attrname] = value  # no lock: the value is pure
        return value


#: What an empty or unknown cell shows.
DASH = "\u2014"
#: The longest name a repr() shows before cutting it.
NAME_MAX = 48


def escape(value: object) -> str:
    """`value` as text that HTML shows as written (``<``, ``&`` and quotes escaped)."""
    return html.escape(str(value), quote=True)


def printable(value: object) -> str:
    """`value` as text safe to print or draw: each character ``str.isprintable()`` refuses (controls,
    bidi overrides, lone surrogates) written as ``repr()`` writes it; everything else unchanged.
    """
    text = str(value)
    if text.isprintable():  # nearly always: no copy
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def one_line(value: object, limit: int = NAME_MAX) -> str:
    """`value` as text for a one-line repr(): :func:`printable` (a newline
    from a hostile file escaped), cut to `limit` characters with ``...``."""
    text = printable(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def figure(value: float, half: float) -> str:
    """A cost and its 95% half-width for a repr(), ``7.20 +-0.91``: two
    decimals below 10, one above (``1523.4 +-12.1``)."""
    digits = 2 if max(abs(value), abs(half)) < 10 else 1
    spread = f"{half:.{digits}f}" if math.isfinite(half) else "?"
    return f"{value:.{digits}f} +-{spread}" if math.isfinite(value) else f"{value} +-{spread}"


def plus_minus(value: float, half: float, digits: int = 2, sign: str = "\u00b1") -> str:
    """``value +- half`` with `digits` decimals (``sign`` ``'+-'`` for plain text)."""
    if math.isnan(value):
        return DASH
    spread = f"{half:.{digits}f}" if math.isfinite(half) else "?"
    return f"{value:.{digits}f} {sign} {spread}"


def interval(value: float, half: float, digits: int = 2) -> str:
    """``[value - half, value + half]`` with `digits` decimals."""
    if not (math.isfinite(value) and math.isfinite(half)):
        return DASH
    return f"[{value - half:.{digits}f}, {value + half:.{digits}f}]"


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], *,
          groups: Sequence[tuple[str, int]] = (), caption: str | None = None) -> str:
    """An HTML table of `columns` and `rows` (text escaped here, numbers via ``str``); the first cell
    of each row is its header. `groups`: an optional header row of (text, columns spanned);
    `caption`: text above it.
    """
    parts = ['<table class="fastcpu">']
    if caption:
        parts.append(f"<caption>{escape(caption)}</caption>")
    parts.append("<thead>")
    if groups:
        parts.append("<tr>" + "".join(
            f'<th colspan="{int(span)}">{escape(text)}</th>' if span > 1 else f"<th>{escape(text)}</th>"
            for text, span in groups) + "</tr>")
    parts.append("<tr>" + "".join(f"<th>{escape(c)}</th>" for c in columns) + "</tr>")
    parts.append("</thead><tbody>")
    for row in rows:
        cells = list(row)
        head = f'<th style="text-align: left">{escape(cells[0])}</th>' if cells else ""
        parts.append("<tr>" + head + "".join(f"<td>{escape(c)}</td>" for c in cells[1:]) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def paragraph(text: str, bold: str | None = None) -> str:
    """A paragraph of `text`, after `bold` in bold when given."""
    lead = f"<b>{escape(bold)}</b> " if bold else ""
    return f"<p>{lead}{escape(text)}</p>"


def bullets(items: Iterable[str], title: str | None = None) -> str:
    """A bulleted list (nothing when `items` is empty), after `title` in bold."""
    items = list(items)
    if not items:
        return ""
    head = f"<p><b>{escape(title)}</b></p>" if title else ""
    return head + "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"


def details(summary: str, lines: Iterable[str]) -> str:
    """A folded block: `summary`, and `lines` as preformatted text when opened."""
    body = "\n".join(lines)
    return f"<details><summary>{escape(summary)}</summary><pre>{escape(body)}</pre></details>"


def block(*parts: str) -> str:
    """The pieces above, in one ``<div>``: what ``_repr_html_`` returns."""
    return '<div class="fastcpu">' + "".join(parts) + "</div>"
