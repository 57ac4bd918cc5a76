/* DGTable.sample_into (exact/dg_table.py): one word per value through the alias table.
 *   col = (w >> col_shift) & ~1;  out = out2[col + ((w & thr_mask) >= thr2[col])]
 * Bit-for-bit the numpy reference; the same instructions for every value.
 */
#include <stdint.h>

#include "dpk.h"

void dpk_alias_one_word(const uint64_t *words, int64_t c, const uint64_t *thr2,
                        const int64_t *out2, int64_t col_shift, uint64_t thr_mask,
                        int64_t *out) {
    for (int64_t i = 0; i < c; i++) {
        out[i] = dpk_alias_pick(words[i], thr2, out2, col_shift, thr_mask);
    }
}
