"""Bots in memory for the referee's tests: links that are lists, bots that are trio tasks.

`play` runs one `MatchRunner` under trio's `MockClock(autojump_threshold=0)`: the clock jumps
whenever every task waits, so a bot that "thinks" ten seconds costs no real time, and the times
the referee measures are exactly the ones the bots chose. Think times in these tests are binary
fractions of a second (0.125, 1.5, …) so that sums of them stay exact in floating point.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
import trio.testing

from arena.engine import find_variant
from arena.referee.runner import MatchConfig, MatchRunner
from arena.referee.seat import CloseReason, TimeControl
from arena.replay.summary import read_results
from arena.v1 import arena_pb2 as pb

NOT_AN_ACTION = pb.Action(type="nonsense")  # refused as malformed (rule "protocol")


class MemoryLink:
    """A seat's link in memory: what the referee sends is decoded, kept and queued for the bot."""

    def __init__(self) -> None:
        self.open = True
        self.received: list[pb.ServerMessage] = []
        self.closed: tuple[CloseReason | None, str] | None = None
        self._send, self.inbox = trio.open_memory_channel[pb.ServerMessage](math.inf)

    def send(self, message: pb.ServerMessage | bytes) -> None:
        if not self.open:
            return
        if isinstance(message, bytes):  # the referee hands its requests over encoded
            message = pb.ServerMessage.FromString(message)
        self.received.append(message)
        self._send.send_nowait(message)

    def close(self, reason: CloseReason | None = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self.closed = (reason, details)
            self._send.close()

    def of_kind(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("kind") == kind]


Think = Callable[[int], float]  # the decision's number for this bot (from 0) -> seconds
Answers = Callable[[pb.DecisionRequest, int], Sequence[pb.Action]]  # what to send, in order


def first_legal(request: pb.DecisionRequest, n: int) -> Sequence[pb.Action]:
    return [request.legal_actions[0]]


@dataclass
class Bot:
    """A bot for one seat: says Hello (unless told not to), then answers each request after
    `think(n)` seconds with `answers(request, n)`: the last one is usually legal."""

    think: Think = lambda n: 0.0
    answers: Answers = first_legal
    hello: bool = True
    connect: bool = True
    requests: list[pb.DecisionRequest] = field(default_factory=list)
    links: list[MemoryLink] = field(default_factory=list)

    @property
    def link(self) -> MemoryLink:
        return self.links[-1]

    def dial(self, runner: MatchRunner, seat: int) -> MemoryLink:
        """Attach a new link to `seat`, and say Hello on it if this bot does."""
        link = MemoryLink()
        self.links.append(link)
        runner.attach(seat, link)
        if self.hello:
            hello = pb.Hello(bot_name="memory", bot_version="1", protocol_version=1)
            runner.deliver(seat, link, pb.BotMessage(hello=hello))
        return link

    def hang_up(self, runner: MatchRunner, seat: int) -> None:
        """The stream ends from the bot's side, as the transport reports it."""
        link = self.link
        link.close()
        runner.detach(seat, link)

    def reply(self, runner: MatchRunner, seat: int, request_id: int, action: pb.Action) -> None:
        reply = pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action))
        runner.deliver(seat, self.link, reply)

    async def play(self, runner: MatchRunner, seat: int) -> None:
        if not self.connect:
            return
        link = self.dial(runner, seat)
        async for message in link.inbox:
            if message.WhichOneof("kind") == "request":
                await self.decide(runner, seat, message.request)

    async def decide(self, runner: MatchRunner, seat: int, request: pb.DecisionRequest) -> None:
        n = len(self.requests)
        self.requests.append(request)
        await trio.sleep(self.think(n))
        for action in self.answers(request, n):
            self.reply(runner, seat, request.request_id, action)


def config(
    time_control: TimeControl,
    *,
    variant: str = "grosstarock",
    deals: int = 1,
    seed: int = 7,
    **kwargs: Any,
) -> MatchConfig:
    v = find_variant(variant)
    names = tuple(f"bot{i}" for i in range(v.seats))
    return MatchConfig(
        variant=v, deals=deals, seed=seed, seat_names=names, time_control=time_control, **kwargs
    )


@dataclass
class Played:
    runner: MatchRunner
    lines: list[dict[str, Any]]
    bots: list[Bot]
    elapsed_s: float  # on the mock clock

    def actions(self, seat: int | None = None) -> list[dict[str, Any]]:
        return [
            line
            for line in self.lines
            if line["type"] == "action" and (seat is None or line["seat"] == seat)
        ]

    def faults(self) -> list[tuple[int, str]]:
        """(seat, kind) of every fault, of decisions and of the protocol, in order."""
        return [
            (line["seat"], line["fault"]["kind"] if line["type"] == "action" else line["kind"])
            for line in self.lines
            if (line["type"] == "action" and "fault" in line) or line["type"] == "fault"
        ]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["type"] == kind]

    @property
    def end(self) -> dict[str, Any]:
        assert self.lines[-1]["type"] == "match_end"
        return self.lines[-1]


def play(
    replay_dir: Path,
    match_config: MatchConfig,
    bots: Sequence[Bot],
    prepare: Callable[[MatchRunner], None] = lambda runner: None,
) -> Played:
    """Run one match with these bots on the mock clock (`prepare` sees the runner before it
    starts); its replay read back."""

    async def main() -> Played:
        runner = MatchRunner("0123456789abcdef", match_config, replay_dir)
        prepare(runner)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.run)
            for seat, bot in enumerate(bots):
                nursery.start_soon(bot.play, runner, seat)
            await runner.done.wait()
            nursery.cancel_scope.cancel()
        assert runner.replay_path is not None
        # Every match of these tests: what the referee counted as it wrote is what its log says.
        assert runner.results == read_results(runner.replay_path, len(runner.seats))
        lines = [json.loads(line) for line in runner.replay_path.read_text().splitlines()]
        return Played(runner, lines, list(bots), trio.current_time())

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
