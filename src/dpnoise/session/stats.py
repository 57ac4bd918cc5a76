"""Components that are not a noisy vector: DP quantiles and DP partition selection.

The calibration and the sampling are the registry mechanisms
:class:`~dpnoise.mechanisms.statistics.NoisyMaxQuantile` and
:class:`~dpnoise.mechanisms.statistics.PartitionSelection` (so the verifier, the harness and
the accountants see them); the plans here add what the custodian path needs: the
utilities from bucket counts, the charge, the rank error bar and the recorded parameters.

:class:`RankPlan` -- the EARLIER custodian quantile (releases now go through
:mod:`dpnoise.session.interval_rank`, at the data's resolution); it is kept because ledgers
hold releases made with it: their recorded parameters give their error bars
(:func:`rank_error_from_parameters`).  A quantile by **report noisy max with exact
two-sided geometric noise** over a public grid of candidates.  The exponential mechanism for
quantiles (McSherry & Talwar, "Mechanism design via differential privacy", FOCS 2007; Smith,
"Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011)
scores candidate ``c_j`` with ``u_j = -max(0, D·L_j - Q·n, Q·n - D·R_j)`` where
``L_j``/``R_j`` count the (bounded, non-missing) values whose bucket is ``< j`` /
``<= j`` -- the values snapped UP onto the grid (:class:`~dpnoise.session.fixed_point.QuantileGrid`)
-- ``n`` their number, and ``q = Q/D`` the level as a fraction with ``D <= 2^16``.  Some
candidate has ``u = 0`` (the snapped q-quantile is on the grid).  Removing a person with
at most ``k`` rows in the cell moves every ``L_j``, ``R_j`` and ``n`` by at most ``k``,
so each ``u_j`` by at most ``Δ = k·max(Q, D - Q)``.

Rather than sampling ``exp(ε u / 2Δ)`` with floating point, dpnoise adds independent
exact two-sided geometric noise ``Z_j`` (``P(z) ∝ e^{-a|z|}``, ``a = s/t <= ε/(2Δ)``
rational, sampled exactly by Canonne, Kamath & Steinke's Algorithm 2, NeurIPS 2020) and
releases the first index maximising ``u_j + Z_j`` ("report noisy max", Dwork & Roth,
*The Algorithmic Foundations of Differential Privacy*, 2014, Claim 3.9, here with
discrete noise).  Proof: fix the other noises; index ``i`` wins iff ``Z_i >= T`` with
``T = max(max_{j<i}(u_j + Z_j) + 1, max_{j>i}(u_j + Z_j)) - u_i``, an integer that a
neighbour moves by at most ``2Δ``; ``P(Z >= T) <= e^{a·2Δ} P(Z >= T + 2Δ)`` for the
geometric law; integrating over the other noises gives ``ε``-DP.  Checked by
:func:`dpnoise.verify.verify_neighbours` on small data sets (tests).

Error bar (rank-based, from the output only; :func:`rank_error`): let ``*`` be a
candidate with ``u_* = 0``.  If the winner ``w`` had ``u_w <= -(E + 1)``, then ``u_w + Z_w
>= Z_*`` forces ``M - Z_* >= E + 1`` with ``M = max_{j != *} Z_j``, a maximum of ``m - 1``
independent geometric noises independent of ``Z_*``.  So with ``E`` the smallest integer
with ``P(M - Z >= E + 1) <= β`` -- the utility tail bound of report noisy max at the
released candidate, computed exactly as the convolution ``Σ_z P(Z = z)(1 - (1 -
P(Z >= E + 1 + z))^{m-1})`` (float64 over ``|z| <= 60/a``, the truncated mass added,
accepted only with a relative margin of 10^-6; when that sum would be longer than 2^20
terms, the closed form ``E = (h_1 - 1) + (h_2 - 1)`` with ``(m - 1)·P(Z >= h_1) <= β/2``
and ``P(Z >= h_2) <= β/2``) -- the winner has ``u >= -E`` with probability ``>= 1 - β``:
the released value is an empirical p-quantile of the data snapped up to the grid for
some ``p`` within ``E/(D·n)`` of ``q``.  (Earlier versions bounded every ``|Z_j|`` jointly,
``E = 2(h - 1)`` with ``m · 2 P(Z >= h) <= β``: about twice as wide.)  The interval of
levels uses the release's noisy count ``n`` (its lower confidence end, union bound); it
is a function of the released output, the noisy count and public parameters only.

:class:`SelectionPlan` -- groups whose keys are not public are released only when a
noisy count of their distinct persons clears a threshold (Korolova, Kenthapadi, Mishra
& Ntoulas, "Releasing search queries and clicks privately", WWW 2009; Wilson et al.,
"Differentially private SQL with bounded user contribution", PETS 2020; Desfontaines,
Voss, Gipson & Mandayam, "Differentially private partition selection", PoPETs 2022).
Each person is in at most ``G`` groups (``max_groups``, else ``max_contributions``), so
the vector of person counts has L1 sensitivity ``G``; each count gets exact two-sided
geometric noise of decay ``a <= ε_sel/G`` and the group is kept iff ``u + Z >= τ``.
A group that exists only because of the removed person has ``u = 1`` and survives with
probability ``P(Z >= τ - 1) = e^{-a(τ-1)}/(1 + e^{-a})`` -- computed for the SAMPLED law
(the rational ``a``) in 50-digit arithmetic and rounded up; ``τ`` is the smallest
threshold with ``δ = G · P(Z >= τ - 1) <= δ_requested``: (ε_sel, δ)-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..mechanisms.base import Guarantee
from ..mechanisms.registry import Request, build
from ..mechanisms.statistics import geometric_tail, tail_index
from .fixed_point import QuantileGrid

__all__ = ["LEVEL_DENOMINATOR", "RankPlan", "SelectionPlan", "geometric_tail", "level_interval",
           "rank_error", "rank_error_from_parameters", "tail_index"]

#: largest denominator of a quantile's level
LEVEL_DENOMINATOR = 1 << 16


#: the exact convolution of :func:`rank_error` is used up to this many terms
_CONVOLUTION_TERMS = 1 << 20


def _split_rank_error(s: int, t: int, m: int, beta: float) -> int:
    """The closed-form bound: ``(m-1)·P(Z >= h1) <= β/2`` and ``P(Z >= h2) <= β/2``."""
    h1 = max(1, tail_index(s, t, beta / (2 * (m - 1))))
    h2 = max(1, tail_index(s, t, beta / 2))
    return (h1 - 1) + (h2 - 1)


def _max_minus_one_tail(a: float, m: int, x: int, zmax: int) -> float:
    """``P(max of m-1 iid Z  -  Z' >= x)`` for the two-sided geometric law of decay
    ``a``, summed over ``|z'| <= zmax`` in float64 plus the truncated mass (upper bound
    up to float64 round-off, which the caller's margin absorbs)."""
    r = math.exp(-a)
    z = np.arange(-zmax, zmax + 1, dtype=np.float64)
    log_pz = math.log((1 - r) / (1 + r)) - a * np.abs(z)
    y = x + z  # M >= y
    # T(y) = P(Z >= y): r^y/(1+r) for y >= 0, else 1 - r^(1-y)/(1+r)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        tail = np.where(y >= 0, np.exp(-a * np.maximum(y, 0.0)) / (1 + r),
                        1.0 - np.exp(-a * (1 - np.minimum(y, 0.0))) / (1 + r))
        p_max = -np.expm1((m - 1) * np.log1p(-np.minimum(tail, 1.0 - 1e-300)))
    p_max = np.where(tail >= 1.0, 1.0, p_max)
    trunc = 2 * math.exp(-a * (zmax + 1)) / (1 + r)  # P(|Z'| > zmax)
    return float(np.sum(np.exp(log_pz) * p_max)) + trunc


@lru_cache(maxsize=1024)
def rank_error(s: int, t: int, m: int, beta: float) -> int:
    """``E``: with probability ``>= 1 - beta`` the candidate released by report noisy max
    over ``m`` candidates (exact geometric noise of decay ``s/t``) has utility ``>= -E``
    (see the module docstring)."""
    if m <= 1:
        return 0
    bound = _split_rank_error(s, t, m, beta)
    a = s / t
    zmax = math.ceil(60 / a)
    if 2 * zmax + 1 > _CONVOLUTION_TERMS:
        return bound

    def ok(e: int) -> bool:
        return _max_minus_one_tail(a, m, e + 1, zmax) * (1 + 1e-6) <= beta

    lo, hi = -1, bound  # ok(bound) holds (the split bound is valid); find the smallest
    if not ok(hi):
        return bound
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return max(hi, 0)


def level_interval(q_num: int, q_den: int, error: int, n_low: NDArray[Any]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Levels ``p`` within ``E/(D·n)`` of ``q = Q/D`` (``n`` the count's lower end)."""
    e = error / (q_den * np.maximum(np.asarray(n_low, float), 1.0))
    level = q_num / q_den
    return np.clip(level - e, 0.0, 1.0), np.clip(level + e, 0.0, 1.0)


def rank_error_from_parameters(p: dict[str, Any], beta: float) -> int:
    """:func:`rank_error` of a recorded quantile plan (its ``parameters()``)."""
    s, t = (int(v) for v in p["decay"])
    return rank_error(s, t, int(p["candidates"]), float(beta))


@dataclass(frozen=True)
class RankSpec:
    epsilon: float
    delta: float
    sensitivity: float


class RankPlan:
    """A calibrated DP quantile (see the module docstring)."""

    name = "noisy-max-quantile"

    def __init__(self, grid: QuantileGrid, level: float, epsilon: float, cells: bool,
                 l1: int, per_cell: int, changed: int) -> None:
        frac = Fraction(level).limit_denominator(LEVEL_DENOMINATOR)
        if not 0 < frac < 1:
            raise ParameterError(f"quantile level {level!r} rounds to {frac} (needs 0 < q < 1)")
        self.grid = grid
        self.Q, self.D = frac.numerator, frac.denominator
        rows = per_cell if cells else l1
        self.delta_u = rows * max(self.Q, self.D - self.Q)
        self.epsilon = float(epsilon)
        self.delta = 0.0
        self.cell_epsilon = self.epsilon / changed if cells else self.epsilon
        #: the registry mechanism (report noisy max); a person changes at most ``changed``
        #: cells of a GROUP BY, each a cell_epsilon-DP choice: charged as that many cells
        self.mechanism = build("noisy-max-quantile", Request(
            epsilon=self.cell_epsilon, sensitivity=self.delta_u,
            options={"candidates": grid.size}))
        self.charge_cells = changed if cells else 1
        self.s, self.t = self.mechanism.s, self.mechanism.t
        self.spec = RankSpec(self.cell_epsilon, 0.0, float(self.delta_u))
        self.points = grid.points()

    @property
    def level(self) -> float:
        return self.Q / self.D

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.cell_epsilon, delta=0.0, notion="pure",
                         note="report noisy max, exact two-sided geometric noise")

    def utilities(self, counts: NDArray[np.int64]) -> NDArray[Any]:
        """``u_j`` per cell (rows) and candidate (columns), exact integers."""
        c = np.asarray(counts, dtype=np.int64).reshape(-1, self.grid.size)
        r = np.cumsum(c, axis=1)
        left = r - c
        n = r[:, -1:]
        big = int(n.max(initial=0)) * self.D >= 1 << 62
        if big:  # exact Python integers
            r, left, n = r.astype(object), left.astype(object), n.astype(object)
        a = self.D * left - self.Q * n
        b = self.Q * n - self.D * r
        return -np.maximum(np.maximum(a, b), 0)

    def choose(self, counts: NDArray[np.int64], rng: Any) -> NDArray[np.int64]:
        """The released candidate per cell: report noisy max over the utilities."""
        return self.mechanism.release(self.utilities(counts), rng)

    def release(self, counts: NDArray[np.int64], rng: Any) -> NDArray[np.float64]:
        shape = np.shape(counts)[:-1]
        return self.points[self.choose(counts, rng)].reshape(shape)

    def rank_error(self, beta: float) -> int:
        """``E``: with probability ``>= 1 - beta``, ``u(released) >= -E``."""
        return rank_error(self.s, self.t, self.grid.size, beta)

    def level_interval(self, n_low: NDArray[Any], beta: float
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return level_interval(self.Q, self.D, self.rank_error(beta), n_low)

    def parameters(self) -> dict[str, Any]:
        return {"mechanism": self.name, "kind": "quantile", "epsilon": self.epsilon,
                "delta": 0.0, "cell_epsilon": self.cell_epsilon,
                "level": [self.Q, self.D], "utility_sensitivity": self.delta_u,
                "decay": [self.s, self.t], "candidates": self.grid.size,
                "range": [float(self.points[0]), float(self.points[-1])],
                # the public candidate grid: c_j = min(lo_q + j·2^shift, hi_q)·2^-scale_exp
                "grid": {"shift": self.grid.shift, "lo_q": str(self.grid.lo_q),
                         "hi_q": str(self.grid.hi_q), "scale_exp": self.grid.scale_exp}}


class SelectionPlan:
    """DP partition selection over groups whose keys are not public."""

    name = "partition-selection"

    def __init__(self, epsilon: float, delta: float, groups: int) -> None:
        if not delta > 0:
            raise ParameterError(
                "grouping by a column whose keys are not public releases only the groups "
                "that survive DP partition selection, which needs delta > 0 (e.g. delta="
                "1e-6); or declare its keys (categories / integer) in the schema")
        self.epsilon, self.delta_requested, self.groups = float(epsilon), float(delta), groups
        #: the registry mechanism (partition selection), charged as one release
        self.mechanism = build("partition-selection", Request(
            epsilon=self.epsilon, delta=self.delta_requested, options={"groups": groups}))
        self.charge_cells = 1
        self.s, self.t = self.mechanism.s, self.mechanism.t
        self.threshold = self.mechanism.threshold
        self.delta_exact = self.mechanism.delta
        self.delta = max(self.delta_requested, self.delta_exact)  # charged
        self.spec = RankSpec(self.epsilon / groups, self.delta_exact / groups, 1.0)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta_exact, notion="approximate",
                         note=f"partition selection: threshold {self.threshold}")

    def release(self, persons: NDArray[np.int64], rng: Any) -> NDArray[np.bool_]:
        return self.mechanism.release(persons, rng)

    def suppressed_bound(self, alpha: float) -> int:
        """With probability ``>= 1 - alpha``, a group NOT released has at most this many
        distinct persons: ``u <= τ - 1 - Z`` and ``P(Z <= -m) <= alpha``."""
        m = max(1, tail_index(self.s, self.t, alpha))
        return self.threshold - 1 + (m - 1)

    def parameters(self) -> dict[str, Any]:
        return {"mechanism": self.name, "kind": "selection", "epsilon": self.epsilon,
                "delta": self.delta, "delta_exact": self.delta_exact,
                "threshold": self.threshold, "max_groups": self.groups,
                "decay": [self.s, self.t]}
