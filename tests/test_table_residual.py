"""The finite Gaussian table's charge: minorant + the residual's all-shift window PLD.

Checked against the exact hockey-stick divergence of every shifted pair of a coarsely
rounded table (so that the rounding, the residual and the missing tails all matter), and
against the minorant alone, whose +∞ mass it must beat.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise as dp
from dpnoise.accounting import get_accountant
from dpnoise.accounting.sources import pairs_pld
from dpnoise.laws.privacy_loss import minorant_pairs
from dpnoise.laws.table_residual import residual_mixture_pairs, window_min_losses


def _table(sigma: float, bits: int) -> tuple[np.ndarray, int]:
    """A Gaussian pmf on ±K rounded down to multiples of 2^-bits (cells < 1 unit dropped),
    renormalised exactly onto the kept units: a table like the sampler's, coarser."""
    K = math.ceil(12 * sigma)
    z = np.arange(-K, K + 1)
    w = np.floor(np.exp(-0.5 * (z / sigma) ** 2) / np.sqrt(2 * np.pi) / sigma * 2.0**bits)
    keep = np.flatnonzero(w > 0)
    w = w[keep[0]:keep[-1] + 1]
    return w / w.sum(), (w.size - 1) // 2


def _hockey(p: np.ndarray, s: int, eps: float) -> float:
    """Exact H(ε) of (P_0, P_s) for a pmf p on consecutive integers, s may be negative."""
    n, a = p.size, abs(s)
    P = np.concatenate([p, np.zeros(a)]) if s > 0 else np.concatenate([np.zeros(a), p])
    Q = np.concatenate([np.zeros(a), p]) if s > 0 else np.concatenate([p, np.zeros(a)])
    assert P.size == Q.size == n + a
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


def test_window_min_losses_is_the_minimum_over_every_shift() -> None:
    rng = np.random.default_rng(5)
    for S in (1, 2, 3, 7, 16):
        lr = rng.normal(size=50)
        got = window_min_losses(lr, S)
        ext = np.concatenate([np.full(S, -np.inf), lr])
        want = np.array([lr[y] - ext[y:y + S].min() for y in range(lr.size)])
        assert np.array_equal(got, want)


@settings(max_examples=12, deadline=None)
@given(st.floats(2.0, 12.0), st.integers(14, 30), st.integers(1, 6))
def test_the_charge_dominates_every_shift_of_the_rounded_table(sigma, bits, S) -> None:
    p, K = _table(sigma, bits)
    with np.errstate(divide="ignore"):
        lp = np.log(p)
    pad = np.full(S, -np.inf)
    zz = np.arange(-K - S, K + S + 1, dtype=np.float64)
    pairs = residual_mixture_pairs(np.concatenate([pad, lp, pad]),
                                   -0.5 * (zz / sigma) ** 2, S, "test table")
    h = 2.0**-12
    pld = pairs_pld(pairs, h)
    for eps in (0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0):
        worst = max(_hockey(p, s, eps) for s in range(-S, S + 1) if s)
        assert pld.delta(eps) >= worst * (1 - 1e-9) - 1e-300, (eps, pld.delta(eps), worst)


def test_the_sampled_gaussian_table_keeps_its_tail_and_beats_the_minorant() -> None:
    m = dp.AnalyticGaussian(epsilon=0.2, delta=1e-6, sensitivity=1.0)
    acc = get_accountant("pld")
    pld = acc.charge_for(m).pld
    model = m.privacy_model()
    S = int(m.shift_steps)
    z = np.arange(model.lo, model.hi + 1, dtype=np.int64)
    lp = np.asarray(model.logpmf(z), dtype=np.float64)
    p = np.exp(lp)
    # the real unmatched tail at the extreme shift: the +∞ mass may not be below it ...
    assert pld.inf_mass >= float(p[:S].sum()) * (1 - 1e-6)
    # ... and is far below the minorant's coin (the charge before the residual's PLD)
    old = minorant_pairs(lp, -0.5 * (z * (m.grid / m.sigma)) ** 2, S, "absolute", "old")
    assert old.coin is not None and pld.inf_mass < (1 - old.coin) / 100
    for eps in (0.05, 0.1, 0.2):
        exact = _hockey(p, S, eps)
        assert exact <= pld.delta(eps) <= exact + 1e-4, eps


@pytest.mark.parametrize("bad", [np.full(5, -np.inf),
                                 np.array([-1.0, -np.inf, -1.0])])
def test_a_table_without_an_interval_support_is_refused(bad) -> None:
    with pytest.raises(dp.ParameterError):
        residual_mixture_pairs(bad, np.zeros(bad.size), 1, "bad")
