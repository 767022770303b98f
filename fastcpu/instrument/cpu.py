"""What a method reports, and whether it is right: fastcpu.read() and read_raw() (run where the
row's runner runs), getcpu() (the fastest way proven right, from the C core), and check()
(every method against sched_getcpu on every allowed CPU)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from . import harness as _harness
from .._core import Unsupported
from .catalog import MethodInfo, method_info
from .. import _core
from .harness import refused, set_affinity
from .._args import affinity_mask, check_cpus, check_method_names, denied
from .._core import Error
from ..results.stability import possible_cpus
from .catalog import methods, methods_named

__all__ = ['CpuReading', 'read', 'read_raw', 'failure_reason', 'getcpu', 'getcpu_node', 'getcpu_method', 'check', 'AgreementTable', 'Agreement', 'Reference', 'Outcome']


@dataclass(frozen=True)
class CpuReading:
    """What one execution of a method reported.

    Attributes:
        method: the method's name.
        cpu: the CPU number it gave.
        node: the NUMA node it gave, or ``None`` for a method that gives none.
        raw: the value it produced before decoding (``cpu | node << 12`` for LSL, TSC_AUX and
            the getcpu models; the CPU itself for the sched_getcpu family and rseq).
    """

    method: str
    cpu: int
    node: int | None
    raw: int


def _runnable(method: str) -> MethodInfo:
    info = method_info(method)  # TypeError / ValueError with the valid names
    if not info.available:
        raise Unsupported(f"{info.name}: {info.reason}")
    return info


def read(method: str) -> CpuReading:
    """Run `method` once on this thread and decode the CPU and node it reports.

    See docs/methods.md#ways-that-report-the-cpu for each method's encoding.

    Raises:
        TypeError, ValueError: `method` names no method.
        fastcpu.Unsupported: it cannot run here, does not report the CPU here
            (``MethodInfo.cpu_reason`` says why, e.g. SIDT under UMIP), or reported failure on
            this thread (the message names the errno).
    """
    info = _runnable(method)
    if not info.reports_cpu:
        raise Unsupported(f"{info.name}: {info.cpu_reason}")
    cpu, node, raw, valid = _harness.read_cpu(info.name)
    if not valid:
        raise Unsupported(f"{info.name}: {failure_reason(info.name, raw)}")
    return CpuReading(info.name, cpu, node, raw)


def failure_reason(name: str, raw: int) -> str:
    """Why `name`'s reading failed, in its catalog row's words (``MethodInfo.read_failure``); `raw` is the errno where ``MethodInfo.read_errno``."""
    info = method_info(name)
    if info.read_failure is None:  # a row whose reader says it never fails
        return f"its reader reported failure (raw value {raw:#x})"
    if not info.read_errno:
        return info.read_failure
    denied = " (a seccomp filter may deny it)" if raw in (errno.EPERM, errno.ENOSYS, errno.EACCES) else ""
    name_of = errno.errorcode.get(raw, "?")
    return f"{info.read_failure} failed: errno {raw} ({name_of}, {os.strerror(raw)}){denied}"


def read_raw(method: str) -> int:
    """Run `method` once and return the raw 32-bit value it produced (a limit, selector, TSC_AUX,
    ``cpu_id`` or system call's return), for inspection.

    Raises:
        TypeError, ValueError: `method` names no method.
        fastcpu.Unsupported: it cannot run here, or it reported failure (the message says how).
    """
    info = _runnable(method)
    raw, valid = _harness.read_raw(info.name)
    if not valid:
        raise Unsupported(f"{info.name}: {failure_reason(info.name, raw)}")
    return raw


#: ``getcpu() -> int``: the CPU this thread runs on now.
getcpu = _core.getcpu
#: ``getcpu_node() -> (cpu, node)``: the CPU and NUMA node this thread runs on now.
getcpu_node = _core.getcpu_node


def getcpu_method(node: bool = False) -> str:
    """The way :func:`getcpu` (``node=False``) or :func:`getcpu_node` (``node=True``) reads:
    ``'rseq'``, ``'rdpid'``, ``'vdso'`` or ``'syscall'``, choosing first if no call has yet.

    Raises:
        TypeError: `node` is not a bool.
        fastcpu.Unsupported: no way could be verified here (as for :func:`getcpu`).
    """
    if not isinstance(node, bool):
        raise TypeError(f"node must be a bool, not {type(node).__name__}")
    cpu_way, node_way, _ = _core.getcpu_ways()
    way = node_way if node else cpu_way
    if way == "none":  # raises Unsupported with the reason
        (getcpu_node if node else getcpu)()
    return way


#: Rows for fastcpu's own getcpu functions, checked like the methods.
GETCPU_ROWS = ("getcpu()", "getcpu_node()")

#: What a cell (and a whole table) came to: ``'agree'``, ``'disagree'`` (a
#: wrong CPU or node was read) or ``'error'`` (nothing could be read).
Outcome = Literal["agree", "disagree", "error"]


@dataclass(frozen=True)
class Reference:
    """What the references said on one CPU.

    Attributes:
        cpu: the CPU the thread was pinned to.
        sched_getcpu: glibc's ``sched_getcpu()`` there (-1 when it failed).
        syscall_cpu, syscall_node: what the getcpu system call returned there (-1 when it failed).
        errors: the references that failed there, each with its errno.
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
        agrees: its cpu and node equal the pinned CPU and the references that answered; False
            for an error too (:attr:`outcome` tells the two apart).
    """

    method: str
    cpu: int
    reading: CpuReading | None
    error: str | None
    agrees: bool

    @property
    def outcome(self) -> Outcome:
        """``'error'`` when the method could not read, else ``'agree'`` or
        ``'disagree'`` (it read a wrong CPU or node)."""
        if self.reading is None:
            return "error"
        return "agree" if self.agrees else "disagree"

    def __str__(self) -> str:
        if self.reading is None:
            return "error"
        node = "-" if self.reading.node is None else str(self.reading.node)
        return f"{'ok' if self.agrees else 'NO'} {self.reading.cpu}/{node}"


@dataclass(frozen=True, eq=False)
class AgreementTable:
    """The result of :func:`fastcpu.check`: method x CPU -> :attr:`Agreement.outcome`, summed up in
    :attr:`outcome`. ``cells`` maps ``(method, cpu)`` to an :class:`Agreement`; ``skipped`` and
    ``not_checked`` say what was left out and why; ``references`` what the references said per CPU.
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

    def _cells(self, outcome: Outcome) -> list[Agreement]:
        cells = (self.cells[(m, c)] for m in self.methods for c in self.cpus)
        return [a for a in cells if a.outcome == outcome]

    def disagreements(self) -> list[Agreement]:
        """Every cell that read a wrong CPU or node, in table order (a cell
        that could not read is in :meth:`errors` instead)."""
        return self._cells("disagree")

    def errors(self) -> list[Agreement]:
        """Every cell whose method could not read, in table order, each with
        its reason (:attr:`Agreement.error`)."""
        return self._cells("error")

    def inconsistent_references(self) -> list[Reference]:
        """The references, in CPU order, where sched_getcpu() or the system
        call named another CPU than the pinned one."""
        return [self.references[c] for c in self.cpus if not self.references[c].consistent]

    @property
    def outcome(self) -> Outcome:
        """``'disagree'`` when a method or a reference read a wrong CPU;
        else ``'error'`` when a cell could not read, no CPU was checked or no
        method was (none asked for reports the CPU here); else ``'agree'``."""
        if self.disagreements() or self.inconsistent_references():
            return "disagree"
        if self.errors() or not self.cpus or not self.methods:
            return "error"
        return "agree"

    @property
    def all_agree(self) -> bool:
        """At least one CPU and one method were checked, the references agree with each other
        on each, and every method read there and agrees with them on each
        (:attr:`outcome` is ``'agree'``)."""
        return self.outcome == "agree"

    def summary(self) -> str:
        """The table's last line: ``'all agree'``, ``'DISAGREEMENT: ...'`` or
        ``'ERROR: ...'``, with the counts."""
        wrong, failed = len(self.disagreements()), len(self.errors())
        refs = len(self.inconsistent_references())
        unread = f"; {failed} cell(s) could not read (errors above)" if failed else ""
        if self.outcome == "disagree":
            parts = [f"{wrong} cell(s) read a wrong CPU"] if wrong else []
            parts += [f"the references disagree on {refs} CPU(s)"] if refs else []
            return "DISAGREEMENT: " + ", ".join(parts) + unread
        if self.outcome == "error":
            if not self.cpus:
                return "ERROR: no CPU could be checked"
            if not self.methods:  # the references alone agreeing would be no answer
                return ("NOTHING CHECKED: no method asked for reports the CPU here (not checked, "
                        "above); only the references were read")
            return f"ERROR: {failed} cell(s) could not read (errors above); every cell that read agrees"
        return "all agree"

    def __str__(self) -> str:
        width = max([len(m) for m in self.methods] + [len("getcpu syscall"), 14]) + 2
        col = 12
        head = f"{'METHOD':{width}}" + "".join(f"{'CPU ' + str(c):>{col}}" for c in self.cpus)
        lines = [
            f"agreement on {len(self.cpus)} CPU(s), cpu/node as each method reports them; "
            "ok = same as the pinned CPU, sched_getcpu() and the getcpu system call; "
            "NO = a different CPU or node; error = could not read",
            "",
            head,
            f"{'pinned to':{width}}" + "".join(f"{c:>{col}}" for c in self.cpus),
            f"{'sched_getcpu()':{width}}" + "".join(f"{self.references[c].sched_getcpu:>{col}}" for c in self.cpus),
            f"{'getcpu syscall':{width}}"
            + "".join(f"{f'{self.references[c].syscall_cpu}/{self.references[c].syscall_node}':>{col}}" for c in self.cpus),
        ]
        for m in self.methods:
            lines.append(f"{m:{width}}" + "".join(f"{str(self.cells[(m, c)]):>{col}}" for c in self.cpus))
        errors = self.errors()
        if errors:
            lines.append("")
            lines.append("errors (could not read; neither agreement nor disagreement):")
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
        lines.append(self.summary())
        return "\n".join(lines)


def _read_row(name: str) -> CpuReading:
    if name == "getcpu()":
        cpu = _core.getcpu()
        return CpuReading(name, cpu, None, cpu)
    if name == "getcpu_node()":
        cpu, node = _core.getcpu_node()
        return CpuReading(name, cpu, node, cpu | node << 12)
    return read(name)


def _references() -> tuple[str, str]:
    """The rows :func:`check` compares every reading with, as their catalog
    rows name them (``MethodInfo.reference``): the C library's answer, then
    the kernel's (which gives the node too)."""
    by_role = {m.reference: m.name for m in methods() if m.reference is not None}
    return by_role["library"], by_role["kernel"]


def check(names: Iterable[str] | None = None, cpus: Iterable[int] | None = None) -> AgreementTable:
    """Read every CPU-reporting method on each CPU and compare with the references.

    A method that cannot read on a CPU is an error cell with the reason, not the end of the
    sweep. See docs/methods.md#which-ways-are-right-fastcpu-check.

    Args:
        names: method names to check (default: every method that reports the CPU here); one
            that does not is listed in ``not_checked``.
        cpus: CPUs to pin to, in order (default: this thread's affinity mask). One that cannot
            be pinned to is recorded in ``skipped`` with the kernel's reason.

    Returns:
        An :class:`AgreementTable`; ``print()`` it for the table.

    Raises:
        TypeError: `names` or `cpus` is not a list (or None), or holds the wrong type.
        ValueError: an unknown method name (the nearest are suggested), an empty list, a name
            or CPU given twice, a negative CPU, or one beyond the kernel's possible CPUs.
        fastcpu.Error: this thread may not read or change its affinity (the message says which).
    """
    infos = methods() if names is None else methods_named(check_method_names(names, "names"))
    rows = [m.name for m in infos if m.reports_cpu]
    not_checked = {m.name: (m.reason if not m.available else m.cpu_reason) or "" for m in infos if not m.reports_cpu}
    if names is None:
        rows.extend(GETCPU_ROWS)
    wanted = None if cpus is None else check_cpus(cpus, possible_cpus())
    if names is None:
        # getcpu() chooses its way on its first call, sweeping the caller's
        # affinity mask: choose now, from this thread's whole mask, not from
        # inside the sweep below, where the mask is one CPU
        _core.getcpu_ways()
    # check() has no unpinned mode: it pins to each CPU and restores this mask
    before = affinity_mask(
        "read this thread's affinity mask, which check() restores after pinning to each CPU",
        "allow it (check() pins only where it can restore), or read unpinned with fastcpu.read()")
    if wanted is None:
        wanted = sorted(before)
    checked: list[int] = []
    skipped: dict[int, str] = {}
    references: dict[int, Reference] = {}
    cells: dict[tuple[str, int], Agreement] = {}
    library, kernel = _references()
    moved = False
    try:
        for cpu in wanted:
            try:
                os.sched_setaffinity(0, {cpu})
            except PermissionError as exc:
                # denied for every CPU alike (seccomp, a container): not a gap
                raise Error(f"check() pins this thread to each CPU, but {denied('sched_setaffinity', exc)}") from exc
            except (OSError, ValueError, OverflowError) as exc:
                skipped[cpu] = f"cannot pin to it: {refused('sched_setaffinity', cpu, exc)}"
                continue
            moved = True
            sched_cpu, _, sched_raw, sched_ok = _core.read_cpu(library)
            sys_cpu, sys_node, sys_raw, sys_ok = _core.read_cpu(kernel)
            # a failing reference reads -1, and the others decide
            errors = tuple(f"{name}: {failure_reason(name, raw)}" for name, raw, ok in
                           ((library, sched_raw, sched_ok), (kernel, sys_raw, sys_ok)) if not ok)
            ref = Reference(cpu, sched_cpu if sched_ok else -1, sys_cpu if sys_ok else -1,
                            (sys_node or 0) if sys_ok else -1, errors)
            references[cpu] = ref
            checked.append(cpu)
            for name in rows:
                try:
                    r = _read_row(name)
                except Error as exc:  # Unsupported, or a child that could not answer: an error cell
                    cells[(name, cpu)] = Agreement(name, cpu, None, str(exc), False)
                    continue
                agrees = ref.agrees(r.cpu, r.node)
                cells[(name, cpu)] = Agreement(name, cpu, r, None, agrees)
    finally:
        if moved:
            set_affinity(before, "restore this thread's affinity mask after check()")
    return AgreementTable(tuple(checked), skipped, tuple(rows), not_checked, references, cells)
