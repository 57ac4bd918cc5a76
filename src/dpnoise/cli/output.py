"""Machine-readable output of the ``dpnoise`` commands (``--json``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    return str(o)


def emit_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=_json_default, allow_nan=True))
