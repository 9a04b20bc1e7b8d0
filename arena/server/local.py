"""Matches on this machine: the server on a free port and bots as separate processes.

`play_matches` runs whole matches (`arena play`, ladders, the sample replays); `ask` puts one
bot in front of a `PositionRunner` (the conformance kit, `arena replay ask`). `launch_bot` is
how every bot process is started: with ARENA_ADDRESS and ARENA_TOKEN in its environment.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog
import trio

from ..referee.position import PositionResult, PositionRunner
from ..referee.runner import MatchConfig, MatchRunner
from ..sandbox import Sandbox
from .app import serve
from .inprocess import InProcessError, InProcessLink, is_inprocess, load_bot, seat_inprocess
from .sandboxed import Sandboxing, start_sandboxed, watch_sandboxed

log = structlog.get_logger()

SDK_PATH = Path(__file__).resolve().parents[2] / "clients" / "python"
EXAMPLE_BOTS = {
    "heuristic": f"{shlex.quote(sys.executable)} -m arena_bot.heuristic_bot",
    "random": f"{shlex.quote(sys.executable)} -m arena_bot.random_bot",
    "search": f"{shlex.quote(sys.executable)} -m arena_bot.search_bot",
}


# How long a bot process has to exit after SIGTERM before it (and what it started) is killed.
STOP_GRACE_S = 2.0


def default_bots(seats: int) -> list[str]:
    """The example bots: one heuristic bot against random ones."""
    return [EXAMPLE_BOTS["heuristic"]] + [EXAMPLE_BOTS["random"]] * (seats - 1)


@dataclass
class PlayResult:
    runner: MatchRunner
    exit_codes: list[int | None]  # None: still running, or could not start
    running: int = 0  # bot processes not yet ended (or failed to start)
    # With `play_matches(stop_without_hello=True)`: the first seat whose bot ended (or could not
    # start) before it ever said Hello, and why; the match was stopped then, unplayed.
    stopped_seat: int | None = None
    stopped_cause: str = ""


def bot_environment(address: str, token: str, seat: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"ARENA_ADDRESS": address, "ARENA_TOKEN": token, "ARENA_SEAT": str(seat)})
    if SDK_PATH.is_dir():  # a source checkout: the SDK need not be installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SDK_PATH), env.get("PYTHONPATH", "")]))
    return env


SETPRIV = shutil.which("setpriv")
SH = shutil.which("sh")


def die_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that it is killed when this process dies.

    setpriv arms the parent-death signal and execs sh, which checks that its parent is still
    this process (had it died before the signal was armed, nobody would send it) and execs
    the bot. No Python runs between fork and exec: the grpc library's at-fork handlers would
    crash a child forked the slow way, so subprocess must be free to use vfork.
    """
    if SETPRIV is None or SH is None:
        return list(argv)
    check = 'test "$PPID" = "$0" || exit 1; exec "$@"'
    return [SETPRIV, "--pdeathsig", "KILL", "--", SH, "-c", check, str(os.getpid()), *argv]


class BotProcess:
    """One bot process, in a process group of its own, stopped as a group.

    A Ctrl-C at the terminal reaches the command, not the bots (it stops them itself). The
    group stays in the command's session: Linux's scheduler gives each session a share of the
    cores (autogroups), and a bot in a session of its own had a whole share to itself while the
    referee, whom every decision passes through, had one between its threads; in the referee's
    session they are weighed thread by thread (benchmarks/RESULTS.md, "Sessions and the
    scheduler"). Where `setpriv` exists a parent-death signal kills them if the command is killed
    outright (`die_with_parent`). Processes are started from the trio thread itself, since the
    parent-death signal belongs to the thread that forked (trio's own `open_process` forks in a
    worker thread, which exits when idle). Its output goes to `log_path` (appended), else nowhere;
    its input is nothing, or with `pipe_stdin` a pipe (`popen.stdin`: a ladder's persistent bot
    reads its next match there). Raises OSError or ValueError (an empty or unbalanced command)
    when it cannot start.
    """

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        log_path: Path | None,
        cwd: Path | None = None,
        pipe_stdin: bool = False,
    ) -> None:
        if not argv:
            raise ValueError("an empty command")
        with contextlib.ExitStack() as stack:
            sink: Any = subprocess.DEVNULL
            if log_path is not None:
                sink = stack.enter_context(log_path.open("ab"))
            _check_program(argv[0], env, cwd)
            self.popen = subprocess.Popen(
                die_with_parent(argv),
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.PIPE if pipe_stdin else subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                process_group=0,
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        """Wait for the process to end without a thread: a pidfd becomes readable when it does."""
        if self.popen.poll() is not None:
            return self.popen.returncode
        try:
            pidfd = os.pidfd_open(self.popen.pid)
        except (AttributeError, OSError):  # no pidfd (old kernel): poll
            while self.popen.poll() is None:
                await trio.sleep(0.05)
            return self.popen.returncode
        try:
            await trio.lowlevel.wait_readable(pidfd)
        finally:
            trio.lowlevel.notify_closing(pidfd)
            os.close(pidfd)
        return self.popen.wait()

    async def stop(self) -> None:
        """End the process and its group, shielded from cancellation: SIGTERM, up to `STOP_GRACE_S`
        to exit, then SIGKILL to whatever of the group is left (what the bot started included);
        the process is reaped."""
        with trio.CancelScope(shield=True):
            if self.popen.poll() is None:
                self._signal_group(signal.SIGTERM)
                with trio.move_on_after(STOP_GRACE_S):
                    await self.wait()
            self._signal_group(signal.SIGKILL)  # the group outlives its leader while its children run
            with trio.move_on_after(STOP_GRACE_S):
                await self.wait()

    def _signal_group(self, number: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, number)


def _check_program(program: str, env: Mapping[str, str], cwd: Path | None) -> None:
    """Raise what `Popen` would for a program that cannot run: behind `die_with_parent` the
    failure would otherwise show only as the shell's exit status 127."""
    if os.sep in program:
        path = Path(cwd or ".") / program  # Popen resolves a relative program against cwd
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


class BotOwner(Protocol):
    """What a launched bot reports to: a match or a position runner."""

    match_id: str
    done: trio.Event

    def mark_crashed(self, seat: int, detail: str) -> None: ...


async def launch_bot(
    owner: BotOwner, seat: int, token: str, command: str, address: str, log_path: Path | None = None
) -> int | None:
    """Run a bot command for `seat` (with ARENA_ADDRESS and ARENA_TOKEN) until it exits.

    Its output goes to `log_path` (else nowhere). A process that ends before its match does, or
    cannot start, is reported as crashed. The bot is a `BotProcess`: cancelled, it stops the bot's
    group (SIGTERM, then SIGKILL after `STOP_GRACE_S`) before it returns. Returns the exit status
    (None when it could not start)."""
    try:
        process = BotProcess(shlex.split(command), bot_environment(address, token, seat), log_path)
    except (OSError, ValueError) as exc:  # no such program, or an empty or unbalanced command
        owner.mark_crashed(seat, f"cannot start the bot {command!r}: {start_error(exc)}")
        return None
    try:
        code = await process.wait()
        if not owner.done.is_set():
            owner.mark_crashed(seat, f"the bot process exited with status {code}")
            log.warning("bot exited", match_id=owner.match_id, seat=seat, status=code)
        return code
    finally:
        await process.stop()


def start_error(exc: OSError | ValueError) -> str:
    """Why a bot command could not start, without an errno."""
    if isinstance(exc, FileNotFoundError):
        return "no such program"
    if isinstance(exc, PermissionError):
        return "the program is not executable"
    if isinstance(exc, OSError):
        return (exc.strerror or str(exc)).lower()
    return str(exc)  # shlex's "No closing quotation", or "an empty command"


class _Watched:
    """A match as a launched bot reports to it, with the crash's detail kept for `PlayResult`."""

    def __init__(self, runner: MatchRunner, details: dict[int, str]) -> None:
        self.runner, self.details = runner, details
        self.match_id, self.done = runner.match_id, runner.done

    def mark_crashed(self, seat: int, detail: str) -> None:
        self.details.setdefault(seat, detail)
        self.runner.mark_crashed(seat, detail)


async def _run_bot(
    runner: MatchRunner,
    seat: int,
    command: str,
    address: str,
    log_path: Path,
    result: PlayResult,
    stop: Callable[[], None] | None,
) -> None:
    details: dict[int, str] = {}
    try:
        result.exit_codes[seat] = await launch_bot(
            _Watched(runner, details), seat, runner.seats[seat].token, command, address, log_path
        )
        never_spoke = runner.seats[seat].hellos == 0 and not runner.done.is_set()
        if stop is not None and never_spoke and result.stopped_seat is None:
            # a bot that dies before its Hello would only fault at every decision of the match
            result.stopped_seat, result.stopped_cause = seat, details.get(seat, "")
            stop()
    finally:
        result.running -= 1


async def _watch_sandboxed(runner: MatchRunner, seat: int, box: Sandbox, result: PlayResult) -> None:
    try:
        result.exit_codes[seat] = (await watch_sandboxed(runner, seat, box)).exit_status
    finally:
        result.running -= 1


async def play_matches(
    jobs: list[tuple[MatchConfig, list[str]]],
    replay_dir: Path,
    host: str = "127.0.0.1",
    stop_without_hello: bool = False,
    sandbox: Sandboxing | None = None,
) -> list[PlayResult]:
    """Run every (config, bot commands) job at once on one server; return when all have ended.

    With `stop_without_hello`, a bot process that ends (or cannot start) before its seat ever said
    Hello stops everything at once: the result names it (`PlayResult.stopped_seat`), its match is
    aborted (`termination` aborted, the log left as `.jsonl.part`).

    Cancelled (Ctrl-C or SIGTERM through `cli.common.run_until_signalled`, a ladder stopped),
    it raises the cancellation as trio functions do, and only once every bot process it
    started has ended (`BotProcess.stop`: SIGTERM, SIGKILL after `STOP_GRACE_S`, their children too)
    and the server has stopped. A match cut off keeps its replay as `<id>.jsonl.part`, closed
    by the referee (`MatchRunner.run` abandons the log), so nothing is left running or open.

    With `sandbox`, the command bots it names run in the sandbox (arena/server/sandboxed.py), on
    CPU clocks, and reach the server through a Unix socket of its own."""
    for config, bots in jobs:
        if len(bots) != config.variant.seats:
            raise ValueError(f"{config.variant.name} needs {config.variant.seats} bots, got {len(bots)}")
    results: list[PlayResult] = []
    links: list[tuple[PlayResult, int, InProcessLink]] = []
    async with contextlib.AsyncExitStack() as stack:
        socket = None
        if sandbox is not None:  # a short path: a Unix socket's is at most 107 bytes
            socket = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-"))) / "referee.sock"
        nursery = await stack.enter_async_context(trio.open_nursery())
        hub, port = await nursery.start(functools.partial(serve, host, 0, replay_dir, unix=socket))
        logs = replay_dir / "bot-logs"
        logs.mkdir(parents=True, exist_ok=True)
        for config, bots in jobs:
            runner = hub.create_match(config)
            result = PlayResult(runner, [None] * len(bots), running=len(bots))
            results.append(result)
            for seat, command in enumerate(bots):
                log_path = logs / f"{runner.match_id}-seat{seat}.log"
                stop = nursery.cancel_scope.cancel if stop_without_hello else None
                if is_inprocess(command):  # a bot of the Python SDK in this process: no launch
                    result.running -= 1
                    try:
                        link = seat_inprocess(runner, seat, load_bot(command), "", log_path)
                    except InProcessError as exc:
                        runner.mark_crashed(seat, f"cannot start the bot {command!r}: {exc}")
                        continue
                    links.append((result, seat, link))
                    if stop is not None and link.exit_status is not None and result.stopped_seat is None:
                        result.stopped_seat, result.stopped_cause = seat, f"it raised (see {log_path})"
                        stop()
                    continue
                if sandbox is not None and socket is not None and sandbox.applies(command):
                    try:  # started now, before the match writes its header: the seat's clock is CPU
                        box = start_sandboxed(runner, seat, command, socket, log_path, sandbox)
                    except (OSError, ValueError, RuntimeError) as exc:  # CgroupError is a RuntimeError
                        runner.mark_crashed(seat, f"cannot start the bot {command!r} in the sandbox: {exc}")
                        result.running -= 1
                        continue
                    nursery.start_soon(_watch_sandboxed, runner, seat, box, result)
                    continue
                address = f"{host}:{port}"
                nursery.start_soon(_run_bot, runner, seat, command, address, log_path, result, stop)
        for result in results:
            await result.runner.done.wait()
        with trio.move_on_after(3):  # let the bots see MatchEnd and exit by themselves
            while any(r.running for r in results):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    for result, seat, link in links:
        result.exit_codes[seat] = link.exit_status
    return results


async def play_match(
    config: MatchConfig, bots: list[str], replay_dir: Path, stop_without_hello: bool = False
) -> PlayResult:
    return (await play_matches([(config, bots)], replay_dir, stop_without_hello=stop_without_hello))[0]


async def ask(
    command: str, runner: PositionRunner, *, host: str = "127.0.0.1", log_path: Path | None = None
) -> list[PositionResult]:
    """Start a server on a free port, launch the bot `command`, run `runner`; return its results.

    The bot gets three seconds after `MatchEnd` to exit by itself before it is terminated."""
    with tempfile.TemporaryDirectory(prefix="arena-positions-") as scratch:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, host, 0, Path(scratch))
            exited = trio.Event()

            async def bot() -> None:
                try:
                    await launch_bot(runner, runner.seat, runner.token, command, f"{host}:{port}", log_path)
                finally:
                    exited.set()

            with hub.admit(runner, {runner.seat: runner.token}):
                nursery.start_soon(bot)
                await runner.run()
            with trio.move_on_after(3):
                await exited.wait()
            nursery.cancel_scope.cancel()
    return runner.results
