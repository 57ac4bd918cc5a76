"""The "other" row of a count over keys that are not public (``count by city with other``).

The groups a thresholded release suppresses are summed into one row, released with its OWN
noise in the same reservation: never the noisy total minus the released counts (which
would reuse true counts).  A quarter of the release's epsilon (:data:`OTHER_SHARE`) goes
to it, the rest to the thresholded count; delta is the selection's alone.

Sensitivity argument (adaptive composition).  Let ``M1`` be the thresholded count -- its
output the released groups ``S`` with their noisy counts, ``(ε1, δ)``-DP -- and, for a
FIXED output ``S``, ``f_S(D) = Σ_{g present in D, g ∉ S} u_g(D)`` the count of the bounded
rows (or, for ``count distinct persons``, the sum of the distinct-person counts) of the
groups not released.  Adding one person to ``D`` adds to ``f_S`` exactly that person's
(bounded) contributions to the groups outside ``S`` -- ``0 <= f_S(D') − f_S(D) <= L1``
(``G·R`` rows, or ``G`` person-group pairs) -- whichever groups ``S`` holds: the new
groups the person creates are either in ``S`` (then inside ``M1``'s δ event) or counted
here, never both and never twice.  A person's rows do move between "released" and "other"
from one run to the next, but only through ``S``, which ``M1`` has already paid for: for
every fixed ``S`` the other row is a count of sensitivity ``L1``, so exact geometric noise
of decay ``<= ε2/L1`` makes it ``ε2``-DP, and the adaptive composition of an
``(ε1, δ)``-DP mechanism with one that is ``ε2``-DP for every value of the first's output
is ``(ε1 + ε2, δ)``-DP (Dwork and Roth, "The algorithmic foundations of differential
privacy", 2014, Theorem 3.16, which holds for adaptively chosen mechanisms; under ``pld``
the composition of the two dominating privacy-loss distributions, each valid for every
fixed earlier output).  The sensitivity is NOT doubled: a row is in exactly one of
"released" or "other" given ``S``, and the released counts are ``M1``'s own output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .adapter import Plan, Target, plan
from .intervals import component_interval
from .threshold import select_on_count

#: the share of the release's epsilon that the other row gets
OTHER_SHARE = 0.25


def wants_other(q: Any) -> bool:
    """Whether ``q`` asks for the other row (``... with other``)."""
    return bool(getattr(q, "other", False))


def other_plan(count: Target, epsilon: float) -> Plan:
    """The other row's plan: one scalar count of sensitivity ``L1`` (the count target's
    ``rows``), exact two-sided geometric noise (the exact sampler)."""
    target = Target("count", 1.0, int(count.rows), False, 0.0, count.upper)
    return plan(target, epsilon=epsilon, delta=0.0, mechanism="geometric", exact_sampler=True)


def other_truth(truth: dict[str, NDArray[Any]], keep: NDArray[np.bool_]) -> NDArray[np.int64]:
    """The true count of the groups present but not released (``keep`` false)."""
    counts = np.asarray(truth["count"], dtype=np.int64)
    return np.asarray(int(counts[~np.asarray(keep, dtype=bool)].sum()), dtype=np.int64)


def select_with_other(plans: list[tuple[str, Any]], truth: dict[str, NDArray[Any]], rng: Any
                      ) -> tuple[NDArray[np.bool_], dict[str, NDArray[Any]],
                                 dict[str, NDArray[Any]]]:
    """:func:`~dpnoise.session.threshold.select_on_count`, and with an ``other`` plan the
    true count of the groups it did not release (noised after the selection)."""
    keep, kept, released = select_on_count(plans, truth, rng)
    if "other" in dict(plans):
        kept = {**kept, "other": other_truth(truth, keep)}
    return keep, kept, released


def other_details(plans: list[tuple[str, Any]], noisy: dict[str, Any], confidence: float
                  ) -> dict[str, Any]:
    """What a release shows of its other row (``{"other_row": ...}``: the noisy count and
    its error bar), or nothing without one."""
    if "other" not in noisy:
        return {}
    value = np.asarray(noisy["other"])
    lo, hi = component_interval(dict(plans)["other"], value, 1 - confidence)
    return {"other_row": {"value": int(value), "low": float(np.asarray(lo)),
                          "high": float(np.asarray(hi)), "confidence": confidence,
                          "note": "the groups not released, counted with their own noise"}}
