"""A person's seat at a table of the site: a `Link` of the referee like a bot's, with a browser behind it.

`HumanLink` is what a bot stream is to the referee: it is attached to its seat, says Hello, receives
exactly the `ServerMessage`s the referee sends that seat (nothing else reaches the page), and hands
the person's answers to `MatchRunner.deliver` as a `BotMessage`, so they are judged, timed, faulted
and recorded by the same code as a bot's (an illegal answer gets the referee's `ActionRejected`
with the rule's message and id). The link keeps every message it was sent, in order, as protobuf's
JSON mapping; the browser reads them by long polling from where it is (`wait_past`), so a reload
or a lost connection loses nothing and the seat stays taken meanwhile (its clock runs). A page
that stopped polling has left: `Tables` takes the link down as a broken bot stream (`leave`), so
the referee plays for the seat after its reconnection grace, and a poll takes the seat back
(`rejoin`: a Hello, and the referee sends its MatchStart and pending request again).

`Tables` are the site's tables with a person at them: a new match against example bots in the
referee's process (`start`), or a match played on from a recorded position (`play_on`). Each has
one secret token that speaks for its person's seat only; the site compares it in constant time.
"""

from __future__ import annotations

import importlib.util
import secrets
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import trio

from ..engine import Variant
from ..live import Hub
from ..referee.runner import MatchConfig, MatchRunner
from ..referee.seat import CloseReason, TimeControl
from ..replay.read import Replay
from ..replay.table import public_facts, table_state
from ..server.inprocess import EXAMPLES, SDK_PATH, load_bot, seat_inprocess
from ..v1 import arena_pb2 as pb
from .feed import json_mapping
from .playon import PlayOnRunner, play_on_config

log = structlog.get_logger()

HUMAN_NAME = "human"
"""What a person's seat says in its Hello (and so in the replay's `hello` line)."""
MAX_TABLES = 16
"""Tables the site started (a person's, or a play-on's bots alone) running at once on this server;
more are refused (503)."""
KEEP_ENDED = 200
"""Ended tables kept so that their pages can still read the last messages."""
MAX_INVALID = 50
"""Invalid answers per decision before the fault policy acts: a person's misclicks are no bot's bug."""
BOTS = tuple(EXAMPLES)
CONNECT = "connect"
"""A seat left for a bot of the person's own, which dials in to the referee with that seat's token."""
CHOICES = (*BOTS, CONNECT)
CONNECT_WAIT_S = 120.0
"""How long a table with a seat left for a bot of the person's waits for every Hello."""
ABSENT_S = 60.0
"""A person whose page has not polled for this long has left: the seat's link goes down (the page
polls again at once after each answer, and a poll waits at most `play.POLL_S`)."""
CHECK_S = 5.0


class TableError(ValueError):
    """A table that cannot be set: one line saying why (the site answers 400)."""


class HumanLink:
    """One person's seat (see the module's docstring)."""

    def __init__(self, runner: MatchRunner, seat: int) -> None:
        self.open = True
        self.runner = runner
        self.seat = seat
        self.messages: list[dict[str, Any]] = []
        self.closed_reason = ""
        self.scores: list[int] | None = None  # the match's, as the last DealEnded said them
        self.away = False  # the person left (no poll for a while): the seat's link is down
        self.seen_at = trio.current_time()  # the last poll's start or end
        self.polls = 0  # polls waiting now
        self._changed = trio.Event()

    def start(self) -> None:
        """Take the seat and say Hello, as a bot dialling in would."""
        self.runner.attach(self.seat, self)
        hello = pb.Hello(bot_name=HUMAN_NAME, protocol_version=1)
        self.runner.deliver(self.seat, self, pb.BotMessage(hello=hello))

    def send(self, message: pb.ServerMessage | bytes) -> None:
        if not self.open:
            return
        parsed = pb.ServerMessage.FromString(message) if isinstance(message, bytes) else message
        entry = json_mapping(parsed)
        kind = parsed.WhichOneof("kind")
        if kind == "request":
            self._scores(parsed.request.events)
            entry["table"] = self._table(parsed.request)
        elif kind == "events":
            self._scores(parsed.events.events)
        self.messages.append(entry)
        self._wake()

    def _scores(self, events: Any) -> None:
        for event in events:
            if event.WhichOneof("kind") == "deal_ended":
                self.scores = list(event.deal_ended.scores)

    def _table(self, request: pb.DecisionRequest) -> dict[str, Any]:
        """The drawn table's state (`arena.replay.table`) of this request: its view and nothing
        else, read back into the engine's observation by the SDK's own `request_observation`.
        The seat's clock has no deadline: the page sets it from its own clock when it arrives."""
        from arena_bot.observation import request_observation  # on the path once bots are loaded

        seen = request_observation(request)  # type: ignore[arg-type]  # the SDK's own classes, field for field
        config = self.runner.config
        clocks: list[dict[str, Any] | None] = [None] * len(config.seat_names)
        limit_ms, bank_ms = request.time_limit_ms, request.bank_ms
        clocks[self.seat] = {"deadline_ms": None, "limit_ms": limit_ms, "bank_ms": bank_ms}
        return table_state(
            public_facts(seen),
            config.seat_names,
            views={self.seat: seen},
            view=self.seat,
            scores=self.scores,
            clocks=clocks,
            deal=request.deal,
            deals=config.deals,
        )

    def close(self, reason: CloseReason | None = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self.closed_reason = details or (reason.value if reason is not None else "")
            self._wake()
            self.runner.detach(self.seat, self)

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def answer(self, request_id: int, action: pb.Action) -> None:
        """The person's answer, to the referee as a bot's `ActionReply`."""
        reply = pb.ActionReply(request_id=request_id, action=action)
        self.runner.deliver(self.seat, self, pb.BotMessage(action=reply))

    async def wait_past(self, seen: int, timeout_s: float) -> None:
        """Until there are more than `seen` messages, the link is closed, or `timeout_s` passed.

        A poll of a person who had left takes the seat again first (`rejoin`)."""
        self.rejoin()
        self.polls += 1
        self.seen_at = trio.current_time()
        try:
            with trio.move_on_after(timeout_s):
                while len(self.messages) <= seen and self.open:
                    await self._changed.wait()
        finally:
            self.polls -= 1
            self.seen_at = trio.current_time()

    def absent_for(self) -> float:
        """Seconds since the page last polled (0 while a poll waits)."""
        return 0.0 if self.polls else trio.current_time() - self.seen_at

    def leave(self) -> None:
        """The person is gone: the seat's link goes down, as a bot's stream that broke, so the
        referee plays for the seat after its reconnection grace instead of waiting out its clock."""
        if self.open:
            self.open, self.away = False, True
            self.runner.detach(self.seat, self)

    def rejoin(self) -> None:
        """The person is back: the seat is taken again with a Hello (the referee sends its
        MatchStart and the pending request again, and records the reconnection)."""
        if self.away and not self.runner.done.is_set():
            self.open, self.away = True, False
            self.start()


@dataclass
class Table:
    runner: MatchRunner
    seat: int  # the person's seat; -1 at a table of bots only (a play-on with a bot)
    token: str  # speaks for `seat` alone
    link: HumanLink | None
    bots: dict[int, str] = field(default_factory=dict)  # seat → example bot, or CONNECT
    seat_tokens: dict[int, str] = field(default_factory=dict)  # the CONNECT seats' referee tokens

    @property
    def match_id(self) -> str:
        return self.runner.match_id

    def describe(self) -> dict[str, Any]:
        runner = self.runner
        return {
            "match_id": runner.match_id,
            "variant": runner.config.variant.name,
            "seat": self.seat,
            "seat_names": list(runner.config.seat_names),
            "bots": {str(s): b for s, b in self.bots.items()},
            "state": runner.state.value,
            "play_on": getattr(runner, "source", None),
        }


def time_control(per_decision_s: int, bank_s: int) -> TimeControl:
    return TimeControl(per_decision_ms=per_decision_s * 1000, bank_ms=bank_s * 1000, increment_ms=0)


class Tables:
    """The tables with a person at them on this server (the site's, on the trio thread)."""

    def __init__(self, hub: Hub, max_tables: int = MAX_TABLES, absent_s: float = ABSENT_S) -> None:
        self.hub = hub
        self.max_tables = max_tables
        self.absent_s = absent_s
        self.tables: dict[str, Table] = {}
        self._ended: deque[str] = deque()

    def running(self) -> int:
        return sum(1 for t in self.tables.values() if not t.runner.done.is_set())

    def get(self, match_id: str) -> Table | None:
        return self.tables.get(match_id)

    def _check_room(self) -> None:
        if self.running() >= self.max_tables:
            raise OverflowError(f"{self.max_tables} tables with a person are running; try again later")

    def start(
        self, variant: Variant, seat: int, bots: Sequence[str], deals: int, clock: TimeControl, name: str
    ) -> Table:
        """A new match: the person at `seat`, example bots (`bots`, in seat order) at the others."""
        if not 0 <= seat < variant.seats:
            raise TableError(f"seat {seat} is not a seat of {variant.name} (0 to {variant.seats - 1})")
        others = [s for s in range(variant.seats) if s != seat]
        chosen = _bots_for(others, list(bots))
        names = tuple(name if s == seat else _name(chosen[s], s) for s in range(variant.seats))
        self._check_room()
        config = MatchConfig(
            variant=variant,
            deals=deals,
            seed=secrets.randbelow(2**31),
            seat_names=names,
            time_control=clock,
            max_invalid=MAX_INVALID,
            start_timeout_s=_start_timeout(chosen),
        )
        runner = self.hub.create_match(config)
        return self._seat(runner, seat, chosen)

    def play_on(
        self,
        replay: Replay,
        deal: int,
        step: int,
        seat: int | None,
        bots: dict[int, str],
        clock: TimeControl,
        name: str,
    ) -> Table:
        """A match from decision `step` of deal `deal` of `replay`: a person at `seat` (None: bots
        only), at every other seat the example bot its recording's Hello names, unless `bots` says."""
        assert replay.variant is not None
        seats = replay.variant.seats
        if seat is not None and not 0 <= seat < seats:
            raise TableError(f"seat {seat} is not a seat of {replay.variant.name} (0 to {seats - 1})")
        hellos = replay.first_hellos()
        chosen: dict[int, str] = {}
        for s in range(seats):
            if s == seat:
                continue
            hello = hellos[s] if s < len(hellos) else None
            recorded = hello.bot_name if hello is not None else ""
            bot = bots.get(s) or (recorded if recorded in BOTS else "")
            if not bot:
                raise TableError(
                    f"seat {s} was played by {recorded or 'an unknown bot'!r}, which this site cannot seat: "
                    f"choose one of {', '.join(CHOICES)} for it"
                )
            if bot not in CHOICES:
                raise TableError(f"seat {s}: {bot!r} is not one of {', '.join(CHOICES)}")
            chosen[s] = bot
        names = tuple(name if s == seat else _name(chosen[s], s) for s in range(seats))
        config = play_on_config(replay, deal, names, clock, MAX_INVALID, _start_timeout(chosen))
        self._check_room()

        def make(match_id: str, config: MatchConfig, replay_dir: Path) -> MatchRunner:
            return PlayOnRunner(match_id, config, replay_dir, replay, deal, step)

        runner = self.hub.create_match(config, make=make)
        return self._seat(runner, -1 if seat is None else seat, chosen)

    def _seat(self, runner: MatchRunner, seat: int, bots: dict[int, str]) -> Table:
        for s, bot in bots.items():
            if bot != CONNECT:
                seat_inprocess(runner, s, load_bot(f"inprocess:{bot}"), seed=f"{runner.config.seed}:{s}")
        table = self.adopt(runner, seat, secrets.token_urlsafe(24), bots)
        table.seat_tokens = {s: runner.seats[s].token for s, bot in bots.items() if bot == CONNECT}
        log.info("table with a person", match_id=runner.match_id, seat=seat, bots=bots)
        return table

    def adopt(self, runner: MatchRunner, seat: int, token: str, bots: dict[int, str] | None = None) -> Table:
        """The person takes `seat` of `runner` (none: -1) with `token`; the others are seated
        elsewhere (here by `_seat`, or by the standing arena's lobby, `lobbyseat`)."""
        link = None
        if seat >= 0:
            if importlib.util.find_spec("arena_bot") is None and SDK_PATH.is_dir():
                sys.path.append(str(SDK_PATH))  # the seat's table state reads views with the SDK's code
            link = HumanLink(runner, seat)
            link.start()
        table = Table(runner, seat, token, link, dict(bots or {}))
        self.tables[runner.match_id] = table
        self.hub.nursery.start_soon(self._watch, table)
        return table

    async def _watch(self, table: Table) -> None:
        """Give up the seat of a person who stopped polling; forget the table some time after its end."""
        link, done = table.link, table.runner.done
        while link is not None and not done.is_set():
            with trio.move_on_after(CHECK_S):
                await done.wait()
            if link.open and not done.is_set() and link.absent_for() > self.absent_s:
                log.info("a person left their seat", match_id=table.match_id, seat=table.seat)
                link.leave()
        await done.wait()
        self._ended.append(table.match_id)
        while len(self._ended) > KEEP_ENDED:
            self.tables.pop(self._ended.popleft(), None)


def _bots_for(seats: list[int], bots: list[str]) -> dict[int, str]:
    """Each of `seats` with its bot: `bots` in order, the last one repeated (none: heuristic)."""
    if len(bots) > len(seats):
        raise TableError(f"{len(bots)} bots for {len(seats)} seats")
    for bot in bots:
        if bot not in CHOICES:
            raise TableError(f"{bot!r} is not one of {', '.join(CHOICES)}")
    bots = bots or ["heuristic"]
    return {s: bots[min(i, len(bots) - 1)] for i, s in enumerate(seats)}


def _name(bot: str, seat: int) -> str:
    return f"{'your-bot' if bot == CONNECT else bot}-{seat}"


def _start_timeout(bots: dict[int, str]) -> float:
    """A bot of the person's own gets time to be started and dial in."""
    return CONNECT_WAIT_S if CONNECT in bots.values() else MatchConfig.start_timeout_s
