"""The drawn table, live: one match of every variant on a real server with its web site, played
by quick bots (one process of them per table size) over gRPC, watched in Chromium at a phone's
width and through the raw event stream.

While the matches run, every table state the stream sends and every page drawn from one is
compared with the match's own replay log (the `.jsonl.part` being written): no hand, no card
laid away, no card before it is public (played, a shown talon, a declaration's cards, a Danish
skat's shown cards, the called card), and the American partner only once every seat knows him.
Set ARENA_WEB_SCREENSHOTS=DIR to keep a picture of each table.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from support.table import LAYOUT, codes_in, public_cards, public_partner, text_cards

from arena.engine import DealState, find_variant
from arena.referee.runner import MatchConfig, MatchRunner, MatchState
from arena.referee.seat import TimeControl
from arena.replay.read import Replay
from arena.replay.verify import verify_replay
from arena.server.app import serve
from arena.standing.store import Store
from arena.web.app import Site, serve_site
from benchmarks.common import driver_command

playwright_sync = pytest.importorskip("playwright.sync_api")

VARIANTS = [
    ("grosstarock", {}),
    ("german-1754", {}),
    ("german-1754", {"players": "4"}),
    ("danish", {}),
    ("danish-pots", {}),
    ("american", {}),
]
PHONE = {"width": 375, "height": 740}
WATCH_S = 2.5  # how long each table is watched through its stream (the pages meanwhile)


@dataclass
class Live:
    token: trio.lowlevel.TrioToken
    stop: trio.Event
    url: str
    runners: list[MatchRunner]
    replay_dir: Path


async def _serve(tmp: Path, ready: queue.Queue[Live | BaseException]) -> None:
    store = Store(str(tmp / "arena.db"))
    try:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp)
            http_port = await nursery.start(serve_site, Site(hub, store), "127.0.0.1", 0)
            runners = []
            for name, options in VARIANTS:
                variant = find_variant(name, options)
                config = MatchConfig(
                    variant=variant,
                    deals=10_000,  # more than the test watches: every match runs the whole time
                    seed=5,
                    seat_names=tuple(f"quick {i}" for i in range(variant.seats)),
                    time_control=TimeControl(per_decision_ms=60_000, bank_ms=0),
                )
                runners.append(hub.create_match(config))
            drivers = []
            for seats in sorted({r.config.variant.seats for r in runners}):
                spec = {
                    "mode": "play",
                    "address": f"127.0.0.1:{port}",
                    "tokens": [s.token for r in runners if r.config.variant.seats == seats for s in r.seats],
                    "seats": seats,
                }
                command = driver_command("benchmarks.server_driver", spec, tmp / f"bots-{seats}.json")
                drivers.append(
                    await trio.lowlevel.open_process(
                        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
                    )
                )
            with trio.fail_after(60):
                while not all(r.state is MatchState.RUNNING and r.decisions > 0 for r in runners):
                    await trio.sleep(0.05)
            stop = trio.Event()
            ready.put(
                Live(trio.lowlevel.current_trio_token(), stop, f"http://127.0.0.1:{http_port}", runners, tmp)
            )
            await stop.wait()
            for driver in drivers:
                driver.kill()
                await driver.wait()
                if driver.stdin is not None:
                    await driver.stdin.aclose()
            nursery.cancel_scope.cancel()
    except BaseException as exc:  # the test shows why the server did not start
        ready.put(exc)
        raise
    finally:
        store.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tmp = tmp_path_factory.mktemp("live-table")
    ready: queue.Queue[Live | BaseException] = queue.Queue()
    thread = threading.Thread(target=lambda: trio.run(_serve, tmp, ready), daemon=True)
    thread.start()
    started = ready.get(timeout=120)
    if isinstance(started, BaseException):
        raise started
    yield started
    trio.from_thread.run_sync(started.stop.set, trio_token=started.token)
    thread.join(30)


@pytest.fixture(scope="module")
def browser(playwright_chromium: Any) -> Any:
    return playwright_chromium


# What a live page has drawn: its position, its cards, its text, its layout.
DRAWN = (
    "() => ({"
    " deal: +document.getElementById('table').dataset.deal,"
    " step: +document.getElementById('table').dataset.step,"
    " cards: [...document.querySelectorAll('[data-card]')].map((e) => e.dataset.card),"
    " text: document.querySelector('main').innerText,"
    " log: [+document.getElementById('log').dataset.deal, +document.getElementById('log').dataset.step],"
    f" layout: ({LAYOUT})(),"
    "})"
)


def _read_stream(url: str, seconds: float, into: list[tuple[str, Any]]) -> None:
    """The server-sent events of a live stream for `seconds`."""
    end = time.monotonic() + seconds
    with urllib.request.urlopen(url, timeout=30) as response:
        kind = ""
        for raw in response:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                into.append((kind, json.loads(line[6:])))
            if time.monotonic() > end:
                return


def _state_at(replay: Replay, deal: int, step: int) -> DealState:
    log = replay.deal(deal)
    assert replay.variant is not None
    assert step <= len(log.decisions), f"deal {deal} step {step}: the log has {len(log.decisions)}"
    state = DealState(replay.variant, log.dealer, log.deck, pots=log.pots, stakes=log.stakes)
    for decision in log.decisions[:step]:
        state.apply(decision.action)
    return state


def _check_table(table: dict[str, Any], replay: Replay) -> None:
    """A spectator's table state shows what the engine has made public at its position, no more."""
    state = _state_at(replay, table["deal"], table["step"])
    where = f"{replay.variant and replay.variant.name} deal {table['deal']} step {table['step']}"
    assert table["view"] is None and table["legal"] is None, where
    assert all(seat["hand"] is None and seat["pile"] is None for seat in table["seats"]), where
    assert [seat["hand_size"] for seat in table["seats"]] == [len(h) for h in state.hands], where
    shown = codes_in(table)
    assert shown <= public_cards(state), f"{where}: shows {sorted(shown - public_cards(state))}"
    if table["contract"] is not None:
        assert table["contract"]["partner"] == public_partner(state), where


def test_every_variant_live_shows_only_public_cards_and_fits_a_phone(browser: Any, live: Live) -> None:
    # The browser is started first: the quick bots' matches start with `live`, and a Danish
    # match of quick bots runs for seconds only before its pots outgrow the wire's integers.
    streams: list[list[tuple[str, Any]]] = [[] for _ in live.runners]
    readers = [
        threading.Thread(
            target=_read_stream, args=(f"{live.url}/api/matches/{r.match_id}/live", WATCH_S, into)
        )
        for r, into in zip(live.runners, streams, strict=True)
    ]
    for reader in readers:
        reader.start()
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    drawn: list[list[dict[str, Any]]] = [[] for _ in live.runners]
    try:
        pages = []
        for runner in live.runners:  # every table at once, in a tab of its own
            page = context.new_page()
            page.goto(f"{live.url}/matches/{runner.match_id}/live")
            pages.append(page)
        for runner, page in zip(live.runners, pages, strict=True):
            seats = runner.config.variant.seats
            page.wait_for_function(f"() => document.querySelectorAll('#table .tc-seat').length === {seats}")
        for _ in range(3):
            for page, seen in zip(pages, drawn, strict=True):
                seen.append(page.evaluate(DRAWN))
            time.sleep(0.3)
        where = os.environ.get("ARENA_WEB_SCREENSHOTS")
        if where:  # docs/REPLAYS.md shows the American table, on a phone and on a wide screen
            Path(where).mkdir(parents=True, exist_ok=True)
            page = pages[[r.config.variant.name for r in live.runners].index("american")]
            page.bring_to_front()  # a tab in the background draws nothing
            page.set_viewport_size({"width": PHONE["width"], "height": 900})
            page.wait_for_timeout(600)
            page.screenshot(path=str(Path(where) / "table-live-phone.png"))
            page.set_viewport_size({"width": 1100, "height": 900})
            page.wait_for_timeout(600)
            page.screenshot(path=str(Path(where) / "table-live.png"), full_page=True)
    finally:
        context.close()
        for reader in readers:
            reader.join(30)
    for runner, events, snapshots in zip(live.runners, streams, drawn, strict=True):
        # Still being written, or already ended (a Danish pot that doubles can leave int64 first).
        written = live.replay_dir / f"{runner.match_id}.jsonl.part"
        if not written.exists():
            written = written.with_suffix("")
        replay = verify_replay(written, collect=True)
        assert replay.problem is None, replay.problem
        tables = [data for kind, data in events if kind == "table"]
        position = next(data for kind, data in events if kind == "position")
        assert position["table"] is not None and len(tables) >= 2, runner.config.variant.name
        for table in [position["table"], *tables]:
            _check_table(table, replay)
        for kind, data in events:  # a card in an event is a played or a called card, never a discard
            for event in data["events"] if kind == "position" else data if kind == "update" else []:
                taken = event.get("action_taken")
                if taken and taken["action"]["card"]:
                    assert taken["action"]["type"] in ("play", "call"), event
        for snapshot in snapshots:
            state = _state_at(replay, snapshot["deal"], snapshot["step"])
            public = public_cards(state)
            assert set(snapshot["cards"]) <= public, (
                runner.config.variant.name,
                sorted(set(snapshot["cards"]) - public),
            )
            # The log tells of the events as they come; the table may be up to TABLE_S behind.
            told = max((snapshot["deal"], snapshot["step"]), tuple(snapshot["log"]))
            assert text_cards(snapshot["text"]) <= public_cards(_state_at(replay, *told)), (
                runner.config.variant.name
            )
            layout = snapshot["layout"]
            assert layout["scrollWidth"] <= PHONE["width"] and not layout["outside"], layout
