/* The exact shares of exact/alias.py:_quantize_fast (the 64-bit quantisation of a table).
 *
 * For integer proportions v_i < 2^63 with total T = sum v_i < 2^93 (given as two limbs):
 *   q_i = floor(v_i * 2^64 / T),  r_i = v_i * 2^64 - q_i * T  (0 <= r_i < T < 2^93),
 * computed exactly in unsigned 128-bit arithmetic (v_i * 2^64 < 2^127).  The caller hands out
 * the rest 2^64 - sum q_i to the largest remainders, as the reference does; the reference's
 * packed big-integer arithmetic computes the same integers.  Returns 1 if a share does not
 * fit 64 bits (impossible for v_i < T; the caller then uses the reference).
 */
#include <stdint.h>

int64_t dpk_quantize_shares(const uint64_t *v, int64_t n, uint64_t total_lo,
                            uint64_t total_hi, uint64_t *q, uint64_t *r_lo, uint64_t *r_hi) {
    const unsigned __int128 T = ((unsigned __int128)total_hi << 64) | total_lo;
    if (T == 0) return 1;
    for (int64_t i = 0; i < n; i++) {
        unsigned __int128 num = (unsigned __int128)v[i] << 64;
        unsigned __int128 qq = num / T;
        unsigned __int128 rr = num - qq * T;
        if (qq >> 64) return 1;
        q[i] = (uint64_t)qq;
        r_lo[i] = (uint64_t)rr;
        r_hi[i] = (uint64_t)(rr >> 64);
    }
    return 0;
}

/* Vose's alias table in the order of AliasTable._build_reference (exact/alias.py): light
 * columns (w < mass) served last-first from the last heavy one; a heavy whose remainder
 * drops below mass becomes light at once.  Integer arithmetic, remainders < 2^64.
 * stack: scratch of 2 * cols int64.  Returns 1 if mass was lost (the caller then raises). */
int64_t dpk_alias_build(const uint64_t *w, int64_t cols, uint64_t mass, uint64_t *thr,
                        int64_t *alias, uint64_t *rem, int64_t *stack) {
    int64_t *small = stack, *large = stack + cols;
    int64_t ns = 0, nl = 0;
    for (int64_t i = 0; i < cols; i++) {
        rem[i] = w[i];
        thr[i] = mass;
        alias[i] = i;
        if (w[i] < mass) small[ns++] = i; else large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        int64_t s = small[--ns], g = large[nl - 1];
        thr[s] = rem[s];
        alias[s] = g;
        rem[g] -= mass - rem[s];
        if (rem[g] < mass) {
            nl--;
            small[ns++] = g;
        }
    }
    for (int64_t i = 0; i < nl; i++) if (rem[large[i]] != mass) return 1;
    for (int64_t i = 0; i < ns; i++) if (rem[small[i]] != mass) return 1;
    for (int64_t i = 0; i < nl; i++) { thr[large[i]] = mass; alias[large[i]] = large[i]; }
    for (int64_t i = 0; i < ns; i++) { thr[small[i]] = mass; alias[small[i]] = small[i]; }
    return 0;
}
