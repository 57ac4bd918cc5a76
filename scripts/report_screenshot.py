"""Regenerate docs/img/report.png: the demo's HTML release report, rendered by headless
Chromium (the screenshot shown in the README).

    python scripts/report_screenshot.py            # needs `chromium` on PATH

The demo's queries are released into a fresh ledger file (OS randomness: seeded randomness
is never charged to a ledger file), so the released numbers differ at every regeneration.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dpnoise import Session
from dpnoise.demo import QUERIES, TOTAL, survey_paths
from dpnoise.report import ledger_report
from dpnoise.session import Ledger

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img" / "report.png"


def main() -> int:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        print("chromium not found (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    data, schema = survey_paths()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger(Path(tmp) / "demo.ledger", budget=TOTAL, create=True)
        with Session(data, None, ledger, schema=schema) as s:
            for _label, query, epsilon in QUERIES:
                s.release(query, epsilon=epsilon)
            html = ledger_report(s.ledger, name="survey (synthetic demo data)")
        page = Path(tmp) / "report.html"
        page.write_text(html, encoding="utf-8")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp}/profile", "--window-size=1000,1300",
                        "--hide-scrollbars", f"--screenshot={OUT}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
