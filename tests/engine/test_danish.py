"""Rule tests for the Danish family (RULES §4): presets `danish` and `danish-pots` and their options.

Every test names the rule it checks (RULES.md §4, with the AMB entries of §7 that §4 cites).
Seats: in most crafted deals the dealer is seat 0, so (anticlockwise, DK-TAB-1) forehand is
seat 2 and middlehand seat 1; the constants D, M, F name them.

End-of-deal scenarios are scripted card by card: each seat's 25 plays are listed in order and
`play_script` applies them (an illegal scripted card fails the test loudly).  The expected
ledgers were worked out by hand from RULES §4, not from the engine.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pytest
from support import act, deck_for_hands, legal, new_deal

from arena.engine import (
    CARDS,
    Action,
    Card,
    ConfigError,
    DealState,
    IllegalActionError,
    Match,
    find_variant,
    observation,
)
from arena.engine.scoring import score_deal

D, M, F = 0, 1, 2  # dealer 0: forehand = dealer's right = seat 2, then seat 1, then the dealer
PRESETS = ["danish", "danish-pots"]
POTS = {"king": 100, "pagat": 50}


# ---------------------------------------------------------------------------- helpers


FACES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K"]


def h(spec: str) -> list[str]:
    """Card codes from a compact text: codes separated by spaces, where ``X..Y`` is a run inside one
    suit (face order A 2 … 10 J C Q K) or of taroks, in either direction: ``T21..T4``, ``H10..H5``."""
    out: list[str] = []
    for token in spec.split():
        if ".." not in token:
            out.append(token)
            continue
        a, b = token.split("..")
        assert a[0] == b[0], token
        if a[0] == "T":
            lo, hi = int(a[1:]), int(b[1:])
            out += [f"T{n}" for n in (range(lo, hi + 1) if lo <= hi else range(lo, hi - 1, -1))]
        else:
            i, j = FACES.index(a[1:]), FACES.index(b[1:])
            out += [a[0] + FACES[k] for k in (range(i, j + 1) if i <= j else range(i, j - 1, -1))]
    return out


def value(code: str | Card) -> int:
    """G-CP-1 card value, written out from RULES (not taken from the engine)."""
    c = str(code)
    if c in ("T1", "T21", "EX") or (c[0] in "SHDC" and c[1:] == "K"):
        return 5
    if c[0] in "SHDC":
        return {"Q": 4, "C": 3, "J": 2}.get(c[1:], 1)
    return 1


def is_counting(code: str | Card) -> bool:
    c = str(code)
    return c in ("T1", "T21", "EX") or (c[0] in "SHDC" and c[1:] in ("K", "Q", "C", "J"))


def p78(pile: Iterable[str | Card]) -> int:
    cards = [str(c) for c in pile]
    assert len(cards) % 3 == 0
    return sum(value(c) for c in cards) - 2 * len(cards) // 3


def p001(pile: Iterable[str | Card]) -> int:
    """G-CP-5: honours and Kings 4, Queens 3, Cavaliers 2, Jacks 1, blanks one point per three."""
    cards = [str(c) for c in pile]
    blanks = sum(1 for c in cards if not is_counting(c))
    return sum(value(c) - 1 for c in cards if is_counting(c)) + blanks // 3


# DK-END-7 table, copied from RULES §4.6: (low CP, high CP, amount received from forehand).
END7_TABLE = [
    (0, 3, -25), (4, 8, -20), (9, 13, -15), (14, 18, -10), (19, 23, -5), (24, 28, 0),
    (29, 33, 5), (34, 38, 10), (39, 43, 15), (44, 48, 20), (49, 53, 25), (54, 58, 30),
    (59, 63, 35), (64, 68, 40), (69, 73, 45), (74, 78, 50),
]  # fmt: skip


def table_amount(cp: int) -> int:
    for low, high, amount in END7_TABLE:
        if low <= cp <= high:
            return amount
    raise AssertionError(cp)


def begin(
    name: str,
    hands: dict[int, Sequence[str]],
    discard: Sequence[str] = (),
    dealer: int = 0,
    options: dict[str, str] | None = None,
    pots: dict[str, int] | None = None,
    stakes: bool = False,
) -> DealState:
    """A deal with the given hands; the redeal round (if any) is passed and `discard` laid away."""
    state = new_deal(
        name, hands=hands, dealer=dealer, options=options or {}, pots=pots or POTS, stakes=stakes
    )
    while state.phase == "redeal":
        act(state, "pass")
    act(state, *(f"discard {c}" for c in discard))
    return state


def auto_discard(state: DealState) -> DealState:
    """Lay away the first legal cards (any legal skat will do for the test at hand)."""
    while state.phase == "discard":
        act(state, str(state.legal_actions()[0]))
    return state


def play_script(state: DealState, scripts: dict[int, Sequence[str]]) -> DealState:
    """Play each seat's listed cards in order (``EX:S`` = the Fool led with designation S).

    Demand rounds are answered with `pass`.
    """
    queues = {seat: list(cards) for seat, cards in scripts.items()}
    while not state.is_terminal():
        if state.phase == "demand":
            act(state, "pass")
            continue
        seat = state.current_player
        assert seat is not None
        code = queues[seat].pop(0)
        text = "play " + code.replace(":", " ")
        assert text in legal(state), (
            f"trick {state.trick_no}: seat {seat} cannot {text}; legal {sorted(legal(state))}"
        )
        act(state, text)
    return state


Policy = Callable[[DealState, list[Action]], Action]


def random_policy(rng: random.Random, avoid_fool: bool = False) -> Policy:
    """A random legal action; redeal and demand rounds are always answered `pass`."""

    def choose(state: DealState, actions: list[Action]) -> Action:
        if state.phase in ("demand", "redeal"):
            return next(a for a in actions if a.type == "pass")
        pool = actions
        if avoid_fool:
            pool = [a for a in actions if a.card is None or not a.card.is_fool] or actions
        return rng.choice(pool)

    return choose


def run(state: DealState, policy: Policy, stop: Callable[[DealState], bool] | None = None) -> DealState:
    steps = 0
    while not state.is_terminal() and not (stop and stop(state)):
        actions = state.legal_actions()
        assert actions, f"no legal action in {state!r} (AMB-57)"
        state.apply(policy(state, actions))
        steps += 1
        assert steps < 400
    return state


def entries(result, rule: str) -> Counter[tuple[object, object, int]]:
    """The transfers of one rule as a multiset of (source, target, amount)."""
    return Counter((t.source, t.target, t.amount) for t in result.ledger if t.rule == rule)


def each(seat: int, amount: int, receives: bool = True) -> Counter[tuple[object, object, int]]:
    """G-PAY-2 in ledger form: `seat` receives (or pays) `amount` from (to) each other player."""
    others = [s for s in (D, M, F) if s != seat]
    if receives:
        return Counter((o, seat, amount) for o in others)
    return Counter((seat, o, amount) for o in others)


def assert_zero_sum(result) -> None:
    """G-PAY-3: the ledger sums to zero, and deltas/pots are its balances."""
    accounts = Counter()
    for t in result.ledger:
        assert t.amount > 0
        accounts[t.source] -= t.amount
        accounts[t.target] += t.amount
    assert sum(result.deltas) + sum(result.pots.values()) == 0
    for seat, delta in enumerate(result.deltas):
        assert accounts.get(seat, 0) == delta
    for pot, change in result.pots.items():
        assert accounts.get(pot, 0) == change


# ---------------------------------------------------------------------------- scripted deals


@dataclass
class Scenario:
    hands: dict[int, list[str]]
    discard: list[str]
    scripts: dict[int, list[str]]

    def deal(
        self, name: str, options: dict[str, str] | None = None, pots: dict[str, int] | None = None
    ) -> DealState:
        state = begin(name, self.hands, self.discard, options=options, pots=pots)
        return play_script(state, self.scripts)


def scenario_king_ultimo() -> Scenario:
    """F leads SK to trick 25 and wins it; M throws HK on it (failed King ultimo, AMB-08).

    F wins 23 tricks, M trick 19, D trick 20 (no Tout, no Nolo).  The Pagat wins trick 23.
    """
    return Scenario(
        hands={
            F: h("T1..T21 S3 C3 SK DK"),
            M: h("SQ C2 HK H10 SJ SC HJ HC CJ CC CQ DJ DC DQ SA S2 S4..S10 HA H2"),
            D: h("EX CK HQ H3..H9 DA D2..D10 CA C4..C10"),
        },
        discard=h("DA D2 D3"),
        scripts={
            F: h("T21..T4 S3 C3 T3 T2 T1 DK SK"),
            M: h("SJ SC HJ HC CJ CC CQ DJ DC SA S2 S4..S10 SQ C2 H10 HA H2 DQ HK"),
            D: h("EX H3..H9 D4..D9 CA C4 C5 C6 C7 CK HQ C8 C9 D10 C10"),
        },
    )


def scenario_pagat_ultimo() -> Scenario:
    """As the King-ultimo deal, but F wins trick 25 with T1 while M throws HK on it."""
    s = scenario_king_ultimo()
    s.scripts[F] = h("T21..T4 S3 C3 T3 T2 DK SK T1")
    s.scripts[M] = s.scripts[M][:21] + h("HA DQ H2 HK")
    s.scripts[D] = s.scripts[D][:21] + h("C8 D10 C9 C10")
    return s


def scenario_last_trick() -> Scenario:
    """F wins trick 25 with T2; M throws HK and D throws CK on it: two failed King ultimos."""
    s = scenario_king_ultimo()
    s.hands[M] = [c if c != "CQ" else "C10" for c in s.hands[M]]
    s.hands[D] = [c if c != "C10" else "CQ" for c in s.hands[D]]
    s.scripts[F] = h("T21..T4 S3 C3 T3 T1 DK SK T2")
    s.scripts[M] = [c if c != "CQ" else "C10" for c in s.scripts[M][:21]] + h("HA DQ H2 HK")
    s.scripts[D] = s.scripts[D][:19] + h("CQ HQ C8 D10 C9 CK")
    return s


def scenario_failed_pagat() -> Scenario:
    """M leads T2 to trick 25 and F must play his last card, T1, under it (failed Pagat ultimo).

    F wins 21 tricks, D tricks 22-23, M tricks 24-25 (last trick with T2, a plain 20).
    """
    return Scenario(
        hands={
            F: h("T1 T13..T21 SK SQ SC SJ HK HQ HC HJ DK DQ DC DJ CQ C4 C5"),
            M: h("T2..T12 S2..S5 H10..H7 D10..D7 C2 C3"),
            D: h("EX SA S6..S10 HA..H6 DA..D6 CA C6..C10 CJ CC CK"),
        },
        discard=h("SA S6 S7"),
        scripts={
            F: h("T21..T13 SK SQ SC SJ HK HQ HC HJ DK DQ DC DJ CQ C4 C5 T1"),
            M: h("T12..T4 S2..S5 H10..H7 D10..D7 C2 C3 T3 T2"),
            D: h("EX CA C6..C9 CJ DA D2 S8 S9 S10 D3 HA H2 H3 H4 D4 D5 D6 H5 CK CC C10 H6"),
        },
    )


def scenario_nolo() -> Scenario:
    """M (the Fool's owner, holding only the lowest cards and SK) wins no trick: Nolo.

    F wins 23 tricks (the Pagat wins trick 20), D wins 23-24; in trick 25 D leads HK, F trumps
    with T2 and M throws SK: two failed King ultimos, one of them the noloist's.
    """
    return Scenario(
        hands={
            F: h("T1..T21 CK DK S7 S8"),
            M: h("EX SK SA..S5 CA..C6 H10..H5 D10..D5"),
            D: h("S6 S9 S10 SJ SC SQ C7..C10 CJ CC CQ H4..HA HJ HC HQ HK D4..DA DJ DC DQ"),
        },
        discard=h("C7 C8 C9"),
        scripts={
            F: h("T21..T3 T1 CK DK S7 S8 T2"),
            M: h("EX S3 S4 S5 C2..C6 H10..H5 D9..D5 CA D10 SA S2 SK"),
            D: h("S6 S10 SJ SC CJ CC CQ H4..HA HJ HC HQ D3 D2 DA DJ DC DQ C10 D4 S9 SQ HK"),
        },
    )


def scenario_dealer_nolo() -> Scenario:
    """The dealer owns the Fool and wins no trick; his skat is S7 C7 H4 (DK-FOOL-6, AMB-22).

    F wins tricks 1-20 and 25 (trick 25 with T1), M wins 21-24 with his four Kings.
    """
    return Scenario(
        hands={
            F: h("T1..T21 SQ CQ HQ DQ"),
            M: h("SK HK DK CK S8..S10 SJ SC C8..C10 CJ CC H3..HA HJ HC D4..DA DJ DC"),
            D: h("EX SA..S7 CA..C7 H10..H4 D10..D5"),
        },
        discard=h("S7 C7 H4"),
        scripts={
            F: h("T21..T2 SQ HQ DQ CQ T1"),
            M: h("S8 S9 S10 SJ C8 C9 C10 CJ CC H3 H2 HA HJ HC D4..DA DJ DC SK HK DK CK SC"),
            D: h("EX S3..S6 C2..C6 H9..H5 D9..D5 SA H10 D10 CA S2"),
        },
    )


def scenario_tout() -> Scenario:
    """F wins all 25 tricks.  The dealer owns the Fool (played to trick 1) and throws HK on trick 25."""
    return Scenario(
        hands={
            F: h("T1..T21 SK SQ DK CK"),
            M: h("SA..S6 CA..C6 H10..H5 D10..D4"),
            D: h("EX HK S7..S10 SJ SC C7..C10 CJ CC CQ H4..HA HJ HC HQ D3..DA DJ DC DQ"),
        },
        discard=h("S7 S8 S9"),
        scripts={
            F: h("T21..T3 T1 SK SQ DK CK T2"),
            M: h("S3..S6 C2..C6 H9..H5 D9..D4 SA S2 D10 CA H10"),
            D: h("EX SC C8 C9 C10 CJ CC CQ H4..HA HJ HC HQ D2 DA DJ DC DQ S10 SJ D3 C7 HK"),
        },
    )


def hands_are_a_deal(s: Scenario) -> None:
    cards = [c for h in s.hands.values() for c in h]
    assert len(cards) == 78 and len(set(cards)) == 78
    assert [len(s.hands[x]) for x in (D, M, F)] == [28, 25, 25]


@pytest.mark.parametrize(
    "make",
    [scenario_king_ultimo, scenario_pagat_ultimo, scenario_last_trick, scenario_failed_pagat, scenario_nolo,
     scenario_dealer_nolo, scenario_tout],
)  # fmt: skip
def test_scenarios_are_complete_deals(make: Callable[[], Scenario]) -> None:
    """G-DEAL-1 / DK-DEAL-1: each scripted deal uses the 78 cards, 25/25/28."""
    hands_are_a_deal(make())


def C(*items: tuple[object, object, int]) -> Counter[tuple[object, object, int]]:
    return Counter(items)


def times(counter: Counter[tuple[object, object, int]], n: int) -> Counter[tuple[object, object, int]]:
    return Counter({k: v * n for k, v in counter.items()})


def check_ledger(result, expected: dict[str, Counter[tuple[object, object, int]]]) -> None:
    """Every rule's transfers are exactly the expected ones, and no other rule pays."""
    assert_zero_sum(result)
    for rule, want in expected.items():
        assert entries(result, rule) == want, rule
    assert {t.rule for t in result.ledger} == {rule for rule, want in expected.items() if want}


# ------------------------------------------------------------------------- DK-END-4 ultimos, AMB-08, AMB-46


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_4_king_ultimo_takes_pot_after_failed_king_in_same_trick(name: str) -> None:
    """DK-END-4 King ultimo (40 from each + King pot), DK-END-3 failed King, AMB-08, AMB-46, AMB-07."""
    state = scenario_king_ultimo().deal(name)
    r = state.result()
    assert r.tricks_won == [1, 1, 23]
    last = state.tricks[-1]
    assert last.winner == F and str(last.card_of(F)) == "SK" and str(last.card_of(M)) == "HK"
    danish = name == "danish"
    p0 = 100  # King pot at the start of DK-END-3 (no stakes, no in-play King payment)
    failed_into_pot = p0 if danish else 40  # AMB-07: "doubles the pot" vs fixed 40
    check_ledger(
        r,
        {
            "DK-DECL-3": each(F, 65),  # Taroks, 21 taroks with Pagat
            "DK-INPLAY-2": each(F, 5) if danish else C(),  # T1 wins trick 23 (AMB-05)
            "DK-END-3": each(M, 40, receives=False) + C((M, "king", failed_into_pot)),
            # AMB-08: F takes the whole King pot, M's failure payment included; AMB-46: no extra 20.
            "DK-END-4": each(F, 40) + C(("king", F, 100 + failed_into_pot)),
            "DK-END-7": C((M, F, 20), (D, F, 15)),
        },
    )
    assert r.pots == {"king": -100, "pagat": 0}  # the King pot is emptied (DK-POT-5)
    assert r.card_points[M] == 4 and r.card_points[D] == 10
    assert r.deltas == ([-85, -310, 495] if danish else [-80, -245, 425])


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_4_pagat_ultimo_and_failed_king_stays_in_king_pot(name: str) -> None:
    """DK-END-4 Pagat ultimo (45 from each + Pagat pot); DK-END-3 failed King pays into the King pot,
    which nobody wins; AMB-06: T1 in trick 25 earns no in-play payment; AMB-46 exclusive."""
    state = scenario_pagat_ultimo().deal(name)
    r = state.result()
    last = state.tricks[-1]
    assert last.winner == F and str(last.card_of(F)) == "T1"
    danish = name == "danish"
    into_king = 100 if danish else 40
    check_ledger(
        r,
        {
            "DK-DECL-3": each(F, 65),
            "DK-INPLAY-2": C(),
            "DK-END-3": each(M, 40, receives=False) + C((M, "king", into_king)),
            "DK-END-4": each(F, 45) + C(("pagat", F, 50)),
            "DK-END-7": C((M, F, 20), (D, F, 15)),
        },
    )
    assert r.pots == {"king": into_king, "pagat": -50}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_3_two_failures_each_pay_p0_and_last_trick_20(name: str) -> None:
    """DK-END-3 (AMB-07): two Kings lost in trick 25 each pay P0 (`danish`) or 40 (`danish-pots`);
    DK-END-4: a plain tarok wins the last trick, 20 from each."""
    state = scenario_last_trick().deal(name)
    r = state.result()
    last = state.tricks[-1]
    assert last.winner == F and str(last.card_of(F)) == "T2"
    assert {str(last.card_of(M)), str(last.card_of(D))} == {"HK", "CK"}
    danish = name == "danish"
    into_king = 100 if danish else 40  # each failing player pays the pot's value at the start of the step
    check_ledger(
        r,
        {
            "DK-DECL-3": each(F, 65),
            "DK-INPLAY-2": each(F, 5) if danish else C(),  # T1 wins trick 22
            "DK-END-3": each(M, 40, receives=False)
            + each(D, 40, receives=False)
            + C((M, "king", into_king), (D, "king", into_king)),
            "DK-END-4": each(F, 20),
            "DK-END-7": C((M, F, 20), (D, F, 15)),
        },
    )
    assert r.pots == {"king": 2 * into_king, "pagat": 0}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_3_failed_pagat_ultimo(name: str) -> None:
    """DK-END-3: T1 played to trick 25 and lost: 45 to each and P0 (`danish`) / 45 (`danish-pots`)
    into the Pagat pot; DK-END-4: the winner (T2) gets the plain 20; DK-DECL-3 several declarers."""
    state = scenario_failed_pagat().deal(name)
    r = state.result()
    assert r.tricks_won == [2, 2, 21]
    last = state.tricks[-1]
    assert last.winner == M and str(last.card_of(F)) == "T1"
    danish = name == "danish"
    into_pagat = 50 if danish else 45
    check_ledger(
        r,
        {
            # F: Taroks (10, with T1) 10, Full S/H/D 10 each; M: Taroks (11) 15; D: Half in C (CK CC CJ + EX).
            "DK-DECL-3": times(each(F, 10), 4) + each(M, 15) + each(D, 5),
            "DK-END-3": each(F, 45, receives=False) + C((F, "pagat", into_pagat)),
            "DK-END-4": each(M, 20),
            # M's pile: C10 C5 T3 + T2 T1 H6 = 6 → −20; D's: CQ C2 CK CC C4 C3 S6 S7 EX = 16 → −10.
            "DK-END-7": C((M, F, 20), (D, F, 10)),
        },
    )
    assert r.card_points[M] == 6 and r.card_points[D] == 16
    assert r.pots == {"king": 0, "pagat": into_pagat}


# ---------------------------------------------------------------------------- DK-END-5 Tout, DK-FOOL-5


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_5_tout_takes_both_pots_after_failed_king(name: str) -> None:
    """DK-END-5 Tout 80 (`danish`) / 85 (`danish-pots`) + both pots, after DK-END-3 (AMB-10);
    it replaces the Tout-maker's DK-END-4 win; DK-FOOL-5 the Fool goes to him without exchange."""
    state = scenario_tout().deal(name)
    r = state.result()
    assert r.tricks_won == [0, 0, 25]
    danish = name == "danish"
    into_king = 100 if danish else 40
    tout = 80 if danish else 85
    check_ledger(
        r,
        {
            # D: Overfull in H (HK HQ HC HJ + EX) 15, Half in C and in D (three courts + EX) 5 each.
            "DK-DECL-3": each(F, 65) + each(D, 15) + times(each(D, 5), 2),
            "DK-INPLAY-2": each(F, 5) if danish else C(),  # T1 wins trick 20
            "DK-END-3": each(D, 40, receives=False) + C((D, "king", into_king)),
            "DK-END-4": C(),  # replaced by the Tout (no King ultimo for CK, no 20)
            "DK-END-5": each(F, tout) + C(("king", F, 100 + into_king), ("pagat", F, 50)),
            "DK-END-6": C(),  # two players without tricks, and a Tout: no Nolo
            "DK-END-7": C((M, F, 25), (D, F, 25)),
        },
    )
    # DK-FOOL-5: the dealer's pile is his skat only (S7 S8 S9 → 1); under G-TRICK-7 he would have
    # kept the Fool and given S7 (5 card points).
    assert r.card_points[D] == 1
    assert r.pots == {"king": -100, "pagat": -50}


def test_dk_fool_5_tout_deal_owes_the_fool_from_a_pile_with_other_cards() -> None:
    """DK-FOOL-5 vs G-TRICK-7: in the Tout deal the Fool debt is the dealer's, whose pile also holds his
    skat, so G-TRICK-7 alone would have him keep the Fool and give S7."""
    state = scenario_tout().deal("danish")
    assert state.fool_debts == [(D, F, 1)]
    assert sorted(map(str, state.skat)) == ["S7", "S8", "S9"]
    assert state.tricks[0].fool_captured is False  # retained in trick 1 (DK-FOOL-1)


# ---------------------------------------------------------------------------- DK-END-6 Nolo, AMB-11


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_6_nolo_and_amb_11_failed_ultimos(name: str) -> None:
    """DK-END-6 Nolo 25 from each; DK-END-3/AMB-11: `danish` still charges failed ultimos (the
    noloist's included), `danish-pots` skips them; DK-END-4 is skipped under a Nolo in both."""
    state = scenario_nolo().deal(name)
    r = state.result()
    assert r.tricks_won == [2, 0, 23]
    last = state.tricks[-1]
    assert last.winner == F and {str(last.card_of(D)), str(last.card_of(M))} == {"HK", "SK"}
    danish = name == "danish"
    failed = (
        each(D, 40, receives=False) + each(M, 40, receives=False) + C((D, "king", 100), (M, "king", 100))
        if danish
        else C()
    )
    check_ledger(
        r,
        {
            "DK-DECL-3": each(F, 65) + each(D, 10),  # D: Full in H
            "DK-INPLAY-2": each(F, 5) if danish else C(),
            "DK-END-3": failed,
            "DK-END-4": C(),  # no last-trick payment to F under a Nolo
            "DK-END-6": each(M, 25),
            # M's only card was the Fool, given to F (G-TRICK-7): CP 0 → 25; D: 6 → 20.
            "DK-END-7": C((M, F, 25), (D, F, 20)),
        },
    )
    assert r.deltas == ([-235, -195, 230] if danish else [-90, -50, 140])


@pytest.mark.parametrize("name", PRESETS)
def test_dk_fool_6_dealer_without_tricks_and_nolo_skips_pagat_ultimo(name: str) -> None:
    """DK-FOOL-6 (AMB-22): a Fool owner who won no trick gives the Fool itself in `danish-pots`;
    in `danish` the dealer gives his lowest skat card (S7: value 1, lowest index) and keeps it.
    Also DK-END-4 skipped under a Nolo although T1 wins trick 25; DK-END-6 for the dealer."""
    state = scenario_dealer_nolo().deal(name)
    r = state.result()
    assert r.tricks_won == [0, 4, 21]
    assert str(state.tricks[-1].card_of(F)) == "T1" and state.tricks[-1].winner == F
    danish = name == "danish"
    dealer_cp = 5 if danish else 1  # C7 H4 EX = 7 − 2, or S7 C7 H4 = 3 − 2
    assert r.card_points[D] == dealer_cp
    assert r.card_points[F] == 78 - 32 - dealer_cp
    check_ledger(
        r,
        {
            "DK-DECL-3": each(F, 65) + each(M, 10),  # M: four Kings (Full) without the Fool
            "DK-END-4": C(),
            "DK-END-6": each(D, 25),
            "DK-END-7": C((F, M, 5), (D, F, 20 if danish else 25)),  # M: 32 → +5
        },
    )


# ---------------------------------------------------------------------------- DK-END-2 Fool exchange


@pytest.mark.parametrize("name", PRESETS)
def test_dk_end_2_exchange_gives_lowest_value_lowest_index(name: str) -> None:
    """DK-END-2 / G-TRICK-7 (AMB-22): the owner (the dealer, who won a trick) gives the card of lowest
    value in his pile, skat included, ties broken by the lowest canonical index: DA (index 28) among
    the blanks DA D2 D3 (skat) and C2 C3 (trick 20); he keeps the Fool."""
    from arena.engine.scoring import settle_fool

    state = scenario_king_ultimo().deal(name)
    assert state.fool_debts == [(D, F, 1)]
    piles = settle_fool(state)
    dealer_pile = sorted(map(str, piles[D]))
    assert dealer_pile == sorted(["C2", "C3", "CK", "D2", "D3", "EX"])
    assert Card.parse("DA") in piles[F]
    assert all(len(p) % 3 == 0 for p in piles)  # G-CP-3


# ---------------------------------------------------------------------------- DK-END-7 and G-CP-5


def test_dk_end_7_p001_counting_option() -> None:
    """DK-END-7 option `counting = p001` (G-CP-5, AMB-04): exact CP − 25 with forehand."""
    state = scenario_king_ultimo().deal("danish-pots", options={"counting": "p001"})
    r = state.result()
    # M: S3 SQ C7 → SQ 3 + floor(2/3) = 3; D: C2 C3 CK D2 D3 EX → CK 4 + EX 4 + floor(4/3) = 9.
    assert r.card_points[M] == 3 and r.card_points[D] == 9
    assert entries(r, "DK-END-7") == C((M, F, 22), (D, F, 16))
    assert_zero_sum(r)
    # The rest of the deal scores as in P78 counting.
    r78 = scenario_king_ultimo().deal("danish-pots").result()
    for rule in ("DK-DECL-3", "DK-END-3", "DK-END-4"):
        assert entries(r, rule) == entries(r78, rule)


def _rescore_with_piles(
    name: str, options: dict[str, str], piles: dict[int, list[str]], skat: list[str]
) -> tuple[DealState, object]:
    """Re-score a finished deal after replacing its final piles (DK-END-7 only depends on them).

    The Fool debts are cleared; forehand (seat 2) gets every card not listed, so the piles still
    partition the pack and every pile stays divisible by 3 (G-CP-3).
    """
    state = scenario_king_ultimo().deal(name, options=options)
    used = [c for p in piles.values() for c in p] + skat
    assert len(set(used)) == len(used)
    rest = [c for c in CARDS if str(c) not in set(used)]
    state.fool_debts = []
    state.skat = [Card.parse(c) for c in skat]
    state.piles = [[Card.parse(c) for c in piles.get(D, [])], [Card.parse(c) for c in piles.get(M, [])], rest]
    return state, score_deal(state)


def _pile_worth(k: int, avail: list[str]) -> list[str]:
    """A pile of P78 value k (G-CP-1): (counting card + two blanks) triplets, then blank triplets."""
    counting = sorted((c for c in avail if is_counting(c)), key=value, reverse=True)
    blanks = [c for c in avail if not is_counting(c)]
    pile: list[str] = []
    cp = 0
    for c in counting:
        if cp + value(c) <= k and len(blanks) >= 2:
            pile += [c, blanks.pop(), blanks.pop()]
            cp += value(c)
    while cp < k:
        pile += [blanks.pop(), blanks.pop(), blanks.pop()]
        cp += 1
    assert p78(pile) == k
    return pile


SKAT_BLANKS = ["S2", "S3", "S4"]


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("cp", range(78))
def test_dk_end_7_settlement_table_every_cp(name: str, cp: int) -> None:
    """DK-END-7: middlehand with CP = 0…77 settles with forehand per the §4.6 table (every bracket),
    and the table equals 5·floor((CP−24)/5) received / 5·floor((28−CP)/5) paid."""
    avail = [str(c) for c in CARDS if str(c) not in SKAT_BLANKS]
    _, r = _rescore_with_piles(name, {}, {M: _pile_worth(cp, avail)}, SKAT_BLANKS)
    assert r.card_points[M] == cp
    assert r.card_points[D] == 1  # the skat alone
    formula = 5 * ((cp - 24) // 5) if cp > 26 else (-5 * ((28 - cp) // 5) if cp < 26 else 0)
    assert formula == table_amount(cp)
    amount = table_amount(cp)
    expected = C((D, F, 25))  # the dealer's skat alone: CP 1
    if amount > 0:
        expected[(F, M, amount)] += 1
    elif amount < 0:
        expected[(M, F, -amount)] += 1
    assert entries(r, "DK-END-7") == expected
    assert_zero_sum(r)


@pytest.mark.parametrize("cp", [1, 3, 4, 13, 24, 26, 28, 29, 48, 53, 61, 73, 74, 77])
def test_dk_end_7_dealer_counts_pile_and_skat(cp: int) -> None:
    """DK-END-7 / DK-SKAT-1: the dealer counts his tricks together with his skat (here worth 1)."""
    avail = [str(c) for c in CARDS if str(c) not in SKAT_BLANKS]
    _, r = _rescore_with_piles("danish", {}, {D: _pile_worth(cp - 1, avail)}, SKAT_BLANKS)
    assert r.card_points[D] == cp and r.card_points[M] == 0
    amount = table_amount(cp)
    want = C((M, F, 25))  # the middlehand's empty pile
    if amount > 0:
        want[(F, D, amount)] += 1
    elif amount < 0:
        want[(D, F, -amount)] += 1
    assert entries(r, "DK-END-7") == want


@pytest.mark.parametrize("seed", range(12))
def test_dk_end_7_p001_exact_against_par_25(seed: int) -> None:
    """DK-END-7 option `p001` (G-CP-5): counting cards 4/3/2/1, blanks per three; exact CP − 25."""
    rng = random.Random(seed)
    cards = [str(c) for c in CARDS if str(c) not in SKAT_BLANKS]
    rng.shuffle(cards)
    n_m = 3 * rng.randint(0, 25)
    n_d = 3 * rng.randint(0, (75 - n_m) // 3)
    piles = {M: cards[:n_m], D: cards[n_m : n_m + n_d]}
    _, r = _rescore_with_piles("danish-pots", {"counting": "p001"}, piles, SKAT_BLANKS)
    cp_m, cp_d = p001(piles[M]), p001(piles[D] + SKAT_BLANKS)
    assert r.card_points[M] == cp_m and r.card_points[D] == cp_d
    want = Counter()
    for seat, cp in ((M, cp_m), (D, cp_d)):
        if cp > 25:
            want[(F, seat, cp - 25)] += 1
        elif cp < 25:
            want[(seat, F, 25 - cp)] += 1
    assert entries(r, "DK-END-7") == want
    assert_zero_sum(r)


def test_g_cp_5_p001_pack_total_is_71_and_two_thirds() -> None:
    """G-CP-5 / AMB-04: P001 over the whole pack: 19 counting cards worth 52, 59 blanks → 19 (71⅔ floored)."""
    assert p001([str(c) for c in CARDS]) == 52 + 19
    _, r = _rescore_with_piles("danish-pots", {"counting": "p001"}, {M: []}, SKAT_BLANKS)
    assert r.card_points[F] == p001([str(c) for c in CARDS if str(c) not in SKAT_BLANKS])


# ---------------------------------------------------------------------------- random deals, derived checks

CONFIGS = [
    ("danish", {}),
    ("danish", {"redeal": "auto"}),
    ("danish-pots", {}),
    ("danish-pots", {"red_pips": "straight", "counting": "p001"}),
]


DEAL_RULES = {
    "DK-POT-3", "DK-DECL-3", "DK-INPLAY-1", "DK-INPLAY-2", "DK-INPLAY-3",
    "DK-END-3", "DK-END-4", "DK-END-5", "DK-END-6", "DK-END-7",
}  # fmt: skip


def derived_inplay(state: DealState) -> dict[str, Counter[tuple[object, object, int]]]:
    """DK-INPLAY-1…3 recomputed from the trick history (tricks 1…24)."""
    danish = state.variant.name == "danish"
    out: dict[str, Counter[tuple[object, object, int]]] = {
        r: Counter() for r in ("DK-INPLAY-1", "DK-INPLAY-2", "DK-INPLAY-3")
    }
    for trick in state.tricks[:24]:
        for seat, card in trick.plays:
            won = seat == trick.winner
            if str(card) == "T1":
                if won and danish:
                    out["DK-INPLAY-2"] += each(seat, 5)
                elif not won:
                    out["DK-INPLAY-1"] += each(seat, 5, receives=False) + C((seat, "pagat", 5))
            elif card.is_king and not won:
                out["DK-INPLAY-3"] += each(seat, 5, receives=False) + C((seat, "king", 5))
    return out


def _random_deals(n: int) -> Iterable[tuple[str, dict[str, str], int, DealState]]:
    for name, options in CONFIGS:
        variant = find_variant(name, options)
        for seed in range(n):
            rng = random.Random(seed)
            deck = list(CARDS)
            rng.shuffle(deck)
            pots = {"king": rng.choice([0, 7, 65, 200]), "pagat": rng.choice([0, 1, 65, 125])}
            state = DealState(variant, seed % 3, deck, pots=pots, stakes=True)
            yield name, options, seed, run(state, random_policy(rng))


def test_random_deals_follow_the_danish_end_rules() -> None:
    """G-PAY-3 zero sum, DK-POT-4 (no pot ever negative), DK-INPLAY-1…3, DK-END-1…7 and DK-TAB-1
    (forehand is the counterparty of every card settlement) on random deals of every configuration."""
    seen = Counter()
    for name, options, seed, state in _random_deals(100):
        r = state.result()
        assert_zero_sum(r)
        # DK-POT-4: replay the ledger in order; no pot goes below zero at any point.
        balance = dict(state.pots_start)
        for t in r.ledger:
            for account, sign in ((t.source, -1), (t.target, 1)):
                if isinstance(account, str):
                    balance[account] += sign * t.amount
                    assert balance[account] >= 0, (name, seed, t)
        if r.annulled:
            seen["annulled"] += 1
            assert {t.rule for t in r.ledger} <= {"DK-POT-3"}
            continue
        # DK-END-8: the deal result is made of stakes, declarations, in-play and DK-END-3…7 only.
        assert {t.rule for t in r.ledger} <= DEAL_RULES
        for rule, want in derived_inplay(state).items():
            assert entries(r, rule) == want, (name, seed, rule)
        won = r.tricks_won
        assert sum(won) == 25
        tout = [s for s in state.order if won[s] == 25]
        trickless = [s for s in state.order if won[s] == 0]
        nolo = not tout and len(trickless) == 1
        last = state.tricks[-1]
        lost25 = [(s, str(c)) for s, c in last.plays if (str(c) == "T1" or c.is_king) and s != last.winner]
        skip3 = nolo and name == "danish-pots"
        assert bool(entries(r, "DK-END-3")) == (bool(lost25) and not skip3), (name, seed)
        if tout:
            seen["tout"] += 1
            tout_value = 80 if name == "danish" else 85
            assert each(tout[0], tout_value) <= entries(r, "DK-END-5"), (name, seed)
            assert not entries(r, "DK-END-4") and not entries(r, "DK-END-6")
        elif nolo:
            seen["nolo"] += 1
            assert entries(r, "DK-END-6") == each(trickless[0], 25)
            assert not entries(r, "DK-END-4")
        else:
            seen["normal"] += 1
            c = str(last.card_of(last.winner))
            e4 = entries(r, "DK-END-4")
            if c == "T1":
                assert each(last.winner, 45) <= e4 and any(s == "pagat" for s, _, _ in e4)
            elif c.endswith("K") and c[0] in "SHDC":
                assert each(last.winner, 40) <= e4 and any(s == "king" for s, _, _ in e4)
            else:
                assert e4 == each(last.winner, 20)  # AMB-46: only here is the 20 paid
        # DK-END-7: only the two non-forehand players settle, and only with forehand.
        want7 = Counter()
        for seat in state.order[1:]:
            cp = r.card_points[seat]
            amount = cp - 25 if options.get("counting") == "p001" else table_amount(cp)
            if amount > 0:
                want7[(state.forehand, seat, amount)] += 1
            elif amount < 0:
                want7[(seat, state.forehand, -amount)] += 1
        assert entries(r, "DK-END-7") == want7, (name, seed)
        # G-CP-1: P78 card points of the three piles add up to the pack's 78.
        if options.get("counting") != "p001":
            assert sum(r.card_points) == 78
    assert seen["normal"] > 300, seen


# ---------------------------------------------------------------------------- DK-TAB-1


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_dk_tab_1_anticlockwise_forehand_is_dealers_right_and_leads(name: str, dealer: int) -> None:
    """DK-TAB-1 / G-SEAT-2/3/8: next(i) = i − 1; forehand = dealer − 1 leads trick 1; order F, M, D."""
    state = begin(name, {}, dealer=dealer)
    assert state.forehand == (dealer - 1) % 3
    assert state.order == ((dealer - 1) % 3, (dealer - 2) % 3, dealer)
    assert state.phase == "discard" and state.current_player == dealer
    auto_discard(state)
    assert state.phase == "play" and state.current_player == state.forehand
    card = state.legal_actions()[0]
    state.apply(card)
    assert state.current_player == state.order[1]


@pytest.mark.parametrize("name", PRESETS)
def test_dk_tab_1_deal_passes_to_the_right(name: str) -> None:
    """DK-TAB-1 / G-SEAT-5: in a match the deal passes to the right: dealer 0, 2, 1, 0."""
    m = Match(find_variant(name), seed=3, deals=4)
    dealers = []
    rng = random.Random(0)
    while not m.is_over():
        state = m.start_deal()
        dealers.append(state.dealer)
        m.finish_deal(run(state, random_policy(rng)))
    assert [d for d, r in zip(dealers, m.results, strict=True) if not r.annulled] == [0, 2, 1, 0]


# ---------------------------------------------------------------------------- DK-POT-1…6 through Match


def patch_decks(monkeypatch: pytest.MonkeyPatch, decks: dict[int, list[Card]]) -> None:
    """Make `Match` deal the given decks (by deal index); other deals use the normal shuffle."""
    import arena.engine.match as match_module

    original = match_module.deck_for
    monkeypatch.setattr(
        match_module, "deck_for", lambda seed, i: decks[i] if i in decks else original(seed, i)
    )


ANTE = {"danish": 20, "danish-pots": 40}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_pot_1_2_antes_at_match_start(name: str) -> None:
    """DK-POT-1 two pots starting at 0; DK-POT-2 each player antes 20 / 40 into each pot."""
    m = Match(find_variant(name), seed=1, deals=3)
    ante = ANTE[name]
    assert m.pots == {"king": 3 * ante, "pagat": 3 * ante}
    assert m.scores == [-2 * ante] * 3  # G-PAY-4: initial antes are subtracted
    assert Counter((t.source, t.target, t.amount) for t in m.match_ledger if t.rule == "DK-POT-2") == Counter(
        {(s, pot, ante): 1 for s in range(3) for pot in ("king", "pagat")}
    )


@pytest.mark.parametrize("name", PRESETS)
def test_dk_pot_3_first_deal_starts_with_65_or_125(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """DK-POT-3 (AMB-09): the first deal starts with 65/65 (`danish`) or 125/125 (`danish-pots`).

    Seen through the King-ultimo deal: in `danish` the failed King pays P0 = 65 into the King pot;
    the King ultimo then takes P0 + the failure payment.
    """
    scen = scenario_king_ultimo()
    variant = find_variant(name)
    patch_decks(monkeypatch, {0: deck_for_hands(variant, 0, scen.hands)})
    m = Match(variant, seed=5, deals=1)
    state = m.start_deal()
    assert state.pots_start == {"king": 3 * ANTE[name], "pagat": 3 * ANTE[name]}
    while state.phase == "redeal":
        act(state, "pass")
    act(state, *(f"discard {c}" for c in scen.discard))
    play_script(state, scen.scripts)
    r = m.finish_deal(state)
    assert entries(r, "DK-POT-3") == C((D, "king", 5), (D, "pagat", 5))  # no pot empty: dealer's stake only
    start = 65 if name == "danish" else 125
    failed = start if name == "danish" else 40
    assert entries(r, "DK-END-3")[(M, "king", failed)] == 1
    assert entries(r, "DK-END-4")[("king", F, start + failed)] == 1
    assert m.pots == {"king": 0, "pagat": start}  # DK-POT-5: the King pot is emptied by being won


@pytest.mark.parametrize("name", PRESETS)
def test_dk_pot_3_5_refill_after_pot_won(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """DK-POT-5: an emptied pot is refilled at the start of the next deal; DK-POT-3: `danish` refills
    (20 each) and stakes only the non-empty pot; `danish-pots` refills (40 each) and stakes both."""
    scen = scenario_king_ultimo()
    variant = find_variant(name)
    patch_decks(monkeypatch, {0: deck_for_hands(variant, 0, scen.hands)})
    m = Match(variant, seed=5, deals=2)
    state = m.start_deal()
    while state.phase == "redeal":
        act(state, "pass")
    act(state, *(f"discard {c}" for c in scen.discard))
    m.finish_deal(play_script(state, scen.scripts))
    assert m.pots["king"] == 0
    state = m.start_deal()
    assert state.dealer == 2 and state.pots_start["king"] == 0
    r = m.finish_deal(run(state, random_policy(random.Random(1))))
    refill = Counter({(s, "king", ANTE[name]): 1 for s in range(3)})
    if name == "danish":
        assert entries(r, "DK-POT-3") == refill + C((2, "pagat", 5))
    else:
        assert entries(r, "DK-POT-3") == refill + C((2, "king", 5), (2, "pagat", 5))


@pytest.mark.parametrize("name", PRESETS)
def test_dk_pot_3_refill_per_pot(name: str) -> None:
    """DK-POT-3: each pot separately: an empty pot is refilled by every player; the dealer's stake of 5
    goes into each non-empty pot (`danish`) or into each pot after the refill (`danish-pots`)."""
    state = new_deal(name, hands={}, dealer=1, pots={"king": 0, "pagat": 30}, stakes=True)
    r = run(state, random_policy(random.Random(2))).result()
    refill = Counter({(s, "king", ANTE[name]): 1 for s in range(3)})
    stake = C((1, "pagat", 5)) if name == "danish" else C((1, "king", 5), (1, "pagat", 5))
    assert entries(r, "DK-POT-3") == refill + stake
    assert_zero_sum(r)


def test_dk_pot_4_pots_pay_only_ultimo_tout_and_split() -> None:
    """DK-POT-4: money leaves a pot only through DK-END-4, DK-END-5 (and DK-POT-6 in Match)."""
    for _, _, _, state in _random_deals(25):
        for t in state.result().ledger:
            if isinstance(t.source, str):
                assert t.rule in ("DK-END-4", "DK-END-5")
            if isinstance(t.target, str):
                assert t.rule in ("DK-POT-3", "DK-INPLAY-1", "DK-INPLAY-3", "DK-END-3")


@pytest.mark.parametrize("name", PRESETS)
def test_dk_pot_6_final_split_remainder_from_last_forehand(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DK-POT-6 (AMB-38): floor(V/3) each, the V mod 3 extra points one each in playing order from
    the forehand of the last deal; G-PAY-3: the match is zero-sum after the split; G-PAY-4."""
    scen = scenario_king_ultimo()
    variant = find_variant(name)
    patch_decks(monkeypatch, {0: deck_for_hands(variant, 0, scen.hands)})
    m = Match(variant, seed=5, deals=1)
    state = m.start_deal()
    while state.phase == "redeal":
        act(state, "pass")
    act(state, *(f"discard {c}" for c in scen.discard))
    r = m.finish_deal(play_script(state, scen.scripts))
    before = list(m.scores)
    pagat = m.pots["pagat"]
    assert m.pots["king"] == 0 and pagat % 3 == 2  # 65 or 125
    shares = m.final_split()
    # Forehand of the last deal is seat 2; playing order 2, 1, 0: seats 2 and 1 get the extra points.
    base = pagat // 3
    assert shares == [base, base + 1, base + 1]
    assert m.pots == {"king": 0, "pagat": 0}
    assert sum(m.scores) == 0
    ante = ANTE[name]
    assert m.scores == [-2 * ante + r.deltas[s] + shares[s] for s in range(3)]
    assert m.scores == [before[s] + shares[s] for s in range(3)]


@pytest.mark.parametrize("name, options", CONFIGS)
def test_dk_pot_6_random_matches_are_zero_sum_after_split(name: str, options: dict[str, str]) -> None:
    """DK-POT-6 / G-PAY-3: over random matches, every pot is split in full by the remainder rule and
    the players' totals sum to zero."""
    rng = random.Random(11)
    for seed in range(4):
        m = Match(find_variant(name, options), seed=seed, deals=3)
        while not m.is_over():
            m.finish_deal(run(m.start_deal(), random_policy(rng)))
        pots = dict(m.pots)
        forehand = m.last_forehand
        assert forehand is not None
        order = [forehand, (forehand - 1) % 3, (forehand - 2) % 3]
        want = [0, 0, 0]
        for value_ in pots.values():
            for k, seat in enumerate(order):
                want[seat] += value_ // 3 + (1 if k < value_ % 3 else 0)
        assert m.final_split() == want
        assert sum(m.scores) == 0 and all(v == 0 for v in m.pots.values())


# ---------------------------------------------------------------------------- DK-DEAL-1/2


def test_dk_deal_1_packets_of_five_dealer_takes_last_three() -> None:
    """DK-DEAL-1 (G-DEAL-1): forehand gets d[0..4], d[15..19], …; the dealer d[10..14], … and d[75..77]."""
    variant = find_variant("danish")
    deck = list(CARDS)
    state = DealState(variant, 0, deck)
    positions = {
        F: [i for r in range(5) for i in range(15 * r, 15 * r + 5)],
        M: [i for r in range(5) for i in range(15 * r + 5, 15 * r + 10)],
        D: [i for r in range(5) for i in range(15 * r + 10, 15 * r + 15)] + [75, 76, 77],
    }
    for seat, pos in positions.items():
        assert sorted(state.hand(seat)) == sorted(deck[i] for i in pos)
    assert [len(state.hand(s)) for s in (D, M, F)] == [28, 25, 25]


NO_TAROK_25 = h("SA..SK HA..HJ")


def test_dk_deal_2_round_held_every_deal_in_playing_order() -> None:
    """DK-DEAL-2 (AMB-39): a redeal round is held in every `danish` deal, asked in playing order from
    forehand; a player holding a tarok can only answer `pass`; then the discard follows."""
    state = new_deal("danish", hands={}, pots=POTS, stakes=False)
    asked = []
    while state.phase == "redeal":
        asked.append(state.current_player)
        assert legal(state) == {"pass"}
        act(state, "pass")
    assert asked == [F, M, D]
    assert state.round_answers == [("redeal", F, "pass"), ("redeal", M, "pass"), ("redeal", D, "pass")]
    assert state.phase == "discard" and state.current_player == D


def test_dk_deal_2_only_player_without_tarok_may_claim_fool_does_not_count() -> None:
    """DK-DEAL-2: `redeal` is legal only for a player with no tarok; the Fool does not count."""
    hand = ["EX", *NO_TAROK_25[:24]]
    state = new_deal("danish", hands={M: hand}, pots=POTS, stakes=False)
    assert legal(state) == {"pass"}  # forehand holds taroks
    with pytest.raises(IllegalActionError) as err:
        act(state, "redeal")
    assert err.value.rule == "DK-DEAL-2"
    act(state, "pass")
    assert state.current_player == M and legal(state) == {"redeal", "pass"}
    # DK-DEAL-2: views must not reveal whose legal set contains `redeal`.
    for seat in (D, F):
        view = observation(state, seat)
        assert "legal_actions" not in view
        assert all(a["answer"] == "pass" for a in view.get("round_answers", []))
    act(state, "redeal")
    assert state.is_terminal()
    r = state.result()
    assert r.annulled and r.ledger == []  # stakes=False: nothing at all is paid
    assert state.round_answers[-1] == ("redeal", M, "redeal")
    assert len(state.round_answers) == 2  # the first redeal ends the round: the dealer is not asked


def test_dk_deal_2_dealer_judged_on_28_cards() -> None:
    """DK-DEAL-2: the dealer is judged on his 28 cards: a tarok among the last three he takes
    (d[75..77]) denies him a redeal; without any tarok in his 28 he may claim."""
    dh = h("DA..DK CA..CJ")
    state = new_deal("danish", hands={D: [*dh, "CC", "CQ", "T5"]}, pots=POTS, stakes=False)
    assert Card.parse("T5") == state.deck[77]
    act(state, "pass", "pass")
    assert state.current_player == D and legal(state) == {"pass"}

    state = new_deal("danish", hands={D: [*dh, "CC", "CQ", "CK"]}, pots=POTS, stakes=False)
    act(state, "pass", "pass")
    assert state.current_player == D and legal(state) == {"redeal", "pass"}
    act(state, "redeal")
    assert state.result().annulled


def test_dk_deal_2_auto_option_annuls_without_round() -> None:
    """DK-DEAL-2 option `redeal = auto`: no round is held; a deal with a tarok-less hand is annulled."""
    state = new_deal("danish", hands={M: NO_TAROK_25}, options={"redeal": "auto"}, pots=POTS, stakes=True)
    assert state.is_terminal() and state.round_answers == []
    r = state.result()
    assert r.annulled and entries(r, "DK-POT-3") == C((D, "king", 5), (D, "pagat", 5))
    assert {t.rule for t in r.ledger} == {"DK-POT-3"}
    # With taroks everywhere the deal goes straight to the discard.
    state = new_deal("danish", hands={}, options={"redeal": "auto"}, pots=POTS)
    assert state.phase == "discard" and state.round_answers == []
    # A dealer whose only tarok is among his last three cards is not tarok-less either.
    dh = h("DA..DK CA..CJ")
    state = new_deal("danish", hands={D: [*dh, "CC", "CQ", "T5"]}, options={"redeal": "auto"}, pots=POTS)
    assert state.phase == "discard"


def test_dk_deal_2_no_redeal_in_danish_pots() -> None:
    """§4.1: `danish-pots` has no redeal; a tarok-less hand is played; the option is not offered."""
    state = new_deal("danish-pots", hands={M: NO_TAROK_25}, pots=POTS)
    assert state.phase == "discard" and not state.is_terminal()
    with pytest.raises(ConfigError):
        find_variant("danish-pots", {"redeal": "claim"})


@pytest.mark.parametrize("mode", ["claim", "auto"])
def test_dk_deal_2_redeal_same_dealer_no_pot_payment_repeated(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DK-DEAL-2 / DK-POT-3 (AMB-39) / G-SEAT-5/7: after a redeal the same dealer deals again, no pot
    payment is repeated and the redeal does not count as a dealer turn."""
    variant = find_variant("danish", {"redeal": mode})
    patch_decks(monkeypatch, {0: deck_for_hands(variant, 0, {M: NO_TAROK_25})})
    m = Match(variant, seed=9, deals=1)
    state = m.start_deal()
    if mode == "claim":
        act(state, "pass", "redeal")
    assert state.is_terminal()
    r = m.finish_deal(state)
    assert r.annulled and entries(r, "DK-POT-3") == C((0, "king", 5), (0, "pagat", 5))
    assert m.pots == {"king": 65, "pagat": 65}
    assert not m.is_over() and m.dealer == 0
    state = m.start_deal()
    assert state.dealer == 0 and state.pots_start == {"king": 65, "pagat": 65}
    assert state.deck != tuple(deck_for_hands(variant, 0, {M: NO_TAROK_25}))  # a new shuffle
    r2 = m.finish_deal(run(state, random_policy(random.Random(4))))
    assert not r2.annulled
    assert entries(r2, "DK-POT-3") == C()  # no stake, no refill repeated
    assert m.is_over() and m.dealer == 2
    m.final_split()
    assert sum(m.scores) == 0


# ---------------------------------------------------------------------------- DK-SKAT-1…5


def discards(state: DealState) -> set[str]:
    return {a.removeprefix("discard ") for a in legal(state)}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_skat_1_2_never_kings_t1_t21_fool(name: str) -> None:
    """DK-SKAT-1: the dealer lays away exactly 3 cards, part of his pile; DK-SKAT-2: never a King,
    T1, T21 or the Fool; DK-SKAT-3: no middle tarok while he keeps T1/T21."""
    pips = h("S2..S8 C2..C8 D2..D8")
    dh = ["SK", "HK", "DK", "CK", "T1", "T21", "EX", *pips]
    state = begin(name, {D: dh})
    assert discards(state) == set(pips)
    for card in ("SK", "T1", "T21", "EX"):
        with pytest.raises(IllegalActionError) as err:
            act(state, f"discard {card}")
        assert err.value.rule == "DK-SKAT-2"
    act(state, "discard S2", "discard C2", "discard D2")
    assert sorted(map(str, state.skat)) == ["C2", "D2", "S2"] and len(state.hand(D)) == 25
    assert state.phase == "play"
    assert state.skat_public == {"taroks": 0, "shown": []}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_skat_3_middle_taroks_only_if_dealer_keeps_none(name: str) -> None:
    """DK-SKAT-3 (AMB-14): T2…T20 may go only if the dealer keeps no tarok; the number laid away is public."""
    rest = h("S2..S10 C2..C10 D2..D9")
    state = begin(name, {D: ["T5", "T7", "EX", *rest[:25]]})  # two middle taroks only (the Fool aside)
    assert {"T5", "T7"} <= discards(state) and "EX" not in discards(state)
    act(state, "discard T5")
    assert "T7" in discards(state)
    act(state, "discard S2")
    assert discards(state) == {"T7"}  # T5 alone would leave him a tarok
    with pytest.raises(IllegalActionError):
        act(state, "discard S3")
    act(state, "discard T7")
    assert state.skat_public == {"taroks": 2, "shown": []}
    assert all(observation(state, s)["skat_public"] == {"taroks": 2, "shown": []} for s in range(3))
    assert "skat" not in observation(state, M) and observation(state, D)["skat"] == ["T5", "S2", "T7"]

    # With T1 (or four middle taroks) no tarok may go.
    for held in (["T1", "T5"], ["T5", "T6", "T7", "T8"]):
        state = begin(name, {D: held + rest[: 28 - len(held)]})
        assert sorted(str(c) for c in state.hand(D) if c.is_tarok) == sorted(held)
        assert not any(c.startswith("T") for c in discards(state)), held


@pytest.mark.parametrize(
    "hand, first, second, rule",
    [
        # S3 after T5 and S2 is illegal because the dealer would keep T7 (DK-SKAT-3); no combination.
        ("T5 T7 EX S2..S10 C2..C10 D2..D8", ["T5", "S2"], "S3", "DK-SKAT-3"),
        # Fallback (DK-SKAT-5): middle taroks are legal, but after T9 both free cards must go (DK-SKAT-4).
        ("SK HK DK CK EX T1..T21 S2 S3", ["T9"], "T10", "DK-SKAT-4"),
    ],
    ids=["keeps-a-tarok", "fallback-free-cards-first"],
)
def test_dk_skat_rejections_name_the_rule_that_forbids(
    hand: str, first: list[str], second: str, rule: str
) -> None:
    """DK-SKAT-3/4/5: an illegal discard raises IllegalActionError naming the rule that forbids it."""
    state = begin("danish", {D: h(hand)})
    act(state, *(f"discard {c}" for c in first))
    assert f"discard {second}" not in legal(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, f"discard {second}")
    assert err.value.rule == rule


@pytest.mark.parametrize("name", PRESETS)
def test_dk_skat_4_maximise_non_combination_cards_and_show_the_others(name: str) -> None:
    """DK-SKAT-4 (AMB-48): the skat holds as many non-combination cards as possible; combination
    cards only fill the remaining places and are shown; DK-DECL-2 (AMB-41): the combinations still
    score, the dealer being judged on his 28 cards."""
    courts = [f"{s}{f}" for s in "SHDC" for f in ("K", "Q", "C", "J")]
    dh = courts + h("T1 T21 T2..T10 S2")  # one free card only
    state = begin(name, {D: dh})
    assert discards(state) == {"S2"} | {c for c in courts if not c.endswith("K")}
    act(state, "discard SQ")
    assert discards(state) == {"S2"} | {c for c in courts if not c.endswith("K")} - {"SQ"}
    act(state, "discard HJ")
    assert discards(state) == {"S2"}  # the one free card must take the last place
    with pytest.raises(IllegalActionError) as err:
        act(state, "discard DQ")
    assert err.value.rule == "DK-SKAT-4"
    act(state, "discard S2")
    assert state.skat_public == {"taroks": 0, "shown": ["SQ", "HJ"]}
    mine = {
        (d.combination.name, d.combination.suit): d.combination.value
        for d in state.declarations
        if d.seat == D
    }
    assert mine == {
        ("taroks", None): 15,  # 11 taroks
        ("full_kings", None): 10,
        ("full", "S"): 10,  # SQ is in the skat but the combination still scores
        ("full", "H"): 10,  # so is HJ
        ("full", "D"): 10,
        ("full", "C"): 10,
    }


@pytest.mark.parametrize("name", PRESETS)
def test_dk_skat_4_free_cards_first(name: str) -> None:
    """DK-SKAT-4: with three or more free cards, no combination card may be laid away."""
    # Overfull S, Half H, Taroks (11 taroks + the Fool): only the nine clubs are free cards.
    dh = h("SK SQ SC SJ EX HK HQ HC C2..C10 T2..T11 T21")
    state = begin(name, {D: dh})
    assert discards(state) == set(h("C2..C10"))


@pytest.mark.parametrize("name", PRESETS)
def test_dk_skat_5_fallback_middle_taroks(name: str) -> None:
    """DK-SKAT-5 (AMB-52): only when DK-SKAT-2/3 admit no skat do T2…T20 become legal; DK-SKAT-4
    still applies inside it (both free cards go), and the tarok laid away is counted and shown."""
    dh = h("SK HK DK CK EX T1..T21 S2 S3")
    state = begin(name, {D: dh})
    middle = {f"T{n}" for n in range(2, 21)}
    assert discards(state) == {"S2", "S3"} | middle
    act(state, "discard T9")
    assert discards(state) == {"S2", "S3"}
    act(state, "discard S3", "discard S2")
    assert state.skat_public == {"taroks": 1, "shown": ["T9"]}
    mine = {d.combination.name: d.combination.value for d in state.declarations if d.seat == D}
    # DK-DECL-2: judged on 28 cards (T9 included): 22 tarok-class cards, matadors T1 EX T21 T20…T2.
    assert mine == {"taroks": 10 + 5 * 12, "matadors": 10 + 5 * 19, "overfull_kings": 15}


# ---------------------------------------------------------------------------- DK-DECL-1…3


def decls(state: DealState, seat: int) -> dict[tuple[str, str | None], int]:
    return {
        (d.combination.name, d.combination.suit): d.combination.value
        for d in state.declarations
        if d.seat == seat
    }


DECL_HANDS = {
    # M: ten tarok-class cards with T1 and the Fool; matadors T1 EX T21 T20 T19; three Kings + EX;
    # four spade courts + EX; three heart courts + EX; two diamond courts; three clubs (no King) + EX.
    M: h("EX T1 T21 T20 T19 T2..T6 SK HK DK SQ SC SJ HQ HC DQ CQ CC CJ S2 S3 S4"),
    # F: ten taroks T7…T16 (no Pagat), no other combination.
    F: h("CK T7..T16 HJ DC DJ DA..D10 S5"),
}


@pytest.mark.parametrize("name", PRESETS)
def test_dk_decl_1_3_values_and_fool_wild(name: str) -> None:
    """DK-DECL-1: compulsory and automatic after the discard, dealer first then anticlockwise;
    DK-DECL-3: each combination's value; the Fool is wild and serves several declarations."""
    state = begin(name, DECL_HANDS, discard=())
    assert state.phase == "discard"
    auto_discard(state)
    assert state.phase == "play"
    assert not any(a.type == "declare" for a in state.legal_actions())
    assert decls(state, M) == {
        ("taroks", None): 10,  # n = 10 (T1 T2…T6 T19 T20 T21 + EX)
        ("matadors", None): 20,  # m = 5
        ("half_kings", None): 5,  # exactly three Kings + EX
        ("overfull", "S"): 15,  # K Q C J + EX
        ("half", "H"): 5,  # three courts + EX
        ("half", "C"): 5,  # Q C J + EX: any three of the four
    }
    assert decls(state, F) == {("taroks", None): 10}  # ten taroks T7…T16 without the Pagat
    tarok_m = next(
        d.combination for d in state.declarations if d.seat == M and d.combination.name == "taroks"
    )
    tarok_f = next(
        d.combination for d in state.declarations if d.seat == F and d.combination.name == "taroks"
    )
    assert tarok_m.public()["with_pagat"] is True and tarok_f.public()["with_pagat"] is False
    seats = [d.seat for d in state.declarations]
    order = [D, F, M]  # dealer, then anticlockwise
    assert seats == sorted(seats, key=order.index)
    # The ledger: each declarer receives the value from each opponent.
    r = run(state, random_policy(random.Random(3))).result()
    want = Counter()
    for d in state.declarations:
        want += each(d.seat, d.combination.value)
    assert entries(r, "DK-DECL-3") == want


@pytest.mark.parametrize("name", PRESETS)
def test_dk_decl_3_kings_and_suits_with_and_without_fool(name: str) -> None:
    """DK-DECL-3 (AMB-56): four Kings without EX = Full 10, with EX only Overfull 15; three without
    EX nothing; a Full suit without EX 10; one Kings declaration and one per suit at most."""
    full = h("SK HK DK CK HQ HC HJ DQ DC S2..S10 T2..T8")
    state = begin(name, {F: full})
    auto_discard(state)
    assert decls(state, F) == {("full_kings", None): 10, ("full", "H"): 10}
    state = begin(name, {F: ["EX", *full[:-1]]})
    auto_discard(state)
    assert decls(state, F) == {("overfull_kings", None): 15, ("overfull", "H"): 15, ("half", "D"): 5}
    three = h("SK HK DK SQ SC C2..C10 T2..T12")
    state = begin(name, {F: three})
    auto_discard(state)
    assert decls(state, F) == {("taroks", None): 15}  # 3 Kings, 3 spade courts: nothing without EX


@pytest.mark.parametrize("name", PRESETS)
def test_dk_decl_1_public_content_without_cards(name: str) -> None:
    """DK-DECL-1 (AMB-40): the engine publishes type, suit, size and, for Taroks, with/without Pagat;
    no card is shown."""
    state = begin(name, DECL_HANDS)
    auto_discard(state)
    codes = {str(c) for c in CARDS}
    for seat in (D, F):
        public = observation(state, seat)["declarations"]
        assert len(public) == len(state.declarations)
        for item in public:
            assert set(item) <= {"seat", "name", "size", "value", "suit", "with_fool", "with_pagat"}
            assert not any(isinstance(v, str) and v in codes for v in item.values())
            if item["name"] == "taroks":
                assert "with_pagat" in item
    m_public = [x for x in observation(state, D)["declarations"] if x["seat"] == M]
    assert {(x["name"], x.get("suit"), x["size"], x["value"]) for x in m_public} == {
        ("taroks", None, 10, 10),
        ("matadors", None, 5, 20),
        ("half_kings", None, 4, 5),
        ("overfull", "S", 5, 15),
        ("half", "H", 4, 5),
        ("half", "C", 4, 5),
    }


# ---------------------------------------------------------------------------- DK-PLAY-1, G-TRICK-3/5 (AMB-12)

# Trick 1 layouts.  F (forehand) holds the Fool, all spades and ten diamonds; M no spade, no diamond.
LEAD_HANDS = {
    F: h("EX SA..SK DA..D10"),
    M: h("H2..H5 C2..C5 T2..T18"),
    D: h("DJ DC DQ DK HA H6..H10 HJ HC HQ HK CA C6..C10 CJ CC CQ CK T1 T19 T20 T21"),
}
M_TAROKS = {f"T{n}" for n in range(2, 19)}


@pytest.mark.parametrize("name", PRESETS)
def test_g_trick_3_led_fool_needs_a_designation(name: str) -> None:
    """G-TRICK-3 `designate`: leading the Fool names X ∈ {S, H, D, C, T}; a bare `play EX` is illegal."""
    state = begin(name, LEAD_HANDS, discard=["H6", "H7", "H8"])
    assert {f"play EX {x}" for x in "SHDCT"} <= legal(state) and "play EX" not in legal(state)
    with pytest.raises(IllegalActionError) as err:
        act(state, "play EX")
    assert err.value.rule == "G-TRICK-3"


@pytest.mark.parametrize("name", PRESETS)
def test_g_trick_3_designation_stands_when_another_holds_it(name: str) -> None:
    """G-TRICK-3: X stands if another player holds X (here only the third): the second player,
    void in X, must play a tarok (no re-designation); the third must follow X."""
    state = begin(name, LEAD_HANDS, discard=["H6", "H7", "H8"])
    act(state, "play EX D")
    assert legal(state) == {f"play {t}" for t in M_TAROKS}
    with pytest.raises(IllegalActionError):
        act(state, "play T2 H")
    assert observation(state, D)["trick"]["designation"] == "D"  # every designation is public
    act(state, "play T2")
    assert legal(state) == {"play DJ", "play DC", "play DQ", "play DK"}
    act(state, "play DJ")
    trick = state.tricks[0]
    assert trick.suit == "D" and trick.designation == "D" and trick.redesignation is None
    assert trick.winner == M and state.fool_debts == [(F, M, 1)]  # DK-FOOL-1: retained, exchange owed


@pytest.mark.parametrize("name", PRESETS)
def test_g_trick_3_redesignation_binds_second_and_third_player(name: str) -> None:
    """G-TRICK-3 (AMB-12 option a): nobody else holds X = S, so the second player names Y with his card
    and plays under G-TRICK-4 for Y; the third player follows Y (not trumps, unlike `next_card`)."""
    state = begin(name, LEAD_HANDS, discard=["H6", "H7", "H8"])
    act(state, "play EX S")
    options = legal(state)
    assert {"play H2 H", "play C3 C", "play T5 S", "play T5 D", "play T5 T"} <= options
    assert "play H2 S" not in options  # void in S but holding taroks: must trump for Y = S
    assert "play T5 H" not in options  # holds hearts: must follow Y = H
    assert not any(len(a.split()) == 2 for a in options)  # every action names Y
    assert options == (
        {f"play {c} H" for c in h("H2..H5")}
        | {f"play {c} C" for c in h("C2..C5")}
        | {f"play {t} {y}" for t in M_TAROKS for y in "SDT"}
    )
    with pytest.raises(IllegalActionError) as err:
        act(state, "play T5")
    assert err.value.rule == "G-TRICK-3"
    act(state, "play T5 D")  # void in S and D: names D and trumps
    assert legal(state) == {"play DJ", "play DC", "play DQ", "play DK"}  # must follow D, may not trump
    assert observation(state, F)["trick"]["redesignation"] == "D"
    act(state, "play DC")
    trick = state.tricks[0]
    assert (trick.designation, trick.redesignation, trick.suit, trick.winner) == ("S", "D", "D", M)


def test_g_trick_3_redesignation_same_suit_keeps_it() -> None:
    """G-TRICK-3: Y = X is allowed and is the same as keeping X (the second player trumps for S)."""
    state = begin("danish", LEAD_HANDS, discard=["H6", "H7", "H8"])
    act(state, "play EX S", "play T3 S")
    assert legal(state) == {"play T1", "play T19", "play T20", "play T21"}  # void in S: must trump
    act(state, "play T1")
    assert state.tricks[0].winner == M  # T3 beats T1; the Pagat is lost (DK-INPLAY-1)


# Later-trick layout for G-TRICK-5: F holds every tarok and the Fool; M and D hold only suit cards.
G5_HANDS = {
    F: h("T1..T21 EX SK CK DK"),
    M: h("HA..H7 SA..S6 CA..C6 DA..D6"),
    D: h("H8..HK S7..SQ C7..CQ D7..DQ"),
}


@pytest.mark.parametrize("name", PRESETS)
def test_g_trick_5_second_player_wins_when_nobody_follows_y(name: str) -> None:
    """G-TRICK-5 (AMB-12): after a re-designation, if neither the second nor the third player plays a
    card of Y or a tarok, the second player wins the trick; DK-FOOL-1: the Fool is retained."""
    state = begin(name, G5_HANDS, discard=["H8", "H9", "H10"])
    m_discards = h("HA..H7")
    d_discards = ["HJ", "HC", "HQ", "HK", "S7", "S8", "S9"]
    for k, t in enumerate(range(21, 14, -1)):  # tricks 1-7: F leads taroks, M and D shed their hearts
        act(state, f"play T{t}", f"play {m_discards[k]}", f"play {d_discards[k]}")
    assert state.trick_no == 8 and state.current_player == F
    act(state, "play EX T")  # nobody else holds a tarok: M re-designates
    assert "play S2 H" in legal(state)  # void in H and taroks: any card, naming H
    act(state, "play S2 H")
    assert legal(state) == {f"play {c}" for c in map(str, state.hand(D))}  # D void in H and taroks too
    act(state, "play SQ")  # a higher spade does not matter: L = H
    trick = state.tricks[7]
    assert (trick.designation, trick.redesignation, trick.suit) == ("T", "H", "H")
    assert trick.winner == M and state.current_player == M
    assert state.fool_debts == [(F, M, 8)] and Card.parse("EX") in state.piles[F]


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("lead", ["S2", "T1"])
def test_dk_play_1_fool_satisfies_the_tarok_obligation(name: str, lead: str) -> None:
    """DK-PLAY-1: the Fool may be played instead of a tarok (to a tarok lead, or when void in L with
    taroks in hand: the suit cards stay illegal) and never wins the trick."""
    hands = {
        F: h("S2..S10 T1..T16"),
        M: h("EX T17..T21 H2..H10 D2..D10 DJ"),
    }
    state = begin(name, hands)
    auto_discard(state)
    act(state, f"play {lead}")
    assert legal(state) == {"play EX", *(f"play T{n}" for n in range(17, 22))}
    act(state, "play EX")
    act(state, str(state.legal_actions()[0]))
    trick = state.tricks[0]
    assert trick.winner != M and state.fool_debts == [(M, trick.winner, 1)]


@pytest.mark.parametrize("name, options, winner", [
    ("danish", {}, F),
    ("danish-pots", {}, F),
    ("danish-pots", {"red_pips": "straight"}, M),
])  # fmt: skip
def test_g_rank_3_red_pips_option(name: str, options: dict[str, str], winner: int) -> None:
    """G-RANK-3 / AMB-01: red pips A high … 10 low in both presets; option `red_pips = straight`
    (`danish-pots` only) ranks them 10 high … A low."""
    hands = {
        F: h("H5 T1..T20 S2..S5"),
        M: h("H10 C2..C10 D2..D10 T21 DJ DC DQ DK CJ"),
        D: ["EX"],
    }
    state = begin(name, hands, options=options)
    auto_discard(state)
    act(state, "play H5", "play H10", "play EX")  # the dealer's Fool never wins (G-RANK-4)
    assert state.tricks[0].winner == winner
    with pytest.raises(ConfigError):
        find_variant("danish", {"red_pips": "straight"})
    with pytest.raises(ConfigError):
        find_variant("danish", {"counting": "p001"})


# ---------------------------------------------------------------------------- DK-FOOL-1…4, AMB-13, AMB-57


def _until_demand_or_24(name: str, seed: int, holder: int = M) -> DealState:
    """A deal in which `holder` keeps the Fool; play randomly (never the Fool) until the demand
    round of trick 23 (`danish`) or the start of trick 23 (`danish-pots`)."""
    state = begin(name, {holder: ["EX"]})
    auto_discard(state)
    rng = random.Random(seed)
    policy = random_policy(rng, avoid_fool=True)
    return run(state, policy, stop=lambda s: s.phase == "demand" or (s.trick_no == 23 and not s.trick))


def _find(name: str, want_holder_leads: bool, holder: int = M) -> DealState:
    for seed in range(200):
        state = _until_demand_or_24(name, seed, holder)
        if (state.leader == holder) == want_holder_leads:
            return state
    raise AssertionError("no such deal found")


@pytest.mark.parametrize("holder_leads", [False, True])
def test_dk_fool_3_demand_round_everyone_asked_from_leader(holder_leads: bool) -> None:
    """DK-FOOL-3 (AMB-13): at the start of trick 23, with the Fool unplayed, every player is asked
    once from the trick-23 leader; the holder can only pass; views do not reveal legal sets.
    DK-FOOL-2: if nobody demands, the Fool is illegal in trick 24 and captured in trick 25.
    AMB-57: the holder always has a legal card in trick 24."""
    state = _find("danish", holder_leads)
    assert state.phase == "demand" and state.trick_no == 23 and len(state.tricks) == 22
    assert state.fool_holder == M and not state.trick
    leader = state.leader
    assert leader == state.tricks[-1].winner
    asked = []
    while state.phase == "demand":
        seat = state.current_player
        asked.append(seat)
        assert legal(state) == ({"pass"} if seat == M else {"demand", "pass"})
        if seat == M:
            with pytest.raises(IllegalActionError) as err:
                act(state, "demand")
            assert err.value.rule == "DK-FOOL-3"
        for other in range(3):
            if other != seat:
                assert "legal_actions" not in observation(state, other)
        act(state, "pass")
    assert asked == [leader, state.next_seat[leader], state.next_seat[state.next_seat[leader]]]
    assert state.round_answers[-3:] == [("demand", s, "pass") for s in asked]
    assert state.phase == "play" and state.trick_no == 23
    policy = random_policy(random.Random(0), avoid_fool=True)
    run(state, policy, stop=lambda s: s.trick_no == 24 and s.current_player == M)
    assert state.trick_no == 24 and len(state.hand(M)) == 2
    options = legal(state)
    assert options and not any(" EX" in a for a in options)  # DK-FOOL-2, and AMB-57: never empty
    other = next(str(c) for c in state.hand(M) if not c.is_fool)
    assert options == {f"play {other}"}  # the holder plays his other card to trick 24
    with pytest.raises(IllegalActionError) as err:
        act(state, "play EX" if state.trick else "play EX S")
    assert err.value.rule == "DK-FOOL-2"
    run(state, policy)
    last = state.tricks[-1]
    assert last.number == 25 and last.card_of(M) == Card.parse("EX")
    assert last.fool_captured and last.winner != M
    assert Card.parse("EX") in state.piles[last.winner]  # captured by the trick winner
    assert not state.fool_debts  # nothing owed: the Fool was never retained
    assert_zero_sum(state.result())


@pytest.mark.parametrize("holder_leads", [False, True])
def test_dk_fool_3_demand_forces_the_fool_to_trick_23(holder_leads: bool) -> None:
    """DK-FOOL-3: the first demand ends the round; the holder MUST play the Fool to trick 23,
    leading it with a designation if he is on lead; it is retained (DK-FOOL-1)."""
    state = _find("danish", holder_leads)
    answered = 0
    while True:
        seat = state.current_player
        answered += 1
        if seat == M:
            act(state, "pass")
            continue
        act(state, "demand")
        break
    assert state.phase == "play" and state.fool_demanded
    assert state.round_answers[-1] == ("demand", seat, "demand") and answered <= 2
    policy = random_policy(random.Random(1), avoid_fool=True)
    run(state, policy, stop=lambda s: s.current_player == M)
    if holder_leads:
        assert not state.trick and legal(state) == {f"play EX {x}" for x in "SHDCT"}
    else:
        assert state.trick and legal(state) == {"play EX"}
    other = next(str(c) for c in state.hand(M) if not c.is_fool)
    with pytest.raises(IllegalActionError) as err:
        act(state, f"play {other}")
    assert err.value.rule == "DK-FOOL-3"
    act(state, str(state.legal_actions()[0]))
    run(state, policy, stop=lambda s: s.trick_no == 24)
    trick23 = state.tricks[22]
    assert trick23.card_of(M) == Card.parse("EX") and not trick23.fool_captured
    assert state.fool_debts == [(M, trick23.winner, 23)]


def test_dk_fool_3_no_round_when_fool_already_played() -> None:
    """DK-FOOL-3 (AMB-13): the round is held only while the Fool is unplayed."""
    state = begin("danish", {M: ["EX"]})
    auto_discard(state)

    def fool_first(s: DealState, actions: list[Action]) -> Action:
        fools = [a for a in actions if a.card is not None and a.card.is_fool]
        return fools[0] if fools else actions[0]

    run(state, fool_first)
    assert not any(r == "demand" for r, _, _ in state.round_answers)


@pytest.mark.parametrize("holder_leads", [False, True])
def test_dk_fool_4_danish_pots_no_timing_restriction(holder_leads: bool) -> None:
    """DK-FOOL-4: `danish-pots` has no demand round and allows the Fool in trick 24; DK-FOOL-1: a Fool
    played to trick 25 is retained (exchange), not captured."""
    state = _find("danish-pots", holder_leads)
    assert state.phase == "play" and state.trick_no == 23 and not state.trick
    assert not state.round_answers
    policy = random_policy(random.Random(2), avoid_fool=True)
    run(state, policy, stop=lambda s: s.trick_no == 24 and s.current_player == M)
    fool_moves = {a for a in legal(state) if " EX" in a}
    assert fool_moves == ({f"play EX {x}" for x in "SHDCT"} if not state.trick else {"play EX"})
    run(state, policy)  # keeps the Fool for trick 25
    last = state.tricks[-1]
    assert last.card_of(M) == Card.parse("EX") and not last.fool_captured
    assert state.fool_debts == [(M, last.winner, 25)]
    assert Card.parse("EX") in state.piles[M]
    assert_zero_sum(state.result())


def test_amb_57_fool_rules_never_leave_no_legal_card() -> None:
    """AMB-57 / DK-FOOL-2: in random `danish` deals the holder of the Fool in trick 24 always has
    exactly one legal card, his other one; no player is ever left without a legal action."""
    checked = 0
    for seed in range(150):
        rng = random.Random(seed)
        deck = list(CARDS)
        rng.shuffle(deck)
        state = DealState(find_variant("danish"), seed % 3, deck, pots=POTS, stakes=False)
        while not state.is_terminal():
            actions = state.legal_actions()
            assert actions
            seat = state.current_player
            if state.phase == "play" and state.trick_no == 24 and Card.parse("EX") in state.hand(seat):
                assert len(actions) == 1 and not actions[0].card.is_fool
                checked += 1
            state.apply(random_policy(rng, avoid_fool=rng.random() < 0.9)(state, actions))
    assert checked > 10


# ---------------------------------------------------------------------------- DK-INPLAY-1…3, AMB-37


INPLAY_HANDS = {
    F: h("T1..T12 DA..DQ"),
    M: h("T13..T21 EX DK CA..CK"),
    D: h("HA..HK SA..SK"),
}


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("seed", range(3))
def test_dk_inplay_1_3_pagat_and_kings_lost(name: str, seed: int) -> None:
    """DK-INPLAY-1: a lost Pagat pays 5 to each and 5 into the Pagat pot; DK-INPLAY-3: a lost King pays
    5 to each and 5 into the King pot, also when thrown on another suit (AMB-37); a winning King earns
    nothing.  The rest of the deal is random and checked against its trick history."""
    state = begin(name, INPLAY_HANDS, discard=["S2", "S3", "S4"])
    act(state, "play T1", "play T13", "play HK")  # T1 lost; HK thrown (void in taroks) and lost
    act(state, "play DK", "play SK", "play D2")  # DK wins: nothing; SK thrown and lost
    assert [t.winner for t in state.tricks] == [M, M]
    r = run(state, random_policy(random.Random(seed))).result()
    e1, e3 = entries(r, "DK-INPLAY-1"), entries(r, "DK-INPLAY-3")
    assert each(F, 5, receives=False) + C((F, "pagat", 5)) == e1  # T1 can be lost only once
    assert times(each(D, 5, receives=False) + C((D, "king", 5)), 2) <= e3
    for rule, want in derived_inplay(state).items():
        assert entries(r, rule) == want
    assert_zero_sum(r)


@pytest.mark.parametrize("name", PRESETS)
def test_dk_inplay_2_winning_pagat(name: str) -> None:
    """DK-INPLAY-2 (AMB-05): the Pagat winning a trick 1…24 earns 5 from each in `danish`, nothing in
    `danish-pots`."""
    state = begin(name, G5_HANDS, discard=["H8", "H9", "H10"])
    act(state, "play T1", "play HA", "play HJ")  # nobody else holds a tarok: T1 wins trick 1
    assert state.tricks[0].winner == F
    r = run(state, random_policy(random.Random(5))).result()
    assert entries(r, "DK-INPLAY-2") == (each(F, 5) if name == "danish" else C())
    assert entries(r, "DK-INPLAY-1") == C()
