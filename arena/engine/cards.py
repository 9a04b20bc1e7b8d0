"""Cards as value types: canonical codes and index (RULES §6).

A `Card` is an `int` (its canonical index, G-CODE-4) with a text form that
round-trips: ``Card.parse("SK") == 13`` and ``str(Card(13)) == "SK"``.  Being an
int keeps hands, tricks and sets of cards cheap on the engine's hot path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from .errors import CardError

SUITS: Final = ("S", "H", "D", "C")
TAROK: Final = "T"
"""The pseudo-suit of the 21 taroks, used for led suits and designations."""
SUIT_NAMES: Final = {"S": "Spades", "H": "Hearts", "D": "Diamonds", "C": "Clubs", "T": "Taroks"}
FACES: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K")

# Face numbers of G-CODE-4: A=1 … 10, J=11, C=12, Q=13, K=14.
ACE, JACK, CAVALIER, QUEEN, KING = 1, 11, 12, 13, 14

PAGAT_INDEX: Final = 56
MOND_INDEX: Final = 76
FOOL_INDEX: Final = 77
DECK_SIZE: Final = 78


def _code_of(index: int) -> str:
    if index < 56:
        return SUITS[index // 14] + FACES[index % 14]
    if index < FOOL_INDEX:
        return f"T{index - 55}"
    return "EX"


_CODES: Final = tuple(_code_of(i) for i in range(DECK_SIZE))


class Card(int):
    """One of the 78 cards, identified by its canonical index 0…77 (G-CODE-4)."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if not 0 <= index < DECK_SIZE:
            raise CardError(f"card index {index} is outside 0…77 (G-CODE-4)")
        return _CARDS[index]

    @staticmethod
    def parse(code: str) -> Card:
        """Parse a canonical code (G-CODE-2); lowercase is accepted."""
        card = _BY_CODE.get(code.strip().upper()) if isinstance(code, str) else None
        if card is None:
            raise CardError(f"unknown card code {code!r} (G-CODE-1: e.g. SK, HC, D10, T21, EX)")
        return card

    def __str__(self) -> str:
        return _CODES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_CODES[self]!r})"

    @property
    def code(self) -> str:
        return _CODES[self]

    @property
    def suit(self) -> str:
        """`S`, `H`, `D`, `C`, `T` for a tarok, or `""` for the Fool."""
        return SUIT_OF[self]

    @property
    def face(self) -> int:
        """Face number 1…14 of a suit card, tarok number 1…21, 0 for the Fool."""
        return FACE_OF[self]

    @property
    def is_tarok(self) -> bool:
        return 56 <= self <= 76

    @property
    def is_fool(self) -> bool:
        return self == FOOL_INDEX

    @property
    def is_king(self) -> bool:
        return self < 56 and self % 14 == 13


_CARDS: Final[tuple[Card, ...]] = tuple(int.__new__(Card, i) for i in range(DECK_SIZE))
CARDS: Final = _CARDS
_BY_CODE: Final = {code: CARDS[i] for i, code in enumerate(_CODES)}

SUIT_OF: Final[tuple[str, ...]] = tuple(
    SUITS[i // 14] if i < 56 else (TAROK if i < FOOL_INDEX else "") for i in range(DECK_SIZE)
)
FACE_OF: Final[tuple[int, ...]] = tuple(
    i % 14 + 1 if i < 56 else (i - 55 if i < FOOL_INDEX else 0) for i in range(DECK_SIZE)
)

PAGAT: Final = CARDS[PAGAT_INDEX]
MOND: Final = CARDS[MOND_INDEX]
FOOL: Final = CARDS[FOOL_INDEX]
HONOURS: Final = frozenset({PAGAT, MOND, FOOL})
"""G-PACK-3: Trull / bouts / matadors."""
TAROKS: Final = frozenset(CARDS[56:77])
KINGS: Final = frozenset(CARDS[s * 14 + 13] for s in range(4))


def suit_card(suit: str, face: int) -> Card:
    return CARDS[SUITS.index(suit) * 14 + face - 1]


def tarok(number: int) -> Card:
    return CARDS[55 + number]


def is_counting(card: int) -> bool:
    """G-PACK-4: honours and court cards count; every other card is a blank."""
    return card in HONOURS or (card < 56 and card % 14 >= 10)


def parse_cards(codes: Iterable[str]) -> list[Card]:
    return [Card.parse(code) for code in codes]


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(_CODES[c] for c in sorted(cards))


def canonical_deck() -> list[Card]:
    """G-CODE-6: the unshuffled deck in index order."""
    return list(CARDS)
