"""The report as a publication: numbers to the precision their error bar supports, quantile
error bars in words, the declared rules stated next to every release (terminal, notebook,
report), csv downloads that work in a real browser under the unchanged no-fetch
Content-Security-Policy, and a report that depends on the data only through its released
numbers -- also with a person identifier and a contribution cap."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from dpnoise import Budget, SeededRandom, Session
from dpnoise.demo import survey_paths
from dpnoise.report import CSP, ledger_report
from dpnoise.report.numbers import (
    at_place,
    interval_texts,
    levels_in_words,
    place_for,
    significant,
    value_text,
)
from dpnoise.report.svg import step_chart
from dpnoise.session.answers import entry_interval
from dpnoise.session.declared import rules_in_words

from .browser import Browser, chromium_or_skip
from .test_report import _Frozen

DATA, SCHEMA = survey_paths()
PERSON_SCHEMA = {"dataset": {"user_id": "pid", "max_contributions": 2, "max_rows": 400},
                 "columns": {"x": {"lower": 0, "upper": 100},
                             "g": {"categories": ["a", "b", "c"]}}}
PERSON_QUERIES = [("count", 0.2), ("mean x", 0.3), ("sum x by g", 0.3), ("median x", 0.2)]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


# --------------------------------------------------------------------------- numbers
@given(st.floats(-1e12, 1e12), st.floats(1e-6, 1e9))
def test_value_is_rounded_to_the_second_digit_of_its_half_width(x: float, w: float) -> None:
    lo, hi = x - w, x + w
    half = (hi - lo) / 2  # the half-width as the doubles hold it
    assume(half > 0)
    text = value_text(x, lo, hi)
    place = place_for(half)
    assert place is not None and 10.0**place <= half < 10.0 ** (place + 2)  # 2 digits
    assert abs(_number(text) - x) <= 0.5 * 10.0**place * (1 + 1e-9) + abs(x) * 1e-15
    digits = text.lstrip("-").split(".")
    assert len(digits) == 1 or len(digits[1]) == max(0, -place)
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})*(\.\d+)?", text)  # thousands separators


@given(st.floats(-1e12, 1e12), st.floats(1e-6, 1e9), st.booleans())
def test_printed_error_bar_contains_the_computed_one(x: float, w: float, integer: bool) -> None:
    lo, hi = (math.floor(x - w), math.ceil(x + w)) if integer else (x - w, x + w)
    a, b = interval_texts(lo, hi, integer)
    assert _number(a) <= lo and _number(b) >= hi  # rounded outward, never narrowed


def test_a_value_without_width_keeps_its_digits() -> None:
    assert value_text(17179869185.0, 17179869185.0, 17179869185.0) == "17,179,869,185"
    assert value_text(17179869185.0) == "17,179,900,000"  # no error bar: 6 digits


@given(st.floats(0, 1), st.floats(0, 1))
def test_quantile_levels_in_words_round_outward(a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    words = levels_in_words(lo, hi)
    found = [int(n) for n in re.findall(r"(\d+)(?:st|nd|rd|th)", words)]
    if lo <= 0 and hi >= 1:
        assert found == []
    elif lo <= 0:
        assert found[0] >= 100 * hi - 1e-6 and "at or below" in words
    elif hi >= 1:
        assert found[0] <= 100 * lo + 1e-6 and "at or above" in words
    else:
        assert found[0] <= 100 * lo + 1e-6 and found[-1] >= 100 * hi - 1e-6


def test_numbers_as_printed() -> None:
    assert levels_in_words(0.4712, 0.5291) == "between the 47th and 53rd percentiles"
    assert levels_in_words(0.0, 0.021) == "at or below the 3rd percentile"
    assert value_text(3007, 2977, 3037, integer=True) == "3,007"
    assert value_text(49036.79, 31000, 60000) == "49,000"
    assert value_text(46.5688, 45.64, 47.48) == "46.57"
    assert interval_texts(2977, 3037, integer=True) == ("2,977", "3,037")
    assert interval_texts(31980.967, 61053.718) == ("31,000", "62,000")
    assert significant(4.30725e10) == "43,072,500,000" and significant(-0.000123) == "-0.000123"
    assert at_place(-0.004, -2) == "0.00" and value_text(7, integer=True) == "7"


def test_budget_chart_numbers_releases_with_whole_numbers_only() -> None:
    """The x axis of the cumulative-budget chart is the release number: never 2.5."""
    for n in range(1, 40):
        svg = step_chart([0.1 * i for i in range(1, n + 1)], limit=5.0, title="t")
        ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', svg)[:-1]  # minus label
        x_ticks = [t for t in ticks if t != "release number"]
        assert x_ticks and all(float(t).is_integer() for t in x_ticks), (n, x_ticks)


# --------------------------------------------------------------------------- rules
def _person_data(drop: int | None = None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    pid = np.repeat(np.arange(120), 3)  # three rows per person; the cap keeps two
    cols = {"pid": pid.astype(float), "x": rng.uniform(-20, 130, pid.size),
            "g": rng.choice(np.array(["a", "b", "c"]), pid.size)}
    if drop is None:
        return cols
    keep = pid != drop
    return {k: v[keep] for k, v in cols.items()}


def _person_session(data: Any) -> Session:
    s = Session(data, Budget(epsilon=2.0), None, schema=PERSON_SCHEMA, rng=SeededRandom(3))
    for q, e in PERSON_QUERIES:
        s.release(q, epsilon=e)
    return s


def test_every_release_states_its_bounds_and_cap_in_words() -> None:
    """Terminal table, notebook view, ledger record and report all carry the rules."""
    with Session(_person_data(), Budget(epsilon=1.0), None, schema=PERSON_SCHEMA,
                 rng=SeededRandom(1)) as s:
        r = s.release("mean x by g", epsilon=0.5)
        words = r.rules_text()
        assert words == ("x values outside the declared bounds [0, 100] were clamped to them "
                         "(a value below 0 counted as 0, above 100 as 100); missing x values "
                         "were skipped. Each person contributed at most 2 rows; their further "
                         "rows were dropped.")
        assert r.table().endswith(words)
        assert words in r._repr_html_().replace("&#x27;", "'")
        entry = s.ledger.entries()[-1]
        assert entry.parameters["declared"] == {
            "unit": "person", "max_contributions": 2, "max_rows": 400, "column": "x",
            "lower": 0.0, "upper": 100.0}
        c = s.release("count", epsilon=0.1)
        assert c.rules_text() == ("Each person contributed at most 2 rows; their further rows "
                                  "were dropped.")
        html = ledger_report(s.ledger, name="t")
    assert html.count("<b>Bounds and cap:</b> ") == 2 and words in html
    assert "Each person contributed at most 2 row(s) to each statistic" in html
    assert "released between 0 and that bound" in html and "(400)" in html
    survey = Session(DATA, Budget(1.0), None, schema=SCHEMA, rng=SeededRandom(1))
    r = survey.release("sum income", epsilon=0.1)
    assert "[0, 250,000]" in r.rules_text() and "no person identifier" in r.rules_text()
    assert rules_in_words({}).startswith("The declared bounds and contribution cap were not")


class _Older(_Frozen):
    """The ledger as an older dpnoise recorded it: no declared rules with the releases."""

    def entries(self) -> list[Any]:
        return [dataclasses.replace(e, parameters={k: v for k, v in e.parameters.items()
                                                   if k != "declared"})
                for e in super().entries()]


def test_report_of_releases_recorded_without_their_rules() -> None:
    """Older ledgers: the mean's bounds come from its recorded recipe, and the report says
    what was not recorded instead of inventing it."""
    s = Session(DATA, Budget(1.0), None, schema=SCHEMA, rng=SeededRandom(4))
    s.release("count", epsilon=0.1)
    s.release("mean income", epsilon=0.2)
    html = ledger_report(_Older(s.ledger), name="old", checked_at="T")
    assert html.count("The contribution cap was not recorded with this release.") == 1
    assert "The declared bounds and contribution cap were not recorded" in html  # the count
    assert "income values outside the declared bounds [0, 250,000]" in html  # the mean
    assert "The contribution cap was not recorded with these releases." in html
    assert "no person identifier" not in html.lower()  # not claimed without the record
    assert "a person or a row was not recorded" in html


def test_person_neighbours_differ_only_in_released_numbers() -> None:
    """With a person identifier and a cap: two data sets differing in one person (all of
    their rows), the same seeded noise, no ledger file.  Swapping the second run's released
    outputs into the first ledger turns its report into the second's byte for byte, and
    the methodology section is the same in both."""
    a, b = _person_session(_person_data()), _person_session(_person_data(drop=7))
    entries_a, entries_b = a.ledger.entries(), b.ledger.entries()
    assert any(not np.array_equal(x.answer, y.answer)
               for x, y in zip(entries_a, entries_b, strict=True))
    report_a = ledger_report(_Frozen(a.ledger), name="p", checked_at="T")
    report_b = ledger_report(_Frozen(b.ledger), name="p", checked_at="T")
    assert report_a != report_b

    def method(html: str) -> str:
        return html[html.index('id="methodology"'):html.index("<h2>Releases</h2>")]

    assert method(report_a) == method(report_b) and "further rows were dropped" in report_a
    swapped = ledger_report(_Frozen(a.ledger, entries_b), name="p", checked_at="T")
    assert swapped == report_b


def _csv_links(html: str) -> list[str]:
    return [unquote(h.split(",", 1)[1])
            for h in re.findall(r'href="(data:text/csv;charset=utf-8,[^"]*)"', html)]


def test_csv_download_holds_the_released_table_in_full_precision() -> None:
    s = _person_session(_person_data())
    html = ledger_report(s.ledger, name="p")
    tables = _csv_links(html)
    assert len(tables) == len(PERSON_QUERIES)
    for text, entry in zip(tables, s.ledger.entries(), strict=True):
        rows = list(csv.reader(io.StringIO(text)))
        values = np.asarray(entry.answer, dtype=np.float64).ravel()
        assert [float(r[-3]) for r in rows[1:]] == list(values)  # every cell has its bar
    grouped = list(csv.reader(io.StringIO(tables[2])))
    assert grouped[0] == ["g", "sum", "low", "high"]
    assert [r[0] for r in grouped[1:]] == ["a", "b", "c"]
    assert all(float(r[2]) <= float(r[1]) <= float(r[3]) for r in grouped[1:])
    assert next(iter(csv.reader(io.StringIO(tables[3])))) == ["quantile", "level_low",
                                                            "level_high"]


def test_keys_with_control_characters_are_written_as_escapes() -> None:
    """A released key (or query) with a control character, a line break or a bidirectional
    override is written in the page as its Python escape, as in the printed table -- never
    raw (an override would reorder the text around it) -- while the csv keeps it as is."""
    cats = ["a\x01b", "c\u202ed", "e\nf"]
    data = {"x": np.arange(30.0), "g": np.array([cats[i % 3] for i in range(30)], dtype=object)}
    schema = {"columns": {"x": {"lower": 0, "upper": 100}, "g": {"categories": cats}}}
    s = Session(data, Budget(1.0), None, schema=schema, rng=SeededRandom(1))
    s.release("count by g", epsilon=0.5)
    html = ledger_report(s.ledger, name="t", checked_at="T")
    body = html[:html.index("data:text/csv")] + html[html.index("Download this table"):]
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\u202e]", body)
    assert body.count("a\\x01b") == 2 and body.count("c\\u202ed") == 2  # table and chart
    assert [r[0] for r in csv.reader(io.StringIO(_csv_links(html)[0]))][1:] == cats


# --------------------------------------------------------------------------- browser
def test_csv_download_works_under_the_unchanged_csp(tmp_path: Path) -> None:
    """A ``data:`` download link needs no Content-Security-Policy change: in headless
    Chromium a real click on the grouped table's link downloads exactly its csv, and the
    page logs no CSP violation -- while a control page under the same policy that tries to
    fetch an image does log one (so the check can fail)."""
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # unchanged
    exe = chromium_or_skip()
    s = _person_session(_person_data())
    page = tmp_path / "report.html"
    html = ledger_report(s.ledger, name="p")
    page.write_text(html, encoding="utf-8")
    control = tmp_path / "control.html"
    control.write_text(f'<html><head><meta http-equiv="Content-Security-Policy" '
                       f'content="{CSP}"></head><body><img src="http://127.0.0.1:9/x.png">'
                       "</body></html>", encoding="utf-8")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = Browser(exe, tmp_path / "profile", downloads)
    try:
        browser.open(page.resolve().as_uri())
        browser.click("#release-3 a[download]")
        done = browser.wait(lambda m: m.get("method") == "Browser.downloadProgress"
                            and m["params"]["state"] in ("completed", "canceled"), 30)
        clean = browser.console()
        browser.open(control.resolve().as_uri())
        first = browser.wait(lambda m: m.get("method") == "Log.entryAdded", 10)
        blocked = [first["params"]["entry"].get("text", ""), *browser.console()]
    finally:
        browser.close()
    assert done["params"]["state"] == "completed"
    got = (downloads / "release-3.csv").read_text(encoding="utf-8")
    assert got == _csv_links(html)[2]
    assert clean == []
    assert any("Content Security Policy" in m for m in blocked), blocked


def test_report_numbers_have_no_exponents_and_use_separators() -> None:
    s = Session(DATA, Budget(epsilon=1.0), None, schema=SCHEMA, rng=SeededRandom(2))
    s.release("sum income", epsilon=0.2)
    s.release("mean income", epsilon=0.2)
    html = ledger_report(s.ledger, name="x")
    cells = re.findall(r"<td>([^<]*)</td>", html)
    numbers = [c for c in cells if re.fullmatch(r"-?[\d,.]+", c)]
    assert numbers and not any("e+" in c for c in cells)
    big = [c for c in numbers if abs(_number(c)) >= 10_000]
    assert big and all("," in c for c in big)
    entry = s.ledger.entries()[0]
    lo, hi = entry_interval(entry, 0.95)
    shown = value_text(float(entry.answer), float(lo), float(hi))
    assert f"<td>{shown}</td>" in html and shown in big  # rounded to its error bar
