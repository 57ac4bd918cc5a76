"""Gaussian baselines: classic and analytic (Balle & Wang 2018), exact on a grid.

Calibration
-----------
* Classic (Dwork & Roth, Thm A.1): σ = Δ·sqrt(2 ln(1.25/δ))/ε, proven only for ε < 1
  (ε >= 1 is a ParameterError).
* Analytic (Balle & Wang 2018, Thm 8): N(0, σ²) noise is (ε, δ)-DP iff

      δ >= δ_G(σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).

  δ_G decreases strictly from 1 to 0, so σ* is its unique root.  It is evaluated as
  ln δ_G = la + ln(−expm1(ε + lb − la)) with la, lb = log_ndtr(·): e^ε·Φ is
  never formed, so ε = 1000 and δ = 1e-300 work.  Root: Brent on s = ln(σ/Δ).

Release (finite-precision safe)
-------------------------------
A Gaussian has infinite support and irrational probabilities; dpnoise releases the
*discretised* Gaussian instead, and guarantees exactly what it samples:

1.  Grid L = 2^j with L <= min(Δ/1024, σ/64) where possible; the table below is capped
    at 2^17 entries, so for σ >> Δ the grid is coarser (S = ceil(Δ/L) cells per Δ).
2.  Noise Z ∈ {−T..T} cells with integer weights W_z ≈ 2^64·e^(−(zL)²/2σ²)/Σ (sum exactly
    2^64; T = 9.6σ/L, beyond which the ideal mass is < 2^-66), drawn with ONE random
    word by an exact alias table.  Output (c + Z)·L with c = floor(x/L + 1/2).
3.  The guarantee is computed from the table's exact weights: the hockey-stick
    δ(ε) = Σ_z (P(z) − e^ε P(z − s))_+ for s = S (both directions), which includes the
    truncation and quantisation (outputs reachable from one centre only count in full).
    σ is then adjusted so that this exact δ is <= the target δ (analytic: the smallest
    such σ up to ~1e-6 relative; classic: the classic σ, inflated by S·L/Δ when the
    grid does not divide Δ, and checked).
4.  Quantisation puts a floor of about S·2^-62 under the achievable δ, so δ < 1e-12 is a
    ParameterError here (use TruncatedLaplace or pure Laplace for smaller δ).

What is guaranteed: (ε, δ)-DP of the sampled pmf, verified by ``dpnoise.verify``.  What
is not: equality with the continuous Gaussian (the discrete law's δ_G at the same σ
agrees with the closed form to ~1e-9 relative when Δ/L is an integer; see tests).

References:
  * B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy:
    Analytical Calibration and Optimal Denoising", ICML 2018.
  * Q. Geng, W. Ding, R. Guo, S. Kumar, "Privacy and Utility Tradeoff in Approximate
    Differential Privacy", arXiv:1810.00877, 2018.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..exact.alias import AliasTable, exact_sum, largest_first
from ..exact.geometric import exact_inverse
from ..exact.scalar import OneWordKernel, grid_index
from ..float_sum import fsum_array
from ..grid import (
    check_representable,
    grid_sensitivity,
    power_of_two_at_most,
    round_half_up_inplace,
    to_index,
)
from ..kernels import MIN_VALUES
from ..laws.base import TableLaw
from ..laws.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian_delta
from ..laws.monotone_test import DecreasingTest
from ..params import (
    SENSITIVITY_RANGE,
    Interval,
    check_true_scalar,
    check_values,
    output_buffer,
    supported,
)
from ..randomness import RngLike, fill_words, resolve_rng
from .base import Guarantee, Mechanism, as_output, one_real

TAIL_SIGMAS = 9.6
TABLE_CAP = 1 << 17
MIN_DELTA = 1e-12
_CHUNK = 1 << 15


# ---------------------------------------------------------------- lattice table
def _grid_for(sigma: float, sensitivity: float) -> float:
    want = min(sensitivity / 1024.0, sigma / 64.0)
    grid = power_of_two_at_most(want)
    while 2 * math.ceil(TAIL_SIGMAS * sigma / grid) + 1 > TABLE_CAP:
        grid *= 2.0
    return grid


def _ideal_logpmf(sigma: float, grid: float) -> tuple[int, NDArray[np.float64]]:
    T = math.ceil(TAIL_SIGMAS * sigma / grid)
    z = np.arange(-T, T + 1, dtype=np.float64)
    lp = -0.5 * (z * grid / sigma) ** 2
    lp -= np.log(np.exp(lp).sum())
    return T, lp


def _hockey(logp: NDArray[np.float64], steps: int, epsilon: float, *,
            symmetric: bool = False, exact_sum: bool = True) -> float:
    """max over directions of Σ (P(z) − e^ε P(z − s))_+ on the finite support (s = steps).

    ``symmetric=True`` (for a ``logp`` that is exactly its own mirror image, as the ideal
    table is): the two directions' terms are the same multiset (mirror the index), so one
    direction is summed -- ``fsum`` is exactly rounded whatever the order, so the value is
    the same float.  ``exact_sum=False`` sums the positive terms pairwise (numpy; relative
    error < 1e-14) instead of ``fsum``: for the σ search only, which merely proposes σ --
    every guarantee is the exact ``fsum`` of the quantised table (:func:`_table_delta`)."""
    pad = np.full(steps, -np.inf)
    ext = np.concatenate([pad, logp, pad])
    p, q = ext[steps:], ext[:-steps]
    out = 0.0
    for a, b in ((p, q),) if symmetric else ((p, q), (q, p)):
        with np.errstate(invalid="ignore", over="ignore"):
            gap = b + epsilon
            gap -= a  # b + ε − a
            mask = np.isfinite(a) & (gap < 0)
            terms = a[mask]
            np.exp(terms, out=terms)
            tail = gap[mask]
            np.expm1(tail, out=tail)
            np.negative(tail, out=tail)
            terms *= tail  # exp(a)·(−expm1(gap)), the same operations in fewer arrays
        out = max(out, fsum_array(terms) if exact_sum else float(np.sum(terms)))
    return out


class _IdealDelta:
    """σ -> ``_hockey(_ideal_logpmf(σ, grid)[1], S, ε, symmetric=True, exact_sum=False)``,
    the σ search's test, computed with the same float operations in the same order (so the
    same float, bit for bit) but into buffers reused across the search: a fresh array of the
    table's size costs more in page faults than the arithmetic on it (~5x for 10^5 cells).
    """

    def __init__(self, grid: float, steps: int, epsilon: float) -> None:
        self.grid, self.steps, self.epsilon = grid, steps, epsilon
        self._top = -1  # the largest T the buffers hold

    def _buffers(self, T: int) -> None:
        top = max(T, int(self._top * 1.05) + 16)
        self._zg = np.arange(-top, top + 1, dtype=np.float64)
        self._zg *= self.grid  # z·L, exact
        self._lp, self._gap, self._e, self._tg = (
            np.empty(2 * top + 1, dtype=np.float64) for _ in range(4))
        self._top = top

    def logpmf(self, sigma: float) -> NDArray[np.float64]:
        """``_ideal_logpmf(σ, grid)[1]`` (the same operations), in the buffer (a view, valid
        until the next call)."""
        T = math.ceil(TAIL_SIGMAS * sigma / self.grid)
        n = 2 * T + 1
        if self._top < T:
            self._buffers(T)
        lp = self._lp[:n]
        np.divide(self._zg[self._top - T : self._top + T + 1], sigma, out=lp)  # z·L/σ
        np.square(lp, out=lp)
        np.multiply(lp, -0.5, out=lp)
        lp -= np.log(np.exp(lp, out=self._e[:n]).sum())  # the ideal log pmf
        return lp

    def __call__(self, sigma: float) -> float:
        T, s = math.ceil(TAIL_SIGMAS * sigma / self.grid), self.steps
        n = 2 * T + 1
        if not 0 < s < n:  # (never for a calibrated table) the plain functions
            return _hockey(_ideal_logpmf(sigma, self.grid)[1], s, self.epsilon,
                           symmetric=True, exact_sum=False)
        lp, gap = self.logpmf(sigma), self._gap[:n]
        # _hockey's one direction: terms exp(a)·(−expm1(b + ε − a)) where b + ε − a < 0,
        # a = lp[i], b = lp[i − S] (−inf for i < S: the term is exp(a)), in index order
        with np.errstate(invalid="ignore", over="ignore"):
            gap[:s] = -np.inf
            np.add(lp[: n - s], self.epsilon, out=gap[s:])
            np.subtract(gap[s:], lp[s:], out=gap[s:])
            mask = gap < 0
            k = int(np.count_nonzero(mask))
            ta, tg = self._e[:k], self._tg[:k]  # (the normaliser's exp is spent)
            np.compress(mask, lp, out=ta)
            np.compress(mask, gap, out=tg)
            np.exp(ta, out=ta)
            np.expm1(tg, out=tg)
            np.negative(tg, out=tg)
            np.multiply(ta, tg, out=ta)
            return max(0.0, float(np.sum(ta)))


def _quantise(logp: NDArray[np.float64]) -> list[int]:
    """Integer weights summing to exactly 2^64 (floor, then largest remainders).

    The float shares may sum to 2^64·(1 ± ~1e-15); a surplus is taken from the largest
    weight (a relative change < 1e-12 of it).  Whatever the rounding, the guarantee is
    computed from the resulting integers, not from ``logp``.
    """
    return _quantise_array(logp).tolist()


def _quantise_array(logp: NDArray[np.float64]) -> NDArray[np.uint64]:
    """:func:`_quantise` as uint64, without a Python loop (the same integers: the floors are
    integer-valued floats, exact in uint64 below 2^64, and their sum is taken exactly)."""
    scaled = np.add(logp, 64 * math.log(2.0))
    np.exp(scaled, out=scaled)  # = np.exp(logp + 64 ln 2), one array
    floors = np.floor(scaled)
    if not floors.max() < 2.0**64:  # pragma: no cover - a share of all the mass
        raise PrecisionError("weight quantisation overshot 2^64")
    w = floors.astype(np.uint64)
    rest = (1 << 64) - exact_sum(w)
    if rest < 0:
        top = int(np.argmax(floors))
        if int(w[top]) + rest <= 0:  # pragma: no cover - impossible for a normalised logp
            raise PrecisionError("weight quantisation overshot 2^64")
        w[top] = np.uint64(int(w[top]) + rest)
        return w
    base, extra = divmod(rest, len(w))
    if base:
        w += np.uint64(base)
    frac = np.subtract(scaled, floors, out=scaled)
    w[largest_first(frac, extra)] += np.uint64(1)  # the largest remainders
    return w


def _table_delta(weights: NDArray[np.uint64], S: int, epsilon: float) -> float:
    """Exact-as-float δ(ε) of the integer weights for a shift of S cells."""
    lp = weights.astype(np.float64)  # each correctly rounded, as float(int)
    with np.errstate(divide="ignore"):
        np.log(lp, out=lp)
    lp -= 64 * math.log(2.0)  # = np.log(w) − 64 ln 2, in one array
    return _hockey(lp, S, epsilon)


def _search_sigma(ideal: _IdealDelta, delta: float, sensitivity: float, sigma: float
                  ) -> float:
    """The smallest σ (bisection to 1e-8 relative) whose ideal lattice δ(ε) is <= δ(1 − 1e-7).

    The bisection's questions ideal(σ) > goal are answered from a few evaluations near the
    root where monotonicity decides them (the same answers, so the same σ)."""
    goal = delta * (1 - 1e-7)
    grid, S, epsilon = ideal.grid, ideal.steps, ideal.epsilon
    lo, hi = sigma * (1 - 1e-3), sigma * (S * grid / sensitivity) * (1 + 1e-3)
    test = DecreasingTest(ideal, goal)
    # the continuous Gaussian's root at the grid sensitivity S·L: within ~1e-8 of the
    # lattice law's for ε <= 5 (further for larger ε: then secant steps close in)
    test.locate(analytic_gaussian_sigma(epsilon, goal, S * grid))
    return bisect_above(test.above, lo, hi)


def bisect_above(above: Callable[[float], bool], lo: float, hi: float) -> float:
    """The smallest x (to 1e-8 relative, at most 40 halvings) with ``above(x)`` false, for a
    predicate true below some root and false above it: ``hi`` first grows by 1 % until
    false, then [lo, hi] is halved."""
    while above(hi):
        lo, hi = hi, hi * 1.01
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if above(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-8 * hi:
            break
    return hi


@lru_cache(maxsize=16)
def _calibrated_table(epsilon: float, delta: float, sensitivity: float, sigma: float,
                      search: bool) -> tuple[float, float, int, AliasTable, NDArray[np.uint64],
                                             float]:
    """(σ, grid, S, alias table, weights, exact δ) of the lattice Gaussian for public
    parameters: pick the grid, quantise, and make the exact δ(ε) <= δ (raising σ if
    needed).  Cached per process: a second mechanism with the same parameters reuses it."""
    grid = _grid_for(sigma, sensitivity)
    S = grid_sensitivity(sensitivity, grid)
    target = delta * (1 - 1e-9)
    ideal = _IdealDelta(grid, S, epsilon)  # its buffers serve the search and the table
    if search:  # smallest σ whose ideal discrete δ(ε) <= δ(1 − 1e-7)
        sigma = _search_sigma(ideal, delta, sensitivity, sigma)
    else:
        sigma *= S * grid / sensitivity
    for _ in range(60):
        warr = _quantise_array(ideal.logpmf(sigma))  # = _ideal_logpmf(sigma, grid)[1]
        exact = _table_delta(warr, S, epsilon)
        if exact <= target:
            break
        sigma *= 1 + 1e-6 if exact < 1.01 * target else 1.01
    else:
        raise ParameterError(
            f"delta={delta!r} cannot be met by the 64-bit discretised Gaussian "
            f"(exact delta {exact:.3g}); use delta >= {MIN_DELTA:g}")
    table = AliasTable(warr)
    sampled = table.exact_weights_array()  # the weights the table samples (= warr: reuse δ)
    warr.flags.writeable = False  # cached: shared by every mechanism with these parameters
    return (sigma, grid, S, table, warr,
            exact if np.array_equal(sampled, warr) else _table_delta(sampled, S, epsilon))


class LatticeGaussianNoise(TableLaw):
    """Exact law of the release (c + Z)·L, Z ∈ {−T..T} with weights W/2^64 (scipy-like).

    A :class:`~dpnoise.laws.base.TableLaw` on the 2T + 1 points; the mean is the centre c·L
    (the weights are symmetric).
    """

    def __init__(self, weights: Sequence[int], grid: float, center: float = 0.0) -> None:
        self.weights = weights
        self.T = (len(weights) - 1) // 2
        self.grid = grid
        self.center = center
        z = np.arange(2 * self.T + 1) - self.T
        super().__init__(center + z * grid, np.array([float(w) for w in weights]) / 2.0**64)

    def mean(self) -> float:
        return self.center


class _LatticeGaussian(Mechanism):
    """Shared release machinery: exact discretised Gaussian on a power-of-two grid."""

    epsilon: float
    delta: float
    sensitivity: float
    sigma: float
    grid: float
    _weight_array: NDArray[np.uint64]
    table: AliasTable
    exact_delta: float
    shift_steps: int
    kind: str = ""

    def _build(self, sigma: float, *, search: bool) -> None:
        """Pick the grid, quantise, and make the exact δ(ε) <= δ (raising σ if needed);
        cached per public parameters (:func:`_calibrated_table`)."""
        (self.sigma, self.grid, self.shift_steps, self.table, self._weight_array,
         self.exact_delta) = _calibrated_table(self.epsilon, self.delta, self.sensitivity,
                                               sigma, search)

    @cached_property
    def weights(self) -> tuple[int, ...]:
        """The table's integer weights W_{−T..T} (sum 2^64), as Python ints (built when
        first asked: a construction does not need 10^5 Python integers)."""
        return tuple(self._weight_array.tolist())

    def _exact_delta(self, weights: NDArray[np.uint64], S: int) -> float:
        return _table_delta(weights, S, self.epsilon)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon, delta=self.delta, notion="approximate",
            note=f"{self.kind}; exact discretised Gaussian (64-bit alias table, "
                 "truncation and quantisation counted in delta)",
            details={"sigma": self.sigma, "grid": self.grid, "shift_steps": self.shift_steps,
                     "support_cells": self._weight_array.size, "exact_delta": self.exact_delta},
        )

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        x = one_real(true_value)
        if x is not None and -self._scalar_limit < x < self._scalar_limit:
            return self._release_one(x, rng)
        values = check_values("true_value", true_value)
        flat = values.reshape(-1)
        if flat.size:  # refuse (as _alias_release would) before any random word is drawn
            check_representable(flat, self.grid)
        source = resolve_rng(rng)
        out = _alias_release(self.table, source, flat, self.grid,
                             (self._weight_array.size - 1) // 2)
        return as_output(out.reshape(values.shape), true_value)

    @cached_property
    def _scalar_limit(self) -> float:
        """2^51·L: one-value releases below it in magnitude take the scalar kernel."""
        return float(1 << 51) * self.grid

    @cached_property
    def _scalar_kernel(self) -> OneWordKernel:
        T = (self._weight_array.size - 1) // 2
        return OneWordKernel(self.table, [i - T for i in range(self.table.columns)])

    def _release_one(self, x: float, rng: RngLike) -> float:
        """(c + Z)·L for one finite x with |x| < 2^51·L: the same word, integers and law as
        :func:`_alias_release` (see :mod:`dpnoise.exact.scalar`)."""
        z = self._scalar_kernel.z(resolve_rng(rng))
        grid = self.grid
        return (grid_index(x / grid) + z) * grid  # integers below 2^52 times 2^j: exact

    def noise(self, true_value: float | None = None) -> LatticeGaussianNoise:
        if true_value is None:
            return LatticeGaussianNoise(self.weights, self.grid, 0.0)
        x = check_true_scalar("true_value", true_value)
        c = float(to_index(np.array([x]), self.grid)[0]) * self.grid
        return LatticeGaussianNoise(self.weights, self.grid, c)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Points j·L of the grid."""
        y = y.astype(np.float64, copy=False)
        with np.errstate(over="ignore"):
            v = y / self.grid
        return np.isfinite(y) & (np.floor(v) == v)

    def privacy_profile(self) -> Any:
        from .profiles import lattice_gaussian_profile

        return lattice_gaussian_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import FiniteLattice

        T = (self._weight_array.size - 1) // 2
        w = self.table.exact_weights_float()
        with np.errstate(divide="ignore"):
            lw = np.log(w) - 64 * math.log(2.0)

        def logpmf(z: NDArray[np.int64]) -> NDArray[np.float64]:
            inside = (z >= -T) & (z <= T)
            return np.where(inside, lw[np.clip(z + T, 0, 2 * T)], -np.inf)

        return FiniteLattice(logpmf=logpmf, max_shift=self.shift_steps, lo=-T, hi=T)

    def closed_form_delta(self) -> float:
        """δ_G of the continuous Gaussian with this σ at the grid sensitivity S·L.

        Returns
        -------
        float
            ``δ_G(σ)`` of the continuous Gaussian, for comparison with the exact lattice δ.
        """
        return gaussian_delta(self.sigma, self.epsilon, self.shift_steps * self.grid)


@lru_cache(maxsize=1)
def _gaussian_kernel() -> Any:
    """The compiled twin of the chunk body of :func:`_alias_release` (``kernels/gaussian.c``),
    or None (kernels off): raw pointers, no per-call array checks."""
    from .. import kernels

    vp, i64, f64, u64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_uint64
    return kernels.function("dpk_alias_release", [vp, i64, vp, vp, i64, u64, i64, vp, f64, f64,
                                                  vp], i64)


def _alias_release(table: AliasTable, rng: Any, centre: NDArray[np.float64], grid: float,
                   T: int) -> NDArray[np.float64]:
    """(c + Z)·L with Z = alias draw − T, one word per draw, chunked with fixed buffers."""
    n = centre.size
    out = output_buffer(n)  # before any word
    chunk = min(n, _CHUNK) if n else 1
    words = np.empty(chunk + 8, dtype=np.uint64)
    col = np.empty(chunk, dtype=np.uint64)
    low = np.empty(chunk, dtype=np.uint64)
    thr = np.empty(chunk, dtype=np.uint64)
    z = np.empty(chunk, dtype=np.int64)
    x = np.empty(chunk, dtype=np.float64)
    work = np.empty(chunk, dtype=np.float64)
    ci = np.empty(chunk, dtype=np.int64)
    shift = np.uint64(64 - table.bits)
    mask = np.uint64(table.mass - 1)
    bits = np.uint64(table.bits)
    one, top = np.uint64(1), np.uint64(63)
    # [column − T | alias(column) − T]: index = column + columns·(low >= thr[column])
    pick = np.concatenate([np.arange(table.columns, dtype=np.int64), table._alias]) - T
    kern = _gaussian_kernel() if n >= MIN_VALUES and exact_inverse(grid) else None
    if kern is not None:  # raw addresses for the compiled chunk body (same words, same Z)
        centre = np.ascontiguousarray(centre, dtype=np.float64)
        fixed = (words.ctypes.data, table._thr.ctypes.data, pick.ctypes.data, int(shift),
                 int(mask), table.columns)
    for start in range(0, n, chunk):
        c = min(chunk, n - start)
        fill_words(rng, words, c)
        if kern is not None and kern(
                fixed[0], c, *fixed[1:], centre.ctypes.data + 8 * start, 1.0 / grid, grid,
                out.ctypes.data + 8 * start) == 0:
            continue  # else a true value too large for the grid: the reference refuses it
        w, cl, lo, th, Z, X, C = words[:c], col[:c], low[:c], thr[:c], z[:c], x[:c], ci[:c]
        np.right_shift(w, shift, out=cl)
        np.bitwise_and(w, mask, out=lo)
        np.take(table._thr, cl.view(np.int64), out=th, mode="wrap")
        np.subtract(lo, th, out=lo)  # wraps (bit 63 set) iff low < thr: keep the column
        np.right_shift(lo, top, out=lo)
        np.bitwise_xor(lo, one, out=lo)
        np.left_shift(lo, bits, out=lo)
        np.bitwise_or(lo, cl, out=lo)
        np.take(pick, lo.view(np.int64), out=Z, mode="wrap")
        np.divide(centre[start : start + c], grid, out=X)
        round_half_up_inplace(X, work[:c])  # exact index floor(x/L + 1/2)
        if max(-float(X.min()), float(X.max())) >= float(1 << 51):
            raise PrecisionError(f"true value too large for grid step {grid!r}")
        C[:] = X
        np.add(Z, C, out=Z)  # |c| < 2^51 and |Z| <= T < 2^17: exact
        np.multiply(Z, grid, out=out[start : start + c])
    return out


class AnalyticGaussian(_LatticeGaussian):
    """(ε, δ)-DP Gaussian with the smallest σ (Balle & Wang 2018), exact on a grid.

    Supported: epsilon in [0.001, 1000], delta in [1e-12, 1), sensitivity in
    [1e-280, 1e+295] (tables of <= 2^17 entries; below ε = 0.001 the σ search takes
    seconds); true values ``|x| < 2^51·grid``.

    >>> m = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> m.guarantee.delta
    1e-05

    σ is the smallest with ``δ_G(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) <= δ``
    (B. Balle, Y.-X. Wang, *Improving the Gaussian Mechanism for Differential Privacy:
    Analytical Calibration and Optimal Denoising*, ICML 2018, Theorem 8); the sampled law is
    the quantised lattice Gaussian and its exact δ is what ``guarantee`` reports.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε.
    delta : float
        The δ of (ε, δ)-DP: the exact hockey-stick divergence of the sampled laws is <= δ.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-3, 1000.0),
                           "delta": Interval(MIN_DELTA, 1.0, hi_open=True),
                           "sensitivity": SENSITIVITY_RANGE})

    kind = "analytic Gaussian (Balle & Wang 2018)"

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.delta = self._supported("delta", delta)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        self.ideal_sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        self._build(self.ideal_sigma, search=True)
        self._freeze()

    @property
    def sigma_inflation(self) -> float:
        """σ / σ*(continuous) − 1: the price of the grid (S·L vs Δ) and of exactness."""
        return self.sigma / self.ideal_sigma - 1.0

    def __repr__(self) -> str:
        return (f"AnalyticGaussian(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"sensitivity={self.sensitivity!r})")


class Gaussian(_LatticeGaussian):
    """Classic Gaussian mechanism σ = Δ·sqrt(2 ln(1.25/δ))/ε (ε < 1), exact on a grid.

    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", Foundations and
    Trends in TCS 2014, Theorem A.1.  Supported: epsilon in [0.001, 1), delta in
    [1e-12, 1), sensitivity in [1e-280, 1e+295]; true values ``|x| < 2^51·grid``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε. (0 < ε < 1 for the classic bound)
    delta : float
        The δ of (ε, δ)-DP: the exact hockey-stick divergence of the sampled laws is <= δ.
    sensitivity : float
        Δ: the largest change of the true answer between neighbouring data sets.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-3, 1.0, hi_open=True),
                           "delta": Interval(MIN_DELTA, 1.0, hi_open=True),
                           "sensitivity": SENSITIVITY_RANGE})

    kind = "classic Gaussian (Dwork & Roth Thm A.1)"

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.delta = self._supported("delta", delta)
        self.sensitivity = self._supported("sensitivity", sensitivity)
        self.ideal_sigma = classic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        self._build(self.ideal_sigma, search=False)
        self._freeze()

    def __repr__(self) -> str:
        return (f"Gaussian(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"sensitivity={self.sensitivity!r})")
