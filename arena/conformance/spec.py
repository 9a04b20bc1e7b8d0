"""The conformance kit's vocabulary and its decks: what a case is (`Case`), what one asks for
(`Spec`, with the `Steer` that plays a deal until the position comes), and the deck that deals
chosen cards to chosen seats (`cards`, `deck_for`). The cases themselves are in `cases.py`; the
predicates that recognise their positions in `where.py`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..engine import CARDS, Action, Card, DealState, Variant
from ..engine.cards import FOOL
from ..referee.position import Position, Probe


@dataclass(frozen=True)
class Steer:
    """How every seat plays until the position comes: uniformly random legal actions, except..."""

    keep_fool: bool = False  # the Fool only when nothing else is legal
    lead_fool: str | None = None  # lead the Fool whenever allowed ("" or the suit to designate)
    demand: bool = False  # demand the Fool in the demand round (else pass)
    declare: bool = False  # declare every combination (else random)
    passes: frozenset[str] = frozenset()  # phases in which every seat passes (e.g. "bid": Trischaken)

    def choose(self, state: DealState, rng: random.Random) -> Action:
        legal = state.legal_actions()
        by_type = {a.type for a in legal}
        if (state.phase == "redeal" or state.phase in self.passes) and "pass" in by_type:
            return next(a for a in legal if a.type == "pass")  # keep the deal going
        if state.phase == "demand":
            wanted = "demand" if self.demand and "demand" in by_type else "pass"
            return next(a for a in legal if a.type == wanted)
        if state.phase == "declare" and self.declare and "declare" in by_type:
            return next(a for a in legal if a.type == "declare")
        if state.phase == "play":
            if self.lead_fool is not None and not state.trick:
                leads = [a for a in legal if a.card == FOOL and (a.suit or "") == self.lead_fool]
                leads = leads or [a for a in legal if a.card == FOOL and not self.lead_fool]
                if leads:
                    return leads[0]
            if self.keep_fool:
                legal = [a for a in legal if a.card != FOOL] or legal
        return rng.choice(legal)


Hands = Mapping[str, str] | Callable[[Variant], Mapping[str, str]]


@dataclass(frozen=True)
class Spec:
    name: str
    title: str
    where: Callable[[DealState], bool]
    applies: Callable[[Variant], bool] = lambda v: True
    hands: Hands = field(default_factory=dict)  # role (F, M, D) -> card codes, with X..Y runs
    steer: Steer = Steer()
    options: Mapping[str, str] = field(default_factory=dict)
    probes: frozenset[Probe] = frozenset()
    request_id: int | None = None
    dealer: int = 0


@dataclass(frozen=True)
class Case:
    variant: str
    name: str
    title: str
    position: Position
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def state(self) -> DealState:
        return self.position.state

    @property
    def seat(self) -> int:
        seat = self.position.state.current_player
        assert seat is not None
        return seat


# ---------------------------------------------------------------------- decks


FACES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K")


def cards(spec: str) -> list[Card]:
    """Card codes separated by spaces; ``X..Y`` is a run within a suit or of taroks (S2..S10, T21..T4)."""
    out: list[Card] = []
    for token in spec.split():
        if ".." not in token:
            out.append(Card.parse(token))
            continue
        a, b = token.split("..")
        if a[0] == "T":
            lo, hi = int(a[1:]), int(b[1:])
            step = 1 if lo <= hi else -1
            out += [Card.parse(f"T{n}") for n in range(lo, hi + step, step)]
        else:
            i, j = FACES.index(a[1:]), FACES.index(b[1:])
            step = 1 if i <= j else -1
            out += [Card.parse(a[0] + FACES[k]) for k in range(i, j + step, step)]
    return out


def deck_for(variant: Variant, dealer: int, hands: Mapping[str, str], rng: random.Random) -> list[Card]:
    """A deck that deals each role (F forehand, M middlehand, D dealer) at least its chosen cards;
    the other cards shuffled by `rng`."""
    # Dealt in canonical order, card i lands where deck position i goes: the hands of that deal
    # are the deck positions of each seat, whatever the variant's way of dealing.
    canonical = DealState(variant, dealer, list(CARDS))
    seat_of = {"F": canonical.order[0], "M": canonical.order[1], "D": dealer}
    deck: list[Card | None] = [None] * len(CARDS)
    used: set[Card] = set()
    for role, codes in hands.items():
        chosen = cards(codes)
        places = canonical.hands[seat_of[role]]
        if len(chosen) > len(places) or used & set(chosen) or len(set(chosen)) != len(chosen):
            raise ValueError(f"role {role}: cannot deal {codes}")
        for place, card in zip(places, chosen, strict=False):
            deck[place] = card
        used.update(chosen)
    rest = [c for c in CARDS if c not in used]
    rng.shuffle(rest)
    fill = iter(rest)
    return [c if c is not None else next(fill) for c in deck]
