"""One server per SQLite store: an exclusive lock on ``FILE.lock``, held for the server's life.

A SQLite store is one process's by design (its matches left 'running' are recorded as aborted
when a server starts), so a second `arena serve` on the same file is refused with one line that
names the store and the process holding it. The lock is `flock`'s: the kernel releases it when
its holder exits, however it exits, so a crash never leaves a stale lock behind; the file keeps
the holder's pid only for the message. `arena ladder run` keeps a second run away from its
database the same way (`arena.ladder.store`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class StoreLockError(Exception):
    """The lock cannot be taken: held by another process, or its file cannot be created."""


class OwnerLock:
    """The exclusive lock on `path` + ``.lock`` while this object holds it."""

    def __init__(self, path: Path) -> None:
        self.lock_path = Path(f"{path}.lock")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, what: str) -> None:
        """Take the lock, or raise `StoreLockError` naming `what` and the holder's pid."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreLockError(
                f"{self.lock_path}: cannot create the lock file: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreLockError(f"{what} (pid {holder})") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with its descriptor
            self._fd = None
