"""Dominating PLDs built as envelopes over many pairs (e.g. the lattice staircase).

The lattice staircase is not log-concave, so the monotone-likelihood-ratio argument of
:mod:`dpnoise.laws.privacy_loss` fails (a shift s < S can be worse than S at some ε).  It is
charged the **convex-hull envelope** (:func:`hull_envelope_of_atoms`; Zhu, Dong and Wang,
AISTATS 2022) of the exact PLDs of a finite set of ordered pairs that provably contains, for
every neighbouring pair, one with the same PLD
(:func:`dpnoise.laws.privacy_loss.periodic_shift_atoms`, reported by the staircase's
privacy profile).  The envelope
dominates each of its inputs, hence every neighbouring pair.  (The tail envelope
:meth:`PLD.envelope` is also valid but mixes the tails of different shifts: for the staircase
it composed worse than the randomized-response fallback.)  RangeLaplace is NOT built here
(docs/accounting.md, "Not done").
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .pld import PLD, U
from .tilt import C_THETA, THETAS

_CACHE: OrderedDict[Hashable, Any] = OrderedDict()
_CACHE_SIZE = 64


def cached(key: Hashable, build: Callable[[], Any]) -> Any:
    """A small LRU cache keyed by PUBLIC parameters only (the PLDs never depend on data)."""
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    value = build()
    _CACHE[key] = value
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return value


def _rounded_atoms(rows: list[tuple[NDArray[np.float64], NDArray[np.float64]]], h: float
                   ) -> tuple[list[NDArray[np.int64]], list[NDArray[np.float64]], list[float]]:
    """Per pair: its finite loss atoms rounded UP to the grid h·ℤ (after adding the float
    error bound 4u|L|), their masses, and its infinite-loss mass."""
    idx_rows, mass_rows, infs = [], [], []
    for losses, masses in rows:
        L = np.asarray(losses, dtype=np.float64)
        p = np.asarray(masses, dtype=np.float64)
        inf = np.isposinf(L)
        infs.append(float(p[inf].sum()))
        keep = ~inf & (p > 0)
        idx_rows.append(np.ceil((L[keep] + 4 * U * np.abs(L[keep])) / h).astype(np.int64))
        mass_rows.append(p[keep])
    return idx_rows, mass_rows, infs


def envelope_of_atoms(rows: list[tuple[NDArray[np.float64], NDArray[np.float64]]],
                      h: float) -> PLD:
    """Tail envelope of the PLDs given by (losses, masses) per pair (+inf losses allowed).

    Each loss is rounded UP to the grid h·ℤ after adding its float-error bound (the caller
    includes that bound in the losses it passes).  Returns a PLD whose tail is >= every
    pair's tail at every grid point, i.e. one that dominates each pair (:meth:`PLD.envelope`).
    """
    idx_rows, mass_rows, infs = _rounded_atoms(rows, h)
    allidx = np.unique(np.concatenate(idx_rows)) if idx_rows else np.zeros(0, np.int64)
    inf = max(infs) if infs else 0.0
    if allidx.size == 0:
        return PLD(h, 0, np.zeros(1), min(1.0, inf), 0.0)
    n = allidx.size
    tails = np.zeros(n + 1)
    for idx, p, pinf in zip(idx_rows, mass_rows, infs, strict=True):
        col = np.searchsorted(allidx, idx)
        dens = np.bincount(col, weights=p, minlength=n)
        t = np.concatenate([np.cumsum(dens[::-1])[::-1], [0.0]]) + pinf  # P(L >= allidx[i])
        np.maximum(tails, t, out=tails)
    tails[n] = max(tails[n], inf)
    at = np.maximum(tails[:-1] - tails[1:], 0.0)
    got = np.cumsum(at[::-1])[::-1] + inf
    deficit = max(0.0, float(np.max(tails[:-1] - got)))
    lo = int(allidx[0])
    masses = np.zeros(int(allidx[-1]) - lo + 1)
    masses[allidx - lo] = at
    return PLD(h, lo, masses, min(1.0, inf), deficit + 4 * n * U).truncated()


def hull_envelope_of_atoms(rows: list[tuple[NDArray[np.float64], NDArray[np.float64]]],
                           h: float) -> PLD:
    """The convex-hull ("connect the dots") envelope of Zhu, Dong and Wang (AISTATS 2022).

    Each pair's loss atoms are rounded UP to the grid (a valid PLD of a pair dominating it).
    Let u_0 < ... < u_n be the union of the grid points, x_i = e^{u_i h}.  Each pair's
    hockey-stick curve H_k is convex and non-increasing in x = e^ε and affine in x between
    consecutive atoms of its own, so between consecutive u_i.  H*(x) := the piecewise-linear
    interpolation in x of max_k H_k(x_i) (affine from H*(0) = 1 below x_0, H* = max_k ω_∞,k
    above x_n) is >= every H_k: at the x_i by definition, and in between because each H_k
    is AFFINE between x_i and x_{i+1}, below x_0 (from its value 1 at x = 0 to its value at
    x_0) and above x_n, and so is H*.  The
    sequence max_k H_k(x_i) is convex in x (a maximum of convex functions), so H* is convex,
    non-increasing, H*(0) = 1: it is the privacy profile of the PLD with atoms
    ω_i = e^{u_i h}(s_{i−1} − s_i) at u_i (s_i the slope of H* on (x_i, x_{i+1}), s_n = 0,
    s_{−1} = (H*(x_0) − 1)/x_0) and ω_∞ = max_k ω_∞,k; Σω_i e^{−u_i h} = −s_{−1} <= 1.  It
    dominates every pair and is never looser than the tail envelope.  The masses are
    recovered by differencing slopes, so the profile of the result is recomputed at every
    u_i and any shortfall against max_k H_k (plus an ℓ1 bound of the evaluation round-off)
    is added to ``slack``.
    """
    return hull_envelope_of_grid(*_rounded_atoms(rows, h), h)


def hull_envelope_of_grid(idx_rows: list[NDArray[np.int64]], mass_rows: list[NDArray[np.float64]],
                          infs: list[float], h: float,
                          log_errs: list[NDArray[np.float64]] | None = None) -> PLD:
    """:func:`hull_envelope_of_atoms` of PLDs already on the grid: per pair, its atoms' grid
    indices (loss = index·h), their masses, and its +∞ mass (no rounding: exact indices).

    ``log_errs``: per pair, the tracked error of a computed PLD (:mod:`.tilt`): its true
    profile is below H_k + G_k, G_k(ε) = min_θ c_θ e^{err_θ − θε}, a non-increasing
    function.  The hull is then taken of V_i = max_k H_k(u_i) + G_k(u_{i−1}) (G at the
    previous union point; the constant θ = 0 bound before the first): on (x_{i−1}, x_i]
    H_k is affine and G_k <= G_k(u_{i−1}), so H_k + G_k lies below the chord of V.

    Float error: the profiles are sums of at most n non-negative terms A_i and e^{u_i h}B_i,
    so each is off by at most 4(n + 2)u(A_i + e^{u_i h}B_i).  Any shortfall of the hull's
    recomputed profile against V (plus those bounds) is covered by scaling the masses by
    1 + κ (κ the largest relative shortfall): a relative, not an additive, δ.
    """
    inf = max(infs) if infs else 0.0
    u = np.unique(np.concatenate(idx_rows)) if idx_rows else np.zeros(0, np.int64)
    if u.size == 0:
        return PLD(h, 0, np.zeros(1), min(1.0, inf), 0.0)
    mid = 0.5 * (float(u[0]) + float(u[-1]))
    sc = (u.astype(np.float64) - mid) * h  # |sc| <= half the loss range
    if float(np.max(np.abs(sc))) > 300:  # exponents too wide for the direct sums
        flat = 0.0 if log_errs is None else max(math.exp(min(700.0, float(e[0])))
                                                  for e in log_errs)
        env = envelope_of_atoms([(idx.astype(np.float64) * h, m) for idx, m in
                                 zip(idx_rows, mass_rows, strict=True)], h)
        return PLD(env.h, env.start, env.masses, env.inf_mass, env.slack + flat)

    def profile(dens: NDArray[np.float64], pinf: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """H(u_i h) = Σ_{j>i} d_j (1 − e^{(u_i − u_j)h}) + ω_∞ at every union point, and
        the magnitude A_i + e^{u_i h}B_i of its two sums."""
        A = np.concatenate([np.cumsum(dens[::-1])[::-1][1:], [0.0]])
        w = dens * np.exp(-sc)
        Bs = np.exp(sc) * np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]])
        return np.maximum(A - Bs, 0.0) + pinf, A + Bs

    n = u.size
    V = np.zeros(n)
    mag = np.zeros(n)
    loss = u.astype(np.float64) * h
    for k, (idx, p, pinf) in enumerate(zip(idx_rows, mass_rows, infs, strict=True)):
        dens = np.bincount(np.searchsorted(u, idx), weights=p, minlength=n)
        Hk, mk = profile(dens, pinf)
        if log_errs is not None:
            err = np.asarray(log_errs[k])
            g = np.empty(n)
            g[0] = math.exp(min(700.0, float(err[0])))
            if n > 1:
                g[1:] = np.exp(np.minimum(np.min(np.log(C_THETA)[None, :] + err[None, :]
                                                 - THETAS[None, :] * loss[:-1, None],
                                                 axis=1), 700.0))
            Hk = Hk + g
        np.maximum(V, Hk, out=V)
        np.maximum(mag, mk, out=mag)
    x = np.exp(sc)  # x_i scaled by e^{−mid·h}; slopes and masses scale consistently
    x0 = x[0]
    # H(−∞) = the total mass: 1, or above 1 for pointwise-close inflations (:mod:`.pld`)
    total = max([1.0] + [math.fsum(p.tolist()) + pi for p, pi in zip(mass_rows, infs,
                                                                     strict=True)])
    if log_errs is not None:
        total += max(math.exp(min(700.0, float(e[0]))) for e in log_errs)
    slopes = np.empty(n + 1)  # slopes[0]: below x_0; slopes[i+1]: on (x_i, x_{i+1})
    slopes[0] = (V[0] - total) / x0
    slopes[1:n] = np.diff(V) / np.diff(x)
    slopes[n] = 0.0
    omega = np.maximum(x * (slopes[1:] - slopes[:-1]), 0.0)
    got, gmag = profile(omega, inf)
    need = V - got + 4 * (n + 2) * U * (mag + gmag) + 1e-300
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(got > inf, need / (got - inf), np.inf)
    rel = ratio <= 1e-6  # relative shortfalls: scale; the others (far tails): additive
    kappa = max(0.0, float(np.max(ratio[rel]))) if np.any(rel) else 0.0
    flat = max(0.0, float(np.max(need[~rel]))) if np.any(~rel) else 0.0
    deficit = flat + max(0.0, total - math.fsum(omega.tolist()) * (1 + kappa) - inf)
    lo = int(u[0])
    masses = np.zeros(int(u[-1]) - lo + 1)
    masses[u - lo] = omega * (1 + kappa)
    return PLD(h, lo, masses, min(1.0, inf), deficit).truncated()


def periodic_additive_envelope(logpmf: Callable[[NDArray[np.int64]], NDArray[np.float64]],
                               period: int, max_shift: int, h: float,
                               symmetric: bool = True) -> tuple[PLD, int]:
    """Dominating PLD of an additive lattice law with geometric tails of period ``period``
    over every shift 1..``max_shift`` (both signs): the convex-hull envelope of the exact
    PLDs at the critical shifts (:func:`dpnoise.laws.privacy_loss.periodic_shift_atoms`,
    proof there).  Returns (PLD, number of shifts enveloped)."""
    from ..laws.privacy_loss import periodic_shift_atoms

    rows = periodic_shift_atoms(logpmf, period, max_shift, symmetric)
    return hull_envelope_of_atoms([(r.losses + r.error, r.probs) for r in rows], h), len(rows)
