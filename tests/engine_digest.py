"""Play random matches of every variant and option set and print one digest per match, with the
engine build that ran: tests/engine/test_builds.py runs it under the compiled and the pure build and
compares the lines.

    python tests/engine_digest.py MATCHES [SEED]

A digest covers everything a build could change: each deal's record (deck, actions, result), the
legal actions at every step, the acting seat's observation and the wire bytes of its decision
request (arena.protocol, compiled with the engine) at a quarter of the steps, every seat's
observation at the end, the rule and message of a rejected illegal action, and the match's scores and pots.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import sys
from collections.abc import Iterator
from typing import Any

from arena.engine import (
    BUILD,
    CARDS,
    OPTIONS,
    Action,
    DealState,
    EngineError,
    Match,
    deal_record,
    find_variant,
    observation,
)
from arena.protocol import ViewEncoder, request_message


def option_sets() -> Iterator[tuple[str, dict[str, str]]]:
    """Every variant with every combination of its options."""
    for name, specs in OPTIONS.items():
        for values in itertools.product(*(spec.choices for spec in specs.values())):
            yield name, dict(zip(specs, values, strict=True))


def rejected(state: DealState, rng: random.Random) -> list[Any]:
    """Try a card play that is not legal now: what the engine says about it (rule and message)."""
    legal = set(state.legal_actions())
    illegal = Action("play", rng.choice(CARDS))
    if illegal in legal:
        return ["legal", str(illegal)]
    try:
        state.apply(illegal)
    except EngineError as exc:
        return [str(illegal), type(exc).__name__, getattr(exc, "rule", None), str(exc)]
    raise AssertionError(f"{illegal} was applied although not legal")


def match_digest(name: str, options: dict[str, str], seed: int) -> tuple[str, int]:
    """The digest of one random match, and its number of deals."""
    rng = random.Random(f"{seed}:{name}:{sorted(options.items())}")
    match = Match(find_variant(name, options), seed=seed, deals=2, first_dealer=rng.randrange(3))
    out = hashlib.sha256()

    def add(item: Any) -> None:
        out.update(repr(item).encode())  # insertion order included: the builds must agree on it too

    while not match.is_over():
        state = match.start_deal()
        views = ViewEncoder(state)
        step = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            seat = state.current_player
            assert seat is not None
            add([step, seat, legal])
            if (step + seed) % 4 == 0:  # a quarter of the steps, a different quarter per seed
                add(observation(state, seat))
                add(request_message(step, match.deal_index, views.view(seat), legal, 1000, 5000, []))
            if (step + seed) % 7 == 0:
                add(rejected(state, rng))
            state.apply(rng.choice(legal))
            step += 1
        add(deal_record(state, match.deal_index))
        add([observation(state, seat) for seat in range(state.seats)])
        add(match.finish_deal(state).to_dict())
    add([match.final_split(), match.scores, dict(match.pots)])
    return out.hexdigest(), len(match.results)


def main(argv: list[str]) -> int:
    matches = int(argv[0])
    seed = int(argv[1]) if len(argv) > 1 else 0
    print(BUILD)
    for name, options in option_sets():
        for k in range(matches):
            digest, deals = match_digest(name, options, seed + k)
            print(name, json.dumps(options, sort_keys=True), seed + k, deals, digest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
