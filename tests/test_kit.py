"""The analysis kit without the C core, and files that describe themselves (issue 27, items 1-2).

Without the core (another platform than Linux x86-64, or ``FASTCPU_NO_CORE=1`` at install),
``import fastcpu`` gives the analysis kit: every file in data/ loads, compares, goes into the
seed table, A/B, every export and every plot, the CLI's compare and plot run, and
across_machines.ipynb executes; the instrument's functions raise ``fastcpu.Unsupported``
naming the platform (exit status 1 from the CLI). Here the core is blocked from import in a
child process (``sys.modules["fastcpu._core"] = None`` before ``import fastcpu``, by
tests/no_core/sitecustomize.py), a notebook kernel included. CI runs this file in a fresh venv
installed with FASTCPU_NO_CORE=1, where no core exists at all (the tests that compare with the
core's own catalog and limits skip there, for want of it), and its first pass, with the core
installed, runs only the rest: the ``without_core`` tests would do there what they do in that
venv, the same blocked import, and took a minute of it.

Each result carries its catalog row (kind, role, encoding, description) into its file, and
every reader goes by the file's words: a method no catalog has loads, compares and is a way
to learn the CPU by its own row, and a row that says otherwise than this machine's catalog wins.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.results import values as _catalog_rows
from fastcpu.results.values import CatalogRow, recorded_row, recorded_versions
from fastcpu.instrument import CORE_MISSING

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = ROOT / "data"
DATA_FILES = sorted(DATA.glob("*.json*"))
NO_CORE = TESTS / "no_core"
needs_core = pytest.mark.skipif(CORE_MISSING is not None,
                                reason=f"this install has no C core to compare with ({CORE_MISSING})")
#: Tests that run fastcpu in a process whose core is blocked: CI runs them where no core is
#: installed at all (pass 1b, the kit's own venv), and its first pass leaves them to that.
without_core = pytest.mark.without_core


def no_core_env() -> dict[str, str]:
    """The environment of a process without the C core (and of its children)."""
    path = os.pathsep.join(p for p in (str(NO_CORE), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path, MPLBACKEND="Agg")


def run_without_core(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=no_core_env(), cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


# -- the layering: the kit never imports the core ------------------------------------------------

def test_the_kit_never_imports_the_core():
    # the kit's rooms (tests/test_architecture.py's KIT), and everything they import, never reach
    # the C core or the instrument, lazy imports included
    from test_architecture import KIT, graph, room_of

    edges = graph()
    for module in (m for m in edges if room_of(m) in KIT):
        seen, todo = {module}, [module]
        while todo:
            for n in edges.get(todo.pop(), set()):
                assert n != "_core", f"{module} reaches the C core through {sorted(seen)}"
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        outside = sorted(m for m in seen if room_of(m) not in KIT)
        assert outside == [], f"{module} imports {outside}, which are not the kit's"


def test_the_layering_check_sees_a_reach_for_the_core(tmp_path):
    # the parse sees an import of the core in a function, as a lazy one would be
    from test_architecture import _imports

    src = tmp_path / "x.py"
    src.write_text("def f():\n    from . import _core\n    return _core.catalog()\n")
    assert "_core" in _imports(src)


# -- without the core: the kit works, the instrument says why not ----------------------------------

#: Run in a child whose core is blocked: everything the kit does with the committed files.
KIT_SESSION = r"""
import io, json, sys
from pathlib import Path
assert sys.modules["fastcpu._core"] is None  # tests/no_core/sitecustomize.py
import fastcpu, fastcpu.plot, fastcpu.noise
from fastcpu import export
out = {"core_imported": sys.modules["fastcpu._core"] is not None}
files = [Path(p) for p in json.loads(sys.argv[1])]
loaded = [fastcpu.load(p) for p in files]
out["loaded"] = [len(r) for r in loaded]
out["rows"] = {r.name: sum(b.catalog_row is not None for b in r.values()) for r in loaded}
out["cheapest"] = [r.cheapest_way_words() for r in loaded]
table = fastcpu.compare(*loaded, dataframe=False)
out["compare_rows"] = len(table)
out["compare_text"] = len(table.to_string())
out["compare_csv"] = table.to_csv().count("\n")
out["compare_json"] = len(json.loads(table.to_json()))
out["compare_html"] = "<table" in table._repr_html_()
seed = fastcpu.seed_table(*loaded)
out["seed"] = [row.cheapest for row in seed if row.kind == "measured"]
ab = fastcpu.compare_ab(loaded[0], loaded[-1], unit="cycles")
out["ab_rows"] = len(ab.rows)
out["ab_text"] = "faster" in str(ab) or "slower" in str(ab) or "no detectable" in str(ab)
out["gbench"] = sum(len(export.to_gbench(r)["benchmarks"]) for r in loaded)
buf = io.StringIO()
export.write_csv(loaded, buf)
out["csv_lines"] = buf.getvalue().count("\n")
model = fastcpu.noise.NoiseModel(step_ticks=2.0, overhead_ticks=40.0, jitter_ticks=1.0)
sim = model.simulate(10.0, 500, seed=1)
out["noise"] = sim.runs
first = loaded[0]
figs = [fastcpu.plot.counts(next(iter(first.values()))).figure,
        fastcpu.plot.distributions(first),
        fastcpu.plot.ecdf(first).figure,
        fastcpu.plot.ecdf_groups(first),
        fastcpu.plot.ecdf_machines(loaded, "gdt").figure,
        fastcpu.plot.machines(loaded),
        fastcpu.plot.published(loaded)]
for i, f in enumerate(figs):
    f.savefig(f"plot{i}.png")
out["plots"] = len(figs)
unsupported = {}
for name, call in [("bench", lambda: fastcpu.bench("gdt", 10)), ("getcpu", fastcpu.getcpu),
                   ("clock", fastcpu.clock), ("check", fastcpu.check), ("measure", lambda: fastcpu.measure(10)),
                   ("selftest", fastcpu.selftest), ("methods", fastcpu.methods)]:
    try:
        call()
        unsupported[name] = "returned"
    except fastcpu.Unsupported as exc:
        unsupported[name] = str(exc)
out["unsupported"] = unsupported
out["error_is_runtime"] = issubclass(fastcpu.Unsupported, fastcpu.Error) and issubclass(fastcpu.Error, RuntimeError)
out["core_imported_after"] = sys.modules["fastcpu._core"] is not None
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def kit_session(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("kit")
    p = run_without_core(["-c", KIT_SESSION, json.dumps([str(f) for f in DATA_FILES])], cwd)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1]), cwd


@without_core
def test_every_data_file_loads_without_the_core(kit_session):
    out, _ = kit_session
    assert out["core_imported"] is False and out["core_imported_after"] is False
    assert len(out["loaded"]) == len(DATA_FILES) >= 1
    assert out["loaded"] == [len(fastcpu.load(p)) for p in DATA_FILES]
    # each result has its row, from the catalog of the fastcpu that wrote its file
    assert list(out["rows"].values()) == out["loaded"]
    assert out["cheapest"] == [fastcpu.load(p).cheapest_way_words() for p in DATA_FILES]


@without_core
def test_compare_the_seed_table_and_ab_without_the_core(kit_session):
    out, _ = kit_session
    loaded = [fastcpu.load(p) for p in DATA_FILES]
    table = fastcpu.compare(*loaded, dataframe=False)
    assert out["compare_rows"] == len(table) > 0
    assert out["compare_text"] == len(table.to_string())
    assert out["compare_csv"] == table.to_csv().count("\n") and out["compare_json"] == len(table)
    assert out["compare_html"]
    assert out["seed"] == [r.cheapest for r in fastcpu.seed_table(*loaded) if r.kind == "measured"]
    assert out["ab_rows"] == len(fastcpu.compare_ab(loaded[0], loaded[-1], unit="cycles").rows) > 0
    assert out["ab_text"]


@without_core
def test_every_export_and_plot_without_the_core(kit_session):
    out, cwd = kit_session
    loaded = [fastcpu.load(p) for p in DATA_FILES]
    # a benchmark per result, and per call back to back where a file holds them (NAME/back_to_back:K)
    assert out["gbench"] == sum(len(r) + len(r.back_to_back) for r in loaded)
    assert out["csv_lines"] == 1 + sum(len(r) for r in loaded)
    assert out["noise"] == 500
    assert out["plots"] == 7
    for i in range(out["plots"]):
        assert (cwd / f"plot{i}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@without_core
def test_the_instrument_raises_unsupported_naming_the_platform(kit_session):
    import platform

    out, _ = kit_session
    assert out["error_is_runtime"]
    for name, message in out["unsupported"].items():
        assert message.startswith(f"fastcpu.{name}() needs fastcpu's C core"), (name, message)
        assert f"this is {sys.platform}/{platform.machine()}" in message
        assert "built only on Linux x86-64" in message


@without_core
def test_the_cli_compares_and_plots_without_the_core(tmp_path):
    files = [str(p) for p in DATA_FILES]
    p = run_without_core(["-m", "fastcpu", "compare", *files, "--unit", "ns"], tmp_path)
    assert p.returncode == 0, p.stderr
    for res in (fastcpu.load(f) for f in files):
        assert res.name[:20] in p.stdout
    p = run_without_core(["-m", "fastcpu", "compare", "--seed-table", *files], tmp_path)
    assert p.returncode == 0 and "CHEAPEST WAY" in p.stdout, p.stderr
    p = run_without_core(["-m", "fastcpu", "compare", "--format", "csv", *files], tmp_path)
    assert p.returncode == 0 and p.stdout.count("\n") > len(files), p.stderr
    p = run_without_core(["-m", "fastcpu", "plot", *files, "--out", "m.png"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


@without_core
@pytest.mark.parametrize("argv", [["--runs", "10"], ["run", "--out", "r.json"], ["check"], ["selftest"],
                                  ["show", "gdt"]], ids=lambda a: a[0].lstrip("-"))
def test_the_cli_measuring_commands_exit_1_naming_the_platform(tmp_path, argv):
    import platform

    p = run_without_core(["-m", "fastcpu", *argv], tmp_path)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "needs fastcpu's C core" in p.stderr and f"{sys.platform}/{platform.machine()}" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()


@without_core
@pytest.mark.notebook
def test_across_machines_executes_without_the_core(monkeypatch):
    from test_notebooks import check_generated_sentences, execute

    monkeypatch.setenv("PYTHONPATH", no_core_env()["PYTHONPATH"])  # the kernel's core is blocked
    text = execute("across_machines.ipynb")
    assert "this machine is not measured: fastcpu.measure() needs fastcpu's C core" in text
    check_generated_sentences("across_machines.ipynb", text)


# -- files that describe themselves ----------------------------------------------------------------

def some_result(method: str, row: CatalogRow | None, seed: int = 0) -> fastcpu.BenchResult:
    clock = fastcpu.Clock(tsc_hz=2.0e9, tsc_step_ticks=2.0, cycles_per_tick=1.5)
    sim = fastcpu.noise.NoiseModel(step_ticks=2.0, overhead_ticks=40.0, jitter_ticks=1.0).simulate(
        10.0 + 5 * seed, 400, seed=seed, clock=clock)
    return fastcpu.BenchResult.from_arrays(method=method, serialize="lfence", unroll=1, cpu=None, raw=sim.raw,
                                           empty=sim.empty, migrated=sim.migrated, clock=clock, catalog_row=row)


def results_of(*results: fastcpu.BenchResult, label: str = "a newer fastcpu's host") -> fastcpu.Results:
    return fastcpu.Results({r.method: r for r in results}, {"model_name": "some CPU"},
                           fastcpu.Clock(tsc_hz=2.0e9, tsc_step_ticks=2.0, cycles_per_tick=1.5),
                           "lfence", "2027-01-01T00:00:00Z", label=label, fastcpu_version="9.9.0")


#: A method no catalog has, as a newer fastcpu would describe it.
NEWER = CatalogRow("method", "cpu_source", "cpu", "VGETCPU: a CPU-number instruction no CPU has yet.")


def test_a_file_of_methods_this_build_lacks_loads_and_compares_with_its_own_words(tmp_path):
    assert recorded_row("vgetcpu_insn", "0.6.0") is None
    if CORE_MISSING is None:
        with pytest.raises(ValueError, match="unknown method"):
            fastcpu.bench("vgetcpu_insn", 10)  # this build cannot time it
    odd_role = CatalogRow("method", "vector_cost", "none", "A cost in a role this fastcpu does not know.")
    res = results_of(some_result("vgetcpu_insn", NEWER, 0), some_result("avx_cost", odd_role, 1),
                     some_result("gdt", recorded_row("gdt", "0.6.0"), 2))
    path = tmp_path / "newer.json"
    res.save(path)
    entry = json.loads(path.read_text())["results"][0]
    assert entry["catalog_row"] == {"kind": "method", "role": "cpu_source", "encoding": "cpu",
                                    "description": NEWER.description}
    back = fastcpu.load(path)
    assert back == res and back["vgetcpu_insn"].catalog_row == NEWER
    # its words decide: a way that reports the CPU (by its encoding), the cheapest here
    assert [r.method for r in back.ways()] == ["vgetcpu_insn", "gdt"]
    assert back.reports_cpu("vgetcpu_insn").reports_cpu and not back.reports_cpu("avx_cost").reports_cpu
    assert back.cheapest_way().method == "vgetcpu_insn"
    table = fastcpu.compare(back, fastcpu.load(DATA_FILES[0]), dataframe=False)
    assert {"vgetcpu_insn", "avx_cost", "gdt"} <= {row["method"] for row in table}
    seed = fastcpu.seed_table(back)
    assert [row.cheapest for row in seed if row.kind == "measured"][0].startswith("vgetcpu_insn: ")
    from fastcpu import plot

    assert plot.method_group(back["vgetcpu_insn"]) == "instructions"
    assert plot.method_group(back["avx_cost"]) == "other"  # a role this fastcpu does not know
    fig = plot.ecdf_groups(back)
    assert len([ax for ax in fig.axes if ax.get_title()]) == 2  # instructions, other
    # and the same without the core
    script = ("import sys, fastcpu\nr = fastcpu.load(sys.argv[1])\n"
              "print(r.cheapest_way_words()); print(r['vgetcpu_insn'].catalog_row.description)")
    p = run_without_core(["-c", script, str(path)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [back.cheapest_way_words(), NEWER.description]


def test_the_files_words_win_over_this_machines_catalog(tmp_path):
    # gdt as a file from elsewhere describes it: a model that reads no CPU number
    other = CatalogRow("model", "model", "none", "gdt, as another fastcpu described it")
    res = results_of(some_result("gdt", other, 0), some_result("rdpid", recorded_row("rdpid", "0.6.0"), 1))
    res.save(tmp_path / "r.json")
    back = fastcpu.load(tmp_path / "r.json")
    assert back["gdt"].catalog_row == other
    assert [r.method for r in back.ways()] == ["rdpid"]
    assert not back.reports_cpu("gdt").reports_cpu
    from fastcpu import plot

    assert plot.method_group(back["gdt"]) == "models"


def test_a_user_function_has_no_row_and_is_no_way(tmp_path):
    res = results_of(some_result("user:mine", None, 0), some_result("rdpid", recorded_row("rdpid", "0.6.0"), 1))
    res.save(tmp_path / "r.json")
    assert "catalog_row" not in json.loads((tmp_path / "r.json").read_text())["results"][0]
    back = fastcpu.load(tmp_path / "r.json")
    assert back["user:mine"].catalog_row is None and [r.method for r in back.ways()] == ["rdpid"]


@pytest.mark.parametrize("row, words", [
    ("gdt", "must be an object"),
    ({"kind": "method", "role": "cpu_source", "encoding": "cpu"}, "'description' is missing"),
    ({"kind": "method", "role": "cpu_source", "encoding": "cpu", "description": "x", "extra": 1}, "unknown field 'extra'"),
    ({"kind": 5, "role": "cpu_source", "encoding": "cpu", "description": "x"}, "'kind' is 5, must be a word"),
    ({"kind": "method", "role": "x" * 65, "encoding": "cpu", "description": "x"}, "'role' is .*must be a word"),
    ({"kind": "method", "role": "cpu source\x1b", "encoding": "cpu", "description": "x"}, "'role' is"),
    ({"kind": "method", "role": "cpu_source", "encoding": "cpu", "description": "x" * 2001}, "at most 2000"),
])
def test_a_bad_catalog_row_in_a_file_is_refused_naming_the_field(tmp_path, row, words):
    res = results_of(some_result("vgetcpu_insn", NEWER, 0))
    res.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    doc["results"][0]["catalog_row"] = row
    del doc["checksum"]
    doc["version"] = 2  # no checksum to mend: the field reader must refuse it itself
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(fastcpu.ResultFileError, match=r"results\[0\] \(vgetcpu_insn\) catalog_row: .*" + words):
        fastcpu.load(tmp_path / "bad.json")


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.stem)
def test_an_old_file_gets_the_rows_of_the_version_that_wrote_it(path):
    data = path.read_bytes()
    doc = json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)
    res = fastcpu.load(path)
    if doc["version"] >= 4:  # a file that describes itself: each result reads with its own row
        for e in doc["results"]:
            assert res[e["method"]].catalog_row.to_dict() == e["catalog_row"], e["method"]
        return
    assert all("catalog_row" not in e for e in doc["results"])
    for name, r in res.items():
        assert r.catalog_row is not None and r.catalog_row == recorded_row(name, res.fastcpu_version), name


def test_an_old_file_of_a_method_its_version_lacked_has_no_row(tmp_path):
    res = results_of(some_result("vgetcpu_insn", NEWER, 0), some_result("rdpid", None, 1))
    res = dataclasses.replace(res, fastcpu_version="0.4.0")
    res.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    for e in doc["results"]:
        e.pop("catalog_row", None)
    del doc["checksum"]
    doc["version"] = 1
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = fastcpu.load(tmp_path / "old.json")
    assert old["vgetcpu_insn"].catalog_row is None  # 0.4.0's catalog had no such method
    assert old["rdpid"].catalog_row == recorded_row("rdpid", "0.4.0") is not None
    assert [r.method for r in old.ways()] == ["rdpid"]


def test_which_recorded_catalog_a_version_reads():
    versions = recorded_versions()
    assert versions[0] == "0.2.0" and versions[-1] == "0.6.0"
    # an old file's name is read as today's (file_method_name), a name a user gives is not
    from fastcpu.results.values import file_method_name

    assert recorded_row(file_method_name("getcpu_sidt_fp"), "0.2.0") == recorded_row("getcpu_sidt_norz_fp", "0.2.0")
    assert recorded_row("getcpu_sidt_norz_fp", "0.2.0") is not None and recorded_row("getcpu_sidt_fp", "0.2.0") is None
    # before the first recorded: the first's; between: the older one's; no version: the newest's
    for version in ("0.1.0", "0.3.7", "", "dev", "12"):
        assert recorded_row("gdt", version) is not None
    assert recorded_row("user:mine", "0.6.0") is None


@needs_core
def test_the_recorded_catalog_is_the_cores():
    """catalog_rows.json (docs/catalog_rows.py) holds 0.6.0's catalog as the C core has it: every
    row, its words exactly. A later version keeps the rows its files carry themselves."""
    from fastcpu import _core

    live = {r["name"]: CatalogRow(r["kind"], r["role"], r["encoding"], r["description"]) for r in _core.catalog()}
    recorded = {name: recorded_row(name, "0.6.0") for name in live}
    if fastcpu.__version__ == recorded_versions()[-1]:
        assert recorded == live
    else:  # a newer fastcpu: the rows that are still there keep their kind, role and encoding
        for name, row in recorded.items():
            if row is not None:
                assert (row.kind, row.role, row.encoding) == (live[name].kind, live[name].role, live[name].encoding)
    doc = json.loads((Path(fastcpu.__file__).parent / "catalog_rows.json").read_text("utf-8"))
    assert all(set(row["versions"]) <= set(doc["versions"]) for row in doc["rows"])


@needs_core
def test_bench_results_carry_the_catalogs_row_into_their_file(tmp_path):
    from fastcpu.instrument.catalog import method_info

    res = fastcpu.measure(50, ["gdt", "null_syscall"])
    assert all(r.catalog_row == method_info(name).catalog_row for name, r in res.items())
    res.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["version"] == 4
    assert [e["catalog_row"]["role"] for e in doc["results"]] == ["cpu_source", "entry_cost"]
    assert fastcpu.load(tmp_path / "r.json") == res


@needs_core
def test_the_kits_limits_are_the_cores():
    from fastcpu import _core
    from fastcpu import _args

    assert (_args.RUNS_MAX, _args.UNROLL_MAX, _args.SERIALIZE_MODES) == (
        _core.RUNS_MAX, _core.UNROLL_MAX, _core.SERIALIZE_MODES)
    assert _core.Error is fastcpu.Error and _core.Unsupported is fastcpu.Unsupported


def test_hand_built_results_take_the_newest_recorded_row():
    r = some_result("rdpid", None, 0)
    assert r.catalog_row is None
    clock = fastcpu.Clock(tsc_hz=2.0e9, tsc_step_ticks=2.0, cycles_per_tick=1.5)
    built = fastcpu.BenchResult.from_arrays(method="rdpid", serialize="lfence", unroll=1, cpu=None,
                                            raw=np.array([10, 12]), empty=np.array([8, 8]),
                                            migrated=np.zeros(2, bool), clock=clock)
    assert built.catalog_row == recorded_row("rdpid", "")
    with pytest.raises(TypeError, match="catalog_row must be a CatalogRow or None"):
        fastcpu.BenchResult.from_arrays(method="x", serialize="lfence", unroll=1, cpu=None, raw=np.array([1]),
                                        empty=np.array([1]), migrated=np.zeros(1, bool), clock=clock,
                                        catalog_row={"kind": "method"})
