/* BlockGeometric.signed_odd (exact/geometric.py): the lattice Laplace's array kernel.
 *
 * Per value, from two words a, b (the chunk's words are a[0..c) then b[0..c), as the
 * numpy reference lays them out):
 *   Q  = trailing zeros of (a | 2^63)          -- Geometric(1/2); Q = 63 means "extend"
 *   col = (b >> col_shift) & ~1, R2 = outcome2[col + ((b & thr_mask) >= thr2[col])]
 *                                              -- the alias table, as the odd number 2R + 1
 *   K  = Q * 2M + R2, negated when bit 63 of a is set  (2Z = +-(2QM + 2R + 1))
 * and with a centre x: c = floor(x/L + 1/2), x/L computed as x * (1/L) -- the same real number
 * for L = 2^j with 1/L representable, so the same correctly rounded double -- (exactly as grid.round_half_up: floor, the
 * exact fractional part, + (frac >= 0.5)), out = (double)(K + 2c) * (L/2) -- every step exact
 * below 2^53, the same IEEE operations as numpy's.
 *
 * Returns the number of values whose low 63 bits of a were all zero (probability 2^-63
 * each): the caller then recomputes the chunk with the reference, which draws the extra
 * words exactly as it always does.  Same instructions for every value except that count.
 */
#include <stdint.h>

#include "dpk.h"

int64_t dpk_block_signed_odd(const uint64_t *words, int64_t c, const uint64_t *thr2,
                             const int64_t *outcome2, int64_t col_shift, uint64_t thr_mask,
                             int64_t two_m, const double *centre, double inv_grid,
                             double half_grid, double *out_f, int64_t *out_i) {
    const uint64_t *a = words, *b = words + c;
    int64_t ext = 0;
    for (int64_t i = 0; i < c; i++) {
        uint64_t ai = a[i], bi = b[i];
        int64_t q = dpk_ctz63(ai);
        ext += (q >= 63);
        int64_t k = q * two_m + dpk_alias_pick(bi, thr2, outcome2, col_shift, thr_mask);
        int64_t s = ((int64_t)ai) >> 63;
        k = (k ^ s) - s;
        if (centre) {
            /* x * (1/L) == x / L bit for bit: L = 2^j, 1/L exact */
            int64_t cidx = dpk_round_half_up(centre[i] * inv_grid);
            k += cidx + cidx;
            out_f[i] = (double)k * half_grid;
        } else {
            out_i[i] = k;
        }
    }
    return ext;
}
