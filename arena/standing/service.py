"""The standing arena's gRPC side (grpc-io thread): lobby streams and the admin calls for bots.

Store calls run in the loop's default executor (the store is thread-safe); live state is
the trio-side `Lobby`'s, reached through the bridge.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import grpc

from ..server.auth import bearer_token
from ..server.bridge import BotLink, Bridge, Close
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .lobby import Lobby, Refusal
from .store import BotRecord, Standing, Store, StoreError, UnknownBotError

RETRY_AFTER = "retry-after-ms"
"""Trailing metadata of a refusal that may be tried again: milliseconds to wait, as text."""


@dataclass(frozen=True)
class CloseWithRetry(Close):
    retry_after_ms: int = 0


class LobbyLink(BotLink):
    def close_with_retry(self, code: grpc.StatusCode, details: str, retry_after_ms: int) -> None:
        """From trio: end the stream with `code` and a retry hint."""
        if self.open:
            self.open = False
            self.bridge.to_aio(self.outbox.put_nowait, CloseWithRetry(code, details, retry_after_ms))


async def refuse(context: grpc.aio.ServicerContext[Any, Any], refusal: Refusal) -> None:
    if refusal.retry_after_ms:
        context.set_trailing_metadata(((RETRY_AFTER, str(refusal.retry_after_ms)),))
    await context.abort(refusal.code, refusal.details)


class LobbyServicer(pb_grpc.LobbyServiceServicer):
    def __init__(self, lobby: Lobby | None, store: Store | None, bridge: Bridge) -> None:
        self.lobby = lobby
        self.store = store
        self.bridge = bridge

    async def Join(self, request: pb.LobbyJoin, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if self.lobby is None or self.store is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this server runs no standing arena")
        assert self.lobby is not None and self.store is not None
        token = bearer_token(context.invocation_metadata())
        loop = asyncio.get_running_loop()
        bot: BotRecord | None = None
        if token:
            bot = await loop.run_in_executor(None, self.store.bot_by_token, token)
        if bot is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or unknown bot token")
        assert bot is not None
        ratings = await loop.run_in_executor(None, self.store.ratings_of, bot.name)
        link = LobbyLink(self.bridge, context.peer())
        refusal: Refusal | None = await self.bridge.call_in_trio(self.lobby.join, bot, request, link, ratings)
        if refusal is not None:
            await refuse(context, refusal)
        try:
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
    """The admin calls about registered bots and standings, mixed into the AdminServicer."""

    store: Store | None
    lobby: Lobby | None
    bridge: Bridge

    async def _store(self, context: grpc.aio.ServicerContext[Any, Any]) -> Store:
        if self.store is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "this server has no arena store")
        assert self.store is not None
        return self.store

    async def _bot_call(self, context: grpc.aio.ServicerContext[Any, Any], fn: Any, *args: Any) -> Any:
        try:
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
        except StoreError as exc:
            unknown = isinstance(exc, UnknownBotError)
            code = grpc.StatusCode.NOT_FOUND if unknown else grpc.StatusCode.INVALID_ARGUMENT
            await context.abort(code, str(exc))

    async def _infos(self, bots: list[BotRecord]) -> list[pb.BotInfo]:
        connected: set[str] = set()
        if self.lobby is not None:
            connected = await self.bridge.call_in_trio(self.lobby.connected_bots)
        return [bot_info(bot, bot.name in connected) for bot in bots]

    async def _info(self, bot: BotRecord) -> pb.BotInfo:
        [info] = await self._infos([bot])
        return info

    async def RegisterBot(
        self, request: pb.RegisterBotRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.RegisterBotResponse:
        store = await self._store(context)
        variants = list(request.variants)
        if self.lobby is not None:
            unknown = [v for v in variants if v not in self.lobby.config.variants]
            if unknown:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the arena runs no {unknown[0]!r}")
        bot, token = await self._bot_call(context, store.register_bot, request.name, variants)
        return pb.RegisterBotResponse(bot=await self._info(bot), token=token)

    async def ListBots(
        self, request: pb.ListBotsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListBotsResponse:
        store = await self._store(context)
        bots = await self._bot_call(context, store.bots)
        return pb.ListBotsResponse(bots=await self._infos(bots))

    async def RevokeBot(
        self, request: pb.BotNameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.BotInfo:
        store = await self._store(context)
        bot = await self._bot_call(context, store.revoke_bot, request.name)
        if self.lobby is not None:
            await self.bridge.call_in_trio(self.lobby.revoke, bot.name)
        return await self._info(bot)

    async def ResumeBot(
        self, request: pb.BotNameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.BotInfo:
        store = await self._store(context)
        return await self._info(await self._bot_call(context, store.resume_bot, request.name))

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetStandingsResponse:
        store = await self._store(context)
        table = await self._bot_call(context, store.standings, request.variant, request.recent or 5)
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
        recent=[
            pb.RecentMatch(
                match_id=m.match_id,
                finished_ms=m.finished_ms,
                seat=m.seat,
                seats=m.seats,
                scores=m.scores,
                termination=m.termination,
                replay=m.replay,
            )
            for m in standing.recent
        ],
    )
