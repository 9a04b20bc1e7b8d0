"""The web site of `arena serve --http`, in a real browser.

One real server (`arena serve --http 127.0.0.1:0`, the command itself, with a SQLite store)
and one Chromium for the whole module: Debian's chromium (.ci/apt-packages) driven by
Playwright through `executable_path` (`playwright install` would download a browser). Real
bots (tests/bots/lobby_bot.py) join the lobby and play rated matches first; a second match is
watched live. gamma's Hello names it `<!--<script>…`, which once blanked the replay viewer of
every match it played. Every page is opened under the site's Content-Security-Policy, and a test
fails if the browser reports a violation of it (or a script of a name ran: a dialog).
Set ARENA_WEB_SCREENSHOTS=DIR to also save the four pages' screenshots there
(docs/img is where docs/ARENA.md shows them from).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from sse_starlette import ServerSentEvent
from support import wait_for
from support.admin import admin_channel
from support.browser import watched_page
from support.site import served_site
from support.standing import lobby_bot

from arena.engine import find_variant
from arena.referee.runner import MatchConfig, MatchRunner, MatchState
from arena.referee.seat import TimeControl
from arena.replay.table import js_int
from arena.server.app import serve
from arena.standing.store import Store
from arena.standing.versions import Versions
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from arena.web.app import REPLAY_CSP, SITE_CSP, LiveStream, Site, serve_site
from arena.web.feed import MatchFeed, ViewerClock, encode_update, event_dict, event_json, json_mapping
from benchmarks.common import driver_command

playwright_sync = pytest.importorskip("playwright.sync_api")

OPERATOR = "web-test-operator"
XSS = "<!--<script>alert(1)</script>"
BOTS = ("alpha", "beta", "gamma")
CONFIG = """[arena]
variants = ["grosstarock"]
deals = 1
per_decision_ms = 3000
bank_ms = 10000
tick_s = 0.05
start_timeout_s = 10.0
"""


@dataclass
class Arena:
    url: str  # http://127.0.0.1:PORT
    grpc: str  # 127.0.0.1:PORT
    tokens: dict[str, str]
    process: subprocess.Popen[str]
    store: Path = Path()  # the server's SQLite store

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def api(self, path: str) -> Any:
        status, body = self.get(path)
        assert status == 200, (path, status, body)
        return json.loads(body)

    def play(self, matches: int, delay: float = 0.0) -> list[subprocess.Popen[str]]:
        """The three bots join the lobby and play `matches` matches (gamma's Hello names it XSS)."""
        return [
            lobby_bot(
                self.grpc,
                self.tokens[name],
                MATCHES=str(matches),
                DELAY=str(delay),
                **({"HELLO_NAME": XSS} if name == "gamma" else {}),
            )
            for name in BOTS
        ]


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    directory = tmp_path_factory.mktemp("web")
    (directory / "arena.toml").write_text(CONFIG)
    (directory / "operator").write_text(OPERATOR + "\n")
    options = ("--arena-config", str(directory / "arena.toml"))
    options += ("--operator-token-file", str(directory / "operator"))
    tokens: dict[str, str] = {}
    with served_site(directory, *options) as served:
        with admin_channel(served.grpc, OPERATOR) as channel:
            admin = pb_grpc.AdminServiceStub(channel)
            for name in BOTS:
                tokens[name] = admin.RegisterBot(pb.RegisterBotRequest(name=name)).token
        site = Arena(served.url, served.grpc, tokens, served.process, directory / "arena.db")
        for bot in site.play(matches=2):
            _out, err = bot.communicate(timeout=120)
            assert bot.returncode == 0, err
        wait_for(lambda: len(site.api("/api/matches?state=finished")["matches"]) >= 2, 30, "finished matches")
        yield site
    assert not any(token in line for line in served.log for token in tokens.values())


@pytest.fixture(scope="module")
def browser(playwright_chromium: Any) -> Any:
    return playwright_chromium


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that fails its test on a dialog (a name's script ran) or a CSP violation (reported on
    the console, or as a `securitypolicyviolation` event, listened to before the page's scripts)."""
    with watched_page(browser, 900, 800) as watched:
        yield watched.page
        watched.refused.extend(_violations(watched.page.main_frame))
    assert not watched.dialogs, f"a script ran: {watched.dialogs}"
    assert not watched.refused, f"the page broke its Content-Security-Policy: {watched.refused}"


def _violations(frame: Any) -> list[str]:
    """The `securitypolicyviolation` events the listener saw in the frame's current document."""
    try:
        return list(frame.evaluate("window.__csp || []"))
    except playwright_sync.Error:  # the document is going away; the console still reports its violations
        return []


def screenshot(page: Any, name: str) -> None:
    where = os.environ.get("ARENA_WEB_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"web-{name}.png"), full_page=True)


def test_leaderboard_lists_the_bots_after_matches(arena: Arena, page: Any) -> None:
    page.goto(arena.url + "/")
    page.wait_for_selector("#board table")
    names = page.locator("#board td a").all_text_contents()
    assert sorted(set(names) & set(BOTS)) == sorted(BOTS)
    rows = page.locator("#board tbody tr")
    assert rows.count() == 3
    # A click on a column sorts by it: matches played are equal, names sort alphabetically.
    page.locator("th", has_text="Bot").click()
    assert page.locator("#board tbody tr td:nth-child(2)").all_text_contents() == sorted(BOTS)
    screenshot(page, "leaderboard")
    for standing in arena.api("/api/standings")["standings"]:
        assert standing["matches"] == 2


def test_no_token_in_any_page_or_answer(arena: Arena) -> None:
    match_id = arena.api("/api/matches?state=finished")["matches"][0]["match_id"]
    paths = ["/", "/matches", "/api/standings", "/api/matches", f"/api/matches/{match_id}"]
    paths += [f"/matches/{match_id}", f"/api/matches/{match_id}/replay"]
    for name in BOTS:
        paths += [f"/bots/{name}", f"/api/bots/{name}"]
    for path in paths:
        status, body = arena.get(path)
        assert status == 200, path
        assert not any(token in body for token in arena.tokens.values()), path
        assert "gta_" not in body, path


def test_bot_page_shows_recent_matches_history_and_head_to_head(arena: Arena, page: Any) -> None:
    page.goto(arena.url + "/bots/alpha")
    page.wait_for_selector("svg.plot")
    assert page.locator("h1").text_content() == "alpha"
    finished = arena.api("/api/matches?bot=alpha&state=finished")["matches"]
    links = page.locator("a[href^='/matches/']")
    hrefs = {links.nth(i).get_attribute("href") for i in range(links.count())}
    assert {f"/matches/{m['match_id']}" for m in finished} <= hrefs
    assert page.locator("svg.plot circle").count() == 2  # one point after each rated match
    alpha = arena.api("/api/bots/alpha")
    # The history, recomputed from the replays, ends at the rating the store holds.
    [rating] = alpha["ratings"]
    assert (alpha["history"][-1]["mu"], alpha["history"][-1]["sigma"]) == (rating["mu"], rating["sigma"])
    h2h = alpha["head_to_head"]
    assert {row["opponent"] for row in h2h} == {"beta", "gamma"}
    assert all(row["matches"] == 2 for row in h2h)
    screenshot(page, "bot")
    # The replay viewer opens from the bot page.
    page.locator(f"a[href='/matches/{finished[0]['match_id']}']").first.click()
    page.wait_for_load_state()
    assert page.url.split("#")[0].endswith(f"/matches/{finished[0]['match_id']}")
    assert finished[0]["match_id"] in page.content()
    assert page.locator("#play-on").is_hidden()  # a site without --play seats nobody


def test_a_script_in_a_name_is_shown_as_text(arena: Arena, page: Any) -> None:
    page.goto(arena.url + "/bots/gamma")
    page.wait_for_selector(".facts")
    assert XSS in page.locator(".facts").text_content()
    assert page.locator("script:not([src])").count() == 0
    assert arena.api("/api/bots/gamma")["language"] == XSS
    # The same text in a URL: the 404 page shows it, escaped.
    response = page.goto(arena.url + "/bots/" + urllib.request.quote(XSS, safe=""))
    assert response.status == 404
    assert XSS in page.locator("p.error").text_content()
    assert page.locator("script").count() == 0


def test_a_bot_named_with_a_comment_and_a_script_leaves_its_replays_working(arena: Arena, page: Any) -> None:
    """gamma's Hello names it `<!--<script>…`: the replay page of a match it played still draws
    the viewer, with that name as text, under a policy that allows the page's own inline style
    and script by hash and nothing else (the page fixture fails the test on a violation)."""
    [match, *_] = arena.api("/api/matches?bot=gamma&state=finished")["matches"]
    response = page.goto(f"{arena.url}/matches/{match['match_id']}#deal=0&step=3")
    assert response.status == 200
    headers = response.headers
    assert headers["content-security-policy"] == REPLAY_CSP
    assert (headers["x-content-type-options"], headers["x-frame-options"]) == ("nosniff", "DENY")
    page.wait_for_selector("#table .tc-seat")
    assert page.locator("#where").text_content().startswith("deal 0 · decision 3 of ")
    seat = [s["bot"] for s in match["seats"]].index("gamma")
    assert page.locator(f'#table [data-seat="{seat}"] .tc-detail').text_content().startswith(XSS)
    page.keyboard.press("ArrowRight")
    assert page.locator("#where").text_content().startswith("deal 0 · decision 4 of ")
    assert page.locator("#timeline .bar").count() > 0
    # The site's own pages: their policy, which they satisfy with scripts from /static alone.
    for path, ready in (("/", "#board table"), ("/bots/gamma", "svg.plot"), ("/matches", "#matches table")):
        response = page.goto(arena.url + path)
        assert response.headers["content-security-policy"] == SITE_CSP, path
        page.wait_for_selector(ready)
        assert page.locator("script:not([src])").count() == 0, path


def test_unknown_and_malformed_get_404_and_400(arena: Arena, page: Any) -> None:
    response = page.goto(arena.url + "/bots/nobody")
    assert response.status == 404
    assert page.locator("h1").text_content() == "404 Not found"
    screenshot(page, "404")
    assert page.goto(arena.url + "/matches/0123456789abcdef").status == 404
    assert page.goto(arena.url + "/matches/not-an-id/live").status == 404
    assert page.goto(arena.url + "/matches?state=lost").status == 400
    for path, status in [
        ("/api/bots/nobody", 404),
        ("/api/matches/0123456789abcdef", 404),
        ("/api/matches/0123456789abcdef/live", 404),
        ("/api/matches?limit=0", 400),
        ("/api/matches?limit=x", 400),
        ("/api/matches?state=lost", 400),
        ("/api/matches?bot=%3Cb%3E", 400),
        ("/api/standings?variant=%3Cb%3E", 400),
        ("/api/nothing", 404),
    ]:
        code, body = arena.get(path)
        assert (code, "error" in json.loads(body)) == (status, True), path
        assert "Traceback" not in body


def _played(replay: str) -> tuple[dict[int, list[str]], set[str]]:
    """From a replay: the cards played in each deal, in order, and every discarded card."""
    plays: dict[int, list[str]] = {}
    discards: set[str] = set()
    for text in replay.splitlines():
        line = json.loads(text)
        if line["type"] == "action":
            action = line["action"]
            if action["type"] == "play":
                plays.setdefault(line["deal"], []).append(action["card"])
            elif action["type"] == "discard" and "card" in action:
                discards.add(action["card"])
    return plays, discards


def _stream(url: str, into: list[tuple[str, Any]]) -> None:
    """Read a server-sent event stream to its `end` event."""
    with urllib.request.urlopen(url, timeout=60) as response:
        event = ""
        for raw in response:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                into.append((event, json.loads(line[6:])))
                if event == "end":
                    return


def test_live_table_advances_shows_only_public_cards_then_offers_the_replay(arena: Arena, page: Any) -> None:
    bots = arena.play(matches=1, delay=0.04)
    try:
        running = wait_for(lambda: arena.api("/api/matches?state=running")["matches"], 30, "a running match")
        match_id = running[0]["match_id"]
        events: list[tuple[str, Any]] = []
        reader = threading.Thread(target=_stream, args=(f"{arena.url}/api/matches/{match_id}/live", events))
        reader.start()
        page.goto(f"{arena.url}/matches/{match_id}/live")
        # A function, not an expression: Playwright polls an expression with eval, which the CSP forbids.
        page.wait_for_function("() => document.querySelectorAll('#log li').length > 0")
        seen: list[int] = []
        dom_cards: set[str] = set()
        texts: list[str] = []
        while not page.locator("#end .banner").count():
            seen.append(page.locator("#log li").count() + 100 * page.locator("#table .tc-seat").count())
            dom_cards.update(c.get_attribute("data-card") for c in page.locator("[data-card]").all())
            texts.append(page.locator("main").inner_text())
            if len(seen) == 4:
                screenshot(page, "live")
            page.wait_for_timeout(250)
            assert len(seen) < 400, "the match did not end"
        assert len(set(seen)) >= 3, f"the table did not advance: {seen}"
        reader.join(30)
        replay = arena.get(f"/api/matches/{match_id}/replay")[1]
        plays, discards = _played(replay)
        assert discards, "grosstarock's dealer discards: the test needs hidden cards"
        # The stream carries each played card once, when played, and nothing else with a card.
        streamed: dict[int, list[str]] = {}
        for kind, payload in events:
            batch = payload["events"] if kind == "position" else payload if kind == "update" else []
            for event in batch:
                taken = event.get("action_taken")
                if taken and taken["action"]["card"]:
                    assert taken["action"]["type"] == "play", event
                    streamed.setdefault(event["deal"], []).append(taken["action"]["card"])
        assert streamed == plays
        text = json.dumps(events)
        assert not any(f'"{card}"' in text for card in discards)
        assert dom_cards <= {card for cards in plays.values() for card in cards}
        for snapshot in texts:
            assert not any(re.search(rf"\b{re.escape(card)}\b", snapshot) for card in discards)
        assert events[-1][0] == "end"
        page.locator("#replay").click()
        page.wait_for_load_state()
        assert page.url.split("#")[0] == f"{arena.url}/matches/{match_id}"
    finally:
        for bot in bots:
            bot.communicate(timeout=60)


def test_matches_page_filters_by_bot_and_state(arena: Arena, page: Any) -> None:
    page.goto(arena.url + "/matches?bot=beta&state=finished")
    page.wait_for_selector("#matches table")
    screenshot(page, "matches")
    expected = arena.api("/api/matches?bot=beta&state=finished")["matches"]
    assert page.locator("#matches tbody tr").count() == len(expected) >= 2
    page.goto(arena.url + "/matches?state=running")
    page.wait_for_selector("#matches p, #matches table")


def test_a_viewer_that_stops_reading_is_dropped_and_the_match_goes_on(tmp_path: Path) -> None:
    """A live viewer that never reads (a raw socket with a tiny receive buffer) while quick bots
    play fast: once its socket buffers are full it is dropped within the send timeout, the
    server keeps no queue for it meanwhile, and the match and a reading viewer go on to the end.
    The site is served as `arena serve --http` serves it (`serve_site` in the referee's loop),
    with a short send timeout."""
    trio.run(_stuck_viewer, tmp_path)


SEND_TIMEOUT_S = 1.0
STUCK_DEALS = 150


async def _stuck_viewer(tmp: Path) -> None:
    variant = find_variant("grosstarock")
    store = Store(str(tmp / "arena.db"))
    stuck = trio.socket.socket()
    try:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp)
            site = Site(hub, store, send_timeout_s=SEND_TIMEOUT_S)
            http_port = await nursery.start(serve_site, site, "127.0.0.1", 0)
            config = MatchConfig(
                variant=variant,
                deals=STUCK_DEALS,
                seed=7,
                seat_names=tuple(f"quick{i}" for i in range(variant.seats)),
                time_control=TimeControl(per_decision_ms=60_000, bank_ms=0),
            )
            runner = hub.create_match(config)
            feed = site.feeds.get(runner.match_id)
            assert feed is not None
            spec = {
                "mode": "play",
                "address": f"127.0.0.1:{port}",
                "tokens": [seat.token for seat in runner.seats],
                "seats": variant.seats,
            }
            bots = await trio.lowlevel.open_process(
                driver_command("benchmarks.server_driver", spec, tmp / "bots.json"),
                stdin=subprocess.PIPE,  # open and unwritten: the bots play to the match's end
                stdout=subprocess.DEVNULL,
            )
            request = f"GET /api/matches/{runner.match_id}/live HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            reader = await trio.open_tcp_stream("127.0.0.1", http_port)
            await reader.send_all(request)
            read: list[bytes] = []
            nursery.start_soon(_read_all, reader, read)
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connect: a tiny window
            await stuck.connect(("127.0.0.1", http_port))
            await stuck.send(request)
            with trio.fail_after(10):
                while site.viewers < 2 or runner.decisions == 0:
                    await trio.sleep(0.02)
            # It is dropped (its stream ended, its task gone) while the match is still playing.
            held = 0
            with trio.fail_after(12):
                while site.viewers == 2:
                    held = max(held, feed.end - feed.base)
                    await trio.sleep(0.05)
            dropped_at = runner.decisions
            assert site.viewers == 1 and runner.state is MatchState.RUNNING, runner.state
            # All the feed held meanwhile was the current deal's events (one list for every
            # viewer), not a backlog for the stuck one: a deal is at most a few hundred events.
            assert 0 < held < 400, held
            with trio.fail_after(60):
                while runner.state is not MatchState.FINISHED:
                    await trio.sleep(0.05)
            assert runner.decisions > dropped_at and runner.termination == "completed", runner.termination
            assert feed.deals_done == STUCK_DEALS
            with trio.fail_after(10):
                while site.viewers:
                    await trio.sleep(0.05)
            # The stuck socket, read now, holds what the kernel buffered, then the server's close.
            drained = 0
            with trio.fail_after(10):
                try:
                    while chunk := await stuck.recv(65536):
                        drained += len(chunk)
                except ConnectionResetError:
                    pass
            assert 0 < drained < 16 * 2**20
            text = b"".join(read)
            assert text.count(b"event: update") > 3 and b"event: end" in text, text[-300:]
            assert json.loads(text.split(b"event: end\r\ndata: ")[1].split(b"\r\n")[0])["state"] == "finished"
            await reader.aclose()
            bots.kill()
            await bots.wait()
            nursery.cancel_scope.cancel()
    finally:
        stuck.close()  # if it failed while stuck, so that the server's write and shutdown end
        store.close()


async def _read_all(stream: trio.SocketStream, into: list[bytes]) -> None:
    while chunk := await stream.receive_some(65536):
        into.append(chunk)
        if b"event: end" in b"".join(into[-2:]):
            return


def test_an_idle_viewer_gets_keep_alives_and_a_closed_one_is_let_go(tmp_path: Path) -> None:
    """A live viewer of a match that waits for its bots gets the position, then keep-alive
    comments while nothing happens; once its client closes the connection, its stream ends
    (the server counts it no more) though the match has not even started."""
    trio.run(_idle_viewer, tmp_path)


async def _idle_viewer(tmp: Path) -> None:
    variant = find_variant("grosstarock")
    store = Store(str(tmp / "arena.db"))
    try:
        async with trio.open_nursery() as nursery:
            hub, _port = await nursery.start(serve, "127.0.0.1", 0, tmp)
            site = Site(hub, store, ping_s=0.2)
            http_port = await nursery.start(serve_site, site, "127.0.0.1", 0)
            config = MatchConfig(
                variant=variant,
                deals=1,
                seed=3,
                seat_names=tuple(f"idle{i}" for i in range(variant.seats)),
                start_timeout_s=60,
            )
            runner = hub.create_match(config)
            viewer = await trio.open_tcp_stream("127.0.0.1", http_port)
            request = f"GET /api/matches/{runner.match_id}/live HTTP/1.1\r\nHost: x\r\n\r\n"
            await viewer.send_all(request.encode())
            read = b""
            with trio.fail_after(10):
                while read.count(b": ping\r\n\r\n") < 2:
                    read += await viewer.receive_some(65536)
            head, _, stream = read.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"content-type: text/event-stream" in head.lower()
            assert stream.split(b"\r\n", 2)[1].startswith(b"event: position"), stream[:200]
            assert b"event: update" not in stream and site.viewers == 1
            assert runner.state is MatchState.WAITING, runner.state
            await viewer.aclose()
            with trio.fail_after(10):
                while site.viewers:
                    await trio.sleep(0.02)
            assert runner.state is MatchState.WAITING
            nursery.cancel_scope.cancel()
    finally:
        store.close()


def test_an_operators_match_is_listed_with_the_arenas(arena: Arena, page: Any) -> None:
    """A match an operator creates (CreateMatch) is one of this server's matches too: listed
    while it waits for its bots and once it has ended, unrated, its seat names plain text."""
    with admin_channel(arena.grpc, OPERATOR) as channel:
        created = pb_grpc.AdminServiceStub(channel).CreateMatch(
            pb.CreateMatchRequest(
                variant="grosstarock", deals=1, seat_names=["house-a", "house-b", XSS], start_timeout_ms=1500
            )
        )
    match_id = created.match_id
    [waiting] = arena.api("/api/matches?bot=house-a")["matches"]
    assert (waiting["match_id"], waiting["state"], waiting["standing"]) == (match_id, "waiting", False)
    assert [s["bot"] for s in waiting["seats"]] == ["house-a", "house-b", XSS]
    assert match_id in {m["match_id"] for m in arena.api("/api/matches?state=waiting")["matches"]}
    # No bot comes: after the start timeout the referee plays every seat's default and it ends.
    wait_for(lambda: arena.api(f"/api/matches/{match_id}")["state"] == "finished", 30, "the match to end")
    [finished] = arena.api("/api/matches?bot=house-b&state=finished")["matches"]
    assert finished["match_id"] == match_id and finished["has_replay"] and not finished["standing"]
    assert finished["finished_ms"] >= finished["started_ms"]
    listed = arena.api("/api/matches")["matches"]
    assert match_id in {m["match_id"] for m in listed}
    assert all(m["standing"] for m in listed if m["match_id"] != match_id)
    assert [m["started_ms"] for m in listed] == sorted((m["started_ms"] for m in listed), reverse=True)
    assert not arena.api("/api/matches?bot=house-a&state=running")["matches"]
    assert match_id not in {m["match_id"] for m in arena.api("/api/matches?bot=alpha")["matches"]}
    assert arena.get(f"/matches/{match_id}")[0] == 200  # the replay viewer
    page.goto(arena.url + "/matches?bot=house-a")
    page.wait_for_selector("#matches table")
    row = page.locator("#matches tbody tr")
    assert row.count() == 1
    assert "unrated" in row.inner_text() and XSS in row.inner_text()
    assert row.locator("a[href^='/bots/']").count() == 0  # not registered bots: no page to link to
    assert row.locator(f"a[href='/matches/{match_id}']").count() == 1
    # Standings are the standing arena's alone.
    assert {s["bot"] for s in arena.api("/api/standings")["standings"]} == set(BOTS)


PHONE = {"width": 375, "height": 667}
LAYOUT = """() => {
  const width = document.documentElement.clientWidth;
  const scroller = (node) => {
    for (let up = node.parentElement; up; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === "auto" || overflow === "scroll") return up;
    }
    return null;
  };
  const outside = [];
  const small = [];
  for (const node of document.body.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    if ((box.right > width + 0.5 || box.left < -0.5) && !scroller(node)) {
      outside.push(node.tagName + ": " + Math.round(box.right));
    }
    const text = [...node.childNodes].some((c) => c.nodeType === Node.TEXT_NODE && c.textContent.trim());
    // An SVG's text is drawn scaled with its viewBox: its size on the screen is what counts.
    const scale = node instanceof SVGGraphicsElement ? node.getScreenCTM().a : 1;
    if (text && parseFloat(getComputedStyle(node).fontSize) * scale < 12) {
      small.push(node.tagName + ": " + node.textContent.slice(0, 30));
    }
  }
  const scrollWidth = document.documentElement.scrollWidth;
  return { width, innerWidth: window.innerWidth, scrollWidth, outside, small };
}"""


def test_the_four_pages_stay_readable_on_a_phone(arena: Arena, browser: Any) -> None:
    """At a phone's width (375×667 CSS pixels, as a phone lays pages out), no page is wider
    than the screen (only a wide table scrolls, inside its own box) and no text is smaller
    than 12 px."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    bots: list[subprocess.Popen[str]] = []
    try:
        page = context.new_page()
        pages = [
            ("leaderboard", "/", "#board table"),
            ("bot", "/bots/gamma", "svg.plot"),
            ("matches", "/matches", "#matches table"),
            ("live", "", "#table .tc-seat"),
        ]
        for name, path, ready in pages:
            if name == "live":
                bots = arena.play(matches=1, delay=0.05)
                running = wait_for(lambda: arena.api("/api/matches?state=running")["matches"], 30, "a match")
                path = f"/matches/{running[0]['match_id']}/live"
            page.goto(arena.url + path)
            page.wait_for_selector(ready)
            layout = page.evaluate(LAYOUT)
            # A page without a viewport meta would be laid out 980 px wide and shrunk.
            assert layout["width"] == layout["innerWidth"] == PHONE["width"], (path, layout)
            assert layout["scrollWidth"] <= PHONE["width"], (path, layout)
            assert not layout["outside"], (path, layout["outside"])
            assert not layout["small"], (path, layout["small"])
            if name in ("leaderboard", "live"):  # the two docs/ARENA.md shows
                screenshot(page, "phone-" + name)
    finally:
        context.close()
        for bot in bots:
            bot.communicate(timeout=60)


def _numbers_while_exact(data: Any) -> Any:
    """Protobuf's JSON mapping writes every int64 as a string; the live feed writes a number while
    JavaScript holds it exactly (`js_int`)."""
    if isinstance(data, dict):
        return {k: _numbers_while_exact(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_numbers_while_exact(v) for v in data]
    if isinstance(data, str) and data.lstrip("-").isdigit():
        return js_int(int(data))
    return data


def test_an_events_json_is_protobufs_own_json_mapping() -> None:
    """The live stream's events are read field by field (fast), with the same result as
    protobuf's `MessageToDict` (`json_mapping`): every kind, set and unset fields, but the int64
    scores, pots and deltas, numbers up to 2**53 (strings beyond). A field added to the protocol
    and not to `event_dict` fails here (MessageToDict prints it with its default).
    Their JSON text (`event_json`) is `json.dumps`'s, quotes, escapes and non-ASCII included."""
    events = [
        pb.Event(deal=0, deal_started=pb.DealStarted(dealer=2, pots={"pagat": 3, "king": -1})),
        pb.Event(deal=0, deal_started=pb.DealStarted()),
        pb.Event(deal=1, action_taken=pb.ActionTaken(seat=1, action=pb.Action(type="play", card="T21"))),
        pb.Event(deal=1, action_taken=pb.ActionTaken(seat=2, action=pb.Action(type="x", suit="H", name="n"))),
        pb.Event(deal=1, action_taken=pb.ActionTaken(seat=0, action=pb.Action(type="discard"))),
        pb.Event(deal=1, action_taken=pb.ActionTaken(seat=3, action=pb.Action(type='a"\\\n<é', name="☃"))),
        pb.Event(deal=1, action_taken=pb.ActionTaken(seat=2)),
        pb.Event(deal=2, trick_completed=pb.TrickCompleted(number=3, winner=1)),
        pb.Event(deal=2, trick_completed=pb.TrickCompleted()),
        pb.Event(
            deal=2,
            deal_ended=pb.DealEnded(
                annulled=True, card_points=[40, 20, 10], deltas=[-1, 0, 1], pots={"x": -2}, scores=[5, -5, 0]
            ),
        ),
        pb.Event(deal=2, deal_ended=pb.DealEnded()),
        pb.Event(deal=0, fault=pb.Fault(seat=1, kind="timeout", detail="<b>late</b>")),
        pb.Event(deal=0, fault=pb.Fault()),
        pb.Event(deal=4),
    ]
    big = 2**53  # beyond JavaScript's exact integers: a decimal string (a Danish pot can get there)
    events.append(
        pb.Event(deal=3, deal_ended=pb.DealEnded(deltas=[big, -big, 1], pots={"king": big}, scores=[big]))
    )
    for event in events:
        assert event_dict(event) == _numbers_while_exact(json_mapping(event)), event
        # and its text, written straight for the commonest kind, is json.dumps's to the byte
        assert event_json(event) == json.dumps(event_dict(event), separators=(",", ":")), event
    # An update of them is sse-starlette's own encoding of the event, one `data:` line: JSON
    # text has no line break of its own to split on, newlines in strings included.
    texts = [event_json(event) for event in events]
    for some in (texts, texts[:1], []):
        expected = ServerSentEvent(data="[" + ",".join(some) + "]", event="update").encode()
        assert encode_update(some) == expected
        assert expected.count(b"data: ") == 1


def test_a_viewer_wakes_once_a_frame_while_its_match_is_played_and_waits_for_an_idle_one(
    tmp_path: Path,
) -> None:
    """A viewer of a match in play waits only for its group's tick, never for the events in
    between: the referee's events wake no viewer (one wakeup a viewer and frame). When a tick
    found nothing new it waits for the next event instead, so that an idle table wakes nobody
    at every frame, and that event reaches it at the tick after."""
    variant = find_variant("grosstarock")
    seats = tuple(f"s{i}" for i in range(variant.seats))
    config = MatchConfig(variant=variant, deals=1, seed=1, seat_names=seats)
    runner = MatchRunner("0123456789abcdef", config, tmp_path)
    feed = MatchFeed(runner, lambda _feed: None)
    clock = ViewerClock(frame_s=0.5, groups=1)
    site: Any = type("SiteStub", (), {"clock": clock, "ping_s": 15.0})()
    sent: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["body"])

    def play(deal: int, card: str) -> None:
        action = pb.Action(type="play", card=card)
        feed.send(pb.Event(deal=deal, action_taken=pb.ActionTaken(seat=1, action=action)))

    def waiting_on_the_feed() -> int:
        return feed._lot.statistics().tasks_waiting

    async def main() -> None:
        feed.send(pb.Event(deal=0, deal_started=pb.DealStarted(dealer=0)))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(clock.run)
            nursery.start_soon(LiveStream(site, feed)._follow, send)
            await trio.sleep(0.25)  # the ticks are at 0.5, 1.0, ...; the checks between them
            assert sent[0].startswith(b"event: position")
            for frame in range(1, 5):  # a match in play: events between every two ticks
                assert waiting_on_the_feed() == 0  # it waits for its tick only: the event
                play(0, f"T{frame}")  # wakes nobody
                await trio.sleep(0.5)
                assert sent[-1].startswith(b"event: update") and f'"T{frame}"'.encode() in sent[-1]
            assert len(sent) == 5
            await trio.sleep(1.0)  # two ticks with nothing new: no update, and the viewer
            assert len(sent) == 5 and waiting_on_the_feed() == 1  # waits for the next event
            play(0, "T9")
            assert waiting_on_the_feed() == 0
            await trio.sleep(0.5)
            assert len(sent) == 6 and b'"T9"' in sent[-1]
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_beyond_the_sites_budget_of_updates_each_viewers_frame_grows() -> None:
    """Up to `updates_per_s` × `frame_s` viewers each gets an update every `frame_s`; beyond,
    every viewer's frame grows so that the site sends `updates_per_s` in all, and shrinks back
    when they leave: watching costs the referee the same however many watch."""
    clock = ViewerClock(frame_s=0.5, groups=2, updates_per_s=8)
    ticks: list[list[float]] = []

    async def viewer(task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        mine: list[float] = []
        ticks.append(mine)
        with trio.CancelScope() as scope:
            group = clock.join()
            try:
                task_status.started(scope)
                while True:
                    mine.append(await clock.tick(group))
            finally:
                clock.leave()

    def ticked(since: float, viewers: list[list[float]]) -> int:
        return sum(t > since for mine in viewers for t in mine)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(clock.run)
            few = [await nursery.start(viewer) for _ in range(4)]
            assert clock.frame() == 0.5
            await trio.sleep(10.1)
            assert ticked(0.1, ticks) == 4 * 20  # each viewer every 0.5 s: 8 a second in all
            more = [await nursery.start(viewer) for _ in range(12)]
            assert clock.viewers == 16 and clock.frame() == 2.0
            await trio.sleep(1.0)  # the ticks move onto the new step
            since = trio.current_time()
            await trio.sleep(10.0)
            assert ticked(since, ticks) == 8 * 10  # 16 viewers, each every 2 s: still 8 a second
            for mine in ticks:
                gaps = {round(b - a, 6) for a, b in itertools.pairwise(mine) if a > since}
                assert gaps == {2.0}
            for scope in more:
                scope.cancel()
            await trio.sleep(0.01)
            assert clock.viewers == 4 and clock.frame() == 0.5
            await trio.sleep(2.09)  # the step in progress ends, then 0.5 s frames again
            since = trio.current_time()
            await trio.sleep(10.0)
            assert ticked(since, ticks[:4]) == 4 * 20
            for scope in few:
                scope.cancel()
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_hosted_bot_says_hosted_and_its_version_on_the_pages_and_in_get_standings(
    arena: Arena, page: Any
) -> None:
    """As `arena standings` does (docs/SUBMIT.md): beta's latest match is recorded as played by
    its submitted version 2, as a hosting server records it; alpha stays a dialled-in bot."""
    [latest, *_] = arena.api("/api/matches?bot=beta&state=finished")["matches"]
    seat = [s["bot"] for s in latest["seats"]].index("beta")
    store = Store(str(arena.store))
    try:
        Versions(store).seat(latest["match_id"], seat, "beta", 2)
    finally:
        store.close()
    runs = {
        row["bot"]: (row["runs"], row["hosted_version"]) for row in arena.api("/api/standings")["standings"]
    }
    assert runs["beta"] == ("hosted, version 2", 2)
    assert runs["alpha"][1] is None and runs["alpha"][0] != "hosted, version 2"
    assert arena.api("/api/bots/beta")["hosted_version"] == 2
    assert arena.api("/api/bots/alpha")["hosted_version"] is None
    page.goto(arena.url + "/")
    page.wait_for_selector("#board table")
    row = page.locator("#board tbody tr", has_text="beta")
    assert "hosted, version 2" in row.text_content()
    assert "hosted" not in page.locator("#board tbody tr", has_text="alpha").text_content()
    page.goto(arena.url + "/bots/beta")
    page.wait_for_selector(".facts")
    assert "Runshosted, version 2" in page.locator(".facts").text_content()
    page.goto(arena.url + "/bots/alpha")
    page.wait_for_selector(".facts")
    assert "Runsdialled in" in page.locator(".facts").text_content()
    with admin_channel(arena.grpc, OPERATOR) as channel:
        admin = pb_grpc.AdminServiceStub(channel)
        standings = admin.GetStandings(pb.GetStandingsRequest(variant="grosstarock")).standings
    assert {s.bot: s.hosted_version for s in standings} == {"alpha": 0, "beta": 2, "gamma": 0}


def test_get_standings_and_the_leaderboard_carry_the_adjusted_points_of_played_matches(
    arena: Arena, page: Any
) -> None:
    """grosstarock is rated on luck-adjusted points: the matches the bots played have them, and
    GetStandings says the same mean as the JSON API, which the leaderboard shows beside the raw one."""
    rows = {row["bot"]: row for row in arena.api("/api/standings?variant=grosstarock")["standings"]}
    with admin_channel(arena.grpc, OPERATOR) as channel:
        admin = pb_grpc.AdminServiceStub(channel)
        standings = admin.GetStandings(pb.GetStandingsRequest(variant="grosstarock")).standings
    assert {s.bot for s in standings} == set(rows) == set(BOTS)
    for standing in standings:
        row = rows[standing.bot]
        assert standing.HasField("mean_adjusted_score_per_deal")
        assert round(standing.mean_adjusted_score_per_deal, 3) == row["mean_adjusted_score_per_deal"]
        assert standing.adjusted_deals == row["adjusted_deals"] == standing.deals > 0
        assert all(len(m.adjusted_scores) == len(m.scores) == 3 for m in standing.recent)
    page.goto(arena.url + "/?variant=grosstarock")
    page.wait_for_selector("#board table")
    headers = page.locator("#board thead th").all_text_contents()
    raw = next(i for i, text in enumerate(headers) if text.startswith("Raw pts/deal")) + 1
    adjusted = next(i for i, text in enumerate(headers) if text.startswith("Luck-adjusted pts/deal")) + 1
    for bot, row in rows.items():
        line = page.locator("#board tbody tr", has=page.locator(f"a[href='/bots/{bot}']"))
        assert line.locator(f"td:nth-child({raw})").text_content() == f"{row['mean_score_per_deal']:.2f}"
        shown = line.locator(f"td:nth-child({adjusted})").text_content()
        assert shown == f"{row['mean_adjusted_score_per_deal']:.2f}"
