"""What a deal is made of, below both its state machine and its scoring.

The phases, the suit numbers of trick play, the records a deal keeps (tricks,
declarations, announcements), the American bonuses, and `DealFields`: the data of
one deal as `DealState` holds it.  `scoring` reads a `DealFields` and `state`
builds on it, so neither has to import the other's module to know the other's
shape (state.py → scoring.py → deal.py, never back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .actions import Action
from .cards import DECK_SIZE, SUITS, TAROK, Card
from .combos import Combination
from .variants import Contract, Variant

# Suit numbers: 0-3 the suits S H D C, 4 the taroks, 5 the Fool.
TAROK_NO: Final = 4
FOOL_NO: Final = 5
SUIT_NO: Final[tuple[int, ...]] = tuple(
    i // 14 if i < 56 else (TAROK_NO if i < 77 else FOOL_NO) for i in range(DECK_SIZE)
)


def holds(cards: list[Card], card: Card) -> bool:
    """Whether `card` is in `cards`, found by identity.

    Every `Card` is one of the 78 objects of `CARDS` (`Card.__new__` hands those out and a deal
    keeps only them), so identity is equality here, and a pointer comparison per card is much
    cheaper than `in`, which compares ints.
    """
    return any(held is card for held in cards)


DESIGNATION_NO: Final = {s: i for i, s in enumerate((*SUITS, TAROK))}
NO_DESIGNATION: Final = (*SUITS, TAROK)

REDEAL: Final = "redeal"
BID: Final = "bid"
CALL: Final = "call"
DISCARD: Final = "discard"
DECLARE: Final = "declare"
ANNOUNCE: Final = "announce"
DEMAND: Final = "demand"
PLAY: Final = "play"
END: Final = "end"


class Trick:
    """A completed trick: who led, the cards in playing order, the winner.

    A value: its fields are `Final`, it compares and hashes by them.  A plain class rather than a
    frozen dataclass because one is made per trick, and mypyc compiles this `__init__` but not
    the one a dataclass generates.
    """

    __slots__ = (
        "designation",
        "fool_captured",
        "leader",
        "number",
        "plays",
        "redesignation",
        "suit",
        "winner",
    )

    def __init__(
        self,
        number: int,
        leader: int,
        plays: tuple[tuple[int, Card], ...],
        winner: int,
        suit: str | None,  # the suit L that was followed (None: only the Fool and no card defined it)
        designation: str | None = None,  # the Fool leader's designation (G-TRICK-3)
        redesignation: str | None = None,  # the second player's re-designation (AMB-12)
        fool_captured: bool = False,
    ) -> None:
        self.number: Final = number
        self.leader: Final = leader
        self.plays: Final = plays
        self.winner: Final = winner
        self.suit: Final = suit
        self.designation: Final = designation
        self.redesignation: Final = redesignation
        self.fool_captured: Final = fool_captured

    def _fields(self) -> tuple[object, ...]:
        return (
            self.number,
            self.leader,
            self.plays,
            self.winner,
            self.suit,
            self.designation,
            self.redesignation,
            self.fool_captured,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trick) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Trick{self._fields()!r}"

    def card_of(self, seat: int) -> Card | None:
        for who, card in self.plays:
            if who == seat:
                return card
        return None


@dataclass(frozen=True, slots=True)
class Declaration:
    seat: int
    combination: Combination

    def public(self) -> dict[str, object]:
        return {"seat": self.seat, **self.combination.public()}


@dataclass(frozen=True, slots=True)
class Announcement:
    seat: int
    name: str  # "vole" or "nolo"; an American bonus (AMERICAN_BONUSES)
    trick: int  # announced before this trick (DUM-ANN-2); 1 in `american` (AM-ANN-1)


# AM-BON-1, in the order they are offered.
AMERICAN_BONUSES: Final = (
    "trull",
    "four_kings",
    "capture_called",
    "petit_ultimo",
    "king_ultimo_called",
    "king_ultimo_other",
    "slam",
)
DECLARER_SIDE, DEFENDERS = 0, 1  # AM-SIDE-1


class DealFields:
    """The data of one deal; `DealState.__init__` sets every field, the phases change them.

    `scoring` reads a deal through this class, and the parts of `DealState`
    (`TrickPlay`, `Phases`) build on it.
    """

    variant: Variant
    dealer: int
    deck: tuple[Card, ...]
    pots_start: dict[str, int]
    stakes: bool
    seats: int
    strength: tuple[int, ...]  # trick-taking strength of each card (G-RANK-1…3)

    # G-SEAT-2, G54-TAB-2: the active seats and the playing order.
    sitting_out: int | None
    next_seat: tuple[int, ...]
    forehand: int
    order: tuple[int, ...]  # F, M, D (G-SEAT-8); american: forehand … dealer
    players: int

    talon: tuple[Card, ...]
    hands: list[list[Card]]
    history: list[tuple[int, Action]]
    skat: list[Card]
    skat_public: dict[str, object]  # DK-SKAT-3/4: what the discard publishes
    declarations: list[Declaration]
    announcements: list[Announcement]
    round_answers: list[tuple[str, int, str]]  # (round, seat, answer): redeal and demand rounds
    tricks: list[Trick]
    tricks_won: list[int]
    piles: list[list[Card]]
    fool_debts: list[tuple[int, int, int]]  # (owner, creditor, trick number)
    annulled: bool
    fool_demanded: bool

    # `american`: the contract and the sides (AM-BID, AM-CALL, AM-SIDE-1).
    contract: Contract | None
    declarer: int | None
    trischaken: bool
    called: Card | None
    called_holder: int | None  # who held the called card when it was called (None: talon)
    partner: int | None
    called_public: bool  # the called card was seen in the talon or in a shown combination
    talon_visible: bool
    petit_sec: int | None
    side: tuple[int, ...]  # everyone for himself unless partnered
    side_announced: tuple[set[str], set[str]]
    discarder: int
    first_leader: int

    # The trick in progress.
    trick_no: int
    leader: int
    trick: list[tuple[int, Card]]
    led: int | None  # suit number of L
    designation: str | None
    redesignation: str | None

    phase: str
    turn: int | None

    def bonuses_for_side(self, side: int) -> list[str]:
        """AM-ANN-1, AM-BON-1: the bonuses that exist for `side` (DECLARER_SIDE or DEFENDERS) in this deal."""
        contract = self.contract
        assert contract is not None
        suit_called = self.called is not None and SUIT_NO[self.called] < TAROK_NO
        out = []
        for name in AMERICAN_BONUSES:
            if name == "capture_called" and not (side == DEFENDERS and contract.calls):
                continue
            if name == "king_ultimo_called" and not suit_called:
                continue
            out.append(name)
        return out
