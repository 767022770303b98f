"""How results show themselves: the pieces of a one-line ``repr()`` and of
the HTML table a notebook shows (``_repr_html_``).

It knows nothing of results: callers hand it text and numbers. Every string
that reaches the HTML passes through :func:`escape` here, and every string
from a file or an argument that reaches a terminal through :func:`printable`,
because labels, method names and machine facts come from user files (a label
holding ESC sequences would otherwise retitle or clear the terminal of
whoever prints it).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

__all__ = ["escape", "printable", "one_line", "figure", "plus_minus", "interval", "table", "paragraph",
           "bullets", "details", "block", "DASH"]

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
