/* BlockGeometric.signed_odd (exact/geometric.py): the lattice Laplace's array kernel.
 *
 * Per value, from two words a, b (the chunk's words are a[0..c) then b[0..c), as the
 * numpy reference lays them out):
 *   Q  = trailing zeros of (a | 2^63)          -- Geometric(1/2); Q = 63 means "extend"
 *   col = (b >> col_shift) & ~1, R2 = outcome2[col + ((b & thr_mask) >= thr2[col])]
 *                                              -- the alias table, as the odd number 2R + 1
 *   K  = Q * 2M + R2, negated when bit 63 of a is set  (2Z = +-(2QM + 2R + 1))
 * and with a centre x: c = floor(x/L + 1/2), x/L computed as x * (1/L) -- the same real number
 * for L = 2^j with 1/L representable, so the same correctly rounded double -- (exactly as
 * grid.round_half_up: floor, the exact fractional part, + (frac >= 0.5); computed first for
 * the whole chunk, two values at a time), out = ((double)K + 2c) * (L/2) -- every step exact
 * below 2^53, so the same doubles as numpy's (double)(K + 2c) * (L/2).
 *
 * Returns the number of values whose low 63 bits of a were all zero (probability 2^-63
 * each): the caller then recomputes the chunk with the reference, which draws the extra
 * words exactly as it always does.  Same instructions for every value except that count.
 */
#include <stdint.h>

#include "dpk.h"

typedef double dpk_v2d __attribute__((vector_size(16)));
typedef int64_t dpk_v2i __attribute__((vector_size(16)));

/* twice_index[i] = 2 floor(x_i/L + 1/2) as a double, x_i/L = centre[i] * inv_grid: the same
 * integer as dpk_round_half_up, two values at a time without integer conversions.  For
 * |y| < 2^51, (y + 1.5*2^52) - 1.5*2^52 is y rounded to an integer (the sum lies in
 * [2^52, 2^53), where the spacing of doubles is 1); one less where that exceeds y gives
 * floor(y); y - floor(y) is exact; + 1 where it is >= 1/2.  Every step is an exact integer
 * below 2^52 (no -ffast-math, no contraction: the compiler keeps the operations). */
static void twice_grid_index(const double *centre, int64_t c, double inv_grid,
                             double *twice_index) {
    const dpk_v2d shift = {6755399441055744.0, 6755399441055744.0};
    const dpk_v2d one = {1.0, 1.0}, half = {0.5, 0.5};
    int64_t i = 0;
    for (; i + 2 <= c; i += 2) {
        dpk_v2d y;
        __builtin_memcpy(&y, centre + i, sizeof y);
        y = y * inv_grid;
        dpk_v2d t = (y + shift) - shift;
        dpk_v2d fl = t - (dpk_v2d)((dpk_v2i)one & (t > y));
        dpk_v2d ci = fl + (dpk_v2d)((dpk_v2i)one & ((y - fl) >= half));
        ci = ci + ci;
        __builtin_memcpy(twice_index + i, &ci, sizeof ci);
    }
    for (; i < c; i++) {
        int64_t ci = dpk_round_half_up(centre[i] * inv_grid);
        twice_index[i] = (double)(ci + ci);
    }
}

int64_t dpk_block_signed_odd(const uint64_t *words, int64_t c, const uint64_t *thr2,
                             const int64_t *outcome2, int64_t col_shift, uint64_t thr_mask,
                             int64_t two_m, const double *centre, double inv_grid,
                             double half_grid, double *out_f, int64_t *out_i) {
    const uint64_t *a = words, *b = words + c;
    int64_t ext = 0;
    if (centre)  /* 2c into out_f first; x * (1/L) == x / L bit for bit: L = 2^j, 1/L exact */
        twice_grid_index(centre, c, inv_grid, out_f);
    for (int64_t i = 0; i < c; i++) {
        uint64_t ai = a[i], bi = b[i];
        int64_t q = dpk_ctz63(ai);
        ext += (q >= 63);
        int64_t k = q * two_m + dpk_alias_pick(bi, thr2, outcome2, col_shift, thr_mask);
        int64_t s = ((int64_t)ai) >> 63;
        k = (k ^ s) - s;
        if (centre)  /* (double)k + 2c = (double)(k + 2c): integers below 2^53, exact */
            out_f[i] = ((double)k + out_f[i]) * half_grid;
        else
            out_i[i] = k;
    }
    return ext;
}
