"""Exact integer samplers: Bernoulli(a/b), Bernoulli(exp(-x)), discrete Laplace/Gaussian, tables."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpnoise import SeededRandom
from dpnoise.exact.bernoulli import (
    _exp_digits,
    bernoulli_exp,
    bernoulli_ratio,
    exp_neg_threshold_count,
    uniform_below_exp,
)
from dpnoise.exact.discrete_gaussian import discrete_gaussian, grid_sigma2
from dpnoise.exact.discrete_laplace import discrete_laplace
from dpnoise.exact.rational import exp_lower
from dpnoise.exact.table import IntegerTable, quantize_symmetric
from dpnoise.exact.words import WordStream

from .helpers import pmf_chi_square_pvalue

N = 200_000


def z_score(hits: int, n: int, p: float) -> float:
    return (hits - n * p) / math.sqrt(n * p * (1 - p)) if 0 < p < 1 else 0.0


@pytest.mark.parametrize("a,b", [(1, 3), (7, 10), (0, 5), (5, 5), (3, 1 << 40)])
def test_bernoulli_ratio(a, b) -> None:
    x = bernoulli_ratio(WordStream(SeededRandom(1)), a, b, N)
    assert abs(z_score(int(x.sum()), N, a / b)) < 4.5


@pytest.mark.parametrize("a,b", [(1, 1), (3, 10), (5, 2), (37, 7), (9, 10), (0, 3)])
def test_bernoulli_exp(a, b) -> None:
    x = bernoulli_exp(WordStream(SeededRandom(2)), a, b, N)
    p = math.exp(-a / b)
    assert abs(z_score(int(x.sum()), N, p)) < 4.5
    if a == 0:
        assert x.all()


def test_exp_thresholds_and_lazy_ties() -> None:
    import mpmath

    for q in range(1, 50):
        with mpmath.workprec(600):
            ref = int(mpmath.floor(mpmath.exp(-q) * mpmath.mpf(2) ** 128))
        assert _exp_digits(q, 2) == ref and _exp_digits(q, 1) == ref >> 64

    class Fixed:  # first word exactly on the threshold: the lazy tail must decide
        def __init__(self, words: list[int]) -> None:
            self.w = words

        def words(self, n: int) -> np.ndarray:
            out, self.w = self.w[:n], self.w[n:]
            return np.array(out, dtype=np.uint64)

    t1 = _exp_digits(1, 1)
    nxt = _exp_digits(1, 2) & ((1 << 64) - 1)
    assert 0 < nxt < (1 << 64) - 1
    below = WordStream(Fixed([t1, nxt - 1] + [0] * 10), block=1)
    above = WordStream(Fixed([t1, nxt + 1] + [0] * 10), block=1)
    assert uniform_below_exp(below, np.array([1]))[0]
    assert not uniform_below_exp(above, np.array([1]))[0]


def test_exp_count_geometric() -> None:
    v = exp_neg_threshold_count(WordStream(SeededRandom(3)), N)
    for k in range(1, 5):
        assert abs(z_score(int((v >= k).sum()), N, math.exp(-k))) < 4.5


@pytest.mark.parametrize("s,t", [(1, 1), (1, 3), (13, 10), (3, 7)])
def test_discrete_laplace(s, t) -> None:
    y = discrete_laplace(WordStream(SeededRandom(4)), s, t, N)
    r = math.exp(-s / t)
    ks = np.arange(-400, 401)
    assert pmf_chi_square_pvalue(y, ks, (1 - r) / (1 + r) * r ** np.abs(ks), 5.0) > 1e-6


@pytest.mark.parametrize("s2", [Fraction(1, 4), Fraction(2660156, 10**7), Fraction(9), 30])
def test_discrete_gaussian(s2) -> None:
    p = grid_sigma2(Fraction(s2))
    assert p.sigma2 >= Fraction(s2) and p.sigma2 <= Fraction(s2) * (1 + Fraction(1, 1 << 19))
    y = discrete_gaussian(WordStream(SeededRandom(5)), p, N)
    ks = np.arange(-400, 401)
    w = np.exp(-ks.astype(float) ** 2 / (2 * float(p.sigma2)))
    w /= w.sum()
    assert pmf_chi_square_pvalue(y, ks, w, 5.0) > 1e-6


def test_table_lut_equals_plain_inverse_cdf() -> None:
    pmf = [Fraction(1, 7), Fraction(1, 5), Fraction(1 - 2 * (Fraction(1, 7) + Fraction(1, 5))),
           Fraction(1, 5), Fraction(1, 7)]
    tab = IntegerTable(quantize_symmetric(pmf), -2)
    assert tab.exact_weights() == list(tab.weights)
    words = SeededRandom(9).words(15_000)
    # force the ambiguous cells too: words sitting right at the boundaries
    bounds = np.array([b for b in np.cumsum([int(w) for w in tab.weights], dtype=object)[:-1]],
                      dtype=object)
    extra = np.array([int(b) + d for b in bounds for d in (-1, 0, 1)], dtype=np.uint64)
    allw = np.concatenate([words, extra])

    class Fixed:
        def __init__(self, w: np.ndarray) -> None:
            self.w = w

        def words(self, n: int) -> np.ndarray:
            out, self.w = self.w[:n], self.w[n:]
            return out

    allw = allw[:16_000]  # one kernel chunk: digit words first, then the 48-bit tails
    ref = tab.outcome_of_words(allw)
    digits = (allw >> np.uint64(48)).astype(np.uint16)
    amb = tab._lut[digits] == tab._sentinel
    assert amb.sum() > 0
    stream = np.concatenate([digits.view(np.uint64), allw[amb] << np.uint64(16)])
    got = tab.release(Fixed(stream), None, allw.size)
    assert np.array_equal(got, ref)


def test_exp_lower_is_below() -> None:
    import mpmath

    for x in (0.5, 1.1, 2.18, 1e-9, 30.0):
        E = exp_lower(x)
        with mpmath.workprec(300):
            assert mpmath.mpf(E.numerator) / E.denominator < mpmath.exp(mpmath.mpf(x))
            assert mpmath.mpf(E.numerator) / E.denominator > mpmath.exp(mpmath.mpf(x)) * (
                1 - mpmath.mpf(2) ** -60)
    assert exp_lower(0) == 1


def test_rare_paths_are_exact_and_terminate() -> None:
    from dpnoise.exact.bernoulli import _exp_count_exact
    from dpnoise.exact.discrete_gaussian import DGParams, _accept

    ws = WordStream(SeededRandom(11))
    # a huge exponent (big-integer path of the DG acceptance): rejected, no blow-up
    p = DGParams(t=1, m=1 << 19, c=1 << 21)
    y = np.array([10**12, -(10**15), 0], dtype=np.int64)
    acc = _accept(ws, y, p)
    assert not acc[0] and not acc[1]
    assert _exp_digits(10**12, 3) == 0
    # V's first word exactly on a threshold: decided by further words, consistent with u
    t2 = _exp_digits(2, 1)
    v = _exp_count_exact(ws, t2)
    assert v in (1, 2)
    assert _exp_count_exact(ws, 0) >= 44  # u < 2^-64: at least floor(64 ln 2) = 44
