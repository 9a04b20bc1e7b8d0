"""What the web shows, read from the standing arena's store and the replays (worker threads).

Every function here runs in a worker thread (the store is thread-safe) and returns JSON data.
Nothing here writes: the site is read-only. No token, nor its hash, ever leaves the store.
The rating history is not stored: it is recomputed, once per finished match, from the replays
in the order the matches finished, with the same rating code as the standing arena
(`arena.ratings`), and kept in memory (`RatingHistory`).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..ratings import Ratings
from ..replay.summary import read_results
from ..replay.table import js_int
from ..standing.luck import adjusted_points
from ..standing.store import Store

MATCH_STATES = ("waiting", "running", "finished", "aborted")
MAX_LIMIT = 200


class NotFound(Exception):
    """An unknown bot or match: a 404 with this text."""


def standings(store: Store, variant: str, connected: set[str]) -> dict[str, Any]:
    """The leaderboard: every rated bot by variant, with when it last played and if it is here now."""
    table = store.standings(variant, recent=0)
    last_seen = _last_seen(store)
    rows = []
    for standing in table:
        row = standing.to_dict()
        del row["recent"]
        row["runs"] = standing.reported_version()  # "hosted, version N" for a bot the arena runs
        row["last_seen_ms"] = last_seen.get(standing.bot)
        row["connected"] = standing.bot in connected
        rows.append(row)
    variants = sorted({s.variant for s in store.standings("", recent=0)})
    return {"variant": variant, "variants": variants, "standings": rows}


def _last_seen(store: Store) -> dict[str, int]:
    with store.transaction() as db:
        rows = db.execute(
            "SELECT s.bot, MAX(COALESCE(m.finished_ms, m.started_ms)) FROM match_seats s "
            "JOIN matches m ON m.match_id = s.match_id GROUP BY s.bot"
        ).fetchall()
    return {row[0]: int(row[1]) for row in rows if row[1] is not None}


def bot_page(store: Store, history: RatingHistory, name: str, connected: bool) -> dict[str, Any]:
    """One bot's public facts, ratings, rating history, recent matches and head-to-head."""
    bot = store.bot(name)  # UnknownBotError: a 404
    rated = [s for s in store.standings("", recent=0) if s.bot == name]
    ratings = [s.to_dict() for s in rated]
    for rating in ratings:
        del rating["recent"]
    hello = next(((r["hello_name"], r["hello_version"]) for r in ratings), (None, None))
    hosted = next((s.hosted_version for s in rated), None)  # as of its latest finished match
    recent = matches(store, bot=name, state="", limit=20)["matches"]
    return {
        "name": bot.name,
        "variants": list(bot.variants),
        "registered_ms": bot.registered_ms,
        "state": bot.state(),
        "connected": connected,
        "language": hello[0],
        "version": hello[1],
        "hosted_version": hosted,
        "runs": rated[0].reported_version() if rated else None,
        "ratings": ratings,
        "history": history.of(name),
        "recent": recent,
        "head_to_head": head_to_head(store, name),
    }


def head_to_head(store: Store, name: str) -> list[dict[str, Any]]:
    """Against each bot met in a finished match: matches, wins, draws, losses (by match score)."""
    with store.transaction() as db:
        rows = db.execute(
            "SELECT o.bot, s.score, o.score FROM match_seats s "
            "JOIN match_seats o ON o.match_id = s.match_id AND o.seat <> s.seat "
            "JOIN matches m ON m.match_id = s.match_id "
            "WHERE s.bot = ? AND m.state = 'finished'",
            (name,),
        ).fetchall()
    table: dict[str, dict[str, Any]] = {}
    for opponent, mine, theirs in rows:
        entry = table.setdefault(
            opponent, {"opponent": opponent, "matches": 0, "wins": 0, "draws": 0, "losses": 0}
        )
        entry["matches"] += 1
        key = "wins" if mine > theirs else "losses" if mine < theirs else "draws"
        entry[key] += 1
    return sorted(table.values(), key=lambda e: (-e["matches"], e["opponent"]))


def matches(store: Store, bot: str, state: str, limit: int, before_ms: int = 0) -> dict[str, Any]:
    """The standing arena's matches (`standing`: true), newest first, optionally of one bot and
    in one state."""
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if bot:
        where.append("m.match_id IN (SELECT match_id FROM match_seats WHERE bot = ?)")
        params.append(bot)
    if state:
        where.append("m.state = ?")
        params.append(state)
    if before_ms:
        where.append("m.started_ms < ?")
        params.append(before_ms)
    with store.transaction() as db:
        rows = db.execute(
            "SELECT m.match_id, m.variant, m.deals, m.state, m.termination, m.started_ms, m.finished_ms, "
            f"m.replay FROM matches m WHERE {' AND '.join(where)} "
            "ORDER BY m.started_ms DESC, m.match_id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        found = [_match_row(db, row) for row in rows]
    return {"matches": found}


def stored(store: Store, match_ids: list[str]) -> set[str]:
    """Which of these matches the store holds (the standing arena's)."""
    found: set[str] = set()
    with store.transaction() as db:
        for at in range(0, len(match_ids), 500):
            chunk = match_ids[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            rows = db.execute(f"SELECT match_id FROM matches WHERE match_id IN ({marks})", chunk).fetchall()
            found.update(row[0] for row in rows)
    return found


def match(store: Store, match_id: str) -> dict[str, Any]:
    with store.transaction() as db:
        row = db.execute(
            "SELECT match_id, variant, deals, state, termination, started_ms, finished_ms, replay "
            "FROM matches WHERE match_id = ?",
            (match_id,),
        ).fetchone()
        if row is None:
            raise NotFound(f"no match {match_id}")
        return _match_row(db, row)


def _match_row(db: Any, row: Any) -> dict[str, Any]:
    match_id, variant, deals, state, termination, started, finished, replay = row
    seats = db.execute(
        "SELECT seat, bot, score, faults FROM match_seats WHERE match_id = ? ORDER BY seat", (match_id,)
    ).fetchall()
    return {
        "match_id": match_id,
        "variant": variant,
        "deals": int(deals),
        "state": state,
        "termination": termination,
        "started_ms": int(started),
        "finished_ms": int(finished) if finished is not None else None,
        "has_replay": bool(replay),
        "standing": True,
        "seats": [{"bot": s[1], "score": js_int(int(s[2])), "faults": int(s[3])} for s in seats],
    }


class RatingHistory:
    """Every bot's rating after each finished match, recomputed from the replays, kept in memory."""

    def __init__(self, store: Store, replay_dir: Path) -> None:
        self.store = store
        self.replay_dir = replay_dir
        self._lock = threading.Lock()
        self._done: set[str] = set()
        self._ratings: dict[str, Ratings] = {}  # by variant
        self._points: dict[str, list[dict[str, Any]]] = {}  # by bot

    def of(self, bot: str) -> list[dict[str, Any]]:
        with self._lock:
            self._catch_up()
            return list(self._points.get(bot, []))

    def _catch_up(self) -> None:
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT match_id, variant, finished_ms, replay FROM matches WHERE state = 'finished' "
                "ORDER BY finished_ms, match_id"
            ).fetchall()
            pending = [r for r in rows if r[0] not in self._done]
            seats = {
                r[0]: [
                    s[0]
                    for s in db.execute(
                        "SELECT bot FROM match_seats WHERE match_id = ? ORDER BY seat", (r[0],)
                    ).fetchall()
                ]
                for r in pending
            }
        for match_id, variant, finished_ms, replay in pending:
            self._done.add(match_id)
            bots = seats[match_id]
            path = self.replay_dir / replay
            try:
                results = read_results(path, len(bots))
                forfeited = _forfeited(path)
                adjusted = adjusted_points(path, results.deals)  # as the arena rated it
            except (OSError, ValueError, KeyError):
                continue  # a replay moved away or damaged: that match is left out of the history
            ratings = self._ratings.setdefault(variant, Ratings([]))
            for name in bots:
                if name not in ratings.ratings:
                    ratings.ratings[name] = ratings.model.rating(name=name)
            ratings.update(bots, results.deals, forfeited, adjusted)
            for name, (mu, sigma) in ratings.of(bots).items():
                self._points.setdefault(name, []).append(
                    {
                        "variant": variant,
                        "match_id": match_id,
                        "at_ms": int(finished_ms),
                        "mu": round(mu, 3),
                        "sigma": round(sigma, 3),
                        "rating": round(mu - 3 * sigma, 3),
                    }
                )


def _forfeited(path: Path) -> int | None:
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if '"match_end"' in text:
                line = json.loads(text)
                if line.get("type") == "match_end":
                    forfeited = line.get("forfeited")
                    return int(forfeited) if forfeited is not None else None
    return None
