"""cos θ and sin θ of PlanarLaplace's random angle θ = 2π·k·2^-53, by table and polynomial.

The angle's 53 random bits k split into ``i = k >> 43`` (10 bits) and ``s = k mod 2^43``:
θ = 2π·i/1024 + ρ, ρ = 2π·s·2^-53 in [0, 2π/1024).  Then (angle addition)

    cos θ = C_i·cos ρ − S_i·sin ρ,    sin θ = S_i·cos ρ + C_i·sin ρ,

with the tables C_i = cos(2πi/1024), S_i = sin(2πi/1024) built once from the first octant
(i <= 128: libm's cos/sin of π·i/512, the rest by the exact symmetries of the circle) and the
short Taylor polynomials

    sin ρ ≈ r·(1 − r²·(1/6 − r²/120)),    cos ρ ≈ 1 − r²·(1/2 − r²·(1/24 − r²/720)),

r = fl(s·fl(2π·2^-53)).  The table is indexed by random bits only (never by the true point),
and every draw runs the same operations (docs/timing.md).  numpy (the reference) and the
compiled kernel (``kernels/planar.c``) evaluate the same expression in the same order with
the same tables, so they agree bit for bit; no libm call per draw (sin/cos were ~80 % of the
sampler's time).

Error bound (absolute, each of cos θ and sin θ), against the exact θ = 2π·k·2^-53:

* table: the first-octant angle fl(π·i/512) is within 0.9e-16 of π·i/512 (|fl(π) − π|·i/512
  plus half an ulp of an angle <= π/4), and libm's cos/sin are within one ulp (<= 1.2e-16):
  |C_i − cos(2πi/1024)|, |S_i − sin(2πi/1024)| <= 2.1e-16;
* r: s·fl(2π·2^-53) is exact up to the constant's relative error 2^-53 and one rounding,
  |r − ρ| <= 2^-52·ρ < 1.4e-18 (ρ < 2π/1024 = 0.00614);
* polynomials: the truncation errors are <= ρ^7/5040 < 1.3e-19 (sin) and ρ^8/40320 < 1e-22
  (cos); their float evaluation adds <= 2.3e-18 to sin ρ (a few relative roundings of a value
  < 0.0062) and <= 1.2e-16 to cos ρ (the final 1 − x, an ulp of a value near 1);
* combination: each product and the sum round once (<= 1.1e-16 each for the terms near 1,
  <= 4.4e-19 for the products with sin ρ), and the tables' error enters multiplied by
  |cos ρ| <= 1 and |sin ρ| < 0.0062.

Total: |ĉ − cos θ| <= 2.1e-16 + 1.2e-16 + 1.1e-16 + 1.1e-16 + 1e-17 < 5.6e-16 < 2^-50, and
the same for sin θ.  A point's coordinate is x0 + ρ_r·ĉ with ρ_r the radius, so the angle
adds <= 2^-50·ρ_r to its error, and on the range that matters (ρ_r <= D + δr, D the region's
diameter) <= 2^-50·(D + δr): a sixteenth of the sampler's δt = 2^-46·(b + D + A)
(:func:`dpnoise.laws.finite_precision.delta_t_recommended`), whose 2^-46 already covered the
previous libm evaluation of fl(k·fl(2π·2^-53)) (an angle off by up to 4.4e-16 near 2π, more
than this table's error).  ``tests/test_planar_angle.py`` measures the bound in 120-bit
arithmetic on every table entry and random remainders; ``tests/test_planar.py`` measures the
whole point's error against δt.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

TABLE_BITS = 10
TABLE_SIZE = 1 << TABLE_BITS
REM_BITS = 53 - TABLE_BITS
TWO_PI_ULP = 2.0 * math.pi * 2.0**-53
ANGLE_ERROR = 2.0**-50  # proven bound on |ĉ − cos θ| and |ŝ − sin θ| (module docstring)
_S3, _S5 = 1.0 / 6.0, 1.0 / 120.0
_C2, _C4, _C6 = 0.5, 1.0 / 24.0, 1.0 / 720.0
_REM_MASK = np.uint64((1 << REM_BITS) - 1)
_S11 = np.uint64(11)
_SREM = np.uint64(REM_BITS)

__all__ = ["ANGLE_ERROR", "TABLES", "cos_sin"]


def _tables() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """C_i = cos(2πi/1024), S_i = sin(2πi/1024): libm on the first octant (angles π·i/512,
    i <= 128), the other octants by the exact symmetries cos(π/2 − a) = sin a, etc."""
    eighth = TABLE_SIZE // 8
    c0 = [math.cos(math.pi * i / (TABLE_SIZE // 2)) for i in range(eighth + 1)]
    s0 = [math.sin(math.pi * i / (TABLE_SIZE // 2)) for i in range(eighth + 1)]
    cos_t, sin_t = np.empty(TABLE_SIZE), np.empty(TABLE_SIZE)
    quarter = 2 * eighth
    for i in range(quarter):  # first quadrant from the first octant
        c, s = (c0[i], s0[i]) if i <= eighth else (s0[quarter - i], c0[quarter - i])
        for q, (cq, sq) in enumerate(((c, s), (-s, c), (-c, -s), (s, -c))):
            cos_t[q * quarter + i], sin_t[q * quarter + i] = cq, sq
    return cos_t, sin_t


TABLES = _tables()


def cos_sin(angle_words: NDArray[np.uint64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(ĉ, ŝ) for θ = 2π·k·2^-53, k = word >> 11 (the module docstring's expression; the
    compiled kernel evaluates the same operations in the same order)."""
    cos_t, sin_t = TABLES
    k = angle_words >> _S11
    i = (k >> _SREM).astype(np.intp)
    r = (k & _REM_MASK).astype(np.float64) * TWO_PI_ULP
    r2 = r * r
    sr = r * (1.0 - r2 * (_S3 - r2 * _S5))
    cr = 1.0 - r2 * (_C2 - r2 * (_C4 - r2 * _C6))
    ci, si = cos_t[i], sin_t[i]
    return ci * cr - si * sr, si * cr + ci * sr
