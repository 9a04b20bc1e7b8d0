"""A person who leaves the table (`arena.web.human`): once their page has not polled for
`absent_s`, the seat's link goes down like a broken bot stream, the referee plays for the seat after
its reconnection grace (disconnect faults, not a clock run out decision by decision), and a poll
takes the seat back. Real referee, hub and in-process example bots, under trio's MockClock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio
import trio.testing

from arena.engine import find_variant
from arena.live import Hub
from arena.replay.verify import verify_replay
from arena.web.human import HumanLink, Table, Tables, time_control
from arena.web.play import POLL_S

ABSENT_S = 30.0


async def _answer_until_end(link: HumanLink) -> None:
    """A page that stays: polls, and answers each request with its first legal action."""
    seen = len(link.messages)
    answered: set[str] = set()
    while not link.runner.done.is_set():
        await link.wait_past(seen, POLL_S)
        seen = len(link.messages)
        requests = [m for m in link.messages if "request" in m]
        if requests and requests[-1]["request"]["request_id"] not in answered:
            last = requests[-1]
            answered.add(last["request"]["request_id"])
            action = last["request"]["legal_actions"][0]
            link.answer(int(last["request"]["request_id"]), _pb_action(action))


def _pb_action(action: dict[str, Any]) -> Any:
    from arena.v1 import arena_pb2 as pb

    return pb.Action(**{k: v for k, v in action.items() if v})


def _connections(path: Path, seat: int) -> list[str]:
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    return [x["event"] for x in lines if x["type"] == "connection" and x["seat"] == seat]


def test_a_person_who_leaves_is_played_for_and_can_come_back(tmp_path: Path) -> None:
    tables_seen: list[Table] = []
    times: dict[str, float] = {}

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            hub = Hub(tmp_path, nursery)
            tables = Tables(hub, absent_s=ABSENT_S)
            clock = time_control(60, 300)
            variant = find_variant("grosstarock")
            gone = tables.start(variant, 0, ["random"], 1, clock, "you")
            back = tables.start(variant, 1, ["random"], 1, clock, "you")
            tables_seen.extend([gone, back])
            assert gone.link is not None and back.link is not None
            start = trio.current_time()
            # Both pages poll once, then go quiet.
            await gone.link.wait_past(0, 1.0)
            await back.link.wait_past(0, 1.0)
            while not back.link.away:
                await trio.sleep(1)
            times["away"] = trio.current_time() - start
            # One person comes back at once: a poll takes the seat again, and they play to the end.
            before = len(back.link.messages)
            nursery.start_soon(_answer_until_end, back.link)
            await trio.testing.wait_all_tasks_blocked()
            assert not back.link.away
            assert "match_start" in back.link.messages[before]
            with trio.fail_after(3600):
                await gone.runner.done.wait()
            times["gone"] = trio.current_time() - start
            with trio.fail_after(3600):
                await back.runner.done.wait()
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    gone, back = tables_seen
    for table in (gone, back):
        replay = verify_replay(table.runner.replay_path, collect=True)  # type: ignore[arg-type]
        assert replay.complete, replay.problem
    # Given up after ABSENT_S (and a check), played for after the grace: never its clock's 360 s.
    assert ABSENT_S <= times["away"] <= ABSENT_S + 6
    assert times["gone"] < ABSENT_S + 6 + 10 + 5
    kinds = {fault.kind for fault in gone.runner.seats[0].faults}
    assert kinds == {"disconnect"}, kinds
    assert gone.runner.replay_path is not None and back.runner.replay_path is not None
    assert _connections(gone.runner.replay_path, 0) == ["disconnected"]
    assert _connections(back.runner.replay_path, 1) == ["disconnected", "reconnected"]
    assert not back.runner.seats[1].faults and back.runner.seats[1].hellos == 2
