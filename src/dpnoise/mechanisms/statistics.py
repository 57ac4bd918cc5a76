"""Mechanisms whose input is a whole vector, not a shifted true value: report noisy max
(DP quantiles) and DP partition selection.  Registry kind "statistic": ``release``,
``compare`` and ``audit`` skip them (they release no noisy scalar); the harness, the
verifier and the accountants sweep them like every mechanism.

:class:`NoisyMaxQuantile` -- **report noisy max with exact two-sided geometric noise**
(Dwork and Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Claim 3.9,
here with discrete noise; the exponential mechanism for quantiles of McSherry and Talwar,
FOCS 2007, and Smith, STOC 2011, without floating point).  Each candidate's utility u_j
(an integer; neighbours move each by at most Δu, ``utility_sensitivity``) gets independent
noise Z_j with P(z) ∝ e^{−a|z|}, a = s/t <= ε/(2Δu) rational, sampled exactly (Canonne,
Kamath and Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020,
Algorithm 2); the first index maximising u_j + Z_j is released.  Proof: fix the other
noises; index i wins iff Z_i >= T with T = max(max_{j<i}(u_j + Z_j) + 1,
max_{j>i}(u_j + Z_j)) − u_i, an integer a neighbour moves by at most 2Δu;
P(Z >= T) <= e^{2aΔu} P(Z >= T + 2Δu) for the geometric law; integrating over the other
noises gives ε-DP.

:class:`PartitionSelection` -- groups whose keys are not public are kept only when a noisy
count of their distinct persons clears a threshold τ (Korolova, Kenthapadi, Mishra and
Ntoulas, "Releasing search queries and clicks privately", WWW 2009; Desfontaines, Voss,
Gipson and Mandayam, "Differentially private partition selection", PoPETs 2022).  Each
person is in at most G groups (``groups``), so the count vector has L1 sensitivity G; each
count gets exact geometric noise of decay a <= ε/G and is kept iff u + Z >= τ.  A group that
exists only because of the removed person has u = 1 and survives with probability
P(Z >= τ − 1) = e^{−a(τ−1)}/(1 + e^{−a}), computed for the SAMPLED law (the rational a) in
50-digit arithmetic and rounded up; τ is the smallest threshold with
δ = G·P(Z >= τ − 1) <= δ_requested: (ε, δ)-DP.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.discrete_laplace import discrete_laplace
from ..exact.words import WordStream
from ..params import check_delta, check_epsilon, real_array
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .geometric import rational_below
from .integers import IntegerLaw, check_counts

#: noise() tabulates the geometric law on at most this many points
MAX_LAW_POINTS = 1 << 20


def decay(epsilon: float) -> tuple[int, int]:
    """The exact sampler's rational decay s/t <= ``epsilon`` (relative gap <= 2^-24)."""
    s, t = rational_below(epsilon)
    if t > 1 << 56:
        raise ParameterError(
            "epsilon too small for the exact geometric sampler of this statistic (the "
            "per-unit decay would be below 2^-32): raise epsilon or lower the bounds")
    return s, t


def geometric_tail(s: int, t: int, m: int) -> float:
    """``P(Z >= m)`` (``m >= 0``) for ``P(z) ∝ e^{-|z| s/t}``, rounded UP to a double."""
    with mpmath.workdps(50):
        r = mpmath.exp(-mpmath.mpf(s) / t)
        v = r ** m / (1 + r)
        out = float(v)
    return math.nextafter(out, math.inf)


def tail_index(s: int, t: int, target: float) -> int:
    """The smallest ``m >= 0`` with ``P(Z >= m) <= target`` (exact check, rounded up)."""
    a = s / t
    guess = max(0, math.ceil(math.log(target * (1 + math.exp(-a))) / -a)) if target < 1 else 0
    m = max(0, guess - 2)
    while geometric_tail(s, t, m) > target:
        m += 1
    while m > 0 and geometric_tail(s, t, m - 1) <= target:
        m -= 1
    return m


def _cdf(a: float, k: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(Z <= k) of the two-sided geometric law of decay a (float64)."""
    r = math.exp(-a)
    with np.errstate(over="ignore", under="ignore"):
        return np.where(k >= 0, 1.0 - np.exp(-a * (np.maximum(k, 0) + 1)) / (1 + r),
                        np.exp(-a * np.abs(np.minimum(k, 0))) / (1 + r))


def _noise_law(a: float) -> IntegerLaw:
    """The law of one noise Z on |z| <= W (mass beyond < 1e-300)."""
    W = math.ceil(700 / a)
    if 2 * W + 1 > MAX_LAW_POINTS:
        raise ParameterError(f"the noise law of decay {a:.3g} needs {2 * W + 1} points "
                             f"(more than {MAX_LAW_POINTS}): no table is built")
    z = np.arange(-W, W + 1, dtype=np.int64)
    r = math.exp(-a)
    return IntegerLaw(z, (1 - r) / (1 + r) * np.exp(-a * np.abs(z)), (True, True))


class NoisyMaxQuantile(Mechanism):
    """Report noisy max over ``candidates`` integer utilities (see the module docstring).

    ``release(utilities)`` takes utilities of shape (..., candidates) and returns the index
    of the winner per row.  Supported: epsilon/(2·utility_sensitivity) >= 2^-32;
    utility_sensitivity an integer >= 1; candidates an integer >= 1.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, utility_sensitivity: int, candidates: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        if int(utility_sensitivity) != utility_sensitivity or utility_sensitivity < 1:
            raise ParameterError(f"utility_sensitivity must be an integer >= 1, got "
                                 f"{utility_sensitivity!r}")
        if int(candidates) != candidates or candidates < 1:
            raise ParameterError(f"candidates must be an integer >= 1, got {candidates!r}")
        self.sensitivity = int(utility_sensitivity)
        self.candidates = int(candidates)
        self.s, self.t = decay(self.epsilon / (2 * self.sensitivity))
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=0.0, notion="pure",
                         note="report noisy max, exact two-sided geometric noise")

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = real_array("true_value", true_value)  # real utilities; junk refused here
        if u.shape[-1:] != (self.candidates,):
            raise ParameterError(f"utilities must have shape (..., {self.candidates})")
        z = discrete_laplace(WordStream(resolve_rng(rng)), self.s, self.t,
                             u.size).reshape(u.shape)
        return np.argmax(u + z, axis=-1)  # the first maximum: smallest index on ties

    def noise(self, true_value: ArrayLike | None = None) -> IntegerLaw:
        """None: the law of one candidate's noise Z; a utility vector: the exact law of the
        released index."""
        a = self.s / self.t
        if true_value is None:
            return _noise_law(a)
        return IntegerLaw(np.arange(self.candidates), np.exp(self._log_law(
            tuple(np.asarray(true_value, dtype=np.int64).tolist()))[1]))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(index = i | u): Σ_z P(Z_i = z) Π_{j<i} F(u_i + z − 1 − u_j) Π_{j>i}
        F(u_i + z − u_j), over |z| <= 800/a + spread (mass beyond < e^-800)."""
        a = self.s / self.t
        v = np.asarray(u, dtype=np.float64)
        W = math.ceil(800 / a) + int(np.ptp(v)) + 1
        z = np.arange(-W, W + 1, dtype=np.float64)
        r = math.exp(-a)
        pz = (1 - r) / (1 + r) * np.exp(-a * np.abs(z))
        out = np.empty(v.size)
        for i in range(v.size):
            prod = pz.copy()
            for j in range(v.size):
                if j != i:
                    prod *= _cdf(a, v[i] + z - v[j] - (1 if j < i else 0))
            out[i] = math.fsum(prod.tolist())
        with np.errstate(divide="ignore"):
            return np.arange(v.size), np.log(out)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == np.floor(y)) & (y >= 0) & (y < self.candidates)

    def privacy_model(self) -> Any:
        """The exact law of the index on neighbouring utility vectors of up to 3 candidates:
        a base vector and every move of each utility by −Δu, 0 or +Δu."""
        from ..verify import DiscreteFamily

        m, d = min(self.candidates, 3), self.sensitivity
        pairs = []
        for base in ((0,) * m, tuple(-k * d for k in range(m))):
            for move in itertools.product((-d, 0, d), repeat=m):
                if any(move):
                    pairs.append((base, tuple(b + x for b, x in zip(base, move, strict=True))))
        return DiscreteFamily(inputs=[], sensitivity=float(d), law=self._log_law, pairs=pairs)

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, 0.0, note="report noisy max (pure eps-DP)",
                               noise_at=self.noise)

    def __repr__(self) -> str:
        return (f"NoisyMaxQuantile(epsilon={self.epsilon!r}, utility_sensitivity="
                f"{self.sensitivity}, candidates={self.candidates})")


class PartitionSelection(Mechanism):
    """Keep a group iff its noisy count of distinct persons clears the threshold (see the
    module docstring).  ``release(person_counts)`` returns the boolean keep mask.

    Supported: delta in (0, 1); groups an integer >= 1; epsilon/groups >= 2^-32.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, delta: float, groups: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta_requested = check_delta(delta)
        if int(groups) != groups or groups < 1:
            raise ParameterError(f"groups must be an integer >= 1, got {groups!r}")
        self.groups = int(groups)
        self.sensitivity = 1.0
        self.s, self.t = decay(self.epsilon / self.groups)
        m = tail_index(self.s, self.t, self.delta_requested / self.groups)
        self.threshold = m + 1
        self.delta = min(1.0, math.nextafter(
            self.groups * geometric_tail(self.s, self.t, m), math.inf))
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta, notion="approximate",
                         note=f"partition selection: threshold {self.threshold}")

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = check_counts(true_value, None, None).reshape(-1)  # refused before any word
        z = discrete_laplace(WordStream(resolve_rng(rng)), self.s, self.t, u.size)
        return (u + z) >= self.threshold

    def keep_probability(self, persons: int) -> float:
        """P(u + Z >= τ) for a group of ``persons`` distinct persons."""
        k = self.threshold - int(persons)  # P(Z >= k)
        a = self.s / self.t
        r = math.exp(-a)
        if k >= 0:
            return math.exp(-a * k) / (1 + r)
        return 1.0 - math.exp(-a * (1 - k)) / (1 + r)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        """None: the law of one count's noise Z; a count u: the law of the keep indicator."""
        if true_value is None:
            return _noise_law(self.s / self.t)
        p = self.keep_probability(int(true_value))
        return IntegerLaw(np.array([0, 1]), np.array([1.0 - p, p]))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(kept set | person counts u), the set as a bit mask; a count of 0 means the
        group does not exist (never kept)."""
        present = [g for g, c in enumerate(u) if c > 0]
        keep = {g: self.keep_probability(u[g]) for g in present}
        outs, lps = [], []
        for r in range(len(present) + 1):
            for kept in itertools.combinations(present, r):
                p = math.prod(keep[g] if g in kept else 1.0 - keep[g] for g in present)
                outs.append(sum(1 << g for g in kept))
                lps.append(math.log(p) if p > 0 else -math.inf)
        return np.array(outs, dtype=np.int64), np.array(lps)

    BOOL_OUTPUTS = True  # the release is the keep mask

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == 0) | (y == 1)

    def privacy_model(self) -> Any:
        """The exact law of the kept set over neighbouring person-count vectors of up to
        two groups (values 0, 1, τ−1, τ, τ+1; each count moves by at most one person)."""
        from ..verify import DiscreteFamily

        g, tau = min(self.groups, 2), self.threshold
        values = sorted({0, 1, max(0, tau - 1), tau, tau + 1})
        sets = list(itertools.product(values, repeat=g))
        pairs = [(x, y) for x in sets for y in sets
                 if x != y and all(abs(a - b) <= 1 for a, b in zip(x, y, strict=True))]
        return DiscreteFamily(inputs=[], sensitivity=1.0, law=self._log_law, pairs=pairs)

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, self.delta, note="partition selection",
                               noise_at=self.noise)

    def __repr__(self) -> str:
        return (f"PartitionSelection(epsilon={self.epsilon!r}, delta="
                f"{self.delta_requested!r}, groups={self.groups})")
