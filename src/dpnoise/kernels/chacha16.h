/* ChaCha20 (Nir and Langley, "ChaCha20 and Poly1305 for IETF Protocols", RFC 8439, sec. 2.3)
 * sixteen blocks at a time in AVX-512F registers: register i holds state word i of the
 * sixteen blocks, one per 32-bit lane.  The block function is the RFC's -- constants, 256-bit
 * key, 32-bit block counter, 96-bit nonce; ten double rounds of quarter rounds on the
 * columns then the diagonals; the input state added -- and every block is serialised as the
 * RFC's sixteen little-endian words, so the bytes are those of libcrypto's EVP_chacha20()
 * with the IV (counter, nonce) for the same block (tests compare them).  Additions, xors and
 * rotations only: the same instructions for every key and counter.
 *
 * Lanes 0-7 compute blocks ca .. ca + 7 and lanes 8-15 blocks cb .. cb + 7: a sampler that
 * reads two words a value from two places of its chunk's keystream (kernels/block_keyed.c)
 * gets both in one pass.  The caller keeps the counters below 2^32 (no lane wraps). */
#ifndef DPNOISE_CHACHA16_H
#define DPNOISE_CHACHA16_H
#include <immintrin.h>
#include <stdint.h>

#define DPK_CC16 __attribute__((target("avx512f"), always_inline))

typedef struct {
    uint32_t key[8], nonce[3];
} dpk_cc_key;

#define DPK_CC16_QR(a, b, c, d)                                                            \
    a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16);         \
    c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);         \
    a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);          \
    c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);

/* One double round (RFC 8439, sec. 2.3.1's inner_block): columns, then diagonals. */
#define DPK_CC16_DOUBLE_ROUND(x)                                                           \
    DPK_CC16_QR(x[0], x[4], x[8], x[12]) DPK_CC16_QR(x[1], x[5], x[9], x[13])              \
    DPK_CC16_QR(x[2], x[6], x[10], x[14]) DPK_CC16_QR(x[3], x[7], x[11], x[15])            \
    DPK_CC16_QR(x[0], x[5], x[10], x[15]) DPK_CC16_QR(x[1], x[6], x[11], x[12])            \
    DPK_CC16_QR(x[2], x[7], x[8], x[13]) DPK_CC16_QR(x[3], x[4], x[9], x[14])

/* The initial states of blocks ca .. ca + 7 (lanes 0-7) and cb .. cb + 7 (lanes 8-15). */
static inline DPK_CC16 void dpk_cc16_init(const dpk_cc_key *k, uint32_t ca, uint32_t cb,
                                          __m512i *x) {
    x[0] = _mm512_set1_epi32(0x61707865);  /* "expand 32-byte k" */
    x[1] = _mm512_set1_epi32(0x3320646e);
    x[2] = _mm512_set1_epi32(0x79622d32);
    x[3] = _mm512_set1_epi32(0x6b206574);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        x[4 + i] = _mm512_set1_epi32((int)k->key[i]);
    __m512i base = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32((int)ca),
                                           _mm512_set1_epi32((int)cb));
    x[12] = _mm512_add_epi32(base, _mm512_set_epi32(7, 6, 5, 4, 3, 2, 1, 0,
                                                    7, 6, 5, 4, 3, 2, 1, 0));
#pragma GCC unroll 3
    for (int i = 0; i < 3; i++)
        x[13 + i] = _mm512_set1_epi32((int)k->nonce[i]);
}

/* The sixteen blocks after the rounds: the input state added, then written to out as 128
 * uint64 words in stream order -- blocks ca .. ca + 7, then cb .. cb + 7, each its sixteen
 * little-endian 32-bit words (a 16 x 16 transpose: 32-bit, 64-bit and 128-bit interleaves). */
static inline DPK_CC16 void dpk_cc16_store(const dpk_cc_key *k, uint32_t ca, uint32_t cb,
                                           __m512i *x, uint64_t *out) {
    __m512i s[16], t[16], u[16];
    dpk_cc16_init(k, ca, cb, s);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        x[i] = _mm512_add_epi32(x[i], s[i]);
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {  /* t: 32-bit pairs of words i, i + 1 */
        t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 16; g += 4) {  /* u[g + r], 128-bit lane L: words g..g+3 of 4L + r */
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {  /* block 4L + r: lane L of u[r], u[4 + r], u[8 + r], u[12 + r] */
        __m512i v0 = _mm512_shuffle_i32x4(u[r], u[4 + r], 0x44);
        __m512i v1 = _mm512_shuffle_i32x4(u[r], u[4 + r], 0xEE);
        __m512i v2 = _mm512_shuffle_i32x4(u[8 + r], u[12 + r], 0x44);
        __m512i v3 = _mm512_shuffle_i32x4(u[8 + r], u[12 + r], 0xEE);
        _mm512_storeu_si512(out + 8 * r, _mm512_shuffle_i32x4(v0, v2, 0x88));
        _mm512_storeu_si512(out + 8 * (4 + r), _mm512_shuffle_i32x4(v0, v2, 0xDD));
        _mm512_storeu_si512(out + 8 * (8 + r), _mm512_shuffle_i32x4(v1, v3, 0x88));
        _mm512_storeu_si512(out + 8 * (12 + r), _mm512_shuffle_i32x4(v1, v3, 0xDD));
    }
}

/* The key and nonce of a 32-byte key and a 16-byte IV (counter, then nonce; libcrypto's
 * EVP_chacha20() layout), and the IV's block counter. */
static inline uint32_t dpk_cc_key_from(const unsigned char *key, const unsigned char *iv,
                                       dpk_cc_key *k) {
    for (int i = 0; i < 8; i++)
        k->key[i] = (uint32_t)key[4 * i] | (uint32_t)key[4 * i + 1] << 8 |
                    (uint32_t)key[4 * i + 2] << 16 | (uint32_t)key[4 * i + 3] << 24;
    for (int i = 0; i < 3; i++)
        k->nonce[i] = (uint32_t)iv[4 + 4 * i] | (uint32_t)iv[5 + 4 * i] << 8 |
                      (uint32_t)iv[6 + 4 * i] << 16 | (uint32_t)iv[7 + 4 * i] << 24;
    return (uint32_t)iv[0] | (uint32_t)iv[1] << 8 | (uint32_t)iv[2] << 16 |
           (uint32_t)iv[3] << 24;
}
#endif
