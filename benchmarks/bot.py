"""The search bot's speed (`arena.search`): samples, copies, rollouts and decisions per second.

Positions are the decisions (with more than one legal action) of random deals of the variant,
seeded, so two runs measure the same work. On one core, each for about `seconds`, cycling over
the positions:

* **samples/s**: `Sampler(view).sample(rng)`: the information set read from the view, the hidden
  cards placed, the deal dealt, the public history replayed and checked;
* **copies/s**: one sampled deal copied the way the search copies it for each action (the deal
  replayed from its deck, `arena.search.copy_state`);
* **rollouts/s**: a copy played to its end by the rollout policy and scored, the copy included:
  the unit of the search's work;
* **decisions/s** at a budget: `evaluate(view, think_ms=budget)` start to end, with the samples
  each decision completed in that time.

Later engine speed-ups show up here first, and then as playing strength.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from arena.engine import BUILD, DealState, Variant, deck_for, observation
from arena.search import Sampler, copy_state, evaluate, play_out

from .common import rate, run_for

POSITIONS = 40


@dataclass(frozen=True, slots=True)
class BotBench:
    variant: str
    positions: int
    samples_per_s: float
    copies_per_s: float
    rollouts_per_s: float
    decisions_per_s: float
    samples_per_decision: float
    think_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "positions": self.positions,
            "samples_per_s": round(self.samples_per_s, 1),
            "copies_per_s": round(self.copies_per_s, 1),
            "rollouts_per_s": round(self.rollouts_per_s, 1),
            "decisions_per_s": round(self.decisions_per_s, 2),
            "samples_per_decision": round(self.samples_per_decision, 1),
            "think_ms": self.think_ms,
        }


def positions(variant: Variant, seed: int, count: int = POSITIONS) -> list[dict[str, Any]]:
    """`count` views of seats to act with a choice, from random deals, spread over the deal."""
    rng = random.Random(seed)
    views: list[dict[str, Any]] = []
    for deal in itertools.count():
        state = DealState(variant, rng.randrange(variant.seats), deck_for(seed, deal))
        while not state.is_terminal():
            legal = state.legal_actions()
            if len(legal) > 1 and rng.random() < 0.15:
                views.append(observation(state, state.turn or 0))
                if len(views) == count:
                    return views
            state.apply(rng.choice(legal))
    raise AssertionError("unreachable")


def bench_bot(variant: Variant, seconds: float, think_ms: float, seed: int = 0) -> BotBench:
    views = positions(variant, seed)
    rng = random.Random(seed)
    cycle = itertools.cycle(views)

    def sample() -> int:
        Sampler(next(cycle)).sample(rng)
        return 1

    samples = run_for(seconds, sample)
    deals = [(Sampler(view).sample(rng), int(view["seat"])) for view in views[:10]]
    dealt = itertools.cycle(deals)

    def copy() -> int:
        copy_state(next(dealt)[0])
        return 1

    copies = run_for(seconds, copy)

    def rollout() -> int:
        deal, seat = next(dealt)
        play_out(copy_state(deal), seat, rng)
        return 1

    rollouts = run_for(seconds, rollout)
    done: list[int] = []

    def decide() -> int:
        done.append(evaluate(next(cycle), think_ms=think_ms, seed=len(done)).samples)
        return 1

    decisions = run_for(seconds, decide)
    return BotBench(
        variant=variant.name,
        positions=len(views),
        samples_per_s=samples.rate,
        copies_per_s=copies.rate,
        rollouts_per_s=rollouts.rate,
        decisions_per_s=decisions.rate,
        samples_per_decision=rate(sum(done), len(done)),
        think_ms=think_ms,
    )


def bot_report(benches: list[BotBench]) -> dict[str, Any]:
    return {"build": BUILD, "variants": [b.to_dict() for b in benches]}
