"""Discrete Gaussian from one alias table of its dyadic-rounded pmf: one word per draw.

The table holds integer weights W_z (sum exactly 2^64) for z in [−K, K]: the discrete
Gaussian pmf N_ℤ(0, σ²)(z) = e^{−z²/(2σ²)} / Σ_y e^{−y²/(2σ²)} (C. L. Canonne, G. Kamath,
T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Definition 1)
rounded to multiples of 2^-64 by largest remainders, cut at the last |z| whose rounded
weight is >= 4 (mass beyond it < 2^-60 · σ).  The law sampled is *this table*, known
exactly: its privacy is measured on the table itself (:meth:`DGTable.delta`, the
hockey-stick divergence of the integer weights, so truncation and rounding are inside δ),
and the verifier checks the same table.

One 64-bit word per draw (column from the top bits, threshold from the rest), no loops and
no floating point in the sampling path, so the time taken depends on neither the noise nor
the true value.
"""

from __future__ import annotations

import ctypes
import math
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..float_sum import fsum_array
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
from ..randomness import RandomSource
from .alias import AliasTable, quantize_weights_array
from .block_words import alias_outcome

#: largest table (entries); σ up to ~2^13
MAX_ENTRIES = 1 << 18
_CHUNK = 1 << 15
_U = 2.0**-53


def table_half_width(sigma2: float) -> int:
    """K with e^{−K²/(2σ²)}/(σ√(2π)) ~ 2^-64: the quantised weight there is a few units."""
    return math.ceil(math.sqrt(2.0 * sigma2 * (64 * math.log(2.0) + 2.0))) + 1


def fits(sigma2: float) -> bool:
    """Whether the table sampler covers this σ² (else the rejection sampler is used)."""
    return 2 * table_half_width(sigma2) + 1 <= MAX_ENTRIES




@lru_cache(maxsize=1)
def _alias_kernel() -> Any:
    """The compiled twin of :meth:`DGTable.sample_into`'s chunk body
    (``kernels/alias_one_word.c``), or None when the kernels are off."""
    from .. import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    return kernels.function("dpk_alias_one_word", [vp, i64, vp, vp, i64, ctypes.c_uint64, vp])


class DGTable:
    """Alias table of the dyadic-rounded discrete Gaussian pmf on [−K, K]."""

    def __init__(self, sigma2: float) -> None:
        s2 = float(sigma2)
        if not (s2 > 0 and fits(s2)):
            raise ParameterError(f"sigma2 must be in (0, {MAX_ENTRIES**2 / 1200:.3g}] for the "
                                 f"table sampler, got {sigma2!r}")
        K = table_half_width(s2)
        z = np.arange(-K, K + 1, dtype=np.float64)
        w = quantize_weights_array(np.exp(-(z * z) / (2.0 * s2)))  # (a list: one outcome)
        # cut where the rounded weights fall below 4 units (keeps the support an interval)
        first = (int(np.argmax(w >= 4)) if isinstance(w, np.ndarray) else
                 next(i for i, x in enumerate(w) if x >= 4))
        keep = w[first : len(w) - first]
        self.sigma2 = s2
        self.K = K - first
        if first:  # re-round on the shorter support (weights sum to 2^64 again)
            zz = np.arange(-self.K, self.K + 1, dtype=np.float64)
            keep = quantize_weights_array(np.exp(-(zz * zz) / (2.0 * s2)))
        if (keep.min() if isinstance(keep, np.ndarray) else min(keep)) <= 0:
            raise AssertionError("discrete Gaussian table has a hole")  # pragma: no cover
        self.table = AliasTable(keep)
        self._deltas: dict[tuple[float, int], float] = {}

    # ---------------------------------------------------------------- sampling
    @cached_property
    def _kernel(self) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
        t = self.table
        thr2 = np.repeat(t._thr, 2)
        out2 = np.empty(2 * t.columns, dtype=np.int64)
        out2[0::2] = np.arange(t.columns, dtype=np.int64) - self.K
        out2[1::2] = t._alias - self.K
        return thr2, out2

    def _alias_args(self, out: NDArray[np.int64], add: NDArray[np.int64] | None,
                    lower: int | None, upper: int | None) -> NDArray[np.int64]:
        """The slots of kernels/keyed.c's ``dpk_keyed_alias`` adapter: the interleaved
        table, the column shift and threshold mask, the output's address (the adapter adds
        a value's index), then the counts to add and the clamps (:func:`count_args`)."""
        thr2, out2 = self._kernel
        t = self.table
        return kernel_args(thr2.ctypes.data, out2.ctypes.data, 64 - t.bits - 1, t.mass - 1,
                           out.ctypes.data, *count_args(add, lower, upper))

    def keyed_job(self, out: NDArray[np.int64], *, add: NDArray[np.int64] | None = None,
                  lower: int | None = None, upper: int | None = None) -> CompiledJob | None:
        """:meth:`sample_into` of the whole of ``out`` as compiled spans for a split release
        (:func:`dpnoise.parallel.run_split`): the same adapter, words and values; None where
        :meth:`sample_into` would not run the kernel."""
        if _alias_kernel() is None or out.dtype != np.int64 or not out.flags.c_contiguous:
            return None
        if add is not None:
            add = np.ascontiguousarray(add, dtype=np.int64)
        return compiled_job("dpk_keyed_alias", self._alias_args(out, add, lower, upper), 1,
                            _CHUNK, (out, add, self._kernel))

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        """n exact draws, one word each."""
        out = np.empty(n, dtype=np.int64)
        if n > 0:
            self.sample_into(rng, out)
        return out

    def sample_into(self, rng: RandomSource, out: NDArray[np.int64], *,
                    add: NDArray[np.int64] | None = None, lower: int | None = None,
                    upper: int | None = None) -> None:
        """Fill ``out`` (1-D int64) with exact draws, one word each -- plus ``add`` (counts,
        same length), then clamped into [lower, upper] (each end when given), chunk by chunk
        while the chunk is in cache (:func:`dpnoise.kernels.keyed.add_clamp`)."""
        n = out.size
        if add is not None:
            add = np.ascontiguousarray(add, dtype=np.int64)
        thr2, out2 = self._kernel
        t = self.table
        chunk = min(n, _CHUNK)
        words = np.empty(chunk + 8, dtype=np.uint64)
        scratch = None  # the reference's work arrays, made when it first runs
        col_shift = np.uint64(64 - t.bits - 1)
        thr_mask = np.uint64(t.mass - 1)
        kern = _alias_kernel() if n >= MIN_VALUES else None
        if out.dtype != np.int64 or not out.flags.c_contiguous:
            kern = None  # the reference writes through numpy
        run = step = None
        if kern is not None:  # the compiled chunk body: same word, same table entry
            args = self._alias_args(out, add, lower, upper)
            run = keyed_run(rng, words, 1, chunk, "dpk_keyed_alias", args)
            step = chunk_step("dpk_keyed_alias", words, args)

        for start, c in reference_chunks(rng, words, n, chunk, 1, step, run):
            if scratch is None:
                scratch = (np.empty(chunk, np.uint64), np.empty(chunk, np.intp),
                           np.empty(chunk, bool))
            alias_outcome(words[:c], thr2, out2, col_shift, thr_mask, scratch[0][:c],
                          scratch[1][:c], scratch[2][:c], out[start : start + c])
            part = slice(start, start + c)
            add_clamp(out[part], None if add is None else add[part], lower, upper)

    # ------------------------------------------------------------- exact law
    @cached_property
    def weights(self) -> NDArray[np.float64]:
        """The sampled weights W_{−K..K} as floats (exact: each is < 2^64 and rounded once)."""
        return self.table.exact_weights_float()

    @cached_property
    def probs(self) -> NDArray[np.float64]:
        return self.weights / 2.0**64

    @property
    def values(self) -> NDArray[np.int64]:
        return np.arange(-self.K, self.K + 1, dtype=np.int64)

    def logpmf(self, z: ArrayLike) -> NDArray[np.float64]:
        """ln P(Z = z) of the table (−inf outside [−K, K])."""
        z = np.asarray(z, dtype=np.int64)
        inside = np.abs(z) <= self.K
        with np.errstate(divide="ignore"):
            lp = np.log(self.probs)
        return np.where(inside, lp[np.clip(z + self.K, 0, 2 * self.K)], -np.inf)

    def delta(self, epsilon: float, sensitivity: int) -> float:
        """max over shifts 1 <= d <= Δ of Σ_z (P(z) − e^ε P(z − d))_+, an upper bound.

        The law is symmetric, so one direction suffices.  Each positive term P − e^ε Q
        (computed in float64 from exact weights, e^ε within one ulp) is off by at most
        ~3u·P, and the sum is rounded once (fsum), so adding 8u (u = 2^-53) keeps the
        result above the exact hockey-stick divergence.  ε is capped at 700 for the
        exponential (a smaller ε can only increase δ: still an upper bound).
        """
        key = (float(epsilon), int(sensitivity))
        if key not in self._deltas:  # cached per table: public parameters only
            self._deltas[key] = self._delta(*key)
        return self._deltas[key]

    def _delta(self, epsilon: float, sensitivity: int) -> float:
        """:meth:`delta`, computed.  Each shift's sum is exact (``fsum``); a shift whose
        pairwise float sum (relative error < 1e-13: positive terms) is below the largest
        exact sum so far by more than 1e-9 cannot be the maximum and is not summed exactly
        (the largest shift, usually the maximum, is summed first)."""
        p = np.concatenate([np.zeros(sensitivity), self.probs, np.zeros(sensitivity)])
        e = math.exp(min(float(epsilon), 700.0))
        worst = 0.0
        for d in range(sensitivity, 0, -1):
            diff = p[d:] - e * p[:-d]
            terms = diff[diff > 0]
            if worst and float(np.sum(terms)) < worst * (1 - 1e-9):
                continue
            worst = max(worst, fsum_array(terms))  # = math.fsum
        return min(1.0, worst + 8 * _U)


@lru_cache(maxsize=64)
def dg_table(sigma2: float) -> DGTable:
    """The (cached) table for σ²; built once per σ² per process."""
    return DGTable(sigma2)
