"""A bot that plays a uniformly random legal action.

    python -m arena_bot.random_bot [--address HOST:PORT] [--token TOKEN] [--name NAME]

The generator is seeded from the environment variable ``ARENA_BOT_SEED`` when it is set
(reproducible games), else from the system's entropy.
"""

from __future__ import annotations

import os
import random

from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2


class RandomBot:
    """`decide` picks uniformly among the legal actions with its own generator."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
        if not request.legal_actions:
            raise ValueError(f"request {request.request_id} offers no legal action")
        return self.rng.choice(request.legal_actions)


def seed_from_env() -> str | None:
    value = os.environ.get("ARENA_BOT_SEED")
    return value if value else None


_default = RandomBot(seed_from_env())


def decide(request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
    """A uniformly random legal action (module generator, seeded from ``ARENA_BOT_SEED``)."""
    return _default.decide(request)


def run() -> None:
    """Console entry point: play one seat with this bot."""
    main(decide, name="random")


if __name__ == "__main__":
    run()
