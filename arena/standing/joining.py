"""Joining the lobby: who may wait for tables, for which variants, how often, with how many places.

A join is refused (`Refusal`: a gRPC status and when to try again) while the server drains, for
a revoked token, an unsupported protocol version, a paused bot, too many joins in a short time
(a token bucket per bot) and variants the bot may not play; otherwise the stream is admitted
with as many places as the bot's limit of matches at once leaves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import grpc
import structlog
import trio

from ..referee.seat import hello_refusal
from ..v1 import arena_pb2 as pb
from .state import LobbyLink, LobbyState, LobbyStream
from .store import BotRecord, now_ms

log = structlog.get_logger()

DRAINING = "this server is draining before it stops: join another server of the arena"


@dataclass
class Refusal:
    """A lobby join the server turns away: a gRPC status, and when to try again."""

    code: grpc.StatusCode
    details: str
    retry_after_ms: int = 0


class JoinBucket:
    """A token bucket: `burst` joins at once, then `per_minute`."""

    def __init__(self, burst: int, per_minute: float) -> None:
        self.burst = burst
        self.rate = per_minute / 60.0
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> int:
        """0 if a join may go ahead now, else the milliseconds until it may."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0
        return max(1, int((1 - self.tokens) / self.rate * 1000))


class Joins:
    """Lobby streams arriving and leaving (trio thread)."""

    def __init__(self, state: LobbyState) -> None:
        self.state = state
        self.buckets: dict[str, JoinBucket] = {}

    def join(
        self, bot: BotRecord, request: pb.LobbyJoin, link: LobbyLink, ratings: dict[str, float]
    ) -> Refusal | None:
        """A bot's lobby stream asks to wait for tables (`bot` was just read from the store); the
        places are counted here, on this server alone."""
        refusal, asked = self.check_join(bot, request)
        if refusal is not None:
            return refusal
        limit = self.state.config.max_matches_per_bot
        held = sum(s.capacity for s in self.state.streams.values() if s.bot == bot.name)
        granted = min(request.max_matches or 1, limit - held)
        if granted < 1:
            return Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"bot {bot.name} already has lobby streams for {limit} matches at once, the limit",
                30_000,
            )
        self.admit(bot, asked, granted, link, ratings)
        return None

    def check_join(self, bot: BotRecord, request: pb.LobbyJoin) -> tuple[Refusal | None, list[str]]:
        """Whether the bot may join now, and the variants it asks for."""
        if self.state.draining:
            return Refusal(grpc.StatusCode.UNAVAILABLE, DRAINING), []
        return self._check(bot, request)

    def _check(self, bot: BotRecord, request: pb.LobbyJoin) -> tuple[Refusal | None, list[str]]:
        config = self.state.config
        if bot.revoked or bot.name in self.state.revoked:
            return Refusal(grpc.StatusCode.UNAUTHENTICATED, "the bot token was revoked"), []
        refusal = hello_refusal(request.protocol_version)
        if refusal:
            return Refusal(grpc.StatusCode.FAILED_PRECONDITION, refusal), []
        at = now_ms()
        if bot.paused_until_ms > at:
            return Refusal(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"bot {bot.name} is paused: {bot.pause_reason}",
                bot.paused_until_ms - at,
            ), []
        bucket = self.buckets.setdefault(bot.name, JoinBucket(config.join_burst, config.joins_per_minute))
        wait = bucket.take()
        if wait:
            return Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many lobby joins: at most {config.join_burst} at once, "
                f"then {config.joins_per_minute:g} a minute",
                wait,
            ), []
        offered = [v for v in config.variants if bot.plays(v)]
        asked = list(request.variants) or offered
        wrong = [v for v in asked if v not in offered] or ([] if asked else ["any"])
        if wrong:
            return Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"variant {wrong[0]!r} is not open to {bot.name}; it may play {', '.join(offered) or 'none'}",
            ), []
        return None, asked

    def admit(
        self, bot: BotRecord, asked: list[str], granted: int, link: LobbyLink, ratings: dict[str, float]
    ) -> None:
        """The stream waits for tables from now on, with `granted` places."""
        for variant, mu in ratings.items():
            self.state.mu[(variant, bot.name)] = mu
        self.state.streams[link.id] = LobbyStream(link, bot.name, tuple(asked), granted, trio.current_time())
        link.send(pb.LobbyMessage(welcome=pb.Welcome(bot_name=bot.name, variants=asked, max_matches=granted)))
        log.info("lobby join", bot=bot.name, variants=asked, max_matches=granted)

    def leave(self, link: LobbyLink) -> None:
        """The stream ended; its matches play on."""
        stream = self.state.streams.pop(link.id, None)
        if stream is not None:
            log.info("lobby leave", bot=stream.bot)
        if self.state.cluster is not None:
            self.state.leave_places_soon(self.state.cluster, link.id)
