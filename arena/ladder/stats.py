"""The ladder's standings, from its SQLite file.

Ratings are `arena.ratings`' (OpenSkill, updated deal by deal), computed here from the recorded
deals in the plan's order (deal set, table, arrangement, deal), never in the order matches
happened to finish: the standings are then a function of the recorded results alone, the same
to the last bit however the ladder ran (one referee or several, persistent bots, Ray, resumed
after a kill). The `ratings` table keeps the ratings as they were after each match was recorded
(the report's plot over time); the standings do not read it. The standings also give each
bot's mean game points per deal with a 95% confidence interval (Student's t), a crosstable of
mean point differences per deal between each two bots at the same table, and fault counts by
kind, and what each bot said of itself in its Hellos (name and version). How the bots ran
(per-match or persistent processes, in-process, remote) is not a result and not in the
standings: `process_modes` reads it for the report and the standings' text.
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
from ..replay.summary import DealRow
from .decide import Decide, PairVerdict, Scorer, game_points, verdicts
from .store import has_table

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
    # Each pair the ladder must decide (adjacent ranks, unless it decides one pair): separated?
    pairs: list[PairVerdict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for bot in data["bots"]:
            bot["ci95"] = None if math.isinf(bot["ci95"]) else bot["ci95"]
        data["crosstable"] = {
            a: {b: {"diff_per_deal": diff, "deals": n} for b, (diff, n) in row.items()}
            for a, row in self.crosstable.items()
        }
        return data


def arrangements_per_table(seating: str, seats: int) -> int:
    return math.factorial(seats) if seating == "permutations" else seats


def plan_points(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """Each bot's game points in every deal it played, in the plan's order, not the order
    matches happened to finish in: the intervals' floating sums then come out the same to the
    last bit however the ladder ran."""
    points: dict[str, list[int]] = defaultdict(list)
    for row in conn.execute(
        "SELECT d.bot, d.points FROM deals d JOIN matches m ON m.seq = d.match_seq "
        "WHERE d.annulled = 0 AND d.active = 1 ORDER BY m.deal_set, m.table_no, m.arrangement, d.deal, d.seat"
    ):
        points[row[0]].append(row[1])
    return points


def pair_verdicts(
    conn: sqlite3.Connection,
    decide: Decide | None = None,
    score: Scorer = game_points,
    points: dict[str, list[int]] | None = None,
) -> list[PairVerdict]:
    """The verdict on each pair to decide (the standings' `pairs`, without the rest: what an
    adaptive ladder asks after every deal set). A ranking's pairs are adjacent by points per
    deal, the measure the paired test is on (the ratings' order can differ from it: OpenSkill
    ranks the seats of each deal, luck of the cards and all)."""
    identity = json.loads(conn.execute("SELECT identity FROM ladder WHERE id = 1").fetchone()[0])
    names = [row[0] for row in conn.execute("SELECT name FROM bots ORDER BY position")]
    points = plan_points(conn) if points is None else points
    ranking = sorted(names, key=lambda name: (-mean_ci(points.get(name, [])).mean, name))
    seats = conn.execute("SELECT json_array_length(seats) FROM matches LIMIT 1").fetchone()
    per_table = arrangements_per_table(identity["seating"], seats[0]) if seats else 1
    return verdicts(conn, ranking, per_table, decide, score)


def standings(
    conn: sqlite3.Connection, decide: Decide | None = None, score: Scorer = game_points
) -> Standings:
    """The standings of a ladder's database; each pair to decide (`decide`, by default the
    adjacent ranks at `Decide()`'s confidence) marked separated or not, on `score`s."""
    ladder = conn.execute("SELECT name, identity, planned FROM ladder WHERE id = 1").fetchone()
    identity = json.loads(ladder["identity"])
    bots = [
        (row["name"], bool(row["remote"]))
        for row in conn.execute("SELECT name, remote FROM bots ORDER BY position")
    ]
    points = plan_points(conn)
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
    ratings = plan_order_ratings(conn, [name for name, _ in bots])
    hellos = reported_hellos(conn)
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
        pairs=pair_verdicts(conn, decide, score, points),
    )


# The plan's order of the recorded matches: the key breaks the tie of `ladder ab`'s twin matches.
PLAN_ORDER = "ORDER BY m.deal_set, m.table_no, m.arrangement, m.key"


def plan_order_ratings(conn: sqlite3.Connection, bots: list[str]) -> dict[str, tuple[float, float]]:
    """Every bot's (μ, σ) after OpenSkill's updates from every recorded deal, applied in the plan's
    order (a forfeit, as in `Ratings.update`, after its match's deals)."""
    ratings = Ratings(bots)
    matches = conn.execute(f"SELECT m.seq, m.seats, m.forfeited FROM matches m {PLAN_ORDER}").fetchall()
    rows: dict[int, dict[int, DealRow]] = defaultdict(dict)
    for seq, deal, points, annulled, active in conn.execute(
        "SELECT match_seq, deal, points, annulled, active FROM deals ORDER BY match_seq, deal, seat"
    ):
        row = rows[seq].get(deal)
        if row is None:
            row = rows[seq][deal] = DealRow(deal, [], [], bool(annulled), [])
        row.points.append(points)
        row.active.append(bool(active))
    for seq, seats, forfeited in matches:
        names = json.loads(seats)
        for name in names:
            if name not in ratings.ratings:  # a bot no longer in the file: rated from the default
                ratings.ratings[name] = ratings.model.rating(name=name)
        deals = [rows[seq][deal] for deal in sorted(rows.get(seq, {}))]
        ratings.update(names, deals, forfeited)
    return ratings.of(ratings.ratings)


def process_modes(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Each bot's matches by how it ran in them (per-match, persistent, in-process, remote): run
    metadata, not a result (none in a ladder file from before it was recorded)."""
    modes: dict[str, dict[str, int]] = defaultdict(dict)
    if has_table(conn, "processes"):
        for bot, mode, count in conn.execute("SELECT bot, mode, COUNT(*) FROM processes GROUP BY bot, mode"):
            modes[bot][mode] = count
    return dict(modes)


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
