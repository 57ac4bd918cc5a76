/* FoldedBlockGeometric.signed_odd (exact/folded.py): the truncated Laplace's array kernel.
 *
 * Per value, from two words a, b (the chunk's words are a[0..c) then b[0..c), as the numpy
 * reference lays them out):
 *   Q  = trailing zeros of (a | 2^63)          -- Geometric(1/2); Q = 63 means "extend"
 *   t  = b >> col_shift, R = pick[t + columns * ((b & thr_mask) >= thr[t])]
 *                                              -- the alias table, reduced modulo n
 *   K  = qm_mod[Q] + R, minus n once if >= n   -- (Q*M + R) mod n without a division
 *   2Z = +-(2K + 1), negated when bit 63 of a is set
 * and with a centre x: c = floor(x/L + 1/2) (x/L computed as x * (1/L), the same double for
 * L = 2^j with 1/L representable; rounded exactly as grid.round_half_up), out =
 * (double)(2Z + 2c) * (L/2) -- every step exact below 2^53, the same IEEE operations as
 * numpy's.
 *
 * Returns the number of values whose low 63 bits of a were all zero (probability 2^-63
 * each): the caller then recomputes the chunk with the reference, which draws the extra
 * words exactly as it always does.  Same instructions for every value except that count.
 */
#include <stdint.h>

#include "dpk.h"

int64_t dpk_folded_signed_odd(const uint64_t *words, int64_t c, const uint64_t *thr,
                              const int64_t *pick, int64_t col_shift, uint64_t thr_mask,
                              int64_t columns, const int64_t *qm_mod, int64_t n,
                              const double *centre, double inv_grid, double half_grid,
                              double *out_f, int64_t *out_i) {
    const uint64_t *a = words, *b = words + c;
    int64_t ext = 0;
    for (int64_t i = 0; i < c; i++) {
        uint64_t ai = a[i], bi = b[i];
        int64_t q = dpk_ctz63(ai);
        ext += (q >= 63);
        uint64_t t = bi >> col_shift;
        int64_t r = pick[t + (uint64_t)columns * (uint64_t)((bi & thr_mask) >= thr[t])];
        int64_t k = qm_mod[q] + r;
        k -= n & -(int64_t)(k >= n);
        int64_t v = 2 * k + 1;
        int64_t s = ((int64_t)ai) >> 63;
        v = (v ^ s) - s;
        if (centre) {
            int64_t cidx = dpk_round_half_up(centre[i] * inv_grid);
            v += cidx + cidx;
            out_f[i] = (double)v * half_grid;
        } else {
            out_i[i] = v;
        }
    }
    return ext;
}
