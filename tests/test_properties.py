"""Property-based: any arguments to bench() either work or raise a documented exception."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastcpu

DOCUMENTED = (TypeError, ValueError, fastcpu.Unsupported)

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.integers(min_value=-(2**70), max_value=2**70),
)
method = st.one_of(st.sampled_from([m.name for m in fastcpu.methods()]), anything)
runs = st.one_of(st.integers(min_value=-5, max_value=50), st.just(fastcpu.RUNS_MAX + 1), anything)
unroll = st.one_of(st.integers(min_value=-2, max_value=8), st.just(fastcpu.UNROLL_MAX + 1), anything)
serialize = st.one_of(st.sampled_from(fastcpu.SERIALIZE_MODES), anything)
cpu = st.one_of(st.none(), st.integers(min_value=-3, max_value=4096), anything)

SAFE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


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
        return
    assert r.raw.shape == (n,)
