"""The exact exponential-mechanism quantiles: the sampled law equals the stated law, the law is
ε-DP by the independent verifier, the several-quantile release is sorted and accurate, the
error bounds come from public parameters only, and bad parameters are refused."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise as dp
from dpnoise.errors import ParameterError
from dpnoise.exact.exponential_pieces import sample_pieces, scaled_powers
from dpnoise.exact.words import WordStream
from dpnoise.mechanisms.interval_quantile import IntervalQuantile, pieces, snap
from dpnoise.mechanisms.multi_quantile import MultiQuantile
from dpnoise.mechanisms.registry import Request, build
from dpnoise.verify import verify


def _chi2_ok(counts: np.ndarray, probs: np.ndarray) -> bool:
    """Pearson chi-square on cells of expected count >= 5 (pooled rest), p > 1e-4."""
    from scipy import stats

    n = counts.sum()
    exp = probs * n
    big = exp >= 5
    obs = np.append(counts[big], counts[~big].sum())
    e = np.append(exp[big], exp[~big].sum())
    keep = e > 0
    return stats.chisquare(obs[keep], e[keep] * obs[keep].sum() / e[keep].sum()).pvalue > 1e-4


def test_scaled_powers_are_exact() -> None:
    assert scaled_powers(7, [0, 3, 1, 3], 5) == [2**120, 7**3 * 2**48, 7 * 2**96,
                                                 7**3 * 2**48]


@pytest.mark.parametrize("data,level", [((3, 3, 3, 9), 0.5), ((), 0.5), ((0, 1, 2, 14, 15), 0.25),
                                        ((5,) * 6 + (6,), 0.9)])
def test_sampled_law_equals_the_pointwise_law(data: tuple[int, ...], level: float) -> None:
    """The piece sampler (far bucket and rejection included: a small cutoff forces it) draws
    the law computed point by point from the definition."""
    m = IntervalQuantile(epsilon=1.0, level=level, lower=0.0, upper=15.0, grid=1.0)
    y, lp = m.law_of(data)
    rng = dp.SeededRandom(11)
    words = WordStream(rng)
    s, ln, d = pieces(np.array(sorted(data), dtype=np.int64), m.n_points,
                      m.level.numerator, m.level.denominator)
    draws = np.array([sample_pieces(words, s, ln, d, m.p, 1) for _ in range(3000)])
    counts = np.bincount(draws, minlength=y.size)
    assert _chi2_ok(counts, np.exp(lp))
    full = np.array([m.release_index(np.array(data, dtype=float), rng) for _ in range(1000)])
    assert _chi2_ok(np.bincount(full, minlength=y.size), np.exp(lp))


@given(st.lists(st.integers(0, 40), max_size=30), st.sampled_from([0.1, 0.25, 0.5, 0.75, 1.0]))
@settings(max_examples=40, deadline=None)
def test_pieces_agree_with_the_definition(data: list[int], level: float) -> None:
    """Every lattice point's score from the pieces equals max(0, D·A − Q·n, Q·n − D·B)."""
    q = Fraction(level)
    s, ln, d = pieces(np.array(sorted(data), dtype=np.int64), 40, q.numerator, q.denominator)
    assert int(ln.sum()) == 41
    x = np.array(data)
    for start, length, score in zip(s, ln, d, strict=True):
        for y in range(start, start + length):
            a, b = int((x < y).sum()), int((x <= y).sum())
            qn = q.numerator * len(data)
            assert score == max(0, q.denominator * a - qn, qn - q.denominator * b)


@pytest.mark.parametrize("level,contributions", [(0.5, 1), (0.25, 1), (0.9, 2)])
def test_verifier_confirms_epsilon(level: float, contributions: int) -> None:
    m = IntervalQuantile(epsilon=0.7, level=level, lower=0.0, upper=8.0, grid=1.0,
                         contributions=contributions)
    rep = verify(m)
    assert rep.epsilon <= 0.7 * (1 + 1e-9)
    assert rep.epsilon <= m.epsilon_realised * (1 + 1e-9)
    assert rep.epsilon > 0.5 * 0.7  # the factor-2 exponential mechanism is nearly tight


def test_less_noise_fails_the_verifier() -> None:
    """A base one notch closer to 0 than calibrated (more weight on good points) would lose
    more than ε: the verifier sees it, so the calibration is not loose by much."""
    m = IntervalQuantile(epsilon=1.0, level=0.5, lower=0.0, upper=8.0, grid=1.0)
    sharper = IntervalQuantile(epsilon=1.3, level=0.5, lower=0.0, upper=8.0, grid=1.0)
    assert verify(sharper.privacy_model()).epsilon > m.epsilon


def test_median_accuracy_and_rank_bound_on_incomes() -> None:
    rng = np.random.default_rng(5)
    x = np.clip(rng.lognormal(10, 1, 20000), 0, 250000)
    xs = np.sort(x)
    m = IntervalQuantile(epsilon=1.0, level=0.5, lower=0.0, upper=250000.0)
    bound = m.rank_error(0.05)
    assert bound == IntervalQuantile.half_width(1.0, level=0.5, lower=0.0, upper=250000.0)
    errs = []
    for seed in range(8):
        y = m.release(x, rng=dp.SeededRandom(seed))
        a, b = np.searchsorted(xs, y, "left"), np.searchsorted(xs, y, "right")
        errs.append(max(0, a - 0.5 * x.size, 0.5 * x.size - b))
    assert max(errs) <= bound
    assert np.mean(errs) < 5


def test_nan_and_infinite_rows_raise_nothing() -> None:
    m = IntervalQuantile(epsilon=1.0, level=0.5, lower=0.0, upper=10.0, grid=0.5)
    out = m.release([np.nan, np.inf, -np.inf, 3.0], rng=dp.SeededRandom(1))
    assert 0.0 <= out <= 10.0 and bool(m.in_output_set(out))
    assert list(snap([np.nan, np.inf, -np.inf, 3.2], 0.0, 0.5, 20)) == [0, 6, 20]


def test_several_quantiles_sorted_and_within_the_joint_bound() -> None:
    """Sorted outputs, every rank error within the all-at-once bound (the comparison with
    composing single quantiles is measured by benchmarks/quantiles.py)."""
    rng = np.random.default_rng(2)
    x = np.clip(rng.lognormal(10, 1, 20000), 0, 250000)
    xs = np.sort(x)
    levels = [0.1, 0.5, 0.9]
    joint = MultiQuantile(epsilon=1.0, levels=levels, lower=0.0, upper=250000.0)

    def err(y: float, q: float) -> float:
        a, b = np.searchsorted(xs, y, "left"), np.searchsorted(xs, y, "right")
        return max(0.0, a - q * x.size, q * x.size - b)

    bound = joint.rank_error(x.size)
    for seed in range(3):
        out = joint.release(x, rng=dp.SeededRandom(seed))
        assert list(out) == sorted(out)
        e = [err(y, q) for y, q in zip(out, levels, strict=True)]
        assert max(e) <= bound


def test_registry_builds_and_refuses() -> None:
    m = build("multi-quantile", Request(epsilon=1.0, lower=0.0, upper=8.0, grid=1.0,
                                        options={"levels": "0.9,0.1"}))
    assert [float(q) for q in m.levels] == [0.1, 0.9]
    assert verify(m).epsilon <= m.epsilon_step * (1 + 1e-9)
    for bad in ({"level": 1.5}, {"level": "x"}, {"contributions": 0}, {"grid": 3.0},
                {"upper": 0.0}, {"epsilon": 1e-9}):
        kw = {"epsilon": 1.0, "level": 0.5, "lower": 0.0, "upper": 8.0, "grid": 1.0} | bad
        with pytest.raises(ParameterError):
            IntervalQuantile(**kw)
    for levels in ([], [0.5, 0.5], [0.0], ["a"]):
        with pytest.raises(ParameterError):
            MultiQuantile(epsilon=1.0, levels=levels, lower=0.0, upper=8.0)
    assert math.isfinite(MultiQuantile.half_width(1.0, levels=(0.25, 0.5, 0.75)))


def test_private_bounds_cover_most_of_the_data_and_state_clamping_from_public_facts() -> None:
    from dpnoise.mechanisms.private_bounds import PrivateBounds

    x = np.random.default_rng(3).lognormal(10, 1, 50_000)
    m = PrivateBounds(epsilon=1.0)
    low, high = m.release(x, rng=dp.SeededRandom(2))
    assert low in m.grid and high in m.grid and low <= high
    outside = np.mean((x < low) | (x > high))
    assert outside <= m.clamped_fraction_bound(50_000)
    assert m.clamped_fraction_bound(50_000) < 0.1
    quartiles = PrivateBounds(epsilon=1.0, lower_level=0.25, upper_level=0.75)
    assert verify(quartiles).epsilon <= 0.5 * (1 + 1e-9)  # each bound's step: epsilon / 2
    with pytest.raises(ParameterError):
        PrivateBounds(epsilon=1.0, lower_level=0.9, upper_level=0.1)


@pytest.mark.parametrize("level", [0.5, 0.1])
def test_the_stated_epsilon_is_nearly_reached(level: float) -> None:
    """The calibration ``b = e^{−ε/(2Δ)}``, ``Δ = k·max(Q, D − Q)``, is tight, not just safe:
    one added row below the data, with a long empty stretch at the level's rank (n = 9 rows
    at 0.1, 10 at the median), moves one output's log-probability by more than 0.98 ε -- so
    no calibration without the factor 2 (or with a smaller Δ) could state the same ε."""
    m = IntervalQuantile(epsilon=1.0, level=level, lower=0.0, upper=200.0, grid=1.0)
    n = 9 if level == 0.1 else 10
    near = int(level * n) or 1
    base = tuple(range(1, near + 1)) + tuple(range(200 - (n - near) + 1, 201))
    _, lp = m.law_of(base)
    _, lq = m.law_of(tuple(sorted((0, *base))))
    loss = float(np.max(np.abs(lp - lq)))
    assert 0.98 * m.epsilon < loss <= m.epsilon_realised * (1 + 1e-9)


def test_private_bounds_clamp_statement_needs_its_preference_term() -> None:
    """3000 rows at −2^40, ε = 0.1: the public preference for small magnitudes outweighs
    the rows, both bounds land at 0 or next to it, and EVERY row lies outside -- more than
    the statement without its ``λ·P/D`` term allows, so that term (which makes the statement
    vacuous below ~10^4 rows at ε = 0.1) cannot be dropped; the full statement holds."""
    from dpnoise.mechanisms.private_bounds import PrivateBounds

    n = 3000
    x = np.full(n, -2.0 ** 40)
    m = PrivateBounds(epsilon=0.1)
    frac, rows = m.clamped_rows_bound(0.05)
    without = frac * n + sum(e / q.denominator for e, q in zip(m.rank_error(0.05), m.levels,
                                                              strict=True))
    for seed in range(3):
        low, high = m.release(x, rng=dp.SeededRandom(seed))
        outside = int(np.sum((x < low) | (x > high)))
        assert without < outside == n <= frac * n + rows
