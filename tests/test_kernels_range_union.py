"""The compiled union-sampler steps (kernels/range_union.c) return bit-for-bit what the
numpy reference of ``UnionSampler._draw`` returns from the same words."""

from __future__ import annotations

import math

import numpy as np
import pytest

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
