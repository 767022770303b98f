"""Property-based: any arguments to bench(), read(), read_raw() and measure(),
and any file given to load(), either work or raise a documented exception."""

import base64
import copy
import gzip
import json
import math
import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fastcpu
from fastcpu.files import write as _json_document

DOCUMENTED = (TypeError, ValueError, fastcpu.Unsupported)
NAMES = [m.name for m in fastcpu.methods()]
CHAINS = [c.name for c in fastcpu.chain_methods()]

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.integers(min_value=-(2**70), max_value=2**70),
)
ALLOWED = sorted(os.sched_getaffinity(0))


def mostly(valid, bad=anything):
    """`valid` nine times in ten, else `bad`: so that most calls get far."""
    return st.integers(min_value=0, max_value=9).flatmap(lambda i: bad if i == 9 else valid)


method = mostly(st.sampled_from(NAMES + CHAINS[:4]))


def is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def refused_count(maximum):
    """Counts that must be refused: zero, negatives, maximum + 1 and anything
    that is not a positive int. A valid count is never drawn here, so that no
    example measures 10^5 runs (seconds, and memory) by chance."""
    return st.one_of(st.integers(min_value=-5, max_value=0), st.just(maximum + 1),
                     anything.filter(lambda v: not is_count(v) or v > maximum))


runs = mostly(st.integers(min_value=1, max_value=50), refused_count(fastcpu.limits.RUNS_MAX))
unroll = mostly(st.integers(min_value=1, max_value=8), refused_count(fastcpu.limits.UNROLL_MAX))
serialize = mostly(st.sampled_from(fastcpu.limits.SERIALIZE_MODES))
cpu = mostly(st.one_of(st.none(), st.sampled_from(ALLOWED)),
             st.one_of(st.integers(min_value=-3, max_value=4096), anything))

# No example database: CI's unprivileged pass has no writable working directory.
# FASTCPU_PROPERTY_SCALE=20 tries twenty times as many examples: a deeper hunt
# (minutes) than the suite's.
_SCALE = int(os.environ.get("FASTCPU_PROPERTY_SCALE", "1"))
SAFE = settings(max_examples=300 * _SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                database=None)
FEW = settings(SAFE, max_examples=200 * _SCALE)


@SAFE
@given(method, runs, unroll, serialize, cpu)
def test_bench_works_or_raises_documented(m, n, k, s, c):
    # integers as methods are user function addresses: only pass real ones
    if isinstance(m, int) and not isinstance(m, bool):
        m = str(m)
    try:
        r = fastcpu.bench(m, n, unroll=k, serialize=s, cpu=c)
    except DOCUMENTED as exc:
        assert str(exc)
        event(f"refused: {type(exc).__name__}")
        return
    event("measured")
    assert r.raw.shape == r.empty.shape == (n,) and (r.method, r.unroll, r.cpu) == (m, k, c)


# -- read, read_raw ----------------------------------------------------------------

@SAFE
@given(st.one_of(st.sampled_from(NAMES + CHAINS), st.text(max_size=20), anything))
def test_read_works_or_raises_documented(m):
    try:
        r = fastcpu.read(m)
    except DOCUMENTED as exc:
        assert str(exc)
    else:
        assert r.method == m and r.cpu in ALLOWED  # this thread runs only there
        assert r.node is None or r.node >= 0
    try:
        raw = fastcpu.read_raw(m)
    except DOCUMENTED as exc:
        assert str(exc)
    else:
        assert type(raw) is int and 0 <= raw < 2**32


# -- measure (tiny runs) ------------------------------------------------------------

some_methods = st.one_of(
    st.none(),
    st.lists(st.sampled_from(NAMES + CHAINS[:3] + ["rdpidd", ""]), max_size=3),
    st.sampled_from(NAMES),
)


@FEW
@given(mostly(st.integers(min_value=1, max_value=6), refused_count(fastcpu.limits.RUNS_MAX)),
       mostly(some_methods), serialize,
       mostly(st.integers(min_value=1, max_value=3), refused_count(fastcpu.limits.UNROLL_MAX)), cpu,
       mostly(st.one_of(st.none(), st.just(lambda done, total, name: None))),
       mostly(st.one_of(st.none(), st.text(max_size=8))))
def test_measure_works_or_raises_documented(n, names, s, k, c, p, lab):
    try:
        # the arguments are the property; a self-test per example (seconds in
        # cpuid mode) would only slow it down: tests/test_selftest.py covers
        # it. So would the back-to-back tables (k = 16 copies of every method,
        # two minutes of cpuid VM exits in all): tests/test_answers.py covers them
        res = fastcpu.measure(n, names, s, unroll=k, cpu=c, progress=p, label=lab, selftest=False,
                              back_to_back=False)
    except DOCUMENTED as exc:
        assert str(exc)
        event(f"refused: {type(exc).__name__}")
        return
    event("measured")
    assert res.serialize == s and res.label == lab
    for name, r in res.items():
        assert r.method == name and r.raw.shape == (n,) and (r.unroll, r.cpu) == (k, c)


# -- load: arbitrary bytes, arbitrary JSON, damaged real files ----------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("load_props")
    res = fastcpu.measure(8, ["gdt", "syscall"], label="props")
    res.save(tmp / "good.json")
    return tmp, res, json.loads((tmp / "good.json").read_text())


def loads_or_refuses(path):
    """load(path) returns consistent Results or raises ResultFileError, nothing else."""
    try:
        res = fastcpu.load(path)
    except fastcpu.ResultFileError as exc:
        assert str(exc).startswith(str(path) + ": ")
        event("refused")
        return None
    event("loaded")
    for name, r in res.items():  # what loads must be whole and usable
        assert r.method == name
        assert r.raw.shape == r.empty.shape == r.migrated.shape == (r.runs,)
        assert math.isfinite(r.best) and math.isfinite(r.median)
        assert math.isfinite(r.ticks_to_ns(1.0)) and math.isfinite(r.ticks_to_core_cycles(1.0))
        # computed on first access: must not raise
        assert math.isfinite(r.estimate) and not r.estimate_ci95 < 0
    str(res)
    return res


@FEW
@given(st.binary(max_size=300), st.booleans())
def test_load_arbitrary_bytes(files, data, gzipped):
    path = files[0] / "bytes.json"
    path.write_bytes(gzip.compress(data) if gzipped else data)
    loads_or_refuses(path)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), st.integers(min_value=-(2**80), max_value=2**80),
              st.text(max_size=10)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)


@FEW
@given(json_values)
def test_load_arbitrary_json(files, doc):
    path = files[0] / "arbitrary.json"
    path.write_text(json.dumps(doc))
    loads_or_refuses(path)


@FEW
@given(st.data())
def test_load_a_truncated_file(files, data):
    tmp, res, _ = files
    whole = (tmp / "good.json").read_bytes()
    gzipped = data.draw(st.booleans())
    if gzipped:
        whole = gzip.compress(whole)
    cut = data.draw(st.integers(min_value=0, max_value=len(whole) - 1))
    path = tmp / "cut.json"
    path.write_bytes(whole[:cut])
    got = loads_or_refuses(path)
    # only the final newline can go without losing anything
    assert got is None or (not gzipped and cut == len(whole) - 1 and got == res)


def _paths(node, prefix=()):
    """Every path to a value in a JSON tree."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _parent(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc


replacements = st.one_of(
    json_values,
    st.sampled_from([0, -1, 1, 10**30, 10**400, 1.5, math.inf, -math.inf, math.nan, "", "x", [], {},
                     None, True, False]),
    st.binary(min_size=0, max_size=16).map(lambda b: base64.b64encode(b).decode()),
)


@FEW
@given(st.data())
def test_load_a_file_with_a_field_deleted_or_retyped(files, data):
    tmp, _, doc = files
    doc = copy.deepcopy(doc)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths), label="path")
    parent = _parent(doc, path)
    if data.draw(st.booleans(), label="delete"):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(replacements, label="value")
    out = tmp / "edited.json"
    try:  # with a fresh checksum: what is behind it is the property
        out.write_bytes(_json_document.encode_document(doc))
    except (TypeError, ValueError):  # NaN, Infinity, a key that is no string: as Python's json writes them
        out.write_text(json.dumps(doc))
    loads_or_refuses(out)
