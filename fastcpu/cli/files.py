"""The commands that read result files and need no C core: ``compare``
(its table, CSV and JSON, ``--seed-table`` and ``--ab``) and ``plot``."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..analysis.ab import compare_ab
from .._args import UNITS
from ..files.paths import write_atomic
from .args import STDOUT_NAMES, Methods, add_files, add_out_options, check_out, methods_help, positive_int, require_files
from .output import csv_bytes, write_stdout
from ..analysis.compare import format_comparison, tidy_table
from .._base import printable
from ..results.results import Results, load
from .output import ProgressLine, is_terminal
from ..analysis.seed_table import seed_table


__all__ = ["load_all", "compare_args", "compare_run", "plot_args", "plot_run", "BIG_FILE_BYTES", "COMPARE_FORMATS",
           "DPI_MAX"]


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


def load_all(paths: Sequence[str]) -> list[Results]:
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
COMPARE_FORMATS = ("table", "json", "csv", "markdown")


def compare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="result files written by 'fastcpu run'")
    p.add_argument("--unit", choices=_UNITS, default=None,
                   help="unit of the table (default cycles; ns with --ab)")
    p.add_argument("--format", choices=COMPARE_FORMATS, default=None,
                   help="table (default): for each question (one call alone, calls back to back) a row "
                        "per method, a column per machine with the ESTIMATE "
                        "(the cost figure) +- its 95%% interval in --unit and its ratio to the first "
                        "file's machine, then each machine's cheapest way for each question; csv: every "
                        "column, every unit, one row per machine and method (back_to_back_* for calls back "
                        "to back); json: those rows as a JSON array (null where a figure is NaN); markdown: "
                        "the table's layout as Markdown, a heading and a table per question, then the answers")
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
    add_out_options(p, "where the comparison goes, in every --format and view")


def _compare_format(args: argparse.Namespace) -> str:
    """compare's output format: --format, or --csv (its old spelling)."""
    if args.csv and args.format not in (None, "csv"):
        raise ValueError(f"--csv is --format csv: give one of --csv and --format {args.format}")
    fmt = "csv" if args.csv else args.format or "table"
    if fmt != "table" and (args.seed_table or args.ab):
        given = "--csv" if args.csv else f"--format {fmt}"
        raise ValueError(f"{given} prints the full comparison: leave out --seed-table and --ab")
    return fmt


def compare_run(args: argparse.Namespace) -> int:
    fmt = _compare_format(args)
    if args.out is None or args.out in STDOUT_NAMES:
        return _compare_print(args, fmt)
    # Refused before reading, as run refuses before measuring.
    out = check_out(args.out, overwrite=args.overwrite)
    text = io.StringIO()  # not a terminal: CSV as it is, as in a pipe
    with contextlib.redirect_stdout(text):
        status = _compare_print(args, fmt)
    try:  # as save() writes: an interrupted compare leaves the old file or none
        write_atomic(out, text.getvalue().encode("utf-8", "backslashreplace"), overwrite=args.overwrite)
    except FileExistsError:
        raise ValueError(f"{out} appeared while comparing: pass --overwrite to replace it") from None
    print(f"wrote {printable(out)}", file=sys.stderr)
    return status


def _compare_print(args: argparse.Namespace, fmt: str) -> int:
    """compare's output in format `fmt` on sys.stdout."""
    if args.seed_table or args.ab:
        return _compare_views(args)
    loaded = load_all(args.files)
    table = tidy_table(list(zip(loaded, args.files)))
    if fmt == "csv":
        write_stdout(csv_bytes(table.to_csv(), terminal=is_terminal(sys.stdout)))
    elif fmt == "markdown":
        print(format_comparison(table, args.unit or "cycles", layout="markdown"))
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
        print(seed_table(*load_all(args.files)))
        return 0
    if len(args.files) != 2:
        raise ValueError(f"--ab compares two files, A then B, not {len(args.files)}")
    unit = args.unit or "ns"
    if unit == "ticks":
        raise ValueError("--ab compares in ns or cycles: TSC ticks differ between hosts")
    print(compare_ab(*load_all(args.files), unit=unit))
    return 0


#: Beyond print quality (300) a grid of every method takes gigabytes.
DPI_MAX = 600


def _dpi(text: str) -> int:
    value = positive_int(text)
    if value > DPI_MAX:
        raise argparse.ArgumentTypeError(f"must be {DPI_MAX} or less, not {value}")
    return value


def plot_args(p: argparse.ArgumentParser) -> None:
    add_files(p, "result files written by 'fastcpu run', one or more (required; after --methods, its list "
                  "ends at the first word that is a file: a name with a dot or a slash, or one that exists)")
    p.add_argument("-o", "--out", required=True, help="image to write (PNG; .svg and .pdf work too)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out if it exists (without it, an existing file is refused before drawing)")
    p.add_argument("--kind", choices=("auto", "counts", "ecdf", "machines"), default="auto",
                   help="counts: exact counts per method; ecdf: the methods' ECDFs, a panel per kind "
                        "of method with its trap- and system-call-scale methods apart (one panel for "
                        "--methods); machines: each method across the files (default: counts for one "
                        "file, machines for several)")
    p.add_argument("--methods", action=Methods, files_follow=True, help=methods_help("all measured"))
    p.add_argument("--unit", choices=_UNITS, default=None,
                   help="x unit (default ticks for one file, ns across machines)")
    p.add_argument("--dpi", type=_dpi, default=110, help=f"resolution, 1 to {DPI_MAX} (default 110)")


def plot_run(args: argparse.Namespace) -> int:
    require_files(args)
    if args.out in STDOUT_NAMES:
        raise ValueError(f"--out {args.out}: plot writes an image file, not standard output: "
                         f"give its name (.png, .svg, .pdf)")
    # Refuse before drawing, as run refuses before measuring.
    out = check_out(args.out, overwrite=args.overwrite)
    loaded = load_all(args.files)
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

    from .. import plot

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
