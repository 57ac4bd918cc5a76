"""Finite-support integer noise for count queries (Sadeghi et al. 2020), exact accounting.

:class:`CountNoise` -- finite-support noise (Sadeghi, Asoodeh, Calmon; paper eq. 14)::

    P(Z = 0) = η,   P(Z = ±i) = α_i (1 − η)/2,  i ∈ [1:D],   Σ α_i = 1.

* ``method="paper"``: the α* of Theorem 2 / Definition 2 (eqs. 37–39), computed in exact
  rational arithmetic from a rational E_lo <= e^ε (:func:`dpnoise.exact.rational.exp_lower`).
  Where Theorem 3 is false (small η; see the errata below) dpnoise **refuses** with a
  :class:`~dpnoise.ParameterError` that points to ``method="optimal"``.
* ``method="optimal"`` (:meth:`CountNoise.optimal`): the α minimising the *exact* DP δ over
  the whole family (an LP; up to 9x smaller δ than α*), made exact and re-verified.
* ``method="geometric"``: truncated geometric α_i ∝ e^{−ε(i−1)}.

**The guarantee is the exact hockey-stick δ at ε** of the pmf that is *sampled*:
the rational pmf is quantised to 64-bit integer weights (denominator 2^64,
off-centre weights rounded down), and δ = max over both orders of Σ_z [p(z) − E p(z−1)]^+
is computed in Fractions for those weights at E_lo (δ is nonincreasing in E, so this
bounds the δ at e^ε).  The paper's δ* (``delta_tilde``, a per-outcome quantity, NOT a DP
δ) and its (2D+1)δ* (``delta_paper``) are reported for comparison only.

Validation of the counts, the output law and the boundary handling (``lower``/``upper``,
``boundary="clamp" | "clip" | "none"``) are shared with :class:`~dpnoise.Geometric` and
:class:`~dpnoise.DiscreteGaussian` (:mod:`dpnoise.mechanisms.integers`).

References:
  * P. Sadeghi, S. Asoodeh, F. du Pin Calmon, "Differentially Private Mechanisms for Count
    Queries", arXiv:2007.09374, 2020.

Errata of the paper, each explained: docs/papers.md#errata-count-noise.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.crossing import last_at_most
from ..exact.rational import as_fraction, exp_lower, float_up
from ..exact.table import IntegerTable, quantize_symmetric
from ..laws import count_noise as cf
from ..params import Interval, check_delta, check_epsilon, supported
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism, as_output
from .integers import (
    Boundary,
    IntegerLaw,
    boundary_inputs,
    check_counts,
    check_domain,
    check_support_radius,
    count_in_domain,
    domain_output_set,
    one_count,
    push_forward,
)

Method = Literal["paper", "optimal", "geometric"]
_ETA_RES = 40  # calibration resolution of eta: 2^-40


# ------------------------------------------------------------------ CountNoise
class CountNoise(Mechanism):
    """Finite-support integer noise for counts (Sadeghi et al. 2020) with exact (ε, δ) accounting.

    Supported: epsilon in [0.001, 100], D an integer in [1, 256], eta in (0, 1) (as a float,
    Fraction or "p/q" string); true counts ``|n| < 2^53``.

    >>> m = CountNoise(epsilon=2.18, D=6, eta=0.8)
    >>> m.k, round(float(m.delta_tilde), 7)      # the paper's Fig. 1: type I, k = 3
    (3, 0.0049478)

    Parameters
    ----------
    epsilon : float
        The ε at which the exact δ is reported.
    D : int
        The noise support [−D, D].
    eta : float, Fraction or str
        ``P(Z = 0) = η``: the probability of releasing the true count (e.g. "4/5").
    method : {"paper", "optimal", "geometric"}, default "paper"
        The member of the paper's family: its construction, the linear-programming optimum
        (made exact), or a truncated geometric law.
    lower, upper : int or None, default 0 and None
        The public range of the count.
    boundary : {"clamp", "clip", "none"}, default "clamp"
        "clamp": ``clamp(n + Z)``; "clip": ``clip(n, lower + k, upper − k) + Z``; "none": ``n + Z``.

    Raises
    ------
    ParameterError
        If a parameter is outside its supported range (above), before any work is done.
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
        self.D = check_support_radius(D)
        self.eta = as_fraction("eta", eta, low=Fraction(0), high=Fraction(1))
        if method not in ("paper", "optimal", "geometric"):
            raise ParameterError(
                f"method must be 'paper', 'optimal' or 'geometric', got {method!r}")
        self.method = method
        self.lower, self.upper, self.boundary = check_domain(
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
        """The member of family (14) with the smallest exact δ (LP, made exact).

        Parameters
        ----------
        epsilon : float
            ε.
        D : int
            The support half-width.
        eta : float, Fraction or str
            ``P(Z = 0)``.
        **kw
            Further constructor arguments.

        Returns
        -------
        CountNoise
            ``CountNoise(..., method="optimal")``.
        """
        return cls(epsilon=epsilon, D=D, eta=eta, method="optimal", **kw)

    @classmethod
    def from_delta(cls, *, epsilon: float, delta: float, D: int, method: Method = "paper",
                   **kw: Any) -> CountNoise:
        """The largest η (to 2^-40, rounded down) whose exact δ at ε is <= delta, for this D.

        Parameters
        ----------
        epsilon : float
            ε.
        delta : float
            The target δ.
        D : int
            The support half-width.
        method : {"paper", "optimal", "geometric"}, default "paper"
            As in the constructor.
        **kw
            Further constructor arguments (``lower``, ``upper``, ``boundary``).

        Returns
        -------
        CountNoise
            The mechanism with the largest such η.
        """
        eps = cls._supported("epsilon", epsilon)
        target = Fraction(check_delta(delta))
        D = check_support_radius(D)
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
        """Smallest D meeting delta: for the given η, or (eta=None) with the largest η there.

        Parameters
        ----------
        epsilon : float
            ε.
        delta : float
            The target δ.
        eta : float, Fraction, str or None, default None
            ``P(Z = 0)`` (None: the largest η that meets δ at that D).
        method : {"paper", "optimal", "geometric"}, default "paper"
            As in the constructor.
        max_D : int, default 256
            The largest support half-width tried.
        **kw
            Further constructor arguments.

        Returns
        -------
        CountNoise
            The mechanism with the smallest D meeting δ.
        """
        eps = cls._supported("epsilon", epsilon)
        target = Fraction(check_delta(delta))
        max_D = check_support_radius(max_D)
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
        η > tanh(ε/2), where δ stops depending on D.

        Parameters
        ----------
        epsilon : float
            ε.
        eta : float, Fraction or str
            ``P(Z = 0)``.
        delta : float or None, default None
            The target δ (None: the least δ attainable).
        method : {"paper", "optimal", "geometric"}, default "paper"
            As in the constructor.
        max_D : int, default 256
            The largest support half-width tried.
        **kw
            Further constructor arguments.

        Returns
        -------
        CountNoise
            The calibrated mechanism.
        """
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
        for D in range(1, check_support_radius(max_D) + 1):
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
        """Exact δ of the sampled pmf at another ε (upper bound via a rational E <= e^ε).

        Parameters
        ----------
        epsilon : float
            Another ε >= 0.

        Returns
        -------
        float
            An upper bound on the hockey-stick δ(ε) of the sampled pmf.
        """
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
        n = one_count(true_value, self.lower, self.upper)
        if n is not None:  # one count: the same word(s) and law as the array kernel
            (lo_i, hi_i), (lo_o, hi_o) = self._clips()
            if lo_i is not None:
                n = max(n, lo_i)
            if hi_i is not None:
                n = min(n, hi_i)
            y = n + self.table.draw_one(resolve_rng(rng))
            if lo_o is not None:
                y = max(y, lo_o)
            if hi_o is not None:
                y = min(y, hi_o)
            return y
        counts = check_counts(true_value, self.lower, self.upper)
        flat = np.ascontiguousarray(counts.reshape(-1))
        source = resolve_rng(rng)
        clip_in, clip_out = self._clips()
        out = self.table.release(source, flat, clip_in=clip_in, clip_out=clip_out)
        return as_output(out.reshape(counts.shape), true_value)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        """Integers; inside [lower, upper] unless boundary='none'."""
        return domain_output_set(y, self.lower, self.upper, self.boundary)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        z = np.arange(-self.D, self.D + 1, dtype=np.int64)
        p = np.array([w / 2.0**64 for w in self.weights])
        if true_value is None:
            return IntegerLaw(z, p)
        n = count_in_domain(true_value, self.lower, self.upper)
        clip_in, clip_out = self._clips()
        return push_forward(z, p, n, clip_in, clip_out)

    def privacy_profile(self) -> Any:
        from .profiles import count_noise_profile

        return count_noise_profile(self)

    def privacy_model(self) -> Any:
        from ..verify import DiscreteFamily

        def law(x: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            lw = self.noise(int(x))
            keep = lw.probs > 0
            return lw.values[keep], np.log(lw.probs[keep])

        return DiscreteFamily(inputs=boundary_inputs(self.lower, self.upper, self.k),
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
    """Left end of the interval on which δ(η) is nondecreasing."""
    if method == "paper":
        sm = cf.sums(E, D)
        return cf.eta_from_c(E * sm.S[D - 1] / sm.W[D])
    a1 = cf.geometric_alpha(E, D)[0]
    return E * a1 / (2 + E * a1)  # geometric: δ = hα_D below-to-above the kink η = E h α_1


@lru_cache(maxsize=64)
def _max_eta(eps: float, target: Fraction, D: int, method: str) -> Fraction | None:
    """Largest η on the 2^-40 grid with exact (rational-pmf) δ <= target, or None (cached
    per process: public parameters only)."""
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
        d_lo = _delta_for(E, Fraction(lo_j, res), D, method)
        if d_lo > target:
            return None
    except cf.ThmThreeError:
        return None
    try:  # δ(η) is nondecreasing on [lo, 1): the crossing is unique, found in a few steps
        return Fraction(last_at_most(lambda j: _delta_for(E, Fraction(j, res), D, method),
                                     target, lo_j, res, d_lo, Fraction(1)), res)
    except cf.ThmThreeError:  # pragma: no cover - then the plain bisection decides, as before
        pass
    hi_j = res  # η = 1 is excluded (δ = 1 there)
    while hi_j - lo_j > 1:
        mid = (lo_j + hi_j) // 2
        if _delta_for(E, Fraction(mid, res), D, method) <= target:
            lo_j = mid
        else:
            hi_j = mid
    return Fraction(lo_j, res)


