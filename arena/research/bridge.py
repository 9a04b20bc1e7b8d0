"""A policy or an OpenSpiel bot as an arena bot over gRPC: ``python -m arena.research.bridge``.

    python -m arena.research.bridge --policy mypackage.agent:act      # act(observation, mask) -> index
    python -m arena.research.bridge --openspiel ismcts --simulations 200
    arena ladder ... with a bot command "python -m arena.research.bridge --policy ..."
    arena ladder ... with a bot "inprocess:bridge --openspiel ismcts"  # in the referee's process

The bridge is a bot of the Python SDK (`arena_bot.main`): the SDK keeps the stream, the Hello,
reconnects, the seat token (``--token``/``ARENA_TOKEN``) and the standing arena's lobby
(``--bot-token``), so a bridged agent goes wherever an SDK bot goes, with the SDK's own options
(every argument the bridge does not know is passed on to it). The bridge only turns each
`DecisionRequest` into what the agent expects: the SDK's `view_observation` maps the protocol's `View` to the
observation dict of `arena.engine.observation`, `spaces.encode_observation` makes the tensor the
PettingZoo environment gives, and the legal actions become the mask.

An OpenSpiel bot needs a game state, not a tensor: the bridge draws one from the seat's view with
the search layer's `Sampler` (`openspiel.world_sampler`, `openspiel.draw_world`): a deal consistent
with everything the seat was sent, its public history replayed through the OpenSpiel game. ISMCTS
draws its worlds from the same sampler. A decision where no world is found is played at random,
counted and logged (`OpenSpielBot`); the search's parameters are options, its seed
``--seed`` or ``ARENA_BOT_SEED``.

In the referee's process (``inprocess:bridge ARGUMENTS``, arena/server/inprocess.py) the same
arguments make a `BridgeBot`, one per match, seeded with the match's ``ARENA_BOT_SEED``: the same
agent on the same requests, without the bot process and the stream.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

import numpy as np
import numpy.typing as npt
import structlog
from arena_bot import Bot, action_text, main
from arena_bot.observation import request_observation, view_observation
from arena_bot.v1 import arena_pb2

from arena.engine import Action
from arena.logs import configure as configure_logs
from arena.search import NoConsistentDeal

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


def random_policy(seed: int | str | None = None) -> Policy:
    """Uniformly random legal actions; a text seed (``ARENA_BOT_SEED``) is hashed to an integer."""
    if isinstance(seed, str):
        seed = random.Random(seed).getrandbits(63) if seed else None
    rng = np.random.default_rng(seed)

    def act(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def load_policy(spec: str, seed: str = "") -> Policy:
    """``module:function`` (a `Policy`), or ``random`` (seeded with `seed`, when there is one)."""
    if spec == "random":
        return random_policy(seed)
    module_name, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"--policy {spec!r}: expected module:function or random")
    policy: Policy = getattr(importlib.import_module(module_name), name)
    return policy


# ----------------------------------------------------------------------------- OpenSpiel bots

UCT_C = 20.0
"""UCT's exploration constant, in game points: about one deal's typical swing."""

log = structlog.get_logger("arena.research.bridge")


def seed_from_env() -> str:
    """The bot's seed: ``ARENA_BOT_SEED`` (a ladder sets it per match), as the SDK's bots read it."""
    return os.environ.get("ARENA_BOT_SEED", "")


class OpenSpielBot(Bot):
    """An OpenSpiel bot (``ismcts`` or ``random``) as a bot of the SDK, on worlds drawn from the view.

    At each decision with a choice, the search layer's `Sampler` (`openspiel.world_sampler`, the
    one the search bot and the game's `resample_from_infostate` use) draws a world the seat cannot
    tell from the real position; ISMCTS searches `simulations` simulations over `worlds` worlds
    drawn from the same sampler, each leaf valued by `rollouts` random rollouts, with exploration
    constant `uct_c`. Each decision is seeded from `seed` (default ``ARENA_BOT_SEED``) and its
    place in the match, so a seeded bot plays the same match the same way, in a fresh process or
    a persistent one.

    When no world is found (`NoConsistentDeal`), or the search picks an action the real position
    does not allow, a random legal action is played so that the bridge never faults; each such
    fallback is counted in `fallbacks` (by reason, for the current match) and logged
    (``bridge_fallback``), and the match's totals are logged at its end (``bridge_match_end``).
    """

    version = "2"

    def __init__(
        self,
        kind: str = "ismcts",
        *,
        simulations: int = 100,
        worlds: int = 16,
        uct_c: float = UCT_C,
        rollouts: int = 1,
        seed: str | None = None,
    ) -> None:
        import pyspiel

        from . import openspiel as game_module  # registers the game

        if kind not in ("ismcts", "random"):
            raise ValueError(f"unknown OpenSpiel bot {kind!r}: ismcts or random")
        self.kind = kind
        self.name = f"openspiel-{kind}"
        self.simulations, self.worlds, self.uct_c, self.rollouts = simulations, worlds, uct_c, rollouts
        self.fixed_seed = seed
        self.seed = seed if seed is not None else seed_from_env()
        self.fallbacks: Counter[str] = Counter()
        self.decisions = 0  # decisions with a choice this match
        self._pyspiel = pyspiel
        self._game_module = game_module
        self._games: dict[str, Any] = {}

    def reseed(self) -> None:
        """Take the next match's seed from ``ARENA_BOT_SEED`` (a persistent process), unless fixed."""
        self.seed = self.fixed_seed if self.fixed_seed is not None else seed_from_env()

    def on_match_start(self, start: arena_pb2.MatchStart) -> None:
        self.fallbacks = Counter()
        self.decisions = 0

    def on_match_end(self, end: arena_pb2.MatchEnd) -> None:
        log.info("bridge_match_end", bot=self.name, decisions=self.decisions, fallbacks=dict(self.fallbacks))

    def decision_rng(self, request: arena_pb2.DecisionRequest) -> random.Random:
        """A generator of this decision: the bot's seed and the decision's place in the match."""
        view = request.view
        key = f"{self.seed}|{request.deal}|{view.seat}|{view.phase}|{view.trick_number}|{len(view.hand)}"
        key += f"|{len(view.trick.cards)}|{len(view.declarations)}|{len(view.round_answers)}"
        key += f"|{len(view.announcements)}"
        return random.Random(key)

    def game(self, view: dict[str, Any]) -> Any:
        params: dict[str, Any] = {"variant": view["variant"], **view["options"], "dealer": view["dealer"]}
        for pot, value in view.get("pots_start", {}).items():
            params[f"{pot}_pot"] = value
        key = json.dumps(params, sort_keys=True)
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = self._pyspiel.load_game(self._game_module.GAME_NAME, params)
        return game

    def decide(self, request: arena_pb2.DecisionRequest) -> str:
        legal = [Action.parse(action_text(a)) for a in request.legal_actions]
        if len(legal) == 1:
            return str(legal[0])
        self.decisions += 1
        rng = self.decision_rng(request)
        view = request_observation(request)
        game = self.game(view)
        draw = self._game_module.draw_world
        try:
            sampler = self._game_module.world_sampler(game, view)
            state = draw(game, sampler, rng)
            if self.kind == "random":
                index = rng.choice(state.legal_actions())
            else:
                bot = self._ismcts(game, rng)
                bot.set_resampler(lambda _state, _player: draw(game, sampler, rng))
                index = bot.step(state)
        except NoConsistentDeal as error:
            return self._fallback("no_world", request, legal, rng, str(error))
        action = spaces.ACTIONS[index]
        if action not in legal:
            return self._fallback("illegal", request, legal, rng, f"the search chose {action}")
        return str(action)

    def _fallback(
        self,
        reason: str,
        request: arena_pb2.DecisionRequest,
        legal: list[Action],
        rng: random.Random,
        why: str,
    ) -> str:
        self.fallbacks[reason] += 1
        action = rng.choice(legal)
        log.warning(
            "bridge_fallback",
            bot=self.name,
            reason=reason,
            detail=why,
            deal=request.deal,
            seat=request.view.seat,
            phase=request.view.phase,
            played=str(action),
            count=self.fallbacks[reason],
        )
        return str(action)

    def _ismcts(self, game: Any, rng: random.Random) -> Any:
        from open_spiel.python.algorithms import ismcts, mcts

        random_state = np.random.RandomState(rng.randrange(2**31))
        return ismcts.ISMCTSBot(
            game=game,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=random_state),
            uct_c=self.uct_c,
            max_simulations=self.simulations,
            max_world_samples=self.worlds,
            random_state=random_state,
            allow_inconsistent_action_sets=True,
        )


# ----------------------------------------------------------------------------- command line


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number at least 0, not {text}")
    return value


class _Refusing(argparse.ArgumentParser):
    """Bad arguments raise ValueError (one line) instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _arguments(
    argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> tuple[argparse.Namespace, list[str]]:
    parser = parser_class(
        prog="python -m arena.research.bridge",
        description="Play an arena seat with a policy (observation, mask -> action) or an OpenSpiel bot. "
        "Other arguments (--address, --token, --bot-token, --name, ...) go to the SDK's `main`.",
    )
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--policy", metavar="MODULE:FUNCTION", help="a policy function, or 'random'")
    agent.add_argument("--openspiel", choices=("ismcts", "random"), help="an OpenSpiel bot")
    search = parser.add_argument_group("ISMCTS (--openspiel ismcts)")
    search.add_argument(
        "--simulations",
        type=_positive,
        default=100,
        metavar="N",
        help="simulations per decision (default 100)",
    )
    search.add_argument(
        "--worlds", type=_positive, default=16, metavar="N", help="worlds drawn per decision (default 16)"
    )
    search.add_argument(
        "--uct-c",
        type=_non_negative,
        default=UCT_C,
        metavar="C",
        help=f"UCT's exploration constant, in game points (default {UCT_C:g})",
    )
    search.add_argument(
        "--rollouts", type=_positive, default=1, metavar="N", help="random rollouts per leaf (default 1)"
    )
    parser.add_argument(
        "--seed",
        metavar="TEXT",
        help="the bot's seed (default: the environment's ARENA_BOT_SEED, which a ladder sets per match)",
    )
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="append a JSON line per decision (policy)"
    )
    return parser.parse_known_args(argv)


def run(argv: list[str] | None = None) -> None:
    args, rest = _arguments(sys.argv[1:] if argv is None else argv)
    sys.argv = [sys.argv[0], *rest]  # the SDK's `main` parses what is left
    configure_logs()
    if args.openspiel:
        bot = OpenSpielBot(
            args.openspiel,
            simulations=args.simulations,
            worlds=args.worlds,
            uct_c=args.uct_c,
            rollouts=args.rollouts,
            seed=args.seed,
        )
        main(bot, name=bot.name, new_match=bot.reseed)
        return
    try:
        policy = load_policy(args.policy, args.seed if args.seed is not None else seed_from_env())
    except (ImportError, AttributeError, ValueError) as error:
        print(f"bridge: cannot load policy {args.policy!r}: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    with _record(args.record) as record:
        main(policy_decide(policy, record), name=f"policy-{args.policy.rpartition(':')[2]}")


class BridgeBot(Bot):
    """The bridge as a bot of this process: ``inprocess:bridge --policy M:F`` or ``inprocess:bridge
    --openspiel ismcts --simulations 40`` (the bridge's own arguments; not the SDK's, which speak of
    a connection). The in-process seat makes one per match with the match's seed (``--seed`` wins).
    """

    def __init__(self, argv: Sequence[str] = (), seed: str | None = None) -> None:
        args = self.arguments(argv)
        seed = args.seed if args.seed is not None else seed or ""
        self._bot: Bot | None = None
        self._record: IO[str] | None = None
        if args.openspiel:
            options = {"simulations": args.simulations, "worlds": args.worlds, "uct_c": args.uct_c}
            self._bot = OpenSpielBot(args.openspiel, rollouts=args.rollouts, seed=seed, **options)
            self.name, self.version = self._bot.name, self._bot.version
            self._decide: Callable[[arena_pb2.DecisionRequest], Any] = self._bot.decide
            return
        policy = load_policy(args.policy, seed)
        if args.record is not None:
            self._record = args.record.open("a", encoding="utf-8")
        self._decide = policy_decide(policy, self._record)
        self.name = f"policy-{args.policy.rpartition(':')[2]}"

    @staticmethod
    def arguments(argv: Sequence[str]) -> argparse.Namespace:
        """The bridge's arguments; ValueError (one line) for bad or unknown ones, or a policy that
        cannot be loaded."""
        args, rest = _arguments(list(argv), _Refusing)
        if rest:
            raise ValueError(f"unrecognised arguments: {' '.join(rest)} (in-process, the bridge's own only)")
        if args.policy and args.policy != "random":
            module_name, _, name = args.policy.partition(":")
            try:
                found = hasattr(importlib.import_module(module_name), name) if name else False
            except ImportError as error:
                raise ValueError(f"cannot load policy {args.policy!r}: {error}") from None
            if not found:
                raise ValueError(f"cannot load policy {args.policy!r}: expected module:function or random")
        return args

    def decide(self, request: arena_pb2.DecisionRequest) -> Any:
        return self._decide(request)

    def on_match_start(self, start: arena_pb2.MatchStart) -> None:
        if self._bot is not None:
            self._bot.on_match_start(start)

    def on_match_end(self, end: arena_pb2.MatchEnd) -> None:
        if self._bot is not None:
            self._bot.on_match_end(end)
        if self._record is not None:
            self._record.close()
            self._record = None


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
