"""Forming tables on a single server: every tick, seat the bots waiting in this lobby.

The variants take turns at the first pick, tables come from `matchmaking.form_tables`, and each
match starts through the hub's referee, exactly like an admin-created match. With a cluster the
tables are formed in the database instead (`hosting`).
"""

from __future__ import annotations

import trio

from ..referee.runner import MatchConfig
from ..v1 import arena_pb2 as pb
from .matchmaking import Candidate, form_tables, pair_key
from .records import now_ms
from .results import Results
from .state import PERSON_MAX_INVALID, ArenaMatch, LobbyState, LobbyStream


class Tables:
    """Seats the waiting bots of this server's lobby (trio thread)."""

    def __init__(self, state: LobbyState, results: Results) -> None:
        self.state = state
        self.results = results
        self._round = 0

    def form(self) -> None:
        """One round: tables for every variant from the streams with room for another match."""
        state = self.state
        order = list(state.config.variants)
        self._round += 1
        shift = self._round % len(order)  # no variant always gets the first pick
        for name in order[shift:] + order[:shift]:
            candidates = [
                Candidate(s.bot, s.link.id, state.mu.get((name, s.bot), 25.0), s.waiting_since)
                for s in state.streams.values()
                if name in s.variants and self._free(s)
            ]
            for table in form_tables(candidates, state.variants[name].seats, state.meetings[name]):
                # A bot on several streams may have reached its limit at an earlier table.
                if all(self._free(state.streams[c.stream]) for c in table):
                    self._start(name, table)

    def seat(self, variant_name: str, table: list[Candidate]) -> None:
        """A table chosen outside matchmaking (a person's choice of opponents on the site), seated
        and recorded as the lobby's own; every stream in it has room for another match."""
        if not all(self._free(self.state.streams[c.stream]) for c in table):
            raise ValueError("a stream of the table has no room for another match")
        self._start(variant_name, table)

    def _free(self, stream: LobbyStream) -> bool:
        return (
            len(stream.running) < stream.capacity
            and self.state.running_by_bot[stream.bot] < self.state.config.max_matches_per_bot
        )

    def _start(self, variant_name: str, table: list[Candidate]) -> None:
        state = self.state
        state.rng.shuffle(table)
        variant = state.variants[variant_name]
        # A table with a person is played on the person's clock, every seat (one clock per match).
        clocks = (getattr(state.streams[c.stream].link, "person_clock", None) for c in table)
        people = [clock for clock in clocks if clock is not None]
        config = MatchConfig(
            variant=variant,
            deals=state.config.deals or variant.seats,
            seed=state.rng.getrandbits(63),
            seat_names=tuple(c.bot for c in table),
            time_control=people[0] if people else state.config.time_control,
            fault_policy="substitute",
            max_invalid=PERSON_MAX_INVALID if people else MatchConfig.max_invalid,
            reconnect_grace_s=state.config.reconnect_grace_s,
            start_timeout_s=state.config.start_timeout_s,
        )
        runner = state.hub.create_match(config)
        streams = [state.streams[c.stream] for c in table]
        now = trio.current_time()
        for stream in streams:
            stream.running.add(runner.match_id)
            stream.waiting_since = now  # to the back of the queue
            state.running_by_bot[stream.bot] += 1
        meetings = state.meetings[variant_name]
        for i, one in enumerate(table):
            for other in table[i + 1 :]:
                key = pair_key(one.bot, other.bot)
                meetings[key] = meetings.get(key, 0) + 1
        arena_match = ArenaMatch(runner, [c.bot for c in table], streams)
        state.matches[runner.match_id] = arena_match
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
        state.nursery.start_soon(self.results.follow, arena_match, now_ms())
