"""A minimal headless-Chromium driver for the report's browser tests (no extra package).

Chromium speaks the DevTools protocol over a pipe (``--remote-debugging-pipe``: it reads
NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), so a real
browser can open the report, measure what it rendered, click a link and report the
download -- with the standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_or_skip() -> str:
    """The Chromium executable; skipped locally, a failure in CI, when it is missing."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("headless Chromium is required in CI (.ci/run installs the Debian "
                    "package 'chromium'); not found on PATH")
    pytest.skip("chromium not installed (apt-get install chromium)")


class Browser:
    """One headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, exe: str, profile: Path, downloads: Path | None = None) -> None:
        to_browser, self._w = os.pipe()
        self._r, from_browser = os.pipe()

        def fds() -> None:  # in the child: the pipe ends as fd 3 (commands) and 4 (replies)
            a, b = os.dup(to_browser), os.dup(from_browser)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "--window-size=1100,1400",
             "--remote-debugging-pipe", "about:blank"], preexec_fn=fds, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buf, self._id, self.events = b"", 0, []  # type: ignore[var-annotated]
        self.session: str | None = None
        if downloads is not None:
            self.send("Browser.setDownloadBehavior", {
                "behavior": "allow", "downloadPath": str(downloads), "eventsEnabled": True})
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Log", "Runtime"):
            self.send(f"{domain}.enable")

    def send(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = 30) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith(("Browser.", "Target.")):
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        reply = self.wait(lambda m, i=self._id: m.get("id") == i, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})  # type: ignore[no-any-return]

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 30
             ) -> dict[str, Any]:
        for i, m in enumerate(self.events):
            if pred(m):
                return self.events.pop(i)  # type: ignore[no-any-return]
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                m = json.loads(raw)
                if pred(m):
                    return m  # type: ignore[no-any-return]
                self.events.append(m)
            ready, _, _ = select.select([self._r], [], [], 0.25)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed its DevTools pipe")
                self._buf += chunk
        raise TimeoutError("no DevTools message matched in time")

    def open(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait(lambda m: m.get("method") == "Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (DevTools evaluation)."""
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return res["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) in the middle of the element."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                      "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                      "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def console(self) -> list[str]:
        """Every console / log message the page produced so far (CSP violations land here)."""
        out = []
        for m in self.events:
            if m.get("method") == "Log.entryAdded":
                out.append(m["params"]["entry"].get("text", ""))
            elif m.get("method") == "Runtime.consoleAPICalled":
                out += [str(a.get("value", "")) for a in m["params"].get("args", [])]
        return out

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self._w)
        os.close(self._r)
