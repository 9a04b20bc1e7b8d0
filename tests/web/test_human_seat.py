"""A person at a table of the site (`arena serve --http ADDR --play`), in a real browser.

One real server (the command itself, with a SQLite store) and one Chromium (Debian's, through
Playwright's `executable_path`) for the module. A person plays a whole match of every variant by
clicking legal actions chosen at random against the example bots (in the referee's process);
every replay then verifies with `arena replay verify`. A click the referee refuses shows the
rule; the page fits a phone; the seat's token is the only key to its messages and answers; "play
on" from a finished match's position seats the person there. Set ARENA_WEB_SCREENSHOTS=DIR to
save the seat's screenshot (docs/img/web-play.png is made so).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.browser import CLICK_THROUGH_MATCH, watched_page
from support.site import call_json, served_site

from arena.engine import VARIANT_NAMES
from arena.server.local import bot_environment

playwright_sync = pytest.importorskip("playwright.sync_api")

PHONE = {"width": 375, "height": 667}
RULE = re.compile(r"[A-Z]+(-[A-Z0-9]+)+|protocol")
LEGAL = ".tc-mine .tc-legal, .tc-mine button.tc-action"
"""What the drawn table lets the person choose now: the lit cards and the action buttons."""


@dataclass
class Server:
    url: str
    grpc: str  # 127.0.0.1:PORT, where bots dial in
    replays: Path
    process: subprocess.Popen[str]
    played: list[str] = field(default_factory=list)  # match ids of the tables played to the end

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        return call_json(self.url, method, path, body, token)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("play")
    (directory / "operator").write_text("play-test-operator\n")
    options = ("--play", "--operator-token-file", str(directory / "operator"))
    with served_site(directory, *options) as site:
        yield Server(site.url, site.grpc, directory / "replays", site.process)


@pytest.fixture(scope="module")
def browser(playwright_chromium: Any) -> Any:
    return playwright_chromium


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that fails its test on a Content-Security-Policy violation or a dialog."""
    with watched_page(browser, 900, 900) as watched:
        yield watched.page
    problems = watched.dialogs + watched.refused
    assert not problems, problems


def screenshot(page: Any, name: str) -> None:
    where = os.environ.get("ARENA_WEB_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"web-{name}.png"), full_page=True)


def _sit_down(page: Any, server: Server, variant: str, seat: int) -> str:
    """Start a one-deal table from the form (random bots); the match id."""
    page.goto(server.url + "/play")
    page.wait_for_selector("#bots select")
    page.select_option("select[name=variant]", variant)
    page.select_option("select[name=seat]", str(seat))
    page.fill("input[name=per_decision_s]", "60")
    page.click("#go")
    page.wait_for_url(re.compile(r"/play/[0-9a-f]{16}#token="))
    return str(page.url.split("/play/")[1].split("#")[0])


def _next_turn(page: Any, seen: str) -> str:
    """Wait until the page shows a new state to act in (or the end); its marker."""
    page.wait_for_function(
        "seen => { const r = document.body.dataset.ready; return r && r !== seen; }", arg=seen, timeout=30_000
    )
    return str(page.evaluate("document.body.dataset.ready"))


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_a_person_plays_a_whole_match_of_every_variant(server: Server, page: Any, variant: str) -> None:
    rng = random.Random(variant)
    seats = 4 if variant == "american" else 3
    match_id = _sit_down(page, server, variant, rng.randrange(seats))
    if variant == "grosstarock" and os.environ.get("ARENA_WEB_SCREENSHOTS"):  # a trick in play, cards lit
        seen = ""
        while (seen := _next_turn(page, seen)) != "ended" and not page.locator(".tc-now .tc-card").count():
            legal = page.locator(LEGAL)
            legal.nth(rng.randrange(legal.count())).click()
        screenshot(page, "play")
    assert page.evaluate(CLICK_THROUGH_MATCH, [rng.randrange(2**31), LEGAL]) > 0
    assert page.locator("#end h2").text_content() == "Match over (completed)"
    assert page.locator("#replay-link").get_attribute("href") == f"/matches/{match_id}"
    assert page.locator("#play-on-link").get_attribute("href") == f"/play?from={match_id}"
    server.played.append(match_id)


def test_an_illegal_click_shows_the_rule(server: Server, page: Any) -> None:
    rng = random.Random(7)
    _sit_down(page, server, "grosstarock", 0)
    seen = ""
    refused = 0
    while refused < 2 and (seen := _next_turn(page, seen)) != "ended":
        illegal = page.locator(".tc-mine .tc-card.illegal")
        if illegal.count():
            before = seen
            illegal.nth(0).click()
            seen = _next_turn(page, seen)
            assert seen.split(":")[0] == before.split(":")[0]  # the same request, asked again
            text = page.locator("#rejected").text_content()
            assert text.startswith("Refused: ") and "illegal" in text, text
            assert RULE.fullmatch(page.locator("#rejected code.rule").text_content()), text
            refused += 1
        legal = page.locator(LEGAL)
        legal.nth(rng.randrange(legal.count())).click()
    assert refused == 2


def test_at_a_phones_width_nothing_overflows(server: Server, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(server.url + "/play")
        page.wait_for_selector("#bots select")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        _sit_down(page, server, "american", 1)
        _next_turn(page, "")
        layout = page.evaluate(
            """() => [document.documentElement.scrollWidth,
                [...document.body.querySelectorAll('*')].filter(n => {
                    const b = n.getBoundingClientRect();
                    return b.width && (b.right > innerWidth + 0.5 || b.left < -0.5);
                }).map(n => n.tagName)]"""
        )
        assert layout[0] <= PHONE["width"] and not layout[1], layout
        assert page.locator(".tc-mine [data-hand] .tc-card").count() == 18
    finally:
        context.close()


def test_only_the_seats_token_reads_and_answers(server: Server) -> None:
    body = {"variant": "grosstarock", "seat": 1, "bots": ["random"], "deals": 1}
    status, first = server.call("POST", "/api/play", body)
    assert status == 201, first
    status, second = server.call("POST", "/api/play", body)
    assert status == 201, second
    messages = f"/api/play/{first['match_id']}/messages?after=0"
    action = f"/api/play/{first['match_id']}/action"
    answer = {"request_id": 1, "action": {"type": "pass"}}
    for token, code in ((None, 401), ("", 401), ("x" * 32, 403), (second["token"], 403)):
        assert server.call("GET", messages, token=token)[0] == code, token
        assert server.call("POST", action, answer, token=token)[0] == code, token
    status, read = server.call("GET", messages, token=first["token"])
    assert status == 200 and read["messages"][0]["match_start"]["seat"] == 1
    kinds = {"match_start", "request", "table", "events", "rejected", "match_end"}
    assert all(set(m) <= kinds for m in read["messages"])
    received = read["messages"]
    while not any("request" in m for m in received):  # a poll waits for the next message
        more = server.call("GET", messages.replace("after=0", f"after={len(received)}"), token=first["token"])
        received += more[1]["messages"]
    request = next(m for m in received if "request" in m)
    # Only the seat's own view: its hand and no other; the drawn table's state says the same.
    assert request["request"]["view"]["seat"] == 1 and len(request["request"]["view"]["hand"]) == 25
    assert [seat["hand"] is not None for seat in request["table"]["seats"]] == [False, True, False]
    assert request["table"]["legal"] and request["table"]["view"] == 1
    # Bad input is a clear 400, and the seat is still there.
    for bad in ({"request_id": "1", "action": {}}, {"request_id": 1, "action": {"type": 3}}, [1]):
        status, error = server.call("POST", action, bad, token=first["token"])
        assert status == 400 and error["error"], bad
    for bad in ({"variant": "chess"}, {"variant": "danish", "seat": 3}, {"variant": "danish", "bots": ["x"]}):
        status, error = server.call("POST", "/api/play", bad)
        assert status == 400 and error["error"], bad
    assert server.call("GET", "/api/play?from=0123456789abcdef")[0] == 404
    assert server.call("GET", "/api/play?from=nothing")[0] == 400
    # A form of another site could post text/plain that parses as JSON: refused.
    form = urllib.request.Request(
        server.url + "/api/play", data=json.dumps(body).encode(), headers={"content-type": "text/plain"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(form, timeout=30)
    assert refused.value.code == 415
    refused.value.close()


def test_play_on_from_a_position_seats_the_person_there(server: Server, page: Any) -> None:
    """From decision 9 of a match the module played, reached from the replay viewer, with random
    bots as recorded ('human' was no bot: its seat gets one chosen here)."""
    assert server.played, "the variants' matches ran first"
    source = server.played[0]
    replay = (server.replays / f"{source}.jsonl").read_text().splitlines()
    header = json.loads(replay[0])
    human = next(json.loads(x)["seat"] for x in replay if '"bot_name":"human"' in x)
    decisions = [json.loads(x) for x in replay if x.startswith('{"type":"action"')]
    seat = decisions[9]["seat"]
    # The replay viewer at that decision links to playing on from it.
    page.goto(f"{server.url}/matches/{source}#deal=0&step=9")
    page.click("#play-on")
    page.wait_for_selector("#bots select")
    assert page.input_value("input[name=step]") == "9"
    assert f"deal 0, decision 9 of {len(decisions)}:" in page.locator("#from").text_content()
    page.select_option("select[name=seat]", str(seat))
    if human != seat:
        page.select_option(f"select[name=bot-{human}]", "random")
    page.click("#go")
    page.wait_for_url(re.compile(r"/play/[0-9a-f]{16}#token="))
    played_on = page.url.split("/play/")[1].split("#")[0]
    _next_turn(page, "")
    assert page.locator("#title").text_content() == f"{header['variant']} · seat {seat}"
    assert page.evaluate(CLICK_THROUGH_MATCH, [9, LEGAL]) >= 0
    server.played.append(played_on)
    lines = (server.replays / f"{played_on}.jsonl").read_text().splitlines()
    again = [json.loads(x) for x in lines if x.startswith('{"type":"action"')][:9]
    assert [(a["seat"], a["action"]) for a in again] == [(a["seat"], a["action"]) for a in decisions[:9]]


def test_play_on_leaves_a_seat_for_your_own_bot(server: Server, page: Any) -> None:
    """Play on with bots alone, one seat left for a bot of one's own: the page shows that seat's
    token, a real bot process (the SDK's random bot) dials in with it, and the match ends."""
    source = server.played[0]
    replay = (server.replays / f"{source}.jsonl").read_text().splitlines()
    human = next(json.loads(x)["seat"] for x in replay if '"bot_name":"human"' in x)
    page.goto(f"{server.url}/play?from={source}&deal=0&step=4")
    page.wait_for_selector("#bots select")
    page.select_option("select[name=seat]", "")
    page.select_option(f"select[name=bot-{human}]", "connect")
    page.click("#go")
    token = page.locator(f".seat-token[data-seat='{human}']").text_content().removeprefix("ARENA_TOKEN=")
    match_id = page.locator("#to-table").get_attribute("href").split("/")[2]
    bot = subprocess.Popen(
        [sys.executable, "-m", "arena_bot.random_bot"],
        env=bot_environment(server.grpc, token, human),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _out, err = bot.communicate(timeout=60)
    assert bot.returncode == 0, err
    lines = [json.loads(x) for x in (server.replays / f"{match_id}.jsonl").read_text().splitlines()]
    assert lines[-1]["type"] == "match_end" and lines[-1]["termination"] == "completed"
    assert [x["bot_name"] for x in lines if x["type"] == "hello" and x["seat"] == human] == ["random"]
    server.played.append(match_id)


def test_every_replay_verifies(server: Server) -> None:
    """Run last: the replays of every table above, with the command a user runs."""
    assert len(server.played) == len(VARIANT_NAMES) + 2
    paths = [str(server.replays / f"{m}.jsonl") for m in server.played]
    command = [sys.executable, "-m", "arena", "replay", "verify", *paths]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
