"""The referee server: grpc.aio on its own thread, matches in trio.

`Hub` (arena/live.py, trio side) owns the matches and the seat tokens.  The servicers
(aio side) only convert between streams and the hub: they authenticate a stream by its
token, attach a `BotLink` to the seat, and pump messages across the bridge.  A service
hosted beside the referee (the standing arena) plugs in through `HostedService`; the
server knows it only by that interface.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc
import structlog
import trio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..engine import EngineError, find_variant
from ..live import Hub
from ..referee.runner import MatchConfig, MatchRunner
from ..referee.seat import TimeControl
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .auth import OperatorCredential, read_bearer, unknown_token
from .bridge import BotLink, Bridge, Close, add_bot_service
from .requests import Malformed, MalformedRequests

log = structlog.get_logger()

# A hard cap enforced by gRPC itself; the referee's own, smaller cap (MAX_BOT_MESSAGE_BYTES)
# is checked per message so that an oversized message is recorded as a protocol fault.
MAX_MESSAGE_BYTES = 1024 * 1024
MATCH_ID = re.compile(r"^[0-9a-f]{16}$")
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # A port is one server's: without this, gRPC sets SO_REUSEPORT and a second server on a
    # taken port starts too, and connections land on either at random.
    ("grpc.so_reuseport", 0),
]
DEFAULT_TIME_CONTROL = TimeControl()
STOP_GRACE_S = 1.0
"""How long a stopping server lets its calls end by themselves before it cancels them."""

Context = grpc.aio.ServicerContext[Any, Any]


class BotAdmin(Protocol):
    """The admin calls about registered bots and standings, answered by a hosted service."""

    async def RegisterBot(
        self, request: pb.RegisterBotRequest, context: Context
    ) -> pb.RegisterBotResponse: ...

    async def ListBots(self, request: pb.ListBotsRequest, context: Context) -> pb.ListBotsResponse: ...

    async def RevokeBot(self, request: pb.BotNameRequest, context: Context) -> pb.BotInfo: ...

    async def ResumeBot(self, request: pb.BotNameRequest, context: Context) -> pb.BotInfo: ...

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: Context
    ) -> pb.GetStandingsResponse: ...


class HostedService(Protocol):
    """A service that runs on the server's live matches: the standing arena (arena/standing).

    `start` runs on the trio side before the port opens; `servicers` on the aio thread, once,
    with the server's bridge."""

    async def start(self, hub: Hub, nursery: trio.Nursery) -> None: ...

    def servicers(self, bridge: Bridge) -> tuple[pb_grpc.LobbyServiceServicer, BotAdmin]: ...

    def describe(self) -> str: ...


def config_from_request(request: pb.CreateMatchRequest) -> MatchConfig:
    """Validate a CreateMatch request (pure; raises ValueError or EngineError)."""
    variant = find_variant(request.variant, dict(request.options))
    names = tuple(request.seat_names) or tuple(f"seat{i}" for i in range(variant.seats))
    tc = request.time_control
    time_control = TimeControl(
        per_decision_ms=tc.per_decision_ms or DEFAULT_TIME_CONTROL.per_decision_ms,
        bank_ms=tc.bank_ms if tc.ByteSize() else DEFAULT_TIME_CONTROL.bank_ms,
        increment_ms=tc.increment_ms,
        latency_allowance_ms=tc.latency_allowance_ms,
    )
    return MatchConfig(
        variant=variant,
        deals=request.deals or variant.seats,
        seed=request.seed,
        seat_names=names,
        time_control=time_control,
        fault_policy=request.fault_policy or "substitute",
        max_invalid=request.max_invalid or 3,
        reconnect_grace_s=(request.reconnect_grace_ms or 10_000) / 1000,
        start_timeout_s=(request.start_timeout_ms or 30_000) / 1000,
    )


class BotServicer(pb_grpc.BotServiceServicer):
    def __init__(self, hub: Hub, bridge: Bridge) -> None:
        self.hub = hub
        self.bridge = bridge

    async def Play(
        self, request_iterator: AsyncIterator[pb.BotMessage], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        token, problem = read_bearer(context.invocation_metadata(), "seat token")
        entry = self.hub.tokens.get(token) if token else None
        if entry is None:
            why = problem or unknown_token("seat token", "no match on this server has it (did it end?)")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)
        runner, seat = entry
        link = BotLink(self.bridge, context.peer())
        self.bridge.to_trio(runner.attach, seat, link)

        async def read() -> None:
            try:
                while True:
                    message = await context.read()
                    if message is grpc.aio.EOF:
                        break
                    if isinstance(message, Malformed):  # the seat's protocol fault; the host closes
                        self.bridge.to_trio(runner.reject, seat, link, message.details)
                        return
                    self.bridge.to_trio(runner.deliver, seat, link, message)
            except (grpc.RpcError, asyncio.CancelledError, Exception):
                pass
            link.outbox.put_nowait(Close())

        reader = asyncio.create_task(read())
        try:
            while True:
                item = await link.outbox.get()
                if isinstance(item, Close):
                    if item.code is not None:
                        await context.abort(item.code, item.details)
                    return
                await context.write(item)
        except asyncio.CancelledError:
            return  # the call was cancelled (the bot went away, or the server stops): not an error
        finally:
            reader.cancel()
            self.bridge.to_trio(runner.detach, seat, link)


class AdminServicer(pb_grpc.AdminServiceServicer):
    """Matches, replays and spectators; the calls about bots go to the hosted service's `BotAdmin`.
    The operator credential is checked before any of these runs (`OperatorCredential`)."""

    def __init__(self, hub: Hub, bridge: Bridge, bots: BotAdmin | None) -> None:
        self.hub = hub
        self.bridge = bridge
        self.bots = bots

    async def _bots(self, context: Context) -> BotAdmin:
        if self.bots is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "this server has no arena store")
        assert self.bots is not None
        return self.bots

    async def RegisterBot(self, request: pb.RegisterBotRequest, context: Context) -> pb.RegisterBotResponse:
        return await (await self._bots(context)).RegisterBot(request, context)

    async def ListBots(self, request: pb.ListBotsRequest, context: Context) -> pb.ListBotsResponse:
        return await (await self._bots(context)).ListBots(request, context)

    async def RevokeBot(self, request: pb.BotNameRequest, context: Context) -> pb.BotInfo:
        return await (await self._bots(context)).RevokeBot(request, context)

    async def ResumeBot(self, request: pb.BotNameRequest, context: Context) -> pb.BotInfo:
        return await (await self._bots(context)).ResumeBot(request, context)

    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: Context
    ) -> pb.GetStandingsResponse:
        return await (await self._bots(context)).GetStandings(request, context)

    async def CreateMatch(
        self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CreateMatchResponse:
        try:
            config = config_from_request(request)
        except (ValueError, EngineError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        runner: MatchRunner = await self.bridge.call_in_trio(self.hub.create_match, config)
        return pb.CreateMatchResponse(match_id=runner.match_id, seat_tokens=[s.token for s in runner.seats])

    async def ListMatches(
        self, request: pb.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ListMatchesResponse:
        matches: list[pb.MatchInfo] = await self.bridge.call_in_trio(self.hub.list_matches)
        return pb.ListMatchesResponse(matches=matches)

    async def GetReplay(
        self, request: pb.GetReplayRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetReplayResponse:
        if not MATCH_ID.fullmatch(request.match_id):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a match id is 16 hex digits")
        state, path = await self.bridge.call_in_trio(self.hub.replay_path, request.match_id)
        if path is None:
            if state == "unknown":
                await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id}")
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"match {request.match_id} is {state}")
        assert path is not None
        return pb.GetReplayResponse(replay=path.read_text(encoding="utf-8"))

    async def Spectate(
        self, request: pb.SpectateRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.Event]:
        link = BotLink(self.bridge, context.peer())
        if not await self.bridge.call_in_trio(self.hub.add_spectator, request.match_id, link):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no running match {request.match_id}")
        while True:
            item = await link.outbox.get()
            if isinstance(item, Close):
                return
            yield item


class NoLobby(pb_grpc.LobbyServiceServicer):
    async def Join(self, request: pb.LobbyJoin, context: Context) -> None:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this server runs no standing arena")


class ListenError(OSError):
    """The server cannot listen on its address; `str` is one line naming host:port and why."""

    def __init__(self, host: str, port: int, reason: str, code: int | None = None) -> None:
        self.address = host if host.startswith("unix:") else listen_address(host, port)
        self.reason = reason
        if code is None:
            super().__init__(reason)
        else:
            super().__init__(code, reason)

    def __str__(self) -> str:
        return f"cannot listen on {self.address}: {self.reason}"


def listen_address(host: str, port: int) -> str:
    """`host:port` as gRPC reads it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


_BIND_REASONS = {
    errno.EADDRINUSE: "the port is in use by another process",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
}


def check_port_free(host: str, port: int) -> None:
    """Raise `ListenError` when `host:port` cannot be bound, with the operating system's reason.

    Binds each address the host resolves to as gRPC does (SO_REUSEADDR, no SO_REUSEPORT) and
    closes it at once. gRPC's own failure says neither why nor quietly (a bare RuntimeError and
    a log line of the C core), so this runs first; `AioServerThread` still turns a bind that
    fails later (a race) into a `ListenError`. Port 0 is always free."""
    if port == 0:
        return
    try:
        addresses = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror:
        raise ListenError(host, port, "the host name is not known") from None
    failures: list[OSError] = []
    for family, kind, proto, _, sockaddr in addresses:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(sockaddr)
        except OSError as exc:
            failures.append(exc)
    # An address of a family this machine lacks (::1 without IPv6) is gRPC's to skip.
    taken = [f for f in failures if f.errno in (errno.EADDRINUSE, errno.EACCES)]
    if taken or (failures and len(failures) == len(addresses)):
        first = (taken or failures)[0]
        reason = _BIND_REASONS.get(first.errno or 0, first.strerror or str(first))
        raise ListenError(host, port, reason, first.errno)


def claim_unix_socket(path: Path) -> None:
    """Make way for a Unix socket at `path`: a stale one (nobody listening) is removed; a live one,
    or anything that is not a socket, is a `ListenError`."""
    if not (path.exists() or path.is_symlink()):
        if not path.parent.is_dir():
            raise ListenError(f"unix:{path}", 0, f"no such directory: {path.parent}")
        return
    if not path.is_socket():
        raise ListenError(f"unix:{path}", 0, "a file that is not a socket is in the way")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink(missing_ok=True)  # left by a server that stopped without removing it
            return
    raise ListenError(f"unix:{path}", 0, "another server listens on this socket")


@dataclass
class AioServerThread:
    """grpc.aio server on its own thread and asyncio loop (see GRPC-TRIO design notes in docs)."""

    hub: Hub
    trio_token: trio.lowlevel.TrioToken
    host: str
    port: int
    service: HostedService | None = None
    operator_token: str | None = None
    port_bound: int = 0
    unix: Path | None = None  # also listen on this Unix socket (a sandboxed bot's way in)

    def __post_init__(self) -> None:
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._thread_main, name="grpc-io", daemon=True)

    def start(self) -> int:
        """Start the thread and wait until the port is bound (blocking: call via trio.to_thread)."""
        self.thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self.port_bound

    def request_stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to start() or seen by the supervisor
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        bridge = Bridge(self.trio_token, self._loop)
        server = grpc.aio.server(
            options=SERVER_OPTIONS,
            maximum_concurrent_rpcs=20_000,
            # The credential first: a call it refuses is refused whatever its bytes.
            interceptors=[OperatorCredential(self.operator_token), MalformedRequests()],
        )
        add_bot_service(BotServicer(self.hub, bridge), server)  # requests come encoded
        lobby, bots = self.service.servicers(bridge) if self.service else (NoLobby(), None)
        admin = AdminServicer(self.hub, bridge, bots)
        pb_grpc.add_AdminServiceServicer_to_server(admin, server)  # type: ignore[no-untyped-call]
        pb_grpc.add_LobbyServiceServicer_to_server(lobby, server)  # type: ignore[no-untyped-call]
        # A hosted service's own gRPC services (the standing arena's SubmissionService), if any.
        add_services = getattr(self.service, "add_services", None)
        extra: list[str] = add_services(server) if add_services is not None else []
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        names = [
            pb.DESCRIPTOR.services_by_name["BotService"].full_name,
            pb.DESCRIPTOR.services_by_name["AdminService"].full_name,
            pb.DESCRIPTOR.services_by_name["LobbyService"].full_name,
            health.SERVICE_NAME,
            reflection.SERVICE_NAME,
            *extra,
        ]
        reflection.enable_server_reflection(names, server)
        try:
            self.port_bound = server.add_insecure_port(listen_address(self.host, self.port))
        except RuntimeError:  # "Failed to bind to address …", without the reason
            self.port_bound = 0
        if not self.port_bound:
            raise ListenError(self.host, self.port, "the port is in use or the address is not this machine's")
        if self.unix is not None and not server.add_insecure_port(f"unix:{self.unix}"):
            raise ListenError(f"unix:{self.unix}", 0, "gRPC could not listen on the socket")
        await server.start()
        for name in ("", *names[:3]):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._ready.set()
        await self._stop.wait()
        await health_servicer.enter_graceful_shutdown()
        await server.stop(grace=STOP_GRACE_S)
        if self.unix is not None:
            self.unix.unlink(missing_ok=True)
        # The calls the stop cancelled finish unwinding here: left to asyncio.run's final sweep,
        # grpc prints a CancelledError traceback for each.
        unwinding = asyncio.all_tasks() - {asyncio.current_task()}
        if unwinding:
            await asyncio.wait(unwinding, timeout=STOP_GRACE_S)


async def serve(
    host: str,
    port: int,
    replay_dir: Path,
    *,
    service: HostedService | None = None,
    operator_token: str | None = None,
    on_stop: Callable[[Hub], None] | None = None,
    unix: Path | None = None,
    task_status: trio.TaskStatus[tuple[Hub, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the server until cancelled; `task_status.started((hub, port))` once it listens.

    A stop cancels the matches first, so that their bots' streams end `ABORTED` and their
    replays stay `.jsonl.part`, then stops gRPC; `on_stop(hub)` is called once everything has
    ended (`Hub.cut_off()` names the matches the stop cut off).

    With a `service` (the standing arena) it also answers the lobby and the admin calls about
    bots; the admin service answers only calls that carry `operator_token`.

    The port is bound without SO_REUSEPORT: when it is taken (or cannot be bound at all) this
    raises `ListenError`, itself and not inside an exception group, before `task_status.started`.

    With `unix`, the server also listens on that Unix socket (``unix:PATH`` for bots: a sandboxed
    bot's only way out, docs/SANDBOX.md); a stale socket there is replaced, a live one refused, and
    the socket is removed when the server stops.
    """
    await trio.to_thread.run_sync(check_port_free, host, port)
    if unix is not None:
        await trio.to_thread.run_sync(claim_unix_socket, unix)
    refused: ListenError | None = None
    hub: Hub | None = None
    try:
        async with trio.open_nursery() as nursery:
            hub = Hub(replay_dir, nursery)
            if service is not None:
                await service.start(hub, nursery)
            token = trio.lowlevel.current_trio_token()
            aio = AioServerThread(hub, token, host, port, service, operator_token, unix=unix)
            try:
                bound = await trio.to_thread.run_sync(aio.start)
            except ListenError as exc:  # raised below, not wrapped in the nursery's exception group
                refused = exc
                nursery.cancel_scope.cancel()
            else:
                log.info(
                    "server listening",
                    host=host,
                    port=bound,
                    unix=str(unix) if unix else None,
                    replay_dir=str(replay_dir),
                    store=service.describe() if service else None,
                )
                try:
                    task_status.started((hub, bound))
                    await trio.to_thread.run_sync(aio.thread.join, abandon_on_cancel=True)
                    raise RuntimeError("the gRPC thread stopped unexpectedly")
                finally:
                    # The matches unwind while gRPC still carries their streams' last status.
                    nursery.cancel_scope.cancel()
                    aio.request_stop()
                    with trio.CancelScope(shield=True):
                        await trio.to_thread.run_sync(aio.thread.join, 5.0)
    finally:
        if hub is not None and on_stop is not None and refused is None:
            on_stop(hub)
    if refused is not None:
        raise refused
