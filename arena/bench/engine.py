"""Engine throughput: random legal play through the public engine API on one core.

The loop is what a referee or a search bot does, minus everything else: deal a
fresh shuffled deck, pick a uniformly random legal action until the deal ends,
score it.  Only the engine is measured; there is no I/O inside the loop.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from ..engine import Card, DealState, Variant


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
        return self.actions / self.seconds if self.seconds > 0 else 0.0

    @property
    def deals_per_s(self) -> float:
        return self.deals / self.seconds if self.seconds > 0 else 0.0

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
    """Play random deals for about `seconds` (whole deals only) and count them.

    The clock is read between deals, so the run overshoots by at most one deal.
    """
    rng = random.Random(f"{seed}:bench")
    shuffle = rng.shuffle
    choice = rng.choice
    clock = time.perf_counter
    deck = [Card(i) for i in range(78)]
    seats = variant.seats
    deals = 0
    actions = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        shuffle(deck)
        state = DealState(variant, dealer=deals % seats, deck=list(deck))
        legal_actions = state.legal_actions
        apply = state.apply
        is_terminal = state.is_terminal
        while not is_terminal():
            apply(choice(legal_actions()))
            actions += 1
        state.result()
        deals += 1
    elapsed = clock() - start
    return EngineBench(variant.name, dict(variant.options), deals, actions, elapsed)
