/* The lattice Laplace's split-release chunks with the ChaCha20 keystream computed in the
 * kernel's own loop (AVX-512): the same words, in the same order, and so the same values as
 * libcrypto's keystream followed by kernels/block.c -- a shorter time per value.
 *
 * A span of a split release (kernels/keyed.c, dpk_keyed_span) draws, per sub-chunk of c
 * values, 2c words of its chunk's ChaCha20 keystream -- the c a-words, then the c b-words --
 * and runs the block kernel on them (value i: a-word i, b-word c + i).  Here every batch of
 * 64 values takes its a-words from 8 keystream blocks and its b-words from 8 others, all 16
 * from one pass of the 16-lane ChaCha20 (chacha16.h) into a 1 KiB buffer, and the kernel's 8
 * vectors of the batch before are interleaved with the 10 double rounds of the next: the
 * cipher works in registers while the kernel reads its table and the true values, so the
 * two overlap in the core.  Measured on this project's machine (2^20 values, C, chunks of
 * 2^14): 2.13-2.17 ns a value against 2.47-2.50 for the keystream and then the kernel (the
 * keystream alone: 2.02-2.06).
 *
 * Used when the CPU has AVX-512 F/CD/DQ and BMI2, the caller's instruction-set cap allows
 * it (args[7] >= 2, as for block.c) and a sub-chunk is whole batches (c a multiple of 64)
 * with its blocks below the 32-bit counter's end; anything else is left to keyed.c's loop
 * (libcrypto), which reads the same words.  No branch depends on a word or a true value:
 * the batch loop is the same for every key; the one data-dependent outcome is block.c's
 * (a Q of 63, probability 2^-63 a value), which stops the span for the reference. */
#include <stdint.h>
#include <string.h>

#include "dpk.h"

int64_t dpk_block_isa(void);
int64_t dpk_block_keyed_test_stop(int64_t sub_chunk);
int64_t dpk_block_keyed_use(int64_t on);

#if defined(__x86_64__) && defined(__GNUC__)
#define DPK_KEYED_X86 1
#include "block_avx512.h"
#include "chacha16.h"
#endif

static int64_t use_fused = 1;      /* off: every span goes through keyed.c's loop */
static int64_t stop_for_test = -1;  /* tests: the sub-chunk reported as needing the reference */

/* Tests only: report sub-chunk `sub_chunk` of the next spans (counted from each span's start)
 * as needing the reference, as a Q of 63 would; -1 turns it off.  Returns the setting. */
int64_t dpk_block_keyed_test_stop(int64_t sub_chunk) {
    __atomic_store_n(&stop_for_test, sub_chunk, __ATOMIC_RELAXED);
    return sub_chunk;
}

/* Whether spans use this loop from now on (on = 0 or 1; -1 only asks): tests compare the two
 * paths' values, benchmarks their times.  Returns the setting in force. */
int64_t dpk_block_keyed_use(int64_t on) {
    if (on >= 0)
        __atomic_store_n(&use_fused, on ? 1 : 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&use_fused, __ATOMIC_RELAXED);
}

#ifdef DPK_KEYED_X86
/* Overwrite n bytes in a way the compiler keeps (the keystream and key on the stack). */
static void wipe(void *p, size_t n) {
    volatile unsigned char *v = (volatile unsigned char *)p;
    while (n--) *v++ = 0;
}

#define DPK_KEYED __attribute__((target("avx512f,avx512cd,avx512dq,bmi2")))

/* Blocks ca .. ca + 7, then cb .. cb + 7, of the keystream into out (128 words). */
static __attribute__((target("avx512f"))) void
cc16_blocks(const dpk_cc_key *k, uint32_t ca, uint32_t cb, uint64_t *out) {
    __m512i x[16];
    dpk_cc16_init(k, ca, cb, x);
#pragma GCC unroll 10
    for (int r = 0; r < 10; r++) {
        DPK_CC16_DOUBLE_ROUND(x)
    }
    dpk_cc16_store(k, ca, cb, x, out);
}

/* The kernel on vector v of a batch (values done + v .. + 7; a-words at w + v, b-words at
 * w + 64 + v), its values stored as `mode` says: 0 integers, 1 doubles, 2 doubles by
 * non-temporal stores on out_f's 64-byte grid -- vector m's values are stored with the
 * previous vector's as the aligned eight [s + 8m + h - 8, s + 8m + h) (h: values before
 * the first boundary), by one two-source permute; the sub-chunk's first h and last 8 - h
 * values by masked stores (lanes outside the mask are not touched). */
#define DPK_BATCH_VECTOR(v)                                                                \
    do {                                                                                   \
        __m512i k_ = signed_odd8(k5, w + (v), w + 64 + (v), packed, &ext);                 \
        int64_t i_ = done + (v);                                                           \
        if (mode == 0) {                                                                   \
            _mm512_storeu_si512(out_i + i_, k_);                                           \
        } else if (mode == 1) {                                                            \
            _mm512_storeu_pd(out_f + i_, release8(k5, k_, centre + i_));                   \
        } else {                                                                           \
            __m512d r_ = release8(k5, k_, centre + i_);                                    \
            __m512d m_ = _mm512_permutex2var_pd(prev, shift, r_);                          \
            if (i_ == s)                                                                   \
                _mm512_mask_storeu_pd(out_f + i_ + h - 8, head, m_);                       \
            else                                                                           \
                _mm512_stream_pd(out_f + i_ + h - 8, m_);                                  \
            prev = r_;                                                                     \
        }                                                                                  \
    } while (0)

/* Values [s, s + c) (c a multiple of 64; a-block counter ca, b-block counter cb): each
 * batch's 16 blocks computed while the batch before goes through the kernel.  Returns the
 * count of Q = 63. */
static inline __attribute__((always_inline)) DPK_KEYED int64_t
keyed_sub_chunk(const dpk_cc_key *key, uint32_t ca, uint32_t cb, int64_t s, int64_t c,
                const dpk_c512 *k5, const uint64_t *packed, const double *centre,
                double *out_f, int64_t *out_i, const int mode, uint64_t (*buf)[128]) {
    __m512i ext = _mm512_setzero_si512(), x[16];
    int64_t h = mode == 2 ? (int64_t)(((64 - ((uintptr_t)(out_f + s) & 63)) & 63) / 8) : 0;
    const __m512i shift = _mm512_add_epi64(_mm512_set1_epi64(h),
                                           _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    const __mmask8 head = (__mmask8)((0xFF << (8 - h)) & 0xFF);
    __m512d prev = _mm512_setzero_pd();
    cc16_blocks(key, ca, cb, buf[0]);  /* the first batch alone */
    int64_t done = s;
    for (int64_t j = 1; j < c / 64; j++, done += 64) {
        const uint64_t *w = buf[(j - 1) & 1];
        uint32_t na = ca + (uint32_t)(8 * j), nb = cb + (uint32_t)(8 * j);
        dpk_cc16_init(key, na, nb, x);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) {  /* a double round, then a vector of the batch before */
            DPK_CC16_DOUBLE_ROUND(x)
            DPK_BATCH_VECTOR(8 * r);
        }
        DPK_CC16_DOUBLE_ROUND(x)
        DPK_CC16_DOUBLE_ROUND(x)
        dpk_cc16_store(key, na, nb, x, buf[j & 1]);
    }
    const uint64_t *w = buf[(c / 64 - 1) & 1];
#pragma GCC unroll 8
    for (int v = 0; v < 64; v += 8)
        DPK_BATCH_VECTOR(v);
    if (mode == 2)  /* the last 8 - h values */
        _mm512_mask_storeu_pd(out_f + s + c - 8 + h, (__mmask8)(0xFF >> h),
                              _mm512_permutex2var_pd(prev, shift, prev));
    return _mm512_reduce_add_epi64(ext);
}

static DPK_KEYED int64_t keyed_span(const dpk_cc_key *key, uint32_t ctr0, int64_t start,
                                    int64_t end, int64_t sub, const int64_t *a,
                                    int64_t *stopped) {
    const uint64_t *packed = (const uint64_t *)(intptr_t)a[0];
    const double *centre = (const double *)(intptr_t)a[3];
    double inv, half;
    memcpy(&inv, &a[4], sizeof inv);
    memcpy(&half, &a[5], sizeof half);
    double *out_f = centre ? (double *)(intptr_t)a[6] : 0;
    int64_t *out_i = centre ? 0 : (int64_t *)(intptr_t)a[6];
    dpk_c512 k5;
    dpk_c512_setup(&k5, a[1], a[2], inv, half);
    uint64_t buf[2][128] __attribute__((aligned(64)));
    /* non-temporal stores for a large release (args[8]) into an array of whole doubles */
    int nt = centre && a[8] && ((uintptr_t)out_f & 7) == 0;
    int64_t s = start, test_stop = __atomic_load_n(&stop_for_test, __ATOMIC_RELAXED);
    for (int64_t c; s < end; s += c) {  /* every sub-chunk but the last is `sub` values */
        c = end - s < sub ? end - s : sub;
        if (c % 64)
            break;  /* a short last sub-chunk: keyed.c's loop */
        /* its a-words start at word 2(s - start) of the span's keystream, b-words c later */
        uint32_t ca = ctr0 + (uint32_t)((s - start) / 4), cb = ca + (uint32_t)(c / 8);
        int64_t ext;
        if (!centre)
            ext = keyed_sub_chunk(key, ca, cb, s, c, &k5, packed, 0, 0, out_i, 0, buf);
        else if (!nt)
            ext = keyed_sub_chunk(key, ca, cb, s, c, &k5, packed, centre, out_f, 0, 1, buf);
        else
            ext = keyed_sub_chunk(key, ca, cb, s, c, &k5, packed, centre, out_f, 0, 2, buf);
        if (ext || (s - start) / sub == test_stop) {
            *stopped = 1;
            break;
        }
    }
    if (nt)
        _mm_sfence();
    wipe(buf, sizeof buf);
    return s;
}
#endif

/* Values [start, end) of a split release's span through the fused loop, as far as it goes:
 * key and iv as dpk_keyed_span's (iv: the span's first block counter, then the nonce), sub
 * the sub-chunk length, args the dpk_keyed_block adapter's slots.  Returns the first value
 * not computed -- start when the fused loop does not apply (no AVX-512, the cap below 2,
 * sub not a multiple of 64, counters that would pass 2^32), end when all are done, else the
 * start of a sub-chunk keyed.c's loop goes on from (*stopped = 0) or whose values need the
 * sampler's reference (*stopped = 1). */
int64_t dpk_block_keyed(const unsigned char *key, const unsigned char *iv, int64_t start,
                        int64_t end, int64_t sub, const int64_t *args, int64_t *stopped) {
    *stopped = 0;
#ifdef DPK_KEYED_X86
    if (!__atomic_load_n(&use_fused, __ATOMIC_RELAXED) || args[7] < 2 || dpk_block_isa() < 2 ||
        sub <= 0 || sub % 64 || end <= start)
        return start;  /* once per span: the CPU check costs nothing beside its values */
    dpk_cc_key k;
    uint32_t ctr0 = dpk_cc_key_from(key, iv, &k);
    if ((uint64_t)ctr0 + (uint64_t)(end - start) / 4 + 16 >= ((uint64_t)1 << 32)) {
        wipe(&k, sizeof k);
        return start;  /* libcrypto's loop handles the counter's end */
    }
    int64_t got = keyed_span(&k, ctr0, start, end, sub, args, stopped);
    wipe(&k, sizeof k);
    return got;
#else
    (void)key; (void)iv; (void)end; (void)sub; (void)args;
    return start;
#endif
}

/* Tests: n blocks (a multiple of 16) of the keystream from the IV's block counter into out,
 * by the 16-lane ChaCha20 -- the blocks libcrypto's EVP_chacha20() gives for that key and
 * IV.  Returns 0, or -1 without AVX-512 F or when a counter would pass 2^32. */
int64_t dpk_chacha16_blocks(const unsigned char *key, const unsigned char *iv, int64_t n,
                            uint64_t *out) {
#ifdef DPK_KEYED_X86
    __builtin_cpu_init();
    dpk_cc_key k;
    uint32_t ctr = dpk_cc_key_from(key, iv, &k);
    int ok = __builtin_cpu_supports("avx512f") && n >= 0 && n % 16 == 0 &&
             (uint64_t)ctr + (uint64_t)n <= ((uint64_t)1 << 32);
    for (int64_t b = 0; ok && b < n; b += 16)
        cc16_blocks(&k, ctr + (uint32_t)b, ctr + (uint32_t)b + 8, out + 8 * b);
    wipe(&k, sizeof k);
    return ok ? 0 : -1;
#else
    (void)key; (void)iv; (void)n; (void)out;
    return -1;
#endif
}
