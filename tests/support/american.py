"""Crafted `american` deals for its rule tests (RULES §5, with the AMB entries it cites).

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.engine import (
    CARDS,
    Card,
    DealState,
    find_variant,
)

from . import act, legal

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


# Cards by rank, as the call ladder names them (AM-CALL-1).
KINGS = ["SK", "HK", "DK", "CK"]
COURTS = {suit: [suit + face for face in ("J", "C", "Q", "K")] for suit in "SHDC"}
QUEENS = ["SQ", "HQ", "DQ", "CQ"]
CAVALIERS = ["SC", "HC", "DC", "CC"]
JACKS = ["SJ", "HJ", "DJ", "CJ"]
MIDDLE = [f"T{n}" for n in range(2, 21)]


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
