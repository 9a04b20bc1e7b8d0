"""Predicates on deal states: `where` a conformance case's position is (a seat to act, with
something to test in its legal actions). Used by the specs of `cases.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine import Card, DealState
from ..engine.cards import FOOL, SUITS


def _hand(s: DealState) -> list[Card]:
    assert s.current_player is not None
    return s.hands[s.current_player]


def _legal_cards(s: DealState) -> set[Card]:
    return {a.card for a in s.legal_actions() if a.card is not None}


def _led_plain(s: DealState) -> bool:
    return s.phase == "play" and bool(s.trick) and s.led is not None and s.led < 4


def _led_cards(s: DealState) -> list[Card]:
    return [c for c in _hand(s) if c < 56 and c // 14 == s.led]


def _other_plain(s: DealState) -> list[Card]:
    return [c for c in _hand(s) if c < 56 and c // 14 != s.led]


def _taroks(s: DealState) -> list[Card]:
    return [c for c in _hand(s) if c.is_tarok]


def must_follow(s: DealState) -> bool:
    return (
        _led_plain(s) and bool(_led_cards(s)) and bool(_other_plain(s) or _taroks(s)) and not _designated(s)
    )


def must_trump(s: DealState) -> bool:
    return _led_plain(s) and not _led_cards(s) and bool(_taroks(s)) and bool(_other_plain(s))


def follow_taroks(s: DealState) -> bool:
    return s.phase == "play" and bool(s.trick) and s.led == 4 and bool(_taroks(s)) and bool(_other_plain(s))


def free_card(s: DealState) -> bool:
    hand = _hand(s)
    plain = [c for c in hand if c < 56]
    return _led_plain(s) and not _led_cards(s) and not _taroks(s) and len(plain) >= 2


def _designated(s: DealState) -> bool:
    return bool(s.trick) and s.designation is not None


def fool_led(s: DealState) -> bool:
    """Second to play after a led Fool (the next card decides the suit, or the designation does)."""
    return s.phase == "play" and len(s.trick) == 1 and s.trick[0][1] == FOOL


def follow_designation(s: DealState) -> bool:
    if not (fool_led(s) and s.designation in SUITS):
        return False
    designated = [c for c in _hand(s) if c < 56 and SUITS[c // 14] == s.designation]
    return bool(designated) and len(designated) < len(_hand(s)) and not _redesignation(s)


def _redesignation(s: DealState) -> bool:
    legal = s.legal_actions()
    return bool(legal) and all(a.type == "play" and a.suit is not None for a in legal)


def redesignation(s: DealState) -> bool:
    return fool_led(s) and _redesignation(s)


def lead_with_fool(s: DealState) -> bool:
    return s.phase == "play" and not s.trick and FOOL in _hand(s) and len(_hand(s)) > 1


def fool_lead_designates(s: DealState) -> bool:
    return lead_with_fool(s) and any(a.card == FOOL and a.suit for a in s.legal_actions())


def fool_not_led(s: DealState) -> bool:
    return lead_with_fool(s) and FOOL not in _legal_cards(s)


def only_the_fool(s: DealState) -> bool:
    return s.phase == "play" and bool(s.trick) and len(_hand(s)) > 1 and _legal_cards(s) == {FOOL}


def fool_by_last_trick(s: DealState) -> bool:
    return only_the_fool(s) and s.trick_no == s.variant.fool_last_trick


def fool_when_void(s: DealState) -> bool:
    last = s.variant.fool_last_trick
    return only_the_fool(s) and (last is None or s.trick_no < last)


def fool_late(s: DealState) -> bool:
    return (
        s.phase == "play"
        and s.trick_no >= s.variant.trick_count - 2
        and FOOL in _legal_cards(s)
        and len(_legal_cards(s)) > 1
    )


def fool_forbidden(s: DealState) -> bool:
    return (
        s.phase == "play"
        and s.trick_no == s.variant.fool_forbidden_trick
        and FOOL in _hand(s)
        and len(_hand(s)) > 1
    )


def fool_demanded(s: DealState) -> bool:
    return (
        s.fool_demanded
        and s.phase == "play"
        and s.trick_no == 23
        and len(_hand(s)) > 1
        and _legal_cards(s) == {FOOL}
    )


def phase_with(phase: str, *types: str) -> Callable[[DealState], bool]:
    def where(s: DealState) -> bool:
        return s.phase == phase and all(any(a.type == t for a in s.legal_actions()) for t in types)

    return where


def only_pass(phase: str) -> Callable[[DealState], bool]:
    return lambda s: s.phase == phase and [a.type for a in s.legal_actions()] == ["pass"]


def declare_again(s: DealState) -> bool:
    seat = s.current_player
    return phase_with("declare", "declare")(s) and any(d.seat == seat for d in s.declarations)


def lead_trick(number: int) -> Callable[[DealState], bool]:
    return lambda s: s.phase == "play" and not s.trick and s.trick_no == number


def last_trick(s: DealState) -> bool:
    return s.phase == "play" and s.trick_no == s.variant.trick_count and bool(s.trick)


def declarations_in_view(s: DealState) -> bool:
    return lead_trick(1)(s) and len(s.declarations) >= 2


def discard_nth(n: int) -> Callable[[DealState], bool]:
    return lambda s: s.phase == "discard" and len(s.skat) == n and len(s.legal_actions()) < len(_hand(s))


def discard_tarok(s: DealState) -> bool:
    return s.phase == "discard" and not s.skat and any(c.is_tarok for c in _legal_cards(s))


def bid_over(s: DealState) -> bool:
    return phase_with("bid", "bid", "pass")(s) and any(
        r == "bid" and a != "pass" for r, _, a in s.round_answers
    )


def must_beat(s: DealState) -> bool:
    """Led cards in hand that are not legal: only those that beat the trick are (Trischaken)."""
    led = set(_led_cards(s)) if _led_plain(s) else set()
    return bool(led - _legal_cards(s)) and bool(led & _legal_cards(s))


def seat_out(s: DealState) -> bool:
    return s.sitting_out is not None and must_follow(s)


def second_to_play(s: DealState) -> bool:
    return s.phase == "play" and len(s.trick) == 1 and s.trick_no >= 3 and s.trick[0][1] != FOOL
