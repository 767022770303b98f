"""The benchmarks' C programs, compiled with the system compiler as C11."""

from __future__ import annotations

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def compile_c(source: str, output: str, *flags: str) -> str:
    """Compile benchmarks/`source` to `output` (-O2 -std=c11 and `flags`);
    `output`. Exits with a message when there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise SystemExit(f"no C compiler: cannot build benchmarks/{source}")
    subprocess.run([cc, "-O2", "-std=c11", *flags, "-o", output, os.path.join(HERE, source)], check=True)
    return output
