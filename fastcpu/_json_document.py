"""The result-file codec: a JSON document to and from a file, and the array
encodings inside it. It knows nothing of Results: :meth:`Results.to_document`
and :meth:`Results.from_document` say what goes in a document; this module
writes one atomically (:func:`write_document`, through ``_atomicfile.py``), reads one back within limits
and checks its format and version (:func:`read_document`), and gives the
field-by-field reader (:class:`Reader`) and array encodings both sides use.

Layout (format version 1; version 2 where the clock's core cycles are unknown)::

    {"format": "fastcpu-results", "version": 1,
     "fastcpu_version": "0.1.0", "date": "2025-01-31T12:00:00Z", "label": null,
     "serialize": "lfence",
     "clock": {"tsc_hz": 2596129878.6, "tsc_step_ticks": 25.96, "cycles_per_tick": 1.37,
               "tsc_read_spacing_ticks": 26.0,                  (optional, >= 0.5.0)
               "rulers": {"add_cycles_per_tick": 1.37, "imul_cycles_per_tick": 1.37,
                          "tolerance": 0.03, "immediate_adds_per_core_cycle": 1.0},
                                                                 (optional, >= 0.5.0)
               "core_cycles_problem": "the core-cycle rulers disagree: ..."},
                          (only where they disagree: cycles_per_tick is then null, version 2)
     "notes": ["Re-derived by ..."],                            (optional, >= 0.5.0)
     "machine": {... machine_info() ...},
     "unavailable": {"method": "reason", ...},
     "selftest": {... SelfTest.to_dict() ...},          (optional, fastcpu >= 0.3.0)
     "results": [
       {"method": "gdt", "runs": 1000, "serialize": "lfence", "unroll": 1, "cpu": null,
        "counter": "tsc", "best_ticks": 52.0, "median_ticks": 52.0,
        "cycles_per_tick": 1.42, "cycles_per_tick_ci95": 0.01,       (optional, >= 0.3.0)
        "harness_bias_core_cycles": 0.9, "harness_bias_ci95_core_cycles": 1.6,
        "caveats": ["..."],                     (optional, >= 0.5.0; cycles_per_tick null
                                                  where the clock's core cycles are unknown)
        "raw":      {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 2871520013},
        "empty":    {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 309187465},
        "migrated": {"dtype": "bool", "length": 1000, "encoding": "base64-packbits",
                     "data": "...", "crc32": 2768625435}},
       ...]}

Arrays of TSC ticks are stored as little-endian unsigned integers of the
narrowest width that holds their largest value (``<u1`` .. ``<u8``) and read
back as uint64; ``migrated`` is bit-packed (``numpy.packbits``, big-endian
bit order). Each array carries ``"crc32"``, zlib's CRC-32 of its decoded
bytes; load() refuses data that fails it. It is optional, so the format is
still version 1: files written before it was added load (unchecked), and
older fastcpu reads new files, ignoring it. ``best_ticks`` and ``median_ticks`` are there for people reading
the file: load() recomputes them from the arrays and rejects a file whose
stored figures disagree. ``counter`` says what the runs counted (``'tsc'``,
``'pmu'``, ``'pmu_user'``; TSC ticks when absent, as in files written before
it was added; its old name ``"clock"`` is read too). A path ending in ``.gz`` is gzip-compressed; load()
recognises gzip by its magic bytes whatever the name.
"""

from __future__ import annotations

import base64
import binascii
import errno
import gzip
import io
import json
import math
import os
import stat
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ._atomicfile import check_target, nonempty_path, write_atomic
from ._core import Error

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ResultFileError",
    "Reader",
    "encode_ticks",
    "encode_bools",
    "read_document",
    "encode_document",
    "write_document",
    "gzip_limit_bytes",
]

FORMAT_NAME = "fastcpu-results"
#: The newest format version this fastcpu reads and the one it writes.
FORMAT_VERSION = 2

#: The coarsest TSC step a file may claim, in ticks (about one step a second at 4 GHz).
STEP_MAX = 1 << 32
_TICK_DTYPES = ("<u1", "<u2", "<u4", "<u8")
_GZIP_MAGIC = b"\x1f\x8b"

#: The largest document load() reads, in bytes of JSON text (plain, or once
#: decompressed): about 2.7 x 10^8 runs of 2-byte ticks.
TEXT_MAX_BYTES = 1 << 30
#: A result file's JSON may hold this many separators (``[ { , :``, one
#: before each value or key) whatever its size: its machine facts, self-test
#: and results but their arrays, with room for a machine of thousands of
#: CPUs (each in three lists)...
SEPARATORS_FIXED = 1 << 18
#: ...and beyond it one per this many bytes of text (a result of 10 runs
#: takes about 30 bytes a separator, of 1,000 runs about 1,000).
BYTES_PER_SEPARATOR = 128
#: The longest integer in a result file, in digits (a uint64 has 20).
INTEGER_DIGITS_MAX = 40
#: load() holds at most this many times the file's text in memory at its
#: peak (a plain file's size; what a gzip file decompresses to, bounded by
#: gzip_limit_bytes())...
LOAD_MEMORY_MULTIPLE = 10
#: ...plus this much, whatever the file (what SEPARATORS_FIXED values may build).
LOAD_MEMORY_ALLOWANCE_BYTES = 64 << 20
#: A gzip file may decompress to this much text whatever its size...
_GZIP_FLOOR_BYTES = 32 << 20
#: ...and beyond it to this many times its compressed size. Result files
#: compress 8-17 times (base64 of small tick counts); only arrays of one
#: value repeated compress further, and a gzip bomb does (up to 1032 times).
_GZIP_RATIO_MAX = 64


class ResultFileError(Error, ValueError):
    """A file that is not a readable fastcpu result file; the message says why."""


# -- writing -------------------------------------------------------------------

def encode_ticks(a: np.ndarray) -> dict[str, Any]:
    """An array of counts as little-endian unsigned integers of the narrowest
    width that holds its largest value, base64, with its CRC-32."""
    top = int(a.max()) if a.size else 0
    dtype = next(d for d in _TICK_DTYPES if top <= np.iinfo(np.dtype(d)).max)
    data = a.astype(dtype).tobytes()
    return {"dtype": dtype, "length": int(a.size), "encoding": "base64",
            "data": base64.b64encode(data).decode("ascii"), "crc32": zlib.crc32(data)}


def encode_bools(a: np.ndarray) -> dict[str, Any]:
    """An array of bools bit-packed (numpy.packbits), base64, with its CRC-32."""
    data = np.packbits(a.astype(np.bool_)).tobytes()
    return {"dtype": "bool", "length": int(a.size), "encoding": "base64-packbits",
            "data": base64.b64encode(data).decode("ascii"), "crc32": zlib.crc32(data)}


def write_document(doc: dict[str, Any], path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write the JSON document `doc` to `path` atomically (gzip when the name
    ends in ``.gz``): see :meth:`fastcpu.Results.save` for the guarantees and
    what is raised."""
    path = check_target(path, overwrite)
    write_atomic(path, encode_document(doc, compress=path.name.endswith(".gz")), overwrite=overwrite)


def encode_document(doc: dict[str, Any], *, compress: bool = False) -> bytes:
    """The bytes of a result file holding `doc`: JSON text, gzip-compressed
    when `compress` (what write_document() writes, for writers of other kinds
    of file: standard output)."""
    data = (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode("utf-8")
    separators = len(data.translate(None, _NOT_SEPARATORS))
    if separators > separators_max(len(data)):
        # what read_document() would refuse is not written
        raise ValueError(f"the document holds {separators} JSON values and keys in {len(data)} "
                         f"bytes, more than the {separators_max(len(data))} a result file may: "
                         "fewer results, or more runs each (their arrays are what a file holds)")
    return gzip.compress(data, mtime=0) if compress else data


# -- reading -------------------------------------------------------------------

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

    def bounded(self, obj: dict[str, Any], key: str, low: int, high: int, where: str) -> int:
        """An integer field within low..high."""
        value = self.get(obj, key, (int,), where)
        if not low <= value <= high:
            raise self.fail(f"{where}{key} is {value}, must be {low} to {high}")
        return value

    def array(self, entry: dict[str, Any], key: str, runs: int, where: str) -> np.ndarray:
        spec = self.get(entry, key, (dict,), where)
        at = f"{where}{key!r}"
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
        if dtype not in _TICK_DTYPES or encoding != "base64":
            raise self.fail(f"{at} must be one of dtypes {', '.join(_TICK_DTYPES)} in 'base64', "
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

#: Bytes read (or decompressed) at a time.
_CHUNK_BYTES = 1 << 20
#: Bytes of plain JSON text: printable ASCII but the backslash, and the
#: whitespace JSON allows. Any other byte is looked at (rarely there is one).
_PLAIN_BYTES = bytes(sorted(set(range(0x20, 0x7F)) - {0x5C} | {0x09, 0x0A, 0x0D}))
#: Bytes no JSON text holds: control characters but its whitespace.
_BINARY_BYTES = bytes(sorted(set(range(0x20)) - {0x09, 0x0A, 0x0D}))
_NOT_BINARY_BYTES = bytes(sorted(set(range(256)) - set(_BINARY_BYTES)))
#: One of these comes before every JSON value but the outermost ('[' or ','
#: in a list, ':' in an object) and every object key ('{' or ','):
#: counting them bounds what parsing the text builds.
_SEPARATORS = b"[{,:"
_NOT_SEPARATORS = bytes(sorted(set(range(256)) - set(_SEPARATORS)))


def separators_max(text_bytes: int) -> int:
    """The most JSON separators (``[ { , :``, one before each value or key,
    counted in strings too) a result file of `text_bytes` may hold: its bulk
    is base64 strings, which hold none. Parsing builds at most about 100
    bytes of objects per separator, so this bounds what a text of many small
    values (``[[], [], ...]``: 25 times its size) costs."""
    return SEPARATORS_FIXED + text_bytes // BYTES_PER_SEPARATOR


class _TextGate:
    """Checks a result file's text chunk by chunk as it is read or
    decompressed, so that what cannot be one is refused before the rest is
    read: binary data (a gzip bomb of zeros stops at its first chunk), and
    more separators than a text of `most_bytes` may hold. Says whether the
    text is ``plain`` (only :data:`_PLAIN_BYTES`: no escape, no non-ASCII
    character, so no string in it holds a control character or a surrogate)."""

    def __init__(self, path: Path, most_bytes: int) -> None:
        self.path = path
        self.most_bytes = most_bytes
        self.seen_bytes = 0
        self.separators = 0
        self.plain = True

    def feed(self, chunk: bytes) -> None:
        odd = chunk.translate(None, _PLAIN_BYTES)
        if odd:
            bad = odd.translate(None, _NOT_BINARY_BYTES)
            if bad:
                at = self.seen_bytes + chunk.index(bad[:1])
                raise ResultFileError(f"{self.path}: not a fastcpu result file (binary data, not "
                                      f"JSON text: byte {bad[0]:#04x} at offset {at})")
            self.plain = False
        self.separators += len(chunk.translate(None, _NOT_SEPARATORS))
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


def gzip_limit_bytes(compressed_bytes: int) -> int:
    """The most text load() accepts from a gzip file of `compressed_bytes`."""
    return min(TEXT_MAX_BYTES, _GZIP_FLOOR_BYTES + _GZIP_RATIO_MAX * compressed_bytes)


def _read_plain(path: Path, f: Any, size_bytes: int) -> tuple[bytearray, _TextGate]:
    """The whole of `f`, a file of `size_bytes`, in one buffer of that size
    (no chunks joined into a second copy), checked."""
    text = bytearray(size_bytes)
    done = 0
    with memoryview(text) as view:
        while done < size_bytes:
            got = f.readinto(view[done:])
            if not got:
                break
            done += got
    del text[done:]  # it shrank while we read: what is left is checked
    if f.read(1):
        raise ResultFileError(f"{path}: the file grew while it was read (is something writing "
                              "it?); load it once it is written")
    gate = _TextGate(path, len(text))
    for start in range(0, len(text), _CHUNK_BYTES):
        gate.feed(bytes(text[start:start + _CHUNK_BYTES]))
    gate.finish()
    return text, gate


def _gunzip(path: Path, f: Any, compressed_bytes: int) -> tuple[bytearray, _TextGate]:
    """The text of the gzip file `f`, decompressed as a stream into one
    growing buffer and checked chunk by chunk: refused as soon as it passes
    :func:`gzip_limit_bytes` or the gate refuses a chunk, so that a bomb
    costs at most the limit, once."""
    limit = gzip_limit_bytes(compressed_bytes)
    gate = _TextGate(path, limit)
    text = bytearray()
    try:
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            while chunk := g.read(_CHUNK_BYTES):
                if len(text) + len(chunk) > limit:
                    raise ResultFileError(
                        f"{path}: gzip data expands to more than {limit} bytes ({compressed_bytes} "
                        f"compressed): more than a result file of that size holds (a decompression "
                        f"bomb?); if it is one, gunzip it and load the plain file (up to "
                        f"{TEXT_MAX_BYTES} bytes)")
                gate.feed(chunk)
                text += chunk
    except EOFError:
        raise ResultFileError(f"{path}: truncated gzip file (the compressed stream "
                              "ends early)") from None
    except (OSError, zlib.error) as exc:
        raise ResultFileError(f"{path}: corrupt gzip file ({exc})") from None
    gate.finish()
    return text, gate


def _read_text(path: Path) -> tuple[bytearray, _TextGate]:
    """The text of the result file `path` (plain, or gzip whatever its name),
    in one buffer, and what its gate saw."""
    fd = _open_regular(path)
    try:
        size_bytes = os.fstat(fd).st_size
        if size_bytes > TEXT_MAX_BYTES:
            raise ResultFileError(f"{path}: {size_bytes} bytes, more than the {TEXT_MAX_BYTES} "
                                  "a result file may hold")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            if f.read(2) == _GZIP_MAGIC:
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


def _looks_like_ours(text: str) -> bool:
    """Whether `text` starts like a document this module wrote (or a prefix of one)."""
    head = "".join(text[:200].split())
    ours = '{"format":"%s"' % FORMAT_NAME
    return head.startswith(ours) or (len(head) >= 10 and ours.startswith(head))


class _NotFinite(ValueError):
    pass


def _integer(digits: str) -> int:
    """A JSON integer of at most INTEGER_DIGITS_MAX digits: a longer one
    is no figure of ours, and int() of one takes time quadratic in its
    length where sys.set_int_max_str_digits(0) lifted Python's own limit."""
    if len(digits) > INTEGER_DIGITS_MAX + 1:
        raise ValueError(f"an integer of {len(digits)} characters, more than the "
                             f"{INTEGER_DIGITS_MAX} digits of any figure in a result file")
    return int(digits)


def _not_finite(name: str) -> float:
    raise _NotFinite(name)


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text, parse_int=_integer, parse_constant=_not_finite)
    except RecursionError:
        raise ResultFileError(f"{path}: not a fastcpu result file (JSON nested too deeply "
                              "to read)") from None
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


def read_document(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Path]:
    """The document in the result file `path` (plain or gzip JSON), its format
    and version checked, and the path it was read from (for messages):
    :func:`fastcpu.load` builds Results from it. See :func:`fastcpu.load` for
    the limits and what is raised.

    Memory: the text once (a bytearray of the file's size, or of what a gzip
    file decompresses to, grown in place), then its str beside it while it
    is decoded, then the str and the parsed document, whose size the gate's
    count of separators bounds; each buffer is dropped once the next is made.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    path = nonempty_path(path)
    data, _ = _read_text(path)
    text = _decode_text(path, data)
    del data
    return _parse(path, text), path


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
