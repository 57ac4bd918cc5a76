/* BlockGeometric.signed_odd (exact/geometric.py): the lattice Laplace's array kernel.
 *
 * Per value, from two words a, b (the chunk's words are a[0..c) then b[0..c), as the
 * numpy reference lays them out):
 *   Q  = trailing zeros of (a | 2^63)          -- Geometric(1/2); Q = 63 means "extend"
 *   col = b >> (64 - bits), u = b mod 2^(64 - bits); R = col if u < thr[col] else alias[col]
 *                                              -- the alias table, one word
 *   K  = Q * 2M + 2R + 1, negated when bit 63 of a is set  (2Z = +-(2QM + 2R + 1))
 * and with a centre x: c = floor(x/L + 1/2), x/L computed as x * (1/L) -- the same real number
 * for L = 2^j with 1/L representable, so the same correctly rounded double -- (exactly as
 * grid.round_half_up: floor, the exact fractional part, + (frac >= 0.5)),
 * out = ((double)K + 2c) * (L/2) -- every step exact below 2^53, so the same doubles as
 * numpy's (double)(K + 2c) * (L/2).
 *
 * The alias table arrives packed, one word per column (BlockGeometric._packed_table):
 * e = (thr' << bits) | alias', with thr' = thr and alias' = alias except for a full column
 * (thr = 2^(64-bits): always col) stored as thr' = 0, alias' = col -- the same outcome for
 * every u.  Then u >= thr' exactly when ((b << bits) | (2^bits - 1)) >= e (unsigned): the
 * high 64 - bits bits compare u with thr', and on a tie the low bits 2^bits - 1 >= alias'.
 * One table read per value instead of two dependent ones, and a table of 8 bytes a column.
 *
 * Three implementations of the same integer and double operations, picked at run time
 * (dpk_block_isa: AVX-512 F/CD/DQ, AVX2, both with BMI2, else plain C; `isa` caps the choice
 * so tests can compare them): every operation is exact (integers, exact double conversions
 * below 2^53, an exact floor), so all three return the same bits -- tested against each
 * other and against the numpy reference.  No -ffast-math and no contraction (setup.py), so
 * the compiler keeps each double operation as written.  Vector trailing zeros: the lowest set
 * bit t & -t is a power of two 2^Q, whose Q is 63 - lzcnt (AVX-512 CD) or the exponent of
 * its nonzero 32-bit half converted to float (AVX2: a power of two converts exactly).  The
 * table is read with scalar loads (faster than a gather here).  Measured on this project's
 * machine (AVX-512), 2^14 values with their words in cache: ~0.5 ns a value, against ~0.8 ns
 * for AVX2, ~2.1 ns for plain C and 2.6 ns for the former one-value-at-a-time kernel; the
 * streaming loop takes two vectors a step (their table reads overlap): 0.40 -> 0.36 ns.
 *
 * The AVX-512 steps live in block_avx512.h, shared with block_keyed.c, whose loop computes
 * a split release's ChaCha20 keystream itself and runs these steps between its rounds.
 *
 * Returns the number of values whose low 63 bits of a were all zero (probability 2^-63
 * each): the caller then recomputes these chunks with the reference, which draws the extra
 * words.  Same instructions for every value except that count.  The vector loops are x86-64
 * only (plain C elsewhere).
 */
#include <stdint.h>
#if defined(__x86_64__)
#define DPK_X86 1
#include <immintrin.h>
#endif

#include "dpk.h"
#ifdef DPK_X86
#include "block_avx512.h"
#endif

typedef double dpk_v2d __attribute__((vector_size(16)));
typedef int64_t dpk_v2i __attribute__((vector_size(16)));

#define DPK_ROUND_SHIFT 6755399441055744.0 /* 1.5 * 2^52 */
#define DPK_AHEAD 256                        /* centre prefetch distance, values */

/* 2R + 1 from word b and the packed table (see above). */
static inline int64_t odd_in_block(uint64_t b, const uint64_t *packed, int64_t bits) {
    uint64_t low = ((uint64_t)1 << bits) - 1;
    uint64_t col = b >> (64 - bits), e = packed[col];
    uint64_t r = (((b << bits) | low) >= e) ? (e & low) : col;
    return (int64_t)(2 * r + 1);
}

/* twice_index[i] = 2 floor(x_i/L + 1/2) as a double, x_i/L = centre[i] * inv_grid: the same
 * integer as dpk_round_half_up, two values at a time without integer conversions.  For
 * |y| < 2^51, (y + 1.5*2^52) - 1.5*2^52 is y rounded to an integer (the sum lies in
 * [2^52, 2^53), where the spacing of doubles is 1); one less where that exceeds y gives
 * floor(y); y - floor(y) is exact; + 1 where it is >= 1/2.  Every step is an exact integer
 * below 2^52 (no -ffast-math, no contraction: the compiler keeps the operations). */
static void twice_grid_index(const double *centre, int64_t c, double inv_grid,
                             double *twice_index) {
    const dpk_v2d shift = {DPK_ROUND_SHIFT, DPK_ROUND_SHIFT};
    const dpk_v2d one = {1.0, 1.0}, half = {0.5, 0.5};
    int64_t i = 0;
    for (; i + 2 <= c; i += 2) {
        dpk_v2d y;
        __builtin_memcpy(&y, centre + i, sizeof y);
        y = y * inv_grid;
        dpk_v2d t = (y + shift) - shift;
        dpk_v2d fl = t - (dpk_v2d)((dpk_v2i)one & (t > y));
        dpk_v2d ci = fl + (dpk_v2d)((dpk_v2i)one & ((y - fl) >= half));
        ci = ci + ci;
        __builtin_memcpy(twice_index + i, &ci, sizeof ci);
    }
    for (; i < c; i++) {
        int64_t ci = dpk_round_half_up(centre[i] * inv_grid);
        twice_index[i] = (double)(ci + ci);
    }
}

/* Values [from, c) in plain C: the reference twin, and the tail of the vector loops. */
static int64_t block_plain(const uint64_t *a, const uint64_t *b, int64_t from, int64_t c,
                           const uint64_t *packed, int64_t bits, int64_t two_m,
                           const double *centre, double inv_grid, double half_grid,
                           double *out_f, int64_t *out_i) {
    int64_t ext = 0;
    if (centre)  /* 2c into out_f first; x * (1/L) == x / L bit for bit: L = 2^j, 1/L exact */
        twice_grid_index(centre + from, c - from, inv_grid, out_f + from);
    for (int64_t i = from; i < c; i++) {
        uint64_t ai = a[i];
        int64_t q = dpk_ctz63(ai);
        ext += (q >= 63);
        int64_t k = q * two_m + odd_in_block(b[i], packed, bits);
        int64_t s = ((int64_t)ai) >> 63;
        k = (k ^ s) - s;
        if (centre)  /* (double)k + 2c = (double)(k + 2c): integers below 2^53, exact */
            out_f[i] = ((double)k + out_f[i]) * half_grid;
        else
            out_i[i] = k;
    }
    return ext;
}

#ifdef DPK_X86
/* The packed entries of four values' columns, by scalar loads (see entries8). */
__attribute__((target("avx2,bmi2"), always_inline))
static inline __m256i entries4(const uint64_t *b, const uint64_t *packed, int64_t sh) {
    return _mm256_set_epi64x((long long)packed[b[3] >> sh], (long long)packed[b[2] >> sh],
                             (long long)packed[b[1] >> sh], (long long)packed[b[0] >> sh]);
}

__attribute__((target("avx512f,avx512cd,avx512dq,bmi2")))
static int64_t block_avx512(const uint64_t *a, const uint64_t *b, int64_t c,
                            const uint64_t *packed, int64_t bits, int64_t two_m,
                            const double *centre, double inv_grid, double half_grid,
                            double *out_f, int64_t *out_i, int stream) {
    dpk_c512 k5;
    dpk_c512_setup(&k5, bits, two_m, inv_grid, half_grid);
    __m512i ext = _mm512_setzero_si512();
    int64_t i = 0;
    if (!centre) {
        for (; i + 8 <= c; i += 8)
            _mm512_storeu_si512(out_i + i, signed_odd8(&k5, a + i, b + i, packed, &ext));
    } else if (stream) {  /* prefetch one line a step, DPK_AHEAD values ahead (no faults) */
        for (; i + 16 <= c; i += 16) {  /* two vectors a step: their table reads overlap */
            _mm_prefetch((const char *)(centre + i + DPK_AHEAD), _MM_HINT_NTA);
            _mm_prefetch((const char *)(centre + i + 8 + DPK_AHEAD), _MM_HINT_NTA);
            __m512i k = signed_odd8(&k5, a + i, b + i, packed, &ext);
            __m512i k2 = signed_odd8(&k5, a + i + 8, b + i + 8, packed, &ext);
            _mm512_stream_pd(out_f + i, release8(&k5, k, centre + i));
            _mm512_stream_pd(out_f + i + 8, release8(&k5, k2, centre + i + 8));
        }
        for (; i + 8 <= c; i += 8) {
            _mm_prefetch((const char *)(centre + i + DPK_AHEAD), _MM_HINT_NTA);
            __m512i k = signed_odd8(&k5, a + i, b + i, packed, &ext);
            _mm512_stream_pd(out_f + i, release8(&k5, k, centre + i));
        }
    } else {
        for (; i + 8 <= c; i += 8) {
            _mm_prefetch((const char *)(centre + i + DPK_AHEAD), _MM_HINT_NTA);
            __m512i k = signed_odd8(&k5, a + i, b + i, packed, &ext);
            _mm512_storeu_pd(out_f + i, release8(&k5, k, centre + i));
        }
    }
    return _mm512_reduce_add_epi64(ext) + block_plain(a, b, i, c, packed, bits, two_m, centre,
                                                      inv_grid, half_grid, out_f, out_i);
}

/* Q from t & -t = 2^Q in AVX2 (no 64-bit lzcnt): each 32-bit half converted to float is
 * exact (a power of two, or 0; 2^31 converts as -2^31, the sign masked off), its biased
 * exponent is 127 + the bit's position (0 for a zero half); Q = e_lo - 127 when the low
 * half is nonzero, else e_hi - 127 + 32. */
__attribute__((target("avx2,bmi2")))
static inline __m256i ctz_power_of_two_avx2(__m256i p) {
    const __m256i expo_mask = _mm256_set1_epi32(0xFF), zero = _mm256_setzero_si256();
    __m256i ex = _mm256_and_si256(
        _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(p)), 23), expo_mask);
    __m256i e_lo = _mm256_and_si256(ex, _mm256_set1_epi64x(0xFFFFFFFF));
    __m256i e_hi = _mm256_srli_epi64(ex, 32);
    __m256i q_lo = _mm256_sub_epi64(e_lo, _mm256_set1_epi64x(127));
    __m256i q_hi = _mm256_sub_epi64(e_hi, _mm256_set1_epi64x(95));
    return _mm256_blendv_epi8(q_lo, q_hi, _mm256_cmpeq_epi64(e_lo, zero));
}

/* Four values at a time in AVX2: unsigned compare as a signed one with the top bits
 * flipped, the sign mask from a signed compare with 0, (double)K for |K| < 2^51 as
 * (bits of 1.5*2^52 + K) - 1.5*2^52 (exact: the sum's mantissa holds 2^51 + K). */
#define DPK_AVX2 __attribute__((target("avx2,bmi2"), always_inline))

typedef struct {
    __m256i top, low, c63, one, tm, zero, shift_bits;
    __m128i col_shift, key_shift;
    __m256d inv, hg, halfd, shift;
    int64_t sh;
} dpk_c256;

/* 2Z = +-(2QM + 2R + 1) for the four values at a, b; `ext` counts Q = 63 (as -1s). */
static inline DPK_AVX2 __m256i signed_odd4(const dpk_c256 *k2, const uint64_t *a,
                                           const uint64_t *b, const uint64_t *packed,
                                           __m256i *ext) {
    __m256i av = _mm256_loadu_si256((const __m256i *)a);
    __m256i bv = _mm256_loadu_si256((const __m256i *)b);
    __m256i t = _mm256_or_si256(av, k2->top);
    __m256i q = ctz_power_of_two_avx2(_mm256_and_si256(t, _mm256_sub_epi64(k2->zero, t)));
    *ext = _mm256_add_epi64(*ext, _mm256_cmpeq_epi64(q, k2->c63));
    __m256i col = _mm256_srl_epi64(bv, k2->col_shift);
    __m256i e = entries4(b, packed, k2->sh);
    __m256i key = _mm256_or_si256(_mm256_sll_epi64(bv, k2->key_shift), k2->low);
    __m256i below = _mm256_cmpgt_epi64(_mm256_xor_si256(e, k2->top),
                                       _mm256_xor_si256(key, k2->top));  /* key < e */
    __m256i r = _mm256_blendv_epi8(_mm256_and_si256(e, k2->low), col, below);
    __m256i k = _mm256_add_epi64(_mm256_mul_epu32(q, k2->tm),
                                 _mm256_add_epi64(_mm256_add_epi64(r, r), k2->one));
    __m256i s = _mm256_cmpgt_epi64(k2->zero, av);
    return _mm256_sub_epi64(_mm256_xor_si256(k, s), s);
}

/* The releases of four values, as release8 (floor by vroundpd, exact). */
static inline DPK_AVX2 __m256d release4(const dpk_c256 *k2, __m256i k, const double *x) {
    __m256d y = _mm256_mul_pd(_mm256_loadu_pd(x), k2->inv);
    __m256d fl = _mm256_round_pd(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m256i up = _mm256_castpd_si256(_mm256_cmp_pd(_mm256_sub_pd(y, fl), k2->halfd,
                                                   _CMP_GE_OQ));
    k = _mm256_sub_epi64(k, _mm256_add_epi64(up, up));  /* + 2 where up (-1) */
    __m256d kd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(k2->shift_bits, k)),
                               k2->shift);
    return _mm256_mul_pd(_mm256_add_pd(kd, _mm256_add_pd(fl, fl)), k2->hg);
}

__attribute__((target("avx2,bmi2")))
static int64_t block_avx2(const uint64_t *a, const uint64_t *b, int64_t c,
                          const uint64_t *packed, int64_t bits, int64_t two_m,
                          const double *centre, double inv_grid, double half_grid,
                          double *out_f, int64_t *out_i, int stream) {
    dpk_c256 k2;
    k2.top = _mm256_set1_epi64x((long long)((uint64_t)1 << 63));
    k2.low = _mm256_set1_epi64x((long long)(((uint64_t)1 << bits) - 1));
    k2.c63 = _mm256_set1_epi64x(63);
    k2.one = _mm256_set1_epi64x(1);
    k2.tm = _mm256_set1_epi64x(two_m);
    k2.zero = _mm256_setzero_si256();
    k2.col_shift = _mm_cvtsi64_si128(64 - bits);
    k2.key_shift = _mm_cvtsi64_si128(bits);
    k2.inv = _mm256_set1_pd(inv_grid);
    k2.hg = _mm256_set1_pd(half_grid);
    k2.halfd = _mm256_set1_pd(0.5);
    k2.shift = _mm256_set1_pd(DPK_ROUND_SHIFT);
    k2.shift_bits = _mm256_castpd_si256(k2.shift);
    k2.sh = 64 - bits;
    __m256i ext = _mm256_setzero_si256();
    int64_t i = 0;
    if (!centre) {
        for (; i + 4 <= c; i += 4)
            _mm256_storeu_si256((__m256i *)(out_i + i),
                                signed_odd4(&k2, a + i, b + i, packed, &ext));
    } else if (stream) {  /* prefetch one line every two steps, DPK_AHEAD values ahead */
        for (; i + 4 <= c; i += 4) {
            if ((i & 7) == 0)
                _mm_prefetch((const char *)(centre + i + DPK_AHEAD), _MM_HINT_NTA);
            __m256i k = signed_odd4(&k2, a + i, b + i, packed, &ext);
            _mm256_stream_pd(out_f + i, release4(&k2, k, centre + i));
        }
    } else {
        for (; i + 4 <= c; i += 4) {
            if ((i & 7) == 0)
                _mm_prefetch((const char *)(centre + i + DPK_AHEAD), _MM_HINT_NTA);
            __m256i k = signed_odd4(&k2, a + i, b + i, packed, &ext);
            _mm256_storeu_pd(out_f + i, release4(&k2, k, centre + i));
        }
    }
    int64_t lanes[4];
    _mm256_storeu_si256((__m256i *)lanes, ext);
    int64_t found = -(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    return found + block_plain(a, b, i, c, packed, bits, two_m, centre, inv_grid, half_grid,
                               out_f, out_i);
}

/* Values [0, c) with AVX-512 (isa 2) or AVX2 (isa 1); with `stream`, release values go to
 * out_f with non-temporal stores (a large release: the output is not read again soon, and
 * skipping the cache saves reading each line first), the values before out_f's first 64-byte
 * boundary in plain C. */
static int64_t block_vector(const uint64_t *a, const uint64_t *b, int64_t c,
                            const uint64_t *packed, int64_t bits, int64_t two_m,
                            const double *centre, double inv_grid, double half_grid,
                            double *out_f, int64_t *out_i, int64_t isa, int64_t stream) {
    int64_t head = 0;
    stream = stream && centre && ((uintptr_t)out_f & 7) == 0;
    if (stream) {
        head = (int64_t)((-(uintptr_t)out_f & 63) >> 3);
        head = head < c ? head : c;
    }
    int64_t ext = block_plain(a, b, 0, head, packed, bits, two_m, centre, inv_grid, half_grid,
                              out_f, out_i);
    const double *ch = centre ? centre + head : centre;
    double *of = out_f ? out_f + head : out_f;
    int64_t *oi = out_i ? out_i + head : out_i;
    if (isa >= 2)
        ext += block_avx512(a + head, b + head, c - head, packed, bits, two_m, ch, inv_grid,
                            half_grid, of, oi, (int)stream);
    else
        ext += block_avx2(a + head, b + head, c - head, packed, bits, two_m, ch, inv_grid,
                          half_grid, of, oi, (int)stream);
    if (stream)
        _mm_sfence();
    return ext;
}
#endif

/* The widest implementation this CPU and OS support: 2 AVX-512 (F, CD, DQ), 1 AVX2, 0 C
 * (both vector loops also use BMI2). */
int64_t dpk_block_isa(void) {
#ifdef DPK_X86
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("bmi2"))
        return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq"))
        return 2;
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

static int64_t block_isa_cached = -1;

/* The kernel, over n values in chunks of `chunk`: chunk j (values s = j*chunk .. s + c) reads
 * its a-words at words[2s .. 2s + c) and its b-words right after them, exactly the words of
 * one keystream draw per chunk (the caller draws several chunks' words at once: the same
 * keystream, in the same order).  min(isa, dpk_block_isa()) picks the implementation (same
 * results); `stream` asks for non-temporal stores of a release (see block_vector). */
int64_t dpk_block_release(const uint64_t *words, int64_t n, int64_t chunk,
                          const uint64_t *packed, int64_t bits, int64_t two_m,
                          const double *centre, double inv_grid, double half_grid,
                          double *out_f, int64_t *out_i, int64_t isa, int64_t stream) {
    int64_t have = __atomic_load_n(&block_isa_cached, __ATOMIC_RELAXED);
    if (have < 0) {
        have = dpk_block_isa();
        __atomic_store_n(&block_isa_cached, have, __ATOMIC_RELAXED);
    }
    if (isa > have)
        isa = have;
    int64_t ext = 0;
    for (int64_t s = 0; s < n; s += chunk) {
        int64_t c = n - s < chunk ? n - s : chunk;
        const uint64_t *a = words + 2 * s, *b = a + c;
        const double *cs = centre ? centre + s : centre;
        double *of = out_f ? out_f + s : out_f;
        int64_t *oi = out_i ? out_i + s : out_i;
#ifdef DPK_X86
        if (isa > 0) {
            ext += block_vector(a, b, c, packed, bits, two_m, cs, inv_grid, half_grid, of, oi,
                                isa, stream);
            continue;
        }
#endif
        ext += block_plain(a, b, 0, c, packed, bits, two_m, cs, inv_grid, half_grid, of, oi);
    }
    (void)stream;
    return ext;
}
