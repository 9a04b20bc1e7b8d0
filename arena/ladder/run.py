"""`arena ladder run`: the ladder's matches through the referee server, recorded as they end.

One referee server (in this process, on its own port), at most `concurrency` matches at once,
one process per local bot per match. Each finished match is read back from its replay log and
recorded in one transaction with the ratings after it. Matches already in the database are
skipped, so a run that was stopped, however abruptly, is continued by running it again; a
match that was in flight is played again from the start.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog
import trio

from ..live import Hub
from ..progress import Bar
from ..ratings import Ratings
from ..referee.runner import MatchConfig, MatchRunner
from ..replay.summary import DealRow, FaultRow, read_results
from ..server.app import serve
from ..server.local import BotProcess, bot_environment
from .config import BotSpec, LadderConfig
from .schedule import ScheduledMatch, build_schedule
from .store import MatchRecord, Store, latest_ratings

log = structlog.get_logger(component="ladder")

EXIT_WAIT_S = 3.0  # after MatchEnd, for the bots to leave by themselves


@dataclass
class PlayedMatch:
    """What a match left behind, read from the runner, its replay and its bot processes."""

    scheduled: ScheduledMatch
    runner: MatchRunner
    started: float
    finished: float
    exits: list[tuple[int | None, bool]]
    deals: list[DealRow] = field(default_factory=list)
    faults: list[FaultRow] = field(default_factory=list)
    hellos: list[tuple[str, str]] = field(default_factory=list)  # (bot_name, bot_version) by seat

    def record(self) -> MatchRecord:
        m, r = self.scheduled, self.runner
        return MatchRecord(
            key=m.key,
            deal_set=m.deal_set,
            table=m.table,
            arrangement=m.arrangement,
            seed=m.seed,
            seats=list(m.bots),
            match_id=r.match_id,
            termination=r.termination,
            forfeited=r.forfeited,
            scores=list(r.match.scores),
            decisions=r.decisions,
            started=self.started,
            finished=self.finished,
            replay=r.replay_path.name if r.replay_path else None,
            deals=self.deals,
            faults=self.faults,
            exits=self.exits,
            hellos=self.hellos,
        )


class MatchPlayer:
    """Plays scheduled matches on one server, launching the local bots of each."""

    def __init__(
        self,
        hub: Hub,
        address: str,
        match_config: Callable[[ScheduledMatch], MatchConfig],
        bots: Callable[[str], BotSpec],
        log_dir: Path,
    ) -> None:
        self.hub = hub
        self.address = address
        self.match_config = match_config
        self.bots = bots
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        self.live: set[MatchRunner] = set()
        self.finished_decisions = 0

    def decisions(self) -> int:
        """Decisions made so far in the matches of this player, finished or not."""
        return self.finished_decisions + sum(runner.decisions for runner in self.live)

    async def play(self, scheduled: ScheduledMatch) -> PlayedMatch:
        config = self.match_config(scheduled)
        remote = {seat: spec.token for seat, spec in enumerate(map(self.bots, scheduled.bots)) if spec.remote}
        runner = self.hub.create_match(config, tokens=remote)
        self.live.add(runner)
        played = PlayedMatch(scheduled, runner, time.time(), 0.0, [(None, False)] * len(scheduled.bots))
        processes: list[BotProcess] = []
        try:
            async with trio.open_nursery() as nursery:
                for seat, name in enumerate(scheduled.bots):
                    bot = self.bots(name)
                    if bot.remote:
                        continue  # it dials in with its own token
                    process = self._start(runner, scheduled, seat, bot, played)
                    if process is not None:
                        processes.append(process)
                        nursery.start_soon(self._watch, runner, seat, name, process, played)
                await runner.done.wait()
                self.hub.forget(runner.match_id)
                with trio.move_on_after(EXIT_WAIT_S):
                    while any(p.returncode is None for p in processes):
                        await trio.sleep(0.02)
                nursery.cancel_scope.cancel()
        finally:
            self.live.discard(runner)
            self.finished_decisions += runner.decisions
            with trio.CancelScope(shield=True):
                for process in processes:
                    await process.stop()
        played.finished = time.time()
        if runner.replay_path is not None:
            results = read_results(runner.replay_path, len(scheduled.bots))
            played.deals, played.faults, played.hellos = results.deals, results.faults, results.hellos
        return played

    def _start(
        self, runner: MatchRunner, scheduled: ScheduledMatch, seat: int, bot: BotSpec, played: PlayedMatch
    ) -> BotProcess | None:
        env = bot_environment(self.address, runner.seats[seat].token, seat)
        # Reproducible bots: a bot's seed depends on the deal set, its seat and its name, so the
        # opponents of an A/B pair play from the same seeds in both matches.
        seed = f"{scheduled.seed}:{seat}:{bot.name}"
        env.update({"ARENA_BOT_NAME": bot.name, "ARENA_BOT_SEED": seed, **bot.env})
        log_path = self.log_dir / f"{runner.match_id}-seat{seat}-{bot.name}.log"
        try:
            return BotProcess(bot.argv, env, log_path, bot.cwd)
        except OSError as exc:
            runner.mark_crashed(seat, f"cannot start the bot: {exc}")
            played.exits[seat] = (None, True)
            log.error("bot did not start", bot=bot.name, match=scheduled.key, error=str(exc))
            return None

    async def _watch(
        self, runner: MatchRunner, seat: int, name: str, process: BotProcess, played: PlayedMatch
    ) -> None:
        status = await process.wait()
        crashed = not runner.done.is_set()
        played.exits[seat] = (status, crashed)
        if crashed:
            runner.mark_crashed(seat, f"the bot process exited with status {status}")
            log.warning("bot crashed", bot=name, match=played.scheduled.key, status=status)


@dataclass
class RunSummary:
    planned: int
    recorded_before: int
    played: int = 0
    failed: int = 0
    decisions: int = 0
    seconds: float = 0.0
    interrupted: bool = False

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


def remote_bots(config: LadderConfig, scheduled: ScheduledMatch) -> set[str]:
    return {name for name in scheduled.bots if config.bot(name).remote}


async def run_ladder(
    config: LadderConfig,
    *,
    database: Path | None = None,
    bar: bool = False,
    max_matches: int | None = None,
    on_player: Callable[[MatchPlayer], None] | None = None,
) -> RunSummary:
    """Play every match of the ladder not yet in its database; see the module docstring.
    With `bar`, a progress bar on standard error when it is a terminal."""
    path = database or config.database
    store = Store.open(path, config.name, config.identity(), config.bots)
    try:
        with Bar("matches", per_minute=True, show=bar) as progress:
            return await _run(config, store, progress, max_matches, on_player)
    finally:
        store.close()


async def _run(
    config: LadderConfig,
    store: Store,
    progress: Bar,
    max_matches: int | None,
    on_player: Callable[[MatchPlayer], None] | None,
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

    def record(played: PlayedMatch) -> None:
        runner = played.runner
        if runner.replay_path is None:
            summary.failed += 1
            log.error("match failed; it stays unplayed", match=played.scheduled.key, match_id=runner.match_id)
            return
        match = played.record()
        before = dict(ratings.ratings)
        ratings.update(match.seats, match.deals, match.forfeited)
        if store.record(match, ratings.of(set(match.seats))) is None:
            ratings.ratings = before  # already recorded (cannot happen under the run lock)
            log.warning("match already recorded", match=match.key)
            return
        summary.played += 1
        summary.decisions += match.decisions
        leader = ratings.leader()
        progress.advance(leader_note(leader))
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
        hub, port = await nursery.start(serve, config.host, config.port, config.replay_dir)
        address = f"{'127.0.0.1' if config.host in ('0.0.0.0', '::', '') else config.host}:{port}"
        player = MatchPlayer(
            hub, address, ladder_match_config(config), config.bot, config.replay_dir / "bot-logs"
        )
        log.info(
            "ladder started",
            ladder=config.name,
            database=str(store.path),
            matches=len(schedule),
            recorded=recorded_before,
            to_play=len(pending),
            concurrency=config.concurrency,
            address=address,
        )
        if on_player is not None:
            on_player(player)

        async def watch_signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    summary.interrupted = True
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

        async def work(scheduled: ScheduledMatch) -> None:
            try:
                played = await player.play(scheduled)
            except Exception:  # one match's failure (a bot's log file, say) does not stop the ladder
                summary.failed += 1
                log.exception("match failed; it stays unplayed", match=scheduled.key)
                return
            record(played)

        await dispatch(pending, config.concurrency, lambda m: remote_bots(config, m), work)
        nursery.cancel_scope.cancel()
    progress.stop()
    summary.seconds = time.monotonic() - started
    log.info(
        "ladder stopped" if summary.interrupted else "ladder finished",
        played=summary.played,
        failed=summary.failed,
        remaining=summary.remaining,
        seconds=round(summary.seconds, 1),
    )
    return summary


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
