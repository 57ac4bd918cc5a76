"""Notebook views, registered from above: no module below :mod:`dpnoise.report` imports it.

Laws, ledgers and releases show themselves in a notebook through ``_repr_html_``, but the
HTML is made by :mod:`dpnoise.report`, which sits above them in the layers.  So that every
import points down, those objects ask this ground-floor registry: :mod:`dpnoise.report`
registers one renderer per kind when it is imported, and the package's top
(``dpnoise/__init__``) installs the loader that imports it the first time a view is asked
for.  Without a renderer (nothing registered, no loader), an object shows as its ``repr``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

#: kind ("law", "ledger", "release") -> function of the object returning an HTML fragment
_RENDERERS: dict[str, Callable[[Any], str]] = {}
_LOADER: list[Callable[[], object]] = []


def register(kind: str, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML view of objects of ``kind``."""
    _RENDERERS[kind] = render


def set_loader(loader: Callable[[], object]) -> None:
    """``loader()`` registers the renderers (the top of the package imports report/)."""
    _LOADER[:] = [loader]


def html_of(kind: str, obj: Any) -> str:
    """The HTML view of ``obj``: its registered renderer's, else its escaped ``repr``."""
    if kind not in _RENDERERS and _LOADER:
        _LOADER[0]()
    render = _RENDERERS.get(kind)
    if render is None:
        return f"<pre>{html.escape(repr(obj))}</pre>"
    return render(obj)
