"""Reading a result file: bounded and checked as it arrives, then parsed, verified, and read field by field (:class:`Reader`)."""

from __future__ import annotations

import base64
import binascii
import errno
import gzip
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from . import format as _json_format
from .paths import naming, nonempty_path
from .format import verify_checksum
from .format import BYTES_PER_SEPARATOR, CHUNK_BYTES, DEPTH_MAX, FORMAT_NAME, FORMAT_VERSION, GZIP_MAGIC, INTEGER_DIGITS_MAX, NOT_SEPARATORS, SEPARATORS_FIXED, TICK_DTYPES, ResultFileError, gzip_limit_bytes, separators_max


__all__ = ["Reader", "read_document", "encodable"]


class Reader:
    """Checks one document field by field; every failure names the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, problem: str) -> ResultFileError:
        return ResultFileError(f"{self.path}: {problem}")

    def get(self, obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
        if key not in obj:
            raise self.fail(f"missing field {where}{key!r}")
        value = obj[key]
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(f"field {where}{key!r} is a bool, expected {_kind_names(kinds)}")
        if not isinstance(value, kinds):
            raise self.fail(f"field {where}{key!r} is {type(value).__name__}, "
                            f"expected {_kind_names(kinds)}")
        return value

    def finite(self, obj: dict[str, Any], key: str, where: str) -> float:
        """A number field as a float: finite, and not an integer too large for one."""
        value = self.get(obj, key, (int, float), where)
        try:
            value = float(value)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise self.fail(f"field {where}{key!r} is {obj[key]!r}, expected a finite number")
        return value

    def number(self, obj: dict[str, Any], key: str, low: float, high: float, where: str,
               unit: str = "") -> float:
        """A number field as a float within low..high (`unit` for the message)."""
        value = self.get(obj, key, (int, float), where)
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
        if not low <= x <= high:  # NaN too
            unit = f" {unit}" if unit else ""
            raise self.fail(f"field {where}{key!r} is {value!r}, must be a number from {low:g} to "
                            f"{high:g}{unit}")
        return x

    def known(self, obj: dict[str, Any], fields: Iterable[str], where: str) -> None:
        """Refuse a field `obj` should not hold: a misspelt name would
        otherwise leave its value unread (an optional figure read as its
        default)."""
        allowed = set(fields)
        unknown = [k for k in obj if k not in allowed]
        if unknown:
            raise self.fail(f"unknown field {where}{unknown[0]!r}: {where.rstrip('.') or 'the document'} "
                            f"holds only {', '.join(sorted(allowed))}")

    def bounded(self, obj: dict[str, Any], key: str, low: int, high: int, where: str) -> int:
        """An integer field within low..high."""
        value = self.get(obj, key, (int,), where)
        if not low <= value <= high:
            raise self.fail(f"{where}{key} is {value}, must be {low} to {high}")
        return value

    def array(self, entry: dict[str, Any], key: str, runs: int, where: str) -> np.ndarray:
        spec = self.get(entry, key, (dict,), where)
        at = f"{where}{key!r}"
        self.known(spec, ("dtype", "length", "encoding", "data", "crc32"), f"{at}.")
        dtype = self.get(spec, "dtype", (str,), f"{at}.")
        length = self.get(spec, "length", (int,), f"{at}.")
        encoding = self.get(spec, "encoding", (str,), f"{at}.")
        text = self.get(spec, "data", (str,), f"{at}.")
        if length != runs:
            raise self.fail(f"array length mismatch: {at} holds {length} values "
                            f"but runs is {runs}")
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise self.fail(f"{at} data is not valid base64 ({exc})") from None
        if key == "migrated":
            if (dtype, encoding) != ("bool", "base64-packbits"):
                raise self.fail(f"{at} must be dtype 'bool' in 'base64-packbits', "
                                f"not {dtype!r} in {encoding!r}")
            if len(data) != (length + 7) // 8:
                raise self.fail(f"array length mismatch: {at} data holds {len(data) * 8} "
                                f"bits, not the {length} its length says")
            self.check_crc(spec, data, at)
            return np.unpackbits(np.frombuffer(data, np.uint8), count=length).astype(np.bool_)
        if dtype not in TICK_DTYPES or encoding != "base64":
            raise self.fail(f"{at} must be one of dtypes {', '.join(TICK_DTYPES)} in 'base64', "
                            f"not {dtype!r} in {encoding!r}")
        itemsize = np.dtype(dtype).itemsize
        if len(data) != length * itemsize:
            raise self.fail(f"array length mismatch: {at} data holds {len(data)} bytes, "
                            f"not the {length} x {itemsize} its length says")
        self.check_crc(spec, data, at)
        return np.frombuffer(data, dtype).astype(np.uint64)

    def check_crc(self, spec: dict[str, Any], data: bytes, at: str) -> None:
        """An array's CRC-32, where the file has one (older files have none)."""
        if "crc32" not in spec:
            return
        crc = self.bounded(spec, "crc32", 0, 0xFFFFFFFF, f"{at}.")
        computed = zlib.crc32(data)
        if computed != crc:
            raise self.fail(f"{at} data fails its CRC-32 check (stored {crc:#010x}, "
                            f"computed {computed:#010x}): the file was altered or damaged")


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", dict: "an object",
             list: "a list", type(None): "null", bool: "true/false"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


# -- the text: read once, into one buffer, checked as it arrives --------------

#: Bytes of plain JSON text: printable ASCII but the backslash, and the
#: whitespace JSON allows. Any other byte is looked at (rarely there is one).
_PLAIN_BYTES = bytes(sorted(set(range(0x20, 0x7F)) - {0x5C} | {0x09, 0x0A, 0x0D}))
#: Bytes no JSON text holds: control characters but its whitespace.
_BINARY_BYTES = bytes(sorted(set(range(0x20)) - {0x09, 0x0A, 0x0D}))
_NOT_BINARY_BYTES = bytes(sorted(set(range(256)) - set(_BINARY_BYTES)))
#: The whitespace JSON allows before a value.
_JSON_BLANKS = b" \t\n\r"


class _TextGate:
    """Checks text chunk by chunk as read (binary data, separator count); says whether it is ``plain``."""

    def __init__(self, path: Path, most_bytes: int) -> None:
        self.path = path
        self.most_bytes = most_bytes
        self.seen_bytes = 0
        self.separators = 0
        self.plain = True
        #: whether the first byte after the leading blanks was seen
        self.started = False

    def _judge_start(self, chunk: bytes) -> None:
        """The first byte after the blanks (which a gzip file save() padded
        starts with) must open JSON's object or list (a list is refused
        by name once parsed): anything else is no JSON a result file can
        be, refused before the rest of a gigabyte of it is read."""
        rest = chunk.lstrip(_JSON_BLANKS)
        if not rest:
            return
        self.started = True
        if rest[:1] not in (b"{", b"["):
            at = self.seen_bytes + len(chunk) - len(rest)
            raise ResultFileError(f"{self.path}: not a fastcpu result file (not JSON: it starts with "
                                  f"{bytes(rest[:1])!r} at offset {at}, where a result file opens "
                                  "a JSON object with '{')")

    def feed(self, chunk: bytes) -> None:
        odd = chunk.translate(None, _PLAIN_BYTES)
        if odd:
            bad = odd.translate(None, _NOT_BINARY_BYTES)
            if bad:
                at = self.seen_bytes + chunk.index(bad[:1])
                raise ResultFileError(f"{self.path}: not a fastcpu result file (binary data, not "
                                      f"JSON text: byte {bad[0]:#04x} at offset {at})")
            self.plain = False
        if not self.started:
            self._judge_start(chunk)
        self.separators += len(chunk.translate(None, NOT_SEPARATORS))
        self.seen_bytes += len(chunk)
        if self.separators > separators_max(self.most_bytes):  # however much more comes
            raise self._too_many(self.most_bytes)

    def finish(self) -> None:
        """The count against the text's own size, once it is whole."""
        if self.separators > separators_max(self.seen_bytes):
            raise self._too_many(self.seen_bytes)

    def _too_many(self, text_bytes: int) -> ResultFileError:
        return ResultFileError(
            f"{self.path}: not a fastcpu result file: {self.separators} JSON values and keys "
            f"(counted by the '[', '{{', ',' and ':' before each) in its first {self.seen_bytes} "
            f"bytes, more than the {separators_max(text_bytes)} a result file of {text_bytes} "
            f"bytes holds ({SEPARATORS_FIXED} plus one per {BYTES_PER_SEPARATOR} bytes: its bulk "
            "is base64 arrays); refused before parsing, which would build objects of many "
            "times the file's size")


def _read_plain(path: Path, f: Any, size_bytes: int) -> tuple[bytearray, _TextGate]:
    """The whole of `f` (`size_bytes`) in one growing buffer, each chunk judged as it arrives:
    what is no result file is refused at its first chunk, before the rest is read."""
    gate = _TextGate(path, size_bytes)
    text = bytearray()
    while len(text) < size_bytes:
        chunk = f.read(min(CHUNK_BYTES, size_bytes - len(text)))
        if not chunk:
            break  # it shrank while we read: what is left is checked
        gate.feed(chunk)
        text += chunk
    if f.read(1):
        raise ResultFileError(f"{path}: the file grew while it was read (is something writing "
                              "it?); load it once it is written")
    gate.finish()
    return text, gate


def _gunzip(path: Path, f: Any, compressed_bytes: int) -> tuple[bytearray, _TextGate]:
    """The text of gzip file `f`, decompressed as a stream, every prefix within :func:`gzip_limit_bytes`."""
    limit = gzip_limit_bytes(compressed_bytes)
    gate = _TextGate(path, limit)
    text = bytearray()
    try:
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            while chunk := g.read(CHUNK_BYTES):
                read_bytes = f.tell()  # compressed, a read-ahead buffer beyond what was used
                allowed = min(limit, gzip_limit_bytes(read_bytes))
                if len(text) + len(chunk) > allowed:
                    raise ResultFileError(
                        f"{path}: gzip data expands to more than {allowed} bytes from its first "
                        f"{read_bytes} of {compressed_bytes} compressed bytes: more than a result "
                        f"file holds (a decompression bomb?); if it is one, gunzip it and load the "
                        f"plain file (up to {_json_format.TEXT_MAX_BYTES} bytes)")
                gate.feed(chunk)
                text += chunk
    except EOFError:
        raise ResultFileError(f"{path}: truncated gzip file (the compressed stream "
                              "ends early)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise ResultFileError(f"{path}: corrupt gzip file ({exc})") from None
    except OSError as exc:
        if exc.errno is not None:  # the file could not be read (EIO): not its contents
            raise
        raise ResultFileError(f"{path}: corrupt gzip file ({exc})") from None
    gate.finish()
    return text, gate


def _read_text(path: Path) -> tuple[bytearray, _TextGate]:
    """The text of result file `path` in one buffer, and what its gate saw; OSErrors name `path`."""
    try:
        return _read_text_of(path)
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise naming(exc, path) from None


def _read_text_of(path: Path) -> tuple[bytearray, _TextGate]:
    fd = _open_regular(path)
    try:
        size_bytes = os.fstat(fd).st_size
        if size_bytes > _json_format.TEXT_MAX_BYTES:
            raise ResultFileError(f"{path}: {size_bytes} bytes, more than the {_json_format.TEXT_MAX_BYTES} "
                                  "a result file may hold")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            if f.read(2) == GZIP_MAGIC:
                f.seek(0)
                return _gunzip(path, f, size_bytes)
            f.seek(0)
            return _read_plain(path, f, size_bytes)
    finally:
        if fd >= 0:
            os.close(fd)


def _decode_text(path: Path, data: bytearray) -> str:
    if not data:
        raise ResultFileError(f"{path}: empty file (truncated?), not a fastcpu result file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultFileError(f"{path}: not a fastcpu result file (binary data, "
                              "not JSON text)") from None


_NOT_BLANK = re.compile(r"\S")


def _looks_like_ours(text: str) -> bool:
    """Whether `text` starts like a document this module wrote (or a prefix of one)."""
    first = _NOT_BLANK.search(text)  # a gzip file save() padded starts with blanks
    start = first.start() if first else len(text)
    head = "".join(text[start:start + 200].split())
    ours = '{"format":"%s"' % FORMAT_NAME
    return head.startswith(ours) or (len(head) >= 10 and ours.startswith(head))


#: An escape of anything but a quote (``\\n``, ``\\\\``, ``\\u00fc``): it cannot end a string.
_NOT_QUOTE_ESCAPE = re.compile(rb'\\[^"]', re.DOTALL)
#: What is left of the text but its brackets, quotes and backslashes: a
#: string (to its end, where it is cut short) or an escaped quote outside one.
_STRING_OR_ESCAPE = re.compile(rb'\\.|"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'"\\[]{}')))
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _check_nesting(path: Path, data: bytearray) -> None:
    """Refuse JSON nested deeper than DEPTH_MAX before json's recursive C parser sees it."""
    text = _NOT_QUOTE_ESCAPE.sub(b"", data) if b"\\" in data else data
    structure = text.translate(None, _NOT_STRUCTURE)
    del text
    brackets = _STRING_OR_ESCAPE.sub(b"", structure).translate(None, _NOT_BRACKETS)
    del structure
    codes = np.frombuffer(brackets, np.uint8)
    depth = 0
    for start in range(0, codes.size, CHUNK_BYTES):
        chunk = codes[start:start + CHUNK_BYTES]
        running = np.cumsum(np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1), dtype=np.int64) + depth
        if int(running.max()) > DEPTH_MAX:
            raise ResultFileError(f"{path}: not a fastcpu result file (JSON nested too deeply to read): "
                                  f"more than the {DEPTH_MAX} levels a result file may hold")
        depth = int(running[-1])


class _NotFinite(ValueError):
    """NaN or Infinity in the text: Python's json reads them, JSON has no such number."""


def _integer(digits: str) -> int:
    """A JSON integer of at most INTEGER_DIGITS_MAX digits (int() of a long one is quadratic)."""
    if len(digits) > INTEGER_DIGITS_MAX + 1:
        raise ValueError(f"an integer of {len(digits)} characters, more than the "
                         f"{INTEGER_DIGITS_MAX} digits of any figure in a result file")
    return int(digits)


def _not_finite(name: str) -> float:
    raise _NotFinite(name)


class _DuplicateKey(ValueError):
    """An object holding one key twice (a checksum over what json keeps would miss a splice)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, each key once (json.loads's object_pairs_hook)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _DuplicateKey(twice)
    return obj


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text, parse_int=_integer, parse_constant=_not_finite,
                         object_pairs_hook=_unique_keys)
    except RecursionError:
        raise ResultFileError(f"{path}: not a fastcpu result file (JSON nested too deeply "
                              "to read)") from None
    except _DuplicateKey as exc:
        raise ResultFileError(f"{path}: not a fastcpu result file as save() writes it: key "
                              f"{encodable(exc.args[0])!r} appears twice in one object (JSON readers "
                              "keep one or the other; a field spliced in?)") from None
    except json.JSONDecodeError as exc:
        # The writer puts "format" first: a document that starts like one of
        # ours but does not parse was cut short or damaged.
        if _looks_like_ours(text):
            at_end = exc.pos >= len(text.rstrip()) - 1 or "Unterminated" in exc.msg
            problem = "truncated" if at_end else "corrupt"
            raise ResultFileError(f"{path}: {problem} fastcpu result file (JSON ends or breaks "
                                  f"at line {exc.lineno} column {exc.colno}: {exc.msg})") from None
        raise ResultFileError(f"{path}: not a fastcpu result file (not JSON: {exc})") from None
    except _NotFinite as exc:
        raise ResultFileError(f"{path}: not a fastcpu result file (JSON with {exc}, which is no "
                              "number: fastcpu writes null for a figure it does not know)") from None
    except ValueError as exc:  # an integer too long (ours, or sys.get_int_max_str_digits())
        raise ResultFileError(f"{path}: not a fastcpu result file (a JSON number too long to "
                              f"read: {exc})") from None
    if not isinstance(doc, dict):
        raise ResultFileError(f"{path}: not a fastcpu result file (JSON {type(doc).__name__}, "
                              "not an object)")
    fmt = doc.get("format")
    if fmt != FORMAT_NAME:
        what = "no 'format' field" if fmt is None else f"format {fmt!r}"
        raise ResultFileError(f"{path}: not a fastcpu result file (JSON with {what}, "
                              f"expected format {FORMAT_NAME!r})")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ResultFileError(f"{path}: fastcpu result file without an integer 'version' "
                              f"(found {version!r})")
    if version > FORMAT_VERSION:
        raise ResultFileError(f"{path}: written by a newer fastcpu: format version {version} > "
                              f"supported {FORMAT_VERSION}; upgrade fastcpu to read it")
    if version < 1:
        raise ResultFileError(f"{path}: unknown format version {version} (versions start at 1)")
    return doc


def read_document(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Path, bool]:
    """The document in result file `path`, format and version checked, checksum verified and removed.

    Returns (document, the path for messages, whether it carried a checksum).
    Limits and errors: see :func:`fastcpu.load`."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    path = nonempty_path(path)
    data, gate = _read_text(path)
    _check_nesting(path, data)
    text = _decode_text(path, data)
    del data
    doc = _parse(path, text)
    del text
    verified = verify_checksum(path, doc, gate.plain)
    if not gate.plain:  # only escapes or non-ASCII text can hold what is replaced
        try:
            _encodable_strings(doc)
        except ValueError as exc:  # nested too deeply
            raise ResultFileError(f"{path}: not a fastcpu result file ({exc})") from None
    return doc, path, verified


#: What no string read from a file keeps: lone surrogates ("\ud800", which
#: json reads from "\\ud800"), which no UTF-8 output (a terminal, a CSV
#: file, a plot's font) can write. Control characters stay, faithful: every
#: terminal output shows them escaped (_display.printable), JSON and CSV
#: outputs keep them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def encodable(s: str) -> str:
    """`s` with each lone surrogate replaced by U+FFFD, the replacement
    character: text any UTF-8 output can write."""
    if s.isascii():  # no copy, and fast: the arrays' base64
        return s
    return _SURROGATES.sub("\ufffd", s)


def _encodable_strings(node: Any, depth: int = 0) -> Any:
    """`node` with every string in it, keys too, :func:`encodable`, in place."""
    if isinstance(node, str):
        return encodable(node)
    if depth >= DEPTH_MAX:
        raise ValueError(f"nested deeper than the {DEPTH_MAX} levels a result file may")
    if isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _encodable_strings(item, depth + 1)
    elif isinstance(node, dict):
        items = list(node.items())
        node.clear()
        for key, item in items:
            node[encodable(key)] = _encodable_strings(item, depth + 1)
    return node


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _check_regular(path: Path, st: os.stat_result) -> None:
    """Refuse what is not a regular file, naming what it is."""
    if stat.S_ISDIR(st.st_mode):
        # errno, strerror and filename set, as open() would: callers print them.
        raise IsADirectoryError(errno.EISDIR, "Is a directory, not a result file written by "
                                "Results.save()", str(path))
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise ResultFileError(f"{path}: {kind}, not a result file: give the path of a "
                              "file written by Results.save()")


def _open_regular(path: Path) -> int:
    """A descriptor of `path`, a regular file: its type is checked before it
    is opened (opening a socket fails with ENXIO, a FIFO waits for a
    writer, a device may never end) and again once open (it may have been
    replaced in between; O_NONBLOCK keeps a FIFO put there from blocking)."""
    _check_regular(path, os.stat(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # became a socket (or a device without its driver)
            raise ResultFileError(f"{path}: a socket or a device, not a result file: give the path "
                                  "of a file written by Results.save()") from None
        raise
    try:
        _check_regular(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd
