"""The position runner (arena/referee/position.py) and the conformance kit (arena/conformance.py).

Everything runs over a real server on a real port, against real bot processes or a gRPC client
driven step by step from a thread.
"""

from __future__ import annotations

import queue
import random
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from support import BOTS
from support.conformance import CASES, conformance, failed
from support.server import bot

from arena.engine import VARIANT_NAMES, DealState, Match, find_variant
from arena.referee.position import Position, PositionRunner, Probe
from arena.referee.seat import TimeControl
from arena.server.app import serve
from arena.server.local import EXAMPLE_BOTS, ask
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

QUICK = TimeControl(per_decision_ms=1_500, bank_ms=0, increment_ms=0)


def positions_for(variant: str, seat: int, count: int, seed: int = 0) -> list[DealState]:
    """Deal states with `seat` to act, reached by random legal play from the match decks."""
    v = find_variant(variant)
    rng = random.Random(seed)
    found: list[DealState] = []
    for deal_seed in range(1000):
        state = Match(v, seed=deal_seed, deals=1).start_deal()
        for _ in range(rng.randrange(0, 60)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.current_player == seat:
            found.append(state)
            if len(found) == count:
                return found
    raise AssertionError(f"fewer than {count} positions found")


# --------------------------------------------------------------------------- the position runner


def test_a_bot_process_answers_every_position_and_survives_the_probes() -> None:
    states = positions_for("danish", seat=1, count=5)
    big_id = 2**64 - 1  # above 2**53: a bot that keeps ids in a double answers another id
    positions = [
        Position(states[0]),
        Position(states[1], {Probe.DROP}),
        Position(states[2], {Probe.UNKNOWN_FIELDS}),
        Position(states[3], {Probe.STRAY_REJECTION}),
        Position(states[4], request_id=big_id),
    ]
    runner = PositionRunner(find_variant("danish"), 1, positions, QUICK, reconnect_grace_s=5)
    results = trio.run(ask, EXAMPLE_BOTS["random"], runner)
    assert [r.outcome for r in results] == ["answered"] * 5
    for result, state in zip(results, states, strict=True):
        assert result.action in state.legal_actions()
        assert [a.matched and a.legal for a in result.answers] == [True]
        assert result.faults == []
    assert results[1].reconnects == 1  # the answer came over a new stream
    assert [r.reconnects for i, r in enumerate(results) if i != 1] == [0, 0, 0, 0]
    assert results[4].request_id == big_id and results[4].answers[0].request_id == big_id
    assert len({r.request_id for r in results}) == 5
    assert runner.done.is_set() and runner.state.value == "finished"
    assert all(not s.is_terminal() and s.current_player == 1 for s in states)  # never modified


class ScriptedClient:
    """A bot stream driven from a test thread: send what the test says, hand over what arrives."""

    def __init__(self, address: str, token: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
        self.call = pb_grpc.BotServiceStub(self.channel).Play(
            iter(self.outbox.get, None), metadata=[("authorization", f"Bearer {token}")], timeout=30
        )
        self.stream = iter(self.call)

    def send(self, message: pb.BotMessage) -> None:
        self.outbox.put(message)

    def hello(self) -> None:
        self.send(pb.BotMessage(hello=pb.Hello(bot_name="scripted", protocol_version=1)))

    def answer(self, request_id: int, action: pb.Action) -> None:
        self.send(pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action)))

    def next(self) -> pb.ServerMessage:
        return next(self.stream)

    def next_kind(self, kind: str) -> pb.ServerMessage:
        message = self.next()
        assert message.WhichOneof("kind") == kind, message
        return message

    def status(self) -> grpc.StatusCode:
        """Read on until the stream ends; its status."""
        try:
            for _ in self.stream:
                pass
        except grpc.RpcError as error:
            return error.code()  # type: ignore[no-any-return]
        return grpc.StatusCode.OK

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


def run_with_client(
    tmp_path: Path, runner: PositionRunner, script: Callable[[str, str], dict[str, Any]]
) -> dict[str, Any]:
    """Serve `runner` on a real port and drive it with `script(address, token)` on a thread."""

    async def scenario() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            out: dict[str, Any] = {}
            with hub.admit(runner, {runner.seat: runner.token}):
                done = trio.Event()

                async def client() -> None:
                    try:
                        out.update(await trio.to_thread.run_sync(script, f"127.0.0.1:{port}", runner.token))
                    finally:
                        done.set()

                nursery.start_soon(client)
                await runner.run()
                await done.wait()
            nursery.cancel_scope.cancel()
            return out

    return trio.run(scenario)


def test_answers_are_recorded_raw_and_judged_like_the_referee(tmp_path: Path) -> None:
    states = positions_for("grosstarock", seat=2, count=4, seed=3)
    positions = [
        Position(states[0]),
        Position(states[1], {Probe.UNKNOWN_FIELDS}),
        Position(states[2], {Probe.DROP}),
        Position(states[3]),
    ]
    runner = PositionRunner(find_variant("grosstarock"), 2, positions, QUICK, reconnect_grace_s=5)

    def script(address: str, token: str) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        client = ScriptedClient(address, token)
        client.hello()
        seen["start"] = client.next_kind("match_start").match_start
        # 0: a foreign id, then an action not in the hand, then a legal one
        request = client.next_kind("request").request
        seen["ids"] = [request.request_id]
        client.answer(request.request_id + 7, request.legal_actions[0])
        held = set(request.view.hand)
        absent = next(c for c in ("EX", "T21", "SK", "HA", "D5") if c not in held)
        client.answer(request.request_id, pb.Action(type="play", card=absent))
        seen["rejected"] = client.next_kind("rejected").rejected
        client.answer(request.request_id, request.legal_actions[-1])
        # 1: an unknown message kind, then a request with unknown fields inside
        seen["unknown_kind"] = client.next().WhichOneof("kind")
        message = client.next_kind("request")
        request = message.request
        seen["ids"].append(request.request_id)
        seen["unknown_fields"] = [
            b"future" in part.SerializeToString()
            for part in (message, request, request.view, request.view.trick, request.legal_actions[0])
        ]
        seen["event_kinds"] = [e.WhichOneof("kind") for e in request.events]
        client.answer(seen["ids"][0], request.legal_actions[0])  # late, as if for the first request
        client.answer(request.request_id, request.legal_actions[0])
        # 2: the stream breaks after the request; dial again and answer the resent request
        request = client.next_kind("request").request
        seen["ids"].append(request.request_id)
        seen["drop_status"] = client.status()
        client.close()
        client = ScriptedClient(address, token)
        client.hello()
        client.next_kind("match_start")
        again = client.next_kind("request").request
        seen["resent"] = again.request_id == request.request_id and again.view == request.view
        client.answer(again.request_id, again.legal_actions[0])
        # 3: no answer at all
        seen["ids"].append(client.next_kind("request").request.request_id)
        seen["end"] = client.next_kind("match_end").match_end
        seen["final_status"] = client.status()
        client.close()
        return seen

    seen = run_with_client(tmp_path, runner, script)
    results = runner.results
    assert [r.outcome for r in results] == ["answered", "answered", "answered", "timeout"]
    assert seen["ids"] == [r.request_id for r in results]
    assert seen["start"].variant == "grosstarock" and seen["start"].seat == 2 and seen["start"].deals == 4
    assert seen["start"].time_control.per_decision_ms == 1_500

    first = results[0]
    assert [(a.matched, a.legal) for a in first.answers] == [(False, True), (True, False), (True, True)]
    assert first.wrong_ids == [first.request_id + 7]
    assert "is not in the hand" in first.answers[1].reason and first.answers[1].rule == "G-TRICK-1"
    assert seen["rejected"].request_id == first.request_id and seen["rejected"].rule == "G-TRICK-1"
    assert first.action is not None and first.action in states[0].legal_actions()
    assert str(first.action) == " ".join(
        p for p in (first.answers[2].action.type, first.answers[2].action.card) if p
    )

    late = results[1].answers[0]
    assert (late.request_id, late.matched, late.stale) == (results[0].request_id, False, True)
    assert results[1].wrong_ids == [] and len(results[1].answers) == 2
    assert seen["unknown_kind"] is None
    assert seen["unknown_fields"] == [True] * 5
    assert seen["event_kinds"] == ["deal_started", None]

    assert seen["drop_status"] == grpc.StatusCode.UNAVAILABLE
    assert seen["resent"] and results[2].reconnects == 1

    assert results[3].answers == [] and results[3].detail == "no legal answer within 1500 ms"
    assert results[3].think_ms >= 1_500
    assert seen["end"].termination == "completed" and seen["final_status"] == grpc.StatusCode.OK


def test_protocol_faults_end_the_stream_and_a_bot_that_never_comes_back_is_gone(tmp_path: Path) -> None:
    states = positions_for("german-1754", seat=0, count=3, seed=5)
    runner = PositionRunner(
        find_variant("german-1754"), 0, states, QUICK, reconnect_grace_s=0.5, start_timeout_s=5
    )

    def script(address: str, token: str) -> dict[str, Any]:
        client = ScriptedClient(address, token)
        client.answer(1, pb.Action(type="pass"))  # before Hello
        status = client.status()
        client.close()
        client = ScriptedClient(address, token)
        client.hello()
        client.next_kind("match_start")
        client.next_kind("request")
        client.hello()  # a second Hello
        second = client.status()
        client.close()
        return {"before_hello": status, "second_hello": second}

    seen = run_with_client(tmp_path, runner, script)
    assert seen == {
        "before_hello": grpc.StatusCode.INVALID_ARGUMENT,
        "second_hello": grpc.StatusCode.INVALID_ARGUMENT,
    }
    assert runner.faults == ["an ActionReply before Hello", "a second Hello on the same stream"]
    assert [r.outcome for r in runner.results] == ["gone", "skipped", "skipped"]
    assert runner.results[0].faults == ["a second Hello on the same stream"]
    assert runner.results[1].detail == "no bot connected for 0.5 s"


def test_a_bot_process_that_exits_is_gone_at_once() -> None:
    states = positions_for("danish-pots", seat=0, count=3, seed=2)
    runner = PositionRunner(find_variant("danish-pots"), 0, states, QUICK, reconnect_grace_s=30)
    results = trio.run(ask, bot("exit:2"), runner)
    assert [r.outcome for r in results] == ["answered", "gone", "skipped"]
    assert results[1].detail == results[2].detail == "the bot process exited with status 3"


def test_no_clock_means_zero_time_fields_and_no_timeout(tmp_path: Path) -> None:
    [state] = positions_for("danish", seat=2, count=1, seed=9)
    runner = PositionRunner(find_variant("danish"), 2, [state])

    def script(address: str, token: str) -> dict[str, Any]:
        client = ScriptedClient(address, token)
        client.hello()
        start = client.next_kind("match_start").match_start
        request = client.next_kind("request").request
        threading.Event().wait(QUICK.per_decision_ms / 1000 + 0.2)  # longer than any clock in this file
        client.answer(request.request_id, request.legal_actions[0])
        client.next_kind("match_end")
        client.close()
        return {"clock": start.HasField("time_control"), "times": (request.time_limit_ms, request.bank_ms)}

    assert run_with_client(tmp_path, runner, script) == {"clock": False, "times": (0, 0)}
    assert runner.results[0].outcome == "answered"


def test_positions_are_checked_when_the_runner_is_made() -> None:
    [state] = positions_for("grosstarock", seat=1, count=1)
    variant = find_variant("grosstarock")
    with pytest.raises(ValueError, match="position 0: seat 1 is to act, not seat 0"):
        PositionRunner(variant, 0, [state])
    with pytest.raises(ValueError, match=r"a grosstarock .* deal, not grosstarock .*all_blanks"):
        PositionRunner(find_variant("grosstarock", {"ladons": "all_blanks"}), 1, [state])
    with pytest.raises(ValueError, match="request id 5 is used twice"):
        PositionRunner(variant, 1, [Position(state, request_id=5), Position(state, request_id=5)])
    with pytest.raises(ValueError, match="not a uint64"):
        PositionRunner(variant, 1, [Position(state, request_id=2**64)])
    with pytest.raises(ValueError, match="no position"):
        PositionRunner(variant, 1, [])
    with pytest.raises(ValueError, match="seat 3 is not a seat"):
        PositionRunner(variant, 3, [state])
    finished = positions_for("grosstarock", seat=1, count=1)[0]
    while not finished.is_terminal():
        finished.apply(finished.legal_actions()[0])
    with pytest.raises(ValueError, match=r"nobody \(the deal is over\) is to act"):
        PositionRunner(variant, 1, [finished])


# --------------------------------------------------------------------------- the kit's cases


def _led(state: DealState) -> str | None:
    return (
        "SHDC"[state.led]
        if state.phase == "play" and state.trick and state.led is not None and state.led < 4
        else None
    )


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_every_case_is_an_engine_state_with_its_seat_to_act(variant: str) -> None:
    cases = CASES[variant]
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    for case in cases:
        state = case.state
        assert not state.is_terminal() and state.current_player == case.seat
        assert state.variant.name == variant and dict(state.variant.options) == {
            **dict(find_variant(variant).options),
            **case.options,
        }
    assert {"reconnect", "unknown-fields", "stray-rejection", "request-id-2^63+1"} <= set(names)
    by_name = {c.name: c for c in cases}
    assert by_name["request-id-2^63+1"].position.request_id == 2**63 + 1
    assert by_name["reconnect"].position.probes == {Probe.DROP}


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_the_cases_cover_every_decision_kind_random_play_meets(variant: str) -> None:
    v = find_variant(variant)
    met: set[tuple[str, str]] = set()
    rng = random.Random(11)
    for deal in range(40):
        state = Match(v, seed=deal, deals=1).start_deal()
        while not state.is_terminal():
            met |= {(state.phase, a.type) for a in state.legal_actions()}
            state.apply(rng.choice(state.legal_actions()))
    covered = {(c.state.phase, a.type) for c in CASES[variant] for a in c.state.legal_actions()}
    assert met <= covered, f"decision kinds without a case: {sorted(met - covered)}"


def test_the_edge_cases_are_what_they_claim() -> None:
    def case(variant: str, name: str) -> DealState:
        return next(c.state for c in CASES[variant] if c.name == name)

    for variant in VARIANT_NAMES:
        state = case(variant, "must-follow")
        led = _led(state)
        hand = [str(c) for c in state.hands[state.current_player]]  # type: ignore[index]
        legal = [str(a.card) for a in state.legal_actions()]
        assert led and all(c[0] == led or c == "EX" for c in legal) and set(hand) - set(legal)
        state = case(variant, "must-trump")
        hand = [str(c) for c in state.hands[state.current_player]]  # type: ignore[index]
        assert not any(c[0] == _led(state) for c in hand)
        assert all(str(a.card)[0] == "T" or str(a.card) == "EX" for a in state.legal_actions())
        assert case(variant, "last-trick").trick_no == state.variant.trick_count
    for variant in ("danish", "danish-pots"):
        assert all(a.suit for a in case(variant, "fool-redesignate").legal_actions())
        assert str(case(variant, "fool-redesignate").trick[0][1]) == "EX"
    assert [str(a) for a in case("german-1754", "fool-by-23").legal_actions()] == ["play EX"]
    assert case("german-1754", "fool-by-23").trick_no == 23
    assert "play EX" not in {str(a) for a in case("german-1754", "fool-not-led").legal_actions()}
    assert "EX" in {
        str(c)
        for c in case("german-1754", "fool-not-led").hands[case("german-1754", "fool-not-led").current_player]
    }  # type: ignore[index]
    assert {str(a) for a in case("danish", "redeal-claim").legal_actions()} == {"redeal", "pass"}
    assert {str(a) for a in case("danish", "demand").legal_actions()} == {"demand", "pass"}
    fallback = {str(a) for a in case("grosstarock", "discard-fallback").legal_actions()}
    assert "discard T10" in fallback and "discard SK" not in fallback
    assert case("german-1754", "four-seats").sitting_out is not None


# --------------------------------------------------------------------------- the kit against bots

BROKEN = BOTS / "broken_bot.py"


def broken(flaw: str) -> str:
    return f"env BROKEN={shlex.quote(flaw)} {shlex.quote(sys.executable)} {shlex.quote(str(BROKEN))}"


FLAWS = [
    (
        "double-ids",
        ["grosstarock", "danish"],
        "request-id-2^63+1",
        "answered with request id 9223372036854775808; the request's id is 9223372036854775809",
    ),
    ("no-reconnect", ["german-1754"], "reconnect", "did not come back after the stream broke"),
    ("crash-on-unknown", ["danish-pots"], "unknown-fields", "the bot was gone"),
    ("slow:redeal", ["danish"], "redeal-", "no legal answer within 1000 ms"),
]
USAGE_ERRORS = (
    ["--bot", "true", "--variant", "skat"],
    ["--bot", "true", "--per-decision-ms", "0"],
    ["--bot", " "],
)


def arena_conformance(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "arena", "conformance", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def kits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[Any]]]:
    """Every `arena conformance` run of the tests below, started together: a run mostly waits on
    its bot processes (starting, reconnecting, thinking), so a few at once take little longer than
    one. Each test reads its own run's outcome, and fails alone if that run failed."""
    no_bot_logs = tmp_path_factory.mktemp("no-bot-logs")
    runs: dict[str, Callable[[], Any]] = {  # the longest first
        "ignore-follow": lambda: conformance(broken("ignore-follow")),
        "random": lambda: conformance(EXAMPLE_BOTS["random"]),
        "heuristic": lambda: conformance(EXAMPLE_BOTS["heuristic"]),
        **{
            flaw: (
                lambda flaw=flaw, variants=variants: conformance(
                    broken(flaw),
                    *[a for v in variants for a in ("--variant", v)],
                    "--per-decision-ms",
                    "1000",
                )
            )
            for flaw, variants, _case, _detail in FLAWS
        },
        "table": lambda: arena_conformance("--bot", EXAMPLE_BOTS["random"], "--variant", "danish"),
        "no-bot": lambda: conformance(
            "/no/such/bot --flag", "--variant", "grosstarock", "--log-dir", str(no_bot_logs)
        ),
        "usage": lambda: [arena_conformance(*args) for args in USAGE_ERRORS],
    }
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield {name: pool.submit(run) for name, run in runs.items()}


@pytest.mark.parametrize("example", ["random", "heuristic"])
def test_the_python_example_bots_pass_every_case(example: str, kits: dict[str, Future[Any]]) -> None:
    status, report = kits[example].result()
    assert failed(report) == {}
    assert status == 0
    assert {c["variant"] for c in report["cases"]} == set(VARIANT_NAMES)
    assert report["passed"] == sum(len(CASES[v]) for v in VARIANT_NAMES) and report["log_dir"] is None


def test_a_bot_that_does_not_follow_suit_fails_exactly_where_it_must_follow(
    kits: dict[str, Future[Any]],
) -> None:
    status, report = kits["ignore-follow"].result()
    expected = set()
    for variant, cases in CASES.items():
        for case in cases:
            state = case.state
            led = _led(state)
            hand = [str(c) for c in state.hands[case.seat]]
            if led and any(c[0] == led for c in hand) and any(c[0] != led and c != "EX" for c in hand):
                expected.add((variant, case.name))
    assert {(v, "must-follow") for v in VARIANT_NAMES} <= expected
    assert set(failed(report)) == expected
    assert all(detail.startswith("illegal answer 'play ") for detail in failed(report).values())
    assert status == 1 and report["log_dir"]


@pytest.mark.parametrize(("flaw", "variants", "case", "detail"), FLAWS)
def test_a_broken_bot_fails_the_cases_of_its_flaw_and_only_those(
    flaw: str, variants: list[str], case: str, detail: str, kits: dict[str, Future[Any]]
) -> None:
    status, report = kits[flaw].result()
    expected = {(v, c.name) for v in variants for c in CASES[v] if c.name.startswith(case)}
    assert expected and set(failed(report)) == expected
    assert all(text.startswith(detail) for text in failed(report).values())
    assert {c["variant"] for c in report["cases"]} == set(variants)
    assert status == 1


def test_a_bot_that_cannot_start_fails_every_case_at_once(kits: dict[str, Future[Any]]) -> None:
    status, report = kits["no-bot"].result()
    assert status == 1
    details = set(failed(report).values())
    assert len(failed(report)) == len(CASES["grosstarock"]) and len(details) == 1
    assert "cannot start the bot '/no/such/bot --flag'" in details.pop()


def test_the_table_and_the_command_line(kits: dict[str, Future[Any]]) -> None:
    done = kits["table"].result()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"arena conformance: {EXAMPLE_BOTS['random']}"
    assert lines[1].split() == ["variant", "case", "seat", "result", "detail"]
    assert len(lines) == 2 + len(CASES["danish"]) + 1
    assert all(line.split()[3] == "pass" for line in lines[2:-1])
    assert lines[-1] == f"{len(CASES['danish'])} cases: {len(CASES['danish'])} passed, 0 failed"
    for wrong in kits["usage"].result():
        assert wrong.returncode == 2 and "arena conformance: error:" in wrong.stderr
