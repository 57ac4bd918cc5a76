"""Exact per-element sampler of the truncated discrete Laplace on a UNION of intervals.

Every true value has its own centre c; nothing is built or cached per centre: one object,
built at construction from public parameters (the pieces' cells and the block length M),
serves every release, and every element runs the same numpy operations on arrays of the same
size whatever its centre.  Grid, block weights W_r and the target law are those of
:mod:`dpnoise.exact.range_lattice`.

Geometry seen from c.  Pieces p = 0..P−1 have cells [a_p, b_p] (a_0 may be −inf, b_{P−1}
+inf).  The *own* piece is q(c) = #{p >= 1 : a_p <= c} (every reachable centre lies in
[a_q, b_q + 1]); its cells split into a left part of n_L = c − a_q cells (offsets
k = c − 1 − j) and a right part of n_R = b_q + 1 − c cells (k = j − c).  Every other piece f
is *far*: all its cells lie on one side, at offsets p_f + k', 0 <= k' < n_f (n_f its length),
p_f = a_f − c (right) or c − 1 − b_f (left).

Target law: the ideal P_true(j|c) ∝ 2^(−k/M) (k the cell's offset from c), split as

    P_true(j | c) = π(segment) · P_true(k' | segment),   segment masses
    μ(p, n) = 2^(−p/M)·(1 − 2^(−n/M))   (common factor 1/(1 − 2^(−1/M)) dropped)

for a segment of n cells at offset p (far piece f: μ_f = 2^(−p_f/M)·T_f with the constant
T_f = 1 − 2^(−n_f/M); own piece: μ_o = (1 − 2^(−n_L/M)) + (1 − 2^(−n_R/M))).  Inside a
segment of n = m·M + t cells, cell k' = i·M + r; its cells with r < t (m + 1 blocks) have
mass low = 2(1 − 2^(−t/M))(1 − 2^(−m−1)) and those with r >= t (m blocks)
high = 2(2^(−t/M) − 1/2)(1 − 2^(−m)) (low + high = 1 − 2^(−n/M)).

Sampling, per element, P + 2 words (one per decision, then three), no loop:

1. *far-piece chain* (P − 1 decisions, one word each, in the fixed order of the far pieces
   from left to right): decision k stops at far piece f_k with probability
   x_k = μ_{f_k} / (μ_{f_k} + R_{k+1}), R_{k+1} = Σ_{later far} μ + μ_o, else continues; after
   the last decision the own piece is chosen.  Far pieces may have astronomically small but
   POSITIVE, exactly known probability: the SMALLER of x_k and 1 − x_k is encoded as
   ``2^(−n)·x`` (n >= 0 an integer, x a multiple of 2^-52 in [1/2, 1]) and drawn from one
   word w as the event ``Q'(w) >= n and u(w) < x``: Q' the number of trailing zero bits of
   the low 12 bits of w (extended by 12 + a fresh geometric when those 12 bits are all zero:
   probability 2^-12, whatever the centre), u(w) = (w >> 12)/2^52; so P(event) = 2^(−n)·x
   exactly, and the other outcome has the complementary probability.  No transcendental
   function is evaluated per value: with p_f = A·M + r0 (A = floor(p_f/M), exact),
   μ_f = w·2^(−A), w = T_f·2^(−r0/M) (a product of two construction tables); z = ρ·2^(−A)
   with ρ = w/R (``ldexp``: exact, or one correct rounding where subnormal); the stop is
   the smaller outcome iff z <= 1, with probability ρ/(1 + z)·2^(−A), else the continue,
   1/(1 + z); ``frexp`` of that mantissa gives n and x (rounded half-even to 52 bits).
   Every step is +, −, ×, ÷ (correctly rounded), ``floor``, ``frexp``, ``ldexp`` or a
   table read, so numpy, CPython (:mod:`dpnoise.exact.range_union_scalar`) and C
   (``kernels/range_union.c``) compute the same doubles; A is clamped at 1022, where
   μ_f < R·2^-54 leaves 1 + z and R + μ_f unchanged.
2. *category* (one word v, u = (v >> 12)/2^52): own piece: (left/right, r < t | r >= t) from
   u against three per-element thresholds rint(2^52·F)/2^52 of the cumulative category
   masses (an empty category has a zero-width interval: probability exactly 0); far piece:
   (r < t | r >= t) against the piece's constant threshold.
3. *r* (one word w): v' = lo + floor(w·R/2^64) with [lo, lo+R) = [0, C_t) or [C_t, 2^64),
   then the block table's inverse CDF (guide table): P(r | cat) = (ceil((C_{r+1}−lo)2^64/R)
   − ceil((C_r−lo)2^64/R))/2^64 (C_t = W_0 + ... + W_{t−1}, the 64-bit block weights).
4. *i* (one word): i = Q mod m_r (Q trailing zeros, exact Geometric(1/2), m_r = m + 1 for
   r < t, m for r >= t, inf for an unbounded piece): P(i) = 2^(−i−1)/(1 − 2^(−m_r)).

:meth:`UnionSampler.logpmf` returns ln P(j | c) of exactly this procedure from the numbers
(n, x, thresholds, C_t) it uses (a centre's parameters are computed by the same numpy code
whether alone or in a batch; a test checks they are identical). Distortion against P_true
(:func:`union_distortion_bound`): each chain decision is off by <= 2^-52 (rounding x) +
max(5e-13, (4P + 32)·2^-53) relative, in both outcomes (the encoded one is <= 1/2): ρ's
relative error is at most that of w and R (the tables 1 − 2^(−t/M), 2^(−r/M) and T_f within
a few ulps, R a sum of P positive terms: <= (2P + 16)·2^-53) plus the division; z/(1 + z)
and 1/(1 + z) carry it with a factor <= 1, plus two roundings -- ~1e-14 for P <= 64,
checked against 50-digit arithmetic in ``tests/test_range_union_chain.py``; a category by
<= 2^-48·4M/ln2 relative (its probability is >= ln2/(4M), its thresholds within 2^-49); r
by <= 1/W_min, and inside a category the 64-bit weights W_r against 2^(−r/M) by 2·rho_w.
This is below :func:`~dpnoise.exact.range_lattice.distortion_bound` ``(M, P)``, which the
calibration of :class:`~dpnoise.mechanisms.range_laplace.RangeLaplace` adds (twice) to its
proven loss for unions, so the proven total covers this sampler; the verifier checks its
pmf directly.
"""

from __future__ import annotations

import ctypes
import math
import os
from functools import lru_cache, partial
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError, PrecisionError
from ..params import LN2
from ..randomness import RandomSource
from .alias import TOTAL
from .range_lattice import DyadicTable, GridDomain, block_weights, sample_geometric
from .range_union_scalar import UnionScalar
from .words import mulhi64

_CHUNK = 1 << 13
_TWO52 = float(1 << 52)
_LOW12 = np.uint64((1 << 12) - 1)
_S12 = np.uint64(12)
_EXP1 = np.uint64(0x3FF0000000000000)  # exponent bits of 1.0
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_REL_DECISION = 2.0**-52 + 5e-13  # relative error of one encoded chain probability


def union_distortion_bound(M: int, pieces: int) -> float:
    """Upper bound on max_{c, j} |ln P_sampled(j|c) − ln P_true(j|c)| for :class:`UnionSampler`
    (module docstring): chain 1.01·(P−1)·(2^-52 + max(5e-13, (4P + 32)·2^-53)); category
    2^-48·4M/ln2 (its probability is >= ln2/(4M) and its threshold within 2^-48); r
    1/W_min + 2·rho_w (the 64-bit block weights against 2^(−r/M) inside a category); + 1e-12
    for the float logs."""
    bw = block_weights(M)
    rel = _REL_DECISION + max(0.0, (4 * pieces + 32) * 2.0**-53 - 5e-13)  # many pieces: R's sum
    chain = 1.01 * max(0, pieces - 1) * rel
    cat = 1.01 * 2.0**-48 * 4 * M / LN2
    return chain + cat + 1.01 / float(bw.w_min) + 2 * bw.rho_w + 1e-12


class UnionKernel(NamedTuple):
    """The compiled entry points of ``kernels/range_union.c`` (ctypes functions)."""

    qz: Any       # dpk_union_qz: Q' of the decision words, positions of the extensions
    ext: Any      # dpk_union_qz_ext: 12 + trailing zeros of the extension words
    release: Any  # dpk_union_release: the chunk, the widest rows the CPU has
    scalar: Any   # dpk_union_release_scalar: the same chunk, scalar rows only (same bits)
    centres: Any  # dpk_union_centres: grid centres of true values with the domain check


@lru_cache(maxsize=1)
def _union_kernel() -> UnionKernel | None:
    """The compiled :meth:`UnionSampler._draw` (``kernels/range_union.c``), or None when the
    kernels are off.  Every entry runs the widest vector rows the CPU has (AVX-512: 8 values,
    AVX2: 4) and the scalar rows for the rest, all with the same bits; ``DPNOISE_SIMD=4``
    caps them at AVX2 and ``DPNOISE_SIMD=0`` (or 1) at the scalar rows."""
    from .. import kernels

    vp, i64, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
    sig = [i64, i64, vp, vp, vp, vp, vp, vp, i64, f64, vp, i64, i64, ctypes.c_uint64, vp, vp,
           vp, i64, f64, vp, vp]
    qz_sig, centres_sig = [vp, i64, vp, vp], [vp, i64, vp, vp, i64, f64, vp]
    ext = kernels.function("dpk_union_qz_ext", [vp, vp, i64, vp], i64)
    scalar = kernels.function("dpk_union_release_scalar", sig, i64)
    cap = os.environ.get("DPNOISE_SIMD", "")
    if cap in ("0", "1", "4"):  # narrower rows (benchmarks and checks): the same bits
        lanes = max(1, int(cap))
        entries = [kernels.function(f"dpk_union_{name}_lanes", [i64, *args], i64)
                   for name, args in (("qz", qz_sig), ("release", sig),
                                      ("centres", centres_sig))]
        qz, rel, centres = (None if f is None else partial(f, lanes)
                            for f in entries)
    else:
        qz = kernels.function("dpk_union_qz", qz_sig, i64)
        rel = kernels.function("dpk_union_release", sig, i64)
        centres = kernels.function("dpk_union_centres", centres_sig, i64)
    if None in (qz, ext, rel, scalar, centres):
        return None
    return UnionKernel(qz, ext, rel, scalar, centres)


def _address(a: NDArray[Any]) -> int:
    """The data address of a C-contiguous array (ctypes' buffer view: 4x faster than
    ``a.ctypes.data``; read-only arrays take the slower way)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):
        return int(a.ctypes.data)


def _unit(w: NDArray[np.uint64]) -> NDArray[np.float64]:
    """(w >> 12)/2^52 exactly: a uniform multiple of 2^-52 in [0, 1) from bits 12..63."""
    return ((w >> _S12) | _EXP1).view(np.float64) - 1.0


@lru_cache(maxsize=16)
def _cum_u64(M: int) -> NDArray[np.uint64]:
    """C_0..C_{M−1} as uint64 (exact: every partial sum below C_M = 2^64)."""
    w = block_weights(M).w_u64 if M > 1 else np.zeros(1, dtype=np.uint64)
    out = np.zeros(M, dtype=np.uint64)
    np.cumsum(w[:-1], out=out[1:])
    return out


@lru_cache(maxsize=16)
def _guide(M: int) -> DyadicTable:
    """Inverse-CDF guide over the block weights: entry r for C_r <= v < C_{r+1}."""
    return DyadicTable(_cum_u64(M)[1:])


@lru_cache(maxsize=64)
def _r_logprob(M: int, t: int, high: bool) -> NDArray[np.float64]:
    """ln P(r | category) for every r of the category (exact integer counts, then log)."""
    cum = block_weights(M).cum_int
    lo = cum[t] if high else 0
    R = TOTAL - cum[t] if high else cum[t]
    rs = range(t, M) if high else range(t)
    out = np.full(M, -np.inf)
    if R == 0:
        return out
    for x in rs:
        a = -((-(cum[x] - lo) * TOTAL) // R)
        b = -((-(cum[x + 1] - lo) * TOTAL) // R)
        cnt = max(0, min(b, TOTAL) - max(a, 0))
        out[x] = math.log(cnt) - 64 * LN2 if cnt else -math.inf
    return out


class _Centre:
    """The exact law at one centre, in the shape :class:`RangeLatticeLaw` reads."""

    def __init__(self, sampler: UnionSampler, c: int) -> None:
        self.sampler, self.gd, self.c = sampler, sampler.gd, int(c)

    def logpmf(self, j: NDArray[np.int64]) -> NDArray[np.float64]:
        return self.sampler.logpmf(j, self.c)


class PieceEnds:
    """The closed pieces [lo_p, hi_p] of a domain for :meth:`UnionSampler.centres`: lo_0..lo_{P−1}
    then hi_0..hi_{P−1} in one array, with the addresses the kernel reads."""

    def __init__(self, pieces: tuple[tuple[float, float], ...]) -> None:
        self.P = len(pieces)
        self.ends = np.array([lo for lo, _ in pieces] + [hi for _, hi in pieces],
                             dtype=np.float64)
        self._addresses()

    def _addresses(self) -> None:
        self.lo_at = self.ends.ctypes.data
        self.hi_at = self.lo_at + 8 * self.P

    def __getstate__(self) -> dict[str, Any]:  # a copy holds its own arrays: new addresses
        return {"P": self.P, "ends": self.ends}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._addresses()


class _KernelWork:
    """Buffers of one :meth:`UnionSampler.sample_values` call for its chunks, in one
    allocation: the decisions' Q' (``nd`` rows of the chunk length), the extension positions
    and the scratch; with the addresses the kernel reads (the release's centres ``cf`` and
    output ``out`` included)."""

    def __init__(self, nd: int, size: int, cf: NDArray[np.float64], out: NDArray[np.float64]
                 ) -> None:
        buf = np.empty(2 * nd * size + 3 * nd, dtype=np.float64)
        self.qz = buf[: nd * size]
        self.ext = buf[nd * size: 2 * nd * size].view(np.int64)
        self.qz_at = _address(buf)
        self.ext_at = self.qz_at + 8 * nd * size
        self.scratch_at = self.ext_at + 8 * nd * size
        self.cf_at, self.out_at = _address(cf), _address(out)


class UnionSampler:
    """Exact per-element sampler for a union of P >= 2 pieces (see the module docstring)."""

    def __init__(self, gd: GridDomain, M: int) -> None:
        P = len(gd.cells)
        if P < 2:
            raise ParameterError("UnionSampler needs a domain of two or more pieces")
        self.gd, self.M, self.P = gd, int(M), P
        self._lam = LN2 / self.M
        self._inv_m = 1.0 / self.M
        self._cum_u = _cum_u64(self.M)                                          # C_t
        # 1 − 2^(−t/M) for the integers t < M (the only arguments _side meets), built once
        self._lo_r = -np.expm1(-np.arange(self.M, dtype=np.float64) * self._lam)
        self._p2 = 1.0 - self._lo_r  # 2^(−r/M) for r < M: a far piece's offset within a block
        self._guide = _guide(M)
        self._a = np.array([lo for lo, _ in gd.cells], dtype=np.float64)
        self._b = np.array([hi for _, hi in gd.cells], dtype=np.float64)
        self._a_next = self._a[1:].copy()  # q(c) = #{p >= 1 : a_p <= c}
        m, t, low, high = self._side(self._b - self._a + 1.0)
        self._m_p, self._t_p = m, t.astype(np.intp)
        tot = low + high
        self._tot_p = tot                                             # T_f
        self._thr_p = np.rint(low / tot * _TWO52) / _TWO52            # P(high) = 1 − thr
        # the law side (logpmf, noise(), the verifier) asks for the same centres many times;
        # release never uses this memo (it computes every element's parameters afresh)
        self._law_params = lru_cache(maxsize=4096)(self._scalar_params)
        self._ktables = self._build_kernel_tables()  # for the compiled draw (kernels/)
        self._ktuple = self._kernel_tables()  # their addresses (rebuilt in a copy)
        self.scalar = UnionScalar(self)  # the one-value path: same words, same floats

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_ktuple"]  # addresses of this object's arrays, not of a copy's
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._ktuple = self._kernel_tables()

    # ------------------------------------------------------------ per-element parameters
    def _side(self, n: NDArray[np.float64]):  # type: ignore[no-untyped-def]
        """(m, t, low, high) for n cells on one side (n may be inf: m = inf, t = 0): the
        masses, in units of the first cell's weight times 1/(1 − 2^(−1/M)), of the cells with
        r < t (m + 1 blocks) and r >= t (m blocks):
        low = 2(1 − 2^(−t/M))(1 − 2^(−m−1)), high = 2(2^(−t/M) − 1/2)(1 − 2^(−m));
        low + high = 1 − 2^(−n/M)."""
        M = self.M
        m = np.floor(n / M)  # exact: n < 2^52 integer, correctly rounded division
        with np.errstate(invalid="ignore"):
            t = np.fmax(n - m * M, 0.0)  # exact; inf − inf = nan -> 0
        e = np.ldexp(1.0, -np.minimum(m, 1100.0).astype(np.int32))  # 2^(−m), exact (0: inf)
        lo_r = self._lo_r[t.astype(np.intp)]        # 1 − 2^(−t/M), 0 exactly for t = 0
        low = lo_r * (2.0 - e)
        high = (1.0 - 2.0 * lo_r) * (1.0 - e)       # 2(2^(−t/M) − 1/2)(1 − 2^(−m))
        return m, t, low, high

    def _params(self, cf: NDArray[np.float64]):  # type: ignore[no-untyped-def]
        """Everything the draw needs for centres ``cf`` (float, exact integers): q, the own
        piece's (m, t) per side, the three category thresholds (multiples of 2^-52) and per
        chain decision (n, x, flip): the event ``Q' >= n and u < x`` has probability 2^(−n)·x
        and is the stop (flip False) or the continue (flip True) outcome."""
        P, M = self.P, self.M
        q = np.searchsorted(self._a_next, cf, side="right")
        aq, bq = self._a[q], self._b[q]
        mL, tL, lowL, highL = self._side(cf - aq)
        mR, tR, lowR, highR = self._side(bq + 1.0 - cf)
        c1 = lowL + highL
        c2 = c1 + lowR
        tot = c2 + highR
        scale = _TWO52 / tot
        thr = (np.rint(lowL * scale) / _TWO52, np.rint(c1 * scale) / _TWO52,
               np.rint(c2 * scale) / _TWO52)
        # chain over the far pieces, from the last decision back (R = later far + own)
        R = tot
        chain: list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]] = []
        for k in range(P - 2, -1, -1):
            f = k + (k >= q)                      # the far piece of decision k
            off = np.where(f < q, cf - 1.0 - self._b[f], self._a[f] - cf)
            A = np.floor(off / M)                 # off = A·M + r0, 0 <= r0 < M (exact)
            r0 = off - A * M
            under = r0 < 0.0                      # off/M rounded up to an integer
            A = A - under
            r0 = r0 + under * M
            w = self._tot_p[f] * self._p2[r0.astype(np.intp)]   # μ_f = w·2^(−A)
            rho = w / R
            Ac = np.minimum(A, 1022.0).astype(np.int32)
            z = np.ldexp(rho, -Ac)                # μ_f / R
            neg = z <= 1.0                        # the stop is the smaller outcome
            pm = np.where(neg, rho, 1.0) / (1.0 + z)   # smaller prob = pm·2^(−A if neg else 0)
            mm, ee = np.frexp(pm)
            n = np.where(neg, A, 0.0) - ee
            x = np.rint(mm * _TWO52)              # in [2^51, 2^52]
            chain.append((n, x / _TWO52, ~neg))
            R = R + np.ldexp(w, -Ac)
        chain.reverse()
        return q, (mL, tL, mR, tR), thr, chain

    # ------------------------------------------------------------ sampling
    @property
    def words_per_draw(self) -> int:
        return self.P + 2

    @staticmethod
    def centres(x: NDArray[np.float64], ends: PieceEnds, grid: float
                ) -> NDArray[np.float64] | None:
        """Grid centres round_half_up(x / grid) of the true values ``x`` (float64, as
        :func:`~dpnoise.grid.round_half_up` computes them) in one compiled pass that also
        checks the domain: None when the kernels are off or some value is not finite or in
        no piece of ``ends`` (the caller's domain check then raises); PrecisionError when
        some |x / grid| >= 2^50."""
        kern = _union_kernel()
        if kern is None:
            return None
        x = np.ascontiguousarray(x.reshape(-1), dtype=np.float64)
        cf = np.empty(x.size, dtype=np.float64)
        status = kern.centres(_address(x), x.size, ends.lo_at, ends.hi_at, ends.P, grid,
                              _address(cf))
        if status == 2:
            raise PrecisionError("true value too large for the grid step; pass a coarser grid")
        return cf if status == 0 else None

    def sample_values(self, rng: RandomSource, c: NDArray[Any], grid: float
                      ) -> NDArray[np.float64]:
        """One release (2j + 1)·grid/2 per centre in ``c`` (integers, as int64 or float64)."""
        cf = np.ascontiguousarray(np.asarray(c).reshape(-1), dtype=np.float64)  # exact
        out = np.empty(cf.size, dtype=np.float64)
        kern = _union_kernel() if cf.size >= 16 else None
        work = _KernelWork(self.P - 1, min(cf.size, _CHUNK), cf, out) if kern else None
        for s in range(0, cf.size, _CHUNK):
            cc = cf[s:s + _CHUNK]
            part = out[s:s + cc.size]
            got = self._draw(rng, cc, grid, kern, work, s, part)
            if got is not part:  # the numpy reference's array (the kernel wrote into part)
                part[:] = got
        return out

    def _draw(self, rng: RandomSource, cf: NDArray[np.float64], grid: float,
              kern: UnionKernel | None, work: _KernelWork | None, at: int,
              out: NDArray[np.float64]) -> NDArray[np.float64]:
        """One chunk (``cf``, from position ``at`` of the release): P + 2 words per centre,
        then the compiled kernel (arrays of 16 or more; the choice depends on the length
        only) writing into ``out``, or the numpy reference, bit for bit alike."""
        P, cnt = self.P, cf.size
        nd = P - 1
        w = rng.words((P + 2) * cnt)
        if kern is None or work is None or cnt < 16:
            return self._draw_reference(rng, cf, w, self._qz(rng, w[: nd * cnt]), grid)
        wa = _address(w)
        ne = kern.qz(wa, nd * cnt, work.qz_at, work.ext_at)
        if ne:  # probability 2^-12 per decision, whatever the centre
            wx = rng.words(ne)
            if kern.ext(work.qz_at, work.ext_at, ne, _address(wx)):  # p = 2^-64
                work.qz[work.ext[:ne]] = 12.0 + sample_geometric(rng, wx)
        if kern.release(cnt, P, work.cf_at + 8 * at, wa, work.qz_at, *self._ktuple, grid / 2,
                        work.scratch_at, work.out_at + 8 * at) == 0:
            return out
        # a zero geometric word (p = 2^-64) or an out-of-range release: the reference
        return self._draw_reference(rng, cf, w, work.qz[: nd * cnt], grid)

    @staticmethod
    def _qz(rng: RandomSource, wd: NDArray[np.uint64]) -> NDArray[np.float64]:
        """Q' of every decision word: trailing zeros of bits 0..11, 12 + a fresh geometric
        if all are zero (the extension words drawn in increasing position order)."""
        low = wd & _LOW12
        qz = np.bitwise_count((low & (_ZERO - low)) - _ONE).astype(np.float64)
        ext = qz >= 12.0
        if np.any(ext):  # probability 2^-12 per decision, whatever the centre
            idx = np.flatnonzero(ext)
            qz[idx] = 12.0 + sample_geometric(rng, rng.words(idx.size))
        return qz

    def _draw_reference(self, rng: RandomSource, cf: NDArray[np.float64],
                        w: NDArray[np.uint64], qz_flat: NDArray[np.float64], grid: float
                        ) -> NDArray[np.float64]:
        """The numpy reference of steps 1-4 from the chunk's words ``w`` and the decisions'
        Q' (``qz_flat``, P − 1 rows of the chunk's length)."""
        P, M, cnt = self.P, self.M, cf.size
        q, (mL, tL, mR, tR), (T1, T2, T3), chain = self._params(cf)
        nd = P - 1
        wd = w[: nd * cnt].reshape(nd, cnt)
        wc = w[nd * cnt:(nd + 1) * cnt]
        wr = w[(nd + 1) * cnt:(nd + 2) * cnt]
        wq = w[(nd + 2) * cnt:]
        qz = qz_flat.reshape(nd, cnt)
        # 1. chain: Q' against n, u = bits 12..63 (a multiple of 2^-52) against x
        ud = _unit(wd)
        slot = np.full(cnt, nd, dtype=np.intp)
        open_ = np.ones(cnt, dtype=bool)
        for k in range(nd):
            n, x, flip = chain[k]
            stop = ((qz[k] >= n) & (ud[k] < x)) ^ flip
            slot[open_ & stop] = k
            open_ &= ~stop
        own = slot == nd
        f = np.minimum(slot + (slot >= q), P - 1)
        # 2. category
        uc = _unit(wc)
        cat = (uc >= T1).astype(np.int8)
        cat += uc >= T2
        cat += uc >= T3
        right = np.where(own, cat >= 2, f > q)
        high = np.where(own, (cat & 1).astype(bool), uc >= self._thr_p[f])
        m = np.where(own, np.where(right, mR, mL), self._m_p[f])
        t = np.where(own, np.where(right, tR, tL).astype(np.intp), self._t_p[f])
        base = np.where(own, cf - 1.0 + right, np.where(right, self._a[f], self._b[f]))
        # 3. r within the category
        ct = self._cum_u[t]
        lo = np.where(high, ct, _ZERO)
        R = np.where(high, _ZERO - ct, ct)  # 2^64 − C_t (0 stands for 2^64 when t = 0)
        v = lo + mulhi64(wr, R)
        v = np.where(high & (t == 0), wr, v)
        r = self._guide.lookup(v)
        # 4. i = Q mod m_r
        Q = sample_geometric(rng, wq).astype(np.float64)
        i = np.fmod(Q, m + 1.0 - high)
        k = i * M + r
        j = base + np.where(right, k, -k)
        half = 2.0 * j + 1.0
        if half.size and float(np.max(np.abs(half))) >= 2.0**53:
            raise PrecisionError("release fell outside the exactly representable range")
        return half * (grid / 2)

    def _kernel_tables(self) -> tuple[Any, ...]:
        """Addresses and constants of the public tables for ``dpk_union_release``, from
        ``pieces`` to ``nB`` (arrays owned by self, so the addresses stay valid)."""
        g, keep = self._guide, self._ktables
        guided = bool(g.guided)
        return (keep["pieces"].ctypes.data, keep["t_p"].ctypes.data, keep["lo_p2"].ctypes.data,
                self.M, self._inv_m, self._cum_u.ctypes.data,
                int(guided), int(g._shift) if guided else 0, int(g._mask) if guided else 0,
                keep["g"].ctypes.data if guided else None,
                keep["gthr"].ctypes.data if guided else None, keep["B"].ctypes.data,
                int(keep["B"].size))

    def _build_kernel_tables(self) -> dict[str, NDArray[Any]]:
        """The per-piece tables in the kernel's dtypes, built at construction (nothing is
        added to the sampler on first use): ``pieces`` = a, b, T, thr, m (P each)."""
        g = self._guide
        keep: dict[str, NDArray[Any]] = {
            "pieces": np.ascontiguousarray(np.concatenate(
                [self._a, self._b, self._tot_p, self._thr_p, self._m_p]), dtype=np.float64),
            "lo_p2": np.ascontiguousarray(np.concatenate([self._lo_r, self._p2])),
            "t_p": np.ascontiguousarray(self._t_p, dtype=np.int64),
            "B": np.ascontiguousarray(g.B, dtype=np.uint64)}
        if g.guided:
            keep["g"] = np.ascontiguousarray(g._g, dtype=np.int64)
            keep["gthr"] = np.ascontiguousarray(g._thr, dtype=np.uint64)
        return keep

    # ------------------------------------------------------------ exact law
    def at(self, c: int) -> _Centre:
        """The exact law at centre ``c`` (for :class:`RangeLatticeLaw`)."""
        return _Centre(self, c)

    def _scalar_params(self, c: int):  # type: ignore[no-untyped-def]
        """:meth:`_params` of one centre (the very same numpy computation), as Python numbers."""
        q, (mL, tL, mR, tR), thr, chain = self._params(np.array([float(c)]))
        return (int(q[0]), (float(mL[0]), int(tL[0]), float(mR[0]), int(tR[0])),
                tuple(float(x[0]) for x in thr),
                tuple((float(n[0]), float(x[0]), bool(fl[0])) for n, x, fl in chain))

    def log_slot_probs(self, c: int) -> tuple[NDArray[np.float64], int]:
        """ln P(chain ends at far decision k) for k < P−1, and at the own piece (index P−1),
        from the chain's exact numbers 2^(−n)·x (x a multiple of 2^-52); also q(c)."""
        q, _, _, chain = self._law_params(int(c))
        out = np.empty(self.P)
        acc = 0.0
        for k in range(self.P - 1):
            n, x, flip = chain[k]
            K = int(x * _TWO52)                   # exact: x = K/2^52, 2^51 <= K <= 2^52
            log_x = -n * LN2 + math.log(K) - 52 * LN2
            if n == 0:
                log_nx = (math.log((1 << 52) - K) - 52 * LN2) if K < (1 << 52) else -math.inf
            else:
                log_nx = math.log1p(-math.exp(log_x))
            log_stop, log_cont = (log_nx, log_x) if flip else (log_x, log_nx)
            out[k] = acc + log_stop
            acc += log_cont
        out[self.P - 1] = acc
        return out, q

    def logpmf(self, j: NDArray[np.int64], c: int) -> NDArray[np.float64]:
        """Exact ln P(cell j | centre c) of what :meth:`sample_values` draws (−inf off the
        domain)."""
        j = np.asarray(j, dtype=np.int64)
        c = int(c)
        M = self.M
        _, (mL, tL, mR, tR), thr, _ = self._law_params(c)
        lslot, q = self.log_slot_probs(c)
        # a threshold rounded above 1 is never reached (u < 1): clamp to 2^52 units
        T = [0] + [min(int(x * _TWO52), 1 << 52) for x in thr] + [1 << 52]
        cat_lp = [math.log(T[x + 1] - T[x]) - 52 * LN2 if T[x + 1] > T[x] else -math.inf
                  for x in range(4)]
        jf = j.astype(np.float64)
        inq = (jf >= self._a[q]) & (jf <= self._b[q])
        segs = [(inq & (j < c), c - 1 - j, lslot[-1], mL, tL, (cat_lp[0], cat_lp[1])),
                (inq & (j >= c), j - c, lslot[-1], mR, tR,
                 (cat_lp[2], cat_lp[3]))]
        for k in range(self.P - 1):
            f = k + (k >= q)
            thr = min(int(float(self._thr_p[f]) * _TWO52), 1 << 52)
            clp = (math.log(thr) - 52 * LN2 if thr else -math.inf,
                   math.log((1 << 52) - thr) - 52 * LN2 if thr < (1 << 52) else -math.inf)
            kk = int(self._b[f]) - j if f < q else j - int(self._a[f])
            segs.append(((jf >= self._a[f]) & (jf <= self._b[f]), kk, lslot[k],
                         float(self._m_p[f]), int(self._t_p[f]), clp))
        out = np.full(j.shape, -np.inf)
        for mask, kk, lp_seg, m, t, clp in segs:
            if not np.any(mask) or not math.isfinite(lp_seg):
                continue
            i, r = np.divmod(np.asarray(kk)[mask], M)
            high = r >= t
            lr = np.where(high, _r_logprob(M, t, True)[r], _r_logprob(M, t, False)[r])
            lc = np.where(high, clp[1], clp[0])
            mod = np.where(high, m, m + 1.0)
            with np.errstate(divide="ignore"):
                trunc = np.where(np.isfinite(mod), np.log1p(-np.exp2(-mod)), 0.0)
            out[mask] = lp_seg + lc + lr - (i + 1) * LN2 - trunc
        return out
