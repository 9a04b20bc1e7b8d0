"""Hosted bots: the active submitted versions (`versions`) played by this server itself.

Each hosted bot has one lobby stream on this server, like a bot that dialled in, except that its
link is in this process (`HostedLink`): the same joins, places, matchmaking, ratings and pauses.
When the lobby seats it, the bot's process is started (a `Runtime` of `arena.submissions`
starts it in the sandbox) or, for a persistent one, an idle process of the same version is given
the match (one line of JSON on its input, the SDKs' ``ARENA_MATCHES=stdin``). A persistent process
is kept warm between matches and stopped once idle for `idle_s`.

Every `poll_s` the store is read for the active versions: a bot newly active joins, a bot no
longer active (disabled, revoked) leaves, and a new version of a bot replaces the old one between
matches: its idle processes stop at once, a busy one when its match has ended (and been recorded
by the results' own path), and the next seat starts the new version. The stream, its places and
the bot's rating stay as they are.

With several servers on one PostgreSQL store, every server that hosts bots has its own stream for
each of them; a hosted stream's places are booked only by its own server's rounds (their stream
id is negative, `cluster.book_round`), so a hosted bot plays on the server that hosts its table,
through that server's socket, never over the network.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
import structlog
import trio

from ..referee.seat import CloseReason
from ..server.bridge import Bridge
from ..v1 import arena_pb2 as pb
from .lobby import Lobby
from .state import LobbyLink
from .store import is_outage
from .versions import VersionRecord, Versions

log = structlog.get_logger()

_hosted_ids = itertools.count(1)
STOP_WAIT_S = 5.0  # at a stop, for the matches of hosted bots to end before their processes do


class HostedProcess(Protocol):
    """A running process of a version (`Runtime.launch`)."""

    @property
    def alive(self) -> bool: ...

    def seat(self, env: dict[str, str]) -> None:
        """A persistent process: play the match of this environment next (OSError: it is gone)."""

    async def wait(self) -> None:
        """Until the process has exited."""

    async def stop(self) -> None:
        """End it (its input closed first, then killed); returns once it is gone."""

    def cpu_seconds(self) -> float:
        """The CPU its processes have used so far (the seat's clock charges it)."""

    def output_mark(self) -> int:
        """Where its captured output ends now."""

    def output_from(self, mark: int) -> str:
        """What it printed since `mark`."""


class Runtime(Protocol):
    """How this server runs versions (`arena.submissions.runtime.SandboxRuntime`)."""

    async def launch(self, version: VersionRecord, env: dict[str, str] | None) -> HostedProcess:
        """Start a process of `version`: with `env`, for that one match; None: a persistent process
        that waits for `seat`."""

    def address(self) -> str:
        """Where a hosted process reaches this server (a ``unix:`` target in the sandbox)."""

    async def work(self) -> None:
        """What else it does while the server runs (builds and tests the submitted versions)."""

    def add_services(self, server: Any) -> list[str]:
        """Its gRPC services on the server (`SubmissionService`); their full names."""


class HostedLink(LobbyLink):
    """A hosted bot's lobby stream: messages go to a callback on the trio thread, not over gRPC."""

    def __init__(
        self, on_message: Callable[[pb.LobbyMessage], None], on_close: Callable[[str], None]
    ) -> None:
        self.id = -next(_hosted_ids)  # negative: its places are booked by this server alone
        self.bridge: Bridge = None  # type: ignore[assignment]  # never crosses to grpc-io
        self.peer = "hosted"
        self.open = True
        self._on_message = on_message
        self._on_close = on_close

    def send(self, message: Any) -> None:
        if self.open:
            self._on_message(message)

    def close(self, reason: CloseReason | grpc.StatusCode | None = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self._on_close(details)

    def close_with_retry(self, code: grpc.StatusCode, details: str, retry_after_ms: int) -> None:
        self.close(code, details)


class Meter:
    """A seat's CPU meter, set before its process exists (the match's clocks are fixed at its start)."""

    def __init__(self) -> None:
        self.process: HostedProcess | None = None

    def __call__(self) -> float:
        return 0.0 if self.process is None else self.process.cpu_seconds()


@dataclass
class HostedBot:
    version: VersionRecord
    link: HostedLink | None = None
    idle: list[HostedProcess] = field(default_factory=list)  # warm, between matches
    busy: dict[str, HostedProcess] = field(default_factory=dict)  # by match id
    closed_reason: str = ""
    retry_at: float = 0.0


@dataclass(frozen=True)
class HostedConfig:
    max_matches: int = 1  # places of each hosted bot's stream on this server
    idle_s: float = 30.0  # a warm process idle this long is stopped
    poll_s: float = 1.0  # how often the store is read for active versions


class HostedBots:
    """This server's hosted bots (trio thread), run by `run` until the lobby stops."""

    def __init__(self, lobby: Lobby, runtime: Runtime, config: HostedConfig) -> None:
        self.lobby = lobby
        self.state = lobby.state
        self.runtime = runtime
        self.config = config
        self.versions = Versions(self.state.store)
        self.bots: dict[str, HostedBot] = {}
        self._retiring: set[HostedProcess] = set()
        self._idle_since: dict[HostedProcess, float] = {}

    async def run(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._reap_idle)
                nursery.start_soon(self.runtime.work)
                failed = False
                while True:
                    try:
                        active = await self.state.db(self.versions.active)
                        failed = False
                    except Exception as exc:
                        if not (failed and is_outage(exc)):
                            log.warning("cannot read the hosted versions", error=str(exc))
                        failed = True
                    else:
                        await self._update({v.bot: v for v in active})
                    await trio.sleep(self.config.poll_s)
        finally:
            with trio.CancelScope(shield=True):
                await self.stop_all()

    def version_of(self, bot: str) -> int | None:
        """The version this server plays for `bot` now; None if it hosts no such bot."""
        hosted = self.bots.get(bot)
        return None if hosted is None else hosted.version.version

    async def _update(self, active: dict[str, VersionRecord]) -> None:
        for name in sorted(set(self.bots) - set(active)):
            gone = self.bots.pop(name)
            log.info("hosted bot no longer active", bot=name, version=gone.version.version)
            if gone.link is not None:
                gone.link.close(details="no longer active")
            await self._retire(gone)
        for name, version in sorted(active.items()):
            hosted = self.bots.get(name)
            if hosted is None:
                hosted = self.bots[name] = HostedBot(version)
                log.info("hosting a bot", bot=name, version=version.version)
            elif hosted.version.version != version.version:
                log.info(
                    "a new version replaces the old",
                    bot=name,
                    old=hosted.version.version,
                    new=version.version,
                )
                old = HostedBot(hosted.version, None, hosted.idle, hosted.busy)
                hosted.version, hosted.idle, hosted.busy = version, [], {}
                await self._retire(old)
            if (hosted.link is None or not hosted.link.open) and trio.current_time() >= hosted.retry_at:
                await self._join(hosted)

    async def _retire(self, old: HostedBot) -> None:
        """Stop the old version's idle processes now, and its busy ones as their matches end."""
        for process in old.idle:
            self._nursery.start_soon(process.stop)
        for match_id, process in old.busy.items():
            self._retiring.add(process)
            self._nursery.start_soon(self._stop_after, match_id, process)

    async def _stop_after(self, match_id: str, process: HostedProcess) -> None:
        runner = self.state.hub.matches.get(match_id)
        if runner is not None:
            await runner.done.wait()
        await process.stop()
        self._retiring.discard(process)

    async def _join(self, hosted: HostedBot) -> None:
        """A lobby stream for the bot, joined as a dialled-in bot's would be."""
        version = hosted.version
        store, state = self.state.store, self.state
        try:
            bot = await state.db(store.bot, version.bot)
            ratings = await state.db(store.ratings_of, version.bot)
        except Exception as exc:
            log.warning("cannot read a hosted bot", bot=version.bot, error=str(exc))
            return
        variants = version.manifest.get("variants") or []
        request = pb.LobbyJoin(variants=variants, max_matches=self.config.max_matches)
        name = version.bot
        link = HostedLink(lambda m: self._message(name, m), lambda why: self._closed(name, link, why))
        hosted.link = link
        refusal: Any
        if state.cluster is None:
            refusal = self.lobby.join(bot, request, link, ratings)
        else:
            refusal, asked = self.lobby.check_join(bot, request)
            if refusal is None:
                try:
                    granted = await state.cdb(
                        state.cluster.claim_places, name, link.id, asked, self.config.max_matches
                    )
                except Exception as exc:  # an outage, or this server taken for dead (TakenForDeadError)
                    log.warning("cannot claim a hosted bot's places", bot=name, error=str(exc))
                    granted = 0
                if granted >= 1:
                    self.lobby.admit(bot, asked, granted, link, ratings)
                else:
                    link.open = False
                    hosted.retry_at = trio.current_time() + 2.0
                    return
        if refusal is not None:
            link.open = False
            hosted.closed_reason = refusal.details
            hosted.retry_at = trio.current_time() + max(1.0, refusal.retry_after_ms / 1000)
            log.info("hosted bot may not join now", bot=name, reason=refusal.details)

    def _closed(self, name: str, link: HostedLink, why: str) -> None:
        """The stream ended (paused, revoked, drained, or no longer active): it leaves the lobby;
        an active bot joins again after a second (refused while the reason lasts)."""
        hosted = self.bots.get(name)
        if hosted is not None and hosted.link is link:
            hosted.closed_reason = why
            hosted.retry_at = trio.current_time() + 1.0
        self.lobby.leave(link)

    def _message(self, name: str, message: pb.LobbyMessage) -> None:
        hosted = self.bots.get(name)
        if hosted is None or message.WhichOneof("kind") != "seated":
            return
        meter = Meter()
        runner = self.state.hub.matches.get(message.seated.match_id)
        if runner is not None:  # now, before the match starts: the replay's header names CPU seats
            try:
                runner.clock_cpu(message.seated.seat, meter)
            except RuntimeError as exc:
                log.warning("a hosted seat's clock stays on wall time", error=str(exc))
        self._nursery.start_soon(self._seat_safely, hosted, message.seated, meter)

    async def _seat_safely(self, hosted: HostedBot, seated: pb.Seated, meter: Meter) -> None:
        """`_seat`; a failure is the seat's (the fault policy plays it), never the server's."""
        try:
            await self._seat(hosted, seated, meter)
        except Exception:
            log.exception("a hosted seat failed", bot=hosted.version.bot, match_id=seated.match_id)

    async def _seat(self, hosted: HostedBot, seated: pb.Seated, meter: Meter) -> None:
        version = hosted.version
        env = {
            "ARENA_ADDRESS": self.runtime.address(),
            "ARENA_TOKEN": seated.seat_token,
            "ARENA_SEAT": str(seated.seat),
            "ARENA_MATCH_ID": seated.match_id,
            "ARENA_BOT_NAME": version.bot,
        }
        process: HostedProcess | None = None
        mark = 0
        try:
            if version.manifest.get("persistent"):
                while hosted.idle and process is None:
                    candidate = hosted.idle.pop()
                    if candidate.alive:
                        try:
                            mark = candidate.output_mark()
                            candidate.seat(env)
                            process = candidate
                        except OSError:
                            self._nursery.start_soon(candidate.stop)
                if process is None:
                    process = await self.runtime.launch(version, None)
                    process.seat(env)
            else:
                process = await self.runtime.launch(version, env)
        except Exception as exc:  # the seat is played by the fault policy; the match goes on
            log.error("cannot start a hosted bot", bot=version.bot, version=version.version, error=str(exc))
            return
        hosted.busy[seated.match_id] = process
        meter.process = process
        runner = self.state.hub.matches.get(seated.match_id)
        log.info("hosted bot seated", bot=version.bot, version=version.version, match_id=seated.match_id)
        try:
            await self.versions_seat(seated, version)
        except Exception as exc:
            log.warning("cannot record a hosted seat's version", error=str(exc))
        if runner is not None:
            await runner.done.wait()
        if hosted.busy.pop(seated.match_id, None) is None:
            pass  # retired meanwhile: `_retire` stops it
        elif version.manifest.get("persistent") and process.alive and hosted.version is version:
            hosted.idle.append(process)
            self._idle_since[process] = trio.current_time()
        else:
            with trio.move_on_after(5):  # a process of one match: its last words too
                await process.wait()
            await process.stop()
        try:  # what it printed in this match, for its owner (`arena bot output`)
            output = process.output_from(mark)
            await self.state.db(self.versions.seat_output, seated.match_id, seated.seat, output)
        except Exception as exc:
            log.warning("cannot keep a hosted seat's output", error=str(exc))

    async def versions_seat(self, seated: pb.Seated, version: VersionRecord) -> None:
        await self.state.db(self.versions.seat, seated.match_id, seated.seat, version.bot, version.version)

    async def _reap_idle(self) -> None:
        while True:
            await trio.sleep(min(1.0, self.config.idle_s / 2))
            now = trio.current_time()
            for hosted in self.bots.values():
                for process in list(hosted.idle):
                    since = self._idle_since.get(process, now)
                    if not process.alive or now - since >= self.config.idle_s:
                        hosted.idle.remove(process)
                        self._idle_since.pop(process, None)
                        self._nursery.start_soon(process.stop)

    async def stop_all(self) -> None:
        """Stop every process; those in a match once it has ended (a stop cuts matches off, and a
        bot killed first would be charged faults in a match the referee then completes)."""
        busy = [match_id for h in self.bots.values() for match_id in h.busy]
        with trio.move_on_after(STOP_WAIT_S):
            for match_id in busy:
                runner = self.state.hub.matches.get(match_id)
                if runner is not None:
                    await runner.done.wait()
        processes = [p for h in self.bots.values() for p in [*h.idle, *h.busy.values()]]
        processes += list(self._retiring)
        async with trio.open_nursery() as nursery:
            for process in processes:
                nursery.start_soon(process.stop)
