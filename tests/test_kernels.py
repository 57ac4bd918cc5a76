"""The compiled kernels are built and loaded (CI must not silently run the pure path)."""

import ctypes
import os

import numpy as np
import pytest

from dpnoise import kernels


@pytest.mark.skipif(os.environ.get("DPNOISE_PURE", "") not in ("", "0"),
                    reason="DPNOISE_PURE=1: the pure reference path is intended")
def test_kernels_are_built_and_pass_their_self_test() -> None:
    assert kernels.available(), (
        "dpnoise._kernels is not built: run `pip install -e .` (needs a C compiler) or set "
        "DPNOISE_PURE=1 to run the pure numpy path on purpose")


def test_selftest_kernel_wraps_modulo_2_64() -> None:
    fn = kernels.function("dpk_selftest_sum", [ctypes.c_void_p, ctypes.c_int64],
                          ctypes.c_uint64)
    if fn is None:
        pytest.skip("kernels off")
    w = np.array([2**63, 2**63, 5], dtype=np.uint64)
    assert fn(w.ctypes.data, 3) == 5
