"""Declarable combinations (DUM-DECL-3, G54-DECL-1, DK-DECL-3, AM-COMB-1), one finder per table.

A finder takes a hand and returns every combination it qualifies for, at full size.
`Combination.cards` are the cards that form it (DK-SKAT-4 needs them); `shown` are
the cards a declaration puts on the table (AM-COMB-1), empty where nothing is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final

from .cards import CARDS, FOOL, KINGS, MOND, PAGAT, SUITS, TAROKS, Card, tarok
from .options import Ladons

COURT_FACES: Final = (11, 12, 13, 14)  # J, C, Q, K


@dataclass(frozen=True, slots=True)
class Combination:
    name: str
    value: int
    size: int
    suit: str | None = None
    cards: frozenset[Card] = field(default=frozenset(), compare=False)
    # Published facts of a Taroks declaration: DUM-DECL-4 (both), DK-DECL-1 (Pagat), none in G54-DECL-2.
    with_fool: bool | None = None
    with_pagat: bool | None = None
    shown: frozenset[Card] = field(default=frozenset(), compare=False)

    def public(self) -> dict[str, Any]:
        """What a declaration publishes (DUM-DECL-5, G54-DECL-2, DK-DECL-1, AM-COMB-1)."""
        out: dict[str, Any] = {"name": self.name, "size": self.size, "value": self.value}
        if self.suit is not None:
            out["suit"] = self.suit
        if self.with_fool is not None:
            out["with_fool"] = self.with_fool
        if self.with_pagat is not None:
            out["with_pagat"] = self.with_pagat
        if self.shown:
            out["cards"] = [str(c) for c in sorted(self.shown)]
        return out


Finder = Callable[[Collection[Card], Ladons], list[Combination]]
"""A hand and the variant's `ladons` option (only Grosstarock's finder reads it)."""


def _courts(suit: str) -> list[Card]:
    base = SUITS.index(suit) * 14
    return [CARDS[base + face - 1] for face in COURT_FACES]


# The card sets the finders intersect a hand with (a hand is a frozenset there: `hand & COURTS[s]`
# is one set operation instead of a loop over the hand).
COURTS: Final = {suit: frozenset(_courts(suit)) for suit in SUITS}
FACES_OF_FOUR: Final = {face: frozenset(CARDS[s * 14 + face - 1] for s in range(4)) for face in COURT_FACES}
TAROK_CLASS: Final = TAROKS | {FOOL}  # the taroks and the Fool
KINGS_AND_TRULL: Final = KINGS | {PAGAT, FOOL, MOND}  # DUM-DECL-3 kings: Pagat, Fool and Mond count
PIPS: Final = frozenset(c for c in CARDS[:56] if c % 14 < 10)  # G-PACK-5: suit pips A…10
PIPS_AND_BLANK_TAROKS: Final = PIPS | (TAROKS - {PAGAT, MOND})  # AMB-16: `Ladons.ALL_BLANKS`


def _taroks(hand: frozenset[Card], fool_flag: bool, pagat_flag: bool) -> Combination | None:
    cards = hand & TAROK_CLASS
    n = len(cards)
    if n < 10:
        return None
    return Combination(
        "taroks",
        10 + 5 * (n - 10),
        n,
        cards=cards,
        with_fool=(FOOL in cards) if fool_flag else None,
        with_pagat=(PAGAT in cards) if pagat_flag else None,
    )


def _matadors(hand: frozenset[Card]) -> Combination | None:
    if not (PAGAT in hand and FOOL in hand and MOND in hand):
        return None
    run = [PAGAT, FOOL, MOND]
    number = 20
    while number > 1 and tarok(number) in hand:
        run.append(tarok(number))
        number -= 1
    m = len(run)
    return Combination("matadors", 10 + 5 * (m - 3), m, cards=frozenset(run))


def dummett(hand: Collection[Card], ladons: Ladons = Ladons.PIPS) -> list[Combination]:
    """DUM-DECL-3 (one card may serve in several combinations, AMB-20)."""
    hand = frozenset(hand)  # many membership tests below
    found = [c for c in (_taroks(hand, True, True), _matadors(hand)) if c is not None]
    kings = hand & KINGS_AND_TRULL
    if len(kings) >= 3:
        found.append(Combination("kings", 5 + 5 * (len(kings) - 3), len(kings), cards=kings))
    for suit in SUITS:
        courts = hand & COURTS[suit]
        if len(courts) == 4:
            found.append(Combination("cavallerie", 10, 4, suit, courts))
        elif len(courts) == 3 and FOOL in hand:
            found.append(Combination("half_cavallerie", 5, 4, suit, courts | {FOOL}))
    for name, face in (("four_queens", 13), ("four_cavaliers", 12), ("four_jacks", 11)):
        same = hand & FACES_OF_FOUR[face]
        if len(same) == 4:
            found.append(Combination(name, 5, 4, cards=same))
    blanks = hand & (PIPS_AND_BLANK_TAROKS if ladons is Ladons.ALL_BLANKS else PIPS)
    if len(blanks) >= 16:
        found.append(Combination("ladons", 15 + 5 * (len(blanks) - 16), len(blanks), cards=blanks))
    return found


def german(hand: Collection[Card], ladons: Ladons = Ladons.PIPS) -> list[Combination]:
    """G54-DECL-1."""
    hand = frozenset(hand)  # many membership tests below
    found = [c for c in (_taroks(hand, False, False), _matadors(hand)) if c is not None]
    for suit in SUITS:
        courts = hand & COURTS[suit]
        if len(courts) == 4:
            found.append(Combination("whole_cavalry", 10, 4, suit, courts))
        elif len(courts) == 3 and FOOL in hand:
            found.append(Combination("half_cavalry", 5, 4, suit, courts | {FOOL}))
    kings = hand & KINGS
    if len(kings) == 4:
        found.append(Combination("four_kings", 10, 4, cards=kings))
    elif len(kings) == 3 and FOOL in hand:
        found.append(Combination("three_kings", 5, 4, cards=kings | {FOOL}))
    return found


def danish(hand: Collection[Card], ladons: Ladons = Ladons.PIPS) -> list[Combination]:
    """DK-DECL-3: the Fool is wild; one Kings declaration and one per suit (AMB-56)."""
    hand = frozenset(hand)  # many membership tests below
    found = [c for c in (_taroks(hand, False, True), _matadors(hand)) if c is not None]
    has_fool = FOOL in hand
    kings = hand & KINGS
    if len(kings) == 4:
        found.append(
            Combination("overfull_kings", 15, 5, cards=kings | {FOOL})
            if has_fool
            else Combination("full_kings", 10, 4, cards=kings)
        )
    elif len(kings) == 3 and has_fool:
        found.append(Combination("half_kings", 5, 4, cards=kings | {FOOL}))
    for suit in SUITS:
        courts = hand & COURTS[suit]
        if len(courts) == 4:
            found.append(
                Combination("overfull", 15, 5, suit, courts | {FOOL})
                if has_fool
                else Combination("full", 10, 4, suit, courts)
            )
        elif len(courts) == 3 and has_fool:
            found.append(Combination("half", 5, 4, suit, courts | {FOOL}))
    return found


def american(hand: Collection[Card], ladons: Ladons = Ladons.PIPS) -> list[Combination]:
    """AM-COMB-1: shown combinations; `EX` may serve in several; full size only (AMB-56).

    Trumps shows only its count and whether `T1` is held; every other combination shows its cards.
    """
    hand = frozenset(hand)  # many membership tests below
    found = []
    trumps = hand & TAROK_CLASS
    if len(trumps) >= 10:
        n = len(trumps)
        found.append(Combination("trumps", 20 + 10 * (n - 10), n, cards=trumps, with_pagat=PAGAT in trumps))
    matadors = _matadors(hand)
    if matadors is not None:
        m, run = matadors.size, matadors.cards
        found.append(Combination("matadors", 20 + 10 * (m - 3), m, cards=run, shown=run))
    has_fool = FOOL in hand
    kings = hand & KINGS
    if len(kings) == 4:
        cards = kings | {FOOL} if has_fool else kings
        name, value = ("abundant_kings", 30) if has_fool else ("full_kings", 20)
        found.append(Combination(name, value, len(cards), cards=cards, shown=cards))
    elif len(kings) == 3 and has_fool:
        missing = next(s for s in SUITS if CARDS[SUITS.index(s) * 14 + 13] not in kings)
        cards = kings | {FOOL}
        found.append(Combination("half_kings", 10, 4, missing, cards=cards, shown=cards))
    for suit in SUITS:
        courts = hand & COURTS[suit]
        if len(courts) == 4:
            cards = courts | {FOOL} if has_fool else courts
            name, value = ("abundant_cavallerie", 30) if has_fool else ("full_cavallerie", 20)
            found.append(Combination(name, value, len(cards), suit, cards=cards, shown=cards))
        elif len(courts) == 3 and has_fool:
            cards = courts | {FOOL}
            found.append(Combination("half_cavallerie", 10, 4, suit, cards=cards, shown=cards))
    return found
