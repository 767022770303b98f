"""fastcpu.plot: exact counts, ECDFs, log axes for slow methods, units on every axis."""

from pathlib import Path

import matplotlib
import numpy as np
import pytest

import fastcpu
from fastcpu.cli import main
from fastcpu.noise import NoiseModel

plot = pytest.importorskip("fastcpu.plot")
from fastcpu.plot import reference as _plot_published  # noqa: E402

#: fastcpu.plot and the modules that draw for it.
PLOT_SOURCES = [Path(plot.__file__), *Path(plot.__file__).parent.glob("_plot_*.py")]
plt = matplotlib.pyplot

STEP = 26
CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=STEP, cycles_per_tick=1.5)


def quantized(true_ticks, method, seed=0, runs=400):
    model = NoiseModel(step_ticks=STEP, overhead_ticks=62, interrupt_rate=0.01, interrupt_ticks=900)
    return model.simulate(true_ticks, runs, seed=seed, clock=CLOCK, method=method)


@pytest.fixture(scope="module")
def results():
    rs = {"fast": quantized(10, "fast"), "trap": quantized(1900, "trap", seed=1)}
    return fastcpu.Results(rs, {"model_name": "model"}, CLOCK, "model", "2025-01-01T00:00:00Z",
                           label="simulated guest")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def assert_units(ax):
    assert any(u in ax.get_xlabel() for u in ("TSC ticks", "ns", "core cycles")), ax.get_xlabel()
    assert ax.get_ylabel() in ("runs (count)", "fraction of runs <= x")


def test_counts_draws_exact_counts_of_the_method_up_and_the_empty_down(results):
    r = results["fast"]
    ax = plot.counts(r, tail=0)
    raw_line, empty_line = ax.lines[0], ax.lines[1]
    values, n = np.unique(r.raw, return_counts=True)
    np.testing.assert_array_equal(raw_line.get_xdata(), values)
    np.testing.assert_array_equal(raw_line.get_ydata(), n)
    values, n = np.unique(r.empty, return_counts=True)
    np.testing.assert_array_equal(empty_line.get_xdata(), values)
    np.testing.assert_array_equal(empty_line.get_ydata(), -n)
    assert ax.get_xscale() == "linear"
    assert_units(ax)
    # y tick labels show counts, not negative numbers
    assert all(not t.get_text().startswith("-") for t in ax.get_yticklabels())


def test_counts_leaves_rare_far_values_off_a_linear_axis_and_counts_them(results):
    r = results["fast"]
    ax = plot.counts(r)
    drawn = len(ax.lines[0].get_xdata()) + len(ax.lines[1].get_xdata())
    assert drawn < len(np.unique(r.raw)) + len(np.unique(r.empty))
    notes = [t.get_text() for t in ax.texts]
    assert any("not shown" in t for t in notes)
    count, _, _, high = notes[0].split()[:4]  # "N runs > HIGH\nnot shown"
    beyond = np.count_nonzero(r.raw > float(high)) + np.count_nonzero(r.empty > float(high))
    assert int(count) == beyond > 0
    assert max(ax.lines[0].get_xdata().max(), ax.lines[1].get_xdata().max()) <= float(high)


def test_slow_methods_get_a_log_axis_with_every_value(results):
    assert plot.is_slow(results["trap"]) and not plot.is_slow(results["fast"])
    ax = plot.counts(results["trap"])
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    assert ax.lines[0].get_ydata().sum() == results["trap"].runs
    assert plot.counts(results["fast"], log_x=True).get_xscale() == "log"


def test_distributions_one_panel_per_method(results):
    fig = plot.distributions(results, ncols=3)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 2
    for ax in visible:
        assert_units(ax)
    assert "simulated guest" in fig._suptitle.get_text()
    assert len(plot.distributions(results, ["trap"]).axes) == 1


def test_ecdf_overlays_methods_and_the_empty_floor(results):
    # by default a trap-scale method gets a panel of its own; named, they share one
    assert [a.get_title() for a in plot.ecdf(results, unit="ns").figure.axes if a.get_visible()] == [
        "other", "other: trap and system-call scale"]
    ax = plot.ecdf(results, ["fast", "trap"], unit="ns")
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["empty sequence", "fast", "trap"]
    for line in ax.lines:
        y = np.asarray(line.get_ydata())
        assert np.all(np.diff(y) >= 0) and y[-1] == pytest.approx(1.0)
    # from 0 at the smallest run, a step at every distinct value up to the axis's end (then
    # the largest), to the fraction of runs at or below it (ticks -> ns at 2.6 GHz)
    values, n = np.unique(results["trap"].raw, return_counts=True)
    x, y = np.asarray(ax.lines[2].get_xdata()), np.asarray(ax.lines[2].get_ydata())
    assert x[0] == pytest.approx(values[0] / 2.6) and y[0] == 0
    x, y = x[1:], y[1:]
    shown = np.searchsorted(values / 2.6, ax.get_xlim()[1], side="right")
    assert shown < x.size <= shown + 2 and x[-1] == pytest.approx(values[-1] / 2.6)
    np.testing.assert_allclose(x[:shown], values[:shown] / 2.6)
    np.testing.assert_allclose(y[:shown], np.cumsum(n)[:shown] / n.sum())
    assert ax.get_xscale() == "log"  # a trap and a fast method: spans > 5x
    assert "ns per run" in ax.get_xlabel()
    assert_units(ax)


def test_ecdf_machines_overlays_files(results, tmp_path):
    results.save(tmp_path / "a.json")
    other = fastcpu.Results({"fast": quantized(30, "fast", seed=5)}, {}, CLOCK, "model",
                            "2025-01-02T00:00:00Z", label="other")
    ax = plot.ecdf_machines([tmp_path / "a.json", other], "fast", unit="cycles")
    labels = [line.get_label() for line in ax.lines]
    assert "simulated guest" in labels and "other" in labels
    assert "core cycles per run" in ax.get_xlabel()
    ax = plot.ecdf_machines([results, other], "trap")
    assert any("not measured" in line.get_label() for line in ax.lines)
    assert ax.get_xscale() == "log"


def test_machines_grid(results):
    fig = plot.machines([results, results], unit="ns")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    for ax in fig.axes:
        if ax.get_visible():
            assert_units(ax)


def test_real_results_plot(tmp_path):
    res = fastcpu.measure(50, ["gdt", "syscall"])
    fig = plot.distributions(res)
    # a system call's panel is on a log axis where its runs read 5x the empty ones or more: what
    # this host measured decides (on the GenuineIntel family 6 model 167 guest the empty runs
    # read 40-50 ticks, and syscall's median was now and then below 5x them)
    panels = {axis.get_title().split(":", 1)[0]: axis for axis in fig.axes if axis.get_title()}
    for name in ("gdt", "syscall"):
        assert panels[name].get_xscale() == ("log" if plot.is_slow(res[name]) else "linear"), name
    fig.savefig(tmp_path / "real.png")
    assert (tmp_path / "real.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda r: plot.counts(r), TypeError, "one BenchResult"),
        (lambda r: plot.counts(r["fast"], tail=1.5), ValueError, "tail"),
        (lambda r: plot.ecdf(r, unit="parsecs"), ValueError, "use one of ticks, ns, cycles"),
        (lambda r: plot.ecdf(r, upto=0), ValueError, "upto"),
        (lambda r: plot.distributions(r, ["nope"]), ValueError, "'nope' not measured"),
        (lambda r: plot.distributions(r, ncols=0), ValueError, "ncols"),
        (lambda r: plot.ecdf_machines([r], "nope"), ValueError, "measured on none"),
        (lambda r: plot.ecdf_machines([3], "fast"), TypeError, "not int"),
        (lambda r: plot.machines([]), ValueError, "at least one"),
    ],
)
def test_bad_arguments(results, call, exc, match):
    with pytest.raises(exc, match=match):
        call(results)


def test_a_unit_the_result_has_no_figures_in_is_refused_with_the_reason():
    # core cycles are NaN while the clock's rulers disagree: said, not an axis of NaN
    clock = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=2, cycles_per_tick=float("nan"))
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                        raw=np.full(50, 80), empty=np.full(50, 60), migrated=np.zeros(50, bool),
                                        clock=clock, caveats=("the rulers disagree",))
    for call in (lambda: plot.counts(r, unit="cycles"), lambda: plot.ecdf([r], unit="cycles"),
                 lambda: plot.ecdf_machines([fastcpu.Results({"gdt": r}, {}, clock, "lfence", "d")], "gdt",
                                            unit="cycles")):
        with pytest.raises(ValueError, match=r"'gdt' has no figures in core cycles \(the rulers disagree\): "
                                             "plot it in ticks or ns"):
            call()
    assert plot.counts(r, unit="ns").get_xlabel().startswith("ns per run")


def test_plot_never_selects_a_backend():
    import importlib

    before = matplotlib.get_backend()
    importlib.reload(plot)
    assert matplotlib.get_backend() == before
    for path in PLOT_SOURCES:
        source = path.read_text()
        assert "matplotlib.use(" not in source and ".switch_backend(" not in source, path.name


def test_cli_plot_writes_pngs(results, tmp_path, capsys):
    results.save(tmp_path / "a.json")
    for kind in ("auto", "counts", "ecdf", "machines"):
        out = tmp_path / f"{kind}.png"
        assert main(["plot", str(tmp_path / "a.json"), "--kind", kind, "--out", str(out)]) == 0
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "two.png"
    assert main(["plot", str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--out", str(out),
                 "--methods", "trap", "--unit", "cycles"]) == 0
    assert out.stat().st_size > 0
    assert not plt.get_fignums()  # the CLI closes what it drew


@pytest.mark.parametrize(
    "args",
    [
        ["plot", "A", "A", "--kind", "counts", "--out", "x.png"],
        ["plot", "A", "--methods", "nope", "--out", "x.png"],
        ["plot", "missing.json", "--out", "x.png"],
        ["plot", "A", "--out", "/nonexistent-dir/x.png"],
        ["plot", "A"],
    ],
)
def test_cli_plot_bad_options_exit_2_with_one_line(results, tmp_path, capsys, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    results.save(tmp_path / "a.json")
    assert main([str(tmp_path / "a.json") if a == "A" else a for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastcpu: error:") and len(err.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


# -- issue 13: plots that read at a glance -------------------------------------------

import csv  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402

from matplotlib.colors import to_hex  # noqa: E402

CATALOG = [m.name for m in fastcpu.methods() if m.name != "empty"]


@pytest.fixture(scope="module")
def every_method():
    """A simulated Results holding every catalog method (cheap ones and trap-scale ones)."""
    rs = {name: quantized(10 + 40 * (i % 3) if i % 4 else 1900, name, seed=i, runs=200)
          for i, name in enumerate(CATALOG)}
    return fastcpu.Results(rs, {}, CLOCK, "model", "2025-01-01T00:00:00Z", label="every method")


def extent(artist):
    """`artist`'s box in display pixels, once its figure is laid out (drawn once, then reused)."""
    fig = artist.figure
    if not getattr(fig, "_drawn_for_test", False):
        fig.canvas.draw()
        fig._drawn_for_test = True
    return artist.get_window_extent(fig.canvas.get_renderer())


def overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_method_group_follows_the_catalog():
    groups = {name: plot.method_group(name) for name in CATALOG}
    assert set(groups.values()) == set(plot.GROUPS)  # every catalog method has a group, no "other"
    assert groups["gdt"] == groups["rdpid"] == groups["rseq"] == "instructions"
    assert groups["vdso"] == groups["sched_getcpu"] == "library calls"
    assert groups["syscall"] == groups["null_syscall"] == groups["pushf_popf"] == \
        "kernel entries and comparison costs"
    models = [m for m in CATALOG if m.startswith(("vgetcpu26_", "getcpu_", "glibc27_"))]
    assert models and all(groups[m] == "models" for m in models)
    assert plot.method_group("getcpu_sidt_fp") == "other"  # a former name is no method's (old files load renamed)
    chain = fastcpu.chain_methods()[0].name
    assert plot.method_group(chain) == "kernel entries and comparison costs"
    assert plot.method_group("user:mine") == plot.method_group("fast") == "other"


def test_method_group_is_the_result_rows_role(every_method):
    # a row the catalog adds (docs/extending.md's SERIALIZE example), or a role a file gives
    # that this catalog disagrees with, lands by the result's own row, with no name in plot.py
    import dataclasses

    from fastcpu.results.values import CatalogRow

    r = next(iter(every_method.values()))
    roles = {"serialize": "entry_cost", "gdt": "model", "vgetcpu26_lsl": "cpu_source", "rdpid": "library_call",
             "a_newer_role": "vector_cost"}
    given = {name: dataclasses.replace(r, method=name, catalog_row=CatalogRow("method", role, "none", "its words"))
             for name, role in roles.items()}
    assert plot.method_group(given["serialize"]) == "kernel entries and comparison costs"
    assert plot.method_group(given["gdt"]) == "models"
    assert plot.method_group(given["vgetcpu26_lsl"]) == "instructions"
    assert plot.method_group(given["rdpid"]) == "library calls"
    assert plot.method_group(given["a_newer_role"]) == "other"  # a role this fastcpu does not know
    assert plot.method_group(dataclasses.replace(r, catalog_row=None)) == "other"  # a user function's
    source = "".join(p.read_text() for p in PLOT_SOURCES)  # and the plots name no row: no table to keep
    assert [m for m in CATALOG if f'"{m}"' in source] == []


def test_ecdf_of_every_method_draws_one_panel_per_group_legends_outside(every_method):
    ax = plot.ecdf(every_method, unit="ns")
    fig = ax.figure
    panels = [a for a in fig.axes if a.get_visible()]
    # each group's instruction-scale methods, then its trap-scale ones apart, 10 at most a panel
    expected = []
    for g in plot.GROUPS:
        for title, slow in ((g, False), (plot.SLOW_PANEL.format(group=g), True)):
            n = sum(plot.method_group(m) == g and plot.is_slow(every_method[m]) == slow for m in CATALOG)
            parts = math.ceil(n / 10)
            expected += [title] if parts == 1 else [f"{title}, {i + 1} of {parts}" for i in range(parts)]
    assert [a.get_title() for a in panels] == expected
    assert "instructions: trap and system-call scale" in expected  # the fixture has both kinds
    drawn = []
    for a in panels:
        methods = [line.get_label() for line in a.lines if line.get_label() != "empty sequence"]
        drawn += methods
        assert len(methods) <= 10
        colors = [to_hex(line.get_color()) for line in a.lines if line.get_label() in methods]
        assert len(set(colors)) == len(colors), a.get_title()  # distinct colours within a panel
        legend = a.get_legend()
        assert legend is not None and not overlaps(extent(legend), extent(a))
        assert extent(legend).x0 >= extent(a).x1  # beside the axes, on the right
        assert "ns per run" in a.get_xlabel()
    assert sorted(drawn) == sorted(CATALOG)  # each method in exactly one panel
    # BenchResults given one by one (a generator, read once) are grouped the same way
    fig = plot.ecdf(iter(every_method.values())).figure
    assert len([a for a in fig.axes if a.get_visible()]) == len(expected)
    assert len(plot.ecdf_groups(every_method, ["gdt", "vdso"], ncols=1).axes) == 2


def test_ecdf_with_named_methods_or_an_axes_stays_one_panel(every_method):
    named = ["gdt", "vdso", "syscall", "getcpu_lsl"]
    ax = plot.ecdf(every_method, named)
    assert len(ax.figure.axes) == 1
    assert [line.get_label() for line in ax.lines] == ["empty sequence", *named]
    _, given = plt.subplots()
    assert plot.ecdf(every_method, ax=given) is given and len(given.figure.axes) == 1
    assert not overlaps(extent(given.get_legend()), extent(given))


def test_many_curves_on_one_panel_keep_distinct_colours(every_method):
    ax = plot.ecdf(every_method, CATALOG)
    colors = [to_hex(line.get_color()) for line in ax.lines[1:]]
    assert len(colors) == len(CATALOG) > 20 and len(set(colors)) == len(colors)


ESTIMATE = re.compile(r"ESTIMATE (-?\d+(?:\.(\d+))?) \u00b1 (\d+(?:\.\d+)?) (ticks|ns|core cycles)")


@pytest.mark.parametrize("unit, attr, label", [("ticks", "", "TSC ticks per run"),
                                               ("ns", "_ns", "ns per run"),
                                               ("cycles", "_core_cycles", "core cycles per run")])
def test_counts_title_gives_the_estimate_and_interval_in_the_unit(results, unit, attr, label):
    r = results["fast"]
    ax = plot.counts(r, unit=unit, tail=0)
    m = ESTIMATE.search(ax.get_title())
    assert m, ax.get_title()
    assert "median" not in ax.get_title()
    rounding = 0.5 * 10 ** -len(m.group(2) or "")
    assert float(m.group(1)) == pytest.approx(getattr(r, "estimate" + attr), abs=rounding)
    assert float(m.group(3)) == pytest.approx(getattr(r, "estimate_ci95" + attr), abs=rounding)
    assert m.group(4) == {"ticks": "ticks", "ns": "ns", "cycles": "core cycles"}[unit]
    assert label in ax.get_xlabel()
    scale = {"ticks": 1, "ns": 1e9 / CLOCK.tsc_hz, "cycles": CLOCK.cycles_per_tick}[unit]
    np.testing.assert_allclose(ax.lines[0].get_xdata(), np.unique(r.raw) * scale)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), np.unique(r.raw, return_counts=True)[1])


def test_distributions_take_a_unit(results):
    fig = plot.distributions(results, unit="ns")
    for ax in fig.axes:
        assert "ns per run" in ax.get_xlabel() and " ns" in ax.get_title()
    assert "ns per run" in fig._suptitle.get_text()


def test_the_not_shown_note_sits_outside_the_axes(results):
    ax = plot.counts(results["fast"])
    (note,) = [t for t in ax.texts if "not shown" in t.get_text()]
    box, axes_box = extent(note), extent(ax)
    assert not overlaps(box, axes_box) and box.y1 <= axes_box.y0
    assert not overlaps(box, extent(ax.xaxis.label))


def test_one_method_keeps_its_titles_inside_the_figure(every_method):
    fig = plot.distributions(every_method, ["getcpu_sidt_norz_nofp"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    whole = fig.bbox
    for text in (fig._suptitle, fig.axes[0].title):
        box = text.get_window_extent(renderer)
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and box.y1 <= whole.y1, text.get_text()


def major_ticks_in_view(ax):
    low, high = ax.get_xlim()
    return [t for t in ax.get_xticks() if low <= t <= high]


def assert_on_round_values(ax, step):
    """Major ticks on round values of the unit (multiples of 1, 2 or 5 times a power of ten);
    minor ticks, where drawn, on multiples of the counter's step."""
    ax.figure.canvas.draw()
    ticks = major_ticks_in_view(ax)
    assert 2 <= len(ticks) <= 9, ticks
    spacing = float(np.diff(ticks).min())
    mantissa = spacing / 10 ** math.floor(math.log10(spacing))
    assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6, (ticks, spacing)
    multiples = np.asarray(ticks) / spacing
    np.testing.assert_allclose(multiples, np.round(multiples), atol=1e-6)
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all(re.fullmatch(r"-?\d+(\.\d)?", t.replace("\u2212", "-")) for t in labels), labels
    low, high = ax.get_xlim()
    minor = [t for t in ax.xaxis.get_minorticklocs() if low <= t <= high]
    np.testing.assert_allclose(np.asarray(minor) / step, np.round(np.asarray(minor) / step), atol=1e-6)


def test_linear_axes_put_major_ticks_on_round_values_minor_ticks_on_the_counter_step(results):
    r = results["fast"]
    assert_on_round_values(plot.counts(r, tail=0), STEP)
    assert_on_round_values(plot.counts(r, unit="cycles", tail=0), STEP * CLOCK.cycles_per_tick)
    assert_on_round_values(plot.ecdf(results, ["fast"], unit="ns"), STEP * 1e9 / CLOCK.tsc_hz)


def test_machines_grid_legend_on_top_ticks_on_the_step_axis_past_the_last_step(results):
    other_clock = fastcpu.Clock(tsc_hz=2.445e9, tsc_step_ticks=24.5, cycles_per_tick=1.32)
    model = NoiseModel(step_ticks=24.5, overhead_ticks=60, interrupt_rate=0.01, interrupt_ticks=900)
    other = fastcpu.Results({"fast": model.simulate(30, 400, seed=3, clock=other_clock, method="fast")},
                            {}, other_clock, "model", "2025-01-02T00:00:00Z", label="live run")
    fig = plot.machines([results, other], unit="ns")
    panels = [a for a in fig.axes if a.get_visible()]
    (legend,) = fig.legends
    top = extent(legend)
    assert all(top.y0 >= extent(a).y1 for a in panels)  # above every panel
    title = legend.get_title().get_text()
    assert "2 sources" in title and "result file" not in title
    fast = panels[0]
    assert fast.get_title() == "fast" and fast.get_xscale() == "linear"
    step = max(STEP * 1e9 / CLOCK.tsc_hz, 24.5 * 1e9 / other_clock.tsc_hz)
    assert_on_round_values(fast, step)
    # the axis ends past the step holding the 0.995 quantile of every curve
    for res in (results, other):
        r = res["fast"]
        for runs in (r.raw, r.empty):
            q = np.quantile(r.units.convert(runs.astype(float), "ns"), 0.995, method="inverted_cdf")
            assert fast.get_xlim()[1] >= q + 0.5 * step


def published_rows():
    with open(fastcpu.__path__[0] + "/published_figures.csv", newline="") as f:
        return list(csv.DictReader(f))


def row_names(ax):
    """The method each row of a published() panel names, top to bottom."""
    return [t.get_text() for t in sorted((t for t in ax.texts if t.get_gid() == "method"),
                                         key=lambda t: t.xy[1])]


@pytest.fixture(scope="module")
def two_machines():
    def machine(label, seed):
        rs = {m: quantized(t, m, seed=seed + i) for i, (m, t) in
              enumerate([("gdt", 40), ("syscall", 1900), ("rseq", 1), ("fast", 10)])}
        return fastcpu.Results(rs, {}, CLOCK, "model", "2025-01-01T00:00:00Z", label=label)
    return [machine("machine A", 0), machine("machine B", 10)]


def test_published_plots_each_published_figure_against_each_machine_estimate(two_machines):
    fig = plot.published(two_machines)
    cycles, ns = fig.axes
    assert "Published" in fig.legends[0].get_title().get_text()
    # one row per method with a published figure, in the CSV's order
    assert row_names(cycles) == ["gdt", "rseq", "syscall"]
    assert "core cycles per call" in cycles.get_xlabel() and "ns per call" in ns.get_xlabel()
    by_gid = {(ax, line.get_gid()): line for ax in (cycles, ns) for line in ax.lines if line.get_gid()}
    for row in published_rows():
        method = row["fastcpu_method"]
        if method not in ("gdt", "syscall", "rseq"):
            continue
        ax = cycles if row["unit"] == "core cycles" else ns
        line = by_gid[(ax, f"published|{method}|{row['machine']}|{_plot_published._post(row)}")]
        value = float(row["value"]) * (1000 if row["unit"] == "us" else 1)
        assert value in list(line.get_xdata())
    for ax, attr in ((cycles, "_core_cycles"), (ns, "_ns")):
        for res in two_machines:
            for method in ("gdt", "rseq", "syscall"):
                (x,) = by_gid[(ax, f"measured|{method}|{res.name}")].get_xdata()
                assert x == pytest.approx(getattr(res[method], "estimate" + attr))
        # no two series share a height within a row: none hides another
        rows = {}
        for line in ax.lines:
            if line.get_gid():
                for y in set(line.get_ydata()):
                    rows.setdefault(round(y), []).append(y)
        assert rows and all(len(set(v)) == len(v) for v in rows.values()), rows
    # the 95% intervals are drawn as error bars
    assert any(len(c.lines[2]) for c in cycles.containers)


def test_published_tells_one_machines_posts_apart():
    # dean gaudet's P4 (and Core 2) in take 2 and in the 01-08 follow-up: two series each,
    # one shape, told apart by the fill and named by the post, at heights of their own
    data = Path(__file__).resolve().parent.parent / "data"
    fig = plot.published(sorted(data.glob("*.json*")), ["getcpu_sidt", "vgetcpu26_hit"])
    legend = {h.get_label(): (h.get_marker(), h.get_fillstyle()) for h in fig.legends[0].legend_handles}
    for machine in ("P4", "Core 2"):
        posts = {label: look for label, look in legend.items() if label.startswith(f"published: {machine} (")}
        assert len(posts) >= 2, legend
        assert len({m for m, _ in posts.values()}) == 1 and len({f for _, f in posts.values()}) == len(posts)
    for ax in fig.axes:
        heights = [y for line in ax.lines if (line.get_gid() or "").startswith("published|")
                   for y in set(line.get_ydata())]
        assert len(heights) == len(set(heights))


def test_published_takes_methods_and_a_csv(two_machines, tmp_path):
    fig = plot.published(two_machines, ["syscall"])
    assert row_names(fig.axes[0]) == ["syscall"]
    mine = tmp_path / "mine.csv"
    mine.write_text("source,machine,fastcpu_method,value,unit\nme,box,gdt,7,ns\n")
    fig = plot.published(two_machines, figures=mine)
    (line,) = [ln for ln in fig.axes[1].lines if ln.get_gid() == "published|gdt|box|me"]
    assert list(line.get_xdata()) == [7.0]


def test_a_two_tick_difference_between_instructions_shows_beside_a_trapped_sidt():
    # the Intel host's shape: a 2-tick lattice, instructions a few ticks apart, SIDT
    # emulated at thousands of ticks: the instructions' panel must resolve 2 ticks
    clock = fastcpu.Clock(2.1e9, 2.0, 1.28)
    rng = np.random.default_rng(7)

    def result(name, ticks):
        raw = (ticks + 40 + 2 * rng.integers(0, 2, 400)).astype(np.uint64)
        empty = (40 + 2 * rng.integers(0, 2, 400)).astype(np.uint64)
        return fastcpu.BenchResult.from_arrays(method=name, serialize="lfence", unroll=1, cpu=None, raw=raw,
                                               empty=empty, migrated=np.zeros(400, bool), clock=clock)

    res = fastcpu.Results({"rdpid": result("rdpid", 8), "gdt": result("gdt", 10), "sidt": result("sidt", 5000)},
                          {}, clock, "lfence", "2026-01-01T00:00:00Z", label="intel-shaped")
    fig = plot.ecdf_groups(res, unit="ticks")
    fast = next(a for a in fig.axes if a.get_title() == "instructions")
    slow = next(a for a in fig.axes if a.get_title() == "instructions: trap and system-call scale")
    assert [ln.get_label() for ln in slow.lines][1:] == ["sidt"]
    low, high = fast.get_xlim()
    assert high - low < 40 and fast.get_xscale() == "linear"  # ticks a few apart, not thousands
    ticks = [t for t in fast.get_xticks() if low <= t <= high]
    assert len(ticks) >= 3 and min(np.diff(ticks)) <= 10
