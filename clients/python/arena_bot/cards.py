"""Card helpers for bots: codes, suits, trick ranking per variant, point values.

Cards travel as text codes: a suit letter ``S H D C`` and a rank ``A 2 … 10 J C Q K``
(``C`` = Cavalier, so ``"CC"`` is the Cavalier of Clubs), the taroks ``T1`` … ``T21``
and the Fool ``EX``. This module has no dependency on the server's engine.

    >>> suit("HQ"), number("HQ"), number("T7"), points("SK")
    ('H', 13, 7, 5)
    >>> sorted(["H2", "HA", "H10"], key=lambda c: rank("grosstarock", c))   # red pips reversed
    ['H10', 'H2', 'HA']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

SUITS = ("S", "H", "D", "C")
TAROK = "T"
FOOL = "EX"
PAGAT = "T1"
MOND = "T21"
FACES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K")
KINGS = ("SK", "HK", "DK", "CK")
ALL_CARDS: tuple[str, ...] = (
    *(s + f for s in SUITS for f in FACES),
    *(f"T{n}" for n in range(1, 22)),
    FOOL,
)
"""The 78 codes in canonical order (index 0 = ``SA`` … 77 = ``EX``)."""

_INDEX = {code: i for i, code in enumerate(ALL_CARDS)}


def is_card(code: str) -> bool:
    return code in _INDEX


def index(code: str) -> int:
    """Canonical index 0…77; raises `ValueError` for an unknown code."""
    try:
        return _INDEX[code]
    except KeyError:
        raise ValueError(f"unknown card code {code!r}") from None


def _suit_of(i: int) -> str:
    if i < 56:
        return SUITS[i // 14]
    return TAROK if i < 77 else ""


def _number_of(i: int) -> int:
    if i < 56:
        return i % 14 + 1
    return i - 55 if i < 77 else 0


# Looked up per card many times in a bot's every decision: tables, not arithmetic.
_SUIT = {code: _suit_of(i) for code, i in _INDEX.items()}
_NUMBER = {code: _number_of(i) for code, i in _INDEX.items()}
CARDS_BY_SUIT: dict[str, tuple[str, ...]] = {
    s: tuple(c for c in ALL_CARDS if _SUIT[c] == s) for s in (*SUITS, TAROK, "")
}
"""The codes of each suit (``""``: the Fool) in canonical order; the suits in canonical order too."""


def suit(code: str) -> str:
    """``S``, ``H``, ``D``, ``C``, ``T`` for a tarok, ``""`` for the Fool."""
    try:
        return _SUIT[code]
    except KeyError:
        raise ValueError(f"unknown card code {code!r}") from None


def number(code: str) -> int:
    """Face number of a suit card (A=1 … 10, J=11, C=12, Q=13, K=14), tarok number, 0 for the Fool."""
    try:
        return _NUMBER[code]
    except KeyError:
        raise ValueError(f"unknown card code {code!r}") from None


def is_tarok(code: str) -> bool:
    return suit(code) == TAROK


def is_fool(code: str) -> bool:
    return code == FOOL


def is_king(code: str) -> bool:
    return code in KINGS


def is_honour(code: str) -> bool:
    """``T1``, ``T21`` and the Fool."""
    return code in (PAGAT, MOND, FOOL)


def is_counting(code: str) -> bool:
    """Honours and court cards (K, Q, C, J); every other card is a blank."""
    return is_honour(code) or (suit(code) in SUITS and number(code) >= 11)


def _points_of(code: str) -> int:
    if is_honour(code):
        return 5
    if suit(code) in SUITS:
        return {14: 5, 13: 4, 12: 3, 11: 2}.get(number(code), 1)
    return 1


_POINTS = {code: _points_of(code) for code in ALL_CARDS}


def points(code: str) -> int:
    """Value in the P78 count (in threes, minus two): 5 honours and Kings, 4 Q, 3 C, 2 J, 1 blanks."""
    try:
        return _POINTS[code]
    except KeyError:
        raise ValueError(f"unknown card code {code!r}") from None


def pile_points(cards: Iterable[str]) -> int:
    """P78 card points of a pile whose size is a multiple of 3: Σ values − 2 per triplet."""
    cards = list(cards)
    return sum(points(c) for c in cards) - 2 * (len(cards) // 3)


def red_pips_reversed(variant: str, options: Mapping[str, str] | None = None) -> bool:
    """Whether hearts and diamonds rank A high … 10 low (G-RANK-3).

    Reversed in every variant except ``american`` and ``danish-pots`` with ``red_pips=straight``.
    """
    if variant == "american":
        return False
    return not (variant == "danish-pots" and (options or {}).get("red_pips") == "straight")


def rank(variant: str, code: str, options: Mapping[str, str] | None = None) -> int:
    """Trick-taking strength: higher wins among cards of one suit; any tarok (101…121) beats any
    suit card (1…14). The Fool ranks 0: it never wins a trick."""
    s = suit(code)
    n = number(code)
    if s == TAROK:
        return 100 + n
    if s == "":
        return 0
    if s in ("H", "D") and n <= 10 and red_pips_reversed(variant, options):
        return 11 - n
    return n


def led_suit(cards: Sequence[str], designation: str = "", redesignation: str = "") -> str:
    """The suit to follow in a trick (G-TRICK-3): the first card's suit (``T`` for a tarok); after a led
    Fool the (re)designated suit, or the second card's suit; ``""`` while nothing defines it."""
    if redesignation:
        return redesignation
    if not cards:
        return ""
    if cards[0] != FOOL:
        return suit(cards[0])
    if designation:
        return designation
    return suit(cards[1]) if len(cards) > 1 else ""


def beats(variant: str, card: str, best: str, led: str, options: Mapping[str, str] | None = None) -> bool:
    """Whether `card` beats `best` (the card winning so far) in a trick where `led` is to be followed."""
    if card == FOOL:
        return False
    if best == "" or best == FOOL:
        return True
    cs, bs = suit(card), suit(best)
    if cs == TAROK or bs == TAROK:
        return cs == TAROK and (bs != TAROK or number(card) > number(best))
    if cs != led:
        return False
    return bs != led or rank(variant, card, options) > rank(variant, best, options)


def trick_winner(
    variant: str,
    plays: Sequence[tuple[int, str]],
    led: str | None = None,
    options: Mapping[str, str] | None = None,
) -> int | None:
    """Index in `plays` of the card winning so far (`plays` = (seat, card) in playing order), or None.

    `led` defaults to the suit of the first card that is not the Fool.
    """
    if led is None:
        led = next((suit(c) for _, c in plays if c != FOOL), "")
    best: int | None = None
    for i, (_, card) in enumerate(plays):
        if card == FOOL:
            continue
        if best is None:
            if suit(card) in (led, TAROK):
                best = i
            continue
        if beats(variant, card, plays[best][1], led, options):
            best = i
    return best


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Canonical order: spades, hearts, diamonds, clubs by face, taroks, the Fool."""
    return sorted(cards, key=index)
