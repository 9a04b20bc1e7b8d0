"""Playing one scheduled match on this machine: a referee's `MatchRunner` on a server in this
process, and the match's local bots as processes: a new one per match, or, for a bot with
`processes = "persistent"`, one per bot and concurrent slot that plays match after match. A
persistent process is given each match's seat token and seed as a line of JSON on its standard
input (the SDKs' ``ARENA_MATCHES=stdin``), and goes on with the next when the match ends.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import structlog
import trio

from ..live import Hub
from ..referee.runner import MatchConfig, MatchRunner
from ..replay.summary import DealRow, FaultRow
from ..sandbox import SOCKET_PATH, Sandbox
from ..server.inprocess import InProcessBot, InProcessLink, load_bot, seat_inprocess
from ..server.local import BotProcess, bot_environment
from ..server.sandboxed import SandboxedProcess, Sandboxing, start_sandboxed
from .config import BotSpec
from .schedule import ScheduledMatch
from .store import MatchRecord

log = structlog.get_logger(component="ladder")

EXIT_WAIT_S = 3.0  # after MatchEnd, for the bots to leave by themselves
PROBE_S = 0.5  # after a persistent process's first match: does it exit (not reading its input)?

# For grpc's C core in the local bots (the Python and C++ SDKs; Node's grpc-js ignores it): its
# newer I/O engine reads each message on a thread of its own and hands it to the thread waiting for
# it, the older one (iomgr) reads on that thread itself, which saves a bot CPU and a context
# switch on every decision (benchmarks/RESULTS.md, "Where a decision's CPU goes"). Left alone
# when the ladder's environment or the bot's `env` sets it.
LOCAL_BOT_ENV = {"GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_for_all_other_endpoints"}


class ClusterError(Exception):
    """The referees cannot play the ladder: on Ray, Ray missing, an unreachable address, a bot
    missing on a worker, a match that failed on every worker; locally, a referee process that
    cannot start or a match that failed in every one (`referees.PoolError`). One line, for the
    command line."""


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
    modes: list[str] = field(default_factory=list)  # by seat: per-match, persistent or remote
    node: str = "local"
    seat_decisions: list[int] = field(default_factory=list)

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
            modes=self.modes,
            node=self.node,
            seat_decisions=self.seat_decisions,
        )


class PersistentBot:
    """A bot process that plays match after match: each match's environment (seat token, seat,
    seed) is one JSON line on its standard input; closing the input lets it exit."""

    def __init__(self, process: BotProcess | SandboxedProcess) -> None:
        self.process = process
        self.proven = False  # it has outlived a match end: it reads its input

    def seat(self, env: dict[str, str]) -> None:
        """Send the next match's environment; OSError (a broken pipe) if the process is gone."""
        stdin = self.process.popen.stdin
        assert stdin is not None
        stdin.write(json.dumps(env).encode() + b"\n")
        stdin.flush()

    async def stop(self) -> None:
        stdin = self.process.popen.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()  # end of input: the SDK's loop ends and the process exits by itself
        with trio.move_on_after(EXIT_WAIT_S):
            await self.process.wait()
        await self.process.stop()


class SubmittedVersions(Protocol):
    """Starts the submitted versions that ladder bots name (`BotSpec.version`) as the standing
    arena runs them (`arena.submissions.ladder`): their built trees, in the sandbox."""

    def start(self, version: str, env: dict[str, str] | None, socket: Path, output: Path) -> Sandbox:
        """`version` in a new sandbox reaching `socket`: for one match with `env`, else (None) a
        persistent process reading its matches from its input."""
        ...


class MatchPlayer:
    """Plays scheduled matches on one server, launching the local bots of each (or seating an
    idle persistent process of the bot); `close` stops the persistent processes."""

    def __init__(
        self,
        hub: Hub,
        address: str,
        match_config: Callable[[ScheduledMatch], MatchConfig],
        bots: Callable[[str], BotSpec],
        log_dir: Path,
        node: str = "local",
        log_tag: str = "",
        socket: Path | None = None,
        versions: SubmittedVersions | None = None,
    ) -> None:
        self.hub = hub
        self.versions = versions  # how bots naming a submitted version start (BotSpec.version)
        self.address = address
        self.socket = socket  # the server's Unix socket: sandboxed bots' way in (BotSpec.sandbox)
        self.match_config = match_config
        self.bots = bots
        self.log_dir = log_dir
        self.node = node
        self.log_tag = log_tag  # in persistent processes' log names: players sharing `log_dir` differ
        log_dir.mkdir(parents=True, exist_ok=True)
        self.live: set[MatchRunner] = set()
        self.finished_decisions = 0
        self.idle: dict[str, list[PersistentBot]] = {}  # persistent processes between two matches
        self.started_persistent = 0
        self.one_match: set[str] = set()  # persistent bots whose program exits after each match
        self.loaded: dict[str, InProcessBot] = {}  # in-process bots, resolved once

    async def close(self) -> None:
        """Stop every idle persistent process (shielded: it runs when a run is cancelled too)."""
        with trio.CancelScope(shield=True):
            pool = [bot for bots in self.idle.values() for bot in bots]
            self.idle.clear()
            async with trio.open_nursery() as nursery:
                for bot in pool:
                    nursery.start_soon(bot.stop)

    async def play_record(self, scheduled: ScheduledMatch) -> MatchRecord | None:
        """Play the match; its record, or None when it failed inside the referee (no replay)."""
        played = await self.play(scheduled)
        return played.record() if played.runner.replay_path is not None else None

    def in_use(self) -> int:
        """Matches being played now."""
        return len(self.live)

    def decisions(self) -> int:
        """Decisions made so far in the matches of this player, finished or not."""
        return self.finished_decisions + sum(runner.decisions for runner in self.live)

    async def play(self, scheduled: ScheduledMatch) -> PlayedMatch:
        config = self.match_config(scheduled)
        remote = {seat: spec.token for seat, spec in enumerate(map(self.bots, scheduled.bots)) if spec.remote}
        runner = self.hub.create_match(config, tokens=remote)
        self.live.add(runner)
        played = PlayedMatch(scheduled, runner, time.time(), 0.0, [(None, False)] * len(scheduled.bots))
        played.modes = [self.bots(name).mode for name in scheduled.bots]
        played.node = self.node
        processes: list[BotProcess | SandboxedProcess] = []
        seated: dict[int, PersistentBot] = {}
        inprocess: dict[int, InProcessLink] = {}
        try:
            async with trio.open_nursery() as nursery:
                for seat, name in enumerate(scheduled.bots):
                    bot = self.bots(name)
                    if bot.remote:
                        continue  # it dials in with its own token
                    if bot.inprocess:
                        inprocess[seat] = self._seat_inprocess(runner, scheduled, seat, bot)
                        continue
                    if bot.processes == "persistent" and name in self.one_match:
                        played.modes[seat] = "per-match"  # as it ran
                    elif bot.processes == "persistent":
                        persistent = self._seat_persistent(runner, scheduled, seat, bot, played)
                        if persistent is not None:
                            seated[seat] = persistent
                            nursery.start_soon(self._watch, runner, seat, name, persistent.process, played)
                        continue
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
            for seat, link in inprocess.items():
                link.close()
                played.exits[seat] = (link.exit_status, link.crashed)
            with trio.CancelScope(shield=True):
                for process in processes:
                    await process.stop()
                for seat, persistent in seated.items():
                    # Back to the pool if it is still there and the match ended; else it goes.
                    name = scheduled.bots[seat]
                    if runner.done.is_set() and not persistent.proven:
                        # A program that ignores its input exits after its match: wait a moment
                        # for that once, rather than give it a match it will not play.
                        with trio.move_on_after(PROBE_S):
                            await persistent.process.wait()
                        if persistent.process.returncode == 0:
                            self.one_match.add(name)
                            log.info("bot plays one match per process: started per match", bot=name)
                    if runner.done.is_set() and persistent.process.returncode is None:
                        persistent.proven = True
                        self.idle.setdefault(name, []).append(persistent)
                    else:
                        await persistent.stop()
        played.finished = time.time()
        if runner.replay_path is not None:
            results = runner.results  # what the replay says, counted as it was written
            played.deals, played.faults, played.hellos = results.deals, results.faults, results.hellos
            played.seat_decisions = results.decisions
            if runner.abort_reason:  # a deal left int64 (referee/limits.py): the store keeps those that fit
                played.deals = [d for d in played.deals if all(-(2**63) <= p < 2**63 for p in d.points)]
        return played

    def _match_env(
        self, runner: MatchRunner, scheduled: ScheduledMatch, seat: int, bot: BotSpec
    ) -> dict[str, str]:
        # Reproducible bots: a bot's seed depends on the deal set, its seat and its name, so the
        # opponents of an A/B pair play from the same seeds in both matches.
        return {
            "ARENA_ADDRESS": self.address,
            "ARENA_TOKEN": runner.seats[seat].token,
            "ARENA_SEAT": str(seat),
            "ARENA_BOT_NAME": bot.name,
            "ARENA_BOT_SEED": f"{scheduled.seed}:{seat}:{bot.name}",
        }

    def _seat_inprocess(
        self, runner: MatchRunner, scheduled: ScheduledMatch, seat: int, bot: BotSpec
    ) -> InProcessLink:
        """The bot made afresh for this match in this process (its seed as a process's), seated."""
        loaded = self.loaded.get(bot.name)
        if loaded is None:
            loaded = self.loaded[bot.name] = load_bot(bot.inprocess, bot.cwd)
        seed = self._match_env(runner, scheduled, seat, bot)["ARENA_BOT_SEED"]
        log_path = self.log_dir / f"{runner.match_id}-seat{seat}-{bot.name}.log"  # written if it raises
        return seat_inprocess(runner, seat, loaded, seed, log_path)

    def _sandboxed(
        self, runner: MatchRunner, seat: int, bot: BotSpec, env: dict[str, str], log_path: Path, stdin: bool
    ) -> SandboxedProcess:
        """`bot` in a sandbox (with `env` only, not this process's), its seat on a CPU clock."""
        if self.socket is None:
            raise OSError("sandboxed bots need the server's Unix socket")
        env = {**env, **bot.env, "ARENA_ADDRESS": f"unix:{SOCKET_PATH}"}
        if bot.version:
            if self.versions is None:
                raise OSError(f"{bot.version} is a submitted version: the ladder needs the arena's store")
            box = self.versions.start(bot.version, None if stdin else env, self.socket, log_path)
            runner.clock_cpu(seat, box.cpu_seconds)
            return SandboxedProcess(box)
        command = shlex.join(bot.argv)
        box = start_sandboxed(runner, seat, command, self.socket, log_path, Sandboxing(), env, bot.cwd, stdin)
        return SandboxedProcess(box)

    def _start(
        self, runner: MatchRunner, scheduled: ScheduledMatch, seat: int, bot: BotSpec, played: PlayedMatch
    ) -> BotProcess | SandboxedProcess | None:
        if bot.sandbox:
            log_path = self.log_dir / f"{runner.match_id}-seat{seat}-{bot.name}.log"
            try:
                env = self._match_env(runner, scheduled, seat, bot)
                return self._sandboxed(runner, seat, bot, env, log_path, stdin=False)
            except (OSError, ValueError, RuntimeError) as exc:  # CgroupError is a RuntimeError
                runner.mark_crashed(seat, f"cannot start the bot in the sandbox: {exc}")
                played.exits[seat] = (None, True)
                return None
        env = {**LOCAL_BOT_ENV, **bot_environment(self.address, runner.seats[seat].token, seat)}
        env.update({**self._match_env(runner, scheduled, seat, bot), **bot.env})
        log_path = self.log_dir / f"{runner.match_id}-seat{seat}-{bot.name}.log"
        try:
            return BotProcess(bot.argv, env, log_path, bot.cwd)
        except OSError as exc:
            runner.mark_crashed(seat, f"cannot start the bot: {exc}")
            played.exits[seat] = (None, True)
            log.error("bot did not start", bot=bot.name, match=scheduled.key, error=str(exc))
            return None

    def _seat_persistent(
        self, runner: MatchRunner, scheduled: ScheduledMatch, seat: int, bot: BotSpec, played: PlayedMatch
    ) -> PersistentBot | None:
        """An idle process of `bot`, or a new one, told to play this seat."""
        env = self._match_env(runner, scheduled, seat, bot)
        pool = self.idle.setdefault(bot.name, [])
        while pool:
            persistent = pool.pop()
            if persistent.process.returncode is None:
                try:
                    if isinstance(persistent.process, SandboxedProcess):
                        env["ARENA_ADDRESS"] = f"unix:{SOCKET_PATH}"
                        runner.clock_cpu(seat, persistent.process.cpu_seconds)
                    persistent.seat(env)
                    return persistent
                except OSError:
                    pass  # it died between two matches: a new one takes its place
        self.started_persistent += 1
        log_path = self.log_dir / f"persistent-{bot.name}-{self.log_tag}{self.started_persistent}.log"
        # The first match is in its environment too: a program that does not read its input plays
        # that one match as a per-match process would, exits, and the next match starts another.
        base = {**LOCAL_BOT_ENV, **bot_environment(self.address, runner.seats[seat].token, seat)}
        base.update({**env, "ARENA_MATCHES": "stdin", **bot.env})
        try:
            if bot.sandbox:
                env["ARENA_ADDRESS"] = f"unix:{SOCKET_PATH}"
                sandboxed = self._sandboxed(
                    runner, seat, bot, {**env, "ARENA_MATCHES": "stdin"}, log_path, True
                )
                persistent = PersistentBot(sandboxed)
            else:
                persistent = PersistentBot(BotProcess(bot.argv, base, log_path, bot.cwd, pipe_stdin=True))
            persistent.seat(env)
        except (OSError, ValueError, RuntimeError) as exc:  # CgroupError is a RuntimeError
            runner.mark_crashed(seat, f"cannot start the bot: {exc}")
            played.exits[seat] = (None, True)
            log.error("bot did not start", bot=bot.name, match=scheduled.key, error=str(exc))
            return None
        return persistent

    async def _watch(
        self,
        runner: MatchRunner,
        seat: int,
        name: str,
        process: BotProcess | SandboxedProcess,
        played: PlayedMatch,
    ) -> None:
        """Until the process ends (a persistent one is cancelled at the match's end, alive)."""
        status = await process.wait()
        crashed = not runner.done.is_set()
        played.exits[seat] = (status, crashed)
        if crashed:
            verdict = process.box.wait(0) if isinstance(process, SandboxedProcess) else None
            why = f"the sandbox ended: {verdict.describe()}" if verdict is not None else ""
            runner.mark_crashed(seat, why or f"the bot process exited with status {status}")
            log.warning("bot crashed", bot=name, match=played.scheduled.key, status=status)
