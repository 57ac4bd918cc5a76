/* PlanarLaplace._sample (mechanisms/planar.py): one chunk of c points from its words and
 * the two log1p terms, which the caller computes with numpy (numpy's log1p is not libm's,
 * bit for bit, and the reference is numpy's):
 *   words[0..c) e1, [c..2c) e2 (e = 1 + trailing zeros; a zero word -> return 1, the
 *   reference redoes the chunk and continues the count on fresh words), [4c..5c) theta;
 *   l1, l2 = log1p(f1 * 2^-52), log1p(f2 * 2^-52) (f from words [2c..3c), [3c..4c));
 *   E = e ln2 - l, rho = scale (E1 + E2), theta = 2 pi k 2^-53 with k = w >> 11,
 *   (x, y) = x0 + rho (cos theta, sin theta) -- cos and sin by the table and polynomial of
 *   mechanisms/planar_angle.py (tables cos_t, sin_t indexed by the top 10 bits of k; the
 *   same operations in the same order as its numpy cos_sin, no libm call);
 *   j = rint(x / L) (round half to even, as np.rint), out = j L, or NaN for both
 *   coordinates when j leaves [jx0, jx1] x [jy0, jy1] (the exception outcome).
 * The finite-precision guarantee (GMP Thm 4.5, laws/finite_precision.py) only assumes each
 * computed coordinate within delta_t of the ideal one; libm's < 1 ulp errors are far inside.
 */
#include <math.h>
#include <stdint.h>

int64_t dpk_planar(const uint64_t *words, int64_t c, const double *l1, const double *l2,
                   const double *xy, double scale, double ln2, double two_pi_ulp,
                   double grid, double jx0, double jx1, double jy0, double jy1,
                   const double *cos_t, const double *sin_t, double *out, uint8_t *exited) {
    const uint64_t *e1w = words, *e2w = words + c, *tw = words + 4 * c;
    for (int64_t i = 0; i < c; i++) {
        if (e1w[i] == 0 || e2w[i] == 0) return 1;
    }
    for (int64_t i = 0; i < c; i++) {
        double e1 = (double)__builtin_ctzll(e1w[i]) + 1.0;
        double e2 = (double)__builtin_ctzll(e2w[i]) + 1.0;
        double E = (e1 * ln2 - l1[i]) + (e2 * ln2 - l2[i]);
        double rho = scale * E;
        uint64_t k = tw[i] >> 11;
        uint64_t t = k >> 43;
        double r = (double)(k & (((uint64_t)1 << 43) - 1)) * two_pi_ulp;
        double r2 = r * r;
        double sr = r * (1.0 - r2 * (1.0 / 6.0 - r2 * (1.0 / 120.0)));
        double cr = 1.0 - r2 * (0.5 - r2 * (1.0 / 24.0 - r2 * (1.0 / 720.0)));
        double ct = cos_t[t], st = sin_t[t];
        double x = xy[2 * i] + rho * (ct * cr - st * sr);
        double y = xy[2 * i + 1] + rho * (st * cr + ct * sr);
        double jx = rint(x / grid), jy = rint(y / grid);
        int bad = (jx < jx0) | (jx > jx1) | (jy < jy0) | (jy > jy1);
        out[2 * i] = bad ? NAN : jx * grid;
        out[2 * i + 1] = bad ? NAN : jy * grid;
        exited[i] = (uint8_t)bad;
    }
    return 0;
}
