"""Text on the plots: every name a result file (or a published-figures CSV) holds is drawn as
written, never parsed as mathtext or LaTeX, and cut to a length the layout handles in
milliseconds; every figure with an interval says ESTIMATE, to the precision its interval
allows (issue 28 item 6, issue 29's plots)."""

import math
import re

import matplotlib
import numpy as np
import pytest
from matplotlib.text import Text

import fastcpu
from fastcpu.cli import main

plot = pytest.importorskip("fastcpu.plot")
plt = matplotlib.pyplot

CLOCK = fastcpu.Clock(tsc_hz=2.1e9, tsc_step_ticks=2, cycles_per_tick=1.26)

#: Strings matplotlib's mathtext cannot draw: an unknown command, an unclosed \frac, and
#: braces nested past the parser's recursion limit.
HOSTILE = [r"$\undefinedcmd{x}$", r"a $\frac{1}{$", "${" * 100 + "x" + "}" * 100 + "$"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def result(method, ticks, serialize="lfence", runs=300, seed=0, spread=3):
    rng = np.random.default_rng(seed)
    raw = (40 + ticks + 2 * rng.integers(0, spread, runs)).astype(np.uint64)
    empty = (40 + 2 * rng.integers(0, 3, runs)).astype(np.uint64)
    return fastcpu.BenchResult.from_arrays(method=method, serialize=serialize, unroll=1, cpu=None, raw=raw,
                                           empty=empty, migrated=np.zeros(runs, bool), clock=CLOCK)


def sources(text):
    """Two machines whose every text field is `text`: a label and a method on one; a model
    name, a host name, a serialization mode and a method on the other."""
    labelled = fastcpu.Results({"gdt": result("gdt", 20), text: result(text, 4, seed=1)}, {}, CLOCK,
                               "lfence", "2026-01-01T00:00:00Z", label=text)
    named = fastcpu.Results({"gdt": result("gdt", 22, text, seed=2), text: result(text, 6, text, seed=3)},
                            {"model_name": text, "hostname": text}, CLOCK, text, "2026-01-02T00:00:00Z")
    return labelled, named


def published_csv(tmp_path, text):
    """A published-figures CSV naming `text` as the method, the machine and (two posts, so
    that the legend names them) the post."""
    path = tmp_path / "figures.csv"
    if len(text) > 100_000:  # past the csv module's field limit: the sources' names only
        text = "machine"
    quoted = '"' + text.replace('"', '""') + '"'
    path.write_text("source,date,machine,fastcpu_method,value,unit\n"
                    f"{quoted},{quoted},{quoted},{quoted},7,ns\n"
                    f"other,{quoted}2,{quoted},{quoted},9,ns\n"
                    f"{quoted},{quoted},{quoted},gdt,30,core cycles\n")
    return path


def every_figure(text, tmp_path):
    """Every plot kind drawn from `text`-laden sources: (what, Figure)."""
    labelled, named = sources(text)
    yield "counts", plot.counts(labelled[text]).figure
    yield "distributions (label)", plot.distributions(labelled)
    yield "distributions (model, host, serialize)", plot.distributions(named, unit="cycles")
    yield "ecdf, a panel per group", plot.ecdf(labelled).figure
    yield "ecdf, one panel", plot.ecdf(named, ["gdt", text], unit="ns").figure
    yield "ecdf_groups", plot.ecdf_groups(named)
    yield "ecdf_machines", plot.ecdf_machines([labelled, named], text).figure
    yield "machines", plot.machines([labelled, named])
    yield "published", plot.published([labelled, named], figures=published_csv(tmp_path, text))


def texts(fig):
    return [t for t in fig.findobj(Text) if t.get_text()]


@pytest.mark.parametrize("text", HOSTILE, ids=["undefined command", "unclosed frac", "nested braces"])
def test_text_from_files_is_drawn_as_written_in_every_plot(text, tmp_path):
    fragment = text[:10]
    for what, fig in every_figure(text, tmp_path):
        fig.canvas.draw()  # mathtext would raise here: ValueError, or RecursionError
        carrying = [t for t in texts(fig) if fragment in t.get_text()]
        assert carrying, f"{what}: the text is not drawn"
        for t in carrying:
            assert not t.get_parse_math() and not t.get_usetex(), (what, t.get_text())
        assert any(t.get_text().startswith(fragment) or f" {fragment}" in t.get_text()
                   or f"\n{fragment}" in t.get_text() for t in carrying), what
        plt.close(fig)


@pytest.mark.parametrize("kind", ["counts", "ecdf", "machines"])
def test_cli_plot_draws_any_label_and_method_name(kind, tmp_path, capsys):
    for i, text in enumerate(HOSTILE):
        labelled, named = sources(text)
        labelled.save(tmp_path / f"a{i}.json")
        named.save(tmp_path / f"b{i}.json")
        files = [str(tmp_path / f"a{i}.json")] + ([str(tmp_path / f"b{i}.json")] if kind == "machines" else [])
        out = tmp_path / f"{kind}{i}.png"
        assert main(["plot", *files, "--kind", kind, "--out", str(out)]) == 0, capsys.readouterr().err
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_text_from_files_never_goes_to_latex(tmp_path):
    # with text.usetex set (a user's matplotlibrc), a name would be handed to LaTeX, where
    # \undefinedcmd fails (or where no LaTeX is installed, anything does)
    text = HOSTILE[0]
    with matplotlib.rc_context({"text.usetex": True}):
        for what, fig in every_figure(text, tmp_path):
            carrying = [t for t in texts(fig) if text[:10] in t.get_text()]
            assert carrying and not any(t.get_usetex() for t in carrying), what
            plt.close(fig)


def test_a_million_character_name_is_cut_for_drawing(tmp_path):
    long = "L" * 10**6
    for what, fig in every_figure(long, tmp_path):
        drawn = [t.get_text() for t in texts(fig)]
        assert any("L" * 50 in t for t in drawn), what
        assert max(len(line) for t in drawn for line in t.split("\n")) <= 200, what
        assert any("L\u2026" in t for t in drawn), what  # cut where the ellipsis says
        plt.close(fig)


def test_control_characters_show_escaped_and_short_names_whole():
    from fastcpu.plot.axes import NAME_MAX, name

    assert name("gdt") == "gdt" and name("x" * NAME_MAX) == "x" * NAME_MAX
    assert name("x" * (NAME_MAX + 1)) == "x" * (NAME_MAX - 1) + "\u2026"
    assert name("a\x1b[2Jb\u202e") == "a\\x1b[2Jb\\u202e"
    assert len(name("\x00" * 10**6)) == NAME_MAX


# -- issue 29: one name, ESTIMATE, and a precision chosen from the interval ------------------

FIGURE = re.compile(r"ESTIMATE (-?\d+(?:\.(\d+))?) \u00b1 (\d+(?:\.(\d+))?) ")


def significant(shown):
    """The significant digits of a written half-width: '0.094' -> '94', '1800' -> '18'."""
    return shown.replace(".", "").lstrip("0") if "." in shown else shown.strip("0") or "0"


def assert_precision_from_the_interval(title, value, half):
    m = FIGURE.search(title)
    assert m, title
    decimals = len(m.group(2) or "")
    assert decimals == len(m.group(4) or ""), title  # the value to the half-width's decimal
    if not decimals:  # tens, hundreds...: the value rounded where the half-width is
        zeros = len(m.group(3)) - len(m.group(3).rstrip("0"))
        assert m.group(1).endswith("0" * zeros), title
        decimals = -zeros
    digits = significant(m.group(3))
    # one significant digit, two where they read 10 to 35 (rounded from 100 to 354)
    assert len(digits) == 1 or (len(digits) == 2 and 10 <= int(digits) <= 35), title
    assert float(m.group(1)) == pytest.approx(value, abs=0.5 * 10 ** -decimals)
    assert float(m.group(3)) == pytest.approx(half, abs=0.5 * 10 ** -decimals)


@pytest.mark.parametrize("unit, attr", [("ticks", ""), ("ns", "_ns"), ("cycles", "_core_cycles")])
def test_every_panel_says_ESTIMATE_to_the_precision_its_interval_allows(unit, attr):
    rs = {name: result(name, ticks, runs=runs, seed=i, spread=spread) for i, (name, ticks, runs, spread) in
          enumerate([("gdt", 20, 3000, 3), ("rdpid", 0, 300, 3), ("syscall", 400, 50, 30),
                     ("rseq", 3, 30000, 3), ("sidt", 5000, 20, 3000)])}
    res = fastcpu.Results(rs, {}, CLOCK, "lfence", "2026-01-01T00:00:00Z", label="m")
    fig = plot.distributions(res, unit=unit)
    for ax in (a for a in fig.axes if a.get_visible()):
        r = res[ax.get_title().split(":")[0]]
        assert_precision_from_the_interval(ax.get_title(), getattr(r, "estimate" + attr),
                                           getattr(r, "estimate_ci95" + attr))
    for f in (fig, plot.published([res]), plot.ecdf(res).figure, plot.machines([res, res])):
        drawn = " ".join(t.get_text() for t in texts(f))
        assert not re.search(r"\bestimates?\b", drawn), drawn  # the figure's name is ESTIMATE
    legend = " ".join(t.get_text() for t in plot.published([res]).legends[0].get_texts())
    assert "ESTIMATE \u00b1 95% interval" in legend


@pytest.mark.parametrize("half, written", [
    (0.094, "0.22 \u00b1 0.09"), (1.1, "0.2 \u00b1 1.1"), (0.35, "0.22 \u00b1 0.35"),
    (0.355, "0.2 \u00b1 0.4"), (0.0996, "0.22 \u00b1 0.10"), (12.1, "0 \u00b1 12"), (0.96, "0.2 \u00b1 1.0")])
def test_the_precision_rule(half, written):
    from fastcpu.plot.axes import with_interval

    assert with_interval(0.219, half) == written


def test_counts_in_core_cycles_put_ticks_on_round_values():
    # issue 29: a 10-tick step at 1.26 core cycles per tick put ticks at 63, 75.6, 88.2
    clock = fastcpu.Clock(tsc_hz=2.1e9, tsc_step_ticks=10, cycles_per_tick=1.26)
    rng = np.random.default_rng(5)
    raw = (50 + 10 * rng.integers(0, 4, 500)).astype(np.uint64)
    empty = (40 + 10 * rng.integers(0, 2, 500)).astype(np.uint64)
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                        empty=empty, migrated=np.zeros(500, bool), clock=clock)
    ax = plot.counts(r, unit="cycles", tail=0)
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if low <= t <= high]
    spacing = float(min(np.diff(ticks)))
    mantissa = spacing / 10 ** math.floor(math.log10(spacing))
    assert any(mantissa == pytest.approx(m) for m in (1, 2, 5)), ticks
    assert all(t / spacing == pytest.approx(round(t / spacing)) for t in ticks), ticks
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and not any("." in t for t in labels), labels  # 50, 60, 70: not 63, 75.6, 88.2
