"""Perfect-information Monte Carlo: sample the hidden cards, roll out every action, average.

For each sampled deal (`sampler.Sampler`) every legal action of the seat is applied to its own
copy of the deal and the deal is played to its end by the rollout policy (`rollout.greedy`),
the same rollout generator for every action of one sample (common random numbers: the actions
are compared on the same futures). An action's value is the mean of the seat's points
(`DealResult.deltas`) over the samples. The budget is a number of samples (`iterations`,
reproducible on any machine) or a time (`think_ms`), whichever is given.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.engine import Action, DealState
from arena.engine.state import replayed

from .rollout import Policy, greedy, play_out
from .sampler import Sampler


@dataclass
class Evaluation:
    """The search's estimate at one decision."""

    values: dict[str, float]  # each legal action (its text in view["legal_actions"]) → mean points per deal
    best: str  # the action with the highest value (the first listed among equals)
    samples: int  # deals sampled
    rollouts: int  # deals played to the end
    seconds: float  # time spent
    sampler_tries: int = 0  # placements tried by the sampler (≥ samples)
    spread: dict[str, float] = field(default_factory=dict)  # standard error of each value


def copy_state(state: DealState) -> DealState:
    """An independent copy of a deal: the same deal replayed (the engine's own `deepcopy`)."""
    return replayed(*state.__reduce__()[1])


def evaluate(
    view: Mapping[str, Any],
    *,
    think_ms: float | None = None,
    seed: int = 0,
    iterations: int | None = None,
    policy: Policy = greedy,
    sampler: Sampler | None = None,
) -> Evaluation:
    """Estimate every legal action of the seat to act in `view` (an `arena.engine.observation` dict).

    Give `iterations` (samples, deterministic for a seed) or `think_ms` (a time budget; at least
    one sample is always taken). Raises `ValueError` when the view offers no legal action.
    """
    if iterations is None and think_ms is None:
        raise ValueError("give iterations or think_ms")
    legal_texts = [str(a) for a in view.get("legal_actions", ())]
    if not legal_texts:
        raise ValueError("the view offers no legal action (not this seat's turn, or the deal is over)")
    seat = int(view["seat"])
    actions = [Action.parse(text) for text in legal_texts]
    start = time.perf_counter()
    deadline = start + (think_ms or 0.0) / 1000.0
    rng = random.Random(seed)
    sampler = sampler if sampler is not None else Sampler(view)
    tries_before = sampler.tries
    totals = [0.0] * len(actions)
    squares = [0.0] * len(actions)
    samples = rollouts = 0
    while True:
        if iterations is not None:
            if samples >= iterations:
                break
        elif samples and time.perf_counter() >= deadline:
            break
        deal = sampler.sample(rng)
        args = deal.__reduce__()[1]
        variant, dealer, deck, pots, stakes, history = args
        rollout_seed = rng.getrandbits(64)
        for i, action in enumerate(actions):
            state = replayed(variant, dealer, deck, pots, stakes, history)
            state.apply(action)
            value = play_out(state, seat, random.Random(rollout_seed), policy)
            totals[i] += value
            squares[i] += value * value
            rollouts += 1
        samples += 1
    values = {text: totals[i] / samples for i, text in enumerate(legal_texts)}
    spread = {}
    for i, text in enumerate(legal_texts):
        mean = values[text]
        variance = max(0.0, squares[i] / samples - mean * mean)
        spread[text] = (variance / samples) ** 0.5 if samples > 1 else float("inf")
    best = max(legal_texts, key=lambda t: values[t])  # max keeps the first of equals
    return Evaluation(
        values=values,
        best=best,
        samples=samples,
        rollouts=rollouts,
        seconds=time.perf_counter() - start,
        sampler_tries=sampler.tries - tries_before,
        spread=spread,
    )
