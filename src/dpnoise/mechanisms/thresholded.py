"""Counts over keys that are not public, released by thresholding their OWN noisy count.

:class:`ThresholdedCount` -- each group's count ``u`` gets independent exact two-sided
geometric noise ``Z`` (``P(z) ∝ e^{-a|z|}``, ``a = s/t <= ε/Δ₁`` rational, sampled exactly by
Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020,
Algorithm 2) and the group is released, with its noisy count ``y = u + Z``, iff ``y >= τ``
or ``y = τ − 1`` and an exact Bernoulli(``b/2^64``) coin succeeds (:class:`KeepRule`)
(Korolova, Kenthapadi, Mishra and Ntoulas, "Releasing search queries and clicks
privately", WWW 2009; Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo and Gipson,
"Differentially private SQL with bounded user contribution", PoPETs 2020, Sec. 5).

Sensitivity argument.  One person is in at most ``G`` groups (``groups``) with at most ``R``
rows in each (``rows``), and at most ``Δ₁ <= G·R`` rows in all (``l1``, default ``G·R``).
Let ``D' = D + {person}``.  The groups of ``D`` are groups of ``D'``; their counts move by
at most ``Δ₁`` in L1, so their noisy counts are ``ε``-DP (the geometric law, a shift by
``Δ₁`` costs ``a·Δ₁ <= ε``) and keeping or suppressing them is post-processing.  The groups
that exist only in ``D'`` (at most ``G``, each of count ``<= R``) appear with probability
``<= G·P(keep | R) = G·(P(Z >= τ − R) + (b/2^64)·P(Z = τ − 1 − R))``, independently of the
rest; in ``D`` they never appear.  Hence ``(ε, δ)``-DP with that ``δ``, ``P(Z >= m) =
e^{-am}/(1 + e^{-a})`` for the SAMPLED rational ``a``, evaluated in 50-digit arithmetic and
rounded up; ``τ`` is the smallest threshold with ``G·P(Z >= τ − R) <= δ_requested`` and ``b``
the largest numerator that keeps ``δ <= δ_requested`` (with ``b = 0``: ``δ = G·P(Z >= τ −
R)``).  The geometric law has a monotone likelihood ratio, so among all keep rules applied to
the released count this randomised threshold keeps every group most often at that ``δ``
(Neyman and Pearson's lemma).  The whole ``(ε, δ)`` goes to this one mechanism: no
separate selection count is spent.

:class:`NewGroupRelease` -- the ``(0, δ)`` part of that argument alone (the release of groups
that exist only because of one person), which the custodian session charges beside the
count's own pure-ε component (its noise is the count's).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.discrete_laplace import discrete_laplace
from ..exact.words import WordStream
from ..params import check_delta, check_epsilon
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .integers import IntegerLaw, check_counts
from .statistics import _noise_law, decay, geometric_tail, tail_index

#: the released value of a suppressed group (any count below the threshold)
SUPPRESSED = -1


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


#: the boundary keep-probability is a dyadic rational b / 2^BOUNDARY_BITS
BOUNDARY_BITS = 64


def joint_log_law(group_law: Callable[[int, int], tuple[NDArray[np.int64], NDArray[np.float64]]],
                  counts: tuple[int, ...], top: int
                  ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """ln P(released vector | counts) for groups released independently, each output
    ``o`` of a group (``SUPPRESSED`` = -1 .. ``top``) a digit ``o + 1`` of one integer in
    base ``top + 2``; ``group_law(count, top)`` gives one group's outputs and log-probabilities."""
    base = top + 2
    outs, lps = np.array([0], dtype=np.int64), np.array([0.0])
    for c in counts:
        o, lp = group_law(int(c), top)
        outs = (outs[:, None] * base + (o + 1)[None, :]).reshape(-1)
        lps = (lps[:, None] + lp[None, :]).reshape(-1)
    return outs, lps


@dataclass(frozen=True)
class KeepRule:
    """Keep a group iff its noisy count ``y >= τ``, or ``y = τ − 1`` and a Bernoulli(``b/2^64``)
    draw succeeds; the geometric noise has decay ``s/t``."""

    s: int
    t: int
    threshold: int
    boundary: int  # numerator of the keep-probability at y = τ − 1

    def tail(self, k: int) -> float:
        """P(Z >= k) (for k < 0: 1 − P(Z >= 1 − k), by symmetry)."""
        if k >= 0:
            return geometric_tail(self.s, self.t, k)
        return 1.0 - geometric_tail(self.s, self.t, 1 - k)

    def pmf(self, k: int) -> float:
        a = self.s / self.t
        return math.tanh(a / 2) * math.exp(-a * abs(k))  # (1 − e^-a)/(1 + e^-a) e^{-a|k|}

    def keep_probability(self, count: int) -> float:
        """P(kept) for a group of true count ``count`` (0: absent, never kept)."""
        if count <= 0:
            return 0.0
        k = self.threshold - int(count)
        return min(1.0, self.tail(k) + math.ldexp(self.boundary, -BOUNDARY_BITS)
                   * self.pmf(k - 1))

    def keep(self, y: NDArray[Any], rng: RngLike) -> NDArray[np.bool_]:
        """The keep decisions of released noisy counts ``y`` (one word per group drawn)."""
        y = np.asarray(y)
        words = WordStream(resolve_rng(rng)).take(y.size).reshape(y.shape)
        coin = words < np.uint64(self.boundary)
        return (y >= self.threshold) | ((y == self.threshold - 1) & coin)


def keep_delta(s: int, t: int, k: int, boundary: int, groups: int) -> float:
    """``G·(P(Z >= k) + b/2^64 · P(Z = k − 1))`` for the geometric law of decay ``s/t``, in
    50-digit arithmetic, rounded up to a float: the delta of a keep rule whose threshold is
    ``k`` above a group of one person's rows.  One function for the rule's calibration and
    the stated guarantee, so the two never differ by a rounding."""
    with mpmath.workdps(50):
        r = mpmath.exp(-mpmath.mpf(s) / t)
        tail = r ** k / (1 + r) if k >= 0 else 1 - r ** (1 - k) / (1 + r)
        pm = (1 - r) / (1 + r) * r ** abs(k - 1)
        exact = groups * (tail + pm * mpmath.mpf(boundary) / (1 << BOUNDARY_BITS))
        return min(1.0, math.nextafter(float(exact), math.inf))


def rule_for(s: int, t: int, delta: float, groups: int, rows: int) -> tuple[KeepRule, float]:
    """The keep rule for ``δ``: ``τ`` the smallest threshold with ``G·P(Z >= τ − R) <= δ``,
    then the largest dyadic ``b`` with ``G·(P(Z >= τ − R) + b·P(Z = τ − 1 − R)) <= δ`` (the
    Neyman-Pearson test of "a group of R rows exists" against the rest, randomised at its
    boundary so that the whole δ is used), in 50-digit arithmetic; and that δ, rounded up
    (:func:`keep_delta`), which is at most the asked ``δ``."""
    m = tail_index(s, t, delta / groups)
    scale = 1 << BOUNDARY_BITS
    with mpmath.workdps(50):
        r = mpmath.exp(-mpmath.mpf(s) / t)
        tail = r ** m / (1 + r)
        pm = (1 - r) / (1 + r) * r ** abs(m - 1)
        room = mpmath.mpf(delta) / groups - tail
        b = max(0, min(scale - 1, int(mpmath.floor(room / pm * scale))))
    while b > 0 and keep_delta(s, t, m, b, groups) > delta:
        b -= 1
    return KeepRule(s, t, m + rows, b), keep_delta(s, t, m, b, groups)


class ThresholdedCount(Mechanism):
    """Release each group's noisy count iff it clears the threshold (module docstring).

    ``release(counts)`` takes the true counts of the groups present (0: absent) and returns
    the noisy counts, :data:`SUPPRESSED` where a group is not released.  Supported: delta in
    (0, 1); groups, rows integers >= 1; l1 in [rows, groups·rows]; ε/l1 >= 2^-32.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, delta: float, groups: int = 1, rows: int = 1,
                 l1: int | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta_requested = check_delta(delta)
        self.groups = _check_count("groups", groups)
        self.rows = _check_count("rows", rows)
        self.l1 = self.groups * self.rows if l1 is None else _check_count("l1", l1)
        if not self.rows <= self.l1 <= self.groups * self.rows:
            raise ParameterError(f"l1 must be in [rows, groups*rows] = [{self.rows}, "
                                 f"{self.groups * self.rows}], got {l1!r}")
        self.sensitivity = float(self.l1)
        self.s, self.t = decay(self.epsilon / self.l1)
        self.rule, self.delta = rule_for(self.s, self.t, self.delta_requested, self.groups,
                                         self.rows)
        self.threshold = self.rule.threshold
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta, notion="approximate",
                         note=f"thresholded count: threshold {self.threshold}")

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = check_counts(true_value, None, None).reshape(-1)  # refused before any word
        gen = resolve_rng(rng)
        y = u + discrete_laplace(WordStream(gen), self.s, self.t, u.size)
        return np.where((u > 0) & self.rule.keep(y, gen), y, SUPPRESSED)

    def keep_probability(self, count: int) -> float:
        """P(kept) for a group of true count ``count`` (0: absent, never kept)."""
        return self.rule.keep_probability(count)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        """None: the law of one count's noise Z; a count u: the law of its released value."""
        if true_value is None:
            return _noise_law(self.s / self.t)
        top = int(true_value) + self.threshold + math.ceil(80 * self.t / self.s)
        outs, lp = self._group_law(int(true_value), top)
        return IntegerLaw(outs, np.exp(lp), (False, True))  # kept counts: unbounded above

    def _group_law(self, u: int, top: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(released value) of one group on {SUPPRESSED, τ, ..., top} (the mass above
        ``top`` lumped into ``top``: a post-processing, so no loss is hidden)."""
        if u <= 0:
            return np.array([SUPPRESSED]), np.array([0.0])
        a = self.s / self.t
        top = max(top, self.threshold)
        y = np.arange(self.threshold - 1, top + 1, dtype=np.int64)
        r = math.exp(-a)
        p = (1 - r) / (1 + r) * np.exp(-a * np.abs(y - u).astype(np.float64))
        p[0] *= math.ldexp(self.rule.boundary, -BOUNDARY_BITS)  # kept at y = τ − 1
        p[-1] = self.rule.tail(top - u)  # P(Y >= top) = P(Z >= top - u)
        outs = np.concatenate([[SUPPRESSED], y])
        probs = np.concatenate([[1.0 - self.keep_probability(u)], p])
        with np.errstate(divide="ignore"):
            return outs, np.log(np.maximum(probs, 0.0))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(released vector | counts u), the vector encoded as one integer."""
        top = self.threshold + 2 * self.l1 + math.ceil(80 / (self.s / self.t))
        return joint_log_law(self._group_law, u, top)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == SUPPRESSED) | ((y == np.floor(y)) & (y >= self.threshold - 1)
                                   & np.isfinite(y))

    def privacy_model(self) -> Any:
        """Exact laws over neighbouring count vectors of up to two groups: every add/remove
        of one person with at most ``rows`` rows per group and ``l1`` in all, from counts in
        {0, 1, τ − R, τ − 1, τ, τ + 1}."""
        from ..verify import DiscreteFamily

        g, tau, R = min(self.groups, 2), self.threshold, self.rows
        values = sorted({0, 1, max(0, tau - R), max(0, tau - 1), tau, tau + 1})
        moves = [m for m in itertools.product(range(R + 1), repeat=g)
                 if 0 < sum(m) <= self.l1]
        pairs = []
        for x in itertools.product(values, repeat=g):
            for m in moves:
                y = tuple(a + b for a, b in zip(x, m, strict=True))
                pairs += [(x, y), (y, x)]
        return DiscreteFamily(inputs=[], sensitivity=float(self.l1), law=self._log_law,
                              pairs=pairs)

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, self.delta, note="thresholded count",
                               noise_at=self.noise, integer_output=True)

    def __repr__(self) -> str:
        return (f"ThresholdedCount(epsilon={self.epsilon!r}, delta={self.delta_requested!r}, "
                f"groups={self.groups}, rows={self.rows}, l1={self.l1})")


class NewGroupRelease(Mechanism):
    """The ``(0, δ)`` part of :class:`ThresholdedCount`: whether any of the at most ``groups``
    groups that exist only because of one person (each of count <= ``rows``) is released by
    a count noised with the geometric law of the rule and kept by its :class:`KeepRule`.

    ``release(counts)`` returns the keep indicators of such groups; its law on a count of 0
    (the group absent) is "never", on a count c <= rows "kept with the rule's probability".
    """

    kind = "statistic"

    def __init__(self, *, rule: KeepRule, groups: int, rows: int) -> None:
        self.rule = rule
        self.s, self.t, self.threshold = rule.s, rule.t, rule.threshold
        self.groups = _check_count("groups", groups)
        self.rows = _check_count("rows", rows)
        self.epsilon = 0.0
        self.sensitivity = float(self.rows)
        self.delta = keep_delta(rule.s, rule.t, self.threshold - self.rows, rule.boundary,
                                self.groups)
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=0.0, delta=self.delta, notion="approximate",
                         note=f"groups of one person's rows, threshold {self.threshold}")

    def _keep(self, c: int) -> float:
        return self.rule.keep_probability(c)

    BOOL_OUTPUTS = True  # the release is the keep indicators

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == 0) | (y == 1)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = check_counts(true_value, None, None).reshape(-1)  # refused before any word
        gen = resolve_rng(rng)
        z = discrete_laplace(WordStream(gen), self.s, self.t, u.size)
        return (u > 0) & self.rule.keep(u + z, gen)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        p = self._keep(int(true_value or 0))
        return IntegerLaw(np.array([0, 1]), np.array([1.0 - p, p]))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Whether some group is kept: P = 1 − Π(1 − P(kept))."""
        none = math.fsum(math.log1p(-self._keep(c)) if self._keep(c) < 1 else -math.inf
                         for c in u)
        some = math.log(-math.expm1(none)) if none < 0 else -math.inf
        return np.array([0, 1]), np.array([none, some])

    def privacy_model(self) -> Any:
        from ..verify import DiscreteFamily

        full = (self.rows,) * self.groups
        return DiscreteFamily(inputs=[], sensitivity=float(self.rows), law=self._log_law,
                              pairs=[((0,) * self.groups, full), (full, (0,) * self.groups)])

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(0.0, self.delta, note="new groups of one person (delta only)")

    def __repr__(self) -> str:
        return (f"NewGroupRelease(rule={self.rule!r}, groups={self.groups}, "
                f"rows={self.rows})")
