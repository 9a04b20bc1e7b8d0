"""Submitted versions of registered bots, in the arena's store (docs/SUBMIT.md).

A version is one submission of a bot's code: its archive (content-addressed by the SHA-256 of the
normalised archive, kept once however many versions share it), the parsed manifest, and its state:

    building -> testing -> active | rejected (reason)
    active -> retired      a newer version of the bot became active (it replaced this one)
    any    -> disabled     the operator took it out (reason)

The archive and the built tree are kept in the store itself, so every server of a cluster sharing
a PostgreSQL store can run any version without a shared file system. A build is claimed by one
worker at a time (`claim`), so two servers never build one version twice.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from .records import now_ms
from .store import Store, StoreError, UnknownBotError

STATES = ("building", "testing", "active", "retired", "rejected", "disabled")
MAX_ARCHIVE_BYTES = 16 * 1024 * 1024
OUTPUT_KEPT = 64 * 1024  # characters of a hosted seat's output kept for its owner


class UnknownVersionError(StoreError):
    """The bot has no version of that number."""


@dataclass(frozen=True)
class VersionRecord:
    bot: str
    version: int
    digest: str
    manifest: dict[str, Any]
    state: str
    reason: str
    report: str
    build_digest: str | None
    submitted_ms: int
    updated_ms: int

    def to_dict(self, report: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "bot": self.bot,
            "version": self.version,
            "digest": self.digest,
            "language": self.manifest.get("language", ""),
            "state": self.state,
            "reason": self.reason,
            "submitted_ms": self.submitted_ms,
            "updated_ms": self.updated_ms,
        }
        if report:
            out["report"] = self.report
        return out


_COLUMNS = "bot, version, digest, manifest, state, reason, report, build_digest, submitted_ms, updated_ms"


def _record(row: Any) -> VersionRecord:
    return VersionRecord(
        row[0],
        int(row[1]),
        row[2],
        json.loads(row[3]),
        row[4],
        row[5],
        row[6],
        row[7],
        int(row[8]),
        int(row[9]),
    )


class Versions:
    """The store's versions of bots; as thread-safe as the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def submit(
        self, bot: str, digest: str, manifest: dict[str, Any], archive: bytes
    ) -> tuple[VersionRecord, bool]:
        """A new version of `bot` in state building, and True; or the bot's version that already
        has this digest (a submission of the same code again), and False."""
        if len(archive) > MAX_ARCHIVE_BYTES:
            raise StoreError(f"the archive is {len(archive)} bytes; the limit is {MAX_ARCHIVE_BYTES}")
        with self.store.transaction() as db:
            if db.execute("SELECT 1 FROM bots WHERE name = ?", (bot,)).fetchone() is None:
                raise UnknownBotError(f"no bot named {bot!r}")
            same = db.execute(
                f"SELECT {_COLUMNS} FROM bot_versions WHERE bot = ? AND digest = ? "
                "AND state NOT IN ('rejected', 'disabled') ORDER BY version DESC",
                (bot, digest),
            ).fetchone()
            if same is not None:
                return _record(same), False
            _put_archive(db, digest, archive)
            number = int(
                db.execute(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM bot_versions WHERE bot = ?", (bot,)
                ).fetchone()[0]
            )
            at = now_ms()
            db.execute(
                "INSERT INTO bot_versions (bot, version, digest, manifest, state, submitted_ms, updated_ms) "
                "VALUES (?, ?, ?, ?, 'building', ?, ?)",
                (bot, number, digest, json.dumps(manifest, sort_keys=True), at, at),
            )
        return self.version(bot, number), True

    def version(self, bot: str, number: int) -> VersionRecord:
        with self.store.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM bot_versions WHERE bot = ? AND version = ?", (bot, number)
            ).fetchone()
        if row is None:
            raise UnknownVersionError(f"bot {bot!r} has no version {number}")
        return _record(row)

    def versions(self, bot: str = "") -> list[VersionRecord]:
        """The bot's versions, oldest first (every bot's, by name, without `bot`)."""
        with self.store.transaction() as db:
            if bot:
                rows = db.execute(
                    f"SELECT {_COLUMNS} FROM bot_versions WHERE bot = ? ORDER BY version", (bot,)
                ).fetchall()
            else:
                rows = db.execute(f"SELECT {_COLUMNS} FROM bot_versions ORDER BY bot, version").fetchall()
        return [_record(row) for row in rows]

    def active(self) -> list[VersionRecord]:
        """Every bot's active version (at most one a bot), of bots not revoked."""
        with self.store.transaction() as db:
            rows = db.execute(
                f"SELECT {', '.join('v.' + c.strip() for c in _COLUMNS.split(','))} FROM bot_versions v "
                "JOIN bots b ON b.name = v.bot WHERE v.state = 'active' AND b.revoked_ms IS NULL "
                "ORDER BY v.bot"
            ).fetchall()
        return [_record(row) for row in rows]

    def archive(self, digest: str) -> bytes:
        with self.store.transaction() as db:
            row = db.execute("SELECT data FROM bot_archives WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            raise StoreError(f"no archive {digest} in the store")
        return base64.b64decode(row[0])

    def claim(self, worker: str, stale_ms: int = 600_000) -> VersionRecord | None:
        """The oldest version waiting for a build, now this worker's; None when none waits. A
        version a worker claimed (building or testing) more than `stale_ms` ago without finishing
        it (the worker died) is claimed again, from its build."""
        stale = now_ms() - stale_ms
        with self.store.transaction() as db:
            lock = " FOR UPDATE SKIP LOCKED" if self.store.postgres else ""
            row = db.execute(
                "SELECT bot, version FROM bot_versions WHERE (state = 'building' AND worker = '') "
                "OR (state IN ('building', 'testing') AND updated_ms < ?) "
                "ORDER BY submitted_ms, bot, version LIMIT 1" + lock,
                (stale,),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE bot_versions SET state = 'building', worker = ?, updated_ms = ? "
                "WHERE bot = ? AND version = ?",
                (worker, now_ms(), row[0], int(row[1])),
            )
        return self.version(row[0], int(row[1]))

    def built(self, bot: str, number: int, tree: bytes, digest: str, report: str) -> None:
        """The build succeeded: its tree is kept, and the version goes on to testing."""
        with self.store.transaction() as db:
            _put_archive(db, digest, tree)
            db.execute(
                "UPDATE bot_versions SET state = 'testing', build_digest = ?, report = ?, updated_ms = ? "
                "WHERE bot = ? AND version = ? AND state = 'building'",
                (digest, report, now_ms(), bot, number),
            )

    def reject(self, bot: str, number: int, reason: str, report: str) -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE bot_versions SET state = 'rejected', reason = ?, report = ?, updated_ms = ? "
                "WHERE bot = ? AND version = ? AND state IN ('building', 'testing')",
                (reason, report, now_ms(), bot, number),
            )

    def activate(self, bot: str, number: int, report: str) -> None:
        """The version passed its tests: it is the bot's active one, and the one active before it
        is retired (in the same transaction, so a bot never has two)."""
        with self.store.transaction() as db:
            updated = db.execute(
                "UPDATE bot_versions SET state = 'active', report = ?, updated_ms = ? "
                "WHERE bot = ? AND version = ? AND state = 'testing'",
                (report, now_ms(), bot, number),
            )
            if updated.rowcount == 1:
                db.execute(
                    "UPDATE bot_versions SET state = 'retired', updated_ms = ? "
                    "WHERE bot = ? AND state = 'active' AND version <> ?",
                    (now_ms(), bot, number),
                )

    def disable(self, bot: str, number: int, reason: str) -> VersionRecord:
        """The operator takes a version out: it is never built, tested or run again."""
        with self.store.transaction() as db:
            db.execute(
                "UPDATE bot_versions SET state = 'disabled', reason = ?, updated_ms = ? "
                "WHERE bot = ? AND version = ?",
                (reason or "disabled by the operator", now_ms(), bot, number),
            )
        return self.version(bot, number)

    def seat(self, match_id: str, seat: int, bot: str, number: int) -> None:
        """The match's seat is played by this version of the bot (hosted)."""
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO hosted_seats (match_id, seat, bot, version) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (match_id, seat) DO NOTHING",
                (match_id, seat, bot, number),
            )

    def seat_output(self, match_id: str, seat: int, output: str) -> None:
        """What the hosted seat's process printed during the match (its end, `OUTPUT_KEPT`)."""
        with self.store.transaction() as db:
            db.execute(
                "UPDATE hosted_seats SET output = ? WHERE match_id = ? AND seat = ?",
                (output[-OUTPUT_KEPT:], match_id, seat),
            )

    def outputs(self, bot: str, match_id: str) -> list[tuple[int, int, str]]:
        """(seat, version, output) of the bot's hosted seats in the match: for its owner only."""
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT seat, version, output FROM hosted_seats WHERE bot = ? AND match_id = ? ORDER BY seat",
                (bot, match_id),
            ).fetchall()
        return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def hosted_seats(self, bot: str) -> dict[str, int]:
        """The version that played each of the bot's hosted matches, by match id."""
        with self.store.transaction() as db:
            rows = db.execute("SELECT match_id, version FROM hosted_seats WHERE bot = ?", (bot,)).fetchall()
        return {row[0]: int(row[1]) for row in rows}


def _put_archive(db: Any, digest: str, data: bytes) -> None:
    db.execute(
        "INSERT INTO bot_archives (digest, size, data) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING",
        (digest, len(data), base64.b64encode(data).decode("ascii")),
    )
