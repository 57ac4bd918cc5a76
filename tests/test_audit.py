"""The black-box auditor: it catches leaking samplers and passes dpnoise's mechanisms."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpnoise import ClampedLaplace, Laplace, ParameterError, SeededRandom
from dpnoise.audit import (
    audit,
    lowest_bit_exponent,
    numpy_laplace_from_raw,
    numpy_laplace_reachable,
    numpy_rounded_reachable,
    residues,
)
from dpnoise.mechanisms.planar import PlanarLaplace

N = 20_000


def test_lowest_bit_exponent() -> None:
    y = np.array([1.0, 3.0, 0.5, 0.75, 2.0**-1074, 6.0, 0.0, np.nan, -np.inf, -12.0])
    got = lowest_bit_exponent(y).tolist()
    assert got[:6] == [0, 0, -1, -2, -1074, 1]
    assert got[6] == 100_000 and got[7] == 200_000 and got[8] == 300_000 and got[9] == 2


def test_residues() -> None:
    y = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 0.125, -0.25])
    assert residues(y, -2, 4).tolist() == [0, 1, 2, 3, 0, -1, 3]


def test_numpy_replica_is_bit_exact() -> None:
    """The replica of numpy's random_laplace reproduces Generator.laplace bit for bit."""
    for loc, scale in ((0.0, 1.0), (1.0, 1.0), (3.5, 0.25)):
        ref = np.random.Generator(np.random.PCG64(42)).laplace(loc, scale, 5000)
        raw = np.random.PCG64(42).random_raw(5001)
        rep = np.array(numpy_laplace_from_raw(raw, loc, scale))[:5000]
        assert np.array_equal(ref, rep)


def test_numpy_attack_81_percent() -> None:
    """Reproduction A3: 16,288 of 20,000 outputs (seed 20130101, loc 0) are impossible at 1."""
    y = np.random.default_rng(20130101).laplace(0.0, 1.0, 20_000)
    ok = numpy_laplace_reachable(y, 1.0, 1.0)
    assert int(np.count_nonzero(~ok)) == 16_288
    assert numpy_laplace_reachable(y[:500], 0.0, 1.0).all()  # its own outputs: reachable


def test_rounding_removes_the_support_leak() -> None:
    """Reproduction A3: after rounding to L = 2^-10 the rounded outputs are all reachable from 1."""
    y = np.random.default_rng(20130101).laplace(0.0, 1.0, 300)
    L = 2.0**-10
    assert all(numpy_rounded_reachable(round(v / L), 1.0, 1.0, L) for v in y if abs(v) < 20)
    assert not numpy_rounded_reachable(round(40.0 / L), 1.0, 1.0, L)  # beyond 36.04 b


def test_auditor_catches_numpy_textbook_release() -> None:
    gen = np.random.default_rng(12345)
    rep = audit(lambda x, n: x + gen.laplace(0.0, 1.0, n), 0.0, 1.0, claimed_epsilon=1.0, n=N,
                support=lambda y, x: numpy_laplace_reachable(y, x, 1.0), support_samples=500)
    assert not rep.passed
    assert rep.epsilon_lower_bound > 4.0  # a black-box bit-pattern event, not luck
    assert rep.best_event is not None and "lowbit" in rep.best_event.event
    assert rep.support_impossible / rep.support_checked == pytest.approx(0.814, abs=0.05)


def test_auditor_catches_fixed_point_low_bits() -> None:
    """Ex. 1.1: a fixed-point sampler whose last two bits reveal the true answer."""
    gen = np.random.default_rng(7)

    def fixed_point(x: float, n: int) -> np.ndarray:
        z = np.round(gen.laplace(0.0, 64.0, n))  # unit Laplacian with d = 6 fractional bits
        return x + 4 * z * 2.0**-6  # scale b = 4

    rep = audit(fixed_point, 0.0, 7 / 32, claimed_epsilon=7 / 32 / 4, n=5000)
    assert not rep.passed and rep.epsilon_lower_bound > 3


def test_auditor_catches_under_reported_epsilon() -> None:
    """No bit-level leak, but the real loss (1.5) exceeds the claim (1.0)."""
    m = Laplace(epsilon=1.5, sensitivity=1.0)
    rng = SeededRandom(99)
    rep = audit(lambda x, n: m.release(np.full(n, x), rng=rng), 0.0, 1.0, claimed_epsilon=1.0,
                n=N)
    assert not rep.passed
    assert 1.0 < rep.epsilon_lower_bound <= 1.5
    assert rep.best_event is not None and rep.best_event.event.startswith("bin")


# ---------------------------------------------------------------- every dpnoise mechanism
Factory = Callable[[int], tuple[Any, ...]]  # seed -> (sampler, x, x', epsilon[, delta])


def _laplace(seed: int):
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    rng = SeededRandom(seed)
    return (lambda x, n: m.release(np.full(n, x), rng=rng)), 0.0, 1.0, m.guarantee.epsilon


def _laplace_coarse(seed: int):
    m = Laplace(epsilon=0.5, sensitivity=3.0, grid=0.25)
    rng = SeededRandom(seed)
    return (lambda x, n: m.release(np.full(n, x), rng=rng)), 10.0, 13.0, m.guarantee.epsilon


def _clamped(seed: int):
    m = ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=2.0)
    rng = SeededRandom(seed)
    return (lambda x, n: m.release(np.full(n, x), rng=rng)), 1.0, 2.0, m.guarantee.epsilon


def _planar(seed: int):
    m = PlanarLaplace(epsilon=1.0, grid=2.0**-6, region=((-4.0, 5.0), (-4.0, 4.0)))
    rng = SeededRandom(seed)
    return ((lambda x, n: m.release(np.tile(x, (n, 1)), rng=rng).points),
            (0.0, 0.0), (1.0, 0.0), m.guarantee.epsilon)


AUDITED: dict[str, Factory] = {
    "laplace": _laplace,
    "laplace-coarse-grid": _laplace_coarse,
    "clamped-laplace": _clamped,
    "planar-laplace": _planar,
}


def _registry_factories() -> dict[str, Factory]:
    """Every mechanism of the shared harness registry (tests/registry.py), with inputs
    x = true_value and x' = x ± sensitivity (whichever lies in the domain)."""
    try:
        from .registry import CASES
    except ImportError:  # pragma: no cover - registry not merged yet
        return {}
    out: dict[str, Factory] = {}
    for case in CASES:

        def factory(seed: int, case=case):
            m = case.build()
            x = float(case.true_value)
            rng = SeededRandom(seed)
            xp = x + float(m.sensitivity)
            try:
                m.release(xp, rng=SeededRandom(0))
            except ParameterError:
                xp = x - float(m.sensitivity)
            g = m.guarantee
            return ((lambda v, n: np.asarray(m.release(np.full(n, v), rng=rng), dtype=float)),
                    x, xp, g.epsilon, g.delta)

        out[f"registry:{case.id}"] = factory
    return out


ALL_AUDITED = {**AUDITED, **_registry_factories()}


@pytest.mark.parametrize("name", sorted(ALL_AUDITED))
def test_dpnoise_mechanisms_pass_the_auditor(name: str) -> None:
    sampler, x, xp, claimed, *delta = ALL_AUDITED[name](2024)
    rep = audit(sampler, x, xp, claimed_epsilon=claimed,
                claimed_delta=delta[0] if delta else 0.0, n=N)
    assert rep.passed, rep.summary()
    # and the auditor is not blind: with eps >= 0.5 it sees most of the real loss
    if claimed >= 0.5 and not (delta and delta[0]):
        assert rep.epsilon_lower_bound > 0.5 * claimed


def test_audit_rejects_bad_parameters() -> None:
    f = lambda x, n: np.zeros(n)  # noqa: E731
    with pytest.raises(ParameterError):
        audit(f, 0.0, 1.0, claimed_epsilon=0.0)
    with pytest.raises(ParameterError):
        audit(f, 0.0, 1.0, claimed_epsilon=1.0, n=10)
    with pytest.raises(ParameterError):
        audit(f, 0.0, 1.0, claimed_epsilon=1.0, alpha=1.5)
    with pytest.raises(ParameterError):
        audit(lambda x, n: np.zeros(n + 1), 0.0, 1.0, claimed_epsilon=1.0, n=100)


@pytest.mark.parametrize("kw", [{"bins": 0}, {"max_events": 0}, {"support_samples": -1},
                                {"bins": 1.5}, {"support": 5}, {"alpha": "0.01"}])
def test_audit_refuses_settings_that_test_nothing_or_crash(kw: dict) -> None:
    """bins=0 or max_events=0 tested no event and reported a pass; bins=1.5 and a support
    that is not callable raised TypeError."""
    def never(x: Any, n: int) -> np.ndarray:
        raise AssertionError("sampled before the parameters were checked")

    with pytest.raises(ParameterError):
        audit(never, 0.0, 1.0, claimed_epsilon=1.0, n=100, **kw)


def test_audit_takes_a_numpy_integer_n() -> None:
    report = audit(lambda x, n: np.zeros(n), 0.0, 1.0, claimed_epsilon=1.0, n=np.int64(100))
    assert report.n == 100


def test_constant_sampler_passes_and_report_renders() -> None:
    rep = audit(lambda x, n: np.zeros(n), 0.0, 1.0, claimed_epsilon=0.1, n=1000)
    assert rep.passed and rep.epsilon_lower_bound <= 0.0
    text = rep.summary()
    assert "PASS" in text and math.isfinite(rep.as_dict()["claimed_epsilon"])


def test_claimed_delta_is_accounted_for() -> None:
    """A sampler that reveals x with probability 1%: not pure DP, but (ε, 0.05)-DP."""
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    rng = SeededRandom(5)
    gen = np.random.default_rng(5)

    def leaky(x: float, n: int) -> np.ndarray:
        out = np.asarray(m.release(np.full(n, x), rng=rng), dtype=float)
        out[gen.random(n) < 0.01] = 1000.0 + x  # a value only x can produce
        return out

    assert not audit(leaky, 0.0, 1.0, claimed_epsilon=1.0, n=N).passed
    assert audit(leaky, 0.0, 1.0, claimed_epsilon=1.0, claimed_delta=0.05, n=N).passed
