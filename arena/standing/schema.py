"""The store's tables, in the SQL SQLite and PostgreSQL both accept, and their migrations.

Schema versions: 1, the first; 2 added ``match_seats.hello_name`` and ``hello_version``
(what the seat's bot said in its last Hello; NULL for a seat that said none and for the
matches recorded before); 3 added what several servers sharing one PostgreSQL need
(`arena.standing.cluster`): ``matches.server_id`` (the server that hosts the match) and
``abort_reason``, the tables ``arena_servers`` (heartbeats), ``lobby_places`` (every waiting
or booked place of every server's lobby streams) and ``pair_meetings`` (how often each pair
met, filled from the stored matches on migration); 4 made ``match_seats.score`` BIGINT (a Danish
match's scores outgrow 32 bits; SQLite's INTEGER already holds 64); 5 added the luck-adjusted
scores (``match_seats.adjusted_score``, NULL where the variant is rated on raw points, and
``ratings.adjusted_score`` over ``ratings.adjusted_deals``). Opening a store of an older version
migrates it, in the same transaction as the rest of the opening (`MIGRATIONS`, `Store`).
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 5

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS arena_schema (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS bots (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        variants TEXT NOT NULL,                 -- comma list; '' = every variant of the arena
        registered_ms BIGINT NOT NULL,
        revoked_ms BIGINT,                      -- NULL while the token is good
        paused_until_ms BIGINT NOT NULL DEFAULT 0,
        pause_reason TEXT NOT NULL DEFAULT '',
        faulty_streak INTEGER NOT NULL DEFAULT 0 -- matches in a row with a fault
    )""",
    """CREATE TABLE IF NOT EXISTS matches (
        match_id TEXT PRIMARY KEY,
        variant TEXT NOT NULL,
        seed BIGINT NOT NULL,
        deals INTEGER NOT NULL,
        state TEXT NOT NULL,                    -- running, finished, aborted
        termination TEXT NOT NULL DEFAULT '',   -- completed, forfeit, aborted
        started_ms BIGINT NOT NULL,
        finished_ms BIGINT,
        replay TEXT NOT NULL DEFAULT '',
        server_id TEXT NOT NULL DEFAULT '',     -- the server hosting it; '' = single-process
        abort_reason TEXT NOT NULL DEFAULT '',  -- why it was aborted, when it was
        record_seq BIGINT,                      -- order of the recorded results (ratings' order)
        ended_ms BIGINT                         -- when it ended on its server (finished_ms: recorded)
    )""",
    "CREATE INDEX IF NOT EXISTS matches_by_state ON matches (state)",
    """CREATE TABLE IF NOT EXISTS match_seats (
        match_id TEXT NOT NULL REFERENCES matches (match_id),
        seat INTEGER NOT NULL,
        bot TEXT NOT NULL REFERENCES bots (name),
        score BIGINT NOT NULL DEFAULT 0,         -- a Danish score may outgrow 32 bits
        deals INTEGER NOT NULL DEFAULT 0,
        decisions INTEGER NOT NULL DEFAULT 0,
        faults INTEGER NOT NULL DEFAULT 0,
        hello_name TEXT,                        -- the seat's last Hello; NULL: none recorded
        hello_version TEXT,
        adjusted_score DOUBLE PRECISION,        -- score less the cards' luck; NULL: not adjusted
        PRIMARY KEY (match_id, seat)
    )""",
    "CREATE INDEX IF NOT EXISTS match_seats_by_bot ON match_seats (bot)",
    """CREATE TABLE IF NOT EXISTS ratings (
        bot TEXT NOT NULL REFERENCES bots (name),
        variant TEXT NOT NULL,
        mu DOUBLE PRECISION NOT NULL,
        sigma DOUBLE PRECISION NOT NULL,
        matches INTEGER NOT NULL DEFAULT 0,
        deals INTEGER NOT NULL DEFAULT 0,
        score BIGINT NOT NULL DEFAULT 0,
        decisions INTEGER NOT NULL DEFAULT 0,
        faults INTEGER NOT NULL DEFAULT 0,
        adjusted_score DOUBLE PRECISION NOT NULL DEFAULT 0,  -- over the deals of adjusted matches
        adjusted_deals INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (bot, variant)
    )""",
    # Several servers on one PostgreSQL (arena/standing/cluster.py); unused by a SQLite store.
    """CREATE TABLE IF NOT EXISTS arena_servers (
        server_id TEXT PRIMARY KEY,
        address TEXT NOT NULL,                  -- host:port its bots' match streams dial
        state TEXT NOT NULL,                    -- serving, draining, stopped, gone
        started_ms BIGINT NOT NULL,
        heartbeat_ms BIGINT NOT NULL            -- the database's clock
    )""",
    """CREATE TABLE IF NOT EXISTS lobby_places (
        place_id TEXT PRIMARY KEY,              -- server:stream:slot
        server_id TEXT NOT NULL,
        stream BIGINT NOT NULL,
        bot TEXT NOT NULL REFERENCES bots (name),
        variants TEXT NOT NULL,                 -- comma list the stream asked for
        waiting_since_ms BIGINT NOT NULL,
        leaving INTEGER NOT NULL DEFAULT 0,     -- its stream ended; deleted when its match ends
        match_id TEXT,                          -- booked for this match; NULL = free
        seat INTEGER,
        host_address TEXT,
        seat_token TEXT                         -- until the stream's server delivered the Seated
    )""",
    "CREATE INDEX IF NOT EXISTS lobby_places_by_match ON lobby_places (match_id)",
    "CREATE INDEX IF NOT EXISTS lobby_places_by_bot ON lobby_places (bot)",
    """CREATE TABLE IF NOT EXISTS pair_meetings (
        variant TEXT NOT NULL,
        one TEXT NOT NULL,                      -- the two names sorted as Python sorts them
        other TEXT NOT NULL,
        meetings INTEGER NOT NULL,
        PRIMARY KEY (variant, one, other)
    )""",
    # Submitted bots (arena/submissions, docs/SUBMIT.md): new tables, created by any opening, so
    # no migration; an older arena ignores them. Archives are base64 TEXT: SQLite's BLOB and
    # PostgreSQL's BYTEA have no common spelling.
    """CREATE TABLE IF NOT EXISTS bot_archives (
        digest TEXT PRIMARY KEY,                -- sha256 of the normalised archive
        size BIGINT NOT NULL,
        data TEXT NOT NULL                      -- the archive (tar), base64
    )""",
    """CREATE TABLE IF NOT EXISTS bot_versions (
        bot TEXT NOT NULL REFERENCES bots (name),
        version INTEGER NOT NULL,               -- 1, 2, ... per bot
        digest TEXT NOT NULL REFERENCES bot_archives (digest),
        manifest TEXT NOT NULL,                 -- the parsed manifest, JSON
        state TEXT NOT NULL,                    -- building, testing, active, retired, rejected, disabled
        reason TEXT NOT NULL DEFAULT '',        -- why rejected or disabled
        report TEXT NOT NULL DEFAULT '',        -- the build's output and the conformance table (owner's)
        build_digest TEXT,                      -- the built tree, in bot_archives; NULL until built
        worker TEXT NOT NULL DEFAULT '',        -- who builds it (claimed)
        submitted_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL,
        PRIMARY KEY (bot, version)
    )""",
    "CREATE INDEX IF NOT EXISTS bot_versions_by_state ON bot_versions (state)",
    """CREATE TABLE IF NOT EXISTS hosted_seats (
        match_id TEXT NOT NULL,                 -- a seat the arena played with a submitted version
        seat INTEGER NOT NULL,
        bot TEXT NOT NULL,
        version INTEGER NOT NULL,
        output TEXT NOT NULL DEFAULT '',        -- the end of what it printed in the match (owner's)
        PRIMARY KEY (match_id, seat)
    )""",
]


# From version N to N + 1, in the SQL both databases accept.
MIGRATIONS: dict[int, list[str]] = {
    1: [
        "ALTER TABLE match_seats ADD COLUMN hello_name TEXT",
        "ALTER TABLE match_seats ADD COLUMN hello_version TEXT",
    ],
}

# From version N to N + 1, on PostgreSQL only (SQLite's INTEGER is already 64 bits wide).
POSTGRES_MIGRATIONS: dict[int, list[str]] = {
    3: ["ALTER TABLE match_seats ALTER COLUMN score TYPE BIGINT"],
}

# From version 2 to 3: columns added to `matches` (each only if missing: a store may have them).
MATCH_COLUMNS_3 = {
    "server_id": "TEXT NOT NULL DEFAULT ''",
    "abort_reason": "TEXT NOT NULL DEFAULT ''",
    "record_seq": "BIGINT",
    "ended_ms": "BIGINT",
}

# From version 4 to 5: the luck-adjusted scores, by table (each only if missing, as above).
COLUMNS_5 = {
    "match_seats": {"adjusted_score": "DOUBLE PRECISION"},
    "ratings": {
        "adjusted_score": "DOUBLE PRECISION NOT NULL DEFAULT 0",
        "adjusted_deals": "INTEGER NOT NULL DEFAULT 0",
    },
}

# After the migrations: indexes on columns an older schema lacks.
INDEXES = ["CREATE INDEX IF NOT EXISTS matches_by_record_seq ON matches (record_seq)"]


# The pairs' meetings, read from the stored matches (a store transaction's session as `db`).


def pair_counts(db: Any) -> dict[tuple[str, str, str], int]:
    """How often each pair of bots has met in the stored matches, by (variant, bot, bot) with the
    names sorted."""
    rows = db.execute(
        "SELECT m.variant, a.bot, b.bot, COUNT(*) FROM match_seats a "
        "JOIN match_seats b ON a.match_id = b.match_id AND a.seat < b.seat "
        "JOIN matches m ON m.match_id = a.match_id GROUP BY m.variant, a.bot, b.bot"
    ).fetchall()
    counts: dict[tuple[str, str, str], int] = {}
    for variant, one, other, count in rows:  # sorted here: the databases' collations differ
        low, high = sorted((one, other))
        counts[(variant, low, high)] = counts.get((variant, low, high), 0) + int(count)
    return counts


def fill_pair_meetings(db: Any) -> None:
    """`pair_meetings` from the matches already stored (migration to schema 3)."""
    db.execute("DELETE FROM pair_meetings")
    for (variant, one, other), count in pair_counts(db).items():
        db.execute(
            "INSERT INTO pair_meetings (variant, one, other, meetings) VALUES (?, ?, ?, ?)",
            (variant, one, other, count),
        )
