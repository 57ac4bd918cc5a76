"""The compiled union-sampler steps (kernels/range_union.c) return bit-for-bit what the
numpy reference of ``UnionSampler._draw`` returns from the same words."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpnoise
from dpnoise.exact import range_union as ru
from dpnoise.randomness import SeededRandom

from .helpers import WordsWithValues, kernel_and_reference

pytestmark = pytest.mark.skipif(ru._union_kernel() is None, reason="kernels off")

DOMAINS = [
    ([(0, 4), (6, 10)], 1.0),
    ([(0, 1), (2, 3), (4, 5), (6, 7)], 0.01),       # 4 pieces, noise wider than the union
    ([(0, 1), (1000, 1001)], 1.0),                   # a far piece (the exact chain)
    ([(-math.inf, 0), (3, math.inf)], 0.5),          # half-line pieces
    ([(0, 10), (10.5, 11)], 3.0),                    # a tiny piece next to a big one
]


@pytest.mark.parametrize("domain, epsilon", DOMAINS)
def test_union_kernel_equals_reference(monkeypatch: pytest.MonkeyPatch, domain, epsilon: float
                                       ) -> None:  # type: ignore[no-untyped-def]
    m = dpnoise.RangeLaplace(epsilon=epsilon, sensitivity=1.0, domain=domain)
    g = np.random.default_rng(3)
    lo, hi = max(domain[0][0], -50.0), min(domain[-1][1], 1050.0)
    xs = g.uniform(lo, hi, 40_000)
    xs = xs[m.domain.contains(xs)]
    ends = [e for piece in domain for e in piece if math.isfinite(e)]
    xs = np.concatenate([np.array(ends * 8, dtype=float), xs])  # the edges, repeatedly
    fast, ref = kernel_and_reference(monkeypatch, ru, "_union_kernel",
                                     lambda: m.release(xs, rng=SeededRandom(12)))
    np.testing.assert_array_equal(fast, ref)
    assert np.all(m.in_output_set(fast))


def test_union_kernel_hands_a_zero_geometric_word_to_the_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = dpnoise.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=[(0, 4), (6, 10)])
    xs = np.linspace(0, 4, 100)
    # P = 2 pieces: words are [wd (1 x n), wc, wr, wq]; zero the 7th geometric word
    fast, ref = kernel_and_reference(
        monkeypatch, ru, "_union_kernel",
        lambda: m.release(xs, rng=WordsWithValues(5, [3 * 100 + 7], [0])))
    np.testing.assert_array_equal(fast, ref)


@st.composite
def _unions(draw):  # type: ignore[no-untyped-def]
    """2-4 pieces with integer-ish ends, random gaps and lengths, optional unbounded ends."""
    k = draw(st.integers(2, 4))
    ends, x = [], draw(st.integers(-20, 20)) * 0.5
    for _ in range(k):
        length = draw(st.integers(0, 24)) * 0.25 + 0.25
        ends.append([x, x + length])
        x += length + draw(st.integers(1, 40)) * 0.25
    if draw(st.booleans()):
        ends[0][0] = -math.inf
    if draw(st.booleans()):
        ends[-1][1] = math.inf
    return [tuple(e) for e in ends]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dom=_unions(), epsilon=st.sampled_from([0.3, 1.0, 4.0]),
       sens=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**32 - 1))
def test_union_kernel_equals_reference_property(dom, epsilon: float, sens: float, seed: int
                                                ) -> None:  # type: ignore[no-untyped-def]
    """Random unions, scales and centres (edges included): the kernel's releases equal the
    numpy reference's, value for value, from the same seeded words."""
    m = dpnoise.RangeLaplace(epsilon=epsilon, sensitivity=sens, domain=dom)
    g = np.random.default_rng(seed)
    finite = [e for piece in dom for e in piece if math.isfinite(e)]
    xs = g.uniform(min(finite) - 5, max(finite) + 5, 600)
    xs = np.concatenate([np.array(finite * 4), xs[m.domain.contains(xs)]])
    with pytest.MonkeyPatch.context() as mp:
        fast, ref = kernel_and_reference(mp, ru, "_union_kernel",
                                         lambda: m.release(xs, rng=SeededRandom(seed)))
    np.testing.assert_array_equal(fast, ref)
