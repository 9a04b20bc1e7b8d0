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
    rollouts: int  # deals played to the end (a sample cut short by the time included)
    seconds: float  # time spent
    sampler_tries: int = 0  # placements tried by the sampler (≥ samples)
    spread: dict[str, float] = field(default_factory=dict)  # standard error of each value
    outcomes: dict[str, list[float]] = field(default_factory=dict)  # each action's points, sample by sample

    def advantage(self, action: str, other: str) -> tuple[float, float]:
        """How many points per deal `action` gains over `other`, and the standard error of that.

        Paired over the samples (both were rolled out on the same deals with the same rollout
        seeds), so the error is much smaller than either value's own."""
        a, b = self.outcomes[action], self.outcomes[other]
        n = len(a)
        diffs = [x - y for x, y in zip(a, b, strict=True)]
        mean = sum(diffs) / n if n else 0.0
        if n < 2:
            return mean, float("inf")
        variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        return mean, (variance / n) ** 0.5


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

    Give `iterations` (samples: deterministic for a seed), `think_ms` (a time budget), or both
    (`iterations` unless time runs out first). At least one sample is always completed; a sample
    cut short by the time is dropped. Raises `ValueError` when the view offers no legal action,
    `NoConsistentDeal` when no deal fits it.
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
    outcomes: list[list[float]] = [[] for _ in actions]
    samples = rollouts = 0
    timed = think_ms is not None
    while iterations is None or samples < iterations:
        if timed and samples and time.perf_counter() >= deadline:
            break
        deal = sampler.sample(rng)
        variant, dealer, deck, pots, stakes, history = deal.__reduce__()[1]
        rollout_seed = rng.getrandbits(64)
        values = []
        for action in actions:
            if timed and samples and time.perf_counter() >= deadline:
                break  # out of time within a sample: drop it, every action keeps the same samples
            state = replayed(variant, dealer, deck, pots, stakes, history)
            state.apply(action)
            values.append(play_out(state, seat, random.Random(rollout_seed), policy))
        rollouts += len(values)
        if len(values) < len(actions):
            break
        for i, value in enumerate(values):
            outcomes[i].append(value)
        samples += 1
    means = {text: sum(outcomes[i]) / samples for i, text in enumerate(legal_texts)}
    spread = {}
    for i, text in enumerate(legal_texts):
        mean = means[text]
        variance = sum((x - mean) ** 2 for x in outcomes[i]) / (samples - 1) if samples > 1 else 0.0
        spread[text] = (variance / samples) ** 0.5 if samples > 1 else float("inf")
    best = max(legal_texts, key=lambda t: means[t])  # max keeps the first of equals
    return Evaluation(
        values=means,
        best=best,
        samples=samples,
        rollouts=rollouts,
        seconds=time.perf_counter() - start,
        sampler_tries=sampler.tries - tries_before,
        spread=spread,
        outcomes={text: outcomes[i] for i, text in enumerate(legal_texts)},
    )
