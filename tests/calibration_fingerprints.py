"""Fingerprints of every mechanism's calibration over a grid of public parameters.

    python -m tests.calibration_fingerprints > tests/data/calibration_fingerprints.json

A fingerprint is what a construction decided: the guarantee (ε, δ and its details: scales,
grids, block ratios, exact losses) and 256 release values drawn with a fixed
:class:`~dpnoise.SeededRandom` (which pins the sampled tables word for word), as a SHA-256
next to a readable summary.  The committed file was written by the code *before* the
cold-construction speedups; tests/test_calibration_fingerprints.py checks that the current
code reproduces every fingerprint bit for bit, so a faster construction can never change a
calibration unnoticed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import dpnoise

# the constructions the benchmarks time cold (benchmarks/constructions.py): one table
_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "constructions.py"
_spec = importlib.util.spec_from_file_location("bench_constructions", _PATH)
assert _spec is not None and _spec.loader is not None
_constructions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_constructions)
builders: Callable[[float, float], dict[str, Callable[[], Any]]] = _constructions.builders
INTEGER: tuple[str, ...] = _constructions.INTEGER

EPSILONS = (0.01, 0.013, 0.1, 0.37, 1.0, 2.2, 5.0)
SENSITIVITIES = (1, 10, 17, 1000)
INTEGER_SENSITIVITIES = (1, 2, 3, 16, 17)
SHAPES = {"MultivariateStaircase": (64, 3), "PlanarLaplace": (64, 2)}


def cells(name: str) -> list[tuple[float, int]]:
    sens = INTEGER_SENSITIVITIES if name in INTEGER else SENSITIVITIES
    return [(e, s) for e in EPSILONS for s in sens]


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float):
        return float.hex(x)
    if isinstance(x, (np.floating, np.integer)):
        return _plain(x.item())
    if isinstance(x, np.ndarray):
        return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
    return repr(x)


def fingerprint(name: str, eps: float, sens: int) -> dict[str, Any] | None:
    """The readable guarantee and the SHA-256 of guarantee + 256 seeded release values, or
    None when (ε, Δ) is outside the mechanism's supported range."""
    try:
        m = builders(eps, sens)[name]()
    except dpnoise.ParameterError:
        return None
    g = m.guarantee
    summary = {"epsilon": _plain(g.epsilon), "delta": _plain(g.delta),
               "details": _plain(dict(g.details))}
    true = np.full(SHAPES.get(name, (256,)), 1000.0 if name == "PlanarLaplace" else 50.0 * sens)
    out = m.release(true, rng=dpnoise.SeededRandom(20261127))
    out = np.asarray(getattr(out, "points", out), dtype=np.float64)
    digest = hashlib.sha256(json.dumps(summary, sort_keys=True).encode()
                            + out.tobytes()).hexdigest()
    return {"summary": summary, "sha256": digest}


def main() -> None:
    names = sys.argv[1:] or list(builders(1.0, 1))
    table = {name: {f"{e!r} {s!r}": fingerprint(name, e, s) for e, s in cells(name)}
             for name in names}
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
