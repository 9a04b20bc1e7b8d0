"""Ratings and the statistics shared by the ladder and the standing arena.

Ratings are OpenSkill's Plackett–Luce model (Weng–Lin), updated once per played deal from the
seats' game points in that deal; a seat that forfeits a match is then ranked last of its table
once more. Annulled deals (a Danish redeal) and a seat sitting out (german-1754 with four
seats) count for nothing. `mean_ci` gives a mean with its 95% confidence interval (Student's t).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

from .replay.summary import DealRow

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

    def update(
        self,
        seats: Sequence[str],
        deals: Iterable[DealRow],
        forfeited: int | None,
        points: Sequence[Sequence[float]] | None = None,
    ) -> None:
        """Rate each deal by its seats' points, or by `points` (by deal, then seat: the standing
        arena's luck-adjusted points) when given."""
        for index, deal in enumerate(deals):
            playing = [s for s in range(len(seats)) if deal.active[s]]
            if deal.annulled or len(playing) < 2:
                continue
            row = deal.points if points is None else points[index]
            self._rate([seats[s] for s in playing], scores=[float(row[s]) for s in playing])
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
