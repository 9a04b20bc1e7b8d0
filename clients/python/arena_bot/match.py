"""The match client: one seat of one match on one stream, a `decide` hook per decision.

    from arena_bot import run_bot

    def decide(request):                 # an arena_pb2.DecisionRequest
        return request.legal_actions[0]  # an arena_pb2.Action (or its text form, "play SK")

    result = run_bot(decide, address="localhost:50051", token="…")

`run_bot` opens ONE bidirectional stream `BotService.Play` with the seat token, says Hello,
answers every `DecisionRequest` with `decide(request)`, and returns a `MatchResult` on
`MatchEnd`. If the stream breaks it reconnects with the same token (the server then resends
`MatchStart` and the pending request); authentication and protocol errors are final
(`BotError`).

This module also holds what the lobby client (`arena_bot.lobby`) shares with it: `BotError`, the
`Bot` base class, the channel for an address (`open_channel`) and the statuses worth dialling again
(`RETRYABLE`). It imports nothing of the SDK but the generated protocol (`arena_bot.v1`); the
command-line entry `main` is in `arena_bot.sdk`.
"""

from __future__ import annotations

import logging
import os
import queue
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena_bot.address import check_address
from arena_bot.v1 import arena_pb2, arena_pb2_grpc

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotError",
    "Decide",
    "Dialer",
    "MatchResult",
    "action_text",
    "make_action",
    "run_bot",
]

PROTOCOL_VERSION = 1
log = logging.getLogger("arena_bot")

Decide = Callable[[arena_pb2.DecisionRequest], "arena_pb2.Action | str"]
"""A decision hook: the whole request (`.view`, `.legal_actions`, `.time_limit_ms`) → an action."""

# A broken stream that is worth dialling again; every other status is final. Not ABORTED: the
# server ends a stream so when another connection with the same token took the seat, and a bot
# that dialled again would take it back, and so on for the whole match (docs/PROTOCOL.md).
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
MAX_TRIES_PER_REQUEST = 3
"""How many times `decide` is asked for one request after rejections, before the SDK falls back to
the first legal action it has not tried yet."""

_CARD_TYPES = ("play", "discard", "call")
_NAME_TYPES = ("declare", "announce", "bid")


class BotError(RuntimeError):
    """A final failure: bad token, wrong match, protocol error, or no server within the grace period."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class MatchResult:
    """What a bot saw of its match."""

    scores: list[int] = field(default_factory=list)
    termination: str = ""  # completed, forfeit, aborted
    replay: str = ""
    seat: int = -1
    match_start: arena_pb2.MatchStart | None = None
    events: list[arena_pb2.Event] = field(default_factory=list)
    decisions: int = 0  # replies sent (a retry after a rejection counts)
    rejections: list[arena_pb2.ActionRejected] = field(default_factory=list)
    reconnects: int = 0

    @property
    def my_score(self) -> int | None:
        return self.scores[self.seat] if 0 <= self.seat < len(self.scores) else None


class Bot:
    """Optional class form of a bot: override `decide`, and the `on_…` hooks if you care.

    class Mine(Bot):
        name = "mine"
        def decide(self, request):
            return request.legal_actions[0]

    Mine().run()           # or: main(Mine())
    """

    name = "bot"
    version = ""

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | str:
        raise NotImplementedError

    def on_match_start(self, start: arena_pb2.MatchStart) -> None:
        """Called on every MatchStart (again after a reconnection)."""

    def on_event(self, event: arena_pb2.Event) -> None:
        """Called for every public event, in order (they arrive in batches: with each request, and
        at the end of a deal), before `decide` is asked about the request they came with."""

    def on_rejected(self, rejected: arena_pb2.ActionRejected) -> None:
        """Called when the server rejects a reply; `decide` is then asked again."""

    def on_match_end(self, end: arena_pb2.MatchEnd) -> None:
        """Called once, with the final scores."""

    def run(self, **kwargs: Any) -> MatchResult:
        kwargs.setdefault("name", self.name)
        kwargs.setdefault("version", self.version)
        return run_bot(self, **kwargs)


def make_action(value: object) -> arena_pb2.Action:
    """An `Action` message from itself or from its text form (``"play SK"``, ``"play EX S"``,
    ``"declare cavallerie H"``, ``"pass"``)."""
    if isinstance(value, arena_pb2.Action):
        return value
    if not isinstance(value, str):
        what = type(value).__name__
        raise TypeError(f"decide must return an arena_pb2.Action or its text form, not {what}")
    parts = value.split()
    if not parts:
        raise ValueError("empty action text")
    kind, rest = parts[0].lower(), parts[1:]
    action = arena_pb2.Action(type=kind)
    if kind in _CARD_TYPES and rest:
        action.card = rest.pop(0).upper()
    elif kind in _NAME_TYPES and rest:
        action.name = rest.pop(0)
    if rest:
        action.suit = rest.pop(0).upper()
    if rest:
        raise ValueError(f"unexpected words {rest!r} in action {value!r}")
    return action


def action_text(action: arena_pb2.Action) -> str:
    """The text form of an `Action` message, e.g. ``play EX S``."""
    return " ".join(p for p in (action.type, action.card, action.name, action.suit) if p)


# A channel of its own connections: gRPC's C core otherwise hands a new channel the connection of
# any live channel to the same address, and a bot dials again precisely to get a new one.
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)


def open_channel(address: str) -> grpc.Channel:
    """``host:port`` (plain), or ``grpcs://host:port`` / ``https://…`` for TLS; its own connection."""
    for prefix in ("grpcs://", "https://", "tls://"):
        if address.startswith(prefix):
            credentials = grpc.ssl_channel_credentials()
            return grpc.secure_channel(address[len(prefix) :], credentials, options=OWN_CONNECTION)
    for prefix in ("grpc://", "http://"):
        if address.startswith(prefix):
            address = address[len(prefix) :]
    return grpc.insecure_channel(address, options=OWN_CONNECTION)


class Dialer:
    """The channel to one address, kept from one `run_bot` to the next.

    A process that plays match after match on one server (a ladder's persistent bot:
    `arena_bot.play_sequence`) plays them all on one connection: a new channel per match (its
    connection, HTTP/2 handshake and threads) would cost more CPU than a short match's decisions.
    A stream that breaks still drops the channel, and the next attempt dials a new one, as a
    `run_bot` without a dialer does every time."""

    def __init__(self) -> None:
        self._address = ""
        self._channel: grpc.Channel | None = None

    def channel(self, address: str) -> grpc.Channel:
        if self._channel is None or address != self._address:
            self.close()
            self._address, self._channel = address, open_channel(address)
        return self._channel

    def close(self) -> None:
        """Close the kept channel, if any; the next `channel` dials a new one."""
        if self._channel is not None:
            channel, self._channel = self._channel, None
            channel.close()


class _Session:
    """State that outlives one stream: the decision hook, the result, the request being answered."""

    def __init__(self, decide: Decide, bot: Bot | None) -> None:
        self.decide = decide
        self.bot = bot
        self.result = MatchResult()
        self.pending: arena_pb2.DecisionRequest | None = None
        self.tried: list[arena_pb2.Action] = []

    def record(self, events: Iterable[arena_pb2.Event]) -> None:
        for event in events:
            self.result.events.append(event)
            if self.bot is not None:
                self.bot.on_event(event)

    def reply_for(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action | None:
        """The next action to send for `request`: decide's choice or, after repeated rejections, the
        first legal action not tried yet; None when nothing is left to try."""
        if len(self.tried) < MAX_TRIES_PER_REQUEST:
            action = make_action(self.decide(request))
            if action not in self.tried:
                return action
        for legal in request.legal_actions:
            if legal not in self.tried:
                return legal
        return None


class _StreamBroken(Exception):
    def __init__(self, code: grpc.StatusCode | None, details: str, progress: bool) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.progress = progress


def run_bot(
    decide: Decide | Bot,
    *,
    address: str | None = None,
    token: str | None = None,
    name: str = "bot",
    version: str = "",
    reconnect_seconds: float = 30.0,
    dialer: Dialer | None = None,
) -> MatchResult:
    """Play one seat of one match; return when the server sends MatchEnd.

    `address` and `token` default to the environment variables ``ARENA_ADDRESS`` and
    ``ARENA_TOKEN`` (``arena play`` sets them when it launches a bot). `decide` gets each
    `DecisionRequest` and returns one of its `legal_actions` (or the text form of an action).
    A `Bot` instance may be given instead; its `on_…` hooks are then called too.

    If the stream breaks before MatchEnd (UNAVAILABLE, CANCELLED, a reset connection, a close
    without MatchEnd) the bot dials again with the same token, with backoff, for up to
    `reconnect_seconds` since the last message received. Raises `BotError` on UNAUTHENTICATED,
    PERMISSION_DENIED, INVALID_ARGUMENT and other non-transient statuses, or when the time is
    up. Exceptions raised by `decide` propagate.

    With a `dialer` the match is played on its channel, which stays open for the next match (a
    broken stream still closes it); without one, on a channel of its own, closed at the end.
    """
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address:
        raise BotError("no server address: pass --address or set ARENA_ADDRESS")
    try:
        check_address(address)  # without a port gRPC would dial 443 and retry for the whole reconnect time
    except ValueError as error:
        raise BotError(str(error)) from None
    if not token:
        raise BotError("no seat token: pass --token or set ARENA_TOKEN")
    bot = decide if isinstance(decide, Bot) else None
    hook: Decide = bot.decide if bot is not None else decide  # type: ignore[assignment]
    session = _Session(hook, bot)
    metadata = (("authorization", f"Bearer {token}"),)
    hello = arena_pb2.BotMessage(
        hello=arena_pb2.Hello(bot_name=name, bot_version=version, protocol_version=PROTOCOL_VERSION)
    )

    own = dialer is None
    dial = Dialer() if dialer is None else dialer
    # The first redial goes at once: the clock of a pending decision runs while the stream is
    # down, and the kit breaks the stream on purpose under clocks as short as 100 ms.
    delay = 0.0
    broken_since: float | None = None
    while True:
        try:
            _play_stream(dial.channel(address), session, metadata, hello)
            return session.result
        except _StreamBroken as broken:
            dial.close()  # dial again on a new connection
            code, progress = broken.code, broken.progress
            reason = f"{code.name if code else 'closed'}: {broken.details}"
            if code is not None and code not in RETRYABLE:
                raise BotError(reason, code) from None
        finally:
            if own:
                dial.close()
        now = time.monotonic()
        if progress or broken_since is None:
            broken_since, delay = now, 0.0
        left = broken_since + reconnect_seconds - now
        if left <= 0:
            raise BotError(f"no stream to {address} for {reconnect_seconds:g} s ({reason})", code)
        log.warning("stream broken (%s); reconnecting in %.1f s", reason, min(delay, left))
        time.sleep(min(delay, left))
        delay = min(max(delay * 2, 0.1), 5.0)  # then 0.1 s, doubling up to 5 s
        session.result.reconnects += 1


_CLOSE = object()


def _play_stream(
    channel: grpc.Channel,
    session: _Session,
    metadata: tuple[tuple[str, str], ...],
    hello: arena_pb2.BotMessage,
) -> None:
    """One stream, until MatchEnd; raises `_StreamBroken` if it ends otherwise."""
    outbox: queue.Queue[object] = queue.Queue()
    outbox.put(hello)

    def requests() -> Iterator[arena_pb2.BotMessage]:
        while True:
            item = outbox.get()
            if item is _CLOSE:
                return
            assert isinstance(item, arena_pb2.BotMessage)
            yield item

    def answer(request: arena_pb2.DecisionRequest) -> None:
        action = session.reply_for(request)
        if action is None:
            log.error("request %d: every legal action was rejected; waiting", request.request_id)
            return
        session.tried.append(action)
        session.result.decisions += 1
        reply = arena_pb2.ActionReply(request_id=request.request_id, action=action)
        outbox.put(arena_pb2.BotMessage(action=reply))

    stub = arena_pb2_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
    call = stub.Play(requests(), metadata=metadata)
    result = session.result
    progress = False
    try:
        for message in call:
            progress = True
            kind = message.WhichOneof("kind")
            if kind == "match_start":
                start = message.match_start
                result.match_start = start
                result.seat = start.seat
                log.info("match %s (%s), seat %d", start.match_id, start.variant, start.seat)
                if session.bot is not None:
                    session.bot.on_match_start(start)
            elif kind == "request":
                # Public events travel with the request; then a new request, or the pending one
                # resent after a reconnection: answer it afresh.
                session.record(message.request.events)
                session.pending = message.request
                session.tried = []
                answer(message.request)
            elif kind == "rejected":
                rejected = message.rejected
                result.rejections.append(rejected)
                log.warning(
                    "request %d rejected: %s (%s)", rejected.request_id, rejected.reason, rejected.rule
                )
                if session.bot is not None:
                    session.bot.on_rejected(rejected)
                if session.pending is not None and session.pending.request_id == rejected.request_id:
                    answer(session.pending)
            elif kind == "events":  # the events not sent with a request (end of a deal)
                session.record(message.events.events)
            elif kind == "match_end":
                end = message.match_end
                result.scores = list(end.scores)
                result.termination = end.termination
                result.replay = end.replay
                log.info("match over (%s): scores %s", end.termination, result.scores)
                if session.bot is not None:
                    session.bot.on_match_end(end)
                return
            # An unknown oneof case (a later minor version) is ignored.
    except grpc.RpcError as error:
        code_of = getattr(error, "code", None)
        details_of = getattr(error, "details", None)
        code = code_of() if callable(code_of) else None
        details = details_of() if callable(details_of) else repr(error)
        raise _StreamBroken(code, str(details or ""), progress) from None
    finally:
        outbox.put(_CLOSE)
        call.cancel()
    raise _StreamBroken(None, "the server closed the stream before MatchEnd", progress)
