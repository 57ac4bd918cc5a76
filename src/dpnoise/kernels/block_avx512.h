/* The lattice Laplace block kernel's AVX-512 steps, eight values at a time (kernels/block.c
 * states the method and why every step is exact): shared by block.c's loops and
 * block_keyed.c's loop, which draws the words itself.  x86-64 with GCC or Clang only; the
 * functions carry their target attributes, so the including file needs no -mavx512f. */
#ifndef DPNOISE_BLOCK_AVX512_H
#define DPNOISE_BLOCK_AVX512_H
#include <immintrin.h>
#include <stdint.h>

/* The packed entries of eight values' columns, by scalar loads: faster than the gather
 * instruction here (0.49 against 0.66 ns a value for the whole AVX-512 loop). */
__attribute__((target("avx512f,bmi2"), always_inline))
static inline __m512i entries8(const uint64_t *b, const uint64_t *packed, int64_t sh) {
    return _mm512_set_epi64((long long)packed[b[7] >> sh], (long long)packed[b[6] >> sh],
                            (long long)packed[b[5] >> sh], (long long)packed[b[4] >> sh],
                            (long long)packed[b[3] >> sh], (long long)packed[b[2] >> sh],
                            (long long)packed[b[1] >> sh], (long long)packed[b[0] >> sh]);
}

/* Eight values at a time: AVX-512 F (unsigned compare, 64-bit shifts), CD (lzcnt), DQ
 * (int64 -> double) and BMI2 (shifts by a register for the scalar table reads).  Q = 63 -
 * lzcnt(t & -t) with t = a | 2^63; Q * 2M with the 32 x 32-bit multiply (Q < 64, 2M <= 2^21);
 * counts of Q = 63 in a vector (`ext`). */
#define DPK_AVX512 __attribute__((target("avx512f,avx512cd,avx512dq,bmi2"), always_inline))

typedef struct {
    __m512i top, low, c63, one, two, tm, zero;
    __m128i col_shift, key_shift;
    __m512d inv, hg, halfd;
    int64_t sh;
} dpk_c512;

/* The loop's constants for a table of 2^bits columns, 2M, 1/L and L/2. */
static inline DPK_AVX512 void dpk_c512_setup(dpk_c512 *k5, int64_t bits, int64_t two_m,
                                             double inv_grid, double half_grid) {
    k5->top = _mm512_set1_epi64((long long)((uint64_t)1 << 63));
    k5->low = _mm512_set1_epi64((long long)(((uint64_t)1 << bits) - 1));
    k5->c63 = _mm512_set1_epi64(63);
    k5->one = _mm512_set1_epi64(1);
    k5->two = _mm512_set1_epi64(2);
    k5->tm = _mm512_set1_epi64(two_m);
    k5->zero = _mm512_setzero_si512();
    k5->col_shift = _mm_cvtsi64_si128(64 - bits);
    k5->key_shift = _mm_cvtsi64_si128(bits);
    k5->inv = _mm512_set1_pd(inv_grid);
    k5->hg = _mm512_set1_pd(half_grid);
    k5->halfd = _mm512_set1_pd(0.5);
    k5->sh = 64 - bits;
}

/* 2Z = +-(2QM + 2R + 1) for the eight values at a, b. */
static inline DPK_AVX512 __m512i signed_odd8(const dpk_c512 *k5, const uint64_t *a,
                                             const uint64_t *b, const uint64_t *packed,
                                             __m512i *ext) {
    __m512i av = _mm512_loadu_si512(a), bv = _mm512_loadu_si512(b);
    __m512i t = _mm512_or_si512(av, k5->top);
    __m512i q = _mm512_sub_epi64(k5->c63, _mm512_lzcnt_epi64(
        _mm512_and_si512(t, _mm512_sub_epi64(k5->zero, t))));
    *ext = _mm512_mask_add_epi64(*ext, _mm512_cmpeq_epi64_mask(q, k5->c63), *ext, k5->one);
    __m512i col = _mm512_srl_epi64(bv, k5->col_shift);
    __m512i e = entries8(b, packed, k5->sh);
    __m512i key = _mm512_or_si512(_mm512_sll_epi64(bv, k5->key_shift), k5->low);
    __mmask8 above = _mm512_cmpge_epu64_mask(key, e);
    __m512i r = _mm512_mask_blend_epi64(above, col, _mm512_and_si512(e, k5->low));
    __m512i k = _mm512_add_epi64(_mm512_mul_epu32(q, k5->tm),
                                 _mm512_add_epi64(_mm512_add_epi64(r, r), k5->one));
    __m512i s = _mm512_srai_epi64(av, 63);
    return _mm512_sub_epi64(_mm512_xor_si512(k, s), s);
}

/* The releases (K + 2c) * L/2 of eight values: 2c = 2 floor(y) + 2 [y - floor(y) >= 1/2],
 * y = x * (1/L), floor by vrndscalepd (exact), the 2 added to K (exact integers below 2^53
 * in any order: the same double as (double)K + 2c). */
static inline DPK_AVX512 __m512d release8(const dpk_c512 *k5, __m512i k, const double *x) {
    __m512d y = _mm512_mul_pd(_mm512_loadu_pd(x), k5->inv);
    __m512d fl = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __mmask8 up = _mm512_cmp_pd_mask(_mm512_sub_pd(y, fl), k5->halfd, _CMP_GE_OQ);
    k = _mm512_mask_add_epi64(k, up, k, k5->two);
    return _mm512_mul_pd(_mm512_add_pd(_mm512_cvtepi64_pd(k), _mm512_add_pd(fl, fl)), k5->hg);
}
#endif
