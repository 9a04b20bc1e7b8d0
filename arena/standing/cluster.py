"""Several `arena serve` processes on one PostgreSQL store: one standing arena.

Everything the servers share lives in the database, and PostgreSQL itself coordinates them;
no server is special and there is no coordinator process:

- ``arena_servers``: each server's address, state and heartbeat (the database's clock). A server
  whose heartbeat is older than ``server_dead_after_s`` is taken for dead by the next server
  that looks (`Cluster.reap`, under an advisory lock): its running matches are recorded as
  aborted with the reason, never rated, and its lobby places are deleted. Silence is counted only
  over time the database was reachable: from the database's start at the earliest (a restart
  silences every server), and, for the server that looks, from when it last regained the
  database (its own outage or freeze explains the others' silence as well as theirs would).
- A server taken for dead writes nothing more: every write of a server to the shared rows
  (matches, places, its own row) first locks its own ``arena_servers`` row as live
  (`Cluster.guard_live`, ``FOR SHARE``: it waits for a reaper that is burying it, then sees
  ``gone``) or is conditioned on its state, so its late results, places and stop change nothing;
  its state stays ``gone``.
- ``lobby_places``: one row per place a lobby stream holds (a stream granted N matches at once
  holds N). A place is free (``match_id`` NULL) or booked for one match. Booking a place is an
  UPDATE of that row inside the transaction that inserts the match, so a place is never booked
  twice and a bot never holds more places than ``max_matches_per_bot`` (counted under a lock on
  its ``bots`` row when it joins).
- Tables are formed in rounds (`Cluster.book_round`). Every server runs one per tick, under the
  transaction-scoped advisory lock ``ROUND_LOCK`` (taken with ``pg_try_advisory_xact_lock``: a
  server that finds it taken skips its round), over the free places of every serving server,
  read with ``SELECT … FOR UPDATE SKIP LOCKED`` (a place being released or left is skipped, not
  waited for). Tables are formed from that one pool with the single server's rules
  (`matchmaking.form_tables`), so pools are never split by server, and the server whose round
  formed a table hosts it. A busy server's rounds come later (its loop is slower to get to them),
  so the others book more: the load spreads by itself.
- The host runs the match. A seat whose stream is on another server gets its ``Seated`` from
  that server, with ``Seated.address`` naming the host: the host writes the seat token on the
  place row once the match exists (`publish`) and wakes the stream's server with ``NOTIFY``
  (``LISTEN arena_seated``; each server also polls every tick, in case a notification is lost),
  which delivers it and clears the token (`deliveries`).

All methods block: they run on worker threads, like every store call.
"""

from __future__ import annotations

import random
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .matchmaking import Candidate, form_tables, pair_key
from .store import Pause, Store, StoreError, _Session, now_ms

DB_NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
"""Now in Unix ms by the database's clock: heartbeats never depend on the servers' clocks."""
DB_STARTED = "CAST(EXTRACT(EPOCH FROM pg_postmaster_start_time()) * 1000 AS BIGINT)"
"""When the database server started, in the same clock: no server could beat before."""
ROUND_LOCK = 7_470_002
REAP_LOCK = 7_470_003
CHANNEL = "arena_seated"
LIVE = "('serving', 'draining')"


class TakenForDeadError(StoreError):
    """This server's heartbeat came too late: the others recorded its matches as aborted."""


@dataclass(frozen=True)
class Place:
    place_id: str
    server_id: str
    stream: int
    bot: str
    variants: tuple[str, ...]
    waiting_since_ms: int
    address: str  # its server's


@dataclass
class BookedTable:
    """A table this server hosts, booked in the store; `places` by seat."""

    match_id: str
    variant: str
    seed: int
    deals: int
    places: list[Place]
    tokens: list[str]

    @property
    def bots(self) -> list[str]:
        return [p.bot for p in self.places]


@dataclass(frozen=True)
class Delivery:
    """A `Seated` for one of this server's lobby streams."""

    stream: int
    match_id: str
    seat: int
    seat_token: str
    address: str
    variant: str
    seat_names: list[str]


class Cluster:
    """This server's part in an arena of several servers sharing `store` (PostgreSQL)."""

    def __init__(
        self,
        store: Store,
        address: str,
        *,
        dead_after_s: float,
        max_matches_per_bot: int,
        server_id: str | None = None,
    ) -> None:
        if not store.postgres:
            raise StoreError("several servers need a PostgreSQL store (--store postgresql://…)")
        self.store = store  # until `register` opens the cluster's own connection
        self.address = address
        self.server_id = server_id or secrets.token_hex(6)
        self.dead_after_ms = int(dead_after_s * 1000)
        self.max_matches_per_bot = max_matches_per_bot
        # The database's time of this server's last heartbeat, and since when it has reached the
        # database without a gap (0: since before it started); None: its last heartbeat failed.
        self._last_beat_ms: int | None = None
        self._reachable_since_ms: int | None = None

    # ------------------------------------------------------------------ servers

    def register(self) -> None:
        shared = self.store  # the server's store, for the results
        # A connection of its own: rounds, seats and heartbeats never wait for a result's transaction.
        self.store = Store(self.store.url)
        # Neither connection holds a lock for longer than a server may stay silent: a server frozen
        # inside a transaction is then taken for dead like any other silent one.
        self.store.limit_idle_transactions(self.dead_after_ms / 1000)
        shared.limit_idle_transactions(self.dead_after_ms / 1000)
        with self.store.transaction() as db:
            row = db.execute(
                f"INSERT INTO arena_servers (server_id, address, state, started_ms, heartbeat_ms) "
                f"VALUES (?, ?, 'serving', {DB_NOW}, {DB_NOW}) RETURNING heartbeat_ms",
                (self.server_id, self.address),
            ).fetchone()
        # Others' silence before this server started is theirs alone (a database restart aside).
        self._last_beat_ms, self._reachable_since_ms = int(row[0]), 0

    def _taken_for_dead(self) -> TakenForDeadError:
        return TakenForDeadError(
            f"server {self.server_id} was taken for dead (no heartbeat for "
            f"{self.dead_after_ms / 1000:g} s): its matches were recorded as aborted"
        )

    def guard_live(self, db: _Session) -> None:
        """In a transaction about to write shared rows: lock this server's row as live, or raise
        `TakenForDeadError` (writing nothing). A reaper burying it holds the row: this waits for
        it, then sees 'gone'. Lock order, as the reaper's: the server's row before any match's."""
        row = db.execute(
            f"SELECT 1 FROM arena_servers WHERE server_id = ? AND state IN {LIVE} FOR SHARE",
            (self.server_id,),
        ).fetchone()
        if row is None:
            raise self._taken_for_dead()

    def heartbeat(self) -> None:
        """Say this server lives; `TakenForDeadError` if the others already buried it."""
        try:
            with self.store.transaction() as db:
                row = db.execute(
                    f"UPDATE arena_servers SET heartbeat_ms = {DB_NOW} WHERE server_id = ? "
                    f"AND state IN {LIVE} RETURNING heartbeat_ms",
                    (self.server_id,),
                ).fetchone()
        except TakenForDeadError:
            raise
        except Exception:
            self._last_beat_ms = None  # it could not reach the database: a gap starts
            raise
        if row is None:
            raise self._taken_for_dead()
        now = int(row[0])
        # A failed beat, or beats far apart (this server frozen, or the database unreachable
        # between two beats): the others' heartbeats are counted only from now.
        if self._last_beat_ms is None or now - self._last_beat_ms > self.dead_after_ms // 2:
            self._reachable_since_ms = now
        self._last_beat_ms = now

    def set_state(self, state: str) -> None:
        """draining (no new tables, its places leave the pool) or stopped (gone for good).
        A server taken for dead keeps its state, 'gone', and changes nothing."""
        with self.store.transaction() as db:
            updated = db.execute(
                f"UPDATE arena_servers SET state = ? WHERE server_id = ? AND state IN {LIVE}",
                (state, self.server_id),
            )
            if updated.rowcount == 1 and state == "stopped":
                db.execute(
                    "DELETE FROM lobby_places WHERE server_id = ? AND match_id IS NULL", (self.server_id,)
                )
                db.execute("UPDATE lobby_places SET leaving = 1 WHERE server_id = ?", (self.server_id,))

    def reap(self) -> list[tuple[str, str]]:
        """Record as aborted the running matches of servers that are not alive; (match, reason)."""
        aborted: list[tuple[str, str]] = []
        if self._reachable_since_ms is None:
            return aborted  # its own last heartbeat failed: it knows nothing of the others
        with self.store.transaction() as db:
            if not db.execute("SELECT pg_try_advisory_xact_lock(?)", (REAP_LOCK,)).fetchone()[0]:
                return aborted  # another server is at it
            self.guard_live(db)
            # Silence counts from the database's start, and from when this server last regained
            # the database: an outage of either explains the others' silence.
            dead = db.execute(
                f"UPDATE arena_servers SET state = 'gone' WHERE state IN {LIVE} AND server_id <> ? "
                f"AND GREATEST(heartbeat_ms, {DB_STARTED}, ?) < {DB_NOW} - ? RETURNING server_id",
                (self.server_id, self._reachable_since_ms, self.dead_after_ms),
            ).fetchall()
            reasons = {
                row[0]: f"its server {row[0]} stopped sending heartbeats (none for "
                f"{self.dead_after_ms / 1000:g} s)"
                for row in dead
            }
            rows = db.execute(
                f"SELECT match_id, server_id FROM matches WHERE state = 'running' AND server_id NOT IN "
                f"(SELECT server_id FROM arena_servers WHERE state IN {LIVE}) FOR UPDATE"
            ).fetchall()
            at = now_ms()
            for match_id, server_id in rows:
                reason = reasons.get(server_id) or (
                    f"its server {server_id} stopped" if server_id else "its server stopped"
                )
                db.execute(
                    "UPDATE matches SET state = 'aborted', termination = 'aborted', finished_ms = ?, "
                    "abort_reason = ? WHERE match_id = ?",
                    (at, reason, match_id),
                )
                aborted.append((match_id, reason))
            # The places of a server that is gone: its streams are gone with it. A place booked for
            # a match still running elsewhere stays the bot's until that match ends.
            not_live = f"server_id NOT IN (SELECT server_id FROM arena_servers WHERE state IN {LIVE})"
            db.execute(f"DELETE FROM lobby_places WHERE {not_live} AND match_id IS NULL")
            db.execute(f"UPDATE lobby_places SET leaving = 1 WHERE {not_live} AND leaving = 0")
            if aborted:
                release_places(db, [m for m, _ in aborted])
        return aborted

    # ------------------------------------------------------------------ lobby places

    def claim_places(self, bot: str, stream: int, variants: Sequence[str], asked: int) -> int:
        """Places for a new lobby stream, as many of `asked` as the bot's limit leaves (0: none)."""
        with self.store.transaction() as db:
            self.guard_live(db)
            # One join of a bot at a time; NO KEY: the rounds' inserts referencing the bot go on.
            db.execute("SELECT name FROM bots WHERE name = ? FOR NO KEY UPDATE", (bot,))
            held = int(db.execute("SELECT COUNT(*) FROM lobby_places WHERE bot = ?", (bot,)).fetchone()[0])
            granted = min(asked, self.max_matches_per_bot - held)
            for slot in range(max(0, granted)):
                db.execute(
                    "INSERT INTO lobby_places (place_id, server_id, stream, bot, variants, "
                    f"waiting_since_ms) VALUES (?, ?, ?, ?, ?, {DB_NOW})",
                    (f"{self.server_id}:{stream}:{slot}", self.server_id, stream, bot, ",".join(variants)),
                )
        return max(0, granted)

    def leave(self, stream: int) -> None:
        """The stream ended: its free places go, its booked ones go when their match ends."""
        with self.store.transaction() as db:
            db.execute(
                "DELETE FROM lobby_places WHERE server_id = ? AND stream = ? AND match_id IS NULL",
                (self.server_id, stream),
            )
            db.execute(
                "UPDATE lobby_places SET leaving = 1 WHERE server_id = ? AND stream = ?",
                (self.server_id, stream),
            )

    def release(self, match_id: str, seats: Sequence[int] | None = None, ended_ms: int = 0) -> None:
        """The match no longer holds these seats' places (None: all of them); `ended_ms`: it ended
        then (kept even if its result is never recorded: its bots were free from then on).
        Only a match this live server hosts and the store still has running: a match the others
        aborted (this server taken for dead) keeps what they wrote."""
        with self.store.transaction() as db:
            self.guard_live(db)
            ours = db.execute(
                "SELECT 1 FROM matches WHERE match_id = ? AND server_id = ? AND state = 'running' FOR UPDATE",
                (match_id, self.server_id),
            ).fetchone()
            if ours is None:
                return
            if ended_ms:
                db.execute("UPDATE matches SET ended_ms = ? WHERE match_id = ?", (ended_ms, match_id))
            release_places(db, [match_id], seats)

    # ------------------------------------------------------------------ tables

    def book_round(
        self,
        seats_by_variant: Mapping[str, int],
        order: Sequence[str],
        deals: Callable[[str], int],
        rng_bits: Callable[[], int],
    ) -> list[BookedTable]:
        """One matchmaking round over every server's free places; the tables booked for this host."""
        booked: list[BookedTable] = []
        with self.store.transaction() as db:
            if not db.execute("SELECT pg_try_advisory_xact_lock(?)", (ROUND_LOCK,)).fetchone()[0]:
                return booked  # another server's round is on: this one would see the same pool
            self.guard_live(db)
            rows = db.execute(
                f"SELECT p.place_id, p.server_id, p.stream, p.bot, p.variants, p.waiting_since_ms, s.address "
                f"FROM lobby_places p JOIN arena_servers s ON s.server_id = p.server_id "
                f"JOIN bots b ON b.name = p.bot "
                f"WHERE p.match_id IS NULL AND p.leaving = 0 AND s.state = 'serving' "
                # a hosted bot's places (negative stream ids, `hosted`) only for its own server
                f"AND (p.stream >= 0 OR p.server_id = ?) "
                f"AND s.heartbeat_ms >= {DB_NOW} - ? AND b.revoked_ms IS NULL AND b.paused_until_ms <= ? "
                f"FOR UPDATE OF p SKIP LOCKED",
                (self.server_id, self.dead_after_ms, now_ms()),
            ).fetchall()
            places = {
                row[0]: Place(
                    row[0],
                    row[1],
                    int(row[2]),
                    row[3],
                    tuple(v for v in row[4].split(",") if v),
                    int(row[5]),
                    row[6],
                )
                for row in rows
            }
            if len({p.bot for p in places.values()}) < min(seats_by_variant.values(), default=2):
                return booked
            bots = sorted({p.bot for p in places.values()})
            mu = {
                (row[1], row[0]): float(row[2])
                for row in db.execute(
                    "SELECT bot, variant, mu FROM ratings WHERE bot = ANY(?)", (bots,)
                ).fetchall()
            }
            meetings: dict[str, dict[tuple[str, str], int]] = {}
            for variant, one, other, count in db.execute(
                "SELECT variant, one, other, meetings FROM pair_meetings "
                "WHERE one = ANY(?) AND other = ANY(?)",
                (bots, bots),
            ).fetchall():
                meetings.setdefault(variant, {})[(one, other)] = int(count)
            used: set[str] = set()
            pool = list(places.values())  # form_tables knows a place by its index here
            for variant in order:
                candidates = [
                    Candidate(p.bot, index, mu.get((variant, p.bot), 25.0), p.waiting_since_ms)
                    for index, p in enumerate(pool)
                    if p.place_id not in used and (not p.variants or variant in p.variants)
                ]
                for table in form_tables(candidates, seats_by_variant[variant], meetings.get(variant, {})):
                    seated = [pool[c.stream] for c in table]
                    used.update(p.place_id for p in seated)  # formed: not offered to another variant
                    if not self.address and any(p.server_id != self.server_id for p in seated):
                        continue  # other servers' bots could not be sent here
                    booked.append(self._book(db, variant, seated, deals(variant), rng_bits()))
        return booked

    def _book(self, db: _Session, variant: str, places: list[Place], deals: int, seed: int) -> BookedTable:
        places = list(places)
        random.Random(seed).shuffle(places)  # seats in a random order, as on a single server
        table = BookedTable(
            match_id=secrets.token_hex(8),
            variant=variant,
            seed=seed,
            deals=deals,
            places=places,
            tokens=[secrets.token_urlsafe(24) for _ in places],
        )
        db.execute(
            "INSERT INTO matches (match_id, variant, seed, deals, state, started_ms, server_id) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?)",
            (table.match_id, variant, seed, deals, now_ms(), self.server_id),
        )
        for seat, place in enumerate(places):
            db.execute(
                "INSERT INTO match_seats (match_id, seat, bot) VALUES (?, ?, ?)",
                (table.match_id, seat, place.bot),
            )
            db.execute(
                "UPDATE lobby_places SET match_id = ?, seat = ?, host_address = ? WHERE place_id = ?",
                (table.match_id, seat, self.address, place.place_id),
            )
        for i, one in enumerate(places):
            for other in places[i + 1 :]:
                low, high = pair_key(one.bot, other.bot)
                db.execute(
                    "INSERT INTO pair_meetings (variant, one, other, meetings) VALUES (?, ?, ?, 1) "
                    "ON CONFLICT (variant, one, other) DO UPDATE SET meetings = pair_meetings.meetings + 1",
                    (variant, low, high),
                )
        return table

    def publish(self, tables: Sequence[BookedTable]) -> None:
        """The matches run here now: hand the seat tokens of other servers' places to those servers."""
        servers: set[str] = set()
        with self.store.transaction() as db:
            self.guard_live(db)
            for table in tables:
                for place, token in zip(table.places, table.tokens, strict=True):
                    if place.server_id != self.server_id:
                        db.execute(
                            "UPDATE lobby_places SET seat_token = ? WHERE place_id = ? AND match_id = ?",
                            (token, place.place_id, table.match_id),
                        )
                        servers.add(place.server_id)
            for server in sorted(servers):
                db.execute("SELECT pg_notify(?, ?)", (CHANNEL, server))

    def deliveries(self) -> list[Delivery]:
        """The Seated messages waiting for this server's streams; their tokens leave the store."""
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT p.place_id, p.stream, p.match_id, p.seat, p.seat_token, p.host_address, m.variant "
                "FROM lobby_places p JOIN matches m ON m.match_id = p.match_id "
                "WHERE p.server_id = ? AND p.seat_token IS NOT NULL FOR UPDATE OF p",
                (self.server_id,),
            ).fetchall()
            if not rows:
                return []
            match_ids = sorted({row[2] for row in rows})
            names: dict[str, list[str]] = {}
            for match_id, bot in db.execute(
                "SELECT match_id, bot FROM match_seats WHERE match_id = ANY(?) ORDER BY match_id, seat",
                (match_ids,),
            ).fetchall():
                names.setdefault(match_id, []).append(bot)
            db.execute(
                "UPDATE lobby_places SET seat_token = NULL WHERE place_id = ANY(?)",
                ([row[0] for row in rows],),
            )
        return [
            Delivery(int(row[1]), row[2], int(row[3]), row[4], row[5], row[6], names.get(row[2], []))
            for row in rows
        ]

    def paused_bots(self) -> list[Pause]:
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT name, pause_reason, paused_until_ms FROM bots WHERE paused_until_ms > ?", (now_ms(),)
            ).fetchall()
        return [Pause(row[0], row[1], int(row[2])) for row in rows]

    # ------------------------------------------------------------------ notifications

    def close(self) -> None:
        self.store.close()

    def listen(self, wake: Callable[[], None], stop: threading.Event) -> None:
        """Call `wake()` whenever another server hands this one a seat, until `stop` is set."""
        import psycopg

        with psycopg.connect(self.store.url, autocommit=True) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            while not stop.is_set():
                for notice in conn.notifies(timeout=0.5):
                    if notice.payload == self.server_id:
                        wake()


def release_places(db: _Session, match_ids: Sequence[str], seats: Sequence[int] | None = None) -> None:
    """Free the places those matches booked (only `seats`' when given); a left stream's go."""
    where = "match_id = ANY(?)" + (" AND seat = ANY(?)" if seats is not None else "")
    params: tuple[Any, ...] = (list(match_ids), list(seats)) if seats is not None else (list(match_ids),)
    db.execute(f"DELETE FROM lobby_places WHERE leaving = 1 AND {where}", params)
    db.execute(
        f"UPDATE lobby_places SET match_id = NULL, seat = NULL, host_address = NULL, seat_token = NULL, "
        f"waiting_since_ms = {DB_NOW} WHERE {where}",
        params,
    )
