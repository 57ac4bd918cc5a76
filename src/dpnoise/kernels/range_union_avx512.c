/* The union sampler's rows (range_union.c) eight values at a time with AVX-512F/DQ, bit for
 * bit the scalar rows: every lane runs, operation for operation, what the scalar code runs
 * on one value.  Only IEEE-exact operations are used (add, sub, mul, div -- correctly
 * rounded, never fused: no FMA intrinsic, and the build has -ffp-contract=off --, the same
 * truncating double -> int64 and rounding int64 -> double conversions as the scalar casts
 * (cvttpd2qq / cvtqq2pd: also the same "integer indefinite" result out of range), ordered
 * comparisons with the scalar operators' NaN behaviour (_CMP_LT_OS, _CMP_LE_OS,
 * _CMP_GE_OS: false on NaN), bit operations on the same bit patterns, 64-bit integer
 * arithmetic, and gathers from the same tables at the same indices).  Selections are
 * blends on comparison masks, as the scalar code's masks (no jump on a value).
 *
 * Differences in form, not in result: the far-piece chain is decided while its parameters
 * are computed (decision k from the last to the first, the slot kept when decision k stops:
 * the smallest stopping k, as the scalar code's first stop); a far piece's tables are read
 * as a blend of the entries k and k + 1 (f is one of them); trailing zeros of a word come
 * from the exponent of its lowest set bit converted to a double (exact: a power of two);
 * the 64x64 -> high 64 product from four 32x32 -> 64 products; the non-guided block table
 * is searched with a fixed number of halving steps (log2 nB + 1, the same count #{B <= v}).
 */
#include "range_union.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define V512 __attribute__((target("avx512f,avx512dq")))
#define SI static inline V512
typedef __m512d vd;
typedef __m512i vi;
typedef __mmask8 vm;

SI vd d1(double x) { return _mm512_set1_pd(x); }
SI vi i1(int64_t x) { return _mm512_set1_epi64(x); }
SI vd sel(vm c, vd a, vd b) { return _mm512_mask_blend_pd(c, b, a); } /* c ? a : b */
SI vi isel(vm c, vi a, vi b) { return _mm512_mask_blend_epi64(c, b, a); }
SI vm lt(vd x, vd y) { return _mm512_cmp_pd_mask(x, y, _CMP_LT_OS); }
SI vm le(vd x, vd y) { return _mm512_cmp_pd_mask(x, y, _CMP_LE_OS); }
SI vm ge(vd x, vd y) { return _mm512_cmp_pd_mask(x, y, _CMP_GE_OS); }
SI vd add(vd x, vd y) { return _mm512_add_pd(x, y); }
SI vd sub(vd x, vd y) { return _mm512_sub_pd(x, y); }
SI vd mul(vd x, vd y) { return _mm512_mul_pd(x, y); }
SI vd dv(vd x, vd y) { return _mm512_div_pd(x, y); }
SI vi to_i(vd x) { return _mm512_cvttpd_epi64(x); }     /* (int64_t)x */
SI vd to_d(vi x) { return _mm512_cvtepi64_pd(x); }      /* (double)x */
SI vd gat(vi idx, const double *t) { return _mm512_i64gather_pd(idx, t, 8); }
SI vi gati(vi idx, const void *t) { return _mm512_i64gather_epi64(idx, t, 8); }
/* t[idx] for a per-piece table: a permutation of the table in one register for P <= 8 */
SI vd ptab(const dpk_union_job *J, vi idx, const double *t) {
    if (J->P <= 8) return _mm512_permutexvar_pd(idx, _mm512_maskz_loadu_pd((vm)((1u << J->P) - 1), t));
    return gat(idx, t);
}
SI vi ptabi(const dpk_union_job *J, vi idx, const int64_t *t) {
    if (J->P <= 8)
        return _mm512_permutexvar_epi64(idx, _mm512_maskz_loadu_epi64((vm)((1u << J->P) - 1), t));
    return gati(idx, t);
}
SI vd one_if(vm c) { return _mm512_maskz_mov_pd(c, d1(1.0)); } /* (double)c */

/* The scalar helpers of range_union.c, lane by lane. */
SI vd floor_small(vd y) { return to_d(to_i(y)); }
SI vd floor_nonneg(vd y) {
    vm c = lt(y, d1(0x1p62));
    return sel(c, floor_small(sel(c, y, d1(0.0))), y);
}
SI vd rint_nonneg(vd y) {
    return sel(lt(y, d1(0x1p52)), sub(add(y, d1(0x1p52)), d1(0x1p52)), y);
}
SI vd pow2_neg(vi k) {
    return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_sub_epi64(i1(1023), k), 52));
}
SI vd frexp_pos(vd x, vi *e) {
    vi bits = _mm512_castpd_si512(x);
    *e = _mm512_sub_epi64(_mm512_and_si512(_mm512_srli_epi64(bits, 52), i1(0x7FF)), i1(1022));
    bits = _mm512_or_si512(_mm512_and_si512(bits, i1((int64_t)0x800FFFFFFFFFFFFFULL)),
                           i1(0x3FE0000000000000LL));
    return _mm512_castsi512_pd(bits);
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
    vi bits = _mm512_or_si512(_mm512_srli_epi64(w, 12), i1(0x3FF0000000000000LL));
    return sub(_mm512_castsi512_pd(bits), d1(1.0));
}
/* (m, t, low, high) of one side, as side() in range_union.c */
SI void side(vd n, vd M, vd inv_m, const double *lo_r_tab, vd *m, vd *t, vd *low, vd *high) {
    vd tt;
    vd mm = divmod_m(n, M, inv_m, &tt, 0);
    tt = sel(lt(d1(0.0), tt), tt, d1(0.0));
    vm c = lt(mm, d1(1023.0));
    vd e = sel(c, pow2_neg(to_i(sel(c, mm, d1(0.0)))), d1(0.0));
    vd lo_r = gat(to_i(tt), lo_r_tab);
    *m = mm;
    *t = tt;
    *low = mul(lo_r, sub(d1(2.0), e));
    *high = mul(sub(d1(1.0), mul(d1(2.0), lo_r)), sub(d1(1.0), e));
}
/* floor(a b / 2^64) for unsigned 64-bit lanes, from four exact 32 x 32 -> 64 products */
SI vi mulhi64(vi a, vi b) {
    vi ah = _mm512_srli_epi64(a, 32), bh = _mm512_srli_epi64(b, 32);
    vi ll = _mm512_mul_epu32(a, b), lh = _mm512_mul_epu32(a, bh);
    vi hl = _mm512_mul_epu32(ah, b), hh = _mm512_mul_epu32(ah, bh);
    vi cross = _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(ll, 32),
                                                 _mm512_and_si512(hl, i1(0xFFFFFFFFLL))), lh);
    return _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(hl, 32)),
                            _mm512_srli_epi64(cross, 32));
}
/* (double) trailing zeros of nonzero lanes: the exponent of the lowest set bit */
SI vd ctz_d(vi x) {
    vi low = _mm512_and_si512(x, _mm512_sub_epi64(_mm512_setzero_si512(), x));
    vi ex = _mm512_srli_epi64(_mm512_castpd_si512(_mm512_cvtepu64_pd(low)), 52);
    return to_d(_mm512_sub_epi64(ex, i1(1023)));
}
/* #{B_i <= v} (unsigned) for the sorted B[nB]: the guide table, or halving steps */
SI vi block_entry(const dpk_union_job *J, vi v) {
    if (J->guided) {
        vi bucket = _mm512_srlv_epi64(v, i1(J->gshift));
        vi thr = gati(bucket, J->gthr);
        vm up = _mm512_cmp_epu64_mask(_mm512_and_si512(v, i1((int64_t)J->gmask)), thr,
                                      _MM_CMPINT_NLT);
        vi g = gati(bucket, J->g);
        return _mm512_mask_add_epi64(g, up, g, i1(1));
    }
    vi pos = _mm512_setzero_si512();
    int64_t step = 1;
    while (step * 2 <= J->nB) step *= 2;
    for (; step >= 1 && J->nB > 0; step /= 2) {
        vi idx = _mm512_add_epi64(pos, i1(step - 1));
        vm valid = _mm512_cmp_epi64_mask(idx, i1(J->nB), _MM_CMPINT_LT);
        vi bv = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), valid, idx, J->B, 8);
        vm take = valid & _mm512_cmp_epu64_mask(bv, v, _MM_CMPINT_LE);
        pos = _mm512_mask_add_epi64(pos, take, pos, i1(step));
    }
    return pos;
}

/* The parameters and the chain of 8 values (steps of pass 1 of the scalar rows). */
typedef struct {
    vi q, slot;
    vd mL, tL, mR, tR, T1, T2, T3;
} chain8;

SI chain8 params_and_chain(const dpk_union_job *J, vd cf, int64_t e) {
    const vd M = d1(J->M), inv_m = d1(J->inv_m);
    const int64_t nd = J->nd, cnt = J->cnt;
    chain8 c;
    vi q = _mm512_setzero_si512();
    for (int64_t p = 1; p < J->P; p++)
        q = _mm512_mask_add_epi64(q, le(d1(J->a[p]), cf), q, i1(1));
    vd lowL, highL, lowR, highR;
    side(sub(cf, ptab(J, q, J->a)), M, inv_m, J->lo_r, &c.mL, &c.tL, &lowL, &highL);
    side(sub(add(ptab(J, q, J->b), d1(1.0)), cf), M, inv_m, J->lo_r, &c.mR, &c.tR, &lowR, &highR);
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
        vm up = _mm512_cmp_epi64_mask(i1(k), q, _MM_CMPINT_NLT);   /* f = k + (k >= q) */
        vm left = _mm512_cmp_epi64_mask(_mm512_mask_add_epi64(i1(k), up, i1(k), i1(1)), q,
                                        _MM_CMPINT_LT);              /* f < q */
        vd af = sel(up, d1(J->a[k + 1]), d1(J->a[k])), bf = sel(up, d1(J->b[k + 1]), d1(J->b[k]));
        vd totf = sel(up, d1(J->tot_p[k + 1]), d1(J->tot_p[k]));
        vd off = sel(left, sub(sub(cf, d1(1.0)), bf), sub(af, cf));
        vd r0;
        vd A = divmod_m(off, M, inv_m, &r0, 1);
        vd w = mul(totf, gat(to_i(r0), J->p2));
        vd rho = dv(w, R);
        vd s = pow2_neg(to_i(sel(lt(A, d1(1022.0)), A, d1(1022.0))));
        vd z = mul(rho, s);
        vm neg = le(z, d1(1.0));
        vi ee;
        vd mm = frexp_pos(dv(sel(neg, rho, d1(1.0)), add(d1(1.0), z)), &ee);
        vd cn = sub(sel(neg, A, d1(0.0)), to_d(ee));
        vd cx = mul(rint_nonneg(mul(mm, d1(0x1p52))), d1(0x1p-52));
        vd qz = _mm512_loadu_pd(J->qz + k * cnt + e);
        vd ud = unit52(_mm512_loadu_si512((const void *)(J->wd + k * cnt + e)));
        vm stop = (vm)((ge(qz, cn) & lt(ud, cx)) ^ (vm)~neg);
        slot = isel(stop, i1(k), slot);
        R = add(R, mul(w, s));
    }
    c.q = q;
    c.slot = slot;
    return c;
}

/* Steps 2-4 of 8 values (pass 2 of the scalar rows); returns the lanes that are bad. */
SI vm draw8(const dpk_union_job *J, vd cf, const chain8 *c, int64_t e) {
    const vi q = c->q, slot = c->slot, last = i1(J->P - 1);
    vm own = _mm512_cmp_epi64_mask(slot, i1(J->nd), _MM_CMPINT_EQ);
    vi f = _mm512_mask_add_epi64(slot, _mm512_cmp_epi64_mask(slot, q, _MM_CMPINT_NLT), slot,
                                 i1(1));
    f = isel(_mm512_cmp_epi64_mask(f, last, _MM_CMPINT_NLE), last, f);
    /* 2. category */
    vd uc = unit52(_mm512_loadu_si512((const void *)(J->wc + e)));
    vi cat = _mm512_setzero_si512();
    cat = _mm512_mask_add_epi64(cat, ge(uc, c->T1), cat, i1(1));
    cat = _mm512_mask_add_epi64(cat, ge(uc, c->T2), cat, i1(1));
    cat = _mm512_mask_add_epi64(cat, ge(uc, c->T3), cat, i1(1));
    vm r_own = _mm512_cmp_epi64_mask(cat, i1(2), _MM_CMPINT_NLT);
    vm r_far = _mm512_cmp_epi64_mask(f, q, _MM_CMPINT_NLE);
    vm right = (vm)((own & r_own) | (~own & r_far));
    vm h_own = _mm512_test_epi64_mask(cat, i1(1));
    vm h_far = ge(uc, ptab(J, f, J->thr_p));
    vm high = (vm)((own & h_own) | (~own & h_far));
    vd m = sel(own, sel(right, c->mR, c->mL), ptab(J, f, J->m_p));
    vi t = isel(own, to_i(sel(right, c->tR, c->tL)), ptabi(J, f, J->t_p));
    vd base = sel(own, add(sub(cf, d1(1.0)), one_if(right)),
                  sel(right, ptab(J, f, J->a), ptab(J, f, J->b)));
    /* 3. r within the category */
    vi ct = gati(t, J->cum_u);
    vi zero = _mm512_setzero_si512();
    vi wr = _mm512_loadu_si512((const void *)(J->wr + e));
    vi lo = isel(high, ct, zero);
    vi Rw = isel(high, _mm512_sub_epi64(zero, ct), ct);
    vi v = _mm512_add_epi64(lo, mulhi64(wr, Rw));
    v = isel(high & _mm512_cmp_epi64_mask(t, zero, _MM_CMPINT_EQ), wr, v);
    vi r = block_entry(J, v);
    /* 4. i = Q mod m_r */
    vi wq = _mm512_loadu_si512((const void *)(J->wq + e));
    vm bad = _mm512_cmp_epi64_mask(wq, zero, _MM_CMPINT_EQ);
    vd Q = ctz_d(_mm512_or_si512(wq, i1(INT64_MIN)));
    vd mr = sub(add(m, d1(1.0)), one_if(high));
    mr = sel(lt(mr, d1(0x1p62)), mr, d1(0x1p62));
    vd i = sub(Q, mul(floor_small(dv(Q, mr)), mr));
    vd kk = add(mul(i, d1(J->M)), to_d(r));
    vd negkk = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(kk), i1(INT64_MIN)));
    vd j = add(base, sel(right, kk, negkk));
    vd half = add(mul(d1(2.0), j), d1(1.0));
    vd mag = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(half),
                                                  i1(INT64_MAX)));
    bad |= (vm)~lt(mag, d1(0x1p53));
    _mm512_storeu_pd(J->out + e, mul(half, d1(J->half_grid)));
    return bad;
}

V512 int64_t dpk_union_rows_avx512(const dpk_union_job *J, int64_t from, int64_t to,
                                   int64_t *bad) {
    vm b = 0;
    int64_t e = from;
    enum { U = 4 }; /* four independent groups in flight: the gathers' and divisions'
                     * latencies overlap (about 1.3x faster than one group at a time) */
    for (; e + 8 * U <= to; e += 8 * U) {
        chain8 c[U];
        for (int u = 0; u < U; u++)
            c[u] = params_and_chain(J, _mm512_loadu_pd(J->cf + e + 8 * u), e + 8 * u);
        for (int u = 0; u < U; u++)
            b |= draw8(J, _mm512_loadu_pd(J->cf + e + 8 * u), &c[u], e + 8 * u);
    }
    for (; e + 8 <= to; e += 8) {
        vd cf = _mm512_loadu_pd(J->cf + e);
        chain8 c = params_and_chain(J, cf, e);
        b |= draw8(J, cf, &c, e);
    }
    *bad |= (b != 0);
    return e - from;
}
V512 int64_t dpk_union_qz_avx512(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                                 int64_t *ne) {
    int64_t i = 0, k = *ne;
    const vi lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (; i + 8 <= n; i += 8) {
        vi low = _mm512_and_si512(_mm512_loadu_si512((const void *)(wd + i)), i1(4095));
        _mm512_storeu_pd(qz + i, ctz_d(_mm512_or_si512(low, i1(4096))));
        vm z = _mm512_cmp_epi64_mask(low, _mm512_setzero_si512(), _MM_CMPINT_EQ);
        _mm512_mask_compressstoreu_epi64(ext + k, z, _mm512_add_epi64(lane, i1(i)));
        k += __builtin_popcount((unsigned)z);
    }
    *ne = k;
    return i;
}

V512 int64_t dpk_union_centres_avx512(const double *x, int64_t n, const double *lo,
                                      const double *hi, int64_t P, double grid, double *cf,
                                      int64_t *status) {
    vm outside = 0, big = 0;
    const vd g = d1(grid);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vd v = _mm512_loadu_pd(x + i);
        vm in = 0;
        for (int64_t p = 0; p < P; p++) in |= (vm)(ge(v, d1(lo[p])) & le(v, d1(hi[p])));
        outside |= (vm)~(in & _mm512_cmp_pd_mask(sub(v, v), d1(0.0), _CMP_EQ_OQ));
        vd q = dv(v, g);
        vd aq = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(q), i1(INT64_MAX)));
        big |= (vm)~lt(aq, d1(0x1p50));
        vd fl = _mm512_roundscale_pd(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        _mm512_storeu_pd(cf + i, add(fl, one_if(le(d1(0.5), sub(q, fl)))));
    }
    *status = outside ? 1 : (big ? 2 : 0);
    return i;
}
#else
int64_t dpk_union_qz_avx512(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                            int64_t *ne) {
    (void)wd, (void)n, (void)qz, (void)ext, (void)ne;
    return 0;
}
int64_t dpk_union_centres_avx512(const double *x, int64_t n, const double *lo, const double *hi,
                                 int64_t P, double grid, double *cf, int64_t *status) {
    (void)x, (void)n, (void)lo, (void)hi, (void)P, (void)grid, (void)cf, (void)status;
    return 0;
}
int64_t dpk_union_rows_avx512(const dpk_union_job *job, int64_t from, int64_t to,
                              int64_t *bad) {
    (void)job, (void)from, (void)to, (void)bad;
    return 0;
}
#endif
