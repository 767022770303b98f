"""fastcpu's version: its own module at the bottom of the import graph, so
that any module can name it without importing the package."""

from __future__ import annotations

import sys
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload
import html
import math
from collections.abc import Iterable, Sequence

__all__ = ['Error', 'Unsupported', 'no_core', 'deprecated', 'ForkSafeLock', 'cached_property', 'escape', 'printable', 'one_line', 'figure', 'plus_minus', 'interval', 'table', 'paragraph', 'bullets', 'details', 'block', 'DASH']


__version__ = "0.8.7"


class Error(RuntimeError):
    """Base class of fastcpu's own errors."""


class Unsupported(Error):
    """This machine, kernel or libc cannot run what was asked; the message says why."""


Error.__module__ = Unsupported.__module__ = "fastcpu"


def deprecated(old: str, new: str, since: str, removed_in: str, stacklevel: int = 2) -> None:
    """The one way a name is deprecated: a DeprecationWarning that `old`
    (spelled as the user writes it) is deprecated since fastcpu `since` and
    goes in fastcpu `removed_in`, naming `new`, at the line that used it
    (`stacklevel` as for ``warnings.warn``, counted from the caller of this
    function: 2, the default, points at the caller's caller). A name a file
    format keeps reading is no deprecation (files written by an old fastcpu
    load for good, without a warning)."""
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
    """A ``threading.Lock`` for ``with`` blocks, fresh in a fork's child
    unless the forking thread held it."""

    __slots__ = ("_lock", "_owner", "__weakref__")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None
        _every.add(self)

    def __enter__(self) -> ForkSafeLock:
        self._lock.acquire()
        self._owner = threading.get_ident()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._owner = None
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def _after_fork_in_child(self) -> None:
        if self._owner != threading.get_ident():  # another thread's, gone
            self._lock = threading.Lock()
            self._owner = None


_every: weakref.WeakSet[ForkSafeLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_every):
        lock._after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)


class cached_property(Generic[_T]):  # noqa: N801 - named for the one it replaces
    """``functools.cached_property`` that takes no lock: computed on the
    first access and stored in the instance's ``__dict__`` (which then
    answers every later access, as a non-data descriptor allows), for pure
    values only: threads that race each compute it and store the same value.
    Works on frozen dataclasses too (the ``__dict__`` is written directly)."""

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
    """`value` as text safe to print on a terminal (or draw): each character
    ``str.isprintable()`` refuses written as ``repr()`` writes it, so that it
    shows instead of acting. Those are the C0 and C1 controls and DEL (ESC,
    BEL, CR, newline: ``\\x1b``, ``\\x07``, ``\\r``, ``\\n``), format
    characters (the bidi overrides that reorder what follows, ``\\u202e``),
    separators other than the space, and lone surrogates (``\\ud800``, which
    no UTF-8 stream can write). Everything else, backslashes and non-ASCII
    letters included, is unchanged."""
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
    """An HTML table; the first cell of each row is its header.

    Args:
        columns: the header of each column.
        rows: the cells, as text (escaped here) or numbers (shown with ``str``).
        groups: an optional header row above `columns`: (text, columns spanned).
        caption: text above the table.
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
