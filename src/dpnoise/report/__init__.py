"""Release reports: a self-contained HTML page from a ledger, and notebook display.

``dpnoise report LEDGER --out report.html`` writes :func:`ledger_report`; ``Release``,
``Ledger`` and the law objects use :func:`release_html`, :func:`ledger_html` and
:func:`law_html` for ``_repr_html_``.  Everything is built from public fields only.

Modules: ``page`` (the document, summary and budget charts), ``methodology`` (how the
numbers were made, in plain language), ``release`` (one release: table, rules, charts,
csv), ``numbers`` (precision from the error bar), ``laws`` (error laws at public points),
``svg`` (the charts).
"""

from ..views import register
from .page import CSP, fragment, law_html, ledger_html, ledger_report, release_html

# the notebook views of objects below this layer (they ask dpnoise.views, never this module)
register("law", lambda law: fragment(law_html(law, type(law).__name__)))
register("ledger", lambda ledger: fragment(ledger_html(ledger)))
register("release", lambda release: fragment(release_html(release)))

__all__ = ["CSP", "fragment", "law_html", "ledger_html", "ledger_report", "release_html"]
