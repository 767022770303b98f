"""Every deprecated name goes through one table (fastcpu._deprecated): each
still answers, with a DeprecationWarning at the user's line that names what
replaces it and the release that removes it."""

import argparse
import ast
import dataclasses
import importlib
import warnings

import numpy as np
import pytest

import fastcpu
from fastcpu import noise
from fastcpu import _deprecated
from fastcpu._deprecated import DEPRECATED
from fastcpu._base import __version__

CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=26, cycles_per_tick=1.5)


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
    return fastcpu.DiffResult.from_arrays(method="gdt", serialize="lfence", k=1, cpu=None, long=long,
                                          short=short, migrated=migrated, clock=CLOCK, counter="pmu")


def _fields(r):
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


def _table():
    r = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=1)
    return fastcpu.compare(fastcpu.Results({"model": r}, {}, fastcpu.Clock(1e9, r.tsc_step_ticks, 1.0), "model", ""),
                           dataframe=False)


def _module_attribute(old, new):
    """fastcpu.X -> (the old name's value, the new name's)."""
    def old_value():
        module, _, name = old.rpartition(".")
        return getattr(importlib.import_module(module), name)

    module, _, name = new.rpartition(".")
    return old_value, lambda: getattr(importlib.import_module(module), name)


def _triggers():
    """old name -> (use it, today's value): one for every row of the table."""
    out = {}
    for row in DEPRECATED.values():
        if row.old.startswith("fastcpu."):
            out[row.old] = _module_attribute(row.old, row.new)
    b, d = _bench_result(), _diff_result()
    out["BenchResult.clock"] = (lambda: b.clock, lambda: b.counter)
    out["DiffResult.clock"] = (lambda: d.clock, lambda: d.counter)
    old_b = {**_fields(b), "counter": "tsc"}
    out["BenchResult(clock=)"] = (lambda: fastcpu.BenchResult(**old_b, clock="pmu").counter, lambda: "pmu")
    old_d = {**_fields(d), "counter": "tsc"}
    out["DiffResult(clock=)"] = (lambda: fastcpu.DiffResult(**old_d, clock="pmu").counter, lambda: "pmu")
    # the measuring keywords: the instrument's (skipped where no core is built, below)
    out["bench(clock=)"] = (lambda: fastcpu.bench("empty", 5, clock="tsc").counter, lambda: "tsc")
    out["bench_diff(clock=)"] = (lambda: fastcpu.bench_diff("empty", 5, k=2, clock="tsc").counter, lambda: "tsc")
    table = _table()
    for old, new in _deprecated.renamed_keys(_deprecated.COLUMN).items():
        old_row = f"{_deprecated.COLUMN} {old!r}"
        if old in table.columns:  # a column the table still holds (tsc_granularity_ticks, for its CSV)
            out[old_row] = None
            continue
        out[old_row] = (lambda old=old: (table[0][old], table[old]), lambda new=new: (table[0][new], table[new]))
    for old, new in _deprecated.renamed_keys(_deprecated.REGIME).items():
        out[f"{_deprecated.REGIME} {old!r}"] = (lambda old=old: noise.REGIMES[old], lambda new=new: noise.REGIMES[new])
    result = noise.REGIMES["fine counter"].simulate(5.0, 300, seed=2)
    for old, new in _deprecated.renamed_keys(_deprecated.ESTIMATE).items():
        out[f"{_deprecated.ESTIMATE} {old!r}"] = (lambda old=old: noise.estimates(result)[old],
                                                  lambda new=new: noise.estimates(result)[new])
    out["--clock"] = None  # the CLI's: said on stderr (test_the_cli_says_clock_is_deprecated)
    return out


def test_every_deprecated_name_has_a_use_here():
    assert set(_triggers()) == set(DEPRECATED)


ROWS = sorted(DEPRECATED)


@pytest.mark.parametrize("old", ROWS)
def test_each_old_name_still_answers_with_a_warning_naming_its_removal(old):
    row = DEPRECATED[old]
    trigger = _triggers()[old]
    if trigger is None:
        pytest.skip(f"{old} is not answered through Python's warnings: tested on its own")
    if "clock=)" in old and old.startswith("bench") and fastcpu.instrument.CORE_MISSING is not None:
        pytest.skip(f"no C core here ({fastcpu.instrument.CORE_MISSING}): {old} measures")
    use, today = trigger
    with pytest.warns(DeprecationWarning) as caught:
        value = use()
    ours = [w for w in caught if issubclass(w.category, DeprecationWarning) and str(w.message) == row.message]
    assert ours, [str(w.message) for w in caught]
    # at the user's line (this file), not inside fastcpu
    assert ours[0].filename == __file__, (ours[0].filename, ours[0].lineno)
    assert f"will be removed in fastcpu {row.removed_in}" in row.message and row.new in row.message
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # today's name never warns
        expected = today()
    if isinstance(value, np.ndarray) or isinstance(expected, tuple):
        assert repr(value) == repr(expected)
    else:
        assert value == expected or value is expected


def _version(v):
    return tuple(int(p) for p in v.split("."))


def test_every_removal_is_still_to_come_and_named_consistently():
    """From the release that removes them, this fails: delete the rows and
    the code that answers them."""
    for row in DEPRECATED.values():
        assert _version(row.since) <= _version(__version__) < _version(row.removed_in), row
        assert row.removed_in == _deprecated.REMOVED_IN
        assert row.message == (f"{row.old} is deprecated since fastcpu {row.since} and will be removed in "
                               f"fastcpu {row.removed_in}: use {row.new}")


def test_the_old_csv_columns_are_written_until_their_removal():
    from fastcpu.analysis.compare import CSV_COLUMNS, DEPRECATED_CSV_COLUMNS

    assert DEPRECATED_CSV_COLUMNS == tuple(old for old, _ in _deprecated.CSV_COLUMNS)
    assert CSV_COLUMNS[-len(DEPRECATED_CSV_COLUMNS):] == DEPRECATED_CSV_COLUMNS
    row = _table().to_csv().splitlines()
    header = row[0].split(",")
    assert header[-len(DEPRECATED_CSV_COLUMNS):] == list(DEPRECATED_CSV_COLUMNS)
    for _, new in _deprecated.CSV_COLUMNS:  # what holds each figure now is a column of today's
        for name in new.split(" and "):
            assert name in CSV_COLUMNS[:-len(DEPRECATED_CSV_COLUMNS)], name


def test_the_cli_says_clock_is_deprecated(capsys):
    from fastcpu.cli import check_counter_options

    assert check_counter_options(argparse.Namespace(old_clock="pmu", counter="tsc", serialize="lfence")) == "pmu"
    assert capsys.readouterr().err == f"fastcpu: {DEPRECATED['--clock'].message}\n"
    assert check_counter_options(argparse.Namespace(old_clock=None, counter="pmu", serialize="lfence")) == "pmu"
    assert capsys.readouterr().err == ""


def test_no_other_place_words_its_own_deprecation():
    """One mechanism: no module but _deprecated names DeprecationWarning in
    its code (docstrings may speak of it)."""
    from pathlib import Path

    package = Path(fastcpu.__file__).parent
    for path in package.glob("*.py"):
        if path.name != "_deprecated.py":
            names = {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
            assert "DeprecationWarning" not in names, path.name


def test_replacing_a_field_uses_no_old_name():
    """dataclasses.replace() reads every InitVar with a default (clock) to pass
    it on: that is no use of the old name, and warns of nothing."""
    for r in (_bench_result(), _diff_result()):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            again = dataclasses.replace(r, method="other")
        assert (again.method, again.counter) == ("other", "pmu")
    with pytest.warns(DeprecationWarning, match=r"BenchResult\.clock is deprecated"):
        assert _bench_result().clock == "pmu"  # read by a user, it still warns


def test_names_never_at_the_top_have_no_alias():
    for name in ("ChainInfo", "ChainCheck", "CpuVerdict", "ClockMotion", "TIMEOUT_MAX_S", "nonesuch"):
        with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
            getattr(fastcpu, name)
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        fastcpu.limits.nonesuch  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        fastcpu.noise.nonesuch  # noqa: B018
