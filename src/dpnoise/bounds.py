"""Old import path, kept because docs/ use it: see :mod:`dpnoise.laws.truncated_laplacian`."""
from .laws.truncated_laplacian import *  # noqa: F403
