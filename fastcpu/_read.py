"""fastcpu.read() and read_raw(): what a method reports, run once where its
catalog row says (in this process, or in its child: ``_harness.read_cpu``),
and why a reading failed, in its row's words (``MethodInfo.read_failure``)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from . import _harness
from ._core import Unsupported
from ._methods import MethodInfo, method_info

__all__ = ["CpuReading", "read", "read_raw", "failure_reason"]


@dataclass(frozen=True)
class CpuReading:
    """What one execution of a method reported.

    Attributes:
        method: the method's name.
        cpu: the CPU number it gave.
        node: the NUMA node it gave, or ``None`` for a method that gives none
            (``sched_getcpu``; ``rseq`` where the registered area does not
            cover ``node_id``).
        raw: the value it produced before decoding: ``cpu | node << 12`` for
            LSL, TSC_AUX and the getcpu models, the IDT limit for SIDT, the
            CPU itself for the sched_getcpu family and rseq.
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

    Decoding follows the method's encoding: ``cpu = v & 0xfff``, ``node = v
    >> 12`` for LSL, RDTSCP's TSC_AUX, RDPID and the getcpu models; the vDSO
    and the system call give both; rseq gives ``cpu_id``, and ``node_id``
    where glibc's ``__rseq_size`` and the kernel's ``AT_RSEQ_FEATURE_SIZE``
    both cover it.

    Raises:
        TypeError, ValueError: `method` names no method.
        fastcpu.Unsupported: it cannot run here, does not report the CPU here
            (``MethodInfo.cpu_reason`` says why, e.g. SIDT under UMIP), or
            reported failure on this thread (rseq ``cpu_id`` negative; the
            getcpu system call, the vDSO or sched_getcpu() returned an error,
            named with its errno).
    """
    info = _runnable(method)
    if not info.reports_cpu:
        raise Unsupported(f"{info.name}: {info.cpu_reason}")
    cpu, node, raw, valid = _harness.read_cpu(info.name)
    if not valid:
        raise Unsupported(f"{info.name}: {failure_reason(info.name, raw)}")
    return CpuReading(info.name, cpu, node, raw)


def failure_reason(name: str, raw: int) -> str:
    """Why the method `name`'s reading failed (its reader said so: valid is
    false), in its catalog row's words (``MethodInfo.read_failure``): a
    call's error number named (`raw` is that errno where
    ``MethodInfo.read_errno``), or the row's reason as it stands."""
    info = method_info(name)
    if info.read_failure is None:  # a row whose reader says it never fails
        return f"its reader reported failure (raw value {raw:#x})"
    if not info.read_errno:
        return info.read_failure
    denied = " (a seccomp filter may deny it)" if raw in (errno.EPERM, errno.ENOSYS, errno.EACCES) else ""
    name_of = errno.errorcode.get(raw, "?")
    return f"{info.read_failure} failed: errno {raw} ({name_of}, {os.strerror(raw)}){denied}"


def read_raw(method: str) -> int:
    """Run `method` once and return the raw 32-bit value it produced.

    For inspection, whatever the method reports: the IDT limit (SIDT), the
    GDT limit (SGDT), the LDT selector (SLDT; 0 under UMIP), the LSL limit,
    TSC_AUX (RDTSCP, RDPID), the rseq ``cpu_id``, the low 32 bits of a segment base (RDFSBASE), a system
    call's return value, the %gs selector (gs_reload). For
    ``sched_getcpu_norseq`` it is the CPU, read in a child without rseq.

    Raises:
        TypeError, ValueError: `method` names no method.
        fastcpu.Unsupported: it cannot run here, or it reported failure
            (LSL clears ZF when selector 0x7b is not a usable segment; the
            getcpu system call, the vDSO or sched_getcpu() returned an error:
            the message names it).
    """
    info = _runnable(method)
    raw, valid = _harness.read_raw(info.name)
    if not valid:
        raise Unsupported(f"{info.name}: {failure_reason(info.name, raw)}")
    return raw
