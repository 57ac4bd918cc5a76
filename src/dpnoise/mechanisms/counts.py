"""Integer noise for count queries (paper 002) and its baselines, with exact privacy accounting.

:class:`CountNoise` -- finite-support noise (Sadeghi, Asoodeh, Calmon; paper eq. 14)::

    P(Z = 0) = η,   P(Z = ±i) = α_i (1 − η)/2,  i ∈ [1:D],   Σ α_i = 1.

* ``method="paper"``: the α* of Theorem 2 / Definition 2 (eqs. 37–39), computed in exact
  rational arithmetic from a rational E_lo <= e^ε (:func:`dpnoise.exact.rational.exp_lower`).
  **Erratum (spec 002 §2):** Theorem 3 is false for small η (type II with C < α*_2, the
  paper's Prop. 4 omits constraint (19′)); there the paper's pmf has a singular-event δ up
  to ~20x the claimed δ*, and at (η, D, ε) = (.1, 8, .5) and (.1, 10, .5) not even the
  paper's (ε, (2D+1)δ*)-DP holds.  dpnoise **refuses** that region with a
  :class:`~dpnoise.ParameterError` that points to ``method="optimal"``.
* ``method="optimal"`` (:meth:`CountNoise.optimal`): the α minimising the *exact* DP δ over
  the whole family (an LP; up to 9x smaller δ than α*), made exact and re-verified.
* ``method="geometric"``: truncated geometric α_i ∝ e^{−ε(i−1)} (spec §2 item 4).

**The guarantee is the exact hockey-stick δ at ε** of the pmf that is *sampled*
(spec §4.4): the rational pmf is quantised to 64-bit integer weights (denominator 2^64,
off-centre weights rounded down), and δ = max over both orders of Σ_z [p(z) − E p(z−1)]^+
is computed in Fractions for those weights at E_lo (δ is nonincreasing in E, so this
bounds the δ at e^ε).  The paper's δ* (``delta_tilde``, a per-outcome quantity, NOT a DP
δ) and its (2D+1)δ* (``delta_paper``) are reported for comparison only.

:class:`Geometric` -- two-sided geometric (discrete Laplace), p(z) ∝ e^{−|z|ε_r/Δ} with a
rational ε_r <= ε; pure ε-DP; exact sampler (CKS Algorithm 2).

:class:`DiscreteGaussian` -- N_ℤ(0, σ²) (Canonne, Kamath, Steinke 2020); exact sampler
(CKS Algorithm 3 with exact Bernoulli(exp(−x))); δ(ε) by the exact formula (CKS Thm 7).

Boundary handling (spec §4.5), all configured publicly, never by branching on the count:

* ``lower``/``upper`` declare the domain of true counts (default [0, ∞)); a true count
  outside it is a caller bug and raises ParameterError before any randomness is drawn.
* ``boundary="clamp"`` (default): Y = clamp(n + Z, lower, upper) -- post-processing, so
  the guarantee is unchanged; outputs are integers in [lower, upper] (never negative for
  counts); unbiased away from the ends, P(Y = n) >= η everywhere.
* ``boundary="clip"`` (CountNoise only): Y = clip(n, lower + k, upper − k) + Z with k the
  support radius -- clipping is 1-Lipschitz, so sensitivity and guarantee are unchanged,
  Y ∈ [lower, upper], and the noise law is intact (bias only for counts within k of an end).
* ``boundary="none"``: Y = n + Z (may leave [lower, upper], e.g. be negative near 0).

Every element goes through the same vectorised operations whatever its value (clamps are
``np.maximum``/``np.minimum``), so the time taken does not depend on the private counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.discrete_gaussian import DGParams, discrete_gaussian, grid_sigma2
from ..exact.discrete_laplace import discrete_laplace
from ..exact.rational import as_fraction, exp_lower, float_up
from ..exact.table import IntegerTable, quantize_symmetric
from ..exact.words import WordStream
from ..laws import count_noise as cf
from ..laws import discrete_gaussian as dga
from ..params import Interval, check_delta, check_epsilon, check_quantiles, real_array, supported
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism, as_output

Method = Literal["paper", "optimal", "geometric"]
Boundary = Literal["clamp", "clip", "none"]
MAX_D = 256  # exact rational construction cost grows ~D^3 in bits; ±256 is ample for counts
MAX_COUNT = 1 << 53
_ETA_RES = 40  # calibration resolution of eta: 2^-40


# ---------------------------------------------------------------- shared helpers
def _check_d(D: Any) -> int:
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)):
        raise ParameterError(f"D must be an integer in [1, {MAX_D}], got {D!r}")
    if not 1 <= int(D) <= MAX_D:
        raise ParameterError(f"D must be an integer in [1, {MAX_D}], got {D!r}")
    return int(D)


def _check_bound(name: str, v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise ParameterError(f"{name} must be an integer or None, got {v!r}")
    if abs(int(v)) >= MAX_COUNT:
        raise ParameterError(f"{name} must be in (-2^53, 2^53), got {v!r}")
    return int(v)


def _check_sensitivity(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer, float)) or (
        isinstance(v, float) and not v.is_integer()
    ):
        raise ParameterError(f"sensitivity must be an integer >= 1, got {v!r}")
    if not 1 <= int(v) <= 1 << 20:
        raise ParameterError(f"sensitivity must be an integer in [1, 2^20], got {v!r}")
    return int(v)


def check_counts(values: ArrayLike, lower: int | None, upper: int | None
                 ) -> NDArray[np.int64]:
    """True counts as int64: integers (integer-valued floats accepted), inside [lower, upper]."""
    arr = real_array("true_value", values)  # refuses bool, str, bytes, complex, ragged
    if arr.dtype.kind == "f":
        if arr.size and not np.all(np.isfinite(arr)):
            raise ParameterError("true_value must be finite integers (no NaN or infinity)")
        if arr.size and (np.any(arr != np.floor(arr)) or np.max(np.abs(arr)) >= MAX_COUNT):
            raise ParameterError("true_value must be integers with |value| < 2^53")
    elif arr.dtype.kind == "u" and arr.size and arr.max() >= MAX_COUNT:
        raise ParameterError("true_value must be < 2^53")
    out = arr.astype(np.int64, copy=False)
    if out.size:
        # one cache-friendly read: min and max of each 2^15 block while it is in cache
        flat = out.reshape(-1)
        step = 1 << 15
        lo_v, hi_v = int(flat[0]), int(flat[0])
        for i in range(0, flat.size, step):
            blk = flat[i : i + step]
            lo_v = min(lo_v, int(blk.min()))
            hi_v = max(hi_v, int(blk.max()))
        if max(-lo_v, hi_v) >= MAX_COUNT:
            raise ParameterError("true_value must satisfy |value| < 2^53")
        if (lower is not None and lo_v < lower) or (upper is not None and hi_v > upper):
            lo = "-inf" if lower is None else lower
            hi = "inf" if upper is None else upper
            raise ParameterError(
                f"true_value must lie in the declared count domain [{lo}, {hi}], "
                f"got values in [{lo_v}, {hi_v}]"
            )
    return out


def _one_count(true_value: Any, lower: int | None, upper: int | None) -> int:
    """ONE true count for noise(): an array is refused (call noise() once per value)."""
    arr = check_counts(true_value, lower, upper)
    if arr.ndim:
        raise ParameterError(
            f"true_value must be a single count for noise() (the law of one release); got an "
            f"array of shape {arr.shape}: call noise() once per value")
    return int(arr)


def _check_domain(lower: Any, upper: Any, boundary: Any, allowed: tuple[str, ...]
                  ) -> tuple[int | None, int | None, str]:
    lo = _check_bound("lower", lower)
    hi = _check_bound("upper", upper)
    if lo is not None and hi is not None and hi < lo:
        raise ParameterError(f"need lower <= upper, got [{lo}, {hi}]")
    if boundary not in allowed:
        raise ParameterError(f"boundary must be one of {allowed}, got {boundary!r}")
    return lo, hi, str(boundary)


class IntegerLaw:
    """Exact-as-float law of an integer output on a window (scipy.stats-like).

    ``values`` are consecutive integers, ``probs`` their probabilities (mass outside the
    window is below 1e-300 for the infinite-support laws).
    """

    def __init__(self, values: NDArray[np.int64], probs: NDArray[np.float64]) -> None:
        self.values = np.asarray(values, dtype=np.int64)
        self.probs = np.asarray(probs, dtype=np.float64)
        self._cum = np.cumsum(self.probs)
        self._lo = int(self.values[0])

    def support(self) -> tuple[int, int]:
        nz = np.flatnonzero(self.probs > 0)
        return int(self.values[nz[0]]), int(self.values[nz[-1]])

    def pmf(self, y: ArrayLike) -> NDArray[np.float64]:
        y = np.asarray(y)
        yi = np.floor(np.asarray(y, dtype=np.float64))
        idx = yi - self._lo
        ok = (yi == y) & (idx >= 0) & (idx < self.values.size)
        safe = np.where(ok, idx, 0).astype(np.int64)
        return np.where(ok, self.probs[safe], 0.0)

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(y))

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:
        idx = np.floor(np.asarray(y, dtype=np.float64)) - self._lo
        inside = np.clip(idx, 0, self.values.size - 1).astype(np.int64)
        out = np.where(idx < 0, 0.0, np.minimum(self._cum[inside], 1.0))
        return np.where(idx >= self.values.size - 1, 1.0, out)

    def sf(self, y: ArrayLike) -> NDArray[np.float64]:
        return 1.0 - self.cdf(y)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        q = check_quantiles(q)
        idx = np.searchsorted(self._cum, q * (1 - 1e-15), side="left")
        idx = np.clip(idx, 0, self.values.size - 1)
        return self.values[idx].astype(np.float64)

    def mean(self) -> float:
        return math.fsum((self.probs * self.values).tolist())

    def var(self) -> float:
        m = self.mean()
        return math.fsum((self.probs * (self.values - m) ** 2).tolist())

    def std(self) -> float:
        return math.sqrt(self.var())

    def mean_abs(self, about: float | None = None) -> float:
        c = self.mean() if about is None else about
        return math.fsum((self.probs * np.abs(self.values - c)).tolist())

    def interval(self, level: float) -> tuple[float, float]:
        a = (1 - level) / 2
        return float(self.ppf(a)), float(self.ppf(1 - a))


def integer_output_set(outputs: ArrayLike, lower: int | None, upper: int | None
                       ) -> NDArray[np.bool_]:
    """Integers (any numeric dtype holding integral values) inside [lower, upper]."""
    y = np.asarray(outputs)
    if y.dtype.kind in "iu":
        ok = np.ones(y.shape, dtype=bool)
    else:
        yf = y.astype(np.float64)
        ok = np.isfinite(yf) & (yf == np.floor(yf))
    if lower is not None:
        ok &= y >= lower
    if upper is not None:
        ok &= y <= upper
    return ok


def _domain_output_set(outputs: ArrayLike, lower: int | None, upper: int | None,
                       boundary: str) -> NDArray[np.bool_]:
    """Integers; inside [lower, upper] unless boundary='none'."""
    if boundary == "none":
        return integer_output_set(outputs, None, None)
    return integer_output_set(outputs, lower, upper)


def _clamped_law(z: NDArray[np.int64], p: NDArray[np.float64], true_value: int | None,
                 lower: int | None, upper: int | None, boundary: str) -> IntegerLaw:
    """Law of n + Z (Z with pmf p on z), clamped into [lower, upper] when boundary='clamp'."""
    if true_value is None:
        return IntegerLaw(z, p)
    n = _one_count(true_value, lower, upper)
    clip_out = (lower, upper) if boundary == "clamp" else (None, None)
    return _push_forward(z, p, n, (None, None), clip_out)


def _clamped_release(true_value: ArrayLike, lower: int | None, upper: int | None,
                     boundary: str, sample_noise: Callable[[int, RngLike], NDArray[np.int64]],
                     rng: RngLike) -> Any:
    """Validate the counts (before any word is drawn), add integer noise, clamp if asked."""
    counts = check_counts(true_value, lower, upper)
    flat = counts.reshape(-1)
    out = flat + sample_noise(flat.size, rng)
    if boundary == "clamp":
        if lower is not None:
            np.maximum(out, lower, out=out)
        if upper is not None:
            np.minimum(out, upper, out=out)
    return as_output(out.reshape(counts.shape), true_value)


def _push_forward(z: NDArray[np.int64], p: NDArray[np.float64], n: int,
                  clip_in: tuple[int | None, int | None],
                  clip_out: tuple[int | None, int | None]) -> IntegerLaw:
    """Law of clip(clip(n, *clip_in) + Z, *clip_out)."""
    c = n
    if clip_in[0] is not None:
        c = max(c, clip_in[0])
    if clip_in[1] is not None:
        c = min(c, clip_in[1])
    y = z + c
    if clip_out[0] is not None:
        y = np.maximum(y, clip_out[0])
    if clip_out[1] is not None:
        y = np.minimum(y, clip_out[1])
    lo, hi = int(y.min()), int(y.max())
    probs = np.zeros(hi - lo + 1)
    np.add.at(probs, y - lo, p)
    return IntegerLaw(np.arange(lo, hi + 1, dtype=np.int64), probs)


def _boundary_inputs(lower: int | None, upper: int | None, reach: int) -> list[int]:
    """True counts the verifier checks: both ends of the domain and an interior run."""
    if lower is None and upper is None:
        return [0, 1, 2]
    if lower is not None and upper is not None and upper - lower <= 4 * reach + 8:
        return list(range(lower, upper + 1))
    pts: set[int] = set()
    if lower is not None:
        pts.update(range(lower, lower + 2 * reach + 4))
    if upper is not None:
        pts.update(range(upper - 2 * reach - 3, upper + 1))
    return sorted(pts)


# ------------------------------------------------------------------ CountNoise
class CountNoise(Mechanism):
    """Finite-support integer noise for counts (paper 002) with exact (ε, δ) accounting.

    Supported: epsilon in [0.001, 100], D an integer in [1, 256], eta in (0, 1) (as a float,
    Fraction or "p/q" string); true counts |n| < 2^53.

    >>> m = CountNoise(epsilon=2.18, D=6, eta=0.8)
    >>> m.k, round(float(m.delta_tilde), 7)      # the paper's Fig. 1: type I, k = 3
    (3, 0.0049478)
    """

    sensitivity = 1.0
    SUPPORTED = supported({"epsilon": Interval(1e-3, 100.0)})

    def __init__(
        self,
        *,
        epsilon: float,
        D: int,
        eta: float | Fraction | str,
        method: Method = "paper",
        lower: int | None = 0,
        upper: int | None = None,
        boundary: Boundary = "clamp",
    ) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.D = _check_d(D)
        self.eta = as_fraction("eta", eta, low=Fraction(0), high=Fraction(1))
        if method not in ("paper", "optimal", "geometric"):
            raise ParameterError(
                f"method must be 'paper', 'optimal' or 'geometric', got {method!r}")
        self.method = method
        self.lower, self.upper, self.boundary = _check_domain(
            lower, upper, boundary, ("clamp", "clip", "none"))
        E = exp_lower(self.epsilon)
        self.E_lo = E
        D_ = self.D
        self.eta_bad = cf.eta_bad(E, D_)
        sol = cf.paper_alpha(E, self.eta, D_, check=False)
        self.k_paper = sol.k
        self.delta_tilde = sol.delta_tilde
        if method == "paper":
            sol = cf.paper_alpha(E, self.eta, D_)  # raises in the Theorem-3 failure region
            alpha, self.alpha_source = sol.alpha, "paper"
        elif method == "geometric":
            alpha, self.alpha_source = cf.geometric_alpha(E, D_), "geometric"
        else:
            alpha, self.alpha_source = cf.lp_alpha(E, self.eta, D_)
        self.alpha: tuple[Fraction, ...] = tuple(alpha)
        self.pmf_rational = tuple(cf.pmf_from_alpha(self.eta, self.alpha))
        if sum(z * p for z, p in zip(range(-D_, D_ + 1), self.pmf_rational, strict=True)) != 0:
            raise AssertionError("noise is biased")  # pragma: no cover
        self.table = IntegerTable(quantize_symmetric(self.pmf_rational), -D_)
        self.weights = tuple(self.table.exact_weights())
        self.delta_exact = cf.hockey_delta(self.weights, E, 1 << 64)
        self.delta_rational = cf.hockey_delta(self.pmf_rational, E)
        self.delta_pointwise = cf.pointwise_delta(self.pmf_rational, E)
        self.delta_paper = min(Fraction(1), (2 * D_ + 1) * self.delta_tilde)
        lo_s, hi_s = self.table.support
        self.k = max(-lo_s, hi_s)
        if self.boundary == "clip" and self.lower is not None and self.upper is not None \
                and self.upper - self.lower < 2 * self.k:
            raise ParameterError(
                f"boundary='clip' needs upper - lower >= 2k = {2 * self.k} (support radius "
                f"k = {self.k}); got [{self.lower}, {self.upper}]; use boundary='clamp'"
            )
        self._freeze()

    # ------------------------------------------------------------ constructors
    @classmethod
    def optimal(cls, *, epsilon: float, D: int, eta: float | Fraction | str,
                **kw: Any) -> CountNoise:
        """The member of family (14) with the smallest exact δ (LP, made exact)."""
        return cls(epsilon=epsilon, D=D, eta=eta, method="optimal", **kw)

    @classmethod
    def from_delta(cls, *, epsilon: float, delta: float, D: int, method: Method = "paper",
                   **kw: Any) -> CountNoise:
        """The largest η (to 2^-40, rounded down) whose exact δ at ε is <= delta, for this D."""
        eps = cls._supported("epsilon", epsilon)
        target = Fraction(check_delta(delta))
        D = _check_d(D)
        eta = _max_eta(eps, target, D, method)
        if eta is None:
            raise ParameterError(
                f"delta={delta!r} is infeasible for D={D} at epsilon={eps!r} with "
                f"method={method!r}: increase D or epsilon (or delta)"
            )
        step = Fraction(1, 1 << _ETA_RES)
        for _ in range(64):  # the quantised table may differ by ~2^-64: step down if needed
            m = cls(epsilon=eps, D=D, eta=eta, method=method, **kw)
            if m.delta_exact <= target:
                return m
            eta -= step
            step *= 2
        raise ParameterError("calibration failed to meet delta")  # pragma: no cover

    @classmethod
    def smallest_support(cls, *, epsilon: float, delta: float, eta: Any = None,
                         method: Method = "paper", max_D: int = 256, **kw: Any
                         ) -> CountNoise:
        """Smallest D meeting delta: for the given η, or (eta=None) with the largest η there."""
        eps = cls._supported("epsilon", epsilon)
        target = Fraction(check_delta(delta))
        max_D = _check_d(max_D)
        for D in range(1, max_D + 1):
            if eta is None:
                e = _max_eta(eps, target, D, method)
                if e is not None:
                    return cls.from_delta(epsilon=eps, delta=delta, D=D, method=method, **kw)
                continue
            try:
                m = cls(epsilon=eps, D=D, eta=eta, method=method, **kw)
            except cf.ThmThreeError:
                continue
            if m.delta_exact <= target:
                return m
        raise ParameterError(
            f"no D <= {max_D} reaches delta={delta!r} at epsilon={eps!r}"
            + ("" if eta is None else f" with eta={eta!r}")
            + f" (method={method!r}); raise epsilon, lower eta, or try method='optimal'"
        )

    @classmethod
    def from_eta(cls, *, epsilon: float, eta: Any, delta: float | None = None,
                 method: Method = "paper", max_D: int = 256, **kw: Any) -> CountNoise:
        """Calibrate D from (ε, η): with ``delta``, the smallest D meeting it; without,
        the smallest D attaining the least δ -- defined only above the knee
        η > tanh(ε/2), where δ stops depending on D (spec §2 fact 1)."""
        if delta is not None:
            return cls.smallest_support(epsilon=epsilon, delta=delta, eta=eta, method=method,
                                        max_D=max_D, **kw)
        eps = cls._supported("epsilon", epsilon)
        e = as_fraction("eta", eta, low=Fraction(0), high=Fraction(1))
        E = exp_lower(eps)
        if e <= (E - 1) / (E + 1):
            raise ParameterError(
                f"eta={eta!r} <= tanh(epsilon/2)={float((E - 1) / (E + 1)):.6g}: the exact "
                "delta keeps falling (geometrically) as D grows, so there is no smallest D; "
                "pass delta= (a target) or construct CountNoise(D=...) directly"
            )
        best: CountNoise | None = None
        stale = 0
        for D in range(1, _check_d(max_D) + 1):
            try:
                m = cls(epsilon=eps, D=D, eta=e, method=method, **kw)
            except cf.ThmThreeError:
                continue
            if best is None or m.delta_exact < best.delta_exact * (1 - Fraction(1, 10**12)):
                best, stale = m, 0
            else:
                stale += 1
                if (m.k < D and method == "paper") or stale >= 3:
                    break  # saturated: more support does not lower delta (k* reached)
        assert best is not None
        return best

    # ------------------------------------------------------------ accounting
    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon,
            delta=self.delta_reported,
            notion="approximate",
            note=("exact hockey-stick delta of the sampled 64-bit pmf "
                  f"(alpha: {self.alpha_source}); the paper's (2D+1)delta* is "
                  f"{float(self.delta_paper):.4g}"),
            details={
                "delta_exact": float_up(self.delta_exact),
                "D": self.D,
                "k": self.k,
                "eta": float(self.eta),
                "method": self.method,
                "alpha_source": self.alpha_source,
                "delta_tilde_paper": float(self.delta_tilde),
                "delta_paper": float(self.delta_paper),
                "delta_rational_pmf": float_up(self.delta_rational),
                "eta_sampled": float(Fraction(self.weights[self.D], 1 << 64)),
            },
        )

    @property
    def delta_reported(self) -> float:
        """The claimed δ: the exact δ rounded up, plus (2D+2)·2^-50 (<= 2e-12).

        The slack covers the float64 rounding of the independent verifier, whose terms
        p(z) − e^ε p(z−1) cancel to ~1e-16 absolute each where the exact value is 0 (e.g.
        the geometric α); without it a correct claim of δ ~ 1e-10 could fail verification.
        """
        return min(1.0, float_up(self.delta_exact + Fraction(2 * self.D + 2, 1 << 50)))

    def delta_at(self, epsilon: float) -> float:
        """Exact δ of the sampled pmf at another ε (upper bound via a rational E <= e^ε)."""
        eps = check_epsilon(epsilon)
        return float_up(cf.hockey_delta(self.weights, exp_lower(eps), 1 << 64))

    @cached_property
    def variance(self) -> Fraction:
        """η̄ Σ α_i i² (exact, of the rational pmf)."""
        return (1 - self.eta) * sum(a * i * i for i, a in enumerate(self.alpha, start=1))

    @property
    def error_probability(self) -> Fraction:
        """P(Y != n) for interior counts = 1 − η."""
        return 1 - self.eta

    # ---------------------------------------------------------------- release
    def _clips(self) -> tuple[tuple[int | None, int | None], tuple[int | None, int | None]]:
        if self.boundary == "clamp":
            return (None, None), (self.lower, self.upper)
        if self.boundary == "clip":
            lo = None if self.lower is None else self.lower + self.k
            hi = None if self.upper is None else self.upper - self.k
            return (lo, hi), (None, None)
        return (None, None), (None, None)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        counts = check_counts(true_value, self.lower, self.upper)
        flat = np.ascontiguousarray(counts.reshape(-1))
        source = resolve_rng(rng)
        clip_in, clip_out = self._clips()
        out = self.table.release(source, flat, clip_in=clip_in, clip_out=clip_out)
        return as_output(out.reshape(counts.shape), true_value)

    def in_output_set(self, outputs: ArrayLike) -> NDArray[np.bool_]:
        """Integers; inside [lower, upper] unless boundary='none'."""
        return _domain_output_set(outputs, self.lower, self.upper, self.boundary)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        z = np.arange(-self.D, self.D + 1, dtype=np.int64)
        p = np.array([w / 2.0**64 for w in self.weights])
        if true_value is None:
            return IntegerLaw(z, p)
        n = _one_count(true_value, self.lower, self.upper)
        clip_in, clip_out = self._clips()
        return _push_forward(z, p, n, clip_in, clip_out)

    def privacy_model(self) -> Any:
        from ..verify import DiscreteFamily

        def law(x: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            lw = self.noise(int(x))
            keep = lw.probs > 0
            return lw.values[keep], np.log(lw.probs[keep])

        return DiscreteFamily(inputs=_boundary_inputs(self.lower, self.upper, self.k),
                              sensitivity=1.0, law=law)

    def __repr__(self) -> str:
        return (f"CountNoise(epsilon={self.epsilon!r}, D={self.D}, eta={str(self.eta)!r}, "
                f"method={self.method!r}, lower={self.lower!r}, upper={self.upper!r}, "
                f"boundary={self.boundary!r})")


def _delta_for(E: Fraction, eta: Fraction, D: int, method: str) -> Fraction:
    if method == "paper":
        a = cf.paper_alpha(E, eta, D).alpha
    elif method == "geometric":
        a = cf.geometric_alpha(E, D)
    else:
        a = cf.lp_alpha(E, eta, D)[0]
    return cf.hockey_delta(cf.pmf_from_alpha(eta, a), E)


def _eta_low(E: Fraction, D: int, method: str) -> Fraction:
    """Left end of the interval on which δ(η) is nondecreasing (spec §4.2)."""
    if method == "paper":
        sm = cf.sums(E, D)
        return cf.eta_from_c(E * sm.S[D - 1] / sm.W[D])
    a1 = cf.geometric_alpha(E, D)[0]
    return E * a1 / (2 + E * a1)  # geometric: δ = hα_D below-to-above the kink η = E h α_1


def _max_eta(eps: float, target: Fraction, D: int, method: str) -> Fraction | None:
    """Largest η on the 2^-40 grid with exact (rational-pmf) δ <= target, or None."""
    E = exp_lower(eps)
    res = 1 << _ETA_RES
    if method == "optimal":
        x = cf._lp_float(float(E), 0.5, D, target=float(target))
        if x is None:
            return None
        lo_j = int(float(x[0]) * res)
        # the LP optimum may be slightly off: walk down until the exact δ meets the target
        step = 1
        while lo_j > 0:
            eta = Fraction(lo_j, res)
            if _delta_for(E, eta, D, method) <= target:
                return eta
            lo_j -= step
            step *= 2
        return None
    lo = _eta_low(E, D, method)
    lo_j = max(1, -(-lo.numerator * res // lo.denominator))  # ceil onto the grid
    if lo_j >= res:  # the interval rounds up to eta = 1 (huge epsilon): no valid eta
        return None
    try:
        if _delta_for(E, Fraction(lo_j, res), D, method) > target:
            return None
    except cf.ThmThreeError:
        return None
    hi_j = res  # η = 1 is excluded (δ = 1 there)
    while hi_j - lo_j > 1:
        mid = (lo_j + hi_j) // 2
        if _delta_for(E, Fraction(mid, res), D, method) <= target:
            lo_j = mid
        else:
            hi_j = mid
    return Fraction(lo_j, res)


# ------------------------------------------------------------------ Geometric
def _rational_below(x: float, bits: int = 24) -> tuple[int, int]:
    """(s, t) with s/t <= x, t a power of two, s >= 2^bits (relative gap <= 2^-bits)."""
    xf = Fraction(x)
    k = max(0, bits - math.floor(math.log2(x)))
    t = 1 << k
    s = (xf * t).numerator // (xf * t).denominator
    return max(1, s), t


class Geometric(Mechanism):
    """Two-sided geometric (discrete Laplace) noise for integer queries: pure ε-DP.

    p(z) = (1 − r)/(1 + r) · r^{|z|},  r = e^{−ε_r/Δ},  ε_r = s/t <= ε rational
    (relative gap <= 2^-24), sampled exactly (CKS Algorithm 2).  The exact privacy loss
    of a shift by Δ is ε_r <= ε.

    Supported: epsilon in [0.001, 1000], sensitivity an integer in [1, 2^20], and
    epsilon / sensitivity >= 0.001 (noise() tabulates 1500/(ε/Δ) points); true counts
    |n| < 2^53.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-3, 1000.0),
                           "epsilon/sensitivity": Interval(1e-3, 1000.0)})

    def __init__(self, *, epsilon: float, sensitivity: int = 1, lower: int | None = 0,
                 upper: int | None = None, boundary: Literal["clamp", "none"] = "clamp"
                 ) -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = _check_sensitivity(sensitivity)
        self._supported("epsilon/sensitivity", self.epsilon / self.sensitivity)
        self.lower, self.upper, self.boundary = _check_domain(lower, upper, boundary,
                                                              ("clamp", "none"))
        s, t = _rational_below(self.epsilon / self.sensitivity)
        if t > 1 << 56:
            raise ParameterError("epsilon/sensitivity too small for the exact sampler (< 2^-32)")
        self.s, self.t = s, t
        self.epsilon_exact = Fraction(s * self.sensitivity, t)  # loss of a shift by Δ
        self._freeze()

    @property
    def decay(self) -> float:
        """Per-step log ratio s/t (ε_r/Δ)."""
        return self.s / self.t

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            epsilon=self.epsilon, delta=0.0, notion="pure",
            note="exact two-sided geometric sampler (CKS Alg. 2); loss = rational eps_r <= eps",
            details={"epsilon_exact": float_up(self.epsilon_exact), "s": self.s, "t": self.t},
        )

    def in_output_set(self, outputs: ArrayLike) -> NDArray[np.bool_]:
        return _domain_output_set(outputs, self.lower, self.upper, self.boundary)

    def _window(self) -> int:
        return math.ceil(750 / self.decay) + 2

    def _logpmf(self, z: NDArray[np.int64]) -> NDArray[np.float64]:
        a = self.decay
        return math.log(-math.expm1(-a)) - math.log1p(math.exp(-a)) - a * np.abs(z)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        K = self._window()
        z = np.arange(-K, K + 1, dtype=np.int64)
        p = np.exp(self._logpmf(z))
        return _clamped_law(z, p, true_value, self.lower, self.upper, self.boundary)

    def sample_noise(self, n: int, rng: RngLike = None) -> NDArray[np.int64]:
        return discrete_laplace(WordStream(resolve_rng(rng)), self.s, self.t, int(n))

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        return _clamped_release(true_value, self.lower, self.upper, self.boundary,
                                self.sample_noise, rng)

    def privacy_model(self) -> Any:
        from ..verify import AdditiveLattice

        return AdditiveLattice(logpmf=self._logpmf, max_shift=self.sensitivity, period=1)

    def __repr__(self) -> str:
        return (f"Geometric(epsilon={self.epsilon!r}, sensitivity={self.sensitivity}, "
                f"lower={self.lower!r}, upper={self.upper!r}, boundary={self.boundary!r})")


# ------------------------------------------------------------ DiscreteGaussian
class DiscreteGaussian(Mechanism):
    """Discrete Gaussian N_ℤ(0, σ²) (Canonne, Kamath, Steinke 2020) for integer queries.

    Give ``sigma2`` (the CKS *scale* σ², not the variance) and ``epsilon`` to get the exact
    δ(ε), or ``epsilon`` and ``delta`` to get the smallest σ² meeting δ.  σ² is rounded up
    to the exact sampler's grid σ² = t·m/2^j (relative step <= 2^-20); the reported δ is
    that of the rounded σ².

    Supported: epsilon in [0.01, 1000], delta in [1e-300, 1) (combinations needing
    σ² > 1e10 are refused), sigma2 in (0, 1e10], sensitivity an integer in [1, 2^20];
    true counts |n| < 2^53.
    """

    SUPPORTED = supported({"epsilon": Interval(1e-2, 1000.0),
                           "delta": Interval(1e-300, 1.0, hi_open=True)})

    def __init__(self, *, epsilon: float, delta: float | None = None,
                 sigma2: float | Fraction | None = None, sensitivity: int = 1,
                 lower: int | None = 0, upper: int | None = None,
                 boundary: Literal["clamp", "none"] = "clamp") -> None:
        self.epsilon = self._supported("epsilon", epsilon)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.lower, self.upper, self.boundary = _check_domain(lower, upper, boundary,
                                                              ("clamp", "none"))
        if (delta is None) == (sigma2 is None):
            raise ParameterError("give exactly one of delta= (calibrate) or sigma2= (scale)")
        if delta is not None:
            target = self._supported("delta", delta)
            s2 = Fraction(dga.calibrate_sigma2(self.epsilon, target, self.sensitivity))
        else:
            s2 = as_fraction("sigma2", sigma2, low=Fraction(0), high=Fraction(10**10),
                             open_ends=False)
            if s2 == 0:
                raise ParameterError("sigma2 must be > 0")
        self.params: DGParams = grid_sigma2(s2)
        self.sigma2 = self.params.sigma2
        self.delta = dga.delta(float(self.sigma2),
                               self.epsilon, self.sensitivity)
        if delta is not None and self.delta > target:
            raise AssertionError("calibration missed delta")  # pragma: no cover
        self._freeze()

    @classmethod
    def matching_variance(cls, *, epsilon: float, variance: float, **kw: Any
                          ) -> DiscreteGaussian:
        """The discrete Gaussian whose variance equals ``variance``."""
        return cls(epsilon=epsilon, sigma2=dga.sigma2_for_variance(float(variance)), **kw)

    @classmethod
    def matching_zero_mass(cls, *, epsilon: float, eta: float, **kw: Any
                           ) -> DiscreteGaussian:
        """The discrete Gaussian with P(Z = 0) = η (the same error probability 1 − η)."""
        return cls(epsilon=epsilon, sigma2=dga.sigma2_for_zero_mass(float(eta)), **kw)

    @property
    def guarantee(self) -> Guarantee:
        p0, var, _ = dga.moments(float(self.sigma2))
        return Guarantee(
            epsilon=self.epsilon, delta=self.delta, notion="approximate",
            note="discrete Gaussian, exact CKS sampler; delta by the exact formula (CKS Thm 7)",
            details={"sigma2": float(self.sigma2), "variance": var, "p0": p0},
        )

    def delta_at(self, epsilon: float) -> float:
        return dga.delta(float(self.sigma2), check_epsilon(epsilon), self.sensitivity)

    def in_output_set(self, outputs: ArrayLike) -> NDArray[np.bool_]:
        return _domain_output_set(outputs, self.lower, self.upper, self.boundary)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        K = dga.window(float(self.sigma2))
        z = np.arange(-K, K + 1, dtype=np.int64)
        p = dga.pmf(z, float(self.sigma2))
        return _clamped_law(z, p, true_value, self.lower, self.upper, self.boundary)

    def sample_noise(self, n: int, rng: RngLike = None) -> NDArray[np.int64]:
        return discrete_gaussian(WordStream(resolve_rng(rng)), self.params, int(n))

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        return _clamped_release(true_value, self.lower, self.upper, self.boundary,
                                self.sample_noise, rng)

    def privacy_model(self) -> Any:
        from ..verify import DiscreteFamily

        K = dga.window(float(self.sigma2))
        z = np.arange(-K, K + 1, dtype=np.int64)
        lp = dga.logpmf(z, float(self.sigma2))

        def law(x: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            return z + int(x), lp

        return DiscreteFamily(inputs=[0, self.sensitivity], sensitivity=self.sensitivity,
                              law=law)

    def __repr__(self) -> str:
        return (f"DiscreteGaussian(epsilon={self.epsilon!r}, sigma2={float(self.sigma2)!r}, "
                f"sensitivity={self.sensitivity}, lower={self.lower!r}, upper={self.upper!r}, "
                f"boundary={self.boundary!r})")
