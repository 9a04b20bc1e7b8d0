"""Luck taken out (`arena.ladder.luck`): the adjustment adds no bias, a small A/A check, and what
the duplicate format already cancels.

Everything is played in this process on the engine (benchmarks/luck.py's simulated ladders), on
fixed decks and seeds: deterministic, a few seconds. The full calibration (200 ladders per variant
and seating) is `python -m benchmarks luck` (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
import random

from arena.engine import DealState, Match, deck_for, find_variant
from arena.ladder.luck import (
    SeatDeal,
    adjusted_points,
    betas,
    control,
    deal_set_scores,
    expectation,
    slope,
)
from arena.search import greedy
from benchmarks.luck import aa_calibration, binomial_interval, simulate_ladder

DECKS = 240  # the expectation's decks in these tests (the product's default is larger)
GROSSTAROCK = find_variant("grosstarock")


def _mean_se(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    return mean, math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1) / n)


def test_the_control_is_a_function_of_the_deal_alone() -> None:
    start = Match(GROSSTAROCK, 0, 1).start_deal()
    state = DealState(GROSSTAROCK, 0, deck_for(5, 0), pots=start.pots_start, stakes=start.stakes)
    first = control(state)
    assert control(state) == first and len(first) == 3
    assert sum(first) == 0  # grosstarock's points are zero-sum, and so is the control
    assert state.history == [] and not state.is_terminal()  # the deal itself is not played


def test_the_adjustment_is_unbiased_on_a_fixed_pack() -> None:
    """On a pack of decks none of which the expectation saw, the luck averages to zero within
    its error, so the adjusted points' mean is the raw points' mean within that error."""
    expected = expectation(GROSSTAROCK, DECKS)
    start = Match(GROSSTAROCK, 0, 1).start_deal()
    deals = []
    for index in range(DECKS):
        deck = deck_for(424242, index)
        dealer = index % 3
        luck = control(DealState(GROSSTAROCK, dealer, deck, pots=start.pots_start, stakes=start.stakes))
        state = DealState(GROSSTAROCK, dealer, deck, pots=start.pots_start, stakes=start.stakes)
        rng = random.Random(index)
        while not state.is_terminal():
            state.apply(greedy(state, rng))
        seat = 1  # one seat's view, as a bot holding it
        place = (seat - dealer) % 3
        deals.append(
            SeatDeal(
                index // 2,
                index,
                0,
                seat,
                "bot",
                float(state.result().deltas[seat]),
                luck[seat],
                expected[place],
            )
        )
    lucks = [d.luck for d in deals]
    mean_luck, se_luck = _mean_se(lucks)
    assert abs(mean_luck) < 3 * math.sqrt(2) * se_luck  # the expectation's own error counts too
    adjusted = adjusted_points(deals)
    raw_mean, raw_se = _mean_se([d.points for d in deals])
    adj_mean, adj_se = _mean_se(adjusted)
    assert abs(adj_mean - raw_mean) < 3 * math.sqrt(2) * se_luck * max(abs(b) for b in betas(deals).values())
    # The cards explain much of this seat's points: the adjusted points vary less.
    assert adj_se < raw_se and slope(deals) > 0


def test_a_complete_duplicate_deal_set_already_cancels_the_cards() -> None:
    """Every bot holds every seat's cards of each deck: a zero-sum control sums to nothing over a
    bot's seats, so its per-deal-set score is the same with the adjustment."""
    deals = simulate_ladder("grosstarock", 7, 4, "duplicate", greedy, DECKS)
    for score in deal_set_scores(deals, adjusted_points(deals)):
        assert score.deals == 6 and math.isclose(score.raw, score.adjusted, abs_tol=1e-6)


def test_a_small_a_a_check() -> None:
    """Identical bots (the rollout policy, each with its own seed), one arrangement per deck (no
    duplicate): bot 0 is told apart from bot 1 no more often than the test's 5%, plain or
    adjusted, and the adjustment takes luck out."""
    ladders = 40
    row = aa_calibration("grosstarock", ladders, 10, "single", "greedy", DECKS)
    low, high = binomial_interval(0.05, ladders)
    assert (low, high) == (0, 5)
    assert row["within_plain"] and row["within_adjusted"], row
    assert row["variance_ratio"] < 1, row
