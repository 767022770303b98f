"""The bad-input catalog: every public function and every CLI option, given
wrong types, out-of-range values, unknown names, huge integers and empty
lists, raises a precise exception whose message names the fix.

Each row is (call, exception, regex the message must match). The CLI rows are
(argv, regex): exit status 2, exactly one line on stderr, no traceback.
"""

import ctypes
import io
import math
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import fastcpu
from fastcpu import export, noise
from fastcpu.cli import main
from pinning import CPUS, on_cpu

HUGE = 10**30
DID_YOU_MEAN = "unknown method 'rdpidd': did you mean 'rdpid'"
AN_INT = [None, "10", 10.0, True]  # wrong types where an int is wanted
DATA = ctypes.create_string_buffer(64)  # memory that is not code


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    """A small Results, one of its BenchResults, a saved file, a directory."""
    tmp = tmp_path_factory.mktemp("bad_input")
    res = fastcpu.measure(20, ["gdt", "syscall"])
    res.save(tmp / "good.json")
    (tmp / "foreign.json").write_text("{}")
    (tmp / "d").mkdir()
    os.mkfifo(tmp / "fifo")  # never opened for writing: reading it would wait forever
    return SimpleNamespace(res=res, r=res["gdt"], tmp=tmp, good=str(tmp / "good.json"), fifo=str(tmp / "fifo"),
                           foreign=str(tmp / "foreign.json"), dir=str(tmp / "d"),
                           missing=str(tmp / "missing.json"), nodir=str(tmp / "nodir" / "x.json"),
                           model=noise.NoiseModel())


def row(call, exc, match, id_):
    return pytest.param(call, exc, match, id=id_)


# -- bench, bench_diff ---------------------------------------------------------

BENCH = [
    *(row(lambda c, m=m: fastcpu.bench(m, 10), TypeError, "method must be a method name", f"method={m!r}")
      for m in [None, 1.5, b"gdt", ["gdt"], True]),
    row(lambda c: fastcpu.bench("", 10), ValueError, "unknown method '': valid methods are", "method=''"),
    row(lambda c: fastcpu.bench("rdpidd", 10), ValueError, DID_YOU_MEAN, "method=rdpidd"),
    *(row(lambda c, a=a: fastcpu.bench(a, 10), ValueError, r"address must be in 1\.\.2\*\*64-1", f"address={a}")
      for a in [0, -1, HUGE]),
    *(row(lambda c, f=f: f(ctypes.addressof(DATA), 10), ValueError,
          r"address 0x[0-9a-f]+ is not in an executable mapping of this process", f"{f.__name__}(data address)")
      for f in (fastcpu.bench, fastcpu.bench_diff)),
    row(lambda c: fastcpu.bench(ctypes.cast(DATA, ctypes.CFUNCTYPE(ctypes.c_uint)), 10), ValueError,
        "is not in an executable mapping", "bench(ctypes pointer to data)"),
    *(row(lambda c, n=n: fastcpu.bench("gdt", n), TypeError, "runs must be an int, not", f"runs={n!r}")
      for n in AN_INT),
    *(row(lambda c, n=n: fastcpu.bench("gdt", n), ValueError, "runs must be between 1 and 100000000", f"runs={n}")
      for n in [0, -1, fastcpu.limits.RUNS_MAX + 1, HUGE]),
    *(row(lambda c, k=k: fastcpu.bench("gdt", 10, unroll=k), TypeError, "unroll must be an int", f"unroll={k!r}")
      for k in AN_INT),
    *(row(lambda c, k=k: fastcpu.bench("gdt", 10, unroll=k), ValueError, "unroll must be between 1 and 65536",
          f"unroll={k}")
      for k in [0, -1, fastcpu.limits.UNROLL_MAX + 1, HUGE]),
    *(row(lambda c, s=s: fastcpu.bench("gdt", 10, serialize=s), TypeError, "serialize must be a str", f"ser={s!r}")
      for s in [None, 1, ["lfence"]]),
    *(row(lambda c, s=s: fastcpu.bench("gdt", 10, serialize=s), ValueError,
          "unknown serialize mode .*: use one of lfence, cpuid, rdtscp", f"ser={s!r}")
      for s in ["", "mfence", "LFENCE"]),
    *(row(lambda c, x=x: fastcpu.bench("gdt", 10, cpu=x), TypeError, "cpu must be an int or None", f"cpu={x!r}")
      for x in ["0", 0.0, True, [0]]),
    *(row(lambda c, x=x: fastcpu.bench("gdt", 10, cpu=x), ValueError,
          r"not in this thread's affinity mask \[.*\]: pass one of those, or None", f"cpu={x}")
      for x in [-1, 100_000, HUGE]),
    *(row(lambda c, x=x: fastcpu.bench("gdt", 10, counter=x), TypeError, "counter must be a str", f"counter={x!r}")
      for x in [None, 0]),
    *(row(lambda c, x=x: fastcpu.bench("gdt", 10, counter=x), ValueError, "unknown counter .*: use 'tsc' or 'pmu'",
          f"counter={x!r}")
      for x in ["", "hpet"]),
    row(lambda c: fastcpu.bench("gdt", 10, counter="pmu", serialize="rdtscp"), ValueError,
        "with counter='pmu' use 'lfence' or 'cpuid'", "pmu+rdtscp"),
    row(lambda c: fastcpu.bench("gdt", 10, clock="tsc"), TypeError, "unexpected keyword argument 'clock'",
        "clock= (removed in 0.9.0)"),
    row(lambda c: fastcpu.bench_diff("rdpidd"), ValueError, DID_YOU_MEAN, "diff method"),
    row(lambda c: fastcpu.bench_diff("gdt", 0), ValueError, "runs must be between", "diff runs=0"),
    *(row(lambda c, k=k: fastcpu.bench_diff("gdt", 10, k=k), TypeError, "k must be an int", f"diff k={k!r}")
      for k in AN_INT),
    *(row(lambda c, k=k: fastcpu.bench_diff("gdt", 10, k=k), ValueError, "k must be between 2 and 32768",
          f"diff k={k}")
      for k in [0, 1, -1, fastcpu.limits.UNROLL_MAX // 2 + 1, HUGE]),
    row(lambda c: fastcpu.bench_diff("gdt", 10, serialize="x"), ValueError, "use one of lfence", "diff ser"),
    row(lambda c: fastcpu.bench_diff("gdt", 10, cpu=-1), ValueError, "affinity mask", "diff cpu"),
]


# -- selftest ---------------------------------------------------------------------

SELFTEST = [
    row(lambda c: fastcpu.selftest(runs=0), ValueError, "runs must be between 10", "selftest runs=0"),
    *(row(lambda c, v=v: fastcpu.selftest(rounds=v), TypeError, "rounds must be an int", f"selftest rounds={v!r}")
      for v in AN_INT if v is not None),
    row(lambda c: fastcpu.selftest(serialize="mfence"), ValueError, "use one of lfence", "selftest serialize"),
    row(lambda c: fastcpu.selftest(serialize=3), TypeError, "serialize must be a str", "selftest serialize=3"),
    row(lambda c: fastcpu.selftest(paths=("both",)), ValueError, "unknown path 'both'", "selftest paths"),
    row(lambda c: fastcpu.selftest(paths="inline"), TypeError, "paths must be a tuple", "selftest paths=str"),
    row(lambda c: fastcpu.selftest(cpu=-1), ValueError, "affinity mask", "selftest cpu=-1"),
    row(lambda c: fastcpu.selftest(cpu="0"), TypeError, "cpu must be an int", "selftest cpu='0'"),
    row(lambda c: fastcpu.selftest(progress=3), TypeError, "progress must be callable or None, not int",
        "selftest progress=3"),
]


# -- read, read_raw, getcpu*, method_code ---------------------------------------

READ = [
    *(row(lambda c, f=f, m=m: f(m), TypeError, "method must be a str naming a method", f"{f.__name__}({m!r})")
      for f in (fastcpu.read, fastcpu.read_raw) for m in [None, 3, HUGE, b"gdt", ["gdt"], True]),
    *(row(lambda c, f=f: f(""), ValueError, "unknown method ''", f"{f.__name__}('')")
      for f in (fastcpu.read, fastcpu.read_raw)),
    *(row(lambda c, f=f: f("rdpidd"), ValueError, DID_YOU_MEAN, f"{f.__name__}(rdpidd)")
      for f in (fastcpu.read, fastcpu.read_raw)),
    row(lambda c: fastcpu.read("null_syscall"), fastcpu.Unsupported, "null_syscall: ", "read(null_syscall)"),
    row(lambda c: fastcpu.read("empty"), fastcpu.Unsupported, "empty: it reports no CPU", "read(empty)"),
    row(lambda c: fastcpu.read("add_chain_1"), fastcpu.Unsupported, "a known-cost chain reports no CPU",
        "read(chain)"),
    row(lambda c: fastcpu.methods("gdt"), TypeError, "takes 0 positional arguments", "methods('gdt')"),
    row(lambda c: fastcpu.chain_methods(1), TypeError, "takes 0 positional arguments",
        "chain_methods(1)"),
    row(lambda c: fastcpu.getcpu(1), TypeError, "takes no arguments", "getcpu(1)"),
    row(lambda c: fastcpu.getcpu_node(None), TypeError, "takes no arguments", "getcpu_node(None)"),
    *(row(lambda c, x=x: fastcpu.getcpu_method(x), TypeError, "node must be a bool", f"getcpu_method({x!r})")
      for x in [None, 1, "yes"]),
    *(row(lambda c, m=m: fastcpu.method_code(m), TypeError, "method must be a str", f"method_code({m!r})")
      for m in [None, 1]),
    row(lambda c: fastcpu.method_code(""), ValueError, "unknown method ''", "method_code('')"),
    row(lambda c: fastcpu.method_code("rdpidd"), ValueError, DID_YOU_MEAN, "method_code(rdpidd)"),
    row(lambda c: fastcpu.method_code("gdt", disassembler=None), TypeError,
        "disassembler must be a str, one of auto, objdump, capstone, none", "disassembler=None"),
    row(lambda c: fastcpu.method_code("gdt", disassembler="gdb"), ValueError,
        "unknown disassembler 'gdb': use one of auto, objdump, capstone, none", "disassembler=gdb"),
]


# -- check -----------------------------------------------------------------------

CHECK = [
    row(lambda c: fastcpu.check("gdt"), TypeError, r"not one str: pass \['gdt'\]", "names='gdt'"),
    row(lambda c: fastcpu.check(5), TypeError, "names must be a list of method names or None, not int",
        "names=5"),
    row(lambda c: fastcpu.check([None]), TypeError, "method must be a str", "names=[None]"),
    row(lambda c: fastcpu.check([]), ValueError, "names is empty: name at least one method, or pass None",
        "names=[]"),
    row(lambda c: fastcpu.check(["rdpidd"]), ValueError, DID_YOU_MEAN, "names=[rdpidd]"),
    row(lambda c: fastcpu.check(["gdt", "gdt"]), ValueError, "'gdt' is named twice", "names twice"),
    *(row(lambda c, x=x: fastcpu.check(None, x), TypeError, "cpus must be a list of CPU numbers", f"cpus={x!r}")
      for x in [0, "0", 1.5]),
    *(row(lambda c, x=x: fastcpu.check(None, [x]), TypeError, "cpus must hold ints", f"cpus=[{x!r}]")
      for x in ["0", 0.0, True, None]),
    row(lambda c: fastcpu.check(None, []), ValueError, "cpus is empty: name at least one CPU, or pass None",
        "cpus=[]"),
    row(lambda c: fastcpu.check(None, [-1]), ValueError, "CPU numbers are 0 or more", "cpus=[-1]"),
    *(row(lambda c, x=x: fastcpu.check(None, [x]), ValueError, "this kernel has CPUs 0 to", f"cpus=[{x}]")
      for x in [100_000, HUGE]),
    row(lambda c: fastcpu.check(None, [CPUS[0], CPUS[0]]), ValueError, "names CPU .* twice", "cpus twice"),
]


# -- measure, Results.save, load, compare, stability, clock -------------------------

RESULTS = [
    *(row(lambda c, n=n: fastcpu.measure(n, ["gdt"]), TypeError, "runs must be an int", f"measure runs={n!r}")
      for n in AN_INT),
    *(row(lambda c, n=n: fastcpu.measure(n, ["gdt"]), ValueError, "runs must be between 1 and 100000000",
          f"measure runs={n}")
      for n in [0, -1, fastcpu.limits.RUNS_MAX + 1, HUGE]),
    row(lambda c: fastcpu.measure(5, 5), TypeError, "methods must be a list of method names or None",
        "measure methods=5"),
    row(lambda c: fastcpu.measure(5, [5]), TypeError, "method must be a str", "measure methods=[5]"),
    row(lambda c: fastcpu.measure(5, []), ValueError, "methods is empty: name at least one method",
        "measure methods=[]"),
    row(lambda c: fastcpu.measure(5, ["gdt", "gdt"]), ValueError, "named twice", "measure twice"),
    row(lambda c: fastcpu.measure(5, ["rdpidd"]), ValueError, DID_YOU_MEAN, "measure rdpidd"),
    row(lambda c: fastcpu.measure(5, ["gdt"], None), TypeError, "serialize must be a str", "measure ser=None"),
    row(lambda c: fastcpu.measure(5, ["gdt"], "x"), ValueError, "use one of lfence", "measure ser=x"),
    row(lambda c: fastcpu.measure(5, ["gdt"], unroll=0), ValueError, "unroll must be between", "measure unroll"),
    row(lambda c: fastcpu.measure(5, ["gdt"], unroll=HUGE), ValueError, "unroll must be between",
        "measure unroll huge"),
    row(lambda c: fastcpu.measure(5, ["gdt"], cpu=-1), ValueError, "affinity mask", "measure cpu=-1"),
    row(lambda c: fastcpu.measure(5, ["gdt"], cpu="0"), TypeError, "cpu must be an int", "measure cpu='0'"),
    row(lambda c: fastcpu.measure(5, ["gdt"], progress=1), TypeError, "progress must be callable",
        "measure progress"),
    row(lambda c: fastcpu.measure(5, ["gdt"], label=1), TypeError, "label must be a str or None",
        "measure label"),
    row(lambda c: fastcpu.measure(5, ["gdt"], label="a\ud800"), ValueError,
        r"label 'a\\ud800' holds a lone surrogate \(U\+D800\), which is not text: give the label as UTF-8",
        "measure label=lone surrogate"),
    *(row(lambda c, p=p: c.res.save(p), TypeError, "path must be a str or os.PathLike", f"save({p!r})")
      for p in [None, 5, b"x.json"]),
    row(lambda c: c.res.save(""), ValueError, "path is empty: give the result file's name", "save('')"),
    row(lambda c: c.res.save(c.dir), IsADirectoryError, "is a directory: give a file name", "save(dir)"),
    row(lambda c: c.res.save(c.nodir), FileNotFoundError, "directory .*nodir does not exist",
        "save(nodir)"),
    row(lambda c: c.res.save(c.good), FileExistsError, "exists: pass overwrite=True", "save(exists)"),
    *(row(lambda c, o=o: c.res.save(c.missing, overwrite=o), TypeError, "overwrite must be a bool",
          f"save overwrite={o!r}")
      for o in [1, "yes", None]),
    *(row(lambda c, p=p: fastcpu.load(p), TypeError, "path must be a str or os.PathLike", f"load({p!r})")
      for p in [None, 5, b"x.json", ["x.json"]]),
    row(lambda c: fastcpu.load(""), ValueError, "path is empty", "load('')"),
    row(lambda c: fastcpu.load(c.dir), IsADirectoryError, "Is a directory, not a result file written by",
        "load(dir)"),
    row(lambda c: fastcpu.load(c.missing), FileNotFoundError, "No such file", "load(missing)"),
    row(lambda c: fastcpu.load(c.foreign), fastcpu.ResultFileError, "not a fastcpu result file",
        "load(foreign)"),
    row(lambda c: fastcpu.load(c.fifo), fastcpu.ResultFileError, "a FIFO, not a result file", "load(fifo)"),
    row(lambda c: fastcpu.load("/dev/zero"), fastcpu.ResultFileError, "a character device, not a result file",
        "load(/dev/zero)"),
    row(lambda c: fastcpu.compare(), ValueError, "needs at least one Results or result file path",
        "compare()"),
    *(row(lambda c, x=x: fastcpu.compare(x), TypeError, "takes fastcpu.Results or paths of result files",
          f"compare({type(x).__name__})")
      for x in [None, 5, []]),
    row(lambda c: fastcpu.compare([c.res]), TypeError, "not list", "compare([res])"),
    row(lambda c: fastcpu.compare(""), ValueError, "path is empty", "compare('')"),
    row(lambda c: fastcpu.compare(c.foreign), fastcpu.ResultFileError, "not a fastcpu result file",
        "compare(foreign)"),
    *(row(lambda c, x=x: fastcpu.compare(c.res, confidence=x), ValueError,
          r"confidence must be between 0 and 1 \(e.g. 0.95\)", f"confidence={x}")
      for x in [0, 1, -0.5, 95, math.nan, math.inf]),
    *(row(lambda c, x=x: fastcpu.compare(c.res, confidence=x), TypeError, "confidence must be a number",
          f"confidence={x!r}")
      for x in [None, True, "0.9"]),
    *(row(lambda c, x=x: fastcpu.compare(c.res, dataframe=x), TypeError,
          "dataframe must be None, True or False", f"dataframe={x!r}")
      for x in [1, 0, "yes"]),
    row(lambda c: fastcpu.compare(c.res, dataframe=False).format(layout="wide"), ValueError,
        "unknown layout 'wide': use one of machines, rows", "ComparisonTable.format layout=wide"),
    row(lambda c: fastcpu.compare(c.res, dataframe=False).format(layout=None), TypeError,
        r"layout must be a str \(machines, rows, markdown\), not NoneType", "ComparisonTable.format layout=None"),
    row(lambda c: fastcpu.compare(c.res, dataframe=False).format("parsecs"), ValueError,
        "unknown unit 'parsecs': use one of ticks, ns, cycles", "ComparisonTable.format unit=parsecs"),
    row(lambda c: fastcpu.Results({}, {}, None, "lfence", "2025-01-31T12:00:00Z"), TypeError,
        "clock must be a fastcpu.Clock", "Results(clock=None)"),
    row(lambda c: fastcpu.Results({}, {}, c.res.clock, "lfence", "", label=b"x"), TypeError,
        "label must be a str or None, not bytes", "Results(label=bytes)"),
    row(lambda c: fastcpu.Results({}, {}, c.res.clock, "lfence", "", label="\udcff\udcfe"), ValueError,
        "holds the byte 0xff, which is not UTF-8: give the label as UTF-8 text", "Results(label=undecoded bytes)"),
    row(lambda c: fastcpu.Results({"syscall": c.r}, {}, c.res.clock, "lfence", ""), ValueError,
        "results\\['syscall'\\] holds method 'gdt': key it by its method", "Results(wrong key)"),
    row(lambda c: fastcpu.stability(None), TypeError, "reports on one fastcpu.BenchResult, not NoneType",
        "stability(None)"),
    row(lambda c: fastcpu.stability(c.res), TypeError, r"pick one, e.g. results\['gdt'\]", "stability(res)"),
    row(lambda c: fastcpu.stability(c.r, 5), TypeError, "machine must be a dict of machine facts",
        "stability machine=5"),
    row(lambda c: fastcpu.stability(c.r, {"governors": 5}), TypeError,
        r"machine\['governors'\] must map CPU numbers", "stability governors=5"),
    row(lambda c: fastcpu.stability(c.r, {"isolated_cpus": "0-1"}), TypeError,
        r"machine\['isolated_cpus'\] must be a list", "stability isolated='0-1'"),
    *(row(lambda c, x=x: fastcpu.clock(refresh=x), TypeError, "refresh must be a bool", f"refresh={x!r}")
      for x in [None, 1, "yes"]),
    row(lambda c: fastcpu.clock(True), TypeError, "positional", "clock(True)"),
]


# -- fastcpu.plot --------------------------------------------------------------------

def _plot():
    from fastcpu import plot

    return plot


PLOT = [
    row(lambda c: _plot().counts(None), TypeError, "counts\\(\\) draws one BenchResult", "counts(None)"),
    row(lambda c: _plot().counts(c.res), TypeError, "not Results", "counts(res)"),
    *(row(lambda c, t=t: _plot().counts(c.r, tail=t), ValueError, r"tail must be a fraction of the runs in \[0, 1\)",
          f"counts tail={t}")
      for t in [1, -0.1, math.nan]),
    *(row(lambda c, t=t: _plot().counts(c.r, tail=t), TypeError, "tail must be a number", f"counts tail={t!r}")
      for t in [None, "0.1"]),
    row(lambda c: _plot().counts(c.r, log_x="yes"), TypeError, "log_x must be True, False or None",
        "counts log_x"),
    row(lambda c: _plot().counts(c.r, ax=5), TypeError, "ax must be a matplotlib Axes or None", "counts ax"),
    row(lambda c: _plot().distributions(None), TypeError, "expected fastcpu.Results or BenchResults",
        "distributions(None)"),
    row(lambda c: _plot().distributions([]), ValueError, "nothing to plot", "distributions([])"),
    row(lambda c: _plot().distributions(c.res, []), ValueError, "nothing to plot", "distributions methods=[]"),
    row(lambda c: _plot().distributions(c.res, "gdt"), TypeError, r"not one str: pass \['gdt'\]",
        "distributions methods='gdt'"),
    row(lambda c: _plot().distributions(c.res, [None]), TypeError, "methods must hold method names",
        "distributions methods=[None]"),
    row(lambda c: _plot().distributions(c.res, ["nope"]), ValueError, "'nope' not measured in .*; measured: gdt",
        "distributions methods=[nope]"),
    row(lambda c: _plot().distributions(c.res, ncols=0), ValueError, "ncols must be an int >= 1",
        "distributions ncols=0"),
    row(lambda c: _plot().distributions(c.res, ncols=None), TypeError, "ncols must be an int >= 1",
        "distributions ncols=None"),
    row(lambda c: _plot().distributions(c.res, tail=2), ValueError, "tail must be a fraction",
        "distributions tail=2"),
    row(lambda c: _plot().ecdf(None), TypeError, "expected fastcpu.Results", "ecdf(None)"),
    *(row(lambda c, u=u: _plot().ecdf(c.res, unit=u), TypeError, r"unit must be a str \(ticks, ns or cycles\)",
          f"ecdf unit={u!r}")
      for u in [None, []]),
    row(lambda c: _plot().ecdf(c.res, unit="s"), ValueError, "unknown unit 's': use one of ticks, ns, cycles",
        "ecdf unit=s"),
    *(row(lambda c, u=u: _plot().ecdf(c.res, upto=u), ValueError, r"upto must be a quantile in \(0, 1\]",
          f"ecdf upto={u}")
      for u in [0, 1.5, math.nan]),
    row(lambda c: _plot().ecdf(c.res, upto=None), TypeError, "upto must be a number", "ecdf upto=None"),
    row(lambda c: _plot().ecdf_machines(c.res, "gdt"), TypeError, "not one Results: wrap it in a list",
        "ecdf_machines(res)"),
    row(lambda c: _plot().ecdf_machines(c.good, "gdt"), TypeError, "not one str: wrap it in a list",
        "ecdf_machines(path)"),
    row(lambda c: _plot().ecdf_machines(None, "gdt"), TypeError, "sources must be a list", "ecdf_machines(None)"),
    row(lambda c: _plot().ecdf_machines([], "gdt"), ValueError, "give at least one Results or result file",
        "ecdf_machines([])"),
    row(lambda c: _plot().ecdf_machines([c.res], None), TypeError, "method must be a method name",
        "ecdf_machines method=None"),
    row(lambda c: _plot().ecdf_machines([c.res], "nope"), ValueError, "'nope' was measured on none",
        "ecdf_machines method=nope"),
    row(lambda c: _plot().ecdf_machines([5], "gdt"), TypeError, "expected fastcpu.Results or a result file path",
        "ecdf_machines([5])"),
    row(lambda c: _plot().ecdf_machines([c.res], "gdt", legend="yes"), TypeError, "legend must be a bool",
        "ecdf_machines legend"),
    row(lambda c: _plot().machines([]), ValueError, "give at least one", "machines([])"),
    row(lambda c: _plot().machines(None), TypeError, "sources must be a list", "machines(None)"),
    row(lambda c: _plot().machines([c.res], "gdt"), TypeError, "not one str", "machines methods='gdt'"),
    row(lambda c: _plot().machines([c.res], []), ValueError, "nothing to plot", "machines methods=[]"),
    row(lambda c: _plot().machines([c.res], ["nope"]), ValueError, "'nope' was measured on none",
        "machines methods=[nope]"),
    row(lambda c: _plot().machines([c.res], ncols=0), ValueError, "ncols must be an int >= 1",
        "machines ncols=0"),
    row(lambda c: _plot().machines([c.res], unit="x"), ValueError, "unknown unit 'x'", "machines unit=x"),
    row(lambda c: _plot().machines([c.missing]), FileNotFoundError, "No such file", "machines([missing])"),
    row(lambda c: _plot().is_slow(None), TypeError, "is_slow\\(\\) takes one BenchResult", "is_slow(None)"),
    # issue 13: a unit for counts and distributions, ecdf_groups, method_group, published
    row(lambda c: _plot().counts(c.r, unit="s"), ValueError, "unknown unit 's': use one of ticks, ns, cycles",
        "counts unit=s"),
    row(lambda c: _plot().counts(c.r, unit=None), TypeError, r"unit must be a str \(ticks, ns or cycles\)",
        "counts unit=None"),
    row(lambda c: _plot().distributions(c.res, unit="x"), ValueError, "unknown unit 'x'", "distributions unit=x"),
    row(lambda c: _plot().distributions(c.res, unit=1), TypeError, "unit must be a str", "distributions unit=1"),
    row(lambda c: _plot().ecdf_groups(None), TypeError, "expected fastcpu.Results", "ecdf_groups(None)"),
    row(lambda c: _plot().ecdf_groups(c.res, []), ValueError, "nothing to plot", "ecdf_groups methods=[]"),
    row(lambda c: _plot().ecdf_groups(c.res, "gdt"), TypeError, r"not one str: pass \['gdt'\]",
        "ecdf_groups methods='gdt'"),
    row(lambda c: _plot().ecdf_groups(c.res, ["nope"]), ValueError, "'nope' not measured",
        "ecdf_groups methods=[nope]"),
    row(lambda c: _plot().ecdf_groups(c.res, unit="s"), ValueError, "unknown unit 's'", "ecdf_groups unit=s"),
    row(lambda c: _plot().ecdf_groups(c.res, log_x="yes"), TypeError, "log_x must be True, False or None",
        "ecdf_groups log_x"),
    row(lambda c: _plot().ecdf_groups(c.res, upto=0), ValueError, r"upto must be a quantile in \(0, 1\]",
        "ecdf_groups upto=0"),
    row(lambda c: _plot().ecdf_groups(c.res, ncols=0), ValueError, "ncols must be an int >= 1",
        "ecdf_groups ncols=0"),
    row(lambda c: _plot().ecdf_groups(c.res, ncols=1.5), TypeError, "ncols must be an int >= 1",
        "ecdf_groups ncols=1.5"),
    *(row(lambda c, n=n: _plot().method_group(n), TypeError, r"method_group\(\) takes a method name \(str\)",
          f"method_group({n!r})") for n in [None, 5, ["gdt"]]),
    row(lambda c: _plot().published(None), TypeError, "sources must be a list", "published(None)"),
    row(lambda c: _plot().published(c.res), TypeError, "not one Results: wrap it in a list", "published(res)"),
    row(lambda c: _plot().published([]), ValueError, "give at least one Results or result file",
        "published([])"),
    row(lambda c: _plot().published([c.missing]), FileNotFoundError, "No such file", "published([missing])"),
    row(lambda c: _plot().published([c.res], "gdt"), TypeError, r"not one str: pass \['gdt'\]",
        "published methods='gdt'"),
    row(lambda c: _plot().published([c.res], []), ValueError, "nothing to plot", "published methods=[]"),
    row(lambda c: _plot().published([c.res], ["nope"]), ValueError, "no published figure for 'nope'; published: ",
        "published methods=[nope]"),
    row(lambda c: _plot().published([c.res], figures=5), TypeError, "figures must be a CSV path or None",
        "published figures=5"),
    row(lambda c: _plot().published([c.res], figures=c.missing), FileNotFoundError, "No such file",
        "published figures=missing"),
    row(lambda c: _plot().published([c.res], figures=c.foreign), ValueError, "is not a published-figures CSV",
        "published figures=foreign"),
]


# -- fastcpu.noise -------------------------------------------------------------------

NOISE = [
    row(lambda c: noise.NoiseModel(step_ticks=0), ValueError, "step_ticks must be between 1 and", "step=0"),
    row(lambda c: noise.NoiseModel(step_ticks=HUGE), ValueError, "step_ticks must be between 1 and",
        "step=huge"),
    row(lambda c: noise.NoiseModel(step_ticks=0.5), ValueError, "step_ticks must be between 1 and", "step=0.5"),
    *(row(lambda c, x=x: noise.NoiseModel(step_ticks=x), TypeError, "step_ticks must be a number", f"step={x!r}")
      for x in [None, "26", True]),
    *(row(lambda c, x=x: noise.NoiseModel(jitter_ticks=x), ValueError, "jitter_ticks must be a finite number >= 0",
          f"jitter={x}")
      for x in [-1, math.nan, math.inf]),
    row(lambda c: noise.NoiseModel(overhead_ticks="60"), TypeError, "overhead_ticks must be a number",
        "overhead='60'"),
    row(lambda c: noise.NoiseModel(interrupt_rate=2), ValueError, "interrupt_rate is a probability: 0 to 1",
        "rate=2"),
    row(lambda c: c.model.simulate(None), TypeError, "true_ticks must be a number", "simulate(None)"),
    *(row(lambda c, x=x: c.model.simulate(x), ValueError, "true_ticks must be a finite number >= 0",
          f"simulate({x})")
      for x in [-1.0, math.inf]),
    row(lambda c: c.model.simulate(1.0, 0), ValueError, "runs must be between", "simulate runs=0"),
    row(lambda c: c.model.simulate(1.0, HUGE), ValueError, "runs must be between", "simulate runs=huge"),
    row(lambda c: c.model.simulate(1.0, 10, unroll=0), ValueError, "unroll must be between", "simulate unroll=0"),
    row(lambda c: c.model.simulate(1.0, 10, clock=5), TypeError, "clock must be a fastcpu.Clock or None",
        "simulate clock=5"),
    row(lambda c: c.model.simulate(1.0, 10, method=5), TypeError, "method must be a str", "simulate method=5"),
    row(lambda c: c.model.simulate(1.0, 10, seed="x"), TypeError, "int", "simulate seed='x'"),
    row(lambda c: noise.NoiseModel.fit(None), TypeError, "result must be a fastcpu.BenchResult", "fit(None)"),
    *(row(lambda c, f=f: f(c.res), TypeError, "result must be a fastcpu.BenchResult, not Results",
          f"{f.__name__}(res)")
      for f in (noise.estimates, noise.mean_ticks, noise.paired_mean_ticks)),
    row(lambda c: noise.unroll_difference(None, c.r), TypeError, "short must be a fastcpu.BenchResult",
        "unroll_difference(None)"),
    row(lambda c: noise.unroll_difference(c.r, c.r), ValueError, r"long.unroll \(1\) must exceed",
        "unroll_difference same"),
    row(lambda c: noise.unroll_difference(c.r, c.r, "max"), ValueError, "unknown statistic 'max': use one of",
        "statistic=max"),
    row(lambda c: noise.unroll_difference(c.r, c.r, None), TypeError, "statistic must be a str",
        "statistic=None"),
    row(lambda c: noise.recovery(None, [1.0]), TypeError, "model must be a fastcpu.noise.NoiseModel",
        "recovery(None)"),
    row(lambda c: noise.recovery(c.model, None), TypeError, "true_ticks must be a list of numbers",
        "recovery true=None"),
    row(lambda c: noise.recovery(c.model, []), ValueError, "true_ticks is empty", "recovery true=[]"),
    row(lambda c: noise.recovery(c.model, [None]), TypeError, "true_ticks must be a number",
        "recovery true=[None]"),
    row(lambda c: noise.recovery(c.model, [-1.0]), ValueError, "finite number >= 0", "recovery true=[-1]"),
    row(lambda c: noise.recovery(c.model, [1.0], 0), ValueError, "runs must be between", "recovery runs=0"),
    *(row(lambda c, k=k: noise.recovery(c.model, [1.0], 10, unroll=k), ValueError,
          "unroll must be between 1 and 32768", f"recovery unroll={k}")
      for k in [0, fastcpu.limits.UNROLL_MAX, HUGE]),
    row(lambda c: noise.P4Figure("x", "49", 30.0, 100.0, "s"), TypeError, "core_cycles must be a number",
        "P4Figure cycles='49'"),
    *(row(lambda c, x=x: noise.P4Figure("x", x, 30.0, 100.0, "s"), ValueError,
          "core_cycles must be a finite number >= 0", f"P4Figure cycles={x}")
      for x in [-1.0, math.nan]),
    row(lambda c: noise.P4Figure("x", 49.0, 100.0, 30.0, "s"), ValueError,
        r"seed_low_core_cycles \(100.0\) must not exceed", "P4Figure low>high"),
    row(lambda c: noise.P4Figure(None, 49.0, 30.0, 100.0, "s"), TypeError, "what must be a str",
        "P4Figure what=None"),
    row(lambda c: noise.p4_shadow_interval([]), ValueError, "give at least one", "p4_shadow_interval([])"),
    row(lambda c: noise.p4_shadow_interval([49.0]), TypeError, "must be fastcpu.noise.P4Figure",
        "p4_shadow_interval([49.0])"),
    row(lambda c: noise.p4_shadow_interval([noise.P4Figure("x", 20.0, 30.0, 100.0, "s"),
                                            noise.P4Figure("y", 37.0, 4.0, 21.0, "s")]),
        ValueError, "no shadow fits these figures", "p4_shadow_interval inconsistent"),
    row(lambda c: noise.fit_p4_regime([]), ValueError, "give at least one", "fit_p4_regime([])"),
    row(lambda c: noise.p4_held_out("P4"), TypeError, "model must be a fastcpu.noise.NoiseModel",
        "p4_held_out('P4')"),
    row(lambda c: noise.p4_held_out(c.model, [49.0]), TypeError, "must be fastcpu.noise.P4Figure",
        "p4_held_out figures=[49.0]"),
    row(lambda c: noise.p4_held_out(c.model, runs=0), ValueError, "runs must be between", "p4_held_out runs=0"),
    row(lambda c: noise.cost_interval_ticks(4.0), TypeError, "result must be a fastcpu.BenchResult or DiffResult",
        "cost_interval_ticks(4.0)"),
    row(lambda c: noise.shadow_verdict(3.0, (0.0, 1.0)), TypeError, r"single must be a \(low, high\) pair",
        "shadow_verdict single=3.0"),
    row(lambda c: noise.shadow_verdict((0.0, 1.0), (2.0, 1.0)), ValueError,
        r"back_to_back must be a finite \(low, high\) pair with low <= high", "shadow_verdict low>high"),
    row(lambda c: noise.shadow_verdict((0.0, math.nan), (0.0, 1.0)), ValueError, "single must be a finite",
        "shadow_verdict nan"),
]

# -- fastcpu.compare_ab, fastcpu.seed_table -------------------------------------------

AB_AND_SEED = [
    *(row(lambda c, x=x: fastcpu.compare_ab(x, c.good), TypeError, "compare_ab\\(\\) takes fastcpu.Results",
          f"compare_ab({x!r}, file)") for x in [None, 3, ["x.json"]]),
    row(lambda c: fastcpu.compare_ab(c.good, c.good, unit="ticks"), ValueError,
        "unknown unit 'ticks' for an A/B comparison: use 'ns' or 'cycles'", "compare_ab unit=ticks"),
    row(lambda c: fastcpu.compare_ab(c.good, c.good, unit=None), TypeError, "unit must be a str",
        "compare_ab unit=None"),
    row(lambda c: fastcpu.compare_ab(c.good, c.missing), FileNotFoundError, "missing.json", "compare_ab missing file"),
    row(lambda c: fastcpu.seed_table(None), TypeError, "seed_table\\(\\) takes fastcpu.Results",
        "seed_table(None)"),
    row(lambda c: fastcpu.seed_table(published="yes"), TypeError, "published must be a bool",
        "seed_table published='yes'"),
    row(lambda c: fastcpu.seed_table(published=False), ValueError, "needs a result file",
        "seed_table() nothing"),
]


# -- fastcpu.export ------------------------------------------------------------------

EXPORT = [
    *(row(lambda c, x=x: export.to_gbench(x), TypeError, "to_gbench\\(\\) takes a fastcpu.Results",
          f"to_gbench({x!r})") for x in [None, {}, "x.json"]),
    row(lambda c: export.to_gbench(c.res["gdt"]), TypeError, "not BenchResult", "to_gbench(BenchResult)"),
    *(row(lambda c, x=x: export.write_csv(x, io.StringIO()), TypeError, "write_csv\\(\\) takes fastcpu.Results",
          f"write_csv({x!r})") for x in [None, {}, 3, [None]]),
]


@pytest.mark.parametrize("call, exc, match", BENCH + SELFTEST + READ + CHECK + RESULTS + PLOT + NOISE + EXPORT + AB_AND_SEED)
def test_public_api_rejects_bad_input(ctx, call, exc, match):
    import matplotlib.pyplot as plt

    affinity, figures = os.sched_getaffinity(0), plt.get_fignums()
    with pytest.raises(exc, match=match) as info:
        call(ctx)
    assert "\n" not in str(info.value)
    # Nothing is left behind by a refused call: no pinning, no open figure.
    assert os.sched_getaffinity(0) == affinity
    assert plt.get_fignums() == figures


@pytest.mark.skipif(len(CPUS) < 2, reason="needs a CPU outside a narrowed mask")
def test_a_real_cpu_outside_the_threads_mask():
    # A thread pinned to one CPU may not bench on another: the mask, not the
    # machine, decides.
    with pytest.raises(ValueError, match=rf"cpu {CPUS[-1]} is not in this thread's affinity mask \[{CPUS[0]}\]"):
        on_cpu(CPUS[0], lambda: fastcpu.bench("gdt", 10, cpu=CPUS[-1]))


def test_an_unavailable_clock_is_unsupported_with_the_reason():
    try:
        fastcpu.bench("gdt", 10, counter="pmu")
    except fastcpu.Unsupported as exc:
        assert str(exc).startswith("counter='pmu': ")
    else:
        pytest.skip("this machine has a usable PMU")


# -- the CLI ---------------------------------------------------------------------------

MEASURING = [  # the options shared by table and run, with the error each bad value draws
    (["--runs", "x"], "argument --runs: not an integer: 'x'"),
    (["--runs", ""], "argument --runs: not an integer"),
    (["--runs", "1.5"], "argument --runs: not an integer"),
    (["--runs", "0"], "argument --runs: must be 1 or more, not 0"),
    (["--runs", "-1"], "argument --runs: must be 1 or more"),
    (["--runs", str(fastcpu.limits.RUNS_MAX + 1)], "--runs must be between 1 and 100000000"),
    (["--runs", str(HUGE)], "--runs must be between 1 and 100000000"),
    (["--runs"], "argument --runs: expected one argument"),
    (["--unroll", "0"], "argument --unroll: must be 1 or more"),
    (["--unroll", "two"], "argument --unroll: not an integer"),
    (["--unroll", str(fastcpu.limits.UNROLL_MAX + 1)], "--unroll must be between 1 and 65536"),
    (["--unroll", str(HUGE)], "--unroll must be between 1 and 65536"),
    (["--methods", ""], "argument --methods: name at least one method"),
    (["--methods", ","], "argument --methods: name at least one method"),
    (["--methods", "rdpidd"], DID_YOU_MEAN),
    (["--methods", "gdt,gdt"], "'gdt' is named twice in --methods"),
    (["--serialize", "mfence"], "argument --serialize: invalid choice: 'mfence'"),
    (["--serialize", ""], "argument --serialize: invalid choice"),
    (["--cpu", "zero"], "argument --cpu: not a CPU number: 'zero'"),
    (["--cpu", ""], "argument --cpu: not a CPU number"),
    (["--cpu", "-1"], "cpu -1 is not in this thread's affinity mask"),
    (["--cpu", "99999"], "cpu 99999 is not in this thread's affinity mask"),
    (["--cpu", str(HUGE)], "is not in this thread's affinity mask"),
    (["--bogus"], "unrecognized arguments: --bogus"),
]

CLI = [
    *(pytest.param(args, match, id="table " + " ".join(args)) for args, match in MEASURING),
    *(pytest.param(["run", "--out", "x.json", *args], match, id="run " + " ".join(args))
      for args, match in MEASURING),
    pytest.param(["--counter", "hpet"], "argument --counter: invalid choice: 'hpet'", id="table --counter hpet"),
    pytest.param(["--counter", "pmu", "--serialize", "rdtscp"], "with counter='pmu' use 'lfence' or 'cpuid'",
                 id="table --counter pmu --serialize rdtscp"),
    pytest.param(["--clock", "pmu"], "unrecognized arguments: --clock pmu", id="table --clock (removed in 0.9.0)"),
    pytest.param(["bogus"], "unknown command 'bogus'; commands: table, run", id="unknown subcommand"),
    pytest.param(["compar", "x.json"], r"unknown command 'compar': did you mean 'compare'\?", id="mistyped subcommand"),
    pytest.param(["run"], "the following arguments are required: -o/--out", id="run without --out"),
    pytest.param(["run", "--out", ""], "--out is empty: give a file name", id="run --out ''"),
    pytest.param(["run", "--out", "d", "--overwrite"], "--out d is a directory: give a file name",
                 id="run --out dir"),
    pytest.param(["run", "--out", "nodir/x.json"], "directory nodir does not exist", id="run --out nodir/x"),
    pytest.param(["run", "--out", "good.json"], "good.json exists: pass --overwrite", id="run --out exists"),
    pytest.param(["run", "--out", "/proc/x.json"], "cannot write /proc/x.json: ", id="run --out /proc"),
    pytest.param(["run", "--out", "x.json", "--label"], "argument --label: expected one argument",
                 id="run --label"),
    pytest.param(["run", "--out", "x.json", "--label", os.fsdecode(b"\xff\xfe")],  # as the shell gives $'\xff\xfe'
                 r"argument --label: the label '\\udcff\\udcfe' holds the byte 0xff, which is not UTF-8: give "
                 "the label as UTF-8 text", id="run --label not UTF-8"),
    pytest.param(["run", "--out", "x.json", "--overwrite=yes"], "argument --overwrite: ignored explicit argument",
                 id="run --overwrite=yes"),
    *(pytest.param(["run", "--out", "x.json", opt, *args], match.replace("OPT", opt[2:]), id=f"run {opt} {' '.join(args)}")
      for opt in ("--counter",)
      for args, match in [(["hpet"], "argument --OPT: invalid choice: 'hpet'"),
                          (["pmu", "--serialize", "rdtscp"], "with OPT='pmu' use 'lfence' or 'cpuid'")]),
    pytest.param(["run", "--out", "x.json", "--format", "xml"], "argument --format: invalid choice: 'xml'",
                 id="run --format xml"),
    pytest.param(["run", "--out", "-", "--format", ""], "argument --format: invalid choice: ''",
                 id="run --format ''"),
    *(pytest.param(["run", "--out", "x.gz", "--format", f], f"--format {f} writes plain text, as its readers "
                   "expect: drop .gz from --out", id=f"run --format {f} --out x.gz") for f in ("gbench", "csv")),
    pytest.param(["run", "--out", "good.json", "--format", "csv"], "good.json exists: pass --overwrite",
                 id="run --format csv --out exists"),
    pytest.param(["compare"], "the following arguments are required: FILE", id="compare no file"),
    pytest.param(["compare", "missing.json"], "cannot read missing.json: No such file", id="compare missing"),
    pytest.param(["compare", ""], "path is empty", id="compare ''"),
    pytest.param(["compare", "d"], "cannot read d: Is a directory, not a result file", id="compare dir"),
    pytest.param(["plot", "d", "--out", "x.png"], "cannot read d: Is a directory, not a result file",
                 id="plot dir"),
    pytest.param(["compare", "foreign.json"], "foreign.json: not a fastcpu result file", id="compare foreign"),
    pytest.param(["compare", "fifo"], "fifo: a FIFO, not a result file", id="compare fifo"),
    pytest.param(["compare", "/dev/zero"], "/dev/zero: a character device, not a result file",
                 id="compare /dev/zero"),
    pytest.param(["plot", "fifo", "--out", "x.png"], "fifo: a FIFO, not a result file", id="plot fifo"),
    pytest.param(["compare", "good.json", "--unit", "s"], "argument --unit: invalid choice: 's'",
                 id="compare --unit s"),
    pytest.param(["compare", "good.json", "--ab"], "--ab compares two files, A then B, not 1", id="compare --ab one"),
    pytest.param(["compare", "good.json", "good.json", "--ab", "--unit", "ticks"], "--ab compares in ns or cycles",
                 id="compare --ab --unit ticks"),
    pytest.param(["compare", "good.json", "--ab", "--seed-table"], "argument --seed-table: not allowed with",
                 id="compare --ab --seed-table"),
    pytest.param(["compare", "good.json", "--seed-table", "--csv"], "--csv prints the full comparison",
                 id="compare --seed-table --csv"),
    pytest.param(["compare", "missing.json", "--seed-table"], "cannot read missing.json: No such file",
                 id="compare --seed-table missing"),
    pytest.param(["compare", "good.json", "--csv=1"], "argument --csv: ignored explicit argument '1'",
                 id="compare --csv=1"),
    pytest.param(["compare", "good.json", "--format", "xml"], "argument --format: invalid choice: 'xml'",
                 id="compare --format xml"),
    pytest.param(["compare", "good.json", "--format"], "argument --format: expected one argument",
                 id="compare --format without a value"),
    pytest.param(["compare", "good.json", "--csv", "--format", "json"],
                 "--csv is --format csv: give one of --csv and --format json", id="compare --csv --format json"),
    pytest.param(["compare", "good.json", "--ab", "--format", "json"],
                 "--format json prints the full comparison: leave out --seed-table and --ab",
                 id="compare --ab --format json"),
    pytest.param(["compare", "missing.json", "--format", "json"], "cannot read missing.json: No such file",
                 id="compare --format json missing"),
    pytest.param(["plot", "good.json"], "the following arguments are required: -o/--out", id="plot no --out"),
    pytest.param(["plot", "--out", "x.png"], "the following arguments are required: FILE", id="plot no file"),
    pytest.param(["plot", "good.json", "--out", ""], "--out is empty", id="plot --out ''"),
    pytest.param(["plot", "good.json", "-o", "d"], "--out d is a directory", id="plot -o dir"),
    pytest.param(["plot", "good.json", "--out", "d"], "--out d is a directory", id="plot --out dir"),
    pytest.param(["plot", "good.json", "--out", "x"], r"name the image format by its suffix, one of .*\.png",
                 id="plot --out without suffix"),
    pytest.param(["plot", "good.json", "--out", "x.xyz"], "name the image format by its suffix",
                 id="plot --out x.xyz"),
    pytest.param(["plot", "good.json", "--out", "nodir/x.png"], "directory nodir does not exist",
                 id="plot --out nodir/x"),
    pytest.param(["plot", "good.json", "--out", "/proc/x.png"], "cannot write /proc/x.png", id="plot --out /proc"),
    pytest.param(["plot", "good.json", "--out", "good.json"],
                 "good.json exists: pass --overwrite to replace it, or choose another --out", id="plot --out exists"),
    pytest.param(["plot", "good.json", "--out", "x.png", "--overwrite=yes"],
                 "argument --overwrite: ignored explicit argument", id="plot --overwrite=yes"),
    *(pytest.param(["plot", "good.json", "--out", o], f"--out {o}: plot writes an image file, not standard output",
                   id=f"plot --out {o}") for o in ("-", "/dev/stdout")),
    *(pytest.param(["plot", "good.json", "--out", "x.png", "--dpi", d], m, id=f"plot --dpi {'huge' if d == str(HUGE) else d}")
      for d, m in [("0", "must be 1 or more"), ("x", "not an integer"), ("601", "must be 600 or less"),
                   (str(HUGE), "must be 600 or less")]),
    pytest.param(["plot", "good.json", "--out", "x.png", "--kind", "pie"], "argument --kind: invalid choice",
                 id="plot --kind pie"),
    pytest.param(["plot", "good.json", "--out", "x.png", "--methods", ""], "name at least one method",
                 id="plot --methods ''"),
    pytest.param(["plot", "good.json", "--out", "x.png", "--methods", "nope"], "'nope' not measured",
                 id="plot --methods nope"),
    pytest.param(["plot", "good.json", "--out", "x.png", "--unit", "s"], "argument --unit: invalid choice",
                 id="plot --unit s"),
    pytest.param(["plot", "good.json", "good.json", "--kind", "counts", "--out", "x.png"],
                 "--kind counts draws one file, not 2: use --kind machines", id="plot counts of two"),
    pytest.param(["plot", "missing.json", "--out", "x.png"], "cannot read missing.json", id="plot missing"),
    pytest.param(["plot", "foreign.json", "--out", "x.png"], "not a fastcpu result file", id="plot foreign"),
    pytest.param(["compare", "good.json", "--out", ""], "--out is empty: give a file name", id="compare --out ''"),
    pytest.param(["compare", "good.json", "-o", "good.json"], "good.json exists", id="compare -o exists"),
    pytest.param(["compare", "good.json", "--out", "x.csv", "--overwrite=yes"],
                 "argument --overwrite: ignored explicit argument", id="compare --overwrite=yes"),
    pytest.param(["check", "--methods", "rdpidd"], DID_YOU_MEAN, id="check --methods rdpidd"),
    pytest.param(["check", "--methods", ""], "name at least one method", id="check --methods ''"),
    pytest.param(["check", "--methods", "gdt,gdt"], "'gdt' is named twice", id="check --methods twice"),
    pytest.param(["check", "--cpus", "-1"], "CPU numbers are 0 or more", id="check --cpus -1"),
    pytest.param(["check", "--cpus", "99999"], "this kernel has CPUs 0 to", id="check --cpus 99999"),
    pytest.param(["check", "--cpus", str(HUGE)], "this kernel has CPUs 0 to", id="check --cpus huge"),
    pytest.param(["check", "--cpus", ""], "argument --cpu/--cpus: name at least one CPU", id="check --cpus ''"),
    pytest.param(["check", "--cpus", "a"], "not a comma-separated list of CPU numbers", id="check --cpus a"),
    pytest.param(["check", "--cpus", "0,0"], "names CPU 0 twice", id="check --cpus 0,0"),
    pytest.param(["selftest", "--serialize", "mfence"], "argument --serialize: invalid choice: 'mfence'",
                 id="selftest --serialize mfence"),
    pytest.param(["selftest", "--runs", "0"], "argument --runs: must be 1 or more", id="selftest --runs 0"),
    pytest.param(["selftest", "--runs", str(HUGE)], "runs must be between 10", id="selftest --runs huge"),
    pytest.param(["selftest", "--rounds", "x"], "argument --rounds: not an integer", id="selftest --rounds x"),
    pytest.param(["selftest", "--cpu", "-1"], "cpu -1 is not in this thread's affinity mask", id="selftest --cpu -1"),
    pytest.param(["show"], "the following arguments are required: method", id="show no method"),
    pytest.param(["show", ""], "unknown method ''", id="show ''"),
    pytest.param(["show", "rdpidd"], DID_YOU_MEAN, id="show rdpidd"),
    pytest.param(["show", "gdt", "--disassembler", "gdb"], "argument --disassembler: invalid choice: 'gdb'",
                 id="show --disassembler gdb"),
]


@pytest.fixture
def in_ctx_dir(ctx, monkeypatch):
    monkeypatch.chdir(ctx.tmp)
    before = sorted(os.listdir(ctx.tmp))
    yield
    assert sorted(os.listdir(ctx.tmp)) == before  # a refused command writes nothing


@pytest.mark.parametrize("args, match", CLI)
def test_cli_rejects_bad_options(in_ctx_dir, capsys, args, match):
    assert main(args) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("fastcpu: error: ")
    assert re.search(match, lines[0]), lines[0]
    assert out == ""  # refused before anything was printed or measured


def test_cli_unsupported_clock_is_one_line_exit_1(in_ctx_dir, capsys):
    try:
        fastcpu.bench("gdt", 10, counter="pmu")
    except fastcpu.Unsupported as exc:
        reason = str(exc)
    else:
        pytest.skip("this machine has a usable PMU")
    assert main(["--counter", "pmu", "--runs", "5"]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"fastcpu: {reason}"]
    assert out == ""


@pytest.mark.parametrize("args", [
    ["run", "--out", "d", "--overwrite", "--runs", "5", "--methods", "gdt"],
    ["plot", "good.json", "--out", "x.png", "--dpi", str(HUGE)],
    ["check", "--cpus", "-1"],
], ids=["run --out dir --overwrite", "plot --dpi huge", "check --cpus -1"])
def test_python_m_fastcpu_prints_no_traceback(ctx, args):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "fastcpu", *args], cwd=ctx.tmp,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr


# -- the catalog is complete ------------------------------------------------------------

def test_every_public_function_has_rows():
    """A public function added without rows in this catalog fails here."""
    import inspect

    from fastcpu import plot

    source = Path(__file__).read_text()
    wanted = [f"fastcpu.{n}" for n in fastcpu.__all__
              if callable(getattr(fastcpu, n)) and not inspect.isclass(getattr(fastcpu, n))]
    wanted += [f"_plot().{n}" for n in plot.__all__ if callable(getattr(plot, n))]
    wanted += [f"noise.{n}" for n in noise.__all__ if callable(getattr(noise, n))]
    wanted += [f"export.{n}" for n in export.__all__ if callable(getattr(export, n))]
    wanted += ["c.res.save", "c.model.simulate", "noise.NoiseModel.fit", "fastcpu.Results"]
    # called, or passed to a row as the function to call
    assert [w for w in wanted if not re.search(re.escape(w) + r"[(,)]", source)] == []


def test_every_cli_option_of_every_subcommand_has_rows():
    from fastcpu import cli as _cli

    for command in _cli.COMMANDS:
        rows = [p.values[0] for p in CLI]
        rows = [a[1:] for a in rows if a[:1] == [command]] if command != "table" else \
            [a for a in rows if a[:1] != [] and a[0] not in _cli.COMMANDS]
        given = {a.split("=")[0] for args in rows for a in args}
        for action in _cli._parser(command)._actions:
            if {"-h", "--version"} & set(action.option_strings):
                continue
            if action.option_strings:  # under any of its names (-o or --out)
                assert set(action.option_strings) & given, (command, action.option_strings)
            else:  # a positional: some row leaves it out or gives a bad one
                assert any(not args or not args[0].startswith("-") for args in rows), (command, action.dest)
