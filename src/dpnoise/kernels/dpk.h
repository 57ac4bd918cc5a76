/* Shared inline pieces of the dpnoise kernels (see common.c for the conventions). */
#ifndef DPNOISE_DPK_H
#define DPNOISE_DPK_H
#include <stdint.h>

/* Trailing zeros of (w | 2^63): Geometric(1/2) from the low 63 bits, 63 meaning "extend". */
static inline int64_t dpk_ctz63(uint64_t w) {
    return (int64_t)__builtin_ctzll(w | ((uint64_t)1 << 63));
}

/* Alias-table outcome of one word with interleaved tables (exact/alias.py): column from the
 * top bits (shifted one less, lowest bit cleared), the alias iff the low bits reach the
 * column's threshold: outcome2[2 col + ((w & mask) >= thr2[2 col])]. */
static inline int64_t dpk_alias_pick(uint64_t w, const uint64_t *thr2, const int64_t *outcome2,
                                     int64_t shift, uint64_t mask) {
    uint64_t col = (w >> shift) & ~(uint64_t)1;
    col += (uint64_t)((w & mask) >= thr2[col]);
    return outcome2[col];
}

/* floor(x + 1/2) for |x| < 2^51, exactly as grid.round_half_up (floor, the exact
 * fractional part, + (frac >= 1/2)), without a branch or a floor() call. */
static inline int64_t dpk_round_half_up(double x) {
    int64_t fl = (int64_t)x;
    fl -= ((double)fl > x);
    return fl + ((x - (double)fl) >= 0.5);
}
#endif
