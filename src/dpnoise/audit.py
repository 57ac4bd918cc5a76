"""Black-box privacy auditor: does a sampler leak more than it claims?

Given a sampler ``f(x, n) -> n outputs`` (floats, or rows of floats, NaN = exception),
two neighbouring inputs x, x' and the claimed ε, :func:`audit` looks for an event S
with P[f(x) ∈ S] > e^ε·P[f(x') ∈ S] (in either direction):

1.  **Explore.** Draw ``n`` outputs under each input and build candidate events from
    them: value bins and tails (pooled quantiles), and *exact bit-pattern features* of
    the IEEE-754 doubles -- the position of the lowest set bit (the float's granularity),
    the residue of y/2^q modulo 2, 4, 8, 16 at the finest granularity q seen, individual
    exact values that repeat, and the exception (NaN).  A naive ``x + float_noise``
    produces doubles whose low bits depend on x (Gazeau et al. 2013 Ex. 1.1; Mironov 2012): e.g.
    every output of numpy's ``1 + laplace()`` is a multiple of 2^-53 while ~40% of the
    outputs of ``0 + laplace()`` are not.
2.  **Test.** Rank the events by a Clopper-Pearson lower bound on the explore draws and
    keep the best ``max_events`` per direction.  Draw ``n`` *fresh* outputs under each
    input and compute, for each kept event, a lower confidence bound on the privacy loss

        ε_low(S) = ln( (p_low(S | x) − δ) / p_high(S | x') )      (δ = claimed delta, default 0)

    with exact Clopper-Pearson bounds at level α/(2K) each (Bonferroni over the K tested
    events), so P[max ε_low > true loss] <= α.  The selection uses only the explore
    draws, so the test is honest.
3.  **Exact support test** (optional, white-box): ``support(y, x) -> bool array`` says
    exactly whether output y is reachable from input x (e.g. the bit-exact replica of
    numpy's sampler with bisection, :func:`numpy_laplace_reachable`).
    Any output of x unreachable from x' proves ε = ∞.

The verdict FAILS if ε_low > claimed ε or the exact support test finds an impossible
output.  A PASS is evidence, not proof: the auditor can only detect a leak larger
than about ln(n / ln(K/α)) (~7 for n = 20,000) and events in its families.

References:
  * I. Gazeau, D. Miller, C. Palamidessi, "Preserving differential privacy under
    finite-precision semantics", QAPL 2013, EPTCS 117, pp. 1-18, 2013.
  * I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy",
    ACM CCS 2012.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError
from .params import as_real_scalar, check_delta, check_epsilon, check_int

Sampler = Callable[[Any, int], ArrayLike]
Support = Callable[[NDArray[np.float64], Any], NDArray[np.bool_]]

_ZERO_LABEL = 100_000
_NAN_LABEL = 200_000
_INF_LABEL = 300_000
_OFF_GRID = -1
_TOO_BIG = -2


# ------------------------------------------------------------------ bit-pattern features
def lowest_bit_exponent(y: NDArray[np.float64]) -> NDArray[np.int64]:
    """k with y = odd·2^k (the float's granularity), exactly from the bit pattern.

    0 -> 100000, NaN -> 200000, ±inf -> 300000 (labels outside any exponent range).
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    bits = y.view(np.uint64)
    expo = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    mant = bits & np.uint64((1 << 52) - 1)
    sig = np.where(expo > 0, mant | np.uint64(1 << 52), mant)
    safe = np.where(sig == 0, np.uint64(1), sig)
    lowest = safe & (~safe + np.uint64(1))
    ctz = np.bitwise_count(lowest - np.uint64(1)).astype(np.int64)
    k = np.maximum(expo, 1) - 1075 + ctz
    k = np.where(y == 0, _ZERO_LABEL, k)
    k = np.where(np.isinf(y), _INF_LABEL, k)
    return np.where(np.isnan(y), _NAN_LABEL, k)


def residues(y: NDArray[np.float64], q_exp: int, modulus: int) -> NDArray[np.int64]:
    """(y / 2^q_exp) mod ``modulus``, or −1 if y is not a multiple of 2^q_exp, −2 if too big."""
    low = lowest_bit_exponent(y)
    scaled = np.ldexp(np.where(np.isfinite(y), y, 0.0), -q_exp)
    big = np.abs(scaled) >= 2.0**62
    ints = np.where(big, 0.0, scaled).astype(np.int64)
    r = np.mod(ints, modulus)
    r = np.where(low < q_exp, _OFF_GRID, r)
    r = np.where(big, _TOO_BIG, r)
    r = np.where(y == 0, 0, r)
    return np.where(np.isfinite(y), r, _NAN_LABEL)


def _row_keys(out: NDArray[np.float64]) -> NDArray[np.uint64]:
    """One 64-bit key per output row from the exact bit patterns."""
    bits = np.ascontiguousarray(out).view(np.uint64).reshape(out.shape[0], -1)
    key = np.zeros(out.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):
            key = key * np.uint64(0x9E3779B97F4A7C15) + bits[:, j]
    return key


# ------------------------------------------------------------------ events
@dataclass(frozen=True)
class Event:
    """A measurable set of outputs: ``feature`` labels compared with ``value`` by ``op``."""

    feature: str
    op: str  # "==", "<=", ">="
    value: float | int  # an int for the exact-value feature (64-bit key of the bit patterns)

    def describe(self) -> str:
        return f"{self.feature} {self.op} {self.value:g}"


@dataclass
class _Features:
    """Feature extractors fixed from the explore draws (applied unchanged to test draws)."""

    columns: int
    cuts: list[NDArray[np.float64]]
    q_exp: list[int | None]

    def labels(self, out: NDArray[np.float64]) -> dict[str, NDArray[Any]]:
        lab: dict[str, NDArray[Any]] = {}
        nan_row = np.any(np.isnan(out), axis=1)
        lab["exception"] = nan_row.astype(np.int64)
        lab["value"] = _row_keys(out)
        for j in range(self.columns):
            col = out[:, j]
            tag = "" if self.columns == 1 else f"[{j}]"
            b = np.searchsorted(self.cuts[j], col, side="right").astype(np.int64)
            lab[f"bin{tag}"] = np.where(np.isnan(col), -1, b)
            lab[f"lowbit{tag}"] = lowest_bit_exponent(col)
            q = self.q_exp[j]
            if q is not None:
                for m in (2, 4, 8, 16):
                    lab[f"residue{tag} mod {m} at 2^{q}"] = residues(col, q, m)
        return lab


def _as_rows(values: ArrayLike, n: int, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ParameterError(f"the sampler must return {n} outputs (shape (n,) or (n, k)) for "
                             f"{name}, got shape {np.shape(values)}")
    return arr


def _build_features(a: NDArray[np.float64], b: NDArray[np.float64], bins: int) -> _Features:
    pooled = np.concatenate([a, b])
    cuts, q_exp = [], []
    for j in range(pooled.shape[1]):
        col = pooled[:, j]
        fin = col[np.isfinite(col)]
        qs = np.unique(np.quantile(fin, np.linspace(0, 1, bins + 1)[1:-1])) if fin.size else (
            np.array([]))
        cuts.append(qs)
        low = lowest_bit_exponent(fin[fin != 0]) if fin.size else np.array([], dtype=np.int64)
        q_exp.append(int(low.min()) if low.size else None)
    return _Features(pooled.shape[1], cuts, q_exp)


def _candidates(labels_a: dict[str, NDArray[Any]], labels_b: dict[str, NDArray[Any]],
                max_values: int) -> list[Event]:
    events: list[Event] = []
    for name, la in labels_a.items():
        lb = labels_b[name]
        if name == "value":
            both = np.concatenate([la, lb])
            vals, counts = np.unique(both, return_counts=True)
            top = vals[np.argsort(counts)[::-1][:max_values]]
            top = top[counts[np.argsort(counts)[::-1][:max_values]] >= 3]
            events += [Event(name, "==", int(v)) for v in top.tolist()]  # exact 64-bit keys
            continue
        vals = np.unique(np.concatenate([la, lb]))
        if vals.size > 4096:
            vals = vals[np.linspace(0, vals.size - 1, 4096).astype(int)]
        for v in vals.tolist():
            events.append(Event(name, "==", v))
            if name.startswith(("bin", "lowbit")):
                events.append(Event(name, "<=", v))
                events.append(Event(name, ">=", v))
    return events


def _mask(labels: dict[str, NDArray[Any]], ev: Event) -> NDArray[np.bool_]:
    lab = labels[ev.feature]
    if ev.feature == "value":
        return lab == np.uint64(ev.value)
    if ev.op == "==":
        return lab == ev.value
    if ev.op == "<=":
        return lab <= ev.value
    return lab >= ev.value


def _cp_low(k: NDArray[Any], n: int, a: float) -> NDArray[np.float64]:
    from scipy import stats  # scipy.stats takes ~1 s to import: only when auditing

    k = np.asarray(k, dtype=np.float64)
    return np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1e-300), n - k + 1), 0.0)


def _cp_high(k: NDArray[Any], n: int, a: float) -> NDArray[np.float64]:
    from scipy import stats

    k = np.asarray(k, dtype=np.float64)
    return np.where(k < n, stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1e-300)), 1.0)


def _loss_lower(c1: NDArray[Any], c2: NDArray[Any], n1: int, n2: int,
                a: float, delta: float = 0.0) -> NDArray[np.float64]:
    """Lower confidence bound on the ε needed for P1(S) <= e^ε·P2(S) + δ."""
    lo = np.maximum(_cp_low(c1, n1, a) - delta, 0.0)
    hi = _cp_high(c2, n2, a)
    with np.errstate(divide="ignore"):
        return np.log(lo) - np.log(hi)


# ------------------------------------------------------------------ report
@dataclass(frozen=True)
class EventResult:
    event: str
    direction: str  # "x vs x'" means P[S|x] > e^eps P[S|x']
    count: int
    count_other: int
    epsilon_lower: float


@dataclass(frozen=True)
class AuditReport:
    """What the auditor found.  ``passed`` is False when a leak above the claim is shown.

    Parameters
    ----------
    claimed_epsilon : float
        The ε the sampler claims.
    x, x_prime : object
        The neighbouring inputs.
    n : int
        Samples per input and phase (explore, then test).
    alpha : float
        The overall significance level.
    epsilon_lower_bound : float
        The largest Clopper–Pearson lower bound on the loss over the tested events.
    events : tuple of EventResult
        The tested events, strongest first.
    support_checked, support_impossible, support_impossible_reverse : int, default 0
        Outputs checked for IEEE-754 support, and how many are impossible under the other
        input (each direction).
    notes : tuple of str, default ()
        Remarks about the audit.
    """

    claimed_epsilon: float
    x: Any
    x_prime: Any
    n: int
    alpha: float
    epsilon_lower_bound: float
    events: tuple[EventResult, ...]
    support_checked: int = 0
    support_impossible: int = 0
    support_impossible_reverse: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    @property
    def impossible_fraction(self) -> float | None:
        """The share of checked outputs impossible under the other input (None if none checked)."""
        return self.support_impossible / self.support_checked if self.support_checked else None

    @property
    def support_failed(self) -> bool:
        """Whether some output is impossible under the neighbouring input (infinite loss)."""
        return self.support_impossible > 0 or self.support_impossible_reverse > 0

    @property
    def passed(self) -> bool:
        """Whether no leak above the claim was shown."""
        return (not self.support_failed) and self.epsilon_lower_bound <= self.claimed_epsilon

    @property
    def best_event(self) -> EventResult | None:
        """The strongest tested event (None if none)."""
        return self.events[0] if self.events else None

    def summary(self) -> str:
        """A human-readable summary of the audit.

        Returns
        -------
        str
            Several lines: the claim, the inputs, the bound, the strongest event, the verdict.
        """
        lines = [
            f"claimed epsilon:         {self.claimed_epsilon:.6g}",
            f"inputs:                  x = {self.x!r}, x' = {self.x_prime!r}",
            f"samples per input:       {self.n} explore + {self.n} test",
            f"epsilon lower bound:     {_fmt(self.epsilon_lower_bound)} "
            f"(confidence {1 - self.alpha:.4g})",
        ]
        if self.best_event is not None:
            e = self.best_event
            lines.append(f"strongest event:         {e.event} ({e.direction}: {e.count} vs "
                         f"{e.count_other} of {self.n})")
        if self.support_checked:
            frac = self.impossible_fraction or 0.0
            lines.append(
                f"exact support test:      {self.support_impossible} of {self.support_checked} "
                f"outputs from x are impossible under x' ({100 * frac:.1f}%)"
                f"; reverse: {self.support_impossible_reverse}")
        lines += [f"note: {s}" for s in self.notes]
        lines.append("result:                  " + ("PASS (no leak above the claim found)"
                                                    if self.passed else "FAIL (leak found)"))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict.

        Returns
        -------
        dict
            Every field, the events as dicts, and ``passed``.
        """
        return {
            "claimed_epsilon": self.claimed_epsilon,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "passed": self.passed,
            "n": self.n,
            "alpha": self.alpha,
            "support_checked": self.support_checked,
            "support_impossible": self.support_impossible,
            "support_impossible_reverse": self.support_impossible_reverse,
            "events": [e.__dict__ for e in self.events],
            "notes": list(self.notes),
        }


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) and x > 0 else f"{x:.4g}"


# ------------------------------------------------------------------ the auditor
def audit(
    sampler: Sampler,
    x: Any,
    x_prime: Any,
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    n: int = 20_000,
    alpha: float = 1e-3,
    bins: int = 64,
    max_events: int = 8,
    support: Support | None = None,
    support_samples: int = 2_000,
) -> AuditReport:
    """Audit ``sampler`` on the neighbouring inputs ``x``, ``x_prime`` (see module docstring).

    A black-box test: it looks for outputs that are impossible under the other input (exact
    IEEE-754 support tests) and for events whose empirical privacy loss exceeds the claim
    with a Clopper–Pearson lower bound (explore on one sample, test on a fresh one, Bonferroni
    over the chosen events).

    Parameters
    ----------
    sampler : callable
        ``sampler(x, n)`` returns n releases for input x.
    x, x_prime : object
        Neighbouring inputs.
    claimed_epsilon : float
        The claimed ε.
    claimed_delta : float, default 0.0
        The claimed δ.
    n : int, default 20000
        Samples per input and phase (>= 100).
    alpha : float, default 1e-3
        Significance level in (0, 1).
    bins : int, default 64
        Histogram bins for the candidate events.
    max_events : int, default 8
        Events tested per direction.
    support : callable or None, default None
        ``support(x, y)``: whether output y is possible under input x (exact test).
    support_samples : int, default 2000
        Outputs checked with ``support``.

    Returns
    -------
    AuditReport
        The lower bound on the loss, the events and the verdict.

    Raises
    ------
    ParameterError
        If a parameter is out of range or the sampler returns the wrong shape.
    """
    claimed_epsilon = check_epsilon(claimed_epsilon, name="claimed_epsilon")
    n = check_int("n", n, lower=100)
    bins = check_int("bins", bins, lower=1)  # 0 bins or events: nothing tested, a vacuous pass
    max_events = check_int("max_events", max_events, lower=1)
    support_samples = check_int("support_samples", support_samples, lower=1)
    if not callable(sampler) or (support is not None and not callable(support)):
        raise ParameterError("sampler (and support, if given) must be callable")
    alpha = as_real_scalar("alpha", alpha)
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must be in (0, 1), got {alpha!r}")
    claimed_delta = check_delta(claimed_delta, name="claimed_delta", allow_zero=True)
    ea = _as_rows(sampler(x, n), n, "x")
    eb = _as_rows(sampler(x_prime, n), n, "x'")
    feats = _build_features(ea, eb, bins)
    la, lb = feats.labels(ea), feats.labels(eb)
    cands = _candidates(la, lb, max_values=256)
    counts_a = np.array([np.count_nonzero(_mask(la, e)) for e in cands])
    counts_b = np.array([np.count_nonzero(_mask(lb, e)) for e in cands])
    chosen: list[tuple[Event, bool]] = []
    for forward in (True, False):
        c1, c2 = (counts_a, counts_b) if forward else (counts_b, counts_a)
        score = _loss_lower(c1, c2, n, n, 0.05, claimed_delta)
        for i in np.argsort(score)[::-1][:max_events]:
            if np.isfinite(score[i]):
                chosen.append((cands[i], forward))
    ta = _as_rows(sampler(x, n), n, "x")
    tb = _as_rows(sampler(x_prime, n), n, "x'")
    ta_lab, tb_lab = feats.labels(ta), feats.labels(tb)
    level = alpha / (2 * max(1, len(chosen)))
    results = []
    for ev, forward in chosen:
        k1 = int(np.count_nonzero(_mask(ta_lab if forward else tb_lab, ev)))
        k2 = int(np.count_nonzero(_mask(tb_lab if forward else ta_lab, ev)))
        lower = float(_loss_lower(np.array([k1]), np.array([k2]), n, n, level,
                                  claimed_delta)[0])
        results.append(EventResult(ev.describe(), "x vs x'" if forward else "x' vs x",
                                   k1, k2, lower))
    results.sort(key=lambda r: r.epsilon_lower, reverse=True)
    eps_low = max([r.epsilon_lower for r in results], default=-math.inf)
    checked = imp = imp_rev = 0
    notes: list[str] = []
    if support is not None:
        m = min(support_samples, n)
        ya, yb = ta[:m], tb[:m]
        if ya.shape[1] != 1:
            raise ParameterError("the exact support test is for 1-D outputs")
        imp = int(np.count_nonzero(~np.asarray(support(ya[:, 0], x_prime), dtype=bool)))
        imp_rev = int(np.count_nonzero(~np.asarray(support(yb[:, 0], x), dtype=bool)))
        checked = m
        if imp or imp_rev:
            notes.append("exact support test: some outputs are impossible under the other "
                         "input, so the true loss is infinite")
    return AuditReport(claimed_epsilon=claimed_epsilon, x=x, x_prime=x_prime, n=n, alpha=alpha,
                       epsilon_lower_bound=eps_low, events=tuple(results),
                       support_checked=checked, support_impossible=imp,
                       support_impossible_reverse=imp_rev, notes=tuple(notes))


# ------------------------------------------------------------------ numpy's Laplace, bit-exact
_INV_2_53 = 1.0 / 9007199254740992.0
_Z_MAX = (1 << 53) - 1


def numpy_laplace_value(z: int, loc: float, scale: float) -> float:
    """numpy's ``random_laplace`` for U = z·2^-53 (``next_double``), replicated bit for bit.

    numpy (``numpy/random/src/distributions/distributions.c``): if U >= 0.5,
    loc − scale·log(2.0 − U − U); else loc + scale·log(U + U); U = 0 is redrawn.
    ``math.log`` is the platform libm ``log`` that numpy's C code calls.
    """
    U = z * _INV_2_53
    if U >= 0.5:
        return loc - scale * math.log(2.0 - U - U)
    return loc + scale * math.log(U + U)


def numpy_laplace_from_raw(raw: NDArray[np.uint64], loc: float, scale: float) -> list[float]:
    """Replica outputs from raw 64-bit words (``bit_generator.random_raw``); z = word >> 11."""
    out = []
    for w in raw.tolist():
        z = w >> 11
        if z:
            out.append(numpy_laplace_value(z, loc, scale))
    return out


def _reachable_one(y: float, loc: float, scale: float) -> bool:
    if not math.isfinite(y):
        return False
    # the output is non-decreasing in z: start near the real-arithmetic inverse, then bisect
    t = (y - loc) / scale
    try:
        u = 0.5 * math.exp(t) if t < 0 else 1.0 - 0.5 * math.exp(-t)
    except OverflowError:
        u = 1.0
    z0 = min(max(int(u * 2.0**53), 1), _Z_MAX)
    step = 4
    lo, hi = z0, z0
    while lo > 1 and numpy_laplace_value(lo, loc, scale) >= y:
        lo, step = max(1, lo - step), step * 2
    step = 4
    while hi < _Z_MAX and numpy_laplace_value(hi, loc, scale) < y:
        hi, step = min(_Z_MAX, hi + step), step * 2
    if numpy_laplace_value(lo, loc, scale) >= y:
        return numpy_laplace_value(lo, loc, scale) == y
    if numpy_laplace_value(hi, loc, scale) < y:
        return False
    while hi - lo > 1:  # invariant: value(lo) < y <= value(hi)
        mid = (lo + hi) // 2
        if numpy_laplace_value(mid, loc, scale) < y:
            lo = mid
        else:
            hi = mid
    return numpy_laplace_value(hi, loc, scale) == y


def numpy_laplace_reachable(y: ArrayLike, loc: float, scale: float = 1.0) -> NDArray[np.bool_]:
    """Exact support oracle: can numpy's ``Generator.laplace(loc, scale)`` output y?

    Searches z ∈ [1, 2^53) for value(z) == y (the replica is monotone in z).
    """
    ys = np.asarray(y, dtype=np.float64).reshape(-1)
    return np.array([_reachable_one(float(v), float(loc), float(scale)) for v in ys], dtype=bool)


def numpy_rounded_reachable(j: int, loc: float, scale: float, grid: float) -> bool:
    """Can numpy's Laplace at ``loc`` followed by exact rounding to ``grid`` output j·grid?

    Rounding (round-half-even of y/L, exact for a power-of-two L) is monotone and so is
    the replica, so bisect for the smallest z whose rounded output is >= j.
    """
    def cell(z: int) -> int:
        return round(numpy_laplace_value(z, loc, scale) / grid)

    lo, hi = 1, _Z_MAX
    if cell(hi) < j:
        return False
    if cell(lo) >= j:
        return cell(lo) == j
    while hi - lo > 1:  # invariant: cell(lo) < j <= cell(hi)
        mid = (lo + hi) // 2
        if cell(mid) < j:
            lo = mid
        else:
            hi = mid
    return cell(hi) == j
