"""Exact sampler of the truncated-and-normalised discrete Laplace on a convex domain (an
interval, a half-line or the line): ONE sampler for every true value -- no per-centre table,
no cache, the same operations whatever the centre -- vectorised in fixed-size chunks, with a
pure-Python path for one value that draws the same words and samples the same law.

Notation as in :mod:`dpnoise.exact.range_lattice`: cells j (y_j = (j + 1/2)L) in
[jlo, jhi], centre index c, block length M.  Seen from c there are n_L = c − jlo cells on the
left and n_R = jhi + 1 − c on the right (∞ on an unbounded side).  Each draw reads three
64-bit words w0, w1, w2:

1. **side**: right iff ``(w0 >> 1) < T(c)`` with ``T(c) = rint(2^63 · e_R / (e_L + e_R))``,
   ``e_s = 1 − 2^(−n'_s/M)``, ``n'_s = min(n_s, 64·M)`` (∞ -> 64·M).  e is evaluated from
   per-M tables built at construction in a fixed sequence of IEEE-754 operations,
   ``n' = m·M + t``, ``e = E[t] + A[t]·K[m]`` with E[t] = −expm1(−t·ln2/M), A[t] = 2^(−t/M),
   K[m] = 1 − 2^(−m): the same float in numpy and in Python, so P(right) = T(c)/2^63 is one
   exactly known dyadic number per centre.
2. **offset** k = i·M + r from the *untruncated* block law ``P̃(k) = 2^(−i−1)·W_r/2^64``:
   r by exact inverse CDF of the block weights W (word w1, guide table), i = number of
   trailing zeros of w2 (exact Geometric(1/2); a zero word continues with fresh words, an
   event of probability 2^-64 whatever the centre).  Nothing here depends on c.
3. **fold**: ``k <- k mod n_s`` (an unbounded side has no fold; its k < 2^51 is checked).
   The folded law is ``Q_n(k') = Σ_{a>=0} P̃(k' + a·n)`` for k' < n.  For the ideal
   geometric law the fold is exact truncation (memorylessness: Σ_a ρ^(k'+an) ∝ ρ^k'), and
   since P̃(k + M) = P̃(k)/2, Q_n(k' + M) = Q_n(k')/2: the lattice law keeps period M.

The released cell is j = c + k (right) or c − 1 − k (left).

**Distortion** against the ideal lattice law P_true(j|c) ∝ 2^(−k/M)
(:func:`convex_distortion_bound`): every term of Q_n is within e^(±ρ_w) of the ideal term
(ρ_w: the block weights' shape error, :attr:`BlockWeights.rho_w`), hence so is the folded
sum; the side probability adds at most M·2^-45 (E, A accurate to <= 3 ulp, e to <= 6,
e_R/(e_L + e_R) to <= 16 ulp relative; T's rounding <= 2^-64; the clip at 64 blocks
<= 2^-63 relative; each divided by the smaller side probability >= 0.17/M).  That is below
:func:`~dpnoise.exact.range_lattice.distortion_bound` (M, 0), which the calibration charges
twice, so the calibrated ε covers this sampler (a test compares the exact pmf with P_true).

Timing (docs/timing.md): the sequence of operations and the number of words are the same for
every centre; only table addresses and the integer division's operands depend on the value.
"""

from __future__ import annotations

import bisect
import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError, PrecisionError
from ..params import LN2
from ..randomness import RandomSource, fill_words
from .range_lattice import (
    DyadicTable,
    GridDomain,
    block_weights,
)

CHUNK = 1 << 15  # largest vectorised chunk: ~58 bytes of buffers per value (1.9 MiB)
TABLE_LIMIT = 1 << 18  # largest threshold table built at construction (2 MiB)
CLIP_BLOCKS = 64  # n' = min(n, 64·M): 2^(−64) relative change of e, part of the distortion
_K_MAX = 1 << 51  # a drawn offset must keep |2j + 1| < 2^53 (|c| < 2^50 is checked on input)
_TWO63 = float(1 << 63)
_ONE = np.uint64(1)


@lru_cache(maxsize=16)
def _block_table_guide(M: int) -> DyadicTable:
    """Inverse-CDF guide over the block weights: entry r for C_r <= v < C_{r+1}."""
    bw = block_weights(M)
    if bw.W64 is not None:  # C_1 .. C_{M−1} in uint64 (exact: below 2^64)
        return DyadicTable(np.cumsum(bw.W64)[:M - 1])
    return DyadicTable(np.array(bw.cum_int[1:M], dtype=np.uint64))


@lru_cache(maxsize=16)
def _side_tables(M: int) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                  NDArray[np.float64]]:
    """E[t] = 1 − 2^(−t/M), A[t] = 2^(−t/M) (t < M) and K[m] = 1 − 2^(−m) (m <= 64)."""
    t = np.arange(M, dtype=np.float64)
    E = -np.expm1(-t * (LN2 / M))
    A = np.exp2(-t / M)
    K = 1.0 - np.exp2(-np.arange(CLIP_BLOCKS + 1, dtype=np.float64))
    return E, A, K


@lru_cache(maxsize=16)
def _packed_guide(M: int) -> tuple[NDArray[np.uint64], NDArray[np.uint64] | None,
                                   np.uint64, np.uint64]:
    """(boundaries, packed guide D or None, shift s, mask 2^s − 1) for :meth:`_lookup`."""
    g = _block_table_guide(M)
    if not g.guided:
        return g.B, None, np.uint64(0), np.uint64(0)
    s = int(g._shift)
    if (int(g._g.max()) + 2) << s > 1 << 64:  # pragma: no cover - M + 1 < 2^bits always
        return g.B, None, np.uint64(0), np.uint64(0)
    D = (g._g.astype(np.uint64) << np.uint64(s)) + (np.uint64(1 << s) - g._thr)
    return g.B, D, g._shift, g._mask


def chunk_size(n: int) -> int:
    """Values per chunk for an n-value release: a power of two in [2^12, 2^15], at most ~n/6
    (the chunk buffers stay under ~1.2x the output array)."""
    return min(CHUNK, max(1 << 12, 1 << (n // 12).bit_length() if n >= 12 else 1))


def convex_distortion_bound(M: int) -> float:
    """Upper bound on max_{c, j} |ln P_sampled(j|c) − ln P_true(j|c)| of :class:`ConvexSampler`
    (module docstring): ρ_w (the fold) + M·2^-45 (the side probability) + 1e-15 (the tail of
    the folded sum that :meth:`ConvexSampler.logpmf` leaves out, < 2^-60 relative)."""
    return block_weights(M).rho_w + M * 2.0**-45 + 1e-15


class ConvexSampler:
    """Exact sampler for an interval / half-line / the line (see the module docstring).

    ``sample(rng, x, out)`` releases a flat array of true values (chunks of
    :func:`chunk_size` values), ``sample_one(rng, c)`` one value at centre index c (pure
    Python, the same words and law), ``logpmf(j, c)`` the exact log-probabilities of what
    both draw; ``at(c)`` the law at one centre for :class:`RangeLatticeLaw`.  Nothing is
    stored per centre: every table is built here, from the public parameters.
    """

    words_per_draw = 3

    def __init__(self, gd: GridDomain, M: int, table_limit: int = TABLE_LIMIT) -> None:
        if len(gd.cells) != 1:
            raise ParameterError("ConvexSampler needs a single-piece domain")
        self.gd, self.M = gd, int(M)
        jlo, jhi = gd.cells[0]
        self._jlo = None if math.isinf(jlo) else int(jlo)
        self._jhi1 = None if math.isinf(jhi) else int(jhi) + 1
        self._clip = CLIP_BLOCKS * self.M
        bw = block_weights(self.M)
        self._rest: NDArray[np.float64] | None = None  # for :meth:`tails`
        # C_0 = 0 .. C_M = 2^64 as Python ints for the scalar path -- built here, not on a
        # first release (every release runs the same operations)
        self._cum = bw.cum_int
        w = bw.W64 if bw.W64 is not None else np.array(bw.W, dtype=np.float64)
        self._lnw = np.log(w.astype(np.float64)) - 64 * LN2  # ln(W_r / 2^64), rounded once
        self._E, self._A, self._K = _side_tables(self.M)
        self._Kl = self._K.tolist()  # (E, A: numpy float64 scalars, the same IEEE operations)
        self._M64 = np.int64(self.M)
        self._B, self._D, self._shift, self._mask = _packed_guide(self.M)
        self.grid = gd.grid
        self._tkind, self._ttab, self._tconst = self._threshold_table(table_limit)

    def _threshold_table(self, limit: int) -> tuple[str, NDArray[np.uint64], int]:
        """T − 1 as a table over an index computed from (n_L, n_R) when it has <= ``limit``
        entries (built here, whatever the true values will be), else the formula."""
        C, lo, hi1 = self._clip, self._jlo, self._jhi1
        empty = np.zeros(0, dtype=np.uint64)
        if lo is None and hi1 is None:
            return "const", empty, (self.threshold(0) - 1) % (1 << 64)
        short = lo is not None and hi1 is not None and hi1 - lo <= 2 * C
        size = (hi1 - lo + 1 if short else  # type: ignore[operator]
                C + 1 if lo is None or hi1 is None else 2 * C + 1)
        if size > limit:
            return "formula", empty, 0
        if short:
            kind, nl = "nl", np.arange(size, dtype=np.int64)
            nr = (size - 1) - nl
        elif lo is None or hi1 is None:
            kind = "clip-l" if hi1 is None else "clip-r"
            n = np.arange(C + 1, dtype=np.int64)
            big = np.full(C + 1, _BIG, dtype=np.int64)
            nl, nr = (n, big) if hi1 is None else (big, n)
        else:
            kind = "two"
            idx = np.arange(2 * C + 1, dtype=np.int64)
            nl, nr = np.minimum(idx, C), np.minimum(2 * C - idx, C)
        T = np.empty(size, dtype=np.uint64)
        self._tkind = "formula"
        # "nl" and "two" index n_R as n_L backwards: e(n_R) is e(n_L) reversed
        self._thresholds(nl, nr, _Work(size), T, mirrored=kind in ("nl", "two"))
        return kind, T, 0

    # ------------------------------------------------------------ side probability
    def _e(self, n: int) -> float:
        """e(n) = 1 − 2^(−n'/M), n' = min(n, 64M): the float operations of :meth:`_e_vec`."""
        m, t = divmod(min(n, self._clip), self.M)
        return float(self._E[t] + self._A[t] * self._Kl[m])

    def _e_vec(self, n: NDArray[np.int64], w: _Work, out: NDArray[np.float64]) -> None:
        """e(n) elementwise into ``out`` (the operations of :meth:`_e`, in the same order)."""
        b = n.size
        m, t, mM, tmp = w.i1[:b], w.i2[:b], w.i3[:b], w.f1[:b]
        np.minimum(n, self._clip, out=t)
        np.floor_divide(t, self.M, out=m)
        np.multiply(m, self.M, out=mM)
        np.subtract(t, mM, out=t)
        np.take(self._E, t, out=out)
        np.take(self._A, t, out=tmp)
        np.take(self._K, m, out=w.f4[:b])
        np.multiply(tmp, w.f4[:b], out=tmp)
        np.add(out, tmp, out=out)

    def sides(self, c: int) -> tuple[int | None, int | None]:
        """(n_L, n_R): cells left / right of centre c (None: unbounded)."""
        nl = None if self._jlo is None else c - self._jlo
        nr = None if self._jhi1 is None else self._jhi1 - c
        return nl, nr

    def threshold(self, c: int) -> int:
        """T(c): the right side has probability T(c)/2^63 exactly."""
        nl, nr = self.sides(c)
        eL = self._e(self._clip if nl is None else nl)
        eR = self._e(self._clip if nr is None else nr)
        return round(eR / (eL + eR) * _TWO63)

    # ------------------------------------------------------------------ sampling
    def sample_one(self, rng: RandomSource, c: int) -> float:
        """One release at centre c in pure Python: the words, the law and -- branch-free --
        the operations of :meth:`sample` (the side is a mask, as in the vector kernel)."""
        w0, w1, w2 = rng.words(3).tolist()
        nl = _BIG if self._jlo is None else c - self._jlo
        nr = _BIG if self._jhi1 is None else self._jhi1 - c
        eL, eR = self._e(nl), self._e(nr)
        t = round(eR / (eL + eR) * _TWO63)
        lm = (t - 1 - (w0 >> 1)) >> 63  # 0: right, −1: left
        r = bisect.bisect_right(self._cum, w1, 1, self.M) - 1
        q = (w2 & -w2).bit_length() - 1 if w2 else _more_zeros(rng)
        k = (q * self.M + r) % (nr ^ ((nl ^ nr) & lm))
        if k >= _K_MAX:  # pragma: no cover - probability < 2^(−2^30)
            raise PrecisionError("release fell outside the exactly representable range")
        return (2 * (c + (k ^ lm)) + 1) * (self.grid / 2)

    def sample(self, rng: RandomSource, x: NDArray[np.float64], out: NDArray[np.float64]
               ) -> None:
        """Release every true value of the flat array ``x`` into ``out`` (same size), in
        chunks of :func:`chunk_size` values (three words per value, drawn per chunk: all the
        side words, then all the r words, then all the i words)."""
        n = x.size
        size = chunk_size(n)
        w = _Work(min(n, size))
        for a in range(0, n, size):
            b = min(n, a + size)
            self._chunk(rng, x[a:b], out[a:b], w)

    def _chunk(self, rng: RandomSource, x: NDArray[np.float64], out: NDArray[np.float64],
               w: _Work) -> None:
        """One chunk: the same numpy calls on arrays of the same size for every value."""
        b = x.size
        f, ci, nl, nr, k = w.f[:b], w.ci[:b], w.nl[:b], w.nr[:b], w.k[:b]
        T, u, ge = w.t[:b], w.f[:b].view(np.uint64), w.ge[:b]  # u: f's memory, reused
        # centre index c = floor(x/L + 1/2), exactly (as grid.round_half_up)
        np.multiply(x, 1.0 / self.grid, out=f)
        np.floor(f, out=ci, casting="unsafe")
        np.subtract(f, ci, out=f)  # the fractional part, exact
        np.greater_equal(f, 0.5, out=ge)
        np.add(ci, ge, out=ci)
        # cells left / right of c and Tm1 = T(c) − 1 (mod 2^64)
        if self._jlo is None:
            nl.fill(_BIG)
        else:
            np.subtract(ci, self._jlo, out=nl)
        if self._jhi1 is None:
            nr.fill(_BIG)
        else:
            np.subtract(self._jhi1, ci, out=nr)
        self._thresholds(nl, nr, w, T)
        # three words per value, b at a time: w0 -> side, w1 -> r, w2 -> i
        wd = w.words[:b]
        fill_words(rng, w.words, b)
        # lm = 0 (right: (w0 >> 1) < T) or −1 (left): the sign of T − 1 − (w0 >> 1)
        np.right_shift(wd, _ONE, out=wd)
        np.subtract(T, wd, out=T)
        lm = T.view(np.int64)
        np.right_shift(lm, 63, out=lm)
        fill_words(rng, w.words, b)
        self._lookup(wd, k.view(np.uint64), u)  # r into k: exact inverse CDF of the weights
        fill_words(rng, w.words, b)
        # i = trailing zeros of w2 (exact Geometric(1/2)); k = i·M + r
        np.negative(wd, out=u)
        np.bitwise_and(u, wd, out=u)
        np.subtract(u, _ONE, out=u)
        np.bitwise_count(u, out=w.small[:b])
        iM = u.view(np.int64)
        np.multiply(w.small[:b], self._M64, out=iM)
        np.add(k, iM, out=k)
        rare = int(k.max()) >= CLIP_BLOCKS * self.M  # a zero word (64 zeros): p = 2^-64 each
        if rare:
            zero = np.flatnonzero(wd == 0)
            k[zero] += self.M * _geometric_more(rng, zero.size)
        # fold into the chosen side: n = n_R ^ ((n_L ^ n_R) & lm), k <- k mod n
        np.bitwise_xor(nl, nr, out=nl)
        np.bitwise_and(nl, lm, out=nl)
        np.bitwise_xor(nl, nr, out=nl)
        np.remainder(k, nl, out=k)
        if rare and int(k.max()) >= _K_MAX:
            raise PrecisionError("release fell outside the exactly representable range")
        # j = c + k (right) or c − 1 − k = c + ~k (left); y = (j + 1/2)·L, exact
        np.bitwise_xor(k, lm, out=k)
        np.add(k, ci, out=k)
        np.add(k, 0.5, out=out)
        np.multiply(out, self.grid, out=out)

    def _thresholds(self, nl: NDArray[np.int64], nr: NDArray[np.int64], w: _Work,
                    T: NDArray[np.uint64], mirrored: bool = False) -> None:
        """T(c) − 1 (mod 2^64) for every element: one lookup in the construction-time table
        when it exists, else the formula (both give exactly :meth:`threshold` − 1).
        ``mirrored``: ``nr`` is ``nl`` backwards, so e(n_R) is e(n_L) backwards (the same
        floats, computed once: the table build)."""
        b = nl.size
        kind = self._tkind
        if kind == "const":
            T.fill(self._tconst)
            return
        if kind != "formula":
            if kind == "nl":
                idx = nl
            else:  # k and f are free here: scratch for the index
                idx = w.k[:b]
                if kind == "clip-l":
                    np.minimum(nl, self._clip, out=idx)
                elif kind == "clip-r":
                    np.minimum(nr, self._clip, out=idx)
                else:  # "two": min(n_L, C) − min(n_R, C) + C
                    tmp = w.f[:b].view(np.int64)
                    np.minimum(nl, self._clip, out=idx)
                    np.minimum(nr, self._clip, out=tmp)
                    np.subtract(idx, tmp, out=idx)
                    np.add(idx, self._clip, out=idx)
            np.take(self._ttab, idx, out=T, mode="clip")  # indices are in range
            return
        f2, f3 = w.f2[:b], w.f3[:b]
        self._e_vec(nl, w, f2)
        if mirrored:
            np.copyto(f3, f2[::-1])
        else:
            self._e_vec(nr, w, f3)
        np.add(f2, f3, out=f2)
        np.divide(f3, f2, out=f3)
        np.multiply(f3, _TWO63, out=f3)
        np.rint(f3, out=f3)
        np.copyto(T, f3, casting="unsafe")
        np.subtract(T, _ONE, out=T)  # T = 0 wraps to 2^64 − 1: "never right"

    def _lookup(self, v: NDArray[np.uint64], out: NDArray[np.uint64], u: NDArray[np.uint64]
                ) -> None:
        """r = #{C_r <= v, 1 <= r < M} into ``out``: exact inverse CDF of the block weights.
        With a guide table D (bucket = top bits of v; D = g·2^s + 2^s − thr, s = 64 − bits):
        r = ((v mod 2^s) + D[bucket]) >> s = g + [v mod 2^s >= thr].  Overwrites v and u."""
        if self._D is None:  # pragma: no cover - the guide fits for every M <= 2^17
            out[:] = np.searchsorted(self._B, v, side="right")
            return
        np.right_shift(v, self._shift, out=u)
        np.take(self._D, u.view(np.int64), out=out, mode="clip")  # indices are in range
        np.bitwise_and(v, self._mask, out=v)
        np.add(out, v, out=out)
        np.right_shift(out, self._shift, out=out)

    # ------------------------------------------------------------------ exact law
    def at(self, c: int) -> _AtCentre:
        """The exact law at centre c as an object with ``gd``, ``c`` and ``logpmf(j)``."""
        return _AtCentre(self, int(c))

    def logpmf(self, j: NDArray[np.int64], c: int) -> NDArray[np.float64]:
        """Exact ln P(cell j | centre c) of what :meth:`sample` and :meth:`sample_one` draw
        (integers exact, then float64-rounded; the folded sum's tail beyond 2^-60 of the
        total is left out)."""
        j = np.asarray(j, dtype=np.int64)
        c = int(c)
        T = self.threshold(c)
        nl, nr = self.sides(c)
        out = np.full(j.shape, -np.inf)
        right = j >= c
        k = np.where(right, j - c, c - 1 - j)
        for sel_side, n, p in ((right, nr, T), (~right, nl, (1 << 63) - T)):
            if p == 0:
                continue
            sel = sel_side if n is None else sel_side & (k < n)
            if not np.any(sel):
                continue
            out[sel] = math.log(p) - 63 * LN2 + self._log_fold(k[sel], n)
        return out

    def tails(self, j: int, c: int) -> tuple[float, float]:
        """(P(cell <= j | c), P(cell >= j | c)) of what :meth:`sample` draws, in closed form
        (no table): with p_R = T(c)/2^63, p_L = 1 − p_R and G_n(k) = P(k' >= k) of the
        folded offset law on a side of n cells,
        P(cell >= j) = p_R·G_{n_R}(j − c) for j >= c, else 1 − p_L·G_{n_L}(c − j);
        P(cell <= j) = p_L·G_{n_L}(c − 1 − j) for j < c, else 1 − p_R·G_{n_R}(j + 1 − c).
        Agrees with the normalised table of :meth:`logpmf` to ~1e-15 (a test checks 1e-12)."""
        j, c = int(j), int(c)
        pr = self.threshold(c) / _TWO63
        pl = 1.0 - pr
        nl, nr = self.sides(c)
        if j >= c:
            ge = pr * self._fold_ge(j - c, nr)
            le = 1.0 - pr * self._fold_ge(j + 1 - c, nr)
        else:
            ge = 1.0 - pl * self._fold_ge(c - j, nl)
            le = pl * self._fold_ge(c - 1 - j, nl)
        return min(1.0, max(0.0, le)), min(1.0, max(0.0, ge))

    def _ptilde_ge(self, x: NDArray[np.int64]) -> NDArray[np.float64]:
        """S(x) = P̃(k >= x) for x >= 0, x = I·M + R: whole blocks i > I give 2^(−I−1), the
        partial block I gives 2^(−I−1)·(2^64 − C_R)/2^64, so S(x) = 2^(−I−1)·(2^65 − C_R)/2^64."""
        i, r = np.divmod(x, self.M)
        if self._rest is None:  # (2^65 − C_R) rounded once, R < M (public; built on use)
            self._rest = np.array([(1 << 65) - v for v in self._cum[:self.M]], dtype=np.float64)
        rest = self._rest[r]
        return np.ldexp(rest, (-i - 65).astype(np.int64).clip(-2000, 0).astype(np.int32))

    def _fold_ge(self, k: int, n: int | None) -> float:
        """G_n(k) = P(k mod n >= k) for the untruncated offset k ~ P̃ (n None: no fold):
        G_n(k) = H(k) − H(n), H(x) = Σ_{a>=0} S(a·n + x); since S(x + M) = S(x)/2, the
        terms repeat every P = M/gcd(n, M) values of a scaled by 2^(−n/gcd(n, M)), so
        H(x) = Σ_{a<P} S(a·n + x) / (1 − 2^(−n/gcd(n, M)))."""
        if k <= 0:
            return 1.0
        if n is None:
            return float(self._ptilde_ge(np.array([k], dtype=np.int64))[0])
        if k >= n:
            return 0.0
        g = math.gcd(n, self.M)
        a = np.arange(self.M // g, dtype=np.int64) * n
        both = self._ptilde_ge(np.concatenate([a + k, a + n]))
        diff = both[:a.size] - both[a.size:]  # each term >= 0: P̃(a·n + k <= k̃ < (a+1)·n)
        return float(diff.sum() / -math.expm1(-(n // g) * LN2))

    def _log_ptilde(self, k: NDArray[np.int64]) -> NDArray[np.float64]:
        """ln P̃(k), k = i·M + r: ln(W_r/2^64) − (i + 1)·ln 2."""
        i, r = np.divmod(k, self.M)
        return self._lnw[r] - (i + 1) * LN2

    def _log_fold(self, k: NDArray[np.int64], n: int | None) -> NDArray[np.float64]:
        """ln Q_n(k) = ln Σ_a P̃(k + a·n) (terms up to a·n >= 80·M: the rest is < 2^-60 of
        the sum, since P̃(k + d)/P̃(k) <= 1.01·2^(−d/M) and 1/(1 − 2^(−n/M)) < 2^18)."""
        base = self._log_ptilde(k)
        if n is None or n >= 80 * self.M:
            return base
        terms = -(-80 * self.M // n)  # a = 1 .. terms − 1 are added
        acc = np.zeros(k.shape)
        step = max(1, (1 << 20) // max(1, k.size))
        for a0 in range(1, terms, step):
            a = np.arange(a0, min(terms, a0 + step), dtype=np.int64)
            lp = self._log_ptilde(k[None, :] + n * a[:, None]) - base[None, :]
            acc += np.exp(lp).sum(axis=0)
        return base + np.log1p(acc)


_BIG = 1 << 62  # "unbounded": min(_BIG, 64M) = 64M in e(n); never used as a fold modulus


class _AtCentre:
    """:class:`ConvexSampler`'s exact pmf at one centre (no table: computed on demand)."""

    def __init__(self, sampler: ConvexSampler, c: int) -> None:
        self.sampler, self.gd, self.c = sampler, sampler.gd, c

    def logpmf(self, j: NDArray[np.int64]) -> NDArray[np.float64]:
        return self.sampler.logpmf(j, self.c)


class _Work:
    """Chunk buffers of one :meth:`ConvexSampler.sample` call (~58 bytes per value)."""

    def __init__(self, n: int) -> None:
        self.f = np.empty(n)
        self.ci, self.nl, self.nr, self.k = (np.empty(n, dtype=np.int64) for _ in range(4))
        self.t = np.empty(n, dtype=np.uint64)
        self.small = np.empty(n, dtype=np.uint8)
        self.ge = np.empty(n, dtype=bool)
        self.words = np.empty(n + 8, dtype=np.uint64)
        self._n = n
        self._extra: dict[str, NDArray[Any]] = {}

    def __getattr__(self, name: str) -> NDArray[Any]:
        """Scratch used by the formula path and the table build only (allocated on use)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._extra:
            dtype = np.int64 if name.startswith("i") else np.float64
            self._extra[name] = np.empty(self._n, dtype=dtype)
        return self._extra[name]


def _more_zeros(rng: RandomSource) -> int:
    """Geometric(1/2) continued after a zero word (64 zeros so far): pure Python."""
    q = 64
    while True:
        (w,) = rng.words(1).tolist()
        if w:
            return q + (w & -w).bit_length() - 1
        q += 64


def _geometric_more(rng: RandomSource, count: int) -> NDArray[np.int64]:
    """``count`` continuations after a zero word (the zero word already counted 64)."""
    return np.array([_more_zeros(rng) - 64 for _ in range(count)], dtype=np.int64)
