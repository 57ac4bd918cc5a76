/* UnionSampler._draw (exact/range_union.py), steps 1 (after the chain counts) to 4, for one
 * chunk of cnt values.  The caller computes, with numpy, the per-element parameters (their
 * transcendental functions are numpy's) and the chain decisions' trailing-zero counts qz
 * (which draw fresh words on a 2^-12 event, as the reference does); this kernel does the
 * rest, bit for bit as the reference:
 *   u_k = (wd_k >> 12)/2^52; decision k stops the chain iff ((qz_k >= n_k) & (u_k < x_k))
 *   XOR flip_k; slot = first stop (nd if none: the own piece); f = min(slot + (slot >= q),
 *   P - 1); category from uc = (wc >> 12)/2^52 against T1..T3 (own piece) or thr_p[f];
 *   r = inverse-CDF entry of v = lo + mulhi(wr, R) (guide table or binary search);
 *   i = fmod(Q, m + 1 - high), Q = trailing zeros of wq; j = base +- (i M + r);
 *   out = (2j + 1) * (L/2).
 * Returns 0; 1 if some wq is 0 (p = 2^-64: the reference continues that count on fresh
 * words) or |2j + 1| >= 2^53 (the reference raises): the caller then runs the reference on
 * the same words and parameters.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline double unit52(uint64_t w) {
    uint64_t bits = (w >> 12) | (uint64_t)0x3FF0000000000000ULL;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d - 1.0;
}

int64_t dpk_union_draw(int64_t cnt, int64_t nd, const uint64_t *wd, const double *qz,
                       const double *cn, const double *cx, const uint8_t *cflip,
                       const int64_t *q, const double *mL, const double *tL, const double *mR,
                       const double *tR, const double *T1, const double *T2, const double *T3,
                       const uint64_t *wc, const uint64_t *wr, const uint64_t *wq,
                       const double *cf, const double *thr_p, const double *m_p,
                       const int64_t *t_p, const double *a_p, const double *b_p,
                       const uint64_t *cum_u, int64_t guided, int64_t gshift, uint64_t gmask,
                       const int64_t *g, const uint64_t *gthr, const uint64_t *B, int64_t nB,
                       int64_t M, double half_grid, double *out) {
    const int64_t P = nd + 1;
    const double lim = 9007199254740992.0; /* 2^53 */
    int64_t bad = 0;
    for (int64_t e = 0; e < cnt; e++) {
        int64_t slot = nd;
        int open = 1;
        for (int64_t k = 0; k < nd; k++) {
            int64_t at = k * cnt + e;
            int stop = ((qz[at] >= cn[at]) & (unit52(wd[at]) < cx[at])) ^ (cflip[at] != 0);
            if (open & stop) slot = k;
            open &= !stop;
        }
        int own = slot == nd;
        int64_t f = slot + (slot >= q[e]);
        if (f > P - 1) f = P - 1;
        double uc = unit52(wc[e]);
        int cat = (uc >= T1[e]) + (uc >= T2[e]) + (uc >= T3[e]);
        int right = own ? (cat >= 2) : (f > q[e]);
        int high = own ? (cat & 1) : (uc >= thr_p[f]);
        double m = own ? (right ? mR[e] : mL[e]) : m_p[f];
        int64_t t = own ? (int64_t)(right ? tR[e] : tL[e]) : t_p[f];
        double base = own ? (cf[e] - 1.0 + (double)right) : (right ? a_p[f] : b_p[f]);
        uint64_t ct = cum_u[t];
        uint64_t lo = high ? ct : 0;
        uint64_t R = high ? (uint64_t)0 - ct : ct;
        uint64_t v = lo + (uint64_t)(((unsigned __int128)wr[e] * R) >> 64);
        if (high && t == 0) v = wr[e];
        int64_t r;
        if (guided) {
            uint64_t bucket = v >> gshift;
            r = g[bucket] + ((v & gmask) >= gthr[bucket]);
        } else { /* #{B_i <= v}: searchsorted(B, v, side="right") */
            int64_t lo_i = 0, hi_i = nB;
            while (lo_i < hi_i) {
                int64_t mid = lo_i + (hi_i - lo_i) / 2;
                if (B[mid] <= v) lo_i = mid + 1; else hi_i = mid;
            }
            r = lo_i;
        }
        uint64_t w = wq[e];
        bad |= (w == 0);
        double Q = (double)(w ? __builtin_ctzll(w) : 0);
        double i = fmod(Q, m + 1.0 - (double)high);
        double kk = i * (double)M + (double)r;
        double j = base + (right ? kk : -kk);
        double half = 2.0 * j + 1.0;
        bad |= !(fabs(half) < lim);
        out[e] = half * half_grid;
    }
    return bad;
}
