"""os.fork() after import: the child measures and reads the CPU correctly."""

import ctypes
import os

import fastcpu
from fastcpu import _core


def test_child_of_fork_benches_and_reads_right():
    fastcpu.clock()
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        status = 0
        try:
            r = fastcpu.bench("gdt", 200)
            if r.raw.shape != (200,):
                status = 2
            for cpu in sorted(os.sched_getaffinity(0)):
                os.sched_setaffinity(0, {cpu})
                if _core.current_cpu() != cpu or libc.sched_getcpu() != cpu:
                    status = 3
        except BaseException:
            status = 4
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), status
    assert os.WEXITSTATUS(status) == 0
