"""Regenerate the bundled synthetic demo data set deterministically.

    python scripts/make_demo_data.py  ->  src/dpnoise/data/survey.csv

Synthetic people (no real person): a fixed numpy seed, so the file is reproducible.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROWS = 3000
REGIONS = ("north", "south", "east", "west")


def main() -> None:
    g = np.random.default_rng(20261121)
    age = np.clip(np.round(g.normal(46, 17, ROWS)), 18, 95).astype(int)
    income = np.clip(np.round(g.lognormal(10.6, 0.6, ROWS), -2), 0, 400_000).astype(int)
    smoker = (g.random(ROWS) < 0.18).astype(int)
    region = g.choice(REGIONS, size=ROWS, p=[0.3, 0.25, 0.25, 0.2])
    household = np.clip(g.poisson(1.6, ROWS) + 1, 1, 8)
    satisfaction = np.clip(np.round(g.normal(6.8, 1.9, ROWS)), 0, 10).astype(int)
    out = Path(__file__).resolve().parents[1] / "src" / "dpnoise" / "data" / "survey.csv"
    with out.open("w") as f:
        f.write("person_id,age,income,smoker,region,household_size,satisfaction\n")
        for i in range(ROWS):
            f.write(f"{i + 1},{age[i]},{income[i]},{smoker[i]},{region[i]},"
                    f"{household[i]},{satisfaction[i]}\n")
    print(out)


if __name__ == "__main__":
    main()
