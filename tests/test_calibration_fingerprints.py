"""Faster construction never changes a calibration: every mechanism, over a grid of public
parameters (the cold-construction benchmark's grid and nearby values such as ε = 0.013,
Δ = 17), reproduces bit for bit the fingerprint (guarantee details and 256 seeded release
values) that the code wrote before the construction speedups
(tests/data/calibration_fingerprints.json, from ``python -m tests.calibration_fingerprints``).

A change that is *meant* to change a calibration or a sampler (a new law, a new grid)
regenerates the file with that command and says so in its commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.calibration_fingerprints import builders, cells, fingerprint

EXPECTED = json.loads((Path(__file__).parent / "data" / "calibration_fingerprints.json")
                      .read_text())


@pytest.mark.parametrize("name", sorted(builders(1.0, 1)))
def test_calibration_is_unchanged(name: str) -> None:
    want = EXPECTED[name]
    assert sorted(want) == sorted(f"{e!r} {s!r}" for e, s in cells(name))
    for e, s in cells(name):
        got = fingerprint(name, e, s)
        assert got == want[f"{e!r} {s!r}"], (name, e, s)
