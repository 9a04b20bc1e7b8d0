"""A match's seats: where a seat's messages go (`Link`, and why the referee closes one:
`CloseReason`), what reaches it (its `Inbox` and the inbox's items), its clock (`TimeControl`,
the bank each `Seat` keeps), the limits on what its bot may send, and `LinkHost`, the bot streams'
side shared by the hosts of seats (a match, a position runner).

The runner (`arena.referee.runner`) owns the seats and decides; this module holds no match logic.
No transport either: a link is anything with `send` and `close`, and the transport (arena/server)
maps a `CloseReason` to its own status.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import outcome
import trio

from ..protocol import event_batch_message
from ..replay.log import FaultKind
from ..v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from .cpuclock import CpuMeter

INBOX_SIZE = 16
MAX_UNSOLICITED_PER_SECOND = 100  # messages that answer no pending request
MAX_BOT_MESSAGE_BYTES = 16 * 1024  # an answer is a few dozen bytes
# An `Action` this small is within MAX_BOT_MESSAGE_BYTES in any `BotMessage` that answers with it
# (the request id and the nesting add at most 20 bytes).
_SMALL = MAX_BOT_MESSAGE_BYTES - 64

# The protocol versions this server speaks (`Hello.protocol_version`). A Hello naming another one
# is refused: a protocol fault of the seat, and the stream ends (`CloseReason.UNSUPPORTED_VERSION`)
# with `hello_refusal`'s text. A Hello with version 0 (the field unset, as bots written before the field
# was checked send it) is accepted as version 1, the first version, for compatibility.
PROTOCOL_VERSIONS = (1,)


def hello_refusal(protocol_version: int) -> str:
    """Why a Hello speaking `protocol_version` is refused; "" if this server speaks it (0 is 1)."""
    if (protocol_version or 1) in PROTOCOL_VERSIONS:
        return ""
    spoken = ", ".join(str(v) for v in PROTOCOL_VERSIONS)
    return f"protocol version {protocol_version} is not spoken here; this server speaks {spoken}"


class CloseReason(enum.Enum):
    """Why the referee ends a bot's stream before its normal end (a `close()` without a reason).

    The transport says it in its own terms: arena/server/bridge.py maps each to a gRPC status."""

    OVER = "over"  # the match (or run) has ended already
    REPLACED = "replaced"  # a new connection with the same token took the seat
    INVALID = "invalid"  # a message the protocol does not allow at this point
    EXHAUSTED = "exhausted"  # too large, too many unsolicited, or too many in flight
    UNSUPPORTED_VERSION = "unsupported version"  # a Hello of a protocol version not spoken here
    ABORTED = "aborted"  # the match (or run) was aborted
    DROPPED = "dropped"  # broken on purpose (a conformance probe): the bot must dial again
    REVOKED = "revoked"  # the bot's token no longer speaks for the seat


class Link(Protocol):
    """Where a seat's messages go: a bot stream (or a test double)."""

    open: bool

    def send(self, message: Any) -> None: ...

    def close(self, reason: CloseReason | None = None, details: str = "") -> None: ...


class MatchState(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


@dataclass(frozen=True)
class TimeControl:
    per_decision_ms: int = 10_000
    bank_ms: int = 60_000
    increment_ms: int = 0
    # The most a decision's charge is lowered by the seat's measured round trip (`RoundTrip`);
    # 0, the default, charges the whole decision time, network included.
    latency_allowance_ms: int = 0

    def __post_init__(self) -> None:
        if self.latency_allowance_ms < 0:
            raise ValueError("latency_allowance_ms is 0 or more")

    def message(self) -> pb.TimeControl:
        return pb.TimeControl(
            per_decision_ms=self.per_decision_ms,
            bank_ms=self.bank_ms,
            increment_ms=self.increment_ms,
            latency_allowance_ms=self.latency_allowance_ms,
        )

    def header(self) -> dict[str, int]:
        """The replay header's `time_control`."""
        header = {
            "per_decision_ms": self.per_decision_ms,
            "bank_ms": self.bank_ms,
            "increment_ms": self.increment_ms,
        }
        if self.latency_allowance_ms:  # absent when off, as in logs before version 3
            header["latency_allowance_ms"] = self.latency_allowance_ms
        return header


# Items of a seat's inbox.
class Reply(NamedTuple):  # one per decision: a tuple is cheaper to make than a frozen dataclass
    request_id: int
    action: pb.Action


@dataclass(frozen=True)
class LinkChange:
    connected: bool


@dataclass(frozen=True)
class Alarm:
    """The watchdog's wake-up: the decision's deadline (or a reconnection grace) may have passed."""


ALARM = Alarm()
InboxItem = Reply | LinkChange | Alarm


class Inbox:
    """A seat's inbox: a bounded queue that one task, the seat's decision, waits on.

    A trio memory channel does the same for any number of tasks, with closing and statistics;
    this costs a few microseconds less, twice per decision.
    """

    def __init__(self, size: int) -> None:
        self._items: deque[InboxItem] = deque()
        self._size = size
        self._waiter: trio.lowlevel.Task | None = None

    def send_nowait(self, item: InboxItem) -> None:
        """Hand `item` to the waiting task, or queue it; `trio.WouldBlock` when `size` items wait."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter, outcome.Value(item))
        elif len(self._items) < self._size:
            self._items.append(item)
        else:
            raise trio.WouldBlock

    def take(self) -> InboxItem | None:
        """The first item waiting, or None: no checkpoint (a link that answers synchronously has
        put its answer here before the referee looks; `MatchRunner._answer` yields on its own)."""
        return self._items.popleft() if self._items else None

    async def receive(self) -> InboxItem:
        if self._items:
            await trio.lowlevel.checkpoint()
            return self._items.popleft()
        if self._waiter is not None:
            raise RuntimeError("one task at a time receives from an inbox")
        self._waiter = trio.lowlevel.current_task()

        def abort(_: object) -> trio.lowlevel.Abort:
            self._waiter = None
            return trio.lowlevel.Abort.SUCCEEDED

        item: InboxItem = await trio.lowlevel.wait_task_rescheduled(abort)
        return item

    def clear(self) -> None:
        """Drop the items waiting (what came before a new request does not count)."""
        self._items.clear()


@dataclass
class Fault:
    seat: int
    kind: FaultKind
    detail: str  # for the replay log and the faulting bot: may name cards of its hand

    @property
    def public_detail(self) -> str:
        """What the other seats may read: an illegal answer's reason would tell them about the hand."""
        return "too many invalid answers" if self.kind is FaultKind.ILLEGAL else self.detail

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "kind": self.kind, "detail": self.detail}


RTT_WINDOW = 16  # the decisions a round-trip estimate looks back on
RTT_MIN_SAMPLES = 3  # no allowance before this many answers on the current connection


class RoundTrip:
    """The round trip of one bot connection, estimated from the decisions it answered.

    A sample is a first answer's time, from sending the request to receiving the answer: the
    network's round trip plus the bot's thinking plus the server's own handling, never less than
    the round trip. The estimate is the smallest of the last `RTT_WINDOW` samples (a windowed
    minimum, as TCP's congestion control keeps one): queueing, garbage collection and slow
    thinking only ever add to a sample, so the minimum is the one closest to the wire, and a bot
    can raise it only by being slow on every decision, which the match's allowance caps.
    """

    __slots__ = ("_samples",)

    def __init__(self) -> None:
        self._samples: deque[float] = deque(maxlen=RTT_WINDOW)

    def add(self, ms: float) -> None:
        self._samples.append(ms)

    def estimate_ms(self) -> int | None:
        """The estimate in whole ms (rounded down), or None before `RTT_MIN_SAMPLES` samples."""
        if len(self._samples) < RTT_MIN_SAMPLES:
            return None
        return int(min(self._samples))


@dataclass
class Seat:
    index: int
    name: str
    token: str
    bank_ms: int
    link: Link | None = None
    hello: bool = False  # a Hello was accepted on the current link
    bot_name: str = ""  # what the last accepted Hello said
    bot_version: str = ""
    hellos: int = 0  # Hellos accepted over the whole match, reconnections included (0: never)
    rejected: int = 0  # answers rejected with an ActionRejected over the whole match
    crashed: bool = False
    disconnected_at: float | None = None  # trio time; None while connected
    pending: int | None = None  # the id of the request awaiting an answer
    pending_message: bytes = b""  # that request, encoded: sent again after a reconnection
    events: list[bytes] = field(default_factory=list)  # public events not yet sent, encoded
    faults: list[Fault] = field(default_factory=list)
    round_trip: RoundTrip = field(default_factory=RoundTrip)  # of the current connection
    pending_sent_on: Link | None = None  # the link the pending request was first sent on
    # Set before the match starts (`MatchRunner.clock_cpu`): the seat's clock charges the CPU its
    # bot used instead of wall time (arena/referee/cpuclock.py).
    cpu_meter: CpuMeter | None = None
    _window_start: float = 0.0
    _window_count: int = 0

    def __post_init__(self) -> None:
        self.inbox = Inbox(INBOX_SIZE)

    def send(self, message: pb.ServerMessage | bytes) -> None:
        """Send a `ServerMessage`, or one encoded (the bot stream passes the bytes on)."""
        if self.link is not None and self.hello:
            self.link.send(message)

    def flush_events(self) -> None:
        """Send the events not yet sent, as one batch."""
        if self.events:
            self.send(event_batch_message(self.events))
            self.events = []


class LinkHost:
    """The server's side of the bot streams of some seats, shared by `MatchRunner` and
    `PositionRunner`: attaching a link (and closing the one it replaces), judging what a bot sends
    before its decisions see it (the limits, Hello, the protocol faults), detaching.

    A subclass says which seat a stream speaks for (`seat_for`), what its `MatchStart` says, and
    what an accepted Hello, a protocol fault and a lost link mean to it (the hooks, which do
    nothing here but `_fault_recorded`). The transport calls `attach`, `deliver` and `detach` on
    the trio thread.
    """

    match_id: str
    state: MatchState
    log: Any  # a bound structlog logger

    def seat_for(self, seat_index: int) -> Seat:
        raise NotImplementedError

    def _match_start(self, seat: int) -> pb.MatchStart:
        raise NotImplementedError

    def _hello_accepted(self, seat: Seat, hello: pb.Hello, was_away: bool) -> None:
        """After the seat's state says so and the bot has its MatchStart (and pending request)."""

    def _fault_recorded(self, seat: Seat, detail: str) -> None:
        """Record a protocol fault of `seat`; its stream ends right after."""
        raise NotImplementedError

    def _link_lost(self, seat: Seat) -> None:
        """The seat's link is gone while the host runs or waits (`disconnected_at` is set)."""

    def _over(self) -> bool:
        return self.state is MatchState.FINISHED or self.state is MatchState.ABORTED

    def attach(self, seat_index: int, link: Link) -> None:
        seat = self.seat_for(seat_index)
        if self._over():
            link.close(CloseReason.OVER, f"match {self.match_id} is over")
            return
        old = seat.link
        if old is not None and old.open:
            old.close(CloseReason.REPLACED, "replaced by a new connection with the same token")
        seat.link = link
        seat.hello = False
        seat.round_trip = RoundTrip()  # another connection, perhaps from elsewhere
        self.log.info("bot connected", seat=seat.index)

    def deliver(self, seat_index: int, link: Link, message: pb.BotMessage) -> None:
        seat = self.seat_for(seat_index)
        if link is not seat.link:
            return
        kind = message.WhichOneof("kind")
        answer = message.action  # empty unless kind is "action"
        request_id = answer.request_id  # read once: each read of a protobuf field makes an object
        pending = seat.pending
        if kind != "action" or pending is None or request_id != pending:
            if self._over():
                return  # the bot has not seen its stream end yet
            # Answers to the pending request are paced by the referee itself; anything else is
            # unsolicited, and a flood of it ends the stream.
            now = time.monotonic()
            if now - seat._window_start >= 1.0:
                seat._window_start, seat._window_count = now, 0
            seat._window_count += 1
            if seat._window_count > MAX_UNSOLICITED_PER_SECOND:
                detail = f"more than {MAX_UNSOLICITED_PER_SECOND} unsolicited messages per second"
                self._protocol_fault(seat, CloseReason.EXHAUSTED, detail)
                return
        size = message.ByteSize()
        if size > MAX_BOT_MESSAGE_BYTES:
            detail = f"a message of {size} bytes (the limit is {MAX_BOT_MESSAGE_BYTES})"
            self._protocol_fault(seat, CloseReason.EXHAUSTED, detail)
            return
        if kind == "hello":
            self._hello(seat, link, message.hello)
        elif kind == "action":
            if not seat.hello:
                self._protocol_fault(seat, CloseReason.INVALID, "an ActionReply before Hello")
                return
            self._push(seat, Reply(request_id, answer.action))
        else:
            self._protocol_fault(seat, CloseReason.INVALID, "an empty or unknown BotMessage")

    def deliver_action(self, seat_index: int, link: Link, request_id: int, action: pb.Action) -> None:
        """`deliver` of the `BotMessage` answering `request_id` with `action`, for a link that holds
        the answer as an object (in-process): the common case, the pending request answered by a
        bot that said Hello with a small action, is judged without building that message; any
        other goes through `deliver` itself."""
        seat = self.seat_for(seat_index)
        if link is not seat.link:
            return
        if seat.pending is None or request_id != seat.pending or not seat.hello or action.ByteSize() > _SMALL:
            message = pb.BotMessage()
            reply = message.action
            reply.request_id = request_id
            reply.action.CopyFrom(action)
            self.deliver(seat_index, link, message)
            return
        self._push(seat, Reply(request_id, action))

    def reject(self, seat_index: int, link: Link, detail: str) -> None:
        """The transport could not parse what the bot sent (`detail` says why): a protocol fault."""
        seat = self.seat_for(seat_index)
        if link is seat.link and not self._over():
            self._protocol_fault(seat, CloseReason.INVALID, detail)
        else:
            link.close(CloseReason.INVALID, detail)

    def _hello(self, seat: Seat, link: Link, hello: pb.Hello) -> None:
        if seat.hello:
            self._protocol_fault(seat, CloseReason.INVALID, "a second Hello on the same stream")
            return
        refusal = hello_refusal(hello.protocol_version)
        if refusal:
            self._protocol_fault(seat, CloseReason.UNSUPPORTED_VERSION, refusal)
            return
        seat.hello = True
        seat.hellos += 1
        seat.bot_name, seat.bot_version = hello.bot_name, hello.bot_version
        link.send(pb.ServerMessage(match_start=self._match_start(seat.index)))
        if seat.pending is not None:
            link.send(seat.pending_message)
        was_away = seat.disconnected_at is not None
        seat.disconnected_at = None
        self._push(seat, LinkChange(True))
        self._hello_accepted(seat, hello, was_away)

    def detach(self, seat_index: int, link: Link) -> None:
        seat = self.seat_for(seat_index)
        link.open = False
        if link is not seat.link:
            return
        seat.link = None
        seat.hello = False
        seat.events = []  # a reconnecting bot's view carries their effect
        if self.state is MatchState.RUNNING or self.state is MatchState.WAITING:
            seat.disconnected_at = trio.current_time()
            self._push(seat, LinkChange(False))
            self._link_lost(seat)

    def _push(self, seat: Seat, item: Reply | LinkChange) -> None:
        try:
            seat.inbox.send_nowait(item)
        except trio.WouldBlock:
            self._protocol_fault(seat, CloseReason.EXHAUSTED, "too many messages in flight")

    def _protocol_fault(self, seat: Seat, reason: CloseReason, detail: str) -> None:
        """Record the fault and end the seat's stream."""
        self._fault_recorded(seat, detail)
        self.log.warning("protocol fault", seat=seat.index, detail=detail)
        if seat.link is not None:
            link = seat.link
            link.close(reason, detail)
            self.detach(seat.index, link)
