"""A test helper: tests/core_probe.c linked with the C core's plain-C files
(csrc/ but the glue and module.c), for what the tests check inside the core
that no Python entry point shows: the catalog's own check of its rows, the
requirement table, the radix-select median, a read in a thread pinned before
it runs. The extension carries no function for the tests alone.

Built once a session with the compiler and warnings setup.py uses; where the
tests run without the repository's csrc/ (CI's copy of tests/) or without a
C compiler, the tests that need it skip, saying so."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

#: The repository this tests/ belongs to (not the installed package's parent).
REPO = Path(__file__).resolve().parent.parent
CSRC = REPO / "csrc"
SOURCE = Path(__file__).resolve().parent / "core_probe.c"
#: The probe is plain C, uninstrumented: CI's sanitizer pass preloads ASan
#: and UBSan for the interpreter, which neither the compiler nor it needs.
_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
FLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fno-stack-protector", "-fcf-protection=none"]


def build(csrc: Path, out: Path) -> Path:
    """core_probe built from `csrc` (the repository's, or a copy's) into
    directory `out`; skips the calling test where it cannot be built here."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not csrc.is_dir() or cc is None:
        pytest.skip("the C core's test probe needs the repository's csrc/ and a C compiler")
    sources = sorted(str(p) for p in csrc.glob("*.c") if not p.name.startswith("glue_") and p.name != "module.c")
    exe = out / "core_probe"
    p = subprocess.run([cc, *FLAGS, f"-I{csrc}", "-o", str(exe), str(SOURCE), *sources, "-lm", "-lpthread"],
                       capture_output=True, text=True, timeout=600, env=_ENV)
    assert p.returncode == 0, f"tests/core_probe.c does not build:\n{p.stderr[-3000:]}"
    return exe


@functools.cache
def _probe() -> Path:
    out = Path(tempfile.mkdtemp(prefix="fastcpu-core-probe-"))
    atexit.register(shutil.rmtree, out, True)
    return build(CSRC, out)


def run(*args: str, exe: Path | None = None, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe or _probe()), *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env=dict(_ENV, **env))


def catalog_problems(exe: Path | None = None) -> list[str]:
    """Each catalog row's problem (fc_row_problem()), 'name: problem'; [] when every row is whole."""
    p = run("problems", exe=exe)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def requirements(exe: Path | None = None, **env: str) -> list[tuple[str, bool, str]]:
    """Each line of FC_REQUIREMENTS: (name, present here, the reason given when missing)."""
    p = run("requirements", exe=exe, **env)
    assert p.returncode == 0, p.stderr
    return [(name, present == "1", reason) for name, present, reason in
            (line.split("\t") for line in p.stdout.splitlines())]


def medians(arrays: list[list[int]]) -> list[float]:
    """fc_median_u64() of each non-empty list of uint64s."""
    assert all(arrays), "fc_median_u64 is never asked for the median of nothing"
    p = run("median", stdin="".join(" ".join(map(str, a)) + "\n" for a in arrays))
    assert p.returncode == 0, p.stderr
    return [float(x) for x in p.stdout.split()]


def read_in_thread(method: str, cpu: int) -> tuple[int, int | None, int, bool]:
    """One read of `method` in a new pthread pinned to `cpu` before it runs:
    (cpu, node or None, raw, valid)."""
    p = run("read_in_thread", method, str(cpu))
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    c, node, raw, valid = (int(x) for x in p.stdout.split())
    return c, None if node < 0 else node, raw, bool(valid)
