"""`arena ladder run`: the ladder's matches through the referee server, recorded as they end.

One referee server (in this process, on its own port), or several referee processes
(`referees.py`), at most `concurrency` matches at once, each with its local bots as processes
(`player.py`: per match, or persistent); or, with `ray`,
the matches played by workers on a Ray cluster (`cluster.py`). Each finished match is read
back from its replay log and recorded in one transaction with the ratings after it. Matches
already in the database are skipped, so a run that was stopped, however abruptly, is continued
by running it again; a match that was in flight is played again from the start.

A match in which the referee's substitute played most of a seat's decisions because its local
bot was not there (it never said Hello, came late, or lost its link without its process ending:
a bot the machine starved, not one that crashed) says nothing about the bots: it is not
recorded, the log says so, and it is played again, at most `VOID_RETRIES` more times; then it
stays unplayed, as a failed match does. A bot whose process ends during a match is still
charged with that match (its decisions are `crash` faults), and so is a remote bot that does
not come.
"""

from __future__ import annotations

import contextlib
import signal
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

import structlog
import trio

from ..progress import Bar
from ..ratings import Ratings
from ..referee.runner import MatchConfig
from ..server.app import serve
from .cluster import RayPlayer, cluster_player
from .config import BotSpec, LadderConfig
from .player import ClusterError, MatchPlayer, SubmittedVersions
from .referees import RefereePool, referee_pool
from .schedule import ScheduledMatch, build_schedule, tables
from .stats import pair_verdicts
from .store import MatchRecord, Store, StoreError, latest_ratings

log = structlog.get_logger(component="ladder")


@dataclass(frozen=True)
class RayOptions:
    """`--ray [ADDRESS]`: the cluster (None: a local Ray on the loopback) and its worker count
    (None: one per CPU of the cluster)."""

    address: str | None = None
    workers: int | None = None


class Player(Protocol):
    """Plays a scheduled match somewhere; its record, or None when it failed in the referee."""

    async def play_record(self, scheduled: ScheduledMatch) -> MatchRecord | None: ...

    async def close(self) -> None: ...

    def in_use(self) -> int: ...


@contextlib.asynccontextmanager
async def open_player(
    bots: Sequence[BotSpec],
    ray: RayOptions | None,
    match_config: Callable[[ScheduledMatch], MatchConfig],
    replay_dir: Path,
    concurrency: int,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    base: Path | None = None,
    referees: int = 1,
    verbose: bool = False,
    versions: SubmittedVersions | None = None,
) -> AsyncIterator[Player]:
    """A player on this machine: a server in this process on `host`:`port`, or with `referees`
    > 1 that many referee processes (at most `concurrency`; their lines all logged with
    `verbose`); or on Ray (the bots' files from `base`, if given). Closed at the end. `versions`
    starts the bots that name a submitted version (they play on one server, as sandboxed bots do)."""
    player: Player
    if ray is not None:
        remote = [bot.name for bot in bots if bot.remote]
        if remote:
            raise ClusterError(f"remote bots ({', '.join(remote)}) dial one server: they cannot play on Ray")
        cluster = cluster_player(
            ray.address, ray.workers, concurrency, list(bots), base, match_config, replay_dir
        )
        with cluster as player:
            try:
                yield player
            finally:
                await player.close()
        return
    if min(referees, concurrency) > 1:
        if port:
            raise ValueError("a fixed port is one referee server")
        async with referee_pool(
            min(referees, concurrency), bots, match_config, replay_dir, host, verbose
        ) as pool:
            yield pool
        return
    by_name = {bot.name: bot for bot in bots}
    with contextlib.ExitStack() as stack:
        socket = None
        if any(bot.sandbox for bot in bots):  # sandboxed bots' way in (a short path: at most 107 bytes)
            socket = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-"))) / "referee.sock"
        async with trio.open_nursery() as nursery:
            hub, bound = await nursery.start(partial(serve, host, port, replay_dir, unix=socket))
            address = f"{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{bound}"
            logs = replay_dir / "bot-logs"
            player = MatchPlayer(
                hub, address, match_config, by_name.__getitem__, logs, socket=socket, versions=versions
            )
            try:
                yield player
            finally:
                await player.close()
                nursery.cancel_scope.cancel()


VOID_SHARE = 0.5  # more than this share of a seat's decisions by the substitute: not evidence
VOID_RETRIES = 2  # plays of a match after the first that was not evidence


def absent_seats(match: MatchRecord, local: Callable[[str], bool]) -> list[int]:
    """The seats of `match` whose decisions the substitute mostly played while their local bot
    (`local(name)`) was not connected and its process had not ended (`disconnect` faults)."""
    away = Counter(f.seat for f in match.faults if f.kind == "disconnect" and f.step is not None)
    seats = []
    for seat, count in sorted(away.items()):
        crashed = seat < len(match.exits) and match.exits[seat][1]
        decisions = match.seat_decisions[seat] if seat < len(match.seat_decisions) else 0
        if local(match.seats[seat]) and not crashed and count > VOID_SHARE * decisions:
            seats.append(seat)
    return seats


@dataclass
class Counted:
    """What playing a match until it is evidence gave: its record (None: it failed in the
    referee, or was not evidence in any of its plays) and the plays that were not counted."""

    record: MatchRecord | None
    voided: int = 0


async def play_counted(
    player: Player, scheduled: ScheduledMatch, local: Callable[[str], bool], retries: int = VOID_RETRIES
) -> Counted:
    """Play `scheduled` until no seat of it was played by the substitute for want of its bot
    (`absent_seats`), at most `retries` times more; each play not counted is logged."""
    voided = 0
    while True:
        match = await player.play_record(scheduled)
        seats = absent_seats(match, local) if match is not None else []
        if match is None or not seats:
            return Counted(match, voided)
        voided += 1
        again = voided <= retries
        log.warning(
            "match not counted (a bot was not connected for most of its decisions): "
            + ("it is played again" if again else f"{voided} times; it stays unplayed"),
            match=scheduled.key,
            bots=[match.seats[s] for s in seats],
            faults={
                match.seats[s]: f"{sum(f.seat == s for f in match.faults)}/{match.seat_decisions[s]}"
                for s in seats
            },
            replay=match.replay,
        )
        if not again:
            return Counted(None, voided)


@dataclass
class RunSummary:
    planned: int
    recorded_before: int
    played: int = 0
    failed: int = 0
    decisions: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    stopped_by: int = 0  # the signal that interrupted it (SIGINT or SIGTERM), for the exit status
    deals: int = 0
    decided: bool | None = None  # with `[decide]`: whether every pair to decide is resolved
    voided: int = 0  # plays not counted: a seat's bot was not there (`absent_seats`)
    fatal: StoreError | ClusterError | None = None  # what stopped the run early (a locked database, …)

    @property
    def remaining(self) -> int:
        return self.planned - self.recorded_before - self.played


def ladder_match_config(config: LadderConfig) -> Callable[[ScheduledMatch], MatchConfig]:
    def make(scheduled: ScheduledMatch) -> MatchConfig:
        return MatchConfig(
            variant=config.variant,
            deals=config.deals,
            seed=scheduled.seed,
            seat_names=scheduled.bots,
            time_control=config.time_control,
            fault_policy=config.fault_policy,
            max_invalid=config.max_invalid,
            reconnect_grace_s=config.reconnect_grace_ms / 1000,
            start_timeout_s=config.start_timeout_ms / 1000,
        )

    return make


def leader_note(leader: tuple[str, float] | None) -> str:
    return f"leader {leader[0]} ({leader[1]:.1f})" if leader else ""


def progress_note(deals_per_s: float, workers: int | None, leader: tuple[str, float] | None) -> str:
    """Beside the bar: deals per second, the Ray workers in use, the leader."""
    parts = [f"{deals_per_s:.1f} deals/s"]
    if workers is not None:
        parts.append(f"{workers} worker{'s' if workers != 1 else ''}")
    parts.append(leader_note(leader))
    return "  ".join(p for p in parts if p)


def remote_bots(config: LadderConfig, scheduled: ScheduledMatch) -> set[str]:
    return {name for name in scheduled.bots if config.bot(name).remote}


async def run_ladder(
    config: LadderConfig,
    *,
    database: Path | None = None,
    bar: bool = False,
    max_matches: int | None = None,
    on_player: Callable[[Player], None] | None = None,
    ray: RayOptions | None = None,
    verbose: bool = False,
    versions: SubmittedVersions | None = None,
) -> RunSummary:
    """Play every match of the ladder not yet in its database; see the module docstring.
    With `bar`, a progress bar on standard error when it is a terminal; with `verbose`, the
    referee processes log all their lines (else the ladder's own and errors). Raises StoreError or
    ClusterError (one line each) when the run cannot go on; every match recorded stays. `versions`
    starts the bots that name a submitted version (`arena.submissions.ladder`)."""
    path = database or config.database
    store = Store.open(path, config.name, config.identity(), config.bots)
    try:
        with Bar("matches", per_minute=True, show=bar) as progress:
            summary = await _run(config, store, progress, max_matches, on_player, ray, verbose, versions)
    finally:
        store.close()
    if summary.fatal is not None:
        raise summary.fatal
    return summary


async def _run(
    config: LadderConfig,
    store: Store,
    progress: Bar,
    max_matches: int | None,
    on_player: Callable[[Player], None] | None,
    ray: RayOptions | None,
    verbose: bool,
    versions: SubmittedVersions | None = None,
) -> RunSummary:
    names = [bot.name for bot in config.bots]
    schedule = build_schedule(names, config.seats, config.deal_sets, config.seed, config.seating)
    done = store.done_keys()
    pending = [m for m in schedule if m.key not in done]
    store.set_planned(len(schedule))
    recorded_before = len(done & {m.key for m in schedule})
    summary = RunSummary(planned=len(schedule), recorded_before=recorded_before)
    if max_matches is not None:
        pending = pending[:max_matches]
    ratings = Ratings(names, latest_ratings(store.conn))
    progress.start(len(schedule), recorded_before, leader_note(ratings.leader() if recorded_before else None))
    started = time.monotonic()

    workers: list[Player] = []

    def record(scheduled: ScheduledMatch, counted: Counted) -> None:
        match = counted.record
        summary.voided += counted.voided
        if match is None:
            summary.failed += 1
            if not counted.voided or counted.voided <= VOID_RETRIES:
                log.error("match failed; it stays unplayed", match=scheduled.key)
            return
        before = dict(ratings.ratings)
        ratings.update(match.seats, match.deals, match.forfeited)
        if store.record(match, ratings.of(set(match.seats))) is None:
            ratings.ratings = before  # already recorded (cannot happen under the run lock)
            log.warning("match already recorded", match=match.key)
            return
        summary.played += 1
        summary.decisions += match.decisions
        summary.deals += len(match.deals)
        leader = ratings.leader()
        rate = summary.deals / max(time.monotonic() - started, 1e-9)
        progress.advance(progress_note(rate, workers[0].in_use() if ray and workers else None, leader))
        faults: dict[str, int] = {}
        for fault in match.faults:
            faults[match.seats[fault.seat]] = faults.get(match.seats[fault.seat], 0) + 1
        # With a progress bar on screen a line per match is noise; elsewhere it is the progress.
        (log.debug if progress.shown else log.info)(
            "match recorded",
            match=match.key,
            scores=match.scores,
            termination=match.termination,
            faults=faults or None,
            seconds=round(match.finished - match.started, 2),
            **progress.fields(),
            leader=leader[0] if leader else None,
        )

    async with trio.open_nursery() as nursery:

        async def watch_signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    summary.interrupted, summary.stopped_by = True, int(signum)
                    log.warning(
                        "stopping: matches in flight will be played again by the next run", signal=signum
                    )
                    nursery.cancel_scope.cancel()
                    return

        async def tick() -> None:
            while True:
                await trio.sleep(1.0)
                progress.refresh()

        nursery.start_soon(watch_signals)
        if progress.shown:
            nursery.start_soon(tick)
        match_config = ladder_match_config(config)
        local = {bot.name for bot in config.bots if not bot.remote}.__contains__
        try:
            async with open_player(
                config.bots,
                ray,
                match_config,
                config.replay_dir,
                config.concurrency,
                host=config.host,
                port=config.port,
                base=config.path.resolve().parent,
                referees=config.referees,
                verbose=verbose,
                versions=versions,
            ) as player:
                where: dict[str, object] = {"ray": ray.address or "local"} if ray else {}
                if isinstance(player, MatchPlayer):
                    where = {"address": player.address}
                elif isinstance(player, RefereePool):
                    where = {"referees": player.addresses()}
                log.info(
                    "ladder started",
                    ladder=config.name,
                    database=str(store.path),
                    matches=len(schedule),
                    recorded=recorded_before,
                    to_play=len(pending),
                    concurrency=config.concurrency,
                    **where,
                )
                workers.append(player)
                if on_player is not None:
                    on_player(player)

                async def work(scheduled: ScheduledMatch) -> None:
                    try:
                        record(scheduled, await play_counted(player, scheduled, local))
                    except (StoreError, ClusterError) as exc:  # the run cannot go on
                        summary.fatal = exc
                        nursery.cancel_scope.cancel()
                    except Exception:  # one match's failure (a bot's log file, say) does not stop the ladder
                        summary.failed += 1
                        log.exception("match failed; it stays unplayed", match=scheduled.key)

                # On Ray, `concurrency` matches at once on each worker.
                concurrency = player.slots if isinstance(player, RayPlayer) else config.concurrency
                exclusive = lambda m: remote_bots(config, m)  # noqa: E731
                if config.decide is None:
                    await dispatch(pending, concurrency, exclusive, work)
                else:
                    await play_until_decided(
                        config,
                        store,
                        pending,
                        lambda batch: dispatch(batch, concurrency, exclusive, work),
                        summary,
                    )
        except ClusterError as exc:  # the cluster cannot be had, or lost every worker
            summary.fatal = exc
        nursery.cancel_scope.cancel()
    progress.stop()
    summary.seconds = time.monotonic() - started
    log.info(
        "ladder stopped" if summary.interrupted else "ladder finished",
        played=summary.played,
        failed=summary.failed,
        not_counted=summary.voided,
        remaining=summary.remaining,
        seconds=round(summary.seconds, 1),
    )
    return summary


def undecided_pairs(config: LadderConfig, store: Store) -> list[tuple[str, str]]:
    """The pairs of `config.decide` the recorded matches do not resolve yet (neither separated
    nor found closer than the effect)."""
    return [(p.higher, p.lower) for p in pair_verdicts(store.conn, config.decide) if not p.resolved]


async def play_until_decided(
    config: LadderConfig,
    store: Store,
    pending: Sequence[ScheduledMatch],
    play: Callable[[list[ScheduledMatch]], Awaitable[None]],
    summary: RunSummary,
) -> None:
    """An adaptive ladder (`[decide]`): deal set after deal set, only the tables where a pair
    still to decide sits, until every pair is resolved (separated, or closer than the effect) or
    the deal sets (the budget) run out.
    What to play next depends only on what is recorded, so a resumed run goes on the same way."""
    all_tables = tables([bot.name for bot in config.bots], config.seats)
    left = {m.key for m in pending}  # not recorded, and within --max-matches
    for deal_set in range(config.deal_sets):
        undecided = undecided_pairs(config, store)
        if not undecided or not left:
            break
        wanted = {t for t, at in enumerate(all_tables) if any(a in at and b in at for a, b in undecided)}
        batch = [m for m in pending if m.deal_set == deal_set and m.table in wanted and m.key in left]
        await play(batch)
        left.difference_update(m.key for m in batch)
        if summary.fatal is not None:
            return
    summary.decided = not undecided_pairs(config, store)
    log.info(
        "ladder decided" if summary.decided else "ladder undecided",
        pairs=[
            {
                "higher": p.higher,
                "lower": p.lower,
                "separated": p.separated,
                "within_effect": p.within_effect,
                "deal_sets": p.deal_sets,
            }
            for p in pair_verdicts(store.conn, config.decide)
        ],
    )


async def dispatch(
    pending: Sequence[ScheduledMatch],
    concurrency: int,
    exclusive: Callable[[ScheduledMatch], set[str]],
    work: Callable[[ScheduledMatch], Awaitable[None]],
) -> None:
    """Play `pending` in order, `concurrency` at once; a match waits while any bot in
    `exclusive(match)` (a remote bot, which plays one match at a time) is busy."""
    queue = list(pending)
    busy: set[str] = set()
    running = 0
    changed = trio.Condition()

    async def one(match: ScheduledMatch, claimed: set[str]) -> None:
        nonlocal running
        try:
            await work(match)
        finally:
            async with changed:
                running -= 1
                busy.difference_update(claimed)
                changed.notify_all()

    async with trio.open_nursery() as nursery:
        while queue:
            async with changed:
                while True:
                    pick = None
                    if running < concurrency:
                        pick = next((m for m in queue if not exclusive(m) & busy), None)
                    if pick is not None:
                        break
                    await changed.wait()
                queue.remove(pick)
                claimed = exclusive(pick)
                busy.update(claimed)
                running += 1
            nursery.start_soon(one, pick, claimed)
