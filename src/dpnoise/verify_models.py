"""The verifier's privacy models, its report and the discrete primitives they share.

A privacy model is a mechanism's exact output law for each true value, in one of the forms
:mod:`dpnoise.verify` analyses (an additive lattice or grid, a finite lattice, a discrete,
lattice or continuous family); :class:`VerificationReport` is what a verification returns.
Like the verifier, this module imports only the ground floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .float_sum import ExactSum, fsum_array

DEFAULT_EPSILONS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)


# ---------------------------------------------------------------------- models
@dataclass(frozen=True)
class AdditiveLattice:
    """Output = centre + z (z integer, in lattice units) with pmf ``exp(logpmf(z))``."""

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    max_shift: int
    period: int | None = None
    window: int | None = None  # default: 3 periods + 2 shifts on each side


@dataclass(frozen=True)
class AdditiveGrid:
    """Output = centre + u in d dimensions (u: integer cell offsets), pmf ``exp(logpmf(u))``.

    ``logpmf`` maps an (n, d) int array of offsets to log-probabilities; ``shifts`` is the
    (k, d) array of all cell shifts neighbours can cause; ``window`` the half-widths of the
    box of offsets checked.  The verifier evaluates the pmf on the window and takes the
    maximum |ln p(u) − ln p(u + δ)| over every shift δ and every u with both points in
    the window (it does not extrapolate beyond it).
    """

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    shifts: NDArray[np.int64]
    window: tuple[int, ...]


@dataclass(frozen=True)
class FiniteLattice:
    """Output = centre + z with z in [lo, hi] (integers, lattice units), pmf ``exp(logpmf(z))``.

    Finite support: points reachable from one centre but not from a shifted one are
    *not* a verification failure; they are counted in δ(ε') (a distinguishing event).
    ``shifts``: which centre shifts to evaluate δ for (default: all of 1..max_shift when
    max_shift <= 16, else 1, 2, S/4, S/2, 3S/4, S−1, S).  The loss on the common support
    is taken over every pair at distance <= max_shift.
    """

    logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]]
    max_shift: int
    lo: int
    hi: int
    shifts: Sequence[int] | None = None


@dataclass(frozen=True)
class DiscreteFamily:
    """Finite pmfs: ``law(x) -> (outputs, logp)``; neighbours are inputs within ``sensitivity``."""

    inputs: Sequence[float]
    sensitivity: float
    law: Callable[[float], tuple[NDArray[Any], NDArray[np.float64]]]
    pairs: Sequence[tuple[float, float]] | None = None


@dataclass(frozen=True)
class ContinuousFamily:
    """Densities ``logpdf(y, x)`` (−inf off the support) for each neighbouring pair.

    ``breakpoints(x)``: where the density may be non-smooth (support ends, kinks).
    ``cdf(y, x)``: optional, exact mass of (−inf, y] of the continuous part.
    ``atoms(x)``: optional point masses {y: probability}.
    ``scale``: typical length scale, to place dense evaluations and tail probes.
    """

    pairs: Sequence[tuple[float, float]]
    logpdf: Callable[[NDArray[np.float64], float], NDArray[np.float64]]
    breakpoints: Callable[[float], Sequence[float]]
    scale: float
    cdf: Callable[[float, float], float] | None = None
    atoms: Callable[[float], dict[float, float]] | None = None
    logpdf_mp: Callable[[Any, float], Any] | None = None


@dataclass(frozen=True)
class LatticeFamily:
    """Per-input pmfs on one integer lattice of outputs (non-additive, e.g. truncated laws).

    ``logpmf(j, x)``: ln P(output cell j | true value x), −inf off the support.
    ``window(x, x')``: inclusive cell range ``(lo, hi)`` compared for the pair, or a list of
    disjoint ranges.  Past every cut where the support continues, the log-ratio of the pair must
    be periodic with ``period`` cells (geometric tails, interiors of far pieces); the verifier
    *checks* this on the two periods next to each cut instead of trusting it, and adds the mass
    outside the window to δ(ε') for ε' below the loss.
    """

    pairs: Sequence[tuple[float, float]]
    logpmf: Callable[[NDArray[np.int64], float], NDArray[np.float64]]
    window: Callable[[float, float], Any]
    period: int | None = None


# ---------------------------------------------------------------------- report
@dataclass(frozen=True)
class VerificationReport:
    """Verified privacy loss and δ(ε') curve, plus the claim it was compared with.

    Parameters
    ----------
    epsilon : float
        The verified worst-case privacy loss ``sup |ln p(y|x) − ln p(y|x')|`` over
        neighbouring inputs and all outputs (infinite if an output is possible on one side
        only).
    delta_curve : tuple of (float, float)
        Pairs ``(ε', δ(ε'))``, with ``δ(ε') = sup Σ_y (p(y|x) − e^ε' p(y|x'))_+`` (the
        hockey-stick divergence; an integral for densities).
    claimed_epsilon, claimed_delta : float or None, default None
        The mechanism's claim, read after the computation.
    worst : dict, default {}
        Where the worst loss occurs.
    method : str, default ""
        Which analysis produced the numbers (lattice, discrete, continuous, ...).
    delta_lower : tuple of (float, float), default ()
        Pairs ``(ε', δ_lo(ε'))`` where the analysis bounds its float error
        (:func:`hockey_with_error`): the true δ(ε') is at least δ_lo(ε').  The claim fails
        only when this lower bound exceeds it (else the ``delta_curve`` value is used).
    """

    epsilon: float
    delta_curve: tuple[tuple[float, float], ...]
    claimed_epsilon: float | None = None
    claimed_delta: float | None = None
    worst: dict[str, Any] = field(default_factory=dict)
    method: str = ""
    delta_lower: tuple[tuple[float, float], ...] = ()

    def delta_at(self, eps: float) -> float:
        """The verified δ at one of the computed ε'.

        Parameters
        ----------
        eps : float
            An ε' that was passed to :func:`verify` (or the claimed ε).

        Returns
        -------
        float
            δ(ε').

        Raises
        ------
        KeyError
            If δ(ε') was not computed.
        """
        for e, d in self.delta_curve:
            if e == eps:
                return d
        raise KeyError(f"delta({eps}) was not computed; pass epsilons=[...] to verify()")

    @property
    def passed(self) -> bool:
        """Claim holds: verified δ(claimed ε) <= claimed δ (pure: loss <= claimed ε)."""
        if self.claimed_epsilon is None:
            return True
        if not self.claimed_delta:
            return self.epsilon <= self.claimed_epsilon * (1 + 1e-12) + 1e-12
        d = dict(self.delta_lower).get(self.claimed_epsilon,
                                       self.delta_at(self.claimed_epsilon))
        return d <= self.claimed_delta * (1 + 1e-9) + 1e-300

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict.

        Returns
        -------
        dict
            Verified and claimed ε and δ, the curve, the worst case and ``passed``.
        """
        return {
            "verified_epsilon": self.epsilon,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "passed": self.passed,
            "delta_curve": [list(p) for p in self.delta_curve],
            "delta_lower": [list(p) for p in self.delta_lower],
            "worst": self.worst,
            "method": self.method,
        }


# ---------------------------------------------------------------- primitives
def log_hockey(logp: NDArray[np.float64], logq: NDArray[np.float64], eps: float) -> float:
    """Σ (p − e^eps q)_+ over aligned outcomes, accurate for tiny masses.

    The terms are summed exactly rounded (``math.fsum``'s float, :class:`ExactSum`), in
    chunks of 2^16 outcomes so that a support of 10^7 points stays in cache."""
    logp = np.asarray(logp, dtype=np.float64).reshape(-1)
    logq = np.asarray(logq, dtype=np.float64).reshape(-1)
    step = 1 << 16
    if logp.size <= step:
        return fsum_array(_hockey_terms(logp, logq, eps))
    acc = ExactSum()
    for i in range(0, logp.size, step):
        acc.add(_hockey_terms(logp[i:i + step], logq[i:i + step], eps))
    return acc.value()


def _hockey_terms(logp: NDArray[np.float64], logq: NDArray[np.float64],
                  eps: float) -> NDArray[np.float64]:
    """The positive terms p(1 − e^{ln q + ε − ln p}) of :func:`log_hockey`."""
    with np.errstate(invalid="ignore", over="ignore"):
        gap = logq + eps - logp  # ln(e^eps q / p)
        mask = np.isfinite(logp) & (gap < 0)
        return np.exp(logp[mask]) * -np.expm1(gap[mask])


#: unit roundoff of float64
U = 2.0**-53


def hockey_with_error(logp: NDArray[np.float64], logq: NDArray[np.float64],
                      eps: float) -> tuple[float, float]:
    """:func:`log_hockey` and a bound B on how far it may exceed the law's true δ.

    The model gives each log-probability as a float ℓ within 2u(1 + |ℓ|) of ln p (u = 2^-53:
    one rounding of p, then a log correct to 1 ulp -- ``math.log`` of a correctly rounded
    probability).  For an output y with computed gap ĝ = fl(fl(ℓ_q + ε) − ℓ_p) < 0 the term
    is t = fl(fl(e^{ℓ_p})·fl(−expm1(ĝ))), against the true p(y)(1 − e^g)_+.  Then
    |ĝ − g| <= 2u(2 + |ℓ_p| + |ℓ_q|) + u(|ℓ_q + ε| + |ĝ|)(1 + 2u) (inputs, then the two
    roundings; where q(y) = 0, ĝ = −inf and the term p̂ are exact, and only ℓ_p's error
    counts), and since |ĝ| <= |ℓ_q| + |ε| + |ℓ_p| (1 + 2u) this is at most
    Δ_y = u(4 + 3|ℓ_p| + 4|ℓ_q| + 2|ε|)(1 + 4u) (ℓ_q read as 0 where q(y) = 0).  As
    |(1 − e^a) − (1 − e^b)| <= e^{max(a, b)}|a − b| with a, b <= Δ_y, the term exceeds the
    true one by at most p̂(y)Δ_y(1 + 2Δ_y) plus its own relative rounding: e^{ℓ_p} and
    expm1 within 2 ulp (4u) each, the product u, the exact rounding of the sum u, and p̂
    itself within 2u(1 + |ℓ_p|) + 4u of p.  So

        B = 1.01·Σ_y p̂(y)Δ_y + u(13 + 2 max|ℓ_p|)·δ̂

    bounds δ̂ − δ from above (outputs left out because ĝ >= 0 only lower δ̂; 1.01 covers
    the factors 1 + O(u) and 1 + 2Δ_y, and the float error of B's own sums).  Returns
    (δ̂, B); :func:`hockey_curve_with_error` does every ε' of a pair at once.
    """
    d, bound = hockey_curve_with_error(logp, logq, [eps])
    return d[0], bound[0]


def hockey_curve_with_error(logp: NDArray[np.float64], logq: NDArray[np.float64],
                            epsilons: Sequence[float]) -> tuple[list[float], list[float]]:
    """:func:`hockey_with_error` at each ε' of ``epsilons``: the same δ̂ floats as
    :func:`log_hockey`, each with its bound B (the ε'-free parts computed once)."""
    logp = np.asarray(logp, dtype=np.float64).reshape(-1)
    logq = np.asarray(logq, dtype=np.float64).reshape(-1)
    finite = np.isfinite(logp)
    abs_p = np.where(finite, np.abs(logp), 0.0)
    abs_q = np.where(np.isfinite(logq), np.abs(logq), 0.0)
    p = np.exp(logp)
    weight = p * (4 + 3 * abs_p + 4 * abs_q)  # p̂·Δ_y/u without its ε part
    top = float(abs_p.max(initial=0.0))
    ds, bounds = [], []
    for eps in epsilons:
        with np.errstate(invalid="ignore", over="ignore"):
            gap = logq + eps - logp  # as log_hockey
            mask = finite & (gap < 0)
            d = fsum_array(p[mask] * -np.expm1(gap[mask]))
        spread = U * (1 + 4 * U) * (float(weight[mask].sum())
                                    + 2 * abs(eps) * float(p[mask].sum()))
        ds.append(d)
        bounds.append(1.01 * spread + U * (13 + 2 * top) * d)
    return ds, bounds


def pair_loss(logp: NDArray[np.float64], logq: NDArray[np.float64]) -> float:
    """max |ln p − ln q| over aligned outcomes (inf where exactly one is impossible)."""
    fp, fq = np.isfinite(logp), np.isfinite(logq)
    if np.any(fp != fq):
        return math.inf
    both = fp & fq
    if not np.any(both):
        return 0.0
    return float(np.max(np.abs(logp[both] - logq[both])))


def discrete_pair(
    logp: NDArray[np.float64], logq: NDArray[np.float64], epsilons: Sequence[float]
) -> tuple[float, list[float]]:
    """Loss and δ(ε') (both directions) of two aligned discrete laws."""
    loss = pair_loss(logp, logq)
    deltas = [max(log_hockey(logp, logq, e), log_hockey(logq, logp, e)) for e in epsilons]
    return loss, deltas


def pairs_from_inputs(inputs: Sequence[float], sensitivity: float) -> list[tuple[float, float]]:
    xs = sorted(set(float(x) for x in inputs))
    out = []
    for i, a in enumerate(xs):
        for b in xs[i + 1 :]:
            if b - a <= sensitivity * (1 + 1e-12):
                out.append((a, b))
    return out
