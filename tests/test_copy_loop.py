"""The copy loop's own cost per copy (fastcpu/_copy_loop.py): a back-to-back
figure, or an unrolled one, that does not stand out from the loop is a
bound, never the loop's cost read as the body's.

The logic runs on synthetic results over a recorded host's clock (the
GenuineIntel family 6 model 167 host's re-derived 0.6.0 file); the live
tests check only what holds on any host: the loop costs something, its
figure is kept and handed to the results that need it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import fastcpu
from fastcpu.instrument import timing as _copy_loop
from fastcpu.files import write as _json_document
from fastcpu.results.answers import cheapest_words, ties
from fastcpu.results.display import format_back_to_back
from loops import loop_result, with_loops

#: a recorded reading: its clock (TSC rate, step, core cycles per tick) is the synthetic results'
INTEL = Path(__file__).resolve().parent / "data" / "intel-xeon-family6-model167-0.6.0-rederived.json"


@pytest.fixture(scope="module")
def base() -> fastcpu.Results:
    return fastcpu.load(INTEL)


def with_loop(d: fastcpu.DiffResult, core_cycles: float, ci95: float) -> fastcpu.DiffResult:
    return dataclasses.replace(d, copy_loop_core_cycles=core_cycles, copy_loop_ci95_core_cycles=ci95)


def test_without_a_measured_loop_a_figure_is_judged_as_before(base):
    d = loop_result("rseq", 0.7, base, jitter_ticks=0.5)
    assert d.copy_loop_core_cycles == 0 and d.resolved  # its interval lies above 0
    assert d.below_resolution_words == "below what the harness resolves"


def test_a_figure_within_the_loop_is_a_bound_above_both(base):
    d = loop_result("rseq", 0.7, base, jitter_ticks=0.5)
    read = d.estimate_core_cycles
    loop = with_loop(d, read * 1.1, read * 0.05)  # the loop's interval holds the reading
    assert not loop.resolved
    top_read = d.estimate + d.estimate_ci95
    top_loop = (read * 1.15) / d.cycles_per_tick
    assert loop.upper_bound == pytest.approx(max(top_read, top_loop))
    assert loop.upper_bound_core_cycles >= read * 1.15
    assert loop.cost_text().startswith("< ")
    assert loop.below_resolution_words == "within the copy loop's own cost per copy"
    assert str(loop).startswith("rseq: < ") and "within the copy loop's own cost per copy" in str(loop)
    assert math.isnan(dataclasses.replace(d).upper_bound)  # resolved without the loop: no bound


def test_a_figure_above_the_loop_loses_half_the_loop_and_carries_the_other_half(base):
    # the body overlaps none to all of the loop: the reading is the body plus 0 to L
    d = loop_result("vdso", 3.0, base, jitter_ticks=0.5)
    L, half = d.estimate_core_cycles / 3, 0.05
    loop = with_loop(d, L, half)
    cpt = d.cycles_per_tick
    assert loop.resolved and math.isnan(loop.upper_bound)
    assert loop.harness_bias_core_cycles == pytest.approx(L / 2)
    assert loop.estimate == pytest.approx(d.estimate - L / 2 / cpt)
    assert loop.estimate_ci95 == pytest.approx(d.estimate_ci95 + (L / 2 + half) / cpt)
    # the interval spans the body's whole range: the reading less L, to the reading
    low = loop.estimate_core_cycles - loop.estimate_ci95_core_cycles
    high = loop.estimate_core_cycles + loop.estimate_ci95_core_cycles
    assert low <= d.estimate_core_cycles - L and high >= d.estimate_core_cycles
    assert with_loop(d, 0.0, 0.0).harness_bias_ci95_core_cycles == 0 == with_loop(d, 0.0, 0.0).harness_bias_core_cycles


def test_an_unrolled_runs_correction_adds_half_the_loop_back():
    from fastcpu.results.parts import applied
    # the empty sequence pays the loop too: the reading is the body less 0 to L
    bias, ci, resolution, caveats = applied(None, (1.2, 0.1), False, 1.3, ())
    assert (bias, ci, resolution) == pytest.approx((-0.6, 0.7, 1.3))
    assert caveats == ()
    unknown = ("core cycles unknown: the rulers disagree",)
    assert applied(None, (1.2, 0.1), False, math.nan, unknown) == (0.0, 0.0, 0.0, unknown)  # nothing in core cycles
    assert applied(None, (0.0, 0.0), False, 1.3, ()) == (0.0, 0.0, 0.0, ())  # not measured


def test_the_line_is_the_top_of_the_loops_interval(base):
    d = loop_result("rdpid", 1.5, base, jitter_ticks=0.5)
    low = (d.estimate - d.estimate_ci95) * d.cycles_per_tick  # the reading's interval starts here
    just_under = with_loop(d, low * 0.9, low * 0.09)  # top 0.99 x low: it stands out
    just_over = with_loop(d, low * 0.9, low * 0.11)  # top 1.01 x low: it does not
    assert just_under.resolved and not just_over.resolved


def test_core_cycles_unknown_leave_the_figure_as_read(base):
    d = loop_result("rseq", 0.7, base, jitter_ticks=0.5)
    unknown = dataclasses.replace(with_loop(d, 5.0, 0.1), cycles_per_tick=math.nan)
    assert unknown._loop_ticks == 0 and unknown.resolved == dataclasses.replace(d, cycles_per_tick=math.nan).resolved


def test_the_answer_names_the_loop_and_ties_what_reaches_its_bound(base):
    res = with_loops(base, {"rseq": 0.7, "rdpid": 0.75, "vdso": 4.0})
    cpt = res.back_to_back["rseq"].cycles_per_tick
    loop = 0.9 * cpt  # core cycles per copy: above rseq and rdpid
    b2b = {m: with_loop(d, loop, 0.05) for m, d in res.back_to_back.items()}
    tied = ties(list(b2b.values()))
    assert {r.method for r in tied} == {"rseq", "rdpid"}  # both hide in the loop: neither is cheaper
    words = cheapest_words(tied)
    assert "within the copy loop's own cost per copy" in words and " < " in words
    assert "-" not in words.split("core cycles")[0]  # never a negative cost
    table = format_back_to_back(b2b.values())
    assert f"the copy loop itself {loop:.2f} +- 0.05 core cycles per copy" in table.splitlines()[0]
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    assert "< " in rows["rseq"] and "< " in rows["rdpid"] and "< " not in rows["vdso"]


def test_files_keep_the_loop_and_older_ones_read_none(base, tmp_path):
    res = with_loops(base, {"rseq": 0.7, "vdso": 4.0})
    res = dataclasses.replace(res, back_to_back={m: with_loop(d, 1.02, 0.07) for m, d in res.back_to_back.items()})
    path = tmp_path / "loop.json"
    res.save(path)
    back = fastcpu.load(path)
    for m, d in res.back_to_back.items():
        got = back.back_to_back[m]
        assert (got.copy_loop_core_cycles, got.copy_loop_ci95_core_cycles) == (1.02, 0.07)
        assert got.resolved == d.resolved and got.cost_text() == d.cost_text()
    assert all(d.copy_loop_core_cycles == 0 for d in with_loops(base, {"rseq": 0.7}).back_to_back.values())


def test_a_file_with_a_negative_loop_is_refused_naming_the_field(base, tmp_path):
    import json
    res = with_loops(base, {"rseq": 0.7})
    res = dataclasses.replace(res, back_to_back={m: with_loop(d, 1.0, 0.1) for m, d in res.back_to_back.items()})
    path = tmp_path / "bad.json"
    res.save(path)
    doc = json.loads(path.read_text())
    doc["back_to_back"][0]["copy_loop_core_cycles"] = -1.0
    doc.pop("checksum", None)
    path.write_bytes(_json_document.encode_document(doc))  # resealed, as a tool that knows the format writes it
    with pytest.raises(fastcpu.ResultFileError, match="copy_loop_core_cycles"):
        fastcpu.load(path)


def test_an_unrolled_figure_within_the_loop_is_a_bound_and_says_why(base):
    clock = base.clock
    raw = np.full(200, 300, "u8") + np.arange(200) % 3
    empty = np.full(200, 300, "u8") + (np.arange(200) + 1) % 3
    unrolled = fastcpu.BenchResult.from_arrays(method="rseq", serialize="lfence", unroll=64, cpu=None, raw=raw,
                                               empty=empty, migrated=np.zeros(200, bool), clock=clock,
                                               harness_resolution_core_cycles=1.1)
    assert not unrolled.resolved
    assert unrolled.below_resolution_words == "within the copy loop's own cost per copy"
    assert unrolled.upper_bound_core_cycles >= 1.1
    single = fastcpu.BenchResult.from_arrays(method="rseq", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                             empty=empty, migrated=np.zeros(200, bool), clock=clock,
                                             harness_resolution_core_cycles=1.1)
    assert single.below_resolution_words == "below what the harness resolves"


class _Reading:
    """What _copy_loop reads of a timed_diff(): its figure in core cycles."""

    def __init__(self, core_cycles: float, ci95: float = 0.05):
        self.estimate_core_cycles, self.estimate_ci95_core_cycles = core_cycles, ci95


def _script(monkeypatch, readings):
    """timed_diff() in _copy_loop answers `readings` in turn (the first: the warm-up)."""
    calls = []
    left = iter(readings)

    def fake(target, runs, **kw):
        calls.append((target, runs, kw["k"]))
        return next(left)

    monkeypatch.setattr(_copy_loop, "timed_diff", fake)
    monkeypatch.setattr(_copy_loop, "_floors", {})
    return calls


def test_the_loop_is_the_median_of_its_measurements_after_a_warm_up(monkeypatch):
    calls = _script(monkeypatch, [_Reading(0.4), _Reading(1.54), _Reading(1.0, 0.07), _Reading(0.99)])
    floor = _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None)
    assert (floor.core_cycles, floor.ci95_core_cycles) == (1.0, 0.07)  # the disturbed 1.54 and the warm-up left out
    assert len(calls) == 1 + _copy_loop.FLOOR_MEASUREMENTS and {c[0] for c in calls} == {"empty"}
    assert {c[2] for c in calls} == {16}
    assert _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None) is floor  # kept: nothing measured again
    assert len(calls) == 4


def test_the_loop_is_measured_again_when_old(monkeypatch):
    _script(monkeypatch, [_Reading(1.0)] * 4 + [_Reading(2.0)] * 4)
    now = [1000.0]
    monkeypatch.setattr(_copy_loop.time, "monotonic", lambda: now[0])
    first = _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None)
    now[0] += _copy_loop.CORRECTION_MAX_AGE_S + 1
    again = _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None)
    assert (first.core_cycles, again.core_cycles) == (1.0, 2.0)


def test_a_loop_whose_core_cycles_are_unknown_is_none_and_not_kept(monkeypatch):
    _script(monkeypatch, [_Reading(math.nan)] * 4 + [_Reading(1.0)] * 4)
    assert _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None) is None
    assert _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None).core_cycles == 1.0


def test_a_user_function_is_timed_against_a_user_function_of_no_cost(monkeypatch):
    calls = _script(monkeypatch, [_Reading(3.0)] * 4)
    assert _copy_loop.path_of(12345) == "user" and _copy_loop.path_of("rseq") == "inline"
    _copy_loop.loop_floor("user", "lfence", "tsc", 8, None)
    assert {c[0] for c in calls} == {fastcpu._core.user_empty()} and {c[2] for c in calls} == {8}


@pytest.mark.parametrize("unroll,k", [(2, 2), (3, 2), (8, 4), (64, 32)])
def test_an_unrolled_run_takes_the_loop_at_its_own_copies(unroll, k):
    assert _copy_loop.floor_k(unroll) == k


def test_live_the_loop_costs_something_and_reaches_the_results():
    # what each call used is what the cache holds right after it (nothing where the
    # rulers disagreed while the loop was measured: a hopping clock, a busy sibling)
    floor = _copy_loop.loop_floor("inline", "lfence", "tsc", 16, None)
    if floor is not None:
        assert 0 < floor.core_cycles < 1e3 and 0 <= floor.ci95_core_cycles < 1e3
    d = fastcpu.bench_diff("rseq", 200)
    kept = _copy_loop._fresh(("inline", "lfence", "tsc", 16, None))
    used = (0.0, 0.0) if kept is None else (kept.core_cycles, kept.ci95_core_cycles)
    assert (d.copy_loop_core_cycles, d.copy_loop_ci95_core_cycles) == used
    if not d.resolved:  # a bound never under what was read
        assert d.upper_bound >= d.estimate
    r = fastcpu.bench("rseq", 200, unroll=8)
    at8 = _copy_loop._fresh(("inline", "lfence", "tsc", 4, None))
    expected = 0.0 if at8 is None or r.caveats else at8.top_core_cycles
    assert r.harness_resolution_core_cycles == pytest.approx(expected)
