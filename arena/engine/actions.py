"""Actions: every decision a player makes, as a value with a text form that round-trips.

The vocabulary is shared by all variants; the phase of the deal gives an action
its meaning.  An action does not carry its seat: the state knows whose turn it is,
and the history stores ``(seat, action)`` pairs.

=========  ================================  ===============================
type       fields                            text form
=========  ================================  ===============================
play       card, suit (Fool designation)     ``play SK`` · ``play EX S``
discard    card                              ``discard H5``
declare    name, suit (per-suit combos)      ``declare cavallerie S``
announce   name (``vole``, ``nolo``, …)      ``announce vole``
pass       –                                 ``pass``
redeal     –                                 ``redeal``
demand     –                                 ``demand``
bid        name (contract)                   ``bid rufer``
call       card                              ``call HK``
=========  ================================  ===============================
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final, NamedTuple

from .cards import SUITS, TAROK, Card
from .errors import ActionError, CardError

ACTION_TYPES: Final = ("play", "discard", "declare", "announce", "pass", "redeal", "demand", "bid", "call")
DESIGNATIONS: Final = (*SUITS, TAROK)
_CARD_TYPES: Final = frozenset({"play", "discard", "call"})
_NAME_TYPES: Final = frozenset({"declare", "announce", "bid"})


class Action(NamedTuple):
    """An immutable action; a tuple underneath, so comparing and hashing run at C speed."""

    type: str
    card: Card | None = None
    suit: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        parts = [self.type]
        if self.card is not None:
            parts.append(str(self.card))
        if self.name is not None:
            parts.append(self.name)
        if self.suit is not None:
            parts.append(self.suit)
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Action.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> Action:
        """Parse the text form, e.g. ``play EX S`` or ``declare cavallerie H``."""
        parts = text.split()
        if not parts:
            raise ActionError("empty action text")
        kind, rest = parts[0].lower(), parts[1:]
        fields: dict[str, Any] = {"type": kind}
        if kind in _CARD_TYPES and rest:
            fields["card"] = rest.pop(0)
        elif kind in _NAME_TYPES and rest:
            fields["name"] = rest.pop(0)
        if rest:
            fields["suit"] = rest.pop(0)
        if rest:
            raise ActionError(f"unexpected words {rest!r} in action {text!r}")
        return Action.from_dict(fields)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.card is not None:
            out["card"] = str(self.card)
        if self.name is not None:
            out["name"] = self.name
        if self.suit is not None:
            out["suit"] = self.suit
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Action:
        """Build an action from its record form; unknown keys other than `seat` are errors."""
        kind = data.get("type")
        if kind not in ACTION_TYPES:
            raise ActionError(f"unknown action type {kind!r} (expected one of {', '.join(ACTION_TYPES)})")
        extra = set(data) - {"type", "card", "suit", "name", "seat", "think_ms", "fault"}
        if extra:
            raise ActionError(f"unknown field(s) {sorted(extra)} in {kind} action")
        card = data.get("card")
        name = data.get("name")
        suit = data.get("suit")
        if (kind in _CARD_TYPES) != (card is not None):
            raise ActionError(f"a {kind} action {'needs' if kind in _CARD_TYPES else 'takes no'} card")
        if (kind in _NAME_TYPES) != (name is not None):
            raise ActionError(f"a {kind} action {'needs' if kind in _NAME_TYPES else 'takes no'} name")
        if suit is not None and suit not in DESIGNATIONS:
            raise ActionError(f"suit {suit!r} is not one of {', '.join(DESIGNATIONS)}")
        if name is not None and not isinstance(name, str):
            raise ActionError(f"name must be a string, got {name!r}")
        try:
            parsed = Card.parse(card) if card is not None else None
        except CardError as exc:
            raise ActionError(str(exc)) from None
        return make(kind, parsed, suit, name)


@lru_cache(maxsize=4096)
def make(kind: str, card: Card | None = None, suit: str | None = None, name: str | None = None) -> Action:
    """Interned constructor: equal actions are the same object, so the hot path compares by identity."""
    return Action(kind, card, suit, name)


PASS: Final = make("pass")
REDEAL: Final = make("redeal")
DEMAND: Final = make("demand")
PLAY: Final = tuple(make("play", Card(i)) for i in range(78))
DISCARD: Final = tuple(make("discard", Card(i)) for i in range(78))
