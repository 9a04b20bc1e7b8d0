"""A bot that plays a uniformly random legal action.

    python -m arena_bot.random_bot [--address HOST:PORT] [--token TOKEN] [--name NAME]

The generator is seeded from the environment variable ``ARENA_BOT_SEED`` when it is set
(reproducible games), else from the system's entropy; a persistent process (``ARENA_MATCHES=stdin``)
seeds it again before each match from that match's ``ARENA_BOT_SEED``.
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


def reseed() -> None:
    """Seed the module generator again from ``ARENA_BOT_SEED`` (before each match of a persistent process)."""
    _default.rng.seed(seed_from_env())


def run() -> None:
    """Console entry point: play one seat with this bot."""
    main(decide, name="random", new_match=reseed)


if __name__ == "__main__":
    run()
