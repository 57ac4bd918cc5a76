/* The union sampler's rows (range_union.c) four values at a time with AVX2, bit for bit the
 * scalar rows, for CPUs without AVX-512: the algorithm of range_union_avx512.c (read its
 * header) with AVX2's instructions.  What AVX2 lacks is built from exact pieces:
 *   - (int64_t)x, the scalar cvttsd2si: x truncated (roundpd toward zero, exact), split as
 *     hi 2^32 + lo with hi = trunc(x / 2^32) and lo = x - hi 2^32 (both exact, |lo| < 2^32),
 *     each converted by the 1.5 2^52 bias (exact below 2^51) and recombined; NaN and
 *     |x| >= 2^63 give INT64_MIN, as cvttsd2si does;
 *   - (double)(int64_t)x for the floor: trunc(x) itself below 2^63, else -2^63;
 *   - (double)k for the small integers converted here (exponents, block entries, trailing
 *     zeros; all below 2^51): the same bias, exact;
 *   - unsigned 64-bit comparisons: signed ones after flipping the top bit;
 *   - trailing zeros: the exponent of the lowest set bit, converted exactly in two halves;
 *   - the per-piece tables for P <= 4: a blend per piece instead of a gather.
 * Masks are lanes of all ones; selections are blends on them (no jump on a value).
 */
#include "range_union.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define VAVX2 __attribute__((target("avx2")))
#define SI static inline VAVX2
typedef __m256d vd;
typedef __m256i vi;
typedef __m256i vm; /* a lane of all ones (true) or zeros */

SI vd d1(double x) { return _mm256_set1_pd(x); }
SI vi i1(int64_t x) { return _mm256_set1_epi64x(x); }
SI vd sel(vm c, vd a, vd b) { return _mm256_blendv_pd(b, a, _mm256_castsi256_pd(c)); }
SI vi isel(vm c, vi a, vi b) { return _mm256_blendv_epi8(b, a, c); }
#define cmpd(x, y, p) _mm256_castpd_si256(_mm256_cmp_pd((x), (y), (p)))
#define lt(x, y) cmpd((x), (y), _CMP_LT_OS)
#define le(x, y) cmpd((x), (y), _CMP_LE_OS)
#define ge(x, y) cmpd((x), (y), _CMP_GE_OS)
SI vd add(vd x, vd y) { return _mm256_add_pd(x, y); }
SI vd sub(vd x, vd y) { return _mm256_sub_pd(x, y); }
SI vd mul(vd x, vd y) { return _mm256_mul_pd(x, y); }
SI vd dv(vd x, vd y) { return _mm256_div_pd(x, y); }
SI vi iadd(vi x, vi y) { return _mm256_add_epi64(x, y); }
SI vi isub(vi x, vi y) { return _mm256_sub_epi64(x, y); }
SI vm ieq(vi x, vi y) { return _mm256_cmpeq_epi64(x, y); }
SI vm igt(vi x, vi y) { return _mm256_cmpgt_epi64(x, y); }          /* signed x > y */
SI vm ugt(vi x, vi y) { /* unsigned x > y */
    return igt(_mm256_xor_si256(x, i1(INT64_MIN)), _mm256_xor_si256(y, i1(INT64_MIN)));
}
SI vm mnot(vm m) { return _mm256_xor_si256(m, i1(-1)); }
SI vd vabs(vd x) {
    return _mm256_castsi256_pd(_mm256_and_si256(_mm256_castpd_si256(x), i1(INT64_MAX)));
}
SI vd trunc_(vd x) { return _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }

/* integers below 2^51 in magnitude: exact conversions through the 1.5 2^52 bias */
SI vi small_i(vd x) {
    return isub(_mm256_castpd_si256(add(x, d1(0x1.8p52))), _mm256_castpd_si256(d1(0x1.8p52)));
}
SI vd small_d(vi k) {
    return sub(_mm256_castsi256_pd(iadd(k, _mm256_castpd_si256(d1(0x1.8p52)))), d1(0x1.8p52));
}
SI vi to_i(vd x) { /* (int64_t)x: cvttsd2si */
    vd t = trunc_(x);
    vd hi = trunc_(mul(t, d1(0x1p-32)));
    vd lo = sub(t, mul(hi, d1(0x1p32)));
    vi r = iadd(_mm256_slli_epi64(small_i(hi), 32), small_i(lo));
    return isel(lt(vabs(x), d1(0x1p63)), r, i1(INT64_MIN));
}
SI vd floor_small(vd y) { return sel(lt(vabs(y), d1(0x1p63)), trunc_(y), d1(-0x1p63)); }
SI vd gat(vi idx, const double *t) { return _mm256_i64gather_pd(t, idx, 8); }
SI vi gati(vi idx, const void *t) { return _mm256_i64gather_epi64((const long long *)t, idx, 8); }
SI vd ptab(const dpk_union_job *J, vi idx, const double *t) {
    if (J->P > 4) return gat(idx, t);
    vd r = d1(t[0]);
    for (int64_t p = 1; p < J->P; p++) r = sel(ieq(idx, i1(p)), d1(t[p]), r);
    return r;
}
SI vi ptabi(const dpk_union_job *J, vi idx, const int64_t *t) {
    if (J->P > 4) return gati(idx, t);
    vi r = i1(t[0]);
    for (int64_t p = 1; p < J->P; p++) r = isel(ieq(idx, i1(p)), i1(t[p]), r);
    return r;
}
SI vd one_if(vm c) { return _mm256_and_pd(_mm256_castsi256_pd(c), d1(1.0)); }
SI vd floor_nonneg(vd y) {
    vm c = lt(y, d1(0x1p62));
    return sel(c, floor_small(sel(c, y, d1(0.0))), y);
}
SI vd rint_nonneg(vd y) {
    return sel(lt(y, d1(0x1p52)), sub(add(y, d1(0x1p52)), d1(0x1p52)), y);
}
SI vd pow2_neg(vi k) { return _mm256_castsi256_pd(_mm256_slli_epi64(isub(i1(1023), k), 52)); }
SI vd frexp_pos(vd x, vi *e) {
    vi bits = _mm256_castpd_si256(x);
    *e = isub(_mm256_and_si256(_mm256_srli_epi64(bits, 52), i1(0x7FF)), i1(1022));
    bits = _mm256_or_si256(_mm256_and_si256(bits, i1((int64_t)0x800FFFFFFFFFFFFFULL)),
                           i1(0x3FE0000000000000LL));
    return _mm256_castsi256_pd(bits);
}
SI vd divmod_m(vd n, vd M, vd inv_m, vd *rem, int finite) {
    vd A = finite ? floor_small(mul(n, inv_m)) : floor_nonneg(mul(n, inv_m));
    vd r = sub(n, mul(A, M));
    vd lo = sel(lt(r, d1(0.0)), d1(1.0), d1(0.0)), hi = sel(le(M, r), d1(1.0), d1(0.0));
    A = add(sub(A, lo), hi);
    *rem = sub(add(r, mul(lo, M)), mul(hi, M));
    return A;
}
SI vd unit52(vi w) {
    vi bits = _mm256_or_si256(_mm256_srli_epi64(w, 12), i1(0x3FF0000000000000LL));
    return sub(_mm256_castsi256_pd(bits), d1(1.0));
}
SI void side(vd n, vd M, vd inv_m, const double *lo_r_tab, vd *m, vd *t, vd *low, vd *high) {
    vd tt;
    vd mm = divmod_m(n, M, inv_m, &tt, 0);
    tt = sel(lt(d1(0.0), tt), tt, d1(0.0));
    vm c = lt(mm, d1(1023.0));
    vd e = sel(c, pow2_neg(to_i(sel(c, mm, d1(0.0)))), d1(0.0));
    vd lo_r = gat(small_i(tt), lo_r_tab);
    *m = mm;
    *t = tt;
    *low = mul(lo_r, sub(d1(2.0), e));
    *high = mul(sub(d1(1.0), mul(d1(2.0), lo_r)), sub(d1(1.0), e));
}
SI vi mulhi64(vi a, vi b) {
    vi ah = _mm256_srli_epi64(a, 32), bh = _mm256_srli_epi64(b, 32);
    vi ll = _mm256_mul_epu32(a, b), lh = _mm256_mul_epu32(a, bh);
    vi hl = _mm256_mul_epu32(ah, b), hh = _mm256_mul_epu32(ah, bh);
    vi cross = iadd(iadd(_mm256_srli_epi64(ll, 32), _mm256_and_si256(hl, i1(0xFFFFFFFFLL))), lh);
    return iadd(iadd(hh, _mm256_srli_epi64(hl, 32)), _mm256_srli_epi64(cross, 32));
}
/* (double) trailing zeros of nonzero lanes: the exponent of the lowest set bit 2^k, whose
 * two 32-bit halves convert exactly (one of them is 0) */
SI vd ctz_d(vi x) {
    vi low = _mm256_and_si256(x, isub(_mm256_setzero_si256(), x));
    vd p = add(small_d(_mm256_and_si256(low, i1(0xFFFFFFFFLL))),
               mul(small_d(_mm256_srli_epi64(low, 32)), d1(0x1p32)));
    return small_d(isub(_mm256_srli_epi64(_mm256_castpd_si256(p), 52), i1(1023)));
}
SI vi block_entry(const dpk_union_job *J, vi v) {
    if (J->guided) {
        vi bucket = _mm256_srlv_epi64(v, i1(J->gshift));
        vm below = ugt(gati(bucket, J->gthr), _mm256_and_si256(v, i1((int64_t)J->gmask)));
        return isub(gati(bucket, J->g), mnot(below)); /* + 1 where (v & mask) >= thr */
    }
    vi pos = _mm256_setzero_si256();
    int64_t step = 1;
    while (step * 2 <= J->nB) step *= 2;
    for (; step >= 1 && J->nB > 0; step /= 2) {
        vi idx = iadd(pos, i1(step - 1));
        vm valid = igt(i1(J->nB), idx);
        vi bv = _mm256_mask_i64gather_epi64(_mm256_setzero_si256(), (const long long *)J->B,
                                            idx, valid, 8);
        vm take = _mm256_and_si256(valid, mnot(ugt(bv, v)));
        pos = iadd(pos, _mm256_and_si256(take, i1(step)));
    }
    return pos;
}

typedef struct {
    vi q, slot;
    vd mL, tL, mR, tR, T1, T2, T3;
} chain4;

SI chain4 params_and_chain(const dpk_union_job *J, vd cf, int64_t e) {
    const vd M = d1(J->M), inv_m = d1(J->inv_m);
    const int64_t nd = J->nd, cnt = J->cnt;
    chain4 c;
    vi q = _mm256_setzero_si256();
    for (int64_t p = 1; p < J->P; p++) q = isub(q, le(d1(J->a[p]), cf));
    vd lowL, highL, lowR, highR;
    side(sub(cf, ptab(J, q, J->a)), M, inv_m, J->lo_r, &c.mL, &c.tL, &lowL, &highL);
    side(sub(add(ptab(J, q, J->b), d1(1.0)), cf), M, inv_m, J->lo_r, &c.mR, &c.tR, &lowR,
         &highR);
    vd c1 = add(lowL, highL);
    vd c2 = add(c1, lowR);
    vd tot = add(c2, highR);
    vd scale = dv(d1(0x1p52), tot);
    c.T1 = mul(rint_nonneg(mul(lowL, scale)), d1(0x1p-52));
    c.T2 = mul(rint_nonneg(mul(c1, scale)), d1(0x1p-52));
    c.T3 = mul(rint_nonneg(mul(c2, scale)), d1(0x1p-52));
    vd R = tot;
    vi slot = i1(nd);
    for (int64_t k = nd - 1; k >= 0; k--) {
        vm up = mnot(igt(q, i1(k)));                          /* f = k + (k >= q) */
        vm left = igt(q, isub(i1(k), up));                    /* f < q */
        vd af = sel(up, d1(J->a[k + 1]), d1(J->a[k])), bf = sel(up, d1(J->b[k + 1]), d1(J->b[k]));
        vd totf = sel(up, d1(J->tot_p[k + 1]), d1(J->tot_p[k]));
        vd off = sel(left, sub(sub(cf, d1(1.0)), bf), sub(af, cf));
        vd r0;
        vd A = divmod_m(off, M, inv_m, &r0, 1);
        vd w = mul(totf, gat(small_i(r0), J->p2));
        vd rho = dv(w, R);
        vd s = pow2_neg(to_i(sel(lt(A, d1(1022.0)), A, d1(1022.0))));
        vd z = mul(rho, s);
        vm neg = le(z, d1(1.0));
        vi ee;
        vd mm = frexp_pos(dv(sel(neg, rho, d1(1.0)), add(d1(1.0), z)), &ee);
        vd cn = sub(sel(neg, A, d1(0.0)), small_d(ee));
        vd cx = mul(rint_nonneg(mul(mm, d1(0x1p52))), d1(0x1p-52));
        vd qz = _mm256_loadu_pd(J->qz + k * cnt + e);
        vd ud = unit52(_mm256_loadu_si256((const void *)(J->wd + k * cnt + e)));
        vm stop = _mm256_xor_si256(_mm256_and_si256(ge(qz, cn), lt(ud, cx)), mnot(neg));
        slot = isel(stop, i1(k), slot);
        R = add(R, mul(w, s));
    }
    c.q = q;
    c.slot = slot;
    return c;
}

SI vm draw4(const dpk_union_job *J, vd cf, const chain4 *c, int64_t e) {
    const vi q = c->q, slot = c->slot, last = i1(J->P - 1), zero = _mm256_setzero_si256();
    vm own = ieq(slot, i1(J->nd));
    vi f = isub(slot, mnot(igt(q, slot)));
    f = isel(igt(f, last), last, f);
    vd uc = unit52(_mm256_loadu_si256((const void *)(J->wc + e)));
    vi cat = isub(isub(isub(zero, ge(uc, c->T1)), ge(uc, c->T2)), ge(uc, c->T3));
    vm right = _mm256_or_si256(_mm256_and_si256(own, igt(cat, i1(1))),
                               _mm256_andnot_si256(own, igt(f, q)));
    vm h_own = ieq(_mm256_and_si256(cat, i1(1)), i1(1));
    vm high = _mm256_or_si256(_mm256_and_si256(own, h_own),
                              _mm256_andnot_si256(own, ge(uc, ptab(J, f, J->thr_p))));
    vd m = sel(own, sel(right, c->mR, c->mL), ptab(J, f, J->m_p));
    vi t = isel(own, small_i(sel(right, c->tR, c->tL)), ptabi(J, f, J->t_p));
    vd base = sel(own, add(sub(cf, d1(1.0)), one_if(right)),
                  sel(right, ptab(J, f, J->a), ptab(J, f, J->b)));
    vi ct = gati(t, J->cum_u);
    vi wr = _mm256_loadu_si256((const void *)(J->wr + e));
    vi lo = isel(high, ct, zero);
    vi Rw = isel(high, isub(zero, ct), ct);
    vi v = iadd(lo, mulhi64(wr, Rw));
    v = isel(_mm256_and_si256(high, ieq(t, zero)), wr, v);
    vi r = block_entry(J, v);
    vi wq = _mm256_loadu_si256((const void *)(J->wq + e));
    vm bad = ieq(wq, zero);
    vd Q = ctz_d(_mm256_or_si256(wq, i1(INT64_MIN)));
    vd mr = sub(add(m, d1(1.0)), one_if(high));
    mr = sel(lt(mr, d1(0x1p62)), mr, d1(0x1p62));
    vd i = sub(Q, mul(floor_small(dv(Q, mr)), mr));
    vd kk = add(mul(i, d1(J->M)), small_d(r));
    vd negkk = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(kk), i1(INT64_MIN)));
    vd j = add(base, sel(right, kk, negkk));
    vd half = add(mul(d1(2.0), j), d1(1.0));
    bad = _mm256_or_si256(bad, mnot(lt(vabs(half), d1(0x1p53))));
    _mm256_storeu_pd(J->out + e, mul(half, d1(J->half_grid)));
    return bad;
}

VAVX2 int64_t dpk_union_rows_avx2(const dpk_union_job *J, int64_t from, int64_t to,
                                  int64_t *bad) {
    vm b = _mm256_setzero_si256();
    int64_t e = from;
    enum { U = 4 }; /* independent groups in flight, as in the AVX-512 rows */
    for (; e + 4 * U <= to; e += 4 * U) {
        chain4 c[U];
        for (int u = 0; u < U; u++)
            c[u] = params_and_chain(J, _mm256_loadu_pd(J->cf + e + 4 * u), e + 4 * u);
        for (int u = 0; u < U; u++)
            b = _mm256_or_si256(b, draw4(J, _mm256_loadu_pd(J->cf + e + 4 * u), &c[u], e + 4 * u));
    }
    for (; e + 4 <= to; e += 4) {
        vd cf = _mm256_loadu_pd(J->cf + e);
        chain4 c = params_and_chain(J, cf, e);
        b = _mm256_or_si256(b, draw4(J, cf, &c, e));
    }
    *bad |= !_mm256_testz_si256(b, b);
    return e - from;
}

VAVX2 int64_t dpk_union_qz_avx2(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                                int64_t *ne) {
    int64_t i = 0, k = *ne;
    for (; i + 4 <= n; i += 4) {
        vi low = _mm256_and_si256(_mm256_loadu_si256((const void *)(wd + i)), i1(4095));
        _mm256_storeu_pd(qz + i, ctz_d(_mm256_or_si256(low, i1(4096))));
        int z = _mm256_movemask_pd(_mm256_castsi256_pd(ieq(low, _mm256_setzero_si256())));
        for (int l = 0; l < 4; l++) { /* p = 2^-12 per word: the random words' event */
            ext[k] = i + l;
            k += (z >> l) & 1;
        }
    }
    *ne = k;
    return i;
}

VAVX2 int64_t dpk_union_centres_avx2(const double *x, int64_t n, const double *lo,
                                     const double *hi, int64_t P, double grid, double *cf,
                                     int64_t *status) {
    vm outside = _mm256_setzero_si256(), big = _mm256_setzero_si256();
    const vd g = d1(grid);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vd v = _mm256_loadu_pd(x + i);
        vm in = _mm256_setzero_si256();
        for (int64_t p = 0; p < P; p++)
            in = _mm256_or_si256(in, _mm256_and_si256(ge(v, d1(lo[p])), le(v, d1(hi[p]))));
        vm fin = cmpd(sub(v, v), d1(0.0), _CMP_EQ_OQ);
        outside = _mm256_or_si256(outside, mnot(_mm256_and_si256(in, fin)));
        vd q = dv(v, g);
        big = _mm256_or_si256(big, mnot(lt(vabs(q), d1(0x1p50))));
        vd fl = _mm256_round_pd(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        _mm256_storeu_pd(cf + i, add(fl, one_if(le(d1(0.5), sub(q, fl)))));
    }
    *status = !_mm256_testz_si256(outside, outside) ? 1 : (!_mm256_testz_si256(big, big) ? 2 : 0);
    return i;
}
#else
int64_t dpk_union_rows_avx2(const dpk_union_job *job, int64_t from, int64_t to, int64_t *bad) {
    (void)job, (void)from, (void)to, (void)bad;
    return 0;
}
int64_t dpk_union_qz_avx2(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                          int64_t *ne) {
    (void)wd, (void)n, (void)qz, (void)ext, (void)ne;
    return 0;
}
int64_t dpk_union_centres_avx2(const double *x, int64_t n, const double *lo, const double *hi,
                               int64_t P, double grid, double *cf, int64_t *status) {
    (void)x, (void)n, (void)lo, (void)hi, (void)P, (void)grid, (void)cf, (void)status;
    return 0;
}
#endif
