"""One release as a publication: its numbers, error bars, rules, chart and csv download.

Each section shows the released table with every number printed to the precision its
95% error bar supports (:mod:`dpnoise.report.numbers`), each statistic's OWN error bar
(a mean's in the data's units, from its released count and sum; a quantile's as levels in
words), the declared clamping bounds and contribution cap in words, a bar chart of the
table with its error bars, the statistic's error law drawn at the released value, and a
link that downloads the table as csv.  The link is an inline ``data:`` URL: nothing is
fetched, and the page's Content-Security-Policy (``default-src 'none'``) is unchanged --
a download is not a fetch the policy governs (the browser test downloads one).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import quote

import numpy as np

from ..session.declared import rules_in_words
from ..session.release import printable
from .laws import released_law
from .numbers import (
    interval_texts,
    level_words,
    levels_in_words,
    ranks_in_words,
    significant,
    value_text,
)
from .svg import interval_chart

MAX_CELLS_SHOWN = 50
MAX_CSV_CELLS = 20_000  # larger tables: the first cells, and a note (the ledger has all)


@dataclass(frozen=True)
class ReleaseView:
    """The public fields of one release, from a ledger entry or a Release object."""

    number: int | None
    time: str
    status: str
    query: str
    mechanism: str
    guarantee: str
    epsilon: float
    delta: float
    values: np.ndarray | None
    group_by: tuple[str, ...] = ()
    group_keys: tuple[Any, ...] = ()
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    intervals: tuple[np.ndarray, np.ndarray] | None = None
    confidence: float | None = None
    replayed: bool = False
    interval_kind: str = "value"  # "level": a quantile's levels; "rank": its rank bar
    stat: str = ""
    declared: dict[str, Any] = field(default_factory=dict)  # schema rules (public)
    components: dict[str, Any] = field(default_factory=dict)  # released noisy components
    col_range: tuple[float, float] | None = None  # the measured column's declared bounds


def html_text(text: object) -> str:
    """Text from the data or the ledger (a key, a query) as HTML: escaped, and characters
    that are not printable (NUL and other controls, line breaks, bidirectional overrides)
    written as Python escapes, as in the printed table -- the downloadable csv keeps them."""
    return escape(printable(str(text)))


def cell_labels(view: ReleaseView, n: int) -> list[tuple[str, ...]]:
    """Labels of the first ``n`` cells (C order over the group columns' public keys)."""
    if not view.group_by:
        return [()] * n
    shape = tuple(len(k) for k in view.group_keys)
    size = 0 if view.values is None else int(np.asarray(view.values).size)
    if len(shape) != len(view.group_by) or int(np.prod(shape, dtype=np.int64)) != size:
        # keys the ledger does not hold (groups chosen by DP partition selection in a
        # release recorded before their keys were stored with it)
        return [tuple(f"cell {i + 1}" if j == 0 else "" for j in range(len(view.group_by)))
                for i in range(n)]
    return [tuple(str(k[j]) for k, j in zip(view.group_keys, np.unravel_index(i, shape),
                                            strict=True)) for i in range(n)]


def _is_count(view: ReleaseView) -> bool:
    return view.stat == "count" or set(view.plans) - {"selection"} == {"count"}


def _flat(view: ReleaseView) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    flat = np.asarray(view.values).ravel()
    if view.intervals is None:
        return flat, None, None
    lows, highs = (np.asarray(a, dtype=np.float64).ravel() for a in view.intervals)
    return flat, lows, highs


def _conf(view: ReleaseView) -> str:
    return f"{view.confidence:.0%}" if view.confidence else ""


def release_table(view: ReleaseView, limit: int = MAX_CELLS_SHOWN) -> str:
    """The released cells, each to the precision its error bar supports, with the bar."""
    if view.values is None:
        return '<p class="meta">no answer recorded (the release did not complete; ' \
               "its charge stands)</p>"
    flat, lows, highs = _flat(view)
    n = min(limit, flat.size)
    labels = cell_labels(view, n)
    integer = _is_count(view)
    head = [*(escape(g) for g in view.group_by), "released value"]
    level = view.interval_kind in ("level", "rank")
    if lows is not None:
        unit = "ranks" if view.interval_kind == "rank" else "levels"
        head += ([f"{_conf(view)} error bar, in {unit}"] if level else
                 [f"low ({_conf(view)})", f"high ({_conf(view)})"])
    rows = []
    for i in range(n):
        cells = [f'<td class="q">{html_text(x)}</td>' for x in labels[i]]
        if lows is None or highs is None:
            cells.append(f"<td>{value_text(flat[i], integer=integer)}</td>")
        elif level:
            words = ranks_in_words if view.interval_kind == "rank" else levels_in_words
            cells += [f"<td>{significant(flat[i])}</td>",
                      f'<td class="q">{escape(words(lows[i], highs[i]))}</td>']
        else:
            lo, hi = interval_texts(lows[i], highs[i], integer=integer)
            cells += [f"<td>{value_text(flat[i], lows[i], highs[i], integer)}</td>",
                      f"<td>{lo}</td>", f"<td>{hi}</td>"]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    ths = "".join(f'<th class="q">{h}</th>' if j < len(view.group_by) else f"<th>{h}</th>"
                  for j, h in enumerate(head))
    table = f"<table><thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return table + _table_notes(view, flat.size, n)


def _table_notes(view: ReleaseView, size: int, shown: int) -> str:
    notes = []
    if size > shown:
        notes.append(f"… {size - shown} more cells (of {size}) in the csv download")
    sel = view.plans.get("selection")
    if isinstance(sel, dict) and "threshold" in sel:
        notes.append(f"groups chosen by DP partition selection (threshold "
                     f"{escape(str(sel['threshold']))} persons): groups near the threshold "
                     "appear only when their selection noise was high, so the released set is "
                     "biased upward; each shown cell's error bar holds as stated")
    if view.intervals is None and view.status == "released" and \
            set(view.plans) & {"rank", "centred_sum", "power1"}:
        notes.append("no error bars: the noisy components were not recorded with this "
                     "release")
    if view.interval_kind == "level" and view.intervals is not None:
        notes.append("a quantile's error bar is a range of levels: the released value lies "
                     "between those percentiles of the (clamped) data; it is not stated in "
                     "the data's units, which would need more released values")
    if view.interval_kind == "rank" and view.intervals is not None:
        notes.append("a quantile's error bar in ranks (released with its whole epsilon on the "
                     "quantile, no count): the released value is an empirical quantile of the "
                     "(clamped, snapped) data whose rank is within the stated rows of q·n, n "
                     "the cell's rows, which is not released; no interval of values or levels "
                     "is stated")
    if view.intervals is not None and view.interval_kind not in ("level", "rank"):
        notes.append("numbers rounded to the precision their error bar supports (the csv "
                     "holds the released values in full)")
    return "".join(f'<p class="meta">{n}</p>' for n in notes)


def table_csv(view: ReleaseView) -> str:
    """The released table as csv text: keys, the released values in full precision and
    the error bars (quantile: level bounds)."""
    flat, lows, highs = _flat(view)
    n = min(flat.size, MAX_CSV_CELLS)
    labels = cell_labels(view, n)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    extra = [] if lows is None else {"level": ["level_low", "level_high"],
                                     "rank": ["rank_error", "level_slack"]
                                     }.get(view.interval_kind, ["low", "high"])
    w.writerow([*view.group_by, view.stat or "value", *extra])
    for i in range(n):
        ends = [] if lows is None or highs is None else [repr(float(lows[i])),
                                                         repr(float(highs[i]))]
        v = flat[i]
        w.writerow([*labels[i], repr(v.item() if hasattr(v, "item") else v), *ends])
    return out.getvalue()


def download_link(view: ReleaseView) -> str:
    """An ``<a download>`` with the table as an inline ``data:`` URL (nothing fetched)."""
    if view.values is None or view.status != "released":
        return ""
    name = f"release-{view.number}.csv" if view.number is not None else "release.csv"
    href = "data:text/csv;charset=utf-8," + quote(table_csv(view), safe="")
    size = int(np.asarray(view.values).size)
    more = f" (first {MAX_CSV_CELLS:,} of {size:,} cells)" if size > MAX_CSV_CELLS else ""
    return (f'<p class="download"><a download="{escape(name)}" href="{href}">'
            f"Download this table (csv){more}</a></p>")


def table_chart(view: ReleaseView, limit: int = MAX_CELLS_SHOWN) -> str:
    """A bar chart of the released table with each cell's error bar (data units)."""
    if view.values is None or view.status != "released":
        return ""
    flat, lows, highs = _flat(view)
    n = min(limit, flat.size)
    labels = [" · ".join(printable(x) for x in t) or "all" for t in cell_labels(view, n)]
    if view.interval_kind in ("level", "rank"):
        lows = highs = None  # level and rank bars are not in the data's units
    what = f"{view.stat} of {view.declared.get('column')}" if view.declared.get("column") \
        else (view.stat or "released value")
    bars = "" if lows is None else f" with {_conf(view)} error bars"
    return interval_chart(labels, [float(v) for v in flat[:n]],
                          None if lows is None else list(lows[:n]),
                          None if highs is None else list(highs[:n]),
                          title=f"released {what}{bars}", x_label=f"released {what}")


def law_chart(view: ReleaseView) -> str:
    """The statistic's own error law, drawn at the released value (scalar releases)."""
    if view.values is None or view.status != "released" or np.asarray(view.values).size != 1:
        return ""
    answer = float(np.asarray(view.values).reshape(-1)[0])
    comps = {r: np.asarray(v).reshape(-1)[0] for r, v in view.components.items()}
    lv = released_law(view.stat, view.plans, answer, comps, view.col_range)
    if lv is None:
        return ""
    shown = significant(answer)
    if view.intervals is not None and view.interval_kind not in ("level", "rank"):
        lo, hi = (float(np.asarray(a).reshape(-1)[0]) for a in view.intervals)
        shown = value_text(answer, lo, hi, _is_count(view))
    if view.stat in ("count", "sum"):
        where = (f"(exact, drawn at the released value {shown} as if it were the true value; "
                 "the true value is not published)")
    else:
        where = (f"(simulated around the released value {shown}: each noisy component drawn "
                 "from its exact law at its released value, as if that were the true value; "
                 "the true value is not published)")
    return lv.svg(f"error of this {view.stat or 'release'}", where=where,
                  x_label=f"error  (output − released {view.stat or 'value'})")


def guarantee_words(view: ReleaseView) -> str:
    """The release's charge as what it means for one person."""
    unit = {"person": "one person's data", "row": "one row"}.get(
        view.declared.get("unit", ""), "one individual's data (as the guarantee line says)")
    factor = math.exp(view.epsilon)
    delta = f", except with probability at most δ = {view.delta:.3g}" if view.delta else ""
    return (f"Adding or removing {unit} changes the probability of any result of this "
            f"release by at most a factor of e<sup>{view.epsilon:.6g}</sup> ≈ {factor:.3g}"
            f"{delta}.")


def release_section(view: ReleaseView, *, anchor: str | None = None) -> str:
    tags = ""
    if view.replayed:
        tags += '<span class="tag replayed">replayed — no new spend</span>'
    if view.status not in ("released", ""):
        tags += f'<span class="tag aborted">{escape(view.status)}</span>'
    title = f"Release {view.number}" if view.number is not None else "Release"
    rank = view.plans.get("rank")
    if isinstance(rank, dict) and "level" in rank:
        title += f" — {level_words(*(int(v) for v in rank['level']))}"
    elif isinstance(rank, dict) and "levels" in rank:  # several levels, one release
        title += " — " + ", ".join(level_words(int(a), int(b)) for a, b in rank["levels"])
    charge = f"ε = {view.epsilon:.6g}" + (f", δ = {view.delta:.3g}" if view.delta else "")
    when = f"{escape(view.time)} · " if view.time else ""
    ident = f' id="{escape(anchor)}"' if anchor else ""
    return (f'<section class="card release"{ident}><h3>{escape(title)}{tags}</h3>'
            f'<p><code>{html_text(view.query)}</code></p>'
            f'<p class="meta">{when}mechanism {escape(view.mechanism)} · '
            f"charged {charge}<br>guarantee: {escape(view.guarantee)}</p>"
            f'<p class="person">{guarantee_words(view)}</p>'
            f'<p class="rules"><b>Bounds and cap:</b> {escape(rules_in_words(view.declared))}'
            "</p>"
            f"{release_table(view)}{download_link(view)}"
            f'<div class="laws">{table_chart(view)}{law_chart(view)}</div></section>')
