"""python -m fastcpu: the seed-style table, and the subcommands around it (docs/cli.md).

Each subcommand is one entry in COMMANDS (a function adding its arguments, one running it);
bad options exit 2 with one line on stderr. Text from files or the command line reaches the
terminal through :func:`fastcpu._base.printable`; CSV and JSON stay faithful (CSV escapes only
lone surrogates, and is escaped line by line on a terminal). Beside it: ``cli.args``,
``cli.output`` and ``cli.files`` (compare and plot, no C core needed).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .. import export
from .._args import DISASSEMBLERS, RUNS_MAX, SERIALIZE_MODES, UNROLL_MAX, check_cpu, check_cpus, check_int
from ..files.paths import write_atomic
from .args import LIST_GRAMMAR, STDOUT_NAMES, HelpFormatter, Methods, Parser, UsageError, add_counter_options, add_timing_options, check_counter_options, check_out, cpu_number, label_text, methods_help, positive_int
from .files import compare_args, compare_run, plot_args, plot_run
from .output import csv_bytes, flushes, open_streams, printable_streams, say, stdout_closed, warnings_in_one_line, write_stdout
from .._base import printable
from .._base import Error
from ..instrument import CORE_MISSING, check, chosen_methods, clock, measure, method_code, pmu_open, selftest
from .output import ProgressLine, is_terminal
from ..files.write import encode_document
from ..results.results import Results
from ..results.stability import possible_cpus
from ..results.display import format_back_to_back, format_clock, format_table, format_warnings
from .._base import __version__, cli_started


# the instrument's (stand-ins raising Unsupported where no C core is built: compare and plot need none)

if TYPE_CHECKING:
    from ..instrument.catalog import MethodInfo

__all__ = ["main"]


#: Exit statuses, in the epilog of ``fastcpu --help``.
EXIT_OK = 0
EXIT_FAILED = 1  # the machine refused, a goal failed, output could not be written, a warning under -W error
EXIT_USAGE = 2  # a bad option, argument or file, refused before any work
EXIT_INTERRUPTED = 130  # Ctrl-C
#: The reader of stdout or stderr left (`| head`) before all was written, as
#: if SIGPIPE had ended it. Output the pipe's buffer held whole was all
#: written before the reader left: 0, as `seq 3 | head -n 1` exits.
EXIT_BROKEN_PIPE = 141
#: What every command's exit statuses share; each command adds its own
#: meaning of 0 and 1 (and check its 3): EXIT_WORDS.
_EXIT_COMMON = ("2 a bad option, argument or file, refused before any work; 130 interrupted; 141 the "
                "reader of the output left before all of it was written (| head; output the pipe held "
                "whole was written: 0, as for seq 3 | head -n 1)")
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


def check_timing_options(args: argparse.Namespace) -> list[MethodInfo]:
    """Validate every measuring option before anything is printed or measured;
    the chosen methods."""
    check_int("--runs", args.runs, 1, RUNS_MAX)
    check_int("--unroll", getattr(args, "unroll", 1), 1, UNROLL_MAX)
    if args.cpu is not None:
        check_cpu(args.cpu, "--cpu")
    return chosen_methods(args.methods or None, "--methods")


def _table_args(p: argparse.ArgumentParser) -> None:
    add_timing_options(p)
    p.add_argument("--unroll", type=positive_int, default=1, help="copies per run (a throughput figure)")
    add_counter_options(p)


def _table_run(args: argparse.Namespace) -> int:
    chosen = check_timing_options(args)
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
        if args.unroll > 1:
            loop = max(r.harness_resolution_core_cycles for r in results)
            print(f"< X: within the copy loop's own cost per copy here ({loop:.2f} core cycles at the top of its "
                  "interval, measured on the empty sequence: a body cheaper than the loop reads about 0), or "
                  "its interval reaches 0: the cost is under X, its bound. Every ESTIMATE here adds back half "
                  "the loop's cost, which a body overlaps wholly to not at all, the other half in its interval")
        else:
            print("< X: below what the harness resolves here (its interval reaches the empty sequence's, or "
                  "below the smallest cost the self-test resolves): the cost is under X, its bound")
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
    add_timing_options(p)
    p.add_argument("--unroll", type=positive_int, default=1, help="copies per run (a throughput figure)")
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
    p.add_argument("--label", type=label_text, help="a name for this machine, kept in the file (UTF-8 text)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out if it exists (without it, an existing file is refused before measuring)")


def _run_document(results: Results, fmt: str, terminal: bool = False) -> bytes:
    """What run --format `fmt` writes, uncompressed (a CSV for a `terminal`
    escaped: :func:`csv_bytes`)."""
    if fmt == "gbench":
        # NaN and Infinity (an interval of too few runs) as Google Benchmark writes them
        return (json.dumps(export.to_gbench(results), indent=2, allow_nan=False) + "\n").encode("utf-8")
    if fmt == "csv":
        text = io.StringIO()
        export.write_csv(results, text)
        return csv_bytes(text.getvalue(), terminal)
    return encode_document(results.to_document())


def _run_run(args: argparse.Namespace) -> int:
    check_timing_options(args)
    counter = check_counter_options(args)
    # Refuse before measuring, not after: a measurement is never thrown away.
    out = None if args.out in STDOUT_NAMES else check_out(args.out, overwrite=args.overwrite)
    if out is None and stdout_closed():
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
        write_stdout(_run_document(results, args.format, terminal=is_terminal(sys.stdout)))
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


def _selftest_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--serialize", action=Methods, type=_serialize_list, metavar="MODE",
                   help=f"serialization modes to test and judge, of {', '.join(SERIALIZE_MODES)}, {LIST_GRAMMAR} "
                        "(default: lfence, bench()'s default; cpuid is a VM exit per read on a guest: seconds)")
    p.add_argument("--runs", type=positive_int, default=1000, help="runs per verification measurement (default 1000)")
    p.add_argument("--rounds", type=positive_int, default=6, help="verification measurements per chain (default 6)")
    p.add_argument("--cpu", type=cpu_number, help="pin the measuring thread to this CPU")


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


def _cpu_list(text: str) -> list[int]:
    try:
        cpus = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of CPU numbers: {text!r}") from None
    if not cpus:
        raise argparse.ArgumentTypeError("name at least one CPU")
    return cpus


class _CpuSweep(Methods):
    """check's --cpu (or --cpus): a list of CPUs, the spelling given kept
    for the messages about them."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        namespace.cpus_option = option_string or "--cpu"


def _check_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--methods", action=Methods, help=methods_help("every CPU source"))
    p.add_argument("--cpu", "--cpus", dest="cpus", action=_CpuSweep, type=_cpu_list, metavar="CPU",
                   help=f"the CPUs to pin to, one after another, {LIST_GRAMMAR} (default: the affinity "
                        "mask): the --cpu of every command, which check takes as a list because it "
                        "sweeps CPUs where the measuring commands pin to one; --cpus is the same option")


#: check's exit statuses (beside 2, a bad option): every cell agrees; a
#: method or reference read a wrong CPU; no wrong CPU, but something could
#: not be checked (a cell that could not read, a CPU named with --cpus that
#: could not be pinned to, nothing asked for that reports the CPU here, or
#: check() itself refused: the affinity calls denied).
CHECK_AGREE, CHECK_DISAGREE, CHECK_ERROR = 0, 1, 3


def _check_run(args: argparse.Namespace) -> int:
    if args.cpus is not None:  # named as the option, not as check()'s parameter
        check_cpus(args.cpus, possible_cpus(), getattr(args, "cpus_option", "--cpu"))
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
    "compare": (compare_args, compare_run,
                "the methods side by side across result files, for each question (one call alone; calls "
                "back to back, 'not measured' in a file before 0.7.0): per machine the ESTIMATE with its "
                "95% interval and its ratio to the first file's, then each machine's cheapest way for "
                "each question (--format csv or json: every figure; --seed-table: the seed's layout, one "
                "row per machine with its cheapest ways; --ab: two files, A against B, with verdicts)"),
    "plot": (plot_args, plot_run,
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
    p = Parser(
        prog="fastcpu" if command == "table" else f"fastcpu {command}",
        description=help_text + ".",
        epilog=(f"commands (fastcpu COMMAND --help for each, with its own exit statuses):\n{others}\n\n"
                if command == "table" else "") + exit_statuses(command),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"fastcpu {__version__}")
    add(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fastcpu ARGS``: run the command and return its exit
    status (EXIT_STATUSES); whatever happens, a line on stderr, never a
    traceback."""
    with open_streams(), printable_streams(), warnings_in_one_line():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and argv[0] in COMMANDS else "table"
    if command == "table" and argv and not argv[0].startswith("-"):
        import difflib

        near = difflib.get_close_matches(argv[0], list(COMMANDS), n=1)
        hint = f": did you mean '{near[0]}'?" if near else f"; commands: {', '.join(COMMANDS)}"
        say(f"fastcpu: error: unknown command {argv[0]!r}{hint}")
        return EXIT_USAGE
    try:
        return _run(command, argv)
    except MemoryError:
        say("fastcpu: out of memory")
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader left (`| head`): nothing more to say to it, and no
        # complaint when Python flushes the streams at exit.
        flushes(sys.stdout)
        flushes(sys.stderr)
        return EXIT_BROKEN_PIPE
    except (UsageError, ValueError, TypeError) as exc:
        say(f"fastcpu: error: {exc}")
        return EXIT_USAGE
    except Warning as exc:  # raised, not shown: -W error (or PYTHONWARNINGS=error)
        say(f"fastcpu: error: {type(exc).__name__}: {exc} (a warning, made an error by -W error)")
        return EXIT_FAILED
    except (Error, OSError) as exc:
        # Not a bad option: the machine refused (Unsupported) or a write failed.
        say(f"fastcpu: {_os_error_words(exc)}")
        flushes(sys.stdout)  # what a failed write left must not fail again at exit
        return EXIT_FAILED
    except KeyboardInterrupt:
        say("fastcpu: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, never a traceback
        say(f"fastcpu: internal error: {type(exc).__name__}: {exc} (a bug in fastcpu: please report it)")
        return EXIT_FAILED


def _run(command: str, argv: list[str]) -> int:
    cli_started()  # Ctrl-C from here on is a KeyboardInterrupt, answered above
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
