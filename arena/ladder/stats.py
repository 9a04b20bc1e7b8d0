"""Ratings and standings.

Ratings are OpenSkill's Plackett–Luce model (Weng–Lin), updated once per played deal from the
seats' game points in that deal; a seat that forfeits a match is then ranked last of its table
once more. Annulled deals (a Danish redeal) and a seat sitting out (german-1754 with four
seats) count for nothing. The standings also give each bot's mean game points per deal with a
95% confidence interval (Student's t), a crosstable of mean point differences per deal between
each two bots at the same table, and fault counts by kind.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from .store import DealRow, latest_ratings

FAULT_KINDS = ("illegal", "timeout", "crash", "disconnect", "protocol")

# Two-sided 95% quantiles of Student's t for 1…30 degrees of freedom.
T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
Z95 = 1.959964


def t95(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= len(T95):
        return T95[df - 1]
    z = Z95  # Cornish–Fisher expansion: within 1e-4 of the exact value above 30
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class MeanCI:
    n: int
    mean: float
    half_width: float  # the 95% interval is mean ± half_width (inf below two values)
    sd: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def mean_ci(values: Sequence[float]) -> MeanCI:
    n = len(values)
    if n == 0:
        return MeanCI(0, 0.0, math.inf, 0.0)
    mean = sum(values) / n
    if n == 1:
        return MeanCI(1, mean, math.inf, 0.0)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return MeanCI(n, mean, t95(n - 1) * sd / math.sqrt(n), sd)


class Ratings:
    """Every bot's OpenSkill rating, updated deal by deal."""

    def __init__(self, bots: Iterable[str], start: dict[str, tuple[float, float]] | None = None) -> None:
        self.model = PlackettLuce()
        start = start or {}
        self.ratings: dict[str, PlackettLuceRating] = {}
        for name in bots:
            mu, sigma = start.get(name, (None, None))
            self.ratings[name] = self.model.rating(mu=mu, sigma=sigma, name=name)

    def update(self, seats: Sequence[str], deals: Iterable[DealRow], forfeited: int | None) -> None:
        for deal in deals:
            playing = [s for s in range(len(seats)) if deal.active[s]]
            if deal.annulled or len(playing) < 2:
                continue
            self._rate([seats[s] for s in playing], scores=[float(deal.points[s]) for s in playing])
        if forfeited is not None:
            self._rate(list(seats), ranks=[2.0 if s == forfeited else 1.0 for s in range(len(seats))])

    def _rate(
        self, bots: list[str], *, scores: list[float] | None = None, ranks: list[float] | None = None
    ) -> None:
        teams = [[self.ratings[bot]] for bot in bots]
        rated = self.model.rate(teams, scores=scores, ranks=ranks)
        for bot, [rating] in zip(bots, rated, strict=True):
            self.ratings[bot] = rating

    def of(self, bots: Iterable[str]) -> dict[str, tuple[float, float]]:
        return {bot: (self.ratings[bot].mu, self.ratings[bot].sigma) for bot in bots}

    def leader(self) -> tuple[str, float] | None:
        """The bot with the highest conservative rating (μ − 3σ), and that rating."""
        if not self.ratings:
            return None
        name, rating = max(self.ratings.items(), key=lambda item: item[1].ordinal())
        return name, rating.ordinal()


# --------------------------------------------------------------------------- standings


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
    for row in conn.execute(
        "SELECT bot, points FROM deals WHERE annulled = 0 AND active = 1 ORDER BY match_seq, deal, seat"
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
