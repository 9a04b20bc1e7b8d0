"""The bot side of the arena protocol: one stream per seat, a `decide` hook per decision.

    from arena_bot import main

    def decide(request):                 # an arena_pb2.DecisionRequest
        return request.legal_actions[0]  # an arena_pb2.Action (or its text form, "play SK")

    if __name__ == "__main__":
        main(decide, name="first-legal")

`run_bot` opens ONE bidirectional stream `BotService.Play` with the seat token, says Hello,
answers every `DecisionRequest` with `decide(request)`, and returns a `MatchResult` on
`MatchEnd`. If the stream breaks it reconnects with the same token (the server then resends
`MatchStart` and the pending request); authentication and protocol errors are final
(`BotError`).

A registered bot of the standing arena joins the lobby instead (`arena_bot.lobby.run_lobby`, or
`main` with ``--bot-token``) and plays every match it is seated at, each with `run_bot`.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from arena_bot.v1 import arena_pb2, arena_pb2_grpc

if TYPE_CHECKING:
    from arena_bot.lobby import LobbyResult

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotError",
    "Decide",
    "MatchResult",
    "action_text",
    "main",
    "make_action",
    "run_bot",
]

PROTOCOL_VERSION = 1
log = logging.getLogger("arena_bot")

Decide = Callable[[arena_pb2.DecisionRequest], "arena_pb2.Action | str"]
"""A decision hook: the whole request (`.view`, `.legal_actions`, `.time_limit_ms`) → an action."""

# A broken stream that is worth dialling again; every other status is final.
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.ABORTED,
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


def _channel(address: str) -> grpc.Channel:
    """``host:port`` (plain), or ``grpcs://host:port`` / ``https://…`` for TLS."""
    for prefix in ("grpcs://", "https://", "tls://"):
        if address.startswith(prefix):
            return grpc.secure_channel(address[len(prefix) :], grpc.ssl_channel_credentials())
    for prefix in ("grpc://", "http://"):
        if address.startswith(prefix):
            address = address[len(prefix) :]
    return grpc.insecure_channel(address)


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
    """
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token or os.environ.get("ARENA_TOKEN", "")
    if not address:
        raise BotError("no server address: pass --address or set ARENA_ADDRESS")
    if not token:
        raise BotError("no seat token: pass --token or set ARENA_TOKEN")
    bot = decide if isinstance(decide, Bot) else None
    hook: Decide = bot.decide if bot is not None else decide  # type: ignore[assignment]
    session = _Session(hook, bot)
    metadata = (("authorization", f"Bearer {token}"),)
    hello = arena_pb2.BotMessage(
        hello=arena_pb2.Hello(bot_name=name, bot_version=version, protocol_version=PROTOCOL_VERSION)
    )

    delay = 0.1
    broken_since: float | None = None
    while True:
        channel = _channel(address)
        try:
            _play_stream(channel, session, metadata, hello)
            return session.result
        except _StreamBroken as broken:
            code, progress = broken.code, broken.progress
            reason = f"{code.name if code else 'closed'}: {broken.details}"
            if code is not None and code not in RETRYABLE:
                raise BotError(reason, code) from None
        finally:
            channel.close()
        now = time.monotonic()
        if progress or broken_since is None:
            broken_since, delay = now, 0.1
        left = broken_since + reconnect_seconds - now
        if left <= 0:
            raise BotError(f"no stream to {address} for {reconnect_seconds:g} s ({reason})", code)
        log.warning("stream broken (%s); reconnecting in %.1f s", reason, min(delay, left))
        time.sleep(min(delay, left))
        delay = min(delay * 2, 5.0)
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


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        print(f"{name}={value!r} is not a whole number", file=sys.stderr)
        raise SystemExit(2) from None


def _variant_list(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def main(
    decide: Decide | Bot, *, name: str | None = None, version: str | None = None
) -> MatchResult | LobbyResult:
    """Command-line entry of a bot.

    With a seat token (``--token`` or ``ARENA_TOKEN``): plays that seat of one match and prints the
    final scores; returns its `MatchResult`. Without one but with a bot token (``--bot-token`` or
    ``ARENA_BOT_TOKEN``): joins the standing arena's lobby (`run_lobby`) with ``--variants``,
    ``--max-matches``, ``--matches`` and ``--seconds``, prints a line per finished match and a summary;
    returns the `LobbyResult`. Exits with status 2 on `BotError`."""
    bot = decide if isinstance(decide, Bot) else None
    default_name = name or (bot.name if bot is not None else None) or os.environ.get("ARENA_BOT_NAME", "bot")
    parser = argparse.ArgumentParser(
        description="Play one seat of an arena match (seat token), or join the standing arena (bot token)."
    )
    parser.add_argument(
        "--address", default=os.environ.get("ARENA_ADDRESS"), help="host:port (env ARENA_ADDRESS)"
    )
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN"), help="seat token (env ARENA_TOKEN)")
    parser.add_argument(
        "--name",
        help=f"bot name sent in Hello (default {default_name.replace('%', '%%')}; in the lobby: the "
        "registered name)",
    )
    parser.add_argument("--reconnect-seconds", type=float, default=30.0, help="per match stream")
    lobby = parser.add_argument_group("standing arena (used when no seat token is given)")
    lobby.add_argument(
        "--bot-token",
        default=os.environ.get("ARENA_BOT_TOKEN"),
        help="registered bot's token: join the lobby (env ARENA_BOT_TOKEN)",
    )
    lobby.add_argument(
        "--variants",
        type=_variant_list,
        default=_variant_list(os.environ.get("ARENA_VARIANTS", "")),
        help="comma-separated variants to be seated for; default every registered one (env ARENA_VARIANTS)",
    )
    lobby.add_argument(
        "--max-matches",
        type=int,
        help="matches to play at once (env ARENA_MAX_MATCHES; default 1)",
    )
    lobby.add_argument("--matches", type=int, help="leave after this many matches")
    lobby.add_argument("--seconds", type=float, help="leave after this many seconds")
    lobby.add_argument(
        "--pause-policy",
        choices=("wait", "stop"),
        default="wait",
        help="when paused for faults: wait for the pause to end (default), or stop",
    )
    lobby.add_argument("--lobby-reconnect-seconds", type=float, default=60.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="log the conversation")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    bot_version = version if version is not None else (bot.version if bot is not None else "")
    if not args.token and args.bot_token:
        return _main_lobby(decide, args, bot_version, default_name)
    args.name = args.name or default_name
    try:
        result = run_bot(
            decide,
            address=args.address,
            token=args.token,
            name=args.name,
            version=bot_version,
            reconnect_seconds=args.reconnect_seconds,
        )
    except BotError as error:
        print(f"{args.name}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    summary = f"{result.termination or 'over'}; seat {result.seat}; scores {result.scores}"
    print(f"{args.name}: {summary}", file=sys.stderr)
    return result


def _main_lobby(
    decide: Decide | Bot, args: argparse.Namespace, version: str, default_name: str
) -> LobbyResult:
    """`main` in the standing arena: the lobby until it ends, a line per match, a summary."""
    from arena_bot.lobby import run_lobby  # the lobby module imports this one

    label = args.name or default_name
    printing = threading.Lock()

    def say(line: str) -> None:  # one write per line: matches end in threads of their own
        with printing:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def finished(seated: arena_pb2.Seated, result: MatchResult | None, error: BaseException | None) -> None:
        me = seated.seat_names[seated.seat] if seated.seat < len(seated.seat_names) else label
        where = f"{me}: match {seated.match_id} ({seated.variant}, seat {seated.seat})"
        if result is None:
            say(f"{where}: failed: {error}")
        else:
            say(f"{where}: {result.termination or 'over'}; scores {result.scores}; mine {result.my_score}")

    max_matches = args.max_matches if args.max_matches is not None else _env_int("ARENA_MAX_MATCHES", 1)
    try:
        result = run_lobby(
            decide,
            address=args.address,
            bot_token=args.bot_token,
            variants=args.variants,
            max_matches=max_matches,
            name=args.name,  # None: each Hello carries the registered name
            version=version,
            matches=args.matches,
            seconds=args.seconds,
            on_match_end=finished,
            pause_policy=args.pause_policy,
            reconnect_seconds=args.lobby_reconnect_seconds,
            match_reconnect_seconds=args.reconnect_seconds,
        )
    except ValueError as error:  # a bad --max-matches, --matches or --seconds
        print(f"{label}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except BotError as error:
        print(f"{label}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:  # the second one: the matches in flight are abandoned
        print(f"{label}: interrupted; matches in flight abandoned", file=sys.stderr)
        raise SystemExit(130) from None
    label = result.bot_name or label
    scores = [r.my_score for r in result.matches if r.my_score is not None]
    parts = [f"{len(result.matches)} match(es) played"]
    if scores:
        parts.append(f"total score {sum(scores)}")
    if result.failures:
        parts.append(f"{len(result.failures)} failed")
    if result.paused_reason is not None:
        parts.append(f"paused: {result.paused_reason}")
    parts.append(f"left the lobby: {result.stop_reason}")
    say(f"{label}: {'; '.join(parts)}")
    return result
