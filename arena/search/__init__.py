"""Search over the hidden cards: information-set sampling and perfect-information Monte Carlo.

A layer directly above the engine (it imports only `arena.engine`): no gRPC, no trio, no files.
Its input is one seat's information exactly as the server sends it, the observation dict of
`arena.engine.observation(state, seat)`.

    from arena.search import evaluate, sample_deals
    for deal in sample_deals(view, random.Random(1), 100): ...   # DealStates consistent with view
    ev = evaluate(view, iterations=50, seed=1)                    # or think_ms=200, or both
    ev.best, ev.values["play SK"], ev.samples, ev.rollouts
    ev.advantage("play SK", "play S7")   # (mean gain per deal, its standard error), paired by sample

The SDK's search bot (`clients/python/arena_bot/search_bot.py`) and `arena replay analyze` use it.
"""

from .pimc import Evaluation, copy_state, evaluate
from .rollout import Policy, greedy, play_out
from .sampler import NoConsistentDeal, Sampler, sample_deals

__all__ = [
    "Evaluation",
    "NoConsistentDeal",
    "Policy",
    "Sampler",
    "copy_state",
    "evaluate",
    "greedy",
    "play_out",
    "sample_deals",
]
