"""Rule tests for `american` (RULES §5, with the AMB entries it cites) and its invariants.

Seats: in the crafted deals the dealer is seat 0, so (anticlockwise, AM-TAB-1) forehand is
seat 3, then seats 2 and 1, and the dealer plays last.  Forehand (seat 3) is the declarer;
seat 1 holds the called King `HK` and is his partner; seats 2 and 0 defend.

End-of-deal scenarios are scripted trick by trick: `Script.tricks` lists, for every trick,
the card of seat 0, 1, 2 and 3; each seat's hand is its 18 cards, and `play_script` lets the
engine decide who leads (an illegal scripted card fails loudly) and checks every winner.
Twelve suit tricks are shared by most scenarios (every seat follows: one court trick and two
pip tricks per suit); the six tarok tricks differ.  Card points and scores were worked out by
hand from RULES §5, in half points (`value`), and are written next to each scenario.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import act, cards_in, legal

from arena.engine import (
    CARDS,
    Card,
    DealState,
    IllegalActionError,
    Match,
    RecordError,
    deal_record,
    deck_for,
    find_variant,
    observation,
    replay_record,
)
from arena.engine.combos import american as american_combinations
from arena.protocol import view_message
from arena.v1 import arena_pb2 as pb

D, P, F = 0, 1, 3  # dealer (a defender), the partner holding HK, forehand (the declarer)
OTHER = 2  # the other defender
AMERICAN = find_variant("american")


# ---------------------------------------------------------------------------- helpers


def value(code: str | Card) -> int:
    """G-CP-4 value in half points, written out from RULES: 4.5, 3.5, 2.5, 1.5, 0.5 → 9, 7, 5, 3, 1."""
    c = str(code)
    if c in ("T1", "T21", "EX") or (c[0] in "SHDC" and c[1:] == "K"):
        return 9
    if c[0] in "SHDC":
        return {"Q": 7, "C": 5, "J": 3}.get(c[1:], 1)
    return 1


def points(cards: Iterable[str | Card]) -> int:
    halves = sum(value(c) for c in cards)
    assert halves % 2 == 0
    return halves // 2


def playing_order(dealer: int) -> list[int]:
    """Forehand (the dealer's right, AM-TAB-1) … the dealer; next(i) = i − 1."""
    return [(dealer - k) % 4 for k in range(1, 5)]


def american_deck(dealer: int, hands: dict[int, Sequence[str]], talon: Sequence[str] = ()) -> list[Card]:
    """A deck that deals the given cards under G-DEAL-2; unlisted cards fill the gaps in index order."""
    order = playing_order(dealer)
    places: dict[int | str, list[int]] = {seat: [] for seat in order}
    places["talon"] = []
    for r in range(6):
        base = 13 * r
        places[order[0]] += range(base, base + 3)
        places["talon"].append(base + 3)
        for k in (1, 2, 3):
            places[order[k]] += range(base + 3 * k + 1, base + 3 * k + 4)
    deck: list[Card | None] = [None] * 78
    given_cards = [
        *((seat, c) for seat, cards in hands.items() for c in cards),
        *(("talon", c) for c in talon),
    ]
    used: set[Card] = set()
    filled = {key: 0 for key in places}
    for key, code in given_cards:
        card = Card.parse(code)
        assert card not in used, f"{code} given twice"
        used.add(card)
        deck[places[key][filled[key]]] = card
        filled[key] += 1
    rest = iter(c for c in CARDS if c not in used)
    return [c if c is not None else next(rest) for c in deck]


def new_deal(
    hands: dict[int, Sequence[str]], talon: Sequence[str] = (), dealer: int = D, **options: str
) -> DealState:
    variant = find_variant("american", options)
    return DealState(variant, dealer, american_deck(dealer, hands, talon))


def bid_round(state: DealState, *answers: str) -> None:
    """The bidding round from forehand: each answer is a contract name or "pass"."""
    for answer in answers:
        act(state, "pass" if answer == "pass" else f"bid {answer}")


def pass_announcements(state: DealState) -> None:
    while state.phase == "announce":
        act(state, "pass")


def zero_sum(state: DealState) -> None:
    """G-PAY-3: deltas sum to zero and the ledger adds up to exactly the deltas."""
    result = state.result()
    assert sum(result.deltas) == 0
    for seat in range(4):
        received = sum(t.amount for t in result.ledger if t.target == seat)
        paid = sum(t.amount for t in result.ledger if t.source == seat)
        assert received - paid == result.deltas[seat]
    assert all(t.amount > 0 for t in result.ledger)


def plays_of(state: DealState) -> set[str]:
    """The cards the player to act may play."""
    return {a.split()[1] for a in legal(state)}


# ---------------------------------------------------------------------------- scripted deals

Part = list[tuple[tuple[str, str, str, str], int]]  # (cards of seats 0, 1, 2, 3; winner) per trick

# Twelve suit tricks (cards of seats 0, 1, 2, 3) with their hand-worked winners.  Each suit has a
# court trick (K Q C J: 24 half points) and two pip tricks (4 half points each).
SUITS_PART: Part = [
    (("SJ", "SQ", "SC", "SK"), F),
    (("S10", "S9", "S8", "S7"), D),
    (("S5", "S6", "S4", "S3"), P),
    (("HC", "HK", "HJ", "HQ"), P),  # the called King wins: the partner is public from here
    (("H8", "H7", "H10", "H9"), OTHER),
    (("H3", "H4", "H5", "H6"), F),
    (("DK", "DJ", "DQ", "DC"), D),
    (("D8", "D9", "D7", "D10"), F),
    (("D5", "D3", "D6", "D4"), OTHER),
    (("CQ", "CC", "CK", "CJ"), OTHER),
    (("C7", "C10", "C8", "C9"), P),
    (("C6", "C5", "C4", "C3"), D),
]
# Declarer side (F, P) wins 64 half points of the suit tricks, the defenders 64.
BASE_TALON = ["SA", "S2", "HA", "H2", "DA", "D2"]  # six blanks: 6 half points

BASE_TAROKS: Part = [
    (("T18", "T19", "T20", "T21"), F),  # 12 half points to the declarer side
    (("T17", "T14", "T15", "T16"), D),  # 4 to the defenders
    (("T13", "T10", "T11", "T12"), D),  # 4
    (("T9", "T6", "T7", "T8"), D),  # 4
    (("EX", "T5", "T1", "T4"), P),  # D leads the Excuse; T4 defines the suit; 11 half points to P
    (("CA", "C2", "T2", "T3"), F),  # P leads C2, D follows, F and OTHER trump: 4
]


@dataclass
class Script:
    tricks: list[tuple[str, str, str, str]]
    winners: list[int]
    talon: list[str] = field(default_factory=lambda: list(BASE_TALON))

    def hands(self) -> dict[int, list[str]]:
        return {seat: [trick[seat] for trick in self.tricks] for seat in range(4)}

    def deal(self, **options: str) -> DealState:
        return new_deal(self.hands(), self.talon, **options)


def script(*parts: Part, talon: list[str] | None = None) -> Script:
    rows = [row for part in parts for row in part]
    return Script([r for r, _ in rows], [w for _, w in rows], list(talon or BASE_TALON))


def with_rows(part: Part, **rows: tuple[tuple[str, str, str, str], int]) -> Part:
    """`part` with some rows replaced, by index: ``with_rows(SUITS_PART, r6=(("DA", …), OTHER))``."""
    out = list(part)
    for key, row in rows.items():
        out[int(key[1:])] = row
    return out


def play_script(state: DealState, s: Script) -> None:
    for number, (cards, winner) in enumerate(zip(s.tricks, s.winners, strict=True), start=1):
        for _ in range(4):
            seat = state.current_player
            assert seat is not None
            act(state, f"play {cards[seat]}")
        assert state.tricks[-1].winner == winner, f"trick {number}: {state.tricks[-1]}"
    assert state.is_terminal()


def rufer(
    s: Script, announce: dict[int, list[str]] | None = None, call: str = "HK", **options: str
) -> DealState:
    """Forehand bids Rufer, calls `call`, lays the talon away again; `announce` by seat; then the script."""
    state = s.deal(**options)
    bid_round(state, "rufer", "pass", "pass", "pass")
    act(state, f"call {call}")
    for card in s.talon:
        act(state, f"discard {card}")
    announcements(state, announce or {})
    play_script(state, s)
    return state


def announcements(state: DealState, announce: dict[int, list[str]]) -> None:
    assert state.phase == "announce"
    while state.phase == "announce":
        seat = state.current_player
        assert seat is not None
        for text in announce.get(seat, []):
            act(state, text if " " in text else f"announce {text}")
        act(state, "pass")


def breakdown(state: DealState) -> dict[str, Any]:
    b = state.result().breakdown
    assert b is not None
    return b


BASE = script(SUITS_PART, BASE_TAROKS)

# Trull for the declarer side: P throws T1 under F's T21 and keeps the Excuse (retained, one card owed).
# Declarer side 64 + 20 (t13) + 4 (t18) + 9 (EX) + 6 (talon) − 1 = 102 halves = 51; defenders 40.
TRULL_TAROKS: Part = [
    (("T18", "T1", "T20", "T21"), F),
    (("T17", "T14", "T19", "T16"), OTHER),
    (("T13", "T10", "T15", "T12"), OTHER),
    (("T9", "T6", "T11", "T8"), OTHER),
    (("T5", "EX", "T7", "T4"), OTHER),
    (("CA", "C2", "T2", "T3"), F),
]
TRULL = script(SUITS_PART, TRULL_TAROKS)

# Four Kings for the declarer side: F wins the diamond and club court tricks too.
# Declarer side 112 (suits) + 27 (taroks) + 6 + 1 = 146 halves = 73; defenders 18.
FOUR_KINGS = script(
    with_rows(SUITS_PART, r6=(("DC", "DJ", "DQ", "DK"), F), r9=(("CQ", "CC", "CJ", "CK"), F)), BASE_TAROKS
)

# P keeps HK to the last trick (HA takes its place in the heart court trick, won by F's HQ) and
# leads it to trick 18, where OTHER trumps it: Capture Called Card and King Ultimo (called) for the
# defenders.  Declarer side 56 + 12 + 11 + 6 + 1 = 86 halves = 43; defenders 48.
CAPTURE_SUITS = with_rows(SUITS_PART, r3=(("HC", "HA", "HJ", "HQ"), F))
CAPTURE_TALON = ["SA", "S2", "H2", "DA", "D2", "C2"]
CAPTURE = script(
    CAPTURE_SUITS,
    [
        *BASE_TAROKS[:4],
        (("EX", "T5", "T1", "T4"), P),
        (("CA", "HK", "T3", "T2"), OTHER),
    ],
    talon=CAPTURE_TALON,
)
# The same, but F's T3 takes the called King in trick 18: King Ultimo (called) for the declarer
# side.  Declarer side 56 + 12 + 11 + 12 + 6 + 1 = 98 halves = 49; defenders 42.
KING_ULTIMO_CALLED = script(
    CAPTURE_SUITS, [*BASE_TAROKS[:5], (("CA", "HK", "T2", "T3"), F)], talon=CAPTURE_TALON
)

# T1 falls in trick 18 under F's T3: Petit Ultimo for the declarer side; card points as BASE.
PETIT_ULTIMO = script(
    SUITS_PART,
    [*BASE_TAROKS[:4], (("EX", "T5", "T2", "T4"), P), (("CA", "C2", "T1", "T3"), F)],
)

# D keeps DK (DA takes its place; DQ wins the diamond court trick) and throws it in trick 18, won by
# F: King Ultimo (other) for the declarer side.  Declarer side 64 + 35 + 6 + 1 = 106 halves = 53.
KING_ULTIMO_OTHER = script(
    with_rows(SUITS_PART, r6=(("DA", "DJ", "DQ", "DC"), OTHER)),
    [*BASE_TAROKS[:5], (("DK", "C2", "T2", "T3"), F)],
    talon=["SA", "S2", "HA", "H2", "D2", "CA"],
)

# The declarer side wins every trick: F holds the spade and diamond winners and T21…T16, P the heart
# and club winners, T15…T12 and the Excuse; T1 falls in trick 18.
SLAM_SUITS: Part = [
    (("SJ", "SQ", "SC", "SK"), F),
    (("S7", "S9", "S8", "S10"), F),
    (("S3", "S5", "S4", "S6"), F),
    (("HJ", "HK", "HC", "HQ"), P),
    (("H7", "H10", "H8", "H9"), P),
    (("H3", "H6", "H4", "H5"), P),
    (("DJ", "DQ", "DC", "DK"), F),
    (("D7", "D9", "D8", "D10"), F),
    (("D3", "D5", "D4", "D6"), F),
    (("CJ", "CK", "CC", "CQ"), P),
    (("C7", "C10", "C8", "C9"), P),
    (("C3", "C6", "C4", "C5"), P),
]
SLAM = script(
    SLAM_SUITS,
    [
        (("T11", "T15", "T6", "T21"), F),
        (("T10", "T14", "T5", "T20"), F),
        (("T9", "T13", "T4", "T19"), F),
        (("T8", "T12", "T3", "T18"), F),
        (("T7", "EX", "T2", "T17"), F),  # the Excuse on its own side's trick: nothing owed
        (("CA", "C2", "T1", "T16"), F),
    ],
)

# AM-FOOL-3: F holds the Excuse instead of T16 and leads it to trick 18 after 17 tricks won; the
# only tarok in that trick is OTHER's T1, which would otherwise win it.
FOOL_SLAM_TAROKS: Part = [
    (("T6", "T16", "T11", "T21"), F),
    (("T5", "T15", "T10", "T20"), F),
    (("T4", "T14", "T9", "T19"), F),
    (("T3", "T13", "T8", "T18"), F),
    (("T2", "T12", "T7", "T17"), F),
    (("CA", "C2", "T1", "EX"), F),
]
FOOL_SLAM = script(SLAM_SUITS, FOOL_SLAM_TAROKS)
# The same, with T1 in trick 17 (won by the slam side) and T7 in trick 18.
FOOL_SLAM_T1_IN_17 = script(
    SLAM_SUITS, [*FOOL_SLAM_TAROKS[:4], (("T2", "T12", "T1", "T17"), F), (("CA", "C2", "T7", "EX"), F)]
)
# D wins the low spade trick, so the Excuse led to trick 18 does not win it: OTHER's T1 does.
FOOL_NO_SLAM = script(
    with_rows(SLAM_SUITS, r2=(("S6", "S5", "S4", "S3"), D)),
    [*FOOL_SLAM_TAROKS[:5], (("CA", "C2", "T1", "EX"), OTHER)],
)

# Dreier where the three defenders win every trick (F holds the lowest card of each).
DEFENDERS_SLAM = script(
    [
        (("SK", "SQ", "SC", "SJ"), D),
        (("S10", "S9", "S8", "S7"), D),
        (("S6", "S5", "S4", "S3"), D),
        (("HQ", "HK", "HC", "HJ"), P),
        (("H9", "H10", "H8", "H7"), P),
        (("H5", "H6", "H4", "H3"), P),
        (("DC", "DQ", "DK", "DJ"), OTHER),
        (("D8", "D9", "D10", "D7"), OTHER),
        (("D4", "D5", "D6", "D3"), OTHER),
        (("CK", "CQ", "CC", "CJ"), D),
        (("C10", "C9", "C8", "C7"), D),
        (("C6", "C5", "C4", "C3"), D),
    ],
    [
        (("T11", "T16", "T21", "T1"), OTHER),
        (("T10", "T15", "T20", "T5"), OTHER),
        (("T9", "T14", "T19", "T4"), OTHER),
        (("T8", "T13", "T18", "T3"), OTHER),
        (("T7", "T12", "EX", "T2"), P),  # the Excuse in a trick of its own side: nothing owed
        (("CA", "C2", "T17", "T6"), OTHER),
    ],
)


def play_contract(s: Script, contract: str, announce: dict[int, list[str]] | None = None) -> DealState:
    """Forehand declares `contract` (calling HK in Rufer and Solorufer); the others pass."""
    state = s.deal()
    bid_round(state, contract, "pass", "pass", "pass")
    if AMERICAN.contracts[[c.name for c in AMERICAN.contracts].index(contract)].calls:
        act(state, "call HK")
    if state.phase == "discard":
        for card in s.talon:
            act(state, f"discard {card}")
    announcements(state, announce or {})
    play_script(state, s)
    return state


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


KINGS = ["SK", "HK", "DK", "CK"]
COURTS = {suit: [suit + face for face in ("J", "C", "Q", "K")] for suit in "SHDC"}
QUEENS = ["SQ", "HQ", "DQ", "CQ"]
CAVALIERS = ["SC", "HC", "DC", "CC"]
JACKS = ["SJ", "HJ", "DJ", "CJ"]
MIDDLE = [f"T{n}" for n in range(2, 21)]


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


# ---------------------------------------------------------------------------- AM-ANN, AM-COMB


def to_announcements(
    state: DealState, contract: str = "rufer", call: str | None = "HK", laid: Sequence[str] = ()
) -> None:
    """Forehand declares, the others pass; the exchange lays away `laid`, or the first cards offered."""
    bid_round(state, contract, "pass", "pass", "pass")
    if call is not None:
        act(state, f"call {call}")
    for card in laid:
        act(state, f"discard {card}")
    while state.phase == "discard":
        act(state, f"discard {state.legal_actions()[0].card}")
    assert state.phase == "announce"


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


# ---------------------------------------------------------------------------- views (AM-CALL-2, AM-ANN-1)


def partners(state: DealState) -> list[int | None]:
    return [observation(state, seat).get("partner") for seat in range(4)]


def test_only_the_partner_knows_him_until_the_called_card_is_played() -> None:
    """AM-CALL-2: the holder of the called card knows from the call; nobody else, the declarer
    included, until it is played (here in trick 4, the heart court trick)."""
    state = BASE.deal()
    act(state, "bid rufer", "pass", "pass", "pass")
    assert partners(state) == [None] * 4
    act(state, "call HK")
    assert partners(state) == [None, P, None, None]
    for card in BASE.talon:
        act(state, f"discard {card}")
    pass_announcements(state)
    for _ in range(3):  # tricks 1-3
        for _ in range(4):
            seat = state.current_player
            assert seat is not None
            act(state, f"play {BASE.tricks[state.trick_no - 1][seat]}")
    assert partners(state) == [None, P, None, None]
    while not any(str(c) == "HK" for _, c in state.trick):
        seat = state.current_player
        assert seat is not None
        act(state, f"play {BASE.tricks[3][seat]}")
    assert partners(state) == [P, P, P, P]  # public as soon as HK lies in the trick


def test_a_declarer_who_called_his_own_card_alone_knows_it() -> None:
    """AM-CALL-2 (AMB-35): F called his own SK; the others learn it when SK is played."""
    state = BASE.deal()
    act(state, "bid solorufer", "pass", "pass", "pass", "call SK")
    assert partners(state) == [None, None, None, -1]
    pass_announcements(state)
    act(state, "play SK")
    assert partners(state) == [-1, -1, -1, -1]


def test_a_combination_showing_the_called_card_reveals_the_partner() -> None:
    """AM-CALL-2, AM-COMB-1: P shows Half Kings holding the called HK."""
    hand = ["HK", "SK", "CK", "EX", *[f"S{n}" for n in range(2, 11)], "H2", "H3", "H4", "H5", "H6"]
    state = new_deal({P: hand})
    to_announcements(state, call="HK")
    assert partners(state)[D] is None
    act(state, "pass", "pass")  # F, OTHER
    act(state, "declare half_kings D")
    assert partners(state) == [P, P, P, P]
    # Trumps shows no card, so a Trumps declaration never reveals a called tarok.
    assert "cards" not in american_combinations([Card.parse(f"T{n}") for n in range(1, 12)])[0].public()


def test_views_never_hold_another_seats_legal_actions() -> None:
    """AM-ANN-1: only the seat to act sees its legal actions (they would reveal the partner)."""
    state = BASE.deal()
    to_announcements(state)
    for seat in range(4):
        view = observation(state, seat)
        assert ("legal_actions" in view) == (seat == state.current_player)


def test_view_message_carries_the_american_fields() -> None:
    """The wire View (arena.proto) holds contract, declarer, called card, talon, partner, shown cards."""
    state = BASE.deal()
    message = view_message(observation(state, OTHER))
    assert (message.contract, message.declarer, message.called, message.petit_sec) == ("", -1, "", -1)
    assert not message.HasField("partner") and not message.talon
    act(state, "bid rufer", "pass", "pass", "pass", "call HK")
    for seat in range(4):
        wire = pb.View.FromString(view_message(observation(state, seat)).SerializeToString())
        assert wire.contract == "rufer" and wire.declarer == F and wire.called == "HK"
        assert sorted(wire.talon) == sorted(BASE.talon)
        assert wire.HasField("partner") == (seat == P)
        assert [(r.round, r.seat, r.answer) for r in wire.round_answers] == [
            ("bid", F, "rufer"),
            ("bid", OTHER, "pass"),
            ("bid", P, "pass"),
            ("bid", D, "pass"),
        ]
    assert pb.View.FromString(view_message(observation(state, P)).SerializeToString()).partner == P
    dreier = BASE.deal()
    bid_round(dreier, "dreier", "pass", "pass", "pass")
    assert view_message(observation(dreier, D)).partner == -1
    shown = new_deal(
        {OTHER: ["HK", "HQ", "HC", "EX", *[f"S{n}" for n in range(2, 11)], "C3", "C4", "C5", "C6", "C7"]}
    )
    to_announcements(shown, call="DK")
    act(shown, "pass", "declare half_cavallerie H")
    [declaration] = view_message(observation(shown, D)).declarations
    assert list(declaration.cards) == ["HC", "HQ", "HK", "EX"] and declaration.value == 10


def test_illegal_actions_name_american_rules() -> None:
    """Every phase rejects a wrong action type with the rule of that phase."""
    state = BASE.deal()
    with pytest.raises(IllegalActionError) as err:
        act(state, "play SK")
    assert err.value.rule == "AM-BID-2"
    act(state, "bid rufer", "pass", "pass", "pass")
    with pytest.raises(IllegalActionError) as err:
        act(state, "pass")
    assert err.value.rule == "AM-CALL-1"
    act(state, "call HK")
    with pytest.raises(IllegalActionError) as err:
        act(state, "play SK")
    assert err.value.rule == "AM-TAL-1"
    for card in BASE.talon:
        act(state, f"discard {card}")
    with pytest.raises(IllegalActionError) as err:
        act(state, "declare trumps")
    assert err.value.rule == "AM-COMB-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "announce vole")
    assert err.value.rule == "AM-ANN-1"
    pass_announcements(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, "play S5")
    assert err.value.rule == "G-TRICK-1"
    with pytest.raises(IllegalActionError) as err:
        act(state, "play EX S")
    assert err.value.rule == "G-TRICK-1"


# ---------------------------------------------------------------------------- records


def test_records_of_american_deals_replay() -> None:
    """Deal records (replays/FORMAT.md) hold 4 seats; an illegal call is reported with its rule."""
    state = rufer(BASE, {P: ["trull"]})
    record = json.loads(json.dumps(deal_record(state)))
    assert record["seats"] == 4 and record["variant"] == "american"
    assert record["options"] == {"trischaken_leader": "dealer", "trischaken_scoring": "pairwise"}
    assert [a["type"] for a in record["actions"][:5]] == ["bid", "pass", "pass", "pass", "call"]
    assert record["result"]["breakdown"]["x"] == -3  # Δ = 7, Trull announced and failed: −10
    assert deal_record(replay_record(record)) == record
    bad = dict(record, actions=[*record["actions"][:4], {"seat": F, "type": "call", "card": "S5"}])
    with pytest.raises(RecordError) as err:
        replay_record(bad)
    assert "step 4" in str(err.value) and "AM-CALL-1" in str(err.value)


# ---------------------------------------------------------------------------- invariants over many seeds

CONFIGS = [{}, {"trischaken_leader": "forehand", "trischaken_scoring": "literal"}]
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_deal(seed: int, options: dict[str, str]) -> DealState:
    """A deal played with random legal actions, passing often in the bidding so that Trischaken occurs."""
    variant = find_variant("american", options)
    rng = random.Random(seed)
    state = DealState(variant, seed % 4, deck_for(seed, 0))
    steps = 0
    while not state.is_terminal():
        choices = state.legal_actions()
        assert choices, f"no legal action in {state!r}"
        if state.phase == "bid" and rng.random() < 0.6:
            state.apply(choices[-1])  # pass
        else:
            state.apply(rng.choice(choices))
        steps += 1
        assert steps < 200, "a deal must terminate"
    return state


@pytest.mark.parametrize("options", CONFIGS, ids=["default", "forehand-literal"])
@settings(max_examples=80, deadline=None)
@given(seed=seeds)
def test_deals_terminate_count_91_and_are_zero_sum(options: dict[str, str], seed: int) -> None:
    """Deals end with a legal action at every step; card points of both sides (or all players) and
    the talon sum to 91 (G-CP-4); every ledger sums to zero (G-PAY-3) except literal Trischaken."""
    state = random_deal(seed, options)
    result = state.result()
    assert all(t.amount > 0 for t in result.ledger)
    if state.annulled:
        assert result.deltas == [0, 0, 0, 0]
        return
    assert sum(result.tricks_won) == 18 and all(len(state.hand(s)) == 0 for s in range(4))
    b = breakdown(state)
    if state.trischaken:
        assert sum(result.card_points) + b["talon_points"] == 91
        if options.get("trischaken_scoring") == "literal":
            assert result.deltas == [-c for c in result.card_points]
            return
    else:
        assert sum(b["side_points"]) == 91
        assert result.card_points == [b["side_points"][state.side[s]] for s in range(4)]
        assert b["x"] == (b["delta"] + b["bon"]) * b["multiplier"] + b["slam"] + (
            b["combinations"] if b["declarer_side_wins"] else -b["combinations"]
        )
        alone = state.partner is None
        assert result.deltas[state.declarer] == (3 if alone else 1) * b["x"]  # type: ignore[index]
    zero_sum(state)


@pytest.mark.parametrize("options", CONFIGS, ids=["default", "forehand-literal"])
@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_determinism_and_records(options: dict[str, str], seed: int) -> None:
    """The same seed gives the same record byte for byte, and the record replays to itself."""
    first = json.dumps(deal_record(random_deal(seed, options)))
    second = json.dumps(deal_record(random_deal(seed, options)))
    assert first == second
    record = json.loads(first)
    assert json.dumps(deal_record(replay_record(record))) == first


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_views_hold_no_hidden_card(seed: int) -> None:
    """A view holds its own hand, the cards played, shown combinations, the talon only while shown
    (Rufer, Dreier), its own laid-away cards, the called card's name — never another hand, the
    unseen talon, or another seat's legal actions."""
    rng = random.Random(seed)
    state = DealState(AMERICAN, seed % 4, deck_for(seed, 0))
    while True:
        played = {c for t in state.tricks for _, c in t.plays} | {c for _, c in state.trick}
        shown = {c for d in state.declarations for c in d.combination.shown}
        for seat in range(4):
            view = observation(state, seat)
            allowed = set(state.hands[seat]) | played | shown
            if state.talon_visible:
                allowed |= set(state.talon)
            if seat == state.declarer:
                allowed |= set(state.skat)
            if state.called is not None:
                allowed.add(state.called)
            if seat == state.current_player and state.phase == "call":
                allowed |= {a.card for a in state.legal_actions() if a.card is not None}
            leaked = cards_in(view) - allowed
            assert not leaked, f"seat {seat} sees {sorted(map(str, leaked))}"
            assert ("legal_actions" in view) == (seat == state.current_player)
            if not state.talon_visible:
                assert "talon" not in view
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))


def swapped_deal(seed: int) -> tuple[DealState, DealState, int, int, Card, Card] | None:
    """Two deals that differ only in which of two non-declarers holds the called King.

    Forehand bids (Rufer or Solorufer by seed) and calls a King held by another player P; Q is
    another non-declarer; the deck is changed by exchanging the King with a non-tarok card X of Q.
    """
    deck = deck_for(seed, 0)
    dealer = seed % 4
    first = DealState(AMERICAN, dealer, deck)
    if first.annulled:
        return None
    declarer = first.forehand
    holders = {s: [k for k in first.hand(s) if k.is_king] for s in first.order if s != declarer}
    p = next((s for s, kings in holders.items() if kings), None)
    if p is None:
        return None
    king = holders[p][0]
    q = next(s for s in first.order if s not in (declarer, p))
    x = next(c for c in first.hand(q) if c.suit not in ("T", "") and not c.is_king)
    other = list(deck)
    i, j = other.index(king), other.index(x)
    other[i], other[j] = other[j], other[i]
    second = DealState(AMERICAN, dealer, other)
    contract = "rufer" if seed % 2 else "solorufer"
    for state in (first, second):
        bid_round(state, contract, "pass", "pass", "pass")
        act(state, f"call {king}")
    return first, second, p, q, king, x


@settings(max_examples=40, deadline=None)
@given(seed=seeds)
def test_the_partner_stays_hidden_until_the_called_card_is_public(seed: int) -> None:
    """AM-CALL-2: two deals differing only in which defender-candidate holds the called King give
    the declarer and the fourth player identical views, with identical play, until the King (or the
    card exchanged with it) is played or shown; the holder knows he is the partner from the call."""
    pair = swapped_deal(seed)
    if pair is None:
        return
    first, second, p, q, king, x = pair
    declarer = first.declarer
    assert first.partner == p and second.partner == q
    assert observation(first, p)["partner"] == p and observation(second, q)["partner"] == q
    watchers = [s for s in range(4) if s not in (p, q)]
    assert declarer in watchers
    rng = random.Random(seed)
    hidden = {king, x}
    while not first.is_terminal():
        public = {c for t in first.tricks for _, c in t.plays} | {c for _, c in first.trick}
        public |= {c for d in first.declarations for c in d.combination.shown}
        if first.talon_visible:
            public |= set(first.talon)
        if public & hidden:
            break
        for seat in watchers:
            assert observation(first, seat) == observation(second, seat), f"seat {seat} tells them apart"
            assert "partner" not in observation(first, seat)
        common = [a for a in first.legal_actions() if a in second.legal_actions()]
        if not common:
            break
        action = rng.choice(common)
        first.apply(action)
        second.apply(action)


def independent_x(state: DealState) -> tuple[list[int], int]:
    """Side points and X recomputed from the public record of the deal, straight from RULES §5."""
    contract = state.contract
    assert contract is not None and state.declarer is not None
    team = {state.declarer, state.partner} - {None}
    side = {s: 0 if s in team else 1 for s in range(4)}
    piles: list[list[str]] = [[], []]
    debts = []
    for t in state.tricks:
        for seat, card in t.plays:
            if str(card) == "EX" and seat != t.winner:  # retained (AM-FOOL-1); owed across sides
                piles[side[seat]].append("EX")
                if side[seat] != side[t.winner]:
                    debts.append(side[seat])
            else:
                piles[side[t.winner]].append(str(card))
    won = [sum(1 for t in state.tricks if side[t.winner] == s) for s in (0, 1)]
    slam = 0 if won[0] == 18 else 1 if won[1] == 18 else None
    talon = [str(c) for c in (state.skat if contract.exchange else state.talon)]
    piles[slam if slam is not None else (0 if contract.exchange else 1)] += talon  # AM-SC-6, AMB-54
    for owner in debts:  # G-TRICK-7, AM-FOOL-2
        others = sorted((c for c in piles[owner] if c != "EX"), key=lambda c: (value(c), int(Card.parse(c))))
        card = others[0] if others else "EX"
        piles[owner].remove(card)
        piles[1 - owner].append(card)
    cp = [points(p) for p in piles]
    last, before_last = state.tricks[-1], state.tricks[-2]
    last_cards = {str(c) for _, c in last.plays}
    last_side = side[last.winner]
    called = None if state.called is None else str(state.called)
    suit_call = called is not None and called[0] in "SHDC" and called != "EX"
    called_king = called[0] + "K" if suit_call and called is not None else None
    achieved: dict[str, int] = {}
    for s in (0, 1):
        if {"EX", "T1", "T21"} <= set(piles[s]):
            achieved["trull"] = s
        if {"SK", "HK", "DK", "CK"} <= set(piles[s]):
            achieved["four_kings"] = s
    excuse_slam = str(last.plays[0][1]) == "EX" and last.winner == last.plays[0][0]
    if "T1" in last_cards or (excuse_slam and "T1" in {str(c) for _, c in before_last.plays}):
        achieved["petit_ultimo"] = last_side
    if called_king is not None and called_king in last_cards:
        achieved["king_ultimo_called"] = last_side
    if any(k in last_cards and k != called_king for k in ("SK", "HK", "DK", "CK")):
        achieved["king_ultimo_other"] = last_side
    if slam is not None:
        achieved["slam"] = slam
    if contract.calls and any(
        called in {str(c) for _, c in t.plays} and side[t.winner] == 1 for t in state.tricks
    ):
        achieved["capture_called"] = 1
    announced = [{a.name for a in state.announcements if side[a.seat] == s} for s in (0, 1)]
    values = [0, 0]
    slams = [0, 0]
    for s in (0, 1):
        names = ["trull", "four_kings", "petit_ultimo", "king_ultimo_other", "slam"]
        if suit_call:
            names.append("king_ultimo_called")
        if s == 1 and contract.calls:
            names.append("capture_called")
        for name in names:
            base = {"king_ultimo_other": 5, "slam": 200}.get(name, 10)
            got, said = achieved.get(name) == s, name in announced[s]
            v = (2 * base if got else -base) if said else (base if got else 0)
            if name == "slam":
                slams[s] = v
            else:
                values[s] += v
    delta = cp[0] - cp[1]
    before = (delta + values[0] - values[1]) * contract.multiplier + slams[0] - slams[1]
    comb = sum(d.combination.value for d in state.declarations)
    wins = before > 0 or (before == 0 and delta > 0)
    return cp, before + (comb if wins else -comb)


@settings(max_examples=150, deadline=None)
@given(seed=seeds)
def test_partnership_scores_match_an_independent_count(seed: int) -> None:
    """AM-SC-1…7 over random deals (random announcements and declarations included)."""
    state = random_deal(seed, {})
    if state.annulled or state.trischaken:
        return
    cp, x = independent_x(state)
    b = breakdown(state)
    assert b["side_points"] == cp and b["x"] == x
    declarer = state.declarer
    assert declarer is not None
    expected = [-x] * 4
    expected[declarer] = x if state.partner is not None else 3 * x
    if state.partner is not None:
        expected[state.partner] = x
    assert state.result().deltas == expected
