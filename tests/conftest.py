"""Fixtures shared by the test modules."""

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A real PostgreSQL server for the store's tests: see tests/postgres.py.
from postgres import postgres_db, postgres_server, postgres_url
from support.browser import CSP_LISTENER, Browser, csp_problems, find_chromium

from arena.standing.store import Store

__all__ = ["any_store", "postgres_db", "postgres_server", "postgres_url"]

# A shell starts a background job (`pytest &`, `nohup ... &`) with Ctrl-C ignored, and every child
# inherits that: the tests that stop a server or a bot with SIGINT would then wait out their
# timeouts. Ctrl-C is given back its usual meaning, for this process and so for its children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The standing arena's store on a SQLite file, and on a real PostgreSQL server."""
    url = str(tmp_path / "arena.db") if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    opened = Store(url)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One Chromium for the module that reports every CSP violation (its log, and the page's
    `securitypolicyviolation` events, listened to before any script of the page runs)."""
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI has no Chromium: it is listed in .ci/apt-packages, which .ci/run installs")
        pytest.skip(
            "no Chromium here (Debian: apt-get install chromium); CI installs it and runs these tests"
        )
    page = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    try:
        page.call("Log.enable", session=True)
        page.call("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER}, session=True)
        yield page
    finally:
        page.close()


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    """The module's Chromium; the test fails if a page it opened broke its policy."""
    chromium.events.clear()
    yield chromium
    assert csp_problems(chromium) == []


@pytest.fixture(scope="module")
def playwright_chromium() -> Iterator[Any]:
    """One Chromium for the module, driven by Playwright (Debian's chromium through executable_path)."""
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI has no Chromium: it is listed in .ci/apt-packages, which .ci/run installs")
        pytest.skip("no Chromium here (Debian: apt-get install chromium)")
    playwright_sync = pytest.importorskip("playwright.sync_api")
    with playwright_sync.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()
