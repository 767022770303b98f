"""The command line's arguments: the parser that exits 2 on a bad option, the one grammar of
every list option (``Methods``), FILE arguments, the checks of a number, a CPU, a label and an
output file (``check_out``), and the options every measuring command shares.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from .._args import COUNTERS, SERIALIZE_MODES, check_counter, check_label
from ..files.paths import check_name_length, check_replaceable, create_tmp


__all__ = ["UsageError", "Parser", "positive_int", "cpu_number", "label_text", "Methods", "Files", "add_files",
           "require_files", "HelpFormatter", "LIST_GRAMMAR", "methods_help", "add_timing_options", "STDOUT_NAMES", "check_out", "add_out_options",
           "add_counter_options", "check_counter_options"]


class UsageError(Exception):
    """A bad option or value: exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        """--help and --version: argparse's own drops an OSError (stdout on a
        full disk, or closed) and exits 0 with nothing printed; here it
        reaches main(), which says so and exits 1."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
        except OSError as exc:
            if stream is not sys.stdout or exc.filename is not None or "standard output" in str(exc.strerror):
                raise
            raise OSError(exc.errno, f"cannot write standard output: {exc.strerror}") from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def cpu_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a CPU number: {text!r}") from None


def label_text(text: str) -> str:
    """--label as UTF-8 text, refused before measuring; under a non-UTF-8 locale the surrogate-escaped
    bytes of argv are taken back and read as UTF-8.
    """
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


class Methods(argparse.Action):
    """Every list option's grammar: names comma- or space-separated, or the option given again. Where
    FILE arguments follow (`files_follow`), a word that is a file ends the list.
    """

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


class Files(argparse.Action):
    """FILE arguments beside a list option that may have taken some, in the order given."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, list(getattr(namespace, self.dest, None) or []) + list(values))


def add_files(p: argparse.ArgumentParser, help: str) -> None:
    """The FILE arguments of a command whose --methods may end with them:
    required after parsing (:func:`require_files`), not by argparse, which
    cannot see those the list option handed over."""
    p.add_argument("files", nargs="*", action=Files, metavar="FILE", help=help)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every command's --help: the description as written, and FILE
    arguments (:class:`Files`), which argparse must take as optional
    (``nargs='*'``), shown as required, ``FILE [FILE ...]``, as they are."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        if isinstance(action, Files):
            metavar = self._metavar_formatter(action, default_metavar)(1)[0]
            return f"{metavar} [{metavar} ...]"
        return super()._format_args(action, default_metavar)


def require_files(args: argparse.Namespace) -> None:
    if not getattr(args, "files", None):
        raise UsageError("the following arguments are required: FILE")


#: Every list option's grammar, in its help.
LIST_GRAMMAR = "comma- or space-separated, or the option repeated"


#: --methods' help, with what it defaults to.
def methods_help(default: str) -> str:
    return f"method names, {LIST_GRAMMAR} (default: {default})"


def add_timing_options(p: argparse.ArgumentParser) -> None:
    """The options shared by every command that measures."""
    p.add_argument("--runs", type=positive_int, default=1000, help="timed runs per method (default 1000)")
    p.add_argument("--methods", action=Methods, help=methods_help("all available"))
    p.add_argument("--serialize", choices=SERIALIZE_MODES, default="lfence", help="serialization mode (default lfence)")
    p.add_argument("--cpu", type=cpu_number, help="pin the measuring thread to this CPU")


#: --out names meaning standard output: "-" by convention, and the names
#: Linux gives it (a file named "-" is still written as ./-).
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def check_out(text: str, option: str = "--out", *, overwrite: bool = False) -> Path:
    """The file `option` names, if it can be written (an existing one only with `overwrite`): checked before any work."""
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


def add_out_options(p: argparse.ArgumentParser, what: str, *, required: bool = False,
                    stdout: bool = True) -> None:
    """-o/--out and --overwrite: one spelling in every command that writes
    output (run, compare, plot); `what` is what --out receives."""
    to = ("file to write, or - (or /dev/stdout) for standard output; a file named - is ./-"
          if stdout else "file to write")
    default = "" if required or not stdout else " (default: standard output)"
    p.add_argument("-o", "--out", required=required, help=f"{what}: {to}{default}")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out if it exists (without it, an existing file is refused before any work)")


def add_counter_options(p: argparse.ArgumentParser) -> None:
    """--counter."""
    p.add_argument("--counter", choices=COUNTERS, default="tsc",
                   help="time with the TSC (default) or the PMU's core-cycle counter")


def check_counter_options(args: argparse.Namespace) -> str:
    """The counter asked for, checked against --serialize; whether this
    machine has it is asked separately (pmu_open())."""
    return check_counter(args.counter, args.serialize, "counter")
