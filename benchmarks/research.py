"""`python -m benchmarks research`: the research environment against the engine; OpenSpiel's hearts as anchor.

Six loops of random legal play, each a whole deal per step, taking turns in short slices
(`common.alternate`) so that a machine getting busier or quieter affects them alike:

* ``engine``: the engine's own random play (`DealState.legal_actions` and `apply`);
* ``env``: the PettingZoo environment as docs/RESEARCH.md tells a user to drive it, `env()` (with
  PettingZoo's order checks) and the usual AEC loop: ``for agent in env.agent_iter(): obs, reward,
  terminated, truncated, info = env.last(); env.step(action)``, where `last()` builds the acting
  seat's observation tensor and mask (fresh arrays) and the action is drawn from the mask's
  non-zero entries (`numpy.nonzero`), as a random agent would;
* ``raw_env``: the same loop on `raw_env` (no wrapper);
* ``floor``: the least any environment of this API can do per step, over the engine: a fresh
  copy of a float32 row of the tensor's size (kept at zeros: no observation is computed) and a
  fresh int8 mask with the legal actions marked (the environment's own compiled `mark_legal`),
  in the dict `last()` returns, then the same random agent's pick from the mask; no PettingZoo,
  no tensor, no rewards: an upper bound on `env`'s rate;
* ``openspiel``: the OpenSpiel game (``grosstarock_arena``), chance nodes included, with the
  acting seat's observation tensor at each decision;
* ``hearts``: OpenSpiel's C++ hearts, chance nodes included, with the acting seat's
  information-state tensor at each decision (hearts has no observation tensor): how fast a
  native OpenSpiel card game runs on this machine.

Needs the `rl` extra. Rates are steps (actions, chance outcomes included) per second.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from arena.engine import DealState, Variant, deck_for

from .common import alternate, rate


def _engine(variant: Variant, seed: int) -> Callable[[], int]:
    rng = random.Random(seed)
    deals = iter(range(10**12))

    def step() -> int:
        state = DealState(variant, 0, deck_for(seed, next(deals)))
        actions = 0
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            actions += 1
        state.result()
        return actions

    return step


def _env(variant: Variant, seed: int, wrapped: bool) -> Callable[[], int]:
    from arena.research.pettingzoo import env, raw_env

    options: dict[str, Any] = dict(variant.options)
    game: Any = (env if wrapped else raw_env)(variant.name, **options)
    rng = random.Random(seed)
    seeds = iter(range(seed, 10**12))

    def step() -> int:
        game.reset(seed=next(seeds))
        actions = 0
        for _agent in game.agent_iter():
            obs, _reward, terminated, truncated, _info = game.last()
            if terminated or truncated:
                game.step(None)
                continue
            game.step(rng.choice(obs["action_mask"].nonzero()[0].tolist()))
            actions += 1
        return actions

    return step


def _floor(variant: Variant, seed: int) -> Callable[[], int]:
    import numpy as np

    from arena.research.layout import ACTIONS, NUM_ACTIONS, OBS_SIZE
    from arena.research.tensors import mark_legal

    rng = random.Random(seed)
    deals = iter(range(10**12))
    row = np.zeros(OBS_SIZE, np.float32)

    def step() -> int:
        state = DealState(variant, 0, deck_for(seed, next(deals)))
        actions = 0
        while not state.is_terminal():
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mark_legal(mask.data, state.legal_actions())
            obs: dict[str, Any] = {"observation": row.copy(), "action_mask": mask}
            state.apply(ACTIONS[rng.choice(obs["action_mask"].nonzero()[0].tolist())])
            actions += 1
        state.result()
        return actions

    return step


def _spiel(game: Any, seed: int) -> Callable[[], int]:
    rng = random.Random(seed)
    has_observation = game.get_type().provides_observation_tensor

    def step() -> int:
        state = game.new_initial_state()
        actions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probabilities)[0])
            else:
                seat = state.current_player()
                if has_observation:
                    state.observation_tensor(seat)
                else:  # hearts has only the information-state tensor
                    state.information_state_tensor(seat)
                state.apply_action(rng.choice(state.legal_actions()))
            actions += 1
        state.returns()
        return actions

    return step


def bench_research(variant: Variant, seconds: float, seed: int = 0, slice_s: float = 0.5) -> dict[str, Any]:
    """Steps per second of each loop over `seconds` each, and the environment's ratio to the engine."""
    import pyspiel

    from arena.research import openspiel

    params = {"variant": variant.name, **dict(variant.options)}
    sides = {
        "engine": _engine(variant, seed),
        "env": _env(variant, seed, wrapped=True),
        "raw_env": _env(variant, seed, wrapped=False),
        "floor": _floor(variant, seed),
        "openspiel": _spiel(pyspiel.load_game(openspiel.GAME_NAME, params), seed),
        "hearts": _spiel(pyspiel.load_game("hearts"), seed),
    }
    timed = alternate(seconds, sides, slice_s)
    rates = {name: rate(t.count, t.seconds) for name, t in timed.items()}
    return {
        "variant": variant.name,
        "options": dict(variant.options),
        "seconds": seconds,
        "loops": {
            name: {
                "deals": t.steps,
                "steps": t.count,
                "seconds": round(t.seconds, 3),
                "steps_per_s": round(r, 1),
            }
            for (name, t), r in zip(timed.items(), rates.values(), strict=True)
        },
        "env_vs_engine": round(rates["env"] / rates["engine"], 3),
        "raw_env_vs_engine": round(rates["raw_env"] / rates["engine"], 3),
        "floor_vs_engine": round(rates["floor"] / rates["engine"], 3),
        "openspiel_vs_engine": round(rates["openspiel"] / rates["engine"], 3),
        "hearts_vs_engine": round(rates["hearts"] / rates["engine"], 3),
    }


def report_text(result: dict[str, Any]) -> str:
    lines = [
        f"random play, {result['variant']}, {result['seconds']} s per loop (steps include chance outcomes)"
    ]
    for name, loop in result["loops"].items():
        lines.append(f"  {name:<10} {loop['steps_per_s']:>12,.0f} steps/s  ({loop['deals']} deals)")
    lines.append(
        f"  env/engine {result['env_vs_engine']:.3f}   raw_env/engine {result['raw_env_vs_engine']:.3f}"
        f"   floor/engine {result['floor_vs_engine']:.3f}"
        f"   openspiel/engine {result['openspiel_vs_engine']:.3f}"
        f"   hearts/engine {result['hearts_vs_engine']:.3f}"
    )
    return "\n".join(lines)
