"""The fast samplers of issue 14, each against its exact law and its reference sampler.

Each new sampler is checked on its own: the verifier on the law it samples, a chi-square test
of its draws against ``noise()`` at a fixed seed, a fixed number of words per draw, and (where
the laws coincide) a two-sample comparison with the reference (pure rejection) sampler.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpnoise import Geometric, ParameterError, SeededRandom, verify
from dpnoise.exact.integer_block import IntegerBlockLaplace, calibrate_integer_block


class CountingRandom:
    """A seeded source that counts the words it hands out."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededRandom(seed)
        self.count = 0

    def words(self, n: int) -> np.ndarray:
        self.count += n
        return self.inner.words(n)


def _chi2_pvalue(draws: np.ndarray, values: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square p-value of integer draws against an exact pmf (cells with >= 20 expected)."""
    n = draws.size
    expected = probs * n
    keep = expected >= 20
    lo, hi = values[keep][0], values[keep][-1]
    obs = np.bincount(np.clip(draws, lo, hi) - lo, minlength=hi - lo + 1)
    exp = np.zeros(hi - lo + 1)
    np.add.at(exp, np.clip(values, lo, hi) - lo, expected)
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("eps,sens", [(0.05, 1), (0.7, 1), (1.0, 2), (3.0, 1)])
def test_integer_block_law_is_verified_and_tight(eps: float, sens: int) -> None:
    law, loss = calibrate_integer_block(eps, sens)
    assert loss + 1e-12 <= eps and loss > 0.97 * eps
    m = Geometric(epsilon=eps, sensitivity=sens, lower=None)
    rep = verify(m)
    assert rep.passed and abs(rep.epsilon - loss) < 1e-11
    # the table's weights are exactly what is sampled and sum to 2^64
    assert sum(law.weights) == 1 << 64 and min(law.weights) > 0


@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
def test_geometric_block_draws_match_noise(eps: float) -> None:
    m = Geometric(epsilon=eps, lower=None, upper=None, boundary="none")
    law = m.noise()
    y = m.release(np.zeros(400_000, dtype=np.int64), rng=SeededRandom(11))
    assert _chi2_pvalue(y, law.values, law.probs) > 1e-3
    assert abs(y.mean()) < 6 * law.std() / np.sqrt(y.size)


def test_geometric_block_two_words_per_draw() -> None:
    law = IntegerBlockLaplace(3, 5)
    rng = CountingRandom(4)
    law.sample(rng, 100_001)
    assert rng.count == 2 * 100_001


def test_geometric_block_against_reference_sampler() -> None:
    """At decay ln 2 (eps = ln 2, j = M = 1) both samplers target the same ideal law."""
    eps = float(np.log(2.0)) + 1e-9
    fast = Geometric(epsilon=eps, lower=None, boundary="none")
    assert (fast.block.j, fast.block.M) == (1, 1)
    ref = Geometric(epsilon=eps, lower=None, boundary="none", sampler="cks")
    a = fast.release(np.zeros(200_000, dtype=np.int64), rng=SeededRandom(5))
    b = ref.release(np.zeros(200_000, dtype=np.int64), rng=SeededRandom(6))
    lo, hi = -12, 12
    ca = np.bincount(np.clip(a, lo, hi) - lo, minlength=hi - lo + 1)
    cb = np.bincount(np.clip(b, lo, hi) - lo, minlength=hi - lo + 1)
    assert stats.chi2_contingency(np.vstack([ca, cb]))[1] > 1e-3


def test_geometric_sampler_parameter() -> None:
    with pytest.raises(ParameterError):
        Geometric(epsilon=1.0, sampler="float")
    assert "sampler='cks'" in repr(Geometric(epsilon=1.0, sampler="cks"))
