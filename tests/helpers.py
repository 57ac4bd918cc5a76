"""Small helpers shared by several test modules."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpnoise import Budget, SeededRandom, Session


def run_threads(work: Callable[[int], None], n: int) -> None:
    """``work(0)``, ..., ``work(n - 1)`` on n threads at once; returns when all have ended."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def bytes_from_fork(produce: Callable[[], bytes], size: int) -> bytes:
    """Fork; the child writes ``produce()`` (``size`` bytes) to a pipe and exits; returns
    what the parent read (shorter than ``size`` if the child wrote less)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.write(w, produce())
        os._exit(0)
    os.close(w)
    got = b""
    while len(got) < size:
        chunk = os.read(r, size - len(got))
        if not chunk:
            break
        got += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return got


def assert_fits_lattice_law(m: Any, x: float, y: np.ndarray) -> None:
    """Releases ``y`` of RangeLaplace ``m`` at true value ``x`` lie on the cells of
    ``m.noise(x)`` and follow its pmf (chi-square, cells of expected count < 5 pooled)."""
    law = m.noise(x)
    cells = np.rint(y / m.grid - 0.5).astype(np.int64)
    idx = np.searchsorted(law.cells, cells)
    assert np.all(law.cells[np.clip(idx, 0, law.cells.size - 1)] == cells)
    obs = np.bincount(idx, minlength=law.cells.size).astype(float)
    exp = law.probs * y.size
    keep = exp >= 5
    chi = float((((obs - exp) ** 2) / exp)[keep].sum()
                + (obs[~keep].sum() - exp[~keep].sum()) ** 2 / max(exp[~keep].sum(), 1e-9))
    assert stats.chi2.sf(chi, int(keep.sum())) > 1e-4, x


class CountingSource:
    """A seeded random source that records how many words were drawn (in ``drawn``)."""

    def __init__(self, seed: int = 0) -> None:
        self.inner = SeededRandom(seed)
        self.drawn = 0

    def words(self, n: int) -> np.ndarray:
        self.drawn += n
        return self.inner.words(n)


def assert_removal_within_plan(q: Any, plans: dict[str, Any], full: dict[str, Any],
                               data: dict[str, np.ndarray], keep: np.ndarray,
                               schema: dict[str, Any], where: tuple[Any, ...]) -> None:
    """Keeping only the rows ``keep`` moves the primitives of ``q`` by no more than the
    calibrated bound: loss <= Σ_i ceil(diff_i / sens)·cell_eps must be <= the role's epsilon
    (the loss the triangle inequality charges)."""
    s2 = Session({k: v[keep] for k, v in data.items()}, Budget(1.0), schema=schema)
    part = s2.true_components(q)
    for role, p in plans.items():
        diff = np.abs(np.asarray(full[role], float) - np.asarray(part[role], float))
        steps = np.ceil(diff / p.spec.sensitivity - 1e-12).sum()
        assert steps * p.spec.epsilon <= p.epsilon * (1 + 1e-12), (*where, role, diff)


def kernel_and_reference(monkeypatch: Any, module: Any, getter: str,
                         run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the compiled kernels, then again with ``module.getter`` patched to
    return None (the numpy reference path).  ``run`` must build its own seeded source, so
    both calls read the same words."""
    fast = run()
    with monkeypatch.context() as mp:
        mp.setattr(module, getter, lambda *args, **kwargs: None)
        ref = run()
    return fast, ref


class WordsWithValues:
    """A seeded word source whose FIRST request has the words at ``positions`` replaced by
    ``values`` (e.g. an all-zero word: the probability 2^-63/2^-64 events the kernels hand
    to the numpy reference)."""

    def __init__(self, seed: int, positions: list[int], values: list[int]) -> None:
        self.inner, self.first = SeededRandom(seed), True
        self.positions, self.values = positions, values

    def words(self, n: int) -> np.ndarray:
        w = self.inner.words(n)
        if self.first:
            w[self.positions] = np.array(self.values, dtype=np.uint64)
            self.first = False
        return w


def pmf_chi_square_pvalue(draws: np.ndarray, values: np.ndarray, probs: np.ndarray,
                          min_expected: float = 20.0) -> float:
    """Chi-square p-value of integer ``draws`` against an exact pmf (``probs`` at the sorted
    integers ``values``, covering the whole support): the cells with at least
    ``min_expected`` expected draws, the rest pooled into the two end cells."""
    values = np.asarray(values, dtype=np.int64)
    expected = np.asarray(probs, dtype=np.float64) * draws.size
    keep = expected >= min_expected
    lo, hi = values[keep][0], values[keep][-1]
    observed = np.bincount(np.clip(draws, lo, hi) - lo, minlength=hi - lo + 1)
    pooled = np.zeros(hi - lo + 1)
    np.add.at(pooled, np.clip(values, lo, hi) - lo, expected)
    return float(stats.chisquare(observed, pooled * draws.size / pooled.sum()).pvalue)


def law_chi_square_pvalue(draws: np.ndarray, law: Any) -> float:
    """Chi-square p-value of ``draws`` against a law with ``ppf`` and ``cdf``: twenty bins cut
    at the law's 5 %, 10 %, ..., 95 % points."""
    edges = np.unique(law.ppf(np.linspace(0.05, 0.95, 19)))
    expected = np.diff(np.concatenate([[0.0], law.cdf(edges), [1.0]]))
    observed = np.bincount(np.searchsorted(edges, draws, side="left"),
                           minlength=edges.size + 1)
    keep = expected > 0
    return float(stats.chisquare(observed[keep],
                                 expected[keep] / expected[keep].sum() * draws.size).pvalue)


def random_columns(seed: int, n: int, **columns: Callable[[np.random.Generator, int], Any]
                   ) -> dict[str, np.ndarray]:
    """A synthetic table of ``n`` rows: each column made in the order given, by its function
    of one generator seeded with ``seed`` and ``n``."""
    rng = np.random.default_rng(seed)
    return {name: np.asarray(make(rng, n)) for name, make in columns.items()}
