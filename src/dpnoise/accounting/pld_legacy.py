"""The composition of PLDs as ledgers of the first format did it (kept to verify them).

A ledger stores every charge and the content hash of every composed state; ``ledger
verify`` recomposes the charges and compares the hashes.  Charges and states serialised
before the tilted error bounds (:mod:`.tilt`; their PLDs carry no format version) are
therefore composed by the rules they were written with: FFT round-off as an additive δ
(``slack``), entries at the round-off level moved to +∞ or lifted, the top 1e-16 of finite
mass moved to +∞ per composition.  Every step only raises H (proofs in :mod:`.pld`), so
these states remain valid upper bounds; they are only looser at small δ.  A state composed
with a charge of the current format is composed by :meth:`.pld.PLD.compose`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .convolution import U, atoms_and_fft

TAIL_HI_V1 = 1e-16
TAIL_LO_V1 = 1e-9


def truncated_v1(p: Any) -> Any:
    """Move the top 1e-16 of finite mass to +∞ and lift the bottom 1e-9 (first format)."""
    m = np.maximum(p.masses, 0.0)
    if m.size <= 1:
        return type(p)(p.h, p.start, m.copy(), p.inf_mass, p.slack, version=1)
    upper = np.cumsum(m[::-1])[::-1]        # upper[i] = Σ_{j>=i} m_j
    lower = np.cumsum(m)                    # lower[i] = Σ_{j<=i} m_j
    hi_cut = int(np.searchsorted(-upper, -TAIL_HI_V1, side="right"))
    hi = max(0, hi_cut - 1)                 # keep 0..hi, send hi+1.. to ∞
    moved_up = float(upper[hi + 1]) if hi + 1 < m.size else 0.0
    lo = int(np.searchsorted(lower, TAIL_LO_V1, side="right"))
    lo = min(lo, hi)
    new = m[lo:hi + 1].copy()
    if lo > 0:
        new[0] += float(lower[lo - 1])
    return type(p)(p.h, p.start + lo, new, min(1.0, p.inf_mass + moved_up), p.slack, version=1)


def compose_v1(x: Any, y: Any) -> Any:
    """The product pair's PLD by the first format's rules (round-off added to ``slack``)."""

    a, b = x.masses, y.masses
    n = a.size + b.size - 1
    if min(a.size, b.size) <= 64:
        c = np.convolve(a, b)  # sums of non-negative products: no cancellation
        err = 2 * min(a.size, b.size) * U * float(a.sum()) * float(b.sum())
    else:
        c, err = atoms_and_fft(a, b, n)
    inf = 1.0 - (1.0 - x.inf_mass) * (1.0 - y.inf_mass)
    lift = 0
    if min(a.size, b.size) > 64:
        noise = err / math.sqrt(n)
        big = np.flatnonzero(c > noise)
        if big.size:
            i0, i1 = int(big[0]), int(big[-1])
            inf += float(np.maximum(c[i1 + 1:], 0.0).sum())
            low = float(np.maximum(c[:i0], 0.0).sum())
            c = c[i0:i1 + 1].copy()
            c[0] += low
            lift = i0
        else:
            inf += float(np.maximum(c, 0.0).sum())
            c = np.zeros(1)
    c = np.maximum(c, 0.0)
    scale = max(1.0, float(a.sum()))
    slack = x.slack * max(1.0, float(b.sum())) + y.slack * scale + err
    return truncated_v1(type(x)(x.h, x.start + y.start + lift, c, min(1.0, inf), slack,
                            version=1))
