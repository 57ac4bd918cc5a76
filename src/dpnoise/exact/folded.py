"""Exact truncated (finite-support) block-geometric sampling by folding.

Let X >= 0 have the :class:`~dpnoise.exact.geometric.BlockGeometric` law
p(k) = 2^-(q+1)·W_r/2^64 (k = qM + r).  Then K = X mod n takes values 0..n−1 with

    p_n(j) = Σ_{i>=0} p(j + i·n).                                                (F)

For the ideal geometric p(k) ∝ 2^(-k/M) this is *exactly* the truncated geometric
p_n(j) ∝ 2^(-j/M) on {0..n−1} (every fold multiplies by the same 2^(-n/M)); for the
quantised table it is the mixture (F), which this module evaluates exactly enough
(relative error ~1e-15) to bound privacy:

* the step loss of p_n for a shift of s is <= that of p (mediant inequality: each
  term of (F) satisfies p(j+in) <= e^ℓ p(j+s+in)), and p_n is decreasing;
* the mass of the top s cells, P(K >= n − s), is a sum of interval masses of X,
  computed from exact integer cumulative weights (no cancellation).

Sampling uses the same two words per draw as BlockGeometric (sign + trailing zeros,
alias index) plus one integer remainder: no rejection, no loop whose length depends on
anything but a 2^-63 event, so the time taken does not depend on the noise or the input.

Folds: residues of j + i·n modulo M repeat with period P = M/gcd(n, M) in i while q
grows by n/gcd(n, M), so infinite fold sums are P-term sums divided by
1 − 2^(-n/gcd); when P is large only the first ~64·M/n folds matter and the rest is
bounded by the tail P(X >= I·n + j) (added to upper bounds).
"""

from __future__ import annotations

import ctypes
import math
from functools import cached_property, lru_cache
from itertools import accumulate
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..grid import round_half_up_inplace
from ..kernels import MIN_VALUES
from ..params import LN2
from ..randomness import RandomSource, fill_words
from .geometric import BlockGeometric, exact_inverse

_TOP = np.uint64(1 << 63)
_U63 = np.uint64(63)
_ONE = np.uint64(1)
_S63 = np.int64(63)
_MAX_INDEX = float(1 << 51)
_CHUNK = 1 << 14
_TWO64 = 2.0**64
TABLE_LIMIT = 1 << 22  # materialise p_n as an array up to this many cells
_QTAB = 128  # Q·M mod n table (Q >= 128 has probability 2^-128)


@lru_cache(maxsize=1)
def _folded_kernel() -> Any:
    """The compiled twin of the chunk body of :meth:`FoldedBlockGeometric.signed_odd`
    (``kernels/folded.c``), or None (kernels off): raw pointers, no per-call array checks."""
    from .. import kernels

    vp, i64, f64, u64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_uint64
    return kernels.function("dpk_folded_signed_odd",
                            [vp, i64, vp, vp, i64, u64, i64, vp, i64, vp, f64, f64, vp, vp],
                            i64)


class FoldedBlockGeometric:
    """K = X mod n with X ~ BlockGeometric(M): exact finite-support law on {0..n−1}."""

    def __init__(self, block: BlockGeometric, n: int) -> None:
        if not isinstance(n, int) or not 1 <= n < (1 << 50):
            raise ParameterError(f"support size n must be an integer in [1, 2^50), got {n!r}")
        self.block = block
        self.M = block.M
        self.n = n
        g = math.gcd(n, self.M)
        self.period = self.M // g  # P: folds per residue cycle
        self.cycle_halvings = n // g  # q advance per cycle
        self.folds = min(self.period, math.ceil(66 * self.M / n) + 2)
        self.exact_cycle = self.folds == self.period

    # ------------------------------------------------------------ exact weights
    @cached_property
    def _cum(self) -> NDArray[np.uint64]:
        """C_r = Σ_{r'<r} W_r' mod 2^64 for r = 0..M (C_M = 2^64 ≡ 0)."""
        w = self.block.table.exact_weights_array()
        if w.dtype == np.uint64:  # cumulative sums modulo 2^64, as uint64 arithmetic wraps
            return np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(w, dtype=np.uint64)])
        c = [0, *accumulate(self.block.weights)]  # a one-outcome table (weight 2^64)
        return np.array([x & ((1 << 64) - 1) for x in c], dtype=np.uint64)

    @cached_property
    def log_w(self) -> NDArray[np.float64]:
        """ln(W_r/2^64) (float conversion of the exact integers: error <= 1.2e-16)."""
        w = self.block.table.exact_weights_float()
        return np.log(w) - 64 * LN2

    def log_point(self, k: NDArray[np.int64]) -> NDArray[np.float64]:
        """ln p(k) of the unfolded law."""
        q, r = np.divmod(k, self.M)
        return -(q + 1) * LN2 + self.log_w[r]

    def log_interval(self, a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.float64]:
        """ln P(a <= X <= b) for 0 <= a <= b, as a sum of positive terms."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        M = self.M
        q1, r1 = np.divmod(a, M)
        q2, r2 = np.divmod(b, M)
        cum = self._cum
        same = q1 == q2
        d_same = (cum[r2 + 1] - cum[r1]).astype(np.float64) / _TWO64
        d_same = np.where(same & (r1 == 0) & (r2 == M - 1), 1.0, d_same)
        first = (np.uint64(0) - cum[r1]).astype(np.float64) / _TWO64
        first = np.where(r1 == 0, 1.0, first)
        last = cum[r2 + 1].astype(np.float64) / _TWO64
        last = np.where(r2 == M - 1, 1.0, last)
        gap = np.maximum(q2 - q1, 1).astype(np.float64)
        middle = -np.expm1(-(gap - 1) * LN2)  # Σ_{q1<q<q2} 2^-(q+1) / 2^-(q1+1)
        spread = first + middle + np.exp2(-gap) * last
        frac = np.where(same, d_same, spread)
        with np.errstate(divide="ignore"):
            return -(q1 + 1) * LN2 + np.log(frac)

    # ------------------------------------------------------------ folded law
    def _fold_offsets(self) -> NDArray[np.int64]:
        return np.arange(self.folds, dtype=np.int64) * self.n

    def _cycle_log_factor(self) -> float:
        """−ln(1 − 2^(-n/g)) when the fold sum covers a full residue cycle, else 0."""
        if not self.exact_cycle:
            return 0.0
        return -math.log(-math.expm1(-self.cycle_halvings * LN2))

    @cached_property
    def _one_fold(self) -> bool:
        """True when the folds i >= 1 of (F) cannot change the float ln p_n(j) of logpmf.

        For i >= 1, q(j + i·n) − q(j) >= ⌊n/M⌋, so p(j + i·n)/p(j) <= 2^-⌊n/M⌋·W_max/W_min.
        If that is below e^-40/folds (with a 10^-6 margin for the logs' float error),
        logpmf's row sum is 1.0 (the row maximum, fold 0, gives exp(0) = 1) plus at most
        e^-40 < 2^-53 of other terms, in whatever order they are added: it rounds to 1.0,
        its log is 0.0, and the row's value is ln p(j) exactly as computed by
        :meth:`log_point`.  Skipping the other folds then gives the same floats.
        """
        lw = self.log_w
        if not bool(np.all(np.isfinite(lw))):
            return False
        spread = float(lw.max() - lw.min())
        return -(self.n // self.M) * LN2 + spread + 1e-6 <= -40.0 - math.log(self.folds)

    def logpmf(self, j: ArrayLike) -> NDArray[np.float64]:
        """ln p_n(j) (−inf outside 0..n−1) by the fold sum (F) of point masses."""
        j = np.asarray(j, dtype=np.int64)
        inside = (j >= 0) & (j < self.n)
        jj = np.where(inside, j, 0).reshape(-1)
        out = np.empty(jj.size)
        if self._one_fold:  # the same floats as the fold sum below (see _one_fold)
            for s in range(0, jj.size, 1 << 20):  # chunks: small temporaries
                out[s : s + (1 << 20)] = self.log_point(jj[s : s + (1 << 20)])
            out += self._cycle_log_factor()
            out[~inside.reshape(-1)] = -np.inf
            return out.reshape(j.shape)
        step = max(1, (1 << 22) // self.folds)
        offs = self._fold_offsets()
        for s in range(0, jj.size, step):
            blk = jj[s : s + step]
            lp = self.log_point(blk[:, None] + offs[None, :])
            out[s : s + step] = _logsumexp_rows(lp)
        out += self._cycle_log_factor()
        return np.where(inside, out.reshape(j.shape), -np.inf)

    def log_sf(self, j: ArrayLike, *, upper: bool = False) -> NDArray[np.float64]:
        """ln P(K >= j) for 0 <= j <= n−1 via interval masses of X.

        ``upper=True`` adds the bound P(X >= folds·n + j) for neglected folds (a
        rigorous upper bound when the fold sum is truncated).
        """
        j = np.atleast_1d(np.asarray(j, dtype=np.int64)).reshape(-1)
        if np.any((j < 0) | (j >= self.n)):
            raise ParameterError("log_sf needs 0 <= j < n")
        out = np.empty(j.size)
        step = max(1, (1 << 22) // self.folds)
        offs = self._fold_offsets()
        for s in range(0, j.size, step):
            blk = j[s : s + step]
            a = blk[:, None] + offs[None, :]
            b = (self.n - 1) + offs[None, :] + 0 * a
            out[s : s + step] = _logsumexp_rows(self.log_interval(a, b))
        out += self._cycle_log_factor()
        if upper and not self.exact_cycle:
            k = self.folds * self.n + j
            tail = -(k // self.M) * LN2  # P(X >= k) <= 2^-floor(k/M)
            out = np.logaddexp(out, tail)
        return out

    def log_edge(self, s: int) -> float:
        """Upper bound on ln P(K >= n − s): the mass of the top s cells."""
        if not 1 <= s <= self.n:
            raise ParameterError("edge width must be in [1, n]")
        return float(self.log_sf(np.array([self.n - s]), upper=True)[0])

    def step_loss(self, s: int) -> float:
        """Upper bound on max_j ln p_n(j) − ln p_n(j+s), via the unfolded table."""
        n_full, rem = divmod(s, self.M)
        if rem == 0:
            return n_full * LN2
        lw = self.log_w
        diff = lw[: self.M - rem] - lw[rem:]
        wrap = lw[self.M - rem :] - (lw[: rem] - LN2)
        return n_full * LN2 + float(max(diff.max(), wrap.max()))

    @cached_property
    def table(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """(pmf, sf) arrays over 0..n−1 when n <= TABLE_LIMIT, else None."""
        if self.n > TABLE_LIMIT:
            return None
        lp = self.logpmf(np.arange(self.n, dtype=np.int64))
        pmf = np.exp(lp)
        sf = np.cumsum(pmf[::-1])[::-1]
        return pmf, sf

    def sf(self, j: ArrayLike) -> NDArray[np.float64]:
        """P(K >= j) for integer j (1 below 0, 0 above n−1)."""
        j = np.asarray(j, dtype=np.int64)
        jj = np.clip(j, 0, self.n - 1)
        tab = self.table
        val = tab[1][jj] if tab is not None else np.exp(self.log_sf(jj)).reshape(jj.shape)
        return np.where(j <= 0, 1.0, np.where(j >= self.n, 0.0, val))

    def half_moments(self) -> tuple[float, float]:
        """(E[K + 1/2], E[(K + 1/2)²]) for :class:`~dpnoise.laws.half_lattice.HalfLatticeLaw`."""
        return self.moments_half()

    def moments_half(self) -> tuple[float, float]:
        """(E[K + 1/2], E[(K + 1/2)²])."""
        tab = self.table
        if tab is not None:
            pmf = tab[0]
            v = np.arange(self.n) + 0.5
            return float(np.dot(pmf, v)), float(np.dot(pmf, v * v))
        # block sum: E f(K) = Σ_q 2^-(q+1) Σ_r w_r f((qM + r) mod n), q < 80 (rest < 2^-80)
        w = np.exp(self.log_w)
        r = np.arange(self.M, dtype=np.int64)
        m1 = m2 = 0.0
        for q in range(80):
            v = ((q * self.M + r) % self.n) + 0.5
            m1 += 2.0 ** -(q + 1) * float(np.dot(w, v))
            m2 += 2.0 ** -(q + 1) * float(np.dot(w, v * v))
        return m1, m2

    # ------------------------------------------------------------ sampling
    def signed_odd(
        self,
        rng: RandomSource,
        count: int,
        *,
        centre: NDArray[np.float64] | None = None,
        grid: float | None = None,
    ) -> NDArray[np.int64] | NDArray[np.float64]:
        """``count`` draws of 2Z = ±(2K + 1) (or the release (2c + 2Z)·grid/2 with centre).

        Word a: sign (bit 63) and Q = trailing zeros (Geometric(1/2)); word b: in-block
        index R by the alias table.  K = (Q·M + R) mod n, computed without a division as
        ((Q·M mod n) from a 128-entry table) + (R mod n), minus n once if >= n.
        Chunked, preallocated buffers, ``take(mode="wrap")`` gathers (all indices are in
        range by construction).

        Long on purpose: the compiled kernel and its numpy reference share the chunk loop and its
        preallocated buffers (one allocation per call, not per chunk).
        """
        table = self.block.table
        chunk = min(count, _CHUNK) if count > 0 else 1
        release = centre is not None
        if release and grid is None:
            raise ParameterError("grid is required with centre")
        if release and count:  # |x/L| < 2^51 keeps every float step exact; refuses NaN too
            biggest = max(-float(centre.min()), float(centre.max()))
            if not biggest < _MAX_INDEX * grid:
                raise PrecisionError(
                    f"true value too large for the grid step {grid!r}: |true_value| must be "
                    f"< 2^51 * grid = {_MAX_INDEX * grid:g}; choose a coarser grid")
        out: NDArray[np.int64] | NDArray[np.float64]
        out = np.empty(count, dtype=np.float64 if release else np.int64)
        words = np.empty(2 * chunk + 8, dtype=np.uint64)
        u1 = np.empty(chunk, dtype=np.uint64)
        u2 = np.empty(chunk, dtype=np.uint64)
        u3 = np.empty(chunk, dtype=np.uint64)
        i1 = np.empty(chunk, dtype=np.int64)
        i2 = np.empty(chunk, dtype=np.int64)
        flag = np.empty(chunk, dtype=bool)
        if table.mass > (1 << 63):  # pragma: no cover - tables have >= 2 columns
            raise ParameterError("alias table needs at least 2 columns")
        scaled = np.empty(chunk, dtype=np.float64)
        work = np.empty(chunk, dtype=np.float64)
        n_int = self.n
        qm_mod = np.array([(q * self.M) % n_int for q in range(_QTAB)], dtype=np.int64)
        # [column r | alias of column r], reduced mod n (R may exceed n on tiny supports)
        pick = np.concatenate([np.arange(table.columns, dtype=np.int64), table._alias]) % n_int
        col_bits = np.uint64(table.bits)
        thr = table._thr
        col_shift = np.uint64(64 - table.bits)
        thr_mask = np.uint64(table.mass - 1)
        n = np.int64(n_int)
        kern = _folded_kernel() if count >= MIN_VALUES else None  # module-level: picklable
        if kern is not None and release and not exact_inverse(grid):
            kern = None  # not a power of two (callers check; the reference copes anyway)
        if kern is not None:  # raw addresses for the compiled chunk body (same words, same K)
            p_words, p_thr, p_pick, p_qm = (words.ctypes.data, thr.ctypes.data,
                                            pick.ctypes.data, qm_mod.ctypes.data)
            p_out = out.ctypes.data
            if release:  # the numpy reference accepts any real array; the kernel needs this
                centre = np.ascontiguousarray(centre, dtype=np.float64)
            p_centre = centre.ctypes.data if release else None
            half, inv = (grid / 2, 1.0 / grid) if release else (0.0, 1.0)
        for start in range(0, count, chunk):
            c = min(chunk, count - start)
            fill_words(rng, words, 2 * c)
            if kern is not None and kern(
                    p_words, c, p_thr, p_pick, int(col_shift), int(thr_mask), table.columns,
                    p_qm, n_int, p_centre + 8 * start if release else None, inv, half,
                    p_out + 8 * start if release else None,
                    None if release else p_out + 8 * start) == 0:
                continue  # else (Q = 63 somewhere, p = 2^-63 per value): the reference below
            a, b = words[:c], words[c : 2 * c]
            lo, t, th, K, R, kp = u1[:c], u2[:c], u3[:c], i1[:c], i2[:c], flag[:c]
            # Q = trailing zeros of (a | 2^63): ctz of the low 63 bits, 63 if they are 0
            np.bitwise_or(a, _TOP, out=lo)
            np.negative(lo, out=t)
            np.bitwise_and(lo, t, out=lo)
            np.subtract(lo, _ONE, out=lo)
            np.bitwise_count(lo, out=lo)  # in place: counts <= 63
            Q = lo.view(np.int64)
            if Q.max() >= 63:  # probability 2^-63 per draw: extend the count exactly
                BlockGeometric._extend_counts(rng, a, Q)
            # Q·M mod n from the table (Q >= 128 only after an extension, ~2^-63)
            if Q.max() >= _QTAB:
                big = Q >= _QTAB
                qbig = Q[big].copy()
                Q[big] = 0
                np.take(qm_mod, Q, out=K, mode="wrap")
                K[big] = (qbig * self.M) % n_int
            else:
                np.take(qm_mod, Q, out=K, mode="wrap")
            # R from the alias table: column = top bits of b, threshold = low bits; the
            # choice "alias if low >= thr[col]" is branch-free: low − thr wraps below 0 iff
            # low < thr (both < 2^63), so bit 63 of the difference selects the half of the
            # concatenated table [columns | aliases] (one gather, no masked copy)
            np.right_shift(b, col_shift, out=t)
            np.bitwise_and(b, thr_mask, out=lo)
            np.take(thr, t.view(np.int64), out=th, mode="wrap")
            np.subtract(lo, th, out=lo)
            np.right_shift(lo, _U63, out=lo)
            np.bitwise_xor(lo, _ONE, out=lo)
            np.left_shift(lo, col_bits, out=lo)
            np.bitwise_or(lo, t, out=lo)
            np.take(pick, lo.view(np.int64), out=R, mode="wrap")
            # K = (Q·M mod n) + (R mod n), folded once into [0, n)
            np.add(K, R, out=K)
            np.greater_equal(K, n, out=kp)
            np.subtract(K, n, out=K, where=kp)
            # 2Z = ±(2K + 1), sign from bit 63 of a applied as (v ^ s) − s
            np.left_shift(K, 1, out=K)
            np.bitwise_or(K, 1, out=K)
            np.right_shift(a.view(np.int64), _S63, out=R)
            np.bitwise_xor(K, R, out=K)
            np.subtract(K, R, out=K)
            if release:
                x = scaled[:c]
                np.divide(centre[start : start + c], grid, out=x)  # exact: grid = 2^j
                round_half_up_inplace(x, work[:c])  # exact index floor(x/L + 1/2)
                R[:] = x
                np.left_shift(R, 1, out=R)
                np.add(K, R, out=K)  # |2c| <= 2^52, |2Z| < 2^51 (n < 2^50): exact below 2^53
                np.multiply(K, grid / 2, out=out[start : start + c])
            else:
                out[start : start + c] = K
        return out


def _logsumexp_rows(lp: NDArray[np.float64]) -> NDArray[np.float64]:
    m = lp.max(axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(lp - safe[:, None]).sum(axis=1))
