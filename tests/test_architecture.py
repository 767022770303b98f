"""The package's import graph runs one way (docs/architecture.md).

Every fastcpu/*.py is parsed with ast, imports inside functions included, in
every spelling (``from . import x``, ``from .x import y``, ``from fastcpu.x
import y``, ``import fastcpu.x``). The graph must have no cycle, and each
module may import only modules below it in LAYERS. The measuring path, from
bench() to its result, passes no function down to be called back, and calls
the C core's one measurement with keywords.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import fastcpu

# The package as imported: the checkout's fastcpu/ from a checkout, the
# installed one where the tests run from a copy (CI's unprivileged pass).
PACKAGE = Path(fastcpu.__file__).resolve().parent
#: The checkout these tests came with, whose csrc/ the C checks read (the
#: installed package's parent is site-packages under a non-editable install).
CHECKOUT = Path(__file__).resolve().parent.parent

#: The rooms, bottom first: a module may import only from its own room and
#: the rooms below it. A room is a folder of fastcpu/; the few top-level
#: modules are placed here by name. ``_core`` (the C extension) is under
#: everything, and only the instrument imports it.
ROOMS = ["base", "files", "results", "instrument", "analysis", "plot", "cli", "front door"]
TOP_LEVEL = {"_base": "base", "_args": "base", "export": "analysis", "noise": "analysis",
             "types": "front door", "limits": "front door", "__init__": "front door", "__main__": "front door"}
#: The rooms that never reach the C core, even through another room: everything a result file
#: needs (the CLI above them reaches the instrument, for its measuring commands).
KIT = {"base", "files", "results", "analysis", "plot"}
#: Under every module: the C extension.
BOTTOM = {"_core"}
#: The longest chain of rooms, one importing the next (issue 37: at most 8).
DEPTH_MAX = 8


def module_name(path: Path) -> str:
    """'results.values' for fastcpu/results/values.py, 'plot' for fastcpu/plot/__init__.py."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def room_of(module: str) -> str:
    head = module.split(".")[0]
    return TOP_LEVEL.get(module, head if (PACKAGE / head).is_dir() else "unplaced")


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str | None:
    """The dotted fastcpu module an import names (before its names are
    looked at), or None for another package."""
    if level == 0:
        if not module or module.split(".")[0] != "fastcpu":
            return None
        return module.partition(".")[2]
    base = importer.split(".") if importer else []
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def _known(name: str) -> bool:
    path = PACKAGE.joinpath(*name.split(".")) if name else PACKAGE
    return name in BOTTOM or path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(path: Path, text: str | None = None) -> set[str]:
    """The fastcpu modules `path` imports, anywhere in it (imports inside
    functions included), as dotted names ('' is fastcpu itself)."""
    importer = module_name(path) if path.is_relative_to(PACKAGE) else path.stem
    importer = "" if importer == "__init__" else importer
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(importer, is_package, node.level, node.module)
            if base is None:
                continue
            for alias in node.names:  # from . import x: a submodule, else a name of the package
                sub = f"{base}.{alias.name}" if base else alias.name
                found.add(sub if _known(sub) else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "fastcpu":
                    found.add(".".join(parts[1:]))
    return {"__init__" if m == "" else m for m in found}


@functools.lru_cache(maxsize=1)
def graph() -> dict[str, frozenset[str]]:
    """module -> the fastcpu modules it imports (the C extension left out); parsed once a run."""
    edges = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        name = module_name(p)
        name = "__init__" if name == "__init__" else name
        edges[name] = frozenset(_imports(p) - BOTTOM - {name})
    return edges


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


def test_the_parser_sees_every_spelling():
    # the text is parsed as if it stood where results/values.py stands
    text = ("from . import estimate\nfrom .. import _core, noise\nfrom .._args import check_int\n"
            "def f():\n    from ..plot import axes\n    import fastcpu.results.results\n"
            "    from fastcpu.instrument.machine import measure\n    from fastcpu import __version__\n"
            "import numpy\nfrom collections import abc\n")
    found = _imports(PACKAGE / "results" / "values.py", text)
    assert found == {"results.estimate", "_core", "noise", "_args", "plot.axes", "results.results",
                     "instrument.machine", "__init__"}


def test_the_cycle_finder_finds_a_lazy_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_has_no_cycle():
    assert _cycle(graph()) is None, f"import cycle: {' -> '.join(_cycle(graph()) or [])}"


def test_every_module_sits_in_a_room():
    unplaced = sorted(m for m in graph() if room_of(m) == "unplaced")
    assert unplaced == [], "put a new module in a room's folder (or name it in TOP_LEVEL)"
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders <= set(ROOMS), f"a folder that is no room: {sorted(folders - set(ROOMS))}"


@pytest.mark.parametrize("module", sorted(graph()))
def test_a_module_imports_only_from_its_room_and_below(module):
    # imports inside functions included: a lazy import reaches no higher
    rank = {r: i for i, r in enumerate(ROOMS)}
    mine = rank[room_of(module)]
    above = sorted(m for m in graph()[module] if rank[room_of(m)] > mine)
    assert not above, f"{module} ({room_of(module)}) imports {above} from rooms above it"


def test_only_the_instrument_reaches_the_c_core():
    reaching = sorted(m for m, p in ((module_name(p), p) for p in PACKAGE.rglob("*.py"))
                      if "_core" in _imports(p) and room_of(m) in KIT)
    assert reaching == []


def _depth(edges: dict[str, set[str]]) -> dict[str, int]:
    """node -> the number of nodes on its longest import chain, itself included."""
    memo: dict[str, int] = {}

    def depth(m: str) -> int:
        if m not in memo:
            memo[m] = 1 + max((depth(n) for n in edges.get(m, ()) if n in edges), default=0)
        return memo[m]

    return {m: depth(m) for m in edges}


def floors() -> dict[str, set[str]]:
    """The house as a newcomer sees it: each folder one room, each top-level module one room;
    room -> the rooms it imports (imports inside functions included)."""
    def node(m: str) -> str:
        head = m.split(".")[0]
        return head if (PACKAGE / head).is_dir() else m

    edges: dict[str, set[str]] = {}
    for m, deps in graph().items():
        edges.setdefault(node(m), set()).update(node(d) for d in deps if node(d) != node(m))
    return edges


def test_the_house_is_at_most_eight_floors_high():
    # issue 37: the import graph at most 8 layers deep, measured as the house sketch does
    # (shared/house: rooms on floors): the longest chain of rooms, a folder being one room;
    # inside a room, modules import without a cycle (test_the_import_graph_has_no_cycle)
    assert _depth({"a": {"b"}, "b": {"c"}, "c": set()}) == {"a": 3, "b": 2, "c": 1}
    assert _cycle(floors()) is None
    deepest = max(_depth(floors()).items(), key=lambda kv: kv[1])
    assert deepest[1] <= DEPTH_MAX, deepest


def test_the_house_is_small_rooms():
    # issue 37: at most 45 modules besides the packages' __init__.py, none over 600 lines
    modules = [p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= 45, len(modules)
    long = {module_name(p): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def test_results_are_plain_values():
    # a result is what its type says from birth: nothing rewrites its class or makes attributes up
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        for word in ("__getattribute__", "__class__ ="):
            if word in text:
                offenders.append(f"{module_name(path)}: {word}")
    assert offenders == []


def test_no_module_takes_a_private_name_from_a_sibling():
    """``from .x import _name``: a sibling's internals (the tests may; modules may not)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
                offenders += [f"{module_name(path)}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and a.name not in ("__version__", "_core")]
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

    measuring = {name for name in dir(_core) if "bench" in name or "measure" in name.lower()}
    assert measuring == set()  # "measure" is fastcpu.measure()'s word alone
    assert "time_runs" in dir(_core) and "TimedRuns" in dir(_core)
    callers = sorted(module_name(p) for p in PACKAGE.rglob("*.py") if "_core.time_runs(" in p.read_text())
    assert callers == ["instrument.child", "instrument.harness"]  # the parent's and the child's side of one call
    assert not (PACKAGE / "_fastpath.py").exists()


def test_the_glue_is_split_by_concern():
    # module.c registers the glue files' tables and defines no function of its own
    csrc = CHECKOUT / "csrc"
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

    csrc = CHECKOUT / "csrc"
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


def test_every_test_file_sits_in_one_rooms_group():
    # tests follow the rooms: tests/suites.py's ROOMS groups them by the room they hold
    import suites

    here = Path(__file__).resolve().parent
    grouped = [f for files in suites.ROOMS.values() for f in files]
    assert len(grouped) == len(set(grouped)), "a file in two rooms' groups"
    assert set(grouped) == {p.name for p in here.glob("test_*.py")}
    assert set(suites.ROOMS) - {"house"} <= set(ROOMS), "a group named for no room"


def test_every_slow_test_named_is_there():
    # tests/suites.py's SLOW names tests by file and name: a rename must not drop one into the
    # README's quick run unnoticed
    import suites

    here = Path(__file__).resolve().parent
    for entry in suites.SLOW:
        file, _, name = entry.partition("::")
        tree = ast.parse((here / file).read_text())
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, entry


def test_every_test_file_is_placed_in_the_ci_passes():
    # .ci/run repeats tests/suites.py's SANITIZED under ASan+UBSan and its
    # UNPRIVILEGED as a user that is not root: a new file must be placed on purpose
    import suites

    here = Path(__file__).resolve().parent
    found = {p.name for p in here.glob("test_*.py")}
    placed = set(suites.SANITIZED) | set(suites.KIT)
    assert not set(suites.SANITIZED) & set(suites.KIT)
    assert found == placed, f"unplaced: {sorted(found - placed)}, gone: {sorted(placed - found)}"
    assert set(suites.UNPRIVILEGED) <= found


# ---- one typed measuring path (issue 27, item 3) ----------------------------
# From bench() to the returned result control only goes down and data only
# comes back: no module of the path hands a function to another to be called
# back (the harness correction is figures the one constructor is given, the runner
# is chosen from the catalog row), and the one C entry point is called with
# keywords.

#: The modules from bench() to the result: bench() and bench_diff(), the
#: result's making, its correction, the harness and the child runner.
MEASURING_PATH = ("instrument.timing", "instrument.bias", "instrument.harness", "instrument.child")


def _callbacks_passed(tree: ast.AST) -> list[str]:
    """Where a call in `tree` passes a function down: a lambda, or the name
    of a function defined in the module (nested or not), as an argument."""
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if ast.unparse(call.func) == "atexit.register":  # the interpreter calls it at exit, not the path
            continue
        args = [*call.args, *(k.value for k in call.keywords)]
        while args:
            arg = args.pop()
            if isinstance(arg, ast.Starred):  # f(*[g]): each element
                args.append(arg.value)
            elif isinstance(arg, (ast.List, ast.Tuple, ast.Set)):
                args.extend(arg.elts)
            elif isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Name) and arg.id in defined):
                found.append(f"line {call.lineno}: {ast.unparse(call)[:80]}")
    return found


def test_the_callback_finder_finds_them():
    src = ("def timed(m, correction=None): ...\n"
           "def bench(m):\n"
           "    def fix(cpt): return cpt\n"
           "    timed(m, correction=fix)\n"
           "    timed(m, lambda cpt: cpt)\n"
           "    run_pinned(m, *[timed])\n"
           "    atexit.register(fix)\n"
           "    return timed(m, fixed=fix(1))\n")
    assert sorted(f.split(":")[0] for f in _callbacks_passed(ast.parse(src))) == ["line 4", "line 5", "line 6"]


@pytest.mark.parametrize("module", MEASURING_PATH)
def test_the_measuring_path_passes_no_function_down(module):
    tree = ast.parse(PACKAGE.joinpath(*module.split(".")).with_suffix(".py").read_text())
    assert _callbacks_passed(tree) == []
    # nor takes one: no parameter of the path is a callable (a progress
    # report to the caller, selftest()'s, is the caller's own, not a step of the path)
    taking = [f"{fn.name}({a.arg})" for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
              for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
              if a.annotation is not None and "Callable" in ast.unparse(a.annotation) and a.arg != "progress"]
    assert taking == []


#: _core.time_runs's parameters in order (csrc/glue_bench.c's keywords)
TIME_RUNS_PARAMETERS = ("target", "runs", "serialize", "copies", "diff", "counter", "rulers", "timeout",
                        "estimate_step")


def test_the_core_measurement_is_called_with_each_argument_named_or_in_order():
    # bench()'s own call (instrument.harness) by position, which spares a keyword dict per call
    # (half a microsecond of bench(m, 1000)), each argument a name that says which it is, in the
    # C entry point's order; the child's by keyword; nothing unpacked anywhere
    calls = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in ast.walk(ast.parse(path.read_text())):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "time_runs"
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "_core"):
                calls[module_name(path)] = call
                assert not any(isinstance(a, ast.Starred) for a in call.args), ast.unparse(call)
                assert all(k.arg is not None for k in call.keywords), ast.unparse(call)  # no **kwargs
    assert sorted(calls) == ["instrument.child", "instrument.harness"]
    child = calls["instrument.child"]
    assert len(child.args) == 1 and {k.arg for k in child.keywords} >= {"runs", "serialize", "copies", "diff",
                                                                         "counter"}
    mine = calls["instrument.harness"]
    assert not mine.keywords and len(mine.args) == len(TIME_RUNS_PARAMETERS)
    for arg, name in zip(mine.args[1:], TIME_RUNS_PARAMETERS[1:]):
        assert name.split("_")[0] in ast.unparse(arg), (ast.unparse(arg), name)
    from fastcpu import _core

    with pytest.raises(TypeError):  # no more arguments than it has
        _core.time_runs("empty", 10, "lfence", 1, False, "tsc", None, 0.0, None, 1)
    with pytest.raises(TypeError):  # none named twice
        _core.time_runs("empty", 10, serialize="lfence", copies=1, diff=False, counter="tsc", rulers=None, runs=10)


def test_measure_names_one_thing():
    # fastcpu.measure() (a machine's Results) is the one Python function of that
    # name; the C entry point under it is _core.time_runs
    defining = sorted(module_name(p) for p in PACKAGE.rglob("*.py")
                      for node in ast.walk(ast.parse(p.read_text()))
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "measure")
    assert defining == ["instrument.machine"]


def test_the_one_page_names_every_room_and_its_modules():
    # docs/architecture.md's table of rooms: one row a room, bottom first, naming its modules
    import re

    doc = (CHECKOUT / "docs" / "architecture.md").read_text()
    if "| room | modules |" not in doc:
        pytest.skip("a copy of tests/ without the repository's docs/")
    table = doc[doc.index("| room | modules |"):].split("\n\n", 1)[0].splitlines()[2:]
    rows = {row.split("|")[1].strip().strip("`/"): set(re.findall(r"`([\w.]+)`", row.split("|")[2]))
            for row in table if not row.startswith("| C core")}
    assert list(rows) == ROOMS
    for room in ROOMS:
        actual = {m for m in graph() if room_of(m) == room}
        assert rows[room] == actual, room
    assert len(doc.splitlines()) <= 90, "docs/architecture.md is one page: the detail goes to internals.md"


#: Issue 37: a newcomer following a warm bench("rdpid", 1000) reads at most this many modules.
WARM_BENCH_MODULES_MAX = 6


def test_a_warm_bench_runs_python_in_at_most_six_modules():
    # every fastcpu module and function a warm call enters, as a profiler sees them; the walk of
    # docs/architecture.md names each module and says how many there are
    import re
    import sys

    if fastcpu.CORE_MISSING is not None:
        pytest.skip(f"no C core here to bench with ({fastcpu.CORE_MISSING})")
    available = {m.name for m in fastcpu.methods() if m.available}
    method = next((m for m in ("rdpid", "gdt", "empty") if m in available), None)
    if method is None:
        pytest.skip("none of rdpid, gdt and empty can run here")
    for _ in range(5):  # warm: the clock, the harness bias, the name resolved
        fastcpu.bench(method, 1000)
    seen: dict[str, set[str]] = {}

    def hook(frame, event, arg):
        name = frame.f_globals.get("__name__") or ""
        if event == "call" and name.startswith("fastcpu"):
            seen.setdefault(name.removeprefix("fastcpu."), set()).add(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        fastcpu.bench(method, 1000)
    finally:
        sys.setprofile(None)
    assert "instrument.timing" in seen and "results.bench_result" in seen, seen
    assert len(seen) <= WARM_BENCH_MODULES_MAX, seen
    doc = CHECKOUT / "docs" / "architecture.md"
    if doc.exists():
        text = doc.read_text()
        walk = text[text.index("call by call"):text.index("Control goes down")]
        words = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
        said = re.search(r"runs Python in (\w+) modules", walk)
        assert said and said[1] in words and words.index(said[1]) + 1 == len(seen), (said, sorted(seen))
        assert [m for m in seen if f"`{m}" not in walk] == [], "a module the warm call enters, not in the walk"


def test_import_fastcpu_leaves_the_kit_to_its_first_use():
    """`import fastcpu` loads what bench() needs, not the result files,
    compare, the noise model or the record types (fastcpu._ON_FIRST_USE);
    every public name still resolves, is listed by dir() and is the object
    its module holds."""
    import subprocess
    import sys

    code = "import sys, fastcpu; print(' '.join(sorted(m for m in sys.modules if m.startswith('fastcpu'))))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                 .stdout.split())
    deferred = {"fastcpu.results.results", "fastcpu.files.write", "fastcpu.analysis.compare", "fastcpu.analysis.ab",
                "fastcpu.analysis.seed_table", "fastcpu.noise", "fastcpu.types", "fastcpu.instrument.machine",
                "fastcpu.instrument.show"}
    assert "fastcpu.instrument.timing" in loaded or fastcpu.CORE_MISSING is not None
    assert not loaded & deferred, f"imported by `import fastcpu` alone: {sorted(loaded & deferred)}"
    for name in fastcpu.__all__:
        assert name in dir(fastcpu), name
        value = getattr(fastcpu, name)
        where = fastcpu._ON_FIRST_USE.get(name)
        if where is not None and where != f".{name}" and where != ".instrument":
            assert value is getattr(__import__(f"fastcpu{where}", fromlist=["_"]), name), name


# ---- docstrings that fit on a screen (issue 37 item 5) ----------------------------------------

#: A public docstring says what the call does, its arguments, returns and raises: one screen.
DOCSTRING_LINES_MAX = 40
#: Docstrings' share of the package's Python lines: the essays live once in docs/.
DOCSTRING_SHARE_MAX = 0.15


def _docstrings() -> list[tuple[str, int]]:
    """(where, lines) of every module, class and function docstring in fastcpu/."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                first = node.body[0] if node.body else None
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)):
                    name = getattr(node, "name", "<module>")
                    found.append((f"{module_name(path)}.{name}", first.end_lineno - first.lineno + 1))
    return found


def test_docstrings_fit_on_a_screen():
    long = sorted(where for where, lines in _docstrings() if lines > DOCSTRING_LINES_MAX)
    assert long == []


def test_docstrings_are_at_most_15_percent_of_the_code():
    lines = sum(len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py"))
    share = sum(n for _, n in _docstrings()) / lines
    assert share <= DOCSTRING_SHARE_MAX, f"docstrings are {share:.1%} of fastcpu/'s Python lines"


# ---- one measuring path you can read top to bottom (issue 37, item 3) --------
# Where a row runs (this process, or its catalog row's child interpreter) is
# said by the row alone and chosen once, by harness.runner(); no module
# branches on it, or on a method's name, anywhere else.

#: The files where the row's ``in_child`` may be named: the row itself (its
#: field, the rows and their check, its exposure to Python and its stub),
#: MethodInfo, and the one runner choice (harness.runner, checked below).
IN_CHILD_PLACES = {"csrc/catalog.h", "csrc/sequences.c", "csrc/glue_catalog.c", "fastcpu/_core.pyi",
                   "fastcpu/instrument/catalog.py", "fastcpu/instrument/harness.py"}


def _source_files():
    """fastcpu's Python and stub files and csrc's C files, by their path in the checkout."""
    files = {f"fastcpu/{p.relative_to(PACKAGE)}": p for p in PACKAGE.rglob("*.py*") if p.suffix in (".py", ".pyi")}
    csrc = CHECKOUT / "csrc"
    if csrc.is_dir():
        files.update({f"csrc/{p.name}": p for p in sorted(csrc.glob("*.[ch]"))})
    return files


def test_where_a_row_runs_is_named_only_by_its_row_and_the_one_runner_choice():
    import re

    word = re.compile(r"\bin_child\b")  # not after_fork_in_child, nor probe_in_child (a probe by fork)
    found = {name: [i + 1 for i, line in enumerate(p.read_text().splitlines()) if word.search(line)]
             for name, p in _source_files().items()}
    found = {name: lines for name, lines in found.items() if lines}
    assert set(found) <= IN_CHILD_PLACES, {n: found[n] for n in set(found) - IN_CHILD_PLACES}
    assert "fastcpu/instrument/catalog.py" in found  # the row is where it is said
    # in the harness, only inside runner(): the one function that returns a row's runner
    tree = ast.parse((PACKAGE / "instrument" / "harness.py").read_text())
    (choice,) = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "runner"]
    assert found.get("fastcpu/instrument/harness.py"), "harness.runner() chooses from the row"
    assert all(choice.lineno <= line <= choice.end_lineno for line in found["fastcpu/instrument/harness.py"])
    # and the harness asks the target's runner, never a runner module, for runs and readings
    asks = [ast.unparse(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)]
    assert not [a for a in asks if a.startswith("_child_runner.") and a != "_child_runner.InChild"]


def test_the_child_runner_reads_its_row_through_the_catalog():
    # one reader of _core.catalog(): catalog.py; the child runner is handed its row (a MethodInfo)
    readers = sorted(name for name, p in _source_files().items()
                     if name.endswith(".py") and "_core.catalog()" in p.read_text())
    assert readers == ["fastcpu/instrument/catalog.py"]
    assert len((PACKAGE / "instrument" / "child.py").read_text().splitlines()) < 600


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of `tree` but its docstrings."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]


#: Python files that may name catalog rows in code: the catalog itself; the
#: seed table (its columns are the 2008 post's table and the result files'
#: names, which the file says, not this machine's catalog); the names old
#: files used (results/values.py: OLD_FILE_NAMES).
NAMING_ROWS = {"fastcpu/instrument/catalog.py", "fastcpu/analysis/seed_table.py", "fastcpu/results/values.py"}


def test_no_method_name_table_outside_the_catalog():
    import re
    from fastcpu import _core

    # ('empty' is also a result's baseline array, and 'sidt' an encoding: not counted)
    rows = {r["name"] for r in _core.catalog()} - {"empty"} - {r["encoding"] for r in _core.catalog()}
    named, user = {}, []
    for name, p in _source_files().items():
        if not name.endswith(".py"):
            continue
        text = p.read_text()
        user += [name] if re.search(r"""startswith\(\s*["']user:""", text) else []
        if name not in NAMING_ROWS:
            hits = sorted({c.value for c in _code_strings(ast.parse(text)) if c.value in rows})
            if hits:
                named[name] = hits
    assert user == [], "a user function says what it is by its missing catalog row, not by its name"
    assert named == {}, "a method named outside its catalog row"


def test_getcpu_names_its_candidates_once_through_their_rows():
    import re
    from fastcpu import _core

    getcpu = CHECKOUT / "csrc" / "getcpu.c"
    if not getcpu.exists():
        pytest.skip("a copy of tests/ without the repository's csrc/")
    rows = {r["name"] for r in _core.catalog()}
    strings = re.findall(r'"([a-z_]+)"', getcpu.read_text())
    named = [s for s in strings if s in rows]
    assert sorted(named) == sorted(set(named)) and {"rseq", "rdpid", "vdso"} <= set(named)
    assert fastcpu.getcpu_method() in rows | {"none"}
