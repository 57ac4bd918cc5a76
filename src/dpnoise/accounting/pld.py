"""Pessimistic privacy-loss distributions (PLDs) on a loss grid, and their composition.

Definitions.  For an ordered pair of output laws (P, Q) the *privacy loss* of an outcome y is
L(y) = ln P(y)/Q(y) (+inf where Q(y) = 0 < P(y)), and the PLD is the law of L(Y), Y ~ P.  The
hockey-stick divergence ("privacy profile") is

    H(ε) = sup_E P(E) − e^ε Q(E) = P(L = ∞) + E_P[(1 − e^{ε − L})_+]          (ε ∈ ℝ)   (1)

(Koskela, Jälkö, Honkela, "Computing tight differential privacy guarantees using FFT",
AISTATS 2020, eq. (5); Sommer, Meiser, Mohammadi, "Privacy loss classes", PoPETs 2019,
Lemma 5).  A pair (P', Q') *dominates* (P, Q) when H_{P,Q}(ε) <= H_{P',Q'}(ε) for every real ε;
this is equivalent to T(P', Q') <= T(P, Q) for the trade-off functions (Dong, Roth, Su,
"Gaussian differential privacy", JRSS-B 2022, Prop. 2.12) and is preserved by (adaptive)
composition (ibid. Thm. 3.2 and Lemma C.3; Zhu, Dong, Wang, "Optimal accounting of differential
privacy via characteristic function", AISTATS 2022, Def. 8 and Thm. 10).

Representation.  A :class:`PLD` holds masses ω_i >= 0 on the losses (start + i)·h, a mass ω_∞
at +∞, and an additive ``slack`` (a proven bound on floating-point error, added to every δ).
Every operation below only ever *raises* H pointwise, so the δ(ε) and ε(δ) it reports are
upper bounds for the pair it dominates:

* rounding a loss UP to the grid, and moving mass from a loss to a larger loss (or to +∞),
  raises every term of (1) and keeps the law a valid PLD (Σ ω_i e^{−L_i} <= 1 only decreases):
  the pessimistic estimate of Meiser and Mohammadi, "Tight on budget?", CCS 2018, Sec. 5;
* composition is the convolution of the finite parts (PLDs of a product pair add), with
  ω_∞ = 1 − (1 − a_∞)(1 − b_∞); computed by FFT *without* wrap-around (linear convolution of
  length n_a + n_b − 1), twice: untilted for the low losses and *exponentially tilted*
  (masses × e^{θL}) for the upper tail, where δ(ε) is decided at small δ (:mod:`.tilt`).
  The round-off of each (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.
  SIAM 2002, Thm. 24.2: relative 2-norm error <= log2(n)·η/(1 − log2(n)·η),
  η = μ + γ_4(√2 + μ), converted to an ℓ1 bound, √n·ℓ2) is tracked as bounds on the
  θ-weighted ℓ1 norms ‖e‖_θ = Σ|e_i|e^{θL_i} of the error (``log_err``); such a bound costs
  δ(ε) only c_θ e^{−θε}‖e‖_θ, so the tail is resolved to relative precision instead of
  being charged ~1e-10 of δ per composition; negative round-off values are clipped to 0,
  which only raises H;
* tails: masses beyond the upper truncation (1e-18 per composition) go to +∞, masses below
  the lower truncation are lifted to the lowest kept loss (both only raise H);
* **pointwise-close laws.**  If a sampled pmf satisfies e^{−ρ_lo} f <= p̃ <= e^{ρ_hi} f
  pointwise for an ideal law f (a 64-bit table of a geometric law), then for every pair
  (p̃_0, p̃_1) of shifted copies and every output y,
  (p̃_0(y) − e^ε p̃_1(y))_+ <= e^{ρ_hi} (f_0(y) − e^{ε − ρ_lo − ρ_hi} f_1(y))_+, so
  H_p̃(ε) <= e^{ρ_hi} H_f(ε − ρ): the PLD of f with every loss raised by ρ = ρ_lo + ρ_hi and
  every mass multiplied by e^{ρ_hi} (total mass e^{ρ_hi} > 1) bounds it.  Such PLDs compose
  by the same convolution: for a product pair H(ε) = b_∞ + Σ_j b_j H_1(ε − L_j), an
  expectation of a non-decreasing, non-negative function of the loss, so the pointwise
  bounds multiply output by output (also adaptively, the bound holding for every history).
  This replaces the revealed-coin construction's +∞ mass 1 − e^{−ρ} (~1e-14 to 3e-11 per
  release, which 1000 releases turned into a δ floor) by an ε shift of ~1e-13.

δ(ε) is evaluated exactly for the discrete law by tail sums, δ(ε) = A(ε) − e^ε B(ε) with
A = Σ_{L_i > ε} ω_i and B = Σ_{L_i > ε} ω_i e^{−L_i}, plus ω_∞ and ``slack``, plus a bound on the
rounding of the two tail sums.  ε(δ) inverts this exactly between grid points (δ is
e^ε-affine there) and is rounded up.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .convolution import U, atoms_and_fft, fft_l1_error
from .tilt import (
    NO_ERROR,
    THETAS,
    choose_tilt,
    compose_errors,
    delta_term,
    log_add,
    log_norms,
    split_errors,
    tilted,
)

#: the most grid points a composed PLD may hold (its FFTs then need about 1.5 GiB)
MAX_POINTS = 1 << 25
DEFAULT_H = 2.0**-16  # 1.5e-5: k·h bounds the ε error of a k-fold composition
TAIL_HI = 1e-18       # upper tail mass moved to +∞ per truncation (costs δ)
TAIL_LO = 1e-9        # lower tail mass lifted to the lowest kept loss (costs nothing at ε >= 0)
_MAGIC = b"DPNPLD1\n"


def _discounted_suffix(m: NDArray[np.float64], h: float) -> NDArray[np.float64]:
    """y_i = Σ_{j>=i} m_j e^{−(j−i+1)h} (the discounted suffix sums of ``_tails``).

    Evaluated in chunks of at most 30/h entries (exponents of at most e^30 inside a
    chunk, no overflow): within a chunk, suffix sums of m_j e^{−(j−j0)h}, rescaled; the
    chunk's carry is the next chunk's y times e^{−(length)h}.  Sums of non-negative terms:
    relative error <= (n + 2)u per entry, within the 4·n·u·Σm that ``epsilon`` allows.
    """
    n = m.size
    y = np.zeros(n)
    B = max(1, int(30.0 / h))
    carry = 0.0  # y at the first index after the chunk
    for j0 in range((n - 1) // B * B, -1, -B):
        seg = m[j0:j0 + B]
        k = np.arange(seg.size, dtype=np.float64)
        w = seg * np.exp(-k * h)
        suf = np.cumsum(w[::-1])[::-1]  # Σ_{j>=i} m_j e^{−(j−j0)h}
        y[j0:j0 + seg.size] = np.exp(k * h) * suf * math.exp(-h) \
            + carry * np.exp(-(seg.size - k) * h)
        carry = float(y[j0])
    return y


def _spliced_convolution(a: NDArray[np.float64], la: NDArray[np.float64],
                         b: NDArray[np.float64], lb: NDArray[np.float64], start: int,
                         h: float, norms: tuple[NDArray[np.float64], NDArray[np.float64]]
                         | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                 NDArray[np.float64]]:
    """a * b from two FFT convolutions, with ln ‖error‖_θ at every tilt and a noise level.

    The untilted convolution (ℓ1 error E_0, :func:`atoms_and_fft`) is used below an output
    index s, the θ1-tilted one (:mod:`.tilt`: θ1-norm error E_1, including the relative
    rounding of tilting the operands and untilting the result) from s on, s being where the
    entry-wise scale E_1 e^{−θ1 L} is expected to drop below E_0.  Output k is
    Σ_i a_i b_{k−i}, so the outputs below s need only a[:s] and b[:s], and those from s on
    only a[s − n_b + 1:] and b[s − n_a + 1:] (a ledger's small charge: each FFT covers about
    half of the state).  Returns (masses, log error per θ, entry-wise noise level for
    :meth:`PLD._drop_noise`)."""
    na, nb = a.size, b.size
    n = na + nb - 1
    L = (start + np.arange(n)) * h
    g0 = fft_l1_error(a, b, n)
    log_rel = math.log(max(g0, 1e-300) / max(float(a.sum()) * float(b.sum()), 1e-300))
    norm_a, norm_b = norms if norms is not None else (log_norms(a, la), log_norms(b, lb))
    theta1 = choose_tilt(a, la, b, lb, norm_a, norm_b, log_rel)
    k1 = int(np.searchsorted(THETAS, theta1))
    # where to splice (a heuristic: every s is valid; the bounds below are of the pieces):
    # the tilted FFT's error predicted as e^{log_rel}‖a‖_θ1‖b‖_θ1, as in choose_tilt
    log_g1 = log_rel + float(norm_a[k1] + norm_b[k1])
    s = n if g0 <= 0 else int(np.searchsorted(L, (log_g1 - math.log(g0)) / theta1,
                                              side="left"))
    s = min(max(s, 0), n)
    c = np.zeros(n)
    noise = np.zeros(n)
    log_e0, log_e1 = -math.inf, -math.inf
    if s > 0:
        c0, e0 = atoms_and_fft(a[:s], b[:s], min(s, na) + min(s, nb) - 1)
        c[:s] = c0[:s]
        noise[:s] = e0 / math.sqrt(n)
        log_e0 = math.log(e0) if e0 > 0 else -math.inf
    if s < n:
        oa, ob = max(0, s - nb + 1), max(0, s - na + 1)
        pa, sa, ra = tilted(a[oa:], la[oa:], theta1)
        pb, sb, rb = tilted(b[ob:], lb[ob:], theta1)
        c1, e1 = atoms_and_fft(pa, pb, pa.size + pb.size - 1)
        ab = float(pa.sum()) * float(pb.sum())
        rc = 8 * U * (abs(sa + sb) + theta1 * float(np.max(np.abs(L))) + 2)  # untilting
        e1 = e1 + (ra + rb + ra * rb) * ab + rc * (ab + e1) + 1e-300 * n
        with np.errstate(over="ignore"):
            scale = np.exp(np.minimum(sa + sb - theta1 * L[s:], 700.0))
        c[s:] = c1[s - oa - ob:n - oa - ob] * scale
        noise[s:] = e1 / math.sqrt(n) * scale
        log_e1 = math.log(e1) + sa + sb
    log_err = split_errors(log_e0, log_e1, theta1, float(L[s - 1]) if s > 0 else None,
                           float(L[s]) if s < n else None, float(L[-1]))
    return c, log_err, noise


def _tail_count(m: NDArray[np.float64], t: float) -> int:
    """The largest j with Σ_{i<j} m_i <= t (m >= 0), reading chunks from the start (the
    tails are short: no cumulative sum over the whole array)."""
    done, acc, chunk = 0, 0.0, 4096
    while done < m.size:
        part = np.cumsum(m[done:done + chunk]) + acc
        j = int(np.searchsorted(part, t, side="right"))
        if j < part.size:
            return done + j
        acc = float(part[-1])
        done += part.size
        chunk *= 4
    return m.size


@dataclass(frozen=True, eq=False)
class PLD:
    """A pessimistic privacy-loss distribution on the grid ``h·ℤ`` (see module docstring).

    ``masses[i]`` is the probability of the loss ``(start + i)·h``; ``inf_mass`` that of +∞;
    ``slack`` an additive bound on numerical error included in every δ.
    """

    h: float
    start: int
    masses: NDArray[np.float64]
    inf_mass: float = 0.0
    slack: float = 0.0
    #: ln of bounds on ‖ω − ω̃‖_θ at the tilts :data:`.tilt.THETAS` (None: no error)
    log_err: NDArray[np.float64] | None = None
    #: serialisation format: 1 = written before the tilted errors (composed by
    #: :mod:`.pld_legacy` with another version-1 PLD, so that old ledgers verify)
    version: int = 2

    @property
    def errors(self) -> NDArray[np.float64]:
        """``log_err``, or −inf everywhere (no tracked error)."""
        return NO_ERROR.copy() if self.log_err is None else np.asarray(self.log_err)

    def flat_slack(self) -> float:
        """The tracked error as an additive δ valid at every ε (its ℓ1 bound, θ = 0)."""
        return math.exp(min(700.0, float(self.errors[0])))

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_losses(cls, losses: NDArray[np.float64], probs: NDArray[np.float64], *,
                    h: float = DEFAULT_H, inf_mass: float = 0.0,
                    error: NDArray[np.float64] | float = 0.0) -> PLD:
        """Round each finite loss UP to the grid (after adding its float ``error`` bound)."""
        L = np.asarray(losses, dtype=np.float64)
        p = np.asarray(probs, dtype=np.float64)
        if L.shape != p.shape or np.any(p < 0) or np.any(np.isnan(L)):
            raise ParameterError("losses and probs must be aligned, probs >= 0, no NaN")
        inf = float(inf_mass) + float(p[np.isposinf(L)].sum())
        keep = np.isfinite(L) & (p > 0)
        L, p = L[keep], p[keep]
        err = np.broadcast_to(np.asarray(error, dtype=np.float64), keep.shape)[keep]
        if L.size == 0:
            return cls(h, 0, np.zeros(1), min(1.0, inf), 0.0)
        idx = np.ceil((L + err + 4 * U * np.abs(L)) / h).astype(np.int64)
        lo = int(idx.min())
        masses = np.bincount(idx - lo, weights=p)
        return cls(h, lo, masses, min(1.0, inf), 0.0).truncated()

    @classmethod
    def point(cls, loss_mass: Sequence[tuple[float, float]], *, h: float = DEFAULT_H,
              inf_mass: float = 0.0) -> PLD:
        """A PLD from explicit (loss, probability) atoms (rounded up)."""
        losses = np.array([x for x, _ in loss_mass], dtype=np.float64)
        probs = np.array([p for _, p in loss_mass], dtype=np.float64)
        return cls.from_losses(losses, probs, h=h, inf_mass=inf_mass)

    @classmethod
    def identity(cls, h: float = DEFAULT_H) -> PLD:
        """The PLD of a release that reveals nothing (loss 0 with probability 1)."""
        return cls(h, 0, np.ones(1), 0.0, 0.0)

    @classmethod
    def randomized_response(cls, epsilon: float, delta: float = 0.0, *,
                            h: float = DEFAULT_H) -> PLD:
        """Dominating pair of EVERY (ε, δ)-DP mechanism (both neighbour orders).

        Kairouz, Oh, Viswanath, "The composition theorem for differential privacy", ICML 2015
        (IEEE Trans. Inf. Theory 63(6), 2017), Thm. 2.1/Cor. 2.3: any (ε, δ)-DP pair is a
        post-processing of P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q its mirror image.
        Its PLD: ∞ with mass δ, +ε with (1−δ)e^ε/(1+e^ε), −ε with (1−δ)/(1+e^ε).
        """
        if not (epsilon >= 0 and math.isfinite(epsilon)) or not 0 <= delta <= 1:
            raise ParameterError("randomized_response needs epsilon >= 0 finite, 0 <= delta <= 1")
        a = (1 - delta) / (1 + math.exp(-epsilon))
        b = (1 - delta) / (1 + math.exp(epsilon))
        return cls.point([(epsilon, a), (-epsilon, b)], h=h, inf_mass=delta)

    # ------------------------------------------------------------------ algebra
    @property
    def losses(self) -> NDArray[np.float64]:
        """The grid losses (start + i)·h, computed once per PLD (read-only)."""
        got = self.__dict__.get("_losses")
        if got is None:
            got = (self.start + np.arange(self.masses.size)) * self.h
            got.flags.writeable = False
            object.__setattr__(self, "_losses", got)
        return got

    def log_norms(self) -> NDArray[np.float64]:
        """:func:`.tilt.log_norms` of the masses, computed once per PLD (a ledger composes
        each new charge with the same state object: its norms are not recomputed)."""
        got = self.__dict__.get("_log_norms")
        if got is None:
            got = log_norms(self.masses, self.losses)
            object.__setattr__(self, "_log_norms", got)
        return got

    @property
    def total_mass(self) -> float:
        return math.fsum(self.masses.tolist()) + self.inf_mass

    def truncated(self, tail_hi: float = TAIL_HI, tail_lo: float = TAIL_LO,
                  error_aware: bool = False) -> PLD:
        """Move the top ``tail_hi`` of finite mass to +∞ and lift the bottom ``tail_lo``.

        ``error_aware``: never cut below the loss where the tracked error's charge for the
        moved mass, min_θ e^{−θL}‖e‖_θ (added to ``slack`` by :meth:`_moved`), exceeds
        ``tail_hi`` -- cutting early charged ~1e-15 per squaring that repeated squaring then
        doubled (500 discrete Gaussians: 9e-13 of slack).  Any cut is valid; this one keeps
        a few more entries.  Used by :meth:`self_compose` only: a ledger's states are
        composed by :meth:`compose` and must keep their stored content hashes."""
        m = np.maximum(self.masses, 0.0)
        if m.size <= 1:
            return PLD(self.h, self.start, m.copy(), self.inf_mass, self.slack, self.log_err)
        hi = m.size - 1 - _tail_count(m[::-1], tail_hi)  # keep 0..hi, send hi+1.. to ∞
        hi = max(0, hi)
        if error_aware:
            hi = max(hi, min(m.size - 1, self._error_cut(tail_hi)))
        lo = min(_tail_count(m, tail_lo), hi)             # Σ_{j<lo} m_j <= tail_lo
        return PLD(self.h, self.start, m, self.inf_mass, self.slack, self.log_err)._moved(lo, hi)

    def compose(self, other: PLD, *, error_aware_cut: bool = False) -> PLD:
        """The PLD of the product pair (upper bound; round-off tracked in ``log_err``).

        Small operands: direct convolution (sums of non-negative products, relative error
        <= 2·min(n_a, n_b)·u per entry, so ‖e‖_θ <= that times ‖a‖_θ‖b‖_θ).  Large ones:
        :func:`_spliced_convolution` (an untilted and a tilted FFT, :mod:`.tilt`).
        """
        if other.h != self.h:
            raise ParameterError(f"cannot compose PLDs on different grids ({self.h} vs {other.h})")
        if self.version == 1 and other.version == 1:
            from .pld_legacy import compose_v1

            return compose_v1(self, other)
        a, b = self.masses, other.masses
        if a.size + b.size - 1 > MAX_POINTS:  # a clear refusal, not minutes and then no memory
            raise ParameterError(
                f"this composition's privacy-loss distribution would hold "
                f"{a.size + b.size - 1:,} points of its grid h = 2^{math.log2(self.h):g} "
                f"(at most 2^{math.log2(MAX_POINTS):g}): too many releases for the 'pld' "
                "accountant -- use 'zcdp' or 'basic' for them, or fewer, larger releases")
        la, lb = self.losses, other.losses
        start = self.start + other.start
        norm_a, norm_b = self.log_norms(), other.log_norms()
        inf = 1.0 - (1.0 - self.inf_mass) * (1.0 - other.inf_mass)
        if min(a.size, b.size) <= 64:
            c = np.convolve(a, b)  # sums of non-negative products: no cancellation
            conv_err = math.log(2 * min(a.size, b.size) * U) + norm_a + norm_b
            noise = None
        else:
            c, conv_err, noise = _spliced_convolution(a, la, b, lb, start, self.h,
                                                      (norm_a, norm_b))
        err_a, err_b = self.errors, other.errors
        mass_a = float(a.sum()) + math.exp(min(700.0, float(err_a[0])))
        mass_b = float(b.sum()) + math.exp(min(700.0, float(err_b[0])))
        # the ideal entries lie in [0, total ideal mass]: clipping into it never adds error
        c = np.minimum(np.maximum(c, 0.0), max(1.0, mass_a * mass_b))
        log_err = compose_errors(err_a, norm_a, err_b, norm_b, conv_err)
        slack = self.slack * max(1.0, mass_b) + other.slack * max(1.0, mass_a)
        out = PLD(self.h, start, c, min(1.0, inf), slack, log_err)
        if noise is not None:
            out = out._drop_noise(noise, error_aware_cut)
        return out.truncated(error_aware=error_aware_cut)

    def _drop_noise(self, noise: NDArray[np.float64], error_aware: bool = False) -> PLD:
        """Entries at the round-off level (<= ``noise``, entry-wise) are noise, so that the
        tails can be truncated: those ABOVE the last larger entry go to +∞, those BELOW the
        first one are lifted onto it (both only raise H; lifting within the finite losses
        costs far less δ than +∞, which matters when a ledger composes one release at a
        time); interior ones stay.  The error bookkeeping of both moves: :mod:`.tilt`."""
        c = self.masses
        big = np.flatnonzero(c > noise)
        if big.size == 0:
            return PLD(self.h, self.start, np.zeros(1), min(1.0, self.inf_mass + float(c.sum())),
                       self.slack + self.flat_slack(), None)
        i0, i1 = int(big[0]), int(big[-1])
        if error_aware:  # as in truncated(): not below where the cut's charge is > TAIL_HI
            i1 = max(i1, min(c.size - 1, self._error_cut(TAIL_HI)))
        return self._moved(i0, i1)

    def _error_cut(self, tail: float) -> int:
        """The first index whose loss L has min_θ e^{−θL}‖e‖_θ <= ``tail`` (θ > 0)."""
        if self.log_err is None:
            return 0
        need = float(np.min((self.errors[1:] - math.log(tail)) / THETAS[1:]))
        return max(0, math.ceil(need / self.h) - self.start)

    def _moved(self, i0: int, i1: int, extra_inf: float = 0.0) -> PLD:
        """Keep entries i0..i1; lift those below onto i0, send those above to +∞."""
        c, err, h0 = self.masses, self.errors, self.start
        slack = self.slack
        inf = self.inf_mass + extra_inf
        if i1 + 1 < c.size:
            inf += float(c[i1 + 1:].sum())
            # the ideal PLD's moved mass differs by <= e^{−θ L_cut}‖e‖_θ: an additive δ
            slack += math.exp(min(700.0, float(np.min(err - THETAS * ((h0 + i1 + 1)
                                                                  * self.h)))))
        new = c[i0:i1 + 1].copy()
        if i0 > 0:
            new[0] += float(c[:i0].sum())
            # lifted error: |Σ_R e|·e^{θ L_0} <= ‖e‖_0 e^{θ L_0} (θ > 0; unchanged at θ = 0)
            lifted = err.copy()
            lifted[1:] = log_add(err[1:], err[0] + THETAS[1:] * ((h0 + i0) * self.h))
            err = lifted
        return PLD(self.h, self.start + i0, new, min(1.0, inf), slack,
                   err if np.any(np.isfinite(err)) else None)

    def self_compose(self, k: int) -> PLD:
        """k-fold composition by repeated squaring."""
        if k < 0 or int(k) != k:
            raise ParameterError(f"k must be an integer >= 0, got {k!r}")
        out, base, k = PLD.identity(self.h), self, int(k)
        while k:
            if k & 1:
                out = out.compose(base, error_aware_cut=True)
            k >>= 1
            if k:
                base = base.compose(base, error_aware_cut=True)
        return out

    def mixture(self, weight: float) -> PLD:
        """λ·(this PLD) + (1 − λ)·(loss +∞): the pair with a revealed coin (see additive.py)."""
        if not 0 <= weight <= 1:
            raise ParameterError("mixture weight must be in [0, 1]")
        err = None if self.log_err is None else self.errors + math.log(weight or 1e-300)
        return PLD(self.h, self.start, self.masses * weight,
                   min(1.0, 1.0 - weight * (1.0 - self.inf_mass)), self.slack * weight, err)

    @staticmethod
    def envelope(plds: Sequence[PLD]) -> PLD:
        """One PLD dominating all given ones: the upper envelope of their loss tails.

        Proof.  Let T_k(t) = P_k(L > t) (∞ included).  T(t) = max_k T_k(t) is non-increasing,
        right-continuous and T(−∞) = max_k mass_k, so it is the tail of a (sub-)probability law
        ω that stochastically dominates every ω_k.  (1) is an expectation of a non-decreasing
        function of L, hence H_ω >= H_{ω_k} for every ε; and E_ω[e^{−L}] <= E_{ω_k}[e^{−L}] <= 1,
        so ω is itself a valid PLD (of the pair (ω, e^{−L}ω + rest)).  Looser than the
        convex-hull (connect-the-dots) envelope of Zhu, Dong and Wang (AISTATS 2022) when the
        curves cross, but needs no differencing of nearly equal numbers.
        """
        if not plds:
            raise ParameterError("envelope of no PLDs")
        h = plds[0].h
        if any(p.h != h for p in plds):
            raise ParameterError("envelope needs PLDs on one grid")
        lo = min(p.start for p in plds)
        hi = max(p.start + p.masses.size for p in plds)
        tails = np.zeros(hi - lo + 1)
        inf = max(p.inf_mass for p in plds)
        for p in plds:
            full = np.zeros(hi - lo + 1)
            full[p.start - lo:p.start - lo + p.masses.size] = p.masses
            t = np.cumsum(full[::-1])[::-1] + p.inf_mass  # P(L >= loss_i)
            np.maximum(tails, t, out=tails)
        masses = np.maximum(tails[:-1] - tails[1:], 0.0)
        # re-establish tail domination exactly against float differencing
        got = np.cumsum(masses[::-1])[::-1] + inf
        deficit = float(np.max(tails[:-1] - got))
        # the operands' tracked errors as additive δ (θ = 0 bound), then the float deficit
        slack = max(p.slack + p.flat_slack() for p in plds) + max(0.0, deficit)
        return PLD(h, lo, masses, min(1.0, inf), slack).truncated()

    # ------------------------------------------------------------------ queries
    def _tails(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(losses, A_i = Σ_{j>i} ω_j, C_i = Σ_{j>i} ω_j e^{L_i − L_j}) for every grid loss."""
        m = self.masses
        L = self.losses
        A = np.concatenate([np.cumsum(m[::-1])[::-1][1:], [0.0]])
        # C_i = Σ_{j>i} m_j e^{-(j-i)h} = y_{i+1} of the discounted suffix sums
        C = np.zeros_like(m)
        if m.size > 1:
            C[:-1] = _discounted_suffix(m, self.h)[1:]
        return L, A, C

    def delta(self, epsilon: float) -> float:
        """δ(ε) = sup_E P(E) − e^ε Q(E) of the dominating pair: an upper bound."""
        if math.isnan(epsilon):
            raise ParameterError("epsilon must not be NaN")
        m, L = self.masses, self.losses
        above = epsilon < L
        if not np.any(above):
            core = 0.0
        else:
            w = -np.expm1(epsilon - L[above])
            core = math.fsum((m[above] * w).tolist())
        err = 8 * U * core + 1e-300
        return min(1.0, core + self.inf_mass + self.slack + err
                   + delta_term(self.errors, epsilon))

    def epsilon(self, delta: float) -> float:
        """Smallest ε with δ(ε) <= ``delta`` (exact for the discrete law, rounded up), or inf.

        The tracked error's δ term g(ε) (:func:`.tilt.delta_term`) decreases in ε: with ε_0
        the answer without it (a lower bound of the answer), the ε solving the budget less
        g(ε_0) is valid (g(ε) <= g(ε_0) there)."""
        if not 0 <= delta <= 1:
            raise ParameterError(f"delta must be in [0, 1], got {delta!r}")
        budget = delta - self.inf_mass - self.slack - 1e-300
        eps0 = self._invert(budget)
        if not math.isfinite(eps0) or self.log_err is None:
            return eps0
        return self._invert(budget - delta_term(self.errors, eps0))

    def _invert(self, budget: float) -> float:
        """Smallest ε >= 0 with (finite part of δ)(ε) <= ``budget``, rounded up.

        The tail sums A_i, C_i are sums of at most n non-negative terms, each computed with
        relative error <= (n + 2)u (Higham 2002, eq. (4.4); :func:`_discounted_suffix`), so
        D_i = A_i − C_i is off by at most 4(n + 2)u·(A_i + C_i): a relative bound, which
        keeps ε(δ) exact down to the smallest δ (an absolute n·u bound would be ~1e-10).
        """
        if budget <= 0:
            return math.inf
        m = self.masses
        L, A, C = self._tails()
        rel = 4 * (m.size + 2) * U
        # δ at grid loss L_i (mass at L_i itself has weight 0): D_i = A_i − C_i
        D = A - C + rel * (A + C)
        ok = np.flatnonzero(budget >= D)
        if ok.size == 0:
            return math.inf
        i = int(ok[0])
        if i == 0:
            # below the lowest loss δ(ε) = A_{-1} − e^ε B with all masses: solve for ε <= L_0
            A0 = float(m.sum()) * (1 + rel)
            B0 = float((m * np.exp(-(L - L[0]))).sum()) * (1 - rel)  # = B·e^{L_0}
            if budget >= A0:
                return 0.0
            eps = L[0] + math.log((A0 - budget) / B0)
        else:
            # on (L_{i-1}, L_i]: δ(ε) = A_{i-1} − e^{ε − L_{i−1}} C'_{i−1}, C' incl. ω_i..
            Ai = float(A[i - 1]) * (1 + rel)
            Ci = float(C[i - 1]) * (1 - rel)  # = Σ_{j>i−1} ω_j e^{L_{i−1} − L_j}
            if Ci <= 0:
                eps = float(L[i])
            else:
                eps = float(L[i - 1]) + math.log(max(Ai - budget, 1e-300) / Ci)
                eps = min(max(eps, float(L[i - 1])), float(L[i]))
        eps = eps + 1e-12 * (1 + abs(eps))
        return max(0.0, eps)

    # ------------------------------------------------------------------ serialisation
    def to_bytes(self) -> bytes:
        fields: dict[str, object] = {
            "h": self.h.hex(), "start": self.start, "n": int(self.masses.size),
            "inf": float(self.inf_mass).hex(), "slack": float(self.slack).hex()}
        if self.version != 1:  # absent in PLDs of the first format
            fields["v"] = self.version
        if self.log_err is not None:  # absent in PLDs written before the tilted errors
            fields["err"] = [float(x).hex() for x in self.errors]
        head = json.dumps(fields, sort_keys=True).encode()
        return (_MAGIC + struct.pack("<I", len(head)) + head
                + np.ascontiguousarray(self.masses, dtype="<f8").tobytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> PLD:
        if not data.startswith(_MAGIC):
            raise ParameterError("not a serialised PLD")
        off = len(_MAGIC)
        (n_head,) = struct.unpack_from("<I", data, off)
        off += 4
        head = json.loads(data[off:off + n_head])
        off += n_head
        masses = np.frombuffer(data, dtype="<f8", count=int(head["n"]), offset=off).astype(
            np.float64)
        if off + 8 * masses.size != len(data):
            raise ParameterError("serialised PLD has trailing or missing bytes")
        err = head.get("err")
        if err is not None and len(err) != THETAS.size:
            raise ParameterError("serialised PLD has an error vector of the wrong length")
        return cls(float.fromhex(head["h"]), int(head["start"]), masses,
                   float.fromhex(head["inf"]), float.fromhex(head["slack"]),
                   None if err is None else np.array([float.fromhex(x) for x in err]),
                   int(head.get("v", 1)))

    def content_hash(self) -> str:
        return hashlib.sha256(self.to_bytes()).hexdigest()

    def __repr__(self) -> str:
        return (f"PLD(h={self.h:g}, losses=[{self.start * self.h:.4g}, "
                f"{(self.start + self.masses.size - 1) * self.h:.4g}], n={self.masses.size}, "
                f"inf_mass={self.inf_mass:.3g}, slack={self.slack:.3g}, "
                f"err={self.flat_slack():.3g})")
