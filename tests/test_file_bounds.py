"""What save() writes and what load() reads, at their bounds (issue 28,
items 4, 5 and 10): every value a public constructor accepts is refused
there by name or loads back; the limits of save, load and the runs of one
measurement agree; a .gz save stops at Ctrl-C and leaves the old file;
duplicate keys, deep nesting (in a thread with a small stack) and read
errors are refused with the file's name.

Results here are built from arrays (no measuring): the file layer is under
test, not the machine."""

import errno
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fastcpu
from fastcpu.files import write as _json_document
from fastcpu.files import format as _json_format

CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=2.0, cycles_per_tick=1.4)


def _result(method="gdt", runs=50, serialize="lfence", **kw):
    rng = np.random.default_rng(runs)
    return fastcpu.BenchResult.from_arrays(
        method=method, serialize=serialize, unroll=1, cpu=None,
        raw=rng.integers(100, 140, runs), empty=rng.integers(60, 70, runs),
        migrated=np.zeros(runs, bool), clock=CLOCK, **kw)


def _results(*results, **kw):
    results = results or (_result(),)
    fields = {"machine": {"vendor": "GenuineIntel"}, "clock": CLOCK, "serialize": "lfence",
              "date": "2026-01-01T00:00:00Z", "label": "x", **kw}
    return fastcpu.Results({r.method: r for r in results}, **fields)


# -- item 10: duplicate keys ---------------------------------------------------------

def _pairs(text):
    return json.loads(text, object_pairs_hook=lambda pairs: ("obj", pairs))


def _dump(node):
    """JSON text of a tree of ("obj", pairs) and lists, keys as they are (twice, too)."""
    if isinstance(node, tuple) and node[0] == "obj":
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump(v)}" for k, v in node[1]) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(v) for v in node) + "]"
    return json.dumps(node)


def _objects(node, where="document"):
    """Every object of the tree, with where it is."""
    if isinstance(node, tuple) and node[0] == "obj":
        yield where, node[1]
        for k, v in node[1]:
            yield from _objects(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _objects(v, f"{where}[{i}]")


def test_a_duplicate_key_is_refused_in_every_object(tmp_path):
    """A key given twice is refused, naming it, wherever it is: first the
    spliced value (the checksum saw the second: json keeps the last, which
    loaded verified before), and the same value twice."""
    res = _results(selftest=None)
    path = tmp_path / "r.json"
    res.save(path)
    tree = _pairs(path.read_text())
    n = 0
    for where, pairs in list(_objects(tree)):
        if not pairs:
            continue
        key, value = pairs[0]
        for spliced in ("spliced" if value != "spliced" else "other", value):
            pairs.insert(0, (key, spliced))
            bad = tmp_path / "bad.json"
            bad.write_text(_dump(tree))
            with pytest.raises(fastcpu.ResultFileError, match=rf"key {key!r} appears twice in one object"):
                fastcpu.load(bad)
            del pairs[0]
            n += 1
    assert n >= 20  # the document, the clock, each result, each array, the machine
    assert fastcpu.load(path) == res  # the tree was put back: the file itself loads


def test_a_spliced_label_does_not_load_verified(tmp_path):
    """The issue's case: a second "label" before the one the checksum saw."""
    path = tmp_path / "r.json"
    _results(label="Zurich").save(path)
    text = path.read_text()
    assert text.count('"label": "Zurich"') == 1
    path.write_text(text.replace('"label": "Zurich"', '"label": "Evil", "label": "Zurich"'))
    with pytest.raises(fastcpu.ResultFileError, match="key 'label' appears twice"):
        fastcpu.load(path)


# -- item 10: nesting, checked before parsing -----------------------------------------

NESTED_IN_A_SMALL_STACK = textwrap.dedent(r'''
    import sys, threading
    import fastcpu
    path, stack = sys.argv[1], int(sys.argv[2])
    out = []
    def load():
        try:
            fastcpu.load(path)
            out.append("loaded")
        except fastcpu.ResultFileError as exc:
            out.append(f"ResultFileError: {exc}")
    fastcpu.load  # imported before the thread starts: only load() runs there
    threading.stack_size(stack)
    t = threading.Thread(target=load)
    t.start()
    t.join()
    print(out[0])
''')


@pytest.mark.parametrize("stack_kib", [32, 64])
@pytest.mark.parametrize("depth", [900, 200_000])
def test_deep_nesting_is_refused_before_parsing_in_a_small_stack(tmp_path, stack_kib, depth):
    """json's C parser recurses on the C stack: 900 levels in a thread of a
    32-64 KiB stack crashed the interpreter inside json.loads. The depth is
    counted before parsing, so the crash is never reached."""
    # the control: a valid file in the same thread (where even that cannot
    # run, as under a sanitizer's larger frames, the stack is the build's limit)
    valid = tmp_path / "valid.json"
    _results().save(valid)
    control = subprocess.run([sys.executable, "-c", NESTED_IN_A_SMALL_STACK, str(valid), str(stack_kib << 10)],
                             capture_output=True, text=True, timeout=120)
    if control.returncode != 0 or control.stdout != "loaded\n":
        pytest.skip(f"a thread of {stack_kib} KiB cannot load even a valid file in this build "
                    f"(exit {control.returncode})")
    path = tmp_path / "deep.json"
    path.write_text('{"format": "fastcpu-results", "version": 3, "label": "[[[ \\" {{{", "x": '
                    + "[" * depth + "]" * depth + "}")
    p = subprocess.run([sys.executable, "-c", NESTED_IN_A_SMALL_STACK, str(path), str(stack_kib << 10)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert p.stdout.startswith(f"ResultFileError: {path}: not a fastcpu result file (JSON nested too deeply "
                               "to read): more than the 32 levels"), p.stdout


@pytest.mark.parametrize("text, deep", [
    ("[" * 32 + "]" * 32, False),
    ("[" * 33 + "]" * 33, True),
    ('["' + "[" * 40 + '"]', False),                   # brackets in a string
    ('["\\"' + "[" * 40 + '"]', False),                # after an escaped quote, still in the string
    ('["\\\\", ' + "[" * 40 + "]" * 40 + "]", True),  # an escaped backslash ends no string
    ('["\\u00fc\\n", ' + "[" * 33 + "]" * 34, True),
    ('{"a": ' * 33 + "1" + "}" * 33, True),
    ('[' + "[]," * 5000 + "[]]", False),               # wide, not deep
], ids=["32", "33", "in a string", "escaped quote", "escaped backslash", "escapes", "objects", "wide"])
def test_nesting_is_counted_outside_strings(tmp_path, text, deep):
    path = tmp_path / "r.json"
    path.write_text(text)
    if deep:
        with pytest.raises(fastcpu.ResultFileError, match=r"nested too deeply to read\): more than the 32"):
            fastcpu.load(path)
    else:
        with pytest.raises(fastcpu.ResultFileError, match=r"not a fastcpu result file \(JSON list, not an object"):
            fastcpu.load(path)


# -- item 10: every OSError of load and save names the file ----------------------------

def _load_cases(tmp_path):
    (tmp_path / "file").write_text("{}")
    os.symlink("/proc/self/mem", tmp_path / "mem.json")   # regular to stat(), EIO to read()
    os.symlink("loop.json", tmp_path / "loop.json")
    (tmp_path / "dir.json").mkdir()
    return {
        "EIO": (tmp_path / "mem.json", errno.EIO),
        "ELOOP": (tmp_path / "loop.json", errno.ELOOP),
        "ENOENT": (tmp_path / "missing.json", errno.ENOENT),
        "ENOTDIR": (tmp_path / "file" / "x.json", errno.ENOTDIR),
        "EISDIR": (tmp_path / "dir.json", errno.EISDIR),
        "ENAMETOOLONG": (tmp_path / ("x" * 300 + ".json"), errno.ENAMETOOLONG),
    }


def test_every_oserror_of_load_names_the_file(tmp_path):
    for name, (path, code) in _load_cases(tmp_path).items():
        with pytest.raises(OSError) as info:
            fastcpu.load(path)
        assert (info.value.errno, info.value.filename) == (code, str(path)), (name, info.value)
        assert str(path) in str(info.value)


def test_every_oserror_of_save_names_the_file(tmp_path):
    res = _results()
    (tmp_path / "file").write_text("{}")
    (tmp_path / "exists.json").write_text("{}")
    (tmp_path / "dir.json").mkdir()
    cases = {
        "no directory": (tmp_path / "nodir" / "x.json", errno.ENOENT),
        "under a file": (tmp_path / "file" / "x.json", errno.ENOENT),
        "a directory": (tmp_path / "dir.json", errno.EISDIR),
        "exists": (tmp_path / "exists.json", errno.EEXIST),
        "in /proc": ("/proc/self/fastcpu-x.json", (errno.ENOENT, errno.EACCES)),  # as root, as a user
    }
    for name, (path, code) in cases.items():
        with pytest.raises(OSError) as info:
            res.save(path)
        assert info.value.filename == str(path), (name, info.value)
        assert info.value.errno in (code if isinstance(code, tuple) else (code,)), (name, info.value)


# -- item 9: the POSIX locale ------------------------------------------------------------

POSIX = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def _posix(argv, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LANGUAGE")}
    return subprocess.run([sys.executable, "-m", "fastcpu", *argv], capture_output=True, cwd=cwd,
                          env={**env, **POSIX}, timeout=300)


def test_every_command_that_prints_text_from_a_file_works_in_the_posix_locale(tmp_path):
    """Under LC_ALL=C with UTF-8 mode off, stdout's encoding is ASCII with
    the handler surrogateescape: compare of a file labelled "Zürich" exited
    2 and printed nothing. Every command that prints a file's text prints
    it, escaped where ASCII cannot hold it."""
    r = _result(caveats=("na\u00efve caveat",))
    path = tmp_path / "z.json"
    _results(r, label="Z\u00fcrich", notes=("measured in Z\u00fcrich",)).save(path)
    shown = {
        "compare": (["compare", str(path)], b"Z\\xfcrich"),
        "compare csv": (["compare", str(path), "--format", "csv"], "Z\u00fcrich".encode()),
        "compare json": (["compare", str(path), "--format", "json"], b"Z\\u00fcrich"),
        "plot": (["plot", str(path), "--out", str(tmp_path / "z.png")], b""),
        "plot machines": (["plot", str(path), "--kind", "machines", "--out", str(tmp_path / "m.png")], b""),
    }
    for name, (argv, expected) in shown.items():
        p = _posix(argv, tmp_path)
        assert p.returncode == 0, (name, p.returncode, p.stderr[-2000:])
        assert expected in p.stdout, (name, p.stdout[-2000:])
        assert b"codec" not in p.stderr, (name, p.stderr)


def test_run_takes_a_utf8_label_in_the_posix_locale(tmp_path):
    """The label's bytes are UTF-8, though Python read them as ASCII with
    surrogateescape: they were refused as "not UTF-8"."""
    out = tmp_path / "r.json"
    p = _posix(["run", "--label", "Z\u00fcrich", "--runs", "10", "--methods", "empty", "--out", str(out)],
               tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert b"Z\\xfcrich" in p.stdout and b"codec" not in p.stderr
    assert fastcpu.load(out).label == "Z\u00fcrich"
    # bytes that are not UTF-8 are still refused, naming the byte
    p = subprocess.run([sys.executable, "-m", "fastcpu", "run", "--label", b"Z\xfcrich", "--runs", "10",
                        "--out", str(tmp_path / "x.json")], capture_output=True, cwd=tmp_path,
                       env={**os.environ, **POSIX}, timeout=120)
    assert p.returncode == 2 and b"the byte 0xfc, which is not UTF-8" in p.stderr, p.stderr


# -- item 5: Ctrl-C during a .gz save --------------------------------------------------------

SAVE_BIG_GZ = textwrap.dedent(r'''
    import sys
    import numpy as np
    import fastcpu
    clock = fastcpu.Clock(2.6e9, 2.0, 1.4)
    results = {}
    rng = np.random.default_rng(1)
    for i in range(37):  # near-identical runs: what gzip level 9 took 25 s over
        raw = (120 + 2 * (rng.random(200_000) < 0.1)).astype(np.uint64)
        r = fastcpu.BenchResult.from_arrays(method=f"m{i}", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                            empty=np.full(200_000, 60, np.uint64),
                                            migrated=np.zeros(200_000, bool), clock=clock)
        results[r.method] = r
    res = fastcpu.Results(results, {}, clock, "lfence", "2026-01-01T00:00:00Z")
    print("saving", flush=True)
    res.save(sys.argv[1], overwrite=True)
    print("saved", flush=True)
''')


def test_ctrl_c_stops_a_gz_save_at_once_and_leaves_the_old_file(tmp_path):
    """37 methods x 200,000 runs saved as .gz: at gzip level 9, in one call,
    SIGINT was honoured after 24 s. Now it stops within a chunk's time; the
    bound here is generous for a loaded 2-core VM. The old file stays as it
    was, byte for byte, and no temporary file is left."""
    import signal
    import time

    path = tmp_path / "r.json.gz"
    _results().save(path)
    old = path.read_bytes()
    interrupted = 0
    for delay in (0.2, 1.0, 2.5):
        child = subprocess.Popen([sys.executable, "-c", SAVE_BIG_GZ, str(path)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline() == "saving\n"
            time.sleep(delay)
            child.send_signal(signal.SIGINT)
            sent = time.monotonic()
            out, err = child.communicate(timeout=120)
            took = time.monotonic() - sent
        finally:
            child.kill()
            child.wait()
        if "saved" in out:  # finished before the signal: the new file, whole
            assert fastcpu.load(path).keys() == {f"m{i}" for i in range(37)}
            old = path.read_bytes()
            continue
        interrupted += 1
        assert child.returncode == -signal.SIGINT and "KeyboardInterrupt" in err, (child.returncode, err[-2000:])
        assert took < 5, f"SIGINT honoured {took:.1f} s after it was sent"
        assert path.read_bytes() == old
        assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    assert interrupted, "every save finished before its signal: nothing was tested"


# -- item 4: what the constructors accept saves and loads back -----------------------------

def test_the_issues_harness_biases_are_refused_by_name():
    r = _result()
    for bias, ci95, field in ((1.0, -1.0, "harness_bias_ci95_core_cycles"), (1e300, 0.0, "harness_bias_core_cycles"),
                              ("zzz", 0.0, "harness_bias_core_cycles")):
        with pytest.raises((TypeError, ValueError), match=field):
            r.with_harness_bias(bias, ci95)
    assert "+--" not in str(r.with_harness_bias(1.0, 0.5))


NUMBERS = [0, 1, -1, 0.5, 2.0, 1e-300, 1e-3, 1e3, 1e6, 1e6 + 1, 1e11, 1e300, -1e300, 10**30,
           math.inf, -math.inf, math.nan, True, "zzz", None]
TEXTS = ["", "zzz", "Z\u00fcrich", "\ud800", "x" * 2001, "line\nbreak\x00", 5, None, b"bytes"]


def _clock_with(**kw):
    base = {"tsc_hz": 2.6e9, "tsc_step_ticks": 2.0, "cycles_per_tick": 1.4}
    return fastcpu.Clock(**{**base, **kw})


def _with_clock(clock):
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=[120, 124] * 20,
                                        empty=[60, 62] * 20, migrated=[False] * 40, clock=clock)
    return fastcpu.Results({"gdt": r}, {}, clock, "lfence", "2026-01-01T00:00:00Z")


def _from_arrays(**kw):
    args = dict(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=[120, 124] * 20, empty=[60, 62] * 20,
                migrated=[False] * 40, clock=CLOCK)
    args.update(kw)
    r = fastcpu.BenchResult.from_arrays(**args)
    return _results(r)


def _results_with(**kw):
    return _results(_result(), **kw)


#: field -> (how a value builds Results, the values tried)
SWEEP = {
    "tsc_hz": (lambda v: _with_clock(_clock_with(tsc_hz=v)), NUMBERS),
    "tsc_step_ticks": (lambda v: _with_clock(_clock_with(tsc_step_ticks=v)), NUMBERS),
    "cycles_per_tick": (lambda v: _with_clock(_clock_with(cycles_per_tick=v)), NUMBERS),
    "tsc_read_spacing_ticks": (lambda v: _with_clock(_clock_with(tsc_read_spacing_ticks=v)), NUMBERS),
    "rulers": (lambda v: _with_clock(_clock_with(rulers=v)), [None, "zzz", 1.0]),
    **{f"rulers.{name}": (lambda v, name=name: _with_clock(_clock_with(
        cycles_per_tick=1.4, rulers=fastcpu.types.Rulers(**{"add_cycles_per_tick": 1.4, "imul_cycles_per_tick": 1.41,
                                                            "tolerance": 0.03, **{name: v}}))), NUMBERS)
       for name in ("add_cycles_per_tick", "imul_cycles_per_tick", "tolerance", "immediate_adds_per_core_cycle")},
    "method": (lambda v: _from_arrays(method=v), TEXTS),
    "serialize": (lambda v: _results(_result(serialize=v), serialize=v), TEXTS + ["lfence", "cpuid"]),
    "unroll": (lambda v: _from_arrays(unroll=v), NUMBERS + [65536, 65537]),
    "cpu": (lambda v: _from_arrays(cpu=v), NUMBERS + [1 << 22, (1 << 22) - 1]),
    "counter": (lambda v: _from_arrays(counter=v), TEXTS + ["tsc", "pmu", "pmu_user"]),
    "cycles_per_tick (result)": (lambda v: _from_arrays(cycles_per_tick=v), NUMBERS),
    "cycles_per_tick_ci95": (lambda v: _from_arrays(cycles_per_tick_ci95=v), NUMBERS),
    "harness_bias_core_cycles": (lambda v: _from_arrays(harness_bias_core_cycles=v), NUMBERS),
    "harness_bias_ci95_core_cycles": (lambda v: _from_arrays(harness_bias_ci95_core_cycles=v), NUMBERS),
    "with_harness_bias": (lambda v: _results(_result().with_harness_bias(v, 0.5)), NUMBERS),
    "with_harness_bias ci95": (lambda v: _results(_result().with_harness_bias(0.5, v)), NUMBERS),
    "caveats": (lambda v: _from_arrays(caveats=v), [(), ("a",) * 100, ("a",) * 101, ("x" * 2000,), ("x" * 2001,),
                                                    ("\ud800",), (5,), "abc", None]),
    "raw": (lambda v: _from_arrays(raw=[v] * 40), [0, 1, 2**32, 2**53 - 1]),
    "label": (lambda v: _results_with(label=v), TEXTS),
    "date": (lambda v: _results_with(date=v), TEXTS),
    "fastcpu_version": (lambda v: _results_with(fastcpu_version=v), TEXTS),
    "notes": (lambda v: _results_with(notes=v), [(), ("a",) * 101, ("x" * 2001,), ("\ud800",), (5,), None]),
    "machine": (lambda v: _results_with(machine=v), [{}, {"family": "six"}, {"family": 6}, {"cpus": -1},
                                                     {"flags": 5}, {"own": [1, {"a": None}]}, {"own": math.nan},
                                                     {1: "int key"}]),
    "unavailable": (lambda v: _results_with(unavailable=v), [{}, {"x": "why"}, {"x": 5}]),
    "cpu_verdicts": (lambda v: _results_with(cpu_verdicts=v), [
        {}, {"gdt": fastcpu.types.CpuVerdict(True, "agreed")}, {"gdt": fastcpu.types.CpuVerdict(1, "x")},
        {"gdt": fastcpu.types.CpuVerdict(True, 5)}, {"gdt": "yes"}]),
}


@pytest.mark.parametrize("field", list(SWEEP))
def test_every_value_a_constructor_accepts_loads_back(tmp_path, field):
    """Each value is refused where it is given (TypeError or ValueError) or
    the Results built with it save and load back to the same document."""
    build, values = SWEEP[field]
    path = tmp_path / "r.json"
    loaded = refused = 0
    for value in values:
        try:
            res = build(value)
        except (TypeError, ValueError) as exc:
            refused += 1
            assert str(exc), (field, value)
            continue
        try:
            res.save(path, overwrite=True)
        except ValueError as exc:  # the one refusal at save: counts of 2**53 or more, named
            pytest.fail(f"{field}={value!r:.60}: built, but save() refused it: {exc}")
        try:
            back = fastcpu.load(path)
        except fastcpu.ResultFileError as exc:
            pytest.fail(f"{field}={value!r:.60}: built and saved, but load() refused it: {exc}")
        assert back.to_document() == res.to_document(), (field, value)
        assert back == res and back.verified
        loaded += 1
    assert loaded and refused or field in ("rulers", "raw", "unavailable"), (field, loaded, refused)


# -- item 4: the limits of save, load and the runs of one measurement agree -----------------

@pytest.mark.parametrize("runs", [1, 7, 8, 9, 1000, 4099])
def test_the_text_bound_of_a_results_arrays_is_exact(runs):
    """arrays_text_bytes_max(runs) is what the widest counts take: the bound
    TEXT_MAX_BYTES is derived from, at RUNS_MAX."""
    r = _result(runs=runs)
    wide = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None,
                                           raw=np.full(runs, 2**53 - 1), empty=np.full(runs, 2**53 - 2),
                                           migrated=np.ones(runs, bool), clock=CLOCK)
    for res, exact in ((r, False), (wide, True)):
        entry = _results(res).to_document()["results"][0]
        text = sum(len(entry[k]["data"]) for k in ("raw", "empty", "migrated"))
        assert text <= _json_document.arrays_text_bytes_max(runs)
        assert (text == _json_document.arrays_text_bytes_max(runs)) == exact


def test_one_measurement_of_the_most_runs_always_fits_in_a_file():
    most = fastcpu.limits.RUNS_MAX
    assert _json_document.TEXT_MAX_BYTES >= (_json_document.arrays_text_bytes_max(most)
                                             + _json_document.DOCUMENT_ALLOWANCE_BYTES)
    # the issue's file: two methods of 10^8 runs of 2-byte ticks (1.1 GB), refused by load() before
    two = 2 * (2 * 4 * -(-2 * most // 3) + 4 * -(-(most // 8) // 3))
    assert 1 << 30 < two < _json_document.TEXT_MAX_BYTES
    assert _json_document.gzip_limit_bytes(10**12) == _json_document.TEXT_MAX_BYTES


def test_save_refuses_by_name_what_is_over_the_text_limit(tmp_path, monkeypatch):
    """Several large results may pass TEXT_MAX_BYTES: save() refuses them,
    naming the limit, and writes nothing (the limit is lowered here so that
    the test needs kilobytes, not gigabytes)."""
    res = _results(_result("a", 2000), _result("b", 2000))
    size = len(_json_document.encode_document(res.to_document()))
    monkeypatch.setattr(_json_format, "TEXT_MAX_BYTES", size - 1)
    with pytest.raises(ValueError, match=rf"{size} bytes of JSON, more than the {size - 1} a result file may hold"):
        res.save(tmp_path / "r.json")
    assert not list(tmp_path.iterdir())
    monkeypatch.setattr(_json_format, "TEXT_MAX_BYTES", size)
    res.save(tmp_path / "r.json")
    assert fastcpu.load(tmp_path / "r.json") == res


def test_a_gz_of_near_identical_runs_loads(tmp_path):
    """3*10^7 near-identical runs saved as .gz (196 KB) were refused as "a
    decompression bomb?": text beyond the 32 MiB floor compressed far more
    than 64 times. save() now pads such a file with a stored member of
    blanks ahead of the text, so every prefix stays within what load()
    allows; the bomb limit stays as it was."""
    runs = 15_000_000
    raw = np.full(runs, 120, np.uint64)
    raw[::1000] = 122
    r = fastcpu.BenchResult.from_arrays(method="gdt", serialize="lfence", unroll=1, cpu=None, raw=raw,
                                        empty=np.full(runs, 60, np.uint64), migrated=np.zeros(runs, bool),
                                        clock=CLOCK)
    res = _results(r)
    path = tmp_path / "r.json.gz"
    res.save(path)
    import gzip

    text = gzip.decompress(path.read_bytes())
    assert len(text) > _json_document.gzip_limit_bytes(0)  # past the floor
    assert fastcpu.load(path) == res
    assert path.stat().st_size < len(text) // 40  # padded by a small fraction of the text
