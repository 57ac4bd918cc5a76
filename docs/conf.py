"""Sphinx configuration: the markdown guides (myst-parser) and the API reference (autodoc +
numpydoc), built by ``make docs`` with warnings as errors."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

project = "dpnoise"
author = "the dpnoise authors"
copyright = "2026, the dpnoise authors"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
root_doc = "index"

myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"          # the numpydoc sections carry the types
numpydoc_show_class_members = False  # members are listed by autodoc's :members:
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = "dpnoise"
