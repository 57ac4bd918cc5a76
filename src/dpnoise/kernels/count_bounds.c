/* The smallest and largest of n int64 counts in one pass (the domain check of a count
 * release, mechanisms/integers.py check_counts): out[0] = min, out[1] = max, n >= 1.
 *
 * One foreign call (one GIL release) per chunk of a split release instead of two numpy
 * reductions per 2^15 values.  8 or 4 values a step where the CPU has AVX-512F or AVX2
 * (chosen at run time; comparisons and selects only, so the same two integers as plain C).
 */
#include <stdint.h>

static void bounds_tail(const int64_t *v, int64_t i, int64_t n, int64_t *lo, int64_t *hi) {
    for (; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

/* Four independent accumulators for each of min and max (the select chain's latency would
 * otherwise bound the loop), folded at the end, then the tail. */
#define DPK_BOUNDS_BODY(V)                                                                 \
    const int64_t w = (int64_t)(sizeof(V) / 8);                                            \
    V lov[4], hiv[4];                                                                      \
    for (int j = 0; j < 4; j++) lov[j] = hiv[j] = v[0] - (V){0};                           \
    int64_t i = 0;                                                                         \
    for (; i + 4 * w <= n; i += 4 * w) {                                                   \
        for (int j = 0; j < 4; j++) {                                                      \
            V x;                                                                           \
            __builtin_memcpy(&x, v + i + j * w, sizeof x);                                 \
            V m = (V)(x < lov[j]);                                                         \
            lov[j] = (m & x) | (~m & lov[j]);                                              \
            m = (V)(x > hiv[j]);                                                           \
            hiv[j] = (m & x) | (~m & hiv[j]);                                              \
        }                                                                                  \
    }                                                                                      \
    int64_t lo = v[0], hi = v[0];                                                          \
    for (int j = 0; j < 4; j++)                                                            \
        for (int64_t k = 0; k < w; k++) {                                                  \
            lo = lov[j][k] < lo ? lov[j][k] : lo;                                          \
            hi = hiv[j][k] > hi ? hiv[j][k] : hi;                                          \
        }                                                                                  \
    bounds_tail(v, i, n, &lo, &hi);                                                        \
    out[0] = lo;                                                                           \
    out[1] = hi;

#if defined(__x86_64__) && defined(__GNUC__)
typedef int64_t dpk_b8i __attribute__((vector_size(64)));
typedef int64_t dpk_b4i __attribute__((vector_size(32)));

__attribute__((target("avx512f"))) static void bounds_512(const int64_t *v, int64_t n,
                                                           int64_t *out) {
    DPK_BOUNDS_BODY(dpk_b8i)
}

__attribute__((target("avx2"))) static void bounds_256(const int64_t *v, int64_t n,
                                                        int64_t *out) {
    DPK_BOUNDS_BODY(dpk_b4i)
}
#endif

static int bounds_isa = -1;  /* 2 AVX-512F, 1 AVX2, 0 plain C */

/* The widest implementation this CPU runs, capped at `cap` from now on when cap >= 0 (the
 * tests run every width). */
int64_t dpk_count_bounds_isa(int64_t cap) {
    int have = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
    if (cap >= 0 && cap < have) have = (int)cap;
    __atomic_store_n(&bounds_isa, have, __ATOMIC_RELAXED);
    return have;
}

void dpk_count_bounds(const int64_t *v, int64_t n, int64_t *out) {
    int isa = __atomic_load_n(&bounds_isa, __ATOMIC_RELAXED);
    if (isa < 0) isa = (int)dpk_count_bounds_isa(-1);
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == 2) {
        bounds_512(v, n, out);
        return;
    }
    if (isa == 1) {
        bounds_256(v, n, out);
        return;
    }
#endif
    (void)isa;
    int64_t lo = v[0], hi = v[0];
    bounds_tail(v, 1, n, &lo, &hi);
    out[0] = lo;
    out[1] = hi;
}
