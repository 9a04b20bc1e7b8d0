"""The standings table as the store keeps it: ratings, totals, recent matches, latest Hello.

Read inside one store transaction (`Store.standings`), in the SQL both databases understand.
"""

from __future__ import annotations

from typing import Any

from .records import RecentMatch, Standing, now_ms


def read_standings(db: Any, variant: str = "", recent: int = 5) -> list[Standing]:
    """Every rated bot, by variant, best conservative rating first (`db`: a store transaction)."""
    query = (
        "SELECT r.bot, r.variant, r.mu, r.sigma, r.matches, r.deals, r.score, r.decisions, r.faults, "
        "b.revoked_ms, b.paused_until_ms, r.adjusted_score, r.adjusted_deals "
        "FROM ratings r JOIN bots b ON b.name = r.bot"
    )
    rows = (
        db.execute(query + " WHERE r.variant = ?", (variant,)) if variant else db.execute(query)
    ).fetchall()
    at = now_ms()
    table = [
        Standing(
            bot=row[0],
            variant=row[1],
            mu=float(row[2]),
            sigma=float(row[3]),
            matches=int(row[4]),
            deals=int(row[5]),
            score=int(row[6]),
            decisions=int(row[7]),
            faults=int(row[8]),
            state="revoked" if row[9] is not None else ("paused" if row[10] > at else "active"),
            adjusted_score=float(row[11]),
            adjusted_deals=int(row[12]),
        )
        for row in rows
    ]
    for standing in table:
        standing.recent = _recent(db, standing.bot, standing.variant, recent)
        standing.hello_name, standing.hello_version = _hello(db, standing.bot)
        standing.hosted_version = _hosted(db, standing.bot)
    table.sort(key=lambda s: (s.variant, -s.rating, s.bot))
    return table


def _hello(db: Any, bot: str) -> tuple[str | None, str | None]:
    """The name and version of the bot's latest recorded Hello, in any variant."""
    row = db.execute(
        "SELECT s.hello_name, s.hello_version FROM match_seats s "
        "JOIN matches m ON m.match_id = s.match_id "
        "WHERE s.bot = ? AND s.hello_name IS NOT NULL AND m.state <> 'running' "
        "ORDER BY m.finished_ms DESC, m.match_id DESC LIMIT 1",
        (bot,),
    ).fetchone()
    return (row[0], row[1]) if row is not None else (None, None)


def _hosted(db: Any, bot: str) -> int | None:
    """The submitted version that played the bot's latest recorded match, if the arena hosted it."""
    row = db.execute(
        "SELECT h.version FROM match_seats s JOIN matches m ON m.match_id = s.match_id "
        "LEFT JOIN hosted_seats h ON h.match_id = s.match_id AND h.seat = s.seat "
        "WHERE s.bot = ? AND m.state = 'finished' ORDER BY m.finished_ms DESC, m.match_id DESC LIMIT 1",
        (bot,),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _recent(db: Any, bot: str, variant: str, limit: int) -> list[RecentMatch]:
    if limit <= 0:
        return []
    rows = db.execute(
        "SELECT m.match_id, m.finished_ms, s.seat, m.termination, m.replay FROM match_seats s "
        "JOIN matches m ON m.match_id = s.match_id "
        "WHERE s.bot = ? AND m.variant = ? AND m.state <> 'running' "
        "ORDER BY m.finished_ms DESC, m.match_id DESC LIMIT ?",
        (bot, variant, limit),
    ).fetchall()
    recent = []
    for match_id, finished_ms, seat, termination, replay in rows:
        seats = db.execute(
            "SELECT bot, score, adjusted_score FROM match_seats WHERE match_id = ? ORDER BY seat",
            (match_id,),
        ).fetchall()
        recent.append(
            RecentMatch(
                match_id=match_id,
                finished_ms=int(finished_ms or 0),
                seat=int(seat),
                seats=[s[0] for s in seats],
                scores=[int(s[1]) for s in seats],
                adjusted_scores=[None if s[2] is None else float(s[2]) for s in seats],
                termination=termination,
                replay=replay,
            )
        )
    return recent
