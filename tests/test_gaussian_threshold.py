"""The Gaussian threshold (discrete Gaussian counts over keys that are not public, for persons
in many groups): delta from the sampled law, the PLD with its atom at +infinity, refused under
zCDP, and the session's choice between it and the geometric threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import Budget, ParameterError, SeededRandom, Session
from dpnoise.accounting import get_accountant
from dpnoise.accounting.sources import mechanism_pld
from dpnoise.laws import gaussian_threshold as gt
from dpnoise.mechanisms.gaussian_threshold import GaussianThresholdCount
from dpnoise.mechanisms.thresholded import SUPPRESSED, ThresholdedCount
from dpnoise.verify import verify


@settings(max_examples=6, deadline=None)
@given(eps=st.sampled_from([1.0, 2.0]), delta=st.sampled_from([1e-2, 1e-3]),
       groups=st.integers(1, 2))
def test_delta_from_the_sampled_law_is_within_the_claim(eps: float, delta: float,
                                                        groups: int) -> None:
    m = GaussianThresholdCount(epsilon=eps, delta=delta, groups=groups)
    assert m.delta <= delta
    truth = verify(m.privacy_model(), epsilons=[eps]).delta_at(eps)
    assert truth <= m.delta * (1 + 1e-9)
    assert truth >= m.delta / 4  # and not far looser than the truth
    # the accountant's PLD (rounded onto its grid) is above the truth and near the claim
    pld = mechanism_pld(m).pld
    assert truth <= pld.delta(eps) <= min(delta, m.delta * 1.1)


def test_the_atom_is_the_chance_that_a_group_of_ones_own_is_released() -> None:
    m = GaussianThresholdCount(epsilon=1.0, delta=1e-5, groups=3, rows=2)
    s2 = float(m.sigma2)
    cases = gt.cases(s2, m.threshold, 3, 2)
    assert len(cases) == 4
    q = m.keep_probability(2)
    for k, (atoms, p) in enumerate(cases):  # k groups of one's own, 3 - k of the data
        assert p == pytest.approx(1 - (1 - q) ** k, rel=1e-9, abs=1e-300)
        assert math.fsum(np.asarray(atoms.probs).tolist()) == pytest.approx(1, abs=1e-8)
    assert 0 < cases[-1][1] < 1e-5
    # the profile's pairs: the atom p_k at +inf in each forward pair
    pairs = m.privacy_profile().pairs(1).pairs
    assert len(pairs) == 8
    for k in range(4):
        fwd = pairs[2 * k]
        assert np.isinf(fwd.losses[-1]) and fwd.probs[-1] == cases[k][1]
    # the stated delta is the worst case's; one threshold lower exceeds the asked delta
    worst = max(p + (1 - p) * max(gt.hockey(a, 1.0), gt.hockey(a, 1.0, -math.log1p(-p)))
                for a, p in cases)
    assert m.delta == pytest.approx(worst, rel=1e-9)
    assert gt.total_delta(s2, m.threshold - 1, 3, 2, 1.0) > 1e-5 * (1 - gt.ACCOUNTANT_ROOM)


def test_beyond_every_split_one_case_dominates() -> None:
    m = GaussianThresholdCount(epsilon=1.0, delta=1e-6, groups=gt.EVERY_SPLIT + 1)
    ((atoms, p),) = gt.cases(float(m.sigma2), m.threshold, m.groups, 1)
    assert np.isinf(atoms.losses[-1])  # the window's outside mass at +inf
    assert p == pytest.approx(1 - (1 - m.keep_probability(1)) ** m.groups, rel=1e-9)
    assert m.delta <= 1e-6


def test_refused_under_zcdp_and_with_bad_parameters() -> None:
    m = GaussianThresholdCount(epsilon=1.0, delta=1e-6, groups=4)
    with pytest.raises(ParameterError, match="no zCDP guarantee"):
        get_accountant("zcdp").charge_for(m)
    assert m.privacy_profile().rho is None
    for bad in ({"groups": 0}, {"groups": 33}, {"rows": 1.5}, {"delta": 0.0}):
        with pytest.raises(ParameterError):
            GaussianThresholdCount(**{"epsilon": 1.0, "delta": 1e-6, **bad})


def test_release_keeps_with_the_law_probability() -> None:
    m = GaussianThresholdCount(epsilon=1.0, delta=1e-3, groups=2)
    u = np.full(4000, m.threshold)
    y = m.release(u, rng=SeededRandom(7))
    assert abs(np.mean(y != SUPPRESSED) - m.keep_probability(m.threshold)) < 0.03
    assert m.in_output_set(y).all() and np.all(m.release([0, 0], rng=SeededRandom(1)) < 0)
    law = m.noise(m.threshold)
    assert math.fsum(law.probs.tolist()) == pytest.approx(1, abs=1e-12)


@pytest.mark.parametrize("groups,lower", [(4, True), (16, True), (1, False)])
def test_many_groups_lower_threshold_than_geometric(groups: int, lower: bool) -> None:
    g = GaussianThresholdCount(epsilon=1.0, delta=1e-6, groups=groups)
    geo = ThresholdedCount(epsilon=1.0, delta=1e-6, groups=groups)
    assert (g.threshold < geo.threshold) == lower


SCHEMA = {"dataset": {"user_id": "pid", "max_groups": 16, "max_rows_per_group": 1,
                      "max_rows": 10**6}, "columns": {"city": {"text": True}}}


def _sixteen_each(n: int = 600) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {"pid": np.repeat(np.arange(n), 16).astype(str),
            "city": rng.integers(0, 60, 16 * n).astype(str)}


def test_session_chooses_the_gaussian_under_pld_and_charges_one_pld() -> None:
    with Session(_sixteen_each(), Budget(3, 1e-5, accountant="pld"), schema=SCHEMA,
                 rng=SeededRandom(2)) as s:
        roles = dict(s.plans("count by city", 1.0, 1e-6))
        sel = roles["selection"]
        assert sel.name == "gaussian-threshold" and sel.threshold < 120
        # the count's noise is the charged mechanism's law, sampled exactly
        assert roles["count"].mechanism.sigma2 == sel.mechanism.sigma2
        assert roles["count"].mechanism.sampler == "cks"
        r = s.release("count by city", epsilon=1.0, delta=1e-6)
        assert len(r.values) == 60  # every group (~160 persons) clears tau
        assert r.details["selection"]["threshold"] == sel.threshold
        left = s.ledger.remaining()
        assert 3 - left.epsilon <= 1.0 and 1e-5 - left.delta <= 1e-6 * (1 + 1e-9)
    with Session(_sixteen_each(), Budget(3, 1e-5, accountant="basic"), schema=SCHEMA) as s:
        assert dict(s.plans("count by city", 1.0, 1e-6))["selection"].name == \
            "thresholded-count"  # automatic only under pld
        roles = dict(s.plans("count by city", 1.0, 1e-6, mechanism="discrete-gaussian"))
        assert roles["selection"].name == "gaussian-threshold"


def test_session_refuses_the_gaussian_under_zcdp_before_spending() -> None:
    with Session(_sixteen_each(), Budget(3, 1e-5, accountant="zcdp"), schema=SCHEMA) as s:
        with pytest.raises(ParameterError, match="no zCDP guarantee"):
            s.release("count by city", epsilon=1.0, delta=1e-6, mechanism="discrete-gaussian")
        assert s.ledger.remaining().epsilon == 3


def test_past_release_has_the_live_error_bars() -> None:
    """Error bars recomputed from the ledger entry (its recorded sigma^2) equal the live ones."""
    from dpnoise.session.answers import entry_interval

    with Session(_sixteen_each(), Budget(3, 1e-5, accountant="pld"), schema=SCHEMA,
                 rng=SeededRandom(4)) as s:
        r = s.release("count by city", epsilon=1.0, delta=1e-6)
        entry = {e.id: e for e in s.history()}[r.ledger_id]
    lo, hi = r.interval(0.9)
    lo2, hi2 = entry_interval(entry, 0.9)
    assert np.array_equal(lo, lo2) and np.array_equal(hi, hi2)
    assert np.all(hi - lo < 60)  # the discrete Gaussian's, not a wider bound
