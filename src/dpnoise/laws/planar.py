"""The ideal planar-Laplace law (Andres, Bordenabe, Chatzikokolakis, Palamidessi,
"Geo-indistinguishability: differential privacy for location-based systems", CCS 2013):
radius Gamma(2, b), angle uniform, integrated over grid cells.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray


# ---------------------------------------------------------------- exact (ideal) law
class PlanarLaplaceNoise:
    """The ideal planar-Laplace law around ``centre`` (before rounding and truncation).

    Radius ρ ~ Gamma(2, b), angle uniform.  ``cell_logprob`` integrates the density over
    grid cells (Gauss-Legendre, with the cell containing the centre split at the centre),
    i.e. the law of the rounded release in exact arithmetic (δt = 0).
    """

    def __init__(self, scale: float, centre: tuple[float, float], grid: float) -> None:
        self.scale = scale
        self.centre = centre
        self.grid = grid
        from scipy import stats  # ~1 s to import: only when this law is used

        self._radius = stats.gamma(a=2.0, scale=scale)

    def pdf(self, points: ArrayLike) -> NDArray[np.float64]:
        p = np.asarray(points, dtype=np.float64)
        d = np.hypot(p[..., 0] - self.centre[0], p[..., 1] - self.centre[1])
        return np.exp(-d / self.scale) / (2 * math.pi * self.scale**2)

    def radius_cdf(self, r: ArrayLike) -> NDArray[np.float64]:
        return self._radius.cdf(r)

    def radius_sf(self, r: ArrayLike) -> NDArray[np.float64]:
        """P[ρ > r] = (1 + r/b)·e^{−r/b}."""
        return self._radius.sf(r)

    def radius_ppf(self, q: ArrayLike) -> NDArray[np.float64]:
        return self._radius.ppf(q)

    def mean_distance(self) -> float:
        """E[ρ] = 2b (before rounding)."""
        return 2.0 * self.scale

    def cell_logprob(self, jx: NDArray[np.int64], jy: NDArray[np.int64],
                     nodes: int = 16) -> NDArray[np.float64]:
        """log P[round(x0 + noise) = (jx·L, jy·L)] for the outer product of the index arrays."""
        t, w = np.polynomial.legendre.leggauss(nodes)
        L = self.grid
        cx, cy = self.centre

        def integrate(x0: NDArray[np.float64], x1: NDArray[np.float64],
                      y0: NDArray[np.float64], y1: NDArray[np.float64]) -> NDArray[np.float64]:
            hx, hy = (x1 - x0) / 2, (y1 - y0) / 2
            xs = (x0 + x1)[..., None] / 2 + hx[..., None] * t  # (..., n)
            ys = (y0 + y1)[..., None] / 2 + hy[..., None] * t
            d = np.hypot(xs[..., :, None] - cx, ys[..., None, :] - cy)
            vals = np.exp(-d / self.scale) * w[:, None] * w[None, :]
            return vals.sum(axis=(-2, -1)) * hx * hy / (2 * math.pi * self.scale**2)

        gx, gy = np.meshgrid(jx.astype(np.float64) * L, jy.astype(np.float64) * L,
                             indexing="ij")
        x0, x1, y0, y1 = gx - L / 2, gx + L / 2, gy - L / 2, gy + L / 2
        inside = (x0 <= cx) & (cx <= x1) & (y0 <= cy) & (cy <= y1)
        total = np.where(inside, 0.0, integrate(x0, x1, y0, y1))
        if np.any(inside):  # the density has a cusp at the centre: integrate 4 quadrants
            ix, iy = np.nonzero(inside)
            a0, a1, b0, b1 = x0[ix, iy], x1[ix, iy], y0[ix, iy], y1[ix, iy]
            mx, my = np.full(ix.shape, cx), np.full(ix.shape, cy)
            total[ix, iy] = (integrate(a0, mx, b0, my) + integrate(mx, a1, b0, my)
                             + integrate(a0, mx, my, b1) + integrate(mx, a1, my, b1))
        with np.errstate(divide="ignore"):
            return np.log(total)
