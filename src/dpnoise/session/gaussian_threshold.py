"""A ``count`` over keys that are not public, thresholded on DISCRETE GAUSSIAN noise -- for
persons in many groups, under the ``pld`` (or ``basic``) accountant.

When it is used (:func:`choose`):

* ``mechanism="discrete-gaussian"`` asks for it (under ``zcdp`` it is refused with a
  clear error before anything is spent: the mechanism has no zCDP guarantee);
* with no mechanism named, under ``pld`` only, when it DOMINATES the geometric threshold
  of :mod:`dpnoise.session.threshold` at the same ``(ε, δ)`` and bounds: a threshold no
  higher and a noise standard deviation no larger, one of them strictly smaller.  Both are
  public functions of ``(ε, δ, max_groups, max_rows_per_group)``, so the choice reveals
  nothing.  At ``(1, 1e-6)`` with one row per group this happens from about 10 groups per
  person on (the L2 sensitivity ``√G·R`` against the L1 ``G·R``).

The release: the ``count`` role adds exact discrete Gaussian noise of the calibrated σ²
(:class:`~dpnoise.mechanisms.discrete_gaussian.DiscreteGaussian`, CKS sampler) to every
group present; the ``selection`` role keeps the groups whose noisy count is ``>= τ``.  The
two are ONE mechanism, :class:`~dpnoise.mechanisms.gaussian_threshold.GaussianThresholdCount`,
charged once through its privacy-loss distribution (the selection role carries the charge;
the count role is marked ``charged_with = "selection"``).  Error bars are the discrete
Gaussian's, with the unconditional coverage of the geometric path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..laws.gaussian_threshold import MAX_GROUPS
from ..mechanisms.base import Guarantee
from ..mechanisms.discrete_gaussian import DiscreteGaussian
from ..mechanisms.gaussian_threshold import GaussianThresholdCount
from ..mechanisms.thresholded import rule_for
from .adapter import Plan, Spec, Target
from .threshold import count_plan

#: the mechanism name that asks for the Gaussian threshold
GAUSSIAN = "discrete-gaussian"


@dataclass(frozen=True)
class GaussianCountPlan(Plan):
    """The count role: discrete Gaussian noise, charged inside the selection role's PLD."""

    charged_with: str = "selection"

    def parameters(self) -> dict[str, Any]:
        """The recipe of :meth:`Plan.parameters` plus the exact σ² (:func:`rebuild_count`)."""
        out = super().parameters()
        s2 = self.mechanism.sigma2
        out["gaussian_threshold"] = {"sigma2": [s2.numerator, s2.denominator],
                                     "charged_with": self.charged_with}
        return out


def rebuild_count(target: Target, recorded: dict[str, Any]) -> GaussianCountPlan:
    """The count role of a past release, from its recorded σ² (for its error bars)."""
    num, den = recorded["gaussian_threshold"]["sigma2"]
    return _count(target, 1.0, Fraction(int(num), int(den)))


def _count(target: Target, epsilon: float, sigma2: Fraction) -> GaussianCountPlan:
    upper = None if not math.isfinite(target.upper) else int(target.upper)
    noise = DiscreteGaussian(epsilon=epsilon, sigma2=sigma2, sensitivity=1, lower=0,
                             upper=upper, sampler="cks")
    spec = Spec(epsilon, float(noise.delta), target.unit, target.lower, target.upper, True,
                True)
    return GaussianCountPlan(target, GAUSSIAN, noise, 0.0, 0.0, spec)


class GaussianSelectionPlan:
    """The selection role: keep iff the noisy count ``>= τ``; carries the whole charge."""

    name = "gaussian-threshold"
    on_count = True
    charge_cells = 1  # the PLD covers one person across all of his groups
    target = None

    def __init__(self, mech: GaussianThresholdCount) -> None:
        self.mechanism = mech
        self.threshold = mech.threshold
        self.delta_exact = mech.delta
        self.epsilon, self.delta = mech.epsilon, mech.delta
        self.spec = Spec(mech.epsilon, mech.delta, 1.0, 0.0, math.inf, True)

    @property
    def guarantee(self) -> Guarantee:
        return self.mechanism.guarantee

    def keep(self, noisy_count: NDArray[Any], rng: Any) -> NDArray[np.bool_]:
        return np.asarray(noisy_count) >= self.threshold

    def suppressed_bound(self, alpha: float) -> int:
        """With probability ``>= 1 − alpha`` a group NOT released has a true count of at most
        this: ``u + Z <= τ − 1`` and ``P(Z <= −m) <= alpha`` (Z symmetric)."""
        m = 1
        while self.mechanism.keep_probability(self.threshold + m) < 1 - alpha:
            m += 1
        return self.threshold - 1 + m

    def parameters(self) -> dict[str, Any]:
        m = self.mechanism
        return {"mechanism": self.name, "kind": "selection", "epsilon": m.epsilon,
                "delta": m.delta, "delta_exact": m.delta, "threshold": m.threshold,
                "sigma2": [m.sigma2.numerator, m.sigma2.denominator],
                "max_groups": m.groups, "rows_per_group": m.rows, "on": "count",
                "accounted": "privacy-loss distribution (pld)"}


def gaussian_plans(target: Target, epsilon: float, delta: float, groups: int, rows: int
                   ) -> list[tuple[str, Any]]:
    """The ``count`` and ``selection`` roles of the Gaussian threshold at ``(ε, δ)``."""
    mech = GaussianThresholdCount(epsilon=epsilon, delta=delta, groups=groups, rows=rows)
    return [("count", _count(target, epsilon, mech.sigma2)),
            ("selection", GaussianSelectionPlan(mech))]


def choose(mechanism: str | None, accountant: str, target: Target, epsilon: float,
           delta: float, groups: int, rows: int) -> bool:
    """Whether a private-key count uses the Gaussian threshold (module docstring)."""
    if mechanism == GAUSSIAN:
        if accountant == "zcdp":
            raise ParameterError(
                "mechanism 'discrete-gaussian' on a column whose keys are not public is a "
                "Gaussian threshold, which has no zCDP guarantee (a group of one person's own "
                "is released with probability > 0): use a ledger with the 'pld' accountant, "
                "or the default geometric threshold")
        return True
    if mechanism is not None or accountant != "pld" or groups > MAX_GROUPS:
        return False
    geo = count_plan(target, epsilon).mechanism
    tau_geo = rule_for(int(geo.s), int(geo.t), delta, groups, rows)[0].threshold
    sd_geo = float(geo.privacy_profile().noise_law().std())
    g = GaussianThresholdCount(epsilon=epsilon, delta=delta, groups=groups, rows=rows)
    tau, sd = g.threshold, float(g.noise().std())
    return tau <= tau_geo and sd <= sd_geo and (tau < tau_geo or sd < sd_geo)
