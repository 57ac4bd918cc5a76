"""The fast samplers, each against its exact law and its reference sampler.

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

from .helpers import pmf_chi_square_pvalue


class CountingRandom:
    """A seeded source that counts the words it hands out."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededRandom(seed)
        self.count = 0

    def words(self, n: int) -> np.ndarray:
        self.count += n
        return self.inner.words(n)


@pytest.mark.parametrize("eps,sens", [(0.05, 1), (0.7, 1), (1.0, 2), (3.0, 1)])
def test_integer_block_law_is_verified_and_tight(eps: float, sens: int) -> None:
    law, loss = calibrate_integer_block(eps, sens)
    assert loss + 1e-12 <= eps and loss > 0.97 * eps
    m = Geometric(epsilon=eps, sensitivity=sens, lower=None, sampler="block")
    rep = verify(m)
    assert rep.passed and abs(rep.epsilon - loss) < 1e-11
    # the table's weights are exactly what is sampled and sum to 2^64
    assert sum(law.weights) == 1 << 64 and min(law.weights) > 0


@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
def test_geometric_block_draws_match_noise(eps: float) -> None:
    m = Geometric(epsilon=eps, lower=None, upper=None, boundary="none")
    law = m.noise()
    y = m.release(np.zeros(400_000, dtype=np.int64), rng=SeededRandom(11))
    assert pmf_chi_square_pvalue(y, law.values, law.probs) > 1e-3
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


# ------------------------------------------------------------------ discrete Gaussian table
@pytest.mark.parametrize("kw", [{"delta": 1e-6}, {"sigma2": 4.0},
                                {"delta": 1e-9, "sensitivity": 2}])
def test_dg_table_verified_and_close_to_ideal(kw: dict) -> None:
    from dpnoise import DiscreteGaussian
    from dpnoise.laws import discrete_gaussian as dga

    m = DiscreteGaussian(epsilon=1.0, **kw)
    assert m.sampler == "table"
    rep = verify(m)
    assert rep.passed
    assert rep.delta_at(1.0) <= m.guarantee.delta
    ideal = dga.delta(float(m.sigma2), 1.0, m.sensitivity)
    assert abs(m.guarantee.delta - ideal) < 1e-14 + 1e-4 * ideal
    if "delta" in kw:
        assert m.guarantee.delta <= kw["delta"]
    assert sum(m.table.table.exact_weights()) == 1 << 64


def test_dg_table_draws_match_noise_and_reference() -> None:
    from dpnoise import DiscreteGaussian

    fast = DiscreteGaussian(epsilon=1.0, sigma2=9.0, lower=None, boundary="none")
    ref = DiscreteGaussian(epsilon=1.0, sigma2=9.0, lower=None, boundary="none",
                           sampler="cks")
    assert fast.sampler == "table" and ref.sampler == "cks"
    law = fast.noise()
    a = fast.release(np.zeros(300_000, dtype=np.int64), rng=SeededRandom(7))
    assert pmf_chi_square_pvalue(a, law.values, law.probs) > 1e-3
    b = ref.release(np.zeros(300_000, dtype=np.int64), rng=SeededRandom(8))
    lo, hi = -12, 12
    ca = np.bincount(np.clip(a, lo, hi) - lo, minlength=hi - lo + 1)
    cb = np.bincount(np.clip(b, lo, hi) - lo, minlength=hi - lo + 1)
    assert stats.chi2_contingency(np.vstack([ca, cb]))[1] > 1e-3


def test_dg_table_one_word_per_draw_and_fallback() -> None:
    from dpnoise import DiscreteGaussian
    from dpnoise.exact.dg_table import fits

    m = DiscreteGaussian(epsilon=1.0, sigma2=2.0)
    rng = CountingRandom(9)
    m.sample_noise(50_001, rng)
    assert rng.count == 50_001
    assert not fits(1e9)
    big = DiscreteGaussian(epsilon=1.0, sigma2=1e9)
    assert big.sampler == "cks" and big.table is None
    with pytest.raises(ParameterError):
        DiscreteGaussian(epsilon=1.0, sigma2=2.0, sampler="float")


# ------------------------------------------------------------------ threads
@pytest.mark.parametrize("which", ["laplace", "geometric", "dg"])
def test_split_release_independent_of_threads(which: str, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    from dpnoise import DiscreteGaussian, Laplace
    from dpnoise.parallel import SPLIT_CHUNK, SPLIT_MIN

    n = SPLIT_MIN + SPLIT_CHUNK // 3  # split into chunks, the last one partial
    if which == "laplace":
        m, x = Laplace(epsilon=1.0, sensitivity=1.0), np.linspace(0, 100, n)
    elif which == "geometric":
        m, x = Geometric(epsilon=1.0, upper=None), np.arange(n)
    else:
        m, x = DiscreteGaussian(epsilon=1.0, delta=1e-6, upper=None), np.arange(n)
    runs = []
    for t in ("1", "2", "3"):
        monkeypatch.setenv("DPNOISE_THREADS", t)
        runs.append(m.release(x, rng=SeededRandom(12)))
    assert all(np.array_equal(runs[0], r) for r in runs[1:])
    # chunks use distinct keystreams: no two chunks repeat each other's noise
    noise = runs[0] - x
    assert not np.array_equal(noise[:1000], noise[SPLIT_CHUNK : SPLIT_CHUNK + 1000])
    # the split release still follows the exact law (chi-square on the noise)
    if which != "laplace":
        law = m.noise()
        assert pmf_chi_square_pvalue(noise.astype(np.int64), law.values, law.probs) > 1e-3


def test_scalar_path_equals_array_kernel() -> None:
    """The one-value path reads the same two words and computes the same release."""
    from dpnoise import Laplace

    m = Laplace(epsilon=1.0, sensitivity=1.0)
    sampler = m._sampler()
    for i, x in enumerate([0.0, 3.3, -7.1, 1e6, 0.5 * m.grid]):
        fast = m.release(x, rng=SeededRandom(i))
        ref = sampler.signed_odd(SeededRandom(i), 1, centre=np.array([x]), grid=m.grid)[0]
        assert isinstance(fast, float) and fast == ref


def test_scalar_path_exact_grid_index_at_half_points() -> None:
    """x/L + 1/2 would round in float at 0.49999999999999994: the exact index is 0."""
    from dpnoise import Laplace

    m = Laplace(epsilon=1.0, sensitivity=1.0)
    sampler = m._sampler()
    for i, q in enumerate([0.49999999999999994, 0.5, -0.5, 2.5, -2.49999999999999956]):
        x = q * m.grid
        fast = m.release(x, rng=SeededRandom(i))
        ref = sampler.signed_odd(SeededRandom(i), 1, centre=np.array([x]), grid=m.grid)[0]
        assert fast == ref
