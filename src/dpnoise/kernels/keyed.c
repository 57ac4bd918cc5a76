/* Keystream and kernel in one call: a whole chunk of a split release without the GIL.
 *
 * dpk_keyed_run draws a chunk's ChaCha20 keystream itself -- through the caller's
 * EVP_EncryptUpdate (the system libcrypto, passed as a function pointer with its cipher
 * context, so this library needs no OpenSSL headers and links nothing) -- and runs a
 * sampler's compiled chunk body on it, chunk after chunk of `sub` values, exactly as the
 * Python loop it replaces: per chunk of c values, per_value * c words into `words`, then
 * the kernel on those words.  One ctypes call (one GIL release) per call instead of two per
 * 2^14 values, and the same words in the same order, so the same outputs.
 *
 * A kernel here has one shape, `int64_t kernel(words, start, c, args)`: it computes values
 * [start, start + c) of the call from words[0 .. per_value * c) and returns non-zero when the
 * numpy reference must recompute them (a sampler's probability-2^-63 event that draws extra
 * words).  dpk_keyed_run then stops *before* the next chunk and returns `start`: its words
 * are still in `words`, the cipher stands right after them, and the caller runs the
 * reference on them and goes on.  The adapters below unpack `args` (int64 slots; doubles
 * stored bit for bit) and call the samplers' own kernels, so each kernel stays in its file
 * (declared weak: an adapter whose kernel is missing from the build sends every chunk to
 * the reference instead of failing to load the library).
 */
#include <stdint.h>
#include <string.h>

typedef int (*dpk_cipher_update)(void *ctx, unsigned char *out, int *outl,
                                 const unsigned char *in, int inl);
typedef int64_t (*dpk_chunk_kernel)(const uint64_t *words, int64_t start, int64_t c,
                                    const int64_t *args);

/* `bytes` keystream bytes into out, at most `block` bytes per cipher call (the plaintext is
 * `zeros`, block bytes of 0): 0 on success, -1 if the cipher refused or wrote short. */
static int keystream(dpk_cipher_update update, void *ctx, const unsigned char *zeros,
                     int64_t block, unsigned char *out, int64_t bytes) {
    while (bytes > 0) {
        int m = (int)(bytes < block ? bytes : block), got = 0;
        if (update(ctx, out, &got, zeros, m) != 1 || got != m) return -1;
        out += m;
        bytes -= m;
    }
    return 0;
}

/* `bytes` keystream bytes into out in one foreign call (GIL released once, whatever the
 * size): 0, or -1 if the cipher failed.  The keystream.py side of a large fill. */
int64_t dpk_keystream(void *update, void *ctx, const void *zeros, int64_t block, void *out,
                      int64_t bytes) {
    return keystream((dpk_cipher_update)update, ctx, (const unsigned char *)zeros, block,
                     (unsigned char *)out, bytes);
}

/* Values [start, n) in chunks of `sub` (start a multiple of sub): returns n when all are
 * done, the start of the chunk the reference must redo (its words in `words`), or -1 when
 * the cipher failed. */
int64_t dpk_keyed_run(void *update, void *ctx, const void *zeros, int64_t block,
                      uint64_t *words, int64_t start, int64_t n, int64_t sub,
                      int64_t per_value, void *kernel, const int64_t *args) {
    dpk_chunk_kernel kern = (dpk_chunk_kernel)kernel;
    for (int64_t s = start; s < n; s += sub) {
        int64_t c = n - s < sub ? n - s : sub;
        if (keystream((dpk_cipher_update)update, ctx, (const unsigned char *)zeros, block,
                      (unsigned char *)words, 8 * per_value * c))
            return -1;
        if (kern(words, s, c, args)) return s;
    }
    return n;
}

int64_t dpk_keyed_block(const uint64_t *words, int64_t start, int64_t c, const int64_t *a);
__attribute__((weak)) int64_t dpk_block_keyed(const unsigned char *key, const unsigned char *iv,
                                              int64_t start, int64_t end, int64_t sub,
                                              const int64_t *args, int64_t *stopped);

typedef void *(*dpk_ctx_new)(void);
typedef void (*dpk_ctx_free)(void *ctx);
typedef int (*dpk_cipher_init)(void *ctx, const void *cipher, void *engine,
                               const unsigned char *key, const unsigned char *iv);

/* libcrypto's entry points for a span (dpk_keyed_span): EVP_CIPHER_CTX_new, _free,
 * EVP_EncryptInit_ex, EVP_EncryptUpdate and the cipher EVP_chacha20(), as addresses. */
typedef struct {
    void *ctx_new, *ctx_free, *init, *update, *cipher;
} dpk_evp;

/* Values [start, end) of a split release's chunk on a cipher context of its own: ChaCha20
 * keyed with `key` and the 16-byte `iv` -- block counter (the span's first keystream block
 * within the chunk's stream, little-endian), then the chunk's nonce -- so a span that
 * starts inside a chunk reads exactly the keystream bytes the whole chunk's loop would
 * read there (sub-chunks of `sub` values from `start`, each per_value * c words, as
 * dpk_keyed_run).  The context is freed (its key schedule with it) before returning.
 * The lattice Laplace's block kernel (dpk_keyed_block) first goes as far as its fused loop
 * takes it (block_keyed.c: the same keystream, computed in the kernel's own loop on
 * AVX-512), libcrypto's loop from there.  Returns end, the start of the sub-chunk the
 * caller's reference must redo (the span's later values are then not computed), or -1
 * when libcrypto failed. */
int64_t dpk_keyed_span(const dpk_evp *evp, const unsigned char *key, const unsigned char *iv,
                       const void *zeros, int64_t block, uint64_t *words, int64_t start,
                       int64_t end, int64_t sub, int64_t per_value, void *kernel,
                       const int64_t *args) {
    unsigned char at[16];  /* the IV of the first value libcrypto's loop computes */
    memcpy(at, iv, sizeof at);
    if (kernel == (void *)dpk_keyed_block && per_value == 2 && dpk_block_keyed) {
        int64_t stopped = 0;  /* the lattice Laplace: keystream and kernel fused, AVX-512 */
        int64_t from = dpk_block_keyed(key, iv, start, end, sub, args, &stopped);
        if (stopped || from >= end) return from;
        uint32_t ctr = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 |
                       (uint32_t)at[3] << 24;
        ctr += (uint32_t)((from - start) / 4);  /* 2 words a value, 8 words a block */
        for (int i = 0; i < 4; i++) at[i] = (unsigned char)(ctr >> (8 * i));
        start = from;
    }
    void *ctx = ((dpk_ctx_new)evp->ctx_new)();
    if (!ctx) return -1;
    int64_t got = -1;
    if (((dpk_cipher_init)evp->init)(ctx, evp->cipher, 0, key, at) == 1)
        got = dpk_keyed_run(evp->update, ctx, zeros, block, words, start, end, sub, per_value,
                            kernel, args);
    ((dpk_ctx_free)evp->ctx_free)(ctx);
    return got;
}

static double as_double(int64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* ---- adapters: the samplers' kernels (block.c, integer_block.c, alias_one_word.c) ---- */

__attribute__((weak)) int64_t dpk_block_release(const uint64_t *words, int64_t n, int64_t chunk,
                                                const uint64_t *packed, int64_t bits,
                                                int64_t two_m, const double *centre,
                                                double inv_grid, double half_grid,
                                                double *out_f, int64_t *out_i, int64_t isa,
                                                int64_t stream);

/* args: packed, bits, two_m, centre (0: none), inv_grid, half_grid (double bits), out
 * (float64 with a centre, else int64), isa, stream.  Nonzero: Q = 63 somewhere in the chunk
 * (the caller's reference recomputes it from the same words). */
int64_t dpk_keyed_block(const uint64_t *words, int64_t start, int64_t c, const int64_t *a) {
    if (!dpk_block_release) return 1;  /* kernel not in this build: the reference */
    const uint64_t *packed = (const uint64_t *)(intptr_t)a[0];
    const double *centre = (const double *)(intptr_t)a[3];
    if (centre)
        return dpk_block_release(words, c, c, packed, a[1], a[2], centre + start,
                                 as_double(a[4]), as_double(a[5]),
                                 (double *)(intptr_t)a[6] + start, 0, a[7], a[8]);
    return dpk_block_release(words, c, c, packed, a[1], a[2], 0, 1.0, 0.0, 0,
                             (int64_t *)(intptr_t)a[6] + start, a[7], a[8]);
}

__attribute__((weak)) int64_t dpk_intblock_sample(const uint64_t *words, int64_t c, const uint64_t *thr2,
                            const int64_t *mag2, const int64_t *qm, int64_t col_shift,
                            uint64_t thr_mask, int64_t *out);

/* A count release's last step on c values: out = add + out (add: the true counts, or null),
 * then max(out, lo) if mode & 1 and min(out, hi) if mode & 2 -- the numpy reference's add,
 * maximum and minimum, in that order (no overflow: |counts| < 2^53 and the noise is far
 * below 2^62).  One pass; 8 or 4 values a step where the CPU has AVX-512 or AVX2 (chosen
 * at run time, the same integers: comparisons and selects only). */
#define DPK_ADD_CLAMP_BODY(V)                                                              \
    for (; i + (int64_t)(sizeof(V) / 8) <= c; i += (int64_t)(sizeof(V) / 8)) {             \
        V o, d = {0};                                                                      \
        __builtin_memcpy(&o, out + i, sizeof o);                                           \
        if (add) __builtin_memcpy(&d, add + i, sizeof d);                                  \
        o += d;                                                                            \
        V m = (V)(o < lov) & ml;                                                           \
        o = (m & lov) | (~m & o);                                                          \
        m = (V)(o > hiv) & mh;                                                             \
        o = (m & hiv) | (~m & o);                                                          \
        __builtin_memcpy(out + i, &o, sizeof o);                                           \
    }

static int64_t add_clamp_tail(int64_t *out, const int64_t *add, int64_t i, int64_t c,
                              int64_t lo, int64_t hi, int64_t mode) {
    for (; i < c; i++) {  /* selects by masks, as the vector loops: no branch on a value */
        int64_t v = out[i] + (add ? add[i] : 0);
        int64_t m = -(int64_t)((mode & 1) & (v < lo));
        v = (lo & m) | (v & ~m);
        m = -(int64_t)(((mode >> 1) & 1) & (v > hi));
        out[i] = (hi & m) | (v & ~m);
    }
    return i;
}

#if defined(__x86_64__) && defined(__GNUC__)
typedef int64_t dpk_v8i __attribute__((vector_size(64)));
typedef int64_t dpk_v4i __attribute__((vector_size(32)));

__attribute__((target("avx512f"))) static void add_clamp_512(int64_t *out, const int64_t *add,
                                                              int64_t c, int64_t lo, int64_t hi,
                                                              int64_t mode) {
    int64_t i = 0;
    const dpk_v8i lov = lo - (dpk_v8i){0}, hiv = hi - (dpk_v8i){0};
    const dpk_v8i ml = -(mode & 1) - (dpk_v8i){0}, mh = -((mode >> 1) & 1) - (dpk_v8i){0};
    DPK_ADD_CLAMP_BODY(dpk_v8i)
    add_clamp_tail(out, add, i, c, lo, hi, mode);
}

__attribute__((target("avx2"))) static void add_clamp_256(int64_t *out, const int64_t *add,
                                                           int64_t c, int64_t lo, int64_t hi,
                                                           int64_t mode) {
    int64_t i = 0;
    const dpk_v4i lov = lo - (dpk_v4i){0}, hiv = hi - (dpk_v4i){0};
    const dpk_v4i ml = -(mode & 1) - (dpk_v4i){0}, mh = -((mode >> 1) & 1) - (dpk_v4i){0};
    DPK_ADD_CLAMP_BODY(dpk_v4i)
    add_clamp_tail(out, add, i, c, lo, hi, mode);
}

static int add_clamp_isa = -1;  /* 2 AVX-512F, 1 AVX2, 0 plain C; found on first use */
#endif

/* The widest add_clamp this CPU runs (2 AVX-512F, 1 AVX2, 0 plain C), capped at `cap` from
 * now on when cap >= 0 (the tests run every width; they give the same integers). */
int64_t dpk_add_clamp_isa(int64_t cap) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    int have = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    if (cap >= 0 && cap < have) have = (int)cap;
    __atomic_store_n(&add_clamp_isa, have, __ATOMIC_RELAXED);
    return have;
#else
    (void)cap;
    return 0;
#endif
}

static void add_clamp(int64_t *out, int64_t start, int64_t c, const int64_t *a) {
    const int64_t *add = (const int64_t *)(intptr_t)a[0];
    int64_t lo = a[1], hi = a[2], mode = a[3];
    if (!add && !mode) return;
    out += start;
    if (add) add += start;
#if defined(__x86_64__) && defined(__GNUC__)
    int isa = __atomic_load_n(&add_clamp_isa, __ATOMIC_RELAXED);
    if (isa < 0) {
        __builtin_cpu_init();
        isa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&add_clamp_isa, isa, __ATOMIC_RELAXED);
    }
    if (isa == 2) {
        add_clamp_512(out, add, c, lo, hi, mode);
        return;
    }
    if (isa == 1) {
        add_clamp_256(out, add, c, lo, hi, mode);
        return;
    }
#endif
    add_clamp_tail(out, add, 0, c, lo, hi, mode);
}

/* args: thr2, mag2, qm, col_shift, thr_mask, out (int64), then add, lo, hi, mode. */
int64_t dpk_keyed_intblock(const uint64_t *words, int64_t start, int64_t c, const int64_t *a) {
    if (!dpk_intblock_sample) return 1;
    int64_t *out = (int64_t *)(intptr_t)a[5];
    if (dpk_intblock_sample(words, c, (const uint64_t *)(intptr_t)a[0],
                            (const int64_t *)(intptr_t)a[1], (const int64_t *)(intptr_t)a[2],
                            a[3], (uint64_t)a[4], out + start))
        return 1;
    add_clamp(out, start, c, a + 6);
    return 0;
}

__attribute__((weak)) void dpk_alias_one_word(const uint64_t *words, int64_t c, const uint64_t *thr2,
                        const int64_t *out2, int64_t col_shift, uint64_t thr_mask,
                        int64_t *out);

/* args: thr2, out2, col_shift, thr_mask, out (int64), then add, lo, hi, mode. */
int64_t dpk_keyed_alias(const uint64_t *words, int64_t start, int64_t c, const int64_t *a) {
    if (!dpk_alias_one_word) return 1;
    int64_t *out = (int64_t *)(intptr_t)a[4];
    dpk_alias_one_word(words, c, (const uint64_t *)(intptr_t)a[0],
                       (const int64_t *)(intptr_t)a[1], a[2], (uint64_t)a[3], out + start);
    add_clamp(out, start, c, a + 5);
    return 0;
}

/* args: out (uint64), per_value, stop.  Copies each chunk's words to out + per_value * start
 * and asks for the reference at the chunk starting at `stop` (-1: never): the words the
 * driver draws, and its stop, as the tests see them. */
int64_t dpk_keyed_words(const uint64_t *words, int64_t start, int64_t c, const int64_t *a) {
    if (start == a[2]) return 1;
    memcpy((uint64_t *)(intptr_t)a[0] + a[1] * start, words, (size_t)(8 * a[1] * c));
    return 0;
}
