"""A user's files: reading an input file with one clear message per way it can fail, saying what
a file of the wrong kind is and which command reads it, and checking a path to write before the
work that would write it starts."""

from __future__ import annotations

import fcntl
import json
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path


class InputFileError(ValueError):
    """A file that cannot be read; the message names the path and the reason."""


class OutputPathError(ValueError):
    """A path that cannot be written; the message names the path and the reason."""


def read_input(path: Path, what: str) -> bytes:
    """The bytes of `path`; `what` names the expected kind of file in the messages."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_input_text(path: Path, what: str) -> str:
    """The UTF-8 text of `path`."""
    try:
        return read_input(path, what).decode("utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not a UTF-8 text file") from None


def json_error(exc: json.JSONDecodeError) -> str:
    """Where and why text is not JSON: "Extra data at line 2 column 1" (json's own message may
    already end in "at", as "Unterminated string starting at")."""
    joint = " " if exc.msg.endswith(" at") else " at "
    return f"{exc.msg}{joint}line {exc.lineno} column {exc.colno}"


# --------------------------------------------------------------------------- kinds of file


@dataclass(frozen=True)
class Kind:
    """A kind of file the arena writes: what it is called and which command reads it."""

    name: str  # "a replay log"
    reader: str  # "arena replay verify, show, html or analyze"


REPLAY_LOG = Kind("a replay log", "arena replay verify, show, html or analyze")
DEAL_RECORD = Kind("a deal record", "arena score")
ANALYSIS = Kind("an analysis file", "arena replay html --analysis")
LADDER_DB = Kind("a ladder database", "arena ladder standings or report")
ARENA_STORE = Kind("an arena store", "arena serve --store, arena bots and arena standings")
SQLITE = Kind("a SQLite database", "none of the arena's commands")
LADDER_FILE = Kind("a ladder file", "arena ladder run")  # TOML: known by its tables
ARENA_SETTINGS = Kind("the standing arena's settings", "arena serve --arena-config")
FORMATS = {"arena-replay": REPLAY_LOG, "arena-deal": DEAL_RECORD, "arena-analysis": ANALYSIS}
_FORMAT = re.compile(rb'"format"\s*:\s*"(arena-[a-z]+)"')
_TABLES = (
    (re.compile(rb"^\[\[bots\]\]\s*$", re.M), LADDER_FILE),
    (re.compile(rb"^\[arena\]\s*$", re.M), ARENA_SETTINGS),
)


def kind_of(path: Path) -> Kind | None:
    """What the file at `path` is, from its first bytes, if it is one of the arena's kinds."""
    try:
        with path.open("rb") as file:
            head = file.read(65536)
    except OSError:
        return None
    if head.startswith(b"SQLite format 3\0"):
        return _database_kind(path)
    found = _FORMAT.search(head)
    if found:
        return FORMATS.get(found.group(1).decode())
    return next((kind for table, kind in _TABLES if table.search(head)), None)  # TOML by its tables


def _database_kind(path: Path) -> Kind:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.Error:
        return SQLITE
    if "ladder" in tables:
        return LADDER_DB
    return ARENA_STORE if "arena_schema" in tables else SQLITE


def check_kind(path: Path, expected: Kind) -> None:
    """Raise `InputFileError` when `path` is a directory or another of the arena's kinds of file
    than `expected`: what it is, and which command reads it."""
    if path.is_dir():
        raise InputFileError(f"{path}: is a directory, not {expected.name}")
    found = kind_of(path)
    if found is not None and found != expected:
        raise InputFileError(f"{path}: is {found.name}, not {expected.name} (for {found.reader})")


# --------------------------------------------------------------------------- paths to write


def check_output_dir(path: Path, what: str = "folder") -> None:
    """Make the folder `path` (and its parents) if missing, and check that files can be created
    in it; raise `OutputPathError` naming the path and the reason otherwise."""
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{path}: is a file, not a {what}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot create the {what}: {_reason(exc, path)}") from None
    try:
        _probe(path)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write in the {what}: {_reason(exc, path)}") from None


def check_output_file(path: Path, what: str = "file") -> None:
    """Check that the file `path` can be written (created, or added to) before the work that
    writes it starts: its folder must exist and take files, and it must not be a folder. An
    existing file is opened for writing and closed unchanged."""
    if path.is_dir():
        raise OutputPathError(f"{path}: is a folder, not a {what}")
    parent = path.parent
    if not parent.is_dir():
        reason = "is a file, not a folder" if parent.exists() else "no such folder"
        raise OutputPathError(f"{path}: cannot write the {what}: {parent}: {reason}")
    try:
        if path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        else:
            _probe(parent)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write the {what}: {_reason(exc, path)}") from None


def _probe(folder: Path) -> None:
    """Create and remove a file in `folder`: permissions alone do not tell (root, a read-only
    mount)."""
    fd, name = tempfile.mkstemp(prefix=".arena-probe-", dir=folder)
    os.close(fd)
    os.unlink(name)


def _reason(exc: OSError, path: Path) -> str:
    """An OSError's reason without its errno; for a missing parent, which one."""
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            return f"{parent} is a file, not a folder"
    return (exc.strerror or str(exc)).lower()


class LockHeldError(Exception):
    """The lock cannot be taken: held by another process, or its file cannot be created."""


class OwnerLock:
    """An exclusive lock on `path` + ``.lock``, held while this object holds it: one process's
    database at a time (a SQLite store of `arena serve`, a ladder's database). It is `flock`'s, so
    the kernel releases it when its holder exits, however it exits: a crash leaves no stale lock;
    the file keeps the holder's pid for the message only."""

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
            raise LockHeldError(
                f"{self.lock_path}: cannot create the lock file: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LockHeldError(f"{what} (pid {holder})") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with its descriptor
            self._fd = None
