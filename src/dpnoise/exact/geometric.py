"""Exact geometric-type samplers from random words.

``geometric_half`` draws q >= 0 with P(q = i) = 2^-(i+1) by counting trailing zero
bits.  :class:`BlockGeometric` draws k >= 0 with

    p(k) = 2^-(q+1) * W_r / 2^64,     k = q*M + r,  0 <= r < M,

where W_r ∝ 2^(-r/M) are integer alias weights (summing to 2^64).  The block index
q is exactly Geometric(1/2) because the ideal ratio across one block of M steps is
exactly 1/2, so the only approximation is the quantisation of the M in-block
weights to 64-bit integers -- and that is *known exactly*, so a verifier checks
the pmf that is sampled.  Each draw reads a fixed number of words (two, plus one
more with probability 2^-63), so the time taken does not depend on the noise.
"""

from __future__ import annotations

import ctypes
import math
import os
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..grid import round_half_up_inplace
from ..kernels import MIN_VALUES
from ..kernels.keyed import (
    CompiledJob,
    chunk_step,
    compiled_job,
    kernel_args,
    keyed_run,
    reference_chunks,
)
from ..params import LN2
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights_array
from .block_words import alias_outcome, apply_sign, trailing_zeros_63

_LOW63 = np.uint64((1 << 63) - 1)
_EXACT = 1 << 53
_MAX_INDEX = float(1 << 51)
_CHUNK = 1 << 14
MAX_BLOCK = 1 << 20


def _ctz(x: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Trailing zero count of non-zero uint64 values."""
    lowest = x & (~x + np.uint64(1))
    return np.bitwise_count(lowest - np.uint64(1)).astype(np.int64)


def geometric_half(
    rng: RandomSource, words: NDArray[np.uint64]
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Geometric(1/2) counts and independent fair sign bits from one word each.

    Bit 63 of each word is the sign; the trailing zeros of the low 63 bits give q.
    If the low 63 bits are all zero (probability 2^-63) the count continues on a
    fresh word, so the distribution is exactly P(q = i) = 2^-(i+1) with no cap.
    """
    negative = (words >> np.uint64(63)).astype(bool)
    low = words & _LOW63
    q = np.zeros(words.shape, dtype=np.int64)
    zero = low == 0
    while np.any(zero):  # probability 2^-63 per element; loop body practically never runs
        idx = np.flatnonzero(zero)
        q[idx] += 63
        low[idx] = rng.words(idx.size) & _LOW63
        zero = low == 0
    q += _ctz(low)
    return q, negative


def exact_inverse(grid: float) -> bool:
    """True if L is a power of two whose inverse is a double: then x·(1/L) is the same real
    number as x/L, so both round to the same double (the kernel multiplies)."""
    m, _ = math.frexp(grid)
    inv = 1.0 / grid if grid else math.inf
    return m == 0.5 and math.isfinite(inv) and math.frexp(inv)[0] == 0.5


#: The widest instruction set the compiled block kernel may use: 2 AVX-512, 1 AVX2, 0 plain C
#: (it uses the widest the CPU supports up to this; every choice gives the same bits, which
#: the tests check by lowering it).  ``DPNOISE_SIMD=4`` caps it at AVX2, ``DPNOISE_SIMD=0``
#: (or 1) at plain C, as for the union kernel.
SIMD_LEVEL = {"0": 0, "1": 0, "4": 1}.get(os.environ.get("DPNOISE_SIMD", ""), 2)
#: From this many values on, the kernel writes releases with non-temporal stores (bypassing
#: the cache: an output this large is not read again soon).
STREAM_MIN = 1 << 17


@lru_cache(maxsize=1)
def _block_kernel() -> Any:
    """The compiled twin of the chunk body of :meth:`BlockGeometric.signed_odd`
    (``kernels/block.c``), or None (kernels off): raw pointers, no per-call array checks."""
    from .. import kernels

    vp, i64, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
    return kernels.function("dpk_block_release",
                            [vp, i64, i64, vp, i64, i64, vp, f64, f64, vp, vp, i64, i64], i64)


@lru_cache(maxsize=64)
def _block_table(M: int) -> AliasTable:
    r = np.arange(M, dtype=np.float64)
    return AliasTable(quantize_weights_array(np.exp2(-r / M)))


class BlockGeometric:
    """Exact lattice distribution p(k) ∝ 2^(-k/M) (up to 64-bit quantisation), k >= 0.

    ``M`` is the block length: the pmf halves exactly every M steps.  The ideal
    decay per step is ln2/M nats, i.e. a discrete Laplace with scale M/ln2 steps.
    """

    def __init__(self, M: int) -> None:
        if not isinstance(M, int) or not 1 <= M <= MAX_BLOCK:
            raise ParameterError(f"block length M must be an integer in [1, {MAX_BLOCK}], got {M}")
        self.M = M
        self.table = _block_table(M)

    # ----------------------------------------------------------------- sampling
    def signed_odd(
        self,
        rng: RandomSource,
        n: int,
        *,
        centre: NDArray[np.float64] | None = None,
        grid: float | None = None,
    ) -> NDArray[np.int64] | NDArray[np.float64]:
        """n draws of 2Z = ±(2K + 1), the symmetric half-integer noise Z = ±(K + 1/2).

        With ``centre`` (float64 true values, length n) and a power-of-two ``grid`` L,
        the result is the release ``(2c + 2Z) * L/2`` with c = floor(x/L + 1/2) the
        exact grid index of x (checked: |x/L| < 2^51 and |2c + 2Z| < 2^53, so every
        step is exact in float64).

        Per draw: word a gives the sign (bit 63) and Q = trailing zeros of its low 63
        bits (Geometric(1/2)); word b gives the in-block index R through the alias
        table (column = top bits, threshold = low bits).  K = Q*M + R.  The work runs
        in cache-sized chunks (:meth:`release_into`).
        """
        release = centre is not None
        if release and grid is None:
            raise ParameterError("grid is required with centre")
        if release:  # |x/L| < 2^51 keeps every float step exact (callers check it up front)
            biggest = max(-float(centre.min()), float(centre.max())) if n else 0.0
            if not biggest < _MAX_INDEX * grid:  # also refuses NaN
                raise PrecisionError(
                    f"true value too large for the grid step {grid!r}: |true_value| must be "
                    f"< 2^51 * grid = {_MAX_INDEX * grid:g}; choose a coarser grid"
                )
        out: NDArray[np.int64] | NDArray[np.float64]
        out = np.empty(n, dtype=np.float64 if release else np.int64)
        self.release_into(rng, out, centre=centre, grid=grid)
        return out

    def release_into(
        self,
        rng: RandomSource,
        out: NDArray[np.int64] | NDArray[np.float64],
        *,
        centre: NDArray[np.float64] | None = None,
        grid: float | None = None,
    ) -> None:
        """:meth:`signed_odd` written into ``out`` (C-contiguous; float64 with ``centre``,
        else int64), for a caller that has already refused |x/L| >= 2^51 and NaN
        (:func:`dpnoise.grid.check_representable`) and checks ``grid``.

        Chunks of 2^14 values, each reading 2 words a value: c a-words, then c b-words.  On
        a keyed or seeded ChaCha20 stream the whole loop -- keystream and compiled kernel --
        is one GIL-free call (:func:`dpnoise.kernels.keyed.keyed_run`); otherwise each chunk's
        words are drawn, then the kernel writes its values straight into ``out``.  The numpy
        reference (:meth:`_reference_chunk`) runs where the kernels are off, the grid is not
        a power of two, or a chunk holds a word whose low 63 bits are all zero (probability
        2^-63 a value: it draws the extra words right after that chunk's words).  The words
        and their order are the same every way.
        """
        n = out.size
        chunk = min(n, _CHUNK) if n > 0 else 1
        release = centre is not None
        words = np.empty(2 * chunk + 8, dtype=np.uint64)
        scratch: dict[str, NDArray[Any]] | None = None
        kern = _block_kernel() if n >= MIN_VALUES else None  # module-level: picklable self
        run = step = None
        if kern is not None and release and not exact_inverse(grid):
            kern = None  # not a power of two (callers check; the reference copes anyway)
        if kern is not None:  # the compiled chunk body (same words, same K), by its adapter
            if release:  # the numpy reference accepts any real array; the kernel needs this
                centre = np.ascontiguousarray(centre, dtype=np.float64)
            args = self._block_args(out, centre, grid)
            run = keyed_run(rng, words, 2, chunk, "dpk_keyed_block", args)
            step = chunk_step("dpk_keyed_block", words, args)  # False: Q = 63 (p = 2^-63)

        for start, c in reference_chunks(rng, words, n, chunk, 2, step, run):
            if scratch is None:
                scratch = self._scratch(chunk)
            part = None if centre is None else centre[start : start + c]
            self._reference_chunk(rng, words[: 2 * c], c, scratch, part, grid,
                                  out[start : start + c])

    def _block_args(self, out: NDArray[Any], centre: NDArray[np.float64] | None,
                    grid: float | None) -> NDArray[np.int64]:
        """The slots of kernels/keyed.c's ``dpk_keyed_block`` adapter for ``out`` (and
        ``centre``, C-contiguous float64): the packed table, its bits, 2M, the centre's
        address (None: integers), 1/L and L/2, the output's address (the adapter adds a
        value's index to both), the instruction set, and non-temporal stores for a large
        release."""
        release = centre is not None
        half, inv = (grid / 2, 1.0 / grid) if release and grid else (0.0, 1.0)
        return kernel_args(self._packed_table.ctypes.data, self.table.bits, 2 * self.M,
                           centre.ctypes.data if centre is not None else None, float(inv),
                           float(half), out.ctypes.data, SIMD_LEVEL,
                           int(out.size >= STREAM_MIN))

    def keyed_job(self, out: NDArray[Any], *, centre: NDArray[np.float64] | None = None,
                  grid: float | None = None) -> CompiledJob | None:
        """:meth:`release_into` of the whole of ``out`` as compiled spans for a split release
        (:func:`dpnoise.parallel.run_split`): the same adapter, words and values, keyed in C
        chunk by chunk; None where :meth:`release_into` would not run the kernel (its
        per-chunk path then runs)."""
        if _block_kernel() is None or not out.flags.c_contiguous:
            return None
        if centre is not None:
            if grid is None or not exact_inverse(grid) or out.dtype != np.float64:
                return None
            centre = np.ascontiguousarray(centre, dtype=np.float64)
        elif out.dtype != np.int64:
            return None
        return compiled_job("dpk_keyed_block", self._block_args(out, centre, grid), 2, _CHUNK,
                            (out, centre, self._packed_table))

    @staticmethod
    def _scratch(chunk: int) -> dict[str, NDArray[Any]]:
        """The reference's work arrays for chunks of up to ``chunk`` values (made once)."""
        f64, u64, i64 = np.float64, np.uint64, np.int64
        return {"scaled": np.empty(chunk, f64), "work": np.empty(chunk, f64),
                "cidx": np.empty(chunk, i64), "lowest": np.empty(chunk, u64),
                "tmp": np.empty(chunk, u64), "col2": np.empty(chunk, np.intp),
                "above": np.empty(chunk, bool), "K": np.empty(chunk, i64),
                "R": np.empty(chunk, i64), "S": np.empty(chunk, i64)}

    def _reference_chunk(self, rng: RandomSource, words: NDArray[np.uint64], c: int,
                         scratch: dict[str, NDArray[Any]], centre: NDArray[np.float64] | None,
                         grid: float | None, out: NDArray[Any]) -> None:
        """The numpy reference for one chunk: words[:c] are the a-words, words[c:2c] the
        b-words; ``out`` (length c) receives 2Z, or the release with ``centre``."""
        thr2, outcome2 = self._kernel_tables
        col_shift = np.uint64(64 - self.table.bits - 1)  # keeps one extra bit, cleared below
        thr_mask = np.uint64(self.table.mass - 1)
        a, b = words[:c], words[c : 2 * c]
        lo, t, cl, ab, K, R, S = (scratch[k][:c] for k in
                                  ("lowest", "tmp", "col2", "above", "K", "R", "S"))
        Q = trailing_zeros_63(a, lo, t)
        if Q.max() >= 63:  # probability 2^-63 per draw: extend the count exactly
            self._extend_counts(rng, a, Q)
        # R from the alias table as the odd number 2R + 1
        alias_outcome(b, thr2, outcome2, col_shift, thr_mask, t, cl, ab, R)
        # 2Z = ±(2QM + 2R + 1)
        np.multiply(Q, np.int64(2 * self.M), out=K)
        np.add(K, R, out=K)
        apply_sign(a, K, S)
        if centre is None:
            out[:] = K
            return
        x, ci = scratch["scaled"][:c], scratch["cidx"][:c]
        np.divide(centre, grid, out=x)  # exact: L = 2^j
        round_half_up_inplace(x, scratch["work"][:c])  # exact index floor(x/L + 1/2)
        ci[:] = x
        np.add(ci, ci, out=ci)
        np.add(K, ci, out=K)  # |2c| < 2^52 and |2Z| < 2^45: exact below 2^53
        np.multiply(K, grid / 2, out=out)

    @cached_property
    def _kernel_tables(self) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
        """Interleaved alias tables: thr2[2i] = thr[i]; outcome2 = (2i+1, 2·alias[i]+1) pairs."""
        table = self.table
        thr2 = np.repeat(table._thr, 2)
        outcome2 = np.empty(2 * table.columns, dtype=np.int64)
        outcome2[0::2] = 2 * np.arange(table.columns, dtype=np.int64) + 1
        outcome2[1::2] = 2 * table._alias + 1
        return thr2, outcome2

    @cached_property
    def _packed_table(self) -> NDArray[np.uint64]:
        """The alias table in one word a column for the compiled kernel: (thr << bits) | alias,
        with a full column (thr = mass, always its own outcome) stored as thr = 0, alias =
        itself -- the same outcome for every threshold draw u, so the same law.  thr < mass =
        2^(64 - bits) and alias < 2^bits fill exactly 64 bits."""
        table = self.table
        own = np.arange(table.columns, dtype=np.uint64)
        full = table._thr >= np.uint64(table.mass)
        thr = np.where(full, np.uint64(0), table._thr)
        alias = np.where(full, own, table._alias.astype(np.uint64))
        return (thr << np.uint64(table.bits)) | alias

    @staticmethod
    def _extend_counts(rng: RandomSource, a: NDArray[np.uint64], K: NDArray[np.int64]) -> None:
        idx = np.flatnonzero((a & _LOW63) == 0)
        K[idx] = 63
        pending = idx
        while pending.size:
            w = rng.words(pending.size) & _LOW63
            nz = w != 0
            K[pending[nz]] += _ctz(w[nz])
            K[pending[~nz]] += 63
            pending = pending[~nz]
        if K.max() > 1 << 20:  # probability < 2^-(2^20): keeps 2QM far below 2^53
            raise PrecisionError("geometric count out of the exactly representable range")

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n draws of K >= 0 (the magnitude), via the same kernel."""
        odd = np.abs(self.signed_odd(rng, n))
        return (odd - 1) // 2

    # ------------------------------------------------------------ exact pmf
    @cached_property
    def weights(self) -> list[int]:
        """The in-block weights W_r actually sampled (from the alias table itself)."""
        return self.table.exact_weights()

    @cached_property
    def log_weights(self) -> NDArray[np.float64]:
        """ln(W_r / 2^64) in float64: W_r -> float is within 2^-53 relative and log adds
        ~1 ulp, so each entry is within ~1e-14 absolute -- far inside the 1e-12 allowance
        that calibrations add (the exact value is available from :meth:`logpmf_mp`)."""
        w = self.table.exact_weights_float()
        return np.log(w) - 64 * LN2

    def logpmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """ln p(k) for integer k (−inf for k < 0)."""
        k = np.asarray(k, dtype=np.int64)
        q, r = np.divmod(np.maximum(k, 0), self.M)
        out = -(q + 1) * LN2 + self.log_weights[r]
        return np.where(k < 0, -np.inf, out)

    def logpmf_mp(self, k: int) -> mpmath.mpf:
        """ln p(k) in mpmath at the current precision (exact inputs)."""
        q, r = divmod(int(k), self.M)
        return mpmath.log(mpmath.mpf(self.weights[r])) - (64 + q + 1) * mpmath.log(2)

    @cached_property
    def _moments(self) -> tuple[float, float, float]:
        """E[r], E[r^2] of the in-block index: exact integer sums, rounded once to float
        (was 40-digit mpmath: ~10 s at M = 180k, which dominated Session.plan)."""
        s1 = s2 = 0
        for r, w in enumerate(self.weights):
            rw = r * w
            s1 += rw
            s2 += r * rw
        return float(Fraction(s1, 1 << 64)), float(Fraction(s2, 1 << 64)), 0.0

    def mean(self) -> float:
        """E[k] = M E[q] + E[r] with E[q] = 1."""
        er, _, _ = self._moments
        return self.M + er

    def second_moment_half(self) -> float:
        """E[(k + 1/2)^2] with E[q] = 1, E[q^2] = 3 for Geometric(1/2) from 0."""
        er, er2, _ = self._moments
        M = self.M
        # (qM + r + 1/2)^2 = q^2 M^2 + 2 q M (r + 1/2) + (r + 1/2)^2, q independent of r
        return 3 * M * M + 2 * M * (er + 0.5) + (er2 + er + 0.25)

    def half_moments(self) -> tuple[float, float]:
        """(E[K + 1/2], E[(K + 1/2)^2]) for :class:`~dpnoise.laws.half_lattice.HalfLatticeLaw`."""
        return self.mean() + 0.5, self.second_moment_half()

    def sf(self, k: ArrayLike) -> NDArray[np.float64]:
        """P(K >= k) for integer k."""
        k = np.asarray(k, dtype=np.int64)
        q, r = np.divmod(np.maximum(k, 0), self.M)
        tail_in_block = self._tail_within_block[r]  # P(R >= r)
        # P(K >= qM + r) = P(Q > q) + P(Q = q) P(R >= r) = 2^-(q+1) (1 + tail)
        out = np.exp2(-(q + 1).astype(np.float64)) * (1.0 + tail_in_block)
        return np.where(k <= 0, 1.0, out)

    @cached_property
    def _tail_within_block(self) -> NDArray[np.float64]:
        w = self.table.exact_weights_float() / 2.0**64
        tail = np.cumsum(w[::-1])[::-1]
        return np.append(tail, 0.0)[: self.M]

    def step_loss(self, steps: int) -> float:
        """max over k >= 0 of ln p(k) - ln p(k + steps): the loss of a shift on one side.

        p(k + M) = p(k)/2 exactly, so a shift of n*M + s costs n ln2 plus the worst
        in-block shift of s, which is evaluated exactly over every starting residue.
        """
        if steps < 0:
            raise ParameterError("steps must be >= 0")
        n, s = divmod(steps, self.M)
        if s == 0:
            return n * LN2
        k0 = np.arange(self.M, dtype=np.int64)
        diff = self.logpmf(k0) - self.logpmf(k0 + s)
        return n * LN2 + float(diff.max())
