"""Optimal data-independent noise (paper 004): the staircase mechanism, exact on a grid.

The ideal law (:mod:`dpnoise.staircase_law`, corrected Theorem 9 of paper 004, spec §3)
has density M0 on the plateau |x| <= d and M0·e^(−ε(k+1)) on the k-th step of width Δ.
It is a mixture: step index k ~ Geometric (ratio e^(−ε)), then a cell inside the period
[kΔ, (k+1)Δ) whose inner part [kΔ, kΔ + d) has weight 1 and outer part weight e^(−ε),
uniform within each part (spec §5 step 5).

What :class:`Staircase` releases -- the same construction on a power-of-two grid, drawn
exactly from random words with integer arithmetic:

1.  Grid L = 2^j (default: power of two <= Δ/4096, coarser for tiny ε).  The true value
    maps exactly to c = floor(x/L + 1/2); neighbours move c by at most S = ceil(Δ/L)
    cells (``lattice.grid_sensitivity``).  One *step* of the staircase is S cells wide
    (continuous-equivalent width S·L >= Δ, inflation <= L/Δ), the plateau half-width is
    G = round(γS) cells.
2.  Output c·L + Z·L with Z = ±(K + 1/2) (half-offset grid, as :class:`Laplace`), where
    the magnitude cell K = k·S + j:  k ~ :class:`RatioGeometric` (p(k) ∝ 2^(−a·k/M),
    two words) and j from a 64-bit alias table over the S cells of one period with
    weights ∝ 1 (j < G) and 2^(−a/M) (j >= G) (one word); sign from bit 63.  Three words
    per draw, no loops, no dependence of the work on the true value.
3.  Levels: cell K is at level 0 if K < G, else 1 + floor((K − G)/S).  A shift of at most
    S cells changes the level by at most 1 (also across zero), so the loss of the ideal
    pmf is a·ln2/M.  Calibration picks the largest a/M (M small) and then computes the
    EXACT loss of the quantised pmf from the integer tables (``exact_loss``); it must be
    <= ε − 1e-12.  ``dpnoise.verify`` recomputes it independently as an
    :class:`~dpnoise.verify.AdditiveLattice` (period M·S).

Errata honoured (spec 004 §3/§7): Thm 9 off by one (first step outside the plateau is
M0·e^(−ε)); γ = 0 and γ = 1 are the same law; the closed-form variance optimum cancels
for small ε, so ε < 0.1 uses the series.  The paper's proof assumes symmetric noise.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..exact.alias import AliasTable, quantize_weights
from ..exact.ratio_geometric import LN2, MAX_SPAN_BITS, RatioGeometric, ratio_candidates
from ..lattice import check_grid, grid_sensitivity, power_of_two_at_most, to_index
from ..params import check_epsilon, check_sensitivity, check_values
from ..randomness import RandomSource, RngLike, fill_words, resolve_rng
from ..staircase_law import CRITERIA, StaircaseDensity, check_level, optimal_gamma
from .base import Guarantee, Mechanism, as_output

ROUNDING_ALLOWANCE = 1e-12
MAX_EPSILON = 20.0  # e^-ε per cell must stay far above 2^-64 / S in the 64-bit tables
DEFAULT_GRID_BITS = 12
MAX_PERIOD_CELLS = 1 << 20  # M·S: keeps tables and the verifier's window small
_CHUNK = 1 << 14
_EXACT = 1 << 53
_MAX_INDEX = float(1 << 51)


def default_grid(sensitivity: float, epsilon: float) -> float:
    """Power of two <= Δ/2^k: k = 12, fewer bits for tiny ε (so M·S stays <= 2^20)."""
    k = DEFAULT_GRID_BITS
    while k > 2 and (2 << k) * max(1.0, 32 * LN2 / epsilon) > MAX_PERIOD_CELLS:
        k -= 1
    return power_of_two_at_most(sensitivity) / 2.0**k


class LatticeStaircase:
    """The exact sampled law: magnitude cell K = k·S + j, pmf P_k(k)·P_j(j), fair sign."""

    def __init__(self, geo: RatioGeometric, S: int, G: int) -> None:
        if not (isinstance(S, int) and S >= 1 and 0 <= G <= S):
            raise ParameterError(f"need S >= 1 and 0 <= G <= S, got S={S}, G={G}")
        self.geo = geo
        self.S = S
        self.G = G
        w = np.where(np.arange(S) < G, 1.0, math.exp(-geo.inner))
        self.cell_table = AliasTable(quantize_weights(w))

    # ------------------------------------------------------------ exact pmf
    @cached_property
    def cell_weights(self) -> list[int]:
        return self.cell_table.exact_weights()

    @cached_property
    def cell_log(self) -> NDArray[np.float64]:
        return np.array([math.log(w) - 64 * LN2 if w else -math.inf for w in self.cell_weights])

    @cached_property
    def cell_tail(self) -> NDArray[np.float64]:
        """P(j >= t) for t = 0..S (exact integer sums, one rounding)."""
        acc = 0
        out = [0.0] * (self.S + 1)
        for t in range(self.S - 1, -1, -1):
            acc += self.cell_weights[t]
            out[t] = acc / 2.0**64
        return np.array(out)

    def log_magnitude(self, K: ArrayLike) -> NDArray[np.float64]:
        """ln P(|Z| = K + 1/2) (both signs together)."""
        K = np.asarray(K, dtype=np.int64)
        k, j = np.divmod(np.maximum(K, 0), self.S)
        out = self.geo.logpmf(k) + self.cell_log[j]
        return np.where(K < 0, -np.inf, out)

    def logpmf_cells(self, z: ArrayLike) -> NDArray[np.float64]:
        """ln P(2Z = z) for odd integers z = ±(2K+1) (−inf for even z)."""
        z = np.asarray(z, dtype=np.int64)
        K = (np.abs(z) - 1) // 2
        out = self.log_magnitude(K) - LN2
        return np.where(z % 2 == 1, out, -np.inf)

    def magnitude_sf(self, K: ArrayLike) -> NDArray[np.float64]:
        """P(K' >= K) = P(k > k0) + P(k = k0) P(j >= j0), K = k0·S + j0."""
        K = np.asarray(K, dtype=np.int64)
        k0, j0 = np.divmod(np.maximum(K, 0), self.S)
        out = self.geo.sf(k0 + 1) + self.geo.pmf(k0) * self.cell_tail[j0]
        return np.where(K <= 0, 1.0, out)

    @cached_property
    def cell_moments(self) -> tuple[float, float]:
        """(E[j + 1/2], E[(j + 1/2)^2]) exactly."""
        with mpmath.workdps(40):
            tot = mpmath.mpf(2) ** 64
            m1 = mpmath.fsum(mpmath.mpf(w) * (t + mpmath.mpf(0.5))
                             for t, w in enumerate(self.cell_weights)) / tot
            m2 = mpmath.fsum(mpmath.mpf(w) * (t + mpmath.mpf(0.5)) ** 2
                             for t, w in enumerate(self.cell_weights)) / tot
            return float(m1), float(m2)

    def second_moment(self) -> float:
        """E[(K + 1/2)^2] in cells."""
        ek, ek2 = self.geo.moments
        m1, m2 = self.cell_moments
        S = self.S
        return S * S * ek2 + 2 * S * ek * m1 + m2

    def first_moment(self) -> float:
        """E[K + 1/2] in cells."""
        ek, _ = self.geo.moments
        return self.S * ek + self.cell_moments[0]

    # --------------------------------------------------------- exact loss
    @cached_property
    def exact_loss(self) -> float:
        """max over lattice points at distance <= S of |ln p − ln p'|, from the tables.

        Pairs on the same step (or across zero, both in step 0): any two cells j, j' of
        the period -> A = max ln P_j − min ln P_j.  Pairs on consecutive steps:
        K = kS + j, K' = (k+1)S + j' with j' <= j; k and (j, j') vary independently, so
        the worst is max_k D_k + max_{j'<=j} (ln P_j(j) − ln P_j(j')) and its mirror.
        """
        lw = self.cell_log[np.isfinite(self.cell_log)]
        cl = self.cell_log
        finite = np.isfinite(cl)
        if not finite.all():  # a zero-weight cell would be an impossible output
            return math.inf
        A = float(lw.max() - lw.min())
        pre_min = np.minimum.accumulate(cl)  # min over j' <= j
        pre_max = np.maximum.accumulate(cl)
        up = float(np.max(cl - pre_min))  # max_{j'<=j} lnP(j) − lnP(j')
        down = float(np.max(pre_max - cl))  # max_{j'<=j} lnP(j') − lnP(j)
        D = self.geo.step_log_ratios
        return max(A, float(D.max()) + up, float(-D.min()) + down)

    # ------------------------------------------------------------ sampling
    def signed_odd(
        self,
        rng: RandomSource,
        n: int,
        *,
        centre: NDArray[np.float64] | None = None,
        grid: float | None = None,
    ) -> NDArray[np.int64] | NDArray[np.float64]:
        """n draws of 2Z = ±(2K+1); with ``centre`` and ``grid``, the release (2c + 2Z)·L/2.

        Per draw: word a -> sign (bit 63) and Q = floor(T/a), T = trailing zeros of the
        low 63 bits; word b -> R (alias over the block); word c -> j (alias over the
        S cells of a period).  2K + 1 = Q·2MS + R·2S + (2j + 1).  Chunked, preallocated.
        """
        geo, cells = self.geo, self.cell_table
        rt = geo.table
        S, M = self.S, geo.M
        chunk = min(n, _CHUNK) if n > 0 else 1
        release = centre is not None
        if release and grid is None:
            raise ParameterError("grid is required with centre")
        out: NDArray[Any] = np.empty(n, dtype=np.float64 if release else np.int64)
        words = np.empty(3 * chunk + 8, dtype=np.uint64)
        t64 = np.empty(chunk, dtype=np.uint64)
        lo = np.empty(chunk, dtype=np.uint64)
        col = np.empty(chunk, dtype=np.intp)
        keep = np.empty(chunk, dtype=bool)
        K = np.empty(chunk, dtype=np.int64)
        part = np.empty(chunk, dtype=np.int64)
        sgn = np.empty(chunk, dtype=np.int64)
        xs = np.empty(chunk, dtype=np.float64)
        ci = np.empty(chunk, dtype=np.int64)
        q2 = geo.q_of_t * (2 * M * S)
        r_col = 2 * S * np.arange(rt.columns, dtype=np.int64)
        r_alias = 2 * S * rt._alias
        r_shift, r_mask, r_thr = np.uint64(64 - rt.bits), np.uint64(rt.mass - 1), rt._thr
        j_col = 2 * np.arange(cells.columns, dtype=np.int64) + 1
        j_alias = 2 * cells._alias + 1
        j_shift, j_mask, j_thr = np.uint64(64 - cells.bits), np.uint64(cells.mass - 1), cells._thr
        s63 = np.int64(63)
        for start in range(0, n, chunk):
            c = min(chunk, n - start)
            fill_words(rng, words, 3 * c)
            a, b, w = words[:c], words[c : 2 * c], words[2 * c : 3 * c]
            t, lw, cl, kp, KK, P, SG = t64[:c], lo[:c], col[:c], keep[:c], K[:c], part[:c], sgn[:c]
            # T = trailing zeros of (a | 2^63); Q·2MS by table lookup
            np.bitwise_or(a, np.uint64(1 << 63), out=lw)
            np.negative(lw, out=t)
            np.bitwise_and(lw, t, out=lw)
            np.subtract(lw, np.uint64(1), out=lw)
            KK[:] = np.bitwise_count(lw)
            if KK.max() >= 63:  # probability 2^-63 per draw: exact extension
                KK[:] = geo.q_from_words(rng, a) * (2 * M * S)
            else:
                np.take(q2, KK, out=KK)
            # R (block alias) -> 2RS
            np.right_shift(b, r_shift, out=t)
            cl[:] = t
            np.bitwise_and(b, r_mask, out=t)
            np.less(t, r_thr[cl], out=kp)
            np.take(r_col, cl, out=P)
            np.logical_not(kp, out=kp)
            np.copyto(P, r_alias[cl], where=kp)
            np.add(KK, P, out=KK)
            # j (cell alias) -> 2j + 1
            np.right_shift(w, j_shift, out=t)
            cl[:] = t
            np.bitwise_and(w, j_mask, out=t)
            np.less(t, j_thr[cl], out=kp)
            np.take(j_col, cl, out=P)
            np.logical_not(kp, out=kp)
            np.copyto(P, j_alias[cl], where=kp)
            np.add(KK, P, out=KK)
            # sign from bit 63 of a: s in {0, -1}, applied as (x ^ s) - s
            np.right_shift(a.view(np.int64), s63, out=SG)
            np.bitwise_xor(KK, SG, out=KK)
            np.subtract(KK, SG, out=KK)
            if release:
                x, cc = xs[:c], ci[:c]
                np.divide(centre[start : start + c], grid, out=x)  # exact: L = 2^j
                np.add(x, 0.5, out=x)
                np.floor(x, out=x)
                if np.abs(x).max() >= _MAX_INDEX:
                    raise PrecisionError(
                        f"true value too large for grid step {grid!r}: need |x| < 2^51 * grid"
                    )
                cc[:] = x
                np.add(cc, cc, out=cc)
                np.add(KK, cc, out=KK)
                if np.abs(KK).max() >= _EXACT:
                    raise PrecisionError("release fell outside the exactly representable range")
                np.multiply(KK, grid / 2, out=out[start : start + c])
            else:
                out[start : start + c] = KK
        return out


class LatticeStaircaseNoise:
    """Exact law of the release c·L + Z·L of :class:`Staircase` (scipy.stats-like)."""

    def __init__(self, law: LatticeStaircase, grid: float, center: float = 0.0) -> None:
        self.law = law
        self.grid = grid
        self.center = center

    def _cells(self, y: ArrayLike) -> NDArray[np.float64]:
        return (np.asarray(y, dtype=np.float64) - self.center) / self.grid

    def logpmf(self, y: ArrayLike) -> NDArray[np.float64]:
        u = self._cells(y)
        on = np.floor(u) + 0.5 == u
        K = np.floor(np.abs(u)).astype(np.int64)
        return np.where(on, self.law.log_magnitude(K) - LN2, -np.inf)

    def pmf(self, y: ArrayLike) -> NDArray[np.float64]:
        return np.exp(self.logpmf(y))

    def cdf(self, y: ArrayLike) -> NDArray[np.float64]:
        u = self._cells(y)
        kpos = np.floor(u - 0.5).astype(np.int64) + 1  # first K with K + 1/2 > u
        kneg = np.ceil(-u - 0.5).astype(np.int64)  # first K with K + 1/2 >= -u
        upper = 1.0 - 0.5 * self.law.magnitude_sf(kpos)
        lower = 0.5 * self.law.magnitude_sf(kneg)
        return np.where(u >= 0, upper, lower)

    def sf(self, y: ArrayLike) -> NDArray[np.float64]:
        return 1.0 - self.cdf(y)

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        """Smallest lattice point y with cdf(y) >= q (vectorised bisection)."""
        q = np.asarray(q, dtype=np.float64)
        if np.any((q < 0) | (q > 1)) or np.any(np.isnan(q)):
            raise ParameterError("q must be in [0, 1]")
        lo = np.full(q.shape, -(1 << 45), dtype=np.int64)
        hi = np.full(q.shape, 1 << 45, dtype=np.int64)
        for _ in range(47):
            mid = (lo + hi) // 2
            ok = self.cdf(self.center + (mid + 0.5) * self.grid) >= q
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return self.center + (hi + 0.5) * self.grid

    def mean(self) -> float:
        return self.center

    def var(self) -> float:
        return self.grid**2 * self.law.second_moment()

    def std(self) -> float:
        return math.sqrt(self.var())

    def mean_abs(self) -> float:
        return self.grid * self.law.first_moment()

    def interval(self, level: float) -> tuple[float, float]:
        a = (1 - check_level(level)) / 2
        return float(self.ppf(a)), float(self.ppf(1 - a))


def calibrate(epsilon: float, S: int, G: int) -> LatticeStaircase:
    """Steepest block law (a, M, in-block decay ≈ ε) whose exact loss is <= ε − 1e-12.

    In-block steps decay at ε (less the measured 64-bit quantisation excess), the
    block boundary at a·ln2 − (M−1)·ε; M·S <= 2^20.
    """
    max_block = max(1, MAX_PERIOD_CELLS // S)
    inner = epsilon * (1 - 1e-12)
    for a, M in ratio_candidates(epsilon / LN2, max_block)[:200]:
        if (M - 1) * inner > MAX_SPAN_BITS * LN2:
            continue
        e_in = min(inner, a * LN2 / max(M - 1, 1)) if M > 1 else inner
        for _ in range(4):  # shave the in-block decay by the measured quantisation excess
            try:
                law = LatticeStaircase(RatioGeometric(a, M, e_in), S, G)
            except ParameterError:
                break
            loss = law.exact_loss
            if loss + ROUNDING_ALLOWANCE <= epsilon:
                return law
            if not math.isfinite(loss):
                break
            e_in -= 2 * (loss + ROUNDING_ALLOWANCE - epsilon)
    raise ParameterError(f"could not calibrate the staircase for epsilon={epsilon!r}")


class Staircase(Mechanism):
    """Optimal data-independent ε-DP noise (paper 004), exact on a power-of-two grid.

    ``criterion`` picks the member of the optimal family: "variance" (default),
    "mean_abs" or "interval" (shortest symmetric interval at ``level``).

    >>> m = Staircase(epsilon=1.0, sensitivity=1.0)
    >>> round(m.ideal.var(), 4)
    1.9181
    """

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        criterion: str = "variance",
        level: float = 0.95,
        grid: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon, upper=MAX_EPSILON)
        self.sensitivity = check_sensitivity(sensitivity)
        if criterion not in CRITERIA:
            raise ParameterError(f"criterion must be one of {', '.join(CRITERIA)}, "
                                 f"got {criterion!r}")
        self.criterion = criterion
        self.level = check_level(level)
        self.gamma = optimal_gamma(self.epsilon, criterion, self.level)
        self.grid = (default_grid(self.sensitivity, self.epsilon) if grid is None
                     else check_grid(grid))
        self.shift_steps = grid_sensitivity(self.sensitivity, self.grid)
        S = self.shift_steps
        if S > MAX_PERIOD_CELLS:
            raise ParameterError(f"grid={self.grid!r} is too fine: sensitivity/grid must be "
                                 f"<= {MAX_PERIOD_CELLS}")
        # γ = 0 and γ = 1 are the same law (spec §3); a tiny γ > 0 keeps one plateau cell
        G = S if self.gamma == 0 else min(S, max(1, round(self.gamma * S)))
        self.plateau_cells = G
        self.law = calibrate(self.epsilon, S, self.plateau_cells)
        self._freeze()

    # ------------------------------------------------------------ calibration
    @property
    def ideal(self) -> StaircaseDensity:
        """The real-valued optimal law this mechanism approximates (for utility tables)."""
        return StaircaseDensity(epsilon=self.epsilon, sensitivity=self.sensitivity,
                                gamma=self.gamma)

    @property
    def effective_epsilon(self) -> float:
        """a·ln2/M: the per-step decay actually used (<= ε)."""
        return self.law.geo.decay

    @cached_property
    def exact_loss(self) -> float:
        return self.law.exact_loss

    @property
    def guarantee(self) -> Guarantee:
        geo = self.law.geo
        return Guarantee(
            epsilon=self.epsilon,
            delta=0.0,
            notion="pure",
            note="exact lattice staircase: no finite-precision degradation",
            details={
                "grid": self.grid,
                "shift_steps": self.shift_steps,
                "plateau_cells": self.plateau_cells,
                "ratio_a": geo.a,
                "ratio_M": geo.M,
                "effective_epsilon": geo.decay,
                "exact_loss": self.exact_loss,
                "criterion": self.criterion,
                "gamma": self.gamma,
            },
        )

    # ---------------------------------------------------------------- release
    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        values = check_values("true_value", true_value)
        flat = np.ascontiguousarray(values.reshape(-1))
        source = resolve_rng(rng)
        out = self.law.signed_odd(source, flat.size, centre=flat, grid=self.grid)
        return as_output(out.reshape(values.shape), true_value)

    def noise(self, true_value: float | None = None) -> LatticeStaircaseNoise:
        if true_value is None:
            return LatticeStaircaseNoise(self.law, self.grid, 0.0)
        x = check_values("true_value", true_value)
        c = float(to_index(x.reshape(-1), self.grid)[0]) * self.grid
        return LatticeStaircaseNoise(self.law, self.grid, c)

    def privacy_model(self) -> Any:
        from ..verify import AdditiveLattice

        law = self.law
        return AdditiveLattice(
            logpmf=lambda z: law.log_magnitude(np.where(z >= 0, z, -z - 1)) - LN2,
            max_shift=self.shift_steps,
            period=law.geo.M * law.S,
        )

    def __repr__(self) -> str:
        return (f"Staircase(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"criterion={self.criterion!r}, grid={self.grid!r})")
