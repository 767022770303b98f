"""Result files built to hurt (issue 22, items 2 and 3): load() holds at most
a stated multiple of the file's text in memory, whatever the file holds."""

import gzip
import json
import os
import pickle
import re
import resource
import subprocess
import sys

import numpy as np
import pytest

import fastcpu
from fastcpu.files import write as _json_document

SANITIZED = bool(os.environ.get("FASTCPU_SANITIZED")) or fastcpu._core.SANITIZED
MiB = 1 << 20


def _clock():
    return fastcpu.Clock(tsc_hz=2.6e9, tsc_step_ticks=26.0, cycles_per_tick=1.4)


def small_results(runs=8, methods=("gdt",), label="hostile"):
    """Results of `runs` synthetic runs per method, no measuring."""
    rng = np.random.default_rng(1)
    results = {}
    for m in methods:
        empty = 1000 + 26 * rng.integers(0, 2, runs)
        results[m] = fastcpu.BenchResult.from_arrays(
            method=m, serialize="lfence", unroll=1, cpu=None, raw=empty + 26 * rng.integers(0, 3, runs),
            empty=empty, migrated=np.zeros(runs, bool), clock=_clock())
    return fastcpu.Results(results, {"vendor": "AuthenticAMD", "family": 25, "model": 17}, _clock(),
                           "lfence", "2026-12-01T00:00:00Z", label=label, fastcpu_version="0.6.0")


def rich_results(runs=6):
    """Small Results with every kind of field a file holds: the clock's rulers
    and read spacing, each result's own core cycles per tick, its harness
    correction and caveats, notes, what could not run, a self-test."""
    from fastcpu.types import ChainCheck, PathCheck, Rulers, SelfTest

    clock = fastcpu.Clock(2.6e9, 26.0, 1.4, 26.0, Rulers(1.4, 1.41, 0.03, 1.0))
    res = small_results(runs, ("gdt", "rdpid"))
    results = {m: fastcpu.BenchResult.from_arrays(
        method=m, serialize="lfence", unroll=1 + i, cpu=i or None, raw=r.raw, empty=r.empty,
        migrated=np.arange(runs) == i, clock=clock, cycles_per_tick=1.39 + i / 100,
        cycles_per_tick_ci95=0.01, harness_bias_core_cycles=0.9 - i, harness_bias_ci95_core_cycles=1.6,
        caveats=("a caveat",) * i) for i, (m, r) in enumerate(res.items())}
    chain = ChainCheck("add_chain_16", 16.0, 0.29, 6, True, 6)
    selftest = SelfTest((PathCheck("inline", "lfence", -0.04, 0.42, {"add": 0.03, "imul": -0.1}, (chain,)),),
                        runs=1000, rounds=6, seconds=0.13, judged=("lfence",))
    return fastcpu.Results(results, {"vendor": "AuthenticAMD", "family": 25, "governors": {"0": "performance"},
                                     "affinity": [0, 1], "boost": None},
                           clock, "lfence", "2026-12-01T00:00:00Z", label="rich", fastcpu_version="0.6.0",
                           unavailable={"sidt": "UMIP"}, selftest=selftest, notes=("a note",))


def _document(res):
    return json.loads(_json_document.encode_document(res.to_document()))


def _save(path, doc):
    path.write_bytes(_json_document.encode_document(doc))
    return path


# -- memory: at most LOAD_MEMORY_MULTIPLE x the text, plus a fixed allowance -----------------------

#: What a child holds at its peak beyond a loaded small file: the bound of load()'s docstring.
PEAK = r"""
import sys
import fastcpu

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))

fastcpu.load(sys.argv[2])  # every module and cache load() uses, warmed
# the peak from here on: a child forked from a large parent starts with its peak
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
try:
    fastcpu.load(sys.argv[1])
    what = "loaded"
except fastcpu.ResultFileError as exc:
    what = "ResultFileError: " + str(exc)
print(status("VmHWM") - before)
print(what)
"""

SIZE = 16 * MiB


def _filler(doc, key, value_text, size=SIZE):
    """`doc` as text with `key` holding `value_text` (JSON), padded with a
    long label to about `size` bytes."""
    doc = dict(doc)
    doc[key] = "@@VALUE@@"
    text = json.dumps(doc)
    doc["label"] = "x" * max(0, size - len(text) - len(value_text))
    return json.dumps(doc).replace('"@@VALUE@@"', value_text)


def _within_budget(element, size=SIZE):
    """A list of as many `element`s as the separator budget leaves room for."""
    n = _json_document.separators_max(size) // (1 + element.count("[") + element.count("{")
                                                   + element.count(":") + element.count(",")) - 200
    return "[" + ",".join([element] * n) + "]"


def _hostile(tmp_path):
    """name -> (path, bytes of text it holds): the worst inputs we could build
    (of format version 1, without a checksum: their every field is read)."""
    base = _document(small_results())
    del base["checksum"]
    base["version"] = 1
    out = {}

    def plain(name, text):
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        out[name] = (path, path.stat().st_size)

    plain("many empty lists", _filler(base, "pad", "[" + ",".join(["[]"] * (SIZE // 3)) + "]"))
    plain("empty lists within the budget", _filler(base, "pad", _within_budget("[]")))
    plain("one-key objects within the budget", _filler(base, "pad", _within_budget('{"a":-6}')))
    plain("short strings within the budget", _filler(base, "pad", _within_budget('"ab"')))
    plain("floats within the budget", _filler(base, "pad", _within_budget("0.5")))
    plain("40-digit integers within the budget", _filler(base, "pad", _within_budget("7" * 40)))
    plain("deep nesting", _filler(base, "pad", "[" * 200_000 + "]" * 200_000))
    plain("a long label", json.dumps(dict(base, label="x" * SIZE)))
    astral = "\U0001d11e"  # 4 bytes of UTF-8, 4 in a str: the whole text becomes 4 bytes a character
    doc = dict(base, label=astral + "x" * (SIZE - 8))
    plain("a long label beside a character outside the BMP", json.dumps(doc, ensure_ascii=False))
    doc = dict(base, label=astral * (SIZE // 4))
    plain("a label of characters outside the BMP", json.dumps(doc, ensure_ascii=False))
    many = ",".join(['"' + astral + "x" * 60 + '"'] * (SIZE // 70))
    plain("many strings beside characters outside the BMP", _filler(base, "pad", "[" + many + "]"))
    # the densest real arrays: one-byte ticks, 6 bytes in memory per byte of base64
    runs = SIZE * 3 // 8
    dense = fastcpu.BenchResult.from_arrays(
        method="gdt", serialize="lfence", unroll=1, cpu=None, raw=np.full(runs, 255, np.uint64),
        empty=np.arange(runs, dtype=np.uint64) % 200, migrated=np.arange(runs) % 3 == 0, clock=_clock())
    res = fastcpu.Results({"gdt": dense}, {}, _clock(), "lfence", "2026-12-01T00:00:00Z")
    res.save(tmp_path / "dense.json")
    out["one-byte ticks, the densest arrays"] = (tmp_path / "dense.json", (tmp_path / "dense.json").stat().st_size)
    return out


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer quarantines freed memory")
def test_load_holds_at_most_its_stated_multiple_of_the_text_whatever_the_file(tmp_path):
    small = _save(tmp_path / "small.json", _document(small_results()))
    multiple, allowance = _json_document.LOAD_MEMORY_MULTIPLE, _json_document.LOAD_MEMORY_ALLOWANCE_BYTES
    worst = []
    for name, (path, text_bytes) in _hostile(tmp_path).items():
        p = subprocess.run([sys.executable, "-c", PEAK, str(path), str(small)], capture_output=True,
                           text=True, timeout=120, preexec_fn=_address_space(4 << 30))
        assert p.returncode == 0, (name, p.stderr[-2000:])
        grew, what = p.stdout.split("\n", 1)
        grew = int(grew)
        worst.append(f"{name}: {grew / MiB:.0f} MiB for {text_bytes / MiB:.0f} MiB ({what[:60]})")
        assert grew <= multiple * text_bytes + allowance, worst[-1]
        path.unlink()
    print("\n".join(worst))


def _address_space(most_bytes):
    def limit():
        if not SANITIZED:  # AddressSanitizer reserves terabytes for its shadow
            resource.setrlimit(resource.RLIMIT_AS, (most_bytes, most_bytes))
    return limit


def _gzip_bomb(path, member_text, members, head=b""):
    """A gzip file of `head` then `members` gzip members of `member_text`
    each (a gzip file may hold several; they decompress to their concatenation)."""
    member = gzip.compress(member_text, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(members):
            f.write(member)
    return path


def _peak_of_load(path, small):
    p = subprocess.run([sys.executable, "-c", PEAK, str(path), str(small)], capture_output=True,
                       text=True, timeout=120, preexec_fn=_address_space(4 << 30))
    assert p.returncode == 0, p.stderr[-2000:]
    grew, what = p.stdout.split("\n", 1)
    return int(grew), what.strip()


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer quarantines freed memory")
def test_a_gzip_bomb_of_zeros_is_refused_at_its_first_chunk(tmp_path):
    # 16 MB of 64 MiB members of zeros: 16 GiB; the old reader took 1 GiB of
    # it, then joined its chunks into a second copy (2.1 GiB at its peak)
    path = _gzip_bomb(tmp_path / "zeros.json.gz", bytes(64 * MiB), 256)
    small = _save(tmp_path / "small.json", _document(small_results()))
    grew, what = _peak_of_load(path, small)
    assert what == (f"ResultFileError: {path}: not a fastcpu result file (binary data, not JSON text: "
                    "byte 0x00 at offset 0)")
    assert grew < 16 * MiB


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer quarantines freed memory")
def test_a_gzip_bomb_of_json_text_is_refused_a_few_members_in(tmp_path):
    # text a result file could hold (a label of one letter), members that
    # expand a thousandfold: the limit holds for every prefix of the stream,
    # so it stops near the 32 MiB floor (16 MB of such members took 9.5 s
    # and 2.1 GiB before, 6.2 s and 1 GiB with the whole file's limit alone)
    head = b'{"format": "fastcpu-results", "version": 1, "label": "'
    path = _gzip_bomb(tmp_path / "bomb.json.gz", b"A" * (16 * MiB), 256, head)
    limit = _json_document.gzip_limit_bytes(path.stat().st_size)
    small = _save(tmp_path / "small.json", _document(small_results()))
    grew, what = _peak_of_load(path, small)
    assert what.startswith(f"ResultFileError: {path}: gzip data expands to more than ")
    allowed = int(what.split("more than ")[1].split()[0])
    assert allowed < limit // 4
    assert grew < 1.1 * allowed + 16 * MiB, f"{grew / MiB:.0f} MiB where {allowed / MiB:.0f} MiB are allowed"


def test_many_small_values_are_refused_before_parsing(tmp_path):
    # 24 MiB of "[], " loaded in 1.4-3.1 s and grew 457-616 MiB (19-26 x) before
    doc = _document(small_results())
    text = _filler(doc, "pad", "[" + ", ".join(["[]"] * (6 * MiB)) + "]", size=0)
    path = tmp_path / "pad.json"
    path.write_text(text)
    with pytest.raises(fastcpu.ResultFileError, match=r"not a fastcpu result file: \d+ JSON values and "
                       r"keys .* more than the \d+ a result file of \d+ bytes holds"):
        fastcpu.load(path)
    # compressed, it is refused while streaming, before the rest is decompressed
    gz = tmp_path / "pad.json.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(fastcpu.ResultFileError, match=r"in its first \d+ bytes") as caught:
        fastcpu.load(gz)
    assert int(str(caught.value).split("in its first ")[1].split()[0]) < len(text) // 4


def test_what_load_would_refuse_is_never_saved(tmp_path):
    res = small_results()
    crowded = fastcpu.Results(dict(res), {"x": [[]] * _json_document.SEPARATORS_FIXED}, res.clock,
                              res.serialize, res.date)
    with pytest.raises(ValueError, match="JSON values and keys .* more than the .* a result file may"):
        crowded.save(tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_constants_that_are_no_number_are_refused(tmp_path, constant):
    doc = _document(small_results())
    text = json.dumps(doc).replace('"tsc_hz": 2600000000.0', f'"tsc_hz": {constant}')
    assert constant in text
    (tmp_path / "r.json").write_text(text)
    with pytest.raises(fastcpu.ResultFileError, match=f"JSON with {constant}, which is no number"):
        fastcpu.load(tmp_path / "r.json")


# -- item 3: figures no one can change silently ----------------------------------------------


def test_no_single_bit_flip_anywhere_loads_with_a_changed_figure(tmp_path):
    # before: only the arrays carried a CRC; 10-14 of 400 flips anywhere in
    # a file loaded silently with changed figures (cycles_per_tick, the
    # harness bias, the clock's digits)
    res = rich_results()
    path = tmp_path / "r.json"
    res.save(path)
    saved = path.read_bytes()
    body = saved.index(b'"checksum"')
    flipped = tmp_path / "flipped.json"
    loaded = refused = 0
    # every bit of every third byte of the document, every seventh of its checksum
    for i in [*range(0, body, 3), *range(body, len(saved), 7)]:
        for bit in range(8):
            damaged = bytearray(saved)
            damaged[i] ^= 1 << bit
            flipped.write_bytes(damaged)
            try:
                got = fastcpu.load(flipped)
            except fastcpu.ResultFileError:
                refused += i < body
                continue
            # what loads reads back as the same document (a CRC-32 of
            # checksum.field_crc32, which only names what differs), never other figures
            loaded += i < body
            assert got == res and got.verified, (i, bit, bytes(saved[max(0, i - 40):i + 10]))
    assert refused > 0.99 * 8 * len(range(0, body, 3)), (loaded, refused)


@pytest.mark.parametrize("edit, named", [
    (lambda d: d["clock"].update(cycles_per_tick=1.5), "clock.cycles_per_tick differs"),
    (lambda d: d["results"][1].update(harness_bias_core_cycles=-0.2), "results[1].harness_bias_core_cycles differs"),
    (lambda d: d["results"][0]["raw"].update(crc32=d["results"][0]["raw"]["crc32"] ^ 1), "results[0].raw differs"),
    (lambda d: d["machine"].update(family=26), "machine.family differs"),
    (lambda d: d.update(label="other"), "label differs"),
    (lambda d: d.update(pad=[]), "pad (not there when it was saved) differs"),
    (lambda d: d.pop("notes"), "notes (gone since it was saved) differs"),
    (lambda d: d["results"].pop(), "results (1 items, 2 when it was saved) differs"),
    (lambda d: d["selftest"].update(seconds=1.0), "selftest.seconds differs"),
    (lambda d: d["checksum"].update(sha256="0" * 64), "every field matches checksum.field_crc32, but the whole"),
])
def test_an_edit_without_a_new_checksum_is_refused_naming_the_field(tmp_path, edit, named):
    path = tmp_path / "r.json"
    rich_results().save(path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(fastcpu.ResultFileError, match=r"the file was altered or damaged since it was saved: "
                       + re.escape(named) + r".* restore it from a copy, or measure again"):
        fastcpu.load(path)


@pytest.mark.parametrize("checksum", [None, "abc", {"sha256": "0" * 64}, {"sha256": "A" * 64, "field_crc32": {}},
                                      {"sha256": "0" * 64, "field_crc32": {}, "more": 1}])
def test_a_checksum_of_the_wrong_shape_is_refused(tmp_path, checksum):
    path = tmp_path / "r.json"
    rich_results().save(path)
    doc = json.loads(path.read_text())
    doc["checksum"] = checksum
    path.write_text(json.dumps(doc))
    with pytest.raises(fastcpu.ResultFileError, match="field 'checksum' must be an object of 'sha256'"):
        fastcpu.load(path)
    del doc["checksum"]  # format version 3 on requires one
    path.write_text(json.dumps(doc))
    with pytest.raises(fastcpu.ResultFileError, match=r"format version \d+ without its 'checksum' field"):
        fastcpu.load(path)


def test_reindented_or_reordered_files_still_verify(tmp_path):
    res = rich_results()
    res.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    again = tmp_path / "again.json"
    again.write_text(json.dumps(dict(reversed(doc.items())), indent=4, sort_keys=True))
    back = fastcpu.load(again)
    assert back == res and back.verified


def test_files_without_a_checksum_load_unverified_and_say_so(tmp_path):
    res = rich_results()
    assert res.verified  # measured (here: built) in this process
    res.save(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    del doc["checksum"]
    for version in (1, 2):  # what fastcpu wrote before format version 3
        doc["version"] = version
        (tmp_path / "old.json").write_text(json.dumps(doc))
        old = fastcpu.load(tmp_path / "old.json")
        assert old == res and not old.verified
        assert "not verified: its file carries no checksum" in str(old)
        assert "not verified: its file carries no checksum" in old._repr_html_()
    assert "not verified" not in str(res)
    assert pickle.loads(pickle.dumps(old)).verified is False
    old.save(tmp_path / "new.json")  # saved anew: with a checksum, for the figures as they read now
    assert fastcpu.load(tmp_path / "new.json").verified
    committed = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                             "amd-epyc-kvm-guest.json")
    if os.path.exists(committed):  # format version 1, as first written
        assert not fastcpu.load(committed).verified


def _resealed(path, doc):
    """`doc` with a fresh checksum, as a tool that knows the format would
    write it: the checks behind the checksum are what is tested."""
    path.write_bytes(_json_document.encode_document(doc))
    return path


def _consume(res):
    """Everything that reads a loaded Results: none may raise."""
    import io

    from fastcpu import export

    json.dumps(export.to_gbench(res), allow_nan=False)
    export.write_csv(res, io.StringIO())
    table = fastcpu.compare(res, dataframe=False)
    str(table)
    str(res), repr(res), res._repr_html_()
    for r in res.values():
        repr(r), str(r), r._repr_html_(), r.warnings, r.estimate_core_cycles


def _with_counts(tmp_path, raw, empty):
    """A rich file whose gdt result ran `raw` against `empty` ticks every
    run, with a fresh checksum and valid CRCs, as a crafted file would be."""
    doc = _document(rich_results())
    entry = doc["results"][0]
    for key, value in (("raw", raw), ("empty", empty)):
        entry[key] = _json_document.encode_ticks(np.full(entry["runs"], value, np.uint64))
    for key in ("best_ticks", "median_ticks"):
        del entry[key]
    return _resealed(tmp_path / "r.json", doc)


@pytest.mark.parametrize("raw, empty", [(2**64 - 1, 60), (0, 2**64 - 1), (2**63, 0), (2**53, 60)])
def test_counts_no_tsc_delta_can_be_are_refused(tmp_path, raw, empty):
    # before: raw 2**64-1 made estimate raise OverflowError; raw 0 against
    # empty 2**64-1 gave an estimate of +1 tick and a median of -1.8e19 (one
    # statistic read a wrapped uint64, the other did not)
    bad = "raw" if raw >= 2**53 else "empty"
    with pytest.raises(fastcpu.ResultFileError, match=rf"results\[0\] \(gdt\) '{bad}' holds "
                       rf"{max(raw, empty)} at run 0: counts must be below 2\*\*53"):
        fastcpu.load(_with_counts(tmp_path, raw, empty))


@pytest.mark.parametrize("raw, empty", [(2**53 - 1, 0), (0, 2**53 - 1)])
def test_every_statistic_reads_the_largest_counts_alike(tmp_path, raw, empty):
    path = _with_counts(tmp_path, raw, empty)
    res = fastcpu.load(path)
    r = res["gdt"]
    per_copy = (raw - empty) / r.unroll
    for figure in (r.best, r.median, r._recommended.ticks):
        assert figure == pytest.approx(per_copy, rel=1e-9)
    # the ESTIMATE: that reading less the bias where it stands out from the empty runs, else a
    # bound and never a negative cost
    expected = per_copy - r.harness_bias_ticks if r.resolved else max(per_copy, 0.0)
    assert r.estimate == pytest.approx(expected, rel=1e-9) and (r.resolved or r.estimate >= 0)
    _consume(res)
    from fastcpu.cli import main

    assert main(["compare", str(path)]) == 0


@pytest.mark.parametrize("edit, named", [
    (lambda d: d["machine"].update(governors=True), "field machine.'governors' is true, must be an object "
     "mapping CPU numbers (as strings) to cpufreq governor names, or null"),
    (lambda d: d["machine"].update(governors=-1), "field machine.'governors' is -1, must be an object"),
    (lambda d: d["machine"].update(governors="x"), "field machine.'governors' is \"x\", must be an object"),
    (lambda d: d["machine"].update(governors={"zero": "performance"}), "field machine.'governors' is"),
    (lambda d: d["machine"].update(affinity=[0, -1]), "field machine.'affinity' is [0, -1], must be a list of "
     "CPU numbers"),
    (lambda d: d["machine"].update(family="25"), "field machine.'family' is \"25\", must be a whole number"),
    (lambda d: d["machine"].update(boost=1), "field machine.'boost' is 1, must be true or false, or null"),
    (lambda d: d["clock"].update(tsc_hz=1e308), "field clock.'tsc_hz' is 1e+308, must be a number from 1e+06 "
     "to 1e+11 TSC ticks per second"),
    (lambda d: d["clock"].update(cycles_per_tick=1e-300), "field clock.'cycles_per_tick' is 1e-300, must be a "
     "number from 0.001 to 1000 core cycles per TSC tick"),
    (lambda d: d["clock"].update(tsc_read_spacing_ticks=-1), "field clock.'tsc_read_spacing_ticks' is -1"),
    (lambda d: d["results"][0].update(cycles_per_tick=2e3), "field results[0] (gdt) 'cycles_per_tick' is 2000.0"),
    (lambda d: d["results"][0].update(harness_bias_core_cycles=-1e300), "field results[0] (gdt) "
     "'harness_bias_core_cycles' is -1e+300, must be a number from -1e+06 to 1e+06 core cycles"),
    (lambda d: d["results"][0].update(harness_bias_ci95_core_cycles=-0.5), "'harness_bias_ci95_core_cycles' is "
     "-0.5, must be a number from 0"),
    (lambda d: d["results"][0].update(cycles_per_tick_ci95=True), "'cycles_per_tick_ci95' is a bool"),
    (lambda d: d["results"][1].update(cpu=-1), "results[1] (rdpid) cpu is -1, must be 0 to"),
    (lambda d: d["results"][0].update(harness_bias=1.0), r"unknown field results[0].'harness_bias': results[0] "
     "holds only"),
    (lambda d: d["results"][0]["raw"].update(crc=1), "unknown field results[0] (gdt) 'raw'.'crc'"),
    (lambda d: d["clock"]["rulers"].update(tolerence=0.03), "unknown field clock.rulers.'tolerence'"),
    (lambda d: d.update(pad=[[]] * 10), "unknown field 'pad': the document holds only"),
    (lambda d: d["unavailable"].update(sidt=3), "field unavailable.'sidt' is int, expected a string"),
    (lambda d: d["selftest"]["checks"][0].update(bias_core_cycles=1e308), "selftest: unreadable report: "
     "selftest.checks[0].bias_core_cycles must be a number from -1e+09 to 1e+09, not 1e+308"),
    (lambda d: d["selftest"]["checks"][0].update(path="both"), "selftest.checks[0].path must be one of inline, user"),
    (lambda d: d["selftest"]["checks"][0]["chains"][0].update(within_goal=1), "selftest.checks[0].chains[0]."
     "within_goal must be true or false, not 1"),
    (lambda d: d["selftest"]["checks"][0]["chains"][0].update(name=[]), "selftest.checks[0].chains[0].name "
     "must be a str"),
    (lambda d: d["selftest"].update(passed="yes"), "selftest.passed must be true or false"),
    (lambda d: d["selftest"].update(extra=1), "unknown field selftest.extra"),
])
def test_every_field_is_checked_for_its_type_and_range_naming_it(tmp_path, edit, named):
    # before, machine.governors=true (or -1, "x") and clock.tsc_hz=1e308
    # loaded, then export.to_gbench() raised AttributeError or OverflowError
    doc = _document(rich_results())
    edit(doc)
    with pytest.raises(fastcpu.ResultFileError, match=re.escape(named)):
        fastcpu.load(_resealed(tmp_path / "r.json", doc))


def _leaves(node, at=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, at + (k,))
    elif isinstance(node, list) and node:
        for i, v in enumerate(node):
            yield from _leaves(v, at + (i,))
    else:
        yield at


#: Values no field of ours holds, or holds only in a narrow range.
STRANGE = [True, -1, "x", 1e308, -1e-308, 2**64, None, {}, [0]]


def test_any_field_of_any_value_loads_whole_or_is_refused_by_name(tmp_path):
    doc = _document(rich_results())
    del doc["checksum"]
    path = tmp_path / "r.json"
    loaded = 0
    for at in _leaves(doc):
        names = [str(k) for k in at if isinstance(k, str)][-2:]
        for value in STRANGE:
            edited = json.loads(json.dumps(doc))
            node = edited
            for k in at[:-1]:
                node = node[k]
            node[at[-1]] = value
            try:
                res = fastcpu.load(_resealed(path, edited))
            except fastcpu.ResultFileError as exc:
                assert any(n in str(exc) for n in names), (at, value, str(exc))
                continue
            loaded += 1
            _consume(res)  # what loads, every reader can use
    assert loaded > 20  # free text (labels, names, facts of our own) loads


def test_every_fact_machine_info_records_has_a_kind_and_fits_it():
    from fastcpu.results.stability import FACT_KINDS, fact_problem
    from fastcpu.instrument.machine import machine_info

    facts = json.loads(json.dumps(machine_info()))
    assert set(facts) == set(FACT_KINDS)
    assert {k: fact_problem(k, v) for k, v in facts.items() if fact_problem(k, v)} == {}


def _strings(res):
    """Every string a loaded Results shows."""
    out = [res.label, res.date, res.fastcpu_version, *res.notes, *res.unavailable, *res.unavailable.values()]
    out += [v for v in res.machine.values() if isinstance(v, str)]
    for r in res.values():
        out += [r.method, r.serialize, *r.caveats]
    return out


def test_control_characters_and_lone_surrogates_never_leave_the_door(tmp_path):
    # before: a label "\ud800" loaded as is, and compare and plot failed on it
    # (UnicodeEncodeError, a font error); "\x1b[2J" reached the terminal. Now a lone
    # surrogate, which no UTF-8 output can write, is replaced at the door; control
    # characters stay in the data (JSON and a piped CSV keep them) and every
    # terminal output shows them escaped, as repr does (_display.printable)
    doc = _document(rich_results())
    doc["label"] = "lone \ud800 surrogate, \x1b[2J escape"
    doc["machine"]["hostname"] = "host\udcff"  # what os.uname() gives for a non-UTF-8 name
    doc["notes"] = ["a note\x00with a NUL"]
    doc["unavailable"] = {"sidt\x07": "UMIP\x9b"}
    doc["results"][1]["caveats"] = ["\u0085caveat"]
    path = _resealed(tmp_path / "r.json", doc)
    res = fastcpu.load(path)
    assert res.verified  # replaced after the checksum was checked
    assert res.label == "lone \ufffd surrogate, \x1b[2J escape"
    assert res.machine["hostname"] == "host\ufffd" and res.notes == ("a note\x00with a NUL",)
    assert dict(res.unavailable) == {"sidt\x07": "UMIP\x9b"} and res["rdpid"].caveats == ("\x85caveat",)
    for s in _strings(res):
        s.encode("utf-8")  # no lone surrogate
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    for args in (["compare", str(path)], ["compare", str(path), "--csv"],
                 ["plot", str(path), "--out", str(tmp_path / "r.png")]):
        p = subprocess.run([sys.executable, "-m", "fastcpu", *args], capture_output=True, text=True,
                           timeout=300, env=env)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (args, p.stderr[-2000:])
        assert "\x1b" not in p.stderr
        if "--csv" not in args:  # a terminal's output: escaped
            assert "\x1b" not in p.stdout
    assert (tmp_path / "r.png").stat().st_size > 0
    table = str(fastcpu.compare(path, dataframe=False))
    assert "lone \ufffd surrogate, \\x1b[2J escape" in table and "\x1b" not in table
