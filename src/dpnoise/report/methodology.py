"""The report's methodology section: how the numbers were made, in plain language.

Generated from the schema's rules recorded with every release
(:func:`dpnoise.session.declared.declared_rules`) and the ledger's totals: what the
guarantee means for one person, the declared bounds and that values beyond them are
clamped, the contribution cap and that further rows are dropped, the missing-value rule,
how to read an error bar.  It never states how many rows were clamped, dropped or missing
(that number depends on the data and is not released) -- only the rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from ..session.declared import number_words
from .release import ReleaseView


def _releases(numbers: Sequence[int | None]) -> str:
    shown = [str(n) for n in numbers if n is not None]
    if not shown:
        return ""
    return ("release " if len(shown) == 1 else "releases ") + ", ".join(shown)


def _person(views: Sequence[ReleaseView], spent: Any, accountant: str) -> str:
    units = {v.declared.get("unit") for v in views if "unit" in v.declared}
    person = units == {"person"}
    who = "any one person's data" if person else "any one row"
    eps, delta = float(spent.epsilon), float(getattr(spent, "delta", 0.0) or 0.0)
    factor = f"{math.exp(eps):.3g}" if eps < 700 else "an astronomically large number"
    text = (f"<p>Every number in this report was computed with random noise added. The "
            f"noise is calibrated so that the report as a whole would look almost the same "
            f"whether or not {who} had been in the data: the probability of any result -- "
            f"and so of any conclusion someone draws from the whole report -- changes by at "
            f"most a factor of e<sup>ε</sup> with ε = {eps:.6g} (about {factor})"
            + (f", except with a probability of at most δ = {delta:.3g}" if delta else "")
            + f". That ε is the budget spent so far, composed under the {escape(accountant)} "
            "accountant; each release below states its own share. The guarantee holds "
            "whatever else an observer knows, and no later analysis of these numbers can "
            "weaken it.</p>")
    if not units:
        text += ("<p>Whether the unit protected is a person or a row was not recorded with "
                 "these releases: each release's guarantee line says which.</p>")
    elif not person:
        text += ("<p>No person identifier was declared, so the unit protected is one row: a "
                 "person who owns m rows is protected at the weaker level of m·ε (and "
                 "m·e<sup>(m−1)ε</sup>·δ).</p>")
    return text


def _bounds(views: Sequence[ReleaseView]) -> str:
    cols: dict[str, tuple[float, float, list[int | None]]] = {}
    for v in views:
        d = v.declared
        if d.get("column") is not None and "lower" in d:
            _lo, _hi, nums = cols.setdefault(d["column"], (d["lower"], d["upper"], []))
            nums.append(v.number)
    if not cols:
        if any(not v.declared for v in views):
            return "<p>The declared bounds were not recorded with these releases.</p>"
        return "<p>No release measured a numeric column, so no value was clamped.</p>"
    rows = "".join(f'<tr><td class="q">{escape(c)}</td><td>{number_words(lo)}</td>'
                   f'<td>{number_words(hi)}</td><td class="q">{_releases(n)}</td></tr>'
                   for c, (lo, hi, n) in sorted(cols.items()))
    return ("<p>Before any release, the data custodian declared a range for every column a "
            "statistic measures, from knowledge of the subject, not by looking at the data. "
            "A value below the range is counted as its lower end, a value above it as its "
            "upper end (<em>clamping</em>). Clamping is what bounds how much one person can "
            "move a sum or a mean, and so how much noise is needed; its price is a bias when "
            "real values lie outside the range: a sum or mean of clamped values is pulled "
            "toward the range. That bias is not part of the error bars.</p>"
            '<table><thead><tr><th class="q">column</th><th>lower bound</th>'
            '<th>upper bound</th><th class="q">used in</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _cap(views: Sequence[ReleaseView]) -> str:
    caps = sorted({(v.declared.get("unit"), v.declared.get("max_contributions"),
                    v.declared.get("max_groups"), v.declared.get("max_rows_per_group"))
                   for v in views if "unit" in v.declared}, key=str)
    parts = []
    for unit, k, groups, per_group in caps:
        if unit != "person":
            parts.append("<p>Every row was treated as a different person (no person "
                         "identifier was declared), so no row was dropped for this reason.</p>")
        elif groups is not None:
            parts.append(f"<p>In a table by groups, each person counted in at most {groups} "
                         f"group(s), with at most {per_group} row(s) per group; that person's "
                         "further rows were dropped.</p>")
        else:
            parts.append(f"<p>Each person contributed at most {k} row(s) to each statistic; "
                         "that person's further rows were dropped. Which rows are kept is "
                         "decided by a fixed hash of each row, not by how large its values "
                         "are.</p>")
    rows = {v.declared.get("max_rows") for v in views if v.declared} - {None}
    if rows:
        parts.append("<p>The custodian also declared a public upper bound on the number of "
                     f"rows ({', '.join(number_words(r) for r in sorted(rows))}): a count is "
                     "released between 0 and that bound.</p>")
    return "".join(parts) or "<p>The contribution cap was not recorded with these releases.</p>"


MISSING = ("<p>A missing value is skipped by every statistic that reads its column: a count "
           "of rows counts the row, a count, sum or mean of a column uses its non-missing "
           "values only (a mean is the sum of the non-missing clamped values divided by their "
           "number). A condition on a missing value is neither true nor false, so "
           "<code>where age &gt; 65</code> and <code>where not age &gt; 65</code> both leave "
           "the row out. A row whose group is missing falls in no group.</p>")

ERROR_BARS = ("<p>Next to each number is its 95% error bar: an interval that, with "
              "probability at least 95% over the random noise, contains the value the "
              "statistic has on the clamped and capped data. It is computed from the released "
              "numbers and public parameters only, and it is conservative. It covers the "
              "noise and nothing else -- not the clamping bias, not the dropped rows, not "
              "sampling error if the data are a sample. A mean's or a variance's error bar is "
              "in the data's units, from its released count and sums. A quantile (such as a "
              "median) has an error bar of <em>levels</em>: \"between the 47th and 53rd "
              "percentiles\" means the released value lies between those percentiles of the "
              "clamped data; one released <em>with rank bar</em> (its whole budget on the "
              "quantile, no count) has an error bar of <em>ranks</em>: \"rank within ±21 "
              "rows of q·n\" means the released value is a value of the clamped data whose "
              "rank among the n rows (n not published) is that close to q·n. Numbers are "
              "rounded to the precision their error bar supports; "
              "the csv downloads hold the released values in full. Each chart of an error law "
              "is drawn at the released value, as if it were the true value (the true value "
              "is never published).</p>")


def methodology(views: Sequence[ReleaseView], spent: Any, accountant: str) -> str:
    """The methodology section (HTML) for the releases ``views``."""
    body = ['<h2 id="methodology">How these numbers were made</h2><div class="card method">',
            "<h3>What the guarantee means for a person</h3>", _person(views, spent, accountant),
            "<h3>Declared bounds: values beyond them are clamped</h3>", _bounds(views),
            "<h3>Contribution cap: further rows are dropped</h3>", _cap(views),
            "<h3>Missing values</h3>", MISSING,
            "<h3>How to read an error bar</h3>", ERROR_BARS]
    selected = [v.number for v in views if "selection" in v.plans]
    if selected:
        body += ["<h3>Groups chosen by the data</h3>",
                 "<p>In " + escape(_releases(selected)) + ", the groups themselves were not "
                 "declared in advance: a group is shown only if its noisy number of people "
                 "passed a threshold (DP partition selection), so small groups are missing and "
                 "shown groups near the threshold are over-represented.</p>"]
    body.append('<p class="meta">This section states the rules only: how many values were '
                "clamped, how many rows were dropped or missing depends on the data and is "
                "not published.</p></div>")
    return "".join(body)
