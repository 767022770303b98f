"""fastcpu.plot: exact counts, ECDFs, log axes for slow methods, units on every axis."""

import matplotlib
import numpy as np
import pytest

import fastcpu
from fastcpu._cli import main
from fastcpu.noise import NoiseModel

plot = pytest.importorskip("fastcpu.plot")
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
    ax = plot.ecdf(results, unit="ns")
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["empty sequence", "fast", "trap"]
    for line in ax.lines:
        y = np.asarray(line.get_ydata())
        assert np.all(np.diff(y) >= 0) and y[-1] == pytest.approx(1.0)
    x = np.asarray(ax.lines[2].get_xdata())
    np.testing.assert_allclose(np.sort(results["trap"].raw) / 2.6, x)  # ticks -> ns at 2.6 GHz
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
    assert fig.axes[1].get_xscale() == "log"  # syscall
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


def test_plot_never_selects_a_backend():
    import importlib

    before = matplotlib.get_backend()
    importlib.reload(plot)
    assert matplotlib.get_backend() == before
    source = open(plot.__file__).read()
    assert "matplotlib.use(" not in source and ".switch_backend(" not in source


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
