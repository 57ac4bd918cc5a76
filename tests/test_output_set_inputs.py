"""``in_output_set`` of every mechanism takes the release path's input rule: a real number
or a rectangular real array (NaN and infinities are numbers, and simply not outputs);
str, bytes, None, complex, object and ragged input -- and bool, except from a mechanism
whose release *is* a boolean keep mask -- is refused with a ParameterError naming
``outputs``, never another exception."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnoise import ParameterError, SeededRandom
from dpnoise.mechanisms import registry

from .registry import OUTSIDE


@functools.cache
def _cases() -> dict[str, tuple[Any, Any]]:
    """name -> (a mechanism, a true value it takes): every registry entry and OUTSIDE."""
    out = {name: (cls(**kwargs), value) for name, (cls, kwargs, value) in OUTSIDE.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the paper's non-private reproduction warns
        for name, entry in registry.entries(None).items():
            value = entry.example_value
            if entry.kind == "statistic":
                value = STATISTIC_INPUTS.get(name, COUNTS)
            out[name] = (entry.build(entry.example), value)
    return out


#: a true input of each statistic entry (the registry's examples are the value entries')
_DATA = np.linspace(0.5, 9.5, 40)
STATISTIC_INPUTS = {"noisy-max-quantile": np.arange(5.0), "interval-quantile": _DATA,
                    "multi-quantile": _DATA, "private-bounds": _DATA}
COUNTS = np.array([3, 0, 40])  # per-group counts: the thresholded and selection entries

NAMES = sorted([*registry.entries(None), *OUTSIDE])


def mechanism(name: str) -> Any:
    return _cases()[name][0]


def releases_booleans(m: Any) -> bool:
    return bool(getattr(m, "BOOL_OUTPUTS", False))


_JUNK = st.sampled_from([
    "a", "1", b"1", None, 1j, object(), {"a": 1}, [1, "x"], [None], [[1.0, 2.0], [3.0]],
    np.array(["a"]), np.array([1 + 2j]), np.array([None], dtype=object), [1.0, None],
])
_BOOLS = st.sampled_from([True, np.bool_(False), [True, False], np.array([[True], [False]])])


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(name=st.sampled_from(NAMES),
       drawn=st.tuples(st.just(False), _JUNK) | st.tuples(st.just(True), _BOOLS))
def test_junk_outputs_are_refused_with_a_parameter_error(name: str,
                                                        drawn: tuple[bool, Any]) -> None:
    m = mechanism(name)
    boolean, junk = drawn
    if boolean and releases_booleans(m):
        ok = m.in_output_set(junk)
        assert np.asarray(ok).dtype == bool and np.all(ok)
        return
    with pytest.raises(ParameterError, match="outputs"):
        m.in_output_set(junk)


def _one_output(name: str) -> np.ndarray:
    """One released value (one row/point for a vector mechanism) as an array."""
    m, value = _cases()[name]
    if name in OUTSIDE:
        out = m.release(value, rng=SeededRandom(3))
        return np.asarray(getattr(out, "points", out), dtype=np.float64).reshape(1, -1)
    if np.ndim(value) == 0:
        value = np.asarray([value])
    return np.asarray(m.release(value, rng=SeededRandom(3))).reshape(-1)


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(name=st.sampled_from(NAMES),
       value=st.floats(allow_nan=True, allow_infinity=True)
       | st.integers(-(1 << 80), 1 << 80) | st.sampled_from([math.nan, -math.inf]))
def test_real_outputs_get_a_boolean_answer(name: str, value: Any) -> None:
    m = mechanism(name)
    width = _one_output(name).shape[-1] if name in OUTSIDE else 1
    arr = np.full((2, width), float(value)) if name in OUTSIDE else value
    ok = np.asarray(m.in_output_set(arr))
    assert ok.dtype == bool
    if not math.isfinite(float(value)) and name != "PlanarLaplace":
        assert not ok.any()  # NaN and infinities are never outputs (planar: the exception)


@pytest.mark.parametrize("name", NAMES)
def test_released_values_are_in_the_output_set(name: str) -> None:
    m = mechanism(name)
    y = _one_output(name)
    assert np.all(m.in_output_set(y))
    assert np.all(m.in_output_set(y.tolist()))  # a nested list is read like the array


@pytest.mark.parametrize("domain", [(0.0, math.inf), (-math.inf, 0.0)])
def test_infinities_are_not_outputs_of_a_half_line_domain(domain: tuple[float, float]) -> None:
    from dpnoise import RangeLaplace

    m = RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=domain)
    assert not m.in_output_set([math.inf, -math.inf, math.nan]).any()


COUNT_NAMES = sorted(n for n in registry.entries(None) if registry.entries(None)[n].kind ==
                     "statistic" and n not in STATISTIC_INPUTS)


class _NoWords:
    def words(self, n: int) -> np.ndarray:
        raise AssertionError("a word was drawn before the input was checked")


@pytest.mark.parametrize("name", COUNT_NAMES)
def test_count_statistics_refuse_junk_and_fractions_before_any_word(name: str) -> None:
    """The thresholded and selection mechanisms read per-group counts: junk, and a fraction
    (it was silently truncated: 2.7 released as the count 2), are ParameterErrors raised
    before any word is drawn; integer-valued counts are taken as before."""
    m = mechanism(name)
    for bad in ("a", None, [1, "x"], [[1, 2], [3]], [2.7], np.array([1.5, 2.0]), [np.nan]):
        with pytest.raises(ParameterError, match="true_value"):
            m.release(bad, rng=_NoWords())
    a = m.release(COUNTS, rng=SeededRandom(3))
    b = m.release(COUNTS.astype(np.float64), rng=SeededRandom(3))
    np.testing.assert_array_equal(a, b)
