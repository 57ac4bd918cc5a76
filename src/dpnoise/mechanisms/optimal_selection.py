"""Optimal partition selection for one group per person, with dyadic keep-probabilities.

Desfontaines, Voss, Gipson and Mandayam, "Differentially private partition selection",
PoPETs 2022, Sec. 3 (Thm. 1): when each person is in at most ONE group, a mechanism that
keeps a group of ``n`` distinct persons with probability ``π(n)`` independently of the other
groups is ``(ε, δ)``-DP iff ``π(0) = 0`` and for every ``n >= 1``

    π(n) <= e^ε π(n−1) + δ        and        1 − π(n−1) <= e^ε (1 − π(n)) + δ,

and the largest such ``π`` keeps the most groups:
``π(n) = min(e^ε π(n−1) + δ, 1 − e^{−ε}(1 − π(n−1) − δ), 1)``.

Here every ``π(n)`` is rounded DOWN to a dyadic rational ``k/2^B`` (``B = 64``) and the
recursion is run on the rounded values with a rational ``E <= e^ε`` (50-digit arithmetic,
rounded down to ``2^-B``): ``p(n) = ⌊min(E p(n−1) + δ, 1 − (1 − p(n−1) − δ)/E, 1)⌋_B``.
Since ``E <= e^ε``, ``E p + δ <= e^ε p + δ`` and, where ``1 − p − δ >= 0``,
``(1 − p − δ)/E >= (1 − p − δ)e^{−ε}``; so both constraints hold for ``p`` with the TRUE
``e^ε`` -- :meth:`OptimalSelection.check_exact` re-checks them in exact rational arithmetic
(:class:`fractions.Fraction`) for every ``n`` up to the first ``p(n) = 1``.  A group is kept
by an exact Bernoulli(``k/2^B``) draw: ``B`` uniform bits compared with ``k``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ParameterError
from ..exact.words import WordStream
from ..params import check_delta, check_epsilon
from ..randomness import RngLike, resolve_rng
from .base import Guarantee, Mechanism
from .integers import IntegerLaw, check_counts

#: bits of the dyadic keep-probabilities
BITS = 64
#: the recursion must reach p = 1 within this many persons
MAX_STEPS = 1 << 16


def exp_below(epsilon: float, bits: int = BITS) -> Fraction:
    """A dyadic rational ``E <= e^ε`` within ``2^-bits + 10^-40`` of it."""
    with mpmath.workdps(60):
        v = mpmath.exp(mpmath.mpf(epsilon)) * (1 << bits)
        k = int(mpmath.floor(v)) - 1  # one step below: no rounding of exp can overshoot
    return Fraction(k, 1 << bits)


def keep_table(epsilon: float, delta: float, bits: int = BITS) -> list[Fraction]:
    """``[p(0), p(1), ..., p(N) = 1]``: the rounded optimal keep-probabilities."""
    E, d, one = exp_below(epsilon, bits), Fraction(delta), Fraction(1)
    scale = 1 << bits
    p = [Fraction(0)]
    while p[-1] < 1:
        if len(p) > MAX_STEPS:
            raise ParameterError(f"optimal selection at epsilon={epsilon!r}, delta={delta!r} "
                                 f"needs more than {MAX_STEPS} steps: raise epsilon or delta")
        prev = p[-1]
        x = min(E * prev + d, one - (one - prev - d) / E, one)
        p.append(Fraction(math.floor(x * scale), scale))
        if p[-1] <= prev and p[-1] < 1:
            raise ParameterError("optimal selection: the keep-probabilities stopped growing "
                                 f"at {bits} bits (delta={delta!r} too small)")
    return p


class OptimalSelection(Mechanism):
    """Keep a group of ``n`` persons with probability ``p(n)`` (module docstring); one group
    per person.  ``release(person_counts)`` returns the boolean keep mask.

    Supported: delta in (0, 1) with 2^-64 <= delta; epsilon such that p reaches 1 within
    65536 persons.
    """

    kind = "statistic"

    def __init__(self, *, epsilon: float, delta: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta < 2.0 ** -BITS:
            raise ParameterError(f"delta must be >= 2^-{BITS} for optimal selection")
        self.sensitivity = 1.0
        self.table = keep_table(self.epsilon, self.delta)
        #: numerators k of p(n) = k/2^BITS
        self.numerators = [int(p * (1 << BITS)) for p in self.table]
        self._freeze()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=self.delta, notion="approximate",
                         note=f"optimal partition selection, {len(self.table) - 1} steps")

    def check_exact(self) -> bool:
        """Both (ε, δ) constraints for every n, in exact rational arithmetic with a rational
        ``E`` <= e^ε (so they hold for e^ε), and p(0) = 0, p non-decreasing, p(N) = 1."""
        E, d, p = exp_below(self.epsilon), Fraction(self.delta), self.table
        ok = p[0] == 0 and p[-1] == 1
        for a, b in itertools.pairwise(p):
            ok &= a <= b <= E * a + d and 1 - a <= E * (1 - b) + d
        return bool(ok)

    def keep_probability(self, persons: int) -> float:
        n = min(max(int(persons), 0), len(self.table) - 1)
        return float(self.table[n])

    def release(self, true_value: ArrayLike, rng: RngLike = None) -> Any:
        u = check_counts(true_value, None, None).reshape(-1)  # refused before any word
        n = np.clip(u, 0, len(self.table) - 1)
        words = WordStream(resolve_rng(rng)).take(u.size)  # uniform 64-bit words
        return np.array([int(w) < self.numerators[k]
                         for w, k in zip(words.tolist(), n.tolist(), strict=True)], dtype=bool)

    BOOL_OUTPUTS = True  # the release is the keep mask

    def _output_set(self, y: NDArray[Any]) -> NDArray[np.bool_]:
        return (y == 0) | (y == 1)

    def noise(self, true_value: int | None = None) -> IntegerLaw:
        """The law of the keep indicator of a group of ``true_value`` persons (None: 1)."""
        p = self.keep_probability(1 if true_value is None else int(true_value))
        return IntegerLaw(np.array([0, 1]), np.array([1.0 - p, p]))

    def _log_law(self, u: tuple[int, ...]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """ln P(kept | n persons) and ln P(not kept), from the exact fractions."""
        p = self.table[min(max(int(u[0]), 0), len(self.table) - 1)]
        q = 1 - p  # exact: no cancellation near p = 1
        lp = [math.log(q) if q > 0 else -math.inf, math.log(p) if p > 0 else -math.inf]
        return np.array([0, 1]), np.array(lp)

    def privacy_model(self) -> Any:
        """One group: every pair (n, n ± 1) up to the first n with p(n) = 1."""
        from ..verify import DiscreteFamily

        N = len(self.table)
        pairs = [((n,), (n + 1,)) for n in range(N)] + [((n + 1,), (n,)) for n in range(N)]
        return DiscreteFamily(inputs=[], sensitivity=1.0, law=self._log_law, pairs=pairs)

    def privacy_profile(self) -> Any:
        from ..profile import claimed_profile

        return claimed_profile(self.epsilon, self.delta, note="optimal partition selection",
                               noise_at=self.noise)

    def __repr__(self) -> str:
        return f"OptimalSelection(epsilon={self.epsilon!r}, delta={self.delta!r})"
