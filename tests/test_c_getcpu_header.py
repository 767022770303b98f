"""csrc/fastcpu_getcpu.h, the header users copy (issue 38): each of its
readers reads the CPU its thread is pinned to, on every CPU of this
process's affinity mask, as sched_getcpu() does.

A tiny C program including the header is compiled with the system's cc
(-std=c11 -Wall -Wextra -Werror), pins itself to each CPU in turn and
compares; a reading counts only when sched_getcpu() gave the same CPU just
before and just after it (a migration in between is read again). A reader is
skipped only where the machine lacks what it needs, and the skip says what.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HEADER = Path(__file__).resolve().parent.parent / "csrc" / "fastcpu_getcpu.h"
READERS = ("rseq", "rdpid", "vdso", "syscall", "best")

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "fastcpu_getcpu.h"

/* One reader's value where sched_getcpu() agreed before and after it. */
static int settled(int which, int *value)
{
    for (int tries = 0; tries < 10000; tries++) {
        int before = sched_getcpu(), v;
        switch (which) {
        case 0: v = fastcpu_rseq_getcpu(); break;
        case 1: v = fastcpu_rdpid_getcpu(NULL); break;
        case 2: v = fastcpu_vdso_getcpu(NULL); break;
        case 3: v = fastcpu_syscall_getcpu(NULL); break;
        default: v = fastcpu_getcpu(); break;
        }
        int after = sched_getcpu();
        if (before == after && before >= 0) {
            *value = v;
            return before;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"rseq", "rdpid", "vdso", "syscall", "best"};
    for (int i = 1; i < argc; i++) {
        int cpu = atoi(argv[i]);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            printf("%d pin failed\n", cpu);
            continue;
        }
        for (int r = 0; r < 5; r++) {
            int value = 0, ref = settled(r, &value);
            if (ref < 0)
                printf("%d %s unsettled\n", cpu, names[r]);
            else if ((r == 0 || r == 1) && value == -1)
                printf("%d %s absent\n", cpu, names[r]);
            else if (r == 2 && value == -ENOSYS)
                printf("%d %s absent\n", cpu, names[r]);
            else
                printf("%d %s %d %d\n", cpu, names[r], value, ref);
        }
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def readings(tmp_path_factory) -> dict[str, list[tuple[int, str]]]:
    """reader -> [(pinned cpu, what it read: 'ok', 'absent', or why not)]."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the header's readers are Linux x86-64's")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the header's test program")
    tmp = tmp_path_factory.mktemp("getcpu_header")
    (tmp / "main.c").write_text(PROGRAM)
    exe = tmp / "main"
    build = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADER.parent}",
                            "-o", str(exe), str(tmp / "main.c")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    cpus = sorted(os.sched_getaffinity(0))
    run = subprocess.run([str(exe), *map(str, cpus)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out: dict[str, list[tuple[int, str]]] = {r: [] for r in READERS}
    pinned = set()
    for line in run.stdout.splitlines():
        cpu, reader, *rest = line.split()
        if reader == "pin":
            continue
        pinned.add(int(cpu))
        if rest[0] in ("absent", "unsettled"):
            out[reader].append((int(cpu), rest[0]))
        else:
            value, ref = map(int, rest)
            out[reader].append((int(cpu), "ok" if value == ref == int(cpu) else f"read {value}, sched_getcpu {ref}"))
    if not pinned:
        pytest.skip("the test program could not pin itself to any CPU of its affinity mask")
    return out


def _rseq_absent_reason() -> str:
    libc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else ""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "glibc.pthread.rseq=0" in tunables:
        return "rseq turned off (GLIBC_TUNABLES=glibc.pthread.rseq=0)"
    return f"glibc registered no rseq area ({libc or 'not glibc'}; needs glibc >= 2.35 and Linux >= 4.18)"


def _has_rdpid() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and " rdpid" in line for line in flags.splitlines())


@pytest.mark.parametrize("reader", READERS)
def test_each_reader_reads_the_pinned_cpu(readings, reader):
    got = readings[reader]
    assert got, "no CPU was read"
    absent = [cpu for cpu, what in got if what == "absent"]
    if absent:
        assert len(absent) == len(got), f"{reader} absent on some CPUs only: {got}"
        if reader == "rseq":
            pytest.skip(_rseq_absent_reason())
        if reader == "rdpid":
            assert not _has_rdpid(), "CPUID lacks RDPID but /proc/cpuinfo lists it"
            pytest.skip("this CPU lacks RDPID (CPUID.7.0:ECX bit 22)")
        if reader == "vdso":
            pytest.skip("this process has no vDSO getcpu (no AT_SYSINFO_EHDR, or no __vdso_getcpu in it)")
        pytest.fail(f"{reader} cannot be absent")
    wrong = [(cpu, what) for cpu, what in got if what not in ("ok", "unsettled")]
    assert wrong == [], wrong
    assert any(what == "ok" for _, what in got), got


def test_the_readmes_snippet_compiles_and_reads_the_cpu_it_is_pinned_to(tmp_path):
    # README.md's "Use it in your code" shows the header's use: that code, as written, in a
    # program pinned to each allowed CPU in turn, reads what sched_getcpu() reads
    import re

    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the header's readers are Linux x86-64's")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the README's snippet")
    readme = HEADER.parent.parent / "README.md"
    snippet = re.search(r"```c\n(.*?)```", readme.read_text(), re.S)
    assert snippet, "README.md's C snippet is gone"
    include, _, body = snippet[1].partition("\n")
    assert include.strip() == '#include "fastcpu_getcpu.h"', include
    (tmp_path / "snippet.c").write_text(
        "#define _GNU_SOURCE\n#include <sched.h>\n#include <stdio.h>\n#include <stdlib.h>\n" + include + "\n"
        "int main(int argc, char **argv)\n{\n"
        "    for (int i = 1; i < argc; i++) {\n"
        "        cpu_set_t set;\n        CPU_ZERO(&set);\n        CPU_SET(atoi(argv[i]), &set);\n"
        "        if (sched_setaffinity(0, sizeof set, &set) != 0)\n            continue;\n"
        "        for (int tries = 0; tries < 1000; tries++) {\n"
        "            int before = sched_getcpu();\n"
        + "\n".join("            " + line for line in body.strip().splitlines()) + "\n"
        "            if (before == sched_getcpu()) {\n"
        "                printf(\"%s %d %d\\n\", argv[i], cpu, before);\n                break;\n            }\n"
        "        }\n    }\n    return 0;\n}\n")
    exe = tmp_path / "snippet"
    build = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HEADER.parent}",
                            "-o", str(exe), str(tmp_path / "snippet.c")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    cpus = sorted(os.sched_getaffinity(0))
    run = subprocess.run([str(exe), *map(str, cpus)], capture_output=True, text=True, timeout=60, check=True)
    lines = [line.split() for line in run.stdout.splitlines()]
    assert lines, "the snippet could not be pinned to any allowed CPU"
    for pinned, read, reference in lines:
        assert int(read) == int(reference) == int(pinned), (pinned, read, reference)
