"""Regenerate docs/img/report.png: the demo's HTML release report, rendered by headless
Chromium (the screenshot shown in the README).

    python scripts/report_screenshot.py            # needs `chromium` on PATH, matplotlib

The demo's releases (``dpnoise demo``'s queries, its GROUP BY and its median included) are
released into a fresh ledger file (OS randomness: seeded randomness is never charged to a
ledger file), so the released numbers differ at every regeneration.  The picture stacks
three excerpts of the one rendered page, each cut at an element's box as the browser laid
it out: the title and budget cards, the start of the methodology section (the guarantee
and the declared bounds), and the grouped mean (its rules in words, table with error bars,
csv link and bar chart).
"""

from __future__ import annotations

import base64
import io
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from dpnoise import Session
from dpnoise.demo import EXTRA, QUERIES, TOTAL, demo_schema, survey_paths
from dpnoise.report import ledger_report
from dpnoise.session import Ledger

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img" / "report.png"
WIDTH = 1000
GROUPED = "SELECT region, AVG(satisfaction) FROM data GROUP BY region"
# (top, bottom) of each excerpt: JavaScript expressions giving page coordinates
EXCERPTS = [
    ("0", "document.querySelector('.summary').getBoundingClientRect().bottom + 12"),
    ("document.getElementById('methodology').getBoundingClientRect().top - 8",
     "Array.from(document.querySelectorAll('.method h3'))[2].getBoundingClientRect().top"),
    ("document.getElementById('grouped').getBoundingClientRect().top - 8",
     "document.getElementById('grouped').getBoundingClientRect().bottom + 8"),
]


def report_html(tmp: Path) -> str:
    data, schema = survey_paths()
    ledger = Ledger(tmp / "demo.ledger", budget=TOTAL, create=True)
    with Session(data, None, ledger, schema=demo_schema(schema)) as s:
        for _label, query, epsilon in QUERIES:
            s.release(query, epsilon=epsilon)
        for _label, query, epsilon, delta in EXTRA:
            s.release(query, epsilon=epsilon, delta=delta)
        grouped = next(e.id for e in s.ledger.entries() if e.query == GROUPED)
        html = ledger_report(s.ledger, name="survey (synthetic demo data)")
    return html.replace(f'id="release-{grouped}"', 'id="grouped"', 1)


def capture(browser: Any, top: str, bottom: str) -> np.ndarray:
    import matplotlib.image as mpimg

    y0, y1 = (float(browser.js(f"({e}) + window.scrollY")) for e in (top, bottom))
    shot = browser.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": y0, "width": WIDTH, "height": y1 - y0, "scale": 1}})
    return np.asarray(mpimg.imread(io.BytesIO(base64.b64decode(shot["data"])), format="png"))


def main() -> int:
    import matplotlib.image as mpimg

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        print("chromium not found (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    sys.path.insert(0, str(ROOT))  # tests/browser.py: the DevTools-pipe driver of the tests
    from tests.browser import Browser

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        page = tmp / "report.html"
        page.write_text(report_html(tmp), encoding="utf-8")
        browser = Browser(exe, tmp / "profile")
        try:
            browser.send("Emulation.setDeviceMetricsOverride", {
                "width": WIDTH, "height": 1300, "deviceScaleFactor": 1, "mobile": False})
            browser.open(page.as_uri())
            parts = [capture(browser, top, bottom) for top, bottom in EXCERPTS]
        finally:
            browser.close()
    gap = np.ones((14, WIDTH, parts[0].shape[2]), dtype=parts[0].dtype)
    gap[..., :3] = (0xF4 / 255, 0xF6 / 255, 0xF8 / 255)  # the page's background
    gap[6:8, 24:-24, :3] = 0.6  # a thin rule between the excerpts
    stacked = np.concatenate([p if i == 0 else np.concatenate([gap, p])
                              for i, p in enumerate(parts)])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    mpimg.imsave(OUT, stacked)
    print(f"wrote {OUT.relative_to(ROOT)} ({stacked.shape[1]}x{stacked.shape[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
