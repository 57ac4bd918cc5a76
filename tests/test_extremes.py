"""Mechanisms at the extremes: every bad numeric parameter is a ParameterError naming
it, quickly; the corners of every supported range construct in a few seconds; true values are
numbers only; noise() takes one true value; the CLI exits 2 with ``error: ...``.

The mechanisms are the test suite's one list (``tests/registry.py``): every entry of the
library's registry, built from its example request through the registry's builder (the
CLI's and the custodian's path), and the public mechanisms outside the registry
(:data:`tests.registry.OUTSIDE`), built from their classes.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import math
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import dpnoise as dp
from dpnoise import ParameterError
from dpnoise.mechanisms import registry
from dpnoise.params import Interval

from .registry import OUTSIDE, build_registered, privacy_fields, request_fields

# the reproduction-only PaperHalfLineLaplaceUnsafe warns on every construction and scale
pytestmark = pytest.mark.filterwarnings("ignore:.*NOT differentially private:UserWarning")

LIMIT_S = 5  # per construction


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def _raise(*_: Any) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def mechanism_specs() -> dict[str, tuple[Callable[..., Any], dict[str, Any], Any, tuple[str, ...]]]:
    """name -> (factory, valid keyword arguments, a true value inside the domain, the numeric
    privacy parameters to sweep): every registry entry of kind "value" and every mechanism
    of :data:`OUTSIDE` -- recomputed from the registry, so a new entry is swept."""
    specs: dict[str, tuple[Callable[..., Any], dict[str, Any], Any, tuple[str, ...]]] = {}
    for name, entry in registry.entries().items():
        specs[name] = (functools.partial(build_registered, name),
                       request_fields(entry.example), entry.example_value,
                       privacy_fields(entry))
    for name, (cls, kw, x) in OUTSIDE.items():
        specs[name] = (cls, kw, x, tuple(p for p, v in kw.items() if isinstance(v, float)))
    return specs


SPECS = mechanism_specs()
BAD = [math.nan, math.inf, -math.inf, 0.0, -1.0, 5e-324, 1e308, "1", None, True, 1 + 2j, b"1"]
CASES = [(name, p, v) for name, spec in SPECS.items() for p in spec[3] for v in BAD
         if not (name == "PlanarLaplace" and p == "grid" and v == 1e308)]


def _ids(case: tuple[str, str, Any]) -> str:
    return f"{case[0]}-{case[1]}-{case[2]!r}"


def _class_of(name: str) -> type:
    factory, kw, _x, _p = SPECS[name]
    return type(factory(**kw))


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_bad_parameter_is_a_clean_parameter_error(case: tuple[str, str, Any]) -> None:
    name, param, value = case
    factory, kw, _x, _p = SPECS[name]
    with time_limit(LIMIT_S), pytest.raises(ParameterError) as info:
        factory(**{**kw, param: value})
    assert param.split("/")[0] in str(info.value) or "grid" in str(info.value)


def test_a_new_registry_entry_is_swept_without_editing_a_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry added to the library's registry appears in the harness's cases and in the
    extremes' sweeps (bad parameters, supported corners) with nothing added here."""
    from .registry import registered_cases

    base = registry.entries()["laplace"]
    extra = registry.MechanismEntry("laplace-copy", "a copy", base.add_arguments, base.build,
                                    registry.Request(epsilon=0.5), 1.0)
    monkeypatch.setattr(registry, "ENTRIES", [*registry.ENTRIES, extra])
    assert "registry:laplace-copy" in {c.id for c in registered_cases()}
    specs = mechanism_specs()
    assert specs["laplace-copy"][1] == {"epsilon": 0.5, "sensitivity": 1.0}
    assert specs["laplace-copy"][3] == ("epsilon", "sensitivity")
    assert list(_corners(type(base.build(extra.example)), specs["laplace-copy"][1]))


def test_every_mechanism_states_its_supported_ranges() -> None:
    for name in SPECS:
        cls = _class_of(name)
        assert "epsilon" in cls.SUPPORTED, name
        assert "Supported:" in (cls.__doc__ or ""), name
        assert all(isinstance(r, Interval) for r in cls.SUPPORTED.values()), name


def _corners(cls: Any, kw: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every combination of the ends of the supported ranges (open ends nudged inside)."""
    names = [p for p in cls.SUPPORTED if p in kw]
    ends = []
    for p in names:
        r = cls.SUPPORTED[p]
        lo = math.nextafter(r.lo, math.inf) if r.lo_open else r.lo
        hi = r.hi * (1 - 1e-9) if r.hi_open else r.hi
        ends.append((lo, hi))
    for combo in itertools.product(*ends):
        yield {**kw, **dict(zip(names, combo, strict=True))}


CORNERS = [(name, c) for name, (_f, kw, _x, _p) in SPECS.items()
           for c in _corners(_class_of(name), kw)]


@pytest.mark.slow
@pytest.mark.parametrize("case", CORNERS, ids=[f"{n}-{sorted(c.items())}" for n, c in CORNERS])
def test_supported_corners_construct_quickly(case: tuple[str, dict[str, Any]]) -> None:
    """Each corner constructs (or, for a combination the box admits but the calibration
    cannot meet, refuses with a ParameterError) within the time limit."""
    name, kw = case
    factory = SPECS[name][0]
    t0 = time.perf_counter()
    with time_limit(3 * LIMIT_S), contextlib.suppress(ParameterError):
        factory(**kw)
    assert time.perf_counter() - t0 < 3 * LIMIT_S


@pytest.mark.parametrize("bad", [True, b"1", "1", "abc", None, 1 + 2j, [[1.0, 2.0], [3.0]],
                                 [True, False], np.array(["1"]), np.array([1 + 1j])])
@pytest.mark.parametrize("name", [n for n in SPECS if np.ndim(SPECS[n][2]) == 0])
def test_release_refuses_non_numbers(name: str, bad: Any) -> None:
    factory, kw, _x, _p = SPECS[name]
    m = factory(**kw)
    with time_limit(LIMIT_S), pytest.raises(ParameterError):
        m.release(bad, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", list(SPECS))
def test_noise_takes_one_true_value(name: str) -> None:
    factory, kw, x, _p = SPECS[name]
    m = factory(**kw)
    m.noise(x)  # one value (one point for the vector mechanisms) is fine
    with pytest.raises(ParameterError, match="noise"):
        m.noise(np.stack([x, x]))


def test_huge_true_values_are_refused_before_any_word() -> None:
    class Counting:
        words = 0

        def random_raw(self, n: int) -> np.ndarray:  # pragma: no cover - must not be called
            Counting.words += n
            return np.zeros(n, dtype=np.uint64)

    for name in ("laplace", "truncated-laplace", "staircase", "analytic-gaussian", "gaussian"):
        factory, kw, _x, _p = SPECS[name]
        with pytest.raises(ParameterError):
            factory(**kw).release(np.array([1.0, 1e300]), rng=np.random.default_rng(0))


def test_exact_grid_index_at_the_half_counterexample() -> None:
    from dpnoise.grid import to_index

    L = 2.0**-3
    x = (0.5 - 2.0**-54) * L
    assert math.floor(x / L + 0.5) == 1  # the float formula is wrong here
    assert to_index(np.array([x, -x, 0.5 * L, -0.5 * L]), L).tolist() == [0, 0, 1, 0]
    m = dp.Laplace(epsilon=1.0, sensitivity=1.0, grid=L)
    assert m.noise(x).center == 0.0


CLI_CASES = [
    ["release", "laplace", "--epsilon", "5e-324", "--sensitivity", "1", "1"],
    ["release", "range-laplace", "--epsilon", "1e-8", "--domain", "0,1", "0.5"],
    ["release", "laplace", "--epsilon", "1", "--sensitivity", "1e308", "1"],
    ["release", "laplace", "--epsilon", "1", "--sensitivity", "1", "1e300"],
]


@pytest.mark.parametrize("argv", CLI_CASES, ids=[" ".join(a[1:3]) for a in CLI_CASES])
def test_cli_exits_2_with_error(argv: list[str]) -> None:
    from dpnoise.cli import main

    err = io.StringIO()
    with time_limit(3 * LIMIT_S), contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse errors
            code = exc.code
    assert code == 2
    assert "error:" in err.getvalue() and "Traceback" not in err.getvalue()


class _CountingSource:
    """A RandomSource wrapper counting the words drawn."""

    def __init__(self) -> None:
        self.inner = dp.SeededRandom(1)
        self.count = 0

    def words(self, n: int) -> np.ndarray:
        self.count += n
        return self.inner.words(n)


def test_range_laplace_union_same_words_at_edge_and_middle() -> None:
    """Unions: one UnionSampler built at construction; a release draws the same number of
    words at a piece's edge as in its middle, on the first release as on later ones
    (tests/test_range_laplace_union.py also compares the executed lines)."""
    counts = []
    for x in (8.0, 4.0):
        m = dp.RangeLaplace(epsilon=0.5, sensitivity=1.0, domain=[(0.0, 8.0), (12.0, 24.0)])
        for _ in range(2):
            src = _CountingSource()
            m.release(np.full(1000, x), rng=src)
            counts.append(src.count)
    # P + 2 = 4 words per value, plus extensions on events of probability 2^-12 that depend
    # on the (seeded, identical) words only
    assert counts == [counts[0]] * 4 and 4000 <= counts[0] < 4100


class _LoggingSource:
    """A seeded RandomSource that logs every request (method and size)."""

    def __init__(self) -> None:
        self.inner = dp.SeededRandom(3)
        self.log: list[tuple[str, int]] = []

    def words(self, n: int) -> np.ndarray:
        self.log.append(("words", int(n)))
        return self.inner.words(n)

    def fill(self, buffer: np.ndarray, n: int) -> None:
        self.log.append(("fill", int(n)))
        self.inner.fill(buffer, n)


def _operations(fn: Callable[[], Any]) -> list[tuple[Any, ...]]:
    """Every line of dpnoise executed by ``fn()``, with the shape and dtype of each numpy
    array (type name of anything else) among the frame's locals at that line."""
    import sys

    src = dp.__file__.rsplit("/", 1)[0]
    ops: list[tuple[Any, ...]] = []

    def describe(v: Any) -> Any:
        return (v.shape, str(v.dtype)) if isinstance(v, np.ndarray) else type(v).__name__

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            ops.append((frame.f_code.co_filename, frame.f_lineno,
                        tuple((k, describe(v)) for k, v in sorted(frame.f_locals.items()))))
        return local

    def call(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(src) else None

    sys.settrace(call)
    try:
        fn()
    finally:
        sys.settrace(None)
    return ops


@pytest.mark.parametrize(("domain", "edge", "middle"), [
    ((0.0, 100.0), 0.0, 50.0), ((0.0, 100.0), 100.0, 50.0), ((0.0, math.inf), 0.0, 100.0),
    ((-math.inf, 5.0), 5.0, -40.0), ((-math.inf, math.inf), 0.0, 1e6)])
def test_range_laplace_convex_same_operations_at_edge_and_middle(
        domain: Any, edge: float, middle: float) -> None:
    """On an interval / half-line / the line every release -- one scalar, a
    repeated value, distinct values -- runs the same lines of dpnoise on numpy arrays of
    the same shapes and dtypes and asks the random source for the same words, at the edge
    and in the middle, and no per-centre state exists or is filled."""
    m = dp.RangeLaplace(epsilon=0.5, sensitivity=1.0, domain=domain)
    conv = m._conv
    state = {k: id(v) for k, v in vars(conv).items()}
    offsets = np.linspace(0.0, 0.9, 20_000) * (1.0 if edge <= middle else -1.0)
    for make in (lambda x: x, lambda x: np.full(20_000, x), lambda x: x + offsets,
                 lambda x: float(np.float64(x))):
        seen = []
        for x in (edge, middle):
            src = _LoggingSource()
            ops = _operations(lambda x=x, src=src, make=make: m.release(make(x), rng=src))
            seen.append((ops, src.log))
        assert seen[0][1] == seen[1][1]  # the same word requests
        assert len(seen[0][0]) == len(seen[1][0])
        assert seen[0][0] == seen[1][0]  # the same lines, array shapes and dtypes
    m.noise(edge)
    m.noise(middle)
    assert not hasattr(m, "_samplers")  # no per-centre sampler anywhere
    assert {k: id(v) for k, v in vars(conv).items()} == state  # nothing cached per centre
