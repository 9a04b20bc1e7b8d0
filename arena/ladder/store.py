"""The ladder's SQLite file: one transaction per finished match, keyed by the match key.

A match is recorded whole or not at all: its row, its deals, its faults, its bots' process
exits and Hellos and the ratings after it are written in one transaction, and the match key
is UNIQUE, so recording is idempotent. A process killed at any moment (even by SIGKILL) leaves
every match either recorded or absent; an absent match is played again from scratch. An
exclusive lock on ``DB.lock`` keeps a second `arena ladder run` away from the same file.

Schema (also in docs/LADDER.md):

    ladder(id=1, schema_version, name, identity JSON, created, planned)
    bots(name, position, remote, command)
    matches(seq, key, deal_set, table_no, arrangement, seed, seats JSON, match_id, termination,
            forfeited, scores JSON, decisions, started, finished, seconds, replay)
    deals(match_seq, deal, seat, bot, points, card_points, annulled, active)
    faults(match_seq, seat, bot, kind, deal, step, detail)
    exits(match_seq, seat, bot, status, crashed)
    ratings(match_seq, bot, mu, sigma)        -- after each match, for the bots that played it
    hellos(match_seq, seat, bot, name, version)  -- what each seat's bot said in its last Hello
    processes(match_seq, seat, bot, mode, node)  -- per-match, persistent or remote; where it ran

`hellos` and `processes` came after the first ladders: they are created when a run opens an
older file (whose earlier matches then have no such rows), and a reader finds them missing in a
file no run has opened since (`has_table`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import LockHeldError, OwnerLock
from ..replay.summary import DealRow, FaultRow

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    schema_version INTEGER NOT NULL,
    name TEXT NOT NULL,
    identity TEXT NOT NULL,
    created REAL NOT NULL,
    planned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    remote INTEGER NOT NULL,
    command TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    deal_set INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    arrangement INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    match_id TEXT NOT NULL,
    termination TEXT NOT NULL,
    forfeited INTEGER,
    scores TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    started REAL NOT NULL,
    finished REAL NOT NULL,
    seconds REAL NOT NULL,
    replay TEXT
);
CREATE TABLE IF NOT EXISTS deals (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    deal INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    points INTEGER NOT NULL,
    card_points INTEGER NOT NULL,
    annulled INTEGER NOT NULL,
    active INTEGER NOT NULL,
    PRIMARY KEY (match_seq, deal, seat)
);
CREATE TABLE IF NOT EXISTS faults (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    deal INTEGER,
    step INTEGER,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS exits (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    status INTEGER,
    crashed INTEGER NOT NULL,
    PRIMARY KEY (match_seq, seat)
);
CREATE TABLE IF NOT EXISTS ratings (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    bot TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (match_seq, bot)
);
CREATE TABLE IF NOT EXISTS hellos (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    PRIMARY KEY (match_seq, seat)
);
CREATE TABLE IF NOT EXISTS processes (
    match_seq INTEGER NOT NULL REFERENCES matches(seq),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    mode TEXT NOT NULL,
    node TEXT NOT NULL,
    PRIMARY KEY (match_seq, seat)
);
CREATE INDEX IF NOT EXISTS deals_by_bot ON deals (bot);
CREATE INDEX IF NOT EXISTS faults_by_bot ON faults (bot);
"""


class StoreError(Exception):
    """The database cannot be used: locked by another run, of another ladder, not a ladder file."""


@dataclass
class MatchRecord:
    key: str
    deal_set: int
    table: int
    arrangement: int
    seed: int
    seats: list[str]
    match_id: str
    termination: str
    forfeited: int | None
    scores: list[int]
    decisions: int
    started: float
    finished: float
    replay: str | None
    deals: list[DealRow] = field(default_factory=list)
    faults: list[FaultRow] = field(default_factory=list)
    exits: list[tuple[int | None, bool]] = field(default_factory=list)  # (status, crashed) by seat
    # (bot_name, bot_version) of each seat's last Hello; ("", "") for a seat that said none
    hellos: list[tuple[str, str]] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)  # by seat: per-match, persistent or remote
    node: str = "local"  # where the match was played: "local", or the Ray node's address
    seat_decisions: list[int] = field(default_factory=list)  # decisions by seat (not stored)


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        if not path.is_file():
            raise StoreError(f"{path}: no such file")
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    else:
        conn = sqlite3.connect(path)
    conn.isolation_level = None  # transactions are explicit (`Store.transaction`)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    if readonly:
        try:
            found = conn.execute("SELECT schema_version FROM ladder WHERE id = 1").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: not a ladder database ({exc})") from None
        if found is None:
            conn.close()
            raise StoreError(f"{path}: not a ladder database (no ladder row)")
        if found[0] > SCHEMA_VERSION:
            conn.close()
            raise StoreError(f"{path}: written by a newer arena (schema {found[0]})")
    return conn


class Store:
    """The database of one ladder run, held under an exclusive lock."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock: OwnerLock) -> None:
        self.path = path
        self.conn = conn
        self._lock = lock

    @classmethod
    def open(cls, path: Path, name: str, identity: dict[str, Any], bots: Sequence[Any]) -> Store:
        """Create the database, or reopen it if it belongs to the same ladder."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create: {exc.strerror or exc}") from None
        lock = OwnerLock(path)
        try:
            lock.acquire(f"{path}: another `arena ladder run` is using this database")
        except LockHeldError as exc:
            raise StoreError(str(exc)) from None
        existing = path.is_file() and path.stat().st_size > 0
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(path)
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if existing and "ladder" not in tables:
                raise StoreError(
                    f"{path}: not a ladder database (it has no ladder table); nothing was changed"
                )
            conn.execute("PRAGMA journal_mode = WAL")
            # WAL with synchronous=NORMAL: a committed match survives the process being killed.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(SCHEMA)
            store = cls(path, conn, lock)
            store._claim(name, identity, bots)
        except (sqlite3.Error, StoreError) as exc:
            if conn is not None:
                conn.close()
            lock.release()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"{path}: not a ladder database ({exc})") from None
        return store

    def _claim(self, name: str, identity: dict[str, Any], bots: Sequence[Any]) -> None:
        row = self.conn.execute("SELECT schema_version, identity FROM ladder WHERE id = 1").fetchone()
        text = json.dumps(identity, sort_keys=True)
        if row is None:
            with self.transaction():
                self.conn.execute(
                    "INSERT INTO ladder (id, schema_version, name, identity, created) VALUES (1, ?, ?, ?, ?)",
                    (SCHEMA_VERSION, name, text, time.time()),
                )
                self.conn.executemany(
                    "INSERT INTO bots (name, position, remote, command) VALUES (?, ?, ?, ?)",
                    [(b.name, i, int(b.remote), b.command) for i, b in enumerate(bots)],
                )
            return
        if row["schema_version"] > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: written by a newer arena (schema {row['schema_version']})")
        stored = json.loads(row["identity"])
        if stored != identity:
            changed = sorted(k for k in set(stored) | set(identity) if stored.get(k) != identity.get(k))
            raise StoreError(
                f"{self.path} holds a ladder with other {', '.join(changed)}: its recorded matches "
                "would not be comparable; use another database or restore the ladder file"
            )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()
        self._lock.release()

    def set_planned(self, matches: int) -> None:
        """How many matches the latest run's ladder file asks for (deal sets may be added later)."""
        with self.transaction():
            self.conn.execute("UPDATE ladder SET planned = ? WHERE id = 1", (matches,))

    def done_keys(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT key FROM matches")}

    def record(self, match: MatchRecord, ratings: dict[str, tuple[float, float]]) -> int | None:
        """Write a finished match and the ratings after it; None if the key was already recorded.
        Raises StoreError when another program holds the database's write lock past the busy
        timeout (the match is then not recorded, and is played again by the next run)."""
        try:
            return self._record(match, ratings)
        except sqlite3.OperationalError as exc:
            raise StoreError(
                f"{self.path}: cannot record match {match.key}: {exc} (another program holds it); "
                "every match recorded before stays, run again once it is free"
            ) from None

    def _record(self, match: MatchRecord, ratings: dict[str, tuple[float, float]]) -> int | None:
        with self.transaction():
            if self.conn.execute("SELECT 1 FROM matches WHERE key = ?", (match.key,)).fetchone():
                return None
            cursor = self.conn.execute(
                "INSERT INTO matches (key, deal_set, table_no, arrangement, seed, seats, match_id, "
                "termination, forfeited, scores, decisions, started, finished, seconds, replay) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    match.key,
                    match.deal_set,
                    match.table,
                    match.arrangement,
                    match.seed,
                    json.dumps(match.seats),
                    match.match_id,
                    match.termination,
                    match.forfeited,
                    json.dumps(match.scores),
                    match.decisions,
                    match.started,
                    match.finished,
                    round(match.finished - match.started, 3),
                    match.replay,
                ),
            )
            seq = cursor.lastrowid
            assert seq is not None
            self.conn.executemany(
                "INSERT INTO deals (match_seq, deal, seat, bot, points, card_points, annulled, active) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (seq, d.deal, s, bot, d.points[s], d.card_points[s], int(d.annulled), int(d.active[s]))
                    for d in match.deals
                    for s, bot in enumerate(match.seats)
                ],
            )
            self.conn.executemany(
                "INSERT INTO faults (match_seq, seat, bot, kind, deal, step, detail) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(seq, f.seat, match.seats[f.seat], f.kind, f.deal, f.step, f.detail) for f in match.faults],
            )
            self.conn.executemany(
                "INSERT INTO exits (match_seq, seat, bot, status, crashed) VALUES (?, ?, ?, ?, ?)",
                [
                    (seq, s, match.seats[s], status, int(crashed))
                    for s, (status, crashed) in enumerate(match.exits)
                ],
            )
            self.conn.executemany(
                "INSERT INTO hellos (match_seq, seat, bot, name, version) VALUES (?, ?, ?, ?, ?)",
                [
                    (seq, s, match.seats[s], name, version)
                    for s, (name, version) in enumerate(match.hellos)
                    if name or version  # no row for a seat that never said Hello
                ],
            )
            self.conn.executemany(
                "INSERT INTO processes (match_seq, seat, bot, mode, node) VALUES (?, ?, ?, ?, ?)",
                [(seq, s, match.seats[s], mode, match.node) for s, mode in enumerate(match.modes)],
            )
            self.conn.executemany(
                "INSERT INTO ratings (match_seq, bot, mu, sigma) VALUES (?, ?, ?, ?)",
                [(seq, bot, mu, sigma) for bot, (mu, sigma) in ratings.items()],
            )
        return seq


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database has the table (`hellos` is missing in a file no run opened since it came)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return found.fetchone() is not None


def latest_ratings(conn: sqlite3.Connection) -> dict[str, tuple[float, float]]:
    """Each bot's rating after the last match it played."""
    rows = conn.execute(
        "SELECT r.bot, r.mu, r.sigma FROM ratings r "
        "JOIN (SELECT bot, MAX(match_seq) AS seq FROM ratings GROUP BY bot) last "
        "ON r.bot = last.bot AND r.match_seq = last.seq"
    )
    return {row[0]: (row[1], row[2]) for row in rows}
