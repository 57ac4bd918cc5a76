"""A quantile at the data's resolution: the exponential mechanism over the lattice points
between the data, sampled exactly.

Setting.  Public: bounds ``[L, U]``, a power-of-two grid ``g`` (the lattice
``L + j g``, ``j = 0..N``, ``N = floor((U - L)/g)``), a level ``q = Q/D`` and the most rows
one person contributes, ``k``.  Each value is clamped into ``[L, U]`` and snapped to the
nearest lattice index (a fixed function of one row; NaN rows are dropped -- no error, no
message depends on the data).

Utility (McSherry and Talwar, "Mechanism design via differential privacy", FOCS 2007;
Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011;
the form of Gillenwater, Joseph and Kulesza, "Differentially private quantiles", ICML 2021,
Sec. 3): for a lattice point ``y`` with ``A(y) = #{x < y}``, ``B(y) = #{x <= y}``, ``n`` rows,

    d(y) = max(0, D·A(y) − Q·n, Q·n − D·B(y))   (the distance of the level from y's ranks),

zero at every empirical q-quantile.  Adding or removing one person (at most ``k`` rows)
moves ``A``, ``B`` and ``n`` by at most ``k`` each, so every ``d(y)`` by at most
``Δ = k·max(Q, D − Q)``.  The mechanism releases ``y`` with

    P(y) ∝ b^{d(y)},   b = p/2^24 >= e^{−ε/(2Δ)}  (p the smallest such integer),

so ``P(y | x)/P(y | x') <= b^{−2Δ} <= e^ε``: pure ε-DP (the realised loss
``2Δ ln(2^24/p)`` is recorded).  The factor 2 is not slack: the score is not monotone (an
added row raises the scores on one side of the level and lowers them on the other), and one
row added below data with a long empty stretch at the level's rank moves a log-probability
by more than ``0.98 ε`` (tests check it at q = 1/2 and q = 1/10).  ``Δ = k·max(Q, D − Q)``
is the sensitivity of the rank distance ``|rank − q n|`` scaled by ``D`` under adding or
removing rows -- the calibration of the exponential-mechanism quantiles of Tumult Core and
OpenDP (for data of unknown size) as well.

``d`` is constant on the runs of lattice points between consecutive distinct data values
and on each data value itself, so the law is a weighting of at most ``2n + 1`` pieces
(:func:`pieces`) by length x ``b^{d}`` -- sampled EXACTLY with integer arithmetic as
:func:`dpnoise.exact.exponential_pieces.sample_pieces` does (the piece by its weight, then a
uniform point in it), by the sliced step of :mod:`dpnoise.mechanisms.quantile_step`: the
same words and the same output without listing the pieces (the full arrays stay the
reference the tests compare with).

Accuracy (from public parameters only): some point has ``d = 0`` and at most ``N + 1``
points exist, so ``P(d(y) >= E) <= (N + 1) b^E``; with ``E`` the smallest integer with
``(N + 1) b^E <= β``, the release is, with probability >= 1 − β, an empirical p-quantile
for a ``p`` within ``E/(D n)`` of ``q`` (a rank error of at most ``E/D`` rows).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.exponential_pieces import BASE_BITS
from ..exact.words import WordStream
from ..params import check_epsilon
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .quantile_step import SortedRows, sample_step

#: largest denominator of a level
LEVEL_DENOMINATOR = 1 << 16
#: the lattice has at most this many points (indices fit a double exactly)
MAX_POINTS = 1 << 52
#: default lattice: the finest power of two giving at most this many points
DEFAULT_POINTS = 1 << 40


def exact_level(level: float | Fraction) -> Fraction:
    """The level as a fraction ``Q/D`` with ``D <= 2^16`` (a ParameterError outside [0, 1])."""
    try:
        q = Fraction(level).limit_denominator(LEVEL_DENOMINATOR)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"level must be a number in [0, 1], got {level!r}") from None
    if not 0 <= q <= 1:
        raise ParameterError(f"level must be in [0, 1], got {level!r}")
    return q


def default_grid(lower: float, upper: float) -> float:
    """The finest power of two giving at most ``DEFAULT_POINTS`` lattice points."""
    return 2.0 ** math.ceil(math.log2(max((upper - lower) / DEFAULT_POINTS, 2.0 ** -1074)))


def lattice(lower: float, upper: float, grid: float | None) -> tuple[float, float, int]:
    """Checked ``(lower, grid, N)``: points ``lower + j·grid``, ``j = 0..N``."""
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError(f"need finite lower < upper, got [{lower!r}, {upper!r}]")
    g = default_grid(lo, hi) if grid is None else float(grid)
    if not (g > 0 and math.isfinite(g) and math.frexp(g)[0] == 0.5):
        raise ParameterError(f"grid must be a power of two > 0, got {grid!r}")
    n = math.floor((Fraction(hi) - Fraction(lo)) / Fraction(g))
    if n + 1 > MAX_POINTS:
        raise ParameterError(f"the lattice [{lo}, {hi}] step {g} has {n + 1} points "
                             f"(more than 2^52): choose a coarser grid")
    return lo, g, n


@functools.lru_cache(maxsize=1024)
def base_numerator(epsilon: float, delta_u: int) -> int:
    """The smallest integer ``p`` with ``p/2^24 >= e^{−ε/(2Δ)}``."""
    with mpmath.workdps(60):
        p = int(mpmath.ceil(mpmath.exp(-mpmath.mpf(epsilon) / (2 * delta_u)) * 2 ** BASE_BITS))
    if p >= 1 << BASE_BITS:
        raise ParameterError(f"epsilon/(2·{delta_u}) = {epsilon / (2 * delta_u):.3g} is too "
                             "small for the exact base (below 2^-24): raise epsilon")
    return max(p, 1)


def smallest_power(points: int, p: int, target: Fraction) -> int:
    """The smallest ``E >= 0`` with ``points · (p/2^24)^E <= target``: from 60-digit logs
    (``E ln(2^24/p) >= ln(points/target)``), plus one for the last digits' doubt -- so
    the condition holds at the returned ``E`` (at most one above the smallest)."""
    with mpmath.workdps(60):
        need = mpmath.log(points) - mpmath.log(mpmath.mpf(target.numerator) / target.denominator)
        per = mpmath.log(mpmath.mpf(2) ** BASE_BITS / p)
        return max(0, int(mpmath.ceil(need / per)) + 1) if need > 0 else 0


def snap(values: ArrayLike, lower: float, grid: float, n_points: int) -> NDArray[np.int64]:
    """Sorted lattice indices of the non-NaN values, clamped into ``[0, N]``."""
    x = np.asarray(values, dtype=np.float64).ravel()
    nan = np.isnan(x)
    if nan.any():
        x = x[~nan]
    j = np.subtract(x, lower)
    np.divide(j, grid, out=j)
    np.rint(j, out=j)
    np.clip(j, 0, n_points, out=j)
    idx = j.astype(np.int64)
    idx.sort()
    return idx


def pieces(idx: NDArray[np.int64], n_points: int, q_num: int, q_den: int
           ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``(starts, lengths, d)``: the runs of the lattice ``0..N`` on which ``d`` is constant
    (before the first value, each distinct value, each gap after it)."""
    idx = np.asarray(idx, dtype=np.int64)
    if idx.size > 1 and bool(np.any(idx[1:] < idx[:-1])):
        idx = np.sort(idx)
    # the runs of equal indices of the sorted array (no second sort, unlike np.unique)
    first = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]]) if idx.size else idx
    counts = np.diff(np.r_[first, idx.size])
    return pieces_from_counts(idx[first], counts, n_points, q_num, q_den)


def pieces_from_counts(v: NDArray[np.int64], counts: NDArray[np.int64], n_points: int,
                       q_num: int, q_den: int
                       ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """:func:`pieces` from the distinct lattice indices ``v`` (increasing, in ``[0, N]``)
    and their row counts (``>= 1``)."""
    v = np.asarray(v, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    u = v.size
    upto = np.cumsum(counts)  # B at each value (A = B - count)
    n = int(upto[-1]) if u else 0
    # pieces: [0] before the first value, [1..u] each value, [u+1..2u] the gap after it
    starts = np.empty(2 * u + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:u + 1] = v
    np.add(v, 1, out=starts[u + 1:])
    lengths = np.ones(2 * u + 1, dtype=np.int64)
    lengths[0] = v[0] if u else n_points + 1
    if u:
        np.subtract(v[1:], v[:-1] + 1, out=lengths[u + 1:2 * u])
        lengths[2 * u] = n_points - v[-1]
    a = np.empty(2 * u + 1, dtype=np.int64)  # rows below the piece
    a[0] = 0
    np.subtract(upto, counts, out=a[1:u + 1])
    a[u + 1:] = upto
    qn = q_num * n
    # d = max(0, D·A − Q·n, Q·n − D·B); B = A except on a value's own piece (B = A + count)
    d = a * q_den
    d -= qn
    b_term = qn - q_den * a
    b_term[1:u + 1] -= q_den * counts
    np.maximum(d, b_term, out=d)
    np.maximum(d, 0, out=d)
    return starts, lengths, d


class IntervalQuantile(Mechanism):
    """The q-quantile by the exponential mechanism on the lattice between the data (see the
    module docstring).  ``release(values)`` returns one lattice point (a float).

    Supported: level a fraction with denominator <= 2^16; ε/(2Δ) >= 2^-24; at most 2^52
    lattice points; ``contributions`` (rows per person) an integer >= 1.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, level: float | Fraction, lower: float, upper: float,
                 grid: float | None = None, contributions: int = 1) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.level = exact_level(level)
        if int(contributions) != contributions or contributions < 1:
            raise ParameterError(f"contributions must be an integer >= 1, got {contributions!r}")
        self.contributions = int(contributions)
        self.lower, self.grid, self.n_points = lattice(lower, upper, grid)
        self.upper = float(upper)
        q, d = self.level.numerator, self.level.denominator
        self.delta_u = self.contributions * max(q, d - q, 1)
        self.p = base_numerator(self.epsilon, self.delta_u)
        #: the loss the sampled law realises (<= epsilon)
        self.epsilon_realised = math.nextafter(
            2 * self.delta_u * math.log(2 ** BASE_BITS / self.p), math.inf)
        self.cutoff = smallest_power(self.n_points + 1, self.p, Fraction(1))
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=0.0, notion="pure",
                         note="exponential mechanism over the lattice between the data, "
                              "exact dyadic base")

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> float:
        j = self.release_index(true_value, rng)
        return self.lower + j * self.grid

    def release_index(self, values: ArrayLike, rng: RngLike = None) -> int:
        """The released lattice index ``j`` (the value is ``lower + j·grid``)."""
        idx = snap(values, self.lower, self.grid, self.n_points)
        return self.release_rows(SortedRows.from_sorted(idx), rng)

    def release_counts(self, index: ArrayLike, counts: ArrayLike, rng: RngLike = None) -> int:
        """The released lattice index for data given as distinct lattice indices ``index``
        (increasing, in ``[0, N]``) with their row counts -- the same law as
        :meth:`release_index` on the rows these stand for."""
        return self.release_rows(SortedRows.from_counts(index, counts), rng)

    def release_rows(self, rows: SortedRows, rng: RngLike = None) -> int:
        """The released lattice index for the rows' distinct sorted lattice indices and
        cumulative counts: the law (and, under a seed, the draw) of
        :func:`~dpnoise.exact.exponential_pieces.sample_pieces` on :func:`pieces`, in
        ``O(log n + near pieces)`` operations (:mod:`dpnoise.mechanisms.quantile_step`)."""
        words = WordStream(resolve_rng(rng), block=4096)
        return sample_step(words, rows, 0, rows.size, 0, self.n_points, self.level.numerator,
                           self.level.denominator, self.p, self.cutoff)

    def rank_error(self, beta: float = 0.05) -> float:
        """Rows: with probability >= 1 − β the release is an empirical p-quantile with
        ``|p − q|·n <= rank_error`` (``E/D``; public parameters only)."""
        e = smallest_power(self.n_points + 1, self.p, Fraction(beta))
        return e / self.level.denominator

    @classmethod
    def half_width(cls, epsilon: float, *, level: float = 0.5, lower: float = 0.0,
                   upper: float = 1.0, grid: float | None = None, contributions: int = 1,
                   beta: float = 0.05) -> float:
        """The 95 % (``1 − β``) error half-width in ROWS of rank at ``epsilon``: a function
        of ε and the public parameters only (what an accuracy-first planner inverts)."""
        return cls(epsilon=epsilon, level=level, lower=lower, upper=upper, grid=grid,
                   contributions=contributions).rank_error(beta)

    # ---------------------------------------------------------------- the verifier's view
    def law_of(self, idx: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(j | data) for every lattice index, the data given as lattice indices --
        computed point by point from the definition (independent of :func:`pieces`)."""
        x = np.asarray(idx, dtype=np.int64)
        y = np.arange(self.n_points + 1)
        a = (x[None, :] < y[:, None]).sum(axis=1)
        b = (x[None, :] <= y[:, None]).sum(axis=1)
        qn = self.level.numerator * x.size
        dq = self.level.denominator
        d = np.maximum(0, np.maximum(dq * a - qn, qn - dq * b)).astype(np.float64)
        logw = d * math.log(self.p / 2 ** BASE_BITS)
        top = logw.max()
        return y, logw - (top + math.log(math.fsum(np.exp(logw - top).tolist())))

    def noise(self, true_value: Any = None) -> Any:
        """The exact law of the released index for data given as lattice indices (a tuple);
        None: the law on the empty data set (uniform)."""
        from .integers import IntegerLaw

        y, lp = self.law_of(tuple(true_value) if true_value is not None else ())
        return IntegerLaw(y, np.exp(lp))

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        j = (y.astype(np.float64, copy=False) - self.lower) / self.grid
        return (j == np.floor(j)) & (j >= 0) & (j <= self.n_points)

    def privacy_model(self) -> Any:
        """Exact laws on neighbouring data sets of a small lattice: a base data set and the
        same with up to ``contributions`` rows added (every placement of one added row)."""
        from ..verify import DiscreteFamily

        if self.n_points > 64:
            raise ParameterError("privacy_model enumerates the lattice: at most 65 points")
        top = self.n_points
        bases = [(), (top // 2,), (0, top), (1, 1, top - 1), (0, top // 2, top // 2, top)]
        pairs = []
        for base in bases:
            for add in range(top + 1):
                extra = (add,) * self.contributions
                pairs.append((base, tuple(sorted(base + extra))))
        return DiscreteFamily(inputs=[], sensitivity=1.0, law=self.law_of, pairs=pairs)

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, 0.0, note="exponential mechanism (pure eps-DP)")

    def __repr__(self) -> str:
        return (f"IntervalQuantile(epsilon={self.epsilon!r}, level={float(self.level)!r}, "
                f"lower={self.lower!r}, upper={self.upper!r}, grid={self.grid!r}, "
                f"contributions={self.contributions})")
