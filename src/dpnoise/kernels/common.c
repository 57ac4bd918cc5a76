/* dpnoise compiled kernels: shared definitions and a self-test entry point.
 *
 * Conventions for every kernel in this directory (see dpnoise/kernels/__init__.py):
 *   - plain C11, no Python API: called through ctypes, which releases the GIL;
 *   - inputs are CSPRNG words (uint64) already drawn by the caller, plus read-only tables
 *     built at construction; outputs are written into caller-owned arrays;
 *   - a fixed number of words per value and the same instruction sequence for every true
 *     value (no branches on secrets other than the ones the pure numpy path also has);
 *   - bit-for-bit the same results as the pure numpy reference path, which the tests check.
 */
#include <stdint.h>

/* ABI version: bump when any kernel's signature changes (the loader checks it). */
int64_t dpk_abi_version(void) { return 4; }

/* Sum of n words modulo 2^64: used by the loader's self-test. */
uint64_t dpk_selftest_sum(const uint64_t *w, int64_t n) {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += w[i];
    return s;
}
