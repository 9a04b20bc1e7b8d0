"""The standing arena's persistent store: registered bots, matches, ratings.

SQLite by default (a file, no setup); PostgreSQL for larger deployments, given a
``postgresql://`` URL (needs the ``postgres`` extra, psycopg 3).  Every statement is
written in the SQL both understand: ``?`` placeholders (rewritten for psycopg), TEXT,
BIGINT and DOUBLE PRECISION columns, ``ON CONFLICT`` upserts, times as Unix
milliseconds, and no engine-specific functions.

Tokens are stored only as SHA-256 hashes: they are 256-bit random secrets, so a fast
hash is enough (there is nothing to brute-force), and a lookup is one indexed query.

The store is used from worker threads (never from the trio or grpc-io thread); one
lock serialises its connection, which is plenty at matches-per-minute rates. A PostgreSQL
connection that the database dropped (a restart, an idle limit) is replaced when a transaction
begins on it, so the first transaction after a restart does not fail. A SQLite store is one
server's: `claim_for_server` holds a lock while a server runs on it (`owner`).

The tables and their migrations are in `schema`; the values read and written in `records`.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..files import LockHeldError, OwnerLock
from .records import BotRecord, MatchResult, Pause, RecentMatch, SeatResult, Standing, now_ms
from .schema import (
    COLUMNS_5,
    INDEXES,
    MATCH_COLUMNS_3,
    MIGRATIONS,
    POSTGRES_MIGRATIONS,
    SCHEMA,
    SCHEMA_VERSION,
    fill_pair_meetings,
    pair_counts,
)
from .standings import read_standings

# The records are the store's vocabulary: its callers may import them from here.
__all__ = [
    "SCHEMA_VERSION",
    "BotRecord",
    "MatchResult",
    "NotRunningError",
    "Pause",
    "RecentMatch",
    "SeatResult",
    "Standing",
    "Store",
    "StoreError",
    "UnknownBotError",
    "hash_token",
    "now_ms",
]

BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


class StoreError(Exception):
    """The store cannot do what was asked: an unknown bot, a taken name, a bad URL."""


class UnknownBotError(StoreError):
    """No bot has that name."""


class NotRunningError(StoreError):
    """A result for a match the store no longer has running (another server recorded it aborted)."""


class StoreInUseError(StoreError):
    """Another server holds this SQLite store."""


class StoreUnavailableError(StoreError):
    """The database does not answer (down, restarting, unreachable): try again later."""


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` says the database did not answer, rather than that a statement was wrong."""
    if isinstance(exc, StoreUnavailableError | sqlite3.OperationalError):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    # An idle limit ending a transaction (`limit_idle_transactions`) drops the connection too.
    return isinstance(exc, psycopg.OperationalError | psycopg.errors.IdleInTransactionSessionTimeout)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Store:
    """One connection to the arena's database; safe to share between threads."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith(("postgresql://", "postgres://"))
        self._lock = threading.Lock()
        self._idle_limit_ms = 0  # PostgreSQL: see `limit_idle_transactions`; 0 is none
        self._owner = OwnerLock(self.path)  # SQLite: see `claim_for_server`
        self._conn: Any = self._connect(url)
        try:
            self._create_or_migrate()
        except BaseException:
            self.close()  # a store that cannot be opened holds no connection and no lock
            raise

    def _create_or_migrate(self) -> None:
        with self.transaction() as db:
            if self.postgres:  # servers opening one new store at once create its tables once
                db.execute("SELECT pg_advisory_xact_lock(7470001)")
            for statement in SCHEMA:
                db.execute(statement)
            row = db.execute("SELECT version FROM arena_schema").fetchone()
            if row is None:
                db.execute("INSERT INTO arena_schema (version) VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise StoreError(f"{self.describe()}: written by a newer arena (schema {row[0]})")
            elif row[0] < SCHEMA_VERSION:
                for version in range(int(row[0]), SCHEMA_VERSION):
                    for statement in MIGRATIONS.get(version, []):
                        db.execute(statement)
                    for statement in POSTGRES_MIGRATIONS.get(version, []) if self.postgres else []:
                        db.execute(statement)
                if row[0] < 3:
                    have = self._columns(db, "matches")
                    for column, kind in MATCH_COLUMNS_3.items():
                        if column not in have:
                            db.execute(f"ALTER TABLE matches ADD COLUMN {column} {kind}")
                    fill_pair_meetings(db)
                for table, columns in COLUMNS_5.items() if row[0] < 5 else ():
                    have = self._columns(db, table)
                    for column, kind in columns.items():
                        if column not in have:
                            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                db.execute("UPDATE arena_schema SET version = ?", (SCHEMA_VERSION,))
            for statement in INDEXES:
                db.execute(statement)

    def _columns(self, db: _Session, table: str) -> set[str]:
        if self.postgres:
            query = "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
        else:
            query = "SELECT name FROM pragma_table_info(?)"
        return {row[0] for row in db.execute(query, (table,)).fetchall()}

    def _connect(self, url: str) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError:
                raise StoreError("a PostgreSQL store needs psycopg: pip install 'arena[postgres]'") from None
            try:
                return psycopg.connect(url, autocommit=True, connect_timeout=10)
            except psycopg.Error as exc:
                raise StoreUnavailableError(f"cannot connect to {self.describe()}: {exc}") from None
        path = self.path
        try:
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")  # the CLI reads while the server writes
            conn.execute("PRAGMA synchronous = FULL")  # a finished result survives a power cut too
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open the arena store ({exc})") from None
        return conn

    def limit_idle_transactions(self, seconds: float) -> None:
        """PostgreSQL ends this connection when a transaction of it waits longer than `seconds`
        between two statements, which rolls it back and frees its locks.

        A server of a cluster that freezes (stopped, swapped out, a VM paused) in the middle of a
        transaction would otherwise hold its locks for as long as it is frozen: a row its heartbeat
        updated, or the lock under which one server at a time buries the dead (`Cluster.reap`), so
        that the others could never take it for dead. The next transaction after such an end
        opens a new connection."""
        if not self.postgres:
            return
        with self._lock:
            self._idle_limit_ms = max(1, int(seconds * 1000))
            self._limit_idle(self._conn)

    def _limit_idle(self, conn: Any) -> None:
        if self._idle_limit_ms:
            conn.execute(f"SET idle_in_transaction_session_timeout = {self._idle_limit_ms}")

    def describe(self) -> str:
        """The store's URL without a password."""
        return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", self.url)

    @property
    def path(self) -> Path:
        """A SQLite store's file."""
        return Path(self.url.removeprefix("sqlite:///"))

    def claim_for_server(self) -> None:
        """Hold this SQLite store for one server until `close` (or the process's end); a second
        server is refused with `StoreInUseError`, naming the store and the process that holds it
        (`arena.files.OwnerLock`). Commands that only read or edit bots open the store without this claim and
        work beside the server. A PostgreSQL store is shared by design (`cluster`)."""
        if self.postgres:
            return
        try:
            self._owner.acquire(
                f"{self.path}: this store is in use by another arena server; a SQLite store is one "
                "server's: stop that server, or share a postgresql:// store"
            )
        except LockHeldError as exc:
            raise StoreInUseError(str(exc)) from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._owner.release()

    def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()  # already dropped by the database; this frees the client's side
        self._conn = self._connect(self.url)
        self._limit_idle(self._conn)

    def _begin(self) -> None:
        """BEGIN on a live connection. PostgreSQL: a connection the database dropped (ended by the
        idle limit, or by a restart that psycopg notices only when the connection is used) is
        replaced first; BEGIN is the first statement, so trying it again on a new connection
        cannot repeat any work."""
        if not self.postgres:
            self._conn.execute("BEGIN")
            return
        import psycopg

        if self._conn.broken or self._conn.closed:
            self._reconnect()
        try:
            self._conn.execute("BEGIN")
        except psycopg.OperationalError:
            if not (self._conn.broken or self._conn.closed):
                raise
            self._reconnect()
            self._conn.execute("BEGIN")

    @contextmanager
    def transaction(self) -> Iterator[_Session]:
        """Everything inside commits together or not at all."""
        with self._lock:
            self._begin()
            session = _Session(self._conn, self.postgres)
            try:
                yield session
            except BaseException:
                if not (self.postgres and (self._conn.broken or self._conn.closed)):
                    with contextlib.suppress(Exception):  # the error that got here is the one to see
                        self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    # ------------------------------------------------------------------ bots

    def register_bot(self, name: str, variants: Sequence[str] = ()) -> tuple[BotRecord, str]:
        """A new bot and its secret token (returned once; only its hash is kept)."""
        if not BOT_NAME.fullmatch(name):
            raise StoreError(f"bot name {name!r}: 1-40 letters, digits, '-', '_' or '.', starting alnum")
        token = "gta_" + secrets.token_urlsafe(32)
        registered = now_ms()
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone():
                raise StoreError(f"a bot named {name!r} is already registered")
            db.execute(
                "INSERT INTO bots (name, token_hash, variants, registered_ms) VALUES (?, ?, ?, ?)",
                (name, hash_token(token), ",".join(variants), registered),
            )
        return BotRecord(name, tuple(variants), registered, None, 0, ""), token

    def bot_by_token(self, token: str) -> BotRecord | None:
        with self.transaction() as db:
            row = db.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE token_hash = ?", (hash_token(token),))
            found = row.fetchone()
        return _bot(found) if found else None

    def bot(self, name: str) -> BotRecord:
        with self.transaction() as db:
            found = db.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE name = ?", (name,)).fetchone()
        if found is None:
            raise UnknownBotError(f"no bot named {name!r}")
        return _bot(found)

    def bots(self) -> list[BotRecord]:
        with self.transaction() as db:
            rows = db.execute(f"SELECT {_BOT_COLUMNS} FROM bots ORDER BY name").fetchall()
        return [_bot(row) for row in rows]

    def revoke_bot(self, name: str) -> BotRecord:
        with self.transaction() as db:
            db.execute(
                "UPDATE bots SET revoked_ms = ? WHERE name = ? AND revoked_ms IS NULL", (now_ms(), name)
            )
        return self.bot(name)

    def revoked_bots(self) -> set[str]:
        with self.transaction() as db:
            rows = db.execute("SELECT name FROM bots WHERE revoked_ms IS NOT NULL").fetchall()
        return {row[0] for row in rows}

    def resume_bot(self, name: str) -> BotRecord:
        with self.transaction() as db:
            db.execute(
                "UPDATE bots SET paused_until_ms = 0, pause_reason = '', faulty_streak = 0 WHERE name = ?",
                (name,),
            )
        return self.bot(name)

    # ------------------------------------------------------------------ matches

    def abort_unfinished(self) -> int:
        """At start-up: matches cut off by a stop are recorded as aborted (never rated)."""
        with self.transaction() as db:
            count = db.execute("SELECT COUNT(*) FROM matches WHERE state = 'running'").fetchone()[0]
            db.execute(
                "UPDATE matches SET state = 'aborted', termination = 'aborted', finished_ms = ? "
                "WHERE state = 'running'",
                (now_ms(),),
            )
        return int(count)

    def start_match(
        self, match_id: str, variant: str, seed: int, deals: int, bots: Sequence[str], started_ms: int = 0
    ) -> None:
        """A match the lobby seated (at `started_ms`, default now), as 'running' until it is recorded."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO matches (match_id, variant, seed, deals, state, started_ms) "
                "VALUES (?, ?, ?, ?, 'running', ?)",
                (match_id, variant, seed, deals, started_ms or now_ms()),
            )
            for seat, bot in enumerate(bots):
                db.execute(
                    "INSERT INTO match_seats (match_id, seat, bot) VALUES (?, ?, ?)", (match_id, seat, bot)
                )

    def abort_match(
        self,
        match_id: str,
        reason: str = "",
        guard: Callable[[_Session], None] | None = None,
        also: Callable[[_Session], None] | None = None,
    ) -> bool:
        """Record a running match as aborted (never rated); False if it was not running.
        `guard(db)` runs first and may raise to write nothing; `also(db)` runs after the update, in
        the same transaction (the cluster frees the match's lobby places)."""
        with self.transaction() as db:
            if guard is not None:
                guard(db)
            updated = db.execute(
                "UPDATE matches SET state = 'aborted', termination = 'aborted', finished_ms = ?, "
                "abort_reason = ? WHERE match_id = ? AND state = 'running'",
                (now_ms(), reason, match_id),
            )
            if also is not None:
                also(db)
        return bool(updated.rowcount == 1)

    def ratings(self, variant: str, bots: Sequence[str]) -> dict[str, tuple[float, float]]:
        """Stored (mu, sigma) of those bots that have a rating in `variant`."""
        with self.transaction() as db:
            rows = db.execute("SELECT bot, mu, sigma FROM ratings WHERE variant = ?", (variant,)).fetchall()
        wanted = set(bots)
        return {row[0]: (float(row[1]), float(row[2])) for row in rows if row[0] in wanted}

    def ratings_of(self, bot: str) -> dict[str, float]:
        """The bot's rating mean (μ) in each variant it has played."""
        with self.transaction() as db:
            rows = db.execute("SELECT variant, mu FROM ratings WHERE bot = ?", (bot,)).fetchall()
        return {row[0]: float(row[1]) for row in rows}

    def pair_counts(self) -> dict[tuple[str, str, str], int]:
        """How often each pair of bots has met, by (variant, bot, bot) with the names sorted."""
        with self.transaction() as db:
            return pair_counts(db)

    def finish_match(
        self,
        result: MatchResult,
        pause_after: int,
        pause_ms: int,
        also: Callable[[_Session], None] | None = None,
        rate: Callable[[dict[str, tuple[float, float]]], dict[str, tuple[float, float]]] | None = None,
        guard: Callable[[_Session], None] | None = None,
    ) -> list[Pause]:
        """Record a finished match, its ratings and the bots' fault streaks, atomically.

        Returns the bots this match pauses: those with a fault in `pause_after` matches in a row.
        Raises `NotRunningError`, recording nothing, when the match is not running in the store
        (another server found its host dead and recorded it aborted): it is never rated then.
        `also(db)` runs in the same transaction (the cluster frees the match's lobby places);
        `guard(db)` runs first and may raise to record nothing (a server of a cluster that was
        taken for dead writes nothing).

        `rate(stored)` gives the seats' new ratings from their stored (mu, sigma) (a bot without
        one is missing); it is called inside the transaction, with the bots' rows locked on
        PostgreSQL, so two servers recording matches of one bot at once never lose an update
        (the second waits for the first). `result.ratings` is set to what it returns.
        """
        pauses: list[Pause] = []
        rated = result.termination in ("completed", "forfeit")
        with self.transaction() as db:
            if guard is not None:
                guard(db)
            self._close_match(db, result, rated)
            if rated and rate is not None:
                result.ratings = rate(self._locked_ratings(db, result))
            finished = self._stamp_record(db, result)
            if also is not None:
                also(db)
            for seat, outcome in enumerate(result.seats):
                self._record_seat(db, result.match_id, seat, outcome)
                if not rated:
                    continue
                self._add_rating(db, result.variant, outcome, result.ratings[outcome.bot])
                pause = self._count_streak(db, outcome, pause_after, finished + pause_ms)
                if pause is not None:
                    pauses.append(pause)
        return pauses

    @staticmethod
    def _close_match(db: _Session, result: MatchResult, rated: bool) -> None:
        """The match leaves 'running' (finished if rated, else aborted); `NotRunningError` if it
        already had."""
        updated = db.execute(
            "UPDATE matches SET state = ?, termination = ?, replay = ? "
            "WHERE match_id = ? AND state = 'running'",
            ("finished" if rated else "aborted", result.termination, result.replay, result.match_id),
        )
        if updated.rowcount != 1:
            raise NotRunningError(f"match {result.match_id} is not running in the store")

    def _locked_ratings(self, db: _Session, result: MatchResult) -> dict[str, tuple[float, float]]:
        """The seats' stored (mu, sigma), their bots' rows locked until the transaction ends."""
        names = sorted({seat.bot for seat in result.seats})
        marks = ", ".join("?" for _ in names)
        # NO KEY: rows referencing the bots (a round's new seats) may still be inserted.
        lock = " FOR NO KEY UPDATE" if self.postgres else ""  # SQLite: one writer at a time
        db.execute(f"SELECT name FROM bots WHERE name IN ({marks}) ORDER BY name{lock}", names)
        rows = db.execute(
            f"SELECT bot, mu, sigma FROM ratings WHERE variant = ? AND bot IN ({marks})",
            (result.variant, *names),
        ).fetchall()
        return {row[0]: (float(row[1]), float(row[2])) for row in rows}

    @staticmethod
    def _stamp_record(db: _Session, result: MatchResult) -> int:
        """When the result is recorded (returned) and its place in the order of results."""
        # Taken with the bots locked: of two matches sharing a bot, the later one recorded
        # has the higher number, so replaying results by it gives the stored ratings.
        finished = now_ms()
        seq = db.execute("SELECT COALESCE(MAX(record_seq), 0) + 1 FROM matches").fetchone()[0]
        db.execute(
            "UPDATE matches SET finished_ms = ?, record_seq = ?, ended_ms = ? WHERE match_id = ?",
            (finished, int(seq), result.ended_ms or finished, result.match_id),
        )
        return finished

    @staticmethod
    def _record_seat(db: _Session, match_id: str, seat: int, outcome: SeatResult) -> None:
        name, version = outcome.hello if outcome.hello is not None else (None, None)
        db.execute(
            "UPDATE match_seats SET score = ?, deals = ?, decisions = ?, faults = ?, "
            "hello_name = ?, hello_version = ?, adjusted_score = ? WHERE match_id = ? AND seat = ?",
            (
                outcome.score,
                outcome.deals,
                outcome.decisions,
                outcome.faults,
                name,
                version,
                outcome.adjusted_score,
                match_id,
                seat,
            ),
        )

    @staticmethod
    def _add_rating(db: _Session, variant: str, outcome: SeatResult, rating: tuple[float, float]) -> None:
        """The bot's new rating, and the seat's figures added to its totals in the variant."""
        mu, sigma = rating
        db.execute(
            "INSERT INTO ratings (bot, variant, mu, sigma, matches, deals, score, decisions, faults, "
            "adjusted_score, adjusted_deals) "
            "VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) ON CONFLICT (bot, variant) DO UPDATE SET "
            "mu = excluded.mu, sigma = excluded.sigma, matches = ratings.matches + 1, "
            "deals = ratings.deals + excluded.deals, score = ratings.score + excluded.score, "
            "decisions = ratings.decisions + excluded.decisions, "
            "faults = ratings.faults + excluded.faults, "
            "adjusted_score = ratings.adjusted_score + excluded.adjusted_score, "
            "adjusted_deals = ratings.adjusted_deals + excluded.adjusted_deals",
            (
                outcome.bot,
                variant,
                mu,
                sigma,
                outcome.deals,
                outcome.score,
                outcome.decisions,
                outcome.faults,
                outcome.adjusted_score or 0.0,
                0 if outcome.adjusted_score is None else outcome.deals,
            ),
        )

    @staticmethod
    def _count_streak(db: _Session, outcome: SeatResult, pause_after: int, until_ms: int) -> Pause | None:
        """The bot's run of matches with a fault, one longer or back to none; the pause (until
        `until_ms`) when the run reaches `pause_after`."""
        row = db.execute("SELECT faulty_streak FROM bots WHERE name = ?", (outcome.bot,)).fetchone()
        streak = int(row[0]) + 1 if outcome.faults else 0
        if streak < pause_after:
            db.execute("UPDATE bots SET faulty_streak = ? WHERE name = ?", (streak, outcome.bot))
            return None
        last = outcome.fault_kinds[-1] if outcome.fault_kinds else "a fault"
        reason = f"a fault in {streak} matches in a row (the last: {last})"
        db.execute(
            "UPDATE bots SET faulty_streak = 0, paused_until_ms = ?, pause_reason = ? WHERE name = ?",
            (until_ms, reason, outcome.bot),
        )
        return Pause(outcome.bot, reason, until_ms)

    def match_state(self, match_id: str) -> str | None:
        """'running', 'finished' or 'aborted'; None for a match the store does not have."""
        with self.transaction() as db:
            row = db.execute("SELECT state FROM matches WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else str(row[0])

    def match_states(self) -> dict[str, str]:
        with self.transaction() as db:
            rows = db.execute("SELECT match_id, state FROM matches").fetchall()
        return {row[0]: row[1] for row in rows}

    # ------------------------------------------------------------------ standings

    def standings(self, variant: str = "", recent: int = 5) -> list[Standing]:
        """Every rated bot, by variant, best conservative rating first."""
        with self.transaction() as db:
            return read_standings(db, variant, recent)


_BOT_COLUMNS = "name, variants, registered_ms, revoked_ms, paused_until_ms, pause_reason"


def _bot(row: Sequence[Any]) -> BotRecord:
    variants = tuple(v for v in str(row[1]).split(",") if v)
    return BotRecord(row[0], variants, int(row[2]), row[3], int(row[4]), row[5])


class _Session:
    """A transaction's view of the connection, in one placeholder style."""

    def __init__(self, conn: Any, postgres: bool) -> None:
        self._conn = conn
        self._postgres = postgres

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self._postgres:
            sql = sql.replace("?", "%s")  # no statement here has a literal '?'
        return self._conn.execute(sql, params)
