"""Old import path, kept because docs/ use it: see :mod:`dpnoise.laws.finite_precision`."""
from .laws.finite_precision import *  # noqa: F403
