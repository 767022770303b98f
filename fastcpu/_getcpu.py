"""fastcpu.getcpu(): the current CPU from Python for little more than a bare
C call.

Python has no ``sched_getcpu``: the usual ways are ``ctypes`` (a foreign
call, about 85 ns here) or parsing ``/proc/self/stat`` (about 14 us, what
psutil's ``cpu_num()`` does). :func:`getcpu` and :func:`getcpu_node` are C
functions without arguments that read the CPU by the fastest way that read
the right CPU on every CPU this thread may use: the rseq ``cpu_id`` load,
then RDPID, the vDSO, the system call. The check runs once, on the first
call, in a helper thread pinned to each CPU of the calling thread's affinity
mask (``os.sched_getaffinity(0)``) in turn, a few milliseconds, and never to
a CPU outside it (under ``taskset`` or a container's cpuset it stays on the
CPUs given); the caller's affinity is never touched. The pinning is the reference for the CPU;
the node is the getcpu system call's, or sysfs's where the call fails. A way
whose own call fails (the system call denied by a seccomp filter) is never
chosen.

Both raise :class:`fastcpu.Unsupported`, with the reason, where nothing can
be verified (the helper may not pin itself and the system call fails), and
:func:`getcpu_node` where the node cannot be (the system call fails and sysfs
names no node); :class:`fastcpu.Error` if the chosen vDSO or system call
fails later.
"""

from __future__ import annotations

from . import _core

__all__ = ["getcpu", "getcpu_node", "getcpu_method"]

#: ``getcpu() -> int``: the CPU this thread runs on now.
getcpu = _core.getcpu
#: ``getcpu_node() -> (cpu, node)``: the CPU and NUMA node this thread runs on now.
getcpu_node = _core.getcpu_node


def getcpu_method(node: bool = False) -> str:
    """The way :func:`getcpu` (``node=False``) or :func:`getcpu_node`
    (``node=True``) reads: ``'rseq'``, ``'rdpid'``, ``'vdso'`` or ``'syscall'``.

    Chooses first if no call has yet. On a thread whose rseq ``cpu_id`` is
    negative, an rseq choice falls back, per call, to the next proven way.

    Raises:
        TypeError: `node` is not a bool.
        fastcpu.Unsupported: no way could be verified here (as for
            :func:`getcpu`).
    """
    if not isinstance(node, bool):
        raise TypeError(f"node must be a bool, not {type(node).__name__}")
    cpu_way, node_way, _ = _core.getcpu_ways()
    way = node_way if node else cpu_way
    if way == "none":  # raises Unsupported with the reason
        (getcpu_node if node else getcpu)()
    return way
