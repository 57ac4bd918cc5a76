"""Largest-remainder quantisation to 2^64 for weights of any dynamic range, without a Python
loop per entry: the same integers as the pure-Python reference of :mod:`dpnoise.exact.alias`.

Each non-zero float is p_i = m_i·2^(e_i) with a 53-bit integer mantissa m_i, so with
s_i = e_i − min e the exact integer proportions are v_i = m_i·2^(s_i) and T = Σ v_i
(any common power of two leaves the shares and the order of the remainders unchanged).
The shares q_i = ⌊v_i·2^64/T⌋ and remainders r_i = v_i·2^64 − q_i·T are computed for all
i at once by packing the v_i into F-bit fields of one Python integer V (F a multiple of
64 with room for every intermediate): with t the bit length of T and R = ⌊2^(t+64)/T⌋,
the fields of V·R shifted right by t are q_i or q_i − 1 (the error of R costs less than
v_i/2^t < 1); then (V·2^64 − Q·T) holds each r̃_i ∈ [0, 2T) in its own field (no borrow
crosses a field) and r̃_i >= T adds the missing unit.  The 2^64 − Σq_i missing units go
to the largest remainders, ties to the lowest index: selected on the top 64 bits of the
remainders (a monotone key), the few entries whose key ties at the cut compared exactly.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numpy.typing import NDArray

TOTAL = 1 << 64
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _column_sum(v: NDArray[np.uint64]) -> int:
    """Σ v exactly for fewer than 2^31 uint64 values."""
    return (int(np.sum(v >> _S32, dtype=np.uint64)) << 32) + int(np.sum(v & _M32,
                                                                       dtype=np.uint64))


def _bits(limbs: NDArray[np.uint64], pos: int) -> NDArray[np.uint64]:
    """Bits [pos, pos + 64) of every row's little-endian limbs (zeros past the last limb)."""
    k, o = divmod(pos, 64)
    out = limbs[:, k].copy() if k < limbs.shape[1] else np.zeros(limbs.shape[0], np.uint64)
    if o:
        out >>= np.uint64(o)
        if k + 1 < limbs.shape[1]:
            out |= limbs[:, k + 1] << np.uint64(64 - o)
    return out


def _fields(x: int, n: int, limbs: int) -> NDArray[np.uint64]:
    return np.frombuffer(x.to_bytes(8 * limbs * n, "little"), dtype=np.uint64).reshape(n, limbs)


def _pack(rows: NDArray[np.uint64]) -> int:
    return int.from_bytes(memoryview(np.ascontiguousarray(rows)).cast("B"), "little")


def quantize_wide(p: NDArray[np.float64]) -> NDArray[np.uint64] | None:
    """Weights W_i summing to 2^64 by largest remainders of the exact shares p_i·2^64/Σp
    (ties: lowest index), or None when one entry holds all the mass (2^64 needs a Python
    int) or there are fewer than two entries.  ``p``: finite, >= 0, not all zero."""
    n = p.size
    nz = p > 0
    if n < 2 or n >= 1 << 30 or np.count_nonzero(nz) < 2:
        return None
    mant, expo = np.frexp(p)
    emin = int(expo[nz].min())
    m53 = np.ldexp(mant, 53).astype(np.uint64)  # exact 53-bit integer mantissas (0 for 0)
    shift = np.where(nz, expo - emin, 0).astype(np.int64)
    top_shift = int(shift.max())
    total = _compiled_total(m53, shift)
    if total is None:
        total = _exact_total(m53[nz], shift[nz], top_shift)
    t = total.bit_length()
    shares = _compiled_shares(m53, shift, total, t)
    if shares is not None:  # the exact q_i, r_i and keys at once (kernels/quantize_wide.c)
        q, rem, key = shares
        return _hand_out(q, key, rem, {}, n)
    # field: v_i·R < 2^(53 + top_shift + 65), v_i·2^64 < 2^(53 + top_shift + 64), r̃_i < 2^(t+1),
    # and the top-64-bit key of a remainder reads up to bit t
    limbs = -(-(max(53 + top_shift + 66, t + 66)) // 64)
    rows = np.arange(n)
    packed = np.zeros((n, limbs), dtype=np.uint64)
    k, o = np.divmod(shift, 64)
    packed[rows, k] = m53 << o.astype(np.uint64)
    spill = (o > 0) & nz
    packed[rows[spill], k[spill] + 1] = m53[spill] >> (64 - o[spill]).astype(np.uint64)
    V = _pack(packed)
    R = (1 << (t + 64)) // total  # < 2^65
    q = _bits(_fields(V * R, n, limbs), t)  # ⌊v_i·R / 2^t⌋: q_i or q_i − 1, < 2^64
    qrows = np.zeros((n, limbs), dtype=np.uint64)
    qrows[:, 0] = q
    rem = _fields((V << 64) - _pack(qrows) * total, n, limbs)  # r̃_i = v_i·2^64 − q̃_i·T
    low = max(0, t - 63)  # remainders are < 2T < 2^(t+1): the key is bits [t−63, t+1)
    key = _bits(rem, low)
    t_key = np.uint64((total >> low) & (TOTAL - 1))
    maybe = np.flatnonzero(key >= t_key)  # r̃ >= T only there (the key is monotone)
    exact_rem: dict[int, int] = {}
    for i in maybe.tolist():
        r = int.from_bytes(rem[i].tobytes(), "little")
        if r >= total:
            r -= total
            q[i] += np.uint64(1)
        exact_rem[i] = r
        key[i] = np.uint64((r >> low) & (TOTAL - 1))
    return _hand_out(q, key, rem, exact_rem, n)


def _hand_out(q: NDArray[np.uint64], key: NDArray[np.uint64], rem: NDArray[np.uint64],
              exact_rem: dict[int, int], n: int) -> NDArray[np.uint64] | None:
    """Give the 2^64 − Σq_i missing units to the largest remainders (ties: lowest index), or
    None when one entry holds (almost) all the mass."""
    if int(q.max()) == TOTAL - 1:  # one entry holds (almost) all the mass: 2^64 may be due
        return None
    if not 0 <= TOTAL - _column_sum(q) < n:  # pragma: no cover - Σ⌊share⌋ is within n of 2^64
        raise AssertionError("quantisation lost mass")
    extra = TOTAL - _column_sum(q)
    if extra:
        q[_largest(key, rem, exact_rem, extra)] += np.uint64(1)
    return q


def _compiled_shares(m53: NDArray[np.uint64], shift: NDArray[np.int64], total: int, t: int
                     ) -> tuple[NDArray[np.uint64], NDArray[np.uint64], NDArray[np.uint64]] | None:
    """(q_i, r_i as rows of limbs, bits [t − 63, t + 1) of r_i) with (q_i, r_i) =
    divmod(v_i·2^64, T) exactly, v_i = m_i·2^(s_i), from ``kernels/quantize_wide.c``; None
    when the kernels are off or T exceeds 256 bits."""
    from .. import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    u64 = ctypes.c_uint64
    fn = kernels.function("dpk_quantize_wide_shares",
                          [vp, vp, i64, vp, i64, i64, u64, u64, vp, vp, i64, vp], ctypes.c_int64)
    if fn is None or t > 256:
        return None
    recip = min((1 << (t + 127)) // total, (1 << 128) - 1)  # one reciprocal for every share
    tl = -(-t // 64)
    limbs = np.frombuffer(total.to_bytes(8 * tl, "little"), dtype=np.uint64)
    m53 = np.ascontiguousarray(m53, dtype=np.uint64)
    shift = np.ascontiguousarray(shift, dtype=np.int64)
    q = np.empty(m53.size, dtype=np.uint64)
    rem = np.empty((m53.size, tl), dtype=np.uint64)
    key = np.empty(m53.size, dtype=np.uint64)
    if fn(m53.ctypes.data, shift.ctypes.data, m53.size, limbs.ctypes.data, tl, t,
          recip & (TOTAL - 1), recip >> 64, q.ctypes.data, rem.ctypes.data, max(0, t - 63),
          key.ctypes.data) != 0:  # pragma: no cover - valid weights are always in range
        return None
    return q, rem, key


def _compiled_total(m53: NDArray[np.uint64], shift: NDArray[np.int64]) -> int | None:
    """Σ m_i·2^(s_i) exactly (``kernels/quantize_wide.c``), or None when the kernels are off
    or a shift is beyond the kernel's 256 bits."""
    from .. import kernels

    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    fn = kernels.function("dpk_wide_total", [vp, vp, i64, vp], i64)
    if fn is None:
        return None
    m53 = np.ascontiguousarray(m53, dtype=np.uint64)
    shift = np.ascontiguousarray(shift, dtype=np.int64)
    out = np.zeros(6, dtype=np.uint64)
    if fn(m53.ctypes.data, shift.ctypes.data, m53.size, out.ctypes.data) != 0:
        return None
    return int.from_bytes(out.tobytes(), "little")


def _largest(key: NDArray[np.uint64], rem: NDArray[np.uint64], exact_rem: dict[int, int],
             k: int) -> NDArray[np.intp]:
    """The k largest remainders, ties to the lowest index: every key above the k-th largest
    key h is in; among keys equal to h (a few) the exact remainders decide, then the index."""
    n = key.size
    h = np.partition(key, n - k)[n - k]
    above = np.flatnonzero(key > h)
    tie = np.flatnonzero(key == h).tolist()

    def exact(i: int) -> int:
        return exact_rem[i] if i in exact_rem else int.from_bytes(rem[i].tobytes(), "little")

    tie.sort(key=lambda i: (-exact(i), i))
    return np.concatenate([above, np.array(tie[: k - above.size], dtype=np.intp)])


def _exact_total(m53: NDArray[np.uint64], shift: NDArray[np.int64], top_shift: int) -> int:
    """T = Σ_s 2^s · Σ_{s_i = s} m_i exactly: per shift, the sums of the low and the high
    32-bit halves of the mantissas as float ``bincount`` (each below 2^32·2^21 = 2^53 with
    fewer than 2^21 entries, hence exact)."""
    if m53.size >= 1 << 21:  # pragma: no cover - tables here are smaller
        return sum(_column_sum(m53[shift == s]) << s for s in np.unique(shift).tolist())
    lo = np.bincount(shift, weights=(m53 & _M32).astype(np.float64), minlength=top_shift + 1)
    hi = np.bincount(shift, weights=(m53 >> _S32).astype(np.float64), minlength=top_shift + 1)
    return sum(((int(h) << 32) + int(w)) << s
               for s, (h, w) in enumerate(zip(hi.tolist(), lo.tolist(), strict=True)))
