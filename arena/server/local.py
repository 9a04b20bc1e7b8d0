"""Matches on this machine: the server on a free port and bots as separate processes.

`play_matches` runs whole matches (`arena play`, ladders, the sample replays); `ask` puts one
bot in front of a `PositionRunner` (the conformance kit, `arena replay ask`). `launch_bot` is
how every bot process is started: with ARENA_ADDRESS and ARENA_TOKEN in its environment.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog
import trio

from ..referee.position import PositionResult, PositionRunner
from ..referee.runner import MatchConfig, MatchRunner
from .app import serve

log = structlog.get_logger()

SDK_PATH = Path(__file__).resolve().parents[2] / "clients" / "python"
EXAMPLE_BOTS = {
    "heuristic": f"{shlex.quote(sys.executable)} -m arena_bot.heuristic_bot",
    "random": f"{shlex.quote(sys.executable)} -m arena_bot.random_bot",
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


def bot_environment(address: str, token: str, seat: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"ARENA_ADDRESS": address, "ARENA_TOKEN": token, "ARENA_SEAT": str(seat)})
    if SDK_PATH.is_dir():  # a source checkout: the SDK need not be installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SDK_PATH), env.get("PYTHONPATH", "")]))
    return env


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
    cannot start, is reported as crashed. The bot runs in a process group of its own, so a
    Ctrl-C at the terminal reaches the command, not the bots, and whatever the bot starts
    ends with it. Cancelled, it stops the group (`stop_bot`: SIGTERM, then SIGKILL after
    `STOP_GRACE_S`) before it returns. Returns the exit status (None when it could not start)."""
    env = bot_environment(address, token, seat)
    sink: Any = log_path.open("ab") if log_path is not None else subprocess.DEVNULL
    try:
        try:
            process = await trio.lowlevel.open_process(
                shlex.split(command),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                start_new_session=os.name == "posix",
            )
        except (OSError, ValueError) as exc:  # no such program, or an empty or unbalanced command
            owner.mark_crashed(seat, f"cannot start the bot {command!r}: {exc}")
            return None
        try:
            code = await process.wait()
            if not owner.done.is_set():
                owner.mark_crashed(seat, f"the bot process exited with status {code}")
                log.warning("bot exited", match_id=owner.match_id, seat=seat, status=code)
            return code
        finally:
            await stop_bot(process)
    finally:
        if log_path is not None:
            sink.close()


async def stop_bot(process: trio.Process) -> None:
    """End a bot process and its process group, shielded from cancellation: SIGTERM, up to
    `STOP_GRACE_S` to exit, then SIGKILL to whatever of the group is left; the process is reaped.
    A bot that already exited only has its leftover children killed."""
    with trio.CancelScope(shield=True):
        if process.returncode is None:
            _signal_bot(process, signal.SIGTERM)
            with trio.move_on_after(STOP_GRACE_S):
                await process.wait()
        _signal_bot(process, signal.SIGKILL)
        with trio.move_on_after(STOP_GRACE_S):
            await process.wait()


def _signal_bot(process: trio.Process, number: signal.Signals) -> None:
    if os.name == "posix":  # the group outlives its leader while the bot's children run
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, number)
    elif process.returncode is None:
        process.terminate() if number == signal.SIGTERM else process.kill()


async def _run_bot(
    runner: MatchRunner, seat: int, command: str, address: str, log_path: Path, result: PlayResult
) -> None:
    try:
        result.exit_codes[seat] = await launch_bot(
            runner, seat, runner.seats[seat].token, command, address, log_path
        )
    finally:
        result.running -= 1


async def play_matches(
    jobs: list[tuple[MatchConfig, list[str]]], replay_dir: Path, host: str = "127.0.0.1"
) -> list[PlayResult]:
    """Run every (config, bot commands) job at once on one server; return when all have ended.

    Cancelled (Ctrl-C or SIGTERM through `cli.common.run_until_signalled`, a ladder stopped),
    it raises the cancellation as trio functions do, and only once every bot process it
    started has ended (`stop_bot`: SIGTERM, SIGKILL after `STOP_GRACE_S`, their children too)
    and the server has stopped. A match cut off keeps its replay as `<id>.jsonl.part`, closed
    by the referee (`MatchRunner.run` abandons the log), so nothing is left running or open."""
    for config, bots in jobs:
        if len(bots) != config.variant.seats:
            raise ValueError(f"{config.variant.name} needs {config.variant.seats} bots, got {len(bots)}")
    results: list[PlayResult] = []
    async with trio.open_nursery() as nursery:
        hub, port = await nursery.start(serve, host, 0, replay_dir)
        logs = replay_dir / "bot-logs"
        logs.mkdir(parents=True, exist_ok=True)
        for config, bots in jobs:
            runner = hub.create_match(config)
            result = PlayResult(runner, [None] * len(bots), running=len(bots))
            results.append(result)
            for seat, command in enumerate(bots):
                log_path = logs / f"{runner.match_id}-seat{seat}.log"
                nursery.start_soon(_run_bot, runner, seat, command, f"{host}:{port}", log_path, result)
        for result in results:
            await result.runner.done.wait()
        with trio.move_on_after(3):  # let the bots see MatchEnd and exit by themselves
            while any(r.running for r in results):
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    return results


async def play_match(config: MatchConfig, bots: list[str], replay_dir: Path) -> PlayResult:
    return (await play_matches([(config, bots)], replay_dir))[0]


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
