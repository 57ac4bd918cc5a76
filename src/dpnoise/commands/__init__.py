"""Command modules: each registers its ``dpnoise`` subcommand with :func:`dpnoise.cli.subcommand`.

Add a module here and import it below; keep one command (or one family) per module.
"""

from . import compare, precision, reproduce  # noqa: F401
