"""The search layer (arena/search): sampled deals honour the seat's information; PIMC's estimates.

The sampler is checked against the true deal: every sample replays the same public actions
(the engine accepted each of them from the sampled hands, so no card sits where the history
rules it out), gives the seat the very observation it had, and leaves every seat void where the
true history showed a void. Random deals of every variant, declarations made whenever legal so
that their facts constrain the sampling too.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from arena.engine import VARIANT_NAMES, DealState, deck_for, find_variant, observation
from arena.engine.cards import FOOL, SUIT_OF
from arena.search import NoConsistentDeal, Sampler, evaluate, sample_deals

SAMPLES_PER_VARIANT = 2000


def _deals(variant: str, seed: int, options: dict[str, str] | None = None) -> Iterator[tuple[DealState, int]]:
    """Decision points of random deals: the true state and the seat to act (declaring when it may)."""
    v = find_variant(variant, options)
    rng = random.Random(seed)
    deal = 0
    while True:
        state = DealState(v, rng.randrange(v.seats), deck_for(seed, deal))
        deal += 1
        while not state.is_terminal():
            seat = state.turn
            assert seat is not None
            yield state, seat
            legal = state.legal_actions()
            declare = [a for a in legal if a.type == "declare"]
            state.apply(declare[0] if declare and rng.random() < 0.9 else rng.choice(legal))


def _public_history(state: DealState, seat: int) -> list[tuple[int, str]]:
    """Every action the seat saw: all but another seat's discards.

    In `american` a player's announcements and declarations in one turn are listed apart
    (AM-ANN-1): their order within the turn is not public, so each turn's are sorted.
    """
    out: list[tuple[int, str]] = []
    turn: list[tuple[int, str]] = []
    for s, a in state.history:
        if a.type in ("announce", "declare") and state.variant.contracts and (not turn or turn[0][0] == s):
            turn.append((s, str(a)))
            continue
        out.extend(sorted(turn))
        turn = []
        if a.type in ("announce", "declare") and state.variant.contracts:
            turn.append((s, str(a)))
        elif a.type != "discard" or s == seat:
            out.append((s, str(a)))
    return out + sorted(turn)


def _voids(state: DealState) -> set[tuple[int, str]]:
    """(seat, suit): a seat played another suit to a trick led with a card of that suit."""
    out = set()
    tricks = [list(t.plays) for t in state.tricks] + ([list(state.trick)] if state.trick else [])
    for plays in tricks:
        led = SUIT_OF[plays[0][1]]
        if not led:
            continue  # led by the Fool: the second card or a designation sets the suit
        for seat, card in plays[1:]:
            if card != FOOL and SUIT_OF[card] != led:
                out.add((seat, led))
    return out


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_samples_replay_the_true_public_history(variant: str) -> None:
    rng = random.Random(7)
    checked = varied = 0
    for truth, seat in _deals(variant, 11):
        if checked >= SAMPLES_PER_VARIANT:
            break
        view = observation(truth, seat)
        history = _public_history(truth, seat)
        voids = _voids(truth)
        for sample in sample_deals(view, rng, 2):
            checked += 1
            assert sample.deck != truth.deck or sample.hands == truth.hands
            assert _public_history(sample, seat) == history
            assert observation(sample, seat) == view
            assert sample.hands[seat] == truth.hands[seat]
            for s, suit in voids:
                assert not any(SUIT_OF[c] == suit for c in sample.hands[s]), (s, suit)
            if any(sample.hands[s] != truth.hands[s] for s in range(truth.seats)):
                varied += 1
    assert checked >= SAMPLES_PER_VARIANT
    assert varied > checked // 4  # the hidden cards are really sampled, not copied from the truth


OPTION_SETS = [
    ("german-1754", {"players": "4"}),
    ("danish", {"redeal": "auto"}),
    ("danish-pots", {"red_pips": "straight", "counting": "p001"}),
    ("grosstarock", {"ladons": "all_blanks", "nolo_cancels": "cards_only"}),
    ("american", {"trischaken_leader": "forehand", "trischaken_scoring": "literal"}),
]


@pytest.mark.parametrize(("variant", "options"), OPTION_SETS)
def test_samples_match_the_view_under_every_option(variant: str, options: dict[str, str]) -> None:
    rng = random.Random(8)
    checked = 0
    for truth, seat in _deals(variant, 12, options):
        if checked >= 400:
            break
        view = observation(truth, seat)
        for sample in sample_deals(view, rng, 2):
            checked += 1
            assert observation(sample, seat) == view
            assert _public_history(sample, seat) == _public_history(truth, seat)


def test_an_impossible_view_is_refused_in_one_line() -> None:
    state = DealState(find_variant("grosstarock"), 0, deck_for(1, 0))
    view = observation(state, state.turn or 0)
    view["hand_sizes"] = [n + 1 for n in view["hand_sizes"]]
    with pytest.raises(NoConsistentDeal):
        Sampler(view).sample(random.Random(1))


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_evaluate_scores_every_legal_action_and_repeats_with_a_seed(variant: str) -> None:
    for truth, seat in _deals(variant, 3):
        view = observation(truth, seat)
        if len(view["legal_actions"]) > 1 and truth.phase == "play":
            break
    first = evaluate(view, iterations=3, seed=5)
    again = evaluate(view, iterations=3, seed=5)
    assert set(first.values) == set(view["legal_actions"])
    assert first.values == again.values and first.best == again.best
    assert first.best == max(view["legal_actions"], key=lambda a: first.values[a])
    assert first.samples == 3 and first.rollouts == 3 * len(view["legal_actions"])


def test_three_and_four_seats_of_one_variant_deal_apart() -> None:
    """german-1754 deals otherwise with four seats: a deal of one never serves the other."""
    rng = random.Random(2)
    for options in ({"players": "3"}, {"players": "4"}, {"players": "3"}):
        truth, seat = next(_deals("german-1754", 5, options))
        (sample,) = sample_deals(observation(truth, seat), rng, 1)
        assert sample.seats == truth.seats and sample.hands[seat] == truth.hands[seat]
