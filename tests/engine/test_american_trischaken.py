"""`american`: Trischaken, the deal played when all pass (AM-TRI)."""


from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from support import act
from support.american import (
    COURTS,
    OTHER,
    D,
    F,
    P,
    bid_round,
    breakdown,
    new_deal,
    plays_of,
    points,
    value,
    zero_sum,
)

from arena.engine import (
    Card,
    DealState,
    IllegalActionError,
    deck_for,
    find_variant,
)

# ---------------------------------------------------------------------------- AM-TRI


def trischaken(hands: dict[int, Sequence[str]], talon: Sequence[str], **options: str) -> DealState:
    state = new_deal(hands, talon, **options)
    bid_round(state, "pass", "pass", "pass", "pass")
    assert state.trischaken and state.phase == "play"
    return state


SPADE_TALON = ["SA", "S7", "S10", "SJ", "SC", "SQ"]
MUST_BEAT_HANDS = {
    D: ["S5", "S6", "S8", "T2", "T3", "T4", "T5", "T7", "T8", "T9", "T11"],
    F: ["S3", "S9", "SK", "EX"],
    OTHER: ["S2", "S4", "T13", "T14", "T15", "T16", "T17", "T18", "T19", "T20", "T21"],
    P: ["T1", "T6", "T10", "T12"],
}  # every other card is a heart, diamond or club


def test_trischaken_dealer_leads_or_forehand_by_option() -> None:
    """AM-TRI-2 (AMB-27): the dealer leads trick 1; option trischaken_leader = forehand."""
    assert trischaken(MUST_BEAT_HANDS, SPADE_TALON).current_player == D
    assert trischaken(MUST_BEAT_HANDS, SPADE_TALON, trischaken_leader="forehand").current_player == F


def test_trischaken_must_beat() -> None:
    """AM-TRI-3: among the cards G-TRICK-4 allows, one that beats the winning card if possible; the
    Excuse may always be played; after a trump, any card of the led suit; void: a higher tarok."""
    state = trischaken(MUST_BEAT_HANDS, SPADE_TALON)
    act(state, "play S5")
    assert plays_of(state) == {"S9", "SK", "EX"}  # F must beat S5 (S3 is too low); or the Excuse
    with pytest.raises(IllegalActionError) as err:
        act(state, "play S3")
    assert err.value.rule == "AM-TRI-3"
    act(state, "play S9")
    assert plays_of(state) == {"S2", "S4"}  # OTHER cannot beat S9: any spade (G-TRICK-4 still binds)
    act(state, "play S4")
    assert plays_of(state) == {"T6", "T10", "T12"}  # P is void: any tarok beats; T1 is not his last
    with pytest.raises(IllegalActionError) as err:
        act(state, "play T1")
    assert err.value.rule == "AM-TRI-4"
    act(state, "play T6")
    assert state.tricks[-1].winner == P
    # Trick 2: P leads T10; D must beat it with a tarok: only T11 does.
    act(state, "play T10")
    assert plays_of(state) == {"T11"}
    act(state, "play T11")
    assert plays_of(state) == {str(c) for c in state.hand(F)}  # F: no tarok, cannot beat: anything
    act(state, "play SK")
    assert plays_of(state) == {f"T{n}" for n in range(13, 22)}  # OTHER: a tarok above T11
    act(state, "play T20")
    # Trick 3: OTHER leads S2, P trumps with T12 (T1 not yet his last tarok); D then follows
    # spades with any spade: nothing of his beats a tarok.
    act(state, "play S2")
    assert plays_of(state) == {"T12"}
    act(state, "play T12")
    assert plays_of(state) == {"S6", "S8"}
    act(state, "play S6")
    assert plays_of(state) == {"S3", "EX"}
    act(state, "play EX")
    assert state.tricks[-1].winner == P and state.fool_debts == [(F, P, 3)]  # AM-TRI-5
    # Trick 4: T1 is now P's last tarok, so he may lead it.
    assert "T1" in plays_of(state)


def test_trischaken_after_a_led_excuse() -> None:
    """AMB-53: after a led Excuse the second card is free (AM-TRI-4 still holds); the next players
    must beat the second card; AM-FOOL-3 never applies."""
    hands = {
        D: ["EX", "T2", "T3", "T4", "T5", "T6", "HA", "H2", "H4", "H6", "H7", "H8", "H10", *COURTS["H"]],
        F: ["T1", "T7", "H5"],
        OTHER: ["H3", "H9", *[f"T{n}" for n in range(8, 15)]],
        P: [f"T{n}" for n in range(15, 22)],
    }
    state = trischaken(hands, SPADE_TALON)
    act(state, "play EX")
    assert plays_of(state) == {str(c) for c in state.hand(F)} - {"T1"}
    act(state, "play H5")
    assert plays_of(state) == {"H9"}
    act(state, "play H9")
    assert plays_of(state) == {f"T{n}" for n in range(15, 22)}
    act(state, "play T15")
    assert state.tricks[-1].winner == P and state.fool_debts == [(D, P, 1)]


def test_trischaken_excuse_led_after_seventeen_tricks_does_not_win() -> None:
    """AMB-53: the dealer wins 17 tricks with T21…T5 and leads the Excuse to trick 18: it loses."""
    hands = {
        D: [f"T{n}" for n in range(5, 22)] + ["EX"],
        P: ["T1", "T2"],
        OTHER: ["T3", "T4"],
    }
    state = trischaken(hands, SPADE_TALON)
    assert plays_of(state) == {str(c) for c in state.hand(D)}
    for n in range(21, 4, -1):
        act(state, f"play T{n}")
        for _ in range(3):
            if state.current_player == P and n == 21:
                assert plays_of(state) == {"T2"}  # AM-TRI-4: T1 only as the last tarok
            state.apply(state.legal_actions()[0])
        assert state.tricks[-1].winner == D
    act(state, "play EX")
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    assert state.tricks_won[D] == 17 and state.tricks[-1].winner != D
    assert state.fool_debts == [(D, state.tricks[-1].winner, 18)]


def trischaken_oracle(state: DealState) -> list[int]:
    """Each player's P91 card points from the trick history, after the Excuse exchange (AM-TRI-5,
    G-TRICK-7): the lowest-valued card other than the Excuse, lowest index first."""
    piles: list[list[Card]] = [[], [], [], []]
    debts = []
    for trick in state.tricks:
        for seat, card in trick.plays:
            if str(card) == "EX":
                piles[seat].append(card)
                debts.append((seat, trick.winner))
            else:
                piles[trick.winner].append(card)
    for owner, creditor in debts:
        others = sorted((c for c in piles[owner] if str(c) != "EX"), key=lambda c: (value(c), int(c)))
        card = others[0] if others else Card.parse("EX")
        piles[owner].remove(card)
        piles[creditor].append(card)
    return [points(p) for p in piles]


def play_trischaken(seed: int, **options: str) -> DealState | None:
    state = DealState(find_variant("american", options), seed % 4, deck_for(seed, 1))
    if state.annulled:
        return None
    bid_round(state, "pass", "pass", "pass", "pass")
    rng = random.Random(seed)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("seed", range(6))
def test_trischaken_pairwise_settlement(seed: int) -> None:
    """AM-TRI-1/6 (AMB-28): own piles, the talon counts for nobody; player i scores T − 4·CP_i."""
    state = play_trischaken(seed)
    assert state is not None
    cp = trischaken_oracle(state)
    result = state.result()
    assert result.card_points == cp
    assert sum(cp) + points(state.talon) == 91
    total = sum(cp)
    assert result.deltas == [total - 4 * c for c in cp]
    assert result.deltas == [sum(cp[j] - cp[i] for j in range(4) if j != i) for i in range(4)]
    assert breakdown(state) == {"contract": "trischaken", "talon_points": points(state.talon)}
    assert {t.rule for t in result.ledger} <= {"AM-TRI-6"}
    zero_sum(state)


@pytest.mark.parametrize("seed", range(3))
def test_trischaken_literal_settlement(seed: int) -> None:
    """AM-TRI-6 option trischaken_scoring = literal: player i scores −CP_i; not zero-sum (G-PAY-3)."""
    state = play_trischaken(seed, trischaken_scoring="literal")
    assert state is not None
    cp = trischaken_oracle(state)
    result = state.result()
    assert result.deltas == [-c for c in cp]
    assert sum(result.deltas) == -sum(cp) < 0
    assert all(t.target == "penalty" and t.rule == "AM-TRI-6" for t in result.ledger)
