/* LatticeStaircase._sample (exact/staircase.py): the staircase's array kernel.
 *
 * Per value, from 1 + ntab words (the chunk's words are a[0..c), then one run of c words per
 * alias table, as the numpy reference lays them out):
 *   T  = trailing zeros of a (64 when a = 0); T >= 63 means "extend" (probability 2^-63)
 *   o  = qtab[T]                                  -- Q*P*L as a float, exact
 *   per table: col2 = (w >> sh) & ~1, col2 += ((w & mask) >= thr2[col2]), o += vals[col2];
 *              with the joint table also o += (double)((w & mask) & width2[col2]) * L
 *   o |= sign bit of a (o is positive), then o += floor(x/L + 1/2) * L
 * Every addition is of multiples of L/2 below 2^53 L/2, in the reference's order, so each
 * is exact and the result is the reference's double bit for bit.
 *
 * Returns the number of values with T >= 63: the caller then recomputes the chunk with the
 * reference, which draws the extra words exactly as it always does.
 */
#include <stdint.h>
#include <string.h>

#include "dpk.h"

int64_t dpk_staircase_sample(const uint64_t *words, int64_t c, int64_t ntab,
                             const double *qtab, const uint64_t *thr_a, const double *vals_a,
                             int64_t sh_a, uint64_t mask_a, const uint64_t *thr_b,
                             const double *vals_b, int64_t sh_b, uint64_t mask_b,
                             const uint64_t *width2, double grid, const double *centre,
                             double inv_grid, double *out) {
    const uint64_t *a = words, *wa = words + c, *wb = words + 2 * c;
    int64_t ext = 0;
    for (int64_t i = 0; i < c; i++) {
        uint64_t ai = a[i];
        int64_t t = ai ? (int64_t)__builtin_ctzll(ai) : 64;
        ext += (t >= 63);
        double o = qtab[t >= 63 ? 0 : t];
        uint64_t w = wa[i];
        uint64_t col = (w >> sh_a) & ~(uint64_t)1;
        uint64_t u = w & mask_a;
        col += (uint64_t)(u >= thr_a[col]);
        o += vals_a[col];
        if (width2) {
            o += (double)(int64_t)(u & width2[col]) * grid;
        }
        if (ntab == 2) {
            w = wb[i];
            col = (w >> sh_b) & ~(uint64_t)1;
            u = w & mask_b;
            col += (uint64_t)(u >= thr_b[col]);
            o += vals_b[col];
        }
        uint64_t bits;
        memcpy(&bits, &o, sizeof bits);
        bits |= ai & ((uint64_t)1 << 63);
        memcpy(&o, &bits, sizeof bits);
        int64_t cidx = dpk_round_half_up(centre[i] * inv_grid);
        o += (double)cidx * grid;
        out[i] = o;
    }
    return ext;
}
