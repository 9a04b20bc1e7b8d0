"""Debian's chromium driven by Playwright (executable_path): pages as a person sees them."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-pipe",
)


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A headless Chromium and one page in it, spoken to over the DevTools pipe."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Above 9, so that the shell's redirections to 3 and 4 below cannot overwrite them.
        to_browser_r, from_browser_w = (_high(fd) for fd in (to_browser_r, from_browser_w))
        # bash puts the pipe ends where Chromium expects them, its fd 3 and 4 (dash takes one digit only).
        script = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
        self.process = subprocess.Popen(
            ["bash", "-c", script, executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(to_browser_r, from_browser_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._ids = 0
        self._loads = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable", session=True)
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=True)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: bool = False, timeout: float = 30
    ) -> dict[str, Any]:
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._ids:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def open(self, url: str) -> None:
        """Load `url` afresh (a new query string each time, so that only its fragment may repeat)."""
        self._loads += 1
        base, _, fragment = url.partition("#")
        document = f"{base}?load={self._loads}"
        self.call("Page.navigate", {"url": document + (f"#{fragment}" if fragment else "")}, session=True)
        deadline = time.monotonic() + 30
        check = (
            f"document.readyState === 'complete' && location.href.split('#')[0] === {json.dumps(document)}"
        )
        while not self.js(check):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.05)

    def js(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def key(self, key: str, code: str, key_code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code}
            self.call("Input.dispatchKeyEvent", params, session=True)

    def click(self, selector: str) -> None:
        box = self.js(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            params = {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}
            self.call("Input.dispatchMouseEvent", params, session=True)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


# Collects the page's `securitypolicyviolation` events, installed before any script of the page runs.
CSP_LISTENER = (
    "window.__csp = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));"
)


def csp_problems(page: Browser) -> list[str]:
    """What the browser refused or was asked since the last call: CSP violations, dialogs."""
    listened = page.js("window.__csp || []")  # also reads the events that came before its answer
    problems = [str(v) for v in listened]
    for event in page.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Log.entryAdded" and "Content Security Policy" in params["entry"]["text"]:
            problems.append(params["entry"]["text"])
        elif method == "Page.javascriptDialogOpening":
            problems.append(f"a dialog: {params.get('message')}")
    page.events.clear()
    return problems


@dataclass
class WatchedPage:
    """A Playwright page, with the dialogs it opened (a script ran) and the Content-Security-Policy
    complaints its console reported, for the test to assert on."""

    page: Any
    dialogs: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@contextlib.contextmanager
def watched_page(browser: Any, width: int, height: int) -> Iterator[WatchedPage]:
    """A new Playwright page of `browser` with the CSP listener installed before any of its scripts;
    its context is closed on leaving."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(CSP_LISTENER)
    watched = WatchedPage(context.new_page())
    watched.page.on("dialog", lambda dialog: (watched.dialogs.append(dialog.message), dialog.dismiss()))
    watched.page.on(
        "console",
        lambda m: watched.refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    try:
        yield watched
    finally:
        context.close()


# The clicks of a whole match, made in the page itself (a click event on a button, as a person's
# click makes; Playwright's own click waits for the button to be still and costs a round trip per
# click): at each new turn, one of the buttons highlighted as legal, chosen at random from a seed.
CLICK_THROUGH_MATCH = """async ([seed, selector]) => {
    let state = seed, seen = "", clicks = 0;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (;;) {
        const started = Date.now();
        let ready;
        while (!(ready = document.body.dataset.ready) || ready === seen) {
            if (Date.now() - started > 30000) throw new Error("no turn after " + seen);
            await new Promise(resolve => setTimeout(resolve, 2));
        }
        seen = ready;
        if (ready === "ended") return clicks;
        const legal = [...document.querySelectorAll(selector)];
        if (!legal.length) throw new Error("a turn without a legal button: " + ready);
        legal[Math.floor(next() * legal.length)].click();
        clicks += 1;
    }
}"""
