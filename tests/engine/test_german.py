"""Rule tests for the variant `german-1754` (RULES.md §3), with 3 and with 4 seated players.

Every test names the rule it checks (G54-…, and the AMB entries of §7 that §3 cites).
Full deals are driven by `drive`, a small policy: each seat plays the first legal card of
its preference list, otherwise its lowest-index legal card that it is not holding back.
Expected numbers are worked out by hand in the comments, or, for random deals, by an
independent reference model of §3 written in this file (`reference_score`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest
from support import act, legal, new_deal
from support.rules import codes

from arena.engine import (
    CARDS,
    Card,
    DealState,
    IllegalActionError,
    Match,
    find_variant,
    observation,
)

NAME = "german-1754"
EX = Card.parse("EX")
T1 = Card.parse("T1")
T21 = Card.parse("T21")
KINGS = {Card.parse(c) for c in ("SK", "HK", "DK", "CK")}
ALLOWED_RULES = {"G54-CARD-1", "G54-DECL-1", "G54-FOOL-5", "G54-BON-1", "G54-BON-2", "G54-BON-3"}


def T(lo: int, hi: int) -> list[str]:
    return [f"T{i}" for i in range(lo, hi + 1)]


# Suit pips (no court card, no King, no tarok, no Excuse): fillers that form no combination.
PIPS = [s + r for s in "SHDC" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10")]


def full(cards: Iterable[str], n: int = 25) -> list[str]:
    """`cards` topped up to `n` cards with pips, so the hand holds nothing unintended."""
    cards = list(cards)
    extra = [p for p in PIPS if p not in cards][: n - len(cards)]
    assert len(cards) + len(extra) == n
    return cards + extra


def table(spec: dict[int, list[str]], dealer: int = 0) -> dict[int, list[str]]:
    """Complete each listed hand (25 cards, the dealer 28) with pips that no listed seat holds."""
    used = {c for cards in spec.values() for c in cards}
    spare = iter(p for p in PIPS if p not in used)
    out = {}
    for seat, cards in spec.items():
        n = 28 if seat == dealer else 25
        out[seat] = list(cards) + [next(spare) for _ in range(n - len(cards))]
    return out


def deal3(hands, dealer: int = 0) -> DealState:
    return new_deal(NAME, hands, dealer=dealer, options={"players": 3})


def deal4(hands, dealer: int = 0) -> DealState:
    return new_deal(NAME, hands, dealer=dealer, options={"players": 4})



def drive(state: DealState, order=None, keep=None, discard=(), declare=None, until=None) -> DealState:
    """Play on with a fixed policy (see the module docstring).

    discard: cards the dealer lays away (else his lowest-index legal cards); declare:
    {seat: [declaration texts]} made before passing (else everybody passes); until:
    stop as soon as until(state) is true.
    """
    order = {s: [Card.parse(c) for c in cs] for s, cs in (order or {}).items()}
    keep = {s: {Card.parse(c) for c in cs} for s, cs in (keep or {}).items()}
    declare = {s: list(ds) for s, ds in (declare or {}).items()}
    wanted = [Card.parse(c) for c in discard]
    while not state.is_terminal():
        if until is not None and until(state):
            break
        seat = state.current_player
        acts = state.legal_actions()
        if state.phase == "discard":
            if wanted:
                card = wanted.pop(0)
                pick = next((a for a in acts if a.card == card), None)
                assert pick is not None, f"discard {card} is not legal here"
            else:
                pick = acts[0]
        elif state.phase == "declare":
            todo = declare.get(seat, [])
            text = todo.pop(0) if todo else "pass"
            pick = next(a for a in acts if str(a) == text)
        else:
            by_card = {a.card: a for a in acts}
            pick = next((by_card[c] for c in order.get(seat, []) if c in by_card), None)
            if pick is None:
                free = [a for a in acts if a.card not in keep.get(seat, set())]
                pick = min(free or acts, key=lambda a: a.card)
        state.apply(pick)
    return state


def to_first_trick(state: DealState, discard: Iterable[str] = ()) -> DealState:
    """Discard (given cards, else the lowest legal ones) and pass every declaration."""
    return drive(state, discard=discard, until=lambda s: s.phase == "play")


def transfers(state: DealState, rule: str) -> set[tuple[int, int, int]]:
    return {(t.source, t.target, t.amount) for t in state.result().ledger if t.rule == rule}


def check_ledger(state: DealState) -> None:
    """G-PAY-3 and G54-TAB-2: zero sum, deltas = ledger balances, nobody outside the deal pays."""
    r = state.result()
    assert sum(r.deltas) == 0
    assert len(r.deltas) == state.seats
    for seat in range(state.seats):
        balance = sum(t.amount for t in r.ledger if t.target == seat) - sum(
            t.amount for t in r.ledger if t.source == seat
        )
        assert balance == r.deltas[seat]
    active = set(state.order)
    for t in r.ledger:
        assert t.amount > 0
        assert t.source in active and t.target in active
        assert t.rule in ALLOWED_RULES
    assert sum(r.card_points[s] for s in active) == 78
    assert len(state.tricks) == 25
    if state.sitting_out is not None:
        assert r.deltas[state.sitting_out] == 0
        assert r.card_points[state.sitting_out] == 0


# --------------------------------------------------------------------------- reference model of §3


def value(card: int) -> int:
    """G-CP-1 card values."""
    c = Card(card)
    if c in (T1, T21, EX) or c.is_king:
        return 5
    if c.is_tarok:
        return 1
    return {13: 4, 12: 3, 11: 2}.get(c.face, 1)


def strength(card: int) -> int:
    """G54-TAB-3: rank within the led suit; red pips reversed; taroks above every suit card."""
    c = Card(card)
    if c.is_tarok:
        return 100 + c.face
    if c.suit in "HD" and c.face <= 10:
        return 11 - c.face
    return c.face


def trick_winner(plays) -> int:
    led = Card(plays[0][1]).suit
    taroks = [(strength(c), s) for s, c in plays if Card(c).is_tarok]
    if taroks:
        return max(taroks)[1]
    return max((strength(c), s) for s, c in plays if Card(c).suit == led)[1]


def combinations(hand: Iterable[int]) -> dict[str, int]:
    """G54-DECL-1: action text → value, for every declaration the hand qualifies for."""
    h = {Card(c) for c in hand}
    out: dict[str, int] = {}
    n = sum(1 for c in h if c.is_tarok or c == EX)
    if n >= 10:
        out["declare taroks"] = 10 + 5 * (n - 10)
    if {T1, EX, T21} <= h:
        m, k = 3, 20
        while k >= 2 and Card.parse(f"T{k}") in h:
            m, k = m + 1, k - 1
        out["declare matadors"] = 10 + 5 * (m - 3)
    for s in "SHDC":
        courts = sum(1 for r in "KQCJ" if Card.parse(s + r) in h)
        if courts == 4:
            out[f"declare whole_cavalry {s}"] = 10
        elif courts == 3 and EX in h:
            out[f"declare half_cavalry {s}"] = 5
    kings = len(KINGS & h)
    if kings == 4:
        out["declare four_kings"] = 10
    elif kings == 3 and EX in h:
        out["declare three_kings"] = 5
    return out


def reference_discard_pool(hand: Iterable[int]) -> set[Card]:
    """G54-DISC-1…3 (AMB-17, AMB-50): the cards of the dealer's 28 that may be laid away."""
    h = {Card(c) for c in hand}
    taroks = {c for c in h if c.is_tarok}
    pool = {c for c in h if not c.is_king and not c.is_tarok and c != EX}
    if T1 in taroks and len(taroks) == 3:
        pool |= taroks  # (a)
    if T1 in taroks and EX in h and len(taroks) == 2:
        pool |= taroks | {EX}  # (b)
    if len(pool) < 3:
        pool |= taroks - {T1, T21}  # G54-DISC-3 fallback
    return pool


def clumpy_deck(rng: random.Random) -> list[Card]:
    """The canonical deck with a few random swaps: hands full of runs (courts, taroks), so
    declarations and the discard exceptions occur often."""
    deck = list(CARDS)
    for _ in range(rng.randrange(5, 40)):
        i, j = rng.randrange(78), rng.randrange(78)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def next_seat(state: DealState, seat: int) -> int:
    """G54-TAB-1/2: anticlockwise, skipping the seat that sits out."""
    n = state.seats
    out = (state.dealer + 2) % 4 if n == 4 else None
    s = (seat - 1) % n
    if s == out:
        s = (s - 1) % n
    return s


def reference_play_legal(state: DealState) -> set[str]:
    """G-TRICK-4 with G54-PLAY-1 and G54-FOOL-1…3, from the player's observation only."""
    seat = state.current_player
    view = observation(state, seat)
    hand = [Card.parse(c) for c in view["hand"]]
    trick = view.get("trick", {}).get("cards", [])
    if not trick:
        return {f"play {c}" for c in hand if c != EX}
    led = Card.parse(trick[0][1]).suit
    has_led = any(c.suit == led for c in hand)
    has_tarok = any(c.is_tarok for c in hand)
    if EX in hand and (view["trick_number"] >= 23 or (not has_led and not has_tarok)):
        return {"play EX"}
    if has_led:
        cards = [c for c in hand if c.suit == led]
    elif has_tarok:
        cards = [c for c in hand if c.is_tarok]
    else:
        cards = hand
    return {f"play {c}" for c in cards} | ({"play EX"} if EX in hand else set())


def reference_score(state: DealState) -> tuple[dict[int, int], list[int]]:
    """(card points, deltas) of a finished deal under §3, computed from the trick history."""
    active = list(state.order)
    piles: dict[int, list[int]] = {s: [] for s in active}
    won = {s: 0 for s in active}
    debts = []
    for t in state.tricks:
        w = trick_winner(t.plays)
        assert w == t.winner
        won[w] += 1
        for seat, card in t.plays:
            if card == EX:
                piles[seat].append(card)  # G54-FOOL-1: retained
                debts.append((seat, w))
            else:
                piles[w].append(card)
    piles[state.dealer].extend(state.skat)  # G54-DISC-1
    for owner, creditor in debts:  # G-TRICK-7
        others = [c for c in piles[owner] if c != EX]
        give = min(others, key=lambda c: (value(c), c)) if others else EX
        piles[owner].remove(give)
        piles[creditor].append(give)
    cp = {}
    for s in active:
        assert len(piles[s]) % 3 == 0  # G-CP-3
        cp[s] = sum(value(c) for c in piles[s]) - 2 * len(piles[s]) // 3
    delta = [0] * state.seats

    def from_each(seat: int, amount: int) -> None:
        for other in active:
            if other != seat:
                delta[other] -= amount
                delta[seat] += amount

    for s in active:
        delta[s] += cp[s] - 26  # G54-CARD-1
    for d in state.declarations:
        hand_value = {"taroks": lambda n: 10 + 5 * (n - 10), "matadors": lambda m: 10 + 5 * (m - 3)}
        c = d.combination
        v = (
            hand_value[c.name](c.size)
            if c.name in hand_value
            else {"whole_cavalry": 10, "half_cavalry": 5, "four_kings": 10, "three_kings": 5}[c.name]
        )
        from_each(d.seat, v)  # G54-DECL-1
    if EX in state.skat:
        owner = state.dealer  # AMB-51
    else:
        owner = next((s for t in state.tricks for s, c in t.plays if c == EX), None)
    if owner is not None and won[owner] == 0:
        from_each(owner, 4)  # G54-FOOL-5
    for t in state.tricks:
        for seat, card in t.plays:
            if card != T1:
                continue
            if t.number == 25:
                from_each(seat, 10 if seat == t.winner else -10)  # G54-BON-2/3
            elif seat != t.winner:
                from_each(seat, -5)  # G54-BON-1
    return cp, delta


# --------------------------------------------------------------------------- G54-TAB-1 / G54-TAB-2


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_g54_tab_1_three_players_anticlockwise_forehand_is_dealers_right(dealer):
    """G54-TAB-1, G-SEAT-2/8: next(i) = i−1; order F = d−1, M = d−2, D = d."""
    s = deal3({}, dealer=dealer)
    assert s.sitting_out is None
    assert s.order == ((dealer - 1) % 3, (dealer - 2) % 3, dealer)
    assert s.forehand == (dealer - 1) % 3
    assert [len(s.hand(x)) for x in s.order] == [25, 25, 28]


def test_g54_tab_1_forehand_leads_trick_1_and_play_runs_anticlockwise():
    """G54-TAB-1 (AMB-25): forehand (dealer's right) leads; each trick runs leader, leader−1, …;
    the winner leads the next trick."""
    s = to_first_trick(deal3({}, dealer=1))
    assert s.trick_no == 1 and s.current_player == 0  # forehand of dealer 1
    seen = []
    for _ in range(3):
        seen.append(s.current_player)
        s.apply(s.legal_actions()[0])
    assert seen == [0, 2, 1]
    assert s.tricks[0].leader == 0
    assert s.trick_no == 2 and s.current_player == s.tricks[0].winner


def test_g54_tab_1_deal_passes_to_the_right_in_a_match():
    """G54-TAB-1, G-SEAT-5: with 3 players the dealers are 0, 2, 1, 0, …; forehand = dealer − 1."""
    m = Match(find_variant(NAME, {"players": "3"}), seed=11, deals=6)
    dealers = []
    while not m.is_over():
        s = m.start_deal()
        dealers.append(s.dealer)
        assert s.forehand == (s.dealer - 1) % 3
        drive(s)
        before = list(m.scores)
        r = m.finish_deal(s)
        assert [a - b for a, b in zip(m.scores, before, strict=False)] == r.deltas
    assert dealers == [0, 2, 1, 0, 2, 1]
    assert sum(m.scores) == 0


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_g54_tab_2_four_players_opposite_seat_sits_out(dealer):
    """G54-TAB-2 (AMB-24), G-DEAL-3: seat d+2 sits out with no cards; order d+3, d+1, d."""
    s = deal4({}, dealer=dealer)
    out = (dealer + 2) % 4
    assert s.sitting_out == out
    assert s.order == ((dealer + 3) % 4, (dealer + 1) % 4, dealer)
    assert s.hand(out) == []
    assert [len(s.hand(x)) for x in s.order] == [25, 25, 28]
    assert out not in s.order
    view = observation(s, out)
    assert view["hand"] == [] and view["sitting_out"] == out
    assert view["hand_sizes"][out] == 0


def test_g54_tab_2_four_players_play_skips_the_seat_sitting_out():
    """G54-TAB-2: with dealer 0, trick 1 runs 3 → 1 → 0; seat 2 never acts."""
    s = to_first_trick(deal4({}, dealer=0))
    assert s.current_player == 3
    acted = []
    while not s.is_terminal():
        acted.append(s.current_player)
        s.apply(s.legal_actions()[0])
    assert acted[:3] == [3, 1, 0]
    assert 2 not in acted
    assert all(2 not in (seat for seat, _ in t.plays) for t in s.tricks)
    assert s.tricks_won[2] == 0
    check_ledger(s)


def test_g54_tab_2_declarations_are_not_paid_by_the_seat_sitting_out():
    """G54-TAB-2: no payments to or from the 'King' — a declaration is paid by the two others only."""
    # dealer 1: seat 3 sits out, order 0 (F), 2 (M), 1 (D).
    s = deal4({0: full(["SK", "HK", "DK", "CK"])}, dealer=1)
    assert s.sitting_out == 3 and s.forehand == 0
    drive(s, declare={0: ["declare four_kings"]})
    assert transfers(s, "G54-DECL-1") == {(2, 0, 10), (1, 0, 10)}
    check_ledger(s)


def test_g54_tab_2_rotation_through_match_with_four_seats():
    """G54-TAB-2 with G-SEAT-5: dealers 0, 3, 2, 1, …; the sitting-out seat's score is unchanged."""
    m = Match(find_variant(NAME, {"players": "4"}), seed=5, deals=8)
    dealers, outs = [], []
    while not m.is_over():
        s = m.start_deal()
        dealers.append(s.dealer)
        outs.append(s.sitting_out)
        assert s.sitting_out == (s.dealer + 2) % 4
        drive(s)
        check_ledger(s)
        before = list(m.scores)
        m.finish_deal(s)
        assert m.scores[s.sitting_out] == before[s.sitting_out]
    assert dealers == [0, 3, 2, 1, 0, 3, 2, 1]
    assert outs == [2, 1, 0, 3, 2, 1, 0, 3]
    assert sum(m.scores) == 0


# --------------------------------------------------------------------------- G54-TAB-3 / G54-DEAL-1


def test_g54_tab_3_red_pips_reversed():
    """G54-TAB-3, G-RANK-3: in Hearts the Ace beats the 5 and the 10; the Jack beats every pip."""
    no_hearts = [p for p in PIPS if p[0] != "H"]
    s = to_first_trick(
        deal3(
            {
                2: ["H10", "HJ", *no_hearts[:23]],
                1: ["HA", "H2", *T(1, 21)],
            }
        )
    )
    act(s, "play H10", "play HA", "play H5")
    assert s.tricks[0].winner == 1  # HA > H5 > H10
    act(s, "play H2", "play H9", "play HJ")
    assert s.tricks[1].winner == 2  # HJ > H2 > H9


def test_g54_tab_3_black_pips_straight():
    """G54-TAB-3, G-RANK-2: in Spades the 10 beats the 2 and the Ace."""
    no_spades = [p for p in PIPS if p[0] != "S"]
    s = to_first_trick(
        deal3({2: ["SA", *no_spades[:24]], 1: ["S10", *T(1, 21), "EX", "HK", "DK"]}),
        discard=["C8", "C9", "C10"],
    )
    act(s, "play SA")
    assert legal(s) == {"play S10", "play EX"}
    act(s, "play S10", "play S2")
    assert s.tricks[0].winner == 1


def test_g54_tab_3_tarok_beats_king_when_void():
    """G54-TAB-3, G-RANK-1, G-TRICK-4: a player void in the led suit must trump, and T2 beats SK."""
    m_hand = ["T2", *[p for p in PIPS if p[0] in "HDC"][:24]]
    f_hand = ["SK", "T1", *T(3, 21), "EX", "S2", "S3", "S4"]  # the dealer has no tarok
    s = to_first_trick(deal3({2: f_hand, 1: m_hand}))
    assert not any(Card(c).is_tarok for c in s.hand(0))
    act(s, "play SK")
    assert legal(s) == {"play T2"}
    act(s, "play T2")
    s.apply(s.legal_actions()[0])
    assert s.tricks[0].winner == 1


@pytest.mark.parametrize("players,dealer", [(3, 0), (3, 2), (4, 1), (4, 3)])
def test_g54_deal_1_packets_of_five_dealer_keeps_last_eight(players, dealer):
    """G54-DEAL-1, G-DEAL-1: F gets d[15r..15r+4], M d[15r+5..], D d[15r+10..] and d[75..77]."""
    deck = list(CARDS)
    random.Random(players * 10 + dealer).shuffle(deck)
    s = DealState(find_variant(NAME, {"players": str(players)}), dealer, deck)
    f, m, d = s.order
    expect = {f: [], m: [], d: []}
    for r in range(5):
        for k, seat in enumerate((f, m, d)):
            expect[seat] += deck[15 * r + 5 * k : 15 * r + 5 * k + 5]
    expect[d] += deck[75:78]
    for seat in (f, m, d):
        assert sorted(s.hand(seat)) == sorted(expect[seat])
    assert set(deck[70:78]) <= set(s.hand(d))
    assert len(s.hand(d)) == 28


# --------------------------------------------------------------------------- G54-DISC-1…3


def dealer_hand(cards: list[str]) -> DealState:
    """A 3-player deal (dealer 0) in which the dealer holds exactly `cards` (28)."""
    assert len(cards) == 28
    return deal3({0: cards})


def test_g54_disc_1_dealer_lays_away_three_never_a_king():
    """G54-DISC-1: the dealer (only) discards; Kings are never legal; after 3 cards he holds 25."""
    s = dealer_hand(full(["SK", "HK", "DK", "CK", "SQ"], n=28))
    assert s.phase == "discard" and s.current_player == 0
    assert not any(f"discard {k}" in legal(s) for k in ("SK", "HK", "DK", "CK"))
    assert "discard SQ" in legal(s)
    with pytest.raises(IllegalActionError) as err:
        act(s, "discard SK")
    assert err.value.rule == "G54-DISC-1"
    act(s, "discard SQ", "discard S2", "discard S3")
    assert s.phase == "declare"
    assert sorted(codes(s.skat)) == sorted(["SQ", "S2", "S3"])
    assert len(s.hand(0)) == 25


def test_g54_disc_1_skat_counts_for_the_dealer():
    """G54-DISC-1, G54-CARD-1: the three cards laid away are in the dealer's pile when counted."""
    # F (seat 2) holds every tarok and the four Kings and wins every trick (as in
    # test_g54_fool_5_owner_without_tricks…); the dealer lays away three Queens.
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: ["EX", *PIPS[:24]]})
    drive(s, order={2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]}, discard=["SQ", "HQ", "DQ"])
    assert sorted(codes(s.skat)) == ["DQ", "HQ", "SQ"]
    assert s.tricks_won[0] == 0
    assert s.result().card_points[0] == 3 * 4 - 2  # three Queens: 12 − 2
    check_ledger(s)


def test_g54_disc_2_no_tarok_or_excuse_without_exception():
    """G54-DISC-2: four taroks with T1, or three without T1: no tarok and no EX may go."""
    s = dealer_hand(full(["T1", "T2", "T3", "T21", "EX"], n=28))
    assert not {d for d in legal(s) if d.split()[1].startswith("T") or d.endswith("EX")}
    with pytest.raises(IllegalActionError) as err:
        act(s, "discard T1")
    assert err.value.rule == "G54-DISC-2"
    s = dealer_hand(full(["T2", "T3", "T21"], n=28))
    assert not {d for d in legal(s) if d.split()[1].startswith("T")}


def test_g54_disc_2a_exactly_three_taroks_with_pagat_even_t21():
    """G54-DISC-2 (a), AMB-17: exactly three taroks including T1 — all three may go, T21 too."""
    s = dealer_hand(full(["T1", "T10", "T21"], n=28))
    assert {"discard T1", "discard T10", "discard T21"} <= legal(s)
    act(s, "discard T21", "discard T1", "discard T10")
    assert sorted(codes(s.skat)) == ["T1", "T10", "T21"]
    assert s.phase == "declare"


def test_g54_disc_2a_with_excuse_taroks_go_but_not_the_excuse():
    """G54-DISC-2 (a), AMB-17: with T1, T7, T8 and EX, the three taroks are legal, EX is not
    ((b) needs exactly one other tarok)."""
    s = dealer_hand(full(["T1", "T7", "T8", "EX"], n=28))
    assert {"discard T1", "discard T7", "discard T8"} <= legal(s)
    assert "discard EX" not in legal(s)


def test_g54_disc_2b_pagat_excuse_and_one_other_tarok():
    """G54-DISC-2 (b), AMB-17: T1 + EX + exactly one other tarok: those three may be laid away."""
    s = dealer_hand(full(["T1", "EX", "T7"], n=28))
    assert {"discard T1", "discard EX", "discard T7"} <= legal(s)
    act(s, "discard EX", "discard T7", "discard T1")
    assert sorted(codes(s.skat)) == ["EX", "T1", "T7"]


def test_g54_disc_2b_not_with_two_other_taroks_or_none():
    """G54-DISC-2: T1 + EX with three other taroks (four taroks: neither (a) nor (b)), or T1 + EX
    with no other tarok: no tarok and no EX may go."""
    s = dealer_hand(full(["T1", "EX", "T7", "T8", "T9"], n=28))
    assert not {d for d in legal(s) if d.split()[1][0] == "T" or d.endswith("EX")}
    s = dealer_hand(full(["T1", "EX"], n=28))
    assert not {d for d in legal(s) if d.split()[1][0] == "T" or d.endswith("EX")}


def test_amb_50_exception_cards_go_one_by_one_with_ordinary_cards():
    """AMB-50: each card named by G54-DISC-2 (a)/(b) is individually legal; any three legal cards."""
    s = dealer_hand(full(["T1", "T10", "T21", "SK"], n=28))
    act(s, "discard T21")  # one exception card …
    assert "discard S2" in legal(s) and "discard T1" in legal(s)
    act(s, "discard S2", "discard S3")  # … with two ordinary cards
    assert sorted(codes(s.skat)) == ["S2", "S3", "T21"]
    assert s.phase == "declare"
    s = dealer_hand(full(["T1", "EX", "T7"], n=28))
    act(s, "discard EX", "discard S2", "discard S3")  # (b): the Excuse alone
    assert sorted(codes(s.skat)) == ["EX", "S2", "S3"]
    assert {"T1", "T7"} <= set(codes(s.hand(0)))


def test_g54_disc_3_fallback_middle_taroks_become_legal():
    """G54-DISC-3 (DUM-DISC-4): 4 Kings, 21 taroks, EX and 2 pips: T2…T20 become legal too."""
    s = dealer_hand(["SK", "HK", "DK", "CK", *T(1, 21), "EX", "S2", "S3"])
    expect = {"discard S2", "discard S3"} | {f"discard T{i}" for i in range(2, 21)}
    assert legal(s) == expect
    act(s, "discard S2", "discard T20", "discard T2")
    assert s.phase == "declare"


def test_g54_disc_3_no_fallback_with_three_ordinary_cards():
    """G54-DISC-3: with three legal ordinary cards the fallback does not apply."""
    s = dealer_hand(["SK", "HK", "DK", "CK", *T(1, 20), "EX", "S2", "S3", "S4"])
    assert legal(s) == {"discard S2", "discard S3", "discard S4"}


def test_g54_disc_random_dealer_hands_match_reference():
    """G54-DISC-1…3, AMB-17, AMB-50: for random dealer hands with few taroks (with or without
    T1 and EX), the legal discards at each of the three steps equal the reference pool."""
    rng = random.Random(54)
    suits = [c for c in CARDS if c < 56]
    exceptions = 0
    for _ in range(300):
        taroks = rng.sample(T(2, 21), rng.randrange(0, 4))
        extra = [c for c, p in (("T1", 0.6), ("EX", 0.5)) if rng.random() < p]
        cards = taroks + extra
        cards += codes(rng.sample(suits, 28 - len(cards)))
        s = dealer_hand(cards)
        pool = reference_discard_pool(s.hand(0))
        exceptions += any(c.is_tarok or c == EX for c in pool)
        while s.phase == "discard":
            assert legal(s) == {f"discard {c}" for c in pool - set(s.skat)}
            s.apply(rng.choice(s.legal_actions()))
        assert len(s.skat) == 3 and set(s.skat) <= pool
    assert exceptions >= 30


# --------------------------------------------------------------------------- G54-DECL-1 / G54-DECL-2


def forehand_declarations(cards: list[str]) -> tuple[DealState, set[str]]:
    """Deal (dealer 0) where forehand (seat 2) holds `cards` topped up with pips; return the
    state at forehand's declaration turn and his declaration options."""
    s = deal3({2: full(cards)})
    drive(s, until=lambda st: st.phase == "declare" and st.current_player == 2)
    assert s.phase == "declare" and s.current_player == 2
    return s, {a for a in legal(s) if a != "pass"}


@pytest.mark.parametrize(
    "cards,expected",
    [
        ([*T(1, 9), "EX"], {"declare taroks": 10}),  # EX counts (AMB-18)
        (T(1, 9), {}),
        ([*T(2, 12), "EX"], {"declare taroks": 20}),  # n = 12
        (T(1, 13), {"declare taroks": 25}),  # n = 13
        (["T1", "EX", "T21"], {"declare matadors": 10}),  # m = 3
        (["T1", "EX", "T21", "T20", "T19", "T17"], {"declare matadors": 20}),  # m = 5, run breaks at T18
        (["T1", "EX", "T21", "T19"], {"declare matadors": 10}),  # no T20: m = 3
        (["T1", "T21", "T20"], {}),  # no EX: no matadors
        (["HK", "HQ", "HC", "HJ"], {"declare whole_cavalry H": 10}),
        (
            ["HK", "HQ", "HC", "HJ", "CK", "CQ", "CC", "CJ"],
            {"declare whole_cavalry H": 10, "declare whole_cavalry C": 10},
        ),
        (["CK", "CQ", "CJ", "EX"], {"declare half_cavalry C": 5}),
        (["CK", "CQ", "CJ"], {}),
        (["SK", "SQ", "SC", "SJ", "EX"], {"declare whole_cavalry S": 10}),  # not also half
        (["SK", "HK", "DK", "CK"], {"declare four_kings": 10}),
        (["SK", "HK", "DK", "EX"], {"declare three_kings": 5}),
        (["SK", "HK", "DK"], {}),
        (["SK", "HK", "DK", "CK", "EX"], {"declare four_kings": 10}),  # not also three kings
    ],
)
def test_g54_decl_1_each_declaration_and_value(cards, expected):
    """G54-DECL-1: what qualifies, and the value received from each opponent."""
    s, options = forehand_declarations(cards)
    assert options == set(expected)
    assert combinations(s.hand(2)) == expected  # the reference model agrees with the table
    for text, v in expected.items():
        act(s, text)
        assert s.declarations[-1].seat == 2
        assert s.declarations[-1].combination.value == v
        assert text not in legal(s)  # each declaration once


def test_g54_decl_1_values_paid_by_each_opponent_at_the_end():
    """G54-DECL-1, G54-END-1: 12 Tarocs (20) and Four Kings (10): the declarer receives 30 from each."""
    s = deal3({1: full([*T(2, 13), "SK", "HK", "DK", "CK"])})  # M (seat 1)
    drive(s, declare={1: ["declare taroks", "declare four_kings"]})
    assert transfers(s, "G54-DECL-1") == {(2, 1, 20), (0, 1, 20), (2, 1, 10), (0, 1, 10)}
    check_ledger(s)


def test_g54_decl_1_optional_undeclared_scores_nothing():
    """G54-DECL-1: declaring is optional; an undeclared combination is worth nothing."""
    s = deal3({1: full([*T(2, 13), "SK", "HK", "DK", "CK"])})
    drive(s)  # everybody passes
    assert s.declarations == []
    assert transfers(s, "G54-DECL-1") == set()
    check_ledger(s)


def test_g54_decl_1_order_from_dealer_anticlockwise_then_forehand_leads():
    """G54-DECL-1: dealer first, then anticlockwise (F, M); trick 1 follows, led by forehand."""
    for players, dealer in ((3, 0), (3, 1), (4, 0), (4, 2)):
        s = new_deal(NAME, {}, dealer=dealer, options={"players": players})
        drive(s, until=lambda st: st.phase == "declare")
        turns = []
        while s.phase == "declare":
            turns.append(s.current_player)
            act(s, "pass")
        f, m, d = s.order
        assert turns == [d, f, m]
        assert s.phase == "play" and s.trick_no == 1 and s.current_player == f


def test_g54_decl_1_dealer_declares_on_hand_after_discard():
    """G54-DECL-1: the dealer's declarations use his hand after the discard."""
    s = dealer_hand(full(["SK", "SQ", "SC", "SJ", "HK", "HQ", "HC", "HJ"], n=28))
    act(s, "discard SJ", "discard S2", "discard S3")
    assert s.current_player == 0
    options = legal(s)
    assert "declare whole_cavalry S" not in options
    assert "declare whole_cavalry H" in options


def test_g54_decl_1_false_declaration_is_illegal():
    """G54-DECL-1: a player may only declare what he holds."""
    s, options = forehand_declarations(["SK", "HK", "DK"])
    assert options == set()
    with pytest.raises(IllegalActionError):
        act(s, "declare four_kings")
    with pytest.raises(IllegalActionError):
        act(s, "declare three_kings")


def test_g54_decl_2_declaration_publishes_type_suit_size_but_no_card():
    """G54-DECL-2: the others see type, suit and size; no card of the declarer's hand."""
    s, _ = forehand_declarations(["HK", "HQ", "HC", "HJ", "T1", "T2", "T3"])
    act(s, "declare whole_cavalry H")
    for seat in (0, 1):
        view = observation(s, seat)
        (decl,) = view["declarations"]
        assert decl["seat"] == 2 and decl["name"] == "whole_cavalry" and decl["suit"] == "H"
        assert decl["size"] == 4
        assert set(decl) <= {"seat", "name", "suit", "size", "value"}
        assert "HK" not in view["hand"]


def test_g54_decl_2_tarocs_declaration_publishes_only_its_size():
    """G54-DECL-2: 'n Tarocs' publishes n; unlike DUM-DECL-4 it does not reveal whether EX or
    T1 is among them (that would show cards)."""
    s, _ = forehand_declarations([*T(1, 9), "EX"])
    act(s, "declare taroks")
    (decl,) = observation(s, 1)["declarations"]
    assert decl["name"] == "taroks" and decl["size"] == 10
    assert set(decl) <= {"seat", "name", "size", "value"}, f"published more than G54-DECL-2 allows: {decl}"


# --------------------------------------------------------------------------- G54-PLAY-1, G54-FOOL-1…5


def test_g54_play_1_excuse_may_not_be_led():
    """G54-PLAY-1 (fool_lead = forbidden): a leader holding EX cannot lead it."""
    s = to_first_trick(deal3({2: full(["EX", "SK"])}))
    assert s.current_player == 2
    assert "play EX" not in legal(s)
    assert "play SK" in legal(s)
    with pytest.raises(IllegalActionError) as err:
        act(s, "play EX")
    assert err.value.rule == "G54-PLAY-1"


def test_g54_fool_1_excuse_instead_of_a_legal_card_and_retained():
    """G54-FOOL-1: a follower may play EX instead of following; it never wins and goes back to
    its owner's pile (exchange owed to the winner)."""
    s = to_first_trick(deal3({2: ["HK", "T21"], **table({1: ["H3", "EX", "T5"]})}))
    act(s, "play HK")
    options = legal(s)
    assert "play EX" in options and "play H3" in options
    assert "play T5" not in options  # M can follow Hearts, so no tarok
    act(s, "play EX")
    s.apply(s.legal_actions()[0])
    t = s.tricks[0]
    assert t.winner != 1
    assert EX in s.piles[1] and EX not in s.piles[t.winner]
    assert (1, t.winner, 1) in s.fool_debts


def test_g54_fool_1_excuse_instead_of_trumping():
    """G54-FOOL-1: void in the led suit with taroks, the holder may trump or play EX."""
    m_hand = ["EX", "T5", "T6", *[p for p in PIPS if p[0] in "HDC"][:22]]
    s = to_first_trick(deal3({2: ["SK"], 1: m_hand}))
    act(s, "play SK")
    assert legal(s) == {"play EX", "play T5", "play T6"}


def test_g54_fool_3_forced_when_void_without_tarok():
    """G54-FOOL-3: no tarok and void in L: the holder must play EX (only legal card)."""
    m_hand = ["EX", *[p for p in PIPS if p[0] in "HDC"][:24]]
    s = to_first_trick(deal3({2: ["SK", "T21"], 1: m_hand}))
    act(s, "play SK")
    assert legal(s) == {"play EX"}
    with pytest.raises(IllegalActionError) as err:
        act(s, "play H2")
    assert err.value.rule == "G54-FOOL-3"


def test_g54_fool_3_forced_on_tarok_lead_without_tarok():
    """G54-FOOL-3: with L = T and no tarok in hand, the holder is void in L: EX is forced."""
    m_hand = ["EX", *[p for p in PIPS if p[0] in "SHD"][:24]]
    s = to_first_trick(deal3({2: ["T21"], 1: m_hand}))
    act(s, "play T21")
    assert legal(s) == {"play EX"}


def test_g54_fool_3_not_forced_while_following_suit():
    """G54-FOOL-3 applies only when void: a holder without tarok who can follow may keep EX."""
    m_hand = ["EX", "S5", *[p for p in PIPS if p[0] in "HDC"][:23]]
    s = to_first_trick(deal3({2: ["SK"], 1: m_hand}))
    act(s, "play SK")
    assert legal(s) == {"play EX", "play S5"}


def test_g54_a_fool_holder_who_does_not_follow_breaks_g_trick_4():
    """G-TRICK-4, not G54-FOOL-3: the holder could follow suit, so the Excuse was not forced."""
    m_hand = ["EX", "S5", *[p for p in PIPS if p[0] in "HDC"][:23]]
    s = to_first_trick(deal3({2: ["SK"], 1: m_hand}))
    act(s, "play SK")
    with pytest.raises(IllegalActionError) as err:
        act(s, "play H2")
    assert err.value.rule == "G-TRICK-4"


# The "follower" deal: F (seat 2) leads ten taroks, then Spades and Hearts from the top; M
# (seat 1) follows and keeps T1 and EX; the dealer (seat 0) holds only Diamonds and Clubs.
F_TAROKS = T(12, 21)
F_SUITS = ["SK", "SQ", "SC", "SJ", "S10", "S9", "S8", "HK", "HQ", "HC", "HJ", "HA", "H2", "H3", "H4"]
M_HAND = ["EX", *T(1, 11), "S7", "S6", "S5", "S4", "S3", "S2", "SA", "H5", "H6", "H7", "H8", "H9", "H10"]


def follower_deal(players: int = 3):
    if players == 3:
        s = deal3({2: F_TAROKS + F_SUITS, 1: M_HAND}, dealer=0)
        return s, 2, 1, 0
    s = deal4({3: F_TAROKS + F_SUITS, 1: M_HAND}, dealer=0)  # seat 2 sits out
    return s, 3, 1, 0


@pytest.mark.parametrize("players", [3, 4])
def test_g54_fool_2_follower_must_play_excuse_at_trick_23(players):
    """G54-FOOL-2: a holder who still has EX at trick 23 must play it there (only legal card)."""
    s, f, m, _d = follower_deal(players)
    drive(
        s,
        order={f: F_TAROKS[::-1] + F_SUITS},
        keep={m: ["T1", "EX"]},
        discard=["DA", "D2", "D3"],
        until=lambda st: st.trick_no == 23 and st.current_player == m,
    )
    assert EX in s.hand(m) and len(s.trick) == 1
    assert s.tricks[21].winner == f and s.trick[0] == (f, Card.parse("H2"))
    assert legal(s) == {"play EX"}  # M holds H10 and T1 as well
    with pytest.raises(IllegalActionError) as err:
        act(s, "play H10")
    assert err.value.rule == "G54-FOOL-2"


@pytest.mark.parametrize("players", [3, 4])
def test_g54_bon_3_pagat_wins_last_trick_follower_deal(players):
    """G54-BON-3, G54-FOOL-1/2, G-TRICK-7, G54-CARD-1: full follower deal.

    F wins tricks 1–24; M plays EX in trick 23 and wins trick 25 with T1 (ultimo: +10 from
    each). M's pile: EX + trick 25 (H4, T1, CK); he gives H4 to F → EX, T1, CK = 13.
    Dealer's skat DA D2 D3 = 1. F: 78 − 14 = 64.
    Deltas: F +38 − 10 = +28; M −13 + 20 = +7; D −25 − 10 = −35.
    """
    s, f, m, d = follower_deal(players)
    drive(s, order={f: F_TAROKS[::-1] + F_SUITS}, keep={m: ["T1", "EX"]}, discard=["DA", "D2", "D3"])
    assert [t.winner for t in s.tricks] == [f] * 24 + [m]
    assert s.tricks[22].card_of(m) == EX
    assert s.tricks[24].card_of(m) == T1
    r = s.result()
    assert (r.card_points[f], r.card_points[m], r.card_points[d]) == (64, 13, 1)
    assert transfers(s, "G54-BON-3") == {(f, m, 10), (d, m, 10)}
    assert transfers(s, "G54-BON-1") == set() and transfers(s, "G54-FOOL-5") == set()
    assert transfers(s, "G54-CARD-1") == {(m, f, 13), (d, f, 25)}
    assert (r.deltas[f], r.deltas[m], r.deltas[d]) == (28, 7, -35)
    check_ledger(s)


@pytest.mark.parametrize("players", [3, 4])
def test_g54_bon_2_pagat_lost_in_last_trick_pays_10_not_5(players):
    """G54-BON-2 (AMB-06): T1 lost in trick 25 pays 10 to each, instead of (not on top of) 5.

    Same deal, but F keeps T12 for the end: M's T11 wins trick 24, M leads T1 to trick 25 and
    F's T12 takes it. M's pile: EX + (H4, T11, CQ), gives H4 → 5 + 1 + 4 − 2 = 8.
    """
    s, f, m, d = follower_deal(players)
    drive(
        s, order={f: T(13, 21)[::-1] + F_SUITS + ["T12"]}, keep={m: ["T1", "EX"]}, discard=["DA", "D2", "D3"]
    )
    last = s.tricks[24]
    assert last.card_of(m) == T1 and last.winner == f
    assert s.tricks[23].winner == m
    r = s.result()
    assert (r.card_points[f], r.card_points[m], r.card_points[d]) == (69, 8, 1)
    assert transfers(s, "G54-BON-2") == {(m, f, 10), (m, d, 10)}
    assert transfers(s, "G54-BON-1") == set()
    assert (r.deltas[f], r.deltas[m], r.deltas[d]) == (43 + 10, -18 - 20, -25 + 10)
    check_ledger(s)


@pytest.mark.parametrize("players", [3, 4])
def test_g54_bon_1_pagat_lost_in_trick_1_to_24_pays_5_to_each(players):
    """G54-BON-1: M follows F's T21 in trick 1 with T1 and loses it: he pays 5 to each."""
    s, f, m, d = follower_deal(players)
    drive(s, order={f: F_TAROKS[::-1] + F_SUITS}, keep={m: ["EX"]}, discard=["DA", "D2", "D3"])
    assert s.tricks[0].card_of(m) == T1 and s.tricks[0].winner == f
    assert all(T1 not in [c for _, c in t.plays] for t in s.tricks[1:])
    assert transfers(s, "G54-BON-1") == {(m, f, 5), (m, d, 5)}
    assert transfers(s, "G54-BON-2") == set() and transfers(s, "G54-BON-3") == set()
    _cp, deltas = reference_score(s)
    assert s.result().deltas == deltas
    check_ledger(s)


def test_g54_bon_1_pagat_winning_a_trick_before_25_pays_nothing():
    """G54-BON-1, G54-BON-4: T1 winning a trick in 1…24 earns nothing (no Pagat-home bonus)."""
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: ["EX", *PIPS[:24]]})
    drive(s, order={2: ["T1", *T(2, 21)[::-1], "SK", "HK", "DK", "CK"]}, discard=["DA", "D9", "D10"])
    assert s.tricks[0].card_of(2) == T1 and s.tricks[0].winner == 2
    bonus = {t.rule for t in s.result().ledger} & {"G54-BON-1", "G54-BON-2", "G54-BON-3"}
    assert bonus == set()
    check_ledger(s)


# The "lead pass" deal: F (seat 2) holds T1…T21, EX, SK, HK, DK and leads T21…T1, SK.
LEAD_HAND = [*T(1, 21), "EX", "SK", "HK", "DK"]
LEAD_ORDER = [*T(1, 21)[::-1], "SK", "HK", "DK"]


@pytest.mark.parametrize("players", [3, 4])
def test_g54_fool_2_holder_on_lead_at_trick_23_passes_the_lead(players):
    """G54-FOOL-2, AMB-57: F wins trick 22 holding EX, so next(F) leads trick 23 and F plays EX
    as the last card; the trick is won as usual and its winner leads trick 24."""
    if players == 3:
        s, f = deal3({2: LEAD_HAND}, dealer=0), 2
    else:
        s, f = deal4({3: LEAD_HAND}, dealer=0), 3
    nf = next_seat(s, f)
    assert nf == 1  # 4 players: seat 2 sits out and is skipped
    drive(s, order={f: LEAD_ORDER}, keep={f: ["EX"]}, until=lambda st: st.trick_no == 23)
    assert [t.winner for t in s.tricks] == [f] * 22
    assert EX in s.hand(f)
    assert s.current_player == nf  # F does not lead
    assert "play EX" not in legal(s)
    drive(s, until=lambda st: st.trick_no == 23 and st.current_player == f)
    assert legal(s) == {"play EX"}
    act(s, "play EX")
    t23 = s.tricks[22]
    assert t23.leader == nf
    assert [seat for seat, _ in t23.plays] == [nf, next_seat(s, nf), f]
    assert t23.plays[-1] == (f, EX)
    assert t23.winner == trick_winner(t23.plays) and t23.winner != f
    assert s.current_player == t23.winner and s.trick_no == 24
    drive(s)
    check_ledger(s)
    _, deltas = reference_score(s)
    assert s.result().deltas == deltas


def test_g54_fool_2_excuse_already_played_no_lead_pass():
    """G54-FOOL-2: the lead passes only if the trick-23 leader still holds EX."""
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: ["EX", *PIPS[:24]]})
    drive(
        s,
        order={2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]},
        discard=["DA", "D9", "D10"],
        until=lambda st: st.trick_no == 23,
    )
    assert s.tricks[0].card_of(1) == EX
    assert s.current_player == 2 == s.tricks[21].winner


def test_g54_fool_4_excuse_never_in_tricks_24_and_25():
    """G54-FOOL-4: over many random deals (3 and 4 players) EX is never played to trick 24 or 25,
    and a held EX is always played by trick 23."""
    for seed in range(120):
        players = 3 + seed % 2
        deck = list(CARDS)
        random.Random(seed).shuffle(deck)
        s = DealState(find_variant(NAME, {"players": str(players)}), seed % players, deck)
        rng = random.Random(seed)
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_actions()))
        where = [t.number for t in s.tricks for _, c in t.plays if c == EX]
        if EX in s.skat:
            assert where == []
        else:
            assert len(where) == 1 and where[0] <= 23


def test_g54_fool_5_owner_without_tricks_gets_4_and_hands_over_the_excuse():
    """G54-FOOL-5 (AMB-23), G54-FOOL-3, G54-BON-3/4, G54-CARD-1, G54-END-1.

    F (seat 2): T1…T21 and the four Kings; he leads T21…T2, the Kings, then T1, and wins all
    25 tricks. M (seat 1): EX and 24 pips, no tarok: EX is forced in trick 1. M wins nothing:
    he receives 4 from each and, his pile holding only EX, hands EX to F. Skat DA D9 D10 = 1.
    CP: F 77, M 0, D 1. F 51 − 4 + 20 = 67; M −26 + 8 − 10 = −28;
    D −25 − 4 − 10 = −39. No Vole (F took every trick), no Nolo, no King bonus (G54-BON-4).
    """
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: ["EX", *PIPS[:24]]})
    drive(
        s,
        order={2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]},
        discard=["DA", "D9", "D10"],
        until=lambda st: st.phase == "play" and st.current_player == 1,
    )
    assert legal(s) == {"play EX"}  # G54-FOOL-3 in trick 1
    drive(s, order={2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]})
    assert s.tricks_won == [0, 0, 25]
    r = s.result()
    assert r.card_points == [1, 0, 77]
    assert transfers(s, "G54-FOOL-5") == {(2, 1, 4), (0, 1, 4)}
    assert transfers(s, "G54-CARD-1") == {(1, 2, 26), (0, 2, 25)}
    assert transfers(s, "G54-BON-3") == {(1, 2, 10), (0, 2, 10)}
    assert {t.rule for t in r.ledger} == {"G54-FOOL-5", "G54-CARD-1", "G54-BON-3"}
    assert r.deltas == [-39, -28, 67]
    check_ledger(s)


def test_g54_fool_5_dealer_owner_without_tricks_keeps_excuse_gives_skat_card():
    """G54-FOOL-5 (AMB-23), G-TRICK-7: the dealer plays EX (forced, trick 1) and wins nothing:
    +4 from each; he keeps EX and gives his lowest skat card (DA) to F.
    D: EX, D9, D10 = 5; F: 78 − 5 = 73; M: 0. F 47 − 4 + 20 = 63; D −21 + 8 − 10 = −23;
    M −26 − 4 − 10 = −40."""
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: PIPS[:25]})
    order = {2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]}
    drive(s, order=order, discard=["DA", "D9", "D10"], until=lambda st: st.current_player == 0 and st.trick)
    assert legal(s) == {"play EX"}
    drive(s, order=order)
    assert s.tricks_won == [0, 0, 25]
    r = s.result()
    assert r.card_points == [5, 0, 73]
    assert transfers(s, "G54-FOOL-5") == {(2, 0, 4), (1, 0, 4)}
    assert r.deltas == [-23, -40, 63]
    check_ledger(s)


def test_g54_fool_5_owner_with_a_trick_gets_nothing():
    """G54-FOOL-5: only an owner who won no trick is paid (the follower deal: M wins trick 25)."""
    s, f, m, _d = follower_deal(3)
    drive(s, order={f: F_TAROKS[::-1] + F_SUITS}, keep={m: ["T1", "EX"]}, discard=["DA", "D2", "D3"])
    assert s.tricks_won[m] == 1
    assert transfers(s, "G54-FOOL-5") == set()


# The dealer's 28 cards: T1, T5, EX and the lowest cards of every suit (red pips reversed).
LOW_DEALER = ["T1", "T5", "EX", "SA", "S2", "S3", "S4", "S5", "S6", "S7", "CA", "C2", "C3", "C4"]
LOW_DEALER += ["C5", "C6", "C7", "H10", "H9", "H8", "H7", "H6", "H5", "H4", "D10", "D9", "D8", "D7"]


@pytest.mark.parametrize("players", [3, 4])
def test_amb_51_excuse_in_skat_dealer_without_tricks_gets_4(players):
    """AMB-51, G54-DISC-2 (b): EX laid away is never played; the dealer owns it and, winning no
    trick (he holds the lowest card of every suit), receives 4 from each. The skat T1, T5, EX
    counts 9 for him. G54-FOOL-2 does not apply: trick 23 is led by the winner of trick 22."""
    s = deal3({0: LOW_DEALER}) if players == 3 else deal4({0: LOW_DEALER})
    act(s, "discard T1", "discard T5", "discard EX")
    drive(s, until=lambda st: st.trick_no == 23)
    assert s.current_player == s.tricks[21].winner
    drive(s)
    assert all(EX not in [c for _, c in t.plays] for t in s.tricks)
    assert s.tricks_won[0] == 0
    others = [x for x in s.order if x != 0]
    assert transfers(s, "G54-FOOL-5") == {(others[0], 0, 4), (others[1], 0, 4)}
    assert s.result().card_points[0] == 9
    assert transfers(s, "G54-BON-1") == set()  # T1 in the skat is never lost
    check_ledger(s)
    assert s.result().deltas == reference_score(s)[1]


def test_amb_51_excuse_in_skat_dealer_with_a_trick_gets_nothing():
    """AMB-51: the dealer owns the laid-away EX; having won a trick he is not paid."""
    s = deal3(table({0: ["T1", "T5", "EX", "SK", "HK", "DK", "CK", "SQ", "HQ", "DQ", "CQ"]}))
    act(s, "discard T1", "discard T5", "discard EX")
    drive(s)
    assert s.tricks_won[0] > 0
    assert transfers(s, "G54-FOOL-5") == set()
    check_ledger(s)


# --------------------------------------------------------------------------- G54-BON-4, G54-CARD-1


def test_g54_bon_4_no_king_bonus():
    """G54-BON-4: Kings win and lose tricks (also the last one) without any payment."""
    s = deal3({2: LEAD_HAND})
    drive(s, order={2: LEAD_ORDER}, keep={2: ["EX"]})
    r = s.result()
    kings = [(t.number, seat == t.winner) for t in s.tricks for seat, c in t.plays if c in KINGS]
    assert any(won for _, won in kings) and any(not won for _, won in kings)
    assert any(n == 25 for n, _ in kings) or any(n == 24 for n, _ in kings)
    assert {t.rule for t in r.ledger} <= {"G54-CARD-1", "G54-FOOL-5", "G54-BON-1", "G54-BON-2", "G54-BON-3"}
    check_ledger(s)
    assert r.deltas == reference_score(s)[1]


def test_g54_bon_4_no_vole_and_no_nolo():
    """G54-BON-4: F wins all 25 tricks and the dealer none (he does not own EX): neither is paid
    anything beyond the card settlement (and F's Pagat ultimo)."""
    s = deal3({2: [*T(1, 21), "SK", "HK", "DK", "CK"], 1: ["EX", *PIPS[:24]]})
    drive(s, order={2: [*T(2, 21)[::-1], "SK", "HK", "DK", "CK", "T1"]}, discard=["DA", "D9", "D10"])
    assert s.tricks_won == [0, 0, 25]
    r = s.result()
    dealer_payments = sorted(
        (t.source, t.target, t.amount, t.rule) for t in r.ledger if 0 in (t.source, t.target)
    )
    assert dealer_payments == [(0, 1, 4, "G54-FOOL-5"), (0, 2, 10, "G54-BON-3"), (0, 2, 25, "G54-CARD-1")]
    assert r.deltas[2] == (77 - 26) - 4 + 20  # no Vole bonus on top


def test_g54_card_1_settlement_is_cp_minus_26_exact():
    """G54-CARD-1 (DUM-CARD-1): below-par players pay their shortfall, above-par receive their
    excess; one game point per card point, no rounding."""
    s, f, m, _d = follower_deal(3)
    drive(s, order={f: F_TAROKS[::-1] + F_SUITS}, keep={m: ["T1", "EX"]}, discard=["DA", "D2", "D3"])
    r = s.result()
    card = {x: 0 for x in s.order}
    for t in r.ledger:
        if t.rule == "G54-CARD-1":
            card[t.source] -= t.amount
            card[t.target] += t.amount
    assert card == {x: r.card_points[x] - 26 for x in s.order}
    assert card[m] == 13 - 26  # not rounded to 5


# --------------------------------------------------------------------------- G54-END-1 and properties


@pytest.mark.parametrize("players", [3, 4])
def test_g54_end_1_random_deals_match_reference_model(players):
    """G54-END-1 and every rule of §3 on random deals: at each step the legal plays equal the
    reference model (G-TRICK-4, G54-PLAY-1, G54-FOOL-1…3), declaration options equal G54-DECL-1,
    the trick-23 leader never holds EX (G54-FOOL-2), and the result equals card result +
    declarations + G54-FOOL-5 + G54-BON-1…3; the ledger sums to zero."""
    variant = find_variant(NAME, {"players": str(players)})
    declared = 0
    for seed in range(200):
        rng = random.Random(1000 * players + seed)
        if seed % 2:
            deck = clumpy_deck(rng)
        else:
            deck = list(CARDS)
            rng.shuffle(deck)
        s = DealState(variant, rng.randrange(players), deck)
        dealt = {x: set(s.hand(x)) for x in s.order}
        while not s.is_terminal():
            seat = s.current_player
            assert seat in s.order
            acts = s.legal_actions()
            if s.phase == "discard":
                pool = reference_discard_pool(dealt[s.dealer])
                assert {str(a) for a in acts} == {f"discard {c}" for c in pool - set(s.skat)}
                pick = rng.choice(acts)
            elif s.phase == "declare":
                options = {str(a) for a in acts} - {"pass"}
                already = {
                    f"declare {d.combination.name}" + (f" {d.combination.suit}" if d.combination.suit else "")
                    for d in s.declarations
                    if d.seat == seat
                }
                assert options == set(combinations(s.hand(seat))) - already
                pick = rng.choice(acts)
            elif s.phase == "play":
                assert {str(a) for a in acts} == reference_play_legal(s)
                if not s.trick and s.trick_no == 23:
                    natural = s.tricks[21].winner
                    holder_leads = EX in s.hand(natural)
                    assert seat == (next_seat(s, natural) if holder_leads else natural)
                pick = rng.choice(acts)
            else:
                pick = rng.choice(acts)
            s.apply(pick)
        check_ledger(s)
        cp, deltas = reference_score(s)
        r = s.result()
        assert r.deltas == deltas, seed
        assert {x: r.card_points[x] for x in s.order} == cp
        declared += len(s.declarations)
    assert declared >= 20  # the clumpy decks make the declarations part of the check


def test_g54_tab_3_trick_winner_ranking_on_random_deals():
    """G54-TAB-3, G-TRICK-5: every trick of random deals is won per the reference ranking
    (red pips reversed); the winner leads the next trick except at trick 23 with EX (G54-FOOL-2)."""
    variant = find_variant(NAME, {"players": "3"})
    for seed in range(60):
        deck = list(CARDS)
        random.Random(seed + 77).shuffle(deck)
        s = DealState(variant, seed % 3, deck)
        drive(s)
        for i, t in enumerate(s.tricks):
            assert t.winner == trick_winner(t.plays)
            assert [p for p, _ in t.plays] == [
                t.leader,
                next_seat(s, t.leader),
                next_seat(s, next_seat(s, t.leader)),
            ]
            if i == 0:
                assert t.leader == s.forehand
            elif t.number != 23:
                assert t.leader == s.tricks[i - 1].winner
