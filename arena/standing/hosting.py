"""Hosting across servers: this server's part in an arena of several on one PostgreSQL store.

The tables are formed in the database over every server's waiting bots (`Cluster.book_round`);
this server hosts the tables its rounds book and publishes the seats of other servers' bots,
hands its own streams the seats other servers booked for them (woken by NOTIFY, polling in case
one is lost), beats its heartbeat, and records the matches of servers that stopped beating as
aborted.
"""

from __future__ import annotations

import threading

import structlog
import trio

from ..referee.runner import MatchConfig
from ..v1 import arena_pb2 as pb
from .cluster import BookedTable, Cluster, TakenForDeadError
from .records import now_ms
from .results import RETRY_S, Results
from .state import ArenaMatch, LobbyState, log_failure
from .store import is_outage

log = structlog.get_logger()


class Hosting:
    """The cluster's tasks of a server's lobby (trio thread)."""

    def __init__(self, state: LobbyState, results: Results, cluster: Cluster) -> None:
        self.state = state
        self.results = results
        self.cluster = cluster
        self._seats_waiting = trio.Event()  # another server booked seats of this server's streams
        self._round = 0

    def start(self, nursery: trio.Nursery) -> None:
        """The tasks that run beside the rounds until the lobby stops."""
        nursery.start_soon(self._heartbeats)
        nursery.start_soon(self._listen)
        nursery.start_soon(self._deliver_seats)

    async def round(self) -> None:
        """Book this tick's tables over every server's free places; host those this round formed."""
        state, cluster = self.state, self.cluster
        order = list(state.config.variants)
        self._round += 1
        shift = self._round % len(order)
        tables: list[BookedTable] = await state.cdb(
            cluster.book_round,
            {name: variant.seats for name, variant in state.variants.items()},
            order[shift:] + order[:shift],
            lambda name: state.config.deals or state.variants[name].seats,
            lambda: state.rng.getrandbits(63),
        )
        if not tables:
            return
        started = now_ms()
        for table in tables:
            self._host(table, started)
        # Only now that the matches exist here may the other servers' bots be sent to them.
        try:
            await state.cdb(cluster.publish, tables)
        except TakenForDeadError:
            raise
        except Exception as exc:  # the database went away since the round: try until it is back
            log.warning("cannot hand other servers their seats yet", error=str(exc))
            state.nursery.start_soon(self._publish_later, tables)

    async def _publish_later(self, tables: list[BookedTable]) -> None:
        """Publish the tables once the store answers, while any of their matches still waits for bots."""
        state = self.state
        while any(table.match_id in state.matches for table in tables):
            await trio.sleep(RETRY_S)
            try:
                await state.cdb(self.cluster.publish, tables)
                return
            except TakenForDeadError:
                return  # the others aborted these matches
            except Exception as exc:
                log.debug("cannot hand other servers their seats yet", error=str(exc))

    def _host(self, table: BookedTable, started_ms: int) -> None:
        state, cluster = self.state, self.cluster
        variant = state.variants[table.variant]
        config = MatchConfig(
            variant=variant,
            deals=table.deals,
            seed=table.seed,
            seat_names=tuple(table.bots),
            time_control=state.config.time_control,
            fault_policy="substitute",
            reconnect_grace_s=state.config.reconnect_grace_s,
            start_timeout_s=state.config.start_timeout_s,
        )
        runner = state.hub.create_match(config, dict(enumerate(table.tokens)), table.match_id)
        streams = []
        now = trio.current_time()
        for seat, place in enumerate(table.places):
            if place.server_id != cluster.server_id:
                continue
            stream = state.streams.get(place.stream)
            if stream is None:  # it left as it was booked: make sure its places go
                state.leave_places_soon(cluster, place.stream)
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
        state.matches[runner.match_id] = arena_match
        runner.log.info("arena match seated", bots=table.bots, host=cluster.server_id)
        state.nursery.start_soon(self.results.follow_hosted, cluster, arena_match, started_ms)

    async def _deliver_seats(self) -> None:
        """Hand this server's streams the seats other servers booked for them."""
        state, cluster = self.state, self.cluster
        while True:
            with trio.move_on_after(1.0):  # a NOTIFY wakes it at once; polling in case one was lost
                await self._seats_waiting.wait()
            self._seats_waiting = trio.Event()
            try:
                deliveries = await state.cdb(cluster.deliveries)
            except Exception as exc:
                log_failure("cannot read the seats booked by other servers", exc)
                continue
            for d in deliveries:
                stream = state.streams.get(d.stream)
                if stream is None:  # it left as it was booked: make sure its places go
                    log.warning("seat for a stream that has left", match_id=d.match_id, seat=d.seat)
                    state.leave_places_soon(cluster, d.stream)
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

    async def _listen(self) -> None:
        token = trio.lowlevel.current_trio_token()

        def wake() -> None:
            trio.from_thread.run_sync(lambda: self._seats_waiting.set(), trio_token=token)

        while True:
            stop = threading.Event()
            try:
                await trio.to_thread.run_sync(self.cluster.listen, wake, stop, abandon_on_cancel=True)
            except Exception as exc:
                log_failure("LISTEN for seats failed; polling until it is back", exc)
            finally:
                stop.set()
            await trio.sleep(1.0)

    def has_drained(self) -> bool:
        return self.state.drained

    async def _heartbeats(self) -> None:
        """Say this server lives; record the matches of servers that stopped saying so as aborted.
        A server taken for dead stops: `TakenForDeadError` ends the lobby, and `arena serve`."""
        outage = False
        while not self.state.drained:
            try:
                await self.state.beat(self.cluster.heartbeat)
                aborted = await self.state.beat(self.cluster.reap)
            except TakenForDeadError:
                if self.has_drained():
                    return  # it said itself that it stopped (while this beat was on its way)
                log.critical("taken for dead by the other servers; stopping")
                raise
            except Exception as exc:
                if not (outage and is_outage(exc)):  # one line per outage, not one per beat
                    log_failure("heartbeat failed", exc)
                outage = is_outage(exc)
            else:
                if outage:
                    log.warning("the store answers again")
                outage = False
                for match_id, reason in aborted:
                    log.warning(
                        "match of a dead server recorded as aborted", match_id=match_id, reason=reason
                    )
            await trio.sleep(self.state.config.heartbeat_s)
