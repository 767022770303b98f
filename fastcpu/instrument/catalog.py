"""The catalogs: the timed methods, and the known-cost chains that are the ground truth.

A chain of N dependent ``add r64, r64`` takes N core cycles and one of N ``imul r64, r64`` 3N
on every core fastcpu targets (docs/methods.md#known-cost-chains). Chains are benched by name
(``fastcpu.bench("imul_chain_100")``) but are not in :func:`fastcpu.methods`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
import difflib
from collections.abc import Iterable

from .. import _core
from . import child as _child_runner
from .._base import cached_property
from ..results.values import CatalogRow

__all__ = ['ChainInfo', 'chain_methods', 'MethodInfo', 'methods', 'method_info', 'method_names', 'methods_named']


@dataclass(frozen=True)
class ChainInfo:
    """One known-cost chain: its `name` (what :func:`fastcpu.bench` takes), `description`, `op`
    (``'add'`` or ``'imul'``), `length` (dependent instructions) and `latency_cycles` (core
    cycles per instruction: 1 for add, 3 for imul).
    """

    name: str
    description: str
    op: str
    length: int
    latency_cycles: int

    @property
    def truth_core_cycles(self) -> int:
        """What one copy of the chain costs, in core cycles: length x latency."""
        return self.length * self.latency_cycles


@functools.lru_cache(maxsize=1)
def _chain_catalog() -> tuple[ChainInfo, ...]:
    """The catalog's rows of kind 'chain', in its order."""
    return tuple(ChainInfo(row["name"], row["description"], **row["chain"])
                 for row in _core.catalog() if row["kind"] == "chain")


def chain_methods() -> list[ChainInfo]:
    """Every known-cost chain: add and imul, lengths 1 to 1024 (plus 100 and 300)."""
    return list(_chain_catalog())


@dataclass(frozen=True)
class MethodInfo:
    """One timed method.

    Attributes:
        name: what to pass to :func:`fastcpu.bench`.
        description: what the sequence does and where it comes from.
        encoding: how its raw value encodes the CPU: ``'cpunode'`` (cpu | node << 12),
            ``'cpu'``, ``'sidt'``, ``'limit'``, ``'selector'`` or ``'none'``.
        available, reason: whether it can run on this machine, and why not (else ``None``).
        reports_cpu, cpu_reason: whether it reports the CPU here (so :func:`fastcpu.read` and
            :func:`fastcpu.check` use it), and why not (else ``None``).
        kind: ``'method'``, ``'model'`` (a C model, docs/models.md) or ``'chain'``.
        role: where it is shown: ``'cpu_source'``, ``'library_call'``, ``'entry_cost'``,
            ``'model'`` or ``'chain'``.
        in_child: measured and read in a child interpreter started with the row's
            GLIBC_TUNABLES setting (``instrument.child``), not in this one.
        code_of: the row whose sequence it times: what ``fastcpu show`` disassembles.
        read_failure: what a failed reading means (:func:`fastcpu.read`'s message), or
            ``None`` where its reader never fails.
        read_errno: whether a failed reading's raw value is the errno of that call.
        tunable: for an ``in_child`` row, the GLIBC_TUNABLES setting its child starts with
            (else ``None``).
        reference: ``'library'`` or ``'kernel'`` where :func:`fastcpu.check` compares the
            other readings with this row's (else ``None``).
    """

    name: str
    description: str
    encoding: str
    available: bool
    reason: str | None
    reports_cpu: bool
    cpu_reason: str | None
    kind: str = "method"
    role: str = "cpu_source"
    in_child: bool = False
    code_of: str = ""
    read_failure: str | None = None
    read_errno: bool = False
    tunable: str | None = None
    reference: str | None = None

    def __post_init__(self) -> None:
        if not self.code_of:
            object.__setattr__(self, "code_of", self.name)

    @cached_property
    def catalog_row(self) -> CatalogRow:
        """What a result of this method carries of its row into a file
        (kind, role, encoding, description): the words every reader of the
        file uses (``BenchResult.catalog_row``)."""
        return CatalogRow(self.kind, self.role, self.encoding, self.description)

    @classmethod
    def from_row(cls, row: dict[str, object]) -> MethodInfo:
        """The entry of one row of the C catalog (``_core.catalog()``). A row
        measured in a child is judged by whether that child can start: the C
        core refuses it in this process, rseq registered."""
        fields = {f: row[f] for f in _ROW_FIELDS}
        if row["in_child"] is not None:
            why = _child_runner.available_reason()
            fields.update(available=why is None, reason=why, reports_cpu=why is None, cpu_reason=why)
        return cls(**fields, in_child=row["in_child"] is not None, code_of=str(row["code_of"]),  # type: ignore[arg-type]
                   tunable=row["in_child"])


#: The fields a C catalog row gives a MethodInfo, by name.
_ROW_FIELDS = ("name", "description", "encoding", "available", "reason", "reports_cpu", "cpu_reason",
               "kind", "role", "read_failure", "read_errno", "reference")


@functools.lru_cache(maxsize=1)
def _rows() -> tuple[MethodInfo, ...]:
    """Every row of the catalog, methods, models and known-cost chains, in
    its order."""
    return tuple(MethodInfo.from_row(row) for row in _core.catalog())


@functools.lru_cache(maxsize=1)
def _catalog() -> tuple[MethodInfo, ...]:
    """The methods and models: the ways, and the costs they are compared with."""
    return tuple(info for info in _rows() if info.kind != "chain")


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, MethodInfo]:
    """Every name bench() takes: the methods and models, then the
    known-cost chains. bench() looks a name up on every call: a dict, not
    a walk of the catalog."""
    return {info.name: info for info in sorted(_rows(), key=lambda i: i.kind == "chain")}


def methods() -> list[MethodInfo]:
    """Every built-in method, available or not, in catalog order (availability from CPUID, the
    vDSO and glibc; an instruction that could fault is first tried in a forked child).
    """
    return list(_catalog())


def method_names() -> list[str]:
    """The name of every built-in method, in catalog order."""
    return [m.name for m in _catalog()]


def method_info(name: str) -> MethodInfo:
    """The catalog entry for `name`.

    Raises:
        TypeError: `name` is not a str.
        ValueError: no such method; the message lists the nearest names.
    """
    if not isinstance(name, str):
        raise TypeError(f"method must be a str naming a method, not {type(name).__name__}")
    info = _by_name().get(name)
    if info is not None:
        return info
    names = method_names()
    chains = [c.name for c in chain_methods()]
    near = difflib.get_close_matches(name, names + chains, n=3)
    hint = f"did you mean {', '.join(map(repr, near))}? " if near else ""
    raise ValueError(
        f"unknown method {name!r}: {hint}valid methods are {', '.join(names)} "
        "(and the known-cost chains of fastcpu.chain_methods())"
    )


def methods_named(names: Iterable[str]) -> list[MethodInfo]:
    """The catalog entry of each name, in order (checked with :func:`_args.check_method_names`).

    Raises:
        ValueError: a name names no method; the message lists the nearest.
    """
    return [method_info(n) for n in names]
