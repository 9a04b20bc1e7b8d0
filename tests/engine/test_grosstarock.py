"""Unit tests of the `grosstarock` variant (RULES.md §2, Dummett's classical Grosstarock).

Each test names the rule it checks.  Scenario deals are built card by card, and their play is
scripted or driven by a small policy; the expected payments are written out from RULES.md or
recomputed independently from the tricks (`ref_score`), never read back from the engine.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable

import pytest
from support import act, legal, new_deal
from support.rules import CODES, FACE_LETTERS, SUIT_LETTERS, card_value, codes, full_hands, reference_piles

from arena.engine import (
    Card,
    ConfigError,
    DealState,
    EngineError,
    IllegalActionError,
    Match,
    deck_for,
    find_variant,
    observation,
)
from arena.engine.scoring import settle_fool

# ---------------------------------------------------------------------------- spec tables

TAROKS = [f"T{n}" for n in range(1, 22)]
KINGS = ["SK", "HK", "DK", "CK"]
PIPS = [s + f for s in SUIT_LETTERS for f in FACE_LETTERS[:10]]  # G-PACK-5 Ladons
BLACK = FACE_LETTERS
RED = ["10", "9", "8", "7", "6", "5", "4", "3", "2", "A", "J", "C", "Q", "K"]
Policy = Callable[[DealState], "str | None"]



def strength(code: str) -> int:
    """DUM-TAB-2: G-RANK with red pips reversed; taroks above every suit card; EX lowest."""
    if code == "EX":
        return -1
    if code.startswith("T"):
        return 100 + int(code[1:])
    return (RED if code[0] in "HD" else BLACK).index(code[1:])



def cp(pile: Iterable[str]) -> int:
    pile = list(pile)
    assert len(pile) % 3 == 0
    return sum(card_value(c) for c in pile) - 2 * len(pile) // 3


# ---------------------------------------------------------------------------- reference (RULES §2)


def ref_combinations(
    hand: Iterable[str], all_blanks: bool = False
) -> dict[tuple[str, str | None], tuple[int, int]]:
    """DUM-DECL-3: {(name, suit): (size, value)} for a hand."""
    hand = set(hand)
    out: dict[tuple[str, str | None], tuple[int, int]] = {}
    n = sum(1 for c in hand if c.startswith("T") or c == "EX")
    if n >= 10:
        out[("taroks", None)] = (n, 10 + 5 * (n - 10))
    if {"T1", "EX", "T21"} <= hand:
        run, k = 0, 20
        while k >= 2 and f"T{k}" in hand:
            run, k = run + 1, k - 1
        m = 3 + run
        out[("matadors", None)] = (m, 10 + 5 * (m - 3))
    k = len(hand & {"SK", "HK", "DK", "CK", "T1", "EX", "T21"})
    if k >= 3:
        out[("kings", None)] = (k, 5 + 5 * (k - 3))
    for s in SUIT_LETTERS:
        courts = hand & {s + r for r in "KQCJ"}
        if len(courts) == 4:
            out[("cavallerie", s)] = (4, 10)
        elif len(courts) == 3 and "EX" in hand:
            out[("half_cavallerie", s)] = (4, 5)
    for name, r in (("four_queens", "Q"), ("four_cavaliers", "C"), ("four_jacks", "J")):
        if all(s + r in hand for s in SUIT_LETTERS):
            out[(name, None)] = (4, 5)
    ladons = [c for c in hand if c in PIPS or (all_blanks and c.startswith("T") and c not in ("T1", "T21"))]
    if len(ladons) >= 16:
        out[("ladons", None)] = (len(ladons), 15 + 5 * (len(ladons) - 16))
    return out


def dealt_hands(state: DealState) -> dict[int, list[str]]:
    """G-DEAL-1 from the deck, independently of the engine's dealing."""
    d = codes(state.deck)
    hands: dict[int, list[str]] = {s: [] for s in range(3)}
    for r in range(5):
        for k, seat in enumerate(state.order):
            hands[seat] += d[15 * r + 5 * k : 15 * r + 5 * k + 5]
    hands[state.dealer] += d[75:78]
    return hands



def vole_value(t: int) -> int:
    return 52 if t == 1 else 38 if t <= 13 else 31  # DUM-ANN-2


def nolo_values(t: int) -> tuple[int, int]:
    return (36, 10) if t == 1 else (31, 5)  # DUM-ANN-2


def ref_score(state: DealState, cancels: str = "all") -> dict[str, dict[int, int]]:
    """DUM-END-1: every seat's balance per rule, recomputed from the declarations, the
    announcements, the tricks and the skat."""
    out: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))

    def from_each(rule: str, seat: int, amount: int) -> None:
        for other in range(3):
            if other != seat:
                out[rule][other] -= amount
                out[rule][seat] += amount

    hands = dealt_hands(state)
    hands[state.dealer] = [c for c in hands[state.dealer] if c not in codes(state.skat)]
    for d in state.declarations:
        combos = ref_combinations(hands[d.seat], state.variant.options.get("ladons") == "all_blanks")
        key = (d.combination.name, d.combination.suit)
        assert key in combos, f"untrue declaration {key} (DUM-DECL-1)"
        assert d.combination.size == combos[key][0], "declared below full size (DUM-DECL-1)"
        from_each("DUM-DECL-2", d.seat, combos[key][1])
    won = [sum(1 for t in state.tricks if t.winner == s) for s in range(3)]
    ann = {a.seat: (a.name, a.trick) for a in state.announcements}
    vole = next((s for s in range(3) if won[s] == 25), None)
    for seat, (name, t) in ann.items():
        if name == "vole" and seat != vole:
            from_each("DUM-BON-5", seat, -vole_value(t))
    if vole is not None:
        name, t = ann.get(vole, ("", 0))
        from_each("DUM-BON-5", vole, vole_value(t) if name == "vole" else 26)
    noloist = None
    if vole is None:
        trickless = [s for s in range(3) if won[s] == 0]
        noloist = trickless[0] if len(trickless) == 1 else None
        for seat, (name, t) in ann.items():
            if name == "nolo" and won[seat] > 0:
                from_each("DUM-BON-7", seat, -nolo_values(t)[1])
    if noloist is not None:
        name, t = ann.get(noloist, ("", 0))
        from_each("DUM-BON-6", noloist, nolo_values(t)[0] if name == "nolo" else 26)
    if noloist is None:
        piles = reference_piles(state)
        for s in range(3):
            out["DUM-CARD-1"][s] += cp(piles[s]) - 26
    if noloist is None or cancels == "cards_only":
        for trick in state.tricks:
            last = trick.number == 25
            for seat, card in trick.plays:
                sign = 1 if seat == trick.winner else -1
                if str(card) == "T1":
                    from_each("DUM-BON-3" if last else "DUM-BON-1", seat, sign * (15 if last else 5))
                elif str(card) in KINGS:
                    from_each("DUM-BON-4" if last else "DUM-BON-2", seat, sign * (10 if last else 5))
    return {rule: {s: v for s, v in seats.items() if v} for rule, seats in out.items() if any(seats.values())}


def engine_score(state: DealState) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for t in state.result().ledger:
        out[t.rule][t.source] -= t.amount
        out[t.rule][t.target] += t.amount
    return {rule: {s: v for s, v in seats.items() if v} for rule, seats in out.items() if any(seats.values())}


def transfers(state: DealState, rule: str) -> list[tuple[int, int, int]]:
    return sorted((t.source, t.target, t.amount) for t in state.result().ledger if t.rule == rule)


def assert_zero_sum(state: DealState) -> None:
    """G-PAY-3: every ledger sums to zero."""
    result = state.result()
    assert sum(result.deltas) == 0
    assert all(t.amount > 0 for t in result.ledger)


# ---------------------------------------------------------------------------- deal helpers



def drive(
    state: DealState,
    play: Policy | None = None,
    announce: Policy | None = None,
    declare: Policy | None = None,
    discard: Iterable[str] = (),
    until: Callable[[DealState], bool] | None = None,
) -> DealState:
    """Run the deal: the given discards (else the first legal ones), declarations and
    announcements from their policies (else pass), cards from `play` (else the first legal)."""
    pending = list(discard)
    while not state.is_terminal() and not (until and until(state)):
        phase = state.phase
        if phase == "discard":
            act(state, f"discard {pending.pop(0)}" if pending else str(state.legal_actions()[0]))
        elif phase == "declare":
            act(state, (declare(state) if declare else None) or "pass")
        elif phase == "announce":
            act(state, (announce(state) if announce else None) or "pass")
        else:
            act(state, (play(state) if play else None) or str(state.legal_actions()[0]))
    return state


def prefer_last(*cards: str) -> Policy:
    """Play the last legal card (highest index) that is not in `cards`, if any."""

    def policy(state: DealState) -> str | None:
        options = [str(a) for a in state.legal_actions()]
        return next((a for a in reversed(options) if a.split()[1] not in cards), options[0])

    return policy


def keep_last(*cards: str) -> Policy:
    """Play the first legal card that is not in `cards`, if any."""

    def policy(state: DealState) -> str | None:
        options = [str(a) for a in state.legal_actions()]
        return next((a for a in options if a.split()[1] not in cards), options[0])

    return policy


def announce_at(seat: int, name: str, trick: int) -> Policy:
    def policy(state: DealState) -> str | None:
        if state.turn == seat and state.trick_no == trick:
            assert f"announce {name}" in legal(state)
            return f"announce {name}"
        return None

    return policy


def random_deal(seed: int, options: dict[str, str] | None = None) -> DealState:
    state = DealState(find_variant("grosstarock", options or {}), seed % 3, deck_for(seed, 5))
    rng = random.Random(seed)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state


# Vole layout: forehand holds every tarok and every King and wins all 25 tricks.
VOLE_HAND = TAROKS + KINGS
OTHERS = [c for c in CODES if c not in VOLE_HAND and c != "EX"]  # 52 cards


def vole_deal(
    dealer: int = 0,
    announce: Policy | None = None,
    fool_trick: int = 1,
    declare: Policy | None = None,
    options: dict[str, str] | None = None,
) -> tuple[DealState, int, int, int]:
    """F holds T1…T21 and the four Kings (Kings first, then T2…T21, T1 in trick 25); M holds EX
    and 24 low cards and plays EX in `fool_trick`; D lays away three blanks."""
    m_hand = ["EX", *OTHERS[:24]]
    state = full_hands("grosstarock", dealer, {"F": VOLE_HAND, "M": m_hand}, options)
    f, m, d = state.order
    d_blanks = [c for c in codes(state.hands[d]) if card_value(c) == 1][:3]

    def play(s: DealState) -> str | None:
        if s.turn == f:
            return keep_last("T1")(s)
        if s.turn == m and s.trick_no == fool_trick:
            return "play EX"
        return keep_last("EX")(s)

    drive(state, play=play, announce=announce, declare=declare, discard=d_blanks)
    assert state.tricks_won[f] == 25
    return state, f, m, d


# Nolo layout: middlehand holds only the lowest pips and can never win a trick.
NOLO_HAND = [
    "SA",
    "S2",
    "S3",
    "S4",
    "S5",
    "S6",
    "S7",
    "CA",
    "C2",
    "C3",
    "C4",
    "C5",
    "C6",
    "H10",
    "H9",
    "H8",
    "H7",
    "H6",
    "H5",
    "D10",
    "D9",
    "D8",
    "D7",
    "D6",
    "D5",
]
NOLO_F = [
    "SK",
    "SQ",
    "SC",
    "SJ",
    "S8",
    "S9",
    "HK",
    "HQ",
    "HC",
    "HJ",
    "H4",
    "H3",
    "DK",
    "DQ",
    "T20",
    "T19",
    "T18",
    "T17",
    "T16",
    "T15",
    "T14",
    "T13",
    "T12",
    "T11",
    "T2",
]


def highest(state: DealState) -> str | None:
    """Lead or follow with the strongest legal card; a Fool is played as soon as it may follow."""
    options = [str(a).split()[1] for a in state.legal_actions()]
    if "EX" in options and state.trick:
        return "play EX"
    return "play " + max((c for c in options if c != "EX"), key=strength, default="EX")


def lowest(state: DealState) -> str | None:
    options = [str(a).split()[1] for a in state.legal_actions()]
    return "play " + min(options, key=strength)


def nolo_deal(
    announce: Policy | None = None, options: dict[str, str] | None = None, declare: Policy | None = None
) -> tuple[DealState, int, int, int]:
    """F and D (the dealer, with T21, T1 and EX) play their strongest cards; M plays his lowest."""
    state = full_hands("grosstarock", 0, {"F": NOLO_F, "M": NOLO_HAND}, options)
    f, m, d = state.order
    assert {"T21", "T1", "EX"} <= set(codes(state.hands[d]))

    def play(s: DealState) -> str | None:
        return lowest(s) if s.turn == m else highest(s)

    d_blanks = [c for c in codes(state.hands[d]) if card_value(c) == 1 and not c.startswith("T")][:3]
    drive(state, play=play, announce=announce, declare=declare, discard=d_blanks)
    assert state.tricks_won[m] == 0 and state.tricks_won[f] > 0 and state.tricks_won[d] > 0
    return state, f, m, d


# ---------------------------------------------------------------------------- 2.1 table, 2.2 deal


def test_dum_tab_1_three_players_clockwise() -> None:
    """DUM-TAB-1: exactly 3 players; clockwise: next(i) = i+1; forehand = dealer's left;
    the deal passes to the left."""
    variant = find_variant("grosstarock")
    assert variant.seats == 3 and variant.players == 3 and variant.clockwise
    for dealer in range(3):
        state = DealState(variant, dealer, deck_for(1, dealer))
        assert state.next_seat == (1, 2, 0)
        assert state.forehand == (dealer + 1) % 3
        assert state.order == (state.forehand, (dealer + 2) % 3, dealer)
    with pytest.raises(EngineError):  # no fourth seat
        DealState(variant, 3, deck_for(1, 0))
    match = Match(variant, seed=2, deals=4)
    dealers = []
    while not match.is_over():
        state = match.start_deal()
        dealers.append(state.dealer)
        drive(state)
        match.finish_deal(state)
    assert dealers == [0, 1, 2, 0]


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_dum_deal_1_hands_of_25_25_28(dealer: int) -> None:
    """DUM-DEAL-1: G-DEAL-1 gives forehand and middlehand 25 cards, the dealer 28."""
    state = DealState(find_variant("grosstarock"), dealer, deck_for(8, dealer))
    expected = dealt_hands(state)
    for seat in range(3):
        assert sorted(codes(state.hands[seat])) == sorted(expected[seat])
        assert len(state.hands[seat]) == (28 if seat == dealer else 25)
    assert state.phase == "discard" and state.turn == dealer


# ---------------------------------------------------------------------------- discard


def dealer_with(cards: list[str], dealer: int = 0) -> DealState:
    """A deal whose dealer holds `cards` completed with suit pips to 28 cards."""
    filler = [c for c in PIPS if c not in cards]
    hand = [*cards, *filler[: 28 - len(cards)]]
    state = new_deal("grosstarock", hands={dealer: hand}, dealer=dealer)
    assert sorted(codes(state.hands[dealer])) == sorted(hand)
    return state


def discardable(state: DealState) -> set[str]:
    return {a.split()[1] for a in legal(state)}


def test_dum_disc_1_three_cards_laid_away_count_for_the_dealer() -> None:
    """DUM-DISC-1: the dealer lays away exactly 3 cards; they are part of his pile (count for him)
    and are not a trick."""
    state = DealState(find_variant("grosstarock"), 1, deck_for(4, 1))
    for i in range(3):
        assert state.phase == "discard" and state.turn == 1
        act(state, str(state.legal_actions()[0]))
        assert len(state.hands[1]) == 27 - i and len(state.skat) == i + 1
    assert state.phase == "declare"
    skat = codes(state.skat)
    drive(state)
    piles = settle_fool(state)
    assert set(skat) <= set(codes(piles[1]))
    assert sum(state.tricks_won) == 25 and len(state.tricks) == 25
    assert state.result().card_points == [cp(reference_piles(state)[s]) for s in range(3)]
    assert sum(state.result().card_points) == 78


def test_dum_disc_2_never_a_king_or_t21() -> None:
    """DUM-DISC-2: a King or T21 is never laid away, even when taroks are free (DUM-DISC-3)."""
    state = dealer_with(["T1", "T21", "T7", *KINGS])
    cards = discardable(state)
    assert not cards & {"T21", *KINGS}
    assert {"T1", "T7"} <= cards
    for bad in ("SK", "T21"):
        with pytest.raises(IllegalActionError) as info:
            act(state, f"discard {bad}")
        assert info.value.rule == "DUM-DISC-2"


@pytest.mark.parametrize(
    ("taroks", "free"),
    [
        (["T1"], {"T1"}),
        (["T1", "T5"], {"T1", "T5"}),
        (["T1", "T5", "EX"], {"T1", "T5", "EX"}),  # EX is tarok-class and may go
        (["T1", "T5", "T21"], {"T1", "T5"}),  # T21 never
        (["T1", "T5", "T6", "T7"], set()),  # T1 and three others: none
        (["T1", "T5", "T6", "EX"], set()),  # EX counts among the others
        (["T5", "T6"], set()),  # no Pagat: none
        (["EX"], set()),  # the Sküs alone, without the Pagat
    ],
)
def test_dum_disc_3_tarok_class_only_with_pagat_and_two_others(taroks: list[str], free: set[str]) -> None:
    """DUM-DISC-3 (AMB-15): T1…T21 and EX are tarok-class; with T1 and at most two other
    tarok-class cards any of them except T21 may be laid away, otherwise none."""
    state = dealer_with(taroks)
    cards = discardable(state)
    assert cards & set(taroks) == free
    assert cards >= {c for c in codes(state.hands[0]) if c in PIPS}  # pips stay legal
    for card in set(taroks) - free - {"T21"}:
        with pytest.raises(IllegalActionError) as info:
            act(state, f"discard {card}")
        assert info.value.rule == "DUM-DISC-3"


def test_dum_disc_3_judged_on_the_28_cards() -> None:
    """DUM-DISC-3: with T1, T5 and EX all three may be laid away together."""
    state = dealer_with(["T1", "T5", "EX"])
    act(state, "discard T1")
    assert {"T5", "EX"} <= discardable(state)
    act(state, "discard T5", "discard EX")
    assert sorted(codes(state.skat)) == ["EX", "T1", "T5"]
    assert state.phase == "declare"


def test_dum_disc_4_fallback_opens_middle_taroks() -> None:
    """DUM-DISC-4: a dealer with all four Kings, all 21 taroks and EX (plus two cards) has fewer
    than 3 legal cards, so T2…T20 become legal — never a King, T1, T21 or EX."""
    state = dealer_with([*KINGS, *TAROKS, "EX", "S2", "H7"])
    middle = {f"T{n}" for n in range(2, 21)}
    assert discardable(state) == {"S2", "H7"} | middle
    act(state, "discard S2", "discard H7")
    assert discardable(state) == middle
    act(state, "discard T9")
    assert sorted(codes(state.skat)) == ["H7", "S2", "T9"]


def test_dum_disc_4_no_fallback_with_three_legal_cards() -> None:
    """DUM-DISC-4: with three or more legal cards the middle taroks stay forbidden."""
    state = dealer_with([*KINGS, *TAROKS[1:], "EX", "S2", "H7", "D5"])  # no T1: 28 cards
    assert discardable(state) == {"S2", "H7", "D5"}


# ---------------------------------------------------------------------------- declarations


def combos_of(
    hand: list[str], options: dict[str, str] | None = None
) -> dict[tuple[str, str | None], tuple[int, int]]:
    variant = find_variant("grosstarock", options or {})
    found = variant.combinations([Card.parse(c) for c in hand])
    out = {(c.name, c.suit): (c.size, c.value) for c in found}
    assert len(out) == len(found), "a combination found twice"
    return out


LOW = [c for c in PIPS if c[1:] in ("2", "3", "4")]  # 12 pips that form no combination


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # Taroks: n ≥ 10 among T1…T21 and EX: 10 + 5·(n − 10)
        (TAROKS[1:11], {("taroks", None): (10, 10)}),
        ([*TAROKS[1:10], "EX"], {("taroks", None): (10, 10)}),  # EX counts
        (TAROKS[1:10], {}),  # 9 taroks
        (TAROKS[1:13], {("taroks", None): (12, 20)}),
        ([*TAROKS[1:20], "EX"], {("taroks", None): (20, 60)}),
        # Matadors: T1, EX, T21 + unbroken run T20, T19, …: 10 + 5·(m − 3)
        (["T1", "EX", "T21"], {("matadors", None): (3, 10), ("kings", None): (3, 5)}),
        (["T1", "EX", "T21", "T20", "T19"], {("matadors", None): (5, 20), ("kings", None): (3, 5)}),
        (["T1", "EX", "T21", "T20", "T18"], {("matadors", None): (4, 15), ("kings", None): (3, 5)}),
        (  # the longest run: T1, EX, T21 and T20 … T2
            [*TAROKS, "EX"],
            {("matadors", None): (22, 105), ("taroks", None): (22, 70), ("kings", None): (3, 5)},
        ),
        (["T1", "EX", "T20", "T19"], {}),  # no T21: no Matadors (and only two Kings-class cards)
        (["T1", "T21", "T20", "T19", "SK"], {("kings", None): (3, 5)}),  # no EX: no Matadors
        # Kings: k ≥ 3 among the Kings and the three honours: 5 + 5·(k − 3)
        (["SK", "HK"], {}),
        (["SK", "HK", "T1"], {("kings", None): (3, 5)}),
        (KINGS, {("kings", None): (4, 10)}),
        ([*KINGS, "T1", "EX", "T21"], {("kings", None): (7, 25), ("matadors", None): (3, 10)}),
        # Cavallerie (K, Q, C, J of a suit) 10; Half Cavallerie (exactly three + EX) 5
        (["SK", "SQ", "SC", "SJ"], {("cavallerie", "S"): (4, 10)}),
        (["SK", "SQ", "SC", "SJ", "EX"], {("cavallerie", "S"): (4, 10)}),  # four + EX: no Half
        (["HK", "HQ", "HC", "EX"], {("half_cavallerie", "H"): (4, 5)}),
        (["DQ", "DC", "DJ", "EX"], {("half_cavallerie", "D"): (4, 5)}),
        (["CK", "CQ", "CC"], {}),  # three without EX
        (["CK", "CQ", "EX"], {}),  # two + EX
        (
            ["SK", "SQ", "SC", "SJ", "HK", "HQ", "HC", "HJ"],
            {("cavallerie", "S"): (4, 10), ("cavallerie", "H"): (4, 10)},
        ),
        # Four Queens, Four Cavaliers, Four Jacks: 5 each
        (["SQ", "HQ", "DQ", "CQ"], {("four_queens", None): (4, 5)}),
        (["SC", "HC", "DC", "CC"], {("four_cavaliers", None): (4, 5)}),
        (["SJ", "HJ", "DJ", "CJ"], {("four_jacks", None): (4, 5)}),
        (["SJ", "HJ", "DJ"], {}),
        # Ladons: ℓ ≥ 16 suit pips A…10: 15 + 5·(ℓ − 16)
        (PIPS[:15], {}),
        (PIPS[:16], {("ladons", None): (16, 15)}),
        (PIPS[:18], {("ladons", None): (18, 25)}),
        ([*PIPS[:14], "T5", "T6"], {}),  # taroks are not Ladons by default
    ],
)
def test_dum_decl_3_combinations_and_values(hand: list[str], expected: dict) -> None:
    """DUM-DECL-3: every combination, its size and its value formula."""
    assert combos_of(hand) == expected
    assert ref_combinations(hand) == expected  # the reference used by the deal tests agrees


@pytest.mark.parametrize(
    ("hand", "default", "all_blanks"),
    [
        ([*PIPS[:14], "T5", "T6"], None, (16, 15)),
        ([*PIPS[:10], *TAROKS[1:9]], None, (18, 25)),  # T2…T9 are blanks
        ([*PIPS[:15], "T1", "T21", "EX"], None, None),  # honours are never Ladons
        (PIPS[:17], (17, 20), (17, 20)),
    ],
)
def test_dum_decl_3_ladons_option(hand: list[str], default: tuple | None, all_blanks: tuple | None) -> None:
    """DUM-DECL-3/G-PACK-5 (AMB-16): Ladons are suit pips; option `ladons = all_blanks` counts
    every blank (T2…T20 too)."""
    assert combos_of(hand).get(("ladons", None)) == default
    assert combos_of(hand, {"ladons": "all_blanks"}).get(("ladons", None)) == all_blanks


def test_dum_decl_3_property_random_hands() -> None:
    """DUM-DECL-3: the combinations of 400 random 25-card hands, both Ladon options."""
    rng = random.Random(12)
    for _ in range(400):
        hand = rng.sample(CODES, 25)
        assert combos_of(hand) == ref_combinations(hand)
        assert combos_of(hand, {"ladons": "all_blanks"}) == ref_combinations(hand, all_blanks=True)


def declaring_deal(dealer: int = 0) -> DealState:
    """F: 12 taroks with T1 and EX, Cavallerie S, Four Queens, Kings (SK T1 EX); M: 25 pips."""
    f_hand = ["T1", "EX", *TAROKS[1:11], "SK", "SQ", "SC", "SJ", "HQ", "DQ", "CQ", *LOW[:6]]
    m_hand = [c for c in PIPS if c not in f_hand][:25]
    return full_hands("grosstarock", dealer, {"F": f_hand, "M": m_hand})


def test_dum_decl_1_order_from_dealer_clockwise_and_optional() -> None:
    """DUM-DECL-1: after the discard each player, beginning with the dealer and going clockwise,
    may declare; passing is allowed and an undeclared combination scores nothing."""
    for dealer in range(3):
        state = DealState(find_variant("grosstarock"), dealer, deck_for(21, dealer))
        for _ in range(3):
            act(state, str(state.legal_actions()[0]))
        seats = []
        while state.phase == "declare":
            seats.append(state.turn)
            assert "pass" in legal(state)
            act(state, "pass")
        assert seats == [dealer, (dealer + 1) % 3, (dealer + 2) % 3]
        drive(state)
        assert transfers(state, "DUM-DECL-2") == []
        assert_zero_sum(state)


def test_dum_decl_1_several_combinations_each_once_at_full_size() -> None:
    """DUM-DECL-1: a player may declare several combinations, each once, at full size (12 taroks
    are declared as 12); DUM-DECL-2: he receives each value from each opponent."""
    state = declaring_deal()
    f, m, d = state.order
    drive(state, until=lambda s: s.phase == "declare" and s.turn == f)
    offered = legal(state)
    assert {
        "declare taroks",
        "declare cavallerie S",
        "declare four_queens",
        "declare kings",
        "pass",
    } <= offered
    act(state, "declare taroks")
    assert "declare taroks" not in legal(state)
    act(state, "declare cavallerie S", "declare four_queens", "pass")
    decl = [(x.seat, x.combination.name, x.combination.size, x.combination.value) for x in state.declarations]
    assert decl == [(f, "taroks", 12, 20), (f, "cavallerie", 4, 10), (f, "four_queens", 4, 5)]
    drive(state)
    assert transfers(state, "DUM-DECL-2") == sorted([(o, f, v) for o in (m, d) for v in (20, 10, 5)])
    assert engine_score(state)["DUM-DECL-2"] == {f: 70, m: -35, d: -35}


def test_dum_decl_1_declaration_must_be_true() -> None:
    """DUM-DECL-1: a combination not held cannot be declared."""
    state = declaring_deal()
    f, _m, _d = state.order
    drive(state, until=lambda s: s.phase == "declare" and s.turn == f)
    for untrue in ("declare cavallerie H", "declare matadors", "declare four_jacks", "declare ladons"):
        with pytest.raises(IllegalActionError) as info:
            act(state, untrue)
        assert info.value.rule == "DUM-DECL-1"


@pytest.mark.parametrize(("laid_away", "offered"), [(["S2", "S3", "S4"], True), (["SJ", "S3", "S4"], False)])
def test_dum_decl_1_dealer_declares_from_hand_after_discard(laid_away: list[str], offered: bool) -> None:
    """DUM-DECL-1: the dealer declares from his 25 cards after the discard (a Jack laid away
    breaks his Four Jacks)."""
    hand = [
        "SJ",
        "HJ",
        "DJ",
        "CJ",
        "S2",
        "S3",
        "S4",
        *[c for c in PIPS if c[1:] in ("5", "6", "7", "8", "9", "10")][:21],
    ]
    state = new_deal("grosstarock", hands={0: hand}, dealer=0)
    drive(state, discard=laid_away, until=lambda s: s.phase == "declare")
    assert state.turn == 0
    assert ("declare four_jacks" in legal(state)) == offered
    if not offered:
        with pytest.raises(IllegalActionError):
            act(state, "declare four_jacks")


def test_dum_decl_4_5_public_content() -> None:
    """DUM-DECL-4/5: a declaration publishes its type, suit or rank and size (Taroks: with the EX
    and T1 flags); no card is shown."""
    state = declaring_deal()
    f, m, d = state.order
    drive(state, until=lambda s: s.phase == "declare" and s.turn == f)
    act(state, "declare taroks", "declare cavallerie S", "declare four_queens", "declare kings", "pass")
    for seat in (m, d):
        view = observation(state, seat)
        decls = view["declarations"]
        assert decls == [
            {"seat": f, "name": "taroks", "size": 12, "value": 20, "with_fool": True, "with_pagat": True},
            {"seat": f, "name": "cavallerie", "size": 4, "value": 10, "suit": "S"},
            {"seat": f, "name": "four_queens", "size": 4, "value": 5},
            {"seat": f, "name": "kings", "size": 3, "value": 5},
        ]


def test_dum_decl_4_taroks_flags_without_ex_or_pagat() -> None:
    """DUM-DECL-4: the flags say whether EX and T1 are among the declared taroks."""
    found = find_variant("grosstarock").combinations([Card.parse(c) for c in TAROKS[1:11]])
    (taroks,) = [c for c in found if c.name == "taroks"]
    assert taroks.public() == {
        "name": "taroks",
        "size": 10,
        "value": 10,
        "with_fool": False,
        "with_pagat": False,
    }
    found = find_variant("grosstarock").combinations([Card.parse(c) for c in ["EX", *TAROKS[1:10]]])
    (taroks,) = [c for c in found if c.name == "taroks"]
    assert (taroks.with_fool, taroks.with_pagat) == (True, False)


# ---------------------------------------------------------------------------- announcements


def recorder(log: list[tuple[int, int, frozenset[str]]], then: Policy | None = None) -> Policy:
    def policy(state: DealState) -> str | None:
        log.append((state.trick_no, state.turn, frozenset(legal(state))))
        return then(state) if then else None

    return policy


def test_dum_ann_1_3_first_round_follows_declarations_from_forehand() -> None:
    """DUM-ANN-1/3: the round before trick 1 follows the declarations; every player is asked from
    the leader (forehand) and may announce Vole or Nolo; the first Vole closes Vole."""
    state = DealState(find_variant("grosstarock"), 2, deck_for(3, 2))
    drive(state, until=lambda s: s.phase == "announce")
    assert len(state.history) == 3 + 3  # three discards, three passes
    f, m, d = state.order
    assert (state.trick_no, state.turn) == (1, f)
    assert legal(state) == {"announce vole", "announce nolo", "pass"}
    act(state, "pass")
    assert state.turn == m and legal(state) == {"announce vole", "announce nolo", "pass"}
    act(state, "announce vole")
    assert state.turn == d and legal(state) == {"announce nolo", "pass"}  # one Vole per deal
    act(state, "announce nolo")
    assert state.phase == "play" and state.turn == f
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(m, "vole", 1), (d, "nolo", 1)]
    for seat in range(3):
        assert observation(state, seat)["announcements"] == [
            {"seat": m, "name": "vole", "trick": 1},
            {"seat": d, "name": "nolo", "trick": 1},
        ]


def test_dum_ann_1_3_windows_in_the_vole_deal() -> None:
    """DUM-ANN-1/3: before trick t, the player who won every trick may announce Vole (t ≤ 20);
    players without a trick may announce Nolo (t ≤ 13); from the leader; nothing from trick 21."""
    log: list[tuple[int, int, frozenset[str]]] = []
    _state, f, m, d = vole_deal(dealer=2, announce=recorder(log))
    assert (f, m, d) == (0, 1, 2)
    by_trick: dict[int, list[tuple[int, frozenset[str]]]] = defaultdict(list)
    for t, seat, options in log:
        by_trick[t].append((seat, options))
    both = frozenset({"announce vole", "announce nolo", "pass"})
    vole = frozenset({"announce vole", "pass"})
    nolo = frozenset({"announce nolo", "pass"})
    assert by_trick[1] == [(f, both), (m, both), (d, both)]
    for t in range(2, 14):
        assert by_trick[t] == [(f, vole), (m, nolo), (d, nolo)], t
    for t in range(14, 21):
        assert by_trick[t] == [(f, vole)], t
    assert max(by_trick) == 20


def test_dum_ann_1_one_announcement_per_player() -> None:
    """DUM-ANN-1: a player who announced (here Nolo before trick 1) is not asked again; after the
    Vole is announced nobody else may announce Vole."""
    log: list[tuple[int, int, frozenset[str]]] = []
    rec = recorder(log)

    def announce(state: DealState) -> str | None:
        rec(state)
        if state.trick_no == 1 and state.turn == m_seat:
            return "announce nolo"
        if state.trick_no == 3 and state.turn == f_seat:
            return "announce vole"
        return None

    f_seat, m_seat = 1, 2  # dealer 0
    state, f, m, d = vole_deal(dealer=0, announce=announce)
    assert (f, m) == (f_seat, m_seat)
    assert all(seat != m for t, seat, _ in log if t > 1)
    assert [(t, seat) for t, seat, _ in log if t >= 3 and seat == f] == [(3, f)]
    assert all(opts == frozenset({"announce nolo", "pass"}) for t, seat, opts in log if seat == d and t > 1)
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(m, "nolo", 1), (f, "vole", 3)]


def test_dum_ann_3_property_rounds_in_random_deals() -> None:
    """DUM-ANN-1/3: in random deals with random answers, each round asks exactly the eligible
    players who have not announced, in playing order from the trick's leader, with the
    eligible announcements."""
    for seed in range(300):
        state = DealState(find_variant("grosstarock"), seed % 3, deck_for(seed, 9))
        rng = random.Random(seed)
        asked: list[tuple[int, int, frozenset[str], str]] = []
        while not state.is_terminal():
            action = rng.choice(state.legal_actions())
            if state.phase == "announce":
                asked.append((state.trick_no, state.turn, frozenset(legal(state)), str(action)))
            state.apply(action)
        expected = []
        announced: dict[int, str] = {}
        for t in range(1, 26):
            leader = state.forehand if t == 1 else state.tricks[t - 2].winner
            done = state.tricks[: t - 1]
            for seat in (leader, (leader + 1) % 3, (leader + 2) % 3):
                if seat in announced:
                    continue
                won = sum(1 for x in done if x.winner == seat)
                options = set()
                if t <= 20 and won == t - 1 and "vole" not in announced.values():
                    options.add("announce vole")
                if t <= 13 and won == 0:
                    options.add("announce nolo")
                if not options:
                    continue
                answer = asked[len(expected)][3] if len(expected) < len(asked) else "?"
                expected.append((t, seat, frozenset(options | {"pass"}), answer))
                if answer.startswith("announce"):
                    announced[seat] = answer.split()[1]
        assert asked == expected, seed


# ---------------------------------------------------------------------------- play


def test_dum_play_1_skus_led_second_card_defines_the_suit() -> None:
    """DUM-PLAY-1 (G-TRICK-3 `next_card`): the Sküs may be led; the second card (here a tarok)
    defines the led suit for the third player."""
    f_hand = ["EX", *[c for c in CODES if c[0] in "SH"][:24]]
    m_hand = ["T3", *[c for c in CODES if c[0] == "D"], *TAROKS[10:20]]
    state = full_hands("grosstarock", 0, {"F": f_hand, "M": m_hand})
    f, m, d = state.order
    drive(state, until=lambda s: s.phase == "play")
    act(state, "play EX")
    assert legal(state) == {f"play {c}" for c in m_hand}  # any card
    act(state, "play T3")
    d_taroks = [c for c in codes(state.hands[d]) if c.startswith("T")]
    assert d_taroks and legal(state) == {f"play {c}" for c in d_taroks}
    act(state, "play " + max(d_taroks, key=strength))
    trick = state.tricks[0]
    assert trick.suit == "T" and trick.winner == (d if max(d_taroks, key=strength) != "T1" else m)
    assert state.fool_debts == [(f, trick.winner, 1)]


@pytest.mark.parametrize("k", [1, 12, 22, 23, 24, 25])
def test_dum_play_2_skus_retained_until_22_captured_from_23(k: int) -> None:
    """DUM-PLAY-2: a Sküs played to tricks 1…22 is retained (exchange); in trick 23, 24 or 25 it
    is captured by the trick winner."""
    for seed in range(6):
        state = DealState(find_variant("grosstarock"), seed % 3, deck_for(seed, 30))
        holder = next(s for s in range(3) if Card.parse("EX") in state.hands[s])

        def play(s: DealState, holder: int = holder) -> str | None:
            if s.turn == holder:
                return "play EX" if s.trick_no == k else keep_last("EX")(s)
            return None

        drive(state, play=play)
        if "EX" in codes(state.skat):
            continue
        trick = state.tricks[k - 1]
        assert trick.card_of(holder) == Card.parse("EX")
        piles = settle_fool(state)
        if k >= 23:
            assert trick.fool_captured
            assert state.fool_debts == []
            assert "EX" in codes(piles[trick.winner])
        else:
            assert not trick.fool_captured
            assert state.fool_debts == [(holder, trick.winner, k)]
            owner_pile = codes(state.piles[holder]) + (codes(state.skat) if holder == state.dealer else [])
            assert ("EX" in codes(piles[holder])) == (len(owner_pile) > 1)
        assert {s: sorted(codes(p)) for s, p in enumerate(piles)} == {
            s: sorted(p) for s, p in reference_piles(state).items()
        }


# ---------------------------------------------------------------------------- bonuses


def test_dum_bon_1_to_5_unannounced_vole_full_ledger() -> None:
    """DUM-BON-5 unannounced Vole 26 from each, plus DUM-BON-2 (4 Kings won, 5 each), DUM-BON-3
    (T1 wins trick 25, 15 each, no DUM-BON-1 for it), DUM-CARD-1 (77 − 26) — by hand."""
    state, f, m, d = vole_deal()
    assert [codes(t.card_of(f) for t in state.tricks[:4])] == [KINGS]  # Kings in tricks 1…4
    assert str(state.tricks[24].card_of(f)) == "T1"
    assert transfers(state, "DUM-BON-5") == sorted([(m, f, 26), (d, f, 26)])
    assert transfers(state, "DUM-BON-2") == sorted([(m, f, 5), (d, f, 5)] * 4)
    assert transfers(state, "DUM-BON-3") == sorted([(m, f, 15), (d, f, 15)])
    assert transfers(state, "DUM-BON-1") == [] and transfers(state, "DUM-BON-4") == []
    result = state.result()
    assert result.card_points[f] == 77 and result.card_points[m] == 0 and result.card_points[d] == 1
    assert transfers(state, "DUM-CARD-1") == sorted([(m, f, 26), (d, f, 25)])
    assert result.deltas[f] == 2 * (26 + 20 + 15) + 51
    assert result.deltas[m] == -(26 + 20 + 15) - 26
    assert result.deltas[d] == -(26 + 20 + 15) - 25
    assert {t.rule for t in result.ledger} == {"DUM-BON-5", "DUM-BON-2", "DUM-BON-3", "DUM-CARD-1"}
    assert_zero_sum(state)


@pytest.mark.parametrize(("trick", "amount"), [(1, 52), (2, 38), (13, 38), (14, 31), (20, 31)])
def test_dum_bon_5_announced_vole_values(trick: int, amount: int) -> None:
    """DUM-BON-5/DUM-ANN-2: an announced Vole made receives 52 (before trick 1), 38 (2…13) or
    31 (14…20) from each instead of 26."""
    state, f, m, d = vole_deal(announce=announce_at(1, "vole", trick))
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(f, "vole", trick)]
    assert transfers(state, "DUM-BON-5") == sorted([(m, f, amount), (d, f, amount)])
    assert engine_score(state) == ref_score(state)
    assert_zero_sum(state)


def test_dum_bon_6_nolo_void_when_a_vole_is_made() -> None:
    """DUM-BON-6 (AMB-19): when a Vole is made nobody scores Nolo, and an announced Nolo is void
    (neither paid nor penalised)."""
    state, f, m, d = vole_deal(announce=announce_at(2, "nolo", 1))
    assert [(a.seat, a.name) for a in state.announcements] == [(m, "nolo")]
    assert state.tricks_won[m] == 0 and state.tricks_won[d] == 0
    assert transfers(state, "DUM-BON-6") == [] and transfers(state, "DUM-BON-7") == []
    assert transfers(state, "DUM-BON-5") == sorted([(m, f, 26), (d, f, 26)])


def test_dum_bon_5_vole_maker_who_announced_nolo_gets_26() -> None:
    """DUM-BON-5/6 (AMB-19): a player who announced Nolo and then wins every trick makes an
    unannounced Vole (26 from each); his Nolo is void, neither paid nor penalised."""
    state, f, m, d = vole_deal(announce=announce_at(1, "nolo", 1))
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(f, "nolo", 1)]
    assert transfers(state, "DUM-BON-5") == sorted([(m, f, 26), (d, f, 26)])
    assert transfers(state, "DUM-BON-6") == [] and transfers(state, "DUM-BON-7") == []
    assert engine_score(state) == ref_score(state)


def failing_vole_deal(announce: Policy | None = None) -> tuple[DealState, int, int, int]:
    """F: T2…T21, the Kings and S2 (led in trick 15); M holds T1 (lost on the first tarok lead)."""
    f_hand = [*TAROKS[1:], *KINGS, "S2"]
    m_hand = ["T1", "EX", *[s + f for s in SUIT_LETTERS for f in FACE_LETTERS[:6] if s + f != "S2"]]
    state = full_hands("grosstarock", 0, {"F": f_hand, "M": m_hand})
    f, m, d = state.order

    def play(s: DealState) -> str | None:
        if s.turn == f:
            if s.trick_no == 15:
                return "play S2"
            return keep_last("S2")(s)
        return prefer_last("EX")(s)

    blanks = [c for c in codes(state.hands[d]) if card_value(c) == 1][:3]
    drive(state, play=play, announce=announce, discard=blanks)
    assert state.tricks_won[f] == 24 and state.tricks[14].winner != f
    return state, f, m, d


def test_dum_bon_5_failed_vole_pays_its_value_and_unannounced_cannot_fail() -> None:
    """DUM-BON-5: a failed announced Vole (here announced before trick 14) pays 31 to each, the
    deal otherwise scored as usual; winning 24 tricks without announcing costs nothing."""
    state, f, m, d = failing_vole_deal(announce=announce_at(1, "vole", 14))
    assert transfers(state, "DUM-BON-5") == sorted([(f, m, 31), (f, d, 31)])
    # Scored as if no Vole had been announced: M won no trick, so DUM-BON-6 applies (and
    # cancels the card settlement and DUM-BON-1…4), while the failed Vole is still paid.
    assert state.tricks_won[m] == 0 and state.tricks_won[d] == 1
    assert transfers(state, "DUM-BON-6") == sorted([(f, m, 26), (d, m, 26)])
    assert {t.rule for t in state.result().ledger} == {"DUM-BON-5", "DUM-BON-6"}
    assert engine_score(state) == ref_score(state)
    quiet, *_ = failing_vole_deal()
    assert transfers(quiet, "DUM-BON-5") == []
    assert engine_score(quiet) == ref_score(quiet)
    # Apart from DUM-BON-5, the two deals score alike.
    loud = engine_score(state)
    loud.pop("DUM-BON-5")
    assert loud == engine_score(quiet)


@pytest.mark.parametrize(("trick", "amount"), [(1, 52), (3, 38)])
def test_dum_bon_5_failed_vole_other_windows(trick: int, amount: int) -> None:
    """DUM-BON-5: a Vole announced before trick 1 (52) or trick 3 (38) that fails pays that."""
    state, f, m, d = failing_vole_deal(announce=announce_at(1, "vole", trick))
    assert transfers(state, "DUM-BON-5") == sorted([(f, m, amount), (f, d, amount)])
    assert engine_score(state) == ref_score(state)


def _nolo_expectations(state: DealState, f: int, m: int, d: int) -> dict[str, dict[int, int]]:
    ref = ref_score(state, cancels="cards_only")
    assert any(rule in ref for rule in ("DUM-BON-1", "DUM-BON-2", "DUM-BON-3", "DUM-BON-4"))
    piles = reference_piles(state)
    assert any(cp(piles[s]) != 26 for s in range(3))
    return ref


def test_dum_bon_6_unannounced_nolo_cancels_cards_and_bonuses() -> None:
    """DUM-BON-6/DUM-END-1: exactly one player without a trick receives 26 from each; the card
    settlement and the Pagat and King payments DUM-BON-1…4 of the deal are cancelled."""
    state, f, m, d = nolo_deal()
    _nolo_expectations(state, f, m, d)
    assert transfers(state, "DUM-BON-6") == sorted([(f, m, 26), (d, m, 26)])
    assert {t.rule for t in state.result().ledger} == {"DUM-BON-6"}
    assert state.result().deltas[m] == 52
    assert engine_score(state) == ref_score(state)


def test_dum_bon_6_declarations_still_apply_with_a_nolo() -> None:
    """DUM-BON-6: a successful Nolo leaves the declarations standing (both options)."""
    f_seat = 1  # forehand of dealer 0

    def declare(s: DealState) -> str | None:
        if s.turn == f_seat and "declare cavallerie S" in legal(s):
            return "declare cavallerie S"
        return None

    for options in ({}, {"nolo_cancels": "cards_only"}):
        state, f, m, d = nolo_deal(options=options, declare=declare)
        assert f == f_seat
        assert transfers(state, "DUM-DECL-2") == sorted([(m, f, 10), (d, f, 10)])
        assert transfers(state, "DUM-BON-6") == sorted([(f, m, 26), (d, m, 26)])
        assert "DUM-CARD-1" not in engine_score(state)
        assert engine_score(state) == ref_score(state, options.get("nolo_cancels", "all"))


def test_dum_bon_6_nolo_cancels_cards_only_option() -> None:
    """DUM-BON-6 option `nolo_cancels = cards_only`: only DUM-CARD-1 is cancelled; DUM-BON-1…4
    are paid as usual."""
    state, f, m, d = nolo_deal(options={"nolo_cancels": "cards_only"})
    ref = _nolo_expectations(state, f, m, d)
    got = engine_score(state)
    assert "DUM-CARD-1" not in got
    assert got["DUM-BON-6"] == {m: 52, f: -26, d: -26}
    for rule in ("DUM-BON-1", "DUM-BON-2", "DUM-BON-3", "DUM-BON-4"):
        assert got.get(rule) == ref.get(rule), rule
    assert got == ref
    assert_zero_sum(state)


@pytest.mark.parametrize(("trick", "amount"), [(1, 36), (2, 31), (13, 31)])
def test_dum_bon_6_announced_nolo_values(trick: int, amount: int) -> None:
    """DUM-BON-6/DUM-ANN-2: an announced Nolo made receives 36 (before trick 1) or 31 (2…13)."""
    state, f, m, d = nolo_deal(announce=announce_at(2, "nolo", trick))
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(m, "nolo", trick)]
    assert transfers(state, "DUM-BON-6") == sorted([(f, m, amount), (d, m, amount)])
    assert {t.rule for t in state.result().ledger} == {"DUM-BON-6"}


def test_dum_ann_2_no_nolo_from_trick_14() -> None:
    """DUM-ANN-2: Nolo may not be announced before trick 14 or later."""
    log: list[tuple[int, int, frozenset[str]]] = []
    _state, _f, m, _d = nolo_deal(announce=recorder(log))
    asks_m = [t for t, seat, _ in log if seat == m]
    assert asks_m == list(range(1, 14))
    assert all(t <= 20 for t, _, _ in log)


def test_dum_bon_7_failed_nolo_with_another_players_nolo() -> None:
    """DUM-BON-7: a failed announced Nolo pays its penalty (10) to each; since another player
    scores a Nolo, card settlement and DUM-BON-1…4 stay cancelled (DUM-BON-6)."""
    state, f, m, d = nolo_deal(announce=announce_at(1, "nolo", 1))
    assert [(a.seat, a.name, a.trick) for a in state.announcements] == [(f, "nolo", 1)]
    assert transfers(state, "DUM-BON-7") == sorted([(f, m, 10), (f, d, 10)])
    assert transfers(state, "DUM-BON-6") == sorted([(f, m, 26), (d, m, 26)])
    assert {t.rule for t in state.result().ledger} == {"DUM-BON-6", "DUM-BON-7"}
    assert engine_score(state) == ref_score(state)


@pytest.mark.parametrize(("trick", "penalty"), [(1, 10), (2, 5), (5, 5), (13, 5)])
def test_dum_bon_7_failed_nolo_otherwise_normal_payments(trick: int, penalty: int) -> None:
    """DUM-BON-7: a failed Nolo announced before trick 1 pays 10 to each, before trick 2…13
    pays 5; with no Nolo made, card settlement and DUM-BON-1…4 are made as usual."""
    found = 0
    for seed in range(300):
        state = DealState(find_variant("grosstarock"), seed % 3, deck_for(seed, 40))
        announcer = state.order[seed % 3]

        def announce(s: DealState, announcer: int = announcer) -> str | None:
            if s.turn == announcer and s.trick_no == trick and "announce nolo" in legal(s):
                return "announce nolo"
            return None

        drive(state, announce=announce)
        if [(a.seat, a.name, a.trick) for a in state.announcements] != [(announcer, "nolo", trick)]:
            continue
        if 0 in state.tricks_won:
            continue
        found += 1
        assert transfers(state, "DUM-BON-7") == sorted(
            (announcer, o, penalty) for o in range(3) if o != announcer
        )
        got = engine_score(state)
        assert "DUM-CARD-1" in got and got == ref_score(state)
        if found == 3:
            break
    assert found == 3


def _hold_till_last(state: DealState) -> str | None:
    """Keep T1 and the Kings for the end of the deal."""
    options = [str(a).split()[1] for a in state.legal_actions()]
    keep = {"T1", *KINGS}
    return "play " + next((c for c in options if c not in keep), options[0])


def _search(condition: Callable[[DealState], bool], count: int = 2) -> list[DealState]:
    found = []
    for seed in range(400):
        state = DealState(find_variant("grosstarock"), seed % 3, deck_for(seed, 50))
        drive(state, play=_hold_till_last)
        if 0 not in state.tricks_won and condition(state):
            found.append(state)
            if len(found) == count:
                break
    assert len(found) == count, "no deal found"
    return found


def _last_trick(state: DealState, card: str) -> tuple[int, bool] | None:
    last = state.tricks[24]
    for seat, c in last.plays:
        if str(c) == card:
            return seat, seat == last.winner
    return None


@pytest.mark.parametrize("won", [True, False])
def test_dum_bon_3_pagat_ultimo(won: bool) -> None:
    """DUM-BON-3 (AMB-06): T1 winning trick 25 receives 15 from each; T1 lost in trick 25 pays 15
    to each; no DUM-BON-1 payment for that trick."""

    def pagat_last(state: DealState) -> bool:
        found = _last_trick(state, "T1")
        return found is not None and found[1] == won

    for state in _search(pagat_last):
        seat, _ = _last_trick(state, "T1")  # type: ignore[misc]
        others = [o for o in range(3) if o != seat]
        expected = [(o, seat, 15) for o in others] if won else [(seat, o, 15) for o in others]
        assert transfers(state, "DUM-BON-3") == sorted(expected)
        assert transfers(state, "DUM-BON-1") == []
        assert engine_score(state) == ref_score(state)


@pytest.mark.parametrize("won", [True, False])
def test_dum_bon_4_king_ultimo(won: bool) -> None:
    """DUM-BON-4 (AMB-06): a King winning trick 25 receives 10 from each; every King lost in trick
    25 pays 10 to each; those Kings get no DUM-BON-2 payment."""

    def king_in_last(state: DealState) -> bool:
        last = state.tricks[24]
        return any(c.is_king and (seat == last.winner) == won for seat, c in last.plays)

    for state in _search(king_in_last):
        last = state.tricks[24]
        balance = defaultdict(int)
        for seat, c in last.plays:
            if c.is_king:
                sign = 1 if seat == last.winner else -1
                for o in range(3):
                    if o != seat:
                        balance[seat] += 10 * sign
                        balance[o] -= 10 * sign
        assert engine_score(state).get("DUM-BON-4") == {s: v for s, v in balance.items() if v}
        kings_before = sum(1 for t in state.tricks[:24] for _, c in t.plays if c.is_king)
        assert len(transfers(state, "DUM-BON-2")) == 2 * kings_before
        assert engine_score(state) == ref_score(state)


def test_dum_bon_1_2_pagat_and_kings_in_tricks_1_to_24() -> None:
    """DUM-BON-1/2: in tricks 1…24, T1 or a King that wins receives 5 from each; lost, its
    player pays 5 to each (checked on deals where T1 is lost and won early)."""
    seen = set()
    for seed in range(200):
        state = random_deal(seed)
        if 0 in state.tricks_won:
            continue
        for trick in state.tricks[:24]:
            for seat, c in trick.plays:
                if str(c) == "T1":
                    won = seat == trick.winner
                    others = [o for o in range(3) if o != seat]
                    expected = [(o, seat, 5) for o in others] if won else [(seat, o, 5) for o in others]
                    assert transfers(state, "DUM-BON-1") == sorted(expected)
                    seen.add(won)
        assert engine_score(state).get("DUM-BON-2") == ref_score(state).get("DUM-BON-2")
        if seen == {True, False} and seed > 50:
            break
    assert seen == {True, False}


# ---------------------------------------------------------------------------- card settlement


def test_dum_card_1_example_40_20_18() -> None:
    """DUM-CARD-1: [S2]'s example A 40, B 20, C 18 → B pays 6 to A, C pays 8 to A, A +14."""
    for seed in range(3000):
        state = DealState(find_variant("grosstarock"), seed % 3, deck_for(1, seed))
        rng = random.Random(seed)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
        points = state.result().card_points
        if sorted(points) == [18, 20, 40] and 0 not in state.tricks_won:
            break
    else:
        pytest.fail("no 40/20/18 deal found")
    a, b, c = (points.index(x) for x in (40, 20, 18))
    assert transfers(state, "DUM-CARD-1") == sorted([(b, a, 6), (c, a, 8)])
    assert engine_score(state)["DUM-CARD-1"] == {a: 14, b: -6, c: -8}


def test_dum_card_1_one_player_below_pays_each_excess() -> None:
    """DUM-CARD-1: with two players above 26, the one below pays each his excess."""
    for seed in range(500):
        state = random_deal(seed)
        points = state.result().card_points
        if 0 not in state.tricks_won and sum(1 for p in points if p > 26) == 2 and min(points) < 26:
            break
    else:
        pytest.fail("no such deal")
    loser = points.index(min(points))
    expected = sorted((loser, s, points[s] - 26) for s in range(3) if s != loser)
    assert transfers(state, "DUM-CARD-1") == expected


# ---------------------------------------------------------------------------- deal result


@pytest.mark.parametrize("cancels", ["all", "cards_only"])
def test_dum_end_1_property_random_deals(cancels: str) -> None:
    """DUM-END-1: the deal result = declarations + card result + DUM-BON-1…7, rule by rule, for
    random deals with random declarations and announcements (both `nolo_cancels` options);
    ΣCP = 78 (DUM-CARD-1) and every ledger sums to zero (G-PAY-3)."""
    options = {"nolo_cancels": cancels} if cancels != "all" else {}
    rules_seen: set[str] = set()
    for seed in range(600):
        state = random_deal(seed, options)
        ref = ref_score(state, cancels)
        assert engine_score(state) == ref, seed
        result = state.result()
        for seat in range(3):
            assert result.deltas[seat] == sum(v.get(seat, 0) for v in ref.values())
        assert sum(result.card_points) == 78
        assert_zero_sum(state)
        rules_seen |= set(ref)
    assert {"DUM-DECL-2", "DUM-CARD-1", "DUM-BON-1", "DUM-BON-2", "DUM-BON-5", "DUM-BON-7"} <= rules_seen


def test_dum_end_1_options_are_validated() -> None:
    """The two `nolo_cancels` values are `all` (default) and `cards_only`; anything else is refused."""
    assert find_variant("grosstarock").options["nolo_cancels"] == "all"
    assert find_variant("grosstarock", {"nolo_cancels": "cards_only"}).options["nolo_cancels"] == "cards_only"
    with pytest.raises(ConfigError):
        find_variant("grosstarock", {"nolo_cancels": "none"})
    with pytest.raises(ConfigError):
        find_variant("grosstarock", {"ladons": "taroks"})
