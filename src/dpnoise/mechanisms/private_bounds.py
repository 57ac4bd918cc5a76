"""A DP range holding most of the data, on a public grid that does not depend on declared
bounds: two quantiles by report noisy max over the candidates ``0, ±2^k`` (``k`` from
``min_exponent`` to ``max_exponent``).

Each bound is :class:`~dpnoise.mechanisms.statistics.NoisyMaxQuantile` at ε/2 over the
candidates ``c_j`` with utility ``u_j = −max(0, D·A_j − Q·n, Q·n − D·B_j)``,
``A_j = #{x < c_j}``, ``B_j = #{x <= c_j}`` (utility sensitivity ``Δ = k·max(Q, D − Q)``
for ``k`` rows per person, as for any quantile); the two releases compose to ε (Dwork and
Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Thm. 3.16).  A value
beyond the grid counts at the grid's end.  What is released: the two candidates only.  How
much a schema with these bounds would clamp is stated from the released levels and the
rank error bound (:meth:`PrivateBounds.clamped_fraction_bound`), never from the data.
"""

from __future__ import annotations

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
        return -np.maximum(0, np.maximum(level.denominator * a - qn, qn - level.denominator * b))

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
        released range: ``q_low + (1 − q_high) + Σ E/(D n)`` from the released levels, the
        error bound and a public or noisy row count's lower end ``n_low``."""
        e = self.rank_error(beta)
        lo, hi = self.levels
        return float(lo + (1 - hi) + sum(ei / (q.denominator * max(n_low, 1.0))
                                         for ei, q in zip(e, self.levels, strict=True)))

    def noise(self, true_value: Any = None) -> Any:
        return self.steps[0].noise(true_value)

    def privacy_model(self) -> Any:
        return self.steps[0].privacy_model()

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, 0.0, note="two report-noisy-max quantiles")

    def in_output_set(self, outputs: ArrayLike) -> NDArray[np.bool_]:
        return np.isin(np.asarray(outputs, dtype=np.float64), self.grid)
