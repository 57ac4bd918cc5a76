"""Regenerate the example data set shipped with dpnoise deterministically.

    python scripts/make_example_data.py  ->  src/dpnoise/examples/people.csv

Synthetic people (no real person), a fixed numpy seed: the file is reproducible.  One row
per answer to a survey that ran in up to three waves, so a person may own up to three rows
(``person_id`` repeats): the schema (people.toml) declares the person id and caps each
person's contribution.  ``city`` is free text whose values are NOT public (a GROUP BY on it
goes through DP partition selection); ``region`` has public categories.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PEOPLE = 2500
REGIONS = ("north", "south", "east", "west")
#: city -> (region, weight); the small towns are rare enough that partition selection
#: usually hides them
CITIES = {
    "Aberdeen": ("north", 30), "Inverness": ("north", 12), "Thurso": ("north", 0.6),
    "Brighton": ("south", 25), "Dover": ("south", 14), "Rye": ("south", 0.5),
    "Norwich": ("east", 24), "Ipswich": ("east", 15), "Cromer": ("east", 0.4),
    "Bristol": ("west", 22), "Exeter": ("west", 13), "Lynton": ("west", 0.3),
}


def rows() -> list[str]:
    g = np.random.default_rng(20261126)
    names = list(CITIES)
    weights = np.array([CITIES[c][1] for c in names], dtype=float)
    city = g.choice(names, size=PEOPLE, p=weights / weights.sum())
    age = np.clip(np.round(g.normal(46, 17, PEOPLE)), 18, 95).astype(int)
    income = np.clip(np.round(g.lognormal(10.6, 0.6, PEOPLE), -2), 0, 400_000).astype(int)
    smoker = (g.random(PEOPLE) < 0.18).astype(int)
    waves = g.choice([1, 2, 3], size=PEOPLE, p=[0.55, 0.3, 0.15])
    out = ["person_id,wave,age,income,smoker,region,city,satisfaction"]
    for i in range(PEOPLE):
        for w in range(1, int(waves[i]) + 1):
            sat = int(np.clip(np.round(g.normal(6.8, 1.9)), 0, 10))
            out.append(f"{1001 + i},{w},{age[i] + w - 1},{income[i]},{smoker[i]},"
                       f"{CITIES[city[i]][0]},{city[i]},{sat}")
    return out


def main() -> None:
    out = Path(__file__).resolve().parents[1] / "src" / "dpnoise" / "examples" / "people.csv"
    out.write_text("\n".join(rows()) + "\n")
    print(out)


if __name__ == "__main__":
    main()
