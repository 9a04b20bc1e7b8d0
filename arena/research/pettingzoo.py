"""A PettingZoo AEC environment of every variant: `env(variant="grosstarock", **options)`.

    from arena.research.pettingzoo import env
    game = env(variant="danish", redeal="auto")
    game.reset(seed=7)                       # the deck of `arena simulate --seed 7`'s first deal
    for agent in game.agent_iter():
        obs, reward, terminated, truncated, info = game.last()
        action = None if terminated or truncated else game.action_space(agent).sample(obs["action_mask"])
        game.step(action)

Agents are ``seat_0`` … ``seat_{n-1}``. An observation is ``{"observation": float32[OBS_SIZE],
"action_mask": int8[NUM_ACTIONS]}``, fresh arrays at every call: the tensor equals
`spaces.encode_observation` of the seat's own view (`arena.engine.observation`, the one the server
sends a bot), kept up to date by `spaces.DealObservations`. Actions are indices of `spaces.ACTIONS`;
one outside them raises a `ValueError`, an illegal one the engine's `IllegalActionError`. Options
beyond the variant's own: ``deals`` (dealer turns in the match, default 1), ``reward`` (``deal``:
each deal's points when it ends, the default; ``match``: the match's final scores, pot shares
included, at its end) and ``render_mode`` (``human`` prints, ``ansi`` returns).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces as gym_spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from arena.engine import DealState, Match, find_variant

from . import spaces
from .loop import DealLoop, OrderChecks

ObsDict = dict[str, npt.NDArray[Any]]


def env(variant: str = "grosstarock", **options: Any) -> AECEnv:
    """`raw_env` with PettingZoo's order checks (`OrderEnforcing`); `raw_env` checks the action's bounds."""
    return OrderEnforcing(raw_env(variant, **options))


class OrderEnforcing(OrderChecks, wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's `OrderEnforcingWrapper`, with the calls of every step (`agent_iter`'s `__next__`,
    `last`, `step`) compiled (`loop.OrderChecks`) and the attributes a training loop reads as
    properties.

    The wrapper PettingZoo ships goes through a chain of Python calls per step (its method,
    `BaseWrapper`'s) and finds attributes with `__getattr__`, which Python calls only after the
    ordinary lookup failed and raised an `AttributeError`: together they cost more than the engine's
    whole step (docs/RESEARCH.md, "Throughput"). Here each is one call into `raw_env`, with the same
    checks: an `AttributeError` or PettingZoo's `AssertionError` before `reset`.
    """

    def __init__(self, env: raw_env) -> None:
        wrappers.OrderEnforcingWrapper.__init__(self, env)

    def _error(self, method: str) -> None:
        if method == "agent_iter":
            EnvLogger.error_agent_iter_before_reset()
        EnvLogger.error_step_before_reset()

    def _warn_finished(self) -> None:
        EnvLogger.warn_step_after_terminated_truncated()

    def _before_reset(self, name: str) -> AttributeError:
        return AttributeError(f"{name} cannot be accessed before reset")

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise self._before_reset("agent_selection")
        return str(self.env.agent_selection)

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise self._before_reset("agents")
        agents: list[str] = self.env.agents
        return agents

    @property
    def rewards(self) -> dict[str, float]:
        if not self._has_reset:
            raise self._before_reset("rewards")
        rewards: dict[str, float] = self.env.rewards
        return rewards

    @property
    def terminations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise self._before_reset("terminations")
        terminations: dict[str, bool] = self.env.terminations
        return terminations

    @property
    def truncations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise self._before_reset("truncations")
        truncations: dict[str, bool] = self.env.truncations
        return truncations

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        if not self._has_reset:
            raise self._before_reset("infos")
        infos: dict[str, dict[str, Any]] = self.env.infos
        return infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        rewards: dict[str, float] = self.env._cumulative_rewards
        return rewards


RENDER_MODES = ("human", "ansi")


class raw_env(DealLoop, AECEnv):  # type: ignore[misc]
    """The environment; its per-step methods (`agent_iter`, `last`, `step`) are `loop.DealLoop`'s."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "grosstarock_arena_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: str = "grosstarock",
        *,
        deals: int = 1,
        reward: str = "deal",
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        if reward not in ("deal", "match"):
            raise ValueError(f"reward={reward!r}: expected 'deal' or 'match'")
        if render_mode not in (None, *RENDER_MODES):
            raise ValueError(f"render_mode={render_mode!r}: expected one of {', '.join(RENDER_MODES)}")
        self.variant = find_variant(variant, {k: str(v) for k, v in options.items()})
        self.deals = deals
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{s}" for s in range(self.variant.seats)]
        self.agent_name_mapping = {a: s for s, a in enumerate(self.possible_agents)}
        low, high = spaces.observation_bounds()
        self._observation_space = gym_spaces.Dict(
            {
                "observation": gym_spaces.Box(low, high, dtype=np.float32),
                "action_mask": gym_spaces.Box(0, 1, (spaces.NUM_ACTIONS,), np.int8),
            }
        )
        self._action_space = gym_spaces.Discrete(spaces.NUM_ACTIONS)
        # The generator of the seeds of unseeded resets, made when first needed: a seeded reset
        # only records its seed (making a generator per reset costs about a deal's Python work).
        self._seed_rng: np.random.Generator | None = None
        self._seed_of_rng: int | None = None
        self.match: Match | None = None

    def observation_space(self, agent: str) -> gym_spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> gym_spaces.Space[Any]:
        return self._action_space

    # ------------------------------------------------------------------ the AEC loop

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match; with `seed`, the decks of the engine's `Match(variant, seed, deals)`."""
        if seed is not None:
            self._seed_rng, self._seed_of_rng = None, seed
        else:
            if self._seed_rng is None:
                self._seed_rng = np.random.default_rng(self._seed_of_rng)
            seed = int(self._seed_rng.integers(2**31))
        self.seed_value = seed
        self.match = Match(self.variant, seed, self.deals)
        self._new_deal(self.match.start_deal())
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewarded = False
        self.agent_selection = self.possible_agents[0]  # kept only if the match is over at once
        self._select()
        if self._rewarded:
            self._accumulate_rewards()

    def _new_deal(self, state: DealState) -> None:
        self.state = state
        self.observations = spaces.deal_observations(state)

    def _select(self) -> None:
        """The agent to act, after finishing the deals that are over: the one just played out, or
        one over as it is dealt (an American petit sec annuls the deal at once, AM-DEAL-2)."""
        assert self.state is not None
        while self.state.turn is None:
            if self._finish_deal():
                return
        self.agent_selection = self.possible_agents[self.state.turn]

    def observe(self, agent: str) -> ObsDict:
        assert self.observations is not None
        return self.observations.observe(self.agent_name_mapping[agent])

    def _was_dead_step(self, action: object) -> None:
        AECEnv._was_dead_step(self, action)

    def _finish_deal(self) -> bool:
        """Score the deal that is over and start the next one; True when the match is over."""
        assert self.state is not None and self.match is not None
        result = self.match.finish_deal(self.state)
        for agent in self.agents:
            self.infos[agent] = {"deal_result": result.to_dict()}
        if self.reward_kind == "deal":
            for seat, delta in enumerate(result.deltas):
                self.rewards[self.possible_agents[seat]] = float(delta)
            self._rewarded = True
        if not self.match.is_over():
            self._new_deal(self.match.start_deal())
            return False
        self.match.final_split()
        if self.reward_kind == "match":
            for seat, score in enumerate(self.match.scores):
                self.rewards[self.possible_agents[seat]] = float(score)
            self._rewarded = True
        self.terminations = dict.fromkeys(self.agents, True)
        return True

    def render(self) -> str | None:
        """The whole table as text (every hand: this is the environment's view, not a seat's)."""
        if self.state is None:
            return None
        text = render_text(self.state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def render_text(state: DealState) -> str:
    lines = [f"{state.variant.name}  phase {state.phase}  trick {state.trick_no}  to act {state.turn}"]
    for seat in range(state.seats):
        cards = " ".join(str(c) for c in sorted(state.hands[seat]))
        lines.append(f"  seat {seat} ({state.tricks_won[seat]} tricks): {cards}")
    if state.trick:
        lines.append("  trick: " + " ".join(f"{s}:{c}" for s, c in state.trick))
    if state.is_terminal():
        lines.append(f"  deltas: {state.result().deltas}")
    return "\n".join(lines)
