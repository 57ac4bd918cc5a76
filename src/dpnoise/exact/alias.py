"""Alias-method sampling with exact dyadic probabilities.

A table with ``T = 2^m`` columns (m >= 1) and column mass ``D = 2^(64-m)``
represents integer weights ``W_i`` that sum to exactly ``2^64``.  One uniform
64-bit word ``w`` is split into a column ``c = w >> (64-m)`` and a threshold draw
``u = w mod D``; the outcome is ``c`` if ``u < thr[c]`` else ``alias[c]``.  Hence

    P(i) = (thr[i] + sum_{c: alias[c] = i} (D - thr[c])) / 2^64        (exactly)

and :meth:`AliasTable.exact_weights` recomputes these numerators from the table that
is actually sampled, so a verifier checks the sampled pmf, not the intended one.
One word per draw, no loops, no floating point in the sampling path.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from ..randomness import RandomSource
from .quantize_wide import quantize_wide

TOTAL = 1 << 64


def quantize_weights(probabilities: Sequence[float] | NDArray[np.float64]) -> list[int]:
    """Integer weights summing to exactly 2^64, proportional to ``probabilities``.

    Largest-remainder rounding of the *exact* shares: each float is an exact dyadic
    rational, so the shares floor(p_i·2^64/Σp) and their remainders are computed with
    plain integer arithmetic (fast for 10^5 entries, no Fractions); the remaining units go
    one each to the largest remainders (ties: lowest index first).  Every weight is within
    one unit of its share.  (:func:`quantize_weights_array` returns the same weights as a
    uint64 array; both are computed without a Python loop per entry: within a factor 2^10
    in scale by :func:`_quantize_fast`, wider by :func:`~.quantize_wide.quantize_wide`.)
    """
    p = _check_probabilities(probabilities)
    fast = _quantize_fast(p)
    if fast is None:
        fast = quantize_wide(p)
    if fast is not None:
        return fast.tolist()
    return _quantize_exact(p)


def quantize_weights_array(probabilities: Sequence[float] | NDArray[np.float64]
                           ) -> NDArray[np.uint64] | list[int]:
    """:func:`quantize_weights` as a uint64 array -- or as the list when one outcome holds
    all the mass (2^64 does not fit in uint64); either is a valid :class:`AliasTable` input."""
    p = _check_probabilities(probabilities)
    fast = _quantize_fast(p)
    if fast is None:
        fast = quantize_wide(p)
    if fast is not None:
        return fast
    w = _quantize_exact(p)
    if max(w) >= TOTAL:
        return w
    return np.fromiter(w, dtype=np.uint64, count=len(w))


def _check_probabilities(probabilities: Sequence[float] | NDArray[np.float64]
                         ) -> NDArray[np.float64]:
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any(p < 0) or not np.all(np.isfinite(p)):
        raise ParameterError("probabilities must be a non-empty 1-D array of finite values >= 0")
    return p


def _quantize_exact(p: NDArray[np.float64]) -> list[int]:
    """The reference construction in Python integers (any dynamic range)."""
    ratios = [float(x).as_integer_ratio() for x in p.tolist()]
    den = max(d for _, d in ratios)
    ints = [n * (den // d) for n, d in ratios]
    total = sum(ints)
    if total <= 0:
        raise ParameterError("probabilities must not all be zero")
    shares = [divmod(v << 64, total) for v in ints]
    weights = [q for q, _ in shares]
    rest = TOTAL - sum(weights)
    order = sorted(range(len(shares)), key=lambda i: shares[i][1], reverse=True)
    for i in order[:rest]:
        weights[i] += 1
    return weights


_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


_RUN = 1 << 16  # exact_sum works through runs of this many values with one scratch array


def exact_sum(v: NDArray[np.uint64]) -> int:
    """Σ v exactly (as a Python int) for fewer than 2^31 uint64 values.  Long arrays go
    run by run through one small scratch array (each run's sums of 32-bit halves stay
    below 2^48): the same integer without two temporaries of the array's size."""
    if v.size <= _RUN:
        return (int(np.sum(v >> _S32, dtype=np.uint64)) << 32) + int(np.sum(v & _M32,
                                                                           dtype=np.uint64))
    scratch = np.empty(_RUN, dtype=np.uint64)
    hi = lo = 0
    for start in range(0, v.size, _RUN):
        run = v[start : start + _RUN]
        s = scratch[: run.size]
        np.right_shift(run, _S32, out=s)
        hi += int(np.sum(s, dtype=np.uint64))
        np.bitwise_and(run, _M32, out=s)
        lo += int(np.sum(s, dtype=np.uint64))
    return (hi << 32) + lo


def _quantize_fast(p: NDArray[np.float64]) -> NDArray[np.uint64] | None:
    """The same weights as :func:`_quantize_exact`, without a per-entry Python loop, when
    every non-zero float lies within a factor 2^10 of the others (else None).

    p_i = m_i·2^(e_i) with 53-bit integer mantissas, so v_i = m_i·2^(e_i − min e) < 2^63
    are the exact integer proportions (any common power-of-two factor leaves shares and
    remainder order unchanged) and 2^52 <= T = Σ v_i < 2^93.  The shares q_i = ⌊v_i·2^64/T⌋
    and remainders r_i = v_i·2^64 − q_i·T are computed *exactly* for all i at once by
    packing the v_i into 192-bit fields of one Python integer: with R = ⌊2^128/T⌋ < 2^76,
    the fields of V·R shifted by 64 give q_i or q_i − 1 (the error is < v_i/2^64 < 1/2);
    then (V·2^64 − Q·T) holds each r̃_i ∈ [0, 2T) in its own field (no borrow crosses a
    field), and r̃_i >= T adds the missing unit.  The rest 2^64 − Σq_i units go to the
    largest remainders, ties to the lowest index (a stable lexicographic sort on the
    remainders' two 64-bit limbs), exactly as the reference does.
    """
    n = p.size
    nz = p > 0
    if n < 2 or n >= 1 << 30 or not nz.any():
        return None
    mant, expo = np.frexp(p)
    emin = int(expo[nz].min())
    if int(expo[nz].max()) - emin > 10:
        return None
    np.ldexp(mant, 53, out=mant)
    m53 = mant.astype(np.uint64)  # exact 53-bit integer mantissas
    expo -= emin
    expo[~nz] = 0
    v = np.left_shift(m53, expo.astype(np.uint64), out=m53)  # (in place: one array)
    total = exact_sum(v)
    if int(v.max()) >= total:  # one non-zero entry: its weight 2^64 needs the reference
        return None
    shares = _compiled_shares(v, total)
    if shares is not None:  # the same exact integers, in C (kernels/quantize.c)
        q, r_lo, r_hi = shares
        return _hand_out_rest(q, r_lo, r_hi, n)
    R = (1 << 128) // total  # < 2^76: T >= 2^52 (the largest v has a 53-bit mantissa)
    limbs = 3  # 192-bit fields: v_i·R < 2^63·2^76, and r̃_i < 2T < 2^83
    packed = np.zeros((n, limbs), dtype=np.uint64)
    packed[:, 0] = v
    V = int.from_bytes(packed.tobytes(), "little")
    P = np.frombuffer((V * R).to_bytes(8 * limbs * n, "little"),
                      dtype=np.uint64).reshape(n, limbs)
    if np.any(P[:, 2]):  # pragma: no cover - q̃ = ⌊v_i·R/2^64⌋ <= q_i < 2^64
        raise AssertionError("quantisation share out of range")
    q = P[:, 1].copy()  # ⌊v_i·R / 2^64⌋: q_i or q_i − 1
    packed[:, 0] = q
    Q = int.from_bytes(packed.tobytes(), "little")
    Y = np.frombuffer(((V << 64) - Q * total).to_bytes(8 * limbs * n, "little"),
                      dtype=np.uint64).reshape(n, limbs)
    if np.any(Y[:, 2]):  # pragma: no cover - r̃ < 2T < 2^83 by construction
        raise AssertionError("quantisation remainder out of range")
    r_lo, r_hi = Y[:, 0].copy(), Y[:, 1].copy()
    t_lo, t_hi = np.uint64(total & (TOTAL - 1)), np.uint64(total >> 64)
    over = (r_hi > t_hi) | ((r_hi == t_hi) & (r_lo >= t_lo))
    borrow = (r_lo < t_lo) & over
    r_lo = np.where(over, r_lo - t_lo, r_lo)
    r_hi = np.where(over, r_hi - t_hi - borrow.astype(np.uint64), r_hi)
    q = q + over.astype(np.uint64)
    return _hand_out_rest(q, r_lo, r_hi, n)


def _hand_out_rest(q: NDArray[np.uint64], r_lo: NDArray[np.uint64], r_hi: NDArray[np.uint64],
                   n: int) -> NDArray[np.uint64]:
    """Give the 2^64 − Σq_i missing units to the largest remainders (ties: lowest index)."""
    rest = TOTAL - exact_sum(q)
    if not 0 <= rest < n:  # pragma: no cover - Σ floor(shares) is within n of 2^64
        raise AssertionError("quantisation lost mass")
    if rest:
        q[_largest_remainders(r_lo, r_hi, rest)] += np.uint64(1)
    return q


def _largest_remainders(r_lo: NDArray[np.uint64], r_hi: NDArray[np.uint64], k: int
                        ) -> NDArray[np.intp]:
    """The indices of the ``k`` largest remainders r_hi·2^64 + r_lo, ties to the lowest index:
    the first ``k`` of a full sort (remainder descending, index ascending), found in linear
    time.  Every remainder whose high limb exceeds the k-th largest high limb h is in; the
    rest are the first of those whose high limb is h, sorted the same way (a few entries)."""
    n = r_hi.size
    h = np.partition(r_hi, n - k)[n - k]  # the k-th largest high limb
    above = np.flatnonzero(r_hi > h)
    tie = np.flatnonzero(r_hi == h)
    tie = tie[np.lexsort((tie, ~r_lo[tie]))]  # low limb descending, index ascending
    return np.concatenate((above, tie[: k - above.size]))


def largest_first(values: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Indices of the ``k`` largest of ``values`` (no NaN), ties to the lowest index: the
    first ``k`` of ``np.argsort(-values, kind="stable")``, found in linear time (a partition
    instead of a full sort).  Every value above the k-th largest v is in; the rest are the
    first, by index, of those equal to v."""
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    v = np.partition(values, values.size - k)[values.size - k]  # the k-th largest value
    above = np.flatnonzero(values > v)
    return np.concatenate([above, np.flatnonzero(values == v)[: k - above.size]])


def _compiled_shares(v: NDArray[np.uint64], total: int
                     ) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]] | None:
    """(q_i, r_i low limb, r_i high limb) = divmod(v_i·2^64, T) exactly, from
    ``kernels/quantize.c``; None when the kernels are off."""
    from .. import kernels

    vp = ctypes.c_void_p
    fn = kernels.function("dpk_quantize_shares", [vp, ctypes.c_int64, ctypes.c_uint64,
                                                  ctypes.c_uint64, vp, vp, vp], ctypes.c_int64)
    if fn is None or total >= 1 << 128:
        return None
    v = np.ascontiguousarray(v, dtype=np.uint64)
    q, r_lo, r_hi = (np.empty(v.size, dtype=np.uint64) for _ in range(3))
    if fn(v.ctypes.data, v.size, total & (TOTAL - 1), total >> 64, q.ctypes.data,
          r_lo.ctypes.data, r_hi.ctypes.data) != 0:  # pragma: no cover - v_i < T always
        return None
    return q, r_lo, r_hi


class AliasTable:
    """Exact alias sampler for integer weights summing to 2^64."""

    __slots__ = ("_alias", "_exact", "_size", "_thr", "bits", "columns", "mass")

    def __init__(self, weights: Sequence[int] | NDArray[np.uint64]) -> None:
        self._exact: NDArray[np.uint64] | None = None  # exact_weights_array, once checked
        arr = _weight_array(weights)
        if arr is None:  # a single outcome of weight 2^64 (or invalid input): reference
            self._build_reference([int(x) for x in weights])
            return
        n = arr.size
        bits = max(1, (n - 1).bit_length())
        cols = 1 << bits
        mass = TOTAL >> bits
        w = np.zeros(cols, dtype=np.uint64)
        w[:n] = arr
        built = _compiled_sweep(w, np.uint64(mass), rem=w)  # w is this call's own copy
        self._thr, self._alias = built if built is not None else _sweep(w, np.uint64(mass))
        self.bits = bits
        self.columns = cols
        self.mass = mass
        self._size = n
        got = self._exact_from_table(w)  # (w, the sweep's spent scratch)
        if not np.array_equal(got, arr):  # pragma: no cover - the sweep is exact
            raise AssertionError("alias construction lost mass")
        if got.dtype == np.uint64:  # recomputed from the sampled table: kept (read-only)
            got.flags.writeable = False
            self._exact = got

    def _build_reference(self, w: list[int]) -> None:
        """Vose's construction in Python integers (the order :func:`_sweep` reproduces)."""
        if not w or any(x < 0 for x in w) or sum(w) != TOTAL:
            raise ParameterError("alias weights must be non-negative integers summing to 2^64")
        n = len(w)
        bits = max(1, (n - 1).bit_length())
        cols = 1 << bits
        mass = TOTAL >> bits
        w = w + [0] * (cols - n)
        thr = [0] * cols
        alias = list(range(cols))
        small = [i for i in range(cols) if w[i] < mass]
        large = [i for i in range(cols) if w[i] >= mass]
        rem = list(w)
        while small and large:
            s = small.pop()
            g = large[-1]
            thr[s] = rem[s]
            alias[s] = g
            rem[g] -= mass - rem[s]
            if rem[g] < mass:
                large.pop()
                small.append(g)
        for i in large + small:  # exactly full columns (integer arithmetic: no drift)
            if rem[i] != mass:
                raise AssertionError("alias construction lost mass")  # pragma: no cover
            thr[i] = mass
            alias[i] = i
        self.bits = bits
        self.columns = cols
        self.mass = mass
        self._size = n
        self._thr = np.array(thr, dtype=np.uint64)
        self._alias = np.array(alias, dtype=np.int64)

    @property
    def size(self) -> int:
        """Number of outcomes 0..size-1."""
        return self._size

    def sample_words(self, words: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Outcomes for the given uniform words (one word per outcome)."""
        col = (words >> np.uint64(64 - self.bits)).astype(np.int64)
        u = words & np.uint64(self.mass - 1)
        return np.where(u < self._thr[col], col, self._alias[col])

    def sample(self, rng: RandomSource, n: int) -> NDArray[np.int64]:
        return self.sample_words(rng.words(n))

    def exact_weights(self) -> list[int]:
        """Numerators of the sampled probabilities (denominator 2^64), from the table itself."""
        if self.columns <= 2 or self.mass == TOTAL:
            return self._exact_weights_reference()
        return self.exact_weights_array().tolist()

    def exact_weights_array(self) -> NDArray[np.uint64]:
        """:meth:`exact_weights` as uint64, summed without a Python loop: the sums are taken
        modulo 2^64, which is exact because every true sum is < 2^64 (checked: the exact
        total of the residues must be 2^64, the table's total mass, so no sum wrapped).
        Computed once from the table at construction and kept (a read-only array)."""
        if self._exact is not None:
            return self._exact
        return self._exact_from_table()

    def _exact_from_table(self, scratch: NDArray[np.uint64] | None = None
                          ) -> NDArray[np.uint64]:
        """:meth:`exact_weights_array` recomputed from the table (``scratch``: a spare
        uint64 array of the table's column count, for the alias shares)."""
        thr = self._thr
        out = thr.copy()
        share = np.subtract(np.uint64(self.mass), thr, out=scratch)  # mass − thr
        np.add.at(out, self._alias, share)
        if exact_sum(out) != TOTAL:  # a sum reached 2^64: a one-outcome table
            return np.array(self._exact_weights_reference(), dtype=object)  # pragma: no cover
        if np.any(out[self._size :]):
            raise AssertionError("padding columns carry mass")  # pragma: no cover
        return out[: self._size]

    def exact_weights_float(self) -> NDArray[np.float64]:
        """:meth:`exact_weights` as float64 (each correctly rounded, as ``float(int)``)."""
        if self.columns <= 2 or self.mass == TOTAL:
            return np.array([float(x) for x in self._exact_weights_reference()])
        return self.exact_weights_array().astype(np.float64)

    def _exact_weights_reference(self) -> list[int]:
        out = [0] * self.columns
        thr = [int(x) for x in self._thr]
        alias = [int(x) for x in self._alias]
        for c in range(self.columns):
            out[c] += thr[c]
            out[alias[c]] += self.mass - thr[c]
        if any(out[self._size :]):
            raise AssertionError("padding columns carry mass")  # pragma: no cover
        return out[: self._size]


def _weight_array(weights: Sequence[int] | NDArray[np.uint64]) -> NDArray[np.uint64] | None:
    """Weights as a uint64 array if they are valid and each < 2^64 (else None)."""
    if isinstance(weights, np.ndarray) and weights.dtype == np.uint64:
        arr = np.ascontiguousarray(weights).reshape(-1)
    else:
        try:
            arr = np.fromiter((int(x) for x in weights), dtype=np.uint64)
        except (OverflowError, ValueError, TypeError):
            return None
    if arr.size < 2 or exact_sum(arr) != TOTAL:
        return None
    return arr


def _compiled_sweep(w: NDArray[np.uint64], mass: np.uint64,
                    rem: NDArray[np.uint64] | None = None
                    ) -> tuple[NDArray[np.uint64], NDArray[np.int64]] | None:
    """The table of :meth:`AliasTable._build_reference` (the same loop, in C:
    ``kernels/quantize.c``), or None when the kernels are off.  ``rem``: the loop's
    scratch of remainders (it copies w[i] there before using it, so it may be ``w`` itself
    when the caller no longer needs w)."""
    from .. import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    fn = kernels.function("dpk_alias_build", [vp, i64, ctypes.c_uint64, vp, vp, vp, vp], i64)
    if fn is None:
        return None
    w = np.ascontiguousarray(w, dtype=np.uint64)
    cols = w.size
    thr = np.empty(cols, dtype=np.uint64)
    alias = np.empty(cols, dtype=np.int64)
    rem = np.empty(cols, dtype=np.uint64) if rem is None else rem
    stack = np.empty(2 * cols, dtype=np.int64)
    if fn(w.ctypes.data, cols, int(mass), thr.ctypes.data, alias.ctypes.data, rem.ctypes.data,
          stack.ctypes.data) != 0:  # pragma: no cover - the weights sum to 2^64
        raise AssertionError("alias construction lost mass")
    return thr, alias


def _sweep(w: NDArray[np.uint64], mass: np.uint64
           ) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """Vose's alias table, the same one :meth:`AliasTable._build_reference` builds, from
    prefix sums instead of a loop.

    The loop serves light columns (w < D) in descending index order from heavy ones (w >= D)
    in descending order; a heavy whose remainder drops below D becomes light at once and is
    served by the next heavy.  Laid out on one line, the light deficits d_t = D − w occupy
    [Dm_{t−1}, Dm_t) (prefix sums) and the heavy excesses e_k = w − D occupy [E_{k−1}, E_k),
    and the loop walks both: light t is served by the first heavy k with E_k >= Dm_{t−1};
    heavy k turns light after the first light t with Dm_t > E_k, keeping D − (Dm_t − E_k)
    with the next heavy as alias; heavies never turned keep their full column.  All sums
    are < 2^64 (the deficits total at most 2^64 − D), so uint64 arithmetic is exact.
    """
    cols = w.size
    thr = np.full(cols, mass, dtype=np.uint64)
    alias = np.arange(cols, dtype=np.int64)
    light = np.flatnonzero(w < mass)[::-1]
    heavy = np.flatnonzero(w >= mass)[::-1]
    if light.size == 0:
        return thr, alias
    dm = np.cumsum(mass - w[light], dtype=np.uint64)
    e = np.cumsum(w[heavy] - mass, dtype=np.uint64)
    before = np.concatenate([np.zeros(1, dtype=np.uint64), dm[:-1]])
    k = np.searchsorted(e, before, side="left")
    thr[light] = w[light]
    alias[light] = heavy[k]
    t = np.searchsorted(dm, e, side="right")
    turned = np.flatnonzero(t < light.size)
    if turned.size and turned[-1] + 1 >= heavy.size:  # pragma: no cover - Σ d = Σ e
        raise AssertionError("alias construction lost mass")
    thr[heavy[turned]] = mass - (dm[t[turned]] - e[turned])
    alias[heavy[turned]] = heavy[turned + 1]
    return thr, alias
