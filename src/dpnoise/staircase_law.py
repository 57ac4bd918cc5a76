"""Old import path, kept because docs/ use it: see :mod:`dpnoise.laws.staircase`."""
from .laws.staircase import *  # noqa: F403
