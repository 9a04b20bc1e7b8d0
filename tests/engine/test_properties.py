"""Invariants over many seeds, for every variant and option (hypothesis)."""

from __future__ import annotations

import copy
import json
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import cards_in

from arena.engine import (
    Card,
    DealState,
    Match,
    deal_record,
    deck_for,
    find_variant,
    observation,
    replay_record,
)

CONFIGS = [
    ("grosstarock", {}),
    ("grosstarock", {"ladons": "all_blanks", "nolo_cancels": "cards_only"}),
    ("german-1754", {}),
    ("german-1754", {"players": "4"}),
    ("danish", {}),
    ("danish", {"redeal": "auto"}),
    ("danish-pots", {}),
    ("danish-pots", {"red_pips": "straight", "counting": "p001"}),
]
IDS = [name + "".join(f"-{v}" for v in opts.values()) for name, opts in CONFIGS]
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def play_match(
    name: str, options: dict[str, str], seed: int, deals: int = 3
) -> tuple[Match, list[DealState]]:
    rng = random.Random(seed)
    match = Match(find_variant(name, options), seed=seed, deals=deals)
    states = []
    while not match.is_over():
        state = match.start_deal()
        steps = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            assert legal, f"no legal action in {state!r}"
            state.apply(rng.choice(legal))
            steps += 1
            assert steps < 400, "a deal must terminate"
        match.finish_deal(state)
        states.append(state)
    match.final_split()
    return match, states


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(seed=seeds)
def test_deals_terminate_and_are_zero_sum(name: str, options: dict[str, str], seed: int) -> None:
    """Deals end; G-CP-1 card points sum to 78; G-PAY-3 every ledger and the match sum to zero."""
    match, states = play_match(name, options, seed)
    for state in states:
        result = state.result()
        assert sum(result.deltas) + sum(result.pots.values()) == 0
        assert sum(t.amount for t in result.ledger if t.amount <= 0) == 0
        if not result.annulled:
            assert sum(result.tricks_won) == 25
            if options.get("counting") != "p001":
                assert sum(result.card_points) == 78
    assert sum(match.scores) == 0
    assert all(value == 0 for value in match.pots.values())


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
@settings(max_examples=10, deadline=None)
@given(seed=seeds)
def test_same_seed_same_match(name: str, options: dict[str, str], seed: int) -> None:
    """Determinism: the same seed and the same actions give the same records, byte for byte."""
    first = [json.dumps(deal_record(s)) for s in play_match(name, options, seed)[1]]
    second = [json.dumps(deal_record(s)) for s in play_match(name, options, seed)[1]]
    assert first == second


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
@settings(max_examples=10, deadline=None)
@given(seed=seeds)
def test_records_replay_to_the_same_result(name: str, options: dict[str, str], seed: int) -> None:
    for state in play_match(name, options, seed, deals=1)[1]:
        record = deal_record(state)
        assert deal_record(replay_record(json.loads(json.dumps(record)))) == record


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
def test_copies_and_pickles_of_a_deal_in_play_go_on_like_the_deal(name: str, options: dict[str, str]) -> None:
    """Search and OpenSpiel clone states with deepcopy and pickle; compiled classes too."""
    rng = random.Random(7)
    match = Match(find_variant(name, options), seed=7, deals=1)
    state = match.start_deal()
    for _ in range(20):
        state.apply(rng.choice(state.legal_actions()))
    variant = state.variant
    assert copy.deepcopy(variant) is variant and pickle.loads(pickle.dumps(variant)) == variant
    clones = [copy.deepcopy(state), pickle.loads(pickle.dumps(state))]
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        for deal in (state, *clones):
            deal.apply(action)
    assert all(deal_record(clone) == deal_record(state) for clone in clones)


def test_deck_depends_on_seed_and_deal_only() -> None:
    """G-CODE-6: a deck is a permutation of the 78 cards, fixed by seed and deal index."""
    assert sorted(deck_for(7, 3)) == list(range(78))
    assert deck_for(7, 3) == deck_for(7, 3)
    assert deck_for(7, 3) != deck_for(7, 4) != deck_for(8, 3)


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
@settings(max_examples=8, deadline=None)
@given(seed=seeds)
def test_views_hold_no_hidden_card(name: str, options: dict[str, str], seed: int) -> None:
    """A seat's view holds only its own hand, its own discard, played and shown cards."""
    rng = random.Random(seed)
    variant = find_variant(name, options)
    state = DealState(variant, seed % variant.seats, deck_for(seed, 0))
    while True:
        played = {card for trick in state.tricks for _, card in trick.plays} | {c for _, c in state.trick}
        shown = {Card.parse(c) for c in state.skat_public.get("shown", [])}  # type: ignore[union-attr]
        for seat in range(variant.seats):
            view = observation(state, seat)
            allowed = set(state.hands[seat]) | played | shown
            if seat == state.dealer:
                allowed |= set(state.skat)
            leaked = cards_in(view) - allowed
            assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"
            assert sorted(view["hand"]) == sorted(str(c) for c in state.hands[seat])
            assert ("legal_actions" in view) == (seat == state.current_player)
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))


# The typed field each option sets, read back as the option's string.
OPTION_FIELDS = {
    "ladons": lambda v: v.ladons,
    "nolo_cancels": lambda v: v.nolo_cancels,
    "trischaken_leader": lambda v: v.trischaken_leader,
    "trischaken_scoring": lambda v: v.trischaken_scoring,
    "redeal": lambda v: v.redeal,
    "counting": lambda v: v.danish.counting,
    "red_pips": lambda v: "reversed" if v.red_pips_reversed else "straight",
    "players": lambda v: str(v.seats),
}


def test_every_option_is_a_typed_field() -> None:
    """`find_variant` turns every option into a field of `Variant` (the rules read those), while
    `variant.options` keeps plain strings, as views and replays publish them."""
    from arena.engine import OPTIONS

    for name, specs in OPTIONS.items():
        assert set(specs) <= set(OPTION_FIELDS), name
        for key, spec in specs.items():
            for choice in spec.choices:
                assert type(choice) is str
                variant = find_variant(name, {key: choice})
                assert OPTION_FIELDS[key](variant) == choice
                assert all(type(value) is str for value in variant.options.values())
