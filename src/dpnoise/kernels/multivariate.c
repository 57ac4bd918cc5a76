/* MultivariateStaircase.release (mechanisms/staircase_multivariate.py): one chunk of k
 * vectors of dimension d, from the chunk's words in the reference's layout:
 *   words[0..k)                      m: alias outcome of the level table
 *   words[k + 2jk .. k + (2j+1)k)    Q_j = (ctz(w | 2^63)) // a via q_of_t   (j = 0..d)
 *   words[k + (2j+1)k .. k+(2j+2)k)  R_j: alias outcome of the geometric's block table
 *   words[nl*k + i*d + c]            the uniform point's word of vector i, coordinate c
 * I = m + M * sum_j Q_j + sum_j R_j (NestedLevels.sample_words);
 * per coordinate: 2n = 2Z_c + I * 2S_c, idx = floor(w * 2n / 2^64), cidx = floor(x/L + 1/2)
 * (x * (1/L): the same double as x / L for L = 2^j), half = 2 idx - 2n + 2 cidx + 1,
 * out = half * (L/2).
 * Returns 0, or 1 when the reference must redo the chunk from the same words: a trailing
 * zero count reached 63 (p = 2^-63; the reference extends it with fresh words), a level
 * above i_max, or |half| >= 2^53 (the reference raises PrecisionError).
 */
#include <stdint.h>

#include "dpk.h"

int64_t dpk_mv_box(const uint64_t *words, int64_t k, int64_t d,
                   const uint64_t *thr2_m, const int64_t *out2_m, int64_t sh_m, uint64_t mask_m,
                   const uint64_t *thr2_g, const int64_t *out2_g, int64_t sh_g, uint64_t mask_g,
                   const int64_t *q_of_t, int64_t M, int64_t i_max,
                   const int64_t *two_s, const int64_t *two_z, const double *inv_grid,
                   const double *half_grid, const double *x, double *out) {
    const int64_t d1 = d + 1, nl = 1 + 2 * d1;
    const int64_t exact = (int64_t)1 << 53;
    int64_t bad = 0;
    for (int64_t i = 0; i < k; i++) {
        int64_t I = dpk_alias_pick(words[i], thr2_m, out2_m, sh_m, mask_m);
        int64_t qs = 0, rs = 0;
        for (int64_t j = 0; j < d1; j++) {
            uint64_t qw = words[k + 2 * j * k + i];
            uint64_t rw = words[k + (2 * j + 1) * k + i];
            int64_t t = dpk_ctz63(qw);
            bad |= (t >= 63);
            qs += q_of_t[t];
            rs += dpk_alias_pick(rw, thr2_g, out2_g, sh_g, mask_g);
        }
        I += qs * M + rs;
        bad |= (I > i_max);
        for (int64_t c = 0; c < d; c++) {
            int64_t m2 = two_z[c] + I * two_s[c];
            uint64_t w = words[nl * k + i * d + c];
            int64_t idx = (int64_t)(((unsigned __int128)w * (uint64_t)m2) >> 64);
            int64_t ci = dpk_round_half_up(x[i * d + c] * inv_grid[c]);
            int64_t half = 2 * idx - m2 + (2 * ci + 1);
            bad |= (half >= exact) | (half <= -exact);
            out[i * d + c] = (double)half * half_grid[c];
        }
    }
    return bad;
}
