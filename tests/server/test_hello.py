"""What a bot says in its Hello, through the real server: the referee records it (the `Seat`, the
replay's `hello` lines, `read_results`, `arena replay show`, the HTML page), refuses a protocol
version it does not speak, and counts the answers it rejects. Version 1 logs still verify."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from support import arena
from support.server import FAST, bot

from arena.engine import Match, find_variant
from arena.referee.position import PositionRunner
from arena.referee.runner import MatchConfig
from arena.referee.seat import PROTOCOL_VERSIONS, hello_refusal
from arena.replay.html import replay_data
from arena.replay.log import REPLAY_VERSION
from arena.replay.samples import SAMPLES_DIR
from arena.replay.summary import read_results
from arena.replay.verify import verify_bytes, verify_replay
from arena.server.app import serve
from arena.server.local import play_matches
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

REFUSAL = "protocol version 99 is not spoken here; this server speaks 1"

def config(variant: str = "grosstarock", deals: int = 1, seed: int = 3, **kwargs: Any) -> MatchConfig:
    v = find_variant(variant)
    names = tuple(f"bot{i}" for i in range(v.seats))
    return MatchConfig(v, deals, seed, names, **{"time_control": FAST, **kwargs})


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]




@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One grosstarock match: seat 0 names itself, seat 1 comes back as another version, seat 2
    leaves the protocol version unset (0) and answers its first request illegally first."""
    bots = [
        bot("random,name:alpha,versions:1.0"),
        bot("random,name:beta,versions:2.1/2.2,reconnect:3"),
        bot("random,name:gamma,protocol:0,illegal-at:1"),
    ]
    [result] = trio.run(play_matches, [(config(), bots)], tmp_path_factory.mktemp("replays"))
    assert result.runner.replay_path is not None
    return result


def test_the_seats_and_the_replay_record_every_hello(played: Any) -> None:
    runner, path = played.runner, played.runner.replay_path
    seats = runner.seats
    assert [(s.bot_name, s.bot_version, s.hellos) for s in seats] == [
        ("alpha", "1.0", 1),
        ("beta", "2.2", 2),  # the last Hello's; both counted
        ("gamma", "", 1),
    ]
    lines = lines_of(path)
    assert lines[0]["version"] == REPLAY_VERSION == 3
    hellos = [line for line in lines if line["type"] == "hello"]
    assert sorted(hellos, key=lambda line: (line["seat"], line["bot_version"])) == [
        {"type": "hello", "seat": 0, "bot_name": "alpha", "bot_version": "1.0", "protocol_version": 1},
        {"type": "hello", "seat": 1, "bot_name": "beta", "bot_version": "2.1", "protocol_version": 1},
        {"type": "hello", "seat": 1, "bot_name": "beta", "bot_version": "2.2", "protocol_version": 1},
        {"type": "hello", "seat": 2, "bot_name": "gamma", "bot_version": "", "protocol_version": 0},
    ]
    # The reconnection's Hello follows its connection line.
    again = next(i for i, line in enumerate(lines) if line.get("bot_version") == "2.2")
    assert lines[again - 1] == {"type": "connection", "seat": 1, "event": "reconnected"}
    replay = verify_replay(path, collect=True)
    assert replay.ok and replay.complete, replay.problem
    assert [(h.seat, h.bot_name, h.bot_version, h.protocol_version) for h in replay.hellos] == [
        (h["seat"], h["bot_name"], h["bot_version"], h["protocol_version"]) for h in hellos
    ]
    assert read_results(path, 3).hellos == [("alpha", "1.0"), ("beta", "2.2"), ("gamma", "")]
    assert read_results(path, 4).hellos[3] == ("", "")  # a seat without a Hello


def test_rejected_answers_are_counted(played: Any) -> None:
    seats = played.runner.seats
    assert [s.rejected for s in seats] == [0, 0, 1]
    faults = [
        line for line in lines_of(played.runner.replay_path) if "fault" in line or line["type"] == "fault"
    ]
    assert faults == []  # a rejected answer corrected in time is no fault


def test_a_bot_rejected_at_every_request_is_counted_each_time(tmp_path: Path) -> None:
    illegal = bot("illegal")
    random_bot = bot("random")
    [result] = trio.run(play_matches, [(config(seed=4), [random_bot, illegal, random_bot])], tmp_path)
    seats = result.runner.seats
    decisions = [0, 0, 0]
    for line in lines_of(result.runner.replay_path):
        if line["type"] == "action":
            decisions[line["seat"]] += 1
    assert decisions[1] > 0
    assert [s.rejected for s in seats] == [0, decisions[1], 0]  # an illegal answer, then a legal one
    assert [s.hellos for s in seats] == [1, 1, 1]
    assert read_results(result.runner.replay_path, 3).hellos == [("scripted", "")] * 3


def test_show_and_the_page_name_each_seats_bot(played: Any) -> None:
    path = played.runner.replay_path
    proc = arena("replay", "show", path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "  seat 0: bot0 · bot alpha 1.0\n" in out
    assert "  seat 1: bot1 · bot beta 2.1\n" in out
    assert "  seat 2: bot2 · bot gamma (no version) (protocol version unset, taken as 1)\n" in out
    assert "  ⚡ seat 1 reconnected\n  ⚡ seat 1 now runs beta 2.2 (was beta 2.1)\n" in out
    # A seat's view names its own bot only: the referee tells no seat which bots the others run.
    proc = arena("replay", "show", path, "--seat", 2)
    assert proc.returncode == 0, proc.stderr
    assert "gamma" in proc.stdout and "alpha" not in proc.stdout and "beta" not in proc.stdout
    data = replay_data(verify_replay(path, collect=True))
    assert data["bots"] == ["alpha 1.0", "beta 2.1", "gamma (no version)"]
    notes = [n["text"] for deal in data["deals"] for frame in deal["frames"] for n in frame["notes"]]
    assert "seat 1 now runs beta 2.2 (was beta 2.1)" in notes


def _refused(address: str, token: str, version: int) -> tuple[grpc.StatusCode, str]:
    """Say Hello with `version` on a bot stream; the status the stream ends with, and its details."""
    done = threading.Event()

    def outgoing() -> Iterator[pb.BotMessage]:
        yield pb.BotMessage(hello=pb.Hello(bot_name="future", bot_version="9", protocol_version=version))
        done.wait(10)  # keep the sending side open: the server must end the stream itself

    with grpc.insecure_channel(address) as channel:
        stream = pb_grpc.BotServiceStub(channel).Play(
            outgoing(), metadata=[("authorization", f"Bearer {token}")], timeout=10
        )
        try:
            for message in stream:
                raise AssertionError(f"a refused Hello got {message.WhichOneof('kind')}")
        except grpc.RpcError as error:
            return error.code(), error.details()  # type: ignore[no-any-return]
        finally:
            done.set()
    raise AssertionError("the stream ended without a status")


def test_a_protocol_version_the_server_does_not_speak_is_refused(tmp_path: Path) -> None:
    assert PROTOCOL_VERSIONS == (1,)
    assert hello_refusal(1) == hello_refusal(0) == ""  # 0: unset, taken as 1
    assert hello_refusal(99) == REFUSAL

    async def scenario() -> tuple[tuple[grpc.StatusCode, str], Any]:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            cfg = config(fault_policy="forfeit", start_timeout_s=0.5, reconnect_grace_s=0.1)
            runner = hub.create_match(cfg)
            status = await trio.to_thread.run_sync(_refused, f"127.0.0.1:{port}", runner.seats[0].token, 99)
            with trio.fail_after(30):
                await runner.done.wait()  # nobody plays: the first seat to act forfeits
            nursery.cancel_scope.cancel()
            return status, runner

    (code, details), runner = trio.run(scenario)
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details == REFUSAL
    seat = runner.seats[0]
    assert (seat.hellos, seat.bot_name, seat.bot_version) == (0, "", "")
    assert [(f.kind, f.detail) for f in seat.faults][:1] == [("protocol", REFUSAL)]
    lines = lines_of(runner.replay_path)
    assert {"type": "fault", "seat": 0, "kind": "protocol", "detail": REFUSAL} in lines
    assert not [line for line in lines if line["type"] == "hello"]
    replay = verify_replay(runner.replay_path, collect=True)
    assert replay.ok and replay.complete, replay.problem
    first = replay.notes[0]
    assert (first.seat, first.type, first.detail) == (0, "fault", REFUSAL)
    assert read_results(runner.replay_path, 3).hellos == [("", "")] * 3


def test_the_position_runner_refuses_it_too(tmp_path: Path) -> None:
    variant = find_variant("grosstarock")
    state = Match(variant, seed=1, deals=1).start_deal()
    assert state.current_player is not None
    runner = PositionRunner(variant, state.current_player, [state], start_timeout_s=3, reconnect_grace_s=0.1)

    async def scenario() -> tuple[grpc.StatusCode, str]:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            with hub.admit(runner, {runner.seat: runner.token}):
                nursery.start_soon(runner.run)
                status = await trio.to_thread.run_sync(_refused, f"127.0.0.1:{port}", runner.token, 99)
                with trio.fail_after(30):
                    await runner.done.wait()
            nursery.cancel_scope.cancel()
            return status

    assert trio.run(scenario) == (grpc.StatusCode.FAILED_PRECONDITION, REFUSAL)
    assert runner.faults == [REFUSAL]
    assert [r.outcome for r in runner.results] == ["skipped"]


def test_version_1_logs_still_verify_and_say_no_bot(tmp_path: Path) -> None:
    samples = sorted(SAMPLES_DIR.glob("*.jsonl"))
    assert samples
    proc = arena("replay", "verify", *samples)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(": ok · ") == len(samples)
    for path in samples:
        assert lines_of(path)[0]["version"] == 1
        assert read_results(path, 4).hellos == [("", "")] * 4
    grosstarock = SAMPLES_DIR / "grosstarock.jsonl"
    proc = arena("replay", "show", grosstarock)
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.split("\n\n")[0]
    assert " · bot " not in header and "no Hello" not in header  # a version 1 log does not say
    assert replay_data(verify_replay(grosstarock, collect=True))["bots"] is None
    # A hello line in a version 1 log is damage; so is one of the wrong shape in version 2.
    text = grosstarock.read_text().splitlines(keepends=True)
    hello = '{"type":"hello","seat":0,"bot_name":"a","bot_version":"1","protocol_version":1}\n'
    replay = verify_bytes("".join([text[0], hello, *text[1:]]).encode(), "v1.jsonl")
    assert replay.problem is not None and replay.problem.kind == "damage"
    assert "line 2 is a hello line in a version 1 log" in str(replay.problem)
    v2 = text[0].replace('"version":1,', '"version":2,', 1)
    assert verify_bytes("".join([v2, hello, *text[1:]]).encode(), "v2.jsonl").ok
    for wrong, message in (
        ('"seat":0', "has seat 3; expected 0…2"),
        ('"bot_name":"a"', "needs the bot_name and bot_version strings"),
        ('"protocol_version":1', "has protocol_version '1'; expected a whole number from 0"),
    ):
        odd = {"seat": '"seat":3', "bot_name": '"bot_name":5', "protocol_version": '"protocol_version":"1"'}
        bad = hello.replace(wrong, odd[wrong.split('"')[1]])
        replay = verify_bytes("".join([v2, bad, *text[1:]]).encode(), "bad.jsonl")
        assert replay.problem is not None and replay.problem.kind == "damage", wrong
        assert f"line 2 {message}" in str(replay.problem), replay.problem
