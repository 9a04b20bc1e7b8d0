"""Bot processes for ladder matches: one per seat per match, so a bot that crashed in one match
starts afresh in its next.

Each process gets its own session (a Ctrl-C at the terminal reaches the ladder, which then
stops its bots itself) and, where `setpriv` exists, a parent-death signal: if the ladder is
killed outright (SIGKILL), the kernel kills its bots too instead of leaving them to dial a
dead server. The signal belongs to the thread that forked, so processes are started from the
trio thread itself (trio's own `open_process` forks in a worker thread, which exits when idle).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

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
    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path, log_path: Path) -> None:
        with log_path.open("wb") as log:
            self.popen = subprocess.Popen(
                die_with_parent(argv),
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

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

    async def stop(self, grace: float = 2.0) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds."""
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        with trio.move_on_after(grace), trio.CancelScope(shield=True):
            await self.wait()
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
            with trio.CancelScope(shield=True):
                await self.wait()
