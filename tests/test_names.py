"""One name per idea: the counter a result was read with is `counter`, a field
named tsc_hz holds TSC Hz, the fenced paired mean is `paired_mean`
everywhere; the old names are gone since 0.9.0 (tests/test_deprecated.py)."""

import json
import warnings

import numpy as np
import pytest

import fastcpu
from fastcpu import noise
from fastcpu.analysis.compare import COLUMNS

CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=26, cycles_per_tick=1.5)


def arrays(n=400, seed=0):
    rng = np.random.default_rng(seed)
    empty = rng.integers(100, 104, n).astype(np.uint64)
    return empty + rng.integers(30, 34, n).astype(np.uint64), empty, np.zeros(n, bool)


def pmu_result(counter="pmu"):
    raw, empty, migrated = arrays()
    return fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                           empty=empty, migrated=migrated, clock=CLOCK, counter=counter)


def test_a_pmu_result_keeps_the_tsc_facts_and_converts_with_the_core_clock():
    r = pmu_result()
    assert r.counter == "pmu"
    assert (r.tsc_hz, r.tsc_step_ticks, r.cycles_per_tick) == (2.6e9, 26, 1.5)  # each what it says
    assert r.units.hz == pytest.approx(2.6e9 * 1.5) and r.units.step == 1 and r.step == 1
    assert r.best_ns == pytest.approx(r.best * 1e9 / (2.6e9 * 1.5))
    assert r.best_core_cycles == r.best  # a count is a core cycle
    # the estimate works at the counter's step (1), not the TSC's (26)
    assert r.estimate == pytest.approx(fastcpu.results.estimate.recommend(r.raw, r.empty, 1).ticks)


def test_a_pmu_result_built_the_old_way_converts_as_before():
    """Before, a PMU result carried the core clock's Hz as tsc_hz, 1 cycle per tick, step 1."""
    new = pmu_result()
    old = fastcpu.BenchResult(**{**{f: getattr(new, f) for f in ("method", "runs", "serialize", "unroll",
                                                                  "cpu", "raw", "empty", "migrated",
                                                                  "best", "median")},
                                 "tsc_hz": CLOCK.core_hz, "cycles_per_tick": 1.0, "tsc_step_ticks": 1,
                                 "counter": "pmu"})
    assert old.counter == "pmu"
    assert (old.best_ns, old.estimate, old.estimate_core_cycles) == pytest.approx(
        (new.best_ns, new.estimate, new.estimate_core_cycles))


def test_clock_is_no_name_of_the_counter():
    r = pmu_result("pmu_user")
    assert r.counter == "pmu_user"
    with pytest.raises(AttributeError):
        r.clock  # noqa: B018
    with pytest.raises(TypeError, match="clock"):
        fastcpu.BenchResult(**{**_fields(r), "clock": "tsc"})
    with pytest.raises(TypeError, match="clock"):
        fastcpu.bench("empty", 5, clock="tsc")
    assert fastcpu.limits.COUNTERS == ("tsc", "pmu") and not hasattr(fastcpu.limits, "CLOCKS")


def _fields(r):
    import dataclasses

    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


def test_bench_says_which_counter_counted():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        r = fastcpu.bench("empty", 20)
        d = fastcpu.bench_diff("empty", 20, k=2)
    assert r.counter == d.counter == "tsc"
    clk = fastcpu.clock()
    # cycles_per_tick is measured around the runs (bracketed), the rest is the clock's
    assert r.tsc_hz == clk.tsc_hz and (r.units.hz, r.units.step) == (clk.tsc_hz, clk.tsc_step_ticks)


def test_files_write_the_counter_and_read_its_old_name(tmp_path):
    r = pmu_result()
    res = fastcpu.Results({"gdt": r}, {}, CLOCK, "lfence", "2025-01-01T00:00:00Z")
    doc = res.to_document()
    assert doc["results"][0]["counter"] == "pmu"
    again = fastcpu.Results.from_document(doc)
    assert again == res and again["gdt"].counter == "pmu"
    path = tmp_path / "r.json"
    res.save(path)
    assert fastcpu.load(path)["gdt"].best_ns == r.best_ns
    old = json.loads(json.dumps(doc))
    old["results"][0]["clock"] = old["results"][0].pop("counter")
    assert fastcpu.Results.from_document(old)["gdt"].counter == "pmu"
    del old["results"][0]["clock"]  # before either: the TSC
    assert fastcpu.Results.from_document(old)["gdt"].counter == "tsc"
    old["results"][0]["counter"] = "hpet"
    with pytest.raises(fastcpu.ResultFileError, match="counter is 'hpet'"):
        fastcpu.Results.from_document(old)


def test_the_paired_mean_has_one_name():
    r = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=1)
    assert r.estimator == "paired_mean"
    assert noise.paired_mean_ticks(r) == r.estimate
    assert "paired_mean" in noise.RECOVERY_ESTIMATORS and "paired_mean" in fastcpu.results.estimate.ESTIMATORS
    table = fastcpu.compare(fastcpu.Results({"m": r.__class__(**{**_fields(r), "method": "m"})}, {},
                                            fastcpu.Clock(1e9, r.tsc_step_ticks, 1.0), "model", ""),
                            dataframe=False)
    assert table[0]["paired_mean_ticks"] == pytest.approx(r.estimate)
    assert "paired_mean_ns" in COLUMNS and "mean_ns" not in COLUMNS


def test_the_old_names_of_the_paired_mean_are_gone():
    r = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=1)
    assert not hasattr(noise, "clean_mean_ticks") and not hasattr(noise, "ESTIMATORS")
    res = fastcpu.Results({"model": r}, {}, fastcpu.Clock(1e9, r.tsc_step_ticks, 1.0), "model", "")
    table = fastcpu.compare(res, dataframe=False)
    with pytest.raises(KeyError, match="no column 'mean_ns'"):
        table["mean_ns"]  # noqa: B018
    with pytest.raises(KeyError):
        table[0]["mean_ci_low_ticks"]  # noqa: B018
    assert table[0]["paired_mean_ci_low_ticks"] == table["paired_mean_ci_low_ticks"][0]


def test_the_codec_knows_nothing_of_results(tmp_path):
    from fastcpu.files import write as _json_document

    doc = {"format": _json_document.FORMAT_NAME, "version": _json_document.FORMAT_VERSION, "anything": [1, 2]}
    _json_document.write_document(doc, tmp_path / "d.json.gz")
    assert _json_document.read_document(tmp_path / "d.json.gz")[0] == doc


def test_version_has_one_home():
    from fastcpu._base import __version__

    assert fastcpu.__version__ == __version__


# -- the public surface (issue 21, item 6) -------------------------------------------------


def test_the_top_holds_what_users_call_and_the_rest_lives_in_types_and_limits():
    import fastcpu.limits
    import fastcpu.types

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no name of __all__ is deprecated
        for name in fastcpu.__all__:
            getattr(fastcpu, name)
    assert len(fastcpu.__all__) <= 30
    # the names that were at the top before 0.6.0 (deprecated until 0.9.0): gone from the top
    moved = {name: ("types", name) for name in fastcpu.types.__all__ if name not in (
        "ChainCheck", "ChainInfo", "CpuVerdict", "ClockMotion")}
    moved.update({name: ("limits", name) for name in fastcpu.limits.__all__ if name != "TIMEOUT_MAX_S"})
    moved.update(CalibrationInfo=("types", "ChainInfo"), calibration_methods=(None, "chain_methods"),
                 CLOCKS=("limits", "COUNTERS"))
    assert {"Stability", "RUNS_MAX", "CalibrationInfo", "calibration_methods"} <= set(moved)
    for old, (where, new) in moved.items():
        assert old not in fastcpu.__all__
        with pytest.raises(AttributeError, match=f"no attribute '{old}'"):
            getattr(fastcpu, old)
        assert getattr(getattr(fastcpu, where) if where else fastcpu, new) is not None
    for new in ("ChainInfo", "ChainCheck", "CpuVerdict"):  # never at the top: no alias
        with pytest.raises(AttributeError):
            getattr(fastcpu, new)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        fastcpu.nonesuch  # noqa: B018


def test_from_import_of_a_moved_name_fails():
    with pytest.raises(ImportError, match="Stability"):
        from fastcpu import Stability  # noqa: F401
    assert fastcpu.types.Stability is fastcpu.results.stability.Stability
