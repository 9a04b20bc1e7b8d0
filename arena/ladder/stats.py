"""The ladder's standings, from its SQLite file.

Ratings are `arena.ratings`' (OpenSkill, updated deal by deal). The standings also give each
bot's mean game points per deal with a 95% confidence interval (Student's t), a crosstable of
mean point differences per deal between each two bots at the same table, and fault counts by
kind, and what each bot said of itself in its Hellos (name and version).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from ..ratings import Ratings, mean_ci
from ..replay.log import FAULT_KINDS
from .store import has_table, latest_ratings

# --------------------------------------------------------------------------- standings


@dataclass
class ReportedHello:
    """What a bot's processes said in Hello over the ladder."""

    name: str  # bot_name of the latest Hello recorded
    version: str  # bot_version of the latest Hello recorded
    versions: list[str]  # every bot_version it reported, in the order first seen

    @property
    def changed(self) -> bool:
        return len(self.versions) > 1


@dataclass
class BotStanding:
    rank: int
    name: str
    remote: bool
    mu: float
    sigma: float
    rating: float  # μ − 3σ, the order of the table
    matches: int
    deals: int
    points_per_deal: float
    ci95: float  # half-width of the 95% interval of points_per_deal
    faults: dict[str, int] = field(default_factory=dict)
    crashes: int = 0  # matches in which the bot's process ended before the match did
    forfeits: int = 0
    hello: ReportedHello | None = None  # None: no Hello recorded (or a ladder file from before)
    # matches by how the bot ran in them: per-match, persistent, remote (none: an older file)
    processes: dict[str, int] = field(default_factory=dict)


@dataclass
class Standings:
    name: str
    variant: str
    options: dict[str, str]
    matches_done: int
    matches_planned: int
    deals: int
    bots: list[BotStanding]
    # crosstable[a][b]: (mean of a's points minus b's per deal at the same table, deals)
    crosstable: dict[str, dict[str, tuple[float, int]]]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for bot in data["bots"]:
            bot["ci95"] = None if math.isinf(bot["ci95"]) else bot["ci95"]
        data["crosstable"] = {
            a: {b: {"diff_per_deal": diff, "deals": n} for b, (diff, n) in row.items()}
            for a, row in self.crosstable.items()
        }
        return data


def standings(conn: sqlite3.Connection) -> Standings:
    ladder = conn.execute("SELECT name, identity, planned FROM ladder WHERE id = 1").fetchone()
    identity = json.loads(ladder["identity"])
    bots = [
        (row["name"], bool(row["remote"]))
        for row in conn.execute("SELECT name, remote FROM bots ORDER BY position")
    ]
    points: dict[str, list[int]] = defaultdict(list)
    # In the plan's order, not the order matches happened to finish in: the intervals' floating
    # sums then come out the same to the last bit however the ladder ran.
    for row in conn.execute(
        "SELECT d.bot, d.points FROM deals d JOIN matches m ON m.seq = d.match_seq "
        "WHERE d.annulled = 0 AND d.active = 1 ORDER BY m.deal_set, m.table_no, m.arrangement, d.deal, d.seat"
    ):
        points[row[0]].append(row[1])
    matches = dict(conn.execute("SELECT bot, COUNT(DISTINCT match_seq) FROM deals GROUP BY bot").fetchall())
    faults: dict[str, dict[str, int]] = defaultdict(dict)
    for bot, kind, count in conn.execute("SELECT bot, kind, COUNT(*) FROM faults GROUP BY bot, kind"):
        faults[bot][kind] = count
    crashes = dict(conn.execute("SELECT bot, SUM(crashed) FROM exits GROUP BY bot").fetchall())
    forfeits = dict(
        conn.execute(
            "SELECT json_extract(seats, '$[' || forfeited || ']'), COUNT(*) FROM matches "
            "WHERE forfeited IS NOT NULL GROUP BY 1"
        ).fetchall()
    )
    ratings = latest_ratings(conn)
    hellos = reported_hellos(conn)
    modes: dict[str, dict[str, int]] = defaultdict(dict)
    if has_table(conn, "processes"):
        for bot, mode, count in conn.execute("SELECT bot, mode, COUNT(*) FROM processes GROUP BY bot, mode"):
            modes[bot][mode] = count
    default = Ratings([]).model
    rows = []
    for name, remote in bots:
        mu, sigma = ratings.get(name, (default.mu, default.sigma))
        ci = mean_ci(points[name])
        rows.append(
            BotStanding(
                rank=0,
                name=name,
                remote=remote,
                mu=mu,
                sigma=sigma,
                rating=mu - 3 * sigma,
                matches=matches.get(name, 0),
                deals=ci.n,
                points_per_deal=ci.mean,
                ci95=ci.half_width,
                faults={kind: faults[name].get(kind, 0) for kind in FAULT_KINDS},
                crashes=int(crashes.get(name) or 0),
                forfeits=int(forfeits.get(name) or 0),
                hello=hellos.get(name),
                processes=dict(modes.get(name, {})),
            )
        )
    rows.sort(key=lambda b: (-b.rating, -b.points_per_deal, b.name))
    for rank, row in enumerate(rows, 1):
        row.rank = rank
    cross: dict[str, dict[str, tuple[float, int]]] = {name: {} for name, _ in bots}
    for a, b, diff, n in conn.execute(
        "SELECT x.bot, y.bot, AVG(x.points - y.points), COUNT(*) FROM deals x JOIN deals y "
        "ON x.match_seq = y.match_seq AND x.deal = y.deal AND x.seat != y.seat "
        "WHERE x.annulled = 0 AND x.active = 1 AND y.active = 1 GROUP BY x.bot, y.bot"
    ):
        cross[a][b] = (diff, n)
    done = conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    deals = conn.execute(
        "SELECT COUNT(DISTINCT match_seq || ':' || deal) FROM deals WHERE annulled = 0"
    ).fetchone()[0]
    return Standings(
        name=ladder["name"],
        variant=identity["variant"],
        options=identity["options"],
        matches_done=done,
        matches_planned=ladder["planned"] or done,
        deals=deals,
        bots=rows,
        crosstable=cross,
    )


def reported_hellos(conn: sqlite3.Connection) -> dict[str, ReportedHello]:
    """Each bot's latest Hello name and version, and every version it reported, by bot."""
    found: dict[str, ReportedHello] = {}
    if not has_table(conn, "hellos"):
        return found
    for bot, name, version in conn.execute("SELECT bot, name, version FROM hellos ORDER BY match_seq, seat"):
        seen = found.get(bot)
        if seen is None:
            found[bot] = ReportedHello(name, version, [version])
            continue
        seen.name, seen.version = name, version
        if version not in seen.versions:
            seen.versions.append(version)
    return found
