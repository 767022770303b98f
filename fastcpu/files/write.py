"""Writing a result file: a document (a dict: ``Results.to_document``) as
JSON text with its checksum, gzip-compressed for a name ending in ``.gz``,
written atomically (``_atomicfile``); and the array encodings a document
holds. Nothing is written that ``_json_read`` would refuse."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import secrets
import zlib
from typing import Any

import numpy as np

from . import format as _json_format
from .paths import check_target, write_atomic
from .format import digest, field_crc32
from .format import CHUNK_BYTES, GZIP_FLOOR_BYTES, GZIP_LEVEL, GZIP_RATIO_MAX, NOT_SEPARATORS, TICK_DTYPES, gzip_limit_bytes, separators_max
from .format import BYTES_PER_SEPARATOR, CHECKSUM_VERSION, DEPTH_MAX, DOCUMENT_ALLOWANCE_BYTES, FORMAT_NAME, FORMAT_VERSION, GZIP_LEVEL, INTEGER_DIGITS_MAX, LOAD_MEMORY_ALLOWANCE_BYTES, LOAD_MEMORY_MULTIPLE, SEPARATORS_FIXED, STEP_MAX, TEXT_MAX_BYTES, ResultFileError, arrays_text_bytes_max, gzip_limit_bytes, separators_max
from .read import Reader, encodable, read_document

__all__ = ['encode_ticks', 'encode_bools', 'encode_document', 'write_document', 'FORMAT_NAME', 'FORMAT_VERSION', 'ResultFileError', 'Reader', 'read_document', 'gzip_limit_bytes', 'separators_max', 'encodable', 'BYTES_PER_SEPARATOR', 'CHECKSUM_VERSION', 'DEPTH_MAX', 'DOCUMENT_ALLOWANCE_BYTES', 'GZIP_LEVEL', 'INTEGER_DIGITS_MAX', 'LOAD_MEMORY_ALLOWANCE_BYTES', 'LOAD_MEMORY_MULTIPLE', 'SEPARATORS_FIXED', 'STEP_MAX', 'TEXT_MAX_BYTES', 'arrays_text_bytes_max']


def encode_ticks(a: np.ndarray) -> dict[str, Any]:
    """An array of counts as little-endian unsigned integers of the narrowest
    width that holds its largest value, base64, with its CRC-32."""
    top = int(a.max()) if a.size else 0
    dtype = next(d for d in TICK_DTYPES if top <= np.iinfo(np.dtype(d)).max)
    data = a.astype(dtype).tobytes()
    return {"dtype": dtype, "length": int(a.size), "encoding": "base64",
            "data": _b64(data), "crc32": zlib.crc32(data)}


def _b64(data: bytes) -> str:
    """`data` in base64 a chunk at a time, so Ctrl-C is seen."""
    step = 3 * (CHUNK_BYTES // 3)
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
    """The bytes of a result file holding `doc` with its checksum: JSON, gzip-compressed when `compress`.

    Works a megabyte at a time so Ctrl-C is seen.

    Raises:
        TypeError, ValueError: `doc` holds what JSON cannot, or more text
            (``TEXT_MAX_BYTES``), values or nesting than read_document() accepts."""
    doc = {k: v for k, v in doc.items() if k != "checksum"}
    doc["checksum"] = {"sha256": digest(doc, plain=False),
                       "field_crc32": field_crc32(doc, plain=False)}
    data = _dumps(doc)
    # what read_document() would refuse is not written
    if len(data) > _json_format.TEXT_MAX_BYTES:
        raise ValueError(f"the document is {len(data)} bytes of JSON, more than the {_json_format.TEXT_MAX_BYTES} "
                         "a result file may hold (one result of RUNS_MAX runs always fits): save "
                         "the results in several files")
    with memoryview(data) as view:
        separators = sum(len(bytes(view[i:i + CHUNK_BYTES]).translate(None, NOT_SEPARATORS))
                         for i in range(0, len(data), CHUNK_BYTES))
    if separators > separators_max(len(data)):
        raise ValueError(f"the document holds {separators} JSON values and keys in {len(data)} "
                         f"bytes, more than the {separators_max(len(data))} a result file may: "
                         "fewer results, or more runs each (their arrays are what a file holds)")
    return _gzip(data) if compress else data


#: Where an array's base64 goes in the text json.dumps writes around it.
_ARRAY_KEYS = ("raw", "empty", "migrated")


def _dumps(doc: dict[str, Any]) -> bytearray:
    """`doc` as JSON text (indent 1), in UTF-8; the base64 arrays, which need no escape, go
    in a megabyte at a time around json.dumps's placeholders (json's encoder would take
    seconds on a large array, deaf to Ctrl-C)."""
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
        for start in range(0, len(text), CHUNK_BYTES):
            out += text[start:start + CHUNK_BYTES].encode("ascii")
        out += b'"'
        out += rest
    return out


def _gzip(data: bytes) -> bytes:
    """`data` as a reproducible gzip file a chunk at a time, padded ahead with blanks where load()'s gzip limit needs it."""
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: gzip's header and trailer
    with memoryview(data) as view:
        parts = [z.compress(view[i:i + CHUNK_BYTES]) for i in range(0, len(data), CHUNK_BYTES)]
    parts.append(z.flush())
    body = b"".join(parts)
    del parts
    if len(data) <= GZIP_FLOOR_BYTES:  # no prefix can pass the floor
        return body
    pad = b""
    for _ in range(3):  # once is enough; a shifted stream's read-ahead may differ by a buffer
        excess = _prefix_excess(pad + body)
        if excess <= 0:
            return pad + body
        blanks = len(pad) + -(-excess // (GZIP_RATIO_MAX - 1)) + (64 << 10)
        stored = zlib.compressobj(0, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        pad = stored.compress(b" " * blanks) + stored.flush()
    raise ValueError("the compressed document cannot be padded to what load() reads: save it "
                     "uncompressed (a name without .gz)")


def _prefix_excess(gz: bytes) -> int:
    """How far `gz`'s text runs past what :func:`_gunzip` allows at its worst prefix, bytes (<= 0: it loads)."""
    worst = -1
    f = io.BytesIO(gz)
    text_bytes = 0
    limit = gzip_limit_bytes(len(gz))
    with gzip.GzipFile(fileobj=f, mode="rb") as g:
        while chunk := g.read(CHUNK_BYTES):
            text_bytes += len(chunk)
            worst = max(worst, text_bytes - min(limit, gzip_limit_bytes(f.tell())))
    return worst


