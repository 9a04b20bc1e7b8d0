"""Local bot commands run in the sandbox (arena.sandbox) with CPU clocks: the organiser's case of
strangers' bots on one machine, on equal compute (`play_matches(sandbox=…)`, the ladders).

A sandboxed bot reaches the server only through its Unix socket, bound into the sandbox; its seat's
clock charges the CPU its sandbox used (`MatchRunner.clock_cpu`); when the sandbox ends before the
match does, for whatever reason its verdict names (memory, processes, output, wall time, exit
status), the seat is marked crashed with that reason, which the replay's `connection` line keeps.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..referee.runner import MatchRunner
from ..sandbox import Limits, Mount, Sandbox, Verdict, python_mounts, start

SDK_PATH = Path(__file__).resolve().parents[2] / "clients" / "python"


def default_mounts() -> list[Mount]:
    """This installation's Python (interpreter, environment) and, in a source checkout, the SDK."""
    mounts = python_mounts()
    if SDK_PATH.is_dir():
        mounts.append(Mount(SDK_PATH))
    return mounts


def code_dirs(argv: Sequence[str], cwd: Path | None = None) -> list[Path]:
    """The bot's own directories, guessed from its command: the folder of each argument that is an
    existing file outside the system and this Python (``python bots/mine/bot.py`` gives
    ``bots/mine``). They are mounted read-only; nothing else of the caller's files is."""
    system = [Path("/usr"), Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    found: list[Path] = []
    for arg in argv:
        path = (cwd or Path.cwd()) / arg
        if "/" not in arg or not path.is_file():
            continue
        folder = path.resolve().parent
        if not any(folder.is_relative_to(s) for s in system) and folder not in found:
            found.append(folder)
    return found


@dataclass(frozen=True)
class Sandboxing:
    """Which local bot commands run in the sandbox, and how: `commands` None means every command
    bot (not in-process ones), else those listed; `limits_of` gives some commands limits of their
    own. `mounts` default to `default_mounts()`."""

    limits: Limits = Limits()  # noqa: RUF009 (frozen: one shared default is safe)
    commands: frozenset[str] | None = None
    mounts: tuple[Mount, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits_of: Mapping[str, Limits] = field(default_factory=dict)

    def applies(self, command: str) -> bool:
        return self.commands is None or command in self.commands


def start_sandboxed(
    runner: MatchRunner,
    seat: int,
    command: str,
    socket: Path,
    log_path: Path,
    sandboxing: Sandboxing,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: bool = False,
) -> Sandbox:
    """Start `command` for `seat` in a sandbox whose only way out is `socket`, and put the seat on
    its CPU clock. Call it before the match starts (at once after `Hub.create_match`). With `cwd`,
    the command runs there, and sees it (read-only). Raises OSError, ValueError (an empty or
    unbalanced command) or `CgroupError` when it cannot start."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an empty command")
    mounts = list(sandboxing.mounts if sandboxing.mounts is not None else default_mounts())
    if cwd is not None:
        cwd = cwd.resolve()
        mounts.append(Mount(cwd))
    mounts += [
        Mount(folder) for folder in code_dirs(argv, cwd) if cwd is None or not folder.is_relative_to(cwd)
    ]
    environment = {"ARENA_TOKEN": runner.seats[seat].token, "ARENA_SEAT": str(seat)}
    if SDK_PATH.is_dir():
        environment["PYTHONPATH"] = str(SDK_PATH)
    environment.update(sandboxing.env)
    environment.update(env or {})
    name = f"{runner.match_id}-seat{seat}"
    limits = sandboxing.limits_of.get(command, sandboxing.limits)
    box = start(argv, output=log_path, limits=limits, mounts=mounts, socket=socket, env=environment,
                name=name, cwd=str(cwd) if cwd is not None else None, stdin=stdin)  # fmt: skip
    runner.clock_cpu(seat, box.cpu_seconds)
    return box


async def watch_sandboxed(runner: MatchRunner, seat: int, box: Sandbox) -> Verdict:
    """Wait for the sandbox to end; one that ends before the match does crashes its seat with the
    verdict's reason. Cancelled, it stops the sandbox (every process in it) before it returns."""
    try:
        verdict = await trio.to_thread.run_sync(box.wait, abandon_on_cancel=True)
        assert verdict is not None
        if not runner.done.is_set():
            runner.mark_crashed(seat, f"the sandbox ended: {verdict.describe()}")
        return verdict
    finally:
        with trio.CancelScope(shield=True), contextlib.suppress(Exception):
            await trio.to_thread.run_sync(box.stop)


class SandboxedProcess:
    """A sandbox with `local.BotProcess`'s interface (`popen.stdin`, `pid`, `returncode`, `wait`,
    `stop`), for code that runs bot processes (a ladder's per-match and persistent bots) to run
    them in the sandbox instead; `cpu_seconds` is the meter to give `MatchRunner.clock_cpu`."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.popen = box.process  # its stdin is the sandbox's (with `start(stdin=True)`)
        self.cpu_seconds = box.cpu_seconds

    @property
    def pid(self) -> int:
        return self.box.process.pid

    @property
    def returncode(self) -> int | None:
        verdict = self.box.wait(0)
        if verdict is None:
            return None
        return verdict.exit_status if verdict.exit_status is not None else -(verdict.signal or 9)

    async def wait(self) -> int:
        await trio.to_thread.run_sync(self.box.wait, abandon_on_cancel=True)
        code = self.returncode
        assert code is not None
        return code

    async def stop(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.box.stop)
