"""The lattice-Laplace kernel's AVX-512 and AVX2 loops (kernels/block.c) return bit for bit what
its plain C loop and the numpy reference return from the same words: random words plus the
edges of every step -- threshold draws equal to a column's threshold, one below and one above
it, full columns, the largest and smallest columns, sign bits, a Q of 62; centres at half-way
points, at the ends of the range |x/L| < 2^51 and signed zeros; lengths that leave vector
tails; outputs written with non-temporal stores from every alignment."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from dpnoise.exact import geometric
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.kernels import function
from dpnoise.randomness import SeededRandom

pytestmark = pytest.mark.skipif(geometric._block_kernel() is None, reason="kernels off")


class Words:
    """A word source handing out a fixed array in order (then fails: no extra draws)."""

    def __init__(self, words: np.ndarray) -> None:
        self.words_left = words

    def words(self, n: int) -> np.ndarray:
        out, self.words_left = self.words_left[:n], self.words_left[n:]
        assert out.size == n, "drew more words than the release needs"
        return out.copy()


def _edge_words(b: BlockGeometric, n: int, rng: np.random.Generator) -> np.ndarray:
    """2n words: the chunk's a-words then b-words, random with edge cases mixed in."""
    words = rng.integers(0, 2**64, size=2 * n, dtype=np.uint64)
    table, bits = b.table, b.table.bits
    a, bw = words[:n], words[n:]
    a[: n // 8] |= np.uint64(1)  # Q = 0 ...
    sign = a & np.uint64(1 << 63)
    for j, q in enumerate((62, 31, 32, 30, 33)):  # Q at the ends of the 32-bit halves
        part = slice(n // 8 + j * n // 40, n // 8 + (j + 1) * n // 40)
        a[part] = np.uint64(1 << q) | sign[part]
    cols = rng.integers(0, table.columns, size=n, dtype=np.uint64)
    cols[:4] = [0, table.columns - 1, 0, table.columns - 1]
    thr = table._thr[cols].astype(np.uint64)
    step = rng.integers(-1, 2, size=n).astype(np.int64)  # u = thr - 1, thr, thr + 1
    u = (thr.astype(object) + step.astype(object)) % table.mass
    u = np.array([int(v) for v in u], dtype=np.uint64)
    u[::7] = np.uint64(table.mass - 1)
    u[3::7] = 0
    edge = (cols << np.uint64(64 - bits)) | u
    half = n // 2
    bw[:half] = edge[:half]  # half the b-words on a threshold's edge, half random
    return words


def _centres(grid: float, n: int, rng: np.random.Generator) -> np.ndarray:
    top = np.nextafter(2.0**51, 0)
    special = np.concatenate([
        [top, -top, top - 0.5, -(top - 0.5), 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 5e-324],
        np.arange(-20, 20) + 0.5, np.nextafter(np.arange(-20, 20) + 0.5, -np.inf),
        2.0**50 + np.arange(-5, 5) + 0.5,
    ])
    x = rng.normal(0, 1e6, n)
    k = min(n, special.size)
    x[:k] = special[:k] if n >= special.size else rng.permutation(special)[:k]
    return x * grid


def _run(b: BlockGeometric, words: np.ndarray, n: int, centre: np.ndarray | None,
         grid: float, level: int, out_offset: int) -> np.ndarray:
    geometric.SIMD_LEVEL = level
    dtype = np.int64 if centre is None else np.float64
    store = np.empty(n + out_offset, dtype=dtype)[out_offset:]  # every alignment mod 64 bytes
    b.release_into(Words(words), store, centre=centre, grid=grid)
    return store


@pytest.mark.parametrize("M", [1, 7, 5679, 1 << 20])
def test_simd_equals_plain_c_and_reference(monkeypatch: pytest.MonkeyPatch, M: int) -> None:
    """Every instruction set this CPU has, against plain C and the numpy reference."""
    monkeypatch.setattr(geometric, "SIMD_LEVEL", 2)
    monkeypatch.setattr(geometric, "STREAM_MIN", 64)  # non-temporal stores at test sizes
    b = BlockGeometric(M)
    rng = np.random.default_rng(M)
    grid = 2.0**-7
    for n in (64, 1003):
        words = _edge_words(b, n, rng)
        for centre in (_centres(grid, n, rng), None):
            plain = _run(b, words, n, centre, grid, 0, 0)
            with monkeypatch.context() as mp:
                mp.setattr(geometric, "_block_kernel", lambda: None)
                ref = _run(b, words, n, centre, grid, 0, 0)
            np.testing.assert_array_equal(plain, ref)
            assert np.array_equal(np.signbit(plain), np.signbit(ref))
            for level in (1, 2):
                for offset in range(8):
                    fast = _run(b, words, n, centre, grid, level, offset)
                    assert fast.tobytes() == plain.tobytes(), (level, offset, centre is None)


def test_the_packed_table_is_the_alias_table() -> None:
    """One word a column, (thr << bits) | alias, full columns as (0, itself): the comparison
    ((u << bits) | (2^bits - 1)) >= entry decides u >= thr exactly."""
    b = BlockGeometric(5679)
    table, bits = b.table, b.table.bits
    packed = b._packed_table
    low = (1 << bits) - 1
    for col in range(0, table.columns, 37):
        entry, thr, alias = int(packed[col]), int(table._thr[col]), int(table._alias[col])
        for u in {0, max(thr - 1, 0), min(thr, table.mass - 1), min(thr + 1, table.mass - 1),
                  table.mass - 1}:
            fast = (entry & low) if ((u << bits) | low) >= entry else col
            assert fast == (col if u < thr else alias)


@pytest.mark.parametrize("bits", [1, 3, 13])
def test_kernel_on_any_alias_table(bits: int) -> None:
    """A random table (any alias, the last column included, thresholds 0 .. mass) and words
    drawn on its edges: each instruction set gives 2Z = ±(2QM + 2R + 1) with R = column if
    u < thr else alias, computed here from the definition."""
    rng = np.random.default_rng(bits)
    cols, mass = 1 << bits, 1 << (64 - bits)
    thr = [int(v) for v in rng.integers(0, mass, cols, dtype=np.uint64)]
    thr[0], thr[-1] = mass, 0
    alias = [int(v) for v in rng.integers(0, cols, cols)]
    alias[-2] = cols - 1
    full = [t == mass for t in thr]
    packed = np.array([(0 if f else t << bits) | (c if f else a)
                       for c, (t, a, f) in enumerate(zip(thr, alias, full, strict=True))],
                      dtype=np.uint64)
    n, two_m = 515, 2 * 37
    col = rng.integers(0, cols, n)
    col[:16] = cols - 2  # aliased to the last column: u = thr ties the packed comparison
    u = [(thr[c] + int(d)) % mass if d < 2 else int(v) for c, d, v in
         zip(col, rng.integers(-1, 3, n), rng.integers(0, mass, n, dtype=np.uint64), strict=True)]
    u[:16] = [thr[cols - 2] % mass] * 16
    a = rng.integers(0, 2**64, n, dtype=np.uint64) | np.uint64(1 << 40)  # Q <= 40
    b = np.array([(int(c) << (64 - bits)) | v for c, v in zip(col, u, strict=True)],
                 dtype=np.uint64)
    q = [(int(x) & -int(x)).bit_length() - 1 for x in a]
    r = [int(c) if v < thr[c] else alias[c] for c, v in zip(col, u, strict=True)]
    want = [(-1 if int(x) >> 63 else 1) * (qi * two_m + 2 * ri + 1)
            for x, qi, ri in zip(a, q, r, strict=True)]
    words = np.concatenate([a, b, np.zeros(8, dtype=np.uint64)])
    kern = geometric._block_kernel()
    for level in (0, 1, 2):
        out = np.empty(n, dtype=np.int64)
        assert kern(words.ctypes.data, n, n, packed.ctypes.data, bits, two_m, None, 1.0, 0.5,
                    None, out.ctypes.data, level, 0) == 0
        assert out.tolist() == want, level


def test_dispatch_reports_an_instruction_set() -> None:
    isa = function("dpk_block_isa", [], ctypes.c_int64)
    assert isa is not None and isa() in (0, 1, 2)


def test_the_one_call_loop_the_python_loop_and_the_reference_agree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Keystream and kernel in one GIL-free call (keyed.c), the Python loop of draw-then-
    kernel per chunk, and the numpy reference give the same release (the keystream read in
    the same order), at every instruction set."""
    b = BlockGeometric(5679)
    n = 3 * (1 << 14) + 5
    x = np.random.default_rng(3).normal(0, 1e4, n)
    got = []
    for level in (0, 1, 2):
        monkeypatch.setattr(geometric, "SIMD_LEVEL", level)
        got.append(b.signed_odd(SeededRandom(8), n, centre=x, grid=0.25).tobytes())
    monkeypatch.setattr(geometric, "keyed_run", lambda *a: None)
    got.append(b.signed_odd(SeededRandom(8), n, centre=x, grid=0.25).tobytes())
    monkeypatch.setattr(geometric, "_block_kernel", lambda: None)
    got.append(b.signed_odd(SeededRandom(8), n, centre=x, grid=0.25).tobytes())
    assert len(set(got)) == 1


@pytest.mark.parametrize("level", [0, 1, 2])
def test_every_loop_hands_the_rare_extension_to_the_reference(
        monkeypatch: pytest.MonkeyPatch, level: int) -> None:
    """An a-word whose low 63 bits are all zero (p = 2^-63) anywhere in a vector or in the tail:
    each loop counts it, so the chunk is recomputed by the reference, which extends Q."""
    monkeypatch.setattr(geometric, "SIMD_LEVEL", level)
    b = BlockGeometric(9)
    n = 203
    x = np.linspace(-5, 5, n)
    for pos in (0, 5, 8, 13, 200):
        words = np.random.default_rng(pos).integers(0, 2**64, 2 * n + 8, dtype=np.uint64)
        words[pos] = np.uint64(1 << 63)
        fast = b.signed_odd(Words(words.copy()), n, centre=x, grid=1.0)
        with monkeypatch.context() as mp:
            mp.setattr(geometric, "_block_kernel", lambda: None)
            ref = b.signed_odd(Words(words.copy()), n, centre=x, grid=1.0)
        np.testing.assert_array_equal(fast, ref)
        assert abs(fast[pos] - round(x[pos])) >= 9 * 63  # |Z| >= Q·M with Q >= 63: extended
