"""Brent's bounded scalar minimisation (golden section with parabolic steps), in pure Python.

The same iteration, step for step and operation for operation, as the "bounded" method of
``scipy.optimize.minimize_scalar`` (R. P. Brent, *Algorithms for Minimization without
Derivatives*, 1973, ch. 5, procedure ``localmin``; G. E. Forsythe, M. A. Malcolm,
C. B. Moler, *Computer Methods for Mathematical Computations*, 1977, ``fmin``), so it
returns the bit-identical minimiser -- without importing ``scipy.optimize`` (about 0.25 s),
which a mechanism whose constructor minimises a one-dimensional function would otherwise
pay on its first construction.  Every operation is an IEEE-754 double operation on Python
floats; ``numpy``'s scalar ``abs``/``sign``/``maximum`` used by the reference give the same
doubles for the finite values met here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

_SQRT_EPS = math.sqrt(2.2e-16)
_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


def _sign_or_one(v: float) -> float:
    """sign(v), and +1 for v == 0 (the reference's ``np.sign(v) + (v == 0)``)."""
    return 1.0 if v >= 0 else -1.0


def bounded_minimum(func: Callable[[float], float], lower: float, upper: float, *,
                    xatol: float = 1e-5, maxiter: int = 500) -> float:
    """x in [lower, upper] (a local) minimiser of ``func``, to within ``xatol``.

    Parameters
    ----------
    func : callable
        The function to minimise, float -> float (finite on the interval).
    lower, upper : float
        Finite bounds, ``lower <= upper``.
    xatol : float
        Absolute tolerance on x: the loop stops once |x − m| <= 2·tol − (b − a)/2 with
        m = (a + b)/2 and tol = sqrt(2.2e-16)·|x| + xatol/3 (Brent's criterion).
    maxiter : int
        Largest number of evaluations of ``func``.

    Returns
    -------
    float
        The best point found -- the same double as
        ``scipy.optimize.minimize_scalar(func, bounds=(lower, upper), method="bounded",
        options={"xatol": xatol, "maxiter": maxiter}).x``.

    Long on purpose: one loop of Brent's method, kept in the reference's order so that a
    reader can compare the two line by line.
    """
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower > upper:
        raise ValueError("bounds must be finite with lower <= upper")
    a, b = lower, upper
    fulc = a + _GOLDEN * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = func(x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # try a parabolic fit through the three best points
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * _sign_or_one(xm - xf)
            else:
                golden = True
        if golden:  # a golden-section step into the larger part
            e = (a - xf) if xf >= xm else (b - xf)
            rat = _GOLDEN * e
        x = xf + _sign_or_one(rat) * max(abs(rat), tol1)
        fu = func(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc in (xf, nfc):
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            break
    return float(xf)
