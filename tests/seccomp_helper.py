"""Run Python code with system calls denied by a seccomp filter.

A small C helper, compiled here with gcc on first use, installs a BPF filter
(prctl(PR_SET_NO_NEW_PRIVS), then prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER))
that makes the named system calls fail with the given errno, and execs the
interpreter. Tests skip, with the reason, where gcc is missing or the kernel
refuses the filter.
"""

from __future__ import annotations

import atexit
import errno
import functools
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

#: x86-64 system call numbers.
SYS = {"getcpu": 309, "sched_setaffinity": 203, "sched_getaffinity": 204, "pipe": 22, "pipe2": 293}

_REFUSED = 77  # the helper's exit status when the kernel refuses the filter

_SOURCE = r"""
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* deny ERRNO NR[,NR...] PROGRAM ARGS...: run PROGRAM with those calls
 * failing with ERRNO. Exit 77 when the kernel refuses the filter. */
int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    unsigned err = (unsigned)atoi(argv[1]);
    struct sock_filter f[64];
    unsigned n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (char *p = strtok(argv[2], ","); p && n < 60; p = strtok(NULL, ",")) {
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)atoi(p), 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "the kernel refused the seccomp filter: %s\n", strerror(errno));
        return 77;
    }
    execv(argv[3], argv + 3);
    fprintf(stderr, "execv %s: %s\n", argv[3], strerror(errno));
    return 126;
}
"""


@functools.lru_cache(maxsize=1)
def _helper() -> str:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler to build the seccomp helper")
    directory = tempfile.mkdtemp(prefix="fastcpu-seccomp-")
    atexit.register(shutil.rmtree, directory, True)
    src, exe = os.path.join(directory, "deny.c"), os.path.join(directory, "deny")
    with open(src, "w") as f:
        f.write(_SOURCE)
    p = subprocess.run([gcc, "-O1", "-o", exe, src], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot build the seccomp helper: {p.stderr.strip()[:300]}")
    return exe


def run_denied(code: str, calls: list[str], err: int = errno.EPERM, timeout: float = 120
               ) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter whose `calls` fail with `err`.

    Skips the test when the kernel refuses seccomp filters here.
    """
    numbers = ",".join(str(SYS[c]) for c in calls)
    p = subprocess.run(
        [_helper(), str(err), numbers, sys.executable, "-c", code],
        cwd=os.path.dirname(os.path.abspath(__file__)),
        capture_output=True, text=True, timeout=timeout,
    )
    if p.returncode == _REFUSED and "refused the seccomp filter" in p.stderr:
        pytest.skip(p.stderr.strip())
    return p
