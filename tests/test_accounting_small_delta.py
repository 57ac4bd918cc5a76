"""The PLD accountant at small δ: never below the truth, and tight down to δ = 1e-12.

The truth (tests/composition_truth.py) is computed without dpnoise.accounting: the Gaussian
closed form and exact convolutions of the discrete laws sampled.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpnoise as dp
from dpnoise.accounting import PLD, ReleaseSpec, get_accountant
from dpnoise.accounting.pld import DEFAULT_H, _spliced_convolution
from dpnoise.accounting.tilt import THETAS
from dpnoise.ledger import verify_ledger
from dpnoise.session import Ledger

from .composition_truth import Composition, discrete_pld, epsilon

DELTAS = (1e-6, 1e-9, 1e-12)
DATA = Path(__file__).parent / "data"


def _decay(m: dp.Geometric) -> float:
    law = m.noise()
    return math.log(float(law.pmf(0)) / float(law.pmf(1)))


def _cases() -> list[tuple[str, list[tuple[object, int]], Composition]]:
    dg = dp.DiscreteGaussian(epsilon=1.0, sigma2=100, upper=None)
    geo = dp.Geometric(epsilon=0.05)
    ag = dp.AnalyticGaussian(epsilon=0.25, delta=1e-7, sensitivity=1.0)
    grouped = dp.AnalyticGaussian(epsilon=0.5, delta=1e-7, sensitivity=4.0)
    big = dp.DiscreteGaussian(epsilon=1.0, sigma2=400, upper=None)
    fine = dp.Geometric(epsilon=0.01)
    table = dp.AnalyticGaussian(epsilon=0.2, delta=1e-6, sensitivity=1.0)
    cell = dp.DiscreteGaussian(epsilon=1.0, sigma2=64, upper=None)
    geo2 = dp.Geometric(epsilon=0.1)
    dg25 = dp.DiscreteGaussian(epsilon=1.0, sigma2=25, upper=None)
    ag3 = dp.AnalyticGaussian(epsilon=0.3, delta=1e-7, sensitivity=1.0)
    return [
        ("64 discrete Gaussians", [(dg, 64)],
         Composition().discrete_gaussian(float(dg.sigma2), 64)),
        ("geometric + Gaussian", [(geo, 40), (ag, 10)],
         Composition().geometric(_decay(geo), 40).gaussian(ag.sigma, k=10)),
        ("GROUP BY + discrete Gaussian",
         [(ReleaseSpec.fraction_split(grouped, 4, 10), 2), (big, 20)],
         # a Gaussian GROUP BY's worst split is one cell moved by its full sensitivity
         Composition().gaussian(grouped.sigma, 4.0, k=2).discrete_gaussian(
             float(big.sigma2), 20)),
        ("1000 geometric", [(fine, 1000)], Composition().geometric(_decay(fine), 1000)),
        # the 64-bit Gaussian table: minorant + the residual's all-shift window PLD
        ("1000 Gaussian tables", [(table, 1000)], Composition().gaussian(table.sigma, k=1000)),
        ("GROUP BY cells + geometric", [(ReleaseSpec.cells(cell, 12), 5), (geo2, 30)],
         Composition().discrete_gaussian(float(cell.sigma2), 60).geometric(_decay(geo2), 30)),
        ("Gaussian tables + discrete Gaussian + geometric",
         [(dg25, 12), (geo2, 100), (ag, 50)],
         Composition().discrete_gaussian(float(dg25.sigma2), 12).geometric(_decay(geo2), 100)
         .gaussian(ag.sigma, k=50)),
        ("GROUP BY Gaussian + Gaussian tables",
         [(ReleaseSpec.fraction_split(grouped, 4, 10), 30), (ag3, 200)],
         Composition().gaussian(grouped.sigma, 4.0, k=30).gaussian(ag3.sigma, k=200)),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_composed_epsilon_is_never_below_the_truth_and_tight_at_small_delta(case) -> None:
    _, releases, comp = case
    acc = get_accountant("pld")
    state = acc.empty()
    for what, n in releases:
        state = acc.compose_many(state, acc.charge_for(what), n)
    grid = sum(n for _, n in releases) * DEFAULT_H  # the documented grid term
    exact = discrete_pld(comp)
    for d in DELTAS:
        true_eps = epsilon(comp, d, exact)
        got = acc.epsilon(state, d)
        assert got >= true_eps, (d, got, true_eps)
        # validity from the δ side too: at the true ε the reported δ is at least the target
        assert acc.delta(state, true_eps) >= d * (1 - 1e-9)
        tol = 0.02 if d >= 1e-10 else 0.05
        assert got <= true_eps * (1 + tol) + grid, (d, got, true_eps)


@settings(max_examples=25, deadline=None)
@given(st.integers(80, 400), st.integers(80, 400), st.floats(0.05, 2.0), st.integers(0, 2**32))
def test_tilted_convolution_error_is_within_its_bound_at_every_tilt(na, nb, spread,
                                                                    seed) -> None:
    rng = np.random.default_rng(seed)
    h = 2.0**-10

    def law(n: int) -> tuple[np.ndarray, np.ndarray, int]:
        start = int(rng.integers(-n, 1))
        L = (start + np.arange(n)) * h
        logm = -((L - rng.normal(0, 0.05)) ** 2) / (2 * spread**2 * 0.01) \
            + rng.normal(0, 2, n)
        m = np.exp(logm - logm.max())
        return m / m.sum(), L, start

    a, la, sa = law(na)
    b, lb, sb = law(nb)
    c, log_err, _ = _spliced_convolution(a, la, b, lb, sa + sb, h)
    exact = np.convolve(a, b)  # non-negative products: relative error <= n·u per entry
    L = (sa + sb + np.arange(exact.size)) * h
    for k, theta in enumerate(THETAS):
        err = float(np.sum(np.abs(np.maximum(c, 0) - exact) * np.exp(theta * L)))
        allow = float(np.sum(exact * np.exp(theta * L))) * 1e-12
        assert err <= math.exp(log_err[k]) + allow, (theta, err, math.exp(log_err[k]))


def test_the_tracked_error_survives_serialisation_and_old_plds_stay_version_one() -> None:
    acc = get_accountant("pld")
    charge = acc.charge_for(dp.DiscreteGaussian(epsilon=1.0, sigma2=100, upper=None))
    state = acc.compose_many(acc.empty(), charge, 8)
    back = PLD.from_bytes(state.pld.to_bytes())
    assert back.version == 2 and np.array_equal(back.errors, state.pld.errors)
    assert back.epsilon(1e-12) == state.pld.epsilon(1e-12)
    old = PLD(DEFAULT_H, 0, np.ones(3) / 3, 0.0, 0.0, version=1)
    raw = old.to_bytes()
    assert b'"v"' not in raw and b'"err"' not in raw
    assert PLD.from_bytes(raw).version == 1


def test_a_ledger_written_by_the_first_format_verifies_and_keeps_composing(tmp_path) -> None:
    """tests/data/ledger_pld_v1.sqlite was written by the code before the tilted errors
    (3 lattice Laplace, 1 geometric, 1 range-Laplace release under "pld")."""
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "ledger_pld_v1.sqlite", path)
    assert verify_ledger(path).ok
    from dpnoise.cli import main

    assert main(["ledger", "migrate", str(path)]) == 0  # the ledger format moved on since
    assert verify_ledger(path).ok
    acc = get_accountant("pld")
    m = dp.Laplace(epsilon=0.005, sensitivity=1.0)
    with Ledger(path) as led:
        before = led.state()
        assert before.pld.version == 1 and before.count == 5
        led.reserve(epsilon=m.guarantee.epsilon, delta=0.0, accounting=acc.charge_for(m),
                    query="q", canonical="q", query_key="k", dataset="d", mechanism="m",
                    parameters={}, guarantee={})
        after = led.state()
        assert after.pld.version == 2 and after.count == 6
        assert acc.epsilon(after, 1e-6) > acc.epsilon(before, 1e-6)
    assert verify_ledger(path).ok
    con = sqlite3.connect(path)
    assert con.execute("SELECT COUNT(*) FROM composed").fetchone()[0] >= 1
    con.close()


def test_renyi_curves_are_used_only_when_every_release_has_one() -> None:
    acc = get_accountant("pld")
    lap = acc.charge_for(dp.Laplace(epsilon=0.1, sensitivity=1.0))
    assert lap.rdp is not None
    # a finite-support law (its PLD has +inf mass) has no Rényi curve
    table = acc.charge_for(dp.AnalyticGaussian(epsilon=0.5, delta=1e-7, sensitivity=1.0))
    assert table.rdp is None
    state = acc.compose_many(acc.empty(), lap, 50)
    assert state.rdp is not None
    from dpnoise.accounting.renyi import epsilon_from_curve

    assert acc.epsilon(state, 1e-9) <= epsilon_from_curve(np.array(state.rdp), 1e-9)
    # a curveless release ends the curve: it must not count as zero
    mixed = acc.compose(state, table)
    assert mixed.rdp is None
    assert acc.compose(mixed, lap).rdp is None


def test_session_plan_beats_basic_composition_at_delta_1e_12() -> None:
    """50 lattice Laplace counts within (1, 1e-12): the PLD share is ~1.17x basic (before
    the tilted tails it fell back to basic composition, 1/50)."""
    from dpnoise import Budget
    from dpnoise.session import Session

    rng = np.random.default_rng(3)
    data = {"age": rng.integers(0, 100, 300).astype(float)}
    s = Session(data, Budget(1.0, 1e-12, accountant="pld"),
                schema={"columns": {"age": {"lower": 0, "upper": 100}}})
    p = s.plan("count", reserve_for=49, mechanism="laplace")
    assert p.fits and s.history() == []
    assert p.epsilon > 1.1 * p.basic_epsilon
