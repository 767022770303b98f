"""fastcpu.compare_ab: B against A with intervals and a verdict."""

import math
from pathlib import Path

import pytest

import fastcpu
from fastcpu import noise
from fastcpu.analysis.ab import _row

DATA = Path(__file__).resolve().parent.parent / "data"


#: Counter shapes of the hosts in ../shared/REFERENCE.md (TSC Hz, step in TSC ticks, core cycles
#: per tick): made-up runs on each, since compare_ab's arithmetic must not depend on any.
HOST_SHAPES = {
    "AuthenticAMD family 25 model 1 (Zen 3)": (2445.43e6, 24.5, 1.27),
    "AuthenticAMD family 25 model 17 (Zen 4)": (2596.15e6, 26.0, 1.42),
    "AuthenticAMD family 26 model 2 (Zen 5)": (2596.15e6, 26.0, 1.62),
    "GenuineIntel family 6 model 207": (2000e6, 2.0, 1.28),
    "GenuineIntel family 6 model 167": (2600e6, 2.0, 1.57),
}
ZEN3 = HOST_SHAPES["AuthenticAMD family 25 model 1 (Zen 3)"]


def simulated(true_ticks, seed, runs=4000, shape=ZEN3):
    tsc_hz, step, cpt = shape
    model = noise.NoiseModel(step_ticks=step, overhead_ticks=60.0, jitter_ticks=2.0)
    return model.simulate(true_ticks, runs, seed=seed,
                          clock=fastcpu.Clock(tsc_hz=tsc_hz, tsc_step_ticks=step, cycles_per_tick=cpt))


@pytest.fixture(params=list(HOST_SHAPES.values()), ids=list(HOST_SHAPES))
def shape(request):
    return request.param


def test_the_interval_arithmetic(shape):
    a, b = simulated(40.0, 1, shape=shape), simulated(60.0, 2, shape=shape)
    row = _row("m", a, b, "ns")
    assert row.difference == pytest.approx(b.estimate_ns - a.estimate_ns)
    assert row.difference_ci95 == pytest.approx(math.hypot(a.estimate_ci95_ns, b.estimate_ci95_ns))
    assert row.ratio == pytest.approx(b.estimate_ns / a.estimate_ns)
    rel = math.hypot(a.estimate_ci95_ns / a.estimate_ns, b.estimate_ci95_ns / b.estimate_ns)
    assert row.ratio_ci95 == pytest.approx(row.ratio * rel)


def test_a_real_difference_is_found_and_its_sign_named(shape):
    # 40 and 60 ticks of true cost, below a 24.5- or 26-tick step's
    # resolution per run, but 4000 runs each resolve them
    a, b = simulated(40.0, 1, shape=shape), simulated(60.0, 2, shape=shape)
    assert _row("m", a, b, "ns").verdict == "slower"
    assert _row("m", b, a, "ns").verdict == "faster"


def test_the_same_cost_twice_is_usually_no_detectable_difference(shape):
    verdicts = [_row("m", simulated(30.0, s, shape=shape), simulated(30.0, 100 + s, shape=shape), "ns").verdict
                for s in range(40)]
    # a 95% interval: about 2 in 40 may exclude 0 by chance
    assert verdicts.count("no detectable difference") >= 34


def test_a_ratio_to_a_cost_that_may_be_nothing_is_left_out():
    a, b = simulated(0.0, 3), simulated(30.0, 4)
    row = _row("m", a, b, "ns")
    if abs(a.estimate_ns) <= a.estimate_ci95_ns:
        assert math.isnan(row.ratio) and math.isnan(row.ratio_ci95)
        assert "left out" in str(fastcpu.types.ABComparison("A", "B", "ns", [row], [], []))


def test_two_data_files_compare_in_ns_and_cycles():
    files = sorted(DATA.glob("*.json*"))[:2]
    for unit in ("ns", "cycles"):
        c = fastcpu.compare_ab(*files, unit=unit)
        assert len(c) > 5 and all(r.verdict in ("slower", "faster", "no detectable difference") for r in c)
        a, b = fastcpu.load(files[0]), fastcpu.load(files[1])
        row = c["gdt"]
        attr = "estimate_ns" if unit == "ns" else "estimate_core_cycles"
        assert row.a == pytest.approx(getattr(a["gdt"], attr)) and row.b == pytest.approx(getattr(b["gdt"], attr))
        text = str(c)
        assert text.splitlines()[0] == f"A: {a.name}" and "VERDICT" in text


def test_a_file_against_itself_finds_no_difference():
    f = sorted(DATA.glob("*.json*"))[0]
    c = fastcpu.compare_ab(f, f)
    assert {r.verdict for r in c} == {"no detectable difference"}
    assert all(r.difference == 0 for r in c)


def test_methods_in_one_file_only_are_named():
    a = fastcpu.measure(100, ["gdt", "rdpid"])
    b = fastcpu.measure(100, ["gdt", "syscall"])
    c = fastcpu.compare_ab(a, b)
    assert [r.method for r in c] == ["gdt"] and c.only_a == ["rdpid"] and c.only_b == ["syscall"]
    assert "only in A: rdpid" in str(c) and "only in B: syscall" in str(c)
    with pytest.raises(KeyError, match="not measured in both"):
        c["rdpid"]


#: a recorded reading: the family 6 model 167 host's 0.6.0 file, re-derived (one question)
INTEL = Path(__file__).resolve().parent / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"


def test_both_questions_are_compared_each_in_its_table():
    from loops import with_loops

    base = fastcpu.load(INTEL)
    a = with_loops(base, {"rdpid": 5.0, "rseq": 0.7, "gdt": 20.0}, label="A")
    b = with_loops(base, {"rdpid": 5.0, "rseq": 1.4, "vdso": 3.0}, label="B")
    ab = fastcpu.compare_ab(a, b)
    assert [r.method for r in ab.back_to_back] == ["rdpid", "rseq"]  # in both files
    assert {r.question for r in ab} == {"one call alone"}
    assert {r.question for r in ab.back_to_back} == {"calls back to back"}
    rseq = ab.back_to_back[1]
    assert rseq.a == pytest.approx(a.back_to_back["rseq"].estimate_ns)
    assert rseq.b == pytest.approx(b.back_to_back["rseq"].estimate_ns)
    assert rseq.verdict == "slower" and rseq.ratio == pytest.approx(2, rel=0.2)
    text = str(ab)
    assert "\nONE CALL ALONE: ns per call above the empty sequence" in text
    assert "\nCALLS BACK TO BACK: ns per call in a loop, by bench_diff (ESTIMATE +- 95%)" in text
    assert ab.back_to_back_missing == ""
    for name, res in (("A", a), ("B", b)):
        block = text[text.index(f"answers in {name}:"):]
        assert all(line in block for line in res.answer_lines())
    html = ab._repr_html_()
    assert "CALLS BACK TO BACK" in html and "answers in B:" in html


def test_a_file_without_calls_back_to_back_is_named_not_refused():
    from loops import with_loops

    old = fastcpu.load(INTEL)
    ab = fastcpu.compare_ab(with_loops(old, {"rseq": 0.7}, label="new"), old, unit="cycles")
    assert ab.back_to_back == [] and len(ab) > 0
    assert ab.back_to_back_missing.startswith("not measured in B (a file before fastcpu 0.7.0")
    assert f"CALLS BACK TO BACK: {ab.back_to_back_missing}" in str(ab)
    assert "calls back to back (by ESTIMATE): not measured" in str(ab)


def test_a_cost_below_resolution_is_a_bound_never_a_negative_cost():
    # no true cost: below what the harness resolves, read as 0 or a little either side of it
    model = noise.NoiseModel(step_ticks=2.0, overhead_ticks=60.0, jitter_ticks=3.0)
    clock = fastcpu.Clock(tsc_hz=2.0e9, tsc_step_ticks=2.0, cycles_per_tick=1.4)
    below = [r for r in (model.simulate(0.0, 300, seed=s, clock=clock) for s in range(40)) if not r.resolved]
    a = min(below, key=lambda r: r.estimate_ns)
    b = simulated(60.0, 2)
    assert b.resolved
    row = _row("m", a, b, "ns")
    assert row.a_below == pytest.approx(a.upper_bound_ns) and row.a_below > 0
    assert row.a == row.a_ci95 == pytest.approx(row.a_below / 2)
    assert math.isnan(row.b_below) and row.b == pytest.approx(b.estimate_ns)
    assert row.verdict == "slower" and math.isnan(row.ratio)
    comparison = fastcpu.types.ABComparison("A", "B", "ns", [row], [], [])
    line = next(x for x in str(comparison).splitlines() if x.startswith("m "))
    assert f"< {row.a_below:.2f}" in line and f"{a.estimate_ns:10.2f} {a.estimate_ci95_ns:6.2f}" not in line
    assert "between 0 and X" in str(comparison)
    assert f"&lt; {row.a_below:.2f}" in comparison._repr_html_()
    # both below: the same, on both sides
    both = _row("m", a, below[0], "ns")
    assert both.a_below == both.a_below and both.b_below == both.b_below
    assert both.verdict == "no detectable difference" or abs(both.difference) > both.difference_ci95
