"""The standing arena on the trio thread: lobby streams, tables, results, pauses.

Registered bots wait in the lobby on one or more streams; every tick the lobby forms
tables (`matchmaking.form_tables`) and starts each match through the hub's referee,
exactly like an admin-created match.  When a match ends, its replay is summarised,
the ratings are updated with the OpenSkill code the ladder uses too (`arena.ratings`),
and everything is written to the store in one transaction.  The store is touched only from worker threads.

With a `Cluster` (a PostgreSQL store shared by several servers, `arena.standing.cluster`) the
tables are formed in the database over every server's waiting bots instead, this server hosts
the tables it books and hands the other servers the seats of their bots, and it beats its
heartbeat and records the matches of servers that stopped beating as aborted.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from ..engine import VARIANT_NAMES, Variant, find_variant
from ..live import Hub
from ..ratings import Ratings
from ..referee.runner import MatchConfig, MatchRunner, MatchState
from ..referee.seat import TimeControl, hello_refusal
from ..replay.summary import read_results
from ..server.bridge import BotLink, Close
from ..v1 import arena_pb2 as pb
from .cluster import BookedTable, Cluster, TakenForDeadError, release_places
from .matchmaking import Candidate, form_tables, pair_key
from .store import BotRecord, MatchResult, NotRunningError, Pause, SeatResult, Store, now_ms

log = structlog.get_logger()

Rate = Callable[[dict[str, tuple[float, float]]], dict[str, tuple[float, float]]]
"""A match's rating update: the seats' stored (mu, sigma) to their new ones."""

RECORD_TIMEOUT_S = 30.0
"""How long a stopping server waits to store a result its bots were already told of."""


@dataclass(frozen=True)
class ArenaConfig:
    """How the standing arena runs; `arena serve --arena-config FILE` reads it from TOML."""

    variants: tuple[str, ...] = VARIANT_NAMES
    deals: int = 0  # dealer turns per match; 0 = one per seat
    per_decision_ms: int = 5_000
    bank_ms: int = 30_000
    increment_ms: int = 0
    latency_allowance_ms: int = 0  # see TimeControl; 0 charges a bot's network to its clock
    max_matches_per_bot: int = 4  # at once, over all of a bot's lobby streams
    joins_per_minute: float = 20.0  # per bot, after a burst of `join_burst`
    join_burst: int = 5
    pause_after: int = 3  # matches in a row with a fault pause a bot ...
    pause_s: float = 600.0  # ... for this long (or until `arena bots resume`)
    reconnect_grace_s: float = 10.0
    start_timeout_s: float = 30.0
    tick_s: float = 0.2  # how often tables are formed
    revocation_poll_s: float = 1.0  # how often the store is read for tokens revoked by `arena bots`
    # Several servers on one PostgreSQL store (docs/ARENA.md): how often a server says it lives,
    # and how long the others wait for it before recording its matches as aborted.
    heartbeat_s: float = 1.0
    server_dead_after_s: float = 5.0

    def __post_init__(self) -> None:
        for name in self.variants:
            find_variant(name)  # raises ConfigError with the known names
        if not self.variants:
            raise ValueError("the arena runs at least one variant")
        if self.latency_allowance_ms < 0:
            raise ValueError("latency_allowance_ms is 0 or more")
        for name in ("max_matches_per_bot", "join_burst", "pause_after"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1")
        for name in (
            "joins_per_minute",
            "pause_s",
            "tick_s",
            "revocation_poll_s",
            "start_timeout_s",
            "heartbeat_s",
            "server_dead_after_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.server_dead_after_s < 2 * self.heartbeat_s:
            raise ValueError("server_dead_after_s is at least twice heartbeat_s")

    @classmethod
    def from_toml(cls, path: Path) -> ArenaConfig:
        """Read the `[arena]` table of a TOML file; unknown keys are an error."""
        with path.open("rb") as file:
            data = tomllib.load(file).get("arena", {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"{path}: unknown [arena] keys {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        if "variants" in data:
            data["variants"] = tuple(data["variants"])
        try:
            return replace(cls(), **data)
        except TypeError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @property
    def time_control(self) -> TimeControl:
        return TimeControl(self.per_decision_ms, self.bank_ms, self.increment_ms, self.latency_allowance_ms)


@dataclass
class Refusal:
    """A lobby join the server turns away: a gRPC status, and when to try again."""

    code: grpc.StatusCode
    details: str
    retry_after_ms: int = 0


@dataclass(frozen=True)
class CloseWithRetry(Close):
    retry_after_ms: int = 0


class LobbyLink(BotLink):
    """A lobby stream as trio sees it; it can also end with a retry hint."""

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


DRAINING = "this server is draining before it stops: join another server of the arena"


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


class Lobby:
    """The standing arena's live state, owned by the trio thread."""

    def __init__(
        self,
        hub: Hub,
        store: Store,
        config: ArenaConfig,
        nursery: trio.Nursery,
        cluster: Cluster | None = None,
    ) -> None:
        self.hub = hub
        self.store = store
        self.config = config
        self.nursery = nursery
        self.cluster = cluster
        self.draining = False
        self.drained = False
        self._seats_waiting = trio.Event()  # another server booked seats of this server's streams
        self.variants: dict[str, Variant] = {name: find_variant(name) for name in config.variants}
        self.streams: dict[int, LobbyStream] = {}
        self.matches: dict[str, ArenaMatch] = {}
        self.running_by_bot: Counter[str] = Counter()
        self.buckets: dict[str, JoinBucket] = {}
        self.revoked: set[str] = set()
        self.mu: dict[tuple[str, str], float] = {}  # (variant, bot) -> rating mean, for seating
        self.meetings: dict[str, dict[tuple[str, str], int]] = {name: {} for name in config.variants}
        self.rng = random.Random(secrets.randbits(64))
        self.matches_finished = 0
        self._limiter = trio.CapacityLimiter(1)  # one store call at a time
        self._beat_limiter = trio.CapacityLimiter(1)  # heartbeats do not queue behind results
        self._cluster_limiter = trio.CapacityLimiter(1)
        self._round = 0

    async def db(self, fn: Any, *args: Any) -> Any:
        """Run a store call on a worker thread."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def cdb(self, fn: Any, *args: Any) -> Any:
        """Run a call of the cluster (its own connection) on a worker thread: rounds and seats
        never queue behind the recording of results."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self._cluster_limiter)

    async def run(self) -> None:
        """Load what seating needs, then form tables and watch for revocations until cancelled."""
        try:
            if self.cluster is None:
                for (variant, one, other), count in (await self.db(self.store.pair_counts)).items():
                    if variant in self.meetings:
                        self.meetings[variant][pair_key(one, other)] = count
            self.revoked = await self.db(self.store.revoked_bots)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch_revocations)
                if self.cluster is not None:
                    nursery.start_soon(self._heartbeats, self.cluster)
                    nursery.start_soon(self._listen, self.cluster)
                    nursery.start_soon(self._deliver_seats, self.cluster)
                while True:
                    try:
                        if self.cluster is None:
                            self.form_tables()
                        elif self.streams and not self.draining:
                            await self._cluster_round(self.cluster)
                    except Exception:  # a bad table must not stop the arena, nor the server
                        log.exception("forming tables failed")
                    await trio.sleep(self.config.tick_s)
        finally:
            if self.cluster is not None:  # its matches left running are the others' to abort now
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    try:
                        await trio.to_thread.run_sync(self.cluster.set_state, "stopped")
                    finally:
                        await trio.to_thread.run_sync(self.cluster.close)

    async def drain(self) -> None:
        """Take no new tables, send the bots in the lobby to the other servers, and return once
        every match hosted here is over and recorded."""
        self.draining = True
        if self.cluster is not None:
            await trio.to_thread.run_sync(self.cluster.set_state, "draining", limiter=self._beat_limiter)
        for stream in list(self.streams.values()):
            stream.link.close(grpc.StatusCode.UNAVAILABLE, DRAINING)
            self.leave(stream.link)
        log.info("draining", matches=len(self.matches))
        while self.matches:
            await trio.sleep(0.1)
        self.drained = True  # its heartbeats end here
        if self.cluster is not None:
            await trio.to_thread.run_sync(self.cluster.set_state, "stopped", limiter=self._beat_limiter)
        log.info("drained")

    # ------------------------------------------------------------------ joining

    def join(
        self, bot: BotRecord, request: pb.LobbyJoin, link: LobbyLink, ratings: dict[str, float]
    ) -> Refusal | None:
        """A bot's lobby stream asks to wait for tables (trio thread; `bot` was just read from the store)."""
        refusal, asked = self.check_join(bot, request)
        if refusal is not None:
            return refusal
        limit = self.config.max_matches_per_bot
        held = sum(s.capacity for s in self.streams.values() if s.bot == bot.name)
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
        """Whether the bot may join now, and the variants it asks for (trio thread)."""
        if self.draining:
            return Refusal(grpc.StatusCode.UNAVAILABLE, DRAINING), []
        return self._check(bot, request)

    def _check(self, bot: BotRecord, request: pb.LobbyJoin) -> tuple[Refusal | None, list[str]]:
        if bot.revoked or bot.name in self.revoked:
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
        bucket = self.buckets.setdefault(
            bot.name, JoinBucket(self.config.join_burst, self.config.joins_per_minute)
        )
        wait = bucket.take()
        if wait:
            return Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many lobby joins: at most {self.config.join_burst} at once, "
                f"then {self.config.joins_per_minute:g} a minute",
                wait,
            ), []
        offered = [v for v in self.config.variants if bot.plays(v)]
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
            self.mu[(variant, bot.name)] = mu
        self.streams[link.id] = LobbyStream(link, bot.name, tuple(asked), granted, trio.current_time())
        link.send(pb.LobbyMessage(welcome=pb.Welcome(bot_name=bot.name, variants=asked, max_matches=granted)))
        log.info("lobby join", bot=bot.name, variants=asked, max_matches=granted)

    def leave(self, link: LobbyLink) -> None:
        """The stream ended; its matches play on."""
        stream = self.streams.pop(link.id, None)
        if stream is not None:
            log.info("lobby leave", bot=stream.bot)
        if self.cluster is not None:
            self.nursery.start_soon(self._leave_places, self.cluster, link.id)

    async def _leave_places(self, cluster: Cluster, stream: int) -> None:
        try:
            await self.cdb(cluster.leave, stream)
        except Exception:
            log.exception("cannot give up a left stream's lobby places")

    def connected_bots(self) -> set[str]:
        """The bots with an open lobby stream."""
        return {s.bot for s in self.streams.values()}

    # ------------------------------------------------------------------ tables

    def form_tables(self) -> None:
        order = list(self.config.variants)
        self._round += 1
        shift = self._round % len(order)  # no variant always gets the first pick
        for name in order[shift:] + order[:shift]:
            candidates = [
                Candidate(s.bot, s.link.id, self.mu.get((name, s.bot), 25.0), s.waiting_since)
                for s in self.streams.values()
                if name in s.variants and self._free(s)
            ]
            for table in form_tables(candidates, self.variants[name].seats, self.meetings[name]):
                # A bot on several streams may have reached its limit at an earlier table.
                if all(self._free(self.streams[c.stream]) for c in table):
                    self._start(name, table)

    def _free(self, stream: LobbyStream) -> bool:
        return (
            len(stream.running) < stream.capacity
            and self.running_by_bot[stream.bot] < self.config.max_matches_per_bot
        )

    def _start(self, variant_name: str, table: list[Candidate]) -> None:
        self.rng.shuffle(table)
        variant = self.variants[variant_name]
        config = MatchConfig(
            variant=variant,
            deals=self.config.deals or variant.seats,
            seed=self.rng.getrandbits(63),
            seat_names=tuple(c.bot for c in table),
            time_control=self.config.time_control,
            fault_policy="substitute",
            reconnect_grace_s=self.config.reconnect_grace_s,
            start_timeout_s=self.config.start_timeout_s,
        )
        runner = self.hub.create_match(config)
        streams = [self.streams[c.stream] for c in table]
        now = trio.current_time()
        for stream in streams:
            stream.running.add(runner.match_id)
            stream.waiting_since = now  # to the back of the queue
            self.running_by_bot[stream.bot] += 1
        meetings = self.meetings[variant_name]
        for i, one in enumerate(table):
            for other in table[i + 1 :]:
                key = pair_key(one.bot, other.bot)
                meetings[key] = meetings.get(key, 0) + 1
        arena_match = ArenaMatch(runner, [c.bot for c in table], streams)
        self.matches[runner.match_id] = arena_match
        names = list(config.seat_names)
        for seat, stream in enumerate(streams):
            seated = pb.Seated(
                match_id=runner.match_id,
                seat_token=runner.seats[seat].token,
                seat=seat,
                variant=variant_name,
                seat_names=names,
            )
            stream.link.send(pb.LobbyMessage(seated=seated))
        runner.log.info("arena match seated", bots=names)
        self.nursery.start_soon(self._follow, arena_match, now_ms())

    # ------------------------------------------------------------------ tables with a cluster

    async def _cluster_round(self, cluster: Cluster) -> None:
        order = list(self.config.variants)
        self._round += 1
        shift = self._round % len(order)
        tables: list[BookedTable] = await self.cdb(
            cluster.book_round,
            {name: variant.seats for name, variant in self.variants.items()},
            order[shift:] + order[:shift],
            lambda name: self.config.deals or self.variants[name].seats,
            lambda: self.rng.getrandbits(63),
        )
        if not tables:
            return
        started = now_ms()
        for table in tables:
            self._host(cluster, table, started)
        # Only now that the matches exist here may the other servers' bots be sent to them.
        await self.cdb(cluster.publish, tables)

    def _host(self, cluster: Cluster, table: BookedTable, started_ms: int) -> None:
        variant = self.variants[table.variant]
        config = MatchConfig(
            variant=variant,
            deals=table.deals,
            seed=table.seed,
            seat_names=tuple(table.bots),
            time_control=self.config.time_control,
            fault_policy="substitute",
            reconnect_grace_s=self.config.reconnect_grace_s,
            start_timeout_s=self.config.start_timeout_s,
        )
        runner = self.hub.create_match(config, dict(enumerate(table.tokens)), table.match_id)
        streams = []
        now = trio.current_time()
        for seat, place in enumerate(table.places):
            if place.server_id != cluster.server_id:
                continue
            stream = self.streams.get(place.stream)
            if stream is None:  # it left as it was booked: make sure its places go
                self.nursery.start_soon(self._leave_places, cluster, place.stream)
                continue
            streams.append(stream)
            stream.running.add(runner.match_id)
            stream.waiting_since = now
            seated = pb.Seated(
                match_id=runner.match_id,
                seat_token=table.tokens[seat],
                seat=seat,
                variant=table.variant,
                seat_names=table.bots,
                address=cluster.address,
            )
            stream.link.send(pb.LobbyMessage(seated=seated))
        arena_match = ArenaMatch(runner, table.bots, streams)
        self.matches[runner.match_id] = arena_match
        runner.log.info("arena match seated", bots=table.bots, host=cluster.server_id)
        self.nursery.start_soon(self._follow_hosted, cluster, arena_match, started_ms)

    async def _follow_hosted(self, cluster: Cluster, arena_match: ArenaMatch, started_ms: int) -> None:
        """As `_follow`, for a match booked in the store by this server's round."""
        runner = arena_match.runner
        try:
            await runner.done.wait()
            ended = now_ms()  # before its places are freed: the next match of a bot starts later
            clean = [seat.index for seat in runner.seats if not seat.faults]
            await self.cdb(cluster.release, runner.match_id, clean, ended)
            with trio.CancelScope(shield=True), trio.move_on_after(RECORD_TIMEOUT_S):
                await self._record(arena_match, ended)
        except Exception:
            runner.log.exception("arena match not recorded")
        finally:
            for stream in arena_match.streams:
                stream.running.discard(runner.match_id)
            self.matches.pop(runner.match_id, None)

    async def _deliver_seats(self, cluster: Cluster) -> None:
        """Hand this server's streams the seats other servers booked for them."""
        while True:
            with trio.move_on_after(1.0):  # a NOTIFY wakes it at once; polling in case one was lost
                await self._seats_waiting.wait()
            self._seats_waiting = trio.Event()
            try:
                deliveries = await self.cdb(cluster.deliveries)
            except Exception:
                log.exception("cannot read the seats booked by other servers")
                continue
            for d in deliveries:
                stream = self.streams.get(d.stream)
                if stream is None:  # it left as it was booked: make sure its places go
                    log.warning("seat for a stream that has left", match_id=d.match_id, seat=d.seat)
                    self.nursery.start_soon(self._leave_places, cluster, d.stream)
                    continue
                stream.running.add(d.match_id)
                stream.waiting_since = trio.current_time()
                seated = pb.Seated(
                    match_id=d.match_id,
                    seat_token=d.seat_token,
                    seat=d.seat,
                    variant=d.variant,
                    seat_names=d.seat_names,
                    address=d.address,
                )
                stream.link.send(pb.LobbyMessage(seated=seated))

    async def _listen(self, cluster: Cluster) -> None:
        token = trio.lowlevel.current_trio_token()

        def wake() -> None:
            trio.from_thread.run_sync(lambda: self._seats_waiting.set(), trio_token=token)

        while True:
            stop = threading.Event()
            try:
                await trio.to_thread.run_sync(cluster.listen, wake, stop, abandon_on_cancel=True)
            except Exception:
                log.exception("LISTEN for seats failed; polling until it is back")
            finally:
                stop.set()
            await trio.sleep(1.0)

    def has_drained(self) -> bool:
        return self.drained

    async def _heartbeats(self, cluster: Cluster) -> None:
        """Say this server lives; record the matches of servers that stopped saying so as aborted."""
        while not self.drained:
            try:
                await trio.to_thread.run_sync(cluster.heartbeat, limiter=self._beat_limiter)
                aborted = await trio.to_thread.run_sync(cluster.reap, limiter=self._beat_limiter)
            except TakenForDeadError:
                if self.has_drained():
                    return  # it said itself that it stopped (while this beat was on its way)
                log.critical("taken for dead by the other servers; stopping")
                raise
            except Exception:
                log.exception("heartbeat failed")
            else:
                for match_id, reason in aborted:
                    log.warning(
                        "match of a dead server recorded as aborted", match_id=match_id, reason=reason
                    )
            await trio.sleep(self.config.heartbeat_s)

    async def _follow(self, arena_match: ArenaMatch, seated_ms: int) -> None:
        """Record the match when it ends; a stop before that leaves it 'running' → aborted on restart."""
        runner = arena_match.runner
        c = runner.config
        try:
            await self.db(
                self.store.start_match,
                runner.match_id,
                c.variant.name,
                c.seed,
                c.deals,
                arena_match.bots,
                seated_ms,
            )
            await runner.done.wait()
            ended = now_ms()
            # A bot without a fault in this match may be seated again while the result is stored;
            # one with a fault waits: this result may pause it.
            self._release(arena_match, [not seat.faults for seat in runner.seats])
            # A result the bots were told of is stored even when the server is stopping.
            with trio.CancelScope(shield=True), trio.move_on_after(RECORD_TIMEOUT_S):
                await self._record(arena_match, ended)
        except Exception:
            runner.log.exception("arena match not recorded")
        finally:
            self._release(arena_match, [True] * len(arena_match.streams))
            self.matches.pop(runner.match_id, None)

    def _release(self, arena_match: ArenaMatch, which: list[bool]) -> None:
        """Free the seats `which` selects (by seat), each once."""
        match_id = arena_match.runner.match_id
        for stream, chosen in zip(arena_match.streams, which, strict=True):
            if chosen and match_id in stream.running:
                stream.running.discard(match_id)
                self.running_by_bot[stream.bot] -= 1

    async def _record(self, arena_match: ArenaMatch, ended_ms: int) -> None:
        runner = arena_match.runner
        variant = runner.config.variant.name
        if runner.state is not MatchState.FINISHED or runner.replay_path is None:
            await self.db(self._abort, runner.match_id, "the match did not finish (its server stopped)")
            return
        result, rate = await trio.to_thread.run_sync(self._summarise, arena_match)  # no store call
        result.ended_ms = ended_ms
        try:
            pauses: list[Pause] = await self.db(
                self.store.finish_match,
                result,
                self.config.pause_after,
                int(self.config.pause_s * 1000),
                None if self.cluster is None else lambda db: release_places(db, [runner.match_id]),
                rate,
            )
        except NotRunningError:
            runner.log.warning("not rated: another server recorded the match as aborted")
            return
        for bot, (mu, _sigma) in result.ratings.items():
            self.mu[(variant, bot)] = mu
        self.matches_finished += 1
        for pause in pauses:
            self.pause(pause)

    def _abort(self, match_id: str, reason: str) -> None:
        """Record the match as aborted (worker thread)."""
        self.store.abort_match(match_id, reason)
        if self.cluster is not None:
            self.cluster.release(match_id)

    def _summarise(self, arena_match: ArenaMatch) -> tuple[MatchResult, Rate]:
        """The match's result from its replay, and how it changes the seats' ratings (worker thread)."""
        runner = arena_match.runner
        assert runner.replay_path is not None
        variant = runner.config.variant.name
        bots = arena_match.bots
        results = read_results(runner.replay_path, len(bots))
        deals, faults, decisions, hellos = results.deals, results.faults, results.decisions, results.hellos
        forfeited = runner.forfeited

        def rate(stored: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
            ratings = Ratings(bots, stored)
            ratings.update(bots, deals, forfeited)
            return ratings.of(bots)

        seats = []
        for seat, bot in enumerate(bots):
            mine = [f"{f.kind}: {f.detail}" for f in faults if f.seat == seat]
            seats.append(
                SeatResult(
                    bot=bot,
                    score=runner.match.scores[seat],
                    deals=sum(1 for d in deals if d.active[seat]),
                    decisions=decisions[seat],
                    faults=len(mine),
                    fault_kinds=mine,
                    hello=hellos[seat] if hellos[seat] != ("", "") else None,
                )
            )
        result = MatchResult(
            match_id=runner.match_id,
            variant=variant,
            termination=runner.termination,
            replay=runner.replay_path.name,
            seats=seats,
            ratings={},
        )
        return result, rate

    # ------------------------------------------------------------------ cutting bots off

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

    def revoke(self, name: str) -> None:
        """Refuse the bot from now on and close every stream it has open, lobby and matches."""
        if name in self.revoked:
            return
        self.revoked.add(name)
        for stream in [s for s in self.streams.values() if s.bot == name]:
            stream.link.close(grpc.StatusCode.UNAUTHENTICATED, "the bot token was revoked")
            self.streams.pop(stream.link.id, None)
        for arena_match in self.matches.values():
            runner = arena_match.runner
            for seat, bot in enumerate(arena_match.bots):
                if bot == name:
                    # The seat token dies with the bot token; the match's fault policy plays the seat.
                    self.hub.revoke_seat(runner.seats[seat].token)
                    link = runner.seats[seat].link
                    if link is not None:
                        link.close(grpc.StatusCode.UNAUTHENTICATED, "the bot token was revoked")
                        runner.detach(seat, link)
        log.warning("bot revoked", bot=name)

    async def _watch_revocations(self) -> None:
        """`arena bots revoke` writes only to the store; the server notices within a poll."""
        while True:
            await trio.sleep(self.config.revocation_poll_s)
            try:
                revoked: set[str] = await self.db(self.store.revoked_bots)
            except Exception:
                log.exception("cannot read revocations from the store")
                continue
            for name in sorted(revoked - self.revoked):
                self.revoke(name)
            if self.cluster is None:
                continue
            try:  # another server's result may have paused a bot that waits here
                paused: list[Pause] = await self.cdb(self.cluster.paused_bots)
            except Exception:
                log.exception("cannot read pauses from the store")
                continue
            here = self.connected_bots()
            for pause in paused:
                if pause.bot in here:
                    self.pause(pause)
