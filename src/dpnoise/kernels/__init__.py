"""Optional compiled kernels: one C shared library, loaded with ctypes, pure path as reference.

``setup.py`` compiles every ``kernels/*.c`` into ``dpnoise/_kernels*.so`` at install time
(``pip install -e .`` builds it in place; ``python setup.py build_ext --inplace`` rebuilds
it).  ctypes releases the GIL for the duration of every foreign call, so chunks of one
release can run on several cores (:mod:`dpnoise.parallel`).

Rules for a kernel (each is a *new sampler*, tested as one):
the numpy implementation stays the reference; the kernel must return bit-for-bit what the
reference returns from the same words (tests compare both on the same seeded words); it
consumes the same fixed number of words per value; it does not branch on the true value
where the reference does not.

``DPNOISE_PURE=1`` disables the kernels (the reference path runs everywhere).
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import numpy as np

ABI_VERSION = 4  # = dpk_abi_version() in common.c: bump both when a signature changes
MIN_VALUES = 64  # below this many values per call the numpy reference is as fast (call cost)


def _library_path() -> Path | None:
    here = Path(os.path.abspath(__file__)).parent.parent  # no realpath walk: a cold start
    for suffix in EXTENSION_SUFFIXES:
        candidate = here / f"_kernels{suffix}"
        if candidate.exists():
            return candidate
    return None


@lru_cache(maxsize=1)
def _load() -> Any | None:
    if os.environ.get("DPNOISE_PURE", "") not in ("", "0"):
        return None
    path = _library_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(str(path))
    except OSError:
        return None
    lib.dpk_abi_version.restype = ctypes.c_int64
    if lib.dpk_abi_version() != ABI_VERSION:
        return None
    lib.dpk_selftest_sum.restype = ctypes.c_uint64
    lib.dpk_selftest_sum.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    words = np.array([2**64 - 1, 2, 3], dtype=np.uint64)
    if lib.dpk_selftest_sum(words.ctypes.data, 3) != 4:
        return None
    return lib


def library() -> Any | None:
    """The loaded ctypes library, or None (not built, disabled, or failed its self-test)."""
    return _load()


def available() -> bool:
    """True when the compiled kernels are in use (not built or ``DPNOISE_PURE=1``: False)."""
    return _load() is not None


def function(name: str, argtypes: list[Any], restype: Any = None) -> Any | None:
    """The kernel ``name`` with its ctypes signature set, or None if the kernels are off.
    Array arguments are passed as raw addresses (``ctypes.c_void_p``, ``array.ctypes.data``
    of a C-contiguous array of the kernel's dtype): no per-call checks, which the caller
    guarantees instead."""
    lib = _load()
    if lib is None:
        return None
    fn = getattr(lib, name, None)
    if fn is None:
        return None
    fn.argtypes = argtypes
    fn.restype = restype
    return fn
