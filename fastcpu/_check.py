"""fastcpu.check(): does every method report the right CPU, on every CPU?

The sweep pins the calling thread to each CPU of its affinity mask in turn
(a CPU it cannot pin to is recorded and skipped, never the end of the sweep),
reads every CPU-reporting method there and compares the cpu and node with
glibc's ``sched_getcpu()`` and the getcpu system call, then restores the mask.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import _core
from ._affinity import set_affinity
from ._args import check_cpus, check_method_names
from ._core import Error, Unsupported
from ._machine import possible_cpus
from ._methods import methods, methods_named
from ._read import CpuReading, failure_reason, read

__all__ = ["check", "AgreementTable", "Agreement", "Reference"]

#: Rows for fastcpu's own getcpu functions, checked like the methods.
GETCPU_ROWS = ("getcpu()", "getcpu_node()")


@dataclass(frozen=True)
class Reference:
    """What the references said on one CPU.

    Attributes:
        cpu: the CPU the thread was pinned to.
        sched_getcpu: what glibc's ``sched_getcpu()`` returned there (-1
            when it failed).
        syscall_cpu: the cpu the getcpu system call returned there (-1 when
            the call failed, e.g. denied by a seccomp filter).
        syscall_node: the node the getcpu system call returned there (-1
            when the call failed).
        errors: the references that failed there, each with its errno
            (empty when both answered); the methods are checked against the
            others.
    """

    cpu: int
    sched_getcpu: int
    syscall_cpu: int
    syscall_node: int
    errors: tuple[str, ...] = ()

    @property
    def consistent(self) -> bool:
        """The pinned CPU, sched_getcpu() and the system call all agree
        (those of them that answered)."""
        return all(v in (-1, self.cpu) for v in (self.sched_getcpu, self.syscall_cpu))

    def agrees(self, cpu: int, node: int | None) -> bool:
        """A reading of `cpu` and `node` (None: gives none) agrees with the
        pinned CPU and every reference that answered."""
        return (cpu == self.cpu and self.sched_getcpu in (-1, cpu) and self.syscall_cpu in (-1, cpu)
                and (node is None or self.syscall_node in (-1, node)))


@dataclass(frozen=True)
class Agreement:
    """One method on one CPU.

    Attributes:
        method: the method's name (or ``'getcpu()'``, ``'getcpu_node()'``).
        cpu: the CPU the thread was pinned to.
        reading: what the method reported, or ``None`` when it could not read.
        error: why it could not read on this thread (``None`` when it did).
        agrees: its cpu equals the pinned CPU, sched_getcpu() and the system
            call's cpu, and its node, when it gives one, the system call's
            (a reference that failed on that CPU is left out: see
            :attr:`Reference.errors`).
    """

    method: str
    cpu: int
    reading: CpuReading | None
    error: str | None
    agrees: bool

    def __str__(self) -> str:
        if self.reading is None:
            return "NO (error)"
        node = "-" if self.reading.node is None else str(self.reading.node)
        return f"{'ok' if self.agrees else 'NO'} {self.reading.cpu}/{node}"


@dataclass(frozen=True, eq=False)
class AgreementTable:
    """The result of :func:`fastcpu.check`: method x CPU -> agree or not.

    Attributes:
        cpus: the CPUs checked, in order.
        skipped: CPUs asked for that the thread could not be pinned to, with why.
        methods: the rows checked: CPU-reporting methods, then getcpu()'s.
        not_checked: methods left out, with why (unavailable, or no CPU source here).
        references: per CPU, what sched_getcpu() and the system call said.
        cells: ``(method, cpu) -> Agreement``.
    """

    cpus: tuple[int, ...]
    skipped: dict[int, str]
    methods: tuple[str, ...]
    not_checked: dict[str, str]
    references: dict[int, Reference]
    cells: dict[tuple[str, int], Agreement] = field(repr=False)

    def cell(self, method: str, cpu: int) -> Agreement:
        """The agreement of `method` on `cpu` (KeyError if not checked)."""
        return self.cells[(method, cpu)]

    def disagreements(self) -> list[Agreement]:
        """Every cell that does not agree, in table order."""
        return [self.cells[(m, c)] for m in self.methods for c in self.cpus if not self.cells[(m, c)].agrees]

    @property
    def all_agree(self) -> bool:
        """At least one CPU was checked, the references agree with each other
        on each, and every method agrees with them on each."""
        return (
            bool(self.cpus)
            and all(r.consistent for r in self.references.values())
            and not self.disagreements()
        )

    def __str__(self) -> str:
        width = max([len(m) for m in self.methods] + [len("getcpu syscall"), 14]) + 2
        col = 12
        head = f"{'METHOD':{width}}" + "".join(f"{'CPU ' + str(c):>{col}}" for c in self.cpus)
        lines = [
            f"agreement on {len(self.cpus)} CPU(s), cpu/node as each method reports them; "
            "ok = same as the pinned CPU, sched_getcpu() and the getcpu system call",
            "",
            head,
            f"{'pinned to':{width}}" + "".join(f"{c:>{col}}" for c in self.cpus),
            f"{'sched_getcpu()':{width}}" + "".join(f"{self.references[c].sched_getcpu:>{col}}" for c in self.cpus),
            f"{'getcpu syscall':{width}}"
            + "".join(f"{f'{self.references[c].syscall_cpu}/{self.references[c].syscall_node}':>{col}}" for c in self.cpus),
        ]
        for m in self.methods:
            lines.append(f"{m:{width}}" + "".join(f"{str(self.cells[(m, c)]):>{col}}" for c in self.cpus))
        errors = [a for a in self.cells.values() if a.error]
        if errors:
            lines.append("")
            lines.extend(f"  {a.method} on CPU {a.cpu}: {a.error}" for a in errors)
        if self.not_checked:
            lines.append("")
            lines.append("not checked (no CPU source here):")
            lines.extend(f"  {m:{width}}{why}" for m, why in self.not_checked.items())
        failed = [(c, e) for c in self.cpus for e in self.references[c].errors]
        if failed:
            lines.append("")
            lines.append("references that failed (-1 above; the methods were checked against the others):")
            lines.extend(f"  CPU {c}: {e}" for c, e in failed)
        if self.skipped:
            lines.append("")
            lines.append("CPUs skipped:")
            lines.extend(f"  CPU {c}: {why}" for c, why in self.skipped.items())
        lines.append("")
        bad = len(self.disagreements())
        lines.append("all agree" if self.all_agree else f"DISAGREEMENT: {bad} cell(s) differ")
        return "\n".join(lines)


def _read_row(name: str) -> CpuReading:
    if name == "getcpu()":
        cpu = _core.getcpu()
        return CpuReading(name, cpu, None, cpu)
    if name == "getcpu_node()":
        cpu, node = _core.getcpu_node()
        return CpuReading(name, cpu, node, cpu | node << 12)
    return read(name)


def check(names: Iterable[str] | None = None, cpus: Iterable[int] | None = None) -> AgreementTable:
    """Read every CPU-reporting method on each CPU and compare with the references.

    Args:
        names: method names to check (default: every method that reports
            the CPU here); one that does not is listed in ``not_checked``.
        cpus: CPUs to pin to, in order (default: this thread's affinity mask).
            One that exists but cannot be pinned to (offline, outside the
            cpuset) is recorded in ``skipped`` and the sweep goes on.

    Returns:
        An :class:`AgreementTable`; ``print()`` it for the table.

    Raises:
        TypeError: `names` or `cpus` is not a list (or None), or holds the
            wrong type.
        ValueError: an unknown method name (the nearest are suggested), an
            empty list, a name or CPU given twice, a negative CPU, or one
            beyond the kernel's possible CPUs.
        fastcpu.Error: this thread may not change its affinity
            (sched_setaffinity denied); the message says why.
    """
    infos = methods() if names is None else methods_named(check_method_names(names, "names"))
    rows = [m.name for m in infos if m.reports_cpu]
    not_checked = {m.name: (m.reason if not m.available else m.cpu_reason) or "" for m in infos if not m.reports_cpu}
    if names is None:
        rows.extend(GETCPU_ROWS)
    wanted = sorted(os.sched_getaffinity(0)) if cpus is None else check_cpus(cpus, possible_cpus())

    before = os.sched_getaffinity(0)
    checked: list[int] = []
    skipped: dict[int, str] = {}
    references: dict[int, Reference] = {}
    cells: dict[tuple[str, int], Agreement] = {}
    moved = False
    try:
        for cpu in wanted:
            try:
                os.sched_setaffinity(0, {cpu})
            except PermissionError as exc:
                # denied for every CPU alike (seccomp, a container): not a gap
                raise Error(
                    f"check() pins this thread to each CPU, but sched_setaffinity was denied "
                    f"({exc.strerror}; a seccomp filter, a container or a security module "
                    "forbids it)"
                ) from exc
            except (OSError, ValueError, OverflowError) as exc:
                skipped[cpu] = f"cannot pin to it ({exc})"
                continue
            moved = True
            sched_cpu, _, sched_raw, sched_ok = _core.read_cpu("sched_getcpu")
            sys_cpu, sys_node, sys_raw, sys_ok = _core.read_cpu("syscall")
            # a failing reference reads -1, and the others decide
            errors = tuple(f"{name}: {failure_reason(name, raw)}" for name, raw, ok in
                           (("sched_getcpu", sched_raw, sched_ok), ("syscall", sys_raw, sys_ok)) if not ok)
            ref = Reference(cpu, sched_cpu if sched_ok else -1, sys_cpu if sys_ok else -1,
                            (sys_node or 0) if sys_ok else -1, errors)
            references[cpu] = ref
            checked.append(cpu)
            for name in rows:
                try:
                    r = _read_row(name)
                except Unsupported as exc:
                    cells[(name, cpu)] = Agreement(name, cpu, None, str(exc), False)
                    continue
                agrees = ref.agrees(r.cpu, r.node)
                cells[(name, cpu)] = Agreement(name, cpu, r, None, agrees)
    finally:
        if moved:
            set_affinity(before, "restore this thread's affinity mask after check()")
    return AgreementTable(tuple(checked), skipped, tuple(rows), not_checked, references, cells)
