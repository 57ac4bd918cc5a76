/* The smallest and largest of n doubles and whether any is NaN, in one pass (params.py's input
 * check: numpy's min() and max() read the array twice).
 *
 * dpk_bounds(x, n, lohi) writes min and max into lohi[0], lohi[1] and returns 1 if some x[i]
 * is NaN (then lohi is meaningless), 0 otherwise; -1 when this CPU has no AVX2 (or is not
 * x86): the caller then uses numpy.  The same instructions for every value (vector min/max
 * and an unordered compare); the result is the array's min and max as numpy's (up to the sign
 * of a zero, which no check distinguishes).
 */
#include <stdint.h>
#if defined(__x86_64__)
#include <immintrin.h>

/* The values x[i..n) after a vector loop, folded into (lo, hi, bad); the result written to
 * lohi and returned as dpk_bounds does. */
static int64_t finish(const double *x, int64_t i, int64_t n, double lo, double hi,
                      int64_t bad, double *lohi) {
    for (; i < n; i++) {
        double v = x[i];
        bad |= v != v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    lohi[0] = lo;
    lohi[1] = hi;
    return bad;
}

__attribute__((target("avx512f")))
static int64_t bounds_avx512(const double *x, int64_t n, double *lohi) {
    __m512d lo0 = _mm512_set1_pd(__builtin_inf()), hi0 = _mm512_set1_pd(-__builtin_inf());
    __m512d lo1 = lo0, hi1 = hi0;
    __mmask8 nan = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d a = _mm512_loadu_pd(x + i), b = _mm512_loadu_pd(x + i + 8);
        nan |= _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q);
        lo0 = _mm512_min_pd(lo0, a);
        hi0 = _mm512_max_pd(hi0, a);
        lo1 = _mm512_min_pd(lo1, b);
        hi1 = _mm512_max_pd(hi1, b);
    }
    double lo = _mm512_reduce_min_pd(_mm512_min_pd(lo0, lo1));
    double hi = _mm512_reduce_max_pd(_mm512_max_pd(hi0, hi1));
    int64_t bad = nan != 0;
    return finish(x, i, n, lo, hi, bad, lohi);
}

__attribute__((target("avx2")))
static int64_t bounds_avx2(const double *x, int64_t n, double *lohi) {
    __m256d lo0 = _mm256_set1_pd(__builtin_inf()), hi0 = _mm256_set1_pd(-__builtin_inf());
    __m256d lo1 = lo0, hi1 = hi0, nan = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d a = _mm256_loadu_pd(x + i), b = _mm256_loadu_pd(x + i + 4);
        nan = _mm256_or_pd(nan, _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
        lo0 = _mm256_min_pd(lo0, a);
        hi0 = _mm256_max_pd(hi0, a);
        lo1 = _mm256_min_pd(lo1, b);
        hi1 = _mm256_max_pd(hi1, b);
    }
    double l[4], h[4];
    _mm256_storeu_pd(l, _mm256_min_pd(lo0, lo1));
    _mm256_storeu_pd(h, _mm256_max_pd(hi0, hi1));
    int64_t bad = _mm256_movemask_pd(nan) != 0;
    double lo = l[0], hi = h[0];
    for (int j = 1; j < 4; j++) {
        lo = l[j] < lo ? l[j] : lo;
        hi = h[j] > hi ? h[j] : hi;
    }
    return finish(x, i, n, lo, hi, bad, lohi);
}
#endif

int64_t dpk_bounds(const double *x, int64_t n, double *lohi) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return bounds_avx512(x, n, lohi);
    if (__builtin_cpu_supports("avx2"))
        return bounds_avx2(x, n, lohi);
#else
    (void)x, (void)n, (void)lohi;
#endif
    return -1;
}
