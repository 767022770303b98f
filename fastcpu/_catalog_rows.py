"""What a result file says of each method it holds: its catalog row's words.

A result carries the words of its method's catalog row (:class:`CatalogRow`:
its kind, its role, what its raw value reads and its one-line description),
written into its file by the fastcpu that measured it, so that every reader
uses the file's words and never the catalog of the machine reading it: a file
from a newer fastcpu, or of methods this build lacks or where no C core is
built at all, reads the same everywhere.

Files written before results carried them (fastcpu 0.2 to 0.6, format
versions 1 to 3) get the rows of the catalog of the version that wrote them,
recorded here as data (``catalog_rows.json``, written once by
``docs/catalog_rows.py`` and held to the C core's catalog by
tests/test_kit.py), never from the C core.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CatalogRow", "ALIASES", "canonical_name", "recorded_row", "recorded_versions", "ROW_TEXT_MAX"]

# Former names, still accepted wherever a method is named (bench, read,
# show, check, Results[...]) and renamed when a result file is loaded, so
# that files written before the rename compare with new ones.
# getcpu_sidt_fp changed both knobs at once (no red zone and a frame
# pointer); the four corners now have a name each.
ALIASES: dict[str, str] = {"getcpu_sidt_fp": "getcpu_sidt_norz_fp"}

#: The longest kind, role or encoding a file may give (characters); a
#: description may hold 2,000.
ROW_TEXT_MAX = 64
_DESCRIPTION_MAX = 2000


def canonical_name(name: str) -> str:
    """`name`, or the method a former name now stands for."""
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class CatalogRow:
    """A method's catalog row as the fastcpu that measured it had it: what a
    reader of its result needs to know of it, in the file's own words.

    Attributes:
        kind: ``'method'`` (a sequence of csrc/sequences.c), ``'model'`` (a C
            model of an implementation) or ``'chain'`` (a chain of known
            cost); a newer fastcpu may name another.
        role: what it is for, and so where it is shown: ``'cpu_source'``,
            ``'library_call'``, ``'entry_cost'``, ``'model'``, ``'chain'``
            (:attr:`fastcpu.MethodInfo.role`); a role a reader does not know
            is shown with the user functions, and is no way to learn the CPU.
        encoding: what its raw value reads, and so whether it can hold a CPU
            number: ``'cpunode'``, ``'cpu'``, ``'sidt'``, ``'limit'``,
            ``'selector'`` or ``'none'`` (:attr:`fastcpu.MethodInfo.encoding`).
        description: what the sequence is and where it comes from, one line.
    """

    kind: str
    role: str
    encoding: str
    description: str

    @property
    def reads_cpu_number(self) -> bool:
        """Whether its raw value holds a CPU number: a ``'cpu'`` or
        ``'cpunode'`` encoding (a descriptor table's limit or selector, which
        no released kernel sets to the CPU, does not)."""
        return self.encoding in ("cpu", "cpunode")

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "role": self.role, "encoding": self.encoding,
                "description": self.description}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CatalogRow:
        """The row of a file's entry, every field checked.

        Raises:
            ValueError: a field is missing, unknown, not a string, or too
                long (the message names it).
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"must be an object, not {type(d).__name__}")
        unknown = sorted(set(d) - set(_FIELDS))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}: a catalog row holds {', '.join(_FIELDS)}")
        values = {}
        for key in _FIELDS:
            if key not in d:
                raise ValueError(f"field {key!r} is missing")
            v = d[key]
            most = _DESCRIPTION_MAX if key == "description" else ROW_TEXT_MAX
            if not isinstance(v, str) or len(v) > most or (key != "description" and not _WORD.fullmatch(v)):
                what = ("a string of at most 2000 characters" if key == "description"
                        else f"a word of at most {ROW_TEXT_MAX} letters, digits or underscores")
                raise ValueError(f"field {key!r} is {json.dumps(v)[:60]}, must be {what}")
            values[key] = v
        return cls(**values)


_FIELDS = ("kind", "role", "encoding", "description")
_WORD = re.compile(r"[a-z0-9_]+")


@functools.lru_cache(maxsize=1)
def _recorded() -> tuple[tuple[tuple[int, ...], str, dict[str, CatalogRow]], ...]:
    """The recorded catalogs, oldest first: (version as numbers, version, name -> row)."""
    from importlib import resources  # on first use: importlib.resources costs 15 ms to import

    doc = json.loads(resources.files(__package__).joinpath("catalog_rows.json").read_text("utf-8"))
    catalogs: dict[str, dict[str, CatalogRow]] = {v: {} for v in doc["versions"]}
    for row in doc["rows"]:
        words = CatalogRow.from_dict({k: row[k] for k in _FIELDS})
        for v in row["versions"]:
            catalogs[v][row["name"]] = words
    return tuple(sorted((_version_key(v), v, rows) for v, rows in catalogs.items()))


def _version_key(version: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(g or 0) for g in m.groups()) if m else ()


def recorded_versions() -> tuple[str, ...]:
    """The fastcpu versions whose catalogs are recorded, oldest first."""
    return tuple(v for _, v, _ in _recorded())


def recorded_row(method: str, fastcpu_version: str) -> CatalogRow | None:
    """The row of `method` in the catalog of `fastcpu_version`, as recorded:
    for a version between two recorded ones, the older one's catalog; before
    the first, the first's; for a version that names no release (``''``, or
    not ``X.Y``), the newest's. None where that catalog has no such method
    (a user function, or a method that catalog lacked)."""
    catalogs = _recorded()
    key = _version_key(fastcpu_version)
    chosen = catalogs[-1][2] if not key else next(
        (rows for k, _, rows in reversed(catalogs) if k <= key), catalogs[0][2])
    return chosen.get(canonical_name(method))
