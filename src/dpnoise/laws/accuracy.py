"""The accuracy rule: a sampler may not waste accuracy against the ideal law at the asked ε.

Exact samplers round their parameters (a decay to a rational multiple of ln 2, weights to
64-bit integers, a true value onto a grid) and are calibrated so that the loss of what they
sample stays <= ε.  Rounding in the safe direction costs accuracy; this module states how much
is allowed:

* where the ideal law's mean absolute noise E|Z| at the asked ε is at least
  :data:`FLOOR` x sensitivity, the sampled law's E|Z| must be within :data:`TOLERANCE`
  (2.5 %) of it;
* below that floor the noise is negligible whatever the sampler does, and the mechanism's
  guarantee states the loss it actually realises (the verifier's ε) instead of the asked one.

Closed forms of the ideal laws used by the integer mechanisms live here too.
"""

from __future__ import annotations

import math

#: largest allowed relative excess of the sampled law's E|noise| over the ideal law's
TOLERANCE = 0.025
#: below FLOOR x sensitivity of ideal E|noise| the rule is replaced by "state the realised loss"
FLOOR = 1e-6


def above_floor(ideal_mean_abs: float, sensitivity: float) -> bool:
    """Whether the ideal E|noise| is large enough for the 2.5 % rule to apply."""
    return ideal_mean_abs >= FLOOR * sensitivity


def meets_rule(sampled_mean_abs: float, ideal_mean_abs: float, sensitivity: float) -> bool:
    """True when the sampled law may promise the asked ε: the ideal E|noise| is above the
    floor and the sampled one is at most (1 + :data:`TOLERANCE`) times it."""
    return (above_floor(ideal_mean_abs, sensitivity)
            and sampled_mean_abs <= (1.0 + TOLERANCE) * ideal_mean_abs)


def two_sided_geometric_mean_abs(decay: float) -> float:
    """E|Z| of the two-sided geometric law p(z) = (1 − r)/(1 + r)·r^|z|, r = e^(−a).

    E|Z| = 2r/(1 − r²) = 1/sinh(a) (C. L. Canonne, G. Kamath, T. Steinke, "The Discrete
    Gaussian for Differential Privacy", NeurIPS 2020, Definition 28 for the law); 0.0 when
    sinh overflows (a > ~710).
    """
    if decay > 700.0:
        return 2.0 * math.exp(-decay)  # 1/sinh(a) = 2e^-a/(1 − e^-2a), e^-2a below 1e-600
    return 1.0 / math.sinh(decay)
