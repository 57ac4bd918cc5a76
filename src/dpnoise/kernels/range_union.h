/* One chunk of the union sampler (range_union.c) as the row functions see it: the chunk's
 * centres, words and Q' values, the public tables built at construction, and the output.
 * The scalar rows (range_union.c) and the AVX-512 rows (range_union_avx512.c) read the same
 * job and write the same bits. */
#ifndef DPNOISE_RANGE_UNION_H
#define DPNOISE_RANGE_UNION_H
#include <stdint.h>

typedef struct {
    int64_t cnt, P, nd, Mi;          /* chunk length, pieces, P - 1 decisions, block length */
    double M, inv_m, half_grid;      /* M as a double, the rounded 1/M, L/2 */
    const double *cf, *qz;           /* centres [cnt]; Q' of the decisions [nd][cnt] */
    const uint64_t *wd, *wc, *wr, *wq; /* decision words [nd][cnt]; category, r and i words */
    const double *a, *b, *tot_p, *thr_p, *m_p; /* per piece [P] */
    const int64_t *t_p;              /* per piece [P] */
    const double *lo_r, *p2;         /* 1 - 2^(-t/M) and 2^(-r/M) for t, r < M */
    const uint64_t *cum_u;           /* C_t [M] */
    int64_t guided, gshift, nB;      /* guide table (g, gthr) or binary search over B [nB] */
    uint64_t gmask;
    const int64_t *g;
    const uint64_t *gthr, *B;
    double *out;                     /* [cnt] */
} dpk_union_job;

/* Rows [from, from + 8 n) of the job with AVX-512F/DQ, n = (to - from) / 8 (the caller runs
 * the rest with the scalar rows).  Returns the rows processed; *bad |= 1 as the scalar rows
 * would set it.  Only called when the CPU has both extensions. */
int64_t dpk_union_rows_avx512(const dpk_union_job *job, int64_t from, int64_t to, int64_t *bad);

/* Centres of x[0, 8 n) with AVX-512F/DQ (range_union.c: union_centres_rows); *status is set
 * to 1 (some value outside the pieces or not finite) or 2 (some |x / grid| >= 2^50) as the
 * scalar rows would return it.  Returns the values processed. */
int64_t dpk_union_centres_avx512(const double *x, int64_t n, const double *lo, const double *hi,
                                 int64_t P, double grid, double *cf, int64_t *status);

/* dpk_union_qz (range_union.c) on words [0, 8 n) with AVX-512F/DQ: the same qz and the same
 * extension positions, in increasing order, counted in *ne.  Returns the words processed. */
int64_t dpk_union_qz_avx512(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                            int64_t *ne);

/* The same three with AVX2, four values per vector (range_union_avx2.c). */
int64_t dpk_union_rows_avx2(const dpk_union_job *job, int64_t from, int64_t to, int64_t *bad);
int64_t dpk_union_qz_avx2(const uint64_t *wd, int64_t n, double *qz, int64_t *ext,
                          int64_t *ne);
int64_t dpk_union_centres_avx2(const double *x, int64_t n, const double *lo, const double *hi,
                               int64_t P, double grid, double *cf, int64_t *status);
#endif
