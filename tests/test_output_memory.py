"""A release whose output cannot be allocated is refused with a ParameterError naming the
number of values -- before any random word is drawn, before the input is scanned, and (in a
session) before any budget is reserved -- instead of numpy's MemoryError traceback."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpnoise as dp
import dpnoise.params
from dpnoise import Budget, ParameterError, SeededRandom, Session

from .helpers import CountingSource

#: 2^57 float64 values: 2^60 bytes, past any x86-64 address space (fails at once, whatever
#: the machine's memory or overcommit policy)
HUGE = 1 << 57


@pytest.mark.parametrize("build", [
    lambda: dp.Laplace(epsilon=1.0, sensitivity=1.0),
    lambda: dp.Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0),
    lambda: dp.RangeLaplace(epsilon=1.0, sensitivity=1.0, domain=(0.0, 10.0)),
    lambda: dp.Geometric(epsilon=1.0),
    lambda: dp.MultivariateStaircase(epsilon=1.0, sensitivities=(1.0, 1.0)),
], ids=["laplace", "gaussian", "range-laplace", "geometric", "multivariate"])
def test_an_output_past_the_address_space_is_a_parameter_error(build: Any) -> None:
    m = build()
    zero = np.zeros((), dtype=np.int64 if isinstance(m, dp.Geometric) else np.float64)
    shape = (HUGE // 2, 2) if isinstance(m, dp.MultivariateStaircase) else (HUGE,)
    source = CountingSource(1)
    with pytest.raises(ParameterError, match=rf"output of {HUGE} values does not fit"):
        m.release(np.broadcast_to(zero, shape), rng=source)
    assert source.drawn == 0


def test_a_refused_allocation_is_a_parameter_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The allocator's refusal, whatever the size it happens at (here a monkeypatched one
    that refuses 2^20 values), not a size limit chosen in advance."""
    def refuse(n: int, dtype: Any = np.float64) -> Any:
        if n >= 1 << 20:
            raise MemoryError(f"Unable to allocate {n} values")
        return np.empty(n, dtype=dtype)

    monkeypatch.setattr(dpnoise.params, "_allocate", refuse)
    m = dp.Laplace(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ParameterError, match=r"output of 1048576 values does not fit"):
        m.release(np.broadcast_to(0.0, (1 << 20,)), rng=SeededRandom(1))
    assert np.asarray(m.release(np.zeros(1000), rng=SeededRandom(1))).shape == (1000,)


def test_a_session_refuses_it_before_spending(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grouped release of public cells: the output is refused at planning, so the ledger
    keeps its whole budget (a failure after the reservation keeps the charge)."""
    data = {"k": np.array(["a", "b", "c", "a"]), "x": np.array([1.0, 2.0, 3.0, 4.0])}
    schema = {"columns": {"k": {"categories": ["a", "b", "c"]}, "x": {"lower": 0, "upper": 5}}}

    def refuse(n: int, dtype: Any = np.float64) -> Any:
        if n == 3:  # the release's three cells
            raise MemoryError("Unable to allocate")
        return np.empty(n, dtype=dtype)

    with Session(data, Budget(10.0), schema=schema, rng=SeededRandom(0)) as s:
        monkeypatch.setattr(dpnoise.params, "_allocate", refuse)
        with pytest.raises(ParameterError, match=r"output of 3 values does not fit"):
            s.release("histogram k", epsilon=1.0)
        assert s.spent.epsilon == 0
        monkeypatch.undo()
        assert s.release("histogram k", epsilon=1.0).values.shape == (3,)
