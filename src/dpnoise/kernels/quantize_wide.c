/* The exact shares of exact/quantize_wide.py (64-bit quantisation of weights of any dynamic
 * range, e.g. a discrete Gaussian's table spanning 2^-67).
 *
 * Entry i is v_i = m_i * 2^s_i (m_i < 2^53, s_i >= 0); T = sum v_i is given as TL <= 4
 * little-endian 64-bit limbs with bit length t.  For each i:
 *   q_i = floor(v_i * 2^64 / T),   r_i = v_i * 2^64 - q_i * T   (0 <= r_i < T),
 * exactly: an estimate q0 = floor(N_top / (T_top + 1)) from the top bits (N = v_i * 2^64,
 * N_top = floor(N / 2^sh), T_top = floor(T / 2^sh), sh = t - 64) is at most q_i and at most
 * ~3 below it; r = N - q0 * T in multi-limb arithmetic, then T is subtracted while r >= T.
 * (With t <= 64, sh = 0 and the division is exact at once.)  r_i is written as TL limbs
 * (row i of an n x TL array), and its bits [low, low + 64) as the sort key key_i (0 <= low,
 * low + 64 <= 64 * WL).  Returns 1 if an entry is out of range (a share of 2^64, or a
 * correction loop that does not end: impossible for valid input; the caller then uses the
 * reference).
 */
#include <stdint.h>

#define WL 6 /* working limbs: N < 2^(t + 64) <= 2^320 */

typedef unsigned __int128 u128;

static int geq(const uint64_t *a, const uint64_t *b) {
    for (int k = WL - 1; k >= 0; k--) {
        if (a[k] != b[k]) return a[k] > b[k];
    }
    return 1;
}

static void subtract(uint64_t *a, const uint64_t *b) {
    uint64_t borrow = 0;
    for (int k = 0; k < WL; k++) {
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
                                 const uint64_t *total, int64_t tl, int64_t t, uint64_t *q,
                                 uint64_t *r, int64_t low, uint64_t *key) {
    if (tl < 1 || tl > 4 || t < 1 || t > 64 * tl || low < 0 || low + 64 > 64 * WL) return 1;
    uint64_t T[WL] = {0};
    for (int64_t k = 0; k < tl; k++) T[k] = total[k];
    const int sh = t > 64 ? (int)t - 64 : 0;
    const u128 t_top = (u128)bits64(T, sh);
    if (t_top == 0) return 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t N[WL] = {0};
        if (m[i] != 0) {
            const int64_t bit = s[i] + 64;
            if (s[i] < 0 || bit + 53 > 64 * WL) return 1;
            const int k = (int)(bit / 64), o = (int)(bit % 64);
            N[k] = m[i] << o;
            if (o && k + 1 < WL) N[k + 1] = m[i] >> (64 - o);
        }
        const u128 n_top = ((u128)bits64(N, sh + 64) << 64) | bits64(N, sh);
        u128 q0 = sh ? n_top / (t_top + 1) : n_top / t_top;
        if (q0 >> 64) return 1;
        uint64_t P[WL] = {0};
        uint64_t carry = 0;
        for (int k = 0; k < WL - 1; k++) {
            u128 prod = (u128)(uint64_t)q0 * T[k] + carry;
            P[k] = (uint64_t)prod;
            carry = (uint64_t)(prod >> 64);
        }
        P[WL - 1] = carry;
        subtract(N, P); /* r = N - q0 T >= 0 */
        int steps = 0;
        while (geq(N, T)) {
            subtract(N, T);
            q0 += 1;
            if (++steps > 8 || (q0 >> 64)) return 1;
        }
        q[i] = (uint64_t)q0;
        for (int64_t k = 0; k < tl; k++) r[i * tl + k] = N[k];
        key[i] = bits64(N, (int)low);
    }
    return 0;
}
