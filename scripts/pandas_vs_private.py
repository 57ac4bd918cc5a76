"""Why a private answer differs from pandas: the demo's numbers, side by side.

    python scripts/pandas_vs_private.py          # needs pandas (the `dev` extra)

For a few of the demo's statistics it prints what pandas computes on the raw file, what it
computes after the declared clamping (the value the private release estimates), and the
private answer of the seeded demo (``dpnoise demo --seed 1``: the same releases, the same
noise) with its 95% error bar.  The bundled survey is SYNTHETIC (scripts/make_demo_data.py),
which is the only reason its true values and its number of clamped incomes may be printed:
a real release report never shows either.  docs/custodian.md quotes this output.
"""

from __future__ import annotations

import pandas as pd

from dpnoise import SeededRandom, Session
from dpnoise.demo import TOTAL, demo_schema, survey_paths
from dpnoise.session import Ledger

SEED = "1"  # as `dpnoise demo --seed 1` passes it
# (label, demo query, pandas on the raw rows, the same after clamping to the declared bounds)
ROWS = [
    ("mean income of smokers", "mean income where smoker = 1",
     lambda d: d[d.smoker == 1].income.mean(),
     lambda d: d[d.smoker == 1].income.clip(0, 250_000).mean()),
    ("smokers under 30", "SELECT COUNT(*) FROM data WHERE smoker = 1 AND age < 30",
     lambda d: float(((d.smoker == 1) & (d.age < 30)).sum()),
     lambda d: float(((d.smoker == 1) & (d.age < 30)).sum())),
    ("median income", "median income",
     lambda d: d.income.median(), lambda d: d.income.clip(0, 250_000).median()),
]


def private_answers() -> dict[str, tuple[float, float, float]]:
    """The seeded demo's releases (its order, so its noise), as (value, low, high)."""
    from dpnoise.demo import EXTRA, QUERIES

    data, schema = survey_paths()
    out = {}
    with Session(data, None, Ledger(None, budget=TOTAL), schema=demo_schema(schema),
                 rng=SeededRandom(SEED)) as s:
        for _label, query, eps in QUERIES:
            r = s.release(query, epsilon=eps)
            lo, hi = r.interval(0.95)
            out[query] = (float(r.values.ravel()[0]), float(lo.ravel()[0]), float(hi.ravel()[0]))
        from dpnoise.demo import MECHANISMS, QUERIES_PICKED

        for _label, query, eps, mech in QUERIES_PICKED:  # keeps the demo's noise order
            if mech in MECHANISMS:
                s.release(query, epsilon=eps, mechanism=mech)
        for _label, query, eps, delta in EXTRA:
            r = s.release(query, epsilon=eps, delta=delta)
            lo, hi = r.interval(0.95)
            out[query] = (float(r.values.ravel()[0]), float(lo.ravel()[0]), float(hi.ravel()[0]))
    return out


def main() -> int:
    data, _ = survey_paths()
    df = pd.read_csv(data)
    private = private_answers()
    print(f"synthetic survey, {len(df):,} rows; private answers of `dpnoise demo --seed {SEED}`")
    print(f"{'statistic':24s} {'pandas, raw':>14s} {'pandas, clamped':>16s} "
          f"{'private':>12s}  95% error bar")
    for label, query, raw, clamped in ROWS:
        v, lo, hi = private[query]
        bar = (f"levels [{lo:.3f}, {hi:.3f}]" if query.startswith("median")
               else f"[{lo:,.1f}, {hi:,.1f}]")
        print(f"{label:24s} {raw(df):>14,.2f} {clamped(df):>16,.2f} {v:>12,.2f}  {bar}")
    above = int((df.income > 250_000).sum())
    print(f"\nmean income, all rows: pandas {df.income.mean():,.2f} raw, "
          f"{df.income.clip(0, 250_000).mean():,.2f} after clamping at 250,000 "
          f"({above} synthetic incomes lie above it); missing values in the file: "
          f"{int(df.isna().sum().sum())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
