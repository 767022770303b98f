"""Every statistic is declared once (fastcpu/results/statistics.py) and every
renderer loops over the declaration (issue 21, item 5)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu import export
from fastcpu.results import statistics as _statistics
from fastcpu._args import UNITS
from fastcpu.analysis.compare import COLUMNS
from fastcpu.results.display import format_table

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
PACKAGE = Path(fastcpu.__file__).resolve().parent


@pytest.fixture(scope="module")
def zen3() -> fastcpu.Results:
    return fastcpu.load(DATA / "amd-epyc-family25-model1-kvm-guest.json")


def test_each_statistic_is_converted_with_the_results_own_clock(zen3):
    for r in zen3.values():
        for s in _statistics.STATISTICS:
            ticks = s.counts(r)
            assert s.value(r, "ticks") == ticks
            assert s.value(r, "ns") == pytest.approx(ticks * 1e9 / r.tsc_hz)
            assert s.value(r, "core_cycles") == pytest.approx(ticks * r.cycles_per_tick)
            assert getattr(r, f"{s.name}_ns") == s.value(r, "ns")
            if s.has_interval:
                half = s.half_width(r, "ticks")
                assert half > 0
                # a wider confidence, a wider interval; core cycles carry the clock's uncertainty
                assert s.half_width(r, "ticks", 0.99) > half
                assert s.half_width(r, "core_cycles") == pytest.approx(
                    half * r.cycles_per_tick + abs(ticks) * r.cycles_per_tick_ci95)
            else:
                with pytest.raises(AttributeError):
                    getattr(r, f"{s.name}_ci95_ns")


def test_the_table_shows_no_negative_cost(zen3):
    # a body whose quickest run beat the empty sequence's (a cost below what the harness resolves)
    empty = np.full(200, 100) + np.arange(200) % 5
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                        raw=empty - 1, empty=empty, migrated=np.zeros(200, bool),
                                        clock=zen3.clock)
    assert r.best < 0 and r.median < 0
    row = format_table([r]).splitlines()[-1]
    assert row.count("<= 0") == 6 and not re.search(r"(?<![\w.])-\d", row), row


def test_every_renderer_shows_what_is_declared_for_it(zen3):
    r = zen3["gdt"]
    table = format_table([r])
    html = r._repr_html_()
    gbench = export.to_gbench(zen3)["benchmarks"][0]
    for s in _statistics.STATISTICS:
        assert (s.heading in table) == ("table" in s.shown_in), s.name
        assert (f"{s.name}_ns" in COLUMNS) == ("compare" in s.shown_in), s.name
        assert (f"{s.name}_core_cycles" in export.CSV_COLUMNS) == ("export" in s.shown_in), s.name
        assert (f"{s.name}_ticks" in gbench) == ("export" in s.shown_in), s.name
        assert (f">{s.name}" in html) == ("html" in s.shown_in), s.name
    assert all(s.applies_to(r) for s in _statistics.STATISTICS)
    # a DiffResult has only what applies to it: the estimate, no best, no median
    d = fastcpu.DiffResult.from_arrays(method="gdt", serialize="lfence", k=8, cpu=None,
                                       long=np.full(50, 300) + np.arange(50) % 3,
                                       short=np.full(50, 200), migrated=np.zeros(50, bool),
                                       clock=zen3.clock)
    assert [s.name for s in _statistics.STATISTICS if s.applies_to(d)] == ["estimate"]
    assert d.estimate_ns == pytest.approx(d.ticks_to_ns(d.estimate))
    with pytest.raises(AttributeError, match="best_ns"):
        d.best_ns  # noqa: B018


def test_one_unit_table():
    assert list(UNITS) == ["ticks", "ns", "core_cycles"]
    for module in ("analysis/compare", "analysis/columns", "analysis/ab", "plot/__init__", "cli/__init__",
                   "export", "results/display"):
        source = (PACKAGE / f"{module}.py").read_text()
        # no module keeps a unit table of its own (a dict keyed by the unit names)
        assert not re.search(r'\{\s*"ticks":', source), module
        assert not re.search(r'"core_cycles":\s*"', source), module


def _recipe() -> tuple[str, str]:
    """The statistic docs/extending.md's recipe adds, and its figures' declarations."""
    doc = (REPO / "docs" / "extending.md").read_text()
    section = doc[doc.index("- **A statistic**"):doc.index("- **A plot**")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "the recipe's two edits are gone from docs/extending.md"
    return textwrap.dedent(blocks[0]), textwrap.dedent(blocks[1])


def test_the_architecture_docs_recipe_adds_a_statistic_with_one_edit(tmp_path, zen3):
    # a copy of the installed package (the built extension included), edited
    # as the recipe says and nowhere else
    copy = tmp_path / "fastcpu"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    statistic, figures = _recipe()
    path = copy / "results" / "statistics.py"
    source = path.read_text()
    entry = textwrap.indent(statistic, "    ")
    end = source.index("\n)\n", source.index("STATISTICS: tuple[Statistic, ...] = ("))
    path.write_text(source[:end] + "\n" + entry.rstrip("\n") + source[end:])
    # the figures, where the page says: after BenchResult's paired_mean_ci95_core_cycles
    path = copy / "results" / "bench_result.py"
    source = path.read_text()
    anchor = "    paired_mean_ci95_core_cycles = Figure(\"paired_mean\", \"core_cycles\", ci95=True)\n"
    assert source.count(anchor) == 1, "the page's place for the figures is not one place"
    at = source.index(anchor) + len(anchor)
    path.write_text(source[:at] + textwrap.indent(figures, "    ") + source[at:])
    check = f"""
import io, json, sys
import fastcpu
assert fastcpu.__file__.startswith({str(tmp_path)!r}), fastcpu.__file__
from fastcpu import export
from fastcpu.analysis.compare import COLUMNS
from fastcpu.results.display import format_table
res = fastcpu.load({str(DATA / "amd-epyc-family25-model1-kvm-guest.json")!r})
r = res["gdt"]
mean = float((r.raw.astype("f8") - r.empty.astype("f8")).mean()) / r.unroll
out = {{
    "table": "RAW MEAN (above empty)" in format_table([r]),
    "compare": all(f"raw_mean_{{u}}" in COLUMNS for u in ("ticks", "ns", "core_cycles")),
    "compare_value": fastcpu.compare(res, dataframe=False)[0]["raw_mean_ticks"] == mean,
    "csv": "raw_mean_core_cycles" in export.CSV_COLUMNS,
    "gbench": export.to_gbench(res)["benchmarks"][0]["raw_mean_ns"] == r.ticks_to_ns(mean),
    "html": "raw_mean (above empty)" in r._repr_html_(),
    "attribute": r.raw_mean_core_cycles == r.ticks_to_core_cycles(mean),
}}
print(json.dumps(out))
"""
    # the environment passes on (a sanitized build's LD_PRELOAD among it); the copy comes first
    p = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)), timeout=120)
    assert p.returncode == 0, p.stderr
    shown = __import__("json").loads(p.stdout)
    assert shown == dict.fromkeys(shown, True), shown
    # and the real package, untouched, has no such statistic
    assert "raw_mean_ns" not in COLUMNS and not hasattr(zen3["gdt"], "raw_mean_ns")
