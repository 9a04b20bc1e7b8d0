"""The standing arena as a service of the server: lobby streams and the admin calls for bots.

`StandingArena` is what `arena serve` hands the server (`server.app.HostedService`): on the
trio side it starts the `Lobby`; on the grpc-io thread it gives the lobby's servicer and the
bot admin calls. Store calls run in the loop's default executor (the store is thread-safe);
live state is the trio-side `Lobby`'s, reached through the bridge.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import structlog
import trio

from ..live import Hub
from ..server.auth import read_bearer, unknown_token
from ..server.bridge import Bridge, Close
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .cluster import Cluster, TakenForDeadError
from .config import ArenaConfig
from .hosted import HostedBots, HostedConfig, Runtime
from .joining import Refusal
from .lobby import Lobby
from .state import CloseWithRetry, LobbyLink
from .store import BotRecord, Standing, Store, StoreError, UnknownBotError, is_outage

log = structlog.get_logger()

STORE_DOWN = "this server cannot reach the arena's store just now: try again, or another server"
RETRY_AFTER = "retry-after-ms"
"""Trailing metadata of a refusal that may be tried again: milliseconds to wait, as text."""


class StandingArena:
    """The standing arena hosted by a server (`serve(..., service=StandingArena(store, config))`).

    With a PostgreSQL store it is one of the servers of an arena sharing that store
    (`arena.standing.cluster`): `address` is the host:port the other servers' bots are sent to
    for the matches hosted here (without one, this server hosts only tables whose bots all wait
    on it). A SQLite store is one server's alone, as it always was.
    """

    def __init__(
        self,
        store: Store,
        config: ArenaConfig | None = None,
        address: str = "",
        hosting: tuple[Runtime, HostedConfig] | None = None,
    ) -> None:
        self.store = store
        self.config = config or ArenaConfig()
        self.lobby: Lobby | None = None
        self.hosting = hosting  # the submitted bots this server runs itself (`hosted`)
        self.hosted: HostedBots | None = None
        self.cluster: Cluster | None = None
        store.claim_for_server()  # SQLite: one server per store (StoreInUseError names the other)
        if store.postgres:
            self.cluster = Cluster(
                store,
                address,
                dead_after_s=self.config.server_dead_after_s,
                max_matches_per_bot=self.config.max_matches_per_bot,
            )

    async def start(self, hub: Hub, nursery: trio.Nursery) -> None:
        if self.cluster is not None:
            await trio.to_thread.run_sync(self.cluster.register)
            log.info(
                "joined the arena's servers", server_id=self.cluster.server_id, address=self.cluster.address
            )
        self.lobby = Lobby(hub, self.store, self.config, nursery, self.cluster)
        # Results an earlier run kept on disk (the store did not answer) first: a match whose
        # replay is complete is recorded as finished, not aborted as cut off.
        pending = await self.lobby.results.pending()
        if pending and await self.lobby.results.settle_all():
            log.info("results kept on disk by an earlier run recorded", matches=pending)
        if self.cluster is None:
            aborted = await trio.to_thread.run_sync(self.store.abort_unfinished)
            if aborted:
                log.warning("matches cut off by the last stop recorded as aborted", matches=aborted)
        else:
            for match_id, reason in await trio.to_thread.run_sync(self.cluster.reap):
                log.warning("match of a stopped server recorded as aborted", match_id=match_id, reason=reason)
        nursery.start_soon(self.lobby.run)
        if self.hosting is not None:
            self.hosted = HostedBots(self.lobby, *self.hosting)
            nursery.start_soon(self.hosted.run)

    async def drain(self) -> None:
        """Finish the matches hosted here and take no new ones (`arena serve`'s SIGTERM, with a cluster)."""
        if self.lobby is not None:
            await self.lobby.drain()

    def servicers(self, bridge: Bridge) -> tuple[LobbyServicer, StandingAdmin]:
        assert self.lobby is not None, "start() runs first"
        return LobbyServicer(self.lobby, self.store, bridge), StandingAdmin(self.store, self.lobby, bridge)

    def describe(self) -> str:
        return self.store.describe()

    def add_services(self, server: Any) -> list[str]:
        """The hosting runtime's gRPC services (submissions, docs/SUBMIT.md), on a hosting server."""
        return [] if self.hosting is None else self.hosting[0].add_services(server)


async def refuse(context: grpc.aio.ServicerContext[Any, Any], refusal: Refusal) -> None:
    if refusal.retry_after_ms:
        context.set_trailing_metadata(((RETRY_AFTER, str(refusal.retry_after_ms)),))
    await context.abort(refusal.code, refusal.details)


class LobbyServicer(pb_grpc.LobbyServiceServicer):
    def __init__(self, lobby: Lobby, store: Store, bridge: Bridge) -> None:
        self.lobby = lobby
        self.store = store
        self.bridge = bridge

    async def Join(self, request: pb.LobbyJoin, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        token, problem = read_bearer(context.invocation_metadata(), "bot token")
        loop = asyncio.get_running_loop()
        bot: BotRecord | None = None
        if token:
            bot = await loop.run_in_executor(None, self.store.bot_by_token, token)
        if bot is None:
            why = problem or unknown_token("bot token", "no bot registered in this arena has it")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)
        assert bot is not None
        ratings = await loop.run_in_executor(None, self.store.ratings_of, bot.name)
        link = LobbyLink(self.bridge, context.peer())
        cluster = self.lobby.cluster
        if cluster is None:
            refusal: Refusal | None = await self.bridge.call_in_trio(
                self.lobby.join, bot, request, link, ratings
            )
            if refusal is not None:
                await refuse(context, refusal)
        try:
            if cluster is not None:  # the bot's places are counted over every server, in the store
                refusal, asked = await self.bridge.call_in_trio(self.lobby.check_join, bot, request)
                if refusal is None:
                    try:
                        granted = await loop.run_in_executor(
                            None, cluster.claim_places, bot.name, link.id, asked, request.max_matches or 1
                        )
                    except Exception as exc:  # an outage, or this server taken for dead
                        if not (is_outage(exc) or isinstance(exc, TakenForDeadError)):
                            raise
                        await refuse(context, Refusal(grpc.StatusCode.UNAVAILABLE, STORE_DOWN, 2_000))
                    if granted < 1:
                        limit = self.lobby.config.max_matches_per_bot
                        refusal = Refusal(
                            grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"bot {bot.name} already holds {limit} places on the arena's servers, the limit",
                            2_000,  # a place comes back as soon as one of its matches ends
                        )
                    else:
                        await self.bridge.call_in_trio(self.lobby.admit, bot, asked, granted, link, ratings)
                if refusal is not None:
                    await refuse(context, refusal)
            while True:
                item = await link.outbox.get()
                if isinstance(item, Close):
                    if item.code is not None:
                        retry = item.retry_after_ms if isinstance(item, CloseWithRetry) else 0
                        await refuse(context, Refusal(item.code, item.details, retry))
                    return
                await context.write(item)
        except asyncio.CancelledError:
            return  # the bot left the lobby: an ordinary end, not an error to log
        finally:
            self.bridge.to_trio(self.lobby.leave, link)


class StandingAdmin:
    """The admin calls about registered bots and standings (`server.app.BotAdmin`)."""

    def __init__(self, store: Store, lobby: Lobby, bridge: Bridge) -> None:
        self.store = store
        self.lobby = lobby
        self.bridge = bridge

    async def _bot_call(self, context: grpc.aio.ServicerContext[Any, Any], fn: Any, *args: Any) -> Any:
        try:
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
        except StoreError as exc:
            unknown = isinstance(exc, UnknownBotError)
            code = grpc.StatusCode.NOT_FOUND if unknown else grpc.StatusCode.INVALID_ARGUMENT
            await context.abort(code, str(exc))

    async def _infos(self, bots: list[BotRecord]) -> list[pb.BotInfo]:
        connected: set[str] = await self.bridge.call_in_trio(self.lobby.connected_bots)
        return [bot_info(bot, bot.name in connected) for bot in bots]

    async def _info(self, bot: BotRecord) -> pb.BotInfo:
        [info] = await self._infos([bot])
        return info

    async def RegisterBot(
        self, request: pb.RegisterBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.RegisterBotResponse:
        variants = list(request.variants)
        unknown = [v for v in variants if v not in self.lobby.config.variants]
        if unknown:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the arena runs no {unknown[0]!r}")
        bot, token = await self._bot_call(context, self.store.register_bot, request.name, variants)
        return pb.RegisterBotResponse(bot=await self._info(bot), token=token)

    async def ListBots(
        self, request: pb.ListBotsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListBotsResponse:
        bots = await self._bot_call(context, self.store.bots)
        return pb.ListBotsResponse(bots=await self._infos(bots))

    async def RevokeBot(
        self, request: pb.BotNameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.BotInfo:
        bot = await self._bot_call(context, self.store.revoke_bot, request.name)
        await self.bridge.call_in_trio(self.lobby.revoke, bot.name)
        return await self._info(bot)

    async def ResumeBot(
        self, request: pb.BotNameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.BotInfo:
        return await self._info(await self._bot_call(context, self.store.resume_bot, request.name))

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetStandingsResponse:
        table = await self._bot_call(context, self.store.standings, request.variant, request.recent or 5)
        return pb.GetStandingsResponse(standings=[standing_message(s) for s in table])


def bot_info(bot: BotRecord, connected: bool = False) -> pb.BotInfo:
    state = bot.state()
    return pb.BotInfo(
        name=bot.name,
        variants=list(bot.variants),
        state=state,
        reason=bot.pause_reason if state == "paused" else "",
        paused_until_ms=bot.paused_until_ms if state == "paused" else 0,
        registered_ms=bot.registered_ms,
        connected=connected,
    )


def standing_message(standing: Standing) -> pb.Standing:
    return pb.Standing(
        bot=standing.bot,
        variant=standing.variant,
        rating=standing.rating,
        mu=standing.mu,
        sigma=standing.sigma,
        matches=standing.matches,
        deals=standing.deals,
        mean_score_per_deal=standing.mean_score_per_deal,
        decisions=standing.decisions,
        faults=standing.faults,
        fault_rate=standing.fault_rate,
        state=standing.state,
        hello_name=standing.hello_name or "",
        hello_version=standing.hello_version or "",
        hosted_version=standing.hosted_version or 0,
        # Unset, not 0, where nothing was adjusted (american): a 0 would read as a measured mean.
        mean_adjusted_score_per_deal=standing.mean_adjusted_score_per_deal,
        adjusted_deals=standing.adjusted_deals,
        recent=[
            pb.RecentMatch(
                match_id=m.match_id,
                finished_ms=m.finished_ms,
                seat=m.seat,
                seats=m.seats,
                scores=m.scores,
                termination=m.termination,
                replay=m.replay,
                adjusted_scores=_adjusted_scores(m.adjusted_scores),
            )
            for m in standing.recent
        ],
    )


def _adjusted_scores(scores: list[float | None]) -> list[float]:
    """A match's adjusted scores by seat, or none when any seat's is missing (not adjusted)."""
    present = [s for s in scores if s is not None]
    return present if len(present) == len(scores) else []
