"""Build the optional compiled kernels (``dpnoise._kernels``, plain C, no Python API).

Every ``src/dpnoise/kernels/*.c`` file is compiled into ONE shared library that
:mod:`dpnoise.kernels` loads with ctypes (which releases the GIL during each call).  The
build is ``optional``: without a C compiler the install still succeeds and dpnoise runs its
pure numpy reference path (``dpnoise.kernels.available()`` is then False; the test suite
fails loudly in that case unless ``DPNOISE_PURE=1`` says the pure path is intended).
"""

from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "dpnoise._kernels",
            sources=sorted(glob("src/dpnoise/kernels/*.c")),
            depends=sorted(glob("src/dpnoise/kernels/*.h")),
            extra_compile_args=["-O2", "-std=c11", "-fno-strict-aliasing", "-ffp-contract=off",
                                "-fno-fast-math", "-fvisibility=default"],
            libraries=["m"],
            optional=True,
        )
    ]
)
