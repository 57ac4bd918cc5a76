"""RangeLaplace over its whole supported epsilon range, at the corners of the domain width:
large epsilon once gave ``ValueError: math domain error`` (the closed form at W = 2Δ
computed ln q with q = 0).  Each case is a verified guarantee (dpnoise.verify on the
sampled lattice pmf) and a minimal continuous scale."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpnoise import RangeLaplace, SeededRandom, verify
from dpnoise.laws.range_laplace import phi_interval, sigma_std

LOW, HIGH = RangeLaplace.SUPPORTED["epsilon"].lo, RangeLaplace.SUPPORTED["epsilon"].hi
EPS_CORNERS = [LOW, 0.5, 1.0, 36.0, 37.0, 100.0, 700.0, 745.0, 746.0, HIGH]
#: width / sensitivity: narrower than Δ, exactly Δ, exactly 2Δ (the closed form), next to
#: it, wider, and a half-line
WIDTH_CORNERS = [0.25, 1.0, 2.0, math.nextafter(2.0, 3.0), math.nextafter(2.0, 1.0), 3.0,
                 1e3, math.inf]


def test_the_reported_case() -> None:
    m = RangeLaplace(epsilon=100, sensitivity=1, domain=(0, 2))
    rep = verify(m)
    assert rep.passed and rep.epsilon <= m.guarantee.epsilon == 100
    y = m.release(np.array([0.0, 1.0, 2.0]), rng=SeededRandom(1))
    assert np.all((y >= 0) & (y <= 2))


@pytest.mark.parametrize("eps", EPS_CORNERS)
def test_closed_form_at_twice_the_sensitivity_is_exact_and_minimal(eps: float) -> None:
    """W = 2Δ: e^(-Δ/s) = (sqrt(1 + 8e^-ε) - 1)/2; the loss at s is ε (to rounding,
    never above) and 0.1 % below s it exceeds ε."""
    s = sigma_std([(0.0, 2.0)], 1.0, eps)
    assert math.isfinite(s) and s > 0
    assert phi_interval(s, 2.0, 1.0) <= eps
    assert phi_interval(s, 2.0, 1.0) >= eps * (1 - 1e-12)
    assert phi_interval(0.999 * s, 2.0, 1.0) > eps


@given(eps=st.sampled_from(EPS_CORNERS) | st.floats(LOW, HIGH),
       width=st.sampled_from(WIDTH_CORNERS) | st.floats(0.25, 50.0),
       sens=st.sampled_from([1.0, 2.0**-10, 3.0, 1e6]))
def test_every_supported_epsilon_gives_a_verified_guarantee(eps: float, width: float,
                                                            sens: float) -> None:
    dom = (0.0, width * sens)
    grid = 2.0 ** math.floor(math.log2(sens / 16))  # coarse: exact verification stays fast
    m = RangeLaplace(epsilon=eps, sensitivity=sens, domain=dom, grid=grid)
    rep = verify(m)
    assert rep.passed and rep.epsilon <= m.guarantee.epsilon <= eps, (rep.epsilon, m.bound)
    assert m.continuous_scale > 0 and math.isfinite(m.continuous_scale)
