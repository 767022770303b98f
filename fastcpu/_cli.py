"""python -m fastcpu: the seed-style table, and the subcommands around it.

Each subcommand is one entry in COMMANDS: a function adding its arguments to
a parser and a function running it. Bad options exit with status 2 and one
line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from . import __version__
from ._affinity import check_cpu
from . import _core
from ._bench import CLOCKS, SERIALIZE_MODES, _check_clock, bench
from ._clock import clock
from ._core import Error
from ._methods import method_info, methods
from ._table import format_clock, format_table, format_warnings

__all__ = ["main"]


class UsageError(Exception):
    """A bad option or value: exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _cpu(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a CPU number: {text!r}") from None


def _method_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one method")
    return names


def add_measure_options(p: argparse.ArgumentParser) -> None:
    """The options shared by every command that measures."""
    p.add_argument("--runs", type=_positive_int, default=1000, help="timed runs per method (default 1000)")
    p.add_argument("--methods", type=_method_list, help="comma-separated method names (default: all available)")
    p.add_argument("--serialize", choices=SERIALIZE_MODES, default="lfence", help="serialization mode (default lfence)")
    p.add_argument("--cpu", type=_cpu, help="pin the measuring thread to this CPU")


def check_measure_options(args: argparse.Namespace) -> list:
    """Validate --cpu and --methods before any measuring; the chosen methods."""
    if args.cpu is not None:
        check_cpu(args.cpu)
    if args.methods:
        return [method_info(n) for n in args.methods]  # ValueError on unknown names
    return [m for m in methods() if m.name != "empty"]


def _table_args(p: argparse.ArgumentParser) -> None:
    add_measure_options(p)
    p.add_argument("--unroll", type=_positive_int, default=1, help="copies per run (a throughput figure)")
    p.add_argument("--clock", choices=CLOCKS, default="tsc", help="time with the TSC (default) or the PMU's core-cycle counter")


def _table_run(args: argparse.Namespace) -> int:
    chosen = check_measure_options(args)
    if args.clock == "pmu":  # say why not before printing anything
        _check_clock(args.clock, args.serialize)
        _core.pmu_open()
    clk = clock()
    pin = "unpinned" if args.cpu is None else f"pinned to CPU {args.cpu}"
    print(f"fastcpu {__version__}: {args.runs} runs per method, serialize={args.serialize}, "
          f"unroll={args.unroll}, {pin}")
    print(format_clock(clk))
    if args.clock == "pmu":
        print("clock=pmu: every 'ticks' figure below is core cycles counted by the PMU")
    print("BEST, MEDIAN and ESTIMATE: cost above the empty sequence, per copy")
    print()
    results = []
    for m in chosen:
        if m.available:
            print(f"measuring {m.name}...", file=sys.stderr, flush=True)
            results.append(
                bench(m.name, args.runs, serialize=args.serialize, unroll=args.unroll, cpu=args.cpu, clock=args.clock)
            )
    print(format_table(results, [m for m in chosen if not m.available]))
    if any(r.resolution_limited for r in results):
        print("* best/median within a few clock steps: trust ESTIMATE and its interval")
    warnings = format_warnings(results)
    if warnings:
        print()
        print(warnings)
    return 0


#: name -> (add arguments, run, one-line help)
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {
    "table": (_table_args, _table_run, "time every available method and print BEST/MEDIAN (the default)"),
}


def _parser(command: str) -> argparse.ArgumentParser:
    add, _, help_text = COMMANDS[command]
    others = ", ".join(c for c in COMMANDS if c != "table")
    p = _Parser(
        prog="fastcpu" if command == "table" else f"fastcpu {command}",
        description=help_text + (f". Other commands: {others}." if command == "table" and others else "."),
    )
    p.add_argument("--version", action="version", version=f"fastcpu {__version__}")
    add(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and argv[0] in COMMANDS else "table"
    try:
        args = _parser(command).parse_args(argv)
        return COMMANDS[command][1](args)
    except (UsageError, ValueError, TypeError) as exc:
        print(f"fastcpu: error: {exc}", file=sys.stderr)
        return 2
    except Error as exc:
        print(f"fastcpu: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fastcpu: interrupted", file=sys.stderr)
        return 130
