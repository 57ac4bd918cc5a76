/* _alias_release (mechanisms/gaussian.py): the lattice Gaussian's array kernel.
 *
 * Per value, from one word w:
 *   col = w >> col_shift, Z = pick[col + columns * ((w & thr_mask) >= thr[col])]
 *                                         -- the alias table, outcomes already minus T
 *   c   = floor(x/L + 1/2)                -- x/L computed as x * (1/L): the same double for
 *                                            L = 2^j with 1/L representable; rounded exactly
 *                                            as grid.round_half_up
 *   out = (double)(Z + c) * L             -- exact: |c| < 2^51, |Z| < 2^17
 * Returns the number of values with |x/L| not below 2^51 (or NaN): the caller then runs the
 * reference, which refuses them.  Same instructions for every value but that check.
 */
#include <stdint.h>

#include "dpk.h"

int64_t dpk_alias_release(const uint64_t *words, int64_t c, const uint64_t *thr,
                          const int64_t *pick, int64_t col_shift, uint64_t thr_mask,
                          int64_t columns, const double *centre, double inv_grid, double grid,
                          double *out) {
    int64_t bad = 0;
    for (int64_t i = 0; i < c; i++) {
        uint64_t w = words[i];
        uint64_t col = w >> col_shift;
        int64_t z = pick[col + (uint64_t)columns * (uint64_t)((w & thr_mask) >= thr[col])];
        double x = centre[i] * inv_grid;
        if (!(x < 2251799813685248.0 && x > -2251799813685248.0)) {  /* 2^51, NaN */
            bad++;
            continue;
        }
        out[i] = (double)(z + dpk_round_half_up(x)) * grid;
    }
    return bad;
}
