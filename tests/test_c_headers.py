"""The C core's headers (csrc/*.h): one per concern, each self-contained,
and no function passed between the glue and the core, or between the
user-function guard and the harness (issue 37, item 6)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parent.parent / "csrc"
HEADERS = sorted(p.name for p in CSRC.glob("*.h")) if CSRC.is_dir() else []


def _cc() -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang)")
    if not CSRC.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    return cc


def test_there_is_no_catch_all_header():
    if not CSRC.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    assert "fastcpu.h" not in HEADERS
    for source in CSRC.glob("*.[ch]"):
        assert '#include "fastcpu.h"' not in source.read_text(), source.name


@pytest.mark.parametrize("header", HEADERS)
def test_each_header_compiles_alone(header):
    cc = _cc()
    flags = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c"]
    if header == "glue.h":  # the one header that sees Python and numpy
        numpy = pytest.importorskip("numpy")
        flags += [f"-I{sysconfig.get_paths()['include']}", f"-I{numpy.get_include()}"]
    run = subprocess.run([*flags, str(CSRC / header)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def _declared_function_pointer_parameters(text: str) -> list[str]:
    """Prototypes in `text` with a parameter that is a function pointer
    spelled out, `(*name)(...)`, or one of the function-pointer typedefs
    a caller could hand down to be called back."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    found = []
    for proto in re.finditer(r"^[a-z][\w \*]*\b(fc_\w+)\s*\(([^;{]*)\)\s*;", text, flags=re.M):
        params = proto.group(2)
        if re.search(r"\(\s*\*", params):
            found.append(proto.group(0))
    return found


def test_the_finder_finds_a_callback_parameter():
    text = "void fc_user_begin(double t, int (*python_running)(void));\nint fc_ok(int a);\n"
    assert _declared_function_pointer_parameters(text) == [
        "void fc_user_begin(double t, int (*python_running)(void));"]


@pytest.mark.parametrize("header", ["harness.h", "userabi.h", "userguard.h", "glue.h"])
def test_no_function_is_passed_across_the_layers(header):
    # the glue calls the guard (userguard.c), the guard the harness, the
    # harness the user-function timers (userabi.c): downward only, and
    # nothing handed down to be called back up
    if not CSRC.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    assert _declared_function_pointer_parameters((CSRC / header).read_text()) == []


def test_the_guard_runs_the_harness_directly():
    if not CSRC.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    guard = (CSRC / "userguard.c").read_text()
    assert "fc_session_step(s)" in guard
    bench = (CSRC / "glue_bench.c").read_text()
    assert "fc_user_step(&session)" in bench
    assert "python_running" not in bench + guard


def test_the_c_entry_point_says_what_it_does():
    # "measure" is fastcpu.measure()'s word alone: no C identifier uses it
    # (the entry point is _core.time_runs, its record TimedRuns)
    if not CSRC.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    for source in CSRC.glob("*.[ch]"):
        code = re.sub(r"/\*.*?\*/", "", source.read_text(), flags=re.S)
        code = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)  # string literals: messages, docs
        assert re.findall(r"\b\w*measure\w*\b", code, flags=re.I) == [], source.name
