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
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fastcpu
from fastcpu import _json_document

CLOCK = fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=2.0, cycles_per_tick=1.4)


def _result(method="gdt", runs=50, **kw):
    rng = np.random.default_rng(len(method) + runs)
    return fastcpu.BenchResult.from_arrays(
        method=method, serialize="lfence", unroll=1, cpu=None,
        raw=rng.integers(100, 140, runs), empty=rng.integers(60, 70, runs),
        migrated=np.zeros(runs, bool), clock=CLOCK, **kw)


def _results(*results, **kw):
    results = results or (_result(),)
    return fastcpu.Results({r.method: r for r in results}, {"vendor": "GenuineIntel"}, CLOCK, "lfence",
                           "2026-01-01T00:00:00Z", **{"label": "x", **kw})


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
        "in /proc": ("/proc/self/fastcpu-x.json", errno.ENOENT),
    }
    for name, (path, code) in cases.items():
        with pytest.raises(OSError) as info:
            res.save(path)
        assert (info.value.errno, info.value.filename) == (code, str(path)), (name, info.value)


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
