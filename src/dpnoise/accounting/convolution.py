"""Convolution of non-negative arrays with a bound of its round-off: the numerical core that
both the current PLD composition (:mod:`.pld`) and the first format's (:mod:`.pld_legacy`)
use.  Proofs of the bounds are in the functions' docstrings."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

U = 2.0**-53  # unit roundoff of binary64


def fft_l1_error(a: NDArray[np.float64], b: NDArray[np.float64], n: int) -> float:
    """ℓ1 bound of the round-off of the overlap-add FFT convolution of a and b (b shorter).

    One block product ``ifft(fft(a_j)·fft(b))`` of FFT length N has, with
    ε_F = log2(N)·η/(1 − log2(N)·η) the relative 2-norm error of one transform (Higham 2002,
    Thm. 24.2; η taken as 10u: twiddles accurate to a few ulps), an error of 2-norm
    <= (3ε_F + 2u)·(‖a_j‖_2‖b‖_1 + ‖a_j‖_1‖b‖_2) (|b̂_k| <= ‖b‖_1, Parseval).  Summed over the
    blocks (Σ‖a_j‖_1 = ‖a‖_1, Σ‖a_j‖_2 <= √blocks·‖a‖_2), and ‖·‖_1 <= √n‖·‖_2 on the n
    outputs.  N is bounded by 2·(len a + len b) and a factor 4 is added for safety.
    """
    N = 1 << max(1, math.ceil(math.log2(max(2, 2 * (a.size + b.size)))))
    lg = math.log2(N)
    eta = 10 * U
    eps_f = lg * eta / (1 - lg * eta)
    blocks = math.ceil(max(a.size, b.size) / max(1, min(a.size, b.size))) + 1
    # (einsum, not BLAS: no thread start-up on a busy machine; sums of squares, exact enough
    # for a bound that is padded by a factor 4)
    l2a = math.sqrt(float(np.einsum("i,i->", a, a)))
    l2b = math.sqrt(float(np.einsum("i,i->", b, b)))
    l1a, l1b = float(a.sum()), float(b.sum())
    cross = math.sqrt(blocks) * (l2a * l1b + l1a * l2b)
    return 4.0 * math.sqrt(n) * (3 * eps_f + 2 * U) * cross


def oaconvolve(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Linear convolution by overlap-add with numpy's pocketfft (no wrap-around).

    The longer operand is cut into blocks of K >= the shorter length; each block is
    convolved with the shorter operand by one real FFT of length N >= K + len(short) − 1
    (a power of two, so the error bound of :func:`fft_l1_error`, which uses a larger N and
    counts the blocks, applies), and the overlapping pieces are added.  numpy's FFT instead
    of scipy.signal: importing scipy.signal (which imports scipy.stats) took seconds on a
    loaded machine and dominated ``Session.plan``.
    """
    big, small = (a, b) if a.size >= b.size else (b, a)
    nb, ns = big.size, small.size
    out_n = nb + ns - 1
    if ns == 0:
        return np.zeros(0)
    K = max(ns, min(nb, 1 << max(4, math.ceil(math.log2(8 * ns)))))
    N = 1 << math.ceil(math.log2(K + ns - 1))
    blocks = -(-nb // K)
    pad = np.zeros(blocks * K)
    pad[:nb] = big
    spec = np.fft.rfft(pad.reshape(blocks, K), n=N, axis=1) * np.fft.rfft(small, n=N)
    pieces = np.fft.irfft(spec, n=N, axis=1)[:, :K + ns - 1]
    out = np.zeros((blocks + 1) * K)
    out[:blocks * K].reshape(blocks, K)[:] = pieces[:, :K]
    if ns > 1:  # the overlapping tails of each block go onto the start of the next (K >= ns:
        # each output gets at most one tail, so this is one addition per entry)
        out[K:].reshape(blocks, K)[:, :ns - 1] += pieces[:, K:]
    return out[:out_n]


ATOM = 0.01  # entries of the shorter operand above this are convolved exactly
MAX_ATOMS = 32


def atoms_and_fft(a: NDArray[np.float64], b: NDArray[np.float64],
                   n: int) -> tuple[NDArray[np.float64], float]:
    """Linear convolution of non-negative a and b with an ℓ1 bound of its round-off.

    The FFT error bound grows with ‖b‖_2, which the large atoms of a PLD (e.g. the two
    masses ~1/2 of a Laplace release at ±ε) dominate.  So the (at most MAX_ATOMS) entries of
    the shorter operand above ATOM are convolved exactly by shifted additions, and only the
    rest by FFT (:func:`fft_l1_error` on the rest).  Each output of the additions is a sum
    of at most K + 1 non-negative products and one FFT value, so its error is at most
    γ_{K+2} <= 2(K + 2)u of the exact total (Higham 2002, eq. (3.5) with Lemma 3.3),
    summed: 2(K + 2)u·‖a‖_1‖b‖_1 in ℓ1.
    """
    big, small = (a, b) if a.size >= b.size else (b, a)
    atoms = np.flatnonzero(small > ATOM)
    if atoms.size > MAX_ATOMS:
        atoms = atoms[np.argsort(small[atoms])[-MAX_ATOMS:]]
    if atoms.size == 0:
        return oaconvolve(a, b), fft_l1_error(a, b, n)
    rest = small.copy()
    rest[atoms] = 0.0
    c = oaconvolve(big, rest)
    err = fft_l1_error(big, rest, n)
    for i in atoms.tolist():
        c[i:i + big.size] += small[i] * big
    err += 2 * (atoms.size + 2) * U * float(big.sum()) * float(small.sum())
    return c, err
