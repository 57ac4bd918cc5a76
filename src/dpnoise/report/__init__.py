"""Release reports: a self-contained HTML page from a ledger, and notebook display.

``dpnoise report LEDGER --out report.html`` writes :func:`ledger_report`; ``Release``,
``Ledger`` and the law objects use :func:`release_html`, :func:`ledger_html` and
:func:`law_html` for ``_repr_html_``.  Everything is built from public fields only.

Modules: ``page`` (the document, summary and budget charts), ``methodology`` (how the
numbers were made, in plain language), ``release`` (one release: table, rules, charts,
csv), ``numbers`` (precision from the error bar), ``laws`` (error laws at public points),
``svg`` (the charts).
"""

from .page import CSP, fragment, law_html, ledger_html, ledger_report, release_html

__all__ = ["CSP", "fragment", "law_html", "ledger_html", "ledger_report", "release_html"]
