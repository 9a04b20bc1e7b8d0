"""The standing arena on the trio thread: the `Lobby` the gRPC side and `arena serve` talk to.

Registered bots wait in the lobby on one or more streams; every tick the lobby forms tables and
starts each match through the hub's referee. The work is done by its parts, over one shared
live state (`state.LobbyState`):

- `joining`: who may join, how often, with how many places;
- `tables`: forming tables from this server's waiting bots;
- `hosting`: with a `Cluster` (several servers on one PostgreSQL store), the tables formed in
  the database over every server's bots, the seats handed between servers and the heartbeats;
- `results`: recording each match, its ratings and the pauses it brings.

The lobby itself runs them, drains the server before it stops, and cuts bots off (pauses and
revocations).
"""

from __future__ import annotations

from collections import Counter

import grpc
import structlog
import trio

from ..live import Hub
from ..referee.seat import CloseReason
from ..v1 import arena_pb2 as pb
from .cluster import Cluster, TakenForDeadError
from .config import ArenaConfig
from .hosting import Hosting
from .joining import DRAINING, Joins, Refusal
from .matchmaking import pair_key
from .pending import Journal
from .results import RECORD_TIMEOUT_S, RETRY_S, Results
from .state import LobbyLink, LobbyState, LobbyStream, log_failure
from .store import BotRecord, Pause, Store, is_outage
from .tables import Tables

__all__ = ["ArenaConfig", "Lobby"]

log = structlog.get_logger()


class Lobby:
    """The standing arena's live state and tasks, owned by the trio thread."""

    def __init__(
        self,
        hub: Hub,
        store: Store,
        config: ArenaConfig,
        nursery: trio.Nursery,
        cluster: Cluster | None = None,
    ) -> None:
        self.state = LobbyState(hub, store, config, nursery, cluster)
        self.joins = Joins(self.state)
        self.results = Results(self.state, Journal(hub.replay_dir))
        self.tables = Tables(self.state, self.results)
        self.hosting = None if cluster is None else Hosting(self.state, self.results, cluster)

    @property
    def config(self) -> ArenaConfig:
        return self.state.config

    @property
    def cluster(self) -> Cluster | None:
        return self.state.cluster

    @property
    def streams(self) -> dict[int, LobbyStream]:
        return self.state.streams

    @property
    def running_by_bot(self) -> Counter[str]:
        return self.state.running_by_bot

    async def run(self) -> None:
        """Load what seating needs, then form tables and watch for revocations until cancelled."""
        state = self.state
        try:
            if self.hosting is None:
                for (variant, one, other), count in (await state.db(state.store.pair_counts)).items():
                    if variant in state.meetings:
                        state.meetings[variant][pair_key(one, other)] = count
            state.revoked = await state.db(state.store.revoked_bots)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch_revocations)
                nursery.start_soon(self.results.keep_settling)
                if self.hosting is not None:
                    self.hosting.start(nursery)
                outage = False
                while True:
                    try:
                        if self.hosting is None:
                            self.tables.form()
                        elif state.streams and not state.draining:
                            await self.hosting.round()
                        outage = False
                    except TakenForDeadError:
                        pass  # the heartbeat learns it too, and stops the server
                    except Exception as exc:  # a bad table must not stop the arena, nor the server
                        if not (outage and is_outage(exc)):
                            log_failure("forming tables failed", exc)
                        outage = is_outage(exc)
                    await trio.sleep(state.config.tick_s)
        finally:
            if state.cluster is not None:  # its matches left running are the others' to abort now
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    try:
                        await trio.to_thread.run_sync(state.cluster.set_state, "stopped")
                    except (
                        Exception
                    ) as exc:  # a server taken for dead keeps 'gone'; an outage: the others see
                        log_failure("cannot say in the store that this server stopped", exc)
                    finally:
                        await trio.to_thread.run_sync(state.cluster.close)

    async def drain(self) -> None:
        """Take no new tables, send the bots in the lobby to the other servers, and return once
        every match hosted here is over and recorded."""
        state = self.state
        state.draining = True
        if state.cluster is not None:
            await state.beat(state.cluster.set_state, "draining")
        for stream in list(state.streams.values()):
            stream.link.close(grpc.StatusCode.UNAVAILABLE, DRAINING)
            self.leave(stream.link)
        log.info("draining", matches=len(state.matches))
        while state.matches:
            await trio.sleep(0.1)
        # Results the store did not take yet: a while longer for it (the journal keeps them after).
        with trio.move_on_after(RECORD_TIMEOUT_S):
            while await self.results.pending():
                await trio.sleep(0.1 if await self.results.settle_all() else RETRY_S)
        state.drained = True  # its heartbeats end here
        if state.cluster is not None:
            await state.beat(state.cluster.set_state, "stopped")
        log.info("drained")

    # ------------------------------------------------------------------ joining (`joining`)

    def join(
        self, bot: BotRecord, request: pb.LobbyJoin, link: LobbyLink, ratings: dict[str, float]
    ) -> Refusal | None:
        """A bot's lobby stream asks to wait for tables (trio thread; `bot` was just read from the store)."""
        return self.joins.join(bot, request, link, ratings)

    def check_join(self, bot: BotRecord, request: pb.LobbyJoin) -> tuple[Refusal | None, list[str]]:
        """Whether the bot may join now, and the variants it asks for (trio thread)."""
        return self.joins.check_join(bot, request)

    def admit(
        self, bot: BotRecord, asked: list[str], granted: int, link: LobbyLink, ratings: dict[str, float]
    ) -> None:
        """The stream waits for tables from now on, with `granted` places."""
        self.joins.admit(bot, asked, granted, link, ratings)

    def leave(self, link: LobbyLink) -> None:
        """The stream ended; its matches play on."""
        self.joins.leave(link)

    def connected_bots(self) -> set[str]:
        """The bots with an open lobby stream."""
        return self.state.connected_bots()

    def form_tables(self) -> None:
        """One round of table forming on this server alone (without a cluster)."""
        self.tables.form()

    # ------------------------------------------------------------------ cutting bots off

    def revoke(self, name: str) -> None:
        """Refuse the bot from now on and close every stream it has open, lobby and matches."""
        state = self.state
        if name in state.revoked:
            return
        state.revoked.add(name)
        for stream in [s for s in state.streams.values() if s.bot == name]:
            stream.link.close(grpc.StatusCode.UNAUTHENTICATED, "the bot token was revoked")
            state.streams.pop(stream.link.id, None)
        for arena_match in state.matches.values():
            runner = arena_match.runner
            for seat, bot in enumerate(arena_match.bots):
                if bot == name:
                    # The seat token dies with the bot token; the match's fault policy plays the seat.
                    state.hub.revoke_seat(runner.seats[seat].token)
                    link = runner.seats[seat].link
                    if link is not None:
                        link.close(CloseReason.REVOKED, "the bot token was revoked")
                        runner.detach(seat, link)
        log.warning("bot revoked", bot=name)

    async def _watch_revocations(self) -> None:
        """`arena bots revoke` writes only to the store; the server notices within a poll."""
        state = self.state
        failed = False  # the last poll failed: an outage is logged once
        while True:
            await trio.sleep(state.config.revocation_poll_s)
            try:
                revoked: set[str] = await state.db(state.store.revoked_bots)
                # another server's result may have paused a bot that waits here
                paused: list[Pause] = (
                    [] if state.cluster is None else await state.cdb(state.cluster.paused_bots)
                )
            except Exception as exc:
                if not (failed and is_outage(exc)):
                    log_failure("cannot read revocations and pauses from the store", exc)
                failed = True
                continue
            failed = False
            for name in sorted(revoked - state.revoked):
                self.revoke(name)
            here = state.connected_bots()
            for pause in paused:
                if pause.bot in here:
                    state.pause(pause)
