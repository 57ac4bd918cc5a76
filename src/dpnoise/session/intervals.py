"""Error bars computed from the released output and public parameters only.

A release's error bar must not be read off the law centred on the true value: that law
can depend on the truth (a range-adherent law's renormalisation, a clamped law at an
edge, a mean's true denominator), and an interval computed from it would leak it.  Every
interval here is a **confidence set obtained by inverting a test** (Neyman construction;
e.g. Casella & Berger, *Statistical Inference*, 2nd ed. 2002, §9.2.1): for an output
``y`` it is the set of true values ``t`` in the valid range ``[a, b]`` at which ``y`` is
not in either ``alpha/2`` tail of the output law at ``t``::

    A(y) = { t in [a, b] :  P(Y <= y | t) > alpha/2  and  P(Y >= y | t) > alpha/2 }.

For the true ``t``, ``P(P(Y <= Y_obs | t) <= alpha/2) <= alpha/2`` (and the same for the
upper tail) whatever the law, so ``P(t in A(Y)) >= 1 - alpha``: coverage holds for every
true value, at the edges of the range included.  It is conservative: for a discrete law
the tails hold at most ``alpha/2`` each, and every numerical shortcut below only
*enlarges* ``A(y)``.

How ``A(y)`` is computed (:func:`component_interval`), from the mechanism's privacy
profile (:class:`~dpnoise.profile.PrivacyProfile`; no mechanism is known by its class):

* **shift-invariant laws then clamping** (``profile.shift_invariant``: the geometric,
  discrete Gaussian, lattice Laplace, staircase, truncated Laplacian, clamped Laplace:
  ``Y = clip(t' + Z, a, b)`` with ``t'`` the truth snapped to the grid ``profile.snap``
  and ``Z ~ profile.noise_law()``): inside the range
  ``A(y) ⊆ [y - ppf_Z(1 - alpha/2), y - ppf_Z(alpha/2)]``, widened by one grid step for
  the snapping (and by 1/2 for a count rounded from a law whose outputs are not integers,
  ``profile.integer_output``); at the upper end
  ``y = b`` the upper tail condition ``P(Y <= b) = 1`` always holds, so the set is
  ``[b - ppf_Z(1 - alpha/2), b]`` (symmetrically at ``a``).  ``ppf_Z`` is computed once per
  mechanism (cached) and applied to all cells at once;
* **any other law** (the range-adherent :class:`~dpnoise.mechanisms.range_laplace.RangeLaplace`,
  finite-support count noise): the two conditions are monotone in ``t`` (the families
  are stochastically increasing in ``t``; a test checks it), so ``A(y)`` is an interval
  whose ends are found by bisection over ``[a, b]`` on the law at ``t`` (its
  ``tail_probabilities`` when the mechanism has them: RangeLaplace's closed form) -- the OUTER
  bracket point is kept, so the result contains ``A(y)``;
* intersected with the valid range ``[a, b]``; counts rounded outward to integers.

Statistics combine their components' intervals by a **union bound**: a mean's count and
centred sum at ``alpha/2`` each (the true mean ``mid + S/C`` then lies in the range of
that ratio over the box), a variance's three components at ``alpha/3``; a quantile's
rank statement at ``alpha/2`` with its count at ``alpha/2`` (see
:mod:`dpnoise.session.interval_rank`; releases recorded with the earlier report noisy max:
:class:`~dpnoise.session.stats.RankPlan`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

_BISECTIONS = 48
# an unbounded side of a range-adherent law is searched within this many noise scales of
# the output: farther true values put y in a tail of mass < e^-80 (rejected at any usual
# confidence); finite bracket ends keep noise(t) inside the grid's representable range
_SEARCH_SCALES = 80.0


@lru_cache(maxsize=512)
def _profile(mech: Any) -> Any:
    return mech.privacy_profile()


@lru_cache(maxsize=512)
def _quantiles(mech: Any, alpha: float) -> tuple[float, float, float]:
    """ppf_Z(alpha/2), ppf_Z(1 - alpha/2) of a shift-invariant mechanism's noise law, and
    its snapping allowance (the grid step)."""
    profile = _profile(mech)
    law, slack = profile.noise_law(), float(profile.snap)
    lo = float(np.asarray(law.ppf(alpha / 2)).reshape(-1)[0])
    hi = float(np.asarray(law.ppf(1 - alpha / 2)).reshape(-1)[0])
    return lo, hi, slack


def _upper_tail(law: Any, y: float) -> float:
    """P(Y >= y) (the atom at y included)."""
    pmf = getattr(law, "pmf", None)
    atom = float(np.asarray(pmf(y)).reshape(-1)[0]) if pmf is not None else 0.0
    return float(np.asarray(law.sf(y)).reshape(-1)[0]) + atom


@lru_cache(maxsize=65536)
def _tails(mech: Any, t: float, y: float) -> tuple[float, float]:
    """(P(Y <= y), P(Y >= y)) at true value t: the mechanism's closed form when it has
    one (``tail_probabilities``), else from its law ``noise(t)``."""
    fast = getattr(mech, "tail_probabilities", None)
    if fast is not None:
        return fast(t, y)
    law = mech.noise(t)
    return float(np.asarray(law.cdf(y)).reshape(-1)[0]), _upper_tail(law, y)


def _bisect(ok: Any, a: float, b: float, integer: bool, want_low: bool) -> float:
    """The outer end of {t in [a, b]: ok(t)} for a monotone ``ok`` (false then true when
    ``want_low``, true then false otherwise)."""
    edge = a if want_low else b
    if ok(edge):
        return edge
    lo, hi = (a, b) if want_low else (b, a)  # lo: known false, hi: candidate true side
    if not ok(hi):
        return a if want_low else b  # nothing accepted: fall back to the whole range
    for _ in range(_BISECTIONS if not integer else 64):
        mid = (lo + hi) / 2
        if integer:
            mid = math.floor(mid) if want_low else math.ceil(mid)
            if mid in (lo, hi):
                break
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if not integer and abs(hi - lo) <= 1e-12 * max(1.0, abs(lo), abs(hi)):
            break
    return lo  # the outer (rejected) bracket point: contains the accepted set


def component_interval(plan: Any, y: NDArray[Any], alpha: float
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``A(y)`` for every released cell of one component (see the module docstring);
    ``plan`` is an :class:`~dpnoise.session.adapter.Plan`.  Uses only ``y`` and public
    facts of the plan."""
    t = plan.target
    mech = plan.mechanism
    a, b = float(t.lower), float(t.upper)
    yv = np.asarray(y, dtype=np.float64).reshape(-1)
    profile = _profile(mech)
    if profile.shift_invariant:
        zlo, zhi, slack = _quantiles(mech, float(alpha))
        if t.integer and not profile.integer_output:
            slack += 0.5
        low = yv - zhi - slack
        high = yv - zlo + slack
        high = np.where(yv >= b, b, high)
        low = np.where(yv <= a, a, low)
    else:
        low, high = np.empty_like(yv), np.empty_like(yv)
        half = float(alpha) / 2
        reach = _SEARCH_SCALES * float(getattr(mech, "scale", 0.0) or 0.0) or 1e300
        for i, v in enumerate(yv.tolist()):
            lo_t = a if math.isfinite(a) else v - reach
            hi_t = b if math.isfinite(b) else v + reach

            def accept_low(s: float, v: float = v) -> bool:
                return _tails(mech, s, v)[1] > half

            def accept_high(s: float, v: float = v) -> bool:
                return _tails(mech, s, v)[0] > half

            # an unbounded side is searched within ``reach`` of y; should that artificial
            # end itself be accepted (a confidence within e^-80 of 1), the side is unbounded
            low[i] = -math.inf if not math.isfinite(a) and accept_low(lo_t) else _bisect(
                accept_low, lo_t, hi_t, t.integer, True)
            high[i] = math.inf if not math.isfinite(b) and accept_high(hi_t) else _bisect(
                accept_high, lo_t, hi_t, t.integer, False)
    low, high = np.maximum(low, a), np.minimum(high, b)
    if t.integer:
        low, high = np.ceil(low - 1e-9), np.floor(high + 1e-9)
    return low.reshape(np.shape(y)), high.reshape(np.shape(y))


def ratio_interval(c: tuple[NDArray[Any], NDArray[Any]], s: tuple[NDArray[Any], NDArray[Any]],
                   lower: float, upper: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Range of ``mid + S/C`` over the box ``C in [c0, c1]`` (C >= 1; C = 0 means the mean
    is ``mid``), ``S in [s0, s1]``, intersected with ``[lower, upper]``."""
    mid = (lower + upper) / 2
    c0 = np.maximum(np.asarray(c[0], float), 1.0)
    c1 = np.maximum(np.asarray(c[1], float), 1.0)
    s0, s1 = np.asarray(s[0], float), np.asarray(s[1], float)
    lo = np.where(s0 < 0, s0 / c0, s0 / c1)
    hi = np.where(s1 > 0, s1 / c0, s1 / c1)
    zero_possible = np.asarray(c[0], float) < 1
    lo = np.where(zero_possible, np.minimum(lo, 0.0), lo)
    hi = np.where(zero_possible, np.maximum(hi, 0.0), hi)
    return np.clip(mid + lo, lower, upper), np.clip(mid + hi, lower, upper)


def variance_interval(c: tuple[NDArray[Any], NDArray[Any]], s: tuple[NDArray[Any], NDArray[Any]],
                      q: tuple[NDArray[Any], NDArray[Any]], half: float
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Range of the sample variance ``(Q - S²/C)/(C - 1)`` over the box of (count, sum,
    sum of squares of centred values), intersected with ``[0, half² · C/(C-1)]``; a true
    count below 2 (variance defined as 0) keeps 0 in the set."""
    cmin = np.maximum(np.asarray(c[0], float), 2.0)
    cmax = np.maximum(np.asarray(c[1], float), 2.0)
    s0, s1 = np.asarray(s[0], float), np.asarray(s[1], float)
    q0, q1 = np.maximum(np.asarray(q[0], float), 0.0), np.asarray(q[1], float)
    max_s2 = np.maximum(s0 ** 2, s1 ** 2)
    min_s2 = np.where((s0 <= 0) & (s1 >= 0), 0.0, np.minimum(s0 ** 2, s1 ** 2))
    num_lo = q0 - max_s2 / cmin
    num_hi = q1 - min_s2 / cmax
    lo = np.where(num_lo > 0, num_lo / (cmax - 1), 0.0)
    hi = np.where(num_hi > 0, num_hi / (cmin - 1), 0.0)
    cap = half ** 2 * cmin / (cmin - 1)
    lo = np.where(np.asarray(c[0], float) < 2, 0.0, lo)
    return np.clip(lo, 0.0, cap), np.clip(hi, 0.0, cap)
