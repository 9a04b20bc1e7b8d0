"""The referee's faults and fault policies, on trio's mock clock: invalid answers, reconnection
grace, substitute and forfeit, a seat that never says Hello, a crash, protocol faults."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import trio
import trio.testing
from referee_bots import NOT_AN_ACTION, Bot, MemoryLink, config, play

from arena.engine import Match, find_variant
from arena.referee.runner import MatchConfig, MatchRunner
from arena.referee.seat import CloseReason, TimeControl
from arena.v1 import arena_pb2 as pb

TC = TimeControl(per_decision_ms=2_000, bank_ms=4_000)


def invalid_then_legal(count: int) -> Bot:
    def answers(request: pb.DecisionRequest, n: int) -> Sequence[pb.Action]:
        return [NOT_AN_ACTION] * count + [request.legal_actions[0]]

    return Bot(answers=answers)


def test_invalid_answers_are_rejected_and_may_be_corrected_below_the_limit(tmp_path: Path) -> None:
    played = play(tmp_path, config(TC, max_invalid=3), [invalid_then_legal(2), Bot(), Bot()])
    assert played.faults() == []
    bot = played.bots[0]
    rejections = bot.link.of_kind("rejected")
    assert len(rejections) == 2 * len(bot.requests) == played.runner.seats[0].rejected
    assert {r.rule for r in rejections} == {"protocol"}  # a malformed action
    assert all(r.time_left_ms == 6_000 for r in rejections[:2])  # no time passed: the whole clock
    assert [r.request_id for r in rejections[:2]] == [bot.requests[0].request_id] * 2


def test_the_invalid_answer_limit_is_an_illegal_fault_whose_reason_stays_private(tmp_path: Path) -> None:
    played = play(tmp_path, config(TC, max_invalid=3), [invalid_then_legal(5), Bot(), Bot()])
    faulted = played.actions(seat=0)
    assert faulted and all(line["fault"]["kind"] == "illegal" for line in faulted)
    assert all(line["fault"]["detail"].startswith("3 invalid answers, the last: ") for line in faulted)
    assert played.runner.seats[0].rejected == 3 * len(faulted)
    # The other seats are told of the fault, not of the reason (it may name cards of the hand).
    told = [e.fault for m in played.bots[1].link.of_kind("request") for e in m.events if e.HasField("fault")]
    assert told and {(f.seat, f.kind, f.detail) for f in told} == {(0, "illegal", "too many invalid answers")}
    assert played.end["termination"] == "completed"


def test_substitute_plays_a_legal_action_drawn_from_the_match_seed(tmp_path: Path) -> None:
    played = play(tmp_path, config(TC, seed=11), [Bot(), Bot(think=lambda n: 60.0), Bot()])
    assert played.end["termination"] == "completed" and played.end["forfeited"] is None
    # Replayed on the engine, each substitute is the seed's choice among the legal actions.
    match = Match(find_variant("grosstarock"), seed=11, deals=1)
    state = match.start_deal()
    substituted = 0
    for line in played.actions():
        legal = state.legal_actions()
        if "fault" in line:
            substituted += 1
            chosen = random.Random(f"11:substitute:0:{line['step']}").choice(legal)
            assert chosen.to_dict() == line["action"]
        state.apply(next(a for a in legal if a.to_dict() == line["action"]))
    assert state.is_terminal() and substituted == len(played.actions(seat=1)) > 0


def test_forfeit_ends_the_match_at_the_first_fault_and_names_the_seat(tmp_path: Path) -> None:
    played = play(
        tmp_path, config(TC, deals=3, fault_policy="forfeit"), [Bot(), Bot(), Bot(think=lambda n: 60.0)]
    )
    # The fault that forfeits decides no move: the replay has it in `match_end`, not in a line.
    assert [(f.seat, f.kind) for s in played.runner.seats for f in s.faults] == [(2, "timeout")]
    assert played.runner.termination == "forfeit" and played.runner.forfeited == 2
    assert played.end["termination"] == "forfeit" and played.end["forfeited"] == 2
    assert played.end["faults"] == {"0": 0, "1": 0, "2": 1}
    assert played.of_type("deal") == []  # it ended within the first deal
    assert played.lines[0]["fault_policy"] == "forfeit"
    ends = [bot.link.of_kind("match_end") for bot in played.bots]
    assert all(len(e) == 1 and e[0].termination == "forfeit" for e in ends)
    assert all(bot.link.closed == (None, "") for bot in played.bots)  # a normal end of the stream
    assert 6.0 <= played.elapsed_s < 6.1  # the seat's whole clock, on the mock clock


def test_a_seat_that_never_says_hello_is_absent_after_the_start_timeout(tmp_path: Path) -> None:
    cfg = config(TC, start_timeout_s=30.0, reconnect_grace_s=5.0)
    played = play(tmp_path, cfg, [Bot(), Bot(hello=False), Bot(connect=False)])
    hellos = [line["seat"] for line in played.of_type("hello")]
    assert hellos == [0]
    kinds = {kind for _, kind in played.faults()}
    assert kinds == {"disconnect"}
    assert {seat for seat, _ in played.faults()} == {1, 2}
    # No grace for a seat that never came: each of its decisions is a fault at once.
    assert all(line["think_ms"] == 0 for line in played.actions(seat=1) + played.actions(seat=2))
    assert [s.hellos for s in played.runner.seats] == [1, 0, 0]
    assert played.end["termination"] == "completed"
    assert played.bots[1].link.received == []  # nothing reaches a stream before its Hello


def test_a_seat_that_never_says_hello_forfeits_under_forfeit(tmp_path: Path) -> None:
    cfg = config(TC, start_timeout_s=30.0, fault_policy="forfeit")
    played = play(tmp_path, cfg, [Bot(), Bot(), Bot(hello=False)])
    assert played.runner.forfeited == 2 and played.end["faults"] == {"0": 0, "1": 0, "2": 1}
    assert played.runner.seats[2].faults[0].kind == "disconnect"
    assert played.elapsed_s >= 30.0


class Reconnecting(Bot):
    """Hangs up on its `at`-th request, comes back `away` seconds later and answers it then."""

    def __init__(self, at: int, away: float) -> None:
        super().__init__()
        self.at, self.away = at, away

    async def play(self, runner: MatchRunner, seat: int) -> None:
        async with trio.open_nursery() as nursery:
            await self._stream(runner, seat, self.dial(runner, seat), nursery)

    async def _stream(self, runner: MatchRunner, seat: int, link: MemoryLink, nursery: trio.Nursery) -> None:
        async for message in link.inbox:
            if message.WhichOneof("kind") != "request":
                continue
            if len(self.requests) == self.at:
                self.requests.append(message.request)
                self.hang_up(runner, seat)
                await trio.sleep(self.away)
                nursery.start_soon(self._stream, runner, seat, self.dial(runner, seat), nursery)
                return
            await self.decide(runner, seat, message.request)


def test_a_bot_back_within_the_grace_is_asked_again_and_no_fault(tmp_path: Path) -> None:
    bot = Reconnecting(at=2, away=3.0)
    played = play(tmp_path, config(TC, reconnect_grace_s=5.0), [bot, Bot(), Bot()])
    assert played.faults() == []
    connections = [(line["seat"], line["event"]) for line in played.of_type("connection")]
    assert connections == [(0, "disconnected"), (0, "reconnected")]
    assert [line["seat"] for line in played.of_type("hello")].count(0) == 2
    # The new stream gets the MatchStart, then the pending request again, with the same id.
    first, second = bot.links
    assert [m.WhichOneof("kind") for m in second.received[:2]] == ["match_start", "request"]
    assert second.received[1].request.request_id == bot.requests[2].request_id
    assert played.actions(seat=0)[2]["think_ms"] == 3_000
    assert first.closed == (None, "")


def test_a_bot_away_longer_than_the_grace_is_a_disconnect_fault(tmp_path: Path) -> None:
    # Back after 3 s, a grace of 2 s: the others take 1 s each, so it is back for its next turn.
    bot = Reconnecting(at=2, away=3.0)
    others = [Bot(think=lambda n: 1.0), Bot(think=lambda n: 1.0)]
    played = play(tmp_path, config(TC, reconnect_grace_s=2.0), [bot, *others])
    assert set(played.faults()) == {(0, "disconnect")}
    mine = played.actions(seat=0)
    assert mine[2]["fault"] == {"kind": "disconnect", "detail": "no bot connected"}
    assert mine[2]["think_ms"] == 2_000  # the grace, not the clock (6 s)
    # Its turns until it is back (it may lead the next trick) are faults at once; then it plays.
    away = [line for line in mine[3:] if "fault" in line]
    assert all(line["think_ms"] == 0 for line in away)
    assert "fault" not in mine[-1]
    connections = [(line["seat"], line["event"]) for line in played.of_type("connection")]
    assert connections == [(0, "disconnected"), (0, "reconnected")]  # it came back later, and played on
    assert len(played.actions(seat=0)) > 3
    assert played.end["faults"]["0"] == 1 + len(away)


def test_a_crashed_bot_is_a_crash_fault_at_once(tmp_path: Path) -> None:
    class Crashing(Bot):
        async def decide(self, runner: MatchRunner, seat: int, request: pb.DecisionRequest) -> None:
            if len(self.requests) == 1:
                self.requests.append(request)
                self.hang_up(runner, seat)
                runner.mark_crashed(seat, "exit code 3")
                return
            await super().decide(runner, seat, request)

    played = play(tmp_path, config(TC, reconnect_grace_s=5.0), [Bot(), Crashing(), Bot()])
    crashes = [line for line in played.of_type("connection") if line["event"] == "crashed"]
    assert crashes == [{"type": "connection", "seat": 1, "event": "crashed", "detail": "exit code 3"}]
    faulted = played.actions(seat=1)[1:]
    assert faulted and all(line["fault"]["kind"] == "crash" for line in faulted)
    assert faulted[0]["think_ms"] == 0  # no grace for a process that is gone


def test_protocol_faults_close_the_stream_for_a_reason(tmp_path: Path) -> None:
    class Eager(Bot):
        """Answers before its Hello: a protocol fault, and its stream ends."""

        def dial(self, runner: MatchRunner, seat: int) -> MemoryLink:
            link = MemoryLink()
            self.links.append(link)
            runner.attach(seat, link)
            answer = pb.ActionReply(request_id=1, action=NOT_AN_ACTION)
            runner.deliver(seat, link, pb.BotMessage(action=answer))
            return link

    played = play(tmp_path, config(TC, reconnect_grace_s=1.0), [Bot(), Eager(), Bot()])
    assert played.bots[1].link.closed == (CloseReason.INVALID, "an ActionReply before Hello")
    faults = played.of_type("fault")
    detail = "an ActionReply before Hello"
    assert faults == [{"type": "fault", "seat": 1, "kind": "protocol", "detail": detail}]
    assert {kind for seat, kind in played.faults() if seat == 1} == {"protocol", "disconnect"}


def test_a_second_connection_replaces_the_first_and_an_ended_match_refuses_links(tmp_path: Path) -> None:
    old, new, late = MemoryLink(), MemoryLink(), MemoryLink()

    async def main() -> None:
        runner = MatchRunner("0123456789abcdef", config(TC), tmp_path)
        runner.attach(0, old)
        runner.attach(0, new)
        assert old.closed == (CloseReason.REPLACED, "replaced by a new connection with the same token")
        assert new.open
        runner.deliver(0, new, pb.BotMessage(hello=pb.Hello(protocol_version=99)))
        assert new.closed is not None and new.closed[0] is CloseReason.UNSUPPORTED_VERSION
        runner.deliver(0, new, pb.BotMessage())  # after the close: from a stream no longer the seat's
        assert [f.kind for f in runner.seats[0].faults] == ["protocol"]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            for seat in range(3):
                nursery.start_soon(Bot().play, runner, seat)
            await runner.done.wait()
        runner.attach(1, late)
        assert late.closed == (CloseReason.OVER, "match 0123456789abcdef is over")

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_every_reason_has_a_transport_status() -> None:
    from arena.server.bridge import CLOSE_STATUS

    assert set(CLOSE_STATUS) == set(CloseReason)


def test_the_time_control_reaches_the_bot_in_its_match_start(tmp_path: Path) -> None:
    played = play(tmp_path, config(TC), [Bot(), Bot(), Bot()])
    start = played.bots[0].link.of_kind("match_start")[0]
    assert (start.seat, start.time_control.per_decision_ms, start.time_control.bank_ms) == (0, 2_000, 4_000)


def test_the_position_runner_hosts_its_seat_the_same_way() -> None:
    """The DROP probe breaks the stream for a reason; the bot dials again and answers the request
    sent again after its Hello. A Hello of an unknown version is refused as a match refuses it."""
    from arena.referee.position import Position, PositionRunner, Probe

    variant = find_variant("grosstarock")
    state = Match(variant, seed=3, deals=1).start_deal()
    seat = state.current_player
    assert seat is not None
    runner = PositionRunner(variant, seat, [Position(state, {Probe.DROP})], TimeControl(2_000, 0))
    links: list[MemoryLink] = []

    def dial(version: int = 1) -> MemoryLink:
        link = MemoryLink()
        links.append(link)
        runner.attach(seat, link)
        runner.deliver(seat, link, pb.BotMessage(hello=pb.Hello(protocol_version=version)))
        return link

    async def bot() -> None:
        refused = dial(version=99)
        assert refused.closed is not None and refused.closed[0] is CloseReason.UNSUPPORTED_VERSION
        async for _ in dial().inbox:  # the request comes, then the stream is dropped
            pass
        await trio.sleep(0.5)
        async for message in dial().inbox:
            if message.WhichOneof("kind") == "request":
                request = message.request
                reply = pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
                runner.deliver(seat, links[-1], pb.BotMessage(action=reply))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot)
            await runner.run()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert links[1].closed == (CloseReason.DROPPED, "the stream was dropped on purpose: dial again")
    [result] = runner.results
    assert (result.outcome, result.reconnects, result.think_ms) == ("answered", 1, 500)
    assert runner.faults == ["protocol version 99 is not spoken here; this server speaks 1"]
    assert [m.WhichOneof("kind") for m in links[2].received] == ["match_start", "request", "match_end"]


def test_the_end_hook_runs_with_the_replay_complete_before_any_bot_hears_the_match_ended(
    tmp_path: Path,
) -> None:
    """`before_end` is where a service makes a result durable: the replay is complete on disk
    then, and no seat has been sent `MatchEnd` yet; a hook that fails does not abort the match."""
    seen: list[tuple[bool, int]] = []
    bots = [Bot() for _ in range(3)]

    def prepare(runner: MatchRunner) -> None:
        async def before_end() -> None:
            ended = sum(len(bot.link.of_kind("match_end")) for bot in bots if bot.links)
            seen.append((runner.replay_path is not None and runner.replay_path.is_file(), ended))
            raise OSError("disk full")

        runner.before_end = before_end

    runner = play(tmp_path, config(TimeControl(1_000, 5_000, 0)), bots, prepare).runner
    assert seen == [(True, 0)]
    assert str(runner.termination) == "completed"
    assert all(len(bot.link.of_kind("match_end")) == 1 for bot in bots)


def test_the_results_the_referee_counts_as_it_writes_are_what_its_log_says(tmp_path: Path) -> None:
    # Four seats of german-1754 (one sits out each deal), a seat that never says Hello, a protocol
    # fault and a rejected answer: `play` checks `runner.results` against `read_results` of the log.
    variant = find_variant("german-1754", {"players": "4"})
    cfg = MatchConfig(variant, 2, 5, ("a", "b", "c", "d"), TC, start_timeout_s=30.0, reconnect_grace_s=5.0)

    class Flooding(Bot):
        def dial(self, runner: MatchRunner, seat: int) -> MemoryLink:
            link = super().dial(runner, seat)
            runner.deliver(seat, link, pb.BotMessage())  # an empty message: a protocol fault
            return link

    played = play(tmp_path, cfg, [invalid_then_legal(1), Bot(), Flooding(), Bot(connect=False)])
    results = played.runner.results
    assert [row.active.count(False) for row in results.deals] == [1, 1]
    assert results.hellos == [("memory", "1")] * 3 + [("", "")]
    assert results.faults[0].kind == "protocol" and results.faults[0].deal is None
    assert {fault.seat for fault in results.faults} == {2, 3}
    assert sum(results.decisions) == played.runner.decisions == len(played.actions())
