"""Two-sided block-geometric noise on the integers: a vectorised exact discrete Laplace.

The law sampled is p(z) ∝ ρ^|z| with ρ = 2^(-j/M) (j, M positive integers), up to the
64-bit quantisation of M + 1 alias weights, which is *known exactly* (so the verifier checks
the pmf that is sampled).  It extends the block construction of
:class:`~dpnoise.exact.geometric.BlockGeometric` (blocks of M steps whose masses fall by an
exact power of two) to the integer lattice, where 0 must be counted once:

* word a: bit 63 is a fair sign; the trailing zeros C of its low 63 bits (continued on
  fresh words in the 2^-63 case that they are all zero) give the block index Q = ⌊C/j⌋,
  so P(Q >= q) = 2^(-jq) exactly;
* word b: an alias table over M + 1 outcomes: outcome 0 is Z = 0 (Q and the sign are then
  ignored), outcome r + 1 is |Z| = 1 + r + Q·M, 0 <= r < M.

Hence, with W_i the table's integer weights (sum 2^64),

    P(Z = 0) = W_0 / 2^64,
    P(Z = ±(1 + qM + r)) = (1 − 2^-j) 2^(-jq) · W_{r+1} / 2^65,

and the ideal weights W_0 ∝ 1, W_{r+1} ∝ 2ρ^(1+r)/(1 − 2^-j) make the ratio of neighbours
exactly ρ.  With ``inner`` given, ρ = e^(−inner) inside each block instead (the "first-steps"
law): blocks still fall by exactly 2^-j, so the step across a block boundary decays by
j·ln2 − (M − 1)·inner.  Every draw reads exactly two words (plus one more with probability
2^-63), so the time taken does not depend on the noise or the true value.

For ε/Δ = s/t rational this is the discrete Laplace of C. L. Canonne, G. Kamath,
T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Definition 28,
with its decay rounded *down* to a rational multiple of ln 2 (j/M ln 2 <= ε/Δ): the exact
loss of the quantised table is measured by :meth:`IntegerBlockLaplace.shift_loss` and the
calibration (:func:`calibrate_integer_block`) keeps it <= ε.  The block idea is
I. Mironov's base-2 construction ("On significance of the least significant bits for
differential privacy", ACM CCS 2012, Section 5.2) applied to the geometric tail.
"""

from __future__ import annotations

import ctypes
import math
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError, PrecisionError
from ..kernels import MIN_VALUES
from ..kernels.keyed import (
    CompiledJob,
    add_clamp,
    chunk_step,
    compiled_job,
    count_args,
    kernel_args,
    keyed_run,
    reference_chunks,
)
from ..params import LN2
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights_array
from .block_words import alias_outcome, apply_sign, trailing_zeros_63

_LOW63 = np.uint64((1 << 63) - 1)
_CHUNK = 1 << 14
#: largest j + log2(M): the smallest in-block weight keeps >= ~20 significant bits
MAX_SPAN_BITS = 44
MAX_M = 1 << 16
MAX_J = 48
ROUNDING_ALLOWANCE = 1e-12


def _ctz(x: NDArray[np.uint64]) -> NDArray[np.int64]:
    lowest = x & (~x + np.uint64(1))
    return np.bitwise_count(lowest - np.uint64(1)).astype(np.int64)


@lru_cache(maxsize=64)
def _table(j: int, M: int, inner: float | None = None) -> AliasTable:
    r = np.arange(M, dtype=np.float64)
    ideal = np.empty(M + 1, dtype=np.float64)
    ideal[0] = 1.0
    # 2ρ^(1+r)/(1 − 2^-j) with ρ = 2^(-j/M), or ρ = e^-inner (the in-block decay)
    log_rho = -j * LN2 / M if inner is None else -inner
    ideal[1:] = 2.0 * np.exp(log_rho * (1.0 + r)) / -math.expm1(-j * LN2)
    return AliasTable(quantize_weights_array(ideal))




@lru_cache(maxsize=1)
def _intblock_kernel() -> Any:
    """The compiled twin of the chunk body of :meth:`IntegerBlockLaplace.sample_into`
    (``kernels/integer_block.c``), or None when the kernels are off."""
    from .. import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return kernels.function("dpk_intblock_sample", [vp, i64, vp, vp, vp, i64, ctypes.c_uint64,
                                                    vp], i64)


class IntegerBlockLaplace:
    """Exact two-sided lattice law p(z) ∝ 2^(-j|z|/M) on the integers (quantised table).

    ``inner`` (optional): the decay per step *inside* a block, ln p(z) − ln p(z + 1) for
    z >= 0 not at a block's end (default j·ln2/M, the uniform decay).  Blocks still fall by
    exactly 2^-j, so the step across a block boundary decays by j·ln2 − (M − 1)·inner.  With
    inner = ε/Δ and j = ⌊M·inner/ln 2⌋ the steps near 0, which carry nearly all of E|Z| when
    the decay is large, are those of the ideal law, and no step decays faster than ε/Δ.
    """

    def __init__(self, j: int, M: int, inner: float | None = None) -> None:
        if not (isinstance(j, int) and isinstance(M, int) and 1 <= j <= MAX_J
                and 1 <= M <= MAX_M):
            raise ParameterError(f"need integers 1 <= j <= {MAX_J}, 1 <= M <= {MAX_M}; "
                                 f"got j={j!r}, M={M!r}")
        if inner is not None and not (math.isfinite(inner) and inner > 0):
            raise ParameterError(f"inner decay must be a positive number, got {inner!r}")
        self.j, self.M, self.inner = j, M, inner
        self.table = _table(j, M, inner)

    # ---------------------------------------------------------------- sampling
    @cached_property
    def _kernel_tables(self) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.int64]]:
        """Interleaved alias tables (thr2[2i] = thr[i]; magnitude of (column, alias) pairs)
        and the block offset Q·M for each count C = 0..63 of trailing zeros."""
        t = self.table
        thr2 = np.repeat(t._thr, 2)
        mag = np.arange(t.columns, dtype=np.int64)  # outcome i -> |Z| = i (0 or 1 + r)
        mag2 = np.empty(2 * t.columns, dtype=np.int64)
        mag2[0::2] = mag
        mag2[1::2] = mag[t._alias]
        qm = (np.arange(64, dtype=np.int64) // self.j) * self.M
        return thr2, mag2, qm

    def _intblock_args(self, out: NDArray[np.int64], add: NDArray[np.int64] | None,
                       lower: int | None, upper: int | None) -> NDArray[np.int64]:
        """The slots of kernels/keyed.c's ``dpk_keyed_intblock`` adapter: the interleaved
        tables, the column shift and threshold mask, the output's address (the adapter adds
        a value's index), then the counts to add and the clamps (:func:`count_args`)."""
        thr2, mag2, qm = self._kernel_tables
        table = self.table
        return kernel_args(thr2.ctypes.data, mag2.ctypes.data, qm.ctypes.data,
                           64 - table.bits - 1, table.mass - 1, out.ctypes.data,
                           *count_args(add, lower, upper))

    def keyed_job(self, out: NDArray[np.int64], *, add: NDArray[np.int64] | None = None,
                  lower: int | None = None, upper: int | None = None) -> CompiledJob | None:
        """:meth:`sample_into` of the whole of ``out`` as compiled spans for a split release
        (:func:`dpnoise.parallel.run_split`): the same adapter, words and values; None where
        :meth:`sample_into` would not run the kernel."""
        if (_intblock_kernel() is None or out.dtype != np.int64
                or not out.flags.c_contiguous):
            return None
        if add is not None:
            add = np.ascontiguousarray(add, dtype=np.int64)
        return compiled_job("dpk_keyed_intblock", self._intblock_args(out, add, lower, upper),
                            2, _CHUNK, (out, add, self._kernel_tables))

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n exact draws (int64), two words each, in cache-sized chunks."""
        out = np.empty(n, dtype=np.int64)
        if n <= 0:
            return out
        self.sample_into(rng, out)
        return out

    def sample_into(self, rng: RandomSource, out: NDArray[np.int64], *,
                    add: NDArray[np.int64] | None = None, lower: int | None = None,
                    upper: int | None = None) -> None:
        """Fill ``out`` (1-D int64) with exact draws -- plus ``add`` (counts, same length),
        then clamped into [lower, upper] (each end when given), chunk by chunk while the
        chunk is in cache (:func:`dpnoise.kernels.keyed.add_clamp`)."""
        n = out.size
        if n == 0:  # no cell (e.g. partition selection kept no group): nothing to draw
            return
        if add is not None:
            add = np.ascontiguousarray(add, dtype=np.int64)
        thr2, mag2, qm = self._kernel_tables
        table = self.table
        chunk = min(n, _CHUNK)
        words = np.empty(2 * chunk + 8, dtype=np.uint64)
        scratch: list[NDArray[Any]] = []  # the reference's work arrays, made when it first runs
        col_shift = np.uint64(64 - table.bits - 1)
        thr_mask = np.uint64(table.mass - 1)
        kern = _intblock_kernel() if n >= MIN_VALUES else None
        if out.dtype != np.int64 or not out.flags.c_contiguous:
            kern = None  # the reference writes through numpy
        run = step = None
        if kern is not None:  # the compiled chunk body (same words, same values), its adapter
            args = self._intblock_args(out, add, lower, upper)
            run = keyed_run(rng, words, 2, chunk, "dpk_keyed_intblock", args)
            step = chunk_step("dpk_keyed_intblock", words, args)  # False: C = 63 (p = 2^-63)

        for start, c in reference_chunks(rng, words, n, chunk, 2, step, run):
            a, b = words[:c], words[c : 2 * c]
            if not scratch:
                scratch = [np.empty(chunk, dt) for dt in (np.uint64, np.uint64, np.intp, bool,
                                                          np.int64, np.int64, np.int64)]
            lo, t, cl, ab, K, NZ, S = (b_[:c] for b_ in scratch)
            C = trailing_zeros_63(a, lo, t)  # the ctz of the low 63 bits, 63 if all 0
            alias_outcome(b, thr2, mag2, col_shift, thr_mask, t, cl, ab, K)  # the magnitude
            # block offset Q·M only for non-zero outcomes
            np.minimum(K, 1, out=NZ)
            # C = 63: probability 2^-63 per draw; the count continues exactly on fresh words
            blocks = self._long_counts(rng, a, C) if C.max() >= 63 else np.take(qm, C)
            np.multiply(blocks, NZ, out=NZ)
            np.add(K, NZ, out=K)
            apply_sign(a, K, S, out=out[start : start + c])  # 0 stays 0
            part = slice(start, start + c)
            add_clamp(out[part], None if add is None else add[part], lower, upper)

    def _long_counts(self, rng: RandomSource, a: NDArray[np.uint64], C: NDArray[np.int64]
                     ) -> NDArray[np.int64]:
        """Q·M where some words had 63 zero low bits: continue those counts on fresh words."""
        C = C.copy()
        pending = np.flatnonzero(C >= 63)
        C[pending] = 63
        while pending.size:
            w = rng.words(pending.size) & _LOW63
            nz = w != 0
            C[pending[nz]] += _ctz(w[nz])
            C[pending[~nz]] += 63
            pending = pending[~nz]
        if C.max() > 1 << 20:  # probability < 2^-(2^20)
            raise PrecisionError("geometric count out of the exactly representable range")
        return (C // self.j) * self.M

    # ------------------------------------------------------------- exact law
    @cached_property
    def weights(self) -> list[int]:
        """The integer weights W_0..W_M actually sampled (denominator 2^64)."""
        return self.table.exact_weights()

    @cached_property
    def _log_w(self) -> NDArray[np.float64]:
        w = self.table.exact_weights_float()
        with np.errstate(divide="ignore"):
            return np.log(w) - 64 * LN2

    @cached_property
    def _log_block(self) -> float:
        """ln(1 − 2^-j) − ln 2: the factor of a signed non-zero outcome in block 0."""
        return math.log(-math.expm1(-self.j * LN2)) - LN2

    def logpmf(self, z: ArrayLike) -> NDArray[np.float64]:
        """ln p(z) of the sampled law (each entry within ~1e-14 of the exact value)."""
        z = np.abs(np.asarray(z, dtype=np.int64))
        q, r = np.divmod(np.maximum(z - 1, 0), self.M)
        nonzero = self._log_block - (q * self.j) * LN2 + self._log_w[1 + r]
        return np.where(z == 0, self._log_w[0], nonzero)

    @property
    def decay(self) -> float:
        """Mean log-ratio per step over a block, j ln2 / M."""
        return self.j * LN2 / self.M

    @cached_property
    def mean_abs(self) -> float:
        """E|Z| of the sampled law, summed in closed form over the blocks.

        With c = 1 − 2^-j, Σ_q 2^(-jq) = 1/c and Σ_q q·2^(-jq) = 2^-j/c², so

            E|Z| = 2^-64 · Σ_r W_{r+1} · ((1 + r) + M·2^-j / c).
        """
        w = self.table.exact_weights_float()[1:]
        r = np.arange(self.M, dtype=np.float64)
        tail = self.M * math.exp(-self.j * LN2) / -math.expm1(-self.j * LN2)
        return math.fsum((w * (1.0 + r + tail)).tolist()) / 2.0**64

    def shift_loss(self, shift: int) -> float:
        """max over z of |ln p(z) − ln p(z + d)| for 1 <= d <= shift, exactly over one period.

        For |z|, |z + d| >= 1 the ratio p(z)/p(z + d) is periodic in z with period M
        (p(z + M) = 2^-j p(z) for z >= 1), so the window −(shift + M + 1) .. shift + M + 1
        holds every value the loss takes.
        """
        W = shift + 2 * self.M + 2
        z = np.arange(-W, W + 1, dtype=np.int64)
        lp = self.logpmf(z)
        worst = 0.0
        for d in range(1, shift + 1):
            worst = max(worst, float(np.max(np.abs(lp[d:] - lp[:-d]))))
        return worst


def calibrate_integer_block(epsilon: float, sensitivity: int) -> tuple[IntegerBlockLaplace, float]:
    """The two-sided block law with the largest decay j/M·ln2 whose exact loss for a shift
    of ``sensitivity`` (plus a 1e-12 allowance) is <= ε.  Returns (law, loss).

    Candidates: j = 1..MAX_J with M = ⌈j·Δ·ln2/ε⌉ (the smallest block length not above the
    ideal decay), j + log2 M <= MAX_SPAN_BITS (quantisation keeps ~20 bits in the smallest
    weight) and M <= MAX_M; tried from the largest decay down.
    """
    target = epsilon / sensitivity / LN2  # ideal j/M
    cands: dict[tuple[int, int], float] = {}
    for j in range(1, MAX_J + 1):
        M = max(1, math.ceil(j / target))
        while M <= MAX_M and j / M > target:
            M += 1
        if M > MAX_M or j + math.log2(M) > MAX_SPAN_BITS:
            continue
        g = math.gcd(j, M)
        cands[(j // g, M // g)] = j / M
    for (j, M), _ in sorted(cands.items(), key=lambda kv: (-kv[1], kv[0][1])):
        law = IntegerBlockLaplace(j, M)
        loss = law.shift_loss(sensitivity)
        if loss + ROUNDING_ALLOWANCE <= epsilon:
            return law, loss
    raise ParameterError(
        f"epsilon/sensitivity = {epsilon / sensitivity!r} is outside the block sampler's range "
        f"(decay per step between 2^-16 ln2 and {MAX_J} ln2); use sampler='cks'"
    )


def calibrate_first_steps(epsilon: float, sensitivity: int, accept: Any,
                          max_block: int = 8) -> tuple[IntegerBlockLaplace, float] | None:
    """A block law whose steps inside a block decay by ε/Δ exactly (``inner``) and whose
    blocks fall by 2^-j, j = ⌊M·ε/(Δ ln 2)⌋ <= ε/Δ·M/ln 2 -- for large decays, where the
    uniform decay j·ln2/M of :func:`calibrate_integer_block` is too coarse (j <= 48).

    Tries M = 1..``max_block`` and returns the first (law, loss) whose exact loss for a
    shift of Δ (plus 1e-12) is <= ε and for which ``accept(law)`` holds, else None.  The
    inner decay starts 1e-9·ε below ε/Δ so that the 64-bit rounding of the weights (each
    within ~2^-20 relative with j + log2 M <= 44) cannot lift the loss over ε.
    """
    for M in range(1, max_block + 1):
        for slack in (1e-9, 1e-6, 1e-4):
            inner = epsilon * (1.0 - slack) / sensitivity
            j = math.floor(M * inner / LN2)
            if j < 1 or j > MAX_J or j + math.log2(M) > MAX_SPAN_BITS:
                break
            law = IntegerBlockLaplace(j, M, inner)
            loss = law.shift_loss(sensitivity)
            if loss + ROUNDING_ALLOWANCE <= epsilon:
                if accept(law):
                    return law, loss
                break
    return None
