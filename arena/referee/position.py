"""Ask one bot about chosen positions over the real protocol.

`PositionRunner` plays the server's side of a bot stream for ONE seat, but instead of a match
it puts the bot into a list of given deal states, one `DecisionRequest` each, and records every
answer as it came. It hosts its seat's stream as a match does, through the referee's `LinkHost`
(`attach`, `deliver`, `detach`), and has the rest of what the transport reads of a match
(`seats[i].token` and `.index`, `done`, `state`, `match_id`, `spectators`), so a running server
authenticates its bot through `hub.tokens` (`Hub.admit`); it is never put in `hub.matches`
(ListMatches, GetReplay and Spectate do not know it).

    variant = find_variant("danish")
    runner = PositionRunner(variant, seat=1, positions=[state_a, Position(state_b, {Probe.DROP})],
                            time_control=TimeControl(per_decision_ms=2_000, bank_ms=0))
    results = trio.run(ask, "python my_bot.py", runner)  # arena.server.local: a server, the bot, the run
    # or, on a server you already run:  with hub.admit(runner, runner.tokens): ... await runner.run()

Constructor: `PositionRunner(variant, seat, positions, time_control=None, *, max_invalid=3,
reconnect_grace_s=10.0, start_timeout_s=30.0, seat_names=None)`.

* `positions`: engine `DealState`s, or `Position(state, probes, request_id)` to add scripted
  protocol checks or choose the request id. Every state must be of `variant` (same options) and
  have `seat` to act; a `ValueError` says which one is not. States are never modified.
* `time_control`: each position gets the full clock, `per_decision_ms + bank_ms` (the bank is
  not carried from one position to the next); `None` means no clock: the request's
  `time_limit_ms` and `bank_ms` are 0 and the runner waits as long as a bot is connected.

The conversation: `MatchStart` (with `deals` = the number of positions) after the bot's `Hello`
and after each reconnection; then, per position, a `DecisionRequest` whose `deal` is the
position's index, whose events hold one `DealStarted` (positions are independent deals; the view
holds everything else), with the view of `seat_view(state, seat)` and the legal actions. A reply
is judged like the referee judges it: another request id is ignored (and recorded), an illegal
action gets `ActionRejected` and may be corrected in time, `max_invalid` invalid answers end the
position. At the end: `MatchEnd` (termination `completed`, zero scores), then the stream closes.

Probes (`Probe`), per position:

* `DROP`: the server sends the request, then breaks the stream (`CloseReason.DROPPED`, gRPC's
  `UNAVAILABLE`); the bot must dial
  again with its token and answer the request that is sent again after its `Hello`. Replies on
  the broken stream are ignored.
* `UNKNOWN_FIELDS`: first a `ServerMessage` of a kind the bot cannot know, then the request with
  field numbers the bot cannot know at every level (`ServerMessage`, `DecisionRequest`, `View`,
  `Trick`, each legal `Action`) and an `Event` of an unknown kind; the bot must ignore them.
* `STRAY_REJECTION`: an `ActionRejected` for a request id that was never sent, before the request;
  the bot must not take it for a rejection of anything it did.

`run()` returns (and `results` holds) one `PositionResult` per position, in order: `outcome`
(`answered`: a legal action with the right id; `illegal`: `max_invalid` invalid answers;
`timeout`; `gone`: no bot connected and none within the grace period, or its process ended;
`skipped`: not asked because the bot was gone), the accepted `action`, `think_ms`, every raw
`Answer` (the action as sent, its request id, think time, whether it was legal, the rejection
reason and rule, whether its id is that of an earlier request: a late answer), the number of
`Hello`s during the position (`reconnects`) and the protocol faults. `wrong_ids` lists the ids
of answers that match no request sent. Protocol faults (an answer before `Hello`, a second
`Hello`, a `Hello` of a protocol version the server does not speak (`seat.PROTOCOL_VERSIONS`;
FAILED_PRECONDITION), an empty or unknown message, an oversized message, too many messages in
flight or unsolicited) end the stream: the runner hosts its seat through the referee's own
`LinkHost`.
"""

from __future__ import annotations

import copy
import enum
import itertools
import math
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import structlog
import trio

from .. import __version__
from ..engine import Action, ActionError, DealState, IllegalActionError, Variant
from ..engine.views import seat_view
from ..protocol import (
    INT64_MAX,
    INT64_MIN,
    action_from_message,
    legal_messages,
    length_delimited,
    view_message,
)
from ..replay.log import Termination
from ..v1 import arena_pb2 as pb
from .seat import Alarm, CloseReason, InboxItem, Link, LinkChange, LinkHost, MatchState, Seat, TimeControl

__all__ = [
    "Answer",
    "Position",
    "PositionResult",
    "PositionRunner",
    "Probe",
]

log = structlog.get_logger()

# Field numbers no version of arena.proto uses, for the UNKNOWN_FIELDS probe.
UNKNOWN_FIELD = 1999
UNKNOWN_KIND = 2000


class Probe(enum.Enum):
    DROP = "drop"
    UNKNOWN_FIELDS = "unknown_fields"
    STRAY_REJECTION = "stray_rejection"


@dataclass(frozen=True)
class Position:
    """A deal state to ask about, with optional probes and a chosen request id."""

    state: DealState
    probes: frozenset[Probe] = frozenset()
    request_id: int | None = None  # None: the runner's next id

    def __init__(
        self, state: DealState, probes: Collection[Probe] = (), request_id: int | None = None
    ) -> None:
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "probes", frozenset(probes))
        object.__setattr__(self, "request_id", request_id)


@dataclass(frozen=True)
class Answer:
    """One ActionReply received while a position was pending, as the bot sent it."""

    request_id: int
    action: pb.Action
    think_ms: int  # from the first sending of the request
    matched: bool  # tagged with the pending request's id
    legal: bool
    reason: str = ""  # why it is illegal or malformed
    rule: str = ""
    stale: bool = False  # tagged with the id of an earlier request of this runner (a late answer)


@dataclass
class PositionResult:
    index: int
    request_id: int
    outcome: str = "skipped"  # answered, illegal, timeout, gone, skipped
    action: Action | None = None  # the accepted action
    think_ms: int = 0
    answers: list[Answer] = field(default_factory=list)
    reconnects: int = 0  # Hellos received while the position was pending
    faults: list[str] = field(default_factory=list)  # protocol faults while it was pending
    detail: str = ""  # why it was not answered

    @property
    def wrong_ids(self) -> list[int]:
        """Ids of answers that match no request sent (late answers to earlier requests excluded)."""
        return [a.request_id for a in self.answers if not a.matched and not a.stale]


# A length-delimited field as a later version of the protocol might send it.
_unknown = length_delimited


def _unknown_kind_message() -> pb.ServerMessage:
    message = pb.ServerMessage()
    message.MergeFromString(_unknown(UNKNOWN_KIND, _unknown(1, b"a message kind from the future")))
    return message


def _with_unknown_fields(message: pb.ServerMessage, deal: int) -> pb.ServerMessage:
    out = pb.ServerMessage()
    out.CopyFrom(message)
    extra = _unknown(UNKNOWN_FIELD, b"future")
    request = out.request
    for part in (out, request, request.view, request.view.trick, *request.legal_actions):
        part.MergeFromString(extra)
    future_event = request.events.add(deal=deal)
    future_event.MergeFromString(_unknown(UNKNOWN_KIND, _unknown(1, b"an event kind from the future")))
    return out


def _judge(state: DealState, legal: Sequence[Action], message: pb.Action) -> tuple[Action | None, str, str]:
    """(the action if legal, else None; the reason; the rule), as the referee judges an answer."""
    try:
        action = action_from_message(message)
    except ActionError as exc:
        return None, str(exc), "protocol"
    if action in legal:
        return action, "", ""
    try:
        # On a copy, so that the caller's state is never touched; the variant is shared, immutable data.
        copy.deepcopy(state, {id(state.variant): state.variant}).apply(action)  # raises, naming the rule
    except IllegalActionError as exc:
        return None, str(exc), exc.rule
    except Exception:  # the explanation failed; the answer is illegal all the same
        log.exception("no explanation for an illegal action", action=str(action))
        return None, f"{action} is not one of the legal actions", ""
    raise AssertionError(f"{action} is not in the legal list but the engine accepts it")


class PositionRunner(LinkHost):
    """One bot seat asked about given positions; see the module's docstring."""

    def __init__(
        self,
        variant: Variant,
        seat: int,
        positions: Sequence[DealState | Position],
        time_control: TimeControl | None = None,
        *,
        max_invalid: int = 3,
        reconnect_grace_s: float = 10.0,
        start_timeout_s: float = 30.0,
        seat_names: Sequence[str] | None = None,
    ) -> None:
        if not 0 <= seat < variant.seats:
            raise ValueError(f"seat {seat} is not a seat of {variant.name} (0…{variant.seats - 1})")
        if max_invalid < 1:
            raise ValueError("max_invalid is at least 1")
        self.positions = [p if isinstance(p, Position) else Position(p) for p in positions]
        if not self.positions:
            raise ValueError("no position to ask about")
        ids: set[int] = set()
        for index, position in enumerate(self.positions):
            state = position.state
            if not isinstance(state, DealState):
                raise ValueError(f"position {index}: not a DealState: {type(state).__name__}")
            if state.variant.name != variant.name or dict(state.variant.options) != dict(variant.options):
                raise ValueError(
                    f"position {index}: a {state.variant.name} {dict(state.variant.options)} deal, "
                    f"not {variant.name} {dict(variant.options)}"
                )
            if state.current_player != seat:
                to_act = (
                    "nobody (the deal is over)" if state.is_terminal() else f"seat {state.current_player}"
                )
                raise ValueError(f"position {index}: {to_act} is to act, not seat {seat}")
            if position.request_id is not None:
                if not 0 < position.request_id < 2**64:
                    raise ValueError(
                        f"position {index}: request id {position.request_id} is not a uint64 > 0"
                    )
                if position.request_id in ids:
                    raise ValueError(f"position {index}: request id {position.request_id} is used twice")
                ids.add(position.request_id)
            beyond = [f"{pot} {n}" for pot, n in state.pots_start.items() if not INT64_MIN <= n <= INT64_MAX]
            if beyond:  # the protocol's widest integer: never sent wrapped
                raise ValueError(f"position {index}: pots beyond int64: {', '.join(beyond)}")
        names = list(seat_names) if seat_names is not None else [f"seat{i}" for i in range(variant.seats)]
        if len(names) != variant.seats:
            raise ValueError(f"{variant.name} has {variant.seats} seats, got {len(names)} names")
        self.variant = variant
        self.seat = seat
        self.time_control = time_control
        self.max_invalid = max_invalid
        self.reconnect_grace_s = reconnect_grace_s
        self.start_timeout_s = start_timeout_s
        self.seat_names = names
        self.match_id = secrets.token_hex(8)
        self.token = secrets.token_urlsafe(24)
        # The one seat a bot plays, for token registration; no bank is carried between positions.
        self.seats = [Seat(seat, names[seat], self.token, 0)]
        self.crash_detail = ""  # why the bot is known to be gone for good
        self.state = MatchState.WAITING
        self.done = trio.Event()
        self.spectators: list[Link] = []
        self.results: list[PositionResult] = []
        self.faults: list[str] = []
        self._ids = (n for n in itertools.count(1) if n not in ids)
        self._sent: set[int] = set()  # ids of the requests asked so far
        self._current: PositionResult | None = None
        self._connected_once = trio.Event()
        self.log = log.bind(match_id=self.match_id, seat=seat, positions=len(self.positions))

    @property
    def bot(self) -> Seat:
        return self.seats[0]

    # ------------------------------------------------------------------ links (trio thread)

    def seat_for(self, seat_index: int) -> Seat:
        return self.bot  # the hub hands over this runner's one token only

    def _hello_accepted(self, seat: Seat, hello: pb.Hello, was_away: bool) -> None:
        self._connected_once.set()

    def _fault_recorded(self, seat: Seat, detail: str) -> None:
        self.faults.append(detail)
        if self._current is not None:
            self._current.faults.append(detail)

    def mark_crashed(self, seat_index: int, detail: str) -> None:
        """The bot's process ended: stop waiting for it."""
        self.bot.crashed = True
        self.crash_detail = detail
        self._push(self.bot, LinkChange(False))
        self._connected_once.set()

    # ------------------------------------------------------------------ the run

    def _match_start(self, seat: int) -> pb.MatchStart:
        start = pb.MatchStart(
            match_id=self.match_id,
            variant=self.variant.name,
            options=dict(self.variant.options),
            seat=self.seat,
            seat_names=self.seat_names,
            deals=len(self.positions),
            server_version=__version__,
        )
        if self.time_control is not None:
            start.time_control.CopyFrom(self.time_control.message())
        return start

    def _gone(self) -> str:
        """Why no bot can answer now ("" while one is connected or may still come back)."""
        bot = self.bot
        if bot.link is not None:
            return ""
        if bot.crashed:
            return self.crash_detail
        if (
            bot.disconnected_at is not None
            and trio.current_time() - bot.disconnected_at >= self.reconnect_grace_s
        ):
            return f"no bot connected for {self.reconnect_grace_s:g} s"
        return ""

    async def run(self) -> list[PositionResult]:
        """Ask about every position in turn; return the results (also in `results`)."""
        try:
            with trio.move_on_after(self.start_timeout_s):
                await self._connected_once.wait()
            bot = self.bot
            if not bot.hello and bot.disconnected_at is None and not bot.crashed:
                bot.crashed = True
                self.crash_detail = f"no bot said Hello within {self.start_timeout_s:g} s"
            self.state = MatchState.RUNNING
            for index, position in enumerate(self.positions):
                gone = self._gone()
                if gone:
                    request_id = position.request_id or next(self._ids)
                    self.results.append(PositionResult(index, request_id, "skipped", detail=gone))
                    continue
                self.results.append(await self._ask(index, position))
            self.state = MatchState.FINISHED
            end = pb.MatchEnd(scores=[0] * self.variant.seats, termination=Termination.COMPLETED)
            self.bot.send(pb.ServerMessage(match_end=end))
            if self.bot.link is not None:
                self.bot.link.close()
        except BaseException:
            self.state = MatchState.ABORTED
            if self.bot.link is not None:
                self.bot.link.close(CloseReason.ABORTED, "the run was aborted")
            raise
        finally:
            self.done.set()
        return self.results

    def _request(self, index: int, position: Position, request_id: int) -> pb.ServerMessage:
        state = position.state
        tc = self.time_control
        limit, bank = (tc.per_decision_ms + tc.bank_ms, tc.bank_ms) if tc is not None else (0, 0)
        started = pb.Event(
            deal=index, deal_started=pb.DealStarted(dealer=state.dealer, pots=dict(state.pots_start))
        )
        return pb.ServerMessage(
            request=pb.DecisionRequest(
                request_id=request_id,
                deal=index,
                view=view_message(seat_view(state, self.seat)),
                legal_actions=legal_messages(state.legal_actions()),
                time_limit_ms=limit,
                bank_ms=bank,
                events=[started],
            )
        )

    async def _ask(self, index: int, position: Position) -> PositionResult:
        bot = self.bot
        state = position.state
        legal = state.legal_actions()
        request_id = position.request_id or next(self._ids)
        result = self._current = PositionResult(index, request_id)
        message = self._request(index, position, request_id)
        if Probe.UNKNOWN_FIELDS in position.probes:
            message = _with_unknown_fields(message, index)
            bot.send(_unknown_kind_message())
        if Probe.STRAY_REJECTION in position.probes:
            stray = next(self._ids)  # an id the runner never uses for a request
            rejected = pb.ActionRejected(
                request_id=stray, reason=f"request {stray} was never sent", rule="probe", time_left_ms=0
            )
            bot.send(pb.ServerMessage(rejected=rejected))
        bot.inbox.clear()  # nothing from before this request counts
        bot.pending, bot.pending_message = request_id, message.SerializeToString()
        self._sent.add(request_id)
        tc = self.time_control
        start = trio.current_time()
        deadline = start + (tc.per_decision_ms + tc.bank_ms) / 1000 if tc is not None else math.inf
        bot.send(bot.pending_message)
        link = bot.link
        if Probe.DROP in position.probes and link is not None:
            link.close(CloseReason.DROPPED, "the stream was dropped on purpose: dial again")
            self.detach(bot.index, link)
        invalid = 0
        try:
            while True:
                now = trio.current_time()
                wait_until = deadline
                if bot.link is None:
                    gone = self._gone()
                    if gone:
                        result.outcome, result.detail = "gone", gone
                        break
                    if bot.disconnected_at is not None:
                        wait_until = min(deadline, bot.disconnected_at + self.reconnect_grace_s)
                item: InboxItem | None = None
                with trio.move_on_after(max(0.0, wait_until - now)):
                    item = await bot.inbox.receive()
                if item is None or isinstance(item, Alarm):  # no watchdog here: an alarm never comes
                    if trio.current_time() >= deadline:
                        limit = int((deadline - start) * 1000)
                        result.outcome, result.detail = "timeout", f"no legal answer within {limit} ms"
                        break
                    continue
                if isinstance(item, LinkChange):
                    result.reconnects += item.connected
                    continue
                think_ms = int((trio.current_time() - start) * 1000)
                matched = item.request_id == request_id
                candidate, reason, rule = _judge(state, legal, item.action)
                result.answers.append(
                    Answer(
                        item.request_id,
                        item.action,
                        think_ms,
                        matched,
                        candidate is not None,
                        reason,
                        rule,
                        stale=not matched and item.request_id in self._sent,
                    )
                )
                if not matched:
                    continue  # a stale or foreign id is ignored, as the referee ignores it
                if candidate is not None:
                    result.outcome, result.action, result.think_ms = "answered", candidate, think_ms
                    break
                invalid += 1
                time_left = 0 if tc is None else max(0, int((deadline - trio.current_time()) * 1000))
                bot.send(
                    pb.ServerMessage(
                        rejected=pb.ActionRejected(
                            request_id=request_id, reason=reason, rule=rule, time_left_ms=time_left
                        )
                    )
                )
                if invalid >= self.max_invalid:
                    result.outcome = "illegal"
                    result.detail = f"{invalid} invalid answers, the last: {reason}"
                    break
        finally:
            bot.pending, bot.pending_message = None, b""
            self._current = None
        if result.outcome != "answered":
            result.think_ms = int((trio.current_time() - start) * 1000)
        return result
