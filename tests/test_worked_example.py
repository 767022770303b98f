"""docs/extending.md's worked example, applied to a copy of the sources.

The doc says a method that needs a new CPU feature (SERIALIZE) takes three
edits, in csrc/requirements.h and csrc/sequences.c, and nothing else: the
requirement, the sequence with its timers, the catalog row. This test takes
those three code blocks from the doc as written, applies them where the doc
says to a copy of csrc/ and fastcpu/, builds the copy's extension with the
compiler and flags setup.py uses, and checks that the new row lands where the
doc says: listed by methods() with its role, in the plots' "kernel entries and
comparison costs" panel, refused with the doc's reason where its CPUID bit is
hidden, whole by the catalog's own check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import core_probe
import fastcpu

PACKAGE = Path(fastcpu.__file__).resolve().parent
#: The checkout these tests came with (not the installed package's parent,
#: which is site-packages under a non-editable install).
REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "extending.md"


def _blocks() -> list[str]:
    """The worked example's code blocks, in the doc's order."""
    text = DOC.read_text()
    start = text.index("### Worked example: a method that needs a new CPU feature")
    end = text.index("\n## ", start) if "\n## " in text[start:] else len(text)
    return re.findall(r"```(?:c|python)\n(.*?)```", text[start:end], re.S)


def _insert_after(text: str, anchor: str, addition: str, what: str) -> str:
    assert text.count(anchor) == 1, f"the doc's place for {what} is not one place in the source"
    i = text.index(anchor) + len(anchor)
    return text[:i] + addition + text[i:]


def _apply(copy: Path) -> set[str]:
    """Apply the doc's three edits to `copy`; the files they changed."""
    requirement, sequence, code_line, row, _test = _blocks()
    header = copy / "csrc" / "requirements.h"
    source = header.read_text()
    # the doc's block repeats the last requirement, now continued by a backslash
    lines = requirement.rstrip("\n").split("\n")
    new_at = next(i for i, line in enumerate(lines) if "X(SERIALIZE" in line)
    old_tail = "\n".join(lines[:new_at]).rstrip().rstrip("\\").rstrip()
    assert source.count(old_tail) == 1, "the doc's last requirement is not requirements.h's"
    header.write_text(source.replace(old_tail, requirement.rstrip("\n")))

    sequences = copy / "csrc" / "sequences.c"
    source = sequences.read_text()
    # "beside the other costs": before the timers, where the last cost's sequence ends
    marker = "/* ---- timers and readers"
    assert source.count(marker) == 1
    source = source.replace(marker, sequence + "\n" + marker)
    # "in the list under timers and readers"
    source = _insert_after(source, "FC_METHOD_CODE(rdgsbase)\n", code_line, "the timers")
    # "in fc_catalog[] after rdgsbase"
    row_start = source.index("{FC_METHOD_ROW(rdgsbase")
    row_end = source.index("},\n", row_start) + len("},\n")
    source = source[:row_end] + row + source[row_end:]
    sequences.write_text(source)
    return {"csrc/requirements.h", "csrc/sequences.c"}


def _build(copy: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden", "-fno-stack-protector",
             "-fcf-protection=none", "-fPIC", "-shared"]
    sources = sorted(str(p) for p in (copy / "csrc").glob("*.c"))
    # setup.py's list is every file of csrc/: a file the build leaves out would fail here too
    listed = re.findall(r'"csrc/([a-z_]+\.c)"', (REPO / "setup.py").read_text())
    assert sorted(listed) == sorted(Path(s).name for s in sources)
    p = subprocess.run([cc, *flags, f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}",
                        "-o", str(copy / "fastcpu" / f"_core{suffix}"), *sources],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"the doc's example does not build:\n{p.stderr[-3000:]}"


CHECK = """
import json, os
import numpy as np
import fastcpu
from fastcpu import plot
assert fastcpu.__file__.startswith(os.environ["COPY"]), fastcpu.__file__
info = {m.name: m for m in fastcpu.methods()}["serialize"]
try:
    r = fastcpu.bench("serialize", 50)
    bench = "timed"
except fastcpu.Unsupported as e:
    bench = "Unsupported: " + str(e)
# its result carries its row, as bench() gives it (timed or not, here): the plots group by that
clk = fastcpu.Clock(tsc_hz=2e9, tsc_step_ticks=1.0, cycles_per_tick=1.0)
one = np.ones(3, np.uint64)
result = fastcpu.BenchResult.from_arrays(method="serialize", serialize="lfence", unroll=1, cpu=None, raw=one,
                                         empty=one, migrated=np.zeros(3, bool), clock=clk,
                                         catalog_row=info.catalog_row)
print(json.dumps({"role": info.role, "kind": info.kind, "reports_cpu": info.reports_cpu,
                  "available": info.available, "reason": info.reason,
                  "group": plot.method_group(result), "bench": bench}))
"""


def _run(copy: Path, **env: str) -> dict:
    p = subprocess.run([sys.executable, "-c", CHECK], cwd=copy, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(copy), COPY=str(copy), MPLBACKEND="Agg", **env))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_the_worked_example_lands_where_the_doc_says(tmp_path):
    if not (REPO / "csrc").is_dir() or not DOC.is_file():
        pytest.skip("a copy of tests/ without the repository's csrc/ and docs/")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler to build the copy")
    copy = tmp_path / "repo"
    shutil.copytree(REPO / "csrc", copy / "csrc")
    shutil.copytree(PACKAGE, copy / "fastcpu", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    before = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    changed = _apply(copy)
    after = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    assert {str(p) for p in after if before.get(p) != after[p]} == changed  # those files and no others
    _build(copy)
    probe = core_probe.build(copy / "csrc", tmp_path)  # the copy's catalog, checked by its own C

    seen = _run(copy)
    assert (seen["role"], seen["kind"], seen["reports_cpu"]) == ("entry_cost", "method", False)
    assert seen["group"] == "kernel entries and comparison costs"
    assert core_probe.catalog_problems(probe) == []
    if {n: p for n, p, _ in core_probe.requirements(probe)}["serialize"]:  # the probe may still refuse it: then it says why
        assert seen["available"] or "probe child" in seen["reason"]
    else:
        assert seen["reason"] == "CPUID lacks SERIALIZE (7.0:EDX bit 14)"
        assert seen["bench"] == "Unsupported: serialize: CPUID lacks SERIALIZE (7.0:EDX bit 14)" or \
            "CPUID lacks SERIALIZE" in seen["bench"]
    hidden = _run(copy, FASTCPU_TEST_HIDE_CPUID="serialize")
    assert hidden["reason"] == "CPUID lacks SERIALIZE (7.0:EDX bit 14)" and not hidden["available"]
    assert "CPUID lacks SERIALIZE" in hidden["bench"]
