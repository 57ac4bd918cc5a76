/* IntegerBlockLaplace.sample_into (exact/integer_block.py): the count mechanism's kernel.
 *
 * Per value, from words a, b (the chunk's words are a[0..c) then b[0..c)):
 *   C   = trailing zeros of (a | 2^63)              -- 63 means "extend" (p = 2^-63)
 *   col = (b >> col_shift) & ~1, K = mag2[col + ((b & thr_mask) >= thr2[col])]
 *   K  += qm[C] * min(K, 1)                         -- block offset only for non-zero |Z|
 *   out = K negated when bit 63 of a is set         -- (K ^ s) - s, 0 stays 0
 * Returns the number of values with C = 63; the caller then recomputes the chunk with the
 * numpy reference (which draws the extension words).  Bit-for-bit the reference otherwise.
 */
#include <stdint.h>

#include "dpk.h"

int64_t dpk_intblock_sample(const uint64_t *words, int64_t c, const uint64_t *thr2,
                            const int64_t *mag2, const int64_t *qm, int64_t col_shift,
                            uint64_t thr_mask, int64_t *out) {
    const uint64_t *a = words, *b = words + c;
    int64_t ext = 0;
    for (int64_t i = 0; i < c; i++) {
        uint64_t ai = a[i], bi = b[i];
        int64_t q = dpk_ctz63(ai);
        ext += (q >= 63);
        int64_t k = dpk_alias_pick(bi, thr2, mag2, col_shift, thr_mask);
        k += qm[q] * (k > 0 ? 1 : 0);
        int64_t s = ((int64_t)ai) >> 63;
        out[i] = (k ^ s) - s;
    }
    return ext;
}
