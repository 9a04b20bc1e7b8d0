"""Engine throughput: random legal play through the public engine API on one core.

The loop is what a referee or a search bot does, minus everything else: deal a
fresh shuffled deck, pick a uniformly random legal action until the deal ends,
score it.  Only the engine is measured; there is no I/O inside the loop.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..engine import Card, DealState, Variant
from .common import rate, run_for


@dataclass(frozen=True, slots=True)
class EngineBench:
    """What one `bench_engine` run measured."""

    variant: str
    options: dict[str, str]
    deals: int
    actions: int
    seconds: float

    @property
    def actions_per_s(self) -> float:
        return rate(self.actions, self.seconds)

    @property
    def deals_per_s(self) -> float:
        return rate(self.deals, self.seconds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "options": dict(self.options),
            "deals": self.deals,
            "actions": self.actions,
            "seconds": round(self.seconds, 3),
            "actions_per_s": round(self.actions_per_s, 1),
            "deals_per_s": round(self.deals_per_s, 2),
        }


def bench_engine(variant: Variant, seconds: float, seed: int = 0) -> EngineBench:
    """Play random deals for about `seconds` (whole deals only) and count them."""
    timed = run_for(seconds, fresh_deal(variant, seed))
    return EngineBench(variant.name, dict(variant.options), timed.steps, timed.count, timed.seconds)


def fresh_deal(variant: Variant, seed: int = 0) -> Callable[[], int]:
    """A step of the bench: shuffle the deck, deal it (the dealer rotating), play the deal out at
    random and score it; the step returns the actions played."""
    rng = random.Random(f"{seed}:bench")
    shuffle = rng.shuffle
    choice = rng.choice
    deck = [Card(i) for i in range(78)]
    dealers = itertools.cycle(range(variant.seats))

    def step() -> int:
        shuffle(deck)
        state = DealState(variant, dealer=next(dealers), deck=list(deck))
        actions = play_out(state, choice)
        state.result()
        return actions

    return step


def play_out(state: DealState, choice: Callable[[Any], Any]) -> int:
    """Apply a uniformly random legal action until the deal ends; the number of actions."""
    legal_actions = state.legal_actions
    apply = state.apply
    is_terminal = state.is_terminal
    actions = 0
    while not is_terminal():
        apply(choice(legal_actions()))
        actions += 1
    return actions
