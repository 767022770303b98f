"""The result file's format: its name and version, the layout below, its
limits (what save() writes and load() reads, both sides checking the same
figures), and ``ResultFileError``. Reading is ``_json_read``, writing
``_json_write``, the checksum both use ``_json_checksum``; ``_json_document``
is the codec's one front door.

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
        "harness_resolution_core_cycles": 1.1,                       (optional)
        "clock_motion": {... ClockMotion.to_dict() ...},             (optional, >= 0.7.0)
        "raw":      {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 2871520013},
        "empty":    {"dtype": "<u2", "length": 1000, "encoding": "base64", "data": "...",
                     "crc32": 309187465},
        "migrated": {"dtype": "bool", "length": 1000, "encoding": "base64-packbits",
                     "data": "...", "crc32": 2768625435}},
       ...],
     "back_to_back": [                       (optional, >= 0.7.0: calls back to back, bench_diff)
       {"method": "gdt", "runs": 1000, "serialize": "lfence", "k": 16, "cpu": null,
        "counter": "tsc", "cycles_per_tick": 1.42, "cycles_per_tick_ci95": 0.01,
        "caveats": ["..."], "clock_motion": {...},                  (optional)
        "copy_loop_core_cycles": 1.01, "copy_loop_ci95_core_cycles": 0.07,
                                     (optional, >= 0.8.7: the copy loop's own cost per copy)
        "long": {...}, "short": {...}, "migrated": {...}},          (arrays as above)
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

from ._args import RUNS_MAX, STEP_MAX_TICKS
from ._errors import Error

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
    """The most JSON separators (``[ { , :``, one before each value or key,
    counted in strings too) a result file of `text_bytes` may hold: its bulk
    is base64 strings, which hold none. Parsing builds at most about 100
    bytes of objects per separator, so this bounds what a text of many small
    values (``[[], [], ...]``: 25 times its size) costs."""
    return SEPARATORS_FIXED + text_bytes // BYTES_PER_SEPARATOR



def gzip_limit_bytes(compressed_bytes: int) -> int:
    """The most text load() accepts from `compressed_bytes` of a gzip file
    (the whole file, or the part of it read so far)."""
    return min(TEXT_MAX_BYTES, GZIP_FLOOR_BYTES + GZIP_RATIO_MAX * compressed_bytes)



class ResultFileError(Error, ValueError):
    """A file that is not a readable fastcpu result file; the message says why."""

