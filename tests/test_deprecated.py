"""Deprecations: the names fastcpu 0.8 deprecated are gone in 0.9.0, each
answering as any unknown name does (AttributeError, TypeError, KeyError, a
usage error), and from 0.9 on one function, ``fastcpu._base.deprecated``,
words every deprecation with the release that removes it. Result files
written by an old fastcpu are no deprecation: they load for good, silently."""

import ast
import dataclasses
import importlib
import linecache
import warnings
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu import noise
from fastcpu._base import deprecated
from fastcpu.cli import main

CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=26, cycles_per_tick=1.5)
DATA = Path(__file__).resolve().parent.parent / "data"

# The 45 names fastcpu 0.8's table (fastcpu/_deprecated.py) deprecated,
# removed in 0.9.0: (old, what replaces it, how the old one is used here).
# CHANGELOG.md's "0.9.0 / Removed" lists the same names.
_TYPES = ("ABComparison", "ABRow", "Agreement", "AgreementTable", "CodeBlock", "ComparisonTable", "CounterUnits",
          "CpuReading", "MethodCode", "PathCheck", "Reference", "Rulers", "SeedRow", "SeedTable", "SelfTest",
          "Stability")
_LIMITS = ("COUNTERS", "RUNS_MAX", "SERIALIZE_MODES", "UNROLL_MAX")
_UNITS = ("ticks", "ns", "core_cycles")
REMOVED = (
    *((f"fastcpu.{n}", f"fastcpu.types.{n}", "attribute") for n in _TYPES),
    *((f"fastcpu.{n}", f"fastcpu.limits.{n}", "attribute") for n in _LIMITS),
    ("fastcpu.CLOCKS", "fastcpu.limits.COUNTERS", "attribute"),
    ("fastcpu.CalibrationInfo", "fastcpu.types.ChainInfo", "attribute"),
    ("fastcpu.calibration_methods", "fastcpu.chain_methods", "attribute"),
    ("fastcpu.limits.CLOCKS", "fastcpu.limits.COUNTERS", "attribute"),
    ("fastcpu.noise.clean_mean_ticks", "fastcpu.noise.paired_mean_ticks", "attribute"),
    ("fastcpu.noise.ESTIMATORS", "fastcpu.noise.RECOVERY_ESTIMATORS", "attribute"),
    *((f"{call}(clock=)", f"{call}(counter=)", "keyword") for call in ("bench", "bench_diff", "BenchResult",
                                                                       "DiffResult")),
    ("BenchResult.clock", "BenchResult.counter", "property"),
    ("DiffResult.clock", "DiffResult.counter", "property"),
    ("--clock", "--counter", "option"),
    *((f"{old}_{unit}", f"paired_{old}_{unit}", "column") for unit in _UNITS
      for old in ("mean", "mean_ci_low", "mean_ci_high")),
    ("tsc_granularity_ticks", "tsc_step_ticks", "column"),
    ("clean_mean", "paired_mean", "estimate"),
    ("10 ns steps (this guest)", "10 ns steps (Zen 4 guest)", "regime"),
)

#: The columns the CSV wrote after today's until 0.9.0, under 0.6's names.
OLD_CSV_COLUMNS = ("tsc_granularity_ticks", "migrated_runs",
                   *(f"{stat}_ci95_{unit}" for stat in ("estimate", "paired_mean") for unit in _UNITS))


def test_the_table_holds_the_45_names_once():
    assert len(REMOVED) == 45 and len({old for old, _, _ in REMOVED}) == 45


def _arrays(n=300, seed=0):
    rng = np.random.default_rng(seed)
    empty = rng.integers(100, 104, n).astype(np.uint64)
    return empty + rng.integers(30, 34, n).astype(np.uint64), empty, np.zeros(n, bool)


def _bench_result():
    raw, empty, migrated = _arrays()
    return fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                           empty=empty, migrated=migrated, clock=CLOCK, counter="pmu")


def _diff_result():
    long, short, migrated = _arrays(seed=1)
    return fastcpu.DiffResult.from_arrays(method="gdt", serialize="lfence", k=2, cpu=None, long=long,
                                          short=short, migrated=migrated, clock=CLOCK, counter="pmu")


def _fields(r):
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


def _table():
    r = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=1)
    return fastcpu.compare(fastcpu.Results({"model": r}, {}, fastcpu.Clock(1e9, r.tsc_step_ticks, 1.0), "model", ""),
                           dataframe=False)


def _value(dotted):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _check_gone(old, new, how, capsys):
    """`old` answers as an unknown name does, and `new` answers, without a warning."""
    if how == "attribute":
        with pytest.raises(AttributeError, match=f"no attribute '{old.rpartition('.')[2]}'"):
            _value(old)
        assert _value(new) is not None
    elif how == "keyword":
        call = old.partition("(")[0]
        if call == "BenchResult":
            b = _bench_result()
            with pytest.raises(TypeError, match="clock"):
                fastcpu.BenchResult(**_fields(b), clock="pmu")
            assert fastcpu.BenchResult(**_fields(b)).counter == "pmu"
        elif call == "DiffResult":
            d = _diff_result()
            with pytest.raises(TypeError, match="clock"):
                fastcpu.DiffResult(**_fields(d), clock="pmu")
            assert fastcpu.DiffResult(**_fields(d)).counter == "pmu"
        else:  # no parameter of that name, read from the source (no core is needed to read it) ...
            source = Path(fastcpu.__file__).parent / "instrument" / "timing.py"
            (function,) = [f for f in ast.walk(ast.parse(source.read_text()))
                           if isinstance(f, ast.FunctionDef) and f.name == call]
            params = {a.arg for a in function.args.args + function.args.kwonlyargs}
            assert "clock" not in params and "counter" in params
            if fastcpu.instrument.CORE_MISSING is None:  # ... and bound before anything is measured
                with pytest.raises(TypeError, match="clock"):
                    getattr(fastcpu, call)("empty", 5, clock="tsc")
    elif how == "property":
        r = _bench_result() if old.startswith("BenchResult") else _diff_result()
        with pytest.raises(AttributeError, match="'clock'"):
            r.clock  # noqa: B018
        assert r.counter == "pmu"
    elif how == "option":
        assert main(["table", old, "tsc"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("fastcpu: error:") and "--clock" in err and "deprecated" not in err
    elif how == "column":
        table = _table()
        assert old not in table.columns and new in table.columns
        with pytest.raises(KeyError):
            table[old]  # noqa: B018
        with pytest.raises(KeyError):
            table[0][old]  # noqa: B018
        assert table[0][new] == table[new][0]
        assert old not in table.to_csv().splitlines()[0].split(",")
    elif how == "estimate":
        result = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=2)
        got = noise.estimates(result)
        assert old not in got and new in got and got.get(old) is None
        with pytest.raises(KeyError):
            got[old]  # noqa: B018
        assert old not in noise.recovery(noise.REGIMES["fine counter"], [5.0], 50, unroll=2)[0]
    elif how == "regime":
        assert old not in noise.REGIMES and new in noise.REGIMES
        with pytest.raises(KeyError):
            noise.REGIMES[old]  # noqa: B018
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(("old", "new", "how"), REMOVED, ids=[old for old, _, _ in REMOVED])
def test_each_removed_name_answers_as_an_unknown_one(old, new, how, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no old name is left that warns
        _check_gone(old, new, how, capsys)


def test_the_csv_writes_no_old_column():
    from fastcpu import export
    from fastcpu.analysis.compare import COLUMNS, CSV_COLUMNS

    assert CSV_COLUMNS == COLUMNS
    assert not set(OLD_CSV_COLUMNS) & set(CSV_COLUMNS)
    assert _table().to_csv().splitlines()[0] == ",".join(COLUMNS)
    r = _bench_result()
    results = fastcpu.Results({"gdt": r}, {}, CLOCK, "lfence", "")
    entry = export.to_gbench(results)["benchmarks"][0]
    assert not {"ci95_ns", "ci95_ticks", "ci95_core_cycles"} & set(entry)


def test_a_former_method_name_given_by_a_user_is_unknown():
    from fastcpu.results.values import recorded_row

    assert recorded_row("getcpu_sidt_fp", "0.2.0") is None
    assert recorded_row("getcpu_sidt_norz_fp", "0.2.0") is not None
    if fastcpu.instrument.CORE_MISSING is None:
        with pytest.raises(ValueError, match="unknown method 'getcpu_sidt_fp'.*'getcpu_sidt_norz_fp'"):
            fastcpu.bench("getcpu_sidt_fp", 5)


# -- the one mechanism of every future deprecation -------------------------------------

def _old_api():
    deprecated("fastcpu.old_name", "fastcpu.new_name", "0.9.0", "0.11.0")
    return 1


def test_a_deprecation_warns_at_the_users_line_naming_its_removal_release():
    with pytest.warns(DeprecationWarning) as caught:
        _old_api()
    assert [str(w.message) for w in caught] == [
        "fastcpu.old_name is deprecated since fastcpu 0.9.0 and goes in fastcpu 0.11.0: use fastcpu.new_name"]
    # at the line that used the old name, not inside the function that answers it
    assert caught[0].filename == __file__
    assert linecache.getline(__file__, caught[0].lineno).strip() == "_old_api()"


def test_a_deprecation_needs_both_releases():
    with pytest.raises(ValueError, match="X.Y.Z"):
        deprecated("a", "b", "0.9", "0.11.0")
    with pytest.raises(ValueError, match="X.Y.Z"):
        deprecated("a", "b", "0.9.0", None)


def test_no_other_place_words_its_own_deprecation():
    """One mechanism: no module but _base names DeprecationWarning in its
    code (docstrings may speak of it)."""
    package = Path(fastcpu.__file__).parent
    for path in package.rglob("*.py"):
        if path.name != "_base.py" or path.parent != package:
            names = {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
            assert "DeprecationWarning" not in names, path
    assert not (package / "_deprecated.py").exists()


# -- files are no deprecation ----------------------------------------------------------

@pytest.mark.parametrize("path", sorted(DATA.glob("*.json*")), ids=lambda p: p.name)
def test_every_committed_result_file_loads_without_a_warning(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(fastcpu.load(path)) > 0


def test_an_old_files_method_names_load_under_todays_name():
    # written before getcpu_sidt_fp was split into the four red zone x frame
    # pointer corners: the file's name is read as today's, and only there
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = fastcpu.load(DATA / "amd-epyc-kvm-guest.json")
    assert "getcpu_sidt_norz_fp" in old.results and "getcpu_sidt_fp" not in old.results
    with pytest.raises(KeyError, match="'getcpu_sidt_fp' was not measured here"):
        old["getcpu_sidt_fp"]  # noqa: B018


def test_names_never_at_the_top_have_no_alias():
    for name in ("ChainInfo", "ChainCheck", "CpuVerdict", "ClockMotion", "TIMEOUT_MAX_S", "nonesuch"):
        with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
            getattr(fastcpu, name)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        fastcpu.limits.nonesuch  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        fastcpu.noise.nonesuch  # noqa: B018
