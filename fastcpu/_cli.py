"""python -m fastcpu: the seed-style table, and the subcommands around it.

Each subcommand is one entry in COMMANDS: a function adding its arguments to
a parser and a function running it. Bad options exit with status 2 and one
line on stderr, never a traceback.

Text from a file or the command line (labels, machine and method names,
paths, notes, the messages quoting them) reaches the terminal through
:func:`fastcpu._display.printable`: control characters show as escapes
(``\\x1b``) instead of retitling or clearing the terminal. CSV and JSON are
data and stay faithful: JSON escapes by itself; CSV keeps text as it is
(quoted where CSV needs it) except that a lone surrogate, which UTF-8 cannot
hold, is written as its escape, and that, as ``ls`` does with file names,
CSV printed on a terminal is escaped line by line like the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import math
import os
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import export
from ._ab import compare_ab
from ._args import (COUNTERS, DISASSEMBLERS, RUNS_MAX, SERIALIZE_MODES, UNITS, UNROLL_MAX, check_counter, check_cpu, check_int,
                    check_label)
from ._atomicfile import check_name_length, check_replaceable, create_tmp, write_atomic
from ._display import printable
from ._compare import format_comparison, tidy_table
from ._errors import Error
# the instrument's (stand-ins raising Unsupported where no C core is built: compare and plot need none)
from ._instrument import CORE_MISSING, check, chosen_methods, clock, measure, method_code, pmu_open, selftest
from ._progress import ProgressLine, is_terminal
from ._json_document import encode_document
from ._machine_results import Results, load
from ._seed_table import seed_table
from ._table import format_back_to_back, format_clock, format_table, format_warnings
from ._version import __version__

if TYPE_CHECKING:
    from ._methods import MethodInfo

__all__ = ["main"]


#: Exit statuses, in the epilog of ``fastcpu --help``.
EXIT_OK = 0
EXIT_FAILED = 1  # the machine refused, a goal failed, output could not be written, a warning under -W error
EXIT_USAGE = 2  # a bad option, argument or file, refused before any work
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_BROKEN_PIPE = 141  # the reader of stdout or stderr left (`| head`), as if SIGPIPE had ended it
#: What every command's exit statuses share; each command adds its own
#: meaning of 0 and 1 (and check its 3): EXIT_WORDS.
_EXIT_COMMON = ("2 a bad option, argument or file, refused before any work; 130 interrupted; 141 the "
                "reader of the output left (| head)")
_EXIT_FAILED_WORDS = ("the machine refused, output could not be written, or a warning was made an error "
                      "by -W error")
#: command -> the meaning of its exit statuses 0 and 1 (and 3), in its --help.
EXIT_WORDS = {
    "table": f"0 done; 1 failed: {_EXIT_FAILED_WORDS}",
    "run": f"0 done, the file written; 1 failed: {_EXIT_FAILED_WORDS}",
    "compare": f"0 done; 1 failed: {_EXIT_FAILED_WORDS}",
    "plot": f"0 done, the image written; 1 failed: {_EXIT_FAILED_WORDS}",
    "check": (f"0 every method agrees; 1 a method or reference read a wrong CPU, or {_EXIT_FAILED_WORDS}; "
              "3 no wrong CPU, but something could not be checked"),
    "selftest": f"0 the goals hold in the modes judged; 1 a goal failed, or {_EXIT_FAILED_WORDS}",
    "show": f"0 done; 1 failed: {_EXIT_FAILED_WORDS}",
}


def exit_statuses(command: str) -> str:
    """The epilog line of `command`'s --help: its own exit statuses."""
    return textwrap.fill(f"exit status: {EXIT_WORDS[command]}; {_EXIT_COMMON}", 79)


#: The default command's exit statuses (``fastcpu --help``), kept under its old name.
EXIT_STATUSES = exit_statuses("table")


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


def _label(text: str) -> str:
    """--label: UTF-8 text, refused before measuring (a file cannot hold the
    bytes of another encoding, and plot cannot draw them). Under a locale
    whose encoding is not UTF-8 (``LC_ALL=C``), Python reads each byte of
    argv it cannot decode as a lone surrogate (surrogateescape): the bytes
    are taken back and read as UTF-8, which they are if the label is text."""
    if any("\udc80" <= c <= "\udcff" for c in text):
        try:
            text = os.fsencode(text).decode("utf-8")
        except (UnicodeError, ValueError):
            pass  # not UTF-8 either: check_label names the byte
    try:
        check_label(text, "the label")
    except ValueError as exc:  # argparse names the option
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _method_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one method")
    return names


def _looks_like_a_file(text: str) -> bool:
    """Whether a word after ``--methods`` is a FILE, not a method: no method
    name has a dot, a slash or any character but letters, digits and _, and
    an existing file is a file."""
    return not all(part.isidentifier() for part in text.split(",") if part) or os.path.isfile(text)


class _Methods(argparse.Action):
    """``--methods`` and every other list option: names comma- or
    space-separated (``gdt,rdpid`` or ``gdt rdpid``), or the option given
    again; one grammar in every command. Where FILE arguments follow
    (``files_follow``: plot), a word that is a file (see
    :func:`_looks_like_a_file`) ends the list and is taken as the first FILE."""

    def __init__(self, option_strings: list[str], dest: str, files_follow: bool = False,
                 type: Callable[[str], list[Any]] = _method_list, **kwargs: Any) -> None:
        self.files_follow = files_follow
        super().__init__(option_strings, dest, nargs="+", type=str, **kwargs)
        self.convert = type

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        words = list(values)
        if self.files_follow:
            first_file = next((i for i, w in enumerate(words) if _looks_like_a_file(w)), len(words))
            words, files = words[:first_file], words[first_file:]
            namespace.files = list(getattr(namespace, "files", None) or []) + files
            if not words:
                parser.error(f"argument {'/'.join(self.option_strings)}: expected at least one name before "
                             f"the files ({files[0]})")
        items = list(getattr(namespace, self.dest, None) or [])
        for word in words:
            try:
                items += self.convert(word)
            except argparse.ArgumentTypeError as exc:
                parser.error(f"argument {'/'.join(self.option_strings)}: {exc}")
        setattr(namespace, self.dest, items)


class _Files(argparse.Action):
    """FILE arguments beside a list option that may have taken some (see
    :class:`_Methods`): both kept, in the order given."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, list(getattr(namespace, self.dest, None) or []) + list(values))


def _add_files(p: argparse.ArgumentParser, help: str) -> None:
    """The FILE arguments of a command whose --methods may end with them:
    required after parsing (:func:`_require_files`), not by argparse, which
    cannot see those the list option handed over."""
    p.add_argument("files", nargs="*", action=_Files, metavar="FILE", help=help)


def _require_files(args: argparse.Namespace) -> None:
    if not getattr(args, "files", None):
        raise UsageError("the following arguments are required: FILE")


#: Every list option's grammar, in its help.
LIST_GRAMMAR = "comma- or space-separated, or the option repeated"


#: --methods' help, with what it defaults to.
def _methods_help(default: str) -> str:
    return f"method names, {LIST_GRAMMAR} (default: {default})"


def add_measure_options(p: argparse.ArgumentParser) -> None:
    """The options shared by every command that measures."""
    p.add_argument("--runs", type=_positive_int, default=1000, help="timed runs per method (default 1000)")
    p.add_argument("--methods", action=_Methods, help=_methods_help("all available"))
    p.add_argument("--serialize", choices=SERIALIZE_MODES, default="lfence", help="serialization mode (default lfence)")
    p.add_argument("--cpu", type=_cpu, help="pin the measuring thread to this CPU")


def check_measure_options(args: argparse.Namespace) -> list[MethodInfo]:
    """Validate every measuring option before anything is printed or measured;
    the chosen methods."""
    check_int("--runs", args.runs, 1, RUNS_MAX)
    check_int("--unroll", getattr(args, "unroll", 1), 1, UNROLL_MAX)
    if args.cpu is not None:
        check_cpu(args.cpu, "--cpu")
    return chosen_methods(args.methods or None, "--methods")


#: --out names meaning standard output: "-" by convention, and the names
#: Linux gives it (a file named "-" is still written as ./-).
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def check_out(text: str, option: str = "--out", *, overwrite: bool = False) -> Path:
    """The file `option` names, if it can be written there: one policy for
    every command's output, an existing file is refused unless `overwrite`.
    Checked before any work, so that no measurement or drawing is thrown
    away."""
    if not text:
        raise ValueError(f"{option} is empty: give a file name")
    out = Path(text)
    check_name_length(out)  # before is_dir(), which would raise ENAMETOOLONG itself
    if out.is_dir():
        raise ValueError(f"{option} {out} is a directory: give a file name")
    parent = out.parent
    if not parent.is_dir():
        raise ValueError(f"cannot write {out}: directory {parent} does not exist")
    check_replaceable(out)
    if out.exists() and not overwrite:
        raise ValueError(f"{out} exists: pass --overwrite to replace it, or choose another {option}")
    # Try, rather than ask os.access(): root passes access() where the file
    # system still refuses (/proc, /sys).
    try:
        # named as save() names its own: a leftover is removed by the next save
        fd, probe = create_tmp(out)
    except OSError as exc:
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    return out


def add_counter_options(p: argparse.ArgumentParser) -> None:
    """--counter, and --clock, its old name (deprecated, hidden from --help)."""
    p.add_argument("--counter", choices=COUNTERS, default="tsc",
                   help="time with the TSC (default) or the PMU's core-cycle counter")
    p.add_argument("--clock", dest="old_clock", choices=COUNTERS, help=argparse.SUPPRESS)


def check_counter_options(args: argparse.Namespace) -> str:
    """The counter asked for (by either name), checked against --serialize;
    whether this machine has it is asked separately (pmu_open())."""
    option = "counter"
    if args.old_clock is not None:  # the old name, hidden from --help, still works
        args.counter, option = args.old_clock, "clock"
    return check_counter(args.counter, args.serialize, option)


def _table_args(p: argparse.ArgumentParser) -> None:
    add_measure_options(p)
    p.add_argument("--unroll", type=_positive_int, default=1, help="copies per run (a throughput figure)")
    add_counter_options(p)


def _table_run(args: argparse.Namespace) -> int:
    chosen = check_measure_options(args)
    counter = check_counter_options(args)
    if counter == "pmu":  # say why not before printing anything
        pmu_open()
    clk = clock()
    pin = "unpinned" if args.cpu is None else f"pinned to CPU {args.cpu}"
    print(f"fastcpu {__version__}: {args.runs} runs per method, serialize={args.serialize}, "
          f"unroll={args.unroll}, {pin}")
    print(format_clock(clk))
    if counter == "tsc" and args.unroll == 1:
        # the harness checked here, now: its corrections go into ESTIMATE
        with ProgressLine("self-testing") as progress:
            report = selftest(serialize=args.serialize, cpu=args.cpu, progress=progress)
        print("\n".join(report.lines()))
    if counter == "pmu":
        print("counter=pmu: every 'ticks' figure below is core cycles counted by the PMU")
    print("BEST, MEDIAN and ESTIMATE: cost above the empty sequence, per copy")
    print()

    if not any(m.available for m in chosen):  # measure() would refuse: show why each cannot run
        print(format_table([], [(m.name, m.reason) for m in chosen]))
        return 0
    with ProgressLine("measuring") as progress:  # on a terminal only
        measured = measure(args.runs, [m.name for m in chosen], args.serialize, unroll=args.unroll,
                           cpu=args.cpu, progress=progress, counter=counter,
                           selftest=False)  # printed above; bench() applies its corrections
    results = list(measured.values())
    print(format_table(results, measured.unavailable.items()))
    if any(not r.resolved for r in results):
        print("< X: below what the harness resolves here (its interval reaches the empty sequence's): "
              "the cost is under X, its bound")
    if any(r.resolution_limited for r in results):
        print("* best/median within a few clock steps: trust ESTIMATE and its interval")
    no_interval = [r.method for r in results if not math.isfinite(r.estimate_ci95)]
    if no_interval:
        print(f"+-95% inf: {args.runs} run(s) per method leave too few undisturbed pairs for an "
              f"interval ({', '.join(no_interval)}); take more runs (--runs 100 or more)")
    # the seed's question answered as everywhere (Results.cheapest_way): among
    # the ways that read the right CPU on every CPU of the pinned sweep
    if measured.back_to_back:
        print()
        print(format_back_to_back(measured.back_to_back.values()))
    if measured.clock_motion is not None:
        print(measured.clock_motion.describe(clk.tsc_hz))
    print()
    if args.unroll == 1:  # both questions, each named (Results.answer_lines)
        print("\n".join(measured.answer_lines()))
    else:  # the copies' figures answer the second question only, as a throughput
        print(f"{cheapest_way_label(args.unroll)}: {printable(measured.cheapest_way_words())}")
    warnings = format_warnings(results)
    if warnings:
        print()
        print(warnings)
    return 0


def cheapest_way_label(unroll: int) -> str:
    """What the table's last line answers: one call alone, or (`unroll` > 1)
    a throughput, cost per copy of calls back to back."""
    if unroll == 1:
        return "cheapest way that reports the CPU here (by ESTIMATE)"
    return (f"cheapest way that reports the CPU here, calls back to back (by ESTIMATE per copy, {unroll} copies "
            "a run: a throughput, not the cost of one call alone)")


#: run --format: what --out receives.
RUN_FORMATS = ("json", "gbench", "csv")


def _run_args(p: argparse.ArgumentParser) -> None:
    add_measure_options(p)
    p.add_argument("--unroll", type=_positive_int, default=1, help="copies per run (a throughput figure)")
    add_counter_options(p)
    p.add_argument("-o", "--out", required=True,
                   help="file to write, or - (or /dev/stdout) for standard output, which then gets the "
                        "document alone and the table goes to stderr; a file named - is ./-")
    p.add_argument("--format", choices=RUN_FORMATS, default="json",
                   help="json (default): fastcpu's result file (gzip if --out ends in .gz), which "
                        "fastcpu.load() and the compare and plot commands read; gbench: Google "
                        "Benchmark's JSON, real_time and cpu_time the ESTIMATE in ns, for its "
                        "compare.py; csv: one row per method, units in the column names, the "
                        "columns of compare --csv. gbench "
                        "and csv are exports: fastcpu cannot load them back")
    p.add_argument("--label", type=_label, help="a name for this machine, kept in the file (UTF-8 text)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out if it exists (without it, an existing file is refused before measuring)")


def _run_document(results: Results, fmt: str, terminal: bool = False) -> bytes:
    """What run --format `fmt` writes, uncompressed (a CSV for a `terminal`
    escaped: :func:`_csv_bytes`)."""
    if fmt == "gbench":
        # NaN and Infinity (an interval of too few runs) as Google Benchmark writes them
        return (json.dumps(export.to_gbench(results), indent=2, allow_nan=False) + "\n").encode("utf-8")
    if fmt == "csv":
        text = io.StringIO()
        export.write_csv(results, text)
        return _csv_bytes(text.getvalue(), terminal)
    return encode_document(results.to_document())


def _csv_bytes(text: str, terminal: bool = False) -> bytes:
    """CSV `text` as UTF-8: as it is, but for a lone surrogate (a name
    undecodable bytes left), which UTF-8 cannot hold, written as its escape
    (``\\udcff``); for a `terminal`, each line through printable(), so that
    a label's ESC sequences show instead of acting."""
    if terminal:
        text = "\n".join(printable(line) for line in text.split("\n"))
    return text.encode("utf-8", "backslashreplace")


def _write_stdout(data: bytes) -> None:
    """`data` on standard output as it would be in a file: bytes, not
    re-encoded for the terminal."""
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # replaced by a text-only stream (tests, IDEs)
        sys.stdout.write(data.decode("utf-8"))
    else:
        raw.write(data)
        raw.flush()


def _run_run(args: argparse.Namespace) -> int:
    check_measure_options(args)
    counter = check_counter_options(args)
    # Refuse before measuring, not after: a measurement is never thrown away.
    out = None if args.out in STDOUT_NAMES else check_out(args.out, overwrite=args.overwrite)
    if out is None and _stdout_closed():
        raise ValueError(f"--out {args.out}: standard output is closed: name a file, or redirect "
                         "standard output instead of closing it")
    if out is not None and args.format != "json" and out.name.endswith(".gz"):
        raise ValueError(f"--format {args.format} writes plain text, as its readers expect: "
                         f"drop .gz from --out, or use --format json")
    if counter == "pmu":  # say why not before measuring
        pmu_open()

    with ProgressLine("measuring") as progress:  # on a terminal only
        results = measure(args.runs, args.methods, args.serialize, unroll=args.unroll, cpu=args.cpu,
                          progress=progress, label=args.label, counter=counter)
    if out is None:  # standard output holds the document alone: the table goes to stderr
        _write_stdout(_run_document(results, args.format, terminal=is_terminal(sys.stdout)))
        print(results, file=sys.stderr)
        return 0
    try:
        if args.format == "json":
            results.save(out, overwrite=args.overwrite)
        else:
            write_atomic(out, _run_document(results, args.format), overwrite=args.overwrite)
    except FileExistsError:
        raise ValueError(f"{out} appeared while measuring: pass --overwrite to replace it") from None
    print(results)
    shown = f"./{out}" if str(out) == "-" else str(out)  # not standard output
    print(f"wrote {printable(shown)}"
          + ("" if args.format == "json" else f" ({args.format}: an export, not a result file)"), file=sys.stderr)
    return 0


#: A single result file smaller than this loads in well under a second: no
#: progress line for it.
BIG_FILE_BYTES = 16 << 20


def _worth_a_progress_line(paths: Sequence[str]) -> bool:
    if len(paths) > 1:
        return True
    try:
        return os.stat(paths[0]).st_size >= BIG_FILE_BYTES
    except (OSError, ValueError, IndexError):  # load() says what is wrong with it
        return False


def _load_all(paths: Sequence[str]) -> list[Results]:
    """The result files, loaded in order; on a terminal, a progress line
    while several (or one big one) load."""
    loaded = []
    with ProgressLine("reading", enabled=None if _worth_a_progress_line(paths) else False) as progress:
        for i, path in enumerate(paths):
            progress(i, len(paths), path)
            try:
                loaded.append(load(path))
            except OSError as exc:
                raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    return loaded


#: --unit choices: the units, with core cycles written "cycles".
_UNITS = tuple(u.short for u in UNITS.values())
#: compare --format choices.
COMPARE_FORMATS = ("table", "json", "csv")


def _compare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="result files written by 'fastcpu run'")
    p.add_argument("--unit", choices=_UNITS, default=None,
                   help="unit of the table (default cycles; ns with --ab)")
    p.add_argument("--format", choices=COMPARE_FORMATS, default=None,
                   help="table (default): for each question (one call alone, calls back to back) a row "
                        "per method, a column per machine with the ESTIMATE "
                        "(the cost figure) +- its 95%% interval in --unit and its ratio to the first "
                        "file's machine, then each machine's cheapest way for each question; csv: every "
                        "column, every unit, one row per machine and method (back_to_back_* for calls back "
                        "to back); json: those rows as a JSON array (null where a figure is NaN)")
    p.add_argument("--csv", action="store_true", help="the same as --format csv")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--seed-table", action="store_true",
                      help="the seed's layout: one row per machine, BEST and MEDIAN blocks (GDT, TSCP, "
                           "SIDT, RDPID, vDSO, rseq) in core cycles, the published machines beside, and "
                           "the cheapest way that reports the CPU on each, named by its question (one "
                           "call alone, calls back to back)")
    view.add_argument("--ab", action="store_true",
                      help="two files, A then B: per method and question (one call alone, calls back "
                           "to back) the difference and ratio of the "
                           "estimates with 95%% intervals and a verdict (faster, slower, no detectable "
                           "difference); --unit ns (default) or cycles")


def _compare_format(args: argparse.Namespace) -> str:
    """compare's output format: --format, or --csv (its old spelling)."""
    if args.csv and args.format not in (None, "csv"):
        raise ValueError(f"--csv is --format csv: give one of --csv and --format {args.format}")
    fmt = "csv" if args.csv else args.format or "table"
    if fmt != "table" and (args.seed_table or args.ab):
        given = "--csv" if args.csv else f"--format {fmt}"
        raise ValueError(f"{given} prints the full comparison: leave out --seed-table and --ab")
    return fmt


def _compare_run(args: argparse.Namespace) -> int:
    fmt = _compare_format(args)
    if args.seed_table or args.ab:
        return _compare_views(args)
    loaded = _load_all(args.files)
    table = tidy_table(list(zip(loaded, args.files)))
    if fmt == "csv":
        _write_stdout(_csv_bytes(table.to_csv(), terminal=is_terminal(sys.stdout)))
    elif fmt == "json":  # ASCII: JSON escapes control characters and surrogates itself
        sys.stdout.write(table.to_json())
    else:
        print(format_comparison(table, args.unit or "cycles"))
        for results in loaded:
            if results.selftest is not None:
                print()
                print(f"{printable(results.name)}:")
                print("\n".join(results.selftest.lines()))
    return 0


def _compare_views(args: argparse.Namespace) -> int:
    """compare --seed-table and compare --ab."""
    if args.seed_table:
        print(seed_table(*_load_all(args.files)))
        return 0
    if len(args.files) != 2:
        raise ValueError(f"--ab compares two files, A then B, not {len(args.files)}")
    unit = args.unit or "ns"
    if unit == "ticks":
        raise ValueError("--ab compares in ns or cycles: TSC ticks differ between hosts")
    print(compare_ab(*_load_all(args.files), unit=unit))
    return 0


def _selftest_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--serialize", action=_Methods, type=_serialize_list, metavar="MODE",
                   help=f"serialization modes to test and judge, of {', '.join(SERIALIZE_MODES)}, {LIST_GRAMMAR} "
                        "(default: lfence, bench()'s default; cpuid is a VM exit per read on a guest: seconds)")
    p.add_argument("--runs", type=_positive_int, default=1000, help="runs per verification measurement (default 1000)")
    p.add_argument("--rounds", type=_positive_int, default=6, help="verification measurements per chain (default 6)")
    p.add_argument("--cpu", type=_cpu, help="pin the measuring thread to this CPU")


def _serialize_list(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in SERIALIZE_MODES]
    if not modes or bad:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(SERIALIZE_MODES)})")
    return modes


def _selftest_run(args: argparse.Namespace) -> int:
    if args.cpu is not None:
        check_cpu(args.cpu, "--cpu")
    with ProgressLine("self-testing") as progress:  # on a terminal only
        report = selftest(runs=args.runs, rounds=args.rounds, progress=progress,
                          serialize=tuple(args.serialize) if args.serialize else None, cpu=args.cpu)
    print(f"fastcpu {__version__}")
    print(format_clock(clock()))
    print("\n".join(report.lines()))
    return 0 if report.passed else 1


#: Beyond print quality (300) a grid of every method takes gigabytes.
DPI_MAX = 600


def _dpi(text: str) -> int:
    value = _positive_int(text)
    if value > DPI_MAX:
        raise argparse.ArgumentTypeError(f"must be {DPI_MAX} or less, not {value}")
    return value


def _plot_args(p: argparse.ArgumentParser) -> None:
    _add_files(p, "result files written by 'fastcpu run', one or more (required; after --methods, its list "
                  "ends at the first word that is a file: a name with a dot or a slash, or one that exists)")
    p.add_argument("-o", "--out", required=True, help="image to write (PNG; .svg and .pdf work too)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out if it exists (without it, an existing file is refused before drawing)")
    p.add_argument("--kind", choices=("auto", "counts", "ecdf", "machines"), default="auto",
                   help="counts: exact counts per method; ecdf: the methods' ECDFs, a panel per kind "
                        "of method with its trap- and system-call-scale methods apart (one panel for "
                        "--methods); machines: each method across the files (default: counts for one "
                        "file, machines for several)")
    p.add_argument("--methods", action=_Methods, files_follow=True, help=_methods_help("all measured"))
    p.add_argument("--unit", choices=_UNITS, default=None,
                   help="x unit (default ticks for one file, ns across machines)")
    p.add_argument("--dpi", type=_dpi, default=110, help=f"resolution, 1 to {DPI_MAX} (default 110)")


def _plot_run(args: argparse.Namespace) -> int:
    _require_files(args)
    if args.out in STDOUT_NAMES:
        raise ValueError(f"--out {args.out}: plot writes an image file, not standard output: "
                         f"give its name (.png, .svg, .pdf)")
    # Refuse before drawing, as run refuses before measuring.
    out = check_out(args.out, overwrite=args.overwrite)
    loaded = _load_all(args.files)
    kind = args.kind if args.kind != "auto" else ("counts" if len(loaded) == 1 else "machines")
    if kind in ("counts", "ecdf") and len(loaded) != 1:
        raise ValueError(f"--kind {kind} draws one file, not {len(loaded)}: use --kind machines")

    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    # matplotlib would add ".png" to a name without a known suffix: write
    # exactly the file named, or say which names work.
    formats = FigureCanvasBase.get_supported_filetypes()
    if out.suffix[1:].lower() not in formats:
        raise ValueError(f"--out {out}: name the image format by its suffix, one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")

    from . import plot

    fig: Any
    if kind == "counts":
        fig = plot.distributions(loaded[0], args.methods, unit=args.unit or "ticks")
    elif kind == "ecdf":
        fig = plot.ecdf(loaded[0], args.methods, unit=args.unit or "ticks").figure
    else:
        fig = plot.machines(loaded, args.methods, unit=args.unit or "ns")
    image = io.BytesIO()
    try:
        fig.savefig(image, format=out.suffix[1:].lower(), dpi=args.dpi)
    finally:
        plt.close(fig)
    try:  # as save() writes: an interrupted plot leaves the old image or none, never half of one
        write_atomic(out, image.getvalue(), overwrite=args.overwrite)
    except FileExistsError:
        raise ValueError(f"{out} appeared while drawing: pass --overwrite to replace it") from None
    print(f"wrote {printable(out)}", file=sys.stderr)
    return 0


def _cpu_list(text: str) -> list[int]:
    try:
        cpus = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of CPU numbers: {text!r}") from None
    if not cpus:
        raise argparse.ArgumentTypeError("name at least one CPU")
    return cpus


def _check_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--methods", action=_Methods, help=_methods_help("every CPU source"))
    p.add_argument("--cpus", action=_Methods, type=_cpu_list,
                   help=f"CPUs to pin to, {LIST_GRAMMAR} (default: the affinity mask)")


#: check's exit statuses (beside 2, a bad option): every cell agrees; a
#: method or reference read a wrong CPU; no wrong CPU, but something could
#: not be checked (a cell that could not read, a CPU named with --cpus that
#: could not be pinned to, nothing asked for that reports the CPU here, or
#: check() itself refused: the affinity calls denied).
CHECK_AGREE, CHECK_DISAGREE, CHECK_ERROR = 0, 1, 3


def _check_run(args: argparse.Namespace) -> int:
    try:
        table = check(args.methods, args.cpus)
    except Error as exc:  # the sweep could not run at all: nothing was compared
        if CORE_MISSING is not None:  # no C core here: status 1, as every measuring command
            raise
        print(f"fastcpu: {exc}", file=sys.stderr)
        return CHECK_ERROR
    print(table)
    if table.outcome == "disagree":
        return CHECK_DISAGREE
    if args.methods and all(m in table.not_checked for m in args.methods):
        # getcpu()'s own rows always run: "all agree" would speak of nothing asked for
        print("fastcpu check: nothing asked for was checked: "
              + printable("; ".join(f"{m}: {table.not_checked[m]}" for m in args.methods)), file=sys.stderr)
        return CHECK_ERROR
    # A CPU named with --cpus that could not be checked is a failure too; a
    # gap in the default sweep (the whole affinity mask) is not.
    if table.outcome == "error" or (args.cpus and table.skipped):
        return CHECK_ERROR
    return CHECK_AGREE


def _show_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("method", help="the method whose timed code to print")
    p.add_argument("--disassembler", choices=DISASSEMBLERS, default="auto",
                   help="objdump, capstone, none, or auto (the first installed; default)")


def _show_run(args: argparse.Namespace) -> int:
    print(method_code(args.method, disassembler=args.disassembler))
    return 0


#: name -> (add arguments, run, one-line help)
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {
    "table": (_table_args, _table_run,
              "time every available method and print BEST, MEDIAN and the recommended ESTIMATE with its "
              "interval (the default command)"),
    "run": (_run_args, _run_run,
            "time every available method and save the raw runs and machine facts to a file or standard output "
            "(or export the estimates as Google Benchmark JSON or CSV)"),
    "compare": (_compare_args, _compare_run,
                "the methods side by side across result files, for each question (one call alone; calls "
                "back to back, 'not measured' in a file before 0.7.0): per machine the ESTIMATE with its "
                "95% interval and its ratio to the first file's, then each machine's cheapest way for "
                "each question (--format csv or json: every figure; --seed-table: the seed's layout, one "
                "row per machine with its cheapest ways; --ab: two files, A against B, with verdicts)"),
    "plot": (_plot_args, _plot_run,
             "draw result files: exact counts per method, or ECDFs across methods or machines"),
    "check": (_check_args, _check_run,
              "read every CPU-reporting method on each CPU and compare with sched_getcpu() and the getcpu system call"),
    "selftest": (_selftest_args, _selftest_run,
                 "time the known-cost chains through the harness, report its bias on this host "
                 "and whether the accuracy goals hold in the modes judged (those named with --serialize, "
                 "else lfence, bench()'s default)"),
    "show": (_show_args, _show_run, "print the machine code a method times, disassembled when objdump or capstone is installed"),
}


def _parser(command: str) -> argparse.ArgumentParser:
    add, _, help_text = COMMANDS[command]
    others = "\n".join(f"  {c:9} {COMMANDS[c][2]}" for c in COMMANDS if c != "table")
    p = _Parser(
        prog="fastcpu" if command == "table" else f"fastcpu {command}",
        description=help_text + ".",
        epilog=(f"commands (fastcpu COMMAND --help for each, with its own exit statuses):\n{others}\n\n"
                if command == "table" else "") + exit_statuses(command),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"fastcpu {__version__}")
    add(p)
    return p


#: Error handlers of a text stream that raise for a character its encoding
#: cannot hold (surrogateescape writes only lone surrogates, U+DC80..U+DCFF).
_FAILING_HANDLERS = ("strict", "surrogateescape")


@contextlib.contextmanager
def _printable_streams() -> Iterator[None]:
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


def _stdout_closed() -> bool:
    return isinstance(sys.stdout, _ClosedOutput)


@contextlib.contextmanager
def _open_streams() -> Iterator[None]:
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


def _flushes(stream: TextIO) -> bool:
    """Whether `stream` can be flushed; if not (a pipe whose reader left, a
    full disk), it is :func:`_discard`-ed."""
    try:
        stream.flush()
    except (OSError, ValueError):
        _discard(stream)
        return False
    return True


def _say(text: str) -> None:
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
    _say(f"fastcpu: warning: {message}")


@contextlib.contextmanager
def _warnings_in_one_line() -> Iterator[None]:
    with warnings.catch_warnings():  # restores showwarning afterwards
        warnings.showwarning = _show_warning
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fastcpu ARGS``: run the command and return its exit
    status (EXIT_STATUSES); whatever happens, a line on stderr, never a
    traceback."""
    with _open_streams(), _printable_streams(), _warnings_in_one_line():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and argv[0] in COMMANDS else "table"
    if command == "table" and argv and not argv[0].startswith("-"):
        import difflib

        near = difflib.get_close_matches(argv[0], list(COMMANDS), n=1)
        hint = f": did you mean '{near[0]}'?" if near else f"; commands: {', '.join(COMMANDS)}"
        _say(f"fastcpu: error: unknown command {argv[0]!r}{hint}")
        return EXIT_USAGE
    try:
        return _run(command, argv)
    except MemoryError:
        _say("fastcpu: out of memory")
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader left (`| head`): nothing more to say to it, and no
        # complaint when Python flushes the streams at exit.
        _flushes(sys.stdout)
        _flushes(sys.stderr)
        return EXIT_BROKEN_PIPE
    except (UsageError, ValueError, TypeError) as exc:
        _say(f"fastcpu: error: {exc}")
        return EXIT_USAGE
    except Warning as exc:  # raised, not shown: -W error (or PYTHONWARNINGS=error)
        _say(f"fastcpu: error: {type(exc).__name__}: {exc} (a warning, made an error by -W error)")
        return EXIT_FAILED
    except (Error, OSError) as exc:
        # Not a bad option: the machine refused (Unsupported) or a write failed.
        _say(f"fastcpu: {_os_error_words(exc)}")
        _flushes(sys.stdout)  # what a failed write left must not fail again at exit
        return EXIT_FAILED
    except KeyboardInterrupt:
        _say("fastcpu: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, never a traceback
        _say(f"fastcpu: internal error: {type(exc).__name__}: {exc} (a bug in fastcpu: please report it)")
        return EXIT_FAILED


def _run(command: str, argv: list[str]) -> int:
    try:
        args = _parser(command).parse_args(argv)
    except SystemExit as exc:  # --help or --version, printed: flushed below as any output is
        status = exc.code if isinstance(exc.code, int) else EXIT_OK
    else:
        status = COMMANDS[command][1](args)
    sys.stdout.flush()  # a reader gone or a full disk is told here, not at exit
    return status


def _os_error_words(exc: BaseException) -> str:
    """An OSError as ``NAME: what went wrong`` (the file it names, not
    ``[Errno N]``); any other exception as its text."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
