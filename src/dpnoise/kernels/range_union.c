/* UnionSampler._draw (exact/range_union.py) for one chunk of cnt centres, whole: each
 * element's parameters (UnionSampler._params: +, -, *, /, floor, ldexp, frexp, rint and
 * table reads only, operation for operation the numpy reference) and steps 1 to 4 of the
 * draw, bit for bit as the reference from the same words:
 *   chain decision k stops iff ((qz_k >= n_k) & (u_k < x_k)) XOR flip_k, u_k = (wd_k>>12)/2^52;
 *   slot = first stop (nd if none: the own piece); f = min(slot + (slot >= q), P - 1);
 *   category from uc = (wc >> 12)/2^52 against T1..T3 (own piece) or thr_p[f];
 *   r = inverse-CDF entry of v = lo + mulhi(wr, R) (guide table or binary search);
 *   i = fmod(Q, m + 1 - high), Q = trailing zeros of wq; j = base +- (i M + r);
 *   out = (2j + 1) * (L/2).
 * The decisions' trailing-zero counts qz come from dpk_union_qz and the caller (which draws
 * the 2^-12 extensions, as the reference does).  Returns 0; 1 if some wq is 0 (p = 2^-64:
 * the reference continues that count on fresh words) or |2j + 1| >= 2^53 (the reference
 * raises): the caller then runs the reference on the same words and parameters.
 * Every element runs the same instructions (selections are conditional moves or 0/1
 * arithmetic; the loops run over all P pieces); table addresses depend on the value.
 *
 * Rows and dispatch.  The per-value work is written three times: the scalar rows below
 * (every CPU), the AVX-512F/DQ rows of range_union_avx512.c (eight values per vector, four
 * vectors in flight) and the AVX2 rows of range_union_avx2.c (four values per vector).  The
 * vector rows run, lane by lane, the same IEEE operations in the same order (no FMA,
 * -ffp-contract=off; the same truncating and rounding conversions, built from exact pieces
 * where AVX2 lacks them; comparisons with the same NaN outcome; the same table entries, read
 * by gathers, blends or in-register permutations) and so give the same bits:
 * tests/test_kernels_range_union_simd.py compares every width on random unions and centres
 * at and around every piece end, outside the hull and of huge magnitude, with the rare
 * words planted.  Each entry (dpk_union_release, dpk_union_centres, dpk_union_qz) checks the
 * CPU once per process (__builtin_cpu_supports) and runs the widest rows it has, the scalar
 * rows for the last cnt mod 8 (or 4) values; the *_lanes entries cap the width (tests,
 * DPNOISE_SIMD).  The choice depends on the CPU and the chunk's length, never on a value.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "range_union.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TWO52 4503599627370496.0
#define TWO62 4611686018427387904.0

/* Branch-free selection: c ? a : b for c in {0, 1} (masks, no jump on the value). */
static inline uint64_t usel(int c, uint64_t a, uint64_t b) {
    uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);
    return (a & m) | (b & ~m);
}
static inline int64_t isel(int c, int64_t a, int64_t b) {
    return (int64_t)usel(c, (uint64_t)a, (uint64_t)b);
}
static inline double dsel(int c, double a, double b) {
#if defined(__SSE2__)
    /* in the SSE registers: mask from c, then (a & mask) | (b & ~mask) */
    __m128d m = _mm_castsi128_pd(_mm_cvtsi64_si128(-(int64_t)(c != 0)));
    return _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(m, _mm_set_sd(a)), _mm_andnot_pd(m, _mm_set_sd(b))));
#else
    uint64_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    uint64_t r = usel(c, ua, ub);
    double d;
    memcpy(&d, &r, sizeof d);
    return d;
#endif
}

/* x < y ? a : b and x <= y ? a : b for doubles, the mask made by an SSE comparison (no jump,
 * no move through the integer registers). */
#if defined(__SSE2__)
static inline double mask_sel(__m128d m, double a, double b) {
    return _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(m, _mm_set_sd(a)), _mm_andnot_pd(m, _mm_set_sd(b))));
}
#endif
static inline double lt_sel(double x, double y, double a, double b) {
#if defined(__SSE2__)
    return mask_sel(_mm_cmplt_sd(_mm_set_sd(x), _mm_set_sd(y)), a, b);
#else
    return dsel(x < y, a, b);
#endif
}
static inline double le_sel(double x, double y, double a, double b) {
#if defined(__SSE2__)
    return mask_sel(_mm_cmple_sd(_mm_set_sd(x), _mm_set_sd(y)), a, b);
#else
    return dsel(x <= y, a, b);
#endif
}

/* The exact operations of the numpy reference, written without libm calls (same doubles):
 * floor of y >= 0 (inf stays inf); round half to even of y >= 0 (rint); 2^-k for an integer
 * 0 <= k <= 1022 (its product with x is ldexp(x, -k), one correct rounding); frexp of a
 * positive normal x; floor(n / M) and n - M floor(n / M) for an integer 0 <= n < 2^53 (or
 * inf) by a product with the rounded 1/M and one exact correction each way. */
static inline double floor_small(double y) { return (double)(int64_t)y; } /* y < 2^62 */
static inline double floor_nonneg(double y) {
    double t = floor_small(lt_sel(y, TWO62, y, 0.0));
    return lt_sel(y, TWO62, t, y);
}
static inline double rint_nonneg(double y) {
    return lt_sel(y, TWO52, (y + TWO52) - TWO52, y);
}
static inline double pow2_neg(int64_t k) {
    uint64_t bits = (uint64_t)(1023 - k) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
static inline double frexp_pos(double x, int64_t *e) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    *e = (int64_t)((bits >> 52) & 0x7FF) - 1022;
    bits = (bits & 0x800FFFFFFFFFFFFFULL) | 0x3FE0000000000000ULL;
    double m;
    memcpy(&m, &bits, sizeof m);
    return m;
}
static inline double divmod_m(double n, double M, double inv_m, double *rem, int finite) {
    double A = finite ? floor_small(n * inv_m) : floor_nonneg(n * inv_m); /* inf: n = inf */
    double r = n - A * M;       /* exact; NaN for n = inf */
    double lo = lt_sel(r, 0.0, 1.0, 0.0), hi = le_sel(M, r, 1.0, 0.0);
    A = A - lo + hi;
    *rem = r + lo * M - hi * M;
    return A;
}

static inline double unit52(uint64_t w) {
    uint64_t bits = (w >> 12) | (uint64_t)0x3FF0000000000000ULL;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d - 1.0;
}

/* Which rows this CPU can run, decided once (a benign race: every thread computes the same
 * value): 1 (scalar, always) | 4 (AVX2) | 8 (AVX-512F and DQ). */
static int64_t union_cpu_rows(void) {
    static int64_t rows = 0;
    int64_t r = __atomic_load_n(&rows, __ATOMIC_RELAXED);
    if (r == 0) {
        r = 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) r |= 4;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) r |= 8;
#endif
        __atomic_store_n(&rows, r, __ATOMIC_RELAXED);
    }
    return r;
}

/* The widest rows of at most ``want`` lanes that this CPU runs: 8, 4 or 1. */
static int64_t union_rows_for(int64_t want) {
    int64_t r = union_cpu_rows();
    if (want >= 8 && (r & 8)) return 8;
    if (want >= 4 && (r & 4)) return 4;
    return 1;
}

int64_t dpk_union_simd_lanes(void) { return union_rows_for(8); }

/* Trailing zeros of the low 12 bits of each of n words (12 when all are zero; the caller
 * replaces those by 12 + a fresh geometric); the positions of the 12s go to ext in
 * increasing order.  Returns their number.  Rows of at most ``lanes`` values. */
int64_t dpk_union_qz_lanes(int64_t lanes, const uint64_t *wd, int64_t n, double *qz,
                           int64_t *ext) {
    int64_t ne = 0, i = 0;
    const int64_t rows = union_rows_for(lanes);
    if (rows == 8) i = dpk_union_qz_avx512(wd, n, qz, ext, &ne);
    if (rows == 4) i = dpk_union_qz_avx2(wd, n, qz, ext, &ne);
    for (; i < n; i++) {
        uint64_t low = wd[i] & 4095u;
        int z = __builtin_ctzll(low | 4096u);
        qz[i] = (double)z;
        ext[ne] = i;
        ne += (z == 12);
    }
    return ne;
}

int64_t dpk_union_qz(const uint64_t *wd, int64_t n, double *qz, int64_t *ext) {
    return dpk_union_qz_lanes(8, wd, n, qz, ext);
}

/* The extensions: qz[ext[i]] = 12 + trailing zeros of words[i] for i < ne (the reference's
 * 12 + sample_geometric).  Returns 1 and writes nothing if some word is 0 (p = 2^-64: the
 * reference continues that count on fresh words). */
int64_t dpk_union_qz_ext(double *qz, const int64_t *ext, int64_t ne, const uint64_t *words) {
    uint64_t any_zero = 0;
    for (int64_t i = 0; i < ne; i++) any_zero |= (words[i] == 0);
    if (any_zero) return 1;
    for (int64_t i = 0; i < ne; i++) qz[ext[i]] = 12.0 + (double)__builtin_ctzll(words[i]);
    return 0;
}

/* Grid centres of n true values, as RangeLaplace's numpy path computes them: q = x / grid
 * (correctly rounded), cf = floor(q) + ((q - floor(q)) >= 1/2) (round half up; the floor
 * exact: truncation corrected by one, or q itself from 2^52 on).  Returns 1 if some x is not
 * finite or lies in no closed piece [lo_p, hi_p] (the caller's domain check then raises),
 * else 2 if some |q| >= 2^50 (too large for the grid), else 0. */
static int64_t union_centres_rows(const double *x, int64_t from, int64_t to, const double *lo,
                                  const double *hi, int64_t P, double grid, double *cf,
                                  int64_t status) {
    int64_t outside = 0, big = 0;
    for (int64_t i = from; i < to; i++) {
        double v = x[i];
        int in = 0;
        for (int64_t p = 0; p < P; p++) in |= (v >= lo[p]) & (v <= hi[p]);
        outside |= !(in & (v - v == 0.0)); /* v - v is NaN for an infinity or a NaN */
        double q = v / grid;
        double aq = lt_sel(q, 0.0, -q, q);
        big |= !(aq < 0x1p50);
        int small = aq < TWO52;
        double t = (double)(int64_t)dsel(small, q, 0.0);
        t = t - lt_sel(q, t, 1.0, 0.0);
        double fl = dsel(small, t, q);
        cf[i] = fl + le_sel(0.5, q - fl, 1.0, 0.0);
    }
    if (outside || status == 1) return 1;
    return (big || status == 2) ? 2 : 0;
}

/* _side: (m, t, low, high) for n cells on one side (n may be inf: m = inf, t = 0). */
static inline void side(double n, double M, double inv_m, const double *lo_r_tab, double *m,
                        double *t, double *low, double *high) {
    double tt;
    double mm = divmod_m(n, M, inv_m, &tt, 0);
    tt = lt_sel(0.0, tt, tt, 0.0); /* np.fmax(nan, 0) = 0 */
    /* 2^(-m); 0 for m >= 1023 where numpy has a subnormal: low and high are the same */
    double e = lt_sel(mm, 1023.0, pow2_neg((int64_t)lt_sel(mm, 1023.0, mm, 0.0)), 0.0);
    double lo_r = lo_r_tab[(int64_t)tt];
    *m = mm;
    *t = tt;
    *low = lo_r * (2.0 - e);
    *high = (1.0 - 2.0 * lo_r) * (1.0 - e);
}

/* Rows [from, to) of the job, one value at a time (the fallback on every CPU, and the
 * remainder of the vector rows); scratch: 3 (P - 1) doubles. */
static int64_t union_rows_scalar(const dpk_union_job *J, int64_t from, int64_t to,
                                 double *scratch) {
    const int64_t cnt = J->cnt, P = J->P, nd = J->nd;
    const double *a = J->a, *b = J->b, *tot_p = J->tot_p, *thr_p = J->thr_p, *m_p = J->m_p;
    const int64_t *t_p = J->t_p, *g = J->g;
    const double M = J->M, inv_m = J->inv_m, half_grid = J->half_grid;
    const double *lo_r = J->lo_r, *p2 = J->p2, *cf_arr = J->cf, *qz = J->qz;
    const uint64_t *wd = J->wd, *wc = J->wc, *wr = J->wr, *wq = J->wq, *cum_u = J->cum_u;
    const uint64_t *gthr = J->gthr, *B = J->B, gmask = J->gmask;
    const int64_t guided = J->guided, gshift = J->gshift, nB = J->nB;
    double *out = J->out;
    double *cn = scratch, *cx = scratch + nd, *cflip = scratch + 2 * nd;
    const double lim = 9007199254740992.0; /* 2^53 */
    int64_t bad = 0;
    enum { BLK = 64 }; /* pass 1 (parameters, chain) then pass 2 (steps 2-4) per block */
    double sq[BLK], sslot[BLK], smL[BLK], stL[BLK], smR[BLK], stR[BLK], sT1[BLK], sT2[BLK],
        sT3[BLK];
    for (int64_t e0 = from; e0 < to; e0 += BLK) {
    const int64_t e1 = e0 + BLK < to ? e0 + BLK : to;
    for (int64_t e = e0; e < e1; e++) {
        const double cf = cf_arr[e];
        /* ---- parameters (UnionSampler._params) */
        int64_t q = 0;
        for (int64_t p = 1; p < P; p++) q += (a[p] <= cf);
        double mL, tL, lowL, highL, mR, tR, lowR, highR;
        side(cf - a[q], M, inv_m, lo_r, &mL, &tL, &lowL, &highL);
        side(b[q] + 1.0 - cf, M, inv_m, lo_r, &mR, &tR, &lowR, &highR);
        double c1 = lowL + highL;
        double c2 = c1 + lowR;
        double tot = c2 + highR;
        double scale = TWO52 / tot;
        double T1 = rint_nonneg(lowL * scale) * 0x1p-52, T2 = rint_nonneg(c1 * scale) * 0x1p-52;
        double T3 = rint_nonneg(c2 * scale) * 0x1p-52;
        double R = tot;
        for (int64_t k = nd - 1; k >= 0; k--) {
            int64_t f = k + (k >= q);
            double off = lt_sel((double)f, (double)q, cf - 1.0 - b[f], a[f] - cf);
            double r0;
            double A = divmod_m(off, M, inv_m, &r0, 1);
            double w = tot_p[f] * p2[(int64_t)r0];
            double rho = w / R;
            double s = pow2_neg((int64_t)lt_sel(A, 1022.0, A, 1022.0)); /* 2^-min(A, 1022) */
            double z = rho * s;
            int neg = z <= 1.0;
            int64_t ee;
            double mm = frexp_pos(le_sel(z, 1.0, rho, 1.0) / (1.0 + z), &ee);
            cn[k] = le_sel(z, 1.0, A, 0.0) - (double)ee;
            cx[k] = rint_nonneg(mm * TWO52) * 0x1p-52;
            cflip[k] = (double)!neg;
            R = R + w * s;
        }
        /* ---- 1. the far-piece chain */
        int64_t slot = nd;
        int open = 1;
        for (int64_t k = 0; k < nd; k++) {
            int64_t at = k * cnt + e;
            int stop = ((qz[at] >= cn[k]) & (unit52(wd[at]) < cx[k])) ^ (cflip[k] != 0.0);
            slot = isel(open & stop, k, slot);
            open &= !stop;
        }
        const int64_t x = e - e0;
        sq[x] = (double)q; sslot[x] = (double)slot; smL[x] = mL; stL[x] = tL; smR[x] = mR;
        stR[x] = tR; sT1[x] = T1; sT2[x] = T2; sT3[x] = T3;
    }
    for (int64_t e = e0; e < e1; e++) {
        const int64_t x = e - e0;
        const double cf = cf_arr[e];
        const int64_t q = (int64_t)sq[x], slot = (int64_t)sslot[x];
        const double mL = smL[x], tL = stL[x], mR = smR[x], tR = stR[x];
        const double T1 = sT1[x], T2 = sT2[x], T3 = sT3[x];
        int own = slot == nd;
        int64_t f = slot + (slot >= q);
        f = isel(f > P - 1, P - 1, f);
        /* ---- 2. category */
        double uc = unit52(wc[e]);
        int cat = (uc >= T1) + (uc >= T2) + (uc >= T3);
        int right = (int)isel(own, cat >= 2, f > q);
        int high = (int)isel(own, cat & 1, uc >= thr_p[f]);
        double m = dsel(own, dsel(right, mR, mL), m_p[f]);
        int64_t t = isel(own, (int64_t)dsel(right, tR, tL), t_p[f]);
        double base = dsel(own, cf - 1.0 + (double)right, dsel(right, a[f], b[f]));
        /* ---- 3. r within the category */
        uint64_t ct = cum_u[t];
        uint64_t lo = usel(high, ct, 0);
        uint64_t Rw = usel(high, (uint64_t)0 - ct, ct);
        uint64_t v = lo + (uint64_t)(((unsigned __int128)wr[e] * Rw) >> 64);
        v = usel(high & (t == 0), wr[e], v);
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
        /* ---- 4. i = Q mod m_r */
        uint64_t wqe = wq[e];
        bad |= (wqe == 0);
        double Q = (double)__builtin_ctzll(wqe | ((uint64_t)1 << 63));
        double mr = m + 1.0 - (double)high;   /* >= 1, or inf */
        mr = lt_sel(mr, TWO62, mr, TWO62);    /* Q < 64: Q mod 2^62 = Q mod inf = Q */
        double i = Q - floor_small(Q / mr) * mr; /* = fmod(Q, mr), exact */
        double kk = i * M + (double)r;
        double j = base + dsel(right, kk, -kk);
        double half = 2.0 * j + 1.0;
        bad |= !(fabs(half) < lim);
        out[e] = half * half_grid;
    }
    }
    return bad;
}

/* pieces: a[P], b[P], tot_p[P], thr_p[P], m_p[P] (consecutive); t_p[P]; lo_r[M] =
 * 1 - 2^(-t/M), then p2[M] = 2^(-r/M); scratch: 3 (P - 1) doubles.  Vector rows of at most
 * ``lanes`` values (1: the scalar rows only), the rest scalar. */
static int64_t union_release(int64_t lanes, int64_t cnt, int64_t P, const double *cf_arr,
                             const uint64_t *w, const double *qz, const double *pieces,
                             const int64_t *t_p, const double *lo_r, int64_t Mi, double inv_m,
                             const uint64_t *cum_u, int64_t guided, int64_t gshift,
                             uint64_t gmask, const int64_t *g, const uint64_t *gthr,
                             const uint64_t *B, int64_t nB, double half_grid, double *scratch,
                             double *out) {
    const int64_t nd = P - 1;
    dpk_union_job J = {
        .cnt = cnt, .P = P, .nd = nd, .Mi = Mi, .M = (double)Mi, .inv_m = inv_m,
        .half_grid = half_grid, .cf = cf_arr, .qz = qz,
        .wd = w, .wc = w + nd * cnt, .wr = w + (nd + 1) * cnt, .wq = w + (nd + 2) * cnt,
        .a = pieces, .b = pieces + P, .tot_p = pieces + 2 * P, .thr_p = pieces + 3 * P,
        .m_p = pieces + 4 * P, .t_p = t_p, .lo_r = lo_r, .p2 = lo_r + Mi, .cum_u = cum_u,
        .guided = guided, .gshift = gshift, .nB = nB, .gmask = gmask, .g = g, .gthr = gthr,
        .B = B, .out = out};
    int64_t bad = 0, done = 0;
    const int64_t rows = union_rows_for(lanes);
    if (rows == 8) done = dpk_union_rows_avx512(&J, 0, cnt, &bad);
    if (rows == 4) done = dpk_union_rows_avx2(&J, 0, cnt, &bad);
    return bad | union_rows_scalar(&J, done, cnt, scratch);
}

/* Centres of n values (union_centres_rows), rows of at most ``lanes`` values. */
int64_t dpk_union_centres_lanes(int64_t lanes, const double *x, int64_t n, const double *lo,
                                const double *hi, int64_t P, double grid, double *cf) {
    int64_t status = 0, done = 0;
    const int64_t rows = union_rows_for(lanes);
    if (rows == 8) done = dpk_union_centres_avx512(x, n, lo, hi, P, grid, cf, &status);
    if (rows == 4) done = dpk_union_centres_avx2(x, n, lo, hi, P, grid, cf, &status);
    return union_centres_rows(x, done, n, lo, hi, P, grid, cf, status);
}

int64_t dpk_union_centres(const double *x, int64_t n, const double *lo, const double *hi,
                          int64_t P, double grid, double *cf) {
    return dpk_union_centres_lanes(8, x, n, lo, hi, P, grid, cf);
}

/* The chunk with the widest rows this CPU has (the same bits as the scalar rows). */
int64_t dpk_union_release(int64_t cnt, int64_t P, const double *cf_arr, const uint64_t *w,
                          const double *qz, const double *pieces, const int64_t *t_p,
                          const double *lo_r, int64_t Mi, double inv_m, const uint64_t *cum_u,
                          int64_t guided, int64_t gshift, uint64_t gmask, const int64_t *g,
                          const uint64_t *gthr, const uint64_t *B, int64_t nB,
                          double half_grid, double *scratch, double *out) {
    return union_release(8, cnt, P, cf_arr, w, qz, pieces, t_p, lo_r, Mi, inv_m, cum_u, guided,
                         gshift, gmask, g, gthr, B, nB, half_grid, scratch, out);
}

/* The same chunk with vector rows of at most ``lanes`` values (1: scalar only; tests
 * compare every width bit for bit). */
int64_t dpk_union_release_lanes(int64_t lanes, int64_t cnt, int64_t P, const double *cf_arr,
                                const uint64_t *w, const double *qz, const double *pieces,
                                const int64_t *t_p, const double *lo_r, int64_t Mi,
                                double inv_m, const uint64_t *cum_u, int64_t guided,
                                int64_t gshift, uint64_t gmask, const int64_t *g,
                                const uint64_t *gthr, const uint64_t *B, int64_t nB,
                                double half_grid, double *scratch, double *out) {
    return union_release(lanes, cnt, P, cf_arr, w, qz, pieces, t_p, lo_r, Mi, inv_m, cum_u,
                         guided, gshift, gmask, g, gthr, B, nB, half_grid, scratch, out);
}

/* The same chunk with the scalar rows only (the DPNOISE_SIMD=0 choice). */
int64_t dpk_union_release_scalar(int64_t cnt, int64_t P, const double *cf_arr,
                                 const uint64_t *w, const double *qz, const double *pieces,
                                 const int64_t *t_p, const double *lo_r, int64_t Mi,
                                 double inv_m, const uint64_t *cum_u, int64_t guided,
                                 int64_t gshift, uint64_t gmask, const int64_t *g,
                                 const uint64_t *gthr, const uint64_t *B, int64_t nB,
                                 double half_grid, double *scratch, double *out) {
    return union_release(1, cnt, P, cf_arr, w, qz, pieces, t_p, lo_r, Mi, inv_m, cum_u, guided,
                         gshift, gmask, g, gthr, B, nB, half_grid, scratch, out);
}
