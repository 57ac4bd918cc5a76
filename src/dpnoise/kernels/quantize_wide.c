/* The exact shares of exact/quantize_wide.py (64-bit quantisation of weights of any dynamic
 * range, e.g. a discrete Gaussian's table spanning 2^-67).
 *
 * Entry i is v_i = m_i * 2^s_i (m_i < 2^53, s_i >= 0); T = sum v_i is given as TL <= 4
 * little-endian 64-bit limbs with bit length t.  For each i:
 *   q_i = floor(v_i * 2^64 / T),   r_i = v_i * 2^64 - q_i * T   (0 <= r_i < T),
 * exactly: an estimate q0 from one reciprocal of T (see dpk_quantize_wide_shares) is q_i
 * or q_i - 1; r = N - q0 * T in multi-limb arithmetic, then T is subtracted while r >= T.  r_i is written as TL limbs
 * (row i of an n x TL array), and its bits [low, low + 64) as the sort key key_i (0 <= low,
 * low + 64 <= 64 * WL).  Returns 1 if an entry is out of range (a share of 2^64, or a
 * correction loop that does not end: impossible for valid input; the caller then uses the
 * reference).
 */
#include <stdint.h>

#define WL 6 /* working limbs: N < 2^(t + 64) <= 2^320 */

typedef unsigned __int128 u128;

static int geq(const uint64_t *a, const uint64_t *b, int len) { /* a >= b, len limbs */
    for (int k = len - 1; k >= 0; k--) {
        if (a[k] != b[k]) return a[k] > b[k];
    }
    return 1;
}

static void subtract(uint64_t *a, const uint64_t *b, int len) { /* a -= b, len limbs */
    uint64_t borrow = 0;
    for (int k = 0; k < len; k++) {
        u128 d = (u128)a[k] - b[k] - borrow;
        a[k] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) ? 1 : 0;
    }
}

static uint64_t bits64(const uint64_t *a, int pos) { /* bits [pos, pos + 64) */
    int k = pos / 64, o = pos % 64;
    uint64_t lo = k < WL ? a[k] >> o : 0;
    if (o && k + 1 < WL) lo |= a[k + 1] << (64 - o);
    return lo;
}

int64_t dpk_quantize_wide_shares(const uint64_t *m, const int64_t *s, int64_t n,
                                 const uint64_t *total, int64_t tl, int64_t t,
                                 uint64_t recip_lo, uint64_t recip_hi, uint64_t *q,
                                 uint64_t *r, int64_t low, uint64_t *key) {
    /* recip = floor(2^(t + 127) / T), capped at 2^128 - 1 (given by the caller).  For
     * v = m 2^s: m * recip / 2^(t - s + 63) <= v 2^64 / T and is less than 2^-60 below it
     * (m 2^s < T), so its floor q0 is q or q - 1; the remainder N - q0 T then fixes it. */
    if (tl < 1 || tl > 4 || t < 1 || t > 64 * tl || low < 0 || low + 64 > 64 * WL) return 1;
    uint64_t T[WL] = {0};
    for (int64_t k = 0; k < tl; k++) T[k] = total[k];
    const int len = (int)tl + 2; /* N < 2^(t + 64) and q0 T fit in tl + 1 limbs */
    for (int64_t i = 0; i < n; i++) {
        uint64_t N[WL] = {0};
        u128 q0 = 0;
        if (m[i] != 0) {
            const int64_t bit = s[i] + 64;
            if (s[i] < 0 || bit + 53 > 64 * WL || s[i] >= t) return 1;
            const int k = (int)(bit / 64), o = (int)(bit % 64);
            N[k] = m[i] << o;
            if (o && k + 1 < WL) N[k + 1] = m[i] >> (64 - o);
            /* m * recip as three limbs, then bits [t - s + 63, ... + 128) */
            const u128 lo = (u128)m[i] * recip_lo, hi = (u128)m[i] * recip_hi;
            const u128 mid = (lo >> 64) + (uint64_t)hi;
            uint64_t prod[WL] = {(uint64_t)lo, (uint64_t)mid,
                                 (uint64_t)((hi >> 64) + (mid >> 64)), 0, 0, 0};
            const int at = (int)(t - s[i] + 63);
            q0 = ((u128)bits64(prod, at + 64) << 64) | bits64(prod, at);
            if (q0 >> 64) return 1;
        }
        uint64_t P[WL] = {0};
        uint64_t carry = 0;
        for (int k = 0; k < len - 1; k++) {
            u128 prod = (u128)(uint64_t)q0 * T[k] + carry;
            P[k] = (uint64_t)prod;
            carry = (uint64_t)(prod >> 64);
        }
        P[len - 1] = carry;
        if (!geq(N, P, len)) return 1; /* q0 above the share: impossible */
        subtract(N, P, len); /* r = N - q0 T >= 0 */
        int steps = 0;
        while (geq(N, T, len)) {
            subtract(N, T, len);
            q0 += 1;
            if (++steps > 4 || (q0 >> 64)) return 1;
        }
        q[i] = (uint64_t)q0;
        for (int64_t k = 0; k < tl; k++) r[i * tl + k] = N[k];
        key[i] = bits64(N, (int)low);
    }
    return 0;
}

/* T = sum m_i 2^s_i exactly, as WL little-endian limbs (m_i < 2^53, 0 <= s_i, s_i + 53 <=
 * 64 * WL - 64: no carry out of the top limb for fewer than 2^63 entries).  Returns 1 if an
 * entry is out of range. */
int64_t dpk_wide_total(const uint64_t *m, const int64_t *s, int64_t n, uint64_t *out) {
    uint64_t acc[WL] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (m[i] == 0) continue;
        if (s[i] < 0 || s[i] + 53 > 64 * (WL - 1)) return 1;
        const int k = (int)(s[i] / 64), o = (int)(s[i] % 64);
        uint64_t add[2] = {m[i] << o, o ? m[i] >> (64 - o) : 0};
        uint64_t carry = 0;
        for (int j = k; j < WL; j++) {
            const uint64_t a = j - k < 2 ? add[j - k] : 0;
            if (j - k >= 2 && !carry) break;
            const u128 sum = (u128)acc[j] + a + carry;
            acc[j] = (uint64_t)sum;
            carry = (uint64_t)(sum >> 64);
        }
    }
    for (int k = 0; k < WL; k++) out[k] = acc[k];
    return 0;
}
