"""Several quantiles in one release: the recursive algorithm of Kaplan, Schnapp and Stemmer,
"Differentially private approximate quantiles", ICML 2022 (Algorithm 1, ApproximateQuantiles),
with every step the exact single-quantile exponential mechanism of
:class:`~dpnoise.mechanisms.interval_quantile.IntervalQuantile`.

Why this algorithm and not JointExp (Gillenwater, Joseph and Kulesza, "Differentially private
quantiles", ICML 2021): JointExp samples m sorted points jointly from one exponential
mechanism whose normaliser is a sum over O(m n) products of exponentials computed by dynamic
programming in floating point (log-space); an exact version would need exact rational
products over all m·n states -- big integers of O(m n log(1/b)) bits.  ApproximateQuantiles
needs only single-quantile exponential mechanisms, each sampled exactly by integer
arithmetic (the dyadic base of :mod:`dpnoise.exact.exponential_pieces`), and its error grows
as log² m instead of m.

Algorithm (levels ``q_1 < ... < q_m``, lattice ``[0, N]``): release the middle level
``q_k`` (``k = ceil(m/2)``) with the single mechanism on the data; recurse on the rows
``< v`` over ``[lo, v]`` with levels ``q_j / q_k`` and on the rows ``>= v`` over ``[v, hi]``
with levels ``(q_j − q_k)/(1 − q_k)``.  Outputs are sorted by construction.  Each recursion
depth uses ``ε / T`` with ``T = ceil(log2(m + 1))`` depths.  Privacy: at one depth the
subsets are disjoint (a partition of the rows given the earlier releases), so one person's
``k`` rows change subsets holding ``k_s`` of them, Σ k_s <= k, and the subset's mechanism
(calibrated for ``k`` rows) loses at most ``(k_s/k) ε/T``: ``ε/T`` per depth, ε in all
(parallel then sequential composition: Dwork and Roth, *The Algorithmic Foundations of
Differential Privacy*, 2014, Thm. 3.14).

Ties.  The recursion splits at a released value; rows tied at it all go right, which can
move a child's target rank by the tie's size.  Each snapped row therefore gets a uniform
random sub-position among ``2^16`` (fresh randomness, a fixed function of one row and
its own random word, so the guarantee holds for every draw); outputs are rounded back
to the lattice (post-processing, which only widens the rank interval of a point).

Rank error (all m at once).  A step at exact level ``q`` runs the mechanism at ``q̃`` (``q``
rounded to a denominator ``D̃ <= 2^10``) on its subset of ``n_s <= n`` rows and releases
``v`` with ``d(v) <= E_s`` with probability ``>= 1 − β/(2m)`` (``E_s`` from the public
lattice size, as for one quantile): then ``B(v) >= q̃ n_s − E_s/D̃`` and ``A(v) <= q̃ n_s +
E_s/D̃``, so the left subset's size ``A(v)`` is within ``E_s/D̃ + t + n_s|q − q̃|`` of
``q n_s``, ``t = B(v) − A(v)`` the rows tied at ``v``'s sub-position.  A child's level is
exact relative to its parent's, and its output's full-data rank error is its own deviation
plus its parent's scaled by a factor <= 1 (left: ``q_j/q_k``; right: ``1 − q'``), so an
output's error is at most the sum along its recursion path of ``E_s/D̃_s + t_max + n|q_s −
q̃_s|``.  Ties: a fine position's rows are ``Binomial(n_c, 2^-16)`` (``n_c`` the rows of its
lattice point), so ``P(some position holds >= T rows) <= 2^16 (n 2^-16)^T / T! <= 2^16
(e n 2^-16 / T)^T`` (``Σ_c n_c^T <= n^T``), which is ``<= β/2`` for ``T = ⌈max(e² n 2^-16,
ln(2^17/β))⌉``: with probability ``>= 1 − β/2``, ``t_max <= T − 1 <= e² n 2^-16 +
ln(2^17/β)`` rows.  :meth:`MultiQuantile.rank_error_parts` gives each level's bound as
``fixed + slope·n`` from public parameters.  GROUP BY with public keys: one release per
group (parallel composition); keys that are not public need partition selection first
(the custodian session does both: :mod:`dpnoise.session.interval_rank`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.words import WordStream
from ..params import check_epsilon
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .interval_quantile import (
    BASE_BITS,
    base_numerator,
    lattice,
    smallest_power,
    snap,
)
from .quantile_step import SortedRows, sample_step

#: sub-positions per lattice point for breaking ties
JITTER_BITS = 16
#: largest denominator of a (derived) level
SUB_DENOMINATOR = 1 << 10
#: default lattice: at most this many points (times 2^16 sub-positions <= 2^52)
DEFAULT_POINTS = 1 << 34


def sorted_levels(levels: Any) -> list[Fraction]:
    """The levels as fractions (denominator <= 2^10), strictly increasing, in (0, 1)."""
    try:
        qs = [Fraction(float(q)).limit_denominator(SUB_DENOMINATOR) for q in levels]
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"levels must be numbers in (0, 1), got {levels!r}") from None
    if not qs or any(not 0 < q < 1 for q in qs) or len(set(qs)) != len(qs):
        raise ParameterError(
            f"levels must be distinct numbers in (0, 1) that stay distinct and inside (0, 1) "
            f"when rounded to a fraction of denominator <= {SUB_DENOMINATOR} (about "
            f"1/{2 * SUB_DENOMINATOR} apart, and from 0 and 1), got {levels!r}")
    return sorted(qs)


def depths(m: int) -> int:
    """Recursion depths for m levels: ``ceil(log2(m + 1))``."""
    return max(1, math.ceil(math.log2(m + 1)))


class MultiQuantile(Mechanism):
    """Several quantiles in one release (see the module docstring).  ``release(values)``
    returns the sorted released values (one per level, in increasing level order)."""

    kind = "statistic"

    def __init__(self, *, epsilon: float, levels: Any, lower: float, upper: float,
                 grid: float | None = None, contributions: int = 1) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.levels = sorted_levels(levels)
        if int(contributions) != contributions or contributions < 1:
            raise ParameterError(f"contributions must be an integer >= 1, got {contributions!r}")
        self.contributions = int(contributions)
        if grid is None:
            span = float(upper) - float(lower)
            grid = 2.0 ** math.ceil(math.log2(max(span / DEFAULT_POINTS, 2.0 ** -1074)))
        self.lower, self.grid, self.n_points = lattice(lower, upper, grid)
        if (self.n_points + 1) << JITTER_BITS > 1 << 52:
            raise ParameterError("grid too fine for several quantiles: at most 2^36 points")
        self.upper = float(upper)
        self.depths = depths(len(self.levels))
        self.epsilon_step = self.epsilon / self.depths
        base_numerator(self.epsilon_step, self.contributions * SUB_DENOMINATOR)  # supported
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=0.0, notion="pure",
                         note=f"{len(self.levels)} quantiles: recursive exact exponential "
                              f"mechanisms, {self.depths} depths")

    def _step(self, level: Fraction) -> tuple[int, int, int]:
        """``(Q, D, p)`` of one single-quantile step at ``level``."""
        q = level.limit_denominator(SUB_DENOMINATOR)
        d_u = self.contributions * max(q.numerator, q.denominator - q.numerator, 1)
        return q.numerator, q.denominator, base_numerator(self.epsilon_step, d_u)

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> NDArray[np.float64]:
        idx = self.release_indices(true_value, rng)
        return self.lower + np.asarray(idx, dtype=np.float64) * self.grid

    def release_indices(self, values: ArrayLike, rng: RngLike = None) -> list[int]:
        """The released lattice indices (sorted)."""
        return self._release_sorted(snap(values, self.lower, self.grid, self.n_points), rng)

    def release_counts(self, index: ArrayLike, counts: ArrayLike, rng: RngLike = None
                       ) -> list[int]:
        """The released lattice indices (sorted) for data given as distinct lattice
        indices (increasing, in ``[0, N]``) with their row counts."""
        idx = np.repeat(np.asarray(index, dtype=np.int64), np.asarray(counts, dtype=np.int64))
        return self._release_sorted(idx, rng)

    def _release_sorted(self, idx: NDArray[np.int64], rng: RngLike) -> list[int]:
        words = WordStream(resolve_rng(rng), block=4096)
        jitter = words.take(idx.size)  # fresh words, never handed out again: shift in place
        jitter >>= np.uint64(64 - JITTER_BITS)
        fine = np.left_shift(idx, JITTER_BITS)
        fine += jitter.view(np.int64)  # < 2^16: the same value as a signed integer
        # idx is sorted, so fine is sorted but within runs of equal idx: a stable sort
        # (timsort) finishes nearly sorted data in about one pass (same result as any sort)
        rows = SortedRows.from_sorted(np.sort(fine, kind="stable"))
        top = ((self.n_points + 1) << JITTER_BITS) - 1
        out: list[int] = []
        self._recurse(words, rows, 0, rows.size, 0, top, self.levels, out)
        return sorted(j >> JITTER_BITS for j in out)

    def _recurse(self, words: WordStream, rows: SortedRows, a: int, b: int, lo: int, hi: int,
                 levels: list[Fraction], out: list[int]) -> None:
        """Release ``levels`` of the rows ``a..b`` of ``rows`` on the lattice ``[lo, hi]``:
        each step looks only at the rows between its released neighbours."""
        if not levels:
            return
        k = (len(levels) - 1) // 2
        q = levels[k]
        qn, qd, p = self._step(q)
        cutoff = smallest_power(hi - lo + 1, p, Fraction(1))
        v = lo + sample_step(words, rows, a, b, lo, hi - lo, qn, qd, p, cutoff)
        out.append(v)
        cut = rows.split(a, b, v)  # rows < v go left, rows >= v right
        self._recurse(words, rows, a, cut, lo, v, [r / q for r in levels[:k]], out)
        self._recurse(words, rows, cut, b, v, hi, [(r - q) / (1 - q) for r in levels[k + 1:]],
                      out)

    def rank_error(self, n: int, beta: float = 0.05) -> float:
        """Rows: with probability >= 1 − β every output's rank error is below this bound
        (public parameters and a public or noisy row count ``n``; see the module docstring):
        the largest of :meth:`rank_errors`."""
        return max(self.rank_errors(n, beta))

    def rank_errors(self, n: int, beta: float = 0.05) -> list[float]:
        """Rows, per level (increasing): with probability >= 1 − β, at once for all levels,
        output ``j``'s rank error is at most ``fixed_j + slope_j·n`` (see
        :meth:`rank_error_parts`)."""
        return [f + sl * n for f, sl in self.rank_error_parts(beta)]

    def rank_error_parts(self, beta: float = 0.05) -> list[tuple[float, float]]:
        """``(fixed, slope)`` per level (increasing): the sum over the steps on the level's
        recursion path of ``E_s/D̃_s + ln(2^17/β)`` (fixed) and ``e²·2^-16 + |q_s − q̃_s|``
        (per row of the data) -- ``E_s`` the smallest integer with ``points·b_s^E <=
        β/(2m)`` on the finest sub-lattice (every step's lattice has at most that many
        points); see the module docstring.  Public parameters only."""
        m = len(self.levels)
        points = (self.n_points + 1) << JITTER_BITS
        share = Fraction(beta) / (2 * m)
        tie_fixed = math.log(2.0 ** (JITTER_BITS + 1) / beta)
        tie_slope = math.e ** 2 * 2.0 ** -JITTER_BITS
        out = [(0.0, 0.0)] * m

        def walk(levels: list[Fraction], pos: list[int], above: tuple[float, float]) -> None:
            if not levels:
                return
            k = (len(levels) - 1) // 2
            q = levels[k]
            _, qd, p = self._step(q)
            rounding = abs(q - q.limit_denominator(SUB_DENOMINATOR))
            here = (above[0] + smallest_power(points, p, share) / qd + tie_fixed,
                    above[1] + tie_slope + math.nextafter(float(rounding), math.inf))
            out[pos[k]] = here
            walk([r / q for r in levels[:k]], pos[:k], here)
            walk([(r - q) / (1 - q) for r in levels[k + 1:]], pos[k + 1:], here)

        walk(list(self.levels), list(range(m)), (0.0, 0.0))
        return out

    @classmethod
    def half_width(cls, epsilon: float, *, levels: Any = (0.25, 0.5, 0.75), n: int = 10 ** 6,
                   lower: float = 0.0, upper: float = 1.0, grid: float | None = None,
                   contributions: int = 1, beta: float = 0.05) -> float:
        """The 95 % (``1 − β``) rank error half-width (rows) for all levels at once, a
        function of ε and public parameters only."""
        return cls(epsilon=epsilon, levels=levels, lower=lower, upper=upper, grid=grid,
                   contributions=contributions).rank_error(n, beta)

    def privacy_model(self) -> Any:
        """The first step's exact law on neighbouring data sets of a small lattice (the
        recursion composes such steps; each step is the single-quantile mechanism)."""
        from .interval_quantile import IntervalQuantile

        q = self.levels[(len(self.levels) - 1) // 2]
        return IntervalQuantile(epsilon=self.epsilon_step, level=q, lower=0.0,
                                upper=16.0, grid=1.0,
                                contributions=self.contributions).privacy_model()

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, 0.0, note="recursive exponential mechanisms "
                               "(pure eps-DP)")

    def noise(self, true_value: Any = None) -> Any:
        """The exact law of the first step's released index (see :meth:`privacy_model`)
        for data given as lattice indices of that step's 17-point lattice."""
        from .interval_quantile import IntervalQuantile

        q = self.levels[(len(self.levels) - 1) // 2]
        return IntervalQuantile(epsilon=self.epsilon_step, level=q, lower=0.0, upper=16.0,
                                grid=1.0, contributions=self.contributions).noise(true_value)

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        j = (y.astype(np.float64, copy=False) - self.lower) / self.grid
        return (j == np.floor(j)) & (j >= 0) & (j <= self.n_points)

    def __repr__(self) -> str:
        return (f"MultiQuantile(epsilon={self.epsilon!r}, levels="
                f"{[float(q) for q in self.levels]!r}, lower={self.lower!r}, "
                f"upper={self.upper!r}, grid={self.grid!r}, "
                f"contributions={self.contributions})")


__all__ = ["BASE_BITS", "MultiQuantile", "depths", "sorted_levels"]
