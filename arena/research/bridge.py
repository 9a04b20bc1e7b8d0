"""A policy or an OpenSpiel bot as an arena bot over gRPC: ``python -m arena.research.bridge``.

    python -m arena.research.bridge --policy mypackage.agent:act      # act(observation, mask) -> index
    python -m arena.research.bridge --openspiel ismcts --simulations 200
    arena ladder ... with a bot command "python -m arena.research.bridge --policy ..."

The bridge is a bot of the Python SDK (`arena_bot.main`): the SDK keeps the stream, the Hello,
reconnects, the seat token (``--token``/``ARENA_TOKEN``) and the standing arena's lobby
(``--bot-token``), so a bridged agent goes wherever an SDK bot goes, with the SDK's own options
(every argument the bridge does not know is passed on to it). The bridge only turns each
`DecisionRequest` into what the agent expects: the SDK's `view_observation` maps the protocol's `View` to the
observation dict of `arena.engine.observation`, `spaces.encode_observation` makes the tensor the
PettingZoo environment gives, and the legal actions become the mask.

An OpenSpiel bot needs a game state, not a tensor: the bridge rebuilds one from the seat's view
(`determinize`): the unseen cards dealt at random to the other seats and the discard, consistent
with what the seat has seen (cards played and shown, voids shown by not following), then the
public actions replayed through the OpenSpiel game. Search bots that sample worlds themselves
(ISMCTS) resample from that state.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
from arena_bot import action_text, main
from arena_bot.observation import view_observation
from arena_bot.v1 import arena_pb2

from arena.engine import Action

from . import spaces

Policy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8]], int]
"""An agent: the observation tensor and the legal-action mask in, an action index out."""


def request_mask(request: arena_pb2.DecisionRequest) -> npt.NDArray[np.int8]:
    return spaces.legal_mask([Action.parse(action_text(a)) for a in request.legal_actions])


def policy_decide(
    policy: Policy, record: IO[str] | None = None
) -> Callable[[arena_pb2.DecisionRequest], str]:
    """The SDK's `decide` for `policy`; with `record`, one JSON line per decision (the tensor's
    non-zero entries and the mask's legal indices) for checking the bridge against the environment."""

    def decide(request: arena_pb2.DecisionRequest) -> str:
        tensor = spaces.encode_observation(view_observation(request.view))
        mask = request_mask(request)
        index = int(policy(tensor, mask))
        if not 0 <= index < spaces.NUM_ACTIONS or not mask[index]:
            raise ValueError(f"the policy chose action {index}, which is not legal here")
        if record is not None:
            line = {
                "deal": request.deal,
                "seat": request.view.seat,
                "observation": sparse(tensor),
                "legal": np.flatnonzero(mask).tolist(),
                "action": index,
            }
            record.write(json.dumps(line) + "\n")
            record.flush()
        return str(spaces.ACTIONS[index])

    return decide


def sparse(tensor: npt.NDArray[np.float32]) -> list[list[float]]:
    """[[index, value], …] of the non-zero entries: a compact, exact record of a tensor."""
    return [[int(i), float(tensor[i])] for i in np.flatnonzero(tensor)]


def random_policy(seed: int | None = None) -> Policy:
    rng = np.random.default_rng(seed)

    def act(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def load_policy(spec: str) -> Policy:
    """``module:function`` (a `Policy`), or ``random``."""
    if spec == "random":
        return random_policy()
    module_name, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"--policy {spec!r}: expected module:function or random")
    policy: Policy = getattr(importlib.import_module(module_name), name)
    return policy


# ----------------------------------------------------------------------------- OpenSpiel bots


def openspiel_decide(
    kind: str, simulations: int, seed: int, worlds: int = 16
) -> Callable[[arena_pb2.DecisionRequest], str]:
    """The SDK's `decide` for an OpenSpiel bot (``ismcts`` or ``random``) on a world drawn from the view.

    ISMCTS searches `worlds` worlds drawn at the root (`determinize`), `simulations` simulations with
    a random rollout each. When no world is found (rare; the Danish compulsory declarations make it
    likelier) or the search picks an action the real position does not allow, a random legal
    action is played instead, so the bridge never faults.
    """
    import pyspiel

    from . import openspiel as game_module

    rng = random.Random(seed)
    games: dict[str, Any] = {}

    def decide(request: arena_pb2.DecisionRequest) -> str:
        view = view_observation(request.view)
        params: dict[str, Any] = {"variant": view["variant"], **view["options"], "dealer": view["dealer"]}
        for pot, value in view.get("pots_start", {}).items():
            params[f"{pot}_pot"] = value
        key = json.dumps(params, sort_keys=True)
        game = games.get(key)
        if game is None:
            game = games[key] = pyspiel.load_game(game_module.GAME_NAME, params)
        legal = [Action.parse(action_text(a)) for a in request.legal_actions]
        if len(legal) == 1:
            return str(legal[0])
        state = game_module.determinize(game, view, rng)
        if state is None:
            return str(rng.choice(legal))
        if kind == "random":
            index = rng.choice(state.legal_actions())
        else:
            index = _ismcts(game, simulations, worlds, rng).step(state)
        action = spaces.ACTIONS[index]
        return str(action if action in legal else rng.choice(legal))

    return decide


def _ismcts(game: Any, simulations: int, worlds: int, rng: random.Random) -> Any:
    from open_spiel.python.algorithms import ismcts, mcts

    random_state = np.random.RandomState(rng.randrange(2**31))
    return ismcts.ISMCTSBot(
        game=game,
        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state),
        uct_c=UCT_C,
        max_simulations=simulations,
        max_world_samples=worlds,
        random_state=random_state,
        allow_inconsistent_action_sets=True,
    )


UCT_C = 20.0
"""UCT's exploration constant, in game points: about one deal's typical swing."""


# ----------------------------------------------------------------------------- command line


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m arena.research.bridge",
        description="Play an arena seat with a policy (observation, mask -> action) or an OpenSpiel bot. "
        "Other arguments (--address, --token, --bot-token, --name, ...) go to the SDK's `main`.",
    )
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--policy", metavar="MODULE:FUNCTION", help="a policy function, or 'random'")
    agent.add_argument("--openspiel", choices=("ismcts", "random"), help="an OpenSpiel bot")
    parser.add_argument(
        "--simulations", type=int, default=100, metavar="N", help="ISMCTS simulations per move"
    )
    parser.add_argument("--worlds", type=int, default=16, metavar="N", help="ISMCTS worlds drawn per move")
    parser.add_argument("--seed", type=int, default=0, help="the OpenSpiel bot's random seed")
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="append a JSON line per decision (policy)"
    )
    return parser.parse_known_args(argv)


def run(argv: list[str] | None = None) -> None:
    args, rest = _arguments(sys.argv[1:] if argv is None else argv)
    sys.argv = [sys.argv[0], *rest]  # the SDK's `main` parses what is left
    if args.openspiel:
        main(
            openspiel_decide(args.openspiel, args.simulations, args.seed, args.worlds),
            name=f"openspiel-{args.openspiel}",
        )
        return
    try:
        policy = load_policy(args.policy)
    except (ImportError, AttributeError, ValueError) as error:
        print(f"bridge: cannot load policy {args.policy!r}: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    with _record(args.record) as record:
        main(policy_decide(policy, record), name=f"policy-{args.policy.rpartition(':')[2]}")


class _record:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.file: IO[str] | None = None

    def __enter__(self) -> IO[str] | None:
        if self.path is not None:
            self.file = self.path.open("a", encoding="utf-8")
        return self.file

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()


if __name__ == "__main__":
    run()
