"""An independent reading of the common rules, written from the spec rather than from the engine,
for the engine's tests to compare against: card codes, card values and the final piles."""

from __future__ import annotations

from collections.abc import Iterable

from arena.engine import CARDS, Card, DealState, find_variant

from . import new_deal

SUIT_LETTERS = "SHDC"
FACE_LETTERS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K"]
# Every card code in the spec's order: the suits' cards, the taroks, the Fool.
CODES = [s + f for s in SUIT_LETTERS for f in FACE_LETTERS] + [f"T{n}" for n in range(1, 22)] + ["EX"]


def codes(cards: Iterable[int]) -> list[str]:
    """The codes of cards (or of card numbers)."""
    return [str(Card(c)) for c in cards]


def card_value(code: str) -> int:
    """G-CP-1: the value of one card, from its code."""
    if code in ("T1", "T21", "EX"):
        return 5
    if code.startswith("T"):
        return 1
    return {"K": 5, "Q": 4, "C": 3, "J": 2}.get(code[1:], 1)


def reference_piles(state: DealState) -> dict[int, list[str]]:
    """The final piles of a finished three-handed deal (DUM-DISC-1, DUM-PLAY-2, G-TRICK-6/7): the
    dealer's discard, each trick to its winner; the Fool stays with its player until trick 22, who
    gives its taker his lowest other card for it (the Fool itself when he has no other)."""
    piles: dict[int, list[str]] = {s: [] for s in range(3)}
    piles[state.dealer] += codes(state.skat)
    debts = []
    for trick in state.tricks:
        for seat, card in trick.plays:
            if str(card) == "EX" and trick.number <= 22:
                piles[seat].append("EX")
                if seat != trick.winner:
                    debts.append((seat, trick.winner))
            else:
                piles[trick.winner].append(str(card))
    for owner, creditor in debts:
        rest = [c for c in piles[owner] if c != "EX"]
        give = min(rest, key=lambda c: (card_value(c), CODES.index(c))) if rest else "EX"
        piles[owner].remove(give)
        piles[creditor].append(give)
    return piles


def full_hands(
    variant_name: str, dealer: int, roles: dict[str, list[str]], options: dict[str, str] | None = None
) -> DealState:
    """A deal in which forehand `F`, middlehand `M` and dealer `D` hold exactly the given cards.

    One role may be omitted; it receives every other card.
    """
    variant = find_variant(variant_name, options or {})
    order = DealState(variant, dealer, list(CARDS)).order
    seat_of = dict(zip("FMD", order, strict=True))
    given = [c for hand in roles.values() for c in hand]
    assert len(given) == len(set(given)), "a card is given twice"
    missing = [r for r in "FMD" if r not in roles]
    hands = {seat_of[r]: list(h) for r, h in roles.items()}
    if missing:
        (role,) = missing
        hands[seat_of[role]] = [c for c in CODES if c not in given]
    state = new_deal(variant_name, hands=hands, dealer=dealer, options=options or {})
    for seat, hand in hands.items():
        assert sorted(codes(state.hands[seat]), key=CODES.index) == sorted(hand, key=CODES.index)
    return state
