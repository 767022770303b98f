"""Plots of any file load() accepts take memory bounded by what the picture shows, not by the
runs, and seconds, not minutes, and say what they left out (issue 28 item 6).

Each case runs in a child process (a plot that copies 10**7 runs, or asks numpy for 6.4 PiB
of tick positions, must not take the test runner with it) under a generous time limit that
holds on a loaded 2-core VM; the inputs are built in memory, a block at a time."""

import json
import os
import subprocess
import sys
import textwrap

import matplotlib
import numpy as np
import pytest

import fastcpu

plot = pytest.importorskip("fastcpu.plot")
plt = matplotlib.pyplot

#: What the children share: the results built a block at a time (no temporary as large as
#: an array), and the peak resident memory (ru_maxrss) in MiB.
PRELUDE = textwrap.dedent("""
    import json, os, resource, sys, time
    import numpy as np
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import fastcpu
    from fastcpu import plot
    from fastcpu.cli import main

    def peak_mib():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def result(name, runs, shape, seed, clock):
        rng = np.random.default_rng(seed)
        raw, empty = np.empty(runs, np.uint64), np.empty(runs, np.uint64)
        block = 1 << 18
        for start in range(0, runs, block):
            n = min(block, runs - start)
            if shape == "quantized":  # a 2-tick counter, rare interrupts far out
                raw[start:start + n] = 70 + 2 * rng.integers(0, 6, n) + 4000 * (rng.random(n) < 1e-3)
                empty[start:start + n] = 60 + 2 * rng.integers(0, 6, n)
            elif shape == "forged":  # every run a value of its own
                raw[start:start + n] = rng.integers(0, 2**40, n)
                empty[start:start + n] = rng.integers(0, 2**40, n)
            else:  # "2**53": one value, a step of 1 tick below a float's resolution
                raw[start:start + n] = 2**53
                empty[start:start + n] = 2**53
        return fastcpu.BenchResult.from_arrays(method=name, serialize="lfence", unroll=1, cpu=None, raw=raw,
                                               empty=empty, migrated=np.zeros(runs, bool), clock=clock)

    def results(runs, shape, methods=("gdt", "vdso"), label="m"):
        clock = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=1 if shape == "2**53" else 2, cycles_per_tick=1.26)
        return fastcpu.Results({m: result(m, runs, shape, i, clock) for i, m in enumerate(methods)}, {}, clock,
                               "lfence", "2026-01-01T00:00:00Z", label=label)

    def draw(kind, res):
        if kind == "distributions":
            fig = plot.distributions(res)
        elif kind == "ecdf":
            fig = plot.ecdf(res).figure
        else:
            fig = plot.machines([res, res])
        fig.canvas.draw()
        plt.close(fig)
""")


def run_child(body, timeout):
    """Run PRELUDE + `body` in a fresh interpreter; return what it printed last, as JSON."""
    env = dict(os.environ, MPLBACKEND="Agg")
    try:
        p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], capture_output=True,
                           text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the plots took more than {timeout} s")
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


#: Extra peak memory a plot of millions of runs may take beyond one of few, MiB: less than
#: one array of 10**7 runs (76 MiB); the plots before this bound took about 430 MiB per
#: million runs (ecdf) and 870 (machines).
EXTRA_MIB = 48
#: AddressSanitizer holds freed memory in quarantine, so RSS grows under it by design (as in
#: test_memory.py): the CI sanitizer pass draws the plots, and checks no memory figure.
SANITIZED = bool(os.environ.get("FASTCPU_SANITIZED"))


@pytest.mark.parametrize("shape, small, runs", [("quantized", 1000, 10_000_000),
                                                ("forged", 100_000, 2_000_000),
                                                ("2**53", 1000, 1000)])
def test_plot_memory_is_bounded_by_the_picture_not_the_runs(shape, small, runs):
    # The small results are drawn first, of the same shape (past the exact counts' limit
    # where forged): what matplotlib and the code paths cost once; the large ones may add
    # only EXTRA_MIB to the peak.
    extra = run_child(f"""
        small, big = results({small}, {shape!r}), results({runs}, {shape!r})
        out = {{}}
        for kind in ("distributions", "ecdf", "machines"):
            draw(kind, small)
            before = peak_mib()
            draw(kind, big)
            out[kind] = peak_mib() - before
        print(json.dumps(out))
    """, timeout=600)
    assert SANITIZED or max(extra.values()) < EXTRA_MIB, extra


def test_plots_of_a_file_of_2000_methods_and_a_long_label_take_seconds(tmp_path):
    # 2,000 methods (a 3.9 MB file) and a 10**6-character label: each plot and CLI plot took
    # 60 to over 300 s, drawing every method and laying out the whole label
    path = tmp_path / "many.json"
    times = run_child(f"""
        res = results(50, "quantized", methods=[f"m{{i}}" for i in range(2000)], label="L" * 10**6)
        res.save({str(path)!r})
        out = {{}}
        for kind in ("distributions", "ecdf", "machines"):
            start = time.monotonic()
            draw(kind, res)
            out[kind] = time.monotonic() - start
        for kind, files in (("counts", 1), ("machines", 2)):
            start = time.monotonic()
            assert main(["plot", *[{str(path)!r}] * files, "--kind", kind, "--out",
                         os.path.join({str(tmp_path)!r}, kind + ".png")]) == 0
            out["cli " + kind] = time.monotonic() - start
        print(json.dumps(out))
    """, timeout=400)
    assert (tmp_path / "counts.png").stat().st_size and (tmp_path / "machines.png").stat().st_size
    # seconds, not minutes: generous for a loaded 2-core VM
    assert max(times.values()) < 120, times


def quantized(methods, runs=40, label="m"):
    clock = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=2, cycles_per_tick=1.26)
    rng = np.random.default_rng(0)

    def one(name):
        return fastcpu.BenchResult.from_arrays(
            method=name, serialize="lfence", unroll=1, cpu=None,
            raw=(70 + 2 * rng.integers(0, 5, runs)).astype(np.uint64),
            empty=(60 + 2 * rng.integers(0, 5, runs)).astype(np.uint64),
            migrated=np.zeros(runs, bool), clock=clock)
    return fastcpu.Results({m: one(m) for m in methods}, {}, clock, "lfence", "2026-01-01T00:00:00Z", label=label)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def visible(fig):
    return [a for a in fig.axes if a.get_visible()]


def test_every_figure_draws_at_most_its_panels_and_curves_and_says_how_many_it_left_out():
    n = 300
    res = quantized([f"m{i}" for i in range(n)])
    fig = plot.distributions(res)
    assert len(visible(fig)) == plot.PANELS_MAX
    assert f"{n - plot.PANELS_MAX} more methods not drawn" in fig._suptitle.get_text()
    fig = plot.ecdf(res).figure  # every method in one group ("other"), 10 a panel
    panels = visible(fig)
    assert len(panels) == plot.ECDF_PANELS_MAX
    drawn = sum(len(a.get_legend().get_texts()) - 1 for a in panels)  # less "empty sequence"
    assert f"{n - drawn:,} more methods not drawn" in fig._suptitle.get_text()
    ax = plot.ecdf(res, list(res))  # named: one panel
    assert len(ax.lines) == 1 + plot.SERIES_MAX + 1  # the empty sequence, the curves, the note
    assert f"{n - plot.SERIES_MAX} more methods not drawn" in ax.lines[-1].get_label()
    fig = plot.machines([res] * 30)
    assert len(visible(fig)) == plot.PANELS_MAX
    title = fig.legends[0].get_title().get_text()
    assert f"{30 - plot.SOURCES_MAX} more sources not drawn" in title
    assert f"{n - plot.PANELS_MAX} more methods not drawn" in title
    assert all(len(a.lines) <= 2 * plot.SOURCES_MAX + 2 for a in visible(fig))
    # nothing to say where nothing was left out
    fig = plot.distributions(quantized(["gdt", "vdso"]))
    assert "not drawn" not in fig._suptitle.get_text()


def test_runs_of_more_distinct_values_than_counted_exactly_are_binned_and_said():
    from fastcpu.plot import axes as _plot_data

    runs = _plot_data.DISTINCT_MAX + 5000
    clock = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=1, cycles_per_tick=1.26)
    raw = np.arange(100, 100 + runs, dtype=np.uint64)[::-1].copy()
    empty = np.arange(runs, dtype=np.uint64) % 50
    r = fastcpu.BenchResult.from_arrays(method="wide", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                        empty=empty, migrated=np.zeros(runs, bool), clock=clock)
    ax = plot.counts(r, tail=0)
    note = " ".join(t.get_text() for t in ax.texts)
    assert "runs counted in bins of" in note and "distinct values" in note
    up, down = ax.lines[0], ax.lines[1]
    assert up.get_ydata().sum() == runs and -down.get_ydata().sum() == runs  # every run in a bin
    assert len(up.get_xdata()) <= 401
    res = fastcpu.Results({"wide": r}, {}, clock, "lfence", "2026-01-01T00:00:00Z")
    assert "binned where a panel says so" in plot.distributions(res)._suptitle.get_text()
    assert "binned" not in plot.distributions(quantized(["gdt"]))._suptitle.get_text()
    # an ECDF of them: read at a grid, each drawn point exact
    ax = plot.ecdf(fastcpu.Results({"wide": r}, {}, clock, "lfence", "2026-01-01T00:00:00Z"), ["wide"], upto=1)
    x, y = np.asarray(ax.lines[1].get_xdata()), np.asarray(ax.lines[1].get_ydata())
    assert x.size <= _plot_data.GRID + 2 and y[0] == 0 and y[-1] == 1
    x, y = x[1:], y[1:]
    np.testing.assert_array_equal(y, np.searchsorted(np.sort(raw), x, side="right") / runs)


def test_ecdf_and_counts_agree_with_every_run_where_values_are_few():
    from fastcpu.plot import axes as _plot_data

    rng = np.random.default_rng(3)
    a = (rng.integers(0, 300, 700_000) * 3 + 11).astype(np.uint64)  # three blocks, 300 values
    b = rng.integers(0, 2**62, 1000).astype(np.uint64)
    for parts in ([(a, 1.0)], [(a, 0.5), (b, 1.5)]):
        curve = _plot_data.Curve(parts)
        every = np.concatenate([x.astype(np.float64) * s for x, s in parts])
        assert curve.exact and curve.runs == every.size
        values, n = np.unique(every, return_counts=True)
        np.testing.assert_array_equal(curve.values, values)
        np.testing.assert_array_equal(curve.counts, n)
        for q in (0.001, 0.5, 0.995, 1.0):
            assert _plot_data.quantile(curve, q) == np.quantile(every, q, method="inverted_cdf")
        thresholds = np.concatenate(([-1.0], np.sort(rng.choice(every, 30)), [every.max() * 2]))
        np.testing.assert_array_equal(_plot_data.at_most(curve, thresholds),
                                      [np.count_nonzero(every <= t) for t in thresholds])
