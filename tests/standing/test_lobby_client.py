"""The Python SDK's lobby client (clients/python/arena_bot/lobby.py) against a fake standing arena.

`FakeArena` is a real gRPC server on a free local port, in threads: its LobbyService.Join runs a
script per join, its BotService.Play plays a one-decision match for any seat token and counts the
matches open at once. Times are measured by the fake server; only lower bounds are asserted.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from arena_bot import BotError, Lobby, LobbyError, LobbyResult, MatchResult, retry_after_ms, run_lobby
from arena_bot.v1 import arena_pb2 as pb
from support import SDK, in_thread

TOKEN = "bot-secret"


@dataclass
class Join:
    """One LobbyService.Join call as the fake server saw it."""

    at: float  # time.monotonic() when it arrived
    metadata: dict[str, str]
    message: pb.LobbyJoin


def metadata_of(context: grpc.ServicerContext) -> dict[str, str]:
    return {
        key: value if isinstance(value, str) else value.decode()
        for key, value in context.invocation_metadata()
    }


LobbyScript = Callable[["FakeArena", int, grpc.ServicerContext], Iterator[pb.LobbyMessage]]


class FakeArena:
    """A fake standing arena: `lobby(arena, join_index, context)` yields the lobby messages of a join."""

    def __init__(self, lobby: LobbyScript, port: int = 0, hold: float = 0.0) -> None:
        self.lobby = lobby
        self.hold = hold  # seconds a match waits for a second one to be open, before MatchEnd
        self.cond = threading.Condition()
        self.joins: list[Join] = []
        self.marks: dict[str, float] = {}  # named moments of a script, time.monotonic()
        self.hellos: list[tuple[str, pb.Hello]] = []  # (seat token, Hello)
        self.replies: list[tuple[str, pb.ActionReply]] = []
        self.finished: list[str] = []  # seat tokens of the matches that sent MatchEnd
        self.open = 0
        self.max_open = 0
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        lobby_handler = grpc.method_handlers_generic_handler(
            "grosstarock.arena.v1.LobbyService",
            {
                "Join": grpc.unary_stream_rpc_method_handler(
                    self._join,
                    request_deserializer=pb.LobbyJoin.FromString,
                    response_serializer=pb.LobbyMessage.SerializeToString,
                )
            },
        )
        bot_handler = grpc.method_handlers_generic_handler(
            "grosstarock.arena.v1.BotService",
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play,
                    request_deserializer=pb.BotMessage.FromString,
                    response_serializer=pb.ServerMessage.SerializeToString,
                )
            },
        )
        self.server.add_generic_rpc_handlers((lobby_handler, bot_handler))
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        assert self.port, f"port {port} is taken"
        self.server.start()
        self.address = f"127.0.0.1:{self.port}"

    def mark(self, name: str) -> None:
        with self.cond:
            self.marks[name] = time.monotonic()
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], context: Any = None, timeout: float = 5.0) -> bool:
        """Wait until `predicate()` (checked under the lock), the call ends, or the time is up."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0 or (context is not None and not context.is_active()):
                    return False
                self.cond.wait(min(left, 0.05))
        return True

    def _join(self, request: pb.LobbyJoin, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        with self.cond:
            index = len(self.joins)
            self.joins.append(Join(time.monotonic(), metadata_of(context), request))
            self.cond.notify_all()
        yield from self.lobby(self, index, context)

    def _play(
        self, requests: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.ServerMessage]:
        token = metadata_of(context)["authorization"].removeprefix("Bearer ")
        hello = next(requests).hello
        with self.cond:
            self.hellos.append((token, hello))
            self.open += 1
            self.max_open = max(self.max_open, self.open)
            self.cond.notify_all()
        try:
            start = pb.MatchStart(
                match_id=f"m-{token}", variant="grosstarock", seat=1, seat_names=["x", "me", "y"]
            )
            yield pb.ServerMessage(match_start=start)
            legal = [pb.Action(type="pass"), pb.Action(type="announce", name="vole")]
            yield pb.ServerMessage(
                request=pb.DecisionRequest(request_id=1, legal_actions=legal, time_limit_ms=5000)
            )
            reply = next(requests).action
            with self.cond:
                self.replies.append((token, reply))
            if self.hold:
                self.wait_for(lambda: self.open >= 2, context, timeout=self.hold)
            yield pb.ServerMessage(match_end=pb.MatchEnd(scores=[-1, 2, -1], termination="completed"))
        finally:
            with self.cond:
                self.open -= 1
                self.finished.append(token)
                self.cond.notify_all()

    def played(self, count: int) -> list[str]:
        """The seat tokens of the finished matches, sorted, once there are `count` (the server side of a
        match ends a moment after the client has its MatchEnd)."""
        self.wait_for(lambda: len(self.finished) >= count)
        with self.cond:
            return sorted(self.finished)

    def stop(self) -> None:
        self.server.stop(0)


@pytest.fixture
def arenas() -> Iterator[list[FakeArena]]:
    """Collects the fake servers a test starts, and stops them."""
    started: list[FakeArena] = []
    yield started
    for arena in started:
        arena.stop()


def start(arenas: list[FakeArena], lobby: LobbyScript, **kwargs: Any) -> FakeArena:
    arenas.append(FakeArena(lobby, **kwargs))
    return arenas[-1]


def welcome(max_matches: int = 1) -> pb.LobbyMessage:
    return pb.LobbyMessage(
        welcome=pb.Welcome(bot_name="reg-name", variants=["grosstarock"], max_matches=max_matches)
    )


def seated(token: str) -> pb.LobbyMessage:
    return pb.LobbyMessage(
        seated=pb.Seated(
            match_id=f"m-{token}",
            seat_token=token,
            seat=1,
            variant="grosstarock",
            seat_names=["x", "reg-name", "y"],
        )
    )


def idle(arena: FakeArena, context: grpc.ServicerContext) -> None:
    """Keep a lobby stream open until the client leaves (or 10 s)."""
    arena.wait_for(lambda: False, context, timeout=10)


def refuse(
    context: grpc.ServicerContext, code: grpc.StatusCode, details: str, retry_ms: int | None = None
) -> None:
    if retry_ms is not None:
        context.set_trailing_metadata((("retry-after-ms", str(retry_ms)),))
    context.abort(code, details)


def first_legal(request: pb.DecisionRequest) -> pb.Action:
    return request.legal_actions[0]



# --------------------------------------------------------------------------- seats and matches


def test_matches_are_played_concurrently_up_to_max_matches_and_counted(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome(max_matches=2)
        for n in range(6):  # the client leaves after 4 seats; the server counts the matches in flight

            def a_table_is_free(n: int = n) -> bool:
                return n - len(arena.finished) < 2

            if not arena.wait_for(a_table_is_free, context):
                return
            yield seated(f"seat-{n}")
        idle(arena, context)

    arena = start(arenas, lobby, hold=3.0)
    seen: list[str] = []
    ended: list[tuple[str, str]] = []

    def on_seated(seat: pb.Seated) -> Callable[[pb.DecisionRequest], pb.Action]:
        seen.append(seat.match_id)

        def decide(request: pb.DecisionRequest) -> pb.Action:
            return request.legal_actions[-1] if seat.seat_token == "seat-0" else request.legal_actions[0]

        return decide

    def on_match_end(seat: pb.Seated, result: MatchResult | None, error: BaseException | None) -> None:
        assert result is not None and error is None
        ended.append((seat.match_id, result.termination))

    result = in_thread(
        lambda: run_lobby(
            first_legal,
            address=arena.address,
            bot_token=TOKEN,
            variants=["grosstarock", "danish"],
            max_matches=2,
            version="7.1",
            matches=4,
            on_seated=on_seated,
            on_match_end=on_match_end,
        )
    )
    [join] = arena.joins
    assert join.metadata["authorization"] == f"Bearer {TOKEN}"
    assert list(join.message.variants) == ["grosstarock", "danish"]
    assert (join.message.max_matches, join.message.bot_version, join.message.protocol_version) == (
        2,
        "7.1",
        1,
    )
    # Four matches, two at a time, and never more.
    assert arena.max_open == 2
    assert arena.played(4) == [f"seat-{n}" for n in range(4)]
    assert len(result.matches) == 4 and result.stop_reason == "matches"
    assert all(r.termination == "completed" and r.my_score == 2 for r in result.matches)
    assert sorted(r.match_start.match_id for r in result.matches if r.match_start) == sorted(seen)
    assert [s.match_id for s in result.seated] == seen == [f"m-seat-{n}" for n in range(4)]
    assert sorted(ended) == [(f"m-seat-{n}", "completed") for n in range(4)]
    # on_seated chose the hook per match; each Hello carries the registered name and the version.
    replies = dict(arena.replies)
    assert replies["seat-0"].action == pb.Action(type="announce", name="vole")
    assert replies["seat-1"].action == pb.Action(type="pass")
    assert {(h.bot_name, h.bot_version, h.protocol_version) for _, h in arena.hellos} == {
        ("reg-name", "7.1", 1)
    }
    assert result.bot_name == "reg-name" and result.welcome is not None and result.welcome.max_matches == 2
    assert result.rejected == [] and result.failures == [] and result.joins == 1


def test_time_up_leaves_the_lobby_but_finishes_the_match_in_flight(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        yield seated("long")
        idle(arena, context)
        arena.mark("left")

    arena = start(
        arenas, lobby, hold=1.5
    )  # a lone match waits 1.5 s for a second one: well past the deadline
    began = time.monotonic()
    result = in_thread(
        lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, seconds=0.5, name="given")
    )
    assert time.monotonic() - began >= 1.5
    assert arena.wait_for(lambda: "left" in arena.marks)
    assert arena.marks["left"] - arena.joins[0].at >= 0.5
    assert result.stop_reason == "seconds" and arena.played(1) == ["long"]
    assert [r.termination for r in result.matches] == ["completed"]
    assert arena.hellos[0][1].bot_name == "given"


def test_a_failed_match_is_recorded_and_the_lobby_goes_on(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        yield seated("crash")
        arena.wait_for(lambda: len(arena.finished) == 1, context)
        yield seated("fine")
        idle(arena, context)

    arena = start(arenas, lobby)

    def decide(request: pb.DecisionRequest) -> pb.Action:
        if not arena.finished:
            raise ZeroDivisionError("a bug in the bot")
        return request.legal_actions[0]

    result = in_thread(
        lambda: run_lobby(
            decide, address=arena.address, bot_token=TOKEN, matches=2, match_reconnect_seconds=1
        )
    )
    assert [(s.match_id, error) for s, error in result.failures] == [
        ("m-crash", "ZeroDivisionError: a bug in the bot")
    ]
    assert len(result.matches) == 1 and result.matches[0].match_start is not None
    assert result.matches[0].match_start.match_id == "m-fine"


# --------------------------------------------------------------------------- refusals and pauses


def test_resource_exhausted_waits_for_retry_after_then_rejoins(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        if index == 0:
            arena.mark("refused")
            refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "too many joins", retry_ms=400)
        yield welcome()
        yield seated("s")
        idle(arena, context)

    arena = start(arenas, lobby)
    result = in_thread(lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, matches=1))
    assert len(arena.joins) == 2
    assert arena.joins[1].at - arena.marks["refused"] >= 0.4
    assert result.rejected == [("RESOURCE_EXHAUSTED", "too many joins", 400)]
    assert len(result.matches) == 1 and result.joins == 2


def test_paused_on_an_open_stream_with_the_stop_policy(arenas: list[FakeArena]) -> None:
    until = int(time.time() * 1000) + 3_600_000

    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        yield pb.LobbyMessage(paused=pb.Paused(reason="5 timeouts in 20 decisions", until_ms=until))
        refuse(context, grpc.StatusCode.FAILED_PRECONDITION, "paused", retry_ms=3_600_000)

    arena = start(arenas, lobby)
    result = in_thread(
        lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, pause_policy="stop")
    )
    assert result.paused_reason == "5 timeouts in 20 decisions" and result.paused_until_ms == until
    assert result.stop_reason == "paused" and result.matches == [] and len(arena.joins) == 1
    assert result.rejected == []  # the join was accepted; the stream was closed later


def test_a_refused_join_while_paused_stops_or_waits_for_the_pause(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        if index == 0:
            arena.mark("refused")
            refuse(
                context, grpc.StatusCode.FAILED_PRECONDITION, "paused for faults until 12:00", retry_ms=300
            )
        yield welcome()
        yield seated("after-pause")
        idle(arena, context)

    arena = start(arenas, lobby)
    before_ms = int(time.time() * 1000)
    stopped = in_thread(
        lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, pause_policy="stop")
    )
    assert stopped.paused_reason == "paused for faults until 12:00" and stopped.stop_reason == "paused"
    assert stopped.paused_until_ms is not None and stopped.paused_until_ms >= before_ms + 300
    assert stopped.rejected == [("FAILED_PRECONDITION", "paused for faults until 12:00", 300)]

    arena = start(arenas, lobby)
    waited = in_thread(lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, matches=1))
    assert arena.joins[1].at - arena.marks["refused"] >= 0.3
    assert waited.paused_reason == "paused for faults until 12:00"
    assert len(waited.matches) == 1 and waited.stop_reason == "matches"


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT])
def test_a_bad_token_or_variant_is_final(arenas: list[FakeArena], code: grpc.StatusCode) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        refuse(context, code, "no such bot")
        yield welcome()  # pragma: no cover

    arena = start(arenas, lobby)
    with pytest.raises(BotError, match="no such bot") as info:
        in_thread(lambda: run_lobby(first_legal, address=arena.address, bot_token="wrong"))
    assert info.value.code == code and isinstance(info.value, LobbyError)
    assert info.value.result.rejected == [(code.name, "no such bot", None)]
    assert len(arena.joins) == 1


def test_a_revoked_token_ends_the_lobby_after_the_match_in_flight(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        yield seated("last")
        arena.wait_for(lambda: bool(arena.hellos), context)
        refuse(context, grpc.StatusCode.UNAUTHENTICATED, "revoked")

    arena = start(arenas, lobby, hold=0.5)
    with pytest.raises(LobbyError, match="revoked") as info:
        in_thread(lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN))
    assert [r.termination for r in info.value.result.matches] == ["completed"]
    assert info.value.result.stop_reason == "error"


# --------------------------------------------------------------------------- broken streams


def test_a_lobby_stream_broken_by_the_server_is_rejoined(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        if index == 0:
            yield seated("before")
            arena.wait_for(lambda: bool(arena.hellos), context)
            refuse(context, grpc.StatusCode.UNAVAILABLE, "restarting")
        if index == 1:
            return  # closed without a status: rejoin too
        yield seated("after")
        idle(arena, context)

    arena = start(arenas, lobby, hold=0.5)
    result = in_thread(
        lambda: run_lobby(first_legal, address=arena.address, bot_token=TOKEN, matches=2, reconnect_seconds=5)
    )
    assert len(arena.joins) == 3 and result.joins == 3 and result.rejected == []
    assert arena.played(2) == ["after", "before"]  # the match survived its lobby stream
    assert len(result.matches) == 2


def test_a_server_restart_is_survived(arenas: list[FakeArena]) -> None:
    def first(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        idle(arena, context)

    def second(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        yield seated("new-server")
        idle(arena, context)

    old = start(arenas, first)
    lobby = Lobby(first_legal, address=old.address, bot_token=TOKEN, matches=1, reconnect_seconds=10)
    box: dict[str, LobbyResult] = {}
    thread = threading.Thread(target=lambda: box.update(result=lobby.run()), daemon=True)
    thread.start()
    assert old.wait_for(lambda: bool(old.joins))
    old.stop()
    time.sleep(0.8)  # down for a while: joins are refused with UNAVAILABLE
    new = start(arenas, second, port=old.port)
    thread.join(10)
    assert not thread.is_alive()
    result = box["result"]
    assert len(new.joins) >= 1 and new.played(1) == ["new-server"]
    assert len(result.matches) == 1 and result.joins >= 3 and result.rejected == []


def test_gives_up_without_a_server_for_reconnect_seconds() -> None:
    with pytest.raises(LobbyError, match="no lobby stream") as info:
        in_thread(
            lambda: run_lobby(first_legal, address="127.0.0.1:1", bot_token=TOKEN, reconnect_seconds=0.6)
        )
    assert info.value.code == grpc.StatusCode.UNAVAILABLE and info.value.result.joins >= 2


def test_stop_from_another_thread(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome()
        idle(arena, context)

    arena = start(arenas, lobby)
    lobby_session = Lobby(first_legal, address=arena.address, bot_token=TOKEN)
    threading.Timer(0.3, lobby_session.stop).start()
    result = in_thread(lobby_session.run)
    assert result.stop_reason == "stopped" and result.bot_name == "reg-name"


# --------------------------------------------------------------------------- helpers and arguments


class Trailing:
    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata

    def trailing_metadata(self) -> Any:
        return self.metadata


def test_retry_after_ms_reads_the_trailing_metadata() -> None:
    assert retry_after_ms(Trailing((("other", "1"), ("retry-after-ms", "1500")))) == 1500
    assert retry_after_ms(Trailing((("Retry-After-Ms", b" 20 "),))) == 20
    assert retry_after_ms(Trailing((("retry-after-ms", "soon"),))) is None
    assert retry_after_ms(Trailing(None)) is None
    assert retry_after_ms(ValueError("not a call")) is None


def test_arguments_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_ADDRESS", raising=False)
    monkeypatch.delenv("ARENA_BOT_TOKEN", raising=False)
    with pytest.raises(BotError, match="ARENA_ADDRESS"):
        run_lobby(first_legal, bot_token=TOKEN)
    with pytest.raises(BotError, match="ARENA_BOT_TOKEN"):
        run_lobby(first_legal, address="127.0.0.1:1")
    with pytest.raises(ValueError, match="max_matches"):
        Lobby(first_legal, address="127.0.0.1:1", bot_token=TOKEN, max_matches=0)
    with pytest.raises(ValueError, match="pause_policy"):
        Lobby(first_legal, address="127.0.0.1:1", bot_token=TOKEN, pause_policy="sulk")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- main() of the example bots


def run_module(module: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env, "PYTHONPATH": str(SDK)}
    for name in ("ARENA_TOKEN", "ARENA_BOT_TOKEN", "ARENA_VARIANTS", "ARENA_MAX_MATCHES"):
        if name not in env or not env[name]:
            env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize("module", ["arena_bot.random_bot", "arena_bot.heuristic_bot"])
def test_the_example_bots_join_the_lobby_with_a_bot_token(arenas: list[FakeArena], module: str) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome(max_matches=2)
        yield seated("one")
        yield seated("two")
        idle(arena, context)

    arena = start(arenas, lobby)
    env = {"ARENA_ADDRESS": arena.address, "ARENA_BOT_TOKEN": TOKEN, "ARENA_VARIANTS": "grosstarock"}
    done = run_module(module, env, "--max-matches", "2", "--matches", "2")
    assert done.returncode == 0, done.stderr
    [join] = arena.joins
    assert list(join.message.variants) == ["grosstarock"] and join.message.max_matches == 2
    assert join.metadata["authorization"] == f"Bearer {TOKEN}"
    lines = done.stderr.strip().splitlines()
    assert (
        sum(
            line.startswith("reg-name: match m-") and line.endswith("completed; scores [-1, 2, -1]; mine 2")
            for line in lines
        )
        == 2
    ), done.stderr
    assert lines[-1] == "reg-name: 2 match(es) played; total score 4; left the lobby: matches"


def test_main_exits_with_status_2_on_a_refused_bot_token(arenas: list[FakeArena]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        refuse(context, grpc.StatusCode.UNAUTHENTICATED, "unknown bot token")
        yield welcome()  # pragma: no cover

    arena = start(arenas, lobby)
    done = run_module("arena_bot.random_bot", {"ARENA_ADDRESS": arena.address}, "--bot-token", "nope")
    assert done.returncode == 2
    assert "unknown bot token" in done.stderr and len(arena.joins) == 1


def test_a_seat_token_still_plays_one_match_when_a_bot_token_is_set(arenas: list[FakeArena]) -> None:
    arena = start(arenas, lambda arena, index, context: iter([welcome()]))
    env = {"ARENA_ADDRESS": arena.address, "ARENA_TOKEN": "seat-7", "ARENA_BOT_TOKEN": TOKEN}
    done = run_module("arena_bot.random_bot", env)
    assert done.returncode == 0, done.stderr
    assert arena.joins == [] and arena.played(1) == ["seat-7"]
    assert arena.hellos[0][1].bot_name == "random"
    assert "random: completed; seat 1; scores [-1, 2, -1]" in done.stderr


def test_the_readme_example_runs(arenas: list[FakeArena], capsys: pytest.CaptureFixture[str]) -> None:
    def lobby(arena: FakeArena, index: int, context: grpc.ServicerContext) -> Iterator[pb.LobbyMessage]:
        yield welcome(max_matches=2)
        for n in range(10):
            yield seated(f"r{n}")
        idle(arena, context)

    arena = start(arenas, lobby)
    readme = (SDK / "README.md").read_text(encoding="utf-8")
    [example] = [block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "run_lobby(" in block]
    example = example.replace("arena.example.org:50051", arena.address).replace('"..."', repr(TOKEN))
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("seated at m-r") for line in out) == 10
    assert out[-1] == f"reg-name {[2] * 10} None"


def test_a_one_seat_bot_does_not_import_the_lobby_until_it_is_used() -> None:
    # A ladder starts a bot process per match: the lobby client is left out of its start-up.
    code = (
        "import sys, arena_bot, arena_bot.random_bot, arena_bot.heuristic_bot\n"
        "assert 'arena_bot.lobby' not in sys.modules, 'imported at start-up'\n"
        "from arena_bot import run_lobby\n"
        "assert run_lobby.__module__ == 'arena_bot.lobby'\n"
        "try:\n"
        "    arena_bot.no_such_name\n"
        "except AttributeError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "module 'arena_bot' has no attribute 'no_such_name'"
