"""The HTML report in a real headless Chromium (Debian's package, see tests/setup_system.py).

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: requests on
fd 3, answers on fd 4, NUL-separated JSON) with the standard library only, so the test sees
console messages with their level, uncaught exceptions, every network request, and takes the
screenshot itself.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from nexmark.report.compare import compare, render_compare_html
from nexmark.report.html import write_report
from nexmark.results.store import load_results

DATA = Path(__file__).parents[1] / "data"
RESULTS_FILES = sorted(DATA.rglob("results.json"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]


class DevTools:
    """A minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, user_data_dir: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_fds() -> None:  # in the child: the pipe ends at the fds Chromium expects
            # Move both ends above 10 first, so that placing one cannot overwrite the other.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_chrome_r, from_chrome_w)]
            os.dup2(high[0], 3)  # dup2 leaves the copies inheritable
            os.dup2(high[1], 4)

        args = [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--remote-debugging-pipe",
            f"--user-data-dir={user_data_dir}", "--window-size=1200,900", "about:blank",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds, close_fds=False,  # other fds are non-inheritable anyway
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_chrome], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, timeout: float = 30, **params):
        """Send a command and return its result; events read meanwhile are kept."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError, ConnectionError):
            self.call("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            os.close(fd)


def open_page(url: str, tmp_path: Path) -> tuple[list[dict], bytes, dict]:
    """Load `url`; return (events, screenshot PNG, facts evaluated in the page)."""
    tools = DevTools(tmp_path / "chromium-profile")
    try:
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            tools.call(f"{domain}.enable", session)
        tools.call("Page.navigate", session, url=url)
        tools.wait_event("Page.loadEventFired", timeout=60)
        facts = tools.call(
            "Runtime.evaluate", session, returnByValue=True,
            expression="JSON.stringify({images: document.images.length, broken: "
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
            ".length, title: document.title})",
        )["result"]["value"]  # fmt: skip
        shot = tools.call("Page.captureScreenshot", session, format="png")["data"]
        return tools.events, base64.b64decode(shot), json.loads(facts)
    finally:
        tools.close()


def problems(events: list[dict]) -> list[str]:
    """Console errors and warnings, uncaught exceptions, error log entries, network requests."""
    out = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            out.append(f"console {params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            thrown = details.get("exception", {}).get("description", "")
            out.append(f"exception: {details.get('text')} {thrown}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            out.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith(("data:", "file:", "about:")):
                out.append(f"network request: {url}")
    return out


def assert_real_screenshot(png: bytes) -> None:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = mpimg.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] >= 500 and pixels.shape[1] >= 800
    rgb = pixels[..., :3].reshape(-1, 3)
    not_white = np.mean(rgb.min(axis=1) < 0.9)
    assert not_white > 0.02, "the screenshot is (almost) blank"
    assert len(np.unique((rgb * 255).astype(np.uint8), axis=0)) > 50  # text, tables, charts


def test_the_checker_sees_console_errors(tmp_path: Path) -> None:
    """The checks below can fail: a page with an error is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body><p>x</p>"
        "<script>console.error('boom'); notDefined();</script></body></html>"
    )
    events, _, _ = open_page(page.as_uri(), tmp_path)
    found = problems(events)
    assert any("boom" in p for p in found)
    assert any("notDefined" in p for p in found)


@pytest.mark.parametrize(
    "results_file", RESULTS_FILES, ids=lambda p: str(p.parent.relative_to(DATA))
)
def test_report_opens_cleanly(results_file: Path, tmp_path: Path) -> None:
    work = tmp_path / "results"
    shutil.copytree(results_file.parent, work)
    page = write_report(work)
    events, png, facts = open_page(page.as_uri(), tmp_path)
    assert problems(events) == []
    assert facts["title"].startswith("nexmark report")
    expected = sum(1 for r in load_results(work) if r.timeseries) + 1  # + the summary chart
    assert facts["images"] >= expected
    assert facts["broken"] == 0
    assert_real_screenshot(png)


def test_compare_page_opens_cleanly(tmp_path: Path) -> None:
    base = load_results(DATA / "constructed" / "quick-base")
    new = load_results(DATA / "constructed" / "quick-new")
    page = tmp_path / "compare.html"
    page.write_text(render_compare_html(compare(base, new), "base", "new"), encoding="utf-8")
    events, png, facts = open_page(page.as_uri(), tmp_path)
    assert problems(events) == []
    assert facts["title"] == "nexmark compare"
    assert_real_screenshot(png)
