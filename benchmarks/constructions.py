"""The constructions the benchmarks time cold and the tests fingerprint: one table.

``builders(eps, sens)`` maps a mechanism's name to a zero-argument constructor at privacy
parameter ``eps`` and sensitivity ``sens`` (an integer sensitivity for the count
mechanisms).  ``benchmarks/targets.py`` and ``benchmarks/cold.py`` time each in a fresh
interpreter; ``tests/calibration_fingerprints.py`` pins what each decides (its guarantee and
seeded releases) over a grid of parameters, so a faster construction cannot change a
calibration unnoticed.  This module imports only ``dpnoise``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dpnoise

#: the count mechanisms (integer sensitivities)
INTEGER = ("Geometric", "DiscreteGaussian", "CountNoise")


def builders(eps: float, sens: float) -> dict[str, Callable[[], Any]]:
    """Every mechanism's construction at (ε, Δ), by name."""
    isens = int(sens)
    return {
        "Laplace": lambda: dpnoise.Laplace(epsilon=eps, sensitivity=sens),
        "ClampedLaplace": lambda: dpnoise.ClampedLaplace(epsilon=eps, sensitivity=sens,
                                                         lower=0, upper=100 * sens),
        "TruncatedLaplace": lambda: dpnoise.TruncatedLaplace(epsilon=eps, delta=1e-6,
                                                             sensitivity=sens),
        "Gaussian": lambda: dpnoise.Gaussian(epsilon=min(eps, 0.99), delta=1e-6,
                                             sensitivity=sens),
        "AnalyticGaussian": lambda: dpnoise.AnalyticGaussian(epsilon=eps, delta=1e-6,
                                                             sensitivity=sens),
        "Staircase": lambda: dpnoise.Staircase(epsilon=eps, sensitivity=sens),
        "MultivariateStaircase": lambda: dpnoise.MultivariateStaircase(
            epsilon=max(eps, 0.003), sensitivities=(sens, sens, sens)),
        "RangeLaplace": lambda: dpnoise.RangeLaplace(epsilon=eps, sensitivity=sens,
                                                     domain=(0, 100 * sens)),
        "RangeLaplace half-line": lambda: dpnoise.RangeLaplace(
            epsilon=eps, sensitivity=sens, domain=(0, float("inf"))),
        "Geometric": lambda: dpnoise.Geometric(epsilon=eps, sensitivity=isens),
        "DiscreteGaussian": lambda: dpnoise.DiscreteGaussian(epsilon=eps, delta=1e-6,
                                                             sensitivity=isens),
        "CountNoise": lambda: dpnoise.CountNoise.from_delta(epsilon=min(eps, 100), delta=1e-6,
                                                            D=16),
        "PlanarLaplace": lambda: dpnoise.PlanarLaplace.with_margin(
            epsilon=eps / sens, grid=1.0, domain=((0, 2000), (0, 2000))),
    }
