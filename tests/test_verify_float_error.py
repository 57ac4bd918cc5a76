"""The verifier fails a claim only when a proven lower bound on δ exceeds it.

Masses near 1 given as float logs carry ~1e-16 of error each, more than 1e-9·δ at δ = 1e-10:
the verifier bounds that error (:func:`~dpnoise.verify_models.hockey_with_error`) instead of
failing a tight claim, and still fails a δ under-reported by 10^-3.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import verify
from dpnoise.mechanisms.base import Guarantee
from dpnoise.mechanisms.optimal_selection import OptimalSelection
from dpnoise.verify_models import hockey_with_error


class _UnderReported(OptimalSelection):
    """Optimal selection whose claim is 10^-3 (relative) below its real δ."""

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta / (1 + 1e-3),
                         notion="approximate", note="under-reported")


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-10), (1.0, 1e-12), (0.5, 1e-12)])
def test_optimal_selection_passes_at_tiny_delta_and_under_reporting_fails(
        eps: float, delta: float) -> None:
    m = OptimalSelection(epsilon=eps, delta=delta)
    assert m.check_exact()
    report = verify(m, epsilons=[eps])
    assert report.passed, report.as_dict()
    # the float sums do exceed the claim: the pass comes from the proven error bound
    assert report.delta_at(eps) > delta * (1 + 1e-9)
    bad = verify(_UnderReported(epsilon=eps, delta=delta), epsilons=[eps])
    assert not bad.passed, bad.as_dict()


def _exact_hockey(p: list[Fraction], q: list[Fraction], eps: float) -> mpmath.mpf:
    with mpmath.workdps(60):
        e = mpmath.exp(mpmath.mpf(eps))
        return sum((max(mpmath.mpf(0), mpmath.mpf(a.numerator) / a.denominator
                        - e * mpmath.mpf(b.numerator) / b.denominator)
                    for a, b in zip(p, q, strict=True)), mpmath.mpf(0))


def _log(x: Fraction) -> float:
    return math.log(x) if x > 0 else -math.inf


_mass = st.integers(0, 1 << 62).map(lambda k: Fraction(k, 1 << 62))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_mass, _mass), min_size=1, max_size=3),
       st.sampled_from([0.0, 1e-3, 0.5, 1.0, 3.0]))
def test_hockey_error_bound_is_a_lower_bound_of_the_exact_delta(
        pairs: list[tuple[Fraction, Fraction]], eps: float) -> None:
    """Two laws on up to 4 outputs (the last takes the rest of the mass), logs by
    ``math.log`` of exact fractions: δ̂ − B <= the exact δ, and B is a few ulps."""
    p = [a / len(pairs) for a, _ in pairs]
    q = [b / len(pairs) for _, b in pairs]
    p.append(1 - sum(p))
    q.append(1 - sum(q))
    lp = np.array([_log(x) for x in p])
    lq = np.array([_log(x) for x in q])
    d, bound = hockey_with_error(lp, lq, eps)
    exact = _exact_hockey(p, q, eps)
    assert bound >= 0
    assert d - bound <= exact
    logs = np.concatenate([lp, lq])
    assert bound <= 64 * 2.0**-53 * (2 + eps + float(np.max(np.abs(logs[np.isfinite(logs)]))))
