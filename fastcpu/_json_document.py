"""The result-file codec: a JSON document to and from a file, and the array
encodings inside it. It knows nothing of Results: :meth:`Results.to_document`
and :meth:`Results.from_document` say what goes in a document; the codec
writes one atomically (:func:`write_document`, ``_json_write``), reads one
back within limits and checks its format, version and checksum
(:func:`read_document`, ``_json_read``), and gives the field-by-field reader
(:class:`Reader`) and the array encodings both sides use. The format, its
layout and its limits are ``_json_format``; the checksum ``_json_checksum``.
This module is the codec's one front door: the rest of the package imports
from here.
"""

from __future__ import annotations

from ._json_format import (BYTES_PER_SEPARATOR, CHECKSUM_VERSION, DEPTH_MAX, DOCUMENT_ALLOWANCE_BYTES, FORMAT_NAME,
                           FORMAT_VERSION, GZIP_LEVEL, INTEGER_DIGITS_MAX, LOAD_MEMORY_ALLOWANCE_BYTES,
                           LOAD_MEMORY_MULTIPLE, SEPARATORS_FIXED, STEP_MAX, TEXT_MAX_BYTES, ResultFileError,
                           arrays_text_bytes_max, gzip_limit_bytes, separators_max)
from ._json_read import Reader, encodable, read_document
from ._json_write import encode_bools, encode_document, encode_ticks, write_document

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
    # the format's limits, for the tests and the docs
    "BYTES_PER_SEPARATOR",
    "CHECKSUM_VERSION",
    "DEPTH_MAX",
    "DOCUMENT_ALLOWANCE_BYTES",
    "GZIP_LEVEL",
    "INTEGER_DIGITS_MAX",
    "LOAD_MEMORY_ALLOWANCE_BYTES",
    "LOAD_MEMORY_MULTIPLE",
    "SEPARATORS_FIXED",
    "STEP_MAX",
    "TEXT_MAX_BYTES",
    "arrays_text_bytes_max",
]
