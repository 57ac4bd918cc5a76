"""The laws ``noise()`` returns at hostile arguments: infinities, values far past any
lattice index, NaN.  cdf(+-inf) is 1 and 0 (the half-lattice laws answered 0.5 there and
from |y| ~ 1e17 on, the staircase density NaN), NaN maps to NaN, and ppf refuses NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpnoise

_LAWS = {
    "laplace": lambda: dpnoise.Laplace(epsilon=1.0, sensitivity=1.0).noise(0.0),
    "staircase": lambda: dpnoise.Staircase(epsilon=1.0, sensitivity=1.0).noise(0.0),
    "staircase-ideal": lambda: dpnoise.Staircase(epsilon=1.0, sensitivity=1.0).ideal,
    "truncated": lambda: dpnoise.TruncatedLaplace(epsilon=1.0, delta=1e-6,
                                                  sensitivity=1.0).noise(0.0),
    "clamped": lambda: dpnoise.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0,
                                              upper=10.0).noise(5.0),
    "geometric": lambda: dpnoise.Geometric(epsilon=1.0, lower=None).noise(0),
}


@pytest.mark.parametrize("name", sorted(_LAWS))
def test_cdf_and_sf_at_the_ends_and_at_nan(name: str) -> None:
    law = _LAWS[name]()
    far = np.array([-np.inf, -1e300, -1e30, -1e17, 1e17, 1e30, 1e300, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cdf = np.asarray(law.cdf(far), dtype=float)
        sf = np.asarray(law.sf(far), dtype=float)
        at_nan = float(np.asarray(law.cdf(np.nan)))
    assert np.array_equal(cdf, [0, 0, 0, 0, 1, 1, 1, 1])
    assert np.array_equal(sf, [1, 1, 1, 1, 0, 0, 0, 0])
    assert np.isnan(at_nan)
    with pytest.raises(dpnoise.ParameterError, match="q must be in"):
        law.ppf(np.nan)


def test_half_lattice_pmf_is_zero_past_the_half_integers() -> None:
    """From 2^52 cells on no float is a half-integer (floor(u) + 0.5 rounds back to u)."""
    law = dpnoise.Laplace(epsilon=1.0, sensitivity=1.0).noise(0.0)
    far = law.grid * np.array([2.0**53, 2.0**60, 2.0**70])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not np.any(law.pmf(far))


def test_the_ideal_truncated_laplace_at_a_tiny_epsilon() -> None:
    """epsilon = 1e-300 (allowed by TLapDistribution): var() and lower_bounds raised
    OverflowError (λ² past the float range) or gave NaN; a half-width A that overflows is
    refused.  Near-uniform on [-A, A]: the variance is A²/3."""
    t = dpnoise.TLapDistribution(1e-300, 1e-6)
    assert t.var() == pytest.approx(t.A**2 / 3, rel=1e-12)
    mu1, mu2 = dpnoise.lower_bounds(1e-300, 1e-6)
    assert np.isfinite(mu1) and np.isfinite(mu2) and mu2 > 0
    with pytest.raises(dpnoise.ParameterError, match="too large"):
        dpnoise.TLapDistribution(1.0, 1e-6, 1e308)


@pytest.mark.parametrize("args", [("1", 1.0), (True, 1.0), (0.0, 1.0), (1.0, np.nan),
                                  (1.0, -0.5), (1.0, 1.0, 0.0), (10**400, 1.0)])
def test_gaussian_delta_checks_its_parameters(args) -> None:
    """Its docstring promised ParameterError; it raised TypeError or ZeroDivisionError or
    answered NaN."""
    with pytest.raises(dpnoise.ParameterError):
        dpnoise.gaussian_delta(*args)


@pytest.mark.parametrize("kw", [{"epsilon": "1"}, {"epsilon": None}, {"epsilon": True},
                                {"epsilon": 1.0, "delta": "0"}, {"epsilon": 1.0, "notion": "dp"}])
def test_a_guarantee_refuses_what_is_not_a_guarantee(kw) -> None:
    """A str or None raised TypeError from a comparison, True was epsilon 1 and an unknown
    notion was kept (privacy_profile() then read it as a claimed (eps, delta))."""
    with pytest.raises(dpnoise.ParameterError, match="guarantee"):
        dpnoise.Guarantee(**kw)


def test_ppf_at_zero_is_a_point_of_the_support_whatever_else_is_asked() -> None:
    """A lattice law's ppf(0) was the bisection's end: for a TruncatedLaplace one cell
    outside its support when asked with other levels (pmf 0), inside when asked alone."""
    law = dpnoise.TruncatedLaplace(epsilon=1.0, delta=1e-6, sensitivity=1.0).noise()
    alone, together = law.ppf(0.0), law.ppf(np.array([0.0, 0.5]))[0]
    assert alone == together and law.pmf(together) > 0
    assert law.pmf(together - law.grid) == 0  # the lowest point of the support
