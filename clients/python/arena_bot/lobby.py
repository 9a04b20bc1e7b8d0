"""The standing arena: a registered bot joins the lobby and plays every match it is seated at.

    from arena_bot import run_lobby

    def decide(request):
        return request.legal_actions[0]

    result = run_lobby(decide, address="arena.example:7470", bot_token="…", max_matches=2, matches=10)

`run_lobby` opens ONE server stream, `LobbyService.Join`, authenticated with the bot token. The server
answers `Welcome`, then sends a `Seated` each time it seats the bot at a table; for each the SDK plays
the match with `run_bot` (`arena_bot.match`, with the seat token in `Seated`) in a thread of its own,
while staying in the lobby. Matches run concurrently, as many as the server assigns (at most
`Welcome.max_matches`).

Refusals and broken streams:

* UNAUTHENTICATED (unknown or revoked token), INVALID_ARGUMENT (a variant the bot may not play) and
  other non-transient statuses are final: `LobbyError` (a `BotError`).
* RESOURCE_EXHAUSTED (rate limit, or too many lobby streams): wait the trailing metadata
  ``retry-after-ms``, then join again.
* FAILED_PRECONDITION (the bot is paused for faults; an open stream first gets `Paused`): the reason
  is kept in `LobbyResult.paused_reason`; with ``pause_policy="wait"`` the SDK waits for the pause to
  run out and joins again, with ``"stop"`` it leaves. Without ``retry-after-ms`` it is not a pause
  (say, a protocol version the server does not speak): final, `LobbyError`.
* UNAVAILABLE, CANCELLED, UNKNOWN, INTERNAL, … (server down or restarting): join again with capped
  exponential backoff, for up to `reconnect_seconds` without a `Welcome`.

Whenever the lobby ends (enough matches, time up, a pause, a final error, an interrupt), the matches
in flight are played to their end first: a bot that leaves mid-match is faulted.

Several servers (an arena of servers sharing one store, docs/ARENA.md): give `address` as a list, or
as one string with commas (``"10.0.0.1:50051,10.0.0.2:50051"``; so does ``ARENA_ADDRESS``). When
every address is an IP literal (no TLS), the lobby's joins after the first use ONE channel with
gRPC's own client-side load balancing, ``round_robin``: each join goes to the next server that is
up, and a server that fails is skipped until it is back. Otherwise (host names, TLS) the SDK rotates
itself: after a broken lobby stream it joins the next address. Either way the list is shuffled
first and the first join goes to its first address, so bots spread over the servers. A match is
played on the server its `Seated.address` names (the table's host), else on the lobby's.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import grpc

from arena_bot.address import balanced_target, check_address, split_addresses
from arena_bot.match import (
    OWN_CONNECTION,
    PROTOCOL_VERSION,
    RETRYABLE,
    Bot,
    BotError,
    Decide,
    MatchResult,
    open_channel,
    run_bot,
)
from arena_bot.v1 import arena_pb2, arena_pb2_grpc

__all__ = [
    "Lobby",
    "LobbyError",
    "LobbyResult",
    "OnMatchEnd",
    "OnSeated",
    "PausePolicy",
    "retry_after_ms",
    "run_lobby",
]

log = logging.getLogger("arena_bot.lobby")

PausePolicy = Literal["wait", "stop"]

OnSeated = Callable[[arena_pb2.Seated], "Decide | Bot | None"]
"""Called in the lobby thread for every `Seated`, before the match starts. It may return the decision
hook (or a fresh `Bot`) to play that match with; None plays it with `run_lobby`'s `decide`."""

OnMatchEnd = Callable[[arena_pb2.Seated, "MatchResult | None", "BaseException | None"], None]
"""Called in the match's thread when it is over: with its `MatchResult`, or with the exception that
ended it (a `BotError`, or whatever `decide` raised)."""

# A lobby stream that ended with one of these broke (network, server restart): join again. A
# match stream's retryable statuses, and OK (closed without a status: a graceful shutdown), but
# not RESOURCE_EXHAUSTED, which comes with a retry hint (WAIT_AND_RETRY).
BROKEN = (RETRYABLE - {grpc.StatusCode.RESOURCE_EXHAUSTED}) | {grpc.StatusCode.OK}
# The server asks the bot to come back later (rate limit, no match slot left, paused for faults).
WAIT_AND_RETRY = frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.FAILED_PRECONDITION})
RETRY_AFTER_KEY = "retry-after-ms"
FIRST_DELAY = 0.2
"""Seconds before the first rejoin after a broken stream; doubled each time up to `MAX_DELAY`."""
MAX_DELAY = 5.0
STEADY_SECONDS = 10.0
"""A lobby stream that lasted this long resets the backoff."""
PAUSE_FALLBACK = 30.0
"""Seconds to wait before asking again when a pause says neither ``retry-after-ms`` nor when it ends."""


def retry_after_ms(error: object) -> int | None:
    """The ``retry-after-ms`` trailing metadata of a finished call or a `grpc.RpcError`, in ms; None
    when absent or not a decimal number."""
    trailing = getattr(error, "trailing_metadata", None)
    if not callable(trailing):
        return None
    try:
        metadata = trailing()
    except Exception:  # a call that is not finished, or not a call at all
        return None
    for key, value in metadata or ():
        if str(key).lower() != RETRY_AFTER_KEY:
            continue
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
        try:
            return max(0, int(text.strip()))
        except ValueError:
            return None
    return None


def _status(error: grpc.RpcError) -> tuple[grpc.StatusCode | None, str]:
    code_of = getattr(error, "code", None)
    details_of = getattr(error, "details", None)
    code = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
    details = details_of() if callable(details_of) else repr(error)
    return code, str(details or "")


@dataclass
class LobbyResult:
    """What a bot saw of its time in the lobby."""

    bot_name: str = ""  # the registered name, from Welcome
    matches: list[MatchResult] = field(default_factory=list)  # finished matches, in finishing order
    welcome: arena_pb2.Welcome | None = None  # the last Welcome
    paused_reason: str | None = None  # the last pause for faults, if any
    paused_until_ms: int | None = None  # Unix ms at which that pause runs out, when known
    # Every refused join: (status code name, details, retry-after-ms or None).
    rejected: list[tuple[str, str, int | None]] = field(default_factory=list)
    seated: list[arena_pb2.Seated] = field(default_factory=list)  # every seat assigned, in order
    failures: list[tuple[arena_pb2.Seated, str]] = field(default_factory=list)  # matches that raised
    joins: int = 0  # lobby streams opened (every attempt)
    # Why the lobby ended: matches, seconds, paused, stopped (Lobby.stop), interrupted, error.
    stop_reason: str = ""


class LobbyError(BotError):
    """A final lobby failure (bad token, bad variant, no server within `reconnect_seconds`). `result`
    holds what was played before it; the matches in flight were finished first."""

    def __init__(self, message: str, code: grpc.StatusCode | None, result: LobbyResult) -> None:
        super().__init__(message, code)
        self.result = result


@dataclass
class _Ended:
    """How one lobby stream ended."""

    code: grpc.StatusCode | None = None
    details: str = ""
    retry_after_ms: int | None = None
    welcomed: bool = False
    paused: arena_pb2.Paused | None = None
    lasted: float = 0.0  # seconds the stream was open


class Lobby:
    """A lobby session; `run()` blocks until it ends, `stop()` (from any thread) ends it.

    The arguments are those of `run_lobby`.
    """

    def __init__(
        self,
        decide: Decide | Bot,
        *,
        address: str | Sequence[str] | None = None,
        bot_token: str | None = None,
        variants: Iterable[str] = (),
        max_matches: int = 1,
        name: str | None = None,
        version: str = "",
        matches: int | None = None,
        seconds: float | None = None,
        on_seated: OnSeated | None = None,
        on_match_end: OnMatchEnd | None = None,
        pause_policy: PausePolicy = "wait",
        reconnect_seconds: float = 60.0,
        match_reconnect_seconds: float = 30.0,
    ) -> None:
        self.addresses = split_addresses(address or os.environ.get("ARENA_ADDRESS", ""))
        token = bot_token or os.environ.get("ARENA_BOT_TOKEN", "")
        if not self.addresses:
            raise BotError("no server address: pass --address or set ARENA_ADDRESS")
        try:
            for each in self.addresses:
                check_address(each)
        except ValueError as error:
            raise BotError(str(error)) from None
        random.shuffle(self.addresses)  # bots given the same list spread over the servers
        self.address = ",".join(self.addresses)
        self._balanced = balanced_target(self.addresses)
        self._channel: grpc.Channel | None = None  # the round_robin channel, kept across joins
        self._current = 0  # without it: the address the SDK joins next
        if not token:
            raise BotError("no bot token: pass --bot-token or set ARENA_BOT_TOKEN")
        if max_matches < 1:
            raise ValueError(f"max_matches must be at least 1, not {max_matches}")
        if matches is not None and matches < 1:
            raise ValueError(f"matches must be at least 1, not {matches}")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"seconds must be positive, not {seconds}")
        if pause_policy not in ("wait", "stop"):
            raise ValueError(f"pause_policy must be 'wait' or 'stop', not {pause_policy!r}")
        self.decide = decide
        self.name = name
        self.version = version
        self.matches = matches
        self.seconds = seconds
        self.on_seated = on_seated
        self.on_match_end = on_match_end
        self.pause_policy = pause_policy
        self.reconnect_seconds = reconnect_seconds
        self.match_reconnect_seconds = match_reconnect_seconds
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.join = arena_pb2.LobbyJoin(
            variants=list(variants),
            max_matches=max_matches,
            bot_version=version,
            protocol_version=PROTOCOL_VERSION,
        )
        self.result = LobbyResult()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._call: Any = None  # the open Join call, to cancel it from another thread
        self._threads: list[threading.Thread] = []
        self._in_flight = 0
        self._granted = max_matches

    # ------------------------------------------------------------------ control

    def stop(self, reason: str = "stopped") -> None:
        """Leave the lobby now; `run()` returns once the matches in flight are over."""
        with self._lock:
            if not self._stopping.is_set():
                self.result.stop_reason = self.result.stop_reason or reason
                self._stopping.set()
            call = self._call
        if call is not None:
            call.cancel()

    @property
    def in_flight(self) -> int:
        """Matches being played now."""
        with self._lock:
            return self._in_flight

    def run(self) -> LobbyResult:
        """Join, play, and return when the lobby ends (see `run_lobby`)."""
        timer: threading.Timer | None = None
        if self.seconds is not None:
            timer = threading.Timer(self.seconds, self.stop, args=("seconds",))
            timer.daemon = True
            timer.start()
        final: LobbyError | None = None
        try:
            final = self._loop()
            self.stop("error" if final is not None else "stopped")
        except KeyboardInterrupt:
            self.stop("interrupted")
            if self.in_flight:
                log.warning(
                    "interrupted: left the lobby; finishing %d match(es) in flight (interrupt again to "
                    "abandon them, and be faulted)",
                    self.in_flight,
                )
        except BaseException:  # raised by on_seated: leave, finish the matches, then raise it
            self.stop("error")
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self._drain()
            if self._channel is not None:
                self._channel.close()
        if final is not None:
            raise final
        return self.result

    # ------------------------------------------------------------------ the lobby loop

    def _loop(self) -> LobbyError | None:
        """Join until told to stop; the final error, if any (raised after the matches in flight)."""
        delay = FIRST_DELAY
        broken_since: float | None = None
        while not self._stopping.is_set():
            ended = self._join_once()
            if self._stopping.is_set():
                return None
            if ended.welcomed:  # a new reconnection budget; the backoff only after a stream that lasted
                broken_since = None
                if ended.lasted >= STEADY_SECONDS:
                    delay = FIRST_DELAY
            code = ended.code
            if code == grpc.StatusCode.OK:
                what = "closed by the server"
            else:
                what = f"{code.name if code is not None else 'UNKNOWN'}: {ended.details}"
            if code not in BROKEN and code not in WAIT_AND_RETRY:  # even after a Paused: revoked
                return LobbyError(f"lobby: {what}", code, self.result)
            paused = ended.paused is not None or ended.retry_after_ms is not None
            if code == grpc.StatusCode.FAILED_PRECONDITION and not paused:
                # Not a pause (a pause says when it ends): a refusal that waiting would not change,
                # e.g. a protocol version this server does not speak.
                return LobbyError(f"lobby: {what}", code, self.result)
            if ended.paused is not None or code == grpc.StatusCode.FAILED_PRECONDITION:
                wait = self._paused(ended)
                if self.pause_policy == "stop":
                    self.stop("paused")
                    return None
                log.warning("paused (%s); joining again in %.1f s", self.result.paused_reason, wait)
                self._sleep(wait)
                continue
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                if ended.retry_after_ms is not None:
                    wait = ended.retry_after_ms / 1000
                else:
                    wait, delay = delay, min(delay * 2, MAX_DELAY)
                log.warning("lobby refused (%s); joining again in %.1f s", what, wait)
                self._sleep(wait)
                continue
            now = time.monotonic()
            if broken_since is None:
                broken_since = now
            left = broken_since + self.reconnect_seconds - now
            if left <= 0:
                return LobbyError(
                    f"no lobby stream to {self.address} for {self.reconnect_seconds:g} s ({what})",
                    code,
                    self.result,
                )
            wait = min(delay * random.uniform(0.5, 1.0), left)  # jitter: bots return at different times
            log.warning("lobby stream broken (%s); joining again in %.1f s", what, wait)
            self._sleep(wait)
            delay = min(delay * 2, MAX_DELAY)
        return None

    def _lobby_channel(self) -> grpc.Channel:
        # The first join goes to the first address of the shuffled list, on a channel of its own:
        # `round_robin` would send it to whichever server it reached first, the same one for most
        # bots that start together. Later joins balance, skipping a server that is down.
        if self._balanced is None or self.result.joins == 0:
            return open_channel(self.addresses[self._current])
        if self._channel is None:
            self._channel = grpc.insecure_channel(
                self._balanced, options=[("grpc.lb_policy_name", "round_robin"), *OWN_CONNECTION]
            )
        return self._channel

    def _join_once(self) -> _Ended:
        ended = _Ended()
        opened = time.monotonic()
        channel = self._lobby_channel()
        try:
            stub = arena_pb2_grpc.LobbyServiceStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Join(self.join, metadata=self.metadata)
            with self._lock:
                self.result.joins += 1
                self._call = call
                if self._stopping.is_set():
                    call.cancel()
            try:
                for message in call:
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        ended.welcomed = True
                        self._welcome(message.welcome)
                    elif kind == "seated":
                        ended.welcomed = True  # a seat is progress too
                        self._seat(message.seated)
                    elif kind == "paused":  # the server closes the stream next
                        ended.paused = message.paused
                        with self._lock:
                            self.result.paused_reason = message.paused.reason or "paused"
                            self.result.paused_until_ms = message.paused.until_ms or None
                    # An unknown oneof case (a later minor version) is ignored.
                ended.code = grpc.StatusCode.OK
                ended.retry_after_ms = retry_after_ms(call)
            except grpc.RpcError as error:
                ended.code, ended.details = _status(error)
                ended.retry_after_ms = retry_after_ms(error)
            finally:
                with self._lock:
                    self._call = None
                call.cancel()
        finally:
            if channel is not self._channel:
                channel.close()
            ended.lasted = time.monotonic() - opened
        if ended.code in BROKEN and len(self.addresses) > 1:
            self._current = (self._current + 1) % len(self.addresses)  # that server may be down: the next
        if not ended.welcomed and ended.code not in BROKEN and not self._stopping.is_set():
            name = ended.code.name if ended.code is not None else "UNKNOWN"
            with self._lock:
                self.result.rejected.append((name, ended.details, ended.retry_after_ms))
        return ended

    def _welcome(self, welcome: arena_pb2.Welcome) -> None:
        with self._lock:
            self.result.welcome = welcome
            self.result.bot_name = welcome.bot_name
            self._granted = welcome.max_matches or 1
        log.info(
            "in the lobby as %s: variants %s, %d match(es) at once",
            welcome.bot_name,
            ", ".join(welcome.variants) or "all",
            welcome.max_matches,
        )
        if welcome.max_matches and welcome.max_matches < self.join.max_matches:
            log.info("asked for %d matches at once, granted %d", self.join.max_matches, welcome.max_matches)

    def _paused(self, ended: _Ended) -> float:
        """Record a pause; the seconds to wait before joining again."""
        now_ms = int(time.time() * 1000)
        reason = ended.paused.reason if ended.paused is not None else ""
        until = ended.paused.until_ms if ended.paused is not None else 0
        if ended.retry_after_ms is not None:
            wait = ended.retry_after_ms / 1000
            until = until or now_ms + ended.retry_after_ms
        elif until:
            wait = max(0.0, (until - now_ms) / 1000)
        else:
            wait = PAUSE_FALLBACK
        with self._lock:
            self.result.paused_reason = reason or ended.details or "paused"
            self.result.paused_until_ms = until or None
        return max(wait, FIRST_DELAY)

    def _sleep(self, seconds: float) -> None:
        """Wait at least `seconds`, unless told to stop."""
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._stopping.wait(left)

    # ------------------------------------------------------------------ the matches

    def _seat(self, seated: arena_pb2.Seated) -> None:
        with self._lock:
            self.result.seated.append(seated)
            count = len(self.result.seated)
        log.info(
            "seated at %s (%s), seat %d: %s",
            seated.match_id,
            seated.variant,
            seated.seat,
            ", ".join(seated.seat_names),
        )
        player = self.on_seated(seated) if self.on_seated is not None else None
        if player is None:
            player = self.decide
        if not seated.seat_token:
            log.error("seat at %s came without a seat token; not played", seated.match_id)
            with self._lock:
                self.result.failures.append((seated, "no seat token"))
        else:
            # Never queue a seat: a match waiting for a free worker is a match not answered in time.
            thread = threading.Thread(
                target=self._play, args=(seated, player), name=f"match-{seated.match_id}", daemon=True
            )
            with self._lock:
                self._in_flight += 1
                if self._in_flight > self._granted:
                    log.warning("%d matches at once, %d granted", self._in_flight, self._granted)
                self._threads.append(thread)
            thread.start()
        if self.matches is not None and count >= self.matches:
            self.stop("matches")  # no more seats; the ones taken are played to the end

    def _play(self, seated: arena_pb2.Seated, player: Decide | Bot) -> None:
        result: MatchResult | None = None
        failure: BaseException | None = None
        try:
            result = run_bot(
                player,
                # The table's host; a server that names none hosts it itself.
                address=seated.address or self.addresses[self._current],
                token=seated.seat_token,
                name=self.name or self.result.bot_name or "bot",
                version=self.version,
                reconnect_seconds=self.match_reconnect_seconds,
            )
        except BotError as error:
            failure = error
            log.error("match %s: %s", seated.match_id, error)
        except Exception as error:
            failure = error
            log.exception("match %s: the bot raised", seated.match_id)
        with self._lock:
            if result is not None:
                self.result.matches.append(result)
            else:
                self.result.failures.append((seated, f"{type(failure).__name__}: {failure}"))
        try:
            if self.on_match_end is not None:
                self.on_match_end(seated, result, failure)
        except Exception:
            log.exception("on_match_end raised")
        finally:
            with self._lock:
                self._in_flight -= 1

    def _drain(self) -> None:
        """Wait for every match in flight."""
        while True:
            with self._lock:
                running = [t for t in self._threads if t.is_alive()]
                self._threads = running
            if not running:
                return
            for thread in running:
                thread.join()


def run_lobby(
    decide: Decide | Bot,
    *,
    address: str | Sequence[str] | None = None,
    bot_token: str | None = None,
    variants: Iterable[str] = (),
    max_matches: int = 1,
    name: str | None = None,
    version: str = "",
    matches: int | None = None,
    seconds: float | None = None,
    on_seated: OnSeated | None = None,
    on_match_end: OnMatchEnd | None = None,
    pause_policy: PausePolicy = "wait",
    reconnect_seconds: float = 60.0,
    match_reconnect_seconds: float = 30.0,
) -> LobbyResult:
    """Join the standing arena's lobby with a bot token and play every match the bot is seated at.

    `address` and `bot_token` default to ``ARENA_ADDRESS`` and ``ARENA_BOT_TOKEN``; `address` may name
    several servers of one arena (a list, or commas): see the module's docstring. `variants` limits
    the variants to be seated for (empty: every variant the bot is registered for); `max_matches` is
    how many matches to play at once (the server may grant fewer, `Welcome.max_matches`). `name` is
    the name sent in each match's Hello (default: the registered name from Welcome).

    `decide` (or a `Bot`) is called from one thread per match in flight: with ``max_matches > 1`` it
    must be thread-safe, or `on_seated` returns a fresh one for each match. `on_seated(seated)` is
    called for every seat, `on_match_end(seated, result, error)` when its match is over.

    Returns once `matches` seats have been played out, or `seconds` have passed, or (with
    ``pause_policy="stop"``) the bot was paused; without `matches` and `seconds`, only a pause, a
    final error, `Lobby.stop()` or an interrupt end it. Either way the lobby is left first and the
    matches in flight are played to their end. Raises `LobbyError` (a `BotError`, with `.result`)
    on UNAUTHENTICATED, INVALID_ARGUMENT and other final statuses, or when no lobby stream could be
    opened for `reconnect_seconds`. `match_reconnect_seconds` is `run_bot`'s `reconnect_seconds`.
    """
    return Lobby(
        decide,
        address=address,
        bot_token=bot_token,
        variants=variants,
        max_matches=max_matches,
        name=name,
        version=version,
        matches=matches,
        seconds=seconds,
        on_seated=on_seated,
        on_match_end=on_match_end,
        pause_policy=pause_policy,
        reconnect_seconds=reconnect_seconds,
        match_reconnect_seconds=match_reconnect_seconds,
    ).run()
