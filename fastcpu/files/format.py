"""The result file's format: name, version, limits, the checksum and ``ResultFileError``
(layout and encoding: docs/files.md, "The file"); read.py reads it, write.py writes it."""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from .._args import RUNS_MAX, STEP_MAX_TICKS
from .._base import Error

__all__ = ['digest', 'field_crc32', 'verify_checksum']


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
TICK_DTYPES = ("<u1", "<u2", "<u4", "<u8")
GZIP_MAGIC = b"\x1f\x8b"
#: The gzip level save() writes: 6, zlib's default. Level 9 took 25 s for a
#: file level 6 writes in 2.4 s (37 results of 200,000 runs), 12% smaller.
GZIP_LEVEL = 6


def _base64_bytes(n: int) -> int:
    return 4 * -(-n // 3)


def arrays_text_bytes_max(runs: int) -> int:
    """The most bytes of base64 text the arrays of one result of `runs` runs take in a file."""
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
GZIP_FLOOR_BYTES = 32 << 20
#: ...and beyond it to this many times its compressed size, at every prefix
#: of its stream. Result files compress 8-17 times (base64 of small tick
#: counts); arrays of near-identical runs compress 400-1000 times, as a gzip
#: bomb does (deflate's most: 1032), and save() writes those with blank
#: padding ahead of the text (:func:`_gzip`), so that every file it writes loads.
GZIP_RATIO_MAX = 64

#: Bytes read (or decompressed) at a time.
CHUNK_BYTES = 1 << 20
#: One of these comes before every JSON value but the outermost ('[' or ','
#: in a list, ':' in an object) and every object key ('{' or ','):
#: counting them bounds what parsing the text builds.
SEPARATORS = b"[{,:"
NOT_SEPARATORS = bytes(sorted(set(range(256)) - set(SEPARATORS)))


def separators_max(text_bytes: int) -> int:
    """The most JSON separators a result file of `text_bytes` may hold (bounds what parsing builds)."""
    return SEPARATORS_FIXED + text_bytes // BYTES_PER_SEPARATOR


def gzip_limit_bytes(compressed_bytes: int) -> int:
    """The most text load() accepts from `compressed_bytes` of a gzip file
    (the whole file, or the part of it read so far)."""
    return min(TEXT_MAX_BYTES, GZIP_FLOOR_BYTES + GZIP_RATIO_MAX * compressed_bytes)


class ResultFileError(Error, ValueError):
    """A file that is not a readable fastcpu result file; the message says why."""


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
    """`s` as ASCII JSON, a slice at a time; `plain`: known to need no escape."""
    emit(b'"')
    for start in range(0, len(s), CHUNK_BYTES):
        part = s[start:start + CHUNK_BYTES]  # slices never split a code point
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


def digest(doc: dict[str, Any], plain: bool) -> str:
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


def field_crc32(doc: dict[str, Any], plain: bool) -> dict[str, Any]:
    """The CRC-32 of each field of `doc` but "checksum", two levels deep."""

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


def verify_checksum(path: Path, doc: dict[str, Any], plain: bool) -> bool:
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
        if digest(doc, plain) == saved["sha256"]:
            return True
        differ = _differences(saved["field_crc32"], field_crc32(doc, plain))
    except ValueError as exc:  # nested too deeply
        raise ResultFileError(f"{path}: not a fastcpu result file ({exc})") from None
    if differ:
        more = f" and {len(differ) - 5} more" if len(differ) > 5 else ""
        what = f"{', '.join(differ[:5])}{more} differ{'s' if len(differ) == 1 else ''} from"
    else:
        what = "every field matches checksum.field_crc32, but the whole does not match"
    raise ResultFileError(f"{path}: the file was altered or damaged since it was saved: {what} "
                          "the checksum saved with it; restore it from a copy, or measure again")
