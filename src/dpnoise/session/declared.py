"""The declared rules a release was computed under, as public facts and in plain words.

A private answer differs from the same statistic computed with pandas for reasons that are
not noise: values outside the declared bounds are clamped into them, a person's rows
beyond the contribution cap are dropped, missing values are skipped.  These rules come
from the schema only (never from the data), so they can be recorded with every release
(:func:`declared_rules`, stored in the ledger) and stated next to its numbers
(:func:`rules_in_words`: the terminal table, the notebook view and the HTML report).

Nothing here says *how many* rows were clamped, dropped or missing: that number depends
on the data and is not released.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .query import Query
from .schema import Schema


def declared_rules(schema: Schema, query: Query) -> dict[str, Any]:
    """The schema's public rules that shape ``query``'s answer (JSON-ready).

    Keys: ``unit`` ("person" with a declared ``user_id``, else "row"), ``max_contributions``
    (rows one person may add to the statistic; with ``max_groups`` declared and a GROUP BY,
    ``max_rows_per_group`` rows in each of at most ``max_groups`` groups), ``max_rows`` (the
    public bound on the number of rows, or None), and for a statistic of a numeric column
    its ``column`` and declared ``lower`` / ``upper`` bounds.
    """
    grouped = bool(query.group_by)
    rules: dict[str, Any] = {
        "unit": "person" if schema.user_id is not None else "row",
        "max_contributions": int(schema.max_contributions),
        "max_rows": schema.max_rows,
        "column": None,
    }
    if grouped and schema.max_groups is not None:
        rules["max_groups"] = int(schema.max_groups)
        rules["max_rows_per_group"] = int(schema.max_rows_per_group)  # type: ignore[arg-type]
    if query.column is not None and query.stat != "count":
        col = schema.numeric(query.column)
        rules.update(column=query.column, lower=float(col.lower),  # type: ignore[arg-type]
                     upper=float(col.upper))  # type: ignore[arg-type]
    return rules


def number_words(x: float) -> str:
    """A declared bound as a reader writes it: ``250,000``, ``18``, ``0.5``."""
    return format(float(x), ",.12g").replace("e+", "e")


def rules_in_words(rules: Mapping[str, Any]) -> str:
    """One or two plain sentences: the clamping bounds and the contribution cap.

    >>> rules_in_words({"unit": "person", "max_contributions": 2})
    'Each person contributed at most 2 rows; their further rows were dropped.'
    """
    if not rules:
        return "The declared bounds and contribution cap were not recorded with this release."
    parts = []
    col = rules.get("column")
    if col is not None and "lower" in rules:
        lo, hi = number_words(rules["lower"]), number_words(rules["upper"])
        parts.append(f"{col} values outside the declared bounds [{lo}, {hi}] were clamped to "
                     f"them (a value below {lo} counted as {lo}, above {hi} as {hi}); "
                     f"missing {col} values were skipped.")
    if "unit" not in rules:  # recorded by an older dpnoise: the bounds only
        parts.append("The contribution cap was not recorded with this release.")
    elif rules.get("unit") == "person":
        if "max_groups" in rules:
            g, r = rules["max_groups"], rules["max_rows_per_group"]
            parts.append(f"Each person contributed to at most {g} group{_s(g)} and at most "
                         f"{r} row{_s(r)} per group; their further rows were dropped.")
        else:
            k = int(rules.get("max_contributions", 1))
            parts.append(f"Each person contributed at most {k} row{_s(k)}; their further "
                         "rows were dropped.")
    else:
        parts.append("Each row counted as one person (no person identifier was declared), "
                     "so no rows were dropped.")
    return " ".join(parts)


def _s(n: int) -> str:
    return "" if int(n) == 1 else "s"
