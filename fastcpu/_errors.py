"""fastcpu's own exceptions, and what is said where the C core is missing.

Defined here, in Python, so that the analysis kit (loading, comparing and
plotting result files) has them on any platform; the C core
(``fastcpu._core``, csrc/module.c) raises these same classes.
"""

from __future__ import annotations

import sys

__all__ = ["Error", "Unsupported", "no_core"]


class Error(RuntimeError):
    """Base class of fastcpu's own errors."""


class Unsupported(Error):
    """This machine, kernel or libc cannot run what was asked; the message says why."""


Error.__module__ = Unsupported.__module__ = "fastcpu"


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
