"""A DP range holding most of the data, on a public grid that does not depend on declared
bounds: two quantiles by report noisy max over the candidates ``0, ±2^k`` (``k`` from
``min_exponent`` to ``max_exponent``).

Each bound is :class:`~dpnoise.mechanisms.statistics.NoisyMaxQuantile` at ε/2 over the
candidates ``c_j`` with utility ``u_j = −max(0, D·A_j − Q·n, Q·n − D·B_j)``,
``A_j = #{x < c_j}``, ``B_j = #{x <= c_j}`` (utility sensitivity ``Δ = k·max(Q, D − Q)``
for ``k`` rows per person, as for any quantile); the two releases compose to ε (Dwork and
Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Thm. 3.16).  A value
beyond the grid counts at the grid's end.  What is released: the two candidates only.

A public preference for small magnitudes.  Every candidate beyond the data has the same
utility (no row lies between them), so plain noisy max picks among them uniformly: an upper
bound of ``2^40`` for ages.  Each utility is therefore lowered by ``λ·|j − j_0|`` (``j_0``
the index of 0, ``λ`` twice the noise's scale in utility units): a shift fixed before any
data is read, so the sensitivity -- and the privacy -- are unchanged, and among tied
candidates the one nearest 0 wins, each step farther being about ``e^{-2}`` as likely.
Where rows lie between candidates the utility moves by ``D`` per row, which dwarfs ``λ``.

How much a schema with these bounds would clamp is stated from the released levels, the
rank error bound and ``λ`` (:meth:`PrivateBounds.clamped_fraction_bound`), never from the
data.  Let ``c_a`` be the largest candidate with ``D·A <= Q·n``: its utility is at least
``−Q·n − λ·p(c_a)``; report noisy max releases ``low`` with ``u(low) >= u(c_a) − E``
(probability ``1 − β/2``), so ``D·A(low) <= 2·Q·n + E + λ·P`` with ``P`` the largest
penalty step (``(m − 1)/2``): at most ``2·q_lo·n + (E + λ·P)/D`` rows lie below ``low`` --
twice the level because the nearest candidate below the quantile may itself sit up to
``q_lo·n`` rows below it on this coarse grid -- and symmetrically at most
``2·(1 − q_hi)·n + (E + λ·P)/D`` above ``high``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..params import check_epsilon
from ..randomness import RngLike
from .base import Guarantee, Mechanism
from .statistics import NoisyMaxQuantile, tail_index


def candidates(min_exponent: int, max_exponent: int) -> NDArray[np.float64]:
    """The public grid ``−2^K .. −2^k, 0, 2^k .. 2^K`` in increasing order."""
    pos = 2.0 ** np.arange(min_exponent, max_exponent + 1)
    return np.concatenate([-pos[::-1], [0.0], pos])


class PrivateBounds(Mechanism):
    """Suggested bounds: the ``lower_level`` and ``upper_level`` quantiles on the sign x 2^k
    grid, ε/2 each (see the module docstring).  ``release(values)`` -> ``(low, high)``."""

    kind = "statistic"

    def __init__(self, *, epsilon: float, lower_level: float = 0.01, upper_level: float = 0.99,
                 min_exponent: int = -10, max_exponent: int = 62,
                 contributions: int = 1) -> None:
        self.epsilon = check_epsilon(epsilon)
        if not (int(min_exponent) == min_exponent and int(max_exponent) == max_exponent
                and -1074 <= min_exponent <= max_exponent <= 1023):
            raise ParameterError("need integers -1074 <= min_exponent <= max_exponent <= 1023")
        if int(contributions) != contributions or contributions < 1:
            raise ParameterError(f"contributions must be an integer >= 1, got {contributions!r}")
        self.levels = tuple(Fraction(float(q)).limit_denominator(1 << 16)
                            for q in (lower_level, upper_level))
        if not 0 <= self.levels[0] < self.levels[1] <= 1:
            raise ParameterError("need 0 <= lower_level < upper_level <= 1")
        self.grid = candidates(int(min_exponent), int(max_exponent))
        self.contributions = int(contributions)
        self.steps = tuple(NoisyMaxQuantile(
            epsilon=self.epsilon / 2, candidates=self.grid.size,
            utility_sensitivity=self.contributions * max(q.numerator,
                                                         q.denominator - q.numerator, 1))
            for q in self.levels)
        # the public preference: twice the noise's scale t/s (decay e^{-s/t} per unit)
        self.preference = tuple(math.ceil(2 * st.t / st.s) for st in self.steps)
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=0.0, notion="pure",
                         note="two report-noisy-max quantiles on the sign x 2^k grid")

    def utilities(self, values: ArrayLike, level: Fraction) -> NDArray[np.int64]:
        x = np.asarray(values, dtype=np.float64).ravel()
        x = np.sort(x[~np.isnan(x)])
        a = np.searchsorted(x, self.grid, side="left")
        b = np.searchsorted(x, self.grid, side="right")
        a[0], b[-1] = 0, x.size  # beyond the grid counts at its ends
        qn = level.numerator * x.size
        u = -np.maximum(0, np.maximum(level.denominator * a - qn, qn - level.denominator * b))
        return u - self.preference[self.levels.index(level)] * self.steps_from_zero()

    def steps_from_zero(self) -> NDArray[np.int64]:
        """``|j − j_0|``: each candidate's distance in grid steps from the candidate 0."""
        j = np.arange(self.grid.size, dtype=np.int64)
        return np.abs(j - (self.grid.size - 1) // 2)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> tuple[float, float]:
        idx = [int(step.release(self.utilities(true_value, q), rng=rng))
               for step, q in zip(self.steps, self.levels, strict=True)]
        low, high = sorted(self.grid[i] for i in idx)
        return float(low), float(high)

    def rank_error(self, beta: float = 0.05) -> list[int]:
        """Per bound, utility units: with probability >= 1 − β (β/2 each) the released
        candidate has utility >= −E (report noisy max's tail; rows: E/D)."""
        out = []
        for s in self.steps:  # (m−1)·P(Z >= h1) <= β/4 and P(Z >= h2) <= β/4
            h1 = max(1, tail_index(s.s, s.t, beta / (4 * max(s.candidates - 1, 1))))
            h2 = max(1, tail_index(s.s, s.t, beta / 4))
            out.append((h1 - 1) + (h2 - 1))
        return out

    def clamped_fraction_bound(self, n_low: float, beta: float = 0.05) -> float:
        """With probability >= 1 − β, at most this fraction of the rows lies outside the
        released range (see the module docstring): ``2·(q_low + 1 − q_high) +
        Σ (E_i + λ_i·P)/(D_i·n_low)`` from the released levels, the error bound, the public
        preference and a public or noisy row count's lower end ``n_low``."""
        frac, rows = self.clamped_rows_bound(beta)
        return float(frac + rows / max(n_low, 1.0))

    def clamped_rows_bound(self, beta: float = 0.05) -> tuple[float, float]:
        """``(fraction, rows)``: with probability >= 1 − β at most ``fraction·n + rows``
        rows lie outside the released range, whatever the data."""
        e = self.rank_error(beta)
        lo, hi = self.levels
        far = (self.grid.size - 1) // 2
        rows = sum((ei + lam * far) / q.denominator
                   for ei, lam, q in zip(e, self.preference, self.levels, strict=True))
        return float(2 * (lo + (1 - hi))), float(rows)

    def noise(self, true_value: Any = None) -> Any:
        return self.steps[0].noise(true_value)

    def privacy_model(self) -> Any:
        return self.steps[0].privacy_model()

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, 0.0, note="two report-noisy-max quantiles")

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return np.isin(y.astype(np.float64, copy=False), self.grid)
