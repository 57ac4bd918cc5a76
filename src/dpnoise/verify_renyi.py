"""Independent Rényi divergences of a privacy model: what a reported Rényi curve or ρ must
not be below.

For a mechanism's output law (its ``privacy_model()``, the same models :func:`dpnoise.verify`
checks; the claim and the privacy profile are never read) this computes, at each order α,

    D_α = max over the model's neighbouring pairs (both orders) of
          1/(α − 1) · ln Σ_y p(y)^α q(y)^(1 − α)

(Rényi, "On measures of entropy and information", 1961; Mironov, "Rényi differential
privacy", CSF 2017, Def. 3), from the pmfs themselves: +∞ as soon as an output is possible
under p (with probability above 2^-1000) but not under q (a finite-support law shifted),
else a log-sum-exp over the outputs evaluated that both laws can produce.  Over a window of
an infinite support the sum is partial, so the value is a LOWER bound on the divergence: a
reported curve below it is certainly wrong, which is what the tests use it for.  Large
shifts are sampled (1, 2, S/4, S/2, 3S/4, S−1, S), again giving a lower bound on the
maximum.

Like :mod:`dpnoise.verify` it imports only the ground floor (never a mechanism, law or
sampler); the model types are read from :mod:`dpnoise.verify`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import ParameterError

#: outputs below this probability (2^-1000) under p are the edge of a window cut from an
#: infinite support (no sampler of 64-bit tables produces them), not evidence of a finite
#: support: they are dropped from the sum, which keeps it a lower bound
LOG_TINY = -1000 * math.log(2.0)


def pair_renyi(logp: NDArray[np.float64], logq: NDArray[np.float64],
               alphas: NDArray[np.float64]) -> NDArray[np.float64]:
    """D_α(P ‖ Q) at every α of two aligned discrete laws (+∞ if P is not ≪ Q)."""
    fp, fq = np.isfinite(logp), np.isfinite(logq)
    if np.any(fp & ~fq & (logp > LOG_TINY)):
        return np.full(alphas.size, math.inf)
    both = fp & fq  # dropping outputs only lowers the sum: still a lower bound
    lp, lq = logp[both], logq[both]
    if lp.size == 0:
        return np.zeros(alphas.size)
    terms = alphas[:, None] * lp[None, :] + (1 - alphas[:, None]) * lq[None, :]
    top = terms.max(axis=1)
    log_sum = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))
    return np.maximum(log_sum / (alphas - 1), 0.0)


def _shifts(S: int) -> list[int]:
    return list(range(1, S + 1)) if S <= 16 else sorted(
        {1, 2, S // 4, S // 2, (3 * S) // 4, S - 1, S})


def _lattice(lp: NDArray[np.float64], S: int, alphas: NDArray[np.float64]
             ) -> NDArray[np.float64]:
    out = np.zeros(alphas.size)
    for s in _shifts(S):
        p, q = lp[s:], lp[:-s]
        out = np.maximum(out, np.maximum(pair_renyi(p, q, alphas), pair_renyi(q, p, alphas)))
    return out


def _pairs(law: Any, pairs: Sequence[tuple[Any, Any]], alphas: NDArray[np.float64]
           ) -> NDArray[np.float64]:
    out = np.zeros(alphas.size)
    for a, b in pairs:
        ya, la = law(a)
        yb, lb = law(b)
        da = dict(zip(np.asarray(ya).tolist(), np.asarray(la, dtype=float).tolist(),
                      strict=True))
        db = dict(zip(np.asarray(yb).tolist(), np.asarray(lb, dtype=float).tolist(),
                      strict=True))
        keys = sorted(set(da) | set(db), key=repr)
        p = np.array([da.get(k, -math.inf) for k in keys])
        q = np.array([db.get(k, -math.inf) for k in keys])
        out = np.maximum(out, np.maximum(pair_renyi(p, q, alphas), pair_renyi(q, p, alphas)))
    return out


def renyi_divergence(mechanism_or_model: Any, alphas: Sequence[float]) -> NDArray[np.float64]:
    """The largest D_α over the model's neighbouring pairs at every α > 1 (a lower bound
    on the sampled law's Rényi divergence; see the module docstring).  Accepts a mechanism
    (its ``privacy_model()``) or a model; additive and finite lattices, discrete and
    lattice families.  ParameterError for a model kind it does not cover."""
    from .verify_models import (
        AdditiveLattice,
        DiscreteFamily,
        FiniteLattice,
        LatticeFamily,
        pairs_from_inputs,
    )

    a = np.asarray(alphas, dtype=np.float64)
    if a.ndim != 1 or np.any(~(a > 1)):
        raise ParameterError("alphas must be a list of orders > 1")
    model = mechanism_or_model
    if hasattr(model, "privacy_model"):
        model = model.privacy_model()
    if isinstance(model, AdditiveLattice):
        S = int(model.max_shift)
        W = model.window or (3 * (model.period or 0) + 2 * S + 16)
        return _lattice(np.asarray(model.logpmf(np.arange(-W, W + 1)), dtype=np.float64),
                        S, a)
    if isinstance(model, FiniteLattice):
        S = int(model.max_shift)
        z = np.arange(int(model.lo) - S, int(model.hi) + S + 1, dtype=np.int64)
        return _lattice(np.asarray(model.logpmf(z), dtype=np.float64), S, a)
    if isinstance(model, DiscreteFamily):
        pairs = list(model.pairs) if model.pairs is not None else pairs_from_inputs(
            model.inputs, model.sensitivity)
        return _pairs(model.law, pairs, a)
    if isinstance(model, LatticeFamily):
        out = np.zeros(a.size)
        for x, y in model.pairs:
            win = model.window(x, y)
            ranges = [win] if isinstance(win[0], (int, np.integer)) else list(win)
            j = np.concatenate([np.arange(int(lo), int(hi) + 1) for lo, hi in ranges])
            lp = np.asarray(model.logpmf(j, x), dtype=np.float64)
            lq = np.asarray(model.logpmf(j, y), dtype=np.float64)
            out = np.maximum(out, np.maximum(pair_renyi(lp, lq, a), pair_renyi(lq, lp, a)))
        return out
    raise ParameterError(f"no Renyi divergence for a {type(model).__name__} model")
