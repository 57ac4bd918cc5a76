"""Tight budget accounting: calibrations under the accountants, and reserve latency.

    python benchmarks/accounting.py [--quick]

Targets, total budget (ε, δ) = (1, 1e-6), sensitivity 1:

* 50 Gaussian releases: per-release σ <= 30.5 (basic: 206) -- dpnoise's exact discrete
  Gaussian (the law it samples) under the "pld" and "zcdp" accountants;
* 500 Laplace releases: per-release scale <= 96 (basic: 500) -- dpnoise's lattice Laplace;
* composing 1000 releases and reserving one more < 50 ms (incremental compose of the cached
  state + the fits() test).

Each calibration is :func:`dpnoise.accounting.largest_share` (bisection on the noise parameter,
rounded toward more noise).  dp-accounting's PLD accountant (idealised continuous mechanisms)
is printed beside it when importable.
"""

from __future__ import annotations

import argparse
import math
import time

from dpnoise import DiscreteGaussian, Laplace
from dpnoise.accounting import AccountingBudget, get_accountant, largest_share

BUDGET = AccountingBudget(1.0, 1e-6)


def dg(sigma: float) -> DiscreteGaussian:
    return DiscreteGaussian(epsilon=1.0, sigma2=sigma * sigma, upper=None)


def lap(scale: float) -> Laplace:
    return Laplace(epsilon=1.0 / scale, sensitivity=1.0)


def dp_accounting_share(kind: str, n: int, bounds: tuple[float, float]) -> float | None:
    try:
        from dp_accounting.pld import privacy_loss_distribution as pl
    except ImportError:
        return None
    make = pl.from_gaussian_mechanism if kind == "gauss" else pl.from_laplace_mechanism
    lo, hi = bounds
    while hi / lo > 1 + 1e-3:
        mid = math.sqrt(lo * hi)
        eps = make(mid, value_discretization_interval=1e-4).self_compose(n) \
            .get_epsilon_for_delta(BUDGET.delta)
        lo, hi = (lo, mid) if eps <= BUDGET.epsilon else (mid, hi)
    return hi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the zcdp and peer rows")
    args = ap.parse_args()
    rows = []
    for what, fam, n, bounds, target, basic in (
            ("Gaussian sigma (discrete Gaussian)", dg, 50, (5.0, 400.0), 30.5, 206.0),
            ("Laplace scale (lattice Laplace)", lap, 500, (20.0, 1000.0), 96.0, 500.0)):
        t = time.perf_counter()
        p_pld, _ = largest_share("pld", BUDGET, fam, n, bounds=bounds, rel_tol=2e-3)
        dt = time.perf_counter() - t
        # basic: each release gets (ε/N, δ/N), calibrated directly
        if fam is dg:
            m = DiscreteGaussian(epsilon=BUDGET.epsilon / n, delta=BUDGET.delta / n, upper=None)
            p_basic = math.sqrt(float(m.sigma2))
        else:
            p_basic = lap(float(n)).scale
        p_z = None
        if not args.quick:
            p_z, _ = largest_share("zcdp", BUDGET, fam, n, bounds=bounds, rel_tol=2e-3)
        peer = None if args.quick else dp_accounting_share(
            "gauss" if fam is dg else "laplace", n, bounds)
        rows.append((what, n, p_pld, target, p_z, p_basic, basic, peer, dt))
    print(f"\nper-release noise for N releases within (eps, delta) = "
          f"({BUDGET.epsilon:g}, {BUDGET.delta:g}), sensitivity 1")
    print(f"{'release':36s} {'N':>4s} {'pld':>8s} {'target':>7s} {'zcdp':>8s} {'basic':>8s} "
          f"{'(issue)':>7s} {'dp-acc':>8s} {'time':>6s}")
    for what, n, p, tgt, z, b, bi, peer, dt in rows:
        zs = f"{z:8.2f}" if z is not None else "       -"
        ps = f"{peer:8.2f}" if peer is not None else "       -"
        print(f"{what:36s} {n:4d} {p:8.2f} {tgt:7.1f} {zs} {b:8.1f} {bi:7.0f} {ps} {dt:5.1f}s"
              f"  {'OK' if p <= tgt else 'MISSED'}")

    acc = get_accountant("pld")
    charge = acc.charge_for(lap(96.0))
    state = acc.compose_many(acc.empty(), charge, 1000)
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        nxt = acc.compose(state, charge)
        ok = acc.fits(nxt, AccountingBudget(2.0, 1e-6))
        best = min(best, time.perf_counter() - t)
    print(f"\nreserve one more after 1000 Laplace(96) releases: {1000 * best:.1f} ms "
          f"(target < 50 ms; state {state.pld.masses.size} grid points, fits={ok}, "
          f"composed eps(1e-6) = {acc.epsilon(nxt, 1e-6):.4f})")
    ledger_reserve(200 if args.quick else 1000)
    pure_dp_fallback_gap()
    if not args.quick:
        envelopes()


def envelopes() -> None:
    """The staircase's exact envelope PLD, RangeLaplace (fallback), and the
    GROUP BY charge of an (eps, delta) mechanism (k = 4 rows per person over 10 cells)."""
    from dpnoise import AnalyticGaussian, RangeLaplace, Staircase
    from dpnoise.accounting import ReleaseSpec

    n = 50
    for what, fam in (("Staircase", lambda e: Staircase(epsilon=e, sensitivity=1.0)),
                      ("RangeLaplace [0,100]",
                       lambda e: RangeLaplace(epsilon=e, sensitivity=1.0, domain=(0, 100)))):
        t = time.perf_counter()
        eps, m = largest_share("pld", BUDGET, fam, n, bounds=(1.0 / n, 0.2),
                               noisier="decreasing", rel_tol=2e-3)
        dt = time.perf_counter() - t
        print(f"{n} {what} releases within (1, 1e-6): per-release eps {eps:.5f} under pld "
              f"(basic {1.0 / n:.5f}, x{eps * n:.3f}); {dt:.1f} s")
    acc = get_accountant("pld")
    m = AnalyticGaussian(epsilon=0.5, delta=1e-7, sensitivity=4.0)
    for what, spec in (("before: 4 cells at full sensitivity", ReleaseSpec.cells(m, 4)),
                       ("after: envelope over the splits", ReleaseSpec.fraction_split(m, 4, 10)),
                       ("one cell at full sensitivity", ReleaseSpec.cells(m, 1))):
        t = time.perf_counter()
        st = acc.compose(acc.empty(), acc.charge_for(spec))
        print(f"grouped AnalyticGaussian(0.5, 1e-7) k=4 rows, 10 cells -- {what}: composed "
              f"eps(1e-6) = {acc.epsilon(st, 1e-6):.5f} ({time.perf_counter() - t:.2f} s)")


def pure_dp_fallback_gap() -> None:
    """How much an exact PLD can gain over the randomized-response fallback for a PURE ε-DP
    law (what RangeLaplace, PlanarLaplace and the multivariate staircases are charged): the
    exact lattice Laplace PLD -- the tightest pure ε-DP additive law dpnoise has -- against
    RR of the same ε, composed N times within (1, 1e-6), and for one release."""
    from dpnoise.accounting.pld import PLD
    from dpnoise.accounting.sources import mechanism_pld

    print("\npure eps-DP: exact lattice Laplace PLD vs the randomized-response fallback")
    for n in (50, 500):
        t = time.perf_counter()
        e_exact, _ = largest_share("pld", BUDGET, lambda e: Laplace(epsilon=e, sensitivity=1.0),
                                   n, bounds=(1.0 / n, 0.2), noisier="decreasing", rel_tol=2e-4)
        lo, hi = 1.0 / n, 0.2
        while hi / lo > 1 + 2e-4:  # RR of epsilon e, composed n times
            mid = math.sqrt(lo * hi)
            ok = PLD.randomized_response(mid).self_compose(n).epsilon(BUDGET.delta) <= 1.0
            lo, hi = (mid, hi) if ok else (lo, mid)
        print(f"  {n} releases: largest per-release eps, exact Laplace PLD {e_exact:.5f}, RR "
              f"fallback {lo:.5f} (ratio {e_exact / lo:.4f}); {time.perf_counter() - t:.1f} s")
    for e in (0.1, 1.0):
        exact = mechanism_pld(Laplace(epsilon=e, sensitivity=1.0)).pld
        fb = PLD.randomized_response(e)
        print(f"  one release at eps {e:g}: delta(eps/2) exact {exact.delta(e / 2):.4g}, RR "
              f"{fb.delta(e / 2):.4g}; delta(0) exact {exact.delta(0.0):.4g}, "
              f"RR {fb.delta(0.0):.4g}")


def time_ledger_reserve(n: int) -> tuple[list[float], float, float, object]:
    """``n`` reservations of Laplace(scale 96) in a fresh ledger FILE, then three more
    timed one by one: (their seconds, the n's seconds, the reopen's seconds, spent)."""
    import tempfile
    from pathlib import Path

    from dpnoise import Budget
    from dpnoise.session import Ledger

    kw = dict(query="q", canonical="q", query_key="k", dataset="d", mechanism="laplace",
              parameters={}, guarantee={})
    m = lap(96.0)
    with tempfile.TemporaryDirectory() as d:
        led = Ledger(Path(d) / "l.sqlite", budget=Budget(2.0, 1e-6, accountant="pld"),
                     create=True)
        charge = led.charge_for(m)
        t0 = time.perf_counter()
        for _ in range(n):
            led.reserve(epsilon=m.guarantee.epsilon, delta=0.0, accounting=charge, **kw)
        build = time.perf_counter() - t0
        times = []
        for _ in range(3):
            t = time.perf_counter()
            led.reserve(epsilon=m.guarantee.epsilon, delta=0.0, accounting=charge, **kw)
            times.append(time.perf_counter() - t)
        led.close()
        t = time.perf_counter()
        with Ledger(Path(d) / "l.sqlite") as again:
            opened = time.perf_counter() - t
            spent = again.spent()
    return times, build, opened, spent


def ledger_reserve(n: int) -> None:
    """The same through a ledger FILE: Ledger.reserve = the transaction (write lock, chain
    check), compose from the cached state, the strict fits test, the reserve event with
    the charge blob, the new cached state (~2 MB at 1000) and the fsync."""
    times, build, opened, spent = time_ledger_reserve(n)
    print(f"ledger file: {n} reservations in {build:.1f} s; reserving one more (transaction, "
          f"compose, fits, write, fsync): {1000 * min(times):.1f} ms (median "
          f"{1000 * sorted(times)[1]:.1f}); open {1000 * opened:.0f} ms; spent {spent}")

if __name__ == "__main__":
    main()
