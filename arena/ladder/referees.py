"""A local ladder's matches spread over several referee processes (`referees` in the ladder file).

One referee server runs its matches on one trio loop (and its gRPC thread), so with every
match of a ladder on it, it is busy on one core while others wait. Here each referee process
(`python -m arena.ladder.referees`, the same unit a Ray worker runs: a server on a loopback
port and the bots of its matches, per-match or persistent processes) plays up to its share of
the ladder's concurrent matches; the ladder process hands out the matches, least busy referee
first, and alone writes the database, one transaction per match as results come back, as with
one referee. The referees write the replays and the bots' logs into the ladder's replay
directory themselves (the same machine; a persistent bot's log is named with its referee, since
each referee numbers its persistent processes).

The two talk over the referee's standard input and output: length-prefixed pickles (both ends
are this package, on this machine). A referee process that dies fails its matches in flight:
a new one takes its place and those matches are played again (a match is recorded once: only
the ladder process records, under its unique key). A referee whose input closes (the ladder is
done, or was killed) stops its bots and exits; killed outright with the ladder, it and its bots
die by their parent-death signals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import trio

from ..referee.runner import MatchConfig
from ..server.local import die_with_parent
from .config import BotSpec
from .player import ClusterError, MatchPlayer
from .schedule import ScheduledMatch
from .store import MatchRecord

log = structlog.get_logger(component="ladder")

MAX_ATTEMPTS = 5  # a match whose referee process died is played again, up to this many times in all
HEADER = struct.Struct("!I")
STOP_WAIT_S = 10.0  # for a referee to stop its bots and exit once its input is closed


class RefereeLost(Exception):
    """The referee process ended with matches in flight."""


class PoolError(ClusterError):
    """The referee processes cannot play the ladder (a match failed in every attempt). One line."""


async def send_frame(stream: trio.abc.SendStream, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    await stream.send_all(HEADER.pack(len(data)) + data)


class FrameReader:
    """Length-prefixed pickles from a byte stream; None at its end."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    async def read(self) -> Any:
        if not await self._fill(HEADER.size):
            return None
        (size,) = HEADER.unpack_from(self.buffer)
        if not await self._fill(HEADER.size + size):
            return None
        data = bytes(self.buffer[HEADER.size : HEADER.size + size])
        del self.buffer[: HEADER.size + size]
        return pickle.loads(data)  # our own child process, on this machine


@dataclass
class Waiting:
    done: trio.Event = field(default_factory=trio.Event)
    record: MatchRecord | None = None
    lost: bool = False


class RefereeProcess:
    """The ladder's side of one referee process: requests out on its input, records back."""

    def __init__(self, index: int, hello: dict[str, Any]) -> None:
        self.index = index
        argv = [sys.executable, "-m", "arena.ladder.referees"]
        # Started from the trio thread: the parent-death signal belongs to the thread that forks.
        self.popen = subprocess.Popen(
            die_with_parent(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C reaches the ladder, which stops its referees
        )
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.send = trio.lowlevel.FdStream(os.dup(self.popen.stdin.fileno()))
        self.receive = FrameReader(trio.lowlevel.FdStream(os.dup(self.popen.stdout.fileno())))
        self.popen.stdin.close()
        self.popen.stdout.close()
        self.send_lock = trio.Lock()
        self.waiting: dict[int, Waiting] = {}
        self.next_id = 0
        self.alive = True
        self.address: str | None = None
        self.hello = {**hello, "index": index}  # what it is told first

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read records until the process's output ends; then every match in flight is lost."""
        try:
            await send_frame(self.send, self.hello)
            said = await self.receive.read()  # its server's address once it listens, or its error
        except (trio.BrokenResourceError, OSError):
            said = None
        if isinstance(said, str):
            self.address = said
        elif isinstance(said, dict):
            self.alive = False
            raise PoolError(str(said["error"]))
        else:
            self.alive = False
            status = await trio.to_thread.run_sync(self.popen.wait)
            raise PoolError(f"a referee process did not start (exit status {status}); see its error above")
        task_status.started()
        try:
            while (message := await self.receive.read()) is not None:
                request_id, record = message
                waiting = self.waiting.pop(request_id, None)
                if waiting is not None:
                    waiting.record = record
                    waiting.done.set()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, EOFError, pickle.PickleError):
            pass
        finally:
            self.alive = False
            for waiting in self.waiting.values():
                waiting.lost = True
                waiting.done.set()
            self.waiting.clear()

    async def play(self, scheduled: ScheduledMatch, config: MatchConfig) -> MatchRecord | None:
        if not self.alive:
            raise RefereeLost
        self.next_id += 1
        request_id = self.next_id  # not self.next_id below: another match may be sent meanwhile
        waiting = self.waiting[request_id] = Waiting()
        try:
            async with self.send_lock:
                await send_frame(self.send, (request_id, scheduled, config))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.waiting.pop(request_id, None)
            raise RefereeLost from None
        await waiting.done.wait()
        if waiting.lost:
            raise RefereeLost
        return waiting.record

    def in_flight(self) -> int:
        return len(self.waiting)

    async def stop(self) -> None:
        """Close its input (it stops its bots and exits), then make sure it is gone."""
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.ClosedResourceError, OSError):
                await self.send.aclose()
            with trio.move_on_after(STOP_WAIT_S):
                while self.popen.poll() is None:
                    await trio.sleep(0.05)
            if self.popen.poll() is None:
                self.popen.kill()  # its bots die by their parent-death signal
                self.popen.wait()


class RefereePool:
    """Plays matches on `count` referee processes, least busy first; a referee that dies is
    replaced and its matches played again."""

    def __init__(
        self,
        nursery: trio.Nursery,
        count: int,
        bots: Sequence[BotSpec],
        match_config: Callable[[ScheduledMatch], MatchConfig],
        replay_dir: Path,
        host: str,
        verbose: bool,
    ) -> None:
        self.nursery = nursery
        self.count = count
        self.match_config = match_config
        self.hello = {"bots": list(bots), "replay_dir": replay_dir, "host": host, "verbose": verbose}
        self.referees: list[RefereeProcess] = []
        self.started = 0
        self.lost = 0  # matches played again because their referee died
        self.restarting = trio.Lock()  # one new process for a dead one, however many matches notice

    async def start(self) -> None:
        for index in range(self.count):
            self.referees.append(await self._spawn(index))

    async def _spawn(self, index: int) -> RefereeProcess:
        self.started += 1
        referee = RefereeProcess(index, self.hello)
        await self.nursery.start(referee.run)
        return referee

    async def _live(self, index: int) -> RefereeProcess:
        if self.referees[index].alive:
            return self.referees[index]
        async with self.restarting:
            referee = self.referees[index]
            if not referee.alive:
                await referee.stop()
                referee = self.referees[index] = await self._spawn(index)
                log.info("referee process started again", referee=index)
        return referee

    def in_use(self) -> int:
        """Matches being played now."""
        return sum(referee.in_flight() for referee in self.referees)

    def addresses(self) -> list[str]:
        """The referees' servers (`host:port`), as they are now."""
        return [referee.address or "" for referee in self.referees]

    async def play_record(self, scheduled: ScheduledMatch) -> MatchRecord | None:
        config = self.match_config(scheduled)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            index = min(range(len(self.referees)), key=lambda i: self.referees[i].in_flight())
            referee = await self._live(index)
            try:
                return await referee.play(scheduled, config)
            except RefereeLost:
                self.lost += 1
                log.warning(
                    "referee process lost; the match is played again",
                    match=scheduled.key,
                    referee=index,
                    attempt=attempt,
                    status=referee.popen.poll(),
                )
        raise PoolError(
            f"match {scheduled.key} failed in {MAX_ATTEMPTS} referee processes in a row; see the log"
        )

    async def close(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for referee in self.referees:
                    nursery.start_soon(referee.stop)


@contextlib.asynccontextmanager
async def referee_pool(
    count: int,
    bots: Sequence[BotSpec],
    match_config: Callable[[ScheduledMatch], MatchConfig],
    replay_dir: Path,
    host: str = "127.0.0.1",
    verbose: bool = False,
) -> AsyncIterator[RefereePool]:
    """`count` referee processes, started, and stopped at the end; with `verbose` they log every
    line (the referee's own), else the ladder's lines and errors only."""
    replay_dir.mkdir(parents=True, exist_ok=True)
    failed: PoolError | None = None
    async with trio.open_nursery() as nursery:
        pool = RefereePool(nursery, count, bots, match_config, replay_dir, host, verbose)
        try:
            await pool.start()
        except PoolError as exc:  # raised after the nursery, as itself and not in an exception group
            failed = exc
        else:
            try:
                yield pool
            finally:
                await pool.close()
        nursery.cancel_scope.cancel()
    if failed is not None:
        await pool.close()
        raise failed


# --------------------------------------------------------------------------- the referee process


async def serve_ladder_matches() -> None:
    """The referee process: a server on a loopback port, matches as its input asks, their
    records on its output; at the end of its input, its persistent bots stopped."""
    from ..server.app import serve

    out_fd = os.dup(1)
    os.dup2(2, 1)  # stray prints go to the log, never into the records
    receive = FrameReader(trio.lowlevel.FdStream(os.dup(0)))
    send = trio.lowlevel.FdStream(out_fd)
    send_lock = trio.Lock()
    hello = await receive.read()
    if hello is None:
        return
    configure_logs(bool(hello["verbose"]))
    bots = {bot.name: bot for bot in hello["bots"]}
    replay_dir = Path(hello["replay_dir"])
    configs: dict[str, MatchConfig] = {}
    async with trio.open_nursery() as nursery:
        host = str(hello["host"])
        try:
            hub, port = await nursery.start(serve, host, 0, replay_dir)
        except Exception as exc:  # one line for the ladder to say (ListenError: a host not of this machine)
            await send_frame(send, {"error": str(exc)})
            return
        address = f"{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}"
        player = MatchPlayer(
            hub,
            address,
            lambda m: configs[m.key],
            bots.__getitem__,
            replay_dir / "bot-logs",
            log_tag=f"referee{hello['index']}-",
        )
        await send_frame(send, address)

        async def play(request_id: int, scheduled: ScheduledMatch) -> None:
            try:
                record = await player.play_record(scheduled)
            except Exception:
                log.exception("match failed; it stays unplayed", match=scheduled.key)
                record = None
            configs.pop(scheduled.key, None)
            async with send_lock:
                await send_frame(send, (request_id, record))

        try:
            async with trio.open_nursery() as matches:
                while (request := await receive.read()) is not None:
                    request_id, scheduled, config = request
                    configs[scheduled.key] = config
                    matches.start_soon(play, request_id, scheduled)
                matches.cancel_scope.cancel()  # the ladder is gone or done: nothing will be recorded
        finally:
            await player.close()
            nursery.cancel_scope.cancel()


def configure_logs(verbose: bool) -> None:
    from ..logs import configure
    from ..progress import route_logs

    configure(logging.INFO)
    route_logs(None if verbose else "ladder")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(serve_ladder_matches)
