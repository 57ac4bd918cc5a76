"""``python -m dpnoise`` is the ``dpnoise`` command."""

import sys

from dpnoise.cli import main

sys.exit(main())
