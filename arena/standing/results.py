"""Recording the arena's matches: a result, the ratings it changes, the bots it pauses.

When a match ends, what the store must learn (its result, or that it was aborted) is first
written to the pending-results journal beside the replays (`pending`; a result before the bots
are told the match ended, from the runner's `before_end`), then its replay is
summarised on a worker thread, the ratings are updated with the OpenSkill code the ladder uses
too (`arena.ratings`), and everything is written to the store in one transaction
(`Store.finish_match`); the journal's record goes once the store has it. A store that does not
answer (a database restart, an outage) leaves the record on disk, and it is recorded as soon as
the store answers (`keep_settling`), or by the next server started on the same replay directory.
A match is recorded once: the store takes a result only for a match it still has running. A
match that did not finish is recorded as aborted, never rated, also when the server stops.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
import trio

from ..ratings import Ratings
from ..referee.runner import MatchState
from ..replay.summary import read_results
from .cluster import Cluster, TakenForDeadError, release_places
from .luck import adjusted_points
from .pending import Journal, PendingRecord
from .state import ArenaMatch, LobbyState, log_failure
from .store import MatchResult, NotRunningError, Pause, SeatResult, now_ms

log = structlog.get_logger()

Rate = Callable[[dict[str, tuple[float, float]]], dict[str, tuple[float, float]]]
"""A match's rating update: the seats' stored (mu, sigma) to their new ones."""

RECORD_TIMEOUT_S = 30.0
"""How long a stopping server waits to store a result its bots were already told of (it stays in
the journal after that)."""
STOP_WAIT_S = 5.0
"""How long a stopping server waits for a cut-off match's runner to end, to record it aborted."""
RETRY_S = 1.0
"""How often the journal's records are offered to a store that did not answer."""


class Results:
    """Follows each match the lobby seated until it is recorded (trio thread)."""

    def __init__(self, state: LobbyState, journal: Journal) -> None:
        self.state = state
        self.journal = journal
        self._settling: set[str] = set()  # match ids being written to the store right now
        self._waiting: set[str] = set()  # match ids whose first try failed (logged once)
        self._journalled: dict[str, PendingRecord] = {}  # results saved before their bots were told

    async def follow(self, arena_match: ArenaMatch, seated_ms: int) -> None:
        """Record the match when it ends (single server)."""
        state = self.state
        runner = arena_match.runner
        runner.before_end = lambda: self._journal(arena_match)
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
        except Exception:
            runner.log.exception("arena match not stored as running; its result will not be rated")
        try:
            await runner.done.wait()
            # A bot without a fault in this match may be seated again while the result is stored;
            # one with a fault waits: this result may pause it.
            self._release(arena_match, [not seat.faults for seat in runner.seats])
        finally:  # also when the server stops: a cut-off match is recorded aborted
            with trio.CancelScope(shield=True):
                await self._conclude(arena_match, None)
                self._release(arena_match, [True] * len(arena_match.streams))
                state.matches.pop(runner.match_id, None)

    async def follow_hosted(self, cluster: Cluster, arena_match: ArenaMatch, started_ms: int) -> None:
        """As `follow`, for a match booked in the store by this server's round."""
        runner = arena_match.runner
        runner.before_end = lambda: self._journal(arena_match)
        try:
            await runner.done.wait()
        finally:
            with trio.CancelScope(shield=True):
                await self._conclude(arena_match, cluster)
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

    async def _conclude(self, arena_match: ArenaMatch, cluster: Cluster | None) -> None:
        """The match ended (or the server stops): journal what the store must learn, free the
        places of the seats without a fault, and record it (shielded by the caller)."""
        runner = arena_match.runner
        with trio.move_on_after(STOP_WAIT_S):  # a cut-off runner ends as the server stops
            await runner.done.wait()
        record = self._journalled.pop(runner.match_id, None)
        if record is None:  # cut off, or its journal could not be written at its end
            # Ended before its places are freed: the next match of a bot starts later.
            record = pending_record(arena_match, now_ms())
            await self._save(record)
        ended = record.ended_ms
        if cluster is not None:
            clean = [seat.index for seat in runner.seats if not seat.faults]
            try:
                await self.state.cdb(cluster.release, runner.match_id, clean, ended)
            except TakenForDeadError:
                pass  # the others aborted the match and freed its places; settling says so
            except Exception as exc:  # the result's transaction frees every place anyway
                runner.log.warning("cannot free the match's places yet", error=str(exc))
        with trio.move_on_after(RECORD_TIMEOUT_S):
            await self.settle(record)

    async def _journal(self, arena_match: ArenaMatch) -> None:
        """The runner's `before_end`: the finished match's result on disk before its bots hear of it."""
        record = pending_record(arena_match, now_ms())
        if await self._save(record):
            self._journalled[record.match_id] = record

    async def _save(self, record: PendingRecord) -> bool:
        try:
            await trio.to_thread.run_sync(self.journal.save, record)
        except (OSError, ValueError) as exc:
            log.error("cannot keep the result on disk", match_id=record.match_id, error=str(exc))
            return False
        return True

    async def _store_or_explain(self, record: PendingRecord, bound: Any) -> None:
        """Record `record`, or log why the store refuses it for good; raises when the store does not
        answer (to the record, or to the look at why it refused)."""
        try:
            await self._store(record)
        except NotRunningError:
            found = await self.state.db(self.state.store.match_state, record.match_id)
            if found == "finished":
                bound.info("result already recorded")  # an earlier try's commit went through
            else:
                bound.warning("not recorded: the store has the match as " + (found or "unknown"))
        except TakenForDeadError:
            bound.warning("not recorded: this server was taken for dead and its matches aborted")

    async def settle(self, record: PendingRecord) -> bool:
        """Give the store one pending record; True once it is settled (recorded, or refused for
        good) and gone from the journal, False if the store did not answer (it stays on disk)."""
        if record.match_id in self._settling:
            return False
        self._settling.add(record.match_id)
        bound = log.bind(match_id=record.match_id)
        try:
            try:
                await self._store_or_explain(record, bound)
            except Exception as exc:  # no answer to the record, or to the look at a refused one
                if record.match_id not in self._waiting:
                    self._waiting.add(record.match_id)
                    bound.warning("result kept on disk until the store answers", error=str(exc))
                return False
            if record.match_id in self._waiting:
                self._waiting.discard(record.match_id)
                bound.info("pending result recorded")
            await trio.to_thread.run_sync(self.journal.remove, record.match_id)
            return True
        finally:
            self._settling.discard(record.match_id)

    async def _store(self, record: PendingRecord) -> None:
        state = self.state
        cluster = state.cluster
        guard = None if cluster is None else cluster.guard_live
        also = None if cluster is None else _freeing(record.match_id)
        if record.kind == "result":
            try:
                result, rate = await trio.to_thread.run_sync(summarise, record, self.journal.replay_dir)
            except (OSError, ValueError, KeyError, IndexError) as exc:
                log.error(
                    "the replay of a finished match cannot be read", match_id=record.match_id, error=str(exc)
                )
                record.kind, record.reason = "abort", f"its replay cannot be read: {exc}"
            else:
                pauses: list[Pause] = await state.db(
                    state.store.finish_match,
                    result,
                    state.config.pause_after,
                    int(state.config.pause_s * 1000),
                    also,
                    rate,
                    guard,
                )
                for bot, (mu, _sigma) in result.ratings.items():
                    state.mu[(record.variant, bot)] = mu
                for pause in pauses:
                    state.pause(pause)
                return
        if not await state.db(state.store.abort_match, record.match_id, record.reason, guard, also):
            raise NotRunningError(f"match {record.match_id} is not running in the store")

    async def settle_all(self) -> bool:
        """Offer every record of the journal to the store, oldest first; False at the first the
        store does not take."""
        for record in await trio.to_thread.run_sync(self.journal.load):
            if not await self.settle(record):
                return False
        return True

    async def keep_settling(self) -> None:
        """Until cancelled: the journal's records, whenever the store answers again."""
        while True:
            await trio.sleep(RETRY_S)
            try:
                await self.settle_all()
            except Exception as exc:  # never stop retrying: the next pass may do
                log_failure("cannot read the pending results", exc)

    async def pending(self) -> int:
        """How many records wait in the journal."""
        return len(await trio.to_thread.run_sync(self.journal.load))


def _freeing(match_id: str) -> Callable[[Any], None]:
    return lambda db: release_places(db, [match_id])


def pending_record(arena_match: ArenaMatch, ended_ms: int) -> PendingRecord:
    """What the store must learn of a match that ended (or was cut off)."""
    runner = arena_match.runner
    record = PendingRecord(
        match_id=runner.match_id,
        kind="abort",
        variant=runner.config.variant.name,
        bots=list(arena_match.bots),
        ended_ms=ended_ms,
        reason="the match did not finish (its server stopped)",
    )
    if runner.abort_reason:  # a number left int64 (arena/referee/limits.py): never rated
        record.reason = runner.abort_reason
    elif runner.state is MatchState.FINISHED and runner.replay_path is not None:
        record.kind, record.reason = "result", ""
        record.replay = runner.replay_path.name
        record.termination = str(runner.termination)
        record.forfeited = runner.forfeited
        record.scores = list(runner.match.scores)
    return record


def summarise(record: PendingRecord, replay_dir: Path) -> tuple[MatchResult, Rate]:
    """The match's result from its replay, and how it changes the seats' ratings (worker thread)."""
    bots = record.bots
    results = read_results(replay_dir / record.replay, len(bots))
    deals, faults, decisions, hellos = results.deals, results.faults, results.decisions, results.hellos
    forfeited = record.forfeited
    # Where sound, each deal's seats are ranked by their points less their cards' luck (luck.py).
    adjusted = adjusted_points(replay_dir / record.replay, deals)
    luck = [0.0] * len(bots)  # by seat, the luck taken out of its match score
    for row, deal in zip(adjusted or [], deals, strict=False):
        for seat, value in enumerate(row):
            luck[seat] += deal.points[seat] - value

    def rate(stored: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        ratings = Ratings(bots, stored)
        ratings.update(bots, deals, forfeited, adjusted)
        return ratings.of(bots)

    seats = []
    for seat, bot in enumerate(bots):
        mine = [f"{f.kind}: {f.detail}" for f in faults if f.seat == seat]
        seats.append(
            SeatResult(
                bot=bot,
                score=record.scores[seat],
                deals=sum(1 for d in deals if d.active[seat]),
                decisions=decisions[seat],
                faults=len(mine),
                fault_kinds=mine,
                hello=hellos[seat] if hellos[seat] != ("", "") else None,
                adjusted_score=None if adjusted is None else record.scores[seat] - luck[seat],
            )
        )
    result = MatchResult(
        match_id=record.match_id,
        variant=record.variant,
        termination=record.termination,
        replay=record.replay,
        seats=seats,
        ratings={},
        ended_ms=record.ended_ms,
    )
    return result, rate
