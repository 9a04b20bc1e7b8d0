"""`american`: the table and the deal, the bidding, the called King and the talon (RULES §5;
the crafted deals and their seats are in tests/support/american.py)."""


from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from support import act, cards_in, legal
from support.american import (
    AMERICAN,
    BASE,
    CAVALIERS,
    JACKS,
    KINGS,
    MIDDLE,
    OTHER,
    QUEENS,
    SUITS_PART,
    D,
    F,
    P,
    bid_round,
    breakdown,
    new_deal,
    pass_announcements,
    play_script,
    playing_order,
    rufer,
    zero_sum,
)

from arena.engine import (
    CARDS,
    Card,
    DealState,
    IllegalActionError,
    Match,
    deck_for,
    observation,
)

# ---------------------------------------------------------------------------- AM-TAB, AM-DEAL


def test_four_players_anticlockwise_forehand_on_the_dealers_right() -> None:
    """AM-TAB-1, G-SEAT-2/3: next(i) = i − 1; forehand (the dealer's right) bids first."""
    assert AMERICAN.seats == AMERICAN.players == 4
    for dealer in range(4):
        state = DealState(AMERICAN, dealer, deck_for(5, dealer))
        if state.annulled:
            continue
        assert state.order == tuple(playing_order(dealer))
        assert state.current_player == (dealer - 1) % 4
        assert state.phase == "bid"


def test_deal_follows_g_deal_2() -> None:
    """AM-DEAL-1, G-DEAL-2: rounds of 13 cards: 3 to forehand, 1 to the talon, 3 to each other seat."""
    deck = deck_for(1, 0)
    state = DealState(AMERICAN, 2, deck)
    order = playing_order(2)
    expected: dict[int, list[Card]] = {seat: [] for seat in order}
    talon = []
    for r in range(6):
        expected[order[0]] += deck[13 * r : 13 * r + 3]
        talon.append(deck[13 * r + 3])
        expected[order[1]] += deck[13 * r + 4 : 13 * r + 7]
        expected[order[2]] += deck[13 * r + 7 : 13 * r + 10]
        expected[order[3]] += deck[13 * r + 10 : 13 * r + 13]
    for seat in range(4):
        assert sorted(state.hand(seat)) == sorted(expected[seat])
        assert len(state.hand(seat)) == 18
    assert sorted(state.talon) == sorted(talon)
    # No talon card is among the first three or the last three cards of the deck ([S0]).
    assert not set(state.talon) & set(deck[:3] + deck[-3:])


def test_petit_sec_annuls_the_deal() -> None:
    """AM-DEAL-2 (AMB-44): T1 without another tarok or EX annuls the deal automatically."""
    suits = [c for c in CARDS if c < 56]
    state = new_deal({OTHER: ["T1", *map(str, suits[:17])]})
    assert state.is_terminal() and state.annulled and state.petit_sec == OTHER
    result = state.result()
    assert result.deltas == [0, 0, 0, 0] and result.ledger == [] and result.annulled
    assert observation(state, D)["petit_sec"] == OTHER
    # EX counts as a trump here: T1 with EX is not petit sec.
    kept = new_deal({OTHER: ["T1", "EX", *map(str, suits[:16])]})
    assert not kept.is_terminal() and kept.petit_sec is None


def test_an_annulled_deal_counts_as_a_dealer_turn() -> None:
    """G-SEAT-5/7: after a petit sec the next dealer deals, and the deal counts towards the match."""
    seed = next(s for s in range(5000) if DealState(AMERICAN, 0, deck_for(s, 0)).annulled)
    match = Match(AMERICAN, seed=seed, deals=2)
    first = match.start_deal()
    assert first.annulled
    match.finish_deal(first)
    assert match.turns_done == 1 and match.dealer == 3  # the deal passes to the right
    second = match.start_deal()
    rng = random.Random(0)
    while not second.is_terminal():
        second.apply(rng.choice(second.legal_actions()))
    match.finish_deal(second)
    assert match.is_over() and match.dealer == 2
    assert sum(match.scores) == 0 and match.final_split() == [0, 0, 0, 0]


def test_red_suits_rank_like_black_suits() -> None:
    """AM-TAB-2, G-RANK-3: H10 beats H9, D10 beats D7 (reversed red pips would rank 10 lowest)."""
    state = rufer(BASE)
    by_cards = {frozenset(str(c) for _, c in t.plays): t.winner for t in state.tricks}
    assert by_cards[frozenset({"H8", "H7", "H10", "H9"})] == OTHER
    assert by_cards[frozenset({"D8", "D9", "D7", "D10"})] == F


# ---------------------------------------------------------------------------- AM-BID


def test_one_round_of_bidding_each_bid_higher() -> None:
    """AM-BID-1/2 (AMB-36): from forehand each speaks once; a bid must beat the highest so far."""
    state = BASE.deal()
    assert state.current_player == F
    assert legal(state) == {"bid rufer", "bid solorufer", "bid dreier", "bid solodreier", "pass"}
    act(state, "bid solorufer")
    assert state.current_player == OTHER
    assert legal(state) == {"bid dreier", "bid solodreier", "pass"}
    with pytest.raises(IllegalActionError) as err:
        act(state, "bid rufer")
    assert err.value.rule == "AM-BID-2"
    with pytest.raises(IllegalActionError) as err:
        act(state, "bid grand")
    assert err.value.rule == "AM-BID-1"
    act(state, "bid dreier")
    act(state, "pass")
    assert state.current_player == D
    act(state, "pass")
    # The highest bidder declares; Dreier has no call: the talon is shown and OTHER exchanges.
    assert state.declarer == OTHER and state.contract is not None and state.contract.name == "dreier"
    assert state.phase == "discard" and state.current_player == OTHER
    assert [a["answer"] for a in observation(state, F)["round_answers"]] == [
        "solorufer",
        "dreier",
        "pass",
        "pass",
    ]


def test_after_solodreier_the_others_can_only_pass() -> None:
    """AM-BID-2: nothing beats Solodreier; the remaining players still speak once, passing."""
    state = BASE.deal()
    act(state, "bid solodreier")
    for seat in (OTHER, P, D):
        assert state.current_player == seat and legal(state) == {"pass"}
        act(state, "pass")
    assert state.phase == "announce"  # no call, no talon exchange (AM-TAL-2)


def test_multipliers() -> None:
    """AM-BID-1: Rufer ×1, Solorufer ×2, Dreier ×4, Solodreier ×8, lowest to highest."""
    assert [(c.name, c.multiplier) for c in AMERICAN.contracts] == [
        ("rufer", 1),
        ("solorufer", 2),
        ("dreier", 4),
        ("solodreier", 8),
    ]


# ---------------------------------------------------------------------------- AM-CALL


def calls_for(hand: Sequence[str]) -> set[str]:
    state = new_deal({F: hand})
    act(state, "bid rufer", "pass", "pass", "pass")
    assert state.phase == "call"
    return {a.split()[1] for a in legal(state)}


def test_call_ladder_is_cumulative() -> None:
    """AM-CALL-1 (AMB-45): any King; a Queen with four Kings; a Cavalier with four Kings and four
    Queens; a Jack with all the Cavaliers too; T2…T20 with all the Jacks too."""
    assert calls_for(["SK", "HK", "DK", "T21"]) == set(KINGS)
    assert calls_for(KINGS) == set(KINGS + QUEENS)
    # Four Queens without four Kings do not open the Cavaliers (the literal reading, AMB-45 (a)).
    assert calls_for(["SK", "HK", "DK", *QUEENS]) == set(KINGS)
    assert calls_for(KINGS + QUEENS) == set(KINGS + QUEENS + CAVALIERS)
    assert calls_for(KINGS + QUEENS + CAVALIERS) == set(KINGS + QUEENS + CAVALIERS + JACKS)
    assert calls_for(KINGS + QUEENS + CAVALIERS + JACKS) == set(KINGS + QUEENS + CAVALIERS + JACKS + MIDDLE)


def test_an_illegal_call_names_the_ladder() -> None:
    state = BASE.deal()
    act(state, "bid rufer", "pass", "pass", "pass")
    for text in ("call HQ", "call T1", "call EX", "call S5"):
        with pytest.raises(IllegalActionError) as err:
            act(state, text)
        assert err.value.rule == "AM-CALL-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "pass")
    assert err.value.rule == "AM-CALL-1"


def test_the_holder_of_the_called_card_is_the_partner() -> None:
    """AM-CALL-2, AM-SIDE-1: P holds HK; F and P form the declarer side."""
    state = BASE.deal()
    act(state, "bid rufer", "pass", "pass", "pass", "call HK")
    assert state.partner == P
    assert [state.side[s] for s in range(4)] == [1, 0, 1, 0]


def test_called_card_in_the_declarers_own_hand_plays_alone() -> None:
    """AM-CALL-2 (AMB-35): calling his own SK is legal; he plays alone against three, score ×3."""
    state = BASE.deal()
    act(state, "bid rufer", "pass", "pass", "pass", "call SK")
    assert state.partner is None and state.side == (1, 1, 1, 0)
    for card in BASE.talon:
        act(state, f"discard {card}")
    pass_announcements(state)
    play_script(state, BASE)
    b = breakdown(state)
    # F alone: 24 + 4 + 4 + 12 + 4 = 48 tricks + 6 laid away = 54 halves = 27 (as in Dreier), ×1.
    assert b["partner"] is None and b["side_points"] == [27, 64] and b["x"] == -37
    assert state.result().deltas == [37, 37, 37, -111]  # AM-SC-7: alone, +3X
    zero_sum(state)


def test_called_card_in_the_talon_rufer() -> None:
    """AM-CALL-2: the called King is in the talon; the declarer takes it and plays alone."""
    talon = ["SA", "S2", "HA", "H2", "DA", "HK"]
    state = new_deal({F: [c for t, _ in SUITS_PART for c in [t[F]]], P: ["D2"]}, talon)
    act(state, "bid rufer", "pass", "pass", "pass", "call HK")
    assert state.partner is None and state.side == (1, 1, 1, 0)
    assert Card.parse("HK") in state.hand(F)
    # Everyone saw the talon, so everyone knows the declarer plays alone.
    assert all(observation(state, seat)["partner"] == -1 for seat in range(4))
    with pytest.raises(IllegalActionError) as err:
        act(state, "discard HK")  # a King is never laid away
    assert err.value.rule == "AM-TAL-1"


def test_called_card_in_the_talon_solorufer() -> None:
    """AM-CALL-2, AM-TAL-2: in Solorufer a called King in the unseen talon leaves the declarer alone,
    and nobody learns it before the end of the deal."""
    talon = ["SA", "S2", "HA", "H2", "DA", "HK"]
    state = new_deal({P: ["D2"]}, talon)
    act(state, "bid solorufer", "pass", "pass", "pass", "call HK")
    assert state.partner is None and state.side == (1, 1, 1, 0)
    assert state.phase == "announce"
    for seat in range(4):
        view = observation(state, seat)
        assert "partner" not in view and "talon" not in view
    rng = random.Random(3)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    assert observation(state, D)["partner"] == -1
    # A called card lying in the unseen talon is never captured (AMB-31): only a failed announcement scores.
    announced = any(a.name == "capture_called" for a in state.announcements)
    assert breakdown(state)["bonuses"]["defenders"].get("capture_called", 0) == (-10 if announced else 0)


# ---------------------------------------------------------------------------- AM-TAL


def test_rufer_talon_is_shown_and_exchanged() -> None:
    """AM-TAL-1: the talon is shown to all; the declarer takes it and lays away six cards face down,
    never a King, EX, T1 or T21."""
    talon = ["SA", "S2", "HA", "H2", "CK", "T21"]
    state = new_deal(
        {F: ["EX", "T1", "SK", *[f"S{n}" for n in range(3, 11)], "SJ", "SC", "SQ", "HJ", "HC", "HQ", "H3"]},
        talon,
    )
    act(state, "bid rufer", "pass", "pass", "pass", "call DK")
    for seat in range(4):
        assert sorted(observation(state, seat)["talon"]) == sorted(talon)
    assert len(state.hand(F)) == 24 and state.current_player == F and state.phase == "discard"
    offered = {a.split()[1] for a in legal(state)}
    assert not offered & {"SK", "CK", "EX", "T1", "T21"}
    assert offered == {str(c) for c in state.hand(F)} - {"SK", "CK", "EX", "T1", "T21"}
    for bad in ("SK", "CK", "EX", "T1", "T21"):
        with pytest.raises(IllegalActionError) as err:
            act(state, f"discard {bad}")
        assert err.value.rule == "AM-TAL-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "discard DK")  # not in his hand
    assert err.value.rule == "AM-TAL-1"
    laid = ["S3", "S4", "S5", "HA", "H2", "SA"]
    for card in laid:
        act(state, f"discard {card}")
    assert state.phase == "announce" and len(state.hand(F)) == 18
    # The six laid-away cards are seen by the declarer only.
    assert sorted(observation(state, F)["skat"]) == sorted(laid)
    for seat in (D, P, OTHER):
        assert "skat" not in observation(state, seat)
        assert not cards_in(observation(state, seat)) & {Card.parse(c) for c in ("S3", "S4", "S5")}


def test_solo_contracts_leave_the_talon_unseen() -> None:
    """AM-TAL-2: Solorufer and Solodreier set the talon aside unseen; the declarer keeps his hand."""
    for contract in ("solorufer", "solodreier"):
        state = BASE.deal()
        bid_round(state, contract, "pass", "pass", "pass")
        if contract == "solorufer":
            act(state, "call HK")
        assert state.phase == "announce" and len(state.hand(F)) == 18
        talon = {Card.parse(c) for c in BASE.talon}
        rng = random.Random(1)
        while True:
            for seat in range(4):
                view = observation(state, seat)
                assert "talon" not in view
                assert not cards_in(view) & talon
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))


def test_dreier_talon_is_shown_and_nobody_is_called() -> None:
    """AM-TAL-1, AM-SC-7: Dreier exchanges like Rufer; the declarer is alone from the start."""
    state = BASE.deal()
    bid_round(state, "dreier", "pass", "pass", "pass")
    assert state.phase == "discard" and state.called is None
    for seat in range(4):
        view = observation(state, seat)
        assert view["partner"] == -1 and view["contract"] == "dreier" and view["declarer"] == F
        assert sorted(view["talon"]) == sorted(BASE.talon)
