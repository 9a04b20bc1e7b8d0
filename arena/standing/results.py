"""Recording the arena's matches: a result, the ratings it changes, the bots it pauses.

When a match ends its replay is summarised on a worker thread, the ratings are updated with the
OpenSkill code the ladder uses too (`arena.ratings`), and everything is written to the store in
one transaction (`Store.finish_match`). A result the bots were told of is stored even while the
server stops; a match that did not finish is recorded as aborted, never rated.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from ..ratings import Ratings
from ..referee.runner import MatchState
from ..replay.summary import read_results
from .cluster import Cluster, release_places
from .state import ArenaMatch, LobbyState
from .store import MatchResult, NotRunningError, Pause, SeatResult, now_ms

Rate = Callable[[dict[str, tuple[float, float]]], dict[str, tuple[float, float]]]
"""A match's rating update: the seats' stored (mu, sigma) to their new ones."""

RECORD_TIMEOUT_S = 30.0
"""How long a stopping server waits to store a result its bots were already told of."""


class Results:
    """Follows each match the lobby seated until it is recorded (trio thread)."""

    def __init__(self, state: LobbyState) -> None:
        self.state = state

    async def follow(self, arena_match: ArenaMatch, seated_ms: int) -> None:
        """Record the match when it ends; a stop before that leaves it 'running' → aborted on restart."""
        state = self.state
        runner = arena_match.runner
        c = runner.config
        try:
            await state.db(
                state.store.start_match,
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
            state.matches.pop(runner.match_id, None)

    async def follow_hosted(self, cluster: Cluster, arena_match: ArenaMatch, started_ms: int) -> None:
        """As `follow`, for a match booked in the store by this server's round."""
        runner = arena_match.runner
        try:
            await runner.done.wait()
            ended = now_ms()  # before its places are freed: the next match of a bot starts later
            clean = [seat.index for seat in runner.seats if not seat.faults]
            await self.state.cdb(cluster.release, runner.match_id, clean, ended)
            with trio.CancelScope(shield=True), trio.move_on_after(RECORD_TIMEOUT_S):
                await self._record(arena_match, ended)
        except Exception:
            runner.log.exception("arena match not recorded")
        finally:
            for stream in arena_match.streams:
                stream.running.discard(runner.match_id)
            self.state.matches.pop(runner.match_id, None)

    def _release(self, arena_match: ArenaMatch, which: list[bool]) -> None:
        """Free the seats `which` selects (by seat), each once."""
        match_id = arena_match.runner.match_id
        for stream, chosen in zip(arena_match.streams, which, strict=True):
            if chosen and match_id in stream.running:
                stream.running.discard(match_id)
                self.state.running_by_bot[stream.bot] -= 1

    async def _record(self, arena_match: ArenaMatch, ended_ms: int) -> None:
        state = self.state
        runner = arena_match.runner
        variant = runner.config.variant.name
        if runner.state is not MatchState.FINISHED or runner.replay_path is None:
            await state.db(self._abort, runner.match_id, "the match did not finish (its server stopped)")
            return
        result, rate = await trio.to_thread.run_sync(summarise, arena_match)  # no store call
        result.ended_ms = ended_ms
        try:
            pauses: list[Pause] = await state.db(
                state.store.finish_match,
                result,
                state.config.pause_after,
                int(state.config.pause_s * 1000),
                None if state.cluster is None else lambda db: release_places(db, [runner.match_id]),
                rate,
            )
        except NotRunningError:
            runner.log.warning("not rated: another server recorded the match as aborted")
            return
        for bot, (mu, _sigma) in result.ratings.items():
            state.mu[(variant, bot)] = mu
        for pause in pauses:
            state.pause(pause)

    def _abort(self, match_id: str, reason: str) -> None:
        """Record the match as aborted (worker thread)."""
        self.state.store.abort_match(match_id, reason)
        if self.state.cluster is not None:
            self.state.cluster.release(match_id)


def summarise(arena_match: ArenaMatch) -> tuple[MatchResult, Rate]:
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
