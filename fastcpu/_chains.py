"""Known-cost chains: dependent chains of known cost, the ground truth.

A chain of N dependent ``add r64, r64`` takes N core cycles and a chain of N
dependent ``imul r64, r64`` takes 3N on every core fastcpu targets (Intel
since Nehalem, AMD since Zen), whatever the core's width: each instruction
waits for the one before. (Not ``add $1, r64``: Intel cores since Golden
Cove fold chains of immediate adds at rename, several a cycle.) ``benchmarks/accuracy.py`` times them to show how
close each estimator comes to the truth. They are benched by name like any
method (``fastcpu.bench("imul_chain_100", 1000)``) but are not in
:func:`fastcpu.methods`, the catalog of ways to learn the CPU.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import _core

__all__ = ["ChainInfo", "chain_methods"]


@dataclass(frozen=True)
class ChainInfo:
    """One known-cost chain.

    Attributes:
        name: what to pass to :func:`fastcpu.bench` (``'add_chain_100'``).
        description: what the sequence is.
        op: the chained instruction, ``'add'`` or ``'imul'``.
        length: how many dependent instructions.
        latency_cycles: core cycles each instruction takes (1 for add, 3 for imul).
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
def _catalog() -> tuple[ChainInfo, ...]:
    """The catalog's rows of kind 'chain', in its order."""
    return tuple(ChainInfo(row["name"], row["description"], **row["chain"])
                 for row in _core.catalog() if row["kind"] == "chain")


def chain_methods() -> list[ChainInfo]:
    """Every known-cost chain: add and imul, lengths 1 to 1024 (plus 100 and 300)."""
    return list(_catalog())
