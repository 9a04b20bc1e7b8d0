"""`ladder ab`'s statistics without a server: its per-deal-set observation on simulated twin
matches, and the paired test's error rates over whole simulated A/B runs (A/A: equal bots)."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import defaultdict

import pytest

from arena.engine import find_variant
from arena.ladder.ab import ABConfig, ABResult, ABTally, schedule_ab
from arena.ladder.config import bot_from_text
from arena.ladder.schedule import ScheduledMatch
from arena.ladder.store import MatchRecord
from arena.replay.summary import DealRow

DEALS = 3


def config(max_deal_sets: int) -> ABConfig:
    bots = [bot_from_text(name) for name in ("heuristic", "random", "random", "random")]
    variant = find_variant("grosstarock")
    return ABConfig(variant, bots[0], bots[1], tuple(bots[2:]), deals=DEALS, max_deal_sets=max_deal_sets)


# Four names standing for A, B and the two opponents (as `run_ab` names them).
A, B, X, Y = "a", "b", "x", "y"


def deal_sets(max_deal_sets: int) -> list[list[ScheduledMatch]]:
    by_set: dict[int, list[ScheduledMatch]] = defaultdict(list)
    for scheduled in schedule_ab(config(max_deal_sets), A, B, [X, Y]):
        by_set[scheduled.deal_set].append(scheduled)
    return [by_set[i] for i in sorted(by_set)]


def played(
    scheduled: list[ScheduledMatch], rng: random.Random, edge: float, luck: float = 60.0, skill: float = 15.0
) -> list[MatchRecord]:
    """The deal set's matches with simulated points: each deck gives each seat its luck (large,
    the same whoever sits there), and each bot adds its own play (`edge` more for A)."""
    cards = [[rng.gauss(0, luck) for _ in range(3)] for _ in range(DEALS)]
    records = []
    for match in scheduled:
        deals = []
        for deal in range(DEALS):
            points = [
                round(cards[deal][seat] + rng.gauss(edge if bot == A else 0.0, skill))
                for seat, bot in enumerate(match.bots)
            ]
            deals.append(DealRow(deal, points, [0, 0, 0], False, [True] * 3))
        records.append(
            MatchRecord(
                match.key,
                match.deal_set,
                0,
                match.arrangement,
                match.seed,
                list(match.bots),
                "m",
                "completed",
                None,
                [0, 0, 0],
                0,
                0.0,
                0.0,
                None,
                deals,
            )
        )
    return records


def verdict(sets: list[list[ScheduledMatch]], rng: random.Random, edge: float) -> tuple[str | None, int]:
    """(verdict, deal sets played) of one simulated `ladder ab` run."""
    tally = ABTally(config(len(sets)).test(), A, B)
    for number, scheduled in enumerate(sets, 1):
        said = tally.add(played(scheduled, rng, edge))
        if said is not None:
            return said, number
    return None, len(sets)


def test_one_observation_per_deal_set_with_the_cards_luck_cancelled() -> None:
    sets = deal_sets(3)
    assert [len(s) for s in sets] == [12, 12, 12]  # 6 arrangements, A's and B's twin of each
    rng = random.Random(1)
    tally = ABTally(config(3).test(), A, B)
    for scheduled in sets:
        # No play of their own: A and B score what the cards give their seat, so every deck's
        # difference, and the deal set's observation, is exactly 0 whatever the luck.
        assert tally.add(played(scheduled, rng, 0.0, skill=0.0)) is None
    assert tally.xs == [0.0, 0.0, 0.0] and tally.deals == 3 * DEALS
    more = ABTally(config(3).test(), A, B)
    more.add(played(sets[0], rng, 10.0, skill=0.0))
    assert more.xs == [pytest.approx(10.0, abs=1.0)]  # A's edge, to the rounding of the points


def test_equal_bots_are_declared_different_near_alpha_and_a_real_difference_is_found() -> None:
    # A/A: 60 whole simulated runs of equal bots, tested after every deal set up to 30 (as
    # `ladder ab --max-deal-sets 30` would): either is declared stronger at most as often as
    # α = 0.05 allows, give or take the binomial 99% bound over 60 runs (7). The error rate over
    # thousands of runs without a budget: `python -m benchmarks decide --calibrate`.
    rng = random.Random(34)
    sets = deal_sets(30)
    runs = 60
    said = [verdict(sets, rng, 0.0)[0] for _ in range(runs)]
    wrong = sum(v in ("A", "B") for v in said)
    print(f"A/A: declared stronger in {wrong} of {runs} runs; undecided {said.count(None)}")
    assert wrong <= 7
    # A clearly stronger (a deal set's observation has sd 15·√2/√18 ≈ 5 points here: an edge of
    # 6 points is 1.2 sd): found, in A's favour, every time, never the other way.
    found = [verdict(sets, rng, 6.0) for _ in range(20)]
    assert all(v == "A" for v, _ in found), found
    assert max(n for _, n in found) < 30


def test_the_verdicts_as_text_and_json() -> None:
    test = config(1).test()
    equal = ABResult(
        a="new", b="old", decision="equal", llr_a=-3.1, llr_b=-3.5, lower=test.lower, upper=test.upper,
        alpha=0.05, beta=0.05, effect=0.3, deals=60, deal_sets=20, matches=240, mean_diff=0.4, ci95=2.0,
        seconds=1.0, observations=[0.4] * 20,
    )  # fmt: skip
    said = equal.summary()
    assert said.startswith("equal: new and old are closer than the effect, decided after 20 deal sets")
    certain = dataclasses.replace(
        equal, decision="A", llr_a=math.inf, llr_b=-math.inf, deals=18, deal_sets=6, matches=72, ci95=math.inf
    )
    said = certain.summary()
    assert said.startswith("A: new is stronger than old, decided after 6 deal sets (18 decks, 72 matches)")
    data = certain.to_dict()
    assert data["llr_a"] == 1e308 and data["llr_b"] == -1e308 and data["ci95"] is None
    assert "stopped_by" not in data and data["decision"] == "A"
