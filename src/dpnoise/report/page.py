"""The release report: one self-contained HTML page built from public fields only.

What a privacy board and the public see: the data set's declared name, the total budget,
what was spent and what remains under the ledger's accountant, whether the ledger's hash
chain verified (and when that was checked), a step chart of the cumulative budget, a
plain-language methodology section (:mod:`dpnoise.report.methodology`), and one section
per release (:mod:`dpnoise.report.release`): query, mechanism, guarantee, the declared
rules in words, the released table with each statistic's own error bars, a bar chart of
it, a csv download and the statistic's error law drawn at the released value.

The page is publishable: it is built only from what the ledger records as public
(queries, mechanisms and their calibrated parameters, the schema's rules, the charges,
the released noisy answers and components) -- never the data set's fingerprint (a hash
lets anyone test a guessed data set; a file size reveals the row count), never a true
value, never a law centred on a true value, never a number of clamped, dropped or
missing values.  It fetches nothing: inline CSS and inline SVG, and a Content-Security-
Policy of ``default-src 'none'`` (plus inline styles and ``data:`` images) so a browser
refuses any request the page might otherwise make; the csv downloads are ``data:``
links, which that policy leaves alone (a download is not a fetch).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

import numpy as np

from .laws import bin_law
from .methodology import methodology
from .release import ReleaseView, html_text, release_section
from .svg import step_chart

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232b;
 margin:0;background:#f4f6f8}
main{max-width:1000px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}
h3{font-size:15px;margin:0 0 6px}
.sub{color:#5a6573;margin:0 0 16px}
.card{background:#fff;border:1px solid #d9dee4;border-radius:8px;padding:16px 18px;margin:12px 0}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));gap:12px}
.kpi{background:#fff;border:1px solid #d9dee4;border-radius:8px;padding:12px}
.kpi b{display:block;font-size:20px}.kpi span{color:#5a6573;font-size:12px}
.ok{color:#1a7f37}.bad{color:#b42318}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #e4e8ec;padding:3px 10px;text-align:right}
th{background:#f0f3f6}td.q,th.q{text-align:left}
code{background:#f0f3f6;padding:1px 4px;border-radius:4px}
.meta{color:#5a6573;font-size:12.5px}
.tag{display:inline-block;background:#eef4ff;color:#1849a9;border-radius:10px;
 padding:0 8px;font-size:12px;margin-left:6px}
.tag.replayed{background:#fff4e5;color:#93370d}.tag.aborted{background:#fdecea;color:#b42318}
svg.chart{max-width:100%;height:auto}
svg.chart text{font-size:10px;fill:#4a5563}
svg.chart .axis{stroke:#6b7785}svg.chart .tick{stroke:#6b7785}
svg.chart .grid{stroke:#e4e8ec}svg.chart .series{fill:none;stroke:#1849a9;stroke-width:2}
svg.chart .limit{stroke:#b42318;stroke-dasharray:4 3}svg.chart .limit-label{fill:#b42318}
svg.chart .bar{fill:#5b8def}svg.chart .marker{stroke:#1d232b;stroke-dasharray:2 2}
.laws{display:flex;flex-wrap:wrap;gap:12px}
figure.chart{margin:6px 0}figcaption{font-size:12.5px;color:#4a5563;margin:0 0 2px}
svg.chart .errbar{stroke:#1d232b;stroke-width:1.5;fill:none}
.rules,.person{font-size:13px;margin:4px 0}.method p{margin:4px 0 10px}
.download a{color:#1849a9}
"""


def _entry_view(entry: Any) -> ReleaseView:
    from ..session.answers import entry_cells

    params = entry.parameters if isinstance(entry.parameters, dict) else {}
    guarantee = entry.guarantee if isinstance(entry.guarantee, dict) else {}
    group_by, keys = entry_cells(entry)  # public keys, or the released (selected) keys
    iv = _past_intervals(entry)
    interval = params.get("interval") or {}
    col_range = interval.get("range")
    return ReleaseView(
        number=entry.id, time=str(entry.created_at)[:20].strip(), status=entry.status,
        query=entry.query, mechanism=entry.mechanism,
        guarantee=str(guarantee.get("text", "")), epsilon=float(entry.epsilon),
        delta=float(entry.delta), values=entry.answer,
        group_by=group_by, group_keys=keys,
        plans=dict(params.get("plans", {})),
        replayed=bool(getattr(entry, "replayed", False)),
        intervals=iv, confidence=None if iv is None else REPORT_CONFIDENCE,
        interval_kind=str(interval.get("kind", "value")),
        stat=str(interval.get("stat") or _stat_from_roles(params.get("plans", {}))),
        declared=_declared(entry, params, col_range),
        components=dict(getattr(entry, "components", None) or {}),
        col_range=None if col_range is None else (float(col_range[0]), float(col_range[1])),
    )


def _declared(entry: Any, params: dict[str, Any], col_range: Any) -> dict[str, Any]:
    """The schema's rules recorded with the release; for a release recorded before they
    were, the measured column's bounds from its recorded interval recipe (public)."""
    if params.get("declared"):
        return dict(params["declared"])
    if col_range is None:
        return {}
    from ..errors import DpnoiseError
    from ..session.query import parse_query

    try:
        column = parse_query(str(entry.canonical)).column
    except (DpnoiseError, TypeError, ValueError):
        return {}
    return {} if column is None else {"column": column, "lower": float(col_range[0]),
                                      "upper": float(col_range[1])}


def _stat_from_roles(plans: Any) -> str:
    roles = set(plans or {}) - {"selection"}
    return next(iter(roles)) if roles in ({"count"}, {"sum"}) else ""


REPORT_CONFIDENCE = 0.95


def _past_intervals(entry: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A past release's error bars, recomputed from its released answer, its recorded noisy
    components and public recipe (:func:`dpnoise.session.session.entry_interval`), else
    None (components not recorded)."""
    from ..errors import DpnoiseError
    from ..session.answers import entry_interval

    if entry.answer is None or entry.status != "released":
        return None
    try:
        return entry_interval(entry, REPORT_CONFIDENCE)
    except (DpnoiseError, KeyError, TypeError, ValueError):
        return None


def _kpi(value: str, label: str, cls: str = "") -> str:
    return f'<div class="kpi"><b class="{cls}">{value}</b><span>{escape(label)}</span></div>'


def page(title: str, body: Iterable[str]) -> str:
    """A complete, self-contained HTML document with a no-fetch CSP."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
            + "".join(body) + "</main></body></html>\n")


def ledger_report(ledger: Any, *, name: str | None = None, checked_at: str | None = None
                  ) -> str:
    """The whole report for ``ledger`` (a :class:`dpnoise.session.Ledger`)."""
    entries = list(ledger.entries())
    budget, spent, left = ledger.budget, ledger.spent(), ledger.remaining()
    integrity = _integrity(ledger)
    checked_at = checked_at or time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    dataset = name or getattr(ledger, "name", None) or "(the data set's name was not declared)"
    accountant = getattr(ledger, "accountant", "basic")
    body = [f"<h1>Release report: {escape(str(dataset))}</h1>",
            f'<p class="sub">{len(entries)} releases · accountant: {escape(str(accountant))} '
            f"· integrity checked {escape(checked_at)}</p>",
            '<div class="summary">',
            _kpi(f"{budget.epsilon:.6g}", "total ε"),
            _kpi(f"{spent.epsilon:.6g}", "ε spent"),
            _kpi(f"{left.epsilon:.6g}", "ε remaining"),
            ]
    if budget.delta:
        body += [_kpi(f"{spent.delta:.3g}", "δ spent"), _kpi(f"{left.delta:.3g}", "δ remaining")]
    if accountant != "basic":
        sb = ledger.spent_basic()
        body.append(_kpi(f"{sb.epsilon:.6g}", "ε basic composition would have spent"))
    from ..session.table_charges import shown_spent, table_charges

    tables = table_charges(ledger)
    if tables is not None:  # rho charged for finite-support tables: flagged, delta added
        e_t, d_t = shown_spent(ledger, tables)
        body.append(_kpi(f"ε {e_t:.6g}, δ {d_t:.3g}", "spent with the table allowance: "
                         + tables.message(), "bad"))
    status, note = integrity
    body.append(_kpi(status, "ledger hash chain: " + note,
                     {"verified": "ok", "BROKEN": "bad"}.get(status, "")))
    body.append("</div>")
    composed, basic = _cumulative(entries)
    body.append('<h2>Budget over time</h2><div class="card">'
                + step_chart([c[0] for c in composed], limit=budget.epsilon,
                             title=f"cumulative epsilon under the {accountant} accountant",
                             y_label="cumulative ε"))
    if accountant != "basic":
        body.append(step_chart([b[0] for b in basic], limit=budget.epsilon,
                               title="what basic composition would have charged",
                               y_label="cumulative ε (basic)"))
    if budget.delta:
        body.append(step_chart([c[1] for c in composed], limit=budget.delta,
                               title="cumulative delta", y_label="cumulative δ"))
    body.append("</div>")
    views = [_entry_view(e) for e in entries]
    body.append(methodology(views, spent, str(accountant)))
    body.append("<h2>Releases</h2>")
    body += [release_section(v, anchor=f"release-{v.number}") for v in views]
    body.append('<p class="meta">Built from the ledger\'s public fields only: no true '
                "value, no data-set fingerprint, size or row count, no number of clamped, "
                "dropped or missing values; error laws are drawn at the released value, never "
                "at a true value.</p>")
    return page(f"dpnoise release report — {dataset}", body)


def _cumulative(entries: list[Any]) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Per release: (epsilon, delta) spent so far under the ledger's accountant, and
    under basic composition (the running sums of the rows' own charges)."""
    basic, e_sum, d_sum = [], 0.0, 0.0
    for e in entries:
        e_sum += float(e.epsilon)
        d_sum += float(e.delta)
        basic.append((e_sum, d_sum))
    composed = []
    for e, b in zip(entries, basic, strict=True):
        ce = getattr(e, "composed_epsilon", None)
        cd = getattr(e, "composed_delta", None)
        composed.append((b[0] if ce is None else float(ce), b[1] if cd is None else float(cd)))
    return composed, basic


def _integrity(ledger: Any) -> tuple[str, str]:
    """(status, note): the full hash-chain check of a ledger file (``dpnoise ledger
    verify``); status is "verified", "BROKEN" or "not recorded" (an in-memory ledger)."""
    if not getattr(ledger, "durable", False):
        return "not recorded", "in-memory ledger: nothing is recorded, nothing to verify"
    from ..ledger import verify_ledger

    report = verify_ledger(ledger.path)
    if report.ok:
        return "verified", (f"{report.events} events verified, head "
                            f"{(report.head or '')[:16]}…")
    where = f" at event {report.seq}" if report.seq is not None else ""
    return "BROKEN", f"chain broken{where}: {report.problem}"


def release_html(release: Any) -> str:
    """HTML fragment for a :class:`dpnoise.session.Release` (notebook display); a
    custodian-only true answer is refused."""
    if getattr(release, "custodian_only", False):
        from ..errors import ParameterError

        raise ParameterError("a custodian-only TRUE answer is never reported")
    try:
        iv = release.error_bars()  # an interval, or a quantile's rank bar (interval_kind)
    except Exception:  # a release without error bars (replayed, executor-written)
        iv = None
    view = ReleaseView(
        number=release.ledger_id, time="", status="released", query=release.query,
        mechanism=release.mechanism, guarantee=release.guarantee,
        epsilon=release.epsilon, delta=release.delta, values=release.values,
        group_by=tuple(release.group_by), group_keys=tuple(release.group_keys),
        plans={k: v for k, v in (release.details or {}).items() if isinstance(v, dict)},
        replayed=release.replayed, intervals=iv,
        confidence=getattr(release, "confidence", None),
        interval_kind=getattr(release, "interval_kind", "value"),
        stat=str(getattr(release, "stat", "")),
        declared=dict(getattr(release, "declared", None) or {}))
    return release_section(view)


def law_html(law: Any, title: str = "law") -> str:
    """HTML fragment for a law object (``noise()``): its chart and a few moments."""
    lv = bin_law(law)
    chart = lv.svg(title) if lv is not None else ""
    stats = []
    for label, fn in (("mean", "mean"), ("std", "std")):
        try:
            stats.append(f"{label} {float(getattr(law, fn)()):.6g}")
        except Exception:  # moments are optional on some laws
            continue
    return (f'<div class="card"><h3>{escape(type(law).__name__)}</h3>'
            f'<p class="meta">{" · ".join(stats)}</p>{chart}</div>')


def ledger_html(ledger: Any) -> str:
    """A compact summary of a ledger (notebook display)."""
    budget, spent, left = ledger.budget, ledger.spent(), ledger.remaining()
    rows = "".join(
        f"<tr><td>{e.id}</td><td class='q'>{html_text(e.query)}</td><td>{escape(e.status)}</td>"
        f"<td>{e.epsilon:.6g}</td><td>{e.delta:.3g}</td></tr>" for e in ledger.entries())
    return (f'<div class="card"><h3>Ledger</h3><p class="meta">total {escape(str(budget))} · '
            f"spent {escape(str(spent))} · remaining {escape(str(left))}</p><table><thead>"
            "<tr><th>#</th><th class='q'>query</th><th>status</th><th>ε</th><th>δ</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></div>")


def fragment(html: str) -> str:
    """Wrap a fragment with the report's CSS for notebook display."""
    return f"<div class=\"dpnoise\"><style>{CSS}</style>{html}</div>"


def as_views(entries: Sequence[Any]) -> list[ReleaseView]:
    return [_entry_view(e) for e in entries]
