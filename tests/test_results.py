"""measure(), Results, save() and load(): round trips, bad files, atomic writes."""

import base64
import dataclasses
import datetime
import gzip
import json
import os
import re
import stat
import subprocess
import sys

import numpy as np
import pytest

import fastcpu
from fastcpu.instrument import machine as _machine_run
from fastcpu.files import write as _json_document
from fastcpu import BenchResult
from fastcpu.instrument.catalog import MethodInfo


@pytest.fixture(scope="module")
def small():
    """Two methods, 60 runs each: enough to exercise every field."""
    return fastcpu.measure(60, ["gdt", "syscall"], label="test machine")


@pytest.fixture
def saved(small, tmp_path):
    path = tmp_path / "r.json"
    small.save(path)
    return path


def doc_of(path):
    return json.loads(path.read_text())


def write_doc(path, doc):
    """`doc` written with a fresh checksum, as an edit that knows the format
    would write it: the field checks behind the checksum are what is tested."""
    path.write_bytes(_json_document.encode_document(doc))
    return path


# -- measure -------------------------------------------------------------------

def test_measure_times_every_available_method_by_default():
    res = fastcpu.measure(20)
    expected = [m.name for m in fastcpu.methods() if m.available and m.name != "empty"]
    assert list(res) == expected
    for name, r in res.items():
        assert isinstance(r, fastcpu.BenchResult)
        assert r.method == name and r.runs == 20 and r.raw.shape == (20,)
    assert dict(res.unavailable) == {
        m.name: m.reason for m in fastcpu.methods() if not m.available
    }


def test_measure_records_the_machine_and_the_clock(small):
    m = small.machine
    for key in ("vendor", "model_name", "family", "model", "stepping", "microcode", "kernel",
                "glibc", "hypervisor", "governors", "boost", "affinity", "isolated_cpus"):
        assert key in m, key
    for flag in ("rdtscp", "rdpid", "umip", "fsgsbase", "hypervisor", "invariant_tsc"):
        assert isinstance(m["flags"][flag], bool), flag
    assert m["affinity"] == sorted(os.sched_getaffinity(0))
    assert small.clock == fastcpu.clock()
    assert small.fastcpu_version == fastcpu.__version__
    assert small.serialize == "lfence"
    assert small.label == "test machine" and small.name == "test machine"
    when = datetime.datetime.strptime(small.date, "%Y-%m-%dT%H:%M:%SZ")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs((now - when).total_seconds()) < 3600


def test_measure_passes_its_settings_to_every_bench():
    cpu = min(os.sched_getaffinity(0))
    res = fastcpu.measure(15, "gdt", "rdtscp", unroll=3, cpu=cpu)
    r = res["gdt"]
    assert (r.runs, r.serialize, r.unroll, r.cpu) == (15, "rdtscp", 3, cpu)
    assert res.serialize == "rdtscp"


def test_measure_reports_progress_in_order():
    calls = []
    fastcpu.measure(10, ["gdt", "rseq"], progress=lambda *a: calls.append(a))
    assert calls == [(0, 2, "gdt"), (1, 2, "rseq"), (2, 2, None)]


def test_measure_records_unavailable_methods_instead_of_raising(monkeypatch):
    fake = MethodInfo("nope_insn", "a method this machine lacks", "none", False, "no such insn", False, "no such insn")
    real = _machine_run.all_methods()
    monkeypatch.setattr(_machine_run, "all_methods", lambda: real + [fake])
    res = fastcpu.measure(10)
    assert "nope_insn" not in res
    assert res.unavailable["nope_insn"] == "no such insn"
    assert "nope_insn" in res.table() and "no such insn" in res.table()


def test_measure_raises_unsupported_when_nothing_can_run(monkeypatch):
    fake = MethodInfo("nope_insn", "", "none", False, "no such insn", False, "no such insn")
    monkeypatch.setattr(_machine_run, "all_methods", lambda: [fake])
    with pytest.raises(fastcpu.Unsupported, match="no such insn"):
        fastcpu.measure(10)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"runs": 0}, ValueError, "runs must be between"),
        ({"runs": "10"}, TypeError, "runs must be an int"),
        ({"unroll": 0}, ValueError, "unroll must be between"),
        ({"serialize": "mfence"}, ValueError, "use one of"),
        ({"cpu": -1}, ValueError, "affinity mask"),
        ({"methods": ["rdpidd"]}, ValueError, "did you mean 'rdpid'"),
        ({"methods": []}, ValueError, "name at least one"),
        ({"methods": ["gdt", "gdt"]}, ValueError, "named twice"),
        ({"methods": 3}, TypeError, "methods must be"),
        ({"methods": [None]}, TypeError, "method must be a str"),
        ({"progress": "yes"}, TypeError, "progress must be callable"),
        ({"label": 5}, TypeError, "label must be a str"),
    ],
)
def test_measure_rejects_bad_arguments_before_measuring(kwargs, exc, match, monkeypatch):
    monkeypatch.setattr(_machine_run, "bench", lambda *a, **k: pytest.fail("measured anyway"))
    with pytest.raises(exc, match=match):
        fastcpu.measure(**{"runs": 10, **kwargs})


# -- Results -------------------------------------------------------------------

def test_results_is_a_read_only_mapping(small):
    assert len(small) == 2 and "gdt" in small and "rdpid" not in small
    assert small.get("rdpid") is None
    with pytest.raises(KeyError, match="measured: gdt, syscall"):
        small["rdpid"]
    with pytest.raises(TypeError):
        small.results["x"] = small["gdt"]


def test_results_pickle_and_copy(small):
    import copy
    import pickle

    assert pickle.loads(pickle.dumps(small)) == small
    assert copy.deepcopy(small) == small


def test_results_prints_the_seed_table(small):
    text = str(small)
    assert "test machine" in text and "clock: TSC" in text
    assert "BEST" in text and "gdt" in text and "syscall" in text
    assert "2 methods" in repr(small)


def test_results_rejects_inconsistent_contents(small):
    gdt = small["gdt"]
    common = dict(machine={}, clock=small.clock, serialize="lfence", date=small.date)
    with pytest.raises(ValueError, match="key it by its method"):
        fastcpu.Results(results={"other": gdt}, **common)
    with pytest.raises(ValueError, match="clock differs"):
        fastcpu.Results(results={"gdt": gdt}, **{**common, "clock": fastcpu.Clock(1e9, 1, 1.0)})
    with pytest.raises(ValueError, match="serialize"):
        fastcpu.Results(results={"gdt": gdt}, **{**common, "serialize": "cpuid"})
    with pytest.raises(ValueError, match="JSON values"):
        fastcpu.Results(results={"gdt": gdt}, **{**common, "machine": {"x": object()}})


def test_the_factory_reproduces_the_c_statistics():
    # numpy oracle for the C core's best and median, through the one factory
    for method, unroll in (("gdt", 1), ("syscall", 4)):
        r = fastcpu.bench(method, 101, unroll=unroll)
        again = BenchResult.from_arrays(
            method=r.method, serialize=r.serialize, unroll=r.unroll, cpu=r.cpu,
            raw=r.raw, empty=r.empty, migrated=r.migrated, clock=fastcpu.clock())
        assert (again.best, again.median, again.runs) == (r.best, r.median, r.runs)


def test_the_factory_builds_what_the_dataclass_constructor_builds(small):
    # from_arrays sets the fields at once, not through the generated __init__
    import dataclasses

    r = small["gdt"]
    fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(BenchResult)}
    through_init = BenchResult(**fields)
    assert set(vars(r)) >= set(fields)  # every field set, none left to a class default
    for name, value in fields.items():
        other = getattr(through_init, name)
        assert (value == other).all() if isinstance(value, np.ndarray) else value == other, name
    assert r.estimate == through_init.estimate and repr(r) == repr(through_init)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.best = 0.0


def test_the_factory_rejects_arrays_of_different_lengths(small):
    r = small["gdt"]
    with pytest.raises(ValueError, match="one value per run"):
        BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                 raw=r.raw, empty=r.empty[:-1], migrated=r.migrated,
                                 clock=small.clock)


# Counts that are no counts (issue 28, item 12): cast to uint64, NaN read as
# 2**63 ticks and -5 as 2**64 - 5, a fraction lost its part, and str() of such
# a result raised OverflowError. Each is refused at the factory, naming the
# array and the run, for either kind of result and either array.
NOT_COUNTS = {
    "NaN": (np.array([100.0, np.nan, 100.0]), "nan at run 1, which is NaN"),
    "all NaN": (np.full(3, np.nan), "nan at run 0, which is NaN"),
    "negative int": (np.array([100, 100, -5]), "-5 at run 2, which is negative"),
    "negative float": (np.array([-0.5, 100.0, 100.0]), "-0.5 at run 0, which is negative"),
    "list of negatives": ([-5, -5, -5], "-5 at run 0, which is negative"),
    "infinite": (np.array([100.0, np.inf, 100.0]), "inf at run 1, which is infinite"),
    "minus infinite": (np.array([100.0, 100.0, -np.inf]), "-inf at run 2, which is infinite"),
    "fractional": (np.array([100.5, 100.0, 100.0]), "100.5 at run 0, which is fractional"),
    "2**64": (np.array([100.0, 2.0**64, 100.0]), "1.8446744073709552e\\+19 at run 1, which is 2\\*\\*64 or more"),
    "float32 NaN": (np.array([100, np.nan, 100], dtype=np.float32), "nan at run 1, which is NaN"),
    "int8 negative": (np.array([1, -1, 1], dtype=np.int8), "-1 at run 1, which is negative"),
}


def _build(kind, which, values, clock):
    good = np.full(3, 90, np.uint64)
    if kind == "bench":
        arrays = {"raw": good + 10, "empty": good}
        arrays[which] = values
        return BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                       migrated=np.zeros(3, bool), clock=clock, **arrays)
    arrays = {"long": good + 10, "short": good}
    arrays[which] = values
    return fastcpu.DiffResult.from_arrays(method="gdt", serialize="lfence", k=1, cpu=None,
                                          migrated=np.zeros(3, bool), clock=clock, **arrays)


@pytest.mark.parametrize("case", list(NOT_COUNTS))
@pytest.mark.parametrize("kind,which", [("bench", "raw"), ("bench", "empty"), ("diff", "long"), ("diff", "short")])
def test_the_factories_refuse_what_is_no_count(small, case, kind, which):
    values, says = NOT_COUNTS[case]
    unit = "run" if kind == "bench" else "pair"
    with pytest.raises(ValueError, match=f"^{which} holds {says.replace('run', unit)}: .* leave that {unit} out"):
        _build(kind, which, values, small.clock)


@pytest.mark.parametrize("values", [["1", "2", "3"], [True, False, True], [1 + 0j] * 3, [object()] * 3,
                                    [2**64, 1, 1]], ids=["str", "bool", "complex", "object", "2**64 int"])
def test_the_factories_refuse_counts_that_are_no_numbers(small, values):
    with pytest.raises(TypeError, match="^raw must hold counts .* pass the measurement's counts as integers"):
        _build("bench", "raw", values, small.clock)


@pytest.mark.parametrize("values", [np.array([100, 101, 102]), np.array([100.0, 101.0, 102.0]), [100, 101, 102],
                                    np.array([100, 101, 102], dtype=np.uint32), np.array([0, 2**63 - 1, 7])])
def test_the_factories_take_whole_counts_of_any_numeric_type(small, values):
    for kind, which in (("bench", "raw"), ("diff", "long")):
        r = _build(kind, which, values, small.clock)
        got = r.raw if kind == "bench" else r.long
        assert got.dtype == np.uint64 and got.tolist() == [int(v) for v in values]
    str(_build("bench", "raw", np.array([100, 101, 102]), small.clock))


# -- round trips ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["r.json", "r.json.gz", "r.fastcpu"])
def test_save_then_load_round_trips(small, tmp_path, name):
    path = tmp_path / name
    small.save(path)
    back = fastcpu.load(path)
    assert back == small
    assert back is not small and list(back) == list(small)
    for name_, r in small.items():
        b = back[name_]
        assert b.raw.dtype == np.uint64 and b.migrated.dtype == np.bool_
        np.testing.assert_array_equal(b.raw, r.raw)
        np.testing.assert_array_equal(b.empty, r.empty)
        np.testing.assert_array_equal(b.migrated, r.migrated)
        assert (b.best, b.median, b.runs, b.unroll, b.cpu) == (r.best, r.median, r.runs, r.unroll, r.cpu)
    assert fastcpu.load(str(path)) == small


def _with_own_diff_row(small):
    """`small` with a back-to-back result for gdt whose catalog row is its own
    (words the one-call result's row does not have), so that what loads is
    the DiffResult's row, not one borrowed."""
    from fastcpu.results.values import CatalogRow

    own = CatalogRow("method", "cpu_source", "cpunode", "the back-to-back result's own words")
    assert small["gdt"].catalog_row != own
    d = fastcpu.DiffResult.from_arrays(method="gdt", serialize=small.serialize, k=4, cpu=None,
                                       long=np.arange(100, 160), short=np.arange(50, 110),
                                       migrated=np.zeros(60, bool), clock=small.clock, catalog_row=own)
    return dataclasses.replace(small, back_to_back={"gdt": d}), own


def test_a_diff_results_catalog_row_survives_save_and_load(small, tmp_path):
    res, own = _with_own_diff_row(small)
    assert res.back_to_back["gdt"].catalog_row == own
    res.save(tmp_path / "r.json")
    assert doc_of(tmp_path / "r.json")["back_to_back"][0]["catalog_row"] == own.to_dict()
    back = fastcpu.load(tmp_path / "r.json")
    assert back.back_to_back["gdt"].catalog_row == own and back == res
    borrowed = dataclasses.replace(res.back_to_back["gdt"], catalog_row=small["gdt"].catalog_row)
    assert back != dataclasses.replace(res, back_to_back={"gdt": borrowed})  # the row is compared


def test_a_file_whose_diff_results_have_no_row_borrows_the_one_call_results(small, tmp_path):
    # written before 0.9: back_to_back entries carry no catalog_row
    res, own = _with_own_diff_row(small)
    res.save(tmp_path / "r.json")
    doc = doc_of(tmp_path / "r.json")
    for entry in doc["back_to_back"]:
        del entry["catalog_row"]
    back = fastcpu.load(write_doc(tmp_path / "old.json", doc))
    assert back.back_to_back["gdt"].catalog_row == small["gdt"].catalog_row != own
    assert [d.method for d in back.ways_back_to_back()] == ["gdt"]


def test_a_diff_result_without_a_row_is_no_way(small):
    # a user function's DiffResult has no row: no answer counts it, whatever its name
    res, _ = _with_own_diff_row(small)
    d = dataclasses.replace(res.back_to_back["gdt"], catalog_row=None)
    assert dataclasses.replace(res, back_to_back={"gdt": d}).ways_back_to_back() == []
    with pytest.raises(TypeError, match="catalog_row must be a CatalogRow or None"):
        fastcpu.DiffResult.from_arrays(method="gdt", serialize="lfence", k=2, cpu=None, long=[4], short=[2],
                                       migrated=[False], clock=small.clock, catalog_row={"kind": "method"})


def test_gz_files_are_gzip_and_plain_files_are_readable_json(small, tmp_path):
    small.save(tmp_path / "a.json.gz")
    small.save(tmp_path / "a.json")
    raw = (tmp_path / "a.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw)) == doc_of(tmp_path / "a.json")
    doc = doc_of(tmp_path / "a.json")
    assert (doc["format"], doc["version"]) == ("fastcpu-results", 4)
    assert doc["machine"]["vendor"] == small.machine["vendor"]
    assert doc["clock"]["tsc_step_ticks"] == small.clock.tsc_step_ticks


def test_arrays_with_large_values_survive(small, tmp_path):
    # An interrupt can make a run last more than 2**32 ticks only in theory;
    # the widest encoding must still round-trip exactly, up to what a TSC
    # delta can be (2**53 ticks, 35 days at 3 GHz)
    r = small["gdt"]
    raw = r.raw.copy()
    raw[0] = 2**53 - 12345
    big = BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                   raw=raw, empty=r.empty, migrated=~r.migrated, clock=small.clock)
    res = fastcpu.Results({"gdt": big}, small.machine, small.clock, "lfence", small.date)
    res.save(tmp_path / "big.json")
    back = fastcpu.load(tmp_path / "big.json")
    assert back == res and back["gdt"].raw[0] == 2**53 - 12345
    assert doc_of(tmp_path / "big.json")["results"][0]["raw"]["dtype"] == "<u8"
    # a counter read backwards wraps to near 2**64: no figure holds, and no file is written
    raw[0] = 2**64 - 5
    wrapped = dataclasses.replace(big, raw=raw)
    res = fastcpu.Results({"gdt": wrapped}, small.machine, small.clock, "lfence", small.date)
    with pytest.raises(ValueError, match=r"gdt: raw holds 18446744073709551611 at run 0: counts must be below 2\*\*53"):
        res.save(tmp_path / "wrapped.json")
    assert not (tmp_path / "wrapped.json").exists()


def test_cli_run_then_load_round_trips(tmp_path):
    out = tmp_path / "cli.json"
    # cwd away from the source tree: "-m fastcpu" must find the fastcpu the
    # tests import (installed, or first on PYTHONPATH), not an unbuilt checkout.
    proc = subprocess.run(
        [sys.executable, "-m", "fastcpu", "run", "--runs", "40", "--methods", "gdt,rseq",
         "--out", "cli.json", "--label", "from the shell"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # stderr is piped: no progress line (tests/test_progress.py runs it on a terminal)
    assert "[1/2]" not in proc.stderr and "wrote" in proc.stderr
    assert "BEST" in proc.stdout
    res = fastcpu.load(out)
    assert list(res) == ["gdt", "rseq"] and res.label == "from the shell"
    assert res["gdt"].runs == 40


def test_cli_run_refuses_to_overwrite_before_measuring(tmp_path, capsys):
    from fastcpu.cli import main

    out = tmp_path / "keep.json"
    out.write_text("precious")
    assert main(["run", "--runs", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "exists" in err and "--overwrite" in err and len(err.splitlines()) == 1
    assert out.read_text() == "precious"
    assert main(["run", "--runs", "5", "--methods", "gdt", "--out", str(out), "--overwrite"]) == 0
    assert list(fastcpu.load(out)) == ["gdt"]


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--runs", "5"],  # no --out
        ["run", "--runs", "0", "--out", "x.json"],
        ["run", "--methods", "nope", "--out", "x.json"],
        ["run", "--out", "/nonexistent-dir/x.json"],
    ],
)
def test_cli_run_bad_options_exit_2(args, capsys, tmp_path, monkeypatch):
    from fastcpu.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


# -- atomic, careful writes ----------------------------------------------------

def test_save_leaves_no_temporary_file(small, tmp_path):
    small.save(tmp_path / "r.json")
    small.save(tmp_path / "r.json", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_save_refuses_to_overwrite_unless_asked(small, tmp_path):
    path = tmp_path / "r.json"
    path.write_text("precious")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        small.save(path)
    assert path.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    small.save(path, overwrite=True)
    assert fastcpu.load(path) == small


def test_save_refuses_a_file_created_during_the_write(small, tmp_path, monkeypatch):
    # The no-overwrite check holds at the moment of the rename, not only before.
    path = tmp_path / "r.json"
    real_fsync = os.fsync

    def racing_fsync(fd):
        real_fsync(fd)
        if not path.exists():
            path.write_text("the other writer")

    monkeypatch.setattr(os, "fsync", racing_fsync)
    with pytest.raises(FileExistsError):
        small.save(path)
    assert path.read_text() == "the other writer"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_failed_write_keeps_the_old_file_and_no_temporary(small, tmp_path, monkeypatch, overwrite):
    path = tmp_path / "r.json"
    if overwrite:
        path.write_text("old contents")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        small.save(path, overwrite=overwrite)
    if overwrite:
        assert path.read_text() == "old contents"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    else:
        assert list(tmp_path.iterdir()) == []


def test_saved_files_get_the_usual_permissions(small, tmp_path):
    old = os.umask(0o022)
    try:
        small.save(tmp_path / "r.json")
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


def test_save_rejects_bad_arguments(small, tmp_path):
    with pytest.raises(IsADirectoryError):
        small.save(tmp_path)
    with pytest.raises(TypeError, match="path must be"):
        small.save(3)
    with pytest.raises(TypeError, match="overwrite must be a bool"):
        small.save(tmp_path / "x.json", overwrite="yes")
    with pytest.raises(FileNotFoundError):
        small.save(tmp_path / "no" / "such" / "dir.json")


# -- bad files -----------------------------------------------------------------

def test_result_file_error_is_a_fastcpu_error_and_a_value_error():
    assert issubclass(fastcpu.ResultFileError, fastcpu.Error)
    assert issubclass(fastcpu.ResultFileError, ValueError)


@pytest.mark.parametrize("keep", [0.002, 0.02, 0.2, 0.5, 0.8, 0.99, -2])
def test_truncated_files_are_named_truncated(saved, keep):
    data = saved.read_bytes()
    # a fraction of the file, or all but the last bytes ("}\n")
    saved.write_bytes(data[: int(len(data) * keep) if keep > 0 else keep])
    with pytest.raises(fastcpu.ResultFileError, match="truncated"):
        fastcpu.load(saved)


def test_truncated_gzip_is_named_truncated(small, tmp_path):
    path = tmp_path / "r.json.gz"
    small.save(path)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(fastcpu.ResultFileError, match="truncated gzip"):
        fastcpu.load(path)


def test_empty_file(tmp_path):
    (tmp_path / "e.json").write_bytes(b"")
    with pytest.raises(fastcpu.ResultFileError, match="empty file"):
        fastcpu.load(tmp_path / "e.json")


@pytest.mark.parametrize(
    "content, match",
    [
        (b"hello, world\n", "not a fastcpu result file .not JSON"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not a fastcpu result file"),
        (b"[1, 2, 3]", "not a fastcpu result file .JSON list"),
        (b'{"name": "some other tool", "results": []}', "no 'format' field"),
        (b'{"format": "pyperf", "version": 1}', "format 'pyperf'"),
    ],
)
def test_foreign_files_are_named_foreign(tmp_path, content, match):
    path = tmp_path / "f.json"
    path.write_bytes(content)
    with pytest.raises(fastcpu.ResultFileError, match=match):
        fastcpu.load(path)


def test_newer_version_names_both_versions(saved):
    doc = doc_of(saved)
    doc["version"] = 7
    with pytest.raises(fastcpu.ResultFileError, match="newer fastcpu: format version 7 > supported 4"):
        fastcpu.load(write_doc(saved, doc))


@pytest.mark.parametrize("version", [None, "1", 1.0, True, 0])
def test_bad_versions(saved, version):
    doc = doc_of(saved)
    doc["version"] = version
    with pytest.raises(fastcpu.ResultFileError, match="version"):
        fastcpu.load(write_doc(saved, doc))


def test_array_length_field_disagreeing_with_runs(saved):
    doc = doc_of(saved)
    doc["results"][0]["raw"]["length"] -= 1
    match = "array length mismatch: .*'raw' holds 59 values but runs is 60"
    with pytest.raises(fastcpu.ResultFileError, match=match):
        fastcpu.load(write_doc(saved, doc))


def test_runs_disagreeing_with_the_arrays(saved):
    doc = doc_of(saved)
    doc["results"][1]["runs"] += 1
    with pytest.raises(fastcpu.ResultFileError, match="array length mismatch.*syscall"):
        fastcpu.load(write_doc(saved, doc))


@pytest.mark.parametrize("key", ["raw", "empty", "migrated"])
def test_array_data_shorter_than_its_length(saved, key):
    doc = doc_of(saved)
    spec = doc["results"][0][key]
    data = base64.b64decode(spec["data"])
    spec["data"] = base64.b64encode(data[:-1]).decode()
    with pytest.raises(fastcpu.ResultFileError, match="array length mismatch"):
        fastcpu.load(write_doc(saved, doc))


def test_statistics_that_disagree_with_the_arrays(saved):
    doc = doc_of(saved)
    doc["results"][0]["median_ticks"] += 26
    with pytest.raises(fastcpu.ResultFileError, match="median_ticks .* disagrees with its arrays"):
        fastcpu.load(write_doc(saved, doc))


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.pop("clock"), "missing field 'clock'"),
        (lambda d: d["clock"].pop("tsc_hz"), "missing field clock.'tsc_hz'"),
        (lambda d: d["clock"].update(tsc_hz=-1.0), r"field clock.'tsc_hz' is -1.0, must be a number from 1e\+06"),
        (lambda d: d.update(results={}), "field 'results' is dict, expected a list"),
        (lambda d: d["results"][0].pop("empty"), "missing field .*'empty'"),
        (lambda d: d["results"][0].update(runs="60"), "'runs' is str, expected an integer"),
        (lambda d: d["results"][0].update(runs=True), "'runs' is a bool"),
        (lambda d: d["results"][0].update(unroll=0), "unroll is 0"),
        (lambda d: d["results"][0]["raw"].update(dtype="<f8"), "dtypes <u1"),
        (lambda d: d["results"][0]["raw"].update(data="!!!not base64!!!"), "not valid base64"),
        (lambda d: d["results"][0]["migrated"].update(encoding="base64"), "base64-packbits"),
        (lambda d: d["results"].append(d["results"][0]), "appears twice"),
        (lambda d: d["results"].append(3), r"results\[2\] is int"),
        (lambda d: d["results"][0].update(serialize="cpuid"), "inconsistent contents"),
        (lambda d: d.update(label=3), "'label' is int"),
    ],
)
def test_damaged_fields_are_named(saved, edit, match):
    doc = doc_of(saved)
    edit(doc)
    with pytest.raises(fastcpu.ResultFileError, match=match):
        fastcpu.load(write_doc(saved, doc))


def test_load_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="path must be"):
        fastcpu.load(3)
    with pytest.raises(FileNotFoundError):
        fastcpu.load(tmp_path / "missing.json")


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_save_never_replaces_what_is_not_a_regular_file(tmp_path, kind, overwrite):
    # the atomic rename would put a new file in place of a FIFO or a link
    target = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        (tmp_path / "real.json").write_text("keep me")
        target.symlink_to(tmp_path / "real.json")
    res = fastcpu.measure(5, ["empty"])
    with pytest.raises(ValueError, match="symbolic link|not a regular file"):
        res.save(target, overwrite=overwrite)
    assert target.is_symlink() if kind == "symlink" else stat.S_ISFIFO(os.lstat(target).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_cli_run_refuses_a_fifo_before_measuring(tmp_path, capsys):
    from fastcpu.cli import main

    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    assert main(["run", "--runs", "5", "--methods", "empty", "--out", str(fifo), "--overwrite"]) == 2
    assert "not a regular file" in capsys.readouterr().err


# -- hostile files (issue 10, item 3) ----------------------------------------------
# In a subprocess where the old code hung (a FIFO) or ran out of memory
# (/dev/zero, a gzip bomb): under a time limit and an address-space limit.

def _limited(code, *args, memory_bytes=2 << 30):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    # AddressSanitizer reserves terabytes of address space for its shadow:
    # under it (CI's second pass), only the time limit applies
    sanitized = os.environ.get("FASTCPU_SANITIZED") or fastcpu._core.SANITIZED
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=60, preexec_fn=None if sanitized else limit)


LOAD_AND_COMPARE = r"""
import sys, fastcpu
from fastcpu.cli import main
try:
    fastcpu.load(sys.argv[1])
    print("loaded")
except fastcpu.ResultFileError as exc:
    print("ResultFileError:", exc)
sys.stdout.flush()
sys.exit(main(["compare", sys.argv[1]]))
"""


@pytest.mark.parametrize("kind", ["fifo", "socket", "/dev/zero", "/dev/urandom"])
def test_load_and_compare_refuse_what_is_not_a_regular_file(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "r.json"
        os.mkfifo(path)  # no writer: opening it to read would wait forever
        what = "a FIFO"
    elif kind == "socket":
        import socket

        path = tmp_path / "r.json"
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))  # opening it fails with ENXIO: its type is asked first
        what = "a socket"
    else:
        path = kind
        what = "a character device"
    p = _limited(LOAD_AND_COMPARE, str(path))
    assert p.returncode == 2, p.stderr[-2000:]
    assert p.stdout == f"ResultFileError: {path}: {what}, not a result file: give the path of a " \
                       "file written by Results.save()\n"
    assert p.stderr.splitlines() == [f"fastcpu: error: {path}: {what}, not a result file: give the "
                                     "path of a file written by Results.save()"]


def test_a_gzip_bomb_is_refused_while_streaming(tmp_path):
    path = tmp_path / "bomb.json.gz"
    # 1 GiB of text in about 1 MB: 1024 gzip members of 1 MiB each (a gzip
    # file may hold several; they decompress to their concatenation)
    member = gzip.compress(b"A" * (1 << 20), compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"format": "fastcpu-results", "version": 1, "label": "'))
        f.write(member * 1024)
    compressed = path.stat().st_size
    limit = _json_document.gzip_limit_bytes(compressed)
    assert limit < 200 << 20
    # 512 MiB of address space: gzip.decompress() of the whole would not fit
    p = _limited(LOAD_AND_COMPARE, str(path), memory_bytes=512 << 20)
    assert p.returncode == 2, p.stderr[-2000:]
    # the limit holds for every prefix: refused a few members in
    refused = re.match(rf"ResultFileError: {re.escape(str(path))}: gzip data expands to more than (\d+) "
                       rf"bytes from its first (\d+) of {compressed} compressed bytes: more than a result "
                       "file holds", p.stdout)
    assert refused, p.stdout
    assert int(refused[1]) == _json_document.gzip_limit_bytes(int(refused[2])) < limit
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr


def test_gzip_limit_admits_real_result_files(small, tmp_path):
    # a real file compresses far less than the limit allows
    path = tmp_path / "r.json.gz"
    small.save(path)
    text = gzip.decompress(path.read_bytes())
    assert len(text) < _json_document.gzip_limit_bytes(path.stat().st_size) // 4
    assert fastcpu.load(path) == small


@pytest.mark.parametrize("text, match", [
    ("[" * 200_000, "not a fastcpu result file \\(JSON nested too deeply to read\\)"),
    ('{"format": "fastcpu-results", "version": 1, "x": ' + "[" * 200_000,
     "not a fastcpu result file \\(JSON nested too deeply to read\\)"),
    ('{"format": "fastcpu-results", "version": 1, "x": ' + "7" * 5000 + "}",
     "not a fastcpu result file \\(a JSON number too long to read: "),
], ids=["nested", "nested inside ours", "5000 digits"])
def test_deep_nesting_and_huge_numbers_are_result_file_errors(tmp_path, capsys, text, match):
    from fastcpu.cli import main

    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(fastcpu.ResultFileError, match=match):
        fastcpu.load(path)
    for argv in (["compare", str(path)], ["plot", str(path), "--out", str(tmp_path / "x.png")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err


def _flipped(text, i, bit):
    """`text` with bit `bit` of character `i` flipped, or None when that is
    no longer a base64 character."""
    c = chr(ord(text[i]) ^ (1 << bit))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return text[:i] + c + text[i + 1:] if c in alphabet else None


def test_every_single_bit_flip_in_array_data_is_caught_or_harmless(tmp_path):
    res = fastcpu.measure(24, ["gdt"])
    path = tmp_path / "r.json"
    res.save(path)
    doc = doc_of(path)
    caught = 0
    for key in ("raw", "empty", "migrated"):
        data = doc["results"][0][key]["data"]
        for i in range(len(data.rstrip("="))):
            for bit in range(7):
                flipped = _flipped(data, i, bit)
                if flipped is None:
                    continue
                damaged = json.loads(json.dumps(doc))
                damaged["results"][0][key]["data"] = flipped
                write_doc(path, damaged)
                try:
                    got = fastcpu.load(path)
                except fastcpu.ResultFileError as exc:
                    assert "fails its CRC-32 check" in str(exc) or "base64" in str(exc), exc
                    caught += 1
                    continue
                # only a flip in the unused low bits of the last character loads
                assert got == res, (key, i, bit)
    assert caught > 100


def test_files_without_checksums_still_load(small, saved):
    doc = doc_of(saved)
    for entry in doc["results"]:
        for key in ("raw", "empty", "migrated"):
            assert isinstance(entry[key].pop("crc32"), int)
    assert fastcpu.load(write_doc(saved, doc)) == small
    committed = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                             "amd-epyc-kvm-guest.json")
    if not os.path.exists(committed):
        pytest.skip("the data/ directory is not beside tests/")
    with open(committed) as f:
        assert '"crc32"' not in f.read()  # format version 1 as first written
    assert len(fastcpu.load(committed)) > 10


def test_a_bad_checksum_field_is_named(saved):
    doc = doc_of(saved)
    doc["results"][0]["raw"]["crc32"] = "abc"
    with pytest.raises(fastcpu.ResultFileError, match="field results\\[0\\] \\(gdt\\) 'raw'.'crc32' is str"):
        fastcpu.load(write_doc(saved, doc))


KILLED_DURING_SAVE = r"""
import os, sys, time
import fastcpu
res = fastcpu.measure(20, ["gdt"])
def stuck(fd):
    print("writing", flush=True)
    time.sleep(120)
os.fsync = stuck
res.save(sys.argv[1], overwrite=True)
"""


def test_a_save_killed_midway_leaves_a_named_file_that_the_next_save_removes(small, tmp_path):
    import signal

    path = tmp_path / "r.json"
    small.save(path)
    p = subprocess.Popen([sys.executable, "-c", KILLED_DURING_SAVE, str(path)], stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline() == "writing\n"
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait(timeout=60)
    leftovers = sorted(n.name for n in tmp_path.iterdir() if n.name != "r.json")
    assert len(leftovers) == 1
    assert leftovers[0].startswith(f".r.json.fastcpu-save-{p.pid}-") and leftovers[0].endswith(".tmp")
    # another writer's file, still running (our parent), and a stranger's name stay
    alive = tmp_path / f".r.json.fastcpu-save-{os.getppid()}-abcdefgh.tmp"
    other = tmp_path / ".r.json.abcdefgh.tmp"
    alive.write_text("x")
    other.write_text("x")
    small.save(path, overwrite=True)
    assert sorted(n.name for n in tmp_path.iterdir()) == sorted(["r.json", alive.name, other.name])
    assert fastcpu.load(path) == small


def test_the_machine_flags_are_every_fact_the_core_decides_from():
    # no hand-written list: each yes-or-no feature of the C core is recorded
    from fastcpu import _core
    from fastcpu.instrument.machine import machine_info

    flags = machine_info()["flags"]
    facts = {k for k, v in _core.features().items() if type(v) is bool} - {"test_hooks"}
    assert facts <= set(flags) and {"constant_tsc", "nonstop_tsc"} <= set(flags)
    assert all(type(v) is bool for v in flags.values())


def test_read_only_arrays_save_and_load_back(small, saved):
    # a result's arrays are read-only (issue 40 item 6); a file round-trips them and every figure
    back = fastcpu.load(saved)
    assert back == small
    for name, r in small.items():
        got = back[name]
        assert type(got) is BenchResult and not got.raw.flags.writeable and not r.raw.flags.writeable
        assert np.array_equal(got.raw, r.raw) and np.array_equal(got.empty, r.empty)
        assert (got.best, got.median, got.estimate, got.estimate_ci95) == (r.best, r.median, r.estimate,
                                                                             r.estimate_ci95)
