"""`american`: announcements and combinations, the play, the contracts' scores and the bonuses
(RULES §5; the scripted deals, with their card points worked out by hand, are in
tests/support/american.py)."""


from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from support import act, legal
from support.american import (
    BASE,
    CAPTURE,
    CAVALIERS,
    DEFENDERS_SLAM,
    FOOL_NO_SLAM,
    FOOL_SLAM,
    FOOL_SLAM_T1_IN_17,
    FOUR_KINGS,
    JACKS,
    KING_ULTIMO_CALLED,
    KING_ULTIMO_OTHER,
    KINGS,
    MIDDLE,
    OTHER,
    PETIT_ULTIMO,
    QUEENS,
    SLAM,
    SLAM_SUITS,
    SUITS_PART,
    TRULL,
    D,
    F,
    P,
    Script,
    bid_round,
    breakdown,
    new_deal,
    pass_announcements,
    play_contract,
    play_script,
    plays_of,
    rufer,
    script,
    to_announcements,
    zero_sum,
)

from arena.engine import (
    Card,
    DealState,
    IllegalActionError,
    deck_for,
    find_variant,
    observation,
)
from arena.engine.combos import american as american_combinations

# ---------------------------------------------------------------------------- AM-ANN, AM-COMB


def announce_options(state: DealState) -> set[str]:
    return {a.split()[1] for a in legal(state) if a.startswith("announce")}


def test_announcement_round_from_forehand_once_each() -> None:
    """AM-ANN-1 (AMB-34): one round in playing order from forehand, before trick 1."""
    state = BASE.deal()
    to_announcements(state)
    seen = []
    while state.phase == "announce":
        seen.append(state.current_player)
        act(state, "pass")
    assert seen == [F, OTHER, P, D]
    assert state.phase == "play" and state.trick_no == 1 and state.current_player == F


def test_announceable_bonuses_by_side() -> None:
    """AM-ANN-1: both sides announce Trull, Four Kings, Petit Ultimo, both King Ultimos, Slam; only the
    defenders, and only in Rufer and Solorufer, Capture Called Card."""
    both = {"trull", "four_kings", "petit_ultimo", "king_ultimo_called", "king_ultimo_other", "slam"}
    state = BASE.deal()
    to_announcements(state)
    assert announce_options(state) == both  # F, the declarer
    act(state, "pass")
    assert announce_options(state) == both | {"capture_called"}  # OTHER, a defender
    act(state, "pass")
    assert announce_options(state) == both  # P, the hidden partner
    with pytest.raises(IllegalActionError) as err:
        act(state, "announce capture_called")
    assert err.value.rule == "AM-ANN-1"
    act(state, "pass")
    assert announce_options(state) == both | {"capture_called"}  # D
    # Dreier: no call, so no Capture Called Card and no King Ultimo of the called suit.
    dreier = BASE.deal()
    to_announcements(dreier, "dreier", None)
    act(dreier, "pass")
    assert announce_options(dreier) == both - {"king_ultimo_called"}


def test_king_ultimo_called_needs_a_suit_card_called() -> None:
    """AM-ANN-1, AM-BON-1: after a tarok call only King Ultimo (other) exists."""
    hand = KINGS + QUEENS + CAVALIERS + JACKS + ["T2", "T3"]
    state = new_deal({F: hand})
    to_announcements(state, call="T5")
    assert "king_ultimo_called" not in announce_options(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, "announce king_ultimo_called")
    assert err.value.rule == "AM-ANN-1"
    # A called Queen keeps the called tier (AMB-32).
    queen = new_deal({F: [*KINGS, "T2"]})
    to_announcements(queen, call="HQ")
    assert "king_ultimo_called" in announce_options(queen)


def test_each_bonus_counts_once_per_side() -> None:
    """AM-ANN-1: a side's bonus counts as announced if any member announced it, and counts once.
    Each player may announce it once himself, so that a teammate's announcement never changes his
    choices (it would tell him who the hidden partner is)."""
    state = BASE.deal()
    to_announcements(state, laid=BASE.talon)
    act(state, "announce trull", "pass")  # F, the declarer
    act(state, "announce trull")  # OTHER: the defenders announce it for themselves
    assert "trull" not in announce_options(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, "announce trull")
    assert err.value.rule == "AM-ANN-1"
    act(state, "pass")
    assert "trull" in announce_options(state)  # P, the hidden partner: same options as D below
    act(state, "announce trull", "pass")
    assert "trull" in announce_options(state)  # D, defender
    act(state, "pass")
    assert state.side_announced == ({"trull"}, {"trull"})
    play_script(state, BASE)
    # Announced twice by the declarer side, failed: −10 once; the defenders' −10 once.
    assert breakdown(state)["bonuses"] == {"declarer": {"trull": -10}, "defenders": {"trull": -10}}
    assert breakdown(state)["x"] == 7


def test_no_announcements_in_trischaken() -> None:
    """AM-ANN-1, AM-TRI-1: all four pass; play starts at once, with no round."""
    state = BASE.deal()
    bid_round(state, "pass", "pass", "pass", "pass")
    assert state.phase == "play" and state.trischaken
    assert all(a.startswith("play") for a in legal(state))


def combos(hand: Sequence[str]) -> dict[tuple[str, str | None], tuple[int, int, list[str]]]:
    found = american_combinations([Card.parse(c) for c in hand])
    return {(c.name, c.suit): (c.value, c.size, [str(x) for x in sorted(c.shown)]) for c in found}


def test_combinations_and_their_values() -> None:
    """AM-COMB-1: every combination, its value and the cards it shows (Trumps: count and T1 only)."""
    assert combos(["T1", *MIDDLE[:8], "EX"]) == {("trumps", None): (20, 10, [])}
    eleven = combos([*MIDDLE[:10], "T21"])
    assert eleven == {("trumps", None): (30, 11, [])}
    found = american_combinations([Card.parse(c) for c in ["T1", *MIDDLE[:8], "EX"]])
    assert found[0].with_pagat is True and found[0].public()["with_pagat"] is True
    assert "cards" not in found[0].public()
    # Matadors: EX, T21, T1 + the unbroken run T20, T19, …: m cards, 20 + 10·(m − 3).
    assert combos(["EX", "T21", "T1"])[("matadors", None)] == (20, 3, ["T1", "T21", "EX"])
    assert combos(["EX", "T21", "T1", "T20", "T19", "T17"])[("matadors", None)] == (
        40,
        5,
        ["T1", "T19", "T20", "T21", "EX"],
    )
    assert ("matadors", None) not in combos(["EX", "T21", "T20"])
    # Kings: abundant (with EX) 30, full (without) 20, half (three + EX, missing suit named) 10.
    assert combos([*KINGS, "EX"])[("abundant_kings", None)] == (30, 5, ["SK", "HK", "DK", "CK", "EX"])
    assert ("full_kings", None) not in combos([*KINGS, "EX"])  # AMB-56: only the abundant form
    assert combos(KINGS) == {("full_kings", None): (20, 4, ["SK", "HK", "DK", "CK"])}
    assert combos(["SK", "HK", "CK", "EX"])[("half_kings", "D")] == (10, 4, ["SK", "HK", "CK", "EX"])
    assert combos(["SK", "HK", "EX"]) == {}
    # Cavallerie per suit: K, Q, C, J (+ EX: abundant); three courts + EX: half.
    assert combos(["HK", "HQ", "HC", "HJ", "EX"])[("abundant_cavallerie", "H")] == (
        30,
        5,
        ["HJ", "HC", "HQ", "HK", "EX"],
    )
    assert combos(["HK", "HQ", "HC", "HJ"]) == {("full_cavallerie", "H"): (20, 4, ["HJ", "HC", "HQ", "HK"])}
    assert combos(["DK", "DQ", "DJ", "EX"]) == {("half_cavallerie", "D"): (10, 4, ["DJ", "DQ", "DK", "EX"])}
    # The Excuse serves in several combinations at once.
    several = combos(["SK", "HK", "CK", "CQ", "CC", "EX"])
    assert set(several) == {("half_kings", "D"), ("half_cavallerie", "C")}


def test_declaring_shows_the_combination_to_everyone() -> None:
    """AM-COMB-1: declarations are optional, judged on the hand after the exchange, and shown."""
    hand = ["HK", "HQ", "HC", "EX", "SK", "CK", *[f"S{n}" for n in range(3, 11)], "C3", "C4", "C5", "C6"]
    state = new_deal({OTHER: hand})
    to_announcements(state, call="DK")
    act(state, "pass")
    assert {a for a in legal(state) if a.startswith("declare")} == {
        "declare half_cavallerie H",
        "declare half_kings D",
    }
    act(state, "declare half_cavallerie H", "pass")
    for seat in range(4):
        [declaration] = observation(state, seat)["declarations"]
        assert declaration == {
            "seat": OTHER,
            "name": "half_cavallerie",
            "suit": "H",
            "size": 4,
            "value": 10,
            "cards": ["HC", "HQ", "HK", "EX"],
        }
    with pytest.raises(IllegalActionError):
        act(state, "declare full_kings")
    assert state.current_player == P


# ---------------------------------------------------------------------------- AM-PLAY


def test_play_follows_suit_without_obligation_to_overtrump() -> None:
    """AM-PLAY-1, G-TRICK-4: follow suit, else trump; no obligation to beat or overtrump, and T1 may
    be played with other taroks in hand (unlike Trischaken, AM-TRI-4)."""
    state = BASE.deal()
    to_announcements(state, laid=BASE.talon)
    pass_announcements(state)
    act(state, "play SK")
    assert plays_of(state) == {"SC", "S8", "S4"}  # OTHER follows spades, under the King too
    for number in range(1, 13):
        for _ in range(4 if number > 1 else 3):
            seat = state.current_player
            assert seat is not None
            act(state, f"play {BASE.tricks[number - 1][seat]}")
    assert state.trick_no == 13 and state.current_player == D
    act(state, "play T18", "play T21")
    assert plays_of(state) == {"T20", "T15", "T11", "T7", "T2", "T1"}  # OTHER: any tarok


def test_a_led_excuse_lets_the_second_card_name_the_suit() -> None:
    """AM-PLAY-1, G-TRICK-3 (next_card): after a led Excuse the second player may play any card,
    and his card's suit is the one to follow."""
    hearts = [f"H{f}" for f in ("A", "2", "3", "4", "5")]
    state = new_deal({F: ["EX"], OTHER: ["SK", "DA", *hearts[:2], "T5"], P: [*hearts[2:], "T6", "C2"]})
    to_announcements(state, call="CK")
    pass_announcements(state)
    act(state, "play EX")
    assert plays_of(state) == {str(c) for c in state.hand(OTHER)}
    act(state, "play H2")
    hearts_of_p = {str(c) for c in state.hand(P) if c.suit == "H"}
    assert set(hearts[2:]) <= hearts_of_p and plays_of(state) == hearts_of_p


# ---------------------------------------------------------------------------- AM-SC: the contracts


@pytest.mark.parametrize(
    ("contract", "side_points", "x", "deltas"),
    [
        # Rufer: the six laid-away cards count for the declarer side (AM-TAL-1); D owes one card for
        # the Excuse: 91 + 6 + 1 = 98 halves = 49 against 85 − 1 = 84 halves = 42; Δ = 7, ×1.
        ("rufer", [49, 42], 7, [-7, 7, -7, 7]),
        # Solorufer: the unseen talon goes to the defenders (AM-TAL-2): 46 against 45; Δ = 1, ×2.
        ("solorufer", [46, 45], 2, [-2, 2, -2, 2]),
        # Dreier: F alone wins 48 halves + 6 laid away = 27 against 64 (P's Excuse debt is now owed
        # within the defenders: nothing changes hands); Δ = −37, ×4; F scores 3X (AM-SC-7).
        ("dreier", [27, 64], -148, [148, 148, 148, -444]),
        # Solodreier: 24 against 67; Δ = −43, ×8.
        ("solodreier", [24, 67], -344, [344, 344, 344, -1032]),
    ],
)
def test_each_contract(contract: str, side_points: list[int], x: int, deltas: list[int]) -> None:
    """AM-BID-1, AM-SC-1/5/7, AM-TAL-1/2, G-CP-4."""
    state = play_contract(BASE, contract)
    b = breakdown(state)
    assert b["contract"] == contract and b["side_points"] == side_points and sum(side_points) == 91
    assert b["delta"] == side_points[0] - side_points[1] and b["bon"] == 0 and b["slam"] == 0
    assert b["x"] == x
    result = state.result()
    assert result.deltas == deltas
    assert result.card_points == [side_points[state.side[s]] for s in range(4)]
    assert {t.rule for t in result.ledger} == {"AM-SC-1"}
    zero_sum(state)


def test_partnership_ledger_pairs_defenders_with_declarer_and_partner() -> None:
    """AM-SC-7 (AMB-29): with a partner, declarer and partner each +X, each defender −X."""
    result = rufer(BASE).result()
    assert [(t.source, t.target, t.amount, t.rule) for t in result.ledger] == [
        (OTHER, F, 7, "AM-SC-1"),
        (D, P, 7, "AM-SC-1"),
    ]


# ---------------------------------------------------------------------------- AM-BON


@pytest.mark.parametrize(
    ("name", "deal", "announce", "bonuses", "x"),
    [
        # Trull: Δ = 51 − 40 = 11.
        ("trull achieved unannounced", TRULL, {}, ({"trull": 10}, {}), 21),
        ("trull announced by the hidden partner", TRULL, {P: ["trull"]}, ({"trull": 20}, {}), 31),
        ("trull announced by the losers", TRULL, {D: ["trull"]}, ({"trull": 10}, {"trull": -10}), 31),
        ("trull announced and failed", BASE, {F: ["trull"]}, ({"trull": -10}, {}), -3),
        # Four Kings: Δ = 73 − 18 = 55.
        ("four kings unannounced", FOUR_KINGS, {}, ({"four_kings": 10}, {}), 65),
        ("four kings announced", FOUR_KINGS, {F: ["four_kings"]}, ({"four_kings": 20}, {}), 75),
        ("four kings announced and failed", BASE, {OTHER: ["four_kings"]}, ({}, {"four_kings": -10}), 17),
        # Capture Called Card and King Ultimo (called) by the defenders: Δ = 43 − 48 = −5.
        (
            "capture and king ultimo unannounced",
            CAPTURE,
            {},
            ({}, {"capture_called": 10, "king_ultimo_called": 10}),
            -25,
        ),
        (
            "capture announced, king ultimo announced by the losers",
            CAPTURE,
            {OTHER: ["capture_called"], F: ["king_ultimo_called"]},
            ({"king_ultimo_called": -10}, {"capture_called": 20, "king_ultimo_called": 10}),
            -45,
        ),
        ("capture announced and failed", BASE, {D: ["capture_called"]}, ({}, {"capture_called": -10}), 17),
        # King Ultimo (called) by the declarer side: Δ = 49 − 42 = 7.
        ("king ultimo called unannounced", KING_ULTIMO_CALLED, {}, ({"king_ultimo_called": 10}, {}), 17),
        (
            "king ultimo called announced",
            KING_ULTIMO_CALLED,
            {F: ["king_ultimo_called"]},
            ({"king_ultimo_called": 20}, {}),
            27,
        ),
        (
            "king ultimo called announced and failed",
            BASE,
            {P: ["king_ultimo_called"]},
            ({"king_ultimo_called": -10}, {}),
            -3,
        ),
        # Petit Ultimo: Δ = 7.
        ("petit ultimo unannounced", PETIT_ULTIMO, {}, ({"petit_ultimo": 10}, {}), 17),
        ("petit ultimo announced", PETIT_ULTIMO, {P: ["petit_ultimo"]}, ({"petit_ultimo": 20}, {}), 27),
        (
            "petit ultimo announced by the losers",
            PETIT_ULTIMO,
            {D: ["petit_ultimo"]},
            ({"petit_ultimo": 10}, {"petit_ultimo": -10}),
            27,
        ),
        ("petit ultimo announced and failed", BASE, {F: ["petit_ultimo"]}, ({"petit_ultimo": -10}, {}), -3),
        # King Ultimo (other): 10 / −5 / 5; Δ = 53 − 38 = 15.
        ("king ultimo other unannounced", KING_ULTIMO_OTHER, {}, ({"king_ultimo_other": 5}, {}), 20),
        (
            "king ultimo other announced",
            KING_ULTIMO_OTHER,
            {F: ["king_ultimo_other"]},
            ({"king_ultimo_other": 10}, {}),
            25,
        ),
        (
            "king ultimo other announced and failed",
            BASE,
            {OTHER: ["king_ultimo_other"]},
            ({}, {"king_ultimo_other": -5}),
            12,
        ),
        # Slam: 400 / −200 / 200 outside the multiplier; the slam side has all 91 points, Trull and
        # Four Kings, and here Petit Ultimo: (91 + 30)·1 + S.
        (
            "slam unannounced",
            SLAM,
            {},
            ({"trull": 10, "four_kings": 10, "petit_ultimo": 10, "slam": 200}, {}),
            321,
        ),
        (
            "slam announced by the hidden partner",
            SLAM,
            {P: ["slam"]},
            ({"trull": 10, "four_kings": 10, "petit_ultimo": 10, "slam": 400}, {}),
            521,
        ),
        ("slam announced and failed", BASE, {F: ["slam"]}, ({"slam": -200}, {}), -193),
    ],
)
def test_bonuses(
    name: str,
    deal: Script,
    announce: dict[int, list[str]],
    bonuses: tuple[dict[str, int], dict[str, int]],
    x: int,
) -> None:
    """AM-BON-1/2, AM-SC-2/4/5: +20 announced and achieved, −10 announced and failed, +10 achieved
    unannounced (King Ultimo other 10/−5/5, Slam 400/−200/200); the declarer side's bonuses minus
    the defenders', times the multiplier; Slam outside it."""
    state = rufer(deal, announce)
    b = breakdown(state)
    assert (b["bonuses"]["declarer"], b["bonuses"]["defenders"]) == bonuses, name
    assert b["x"] == x
    assert b["bon"] == sum(v for k, v in bonuses[0].items() if k != "slam") - sum(
        v for k, v in bonuses[1].items() if k != "slam"
    )
    assert b["slam"] == bonuses[0].get("slam", 0) - bonuses[1].get("slam", 0)
    result = state.result()
    assert result.deltas == [-x, x, -x, x]
    zero_sum(state)


def test_slam_side_takes_the_laid_away_cards() -> None:
    """AM-SC-6 (AMB-49): in a defenders' slam of a Dreier the six laid-away cards count for them.

    Δ = 0 − 91; the defenders' Trull and Four Kings (+10 each): (−91 − 20)·4 − 200 = −644.
    """
    state = play_contract(DEFENDERS_SLAM, "dreier")
    b = breakdown(state)
    assert b["side_points"] == [0, 91]
    assert b["bonuses"] == {"declarer": {}, "defenders": {"trull": 10, "four_kings": 10, "slam": 200}}
    assert b["x"] == -644
    assert state.result().deltas == [644, 644, 644, -1932]
    zero_sum(state)


def test_excuse_led_to_the_last_trick_completes_a_slam() -> None:
    """AM-FOOL-3: the side that won tricks 1…17 leads the Excuse to trick 18 and it wins; T1 falls in
    trick 18 (Petit Ultimo as usual): (91 + 30) + 200 = 321."""
    state = rufer(FOOL_SLAM)
    last = state.tricks[-1]
    assert last.winner == F and last.plays[0] == (F, Card.parse("EX"))
    assert state.tricks_won[F] + state.tricks_won[P] == 18
    b = breakdown(state)
    assert b["bonuses"]["declarer"] == {"trull": 10, "four_kings": 10, "petit_ultimo": 10, "slam": 200}
    assert b["x"] == 321 and state.fool_debts == []


def test_excuse_slam_counts_petit_ultimo_from_trick_17() -> None:
    """AM-FOOL-3: T1 played to trick 17 (won by the slam side) counts as Petit Ultimo, once."""
    state = rufer(FOOL_SLAM_T1_IN_17, {F: ["petit_ultimo"]})
    b = breakdown(state)
    assert b["bonuses"]["declarer"] == {"trull": 10, "four_kings": 10, "petit_ultimo": 20, "slam": 200}
    assert b["x"] == 91 + 40 + 200


def test_excuse_led_to_the_last_trick_without_a_slam_loses_it() -> None:
    """AM-FOOL-3 applies only after 17 tricks won; otherwise the Excuse is retained and owes a card
    (AM-FOOL-1, AMB-33).  The defenders get the low spade trick (4 halves), trick 18 (T1, C2, CA:
    11 halves) and one card for the Excuse: 16 halves = 8; the declarer side 83."""
    state = rufer(FOOL_NO_SLAM)
    last = state.tricks[-1]
    assert last.winner == OTHER
    assert state.fool_debts == [(F, OTHER, 18)]
    b = breakdown(state)
    assert b["side_points"] == [83, 8]
    # T1 lost, so no Trull; Four Kings for the declarer side; Petit Ultimo for the defenders.
    assert b["bonuses"] == {"declarer": {"four_kings": 10}, "defenders": {"petit_ultimo": 10}}
    assert b["x"] == 75


def test_excuse_owed_only_to_the_other_side() -> None:
    """G-TRICK-6, AM-FOOL-1: D's Excuse in trick 17, won by P, owes a card; in Dreier P is a
    defender like D and nothing is owed."""
    assert rufer(BASE).fool_debts == [(D, P, 17)]
    assert play_contract(BASE, "dreier").fool_debts == []


def test_excuse_goes_to_the_slam_side_when_its_side_has_nothing_else() -> None:
    """AM-FOOL-2, AM-SC-6: a side that won nothing gives the Excuse itself."""
    s = script(
        SLAM_SUITS,
        [
            (("T11", "T15", "T6", "T21"), F),
            (("T10", "T14", "T5", "T20"), F),
            (("T9", "T13", "T4", "T19"), F),
            (("T8", "T12", "T3", "T18"), F),
            (("EX", "T16", "T2", "T17"), F),  # D plays the Excuse; the defenders win nothing
            (("CA", "C2", "T1", "T7"), F),
        ],
    )
    state = rufer(s)
    assert state.fool_debts == [(D, F, 17)]
    b = breakdown(state)
    assert b["side_points"] == [91, 0] and b["bonuses"]["declarer"]["trull"] == 10


# ---------------------------------------------------------------------------- AM-COMB-2, AM-SC-3

# F holds the whole spade cavallerie (three spade tricks with it, SJ thrown in trick 18) and H10.
# Declarer side 70 (suits) + 12 + 11 + 6 (trick 18) + 6 + 1 = 106 halves = 53; defenders 38: Δ = 15.
CAVALLERIE = script(
    [
        (("S10", "S9", "S8", "SK"), F),
        (("S7", "S6", "S5", "SQ"), F),
        (("S4", "S3", "SA", "SC"), F),
        (("HC", "HK", "HJ", "HQ"), P),
        (("H8", "H7", "H9", "H10"), F),
        (("H3", "H4", "H5", "H6"), F),
        *SUITS_PART[6:],
    ],
    [
        (("T18", "T19", "T20", "T21"), F),
        (("T17", "T14", "T15", "T16"), D),
        (("T13", "T10", "T11", "T12"), D),
        (("T9", "T6", "T7", "T8"), D),
        (("EX", "T5", "T1", "T4"), P),
        (("CA", "T3", "T2", "SJ"), P),  # F, out of taroks, throws SJ
    ],
    talon=["S2", "HA", "H2", "DA", "D2", "C2"],
)


@pytest.mark.parametrize(
    ("announce", "bon", "x"),
    [
        ({}, 0, 15 + 20),  # the declarer side wins the hand: + Comb
        # (15 − 30)·1 < 0: the declarer side loses, and F's own cavallerie counts against it (AMB-30).
        ({F: ["trull", "four_kings", "petit_ultimo"]}, -30, -15 - 20),
        # (15 − 15)·1 = 0: decided by Δ = 15 > 0, so the declarer side wins the hand (AM-SC-3).
        ({F: ["trull", "king_ultimo_other"]}, -15, 0 + 20),
    ],
)
def test_combinations_go_to_the_side_that_wins_the_hand(
    announce: dict[int, list[str]], bon: int, x: int
) -> None:
    """AM-COMB-2, AM-SC-3 (AMB-30), AM-SC-5: X = (Δ + Bon)·m ± Comb + S."""
    declare = {F: ["declare full_cavallerie S", *announce.get(F, [])]}
    state = rufer(CAVALLERIE, declare)
    b = breakdown(state)
    assert b["side_points"] == [53, 38] and b["delta"] == 15 and b["bon"] == bon
    assert b["combinations"] == 20 and b["declarer_side_wins"] == (x > 0)
    assert b["x"] == x
    comb = [t for t in state.result().ledger if t.rule == "AM-COMB-2"]
    # Paid to the declarer side when it wins, by it when it loses (AM-SC-7).
    assert {(t.source, t.target) for t in comb} == ({(OTHER, F), (D, P)} if x > 0 else {(F, OTHER), (P, D)})
    zero_sum(state)


def declare_policy(seed: int, declare: bool, options: dict[str, str] | None = None) -> DealState:
    """Random play from `seed`, identical with and without declaring every combination offered."""
    rng = random.Random(seed)
    state = DealState(find_variant("american", options), seed % 4, deck_for(seed, 0))
    while not state.is_terminal():
        choices = state.legal_actions()
        declares = [a for a in choices if a.type == "declare"]
        if declare and declares:
            state.apply(declares[0])
            continue
        state.apply(rng.choice([a for a in choices if a.type != "declare"]))
    return state


def test_every_declared_combination_moves_x_by_its_value() -> None:
    """AM-COMB-2, AM-SC-3: the same deal with and without declarations differs by exactly ±Comb,
    + when (Δ + Bon)·m + S > 0 (or = 0 with Δ > 0), − otherwise; both sides' combinations count."""
    signs = set()
    names = set()
    for seed in range(200):
        plain, shown = declare_policy(seed, False), declare_policy(seed, True)
        if plain.annulled or plain.trischaken or not shown.declarations:
            continue
        a, b = breakdown(plain), breakdown(shown)
        comb = sum(d.combination.value for d in shown.declarations)
        assert b["combinations"] == comb and a["combinations"] == 0
        before = (a["delta"] + a["bon"]) * a["multiplier"] + a["slam"]
        wins = before > 0 or (before == 0 and a["delta"] > 0)
        assert b["x"] - a["x"] == (comb if wins else -comb)
        signs.add(wins)
        names |= {d.combination.name for d in shown.declarations}
        zero_sum(shown)
    assert signs == {True, False}
    assert {"trumps", "half_kings", "half_cavallerie"} <= names
