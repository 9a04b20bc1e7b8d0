"""The lobby's live state, which its parts (joining, tables, hosting, results) share.

Only trio tasks read or change it. The store is touched only from worker threads, one call at
a time per connection: `db` for the server's store, `cdb` for the cluster's own connection,
`beat` for heartbeats, so that none of them queues behind another.
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
import trio

from ..engine import Variant, find_variant
from ..live import Hub
from ..referee.runner import MatchRunner
from ..referee.seat import TimeControl
from ..server.bridge import BotLink, Close
from ..v1 import arena_pb2 as pb
from .cluster import Cluster
from .config import ArenaConfig
from .store import Pause, Store, is_outage, now_ms

log = structlog.get_logger()


@dataclass(frozen=True)
class CloseWithRetry(Close):
    retry_after_ms: int = 0


PERSON_MAX_INVALID = 50
"""Refused answers per decision at a table with a person, before the fault policy acts."""


class LobbyLink(BotLink):
    """A lobby stream as trio sees it; it can also end with a retry hint."""

    person_clock: TimeControl | None = None
    """A person's stream (`arena.web.lobbyseat`): the clock, meant for people, of its tables."""

    def close_with_retry(self, code: grpc.StatusCode, details: str, retry_after_ms: int) -> None:
        """From trio: end the stream with `code` and a retry hint."""
        if self.open:
            self.open = False
            self.bridge.to_aio(self.outbox.put_nowait, CloseWithRetry(code, details, retry_after_ms))


@dataclass
class LobbyStream:
    link: LobbyLink
    bot: str
    variants: tuple[str, ...]
    capacity: int
    waiting_since: float
    running: set[str] = field(default_factory=set)


@dataclass
class ArenaMatch:
    runner: MatchRunner
    bots: list[str]
    streams: list[LobbyStream]  # by seat; with a cluster, only the seats whose stream is here


class LobbyState:
    """The standing arena's live state, owned by the trio thread."""

    def __init__(
        self, hub: Hub, store: Store, config: ArenaConfig, nursery: trio.Nursery, cluster: Cluster | None
    ) -> None:
        self.hub = hub
        self.store = store
        self.config = config
        self.nursery = nursery
        self.cluster = cluster
        self.draining = False
        self.drained = False
        self.variants: dict[str, Variant] = {name: find_variant(name) for name in config.variants}
        self.streams: dict[int, LobbyStream] = {}
        self.matches: dict[str, ArenaMatch] = {}
        self.running_by_bot: Counter[str] = Counter()
        self.revoked: set[str] = set()
        self.mu: dict[tuple[str, str], float] = {}  # (variant, bot) -> rating mean, for seating
        self.meetings: dict[str, dict[tuple[str, str], int]] = {name: {} for name in config.variants}
        self.rng = random.Random(secrets.randbits(64))
        self._limiter = trio.CapacityLimiter(1)
        self._cluster_limiter = trio.CapacityLimiter(1)
        self._beat_limiter = trio.CapacityLimiter(1)

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a store call on a worker thread."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def cdb(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a call of the cluster (its own connection) on a worker thread: rounds and seats
        never queue behind the recording of results."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._cluster_limiter)

    async def beat(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a heartbeat's call on a worker thread: heartbeats never queue behind rounds."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._beat_limiter)

    def connected_bots(self) -> set[str]:
        """The bots with an open lobby stream."""
        return {s.bot for s in self.streams.values()}

    def leave_places_soon(self, cluster: Cluster, stream: int) -> None:
        """Give up the lobby places of a stream that has left, in the background."""
        self.nursery.start_soon(self._leave_places, cluster, stream)

    async def _leave_places(self, cluster: Cluster, stream: int) -> None:
        """Until the store has it: a place left behind would be booked for a bot that is gone."""
        delay = 0.5
        while True:
            try:
                await self.cdb(cluster.leave, stream)
                return
            except Exception as exc:
                if not is_outage(exc):
                    log.error("cannot give up a left stream's lobby places", exc_info=exc)
                    return
            await trio.sleep(delay)
            delay = min(2 * delay, 5.0)

    def pause(self, pause: Pause) -> None:
        """Tell the bot's lobby streams why, and close them; its running matches play on."""
        wait = max(0, pause.until_ms - now_ms())
        for stream in [s for s in self.streams.values() if s.bot == pause.bot]:
            stream.link.send(pb.LobbyMessage(paused=pb.Paused(reason=pause.reason, until_ms=pause.until_ms)))
            stream.link.close_with_retry(
                grpc.StatusCode.FAILED_PRECONDITION, f"bot {pause.bot} is paused: {pause.reason}", wait
            )
            self.streams.pop(stream.link.id, None)
        log.warning("bot paused", bot=pause.bot, reason=pause.reason, until_ms=pause.until_ms)


def log_failure(event: str, exc: Exception) -> None:
    """A store that does not answer is an outage to wait out (a warning, without a traceback);
    anything else is a fault of the server's, logged with its traceback."""
    if is_outage(exc):
        log.warning(event, error=str(exc).strip())
    else:
        log.error(event, exc_info=exc)
