"""The result-file codec: a JSON document to and from a file, and the array
encodings inside it. It knows nothing of Results: :meth:`Results.to_document`
and :meth:`Results.from_document` say what goes in a document; this module
writes one atomically (:func:`write_document`, through ``_atomicfile.py``), reads one back within limits
and checks its format and version (:func:`read_document`), and gives the
field-by-field reader (:class:`Reader`) and array encodings both sides use.

Layout (format version 4, which fastcpu writes since 0.7.0; 0.6.0 wrote
version 3, whose files carry no catalog rows: their writer's are recorded in
the package, ``_catalog_rows``; before 0.6.0 it wrote version 1, and 2 where
the clock's core cycles are unknown: they read the same, without the
checksum)::

    {"format": "fastcpu-results", "version": 4,
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
        "catalog_row": {"kind": "method", "role": "cpu_source", "encoding": "cpunode",
                        "description": "LSL on ..."},   (version >= 4; absent for a user function)
        "raw":      {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 2871520013},
        "empty":    {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 309187465},
        "migrated": {"dtype": "bool", "length": 1000, "encoding": "base64-packbits",
                     "data": "...", "crc32": 2768625435}},
       ...],
     "checksum": {"sha256": "<64 hex digits>",                   (version >= 3, required)
                  "field_crc32": {"format": <CRC-32>, ..., "clock": {"tsc_hz": <CRC-32>, ...},
                                  ..., "results": [{"method": <CRC-32>, ...}, ...]}}}

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

``checksum`` (format version 3 on) protects every figure, not just the
arrays: ``sha256`` is the SHA-256 of the document's canonical form, every
field but ``checksum`` (JSON without whitespace, object keys sorted,
strings escaped to ASCII as ``json.dumps`` escapes them, numbers as
Python's ``repr`` writes them), so that re-indenting or reordering keeps it
and changing any value does not; ``field_crc32`` holds the CRC-32 of each
field's canonical form, two levels deep (one per key of an object, one per
item of a list, per key of an object item), for the message to name what
differs. A file of version 3 without its checksum is refused; one of
version 1 or 2 loads unverified (``Results.verified`` is False).
"""

from __future__ import annotations

import base64
import binascii
import errno
import gzip
import hashlib
import io
import json
import math
import os
import re
import secrets
import stat
import zlib
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

import numpy as np

from ._args import RUNS_MAX, STEP_MAX_TICKS
from ._atomicfile import check_target, naming, nonempty_path, write_atomic
from ._errors import Error

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
    "separators_max",
    "encodable",
]

FORMAT_NAME = "fastcpu-results"
#: The newest format version this fastcpu reads and the one it writes (4: each result
#: carries its catalog row, ``Results.to_document``).
FORMAT_VERSION = 4
#: From this format version on a file must carry its checksum ("checksum").
CHECKSUM_VERSION = 3
#: The deepest a document nests (a result file: 6 levels, to a self-test's chains).
DEPTH_MAX = 32

#: The coarsest TSC step a file may claim, in ticks (_args.STEP_MAX_TICKS).
STEP_MAX = int(STEP_MAX_TICKS)
_TICK_DTYPES = ("<u1", "<u2", "<u4", "<u8")
_GZIP_MAGIC = b"\x1f\x8b"
#: The gzip level save() writes: 6, zlib's default. Level 9 took 25 s for a
#: file level 6 writes in 2.4 s (37 results of 200,000 runs), 12% smaller.
GZIP_LEVEL = 6


def _base64_bytes(n: int) -> int:
    return 4 * -(-n // 3)


def arrays_text_bytes_max(runs: int) -> int:
    """The most bytes of text the arrays of one result of `runs` runs take
    in a file: raw and empty of 8-byte counts and migrated bit-packed, in
    base64 (what :func:`encode_ticks` and :func:`encode_bools` write)."""
    return 2 * _base64_bytes(8 * runs) + _base64_bytes(-(-runs // 8))


#: What a document holds besides its results' arrays, at most, for
#: TEXT_MAX_BYTES: machine facts, a self-test, each result's settings and
#: up to 100 caveats of 2,000 characters (6 bytes each where escaped).
DOCUMENT_ALLOWANCE_BYTES = 64 << 20
#: The largest document save() writes and load() reads, in bytes of JSON
#: text (plain, or once decompressed), derived from the runs limit: one
#: result of RUNS_MAX (10^8) runs always fits, whatever its counts (2.06
#: GiB); several large ones may not, and save() refuses them by name.
TEXT_MAX_BYTES = arrays_text_bytes_max(RUNS_MAX) + DOCUMENT_ALLOWANCE_BYTES
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
#: ...and beyond it to this many times its compressed size, at every prefix
#: of its stream. Result files compress 8-17 times (base64 of small tick
#: counts); arrays of near-identical runs compress 400-1000 times, as a gzip
#: bomb does (deflate's most: 1032), and save() writes those with blank
#: padding ahead of the text (:func:`_gzip`), so that every file it writes loads.
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
            "data": _b64(data), "crc32": zlib.crc32(data)}


def _b64(data: bytes) -> str:
    """`data` in base64, a chunk at a time (a whole number of 3-byte groups
    each), so that a signal (Ctrl-C) is seen within a chunk's time."""
    step = 3 * (_CHUNK_BYTES // 3)
    with memoryview(data) as view:
        return "".join(base64.b64encode(view[i:i + step]).decode("ascii") for i in range(0, len(data), step))


def encode_bools(a: np.ndarray) -> dict[str, Any]:
    """An array of bools bit-packed (numpy.packbits), base64, with its CRC-32."""
    data = np.packbits(a.astype(np.bool_)).tobytes()
    return {"dtype": "bool", "length": int(a.size), "encoding": "base64-packbits",
            "data": _b64(data), "crc32": zlib.crc32(data)}


def write_document(doc: dict[str, Any], path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write the JSON document `doc` to `path` atomically (gzip when the name
    ends in ``.gz``): see :meth:`fastcpu.Results.save` for the guarantees and
    what is raised."""
    path = check_target(path, overwrite)
    write_atomic(path, encode_document(doc, compress=path.name.endswith(".gz")), overwrite=overwrite)


def encode_document(doc: dict[str, Any], *, compress: bool = False) -> bytes:
    """The bytes of a result file holding `doc` with its checksum (any
    ``"checksum"`` it holds replaced): JSON text, gzip-compressed when
    `compress` (what write_document() writes, for writers of other kinds of
    file: standard output).

    The base64 of the arrays, the separator count and the compression work
    a megabyte at a time, so that Ctrl-C stops it within a second (one
    call of json's string encoder still takes each array whole: about 0.3 s
    for 10^8 runs here).

    Raises:
        TypeError, ValueError: `doc` holds what JSON cannot (NaN, a set), or
            more text (TEXT_MAX_BYTES), values or nesting than
            read_document() accepts.
    """
    doc = {k: v for k, v in doc.items() if k != "checksum"}
    doc["checksum"] = {"sha256": _digest(doc, plain=False),
                       "field_crc32": _field_crc32(doc, plain=False)}
    data = _dumps(doc)
    # what read_document() would refuse is not written
    if len(data) > TEXT_MAX_BYTES:
        raise ValueError(f"the document is {len(data)} bytes of JSON, more than the {TEXT_MAX_BYTES} "
                         "a result file may hold (one result of RUNS_MAX runs always fits): save "
                         "the results in several files")
    with memoryview(data) as view:
        separators = sum(len(bytes(view[i:i + _CHUNK_BYTES]).translate(None, _NOT_SEPARATORS))
                         for i in range(0, len(data), _CHUNK_BYTES))
    if separators > separators_max(len(data)):
        raise ValueError(f"the document holds {separators} JSON values and keys in {len(data)} "
                         f"bytes, more than the {separators_max(len(data))} a result file may: "
                         "fewer results, or more runs each (their arrays are what a file holds)")
    return _gzip(data) if compress else data


#: Where an array's base64 goes in the text json.dumps writes around it.
_ARRAY_KEYS = ("raw", "empty", "migrated")


def _dumps(doc: dict[str, Any]) -> bytearray:
    """`doc` as JSON text (indent 1), in UTF-8. The results' base64 arrays,
    which need no escape, are put in a megabyte at a time after json.dumps
    wrote the rest around placeholders: json's string encoder takes one
    call of about 30 ns a byte for each (8 s for one array of 10^8 runs
    here, deaf to Ctrl-C)."""
    token = secrets.token_hex(16)
    arrays: list[str] = []
    results = doc.get("results")
    if isinstance(results, list):
        swapped = []
        for entry in results:
            if isinstance(entry, dict):
                entry = dict(entry)
                for key in _ARRAY_KEYS:
                    spec = entry.get(key)
                    if isinstance(spec, dict) and isinstance(spec.get("data"), str) and spec["data"].isascii():
                        entry[key] = {**spec, "data": f"{token}-{len(arrays)}"}
                        arrays.append(spec["data"])
            swapped.append(entry)
        doc = {**doc, "results": swapped}
    pieces = (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode("utf-8").split(f'"{token}-'.encode())
    out = bytearray(pieces[0])
    for piece in pieces[1:]:
        index, rest = piece.split(b'"', 1)
        text = arrays[int(index)]
        out += b'"'
        for start in range(0, len(text), _CHUNK_BYTES):
            out += text[start:start + _CHUNK_BYTES].encode("ascii")
        out += b'"'
        out += rest
    return out


def _gzip(data: bytes) -> bytes:
    """`data` as a gzip file (no name, mtime 0: the same bytes each time) at
    GZIP_LEVEL, a chunk at a time, so that a signal is seen between chunks
    (one call of gzip.compress() at level 9 held Ctrl-C off for 24 s).

    Where some prefix of the text would pass what load() allows for the
    compressed bytes read by then (:func:`gzip_limit_bytes`: arrays of
    near-identical runs compress like a bomb), a gzip member of blanks,
    stored uncompressed, goes first: JSON allows whitespace before the
    document, and each blank byte raises the allowance 64 times. The file
    grows by about 1/63 of the text beyond the 32 MiB floor (1.6%), and
    only where it compresses more than about 64 times."""
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip's header and trailer
    with memoryview(data) as view:
        parts = [z.compress(view[i:i + _CHUNK_BYTES]) for i in range(0, len(data), _CHUNK_BYTES)]
    parts.append(z.flush())
    body = b"".join(parts)
    del parts
    if len(data) <= _GZIP_FLOOR_BYTES:  # no prefix can pass the floor
        return body
    pad = b""
    for _ in range(3):  # once is enough; a shifted stream's read-ahead may differ by a buffer
        excess = _prefix_excess(pad + body)
        if excess <= 0:
            return pad + body
        blanks = len(pad) + -(-excess // (_GZIP_RATIO_MAX - 1)) + (64 << 10)
        stored = zlib.compressobj(0, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        pad = stored.compress(b" " * blanks) + stored.flush()
    raise ValueError("the compressed document cannot be padded to what load() reads: save it "
                     "uncompressed (a name without .gz)")


def _prefix_excess(gz: bytes) -> int:
    """How far the text of the gzip file `gz` runs past what :func:`_gunzip`
    allows at its worst prefix, in bytes (0 or less: it loads), read as
    _gunzip reads it, a chunk at a time."""
    worst = -1
    f = io.BytesIO(gz)
    text_bytes = 0
    limit = gzip_limit_bytes(len(gz))
    with gzip.GzipFile(fileobj=f, mode="rb") as g:
        while chunk := g.read(_CHUNK_BYTES):
            text_bytes += len(chunk)
            worst = max(worst, text_bytes - min(limit, gzip_limit_bytes(f.tell())))
    return worst


# -- the checksum ----------------------------------------------------------------
# "checksum": {"sha256": SHA-256 of the canonical document (every field but
# "checksum"), "field_crc32": the CRC-32 of each field's canonical form, two
# levels deep, to name what differs}. Canonical: JSON with no whitespace,
# object keys sorted, strings escaped as json.dumps(ensure_ascii=True)
# escapes them, numbers as Python's repr writes them (an integer's digits; a
# float's shortest repr that reads back the same), in ASCII. Every text a
# reader accepts parses to one document, so the checksum survives re-indenting
# and reordering, and no change of a value goes unseen.


def _canonical_str(s: str, emit: Callable[[bytes], object], plain: bool) -> None:
    """`s` as JSON in ASCII, a slice at a time (no copy of a long string).
    `plain`: it is known to need no escape (a text without backslashes or
    non-ASCII bytes holds no string that does)."""
    emit(b'"')
    for start in range(0, len(s), _CHUNK_BYTES):
        part = s[start:start + _CHUNK_BYTES]  # slices never split a code point
        if part.isascii() and (plain or (part.isprintable() and '"' not in part and "\\" not in part)):
            emit(part.encode("ascii"))  # nothing to escape (base64): json's encoder takes 30 ns a byte
        else:
            emit(encode_basestring_ascii(part)[1:-1].encode("ascii"))
    emit(b'"')


def _json_key(key: object) -> str:
    """An object key as json.dumps writes it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return float.__repr__(key)
    raise TypeError(f"a key of {type(key).__name__} is no JSON object key")


def _canonical(value: Any, emit: Callable[[bytes], object], plain: bool, depth: int = 0) -> None:
    """Emit the canonical JSON of `value`, in pieces."""
    if isinstance(value, str):
        _canonical_str(value, emit, plain)
    elif value is None or isinstance(value, bool):
        emit(b"null" if value is None else b"true" if value else b"false")
    elif isinstance(value, int):
        emit(int.__repr__(value).encode("ascii"))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is no JSON number")
        emit(float.__repr__(value).encode("ascii"))
    elif isinstance(value, (dict, list, tuple)):
        if depth >= DEPTH_MAX:
            raise ValueError(f"nested deeper than the {DEPTH_MAX} levels a result file may")
        if isinstance(value, dict):
            emit(b"{")
            for i, (key, item) in enumerate(sorted(((_json_key(k), v) for k, v in value.items()),
                                                   key=lambda kv: kv[0])):
                if i:
                    emit(b",")
                _canonical_str(key, emit, plain)
                emit(b":")
                _canonical(item, emit, plain, depth + 1)
            emit(b"}")
        else:
            emit(b"[")
            for i, item in enumerate(value):
                if i:
                    emit(b",")
                _canonical(item, emit, plain, depth + 1)
            emit(b"]")
    else:
        raise TypeError(f"{type(value).__name__} is no JSON value")


def _digest(doc: dict[str, Any], plain: bool) -> str:
    """The SHA-256 of `doc`'s canonical form, every field but "checksum", in hex."""
    h = hashlib.sha256()
    _canonical({k: v for k, v in doc.items() if k != "checksum"}, h.update, plain)
    return h.hexdigest()


def _crc32(value: Any, plain: bool) -> int:
    crc = 0

    def emit(piece: bytes) -> None:
        nonlocal crc
        crc = zlib.crc32(piece, crc)

    _canonical(value, emit, plain)
    return crc


def _field_crc32(doc: dict[str, Any], plain: bool) -> dict[str, Any]:
    """The CRC-32 of each field of `doc` but "checksum", two levels deep:
    a field holding an object gives one per key, a list one per item (per
    key of an object item: each result's fields)."""

    def crcs(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _crc32(v, plain) for k, v in value.items()}
        return _crc32(value, plain)

    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "checksum":
            continue
        if isinstance(value, list):
            out[key] = [crcs(item) for item in value]
        else:
            out[key] = crcs(value)
    return out


def _differences(saved: Any, now: Any, where: str = "") -> list[str]:
    """Where two field_crc32 trees differ, as field names."""
    if isinstance(saved, dict) and isinstance(now, dict):
        out = [f"{where}{k} (not there when it was saved)" for k in now if k not in saved]
        out += [f"{where}{k} (gone since it was saved)" for k in saved if k not in now]
        for k in now:
            if k in saved:
                out += _differences(saved[k], now[k], f"{where}{k}.")
        return out
    name = where.rstrip(".")
    if isinstance(saved, list) and isinstance(now, list):
        if len(saved) != len(now):
            return [f"{name} ({len(now)} items, {len(saved)} when it was saved)"]
        return [d for i, (a, b) in enumerate(zip(saved, now)) for d in _differences(a, b, f"{name}[{i}].")]
    return [] if saved == now else [name]


_SHA256_HEX = re.compile("[0-9a-f]{64}")


def _verified(path: Path, doc: dict[str, Any], plain: bool) -> bool:
    """Check `doc` against its checksum, which it loses: True when it matched,
    False for a file from before checksums (format version < 3)."""
    if "checksum" not in doc:
        if doc["version"] >= CHECKSUM_VERSION:
            raise ResultFileError(f"{path}: format version {doc['version']} without its 'checksum' "
                                  "field: the file was altered or damaged")
        return False
    saved = doc.pop("checksum")
    if not (isinstance(saved, dict) and set(saved) == {"sha256", "field_crc32"}
            and isinstance(saved["sha256"], str) and _SHA256_HEX.fullmatch(saved["sha256"])
            and isinstance(saved["field_crc32"], dict)):
        raise ResultFileError(f"{path}: field 'checksum' must be an object of 'sha256' (64 "
                              "lowercase hex digits) and 'field_crc32' (an object), as save() "
                              "writes it: the file was altered or damaged")
    try:
        if _digest(doc, plain) == saved["sha256"]:
            return True
        differ = _differences(saved["field_crc32"], _field_crc32(doc, plain))
    except ValueError as exc:  # nested too deeply
        raise ResultFileError(f"{path}: not a fastcpu result file ({exc})") from None
    if differ:
        more = f" and {len(differ) - 5} more" if len(differ) > 5 else ""
        what = f"{', '.join(differ[:5])}{more} differ{'s' if len(differ) == 1 else ''} from"
    else:
        what = "every field matches checksum.field_crc32, but the whole does not match"
    raise ResultFileError(f"{path}: the file was altered or damaged since it was saved: {what} "
                          "the checksum saved with it; restore it from a copy, or measure again")


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
    """The most text load() accepts from `compressed_bytes` of a gzip file
    (the whole file, or the part of it read so far)."""
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
    growing buffer and checked chunk by chunk. The limit holds for every
    prefix: the text so far may hold :func:`gzip_limit_bytes` of the
    compressed bytes read so far, so that a bomb (a file of members that
    each expand a thousandfold) is refused after a few of them, holding
    little more than the 32 MiB floor, once. save() pads what it writes to
    stay within it (:func:`_gzip`)."""
    limit = gzip_limit_bytes(compressed_bytes)
    gate = _TextGate(path, limit)
    text = bytearray()
    try:
        with gzip.GzipFile(fileobj=f, mode="rb") as g:
            while chunk := g.read(_CHUNK_BYTES):
                read_bytes = f.tell()  # compressed, a read-ahead buffer beyond what was used
                allowed = min(limit, gzip_limit_bytes(read_bytes))
                if len(text) + len(chunk) > allowed:
                    raise ResultFileError(
                        f"{path}: gzip data expands to more than {allowed} bytes from its first "
                        f"{read_bytes} of {compressed_bytes} compressed bytes: more than a result "
                        f"file holds (a decompression bomb?); if it is one, gunzip it and load the "
                        f"plain file (up to {TEXT_MAX_BYTES} bytes)")
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
    """The text of the result file `path` (plain, or gzip whatever its name),
    in one buffer, and what its gate saw. Every OSError names `path` (a
    read's EIO, as from /proc/self/mem, carries no file name of its own)."""
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
    """Refuse JSON nested deeper than DEPTH_MAX before it is parsed: json's
    C parser recurses once per level on the C stack, and in a thread with a
    small stack (32-64 KiB) a few hundred levels crash the interpreter
    before Python's recursion limit is reached. A linear scan at C speed:
    escapes that cannot end a string are dropped (only where the text has a
    backslash), then everything but brackets, quotes and backslashes (the
    base64 bulk), then every string; the brackets left are those outside
    strings, and their running depth is counted a chunk at a time."""
    text = _NOT_QUOTE_ESCAPE.sub(b"", data) if b"\\" in data else data
    structure = text.translate(None, _NOT_STRUCTURE)
    del text
    brackets = _STRING_OR_ESCAPE.sub(b"", structure).translate(None, _NOT_BRACKETS)
    del structure
    codes = np.frombuffer(brackets, np.uint8)
    depth = 0
    for start in range(0, codes.size, _CHUNK_BYTES):
        chunk = codes[start:start + _CHUNK_BYTES]
        running = np.cumsum(np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1), dtype=np.int64) + depth
        if int(running.max()) > DEPTH_MAX:
            raise ResultFileError(f"{path}: not a fastcpu result file (JSON nested too deeply to read): "
                                  f"more than the {DEPTH_MAX} levels a result file may hold")
        depth = int(running[-1])


class _NotFinite(ValueError):
    """NaN or Infinity in the text: Python's json reads them, JSON has no such number."""


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


class _DuplicateKey(ValueError):
    """An object holding one key twice: json keeps the last, which a checksum
    computed over what json keeps would not protect from a splice."""


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
    """The document in the result file `path` (plain or gzip JSON), its
    format and version checked, its checksum verified (and removed) and
    every string :func:`encodable`; the path it was read from (for
    messages); and whether it carried a checksum (False for files of format
    version < 3, which carry none). :func:`fastcpu.load` builds Results from
    it; see there for the limits and what is raised.

    Memory: the text once (a bytearray of the file's size, or of what a gzip
    file decompresses to, grown in place), then its str beside it while it
    is decoded, then the str and the parsed document, whose size the gate's
    count of separators bounds; each buffer is dropped once the next is made.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    path = nonempty_path(path)
    data, gate = _read_text(path)
    _check_nesting(path, data)
    text = _decode_text(path, data)
    del data
    doc = _parse(path, text)
    del text
    verified = _verified(path, doc, gate.plain)
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
