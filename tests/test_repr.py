"""How results show themselves: a one-line repr() with the estimate, and in
Jupyter (``_repr_html_``) a well-formed HTML table with the estimate, its 95%
interval, the units, the harness-bias correction and the warnings, every
string from a file escaped."""

import dataclasses
import html
import importlib
import re
import types
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu import _core
from fastcpu.analysis.compare import format_comparison
from conftest import AVAILABLE

DATA = Path(__file__).resolve().parent.parent / "data"
ZEN3 = DATA / "amd-epyc-family25-model1-kvm-guest.json"
#: a file of fastcpu 0.2.0: 27 methods, one call alone only (the first development host, Zen 4)
OLD = DATA / "amd-epyc-kvm-guest.json"
HOSTILE = '<script>alert("x")</script>'
REPR_MAX = 300  # characters: a repr fits a line or two of a terminal, whatever the names


class _Tags(HTMLParser):
    """The tags of an HTML text, checked to open and close in order."""

    VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.seen, self.problems, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.seen.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(text):
    """The HTML's tags and text, after checking it is well-formed and runs no script."""
    p = _Tags()
    p.feed(text)
    p.close()
    assert p.problems == [] and p.stack == [], (p.problems, p.stack)
    assert "script" not in p.seen and "style" not in p.seen
    assert "<script" not in text.lower()
    return p


def shown(obj):
    """The text a notebook reader sees in obj's HTML (entities decoded)."""
    return "".join(parse(obj._repr_html_()).text)


def check_repr(obj, *must_contain):
    text = repr(obj)
    assert "\n" not in text and "\r" not in text and len(text) <= REPR_MAX, text
    # it names the type where users find it: fastcpu.X or fastcpu.types.X
    where = re.match(rf"<(fastcpu(?:\.types)?)\.{type(obj).__name__}[ :]", text)
    assert where and text.endswith(">"), text
    assert getattr(importlib.import_module(where[1]), type(obj).__name__) is type(obj), text
    for piece in must_contain:
        assert piece in text, (piece, text)
    return text


def fig(value, half):
    """The repr's figures: two decimals below 10, one above."""
    d = 2 if max(abs(value), abs(half)) < 10 else 1
    return f"{value:.{d}f} +-{half:.{d}f}"


def pm(value, half, digits=2):
    return f"{value:.{digits}f} \u00b1 {half:.{digits}f}"


@pytest.fixture(scope="module")
def zen3():
    return fastcpu.load(ZEN3)


@pytest.fixture(scope="module")
def live():
    """A real small measurement on this machine."""
    name = next((m for m in ("rdpid", "tscp", "vdso", "sched_getcpu") if m in AVAILABLE), None)
    if name is None:
        pytest.skip("none of rdpid, tscp, vdso, sched_getcpu runs here")
    return fastcpu.bench(name, 100)


def renamed(r, method):
    return fastcpu.BenchResult.from_arrays(
        method=method, serialize=r.serialize, unroll=r.unroll, cpu=r.cpu, raw=r.raw, empty=r.empty,
        migrated=r.migrated, clock=fastcpu.Clock(r.tsc_hz, r.tsc_step_ticks, r.cycles_per_tick),
        counter=r.counter, harness_bias_core_cycles=r.harness_bias_core_cycles,
        harness_bias_ci95_core_cycles=r.harness_bias_ci95_core_cycles)


# ---- BenchResult -----------------------------------------------------------

@pytest.mark.parametrize("which", ["live", "loaded"])
def test_bench_result_html_shows_the_estimate_interval_and_units(which, live, zen3):
    r = live if which == "live" else zen3["rdpid"]
    text = shown(r)
    for value, half in ((r.estimate, r.estimate_ci95), (r.estimate_ns, r.estimate_ci95_ns),
                        (r.estimate_core_cycles, r.estimate_ci95_core_cycles)):
        assert pm(value, half) in text
        assert f"[{value - half:.2f}, {value + half:.2f}]" in text
    tags = parse(r._repr_html_())
    headers = [t for t in tags.seen if t == "th"]
    assert headers and "95% interval" in text
    for unit in ("TSC ticks", "ns", "core cycles"):
        assert f"<th>{unit}</th>" in r._repr_html_()
    assert f"estimate ({r.estimator})" in text
    assert f"{r.runs} runs ({r.runs_used} used by the estimate" in text
    for w in r.warnings:
        assert w in text


def test_bench_result_html_says_whether_the_harness_bias_was_subtracted(zen3):
    corrected = zen3["rdpid"]
    assert corrected.harness_bias_core_cycles != 0  # a file of 0.3.0 or later carries its self-test's
    text = shown(corrected)
    assert (f"harness bias {corrected.harness_bias_core_cycles:.2f} \u00b1 "
            f"{corrected.harness_bias_ci95_core_cycles:.2f} core cycles per copy subtracted") in text
    assert f"\u00b1 {corrected.estimate_systematic_ci95:.2f} TSC ticks (systematic)" in text
    plain = corrected.with_harness_bias(0.0, 0.0)
    assert "no harness-bias correction applied" in shown(plain)
    assert pm(plain.estimate, plain.estimate_ci95) in shown(plain)


def test_bench_result_html_shows_warnings_when_there_are_some(zen3):
    r = max(zen3.values(), key=lambda r: len(r.warnings))  # a guest, unpinned: every result has some
    assert r.warnings
    text = shown(r)
    assert "warnings" in text
    for w in r.warnings:
        assert w in text


def test_a_pmu_result_has_no_tsc_tick_column():
    rng = np.random.default_rng(0)
    empty = rng.integers(100, 104, 400).astype(np.uint64)
    r = fastcpu.BenchResult.from_arrays(
        method="gdt", serialize="lfence", unroll=1, cpu=None, raw=empty + 40, empty=empty,
        migrated=np.zeros(400, bool), clock=fastcpu.Clock(2.6e9, 26, 1.5), counter="pmu")
    page = r._repr_html_()
    parse(page)
    assert "<th>TSC ticks</th>" not in page and "<th>core cycles</th>" in page
    text = check_repr(r, f"{fig(r.estimate_core_cycles, r.estimate_ci95_core_cycles)} core cycles",
                      "counter='pmu'")
    assert "TSC ticks" not in text  # a PMU count is a core cycle


@pytest.mark.parametrize("which", ["live", "loaded"])
def test_bench_result_repr_is_one_short_line_with_the_estimate(which, live, zen3):
    r = live if which == "live" else zen3["rdpid"]
    check_repr(r, r.method, f"estimate {fig(r.estimate_core_cycles, r.estimate_ci95_core_cycles)} core cycles",
               f"{fig(r.estimate, r.estimate_ci95)} TSC ticks", f"{fig(r.estimate_ns, r.estimate_ci95_ns)} ns",
               f"{r.runs} runs", f"serialize={r.serialize!r}")
    assert "array" not in repr(r)  # not the dataclass's dump


def test_a_hostile_method_name_is_escaped_and_cut(zen3):
    r = renamed(zen3["rdpid"], HOSTILE + "\n" + "x" * 500)
    page = r._repr_html_()
    parse(page)
    assert html.escape(HOSTILE) in page
    check_repr(r)


# ---- DiffResult ------------------------------------------------------------

def test_diff_result_repr_and_html(live):
    d = fastcpu.bench_diff(live.method, 100, k=4)
    check_repr(d, d.method, f"estimate {fig(d.estimate_core_cycles, d.estimate_ci95_core_cycles)} core cycles",
               f"{fig(d.estimate, d.estimate_ci95)} TSC ticks", "4 and 8 copies", "100 pairs")
    text = shown(d)
    for value, half in ((d.estimate, d.estimate_ci95), (d.estimate_ns, d.estimate_ci95_ns),
                        (d.estimate_core_cycles, d.estimate_ci95_core_cycles)):
        assert pm(value, half) in text
        assert f"[{value - half:.2f}, {value + half:.2f}]" in text
    assert "estimate (diff)" in text and "the copy loop's own cost may add to the body" in text
    hostile = dataclasses.replace(d, method=HOSTILE)
    assert html.escape(HOSTILE) in hostile._repr_html_()
    parse(hostile._repr_html_())


# ---- Results ---------------------------------------------------------------

def test_results_html_has_a_row_per_method_with_its_estimate(zen3):
    page = zen3._repr_html_()
    tags = parse(page)
    text = "".join(tags.text)
    assert tags.seen.count("tr") == len(zen3) + 2  # two header rows
    for r in zen3.values():
        assert f">{r.method}</th>" in page
        assert pm(r.estimate_core_cycles, r.estimate_ci95_core_cycles) in text
        assert f"[{r.estimate_core_cycles - r.estimate_ci95_core_cycles:.2f}, " in text
        assert pm(r.estimate, r.estimate_ci95) in text
    for unit in ("core cycles", "ns", "TSC ticks"):
        assert f"<th>{unit}</th>" in page
    assert zen3.name in text and f"self-test: {'PASS' if zen3.selftest.passed else 'FAIL'}" in text
    bias = zen3["rdpid"]
    assert pm(bias.harness_bias_core_cycles, bias.harness_bias_ci95_core_cycles) in text


def test_results_html_warns_from_the_machine_that_measured_them(zen3):
    text = shown(zen3)
    assert "running under a hypervisor (KVMKVMKVM)" in text  # the file's facts
    # a result's own warnings (its runs' outliers or spread), not the machine's
    own = [w for r in zen3.values() for w in r.warnings if "outlier" in w or "spread" in w]
    assert own and all(w in text for w in own)
    elsewhere = dataclasses.replace(zen3, machine={**zen3.machine, "hypervisor": "Xen" + HOSTILE})
    page = elsewhere._repr_html_()
    parse(page)
    assert "running under a hypervisor (Xen" + html.escape(HOSTILE) in page
    # facts of the wrong kind are refused where they are given, as load() refuses them in a file...
    with pytest.raises(ValueError, match="machine\\['governors'\\] is 5, must be"):
        dataclasses.replace(zen3, machine={"governors": 5})
    # ...and Results that hold them anyway (set behind the constructor's back) are still shown
    broken = dataclasses.replace(zen3)
    object.__setattr__(broken, "machine", types.MappingProxyType({"governors": 5}))
    assert "KVMKVMKVM" not in shown(broken) and all(w in shown(broken) for w in own)


def test_results_html_escapes_labels_and_lists_what_could_not_run(zen3):
    bad = dataclasses.replace(zen3, label=HOSTILE, unavailable={"<b>gone": "needs <i>a CPU</i>"})
    page = bad._repr_html_()
    text = "".join(parse(page).text)
    assert html.escape(HOSTILE) in page and HOSTILE in text
    assert "not available there" in text and "<b>gone: needs <i>a CPU</i>" in text
    check_repr(bad, "37 methods (1 unavailable)")


def test_results_repr_names_the_machine_and_counts_methods(zen3):
    check_repr(zen3, repr(zen3.name), f"{len(zen3)} methods", "serialize=lfence", zen3.date)
    long = dataclasses.replace(zen3, label="very long\nlabel " * 40)
    check_repr(long, f"{len(zen3)} methods")


# ---- compare() and compare_ab() --------------------------------------------

def test_comparison_table_html_is_the_side_by_side_layout_escaped(zen3):
    bad = dataclasses.replace(zen3, label=HOSTILE)
    table = fastcpu.compare(bad, OLD, dataframe=False)
    page = table._repr_html_()
    tags = parse(page)
    text = "".join(tags.text)
    # the terminal's layout: a row per method, per machine its ESTIMATE +- 95% and RATIO
    methods = list(dict.fromkeys(table["method"]))
    assert tags.seen.count("tr") == len(methods) + 2
    assert page.count("<th>ESTIMATE \u00b1 95%</th>") == 2 and page.count("<th>RATIO</th>") == 2
    terminal = format_comparison(table, "cycles")
    for method in methods:
        for row in terminal.splitlines():
            if row.startswith(method + " "):
                for cell in re.findall(r"-?[\d.]+ \+- [\d.]+|[\d.]+x", row):
                    assert cell in text, (method, cell)  # the same figures as the terminal
    first = table[0]
    assert f"{first['estimate_core_cycles']:.2f}" in text
    assert html.escape(HOSTILE) + " (baseline)" in page and "<script" not in page
    assert "core cycles per copy above the empty sequence" in text
    check_repr(table, f"{len(table)} rows", "2 machines", f"{len(set(table['method']))} methods",
               f"{len(table.columns)} columns")


def test_the_pandas_comparison_escapes_labels_too(zen3):
    pytest.importorskip("pandas")
    frame = fastcpu.compare(dataclasses.replace(zen3, label=HOSTILE))
    page = frame._repr_html_()
    assert html.escape(HOSTILE, quote=False) in page and "<script" not in page
    assert "paired_mean_core_cycles" in page or "..." in page  # pandas may fold wide frames


@pytest.mark.parametrize("unit, words", [("ns", "ns"), ("cycles", "core cycles")])
def test_ab_comparison_html_and_repr(zen3, unit, words):
    ab = fastcpu.compare_ab(dataclasses.replace(zen3, label=HOSTILE), OLD, unit=unit)
    page = ab._repr_html_()
    tags = parse(page)
    text = "".join(tags.text)
    assert tags.seen.count("tr") == len(ab) + 1
    assert f"<th>A ({words})</th>" in page and f"<th>B - A ({words})</th>" in page
    for row in ab:
        assert re.search(rf">{row.method}</th><td>{re.escape(pm(row.a, row.a_ci95))}</td>"
                         rf"<td>{re.escape(pm(row.b, row.b_ci95))}</td>"
                         rf"<td>{re.escape(pm(row.difference, row.difference_ci95))}</td>.*?"
                         rf"<td>{row.verdict}</td>", page)
    assert html.escape(HOSTILE) in page and HOSTILE in text
    assert "only in A:" in text and ", ".join(ab.only_a) in text
    verdicts = [r.verdict for r in ab]
    check_repr(ab, f"{len(ab)} methods in {words}",
               *(f"{verdicts.count(v)} {v}" for v in set(verdicts)))


# ---- cheap, and what a notebook shows ---------------------------------------

def test_showing_measures_nothing(zen3, monkeypatch):
    for name in ("time_runs", "ruler_ticks", "convert",
                 "tsc_reads", "tsc_ns_pair", "user_chains"):
        monkeypatch.setattr(_core, name, lambda *a, **k: pytest.fail("showing a result measured"))
    r = zen3["gdt"]
    d = fastcpu.DiffResult(method="gdt", runs=r.runs, serialize="lfence", k=1, cpu=None, long=r.raw,
                           short=r.empty, migrated=r.migrated, tsc_hz=r.tsc_hz,
                           cycles_per_tick=r.cycles_per_tick, tsc_step_ticks=r.tsc_step_ticks)
    for obj in (r, d, zen3, fastcpu.compare(zen3, dataframe=False), fastcpu.compare_ab(zen3, zen3)):
        parse(obj._repr_html_())
        check_repr(obj)


def test_a_notebook_shows_the_html(zen3):
    formatter = pytest.importorskip("IPython.core.formatters").DisplayFormatter()
    for obj in (zen3["rdpid"], zen3, fastcpu.compare(zen3, dataframe=False), fastcpu.compare_ab(zen3, OLD)):
        data, _ = formatter.format(obj)
        assert data["text/html"] == obj._repr_html_()
        assert data["text/plain"] == repr(obj)
