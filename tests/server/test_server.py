"""End to end: a real server on a real port, real bot processes, faults of every kind."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
import trio.testing
from support import cards_in
from support.server import FAST, bot, config, faults_in, read_replay

from arena.engine import Action, Card, DealState, Match, deal_record, find_variant, replay_record
from arena.referee.record import action_line, deal_line
from arena.referee.runner import MatchConfig
from arena.referee.seat import ALARM, Inbox, InboxItem, LinkChange, TimeControl
from arena.replay.log import ReplayWriter
from arena.server.app import serve
from arena.server.local import play_matches
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("grosstarock", {}),
        ("german-1754", {}),
        ("german-1754", {"players": "4"}),
        ("danish", {}),
        ("danish-pots", {}),
        ("american", {}),
    ],
)
def test_full_match_writes_a_replay_consistent_with_the_engine(
    tmp_path: Path, variant: str, options: dict[str, str]
) -> None:
    cfg = config(variant, deals=2, options=options)
    [played] = trio.run(play_matches, [(cfg, [bot()] * cfg.variant.seats)], tmp_path)
    runner = played.runner
    assert runner.termination == "completed"
    assert runner.replay_path is not None and runner.replay_path.exists()
    assert not list(tmp_path.glob("*.part"))
    lines = read_replay(runner.replay_path)
    assert lines[0]["type"] == "header" and lines[0]["variant"] == variant
    assert lines[-1]["type"] == "match_end" and lines[-1]["scores"] == runner.match.scores
    assert faults_in(lines) == []
    deals = [line for line in lines if line["type"] == "deal"]
    assert len(deals) >= 2
    for line in deals:
        record = line["record"]
        assert all("think_ms" in action for action in record["actions"])
        state = replay_record(record)
        assert state.result().to_dict() == record["result"]
    record_file = tmp_path / "deal.json"
    record_file.write_text(json.dumps(deals[-1]["record"]))
    scored = subprocess.run(
        [sys.executable, "-m", "arena", "score", str(record_file), "--json"], capture_output=True, text=True
    )
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["deltas"] == deals[-1]["record"]["result"]["deltas"]
    assert played.exit_codes == [0] * cfg.variant.seats


def test_faults_are_handled_recorded_and_other_matches_go_on(tmp_path: Path) -> None:
    """Illegal answers, a timeout, a crash, a reconnect and an oversized message, at once."""
    tight = TimeControl(per_decision_ms=800, bank_ms=0, increment_ms=0)
    jobs = [
        (
            config("grosstarock", time_control=tight),
            [bot("illegal-always"), bot(f"sleep:3,record:{tmp_path / 'seat1.jsonl'}"), bot("exit:5")],
        ),
        (config("danish", reconnect_grace_s=5.0), [bot("reconnect:4"), bot("oversize:6"), bot("illegal")]),
        (config("german-1754"), [bot(), bot(), bot()]),
    ]
    faulty, flaky, clean = trio.run(play_matches, jobs, tmp_path)
    for played in (faulty, flaky, clean):
        assert played.runner.termination == "completed"
        assert played.runner.replay_path is not None

    lines = read_replay(faulty.runner.replay_path)  # type: ignore[arg-type]
    kinds = faults_in(lines)
    assert (0, "illegal") in kinds
    assert (1, "timeout") in kinds
    assert (2, "crash") in kinds
    assert {seat for seat, _ in kinds} == {0, 1, 2}
    assert faulty.exit_codes[2] == 3
    faulted = [ln for ln in lines if ln["type"] == "action" and "fault" in ln]
    illegal = next(ln for ln in faulted if ln["fault"]["kind"] == "illegal")
    assert "the last:" in illegal["fault"]["detail"]  # the full reason is in the replay log …
    seen = (tmp_path / "seat1.jsonl").read_text()
    assert '"kind": "illegal"' in seen and "too many invalid answers" in seen
    assert "the last:" not in seen  # … but the other seats learn nothing of seat 0's hand
    timeouts = [
        line for line in lines if line["type"] == "action" and line.get("fault", {}).get("kind") == "timeout"
    ]
    assert all(line["think_ms"] >= 800 for line in timeouts)

    lines = read_replay(flaky.runner.replay_path)  # type: ignore[arg-type]
    connections = [(line["seat"], line["event"]) for line in lines if line["type"] == "connection"]
    assert (0, "disconnected") in connections and (0, "reconnected") in connections
    assert (1, "disconnected") in connections and (1, "reconnected") in connections
    assert [kind for seat, kind in faults_in(lines) if seat == 0] == []  # it came back in time
    assert (1, "protocol") in faults_in(lines)  # the oversized message
    assert flaky.exit_codes == [0, 0, 0]

    assert faults_in(read_replay(clean.runner.replay_path)) == []  # type: ignore[arg-type]


def test_a_bot_cannot_answer_for_another_request(tmp_path: Path) -> None:
    """A reply tagged with another request id is ignored: a seat acts only for itself."""
    tight = TimeControl(per_decision_ms=300, bank_ms=0, increment_ms=0)
    cfg = config("grosstarock", time_control=tight)
    [played] = trio.run(play_matches, [(cfg, [bot("foreign"), bot(), bot()])], tmp_path)
    kinds = faults_in(read_replay(played.runner.replay_path))  # type: ignore[arg-type]
    assert kinds and all(fault == (0, "timeout") for fault in kinds)


def test_replay_lines_are_buffered_until_flushed_and_the_action_line_is_plain_json(tmp_path: Path) -> None:
    pending: list[ReplayWriter] = []
    writer = ReplayWriter(tmp_path, "m", pending.append)
    writer.write({"type": "header"})
    action = Action.parse("play EX S")
    writer.write_json(action_line(2, 17, 1, action, 35))
    assert pending == [writer] and writer.pending  # reported once, at its first line
    assert writer.partial_path.read_text() == ""
    writer.flush()
    assert not writer.pending
    expected = {
        "type": "action",
        "deal": 2,
        "step": 17,
        "seat": 1,
        "action": action.to_dict(),
        "think_ms": 35,
    }
    assert read_replay(writer.partial_path) == [{"type": "header"}, expected]
    line = json.dumps(expected, separators=(",", ":"), ensure_ascii=False)
    assert writer.partial_path.read_text().splitlines()[1] == line  # byte for byte as `write` encodes it
    writer.write({"type": "connection"})
    assert pending == [writer, writer]
    writer.abandon()  # closing flushes
    assert read_replay(writer.partial_path)[-1] == {"type": "connection"}
    unbuffered = ReplayWriter(tmp_path, "n")
    unbuffered.write({"type": "header"})
    assert unbuffered.partial_path.read_text() == '{"type":"header"}\n'
    assert unbuffered.complete().read_text() == '{"type":"header"}\n'


def test_every_replay_line_of_a_match_is_encoded_as_json_dumps_encodes_it(tmp_path: Path) -> None:
    """The referee encodes its lines itself (`runner._LINE_ENCODER`, the `action` line by hand):
    each must be the bytes `ReplayWriter.write` would have written, header to match end."""
    names = ("bøt", "ボット", "bot\u2713")  # non-ASCII: written as themselves, not as \u escapes
    cfg = MatchConfig(variant=find_variant("danish"), deals=1, seed=3, seat_names=names, time_control=FAST)
    [played] = trio.run(play_matches, [(cfg, [bot(), bot(), bot()])], tmp_path)
    lines = played.runner.replay_path.read_text(encoding="utf-8").splitlines()  # type: ignore[union-attr]
    kinds = {json.loads(line)["type"] for line in lines}
    assert {"header", "hello", "deal_start", "action", "deal", "match_end"} <= kinds
    for line in lines:
        assert line == json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False)


def test_the_deal_line_is_the_record_with_each_action_and_its_note() -> None:
    """`deal_line` encodes the actions itself, from the history: the line must be the record
    `deal_record` makes with them, each entry with its decision's note (a fault's too)."""
    match = Match(find_variant("american"), seed=4, deals=1)
    state = match.start_deal()
    rng = random.Random(4)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    notes: list[dict[str, Any]] = [{"think_ms": step * 7} for step in range(len(state.history))]
    notes[2] = {"think_ms": 2000, "fault": {"kind": "timeout", "detail": "2000 ms (the limit is 2000 ms)"}}
    record = deal_record(state, 0)
    record["actions"] = [{**entry, **note} for entry, note in zip(record["actions"], notes, strict=True)]
    expected = {"type": "deal", "deal": 0, "record": record, "scores": [1, -2, 3, -2]}
    line = deal_line(0, deal_record(state, 0, actions=False), state.history, notes, [1, -2, 3, -2])
    assert line == json.dumps(expected, separators=(",", ":"), ensure_ascii=False)


def test_an_inbox_hands_items_to_its_one_waiting_task_and_is_bounded() -> None:
    async def scenario() -> list[InboxItem]:
        inbox = Inbox(2)
        inbox.send_nowait(LinkChange(True))
        inbox.send_nowait(ALARM)
        with pytest.raises(trio.WouldBlock):
            inbox.send_nowait(ALARM)
        got = [await inbox.receive(), await inbox.receive()]
        with trio.CancelScope() as scope:  # a waiter that is cancelled leaves the inbox free
            scope.cancel()
            await inbox.receive()
        async with trio.open_nursery() as nursery:

            async def take() -> None:
                got.append(await inbox.receive())

            nursery.start_soon(take)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(RuntimeError):
                await inbox.receive()  # one task at a time
            inbox.send_nowait(LinkChange(False))
        return got

    assert trio.run(scenario) == [LinkChange(True), ALARM, LinkChange(False)]


def _stream_status(address: str, token: str) -> grpc.StatusCode | str:
    """Open a bot stream with `token`; the first message's kind, or the error status."""
    answered = threading.Event()

    def outgoing() -> Iterator[pb.BotMessage]:
        yield pb.BotMessage(hello=pb.Hello(bot_name="probe", protocol_version=1))
        answered.wait(5)  # keep the sending side open: a half-closed stream is a disconnect

    with grpc.insecure_channel(address) as channel:
        stream = pb_grpc.BotServiceStub(channel).Play(
            outgoing(), metadata=[("authorization", f"Bearer {token}")], timeout=5
        )
        try:
            first = next(iter(stream))
        except grpc.RpcError as error:
            return error.code()  # type: ignore[no-any-return]
        finally:
            answered.set()
        stream.cancel()
        return first.WhichOneof("kind")  # type: ignore[no-any-return]


def test_tokens_authenticate_one_seat_of_one_match(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            address = f"127.0.0.1:{port}"
            first = hub.create_match(config("grosstarock"))
            outcome = {
                "wrong": await trio.to_thread.run_sync(_stream_status, address, "not-a-token"),
                "none": await trio.to_thread.run_sync(_stream_status, address, ""),
                "seat1": await trio.to_thread.run_sync(_stream_status, address, first.seats[1].token),
            }
            first.done.set()  # not run to the end: the test only needs its tokens
            nursery.cancel_scope.cancel()
            return outcome

    outcome = trio.run(scenario)
    assert outcome["wrong"] == grpc.StatusCode.UNAUTHENTICATED
    assert outcome["none"] == grpc.StatusCode.UNAUTHENTICATED
    assert outcome["seat1"] == "match_start"


def _messages(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text().splitlines():
        yield json.loads(line)


@pytest.mark.parametrize(
    ("variant", "options"),
    [("grosstarock", {}), ("danish", {}), ("german-1754", {"players": "4"}), ("american", {})],
)
def test_no_message_holds_a_card_its_seat_may_not_know(
    tmp_path: Path, variant: str, options: dict[str, str]
) -> None:
    cfg = config(variant, deals=2, seed=7, options=options)
    seats = cfg.variant.seats
    logs = [tmp_path / f"seat{seat}.jsonl" for seat in range(seats)]
    [played] = trio.run(play_matches, [(cfg, [bot(f"record:{log}") for log in logs])], tmp_path / "replays")
    lines = read_replay(played.runner.replay_path)  # type: ignore[arg-type]
    hands: dict[int, list[set[Card]]] = {}
    shown: dict[int, set[Card]] = {}
    for line in lines:
        if line["type"] == "deal":
            record = line["record"]
            start = DealState(cfg.variant, record["dealer"], [Card.parse(c) for c in record["deck"]])
            hands[line["deal"]] = [set(h) for h in start.hands]
            final = replay_record(record)
            # Public by rule: Danish skat cards shown (DK-SKAT-4), the called card's name (AM-CALL-1),
            # the Rufer/Dreier talon (AM-TAL-1), the cards of shown American combinations (AM-COMB-1).
            public = {Card.parse(c) for c in final.skat_public.get("shown", [])}  # type: ignore[union-attr]
            if final.called is not None:
                public.add(final.called)
            if final.talon_visible:
                public |= set(final.talon)
            for declaration in final.declarations:
                public |= declaration.combination.shown
            shown[line["deal"]] = public
    checked = 0
    for seat, log in enumerate(logs):
        played_cards: dict[int, set[Card]] = {}
        for message in _messages(log):
            if "matchStart" in message or "matchEnd" in message:
                continue
            events = message.get("events", {}).get("events", []) + message.get("request", {}).get(
                "events", []
            )
            for event in events:  # public events travel with the message; they come first
                taken = event.get("actionTaken", {}).get("action", {})
                if taken.get("type") == "play":
                    played_cards.setdefault(int(event.get("deal", 0)), set()).add(Card.parse(taken["card"]))
            deals = {int(e.get("deal", 0)) for e in events} | (
                {int(message["request"].get("deal", 0))} if "request" in message else set()
            )
            allowed: set[Card] = set()
            for deal in deals:
                allowed |= hands[deal][seat] | played_cards.get(deal, set()) | shown[deal]
            # The kings (or other cards) one may call are names to choose from, not holdings (AM-CALL-1).
            offered = message.get("request", {}).get("legalActions", [])
            allowed |= {Card.parse(a["card"]) for a in offered if a.get("type") == "call"}
            leaked = cards_in(message) - allowed
            assert not leaked, f"seat {seat} was sent {sorted(map(str, leaked))} in {message}"
            checked += 1
    assert checked > 30 * seats
