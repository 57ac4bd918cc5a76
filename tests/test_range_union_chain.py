"""The union sampler's far-piece chain against 50-digit arithmetic: every encoded decision
probability 2^(−n)·x is within the proven relative error of the ideal one, and the parameters
use no transcendental function per value (numpy, Python and C give the same doubles)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpnoise import RangeLaplace
from dpnoise.exact.range_union import _REL_DECISION

INF = math.inf
G = 2.0**-5


def _ideal_decisions(us, c: int) -> list[mpmath.mpf]:
    """x_k = μ_{f_k}/(μ_{f_k} + R_{k+1}) of the module docstring, in 50-digit arithmetic."""
    M, P = us.M, us.P
    q = int(np.searchsorted(us._a_next, float(c), side="right"))
    two = mpmath.mpf(2)

    def seg(n):  # 1 − 2^(−n/M) (n may be inf)
        return mpmath.mpf(1) if n == INF else 1 - two ** (-mpmath.mpf(n) / M)

    a, b = us._a, us._b
    R = seg(c - a[q]) + seg(b[q] + 1 - c)
    xs = [mpmath.mpf(0)] * (P - 1)
    for k in range(P - 2, -1, -1):
        f = k + (k >= q)
        off = c - 1 - b[f] if f < q else a[f] - c
        mu = two ** (-mpmath.mpf(int(off)) / M) * seg(b[f] - a[f] + 1)
        xs[k] = mu / (mu + R)
        R += mu
    return xs


@pytest.mark.parametrize("dom, eps", [
    ([(0, 4), (6, 10)], 1.0),
    ([(-INF, 0), (1, 3), (3.5, 9), (12, INF)], 0.7),
    ([(0, 1), (40, 41)], 3.0),                      # a far piece: 2^(−n) with large n
])
def test_encoded_decisions_within_the_proven_error(dom, eps):
    mpmath.mp.dps = 50
    m = RangeLaplace(epsilon=eps, sensitivity=1.0, domain=dom, grid=G)
    us = m._union
    lo, hi = max(dom[0][0], -30.0), min(dom[-1][1], 45.0)
    xs = np.concatenate([np.linspace(lo, hi, 60), [e for p in dom for e in p if e != INF
                                                   and e != -INF]])
    cs = np.unique(m._centres(xs[m.domain.contains(xs)]))
    worst = 0.0
    for c in cs[:: max(1, cs.size // 40)].tolist():
        _, _, _, chain = us._law_params(int(c))
        for (n, x, flip), ideal in zip(chain, _ideal_decisions(us, int(c)), strict=True):
            enc = mpmath.ldexp(mpmath.mpf(x), -int(n))      # exact: x = K/2^52
            want = 1 - ideal if flip else ideal             # the encoded (smaller) outcome
            assert enc <= 0.5 + 2.0**-52 and want <= mpmath.mpf(0.5) + 1e-15
            worst = max(worst, float(abs(enc / want - 1)))
    assert worst <= _REL_DECISION


def test_parameters_are_the_same_doubles_in_numpy_and_python():
    """The array parameters (numpy) and the one-value twin's (Python floats) agree bit for bit
    over many centres (C is checked against numpy through the releases in
    tests/test_kernels_range_union.py)."""
    m = RangeLaplace(epsilon=0.3, sensitivity=1.0, domain=[(-INF, 0), (2, 3), (9, INF)], grid=G)
    us = m._union
    cs = np.unique(m._centres(np.linspace(-80, 120, 3001)))
    cs = cs[m._gd.reachable(cs)].astype(np.float64)
    q, sides, thr, chain = us._params(cs)
    for i in range(0, cs.size, 5):
        one = us.scalar.params(float(cs[i]))
        assert one[0] == q[i]
        assert one[1] == tuple(float(v[i]) for v in sides)
        assert one[2] == tuple(float(v[i]) for v in thr)
        assert one[3] == [(float(n[i]), float(x[i]), bool(f[i])) for n, x, f in chain]
