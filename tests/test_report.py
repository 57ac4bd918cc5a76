"""The HTML release report: built from public fields only, self-contained, and rendered
by a real browser (headless Chromium)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpnoise import Budget, SeededRandom, Session
from dpnoise.demo import survey_paths
from dpnoise.report import CSP, law_html, ledger_report
from dpnoise.report.laws import bin_law

from .browser import FLAGS, Browser, chromium_or_skip

DATA, SCHEMA = survey_paths()
QUERIES = [("count", 0.1), ("mean age", 0.2), ("histogram region", 0.2),
           ("sum satisfaction", 0.1), ("count where age >= 65", 0.1)]


def _session(data: Any, seed: int = 7) -> Session:
    return Session(data, Budget(epsilon=2.0), None, schema=SCHEMA, rng=SeededRandom(seed))


def _released(data: Any) -> Session:
    s = _session(data)
    for q, e in QUERIES:
        s.release(q, epsilon=e)
    return s


class _Frozen:
    """A ledger seen with fixed timestamps (and optionally another run's released
    outputs: answers, recorded noisy components and released keys)."""

    def __init__(self, ledger: Any, released: list[Any] | None = None) -> None:
        self._ledger = ledger
        self._released = released

    def entries(self) -> list[Any]:
        out = []
        for i, e in enumerate(self._ledger.entries()):
            e = dataclasses.replace(e, created_at="2026-01-01T00:00:00Z",
                                    completed_at="2026-01-01T00:00:00Z")
            if self._released is not None:
                o = self._released[i]
                e = dataclasses.replace(e, answer=o.answer, components=o.components,
                                        released_keys=o.released_keys)
            out.append(e)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)


def _survey_columns() -> dict[str, np.ndarray]:
    import csv

    with DATA.open() as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([r[k] for r in rows]) if k == "region" else
            np.array([float(r[k]) for r in rows]) for k in rows[0]}


def test_report_differs_only_in_released_numbers_between_neighbours() -> None:
    """Two data sets differing in one person, the same noise: swapping in the other
    report's released answers turns one report into the other, byte for byte -- so the
    report depends on the data only through the released (noisy) answers."""
    full = _survey_columns()
    drop_one = {k: v[1:] for k, v in full.items()}  # one person fewer
    a, b = _released(full), _released(drop_one)
    answers_b = [e.answer for e in b.ledger.entries()]
    answers_a = [e.answer for e in a.ledger.entries()]
    assert any(not np.array_equal(x, y) for x, y in zip(answers_a, answers_b, strict=True))
    assert any(e.components for e in a.ledger.entries())  # the mean's error bars use them
    report_a = ledger_report(_Frozen(a.ledger), name="survey", checked_at="T")
    report_b = ledger_report(_Frozen(b.ledger), name="survey", checked_at="T")
    assert report_a != report_b  # the released outputs differ ...
    swapped = ledger_report(_Frozen(a.ledger, b.ledger.entries()), name="survey",
                            checked_at="T")
    assert swapped == report_b  # ... and nothing else does


def test_report_holds_no_fingerprint_and_fetches_nothing() -> None:
    s = _released(DATA)
    html = ledger_report(s.ledger, name="survey")
    assert f'content="{CSP}"' in html and "default-src 'none'" in html
    assert "<script" not in html.lower()
    # nothing to fetch: no src attribute at all, no url(...) in the CSS, and the only
    # links are the inline csv downloads (data: URLs, one per completed release)
    assert not re.search(r"\bsrc\s*=", html, re.I)
    hrefs = re.findall(r"\bhref\s*=\s*\"([^\"]*)\"", html, re.I)
    assert len(hrefs) == len(re.findall(r"\bhref\s*=", html, re.I)) == len(QUERIES)
    assert all(h.startswith("data:text/csv;charset=utf-8,") for h in hrefs)
    assert "url(" not in html
    for e in s.ledger.entries():
        assert e.dataset not in html  # the data set's fingerprint (path, size, time) never
    assert str(DATA) not in html and str(DATA.name) not in html
    assert html.count('class="card release"') == len(QUERIES)


def test_error_law_is_drawn_at_the_released_value_not_the_true_value() -> None:
    """The chart of a range-adherent release must not move with the true value: it is
    drawn at the released value, so two data sets with different true answers give the
    same charts once the same released outputs are swapped in (and different charts
    otherwise: the charts do follow the released value)."""
    full = _survey_columns()
    shifted = {**full, "age": np.clip(full["age"] + 20, 0, 130)}
    ledgers = []
    for data in (full, shifted):
        s = _session(data)
        s.release("mean age", epsilon=0.5, mechanism="range-laplace")
        s.release("sum age", epsilon=0.5, mechanism="range-laplace")
        ledgers.append(s.ledger)

    def charts(ledger: Any, released: list[Any] | None = None) -> list[str]:
        html = ledger_report(_Frozen(ledger, released), name="x", checked_at="T")
        return re.findall(r"<svg.*?</svg>", html)

    own, other = charts(ledgers[0]), charts(ledgers[1])
    swapped = charts(ledgers[0], ledgers[1].entries())
    assert swapped == other and own != other and len(own) >= 5
    html = ledger_report(_Frozen(ledgers[0]), name="x", checked_at="T")
    captions = re.findall(r"<figcaption>(error of this .*?)</figcaption>", html)
    assert len(captions) == 2  # the mean's own error law and the sum's
    assert all("the released value" in c and "as if" in c for c in captions)


def test_bin_law_is_the_exact_law() -> None:
    from dpnoise import Geometric, Laplace

    lv = bin_law(Laplace(epsilon=1.0, sensitivity=1.0).noise())
    assert lv is not None
    assert 0.998 <= sum(lv.probabilities) <= 1.0
    wide = bin_law(Geometric(epsilon=0.1).noise())  # many integers per bar, all bars equal
    assert wide is not None
    widths = np.diff(wide.edges)
    assert np.all(widths == widths[0]) and widths[0] >= 3 and widths[0] % 2 == 1
    mid = int(np.argmax(wide.probabilities))  # the mode's bar is centred on the error 0
    assert wide.edges[mid] == -wide.edges[mid + 1]
    assert wide.probabilities[mid - 1] == pytest.approx(wide.probabilities[mid + 1])
    g = bin_law(Geometric(epsilon=2.0).noise())
    assert g is not None
    centres = [(a + b) / 2 for a, b in zip(g.edges[:-1], g.edges[1:], strict=True)]
    assert all(float(c).is_integer() for c in centres)  # one bar per integer
    peak = centres[int(np.argmax(g.probabilities))]
    assert peak == 0.0
    assert "<svg" in law_html(Laplace(epsilon=1.0, sensitivity=1.0).noise())


def _chromium_cmd(exe: str, profile: str) -> list[str]:
    return [exe, *FLAGS, f"--user-data-dir={profile}", "--window-size=1100,4000"]


HEADINGS = ["What the guarantee means for a person", "Declared bounds: values beyond them are "
            "clamped", "Contribution cap: further rows are dropped", "Missing values",
            "How to read an error bar"]


def test_report_renders_in_a_real_browser(tmp_path: Path) -> None:
    """The page as a browser lays it out: the methodology section with its five parts,
    per release the rules in words, a bar chart of the table with error bars and a csv
    link -- all visible (non-zero size) -- no console message (no CSP violation), and a
    screenshot that is not blank."""
    exe = chromium_or_skip()
    s = _released(DATA)
    page = tmp_path / "report.html"
    page.write_text(ledger_report(s.ledger, name="survey"), encoding="utf-8")
    url = page.resolve().as_uri()
    browser = Browser(exe, tmp_path / "profile")
    try:
        browser.open(url)
        got = browser.js("""(() => {
          const seen = e => e.getBoundingClientRect().height > 0;
          const all = q => Array.from(document.querySelectorAll(q));
          const method = document.querySelector('#methodology + .card');
          return {
            releases: all('section.release').length,
            headings: method ? all('#methodology + .card h3').filter(seen)
                                 .map(h => h.textContent) : [],
            methodHeight: method ? method.getBoundingClientRect().height : 0,
            boundsRows: all('#methodology + .card tbody tr').length,
            rules: all('section.release p.rules').filter(seen)
                     .map(p => p.textContent),
            charts: all('section.release svg.table-chart').filter(
                      g => g.getBoundingClientRect().width > 300
                           && g.querySelectorAll('rect.bar').length > 0).length,
            errbars: all('svg.table-chart path.errbar').length,
            links: all('a[download]').filter(seen).length,
            csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')
                   .getAttribute('content'),
          }; })()""")
        console = browser.console()
    finally:
        browser.close()
    assert got["releases"] == len(QUERIES)
    assert got["headings"] == HEADINGS and got["methodHeight"] > 400
    assert got["boundsRows"] == 2  # age, satisfaction: the numeric columns measured
    assert len(got["rules"]) == len(QUERIES)
    assert all(r.startswith("Bounds and cap:") and "one person" in r for r in got["rules"])
    assert got["charts"] == got["links"] == len(QUERIES)
    assert got["errbars"] == 1 + 1 + 4 + 1 + 1  # one per released cell with an error bar
    assert got["csp"] == CSP and console == []
    shot = tmp_path / "shot.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([*_chromium_cmd(exe, profile), f"--screenshot={shot}", url],
                       capture_output=True, timeout=60, check=True)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    rgb = img[..., :3]
    background = np.median(rgb.reshape(-1, 3), axis=0)
    differs = np.any(np.abs(rgb - background) > 0.1, axis=-1)
    assert differs.mean() > 0.02  # text, cards and charts were drawn (not a blank page)
    blue = (rgb[..., 2] > 0.8) & (rgb[..., 0] < 0.5)  # the chart bars / budget line
    assert blue.sum() > 500


def test_grouped_release_shows_its_public_keys_and_notebook_html() -> None:
    s = _released(DATA)
    html = ledger_report(s.ledger, name="survey")
    for region in ("north", "south", "east", "west"):
        assert f'<td class="q">{region}</td>' in html
    assert "low (95%)" in html  # past count/sum releases: error bars from answer + recipe
    r = s.release("histogram region", epsilon=0.1)
    nb = r._repr_html_()
    assert "<svg" in nb and "north" in nb and "<table>" in nb and "low (95%)" in nb
    lo, hi = r.interval()
    assert f"<td>{int(lo.ravel()[0]):,}</td>" in nb  # counts: whole numbers, separators
    assert f"<td>{int(hi.ravel()[0]):,}</td>" in nb
    assert "Bounds and cap:" in nb and "no person identifier was declared" in nb


def test_report_under_the_pld_accountant_shows_composed_and_basic() -> None:
    s = Session(DATA, Budget(epsilon=1.0, delta=1e-6, accountant="pld"), None, schema=SCHEMA,
                rng=SeededRandom(3))
    for q in ("count", "histogram region", "count where age > 40"):
        s.release(q, epsilon=0.1)
    html = ledger_report(s.ledger, name="x")
    assert "under the pld accountant" in html and "basic composition would have" in html
    spent, basic = s.ledger.spent(), s.ledger.spent_basic()
    assert f"{spent.epsilon:.6g}" in html and f"{basic.epsilon:.6g}" in html


def test_report_of_a_release_with_private_keys() -> None:
    """The demo's report: the partition-selected release's cells are labelled with the
    released keys (recorded in the ledger), with error bars and the selection note; the
    median carries its level interval."""
    from dpnoise.demo import run_demo  # the demo includes such a release

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.html"
        assert run_demo(rng=SeededRandom(5), report=str(out)) == 0
        html = out.read_text(encoding="utf-8")
    assert html.count('class="card release"') >= len(QUERIES)
    area = html[html.index("mean age by area"):]
    area = area[:area.index("</section>")]
    assert "cell 1" not in area and '<td class="q">east</td>' in area
    assert "low (95%)" in area and "partition selection" in area
    median = html[html.index("median income"):]
    median = median[:median.index("</section>")]
    assert "95% error bar, in levels" in median
    assert re.search(r"between the \d+(st|nd|rd|th) and \d+(st|nd|rd|th) percentiles", median)
