"""Exponentially tilted error bounds for composed PLDs: accuracy down to δ = 1e-12.

Why.  A composed PLD is computed by FFT; the round-off bound of an FFT convolution is an
ℓ1 bound relative to the operands' total mass (Higham 2002, Thm. 24.2; :mod:`.pld`), about
1e-12 to 1e-9 for PLDs of 1e5 to 1e6 grid points.  Charged as an additive δ it swamps any
target δ below ~1e-9, and the tail masses it cannot resolve (entries below the round-off
level) were moved to +∞, where they cost δ too.

What.  Exponential tilting commutes with convolution:
(a·e^{θL}) * (b·e^{θL}) = (a * b)·e^{θL} (the exponents of a sum of losses add).  Convolving
the *tilted* masses ã_i = a_i e^{θL_i} makes the upper tail (large L, where δ(ε) is decided at
small δ) the bulk of the tilted arrays, so the FFT resolves it to relative precision; the
result is untilted afterwards.  Its error is an ℓ1 bound in the θ-weighted norm

    ‖e‖_θ = Σ_i |e_i| e^{θL_i},

and such a bound costs δ only e^{−θε} times it:  for x = L − ε > 0,
1 − e^{−x} <= c_θ e^{θx} with c_θ = max_{x>0} (1 − e^{−x})e^{−θx} = (θ/(1 + θ))^θ/(1 + θ)
(the maximum is at e^{−x} = θ/(1 + θ)), so

    Σ_{L_i > ε} |e_i| (1 − e^{ε − L_i}) <= c_θ e^{−θε} ‖e‖_θ                            (T1)

for every real ε and every θ >= 0 (c_0 = 1: the plain ℓ1 bound).

Bookkeeping.  A :class:`~.pld.PLD` carries ``log_err[k]`` = ln of a bound on ‖ω − ω̃‖_{θ_k}
for every θ_k of :data:`THETAS`, where ω̃ is the stored (computed) PLD and ω >= 0 an ideal
PLD that dominates the pair (the exact convolution of the ideal operands).  Composition:
ω_A * ω_B − ω̃_A * ω̃_B = e_A * ω̃_B + ω̃_A * e_B + e_A * e_B + (exact − computed
convolution), and the θ-norm is multiplicative on convolutions of non-negative arrays
(‖x * y‖_θ <= ‖x‖_θ ‖y‖_θ), so

    ‖e‖_θ <= ‖e_A‖_θ ‖ω̃_B‖_θ + ‖ω̃_A‖_θ ‖e_B‖_θ + ‖e_A‖_θ ‖e_B‖_θ + E_θ(conv).        (T2)

The PLD's δ(ε) adds min_k c_{θ_k} e^{−θ_k ε} ‖e‖_{θ_k} by (T1).  Moving mass (the same
region R of ω and of ω̃) up to a loss L' changes the error by at most
|Σ_R e| e^{θL'} <= ‖e‖_0 e^{θL'}; moving it to +∞ changes only the +∞ masses, by
|Σ_R e| <= e^{−θ min_R L}‖e‖_θ, an additive δ (``slack``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

U = 2.0**-53
#: the tilts at which the error of every PLD is tracked (θ = 0: the plain ℓ1 bound)
THETAS = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0])
#: c_θ of (T1)
C_THETA = np.array([1.0] + [(t / (1 + t)) ** t / (1 + t) for t in THETAS[1:]])
NO_ERROR = np.full(THETAS.size, -np.inf)
#: the tilt of the tilted convolution: about z standard deviations of the composed loss,
#: z = 7 (δ ~ 1e-12 for a Gaussian PLD), within [MIN_TILT, MAX_TILT]
TILT_Z, MIN_TILT, MAX_TILT = 7.0, 0.25, 16.0
BIN = 256  # grid points per bin in :func:`log_norms`


def log_norms(masses: NDArray[np.float64], losses: NDArray[np.float64]) -> NDArray[np.float64]:
    """ln ‖masses‖_θ at every θ of :data:`THETAS`, rounded up (−inf for a zero array).

    Upper bounds suffice (they only enter error bounds), so the masses are summed in bins of
    :data:`BIN` consecutive grid points, each bin at its largest loss (one exponential per
    bin and tilt), and the result is padded for the float error of the sums and logs.
    """
    m = np.maximum(masses, 0.0)
    nb = -(-m.size // BIN)
    sums = np.zeros(nb * BIN)
    sums[:m.size] = m
    sums = sums.reshape(nb, BIN).sum(axis=1)
    top_l = losses[np.minimum(np.arange(nb) * BIN + BIN - 1, m.size - 1)]
    pos = sums > 0
    if not np.any(pos):
        return NO_ERROR.copy()
    expo = np.log(sums[pos])[None, :] + THETAS[:, None] * top_l[pos][None, :]
    top = expo.max(axis=1)
    s = np.exp(expo - top[:, None]).sum(axis=1)
    pad = (m.size + 8 + np.abs(expo).max(axis=1) + np.abs(top)) * 4 * U
    return top + np.log(s) + np.log1p(pad)


def log_add(*terms: NDArray[np.float64]) -> NDArray[np.float64]:
    """ln Σ e^{t} of log-bounds, element-wise, rounded up (−inf terms are zero)."""
    out = terms[0]
    for t in terms[1:]:
        out = np.logaddexp(out, t)
    fin = np.isfinite(out)
    out = out.copy()
    out[fin] += 1e-15 * (1 + np.abs(out[fin]))
    return out


def compose_errors(err_a: NDArray[np.float64], norm_a: NDArray[np.float64],
                   err_b: NDArray[np.float64], norm_b: NDArray[np.float64],
                   conv: NDArray[np.float64]) -> NDArray[np.float64]:
    """(T2) in logs: the error bound of a composition from its operands' and the
    convolution's own (``conv``)."""
    return log_add(err_a + norm_b, norm_a + err_b, err_a + err_b, conv)


def delta_term(log_err: NDArray[np.float64], epsilon: float) -> float:
    """min_k c_θk e^{−θ_k ε} ‖e‖_θk: the additive δ of the tracked error at ε, by (T1)."""
    if not np.any(np.isfinite(log_err)):
        return 0.0
    val = np.log(C_THETA) + log_err - THETAS * float(epsilon)
    return float(math.exp(min(700.0, float(np.min(val))))) * (1 + 1e-12)


def _moments(m: NDArray[np.float64], L: NDArray[np.float64]) -> tuple[float, float]:
    """Mean and variance of the (normalised) finite part, on bins of :data:`BIN` points."""
    nb = -(-m.size // BIN)
    pad = np.zeros(nb * BIN)
    pad[:m.size] = m
    w = pad.reshape(nb, BIN).sum(axis=1)
    step = float(L[1] - L[0]) if L.size > 1 else 0.0
    x = float(L[0]) + (np.arange(nb) * BIN + BIN / 2) * step
    tot = float(w.sum())
    if tot <= 0:
        return 0.0, 0.0
    mu = float(w @ x) / tot
    return mu, float(w @ (x - mu) ** 2) / tot


def choose_tilt(a: NDArray[np.float64], la: NDArray[np.float64], b: NDArray[np.float64],
                lb: NDArray[np.float64], norm_a: NDArray[np.float64],
                norm_b: NDArray[np.float64], log_rel: float) -> float:
    """The tilt θ1 of the tilted convolution (any θ1 > 0 is valid; this only makes the
    bound small where it matters).

    The error at δ ≈ 1e-12 is decided near ε* ≈ mean + TILT_Z·sd of the composed loss (a
    Gaussian approximation, on bins).  For each θ1 of :data:`THETAS` the spliced error is
    predicted from the operands' θ-norms (the tilted FFT's error ≈ e^{log_rel}‖ã‖‖b̃‖, as
    untilted) by :func:`split_errors`, and the θ1 whose prediction gives the smallest δ term
    min_θ c_θ e^{err_θ − θε*} is taken.  (θ1 = TILT_Z/sd alone fails for laws with far,
    light tails -- finite tables' edges -- whose large-θ norms they dominate.)"""
    mu_a, var_a = _moments(a, la)
    mu_b, var_b = _moments(b, lb)
    eps_star = mu_a + mu_b + TILT_Z * math.sqrt(max(var_a + var_b, 1e-30))
    log_e0 = log_rel + float(norm_a[0] + norm_b[0])
    l_max = float(la[-1] + lb[-1])
    best, best_val = MIN_TILT, math.inf
    for k in range(1, THETAS.size):
        t1 = float(THETAS[k])
        log_e1 = log_rel + float(norm_a[k] + norm_b[k])
        l_s = min(max((log_e1 - log_e0) / t1, float(la[0] + lb[0])), l_max)
        err = split_errors(log_e0, log_e1, t1, l_s, l_s, l_max)
        val = float(np.min(np.log(C_THETA) + err - THETAS * eps_star))
        if val < best_val:
            best, best_val = t1, val
    return best


def tilted(m: NDArray[np.float64], L: NDArray[np.float64],
           theta: float) -> tuple[NDArray[np.float64], float, float]:
    """(m·e^{θL − top}, top, r): the tilted array scaled to maximum 1, its log scale, and a
    bound r on the relative error of each entry (one log, one product, one exp)."""
    with np.errstate(divide="ignore"):
        expo = np.log(m) + theta * L
    top = float(np.max(expo))
    out = np.exp(expo - top)
    fin = np.isfinite(expo)
    r = 8 * U * (float(np.max(np.abs(expo[fin]))) + abs(top) + 2) if np.any(fin) else 0.0
    return out, top, r


def split_errors(log_e0: float, log_e1: float, theta1: float, l_below: float | None,
                 l_from: float | None, l_max: float) -> NDArray[np.float64]:
    """ln ‖e‖_θ at every θ of :data:`THETAS` for a result spliced from an untilted
    convolution (ℓ1 error e^{log_e0}, used at losses <= ``l_below``) and a θ1-tilted one
    (θ1-norm error e^{log_e1}, used at losses in [``l_from``, ``l_max``]):
    Σ_{L <= l_below} |e_i| e^{θL_i} <= e^{log_e0 + θ·l_below} (θ >= 0) and
    Σ_{L >= l_from} |e_i| e^{θL_i} = Σ |ẽ_i| e^{(θ − θ1)L_i} <= e^{log_e1} max(e^{(θ−θ1)l_from},
    e^{(θ − θ1)l_max})."""
    terms = []
    if l_below is not None:
        terms.append(log_e0 + THETAS * l_below)
    if l_from is not None:
        d = THETAS - theta1
        terms.append(log_e1 + np.maximum(d * l_from, d * l_max))
    if not terms:
        return NO_ERROR.copy()
    return log_add(*terms)
