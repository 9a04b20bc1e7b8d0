"""What a ladder must decide, and whether it has: paired tests over whole deal sets.

A ladder can be told to decide a ranking (every two bots adjacent in the order of points per
deal: the measure the test is on, which the ratings' order need not follow) or one pair
(`[decide]` in the ladder file, docs/LADDER.md "Ladders that stop when they know"). For a pair
(a, b) the observation is one per deal set: the mean, over every deal of every match of that
deal set at a table where both sit (all seat arrangements of the same decks), of a's score
minus b's in that deal. The arrangements of a deal set share their decks, so their deals are
not independent of each other; the deal sets are (each its own decks), so the deal set's
rotated results together are one observation — the paired structure fishtest's pentanomial
model uses for a game pair, here for the duplicate's N-player arrangements. A table contributes
to a deal set only when all its arrangements are recorded (a run stopped half way leaves a
table partly played, and a partial rotation does not cancel the cards' luck).

The test on those observations is `sprt.PairTest`: two one-sided sequential t-tests, "no
difference" against "a is stronger by the effect or more" and against "b is", the effect in
standard deviations of the deal-set observations. A pair is *separated* when one of them
decides its alternative (a is stronger, or b is), *within the effect* when both reject theirs
(the two are closer than the effect), on at least `min_deal_sets` observations; either way it
is *resolved*. Equal bots are separated with probability at most about α = 1 − confidence (α/2
each way), whatever the budget. The error rates hold for the stopping rule of an adaptive
ladder (test after every deal set, stop at the first verdict); on a fixed ladder the verdict is
the same test applied once, at its end.

Scores are the game points of a seat in a deal unless a `Scorer` says otherwise: the seam for
scores with the luck taken out (an adjusted value per deal and seat).
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ratings import mean_ci
from .sprt import PairTest


@dataclass(frozen=True)
class Decide:
    """`[decide]`: what a ladder must separate (`pair` None: the ranking, every adjacent pair of
    the standings; or one pair of bots), and the test's confidence, effect and least deal sets."""

    pair: tuple[str, str] | None = None
    confidence: float = 0.95  # 1 − α = 1 − β
    effect: float = 0.3  # in standard deviations of a deal set's observation
    min_deal_sets: int = 6  # no verdict on fewer observations (the least evidence accepted)

    def test(self) -> PairTest:
        error = 1 - self.confidence
        return PairTest(alpha=error, beta=error, effect=self.effect, min_n=self.min_deal_sets)


@dataclass(frozen=True)
class SeatDeal:
    """One seat's result in one recorded deal (neither annulled nor sat out)."""

    match_seq: int
    deal_set: int
    table: int
    deal: int
    seat: int
    bot: str
    points: int


# A seat's score in a deal; by default its game points. Another scorer (luck-adjusted points,
# say) changes every observation, verdict and stopping decision alike.
Scorer = Callable[[SeatDeal], float]


def game_points(row: SeatDeal) -> float:
    return float(row.points)


def seat_deals(conn: sqlite3.Connection, arrangements: int) -> list[SeatDeal]:
    """Every played seat-deal of the tables whose `arrangements` matches of a deal set are all
    recorded, in the plan's order."""
    complete = {
        (deal_set, table)
        for deal_set, table, count in conn.execute(
            "SELECT deal_set, table_no, COUNT(*) FROM matches GROUP BY deal_set, table_no"
        )
        if count >= arrangements
    }
    rows = conn.execute(
        "SELECT d.match_seq, m.deal_set, m.table_no, d.deal, d.seat, d.bot, d.points "
        "FROM deals d JOIN matches m ON m.seq = d.match_seq WHERE d.annulled = 0 AND d.active = 1 "
        "ORDER BY m.deal_set, m.table_no, m.arrangement, m.key, d.deal, d.seat"
    )
    return [SeatDeal(*row) for row in rows if (row[1], row[2]) in complete]


def pair_observations(rows: Sequence[SeatDeal], a: str, b: str, score: Scorer = game_points) -> list[float]:
    """One observation per deal set in which a and b met: the mean of a's score minus b's over
    the deals both played at the same table, deal sets in order."""
    by_deal: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    sets: dict[tuple[int, int], int] = {}
    for row in rows:
        if row.bot in (a, b):
            by_deal[(row.match_seq, row.deal)][row.bot] = score(row)
            sets[(row.match_seq, row.deal)] = row.deal_set
    diffs: dict[int, list[float]] = defaultdict(list)
    for key, scores in by_deal.items():
        if len(scores) == 2:
            diffs[sets[key]].append(scores[a] - scores[b])
    return [sum(values) / len(values) for _, values in sorted(diffs.items())]


@dataclass
class PairVerdict:
    """The test's verdict on two bots, `higher` above `lower` in points per deal."""

    higher: str
    lower: str
    separated: bool  # one was found stronger by the effect
    stronger: str | None  # which (None: not separated)
    within_effect: bool  # found closer than the effect: resolved, not separated
    deal_sets: int  # observations
    diff_per_deal: float  # mean of the observations: higher's points per deal minus lower's
    ci95: float | None  # half-width of its 95% interval over deal sets (None below two)
    llr_higher: float  # LLR of "higher stronger by the effect" against "equal"
    llr_lower: float  # LLR of "lower stronger by the effect" against "equal"
    lower_bound: float
    upper_bound: float

    @property
    def resolved(self) -> bool:
        return self.separated or self.within_effect


def _finite(value: float) -> float:
    return value if math.isfinite(value) else math.copysign(1e308, value)


def verdict(
    rows: Sequence[SeatDeal], higher: str, lower: str, test: PairTest, score: Scorer = game_points
) -> PairVerdict:
    xs = pair_observations(rows, higher, lower, score)
    decision = test.decide(xs)
    ci = mean_ci(xs)
    llr_higher, llr_lower = test.llrs(xs)
    return PairVerdict(
        higher=higher,
        lower=lower,
        separated=decision in ("A", "B"),
        stronger=higher if decision == "A" else lower if decision == "B" else None,
        within_effect=decision == "equal",
        deal_sets=len(xs),
        diff_per_deal=ci.mean,
        ci95=None if math.isinf(ci.half_width) else ci.half_width,
        llr_higher=_finite(llr_higher),
        llr_lower=_finite(llr_lower),
        lower_bound=test.lower,
        upper_bound=test.upper,
    )


def pairs_to_decide(decide: Decide | None, ranking: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs, higher ranked first: adjacent ranks for a ranking (also with no `[decide]`)."""
    if decide is not None and decide.pair is not None:
        a, b = decide.pair
        return [(a, b) if ranking.index(a) < ranking.index(b) else (b, a)]
    return list(itertools.pairwise(ranking))


def verdicts(
    conn: sqlite3.Connection,
    ranking: Sequence[str],
    arrangements: int,
    decide: Decide | None = None,
    score: Scorer = game_points,
) -> list[PairVerdict]:
    """The verdict on every pair to decide, from the recorded matches."""
    rows = seat_deals(conn, arrangements)
    test = (decide or Decide()).test()
    return [verdict(rows, a, b, test, score) for a, b in pairs_to_decide(decide, ranking)]
