"""A person seated by the standing arena's lobby like a bot (`arena serve --http ADDR --play`).

One real server for the module (the command itself, a SQLite store with three registered players,
one-deal grosstarock matches), two registered bots as real SDK processes waiting in its lobby,
and Debian's Chromium through Playwright. The person joins the lobby from the page with the
third player's token; matchmaking seats them with the two bots (or, with opponents chosen on the
page, the lobby seats that table at once); they play the match by clicking legal actions; the
result is recorded and rated under the player's name, the replay verifies, its header has the
person's clock and its seat the person's Hello.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.browser import CLICK_THROUGH_MATCH, watched_page
from support.site import call_json, served_site
from support.standing import lobby_bot

from arena.replay.verify import verify_replay
from arena.standing.store import Store

playwright_sync = pytest.importorskip("playwright.sync_api")

LEGAL = ".tc-mine .tc-legal, .tc-mine button.tc-action"
SETTINGS = """[arena]
variants = ["grosstarock"]
deals = 1
per_decision_ms = 2000
bank_ms = 2000
tick_s = 0.05
reconnect_grace_s = 1.0
start_timeout_s = 10.0
"""


@dataclass
class Arena:
    url: str
    replays: Path
    store: Path
    tokens: dict[str, str]

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        return call_json(self.url, method, path, body, token)

    def waiting(self) -> dict[str, list[str]]:
        status, options = self.call("GET", "/api/play")
        assert status == 200, options
        return dict(options["lobby"]["waiting"])


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    directory = tmp_path_factory.mktemp("lobby")
    (directory / "operator").write_text("lobby-test-operator\n")
    (directory / "arena.toml").write_text(SETTINGS)
    store = Store(str(directory / "arena.db"))
    tokens = {name: store.register_bot(name)[1] for name in ("ann", "bob", "pat", "rex")}
    store.revoke_bot("rex")
    store.close()
    options = ("--play", "--operator-token-file", str(directory / "operator"))
    with served_site(directory, *options, "--arena-config", str(directory / "arena.toml")) as site:
        bots = [lobby_bot(site.grpc, tokens[name]) for name in ("ann", "bob")]
        try:
            yield Arena(site.url, directory / "replays", directory / "arena.db", tokens)
        finally:
            for bot in bots:
                bot.kill()
                bot.communicate()


@pytest.fixture(scope="module")
def page(arena: Arena, playwright_chromium: Any) -> Iterator[Any]:
    with watched_page(playwright_chromium, 900, 900) as watched:
        yield watched.page
    problems = watched.dialogs + watched.refused
    assert not problems, problems


def _wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.05)
    return found


def _join_and_play(page: Any, arena: Arena, opponents: list[str]) -> str:
    """Join the lobby from the page as pat, play the table it seats to the end; the match id."""
    _wait_for(lambda: {"ann", "bob"} <= set(arena.waiting()), 20, "two bots waiting in the lobby")
    page.goto(arena.url + "/play")
    page.wait_for_selector("#opponents select")
    page.fill("#join input[name=token]", arena.tokens["pat"])
    page.select_option("#join select[name=variant]", "grosstarock")
    for i, name in enumerate(opponents):
        page.select_option(f"#opponents select[name=opponent-{i}]", name)
    page.fill("#join input[name=per_decision_s]", "90")
    page.click("#join-go")
    page.wait_for_url("**/play/*#token=*", timeout=20_000)
    match_id = str(page.url.split("/play/")[1].split("#")[0])
    assert page.evaluate(CLICK_THROUGH_MATCH, [5, LEGAL]) > 0
    return match_id


def _recorded(arena: Arena, match_id: str) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        status, match = arena.call("GET", f"/api/matches/{match_id}")
        return match if status == 200 and match.get("standing") and match.get("termination") else None

    return dict(_wait_for(finished, 20, f"recorded result of {match_id}"))


def _replay(arena: Arena, match_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The match's replay, verified: its header and its Hello lines."""
    path = next(arena.replays.glob(f"*{match_id}*.jsonl"))
    verified = verify_replay(path)
    assert verified.variant is not None, verified.problem
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], [line for line in lines if line.get("type") == "hello"]


def test_the_lobby_seats_a_person_like_a_bot_and_records_the_result(page: Any, arena: Arena) -> None:
    match_id = _join_and_play(page, arena, [])
    match = _recorded(arena, match_id)
    assert match["termination"] == "completed", match
    assert sorted(seat["bot"] for seat in match["seats"]) == ["ann", "bob", "pat"]
    header, hellos = _replay(arena, match_id)
    assert header["time_control"]["per_decision_ms"] == 90_000  # the person's clock, set on the page
    seat = header["seats"].index("pat")
    assert [h["bot_name"] for h in hellos if h["seat"] == seat] == ["human"]
    status, standings = arena.call("GET", "/api/standings?variant=grosstarock")
    assert status == 200
    rated = {row["bot"]: row for row in standings["standings"]}
    assert rated["pat"]["matches"] == 1  # rated like a bot's


def test_a_person_chooses_the_bots_waiting_in_the_lobby(page: Any, arena: Arena) -> None:
    match_id = _join_and_play(page, arena, ["bob", "ann"])
    match = _recorded(arena, match_id)
    assert match["termination"] == "completed", match
    assert sorted(seat["bot"] for seat in match["seats"]) == ["ann", "bob", "pat"]


def test_the_queue_refuses_what_it_must_and_a_place_can_be_left(arena: Arena) -> None:
    join = {"variant": "grosstarock", "per_decision_s": 60}
    pat = arena.tokens["pat"]
    status, answer = arena.call("POST", "/api/play/lobby", {**join, "token": "not-a-players-token"})
    assert (status, answer["error"]) == (401, "no player registered in this arena has this token")
    status, answer = arena.call(
        "POST", "/api/play/lobby", {**join, "token": pat, "opponents": ["zed", "ann"]}
    )
    assert status == 400 and "'zed' is not waiting in the lobby for grosstarock now" in answer["error"]
    status, answer = arena.call("POST", "/api/play/lobby", {**join, "token": pat, "opponents": ["ann"]})
    assert status == 400 and "2 different bots" in answer["error"]
    status, answer = arena.call("POST", "/api/play/lobby", {**join, "token": arena.tokens["rex"]})
    assert (status, answer["error"]) == (403, "the bot token was revoked")  # the lobby's own refusal
    status, answer = arena.call("POST", "/api/play/lobby", {**join, "variant": "danish", "token": pat})
    assert status == 400 and "this arena plays grosstarock" in answer["error"]
    # ann's own token: the lobby never seats ann twice at a table, and only bob waits besides,
    # so this place waits until it is left.
    status, place = arena.call("POST", "/api/play/lobby", {**join, "token": arena.tokens["ann"]})
    assert status == 201 and place["state"] == "waiting", place
    where = f"/api/play/lobby/{place['place']}"
    assert arena.call("GET", where)[0] == 401
    assert arena.call("GET", where, token=pat)[0] == 403
    status, left = arena.call("DELETE", where, token=place["token"])
    assert status == 200 and (left["state"], left["reason"]) == ("left", "left the queue"), left
    status, seen = arena.call("GET", where, token=place["token"])
    assert status == 200 and seen["state"] == "left"
    assert "ann" in arena.waiting()  # ann's bot still waits: only the person's stream left


def test_the_page_waits_in_the_queue_and_leaves_it(page: Any, arena: Arena) -> None:
    page.goto(arena.url + "/play")
    page.wait_for_selector("#opponents select")
    page.fill("#join input[name=token]", arena.tokens["bob"])  # bob's bot waits too: never one table
    page.click("#join-go")
    page.wait_for_selector("#waiting:text('bob waits in the lobby for a table of grosstarock')")
    page.click("#join-leave")
    page.wait_for_selector("#waiting:text('Out of the queue: left the queue.')")
    assert page.locator("#join").is_visible() and not page.locator("#join-go").is_disabled()
    assert "bob" in arena.waiting()
