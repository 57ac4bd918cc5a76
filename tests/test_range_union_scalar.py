"""The one-value union path (exact/range_union_scalar.py) is the batch sampler on one value:
the same parameters (bit for bit), the same words, the same release; the rare word extensions
included."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import RangeLaplace, SeededRandom

from .helpers import WordsWithValues

INF = math.inf
DOMAINS = [
    ([(0, 10), (20, 30)], 1.0),
    ([(-INF, 0), (1, 3), (3.5, INF)], 0.7),
    ([(0, 1), (2, 3), (4, 5), (6, 7)], 0.01),   # noise wider than the union
    ([(0, 1), (1000, 1001)], 1.0),               # a far piece: the exact chain
    ([(0, 10), (10.5, 11)], 3.0),                # a tiny piece next to a big one
]


def _values(m: RangeLaplace, dom, k: int, seed: int) -> np.ndarray:
    lo, hi = max(dom[0][0], -40.0), min(dom[-1][1], 1010.0)
    xs = np.random.default_rng(seed).uniform(lo, hi, 40 * k)
    ends = [e for piece in dom for e in piece if math.isfinite(e)]
    xs = np.concatenate([np.array(ends, dtype=float), xs[m.domain.contains(xs)][:k]])
    return xs


@pytest.mark.parametrize("dom, eps", DOMAINS)
def test_scalar_parameters_equal_the_batch(dom, eps):
    m = RangeLaplace(epsilon=eps, sensitivity=1.0, domain=dom)
    us = m._union
    xs = _values(m, dom, 400, 1)
    c = m._centres(xs).astype(np.float64)
    q, sides, thr, chain = us._params(c)
    for i in range(c.size):
        one = us.scalar.params(float(c[i]))
        assert one[0] == q[i]
        assert one[1] == tuple(float(v[i]) for v in sides)
        assert one[2] == tuple(float(v[i]) for v in thr)
        assert one[3] == [(float(n[i]), float(x[i]), bool(f[i])) for n, x, f in chain]


@pytest.mark.parametrize("dom, eps", DOMAINS)
def test_scalar_release_equals_the_array_release(dom, eps):
    m = RangeLaplace(epsilon=eps, sensitivity=1.0, domain=dom)
    for s, x in enumerate(_values(m, dom, 300, 2)):
        one = m.release(float(x), rng=SeededRandom(s))
        assert isinstance(one, float)
        assert one == m.release(np.array([x]), rng=SeededRandom(s))[0]
        assert m.in_output_set(one)


@settings(max_examples=60, deadline=None)
@given(x=st.floats(0, 10), seed=st.integers(0, 2**32 - 1), word=st.integers(0, 3),
       value=st.sampled_from([0, 1 << 12, 5 << 12, 1 << 40]))
def test_scalar_release_equals_the_array_release_on_rare_words(x, seed, word, value):
    """Forced rare words: a decision word whose 12 low bits are zero (the 2^-12 extension),
    a zero category / r / geometric word (the 2^-64 continuation)."""
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    one = m.release(x, rng=WordsWithValues(seed, [word], [value]))
    arr = m.release(np.array([x]), rng=WordsWithValues(seed, [word], [value]))
    assert one == arr[0]


def test_scalar_release_refuses_what_the_array_path_refuses():
    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 10), (20, 30)])
    for bad in (15.0, -1.0, 31, math.nan, math.inf):
        with pytest.raises(ValueError):
            m.release(bad, rng=SeededRandom(0))
