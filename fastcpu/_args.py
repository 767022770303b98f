"""Argument checks and the constants they check against, shared by bench(), measure(), check(),
the plots, the noise model and the CLI (same messages). Imports no C core; the core's own
limits are held equal to these by tests/test_kit.py.
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Iterable
from dataclasses import dataclass

from ._base import Error


__all__ = [
    "RUNS_MAX",
    "UNROLL_MAX",
    "SERIALIZE_MODES",
    "COUNTERS",
    "DISASSEMBLERS",
    "UNITS",
    "Unit",
    "check_int",
    "plain_int",
    "plain_number",
    "check_serialize",
    "check_counter",
    "check_cpu",
    "check_cpus",
    "check_method_names",
    "check_unit",
    "denied",
    "affinity_mask",
    "check_label",
    "TIMEOUT_MAX_S",
    "check_timeout",
    "TICKS_MAX",
    "TSC_HZ_RANGE",
    "CYCLES_PER_TICK_RANGE",
    "STEP_MAX_TICKS",
    "HARNESS_BIAS_MAX_CORE_CYCLES",
    "SENTENCES_MAX",
    "SENTENCE_CHARS_MAX",
    "check_figure",
    "check_sentences",
]

#: The most timed runs one measurement takes (the C core's FC_RUNS_MAX).
RUNS_MAX: int = 100_000_000
#: The most back-to-back copies of a sequence one run times (FC_UNROLL_MAX).
UNROLL_MAX: int = 65536
#: How a run is fenced: ``'lfence'`` (the default), ``'cpuid'``, ``'rdtscp'``
#: (the C core's fc_serialize_names, in its order).
SERIALIZE_MODES: tuple[str, ...] = ("lfence", "cpuid", "rdtscp")
#: How ``fastcpu show`` prints a method's code (``method_code(disassembler=)``).
DISASSEMBLERS: tuple[str, ...] = ("auto", "objdump", "capstone", "none")
#: What a run can be timed with (``bench(counter=)``): the TSC, or the PMU's
#: core-cycle counter. A result says which in :attr:`BenchResult.counter`
#: (``'pmu_user'`` when only user-mode cycles could be counted).
COUNTERS: tuple[str, ...] = ("tsc", "pmu")

# What a figure of a result may be: wide of anything measured, narrow enough
# that every conversion and export of it stays finite. The constructors
# (Clock, Rulers, BenchResult, Results) refuse what is outside, and a result
# file's reader checks the same ranges, so that whatever is built saves and
# loads back.
#: A count per run (TSC ticks, or core cycles) is below this: 35 days of one
#: run at 3 GHz, where a counter read backwards wraps to near 2**64. Every
#: statistic reads such counts alike and exactly: a float64 holds each, and
#: their differences and deviations stay within an int64.
TICKS_MAX = 1 << 53
#: A TSC's rate, ticks per second: 1 MHz to 100 GHz.
TSC_HZ_RANGE = (1e6, 1e11)
#: Core cycles per TSC tick (a core from 1/1000 to 1000 times the TSC's rate).
CYCLES_PER_TICK_RANGE = (1e-3, 1e3)
#: The coarsest TSC step (and back-to-back read spacing), in TSC ticks:
#: about one step a second at 4 GHz.
STEP_MAX_TICKS = float(1 << 32)
#: The largest harness bias (and its 95% half-width), core cycles per copy.
HARNESS_BIAS_MAX_CORE_CYCLES = 1e6
#: The most sentences a list of caveats or notes holds, and the longest one.
SENTENCES_MAX = 100
SENTENCE_CHARS_MAX = 2000
@dataclass(frozen=True)
class Unit:
    """A unit a figure can be shown in: its `name` (key and column suffix), `words` (how text says it) and `short` (``--unit cycles``)."""

    name: str
    words: str
    short: str


#: The units a figure can be shown in: TSC ticks (the counter's own units;
#: core cycles for a PMU result), nanoseconds, core cycles. Every table,
#: plot, export and argument check reads this.
UNITS: dict[str, Unit] = {u.name: u for u in (
    Unit("ticks", "TSC ticks", "ticks"),
    Unit("ns", "ns", "ns"),
    Unit("core_cycles", "core cycles", "cycles"),
)}
#: What a caller may write for each unit: its name or its short form.
_UNIT_ALIASES = {**{u.short: u.name for u in UNITS.values()}, **{u.name: u.name for u in UNITS.values()}}


def plain_int(name: str, value: object, what: str = "an int") -> int:
    """`value` as a plain int (``operator.index()``), so no int subclass's comparisons decide a check.

    Raises:
        TypeError: not an int, or a bool (`what` names what is expected).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")
    return operator.index(value)


def plain_number(name: str, value: object) -> float:
    """`value` as a plain float (an int through ``operator.index()``), so no subclass decides a check.

    Raises:
        TypeError: not a number, or a bool.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if isinstance(value, int):
        plain = operator.index(value)
        try:
            return float(plain)
        except OverflowError:
            return math.inf if plain > 0 else -math.inf
    return float.__float__(value)


def check_int(name: str, value: object, low: int, high: int) -> int:
    """`value` as a plain int within low..high.

    Raises:
        TypeError: not an int (or a bool). ValueError: outside low..high.
    """
    if type(value) is not int:  # the fast path takes only the exact type
        value = plain_int(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


#: The longest ``timeout`` (seconds) bench() and bench_diff() accept for a
#: user function.
TIMEOUT_MAX_S: float = 1e6


def check_timeout(timeout: object, method: object) -> float:
    """`timeout` in seconds as the C core takes it: 0.0 for None (no limit), else in
    (0, ``TIMEOUT_MAX_S``], and only for a user function (a catalog row always returns).

    Raises:
        TypeError: not a real number. ValueError: out of range, or given for a catalog method.
    """
    if timeout is None:
        return 0.0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    seconds = float(timeout)
    if not 0 < seconds <= TIMEOUT_MAX_S:  # NaN fails too
        raise ValueError(f"timeout must be a number of seconds in (0, {TIMEOUT_MAX_S:g}], or None "
                         f"for no limit, not {timeout!r}")
    if isinstance(method, str):
        raise ValueError(f"timeout is for user functions (a method of the catalog always returns): "
                         f"leave it out for {method!r}")
    return seconds
def check_figure(name: str, value: object, low: float, high: float, unit: str = "",
                 nan: bool = False) -> float:
    """`value` as a plain float within low..high, NaN allowed where `nan`; `unit` for the message.

    Raises:
        TypeError: not a number. ValueError: outside low..high (or NaN where it may not be).
    """
    x = value if type(value) is float else plain_number(name, value)  # a float's own comparisons: exact type only
    if nan and x != x:  # NaN
        return x
    if not low <= x <= high:  # NaN too
        unit = f" {unit}" if unit else ""
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}{unit}"
                         f"{' (or NaN: unknown)' if nan else ''}, not {x!r}")
    return x


def check_sentences(name: str, value: object) -> tuple[str, ...]:
    """`value` as a tuple of at most SENTENCES_MAX strs of at most SENTENCE_CHARS_MAX characters,
    each text UTF-8 can hold.

    Raises:
        TypeError: not a list of strs. ValueError: too many, or one too long.
    """
    if type(value) is tuple and not value:  # most results have none
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of sentences (str), not {type(value).__name__}")
    out = tuple(value)
    if len(out) > SENTENCES_MAX:
        raise ValueError(f"{name} holds {len(out)} sentences, more than the {SENTENCES_MAX} a result may")
    for i, s in enumerate(out):
        if not isinstance(s, str):
            raise TypeError(f"{name}[{i}] must be a str, not {type(s).__name__}")
        if len(s) > SENTENCE_CHARS_MAX:
            raise ValueError(f"{name}[{i}] is {len(s)} characters long, more than the "
                             f"{SENTENCE_CHARS_MAX} a result's sentence may be")
        check_label(s, f"{name}[{i}]")
    return out


def check_serialize(serialize: object) -> str:
    """`serialize` if it names one of ``SERIALIZE_MODES``."""
    if not isinstance(serialize, str):
        raise TypeError(f"serialize must be a str, not {type(serialize).__name__}")
    if serialize not in SERIALIZE_MODES:
        raise ValueError(
            f"unknown serialize mode {serialize!r}: use one of {', '.join(SERIALIZE_MODES)}"
        )
    return serialize


def check_counter(counter: object, serialize: str, name: str = "counter") -> str:
    """`counter` if it names one of ``COUNTERS`` and can be read with
    `serialize` (``'rdtscp'`` fences read the TSC itself). `name` is the
    argument's name in messages."""
    if not isinstance(counter, str):
        raise TypeError(f"{name} must be a str, not {type(counter).__name__}")
    if counter not in COUNTERS:
        raise ValueError(f"unknown {name} {counter!r}: use 'tsc' or 'pmu'")
    if counter == "pmu" and serialize == "rdtscp":
        raise ValueError(f"serialize='rdtscp' reads the TSC: with {name}='pmu' use 'lfence' or 'cpuid'")
    return counter


def check_cpu(cpu: object, name: str = "cpu") -> int:
    """`cpu` if it is an int in this thread's affinity mask; `name` names it in messages.

    Raises:
        TypeError: not an int. ValueError: negative or outside the mask.
        fastcpu.Error: the mask cannot be read (sched_getaffinity denied).
    """
    cpu = plain_int(name, cpu, "an int or None")
    cli = name.startswith("--")
    allowed = affinity_mask(f"check {name} {cpu} against this thread's affinity mask",
                            f"leave {name} out" if cli else f"pass {name}=None to stay unpinned")
    if cpu not in allowed:
        instead = f"leave {name} out" if cli else "None to stay unpinned"
        raise ValueError(
            f"{name} {cpu} is not in this thread's affinity mask {sorted(allowed)}: "
            f"pass one of those, or {instead}"
        )
    return cpu


def denied(call: str, exc: OSError) -> str:
    """Why a system call failed when a policy refused it: ``'CALL was denied
    (STRERROR; a seccomp filter, ...)'``, for the messages that name the fix."""
    return (f"{call} was denied ({exc.strerror}; a seccomp filter, a container or a "
            "security module forbids it)")


def affinity_mask(doing: str, fix: str) -> set[int]:
    """This thread's affinity mask (``os.sched_getaffinity(0)``).

    Raises:
        fastcpu.Error: the call was denied; the message says what was `doing` and the `fix`.
    """
    try:
        return os.sched_getaffinity(0)
    except OSError as exc:
        raise Error(f"cannot {doing}: {denied('sched_getaffinity', exc)}: {fix}") from exc


def check_cpus(cpus: object, possible: int | None, name: str = "cpus") -> list[int]:
    """A list of distinct CPU numbers, each 0 or more and below `possible`
    (the kernel's possible CPUs; ``None``: unknown). A CPU that exists but
    cannot be pinned to is the caller's to skip: only impossible ones raise."""
    if isinstance(cpus, (str, bytes)) or not isinstance(cpus, Iterable):
        raise TypeError(f"{name} must be a list of CPU numbers (ints) or None, not {type(cpus).__name__}")
    out: list[int] = []
    for c in cpus:
        if isinstance(c, bool) or not isinstance(c, int):
            raise TypeError(f"{name} must hold ints, not {type(c).__name__}")
        c = operator.index(c)  # the plain int: a subclass's comparisons may lie
        if c < 0:
            raise ValueError(f"{name} holds {c}: CPU numbers are 0 or more")
        if possible is not None and c >= possible:
            raise ValueError(f"{name} holds {c}, but this kernel has CPUs 0 to {possible - 1} only")
        if c in out:
            raise ValueError(f"{name} names CPU {c} twice: name each once")
        out.append(c)
    if not out:
        raise ValueError(f"{name} is empty: name at least one CPU, or pass None for the affinity mask")
    return out


def check_method_names(
    names: object, name: str = "methods", *, one_str: bool = False, allow_empty: bool = False
) -> list[str]:
    """A list of method names, each a str and named once (whether each exists is the catalog's to say).

    `one_str` accepts one str as a list of one; `allow_empty` an empty list; `name` names the
    argument in messages.

    Raises:
        TypeError: not a list of str (or one str where `one_str` is false).
        ValueError: empty (unless allowed), or a name given twice.
    """
    if isinstance(names, str):
        if not one_str:
            raise TypeError(f"{name} must be a list of method names, not one str: pass [{names!r}]")
        names = [names]
    if not isinstance(names, Iterable):
        raise TypeError(f"{name} must be a list of method names or None, not {type(names).__name__}")
    out = list(names)
    for n in out:
        if not isinstance(n, str):
            raise TypeError(f"{name} must hold method names: a method must be a str naming "
                            f"a method, not {type(n).__name__}")
    if not out and not allow_empty:
        raise ValueError(f"{name} is empty: name at least one method, or pass None for all")
    twice = [n for i, n in enumerate(out) if n in out[:i]]
    if twice:
        raise ValueError(f"method {twice[0]!r} is named twice in {name}: name each once")
    return out


def check_unit(unit: object) -> str:
    """The unit `unit` names, as one of ``UNITS`` (``'cycles'`` is ``'core_cycles'``)."""
    shorts = ", ".join(u.short for u in UNITS.values())
    if not isinstance(unit, str):
        either = " or ".join(shorts.rsplit(", ", 1))
        raise TypeError(f"unit must be a str ({either}), not {type(unit).__name__}")
    if unit not in _UNIT_ALIASES:
        raise ValueError(f"unknown unit {unit!r}: use one of {shorts}")
    return _UNIT_ALIASES[unit]


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """`value` if it is one of `choices` (strs).

    Raises:
        TypeError: not a str. ValueError: not one of `choices`.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str ({', '.join(choices)}), not {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}: use one of {', '.join(choices)}")
    return value


def check_label(label: object, name: str = "label") -> str | None:
    """`label` if it is None or text UTF-8 can hold (it is written to files and printed).

    Raises:
        TypeError: neither a str nor None. ValueError: it holds a lone surrogate.
    """
    if label is None:
        return None
    if not isinstance(label, str):
        raise TypeError(f"{name} must be a str or None, not {type(label).__name__}")
    if label.isascii():  # no surrogate (and fast: bench() checks its method's name)
        return label
    bad = next((c for c in label if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        # U+DC80..U+DCFF is how Python reads an undecodable byte (surrogateescape)
        what = (f"the byte 0x{ord(bad) - 0xDC00:02x}, which is not UTF-8" if "\udc80" <= bad <= "\udcff"
                else f"a lone surrogate (U+{ord(bad):04X}), which is not text")
        raise ValueError(f"{name} {label!r} holds {what}: give the label as UTF-8 text")
    return label
