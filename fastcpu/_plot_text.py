"""Text on the plots: names from files drawn as plain text, figures with the precision their
interval allows, and the notes that say what a figure left out.

Every name a plot draws (a method, a machine's label or model and host, a published figure's
machine) comes from a file someone else may have written. matplotlib would parse a string
with two ``$`` as mathtext (``$\\undefinedcmd{x}$`` fails to draw, ``${{...}}$`` nested deep
exhausts the recursion limit) and hand it to LaTeX where ``text.usetex`` is set, so each text
artist the plots make is created with :data:`PLAIN` (``parse_math=False, usetex=False``);
:func:`plain` does the same for the artists a legend makes. A name is also cut to
:data:`NAME_MAX` characters with an ellipsis (a million-character label would take a minute
of text layout) after :func:`fastcpu._display.printable` has escaped what would act instead of
show.
"""

from __future__ import annotations

import math
from typing import Any

from ._display import printable

__all__ = ["PLAIN", "NAME_MAX", "name", "plain", "plus_minus_decimals", "with_interval", "more"]

#: The keyword arguments that make a matplotlib Text draw its string as written.
PLAIN: dict[str, Any] = {"parse_math": False, "usetex": False}
#: The longest name drawn; longer ones end in an ellipsis.
NAME_MAX = 60


def name(value: object, limit: int = NAME_MAX) -> str:
    """`value` as a plot draws it: :func:`printable`, at most `limit` characters
    (the last an ellipsis where it was cut)."""
    text = str(value)
    if len(text) > 4 * limit:  # escaping can only lengthen it: cut the rest unread
        text = text[: 4 * limit]
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def plain(*texts: Any) -> None:
    """Make each matplotlib Text (a legend's labels and title, a tick label) draw its
    string as written: no mathtext, no LaTeX."""
    for t in texts:
        t.set_parse_math(False)
        t.set_usetex(False)


def plus_minus_decimals(half: float) -> int:
    """Decimals for a figure with a 95% half-width `half`: down to the half-width's first
    significant digit, or its second where the first two read 10 to 35 (the Particle Data
    Group's rule: 0.094 -> 2 decimals, 0.3 -> 1, 1.1 -> 1, 12 -> 0, 1840 -> -2: hundreds),
    at most 4; 1 where there is no half-width."""
    if not (math.isfinite(half) and half > 0):
        return 1
    exponent = math.floor(math.log10(half))
    leading = half / 10.0 ** (exponent - 2)  # the first three digits, 100 to 999
    if leading >= 949.5:  # rounds up to the next power of ten
        exponent, leading = exponent + 1, 100.0
    digits = 2 if leading < 354.5 else 1
    return min(4, digits - 1 - exponent)


def _fixed(x: float, decimals: int) -> str:
    return f"{x:.{decimals}f}" if decimals >= 0 else f"{round(x, decimals):.0f}"


def with_interval(value: float, half: float) -> str:
    """``21.7 ± 1.1``: `value` and its 95% half-width `half` rounded to the decimal
    :func:`plus_minus_decimals` chooses from the interval (``555100 ± 1800``); `value`
    alone, to three significant digits, where there is no interval."""
    if not math.isfinite(value):
        return str(value)
    if not math.isfinite(half):
        return f"{value:.3g}"
    d = plus_minus_decimals(half)
    return f"{_fixed(value, d)} \u00b1 {_fixed(half, d)}"


def more(left_out: int, what: str, most: str, hint: str) -> str:
    """The note a figure shows for what it left out: ``"1,960 more methods not drawn (40
    panels at most): choose them with methods="``."""
    return f"{left_out:,} more {what} not drawn ({most} at most): {hint}"
