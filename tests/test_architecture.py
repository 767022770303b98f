"""The package's import graph runs one way (docs/architecture.md).

Every fastcpu/*.py is parsed with ast, imports inside functions included, in
every spelling (``from . import x``, ``from .x import y``, ``from fastcpu.x
import y``, ``import fastcpu.x``). The graph must have no cycle, and each
module may import only modules below it in LAYERS.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fastcpu

# The package as imported: the checkout's fastcpu/ from a checkout, the
# installed one where the tests run from a copy (CI's unprivileged pass).
PACKAGE = Path(fastcpu.__file__).resolve().parent

#: The rooms, bottom first; inside a room, modules bottom first. A module may
#: import only the modules listed before it. ``_core`` (the C extension) is
#: under everything. A new module takes its place here.
LAYERS: list[tuple[str, list[str]]] = [
    ("arguments and constants", ["_version", "_errors", "_args", "_locks"]),
    ("values", ["_clock_values", "_clock_motion", "_catalog_rows", "_machine"]),
    ("core wrapper", ["_affinity", "_machine_info", "_chains", "_norseq", "_methods", "_clock", "_conversion",
                      "_harness", "_read", "_getcpu", "_elf", "_show", "_check"]),
    ("file codec", ["_atomicfile", "_json_document"]),
    ("results", ["_display", "_blocks", "_estimate", "_stability", "_statistics", "_bench_result", "_selftest_report", "_table",
                 "_answers", "_result_document", "_results_html", "_machine_results"]),
    ("measuring", ["_measurement", "_selftest", "_bench", "_measure", "_instrument"]),
    ("analysis and plots", ["_compare_columns", "_compare_format", "_compare", "_ab", "_seed_table", "export", "noise", "_plot_data", "_plot_text",
                            "plot"]),
    ("CLI and front door", ["_progress", "_cli_args", "_cli_output", "_cli_files", "_cli", "__main__", "types", "limits", "__init__"]),
]
ORDER = [m for _, modules in LAYERS for m in modules]
#: Under every module: the C extension.
BOTTOM = {"_core"}


def _imports(path: Path) -> set[str]:
    """The fastcpu modules `path` imports, anywhere in it."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and node.module and node.module.split(".")[0] == "fastcpu":
                base = node.module.partition(".")[2] or None
            else:
                continue  # another package (or a level no module here uses)
            if base:
                found.add(base.split(".")[0])
            else:  # from . import x, y: each a submodule (or a name of __init__)
                for alias in node.names:
                    found.add(alias.name if (PACKAGE / f"{alias.name}.py").exists()
                              or alias.name in BOTTOM else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "fastcpu":
                    found.add(parts[1] if len(parts) > 1 else "__init__")
    return found


def graph() -> dict[str, set[str]]:
    """module -> the fastcpu modules it imports (the C extension left out)."""
    return {p.stem: _imports(p) - BOTTOM - {p.stem} for p in sorted(PACKAGE.glob("*.py"))}


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `edges` as a path (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_parser_sees_every_spelling(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("from . import _core, noise\nfrom ._args import check_int\n"
                   "def f():\n    from .plot import ecdf\n    import fastcpu._machine_results\n"
                   "    from fastcpu._measure import measure\n    from fastcpu import __version__\n"
                   "import numpy\nfrom collections import abc\n")
    assert _imports(src) == {"_core", "noise", "_args", "plot", "_machine_results", "_measure", "__init__"}


def test_the_cycle_finder_finds_a_lazy_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_has_no_cycle():
    assert _cycle(graph()) is None, f"import cycle: {' -> '.join(_cycle(graph()) or [])}"


def test_every_module_has_a_place_in_the_layers():
    modules = set(graph())
    assert modules - set(ORDER) == set(), "give each new module its place in LAYERS"
    assert set(ORDER) - modules == set(), "LAYERS names a module that is gone"
    assert len(ORDER) == len(set(ORDER))


@pytest.mark.parametrize("module", ORDER)
def test_a_module_imports_only_from_below(module):
    rank = {m: i for i, m in enumerate(ORDER)}
    above = sorted(m for m in graph()[module] if rank[m] >= rank[module])
    assert not above, f"{module} imports {above}, which are not below it in LAYERS"


def test_no_module_takes_a_private_name_from_a_sibling():
    """``from ._x import _name``: a sibling's internals (the tests may; modules may not)."""
    offenders = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                offenders += [f"{path.stem}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and a.name != "__version__"]
    assert offenders == []


def test_the_extensions_stub_declares_everything_it_has():
    # fastcpu/_core.pyi is how editors and mypy see the C extension
    from fastcpu import _core

    tree = ast.parse((PACKAGE / "_core.pyi").read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert public - declared == set(), "in _core, missing from _core.pyi"
    assert {d for d in declared if not d.startswith("_")} - public == set(), "in _core.pyi, not in _core"


def test_there_is_one_way_to_measure():
    # one C entry point times a target (bench's runs or bench_diff's pairs,
    # between brackets or not); no second way beside it, in C or Python
    from fastcpu import _core

    measuring = {name for name in dir(_core) if "bench" in name or "measure" in name}
    assert measuring == {"measure"}
    callers = sorted(p.stem for p in PACKAGE.glob("*.py") if "_core.measure(" in p.read_text())
    assert callers == ["_harness", "_norseq"]  # the parent's and the child's side of one call
    assert not (PACKAGE / "_fastpath.py").exists()


def test_the_glue_is_split_by_concern():
    # module.c registers the glue files' tables and defines no function of its own
    csrc = PACKAGE.parent / "csrc"
    if not csrc.is_dir():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    module = (csrc / "module.c").read_text()
    assert "PyMethodDef" not in module.replace("PyMethodDef *tables[]", "")
    for glue in ("glue_bench.c", "glue_catalog.c", "glue_getcpu.c", "glue_clock.c"):
        text = (csrc / glue).read_text()
        assert f"PyMethodDef fc_{glue[:-2]}_functions[]" in text, glue
        assert f"fc_{glue[:-2]}_functions" in module, glue


def _c_call_graph(tmp_path):
    """file -> the files whose symbols it uses, from `nm` of each C file of
    the core compiled alone (the glue, which sees Python, sits above them
    all and is left out)."""
    import shutil
    import subprocess

    csrc = PACKAGE.parent / "csrc"
    cc = shutil.which("cc") or shutil.which("gcc")
    if not csrc.is_dir() or cc is None or shutil.which("nm") is None:
        pytest.skip("needs the repository's csrc/, a C compiler and nm (binutils)")
    defined, used = {}, {}
    for source in sorted(csrc.glob("*.c")):
        if source.name.startswith("glue") or source.name == "module.c":
            continue
        obj = tmp_path / (source.stem + ".o")
        subprocess.run([cc, "-std=c11", "-O2", "-fvisibility=hidden", "-c", "-o", str(obj), str(source)],
                       check=True)
        used[source.stem] = set()
        for line in subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRC":
                defined[parts[2]] = source.stem
            elif len(parts) == 2 and parts[0] == "U":
                used[source.stem].add(parts[1])
    return {f: {defined[s] for s in symbols if s in defined and defined[s] != f} for f, symbols in used.items()}


def test_the_c_core_has_no_circle(tmp_path):
    # the catalog depends on features, never the reverse; fork handling and
    # the row verdicts sit above what they reset and judge
    graph = _c_call_graph(tmp_path)
    assert _cycle(graph) is None, graph
    assert "sequences" not in graph["features"] and "verdicts" in graph["fork"]
    assert graph["features"] <= {"pmu"}, "features.c knows nothing above the machine"
