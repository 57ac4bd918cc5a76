"""The fast paths of a PLD charge at tiny δ give the floats of the slow ones.

A truncated Laplacian table at δ = 10^-300 has ~10^7 cells: its minorant sums them with
:func:`~dpnoise.float_sum.fsum_array` (``math.fsum``, bit for bit, in chunks), its
folded pmf skips folds that cannot change a float, and :func:`pair_atoms` builds the atoms
without padded copies.  Each is checked here against the plain computation on small inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import float_sum
from dpnoise.exact.folded import FoldedBlockGeometric
from dpnoise.exact.geometric import BlockGeometric
from dpnoise.laws.privacy_loss import pair_atoms
from dpnoise.profile import U
from dpnoise.verify_models import log_hockey


def _bits(x: object) -> bytes:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64)).tobytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=64,
                max_size=200), st.sampled_from([(7, 2), (64, 1), (1 << 20, 1 << 15)]))
def test_fsum_array_in_chunks_is_math_fsum(values: list[float],
                                           chunking: tuple[int, int]) -> None:
    """Small chunks and flushes (the path of arrays over 10^6 terms) give ``math.fsum``'s
    float, also over many binades, subnormals and cancellation."""
    x = np.array(values)
    x = np.concatenate([x, x * 2.0**-600, x * 2.0**-1070, -x[::3]])
    saved = float_sum._CHUNK, float_sum._FLUSH
    float_sum._CHUNK, float_sum._FLUSH = chunking
    try:
        try:
            want = math.fsum(x.tolist())
        except OverflowError:  # also an intermediate overflow of a representable sum
            return
        got = float_sum.fsum_array(x)
    finally:
        float_sum._CHUNK, float_sum._FLUSH = saved
    assert _bits(got) == _bits(want)


def test_fsum_array_special_values() -> None:
    ones = [1.0] * 100
    assert math.isnan(float_sum.fsum_array(np.array([math.nan, *ones])))
    assert float_sum.fsum_array(np.array([math.inf, *ones])) == math.inf
    assert _bits(float_sum.fsum_array(np.full(100, -0.0))) == _bits(math.fsum([-0.0] * 100))
    assert _bits(float_sum.fsum_array(np.array([0.5, -0.5] * 50))) == _bits(0.0)
    with pytest.raises(OverflowError):
        float_sum.fsum_array(np.full(100, 1e308))


@pytest.mark.parametrize("M,n,skips", [(8, 8 * 300 + 5, True), (3, 3 * 500, True),
                                       (64, 64 * 30, False)])
def test_folded_logpmf_skips_only_folds_that_change_no_float(M: int, n: int,
                                                             skips: bool) -> None:
    law = FoldedBlockGeometric(BlockGeometric(M), n)
    j = np.arange(-3, n + 3)
    fast = law.logpmf(j)
    law.__dict__["_one_fold"] = False  # the fold sum (F) itself
    slow = law.logpmf(j)
    assert _bits(fast) == _bits(slow)
    assert type(law).__dict__["_one_fold"].func(law) == skips


def test_folded_logpmf_keeps_folds_that_matter() -> None:
    law = FoldedBlockGeometric(BlockGeometric(64), 64 * 20)  # folds are 2^-20 of a cell
    assert not law._one_fold
    assert not np.array_equal(law.logpmf(np.arange(5)), law.log_point(np.arange(5)))


def _reference_atoms(lg: np.ndarray, shift: int) -> tuple[list, list, list]:
    """(G_0, G_shift) atoms by the definition, one output at a time."""
    n = lg.size
    losses, probs, errs = [], [], []
    for y in range(n):
        if not math.isfinite(lg[y]):
            continue
        other = lg[y - shift] if 0 <= y - shift < n else -math.inf
        losses.append(lg[y] - other if math.isfinite(other) else math.inf)
        probs.append(math.exp(lg[y]))
        errs.append(8 * U * (abs(lg[y]) + (abs(other) if math.isfinite(other) else 0.0))
                    + 1e-13)
    return losses, probs, errs


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(-50, 0), st.just(-math.inf)), min_size=1, max_size=30),
       st.integers(1, 35), st.booleans())
def test_pair_atoms_is_the_definition(lg: list[float], s: int, negative: bool) -> None:
    arr = np.array(lg)
    shift = -s if negative else s
    atoms = pair_atoms(arr, shift)
    want = _reference_atoms(arr, shift)
    assert _bits(atoms.losses) == _bits(want[0])
    assert np.allclose(atoms.probs, want[1], rtol=4 * U, atol=0)
    assert _bits(atoms.error) == _bits(want[2])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=150), st.lists(st.integers(0, 150), max_size=4))
def test_exact_sum_in_pieces_is_math_fsum(values: list[float], cuts: list[int]) -> None:
    x = np.concatenate([np.array(values), np.array(values) * 2.0**-1000])
    try:
        want = math.fsum(x.tolist())
    except OverflowError:  # also an intermediate overflow of a representable sum
        return
    acc = float_sum.ExactSum()
    for piece in np.split(x, sorted(c % (x.size + 1) for c in cuts)):
        acc.add(piece)
    assert _bits(acc.value()) == _bits(want)


def test_chunked_hockey_sum_is_the_plain_one() -> None:
    """:func:`log_hockey` over more than 2^16 outcomes (summed in chunks) gives the float of
    ``math.fsum`` over all of its terms at once."""
    rng = np.random.default_rng(3)
    lp = -rng.uniform(0, 700, 70_000)
    lq = lp + rng.normal(0, 1, lp.size)
    lp[::7] = -np.inf
    lq[::11] = -np.inf
    for eps in (0.0, 0.5):
        with np.errstate(invalid="ignore"):
            gap = lq + eps - lp
            mask = np.isfinite(lp) & (gap < 0)
        want = math.fsum((np.exp(lp[mask]) * -np.expm1(gap[mask])).tolist())
        assert _bits(log_hockey(lp, lq, eps)) == _bits(want)


def test_truncated_laplace_pld_is_the_one_of_the_plain_sums(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end at ε = 10, δ = 1e-18 (a table of 6.7·10^5 cells, the fold shortcut on):
    the charged PLD is bit-identical with ``math.fsum`` and the full fold sum."""
    from dpnoise import TruncatedLaplace
    from dpnoise.accounting import get_accountant
    from dpnoise.laws import privacy_loss

    m = TruncatedLaplace(epsilon=10.0, delta=1e-18, sensitivity=1.0)
    assert m.law._one_fold
    fast = get_accountant("pld").charge_for(m).pld
    monkeypatch.setattr(privacy_loss, "fsum_array", lambda x: math.fsum(np.ravel(x).tolist()))
    monkeypatch.setattr(FoldedBlockGeometric, "_one_fold", property(lambda self: False))
    slow = get_accountant("pld").charge_for(
        TruncatedLaplace(epsilon=10.0, delta=1e-18, sensitivity=1.0)).pld
    assert (fast.start, fast.inf_mass) == (slow.start, slow.inf_mass)
    assert _bits(fast.masses) == _bits(slow.masses)
