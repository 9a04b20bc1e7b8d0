"""A PettingZoo AEC environment of every variant: `env(variant="grosstarock", **options)`.

    from arena.research.pettingzoo import env
    game = env(variant="danish", redeal="auto")
    game.reset(seed=7)                       # the deck of `arena simulate --seed 7`'s first deal
    for agent in game.agent_iter():
        obs, reward, terminated, truncated, info = game.last()
        action = None if terminated or truncated else game.action_space(agent).sample(obs["action_mask"])
        game.step(action)

Agents are ``seat_0`` … ``seat_{n-1}``. An observation is ``{"observation": float32[OBS_SIZE],
"action_mask": int8[NUM_ACTIONS]}``: `spaces.encode_state`, equal to `spaces.encode_observation`
of the seat's own view (`arena.engine.observation`, the one the server sends a bot). Actions are indices of
`spaces.ACTIONS`. Options beyond the variant's own: ``deals`` (dealer turns in the match, default 1),
``reward`` (``deal``: each deal's points when it ends, the default; ``match``: the match's final
scores, pot shares included, at its end) and ``render_mode`` (``human`` prints, ``ansi`` returns).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces as gym_spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from arena.engine import DealState, Match, find_variant

from . import spaces

ObsDict = dict[str, npt.NDArray[Any]]


def env(variant: str = "grosstarock", **options: Any) -> AECEnv:
    """`raw_env` with PettingZoo's usual checks: an illegal action index raises, the order is enforced."""
    wrapped: AECEnv = raw_env(variant, **options)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


RENDER_MODES = ("human", "ansi")


class raw_env(AECEnv):  # type: ignore[misc]
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
        self._seed_rng = np.random.default_rng()
        self.match: Match | None = None
        self.state: DealState | None = None
        self.encoder: spaces.StateEncoder | None = None

    def observation_space(self, agent: str) -> gym_spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> gym_spaces.Space[Any]:
        return self._action_space

    # ------------------------------------------------------------------ the AEC loop

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match; with `seed`, the decks of the engine's `Match(variant, seed, deals)`."""
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        else:
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
        self._select()

    def _new_deal(self, state: DealState) -> None:
        self.state = state
        self.encoder = spaces.StateEncoder(state)

    def _select(self) -> None:
        assert self.state is not None
        seat = self.state.current_player
        if seat is not None:
            self.agent_selection = self.possible_agents[seat]

    def observe(self, agent: str) -> ObsDict:
        assert self.state is not None and self.encoder is not None
        seat = self.agent_name_mapping[agent]
        state = self.state
        mask = self.encoder.mask() if state.current_player == seat else np.zeros(spaces.NUM_ACTIONS, np.int8)
        return {"observation": self.encoder.encode(seat), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.state is not None and self.match is not None and action is not None
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.state.apply(spaces.ACTIONS[int(action)])
        if self.state.is_terminal():
            self._finish_deal()
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish_deal(self) -> None:
        assert self.state is not None and self.match is not None
        result = self.match.finish_deal(self.state)
        for agent in self.agents:
            self.infos[agent] = {"deal_result": result.to_dict()}
        if self.reward_kind == "deal":
            for seat, delta in enumerate(result.deltas):
                self.rewards[self.possible_agents[seat]] = float(delta)
        if not self.match.is_over():
            self._new_deal(self.match.start_deal())
            self._select()
            return
        self.match.final_split()
        if self.reward_kind == "match":
            for seat, score in enumerate(self.match.scores):
                self.rewards[self.possible_agents[seat]] = float(score)
        self.terminations = dict.fromkeys(self.agents, True)

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
