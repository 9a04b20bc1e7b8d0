"""The per-step methods of the PettingZoo environment (`pettingzoo.raw_env`), compiled with mypyc.

A training loop calls `agent_iter`'s `__next__`, `last()` and `step()` at every decision; as
Python functions their frames and attribute lookups cost more than the engine's own step
(docs/RESEARCH.md, "Throughput"). `DealLoop` holds them and the attributes they read, and
`raw_env` derives from it and from PettingZoo's `AECEnv`: the same attributes and methods a
PettingZoo environment has, run as C. What happens once per deal (scoring it, starting the
next) stays in `raw_env`, in Python.

Plain Python without numpy or PettingZoo: mypyc compiles it with the engine (setup.py), in a
build that has neither.
"""

from __future__ import annotations

import operator
from typing import Any

from arena.engine import DealState

from .layout import ACTIONS, NUM_ACTIONS
from .tensors import DealObservations

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # an install without mypy: the decorator matters only to mypyc, at compile time

    def mypyc_attr(*args: object, **kwargs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


@mypyc_attr(allow_interpreted_subclasses=True)
class DealLoop:
    """The AEC loop's state and per-step methods; `raw_env` fills in the rest (`_select`, the
    deal's end, `render`, `_was_dead_step` from `AECEnv`)."""

    possible_agents: list[str]
    agents: list[str]
    agent_selection: str
    agent_name_mapping: dict[str, int]
    rewards: dict[str, float]
    _cumulative_rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]

    def __init__(self) -> None:
        self.state: DealState | None = None
        self.observations: DealObservations | None = None
        self.render_mode: str | None = None
        self._rewarded = False  # the last step gave rewards: the next one clears them

    def agent_iter(self, max_iter: int = 2**63) -> AgentIterator:
        """The agent to act, while there are agents (PettingZoo's `AECEnv.agent_iter`)."""
        return AgentIterator(self, max_iter, None)

    def last(self, observe: bool = True) -> tuple[dict[str, Any] | None, float, bool, bool, dict[str, Any]]:
        """PettingZoo's `AECEnv.last`: the observation of the agent to act, its cumulative reward,
        termination, truncation and info."""
        agent = self.agent_selection
        observations = self.observations
        assert observations is not None
        return (
            observations.observe(self.agent_name_mapping[agent]) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: object) -> None:
        """Apply the agent's action (an index of `layout.ACTIONS`); `None` for a finished agent."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        index = action if type(action) is int else _index(action)
        if not 0 <= index < NUM_ACTIONS:
            raise ValueError(f"action {index} is outside the action space (0…{NUM_ACTIONS - 1})")
        state = self.state
        assert state is not None
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:  # rewards are rare (the end of a deal): cleared in place, only after one
            rewards = self.rewards
            for name in rewards:
                rewards[name] = 0.0
            self._rewarded = False
        state.apply(ACTIONS[index])
        turn = state.turn
        if turn is None:
            self._select()
        else:
            self.agent_selection = self.possible_agents[turn]
        if self._rewarded:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _accumulate_rewards(self) -> None:
        """PettingZoo's `AECEnv._accumulate_rewards`: the rewards added to the cumulative ones."""
        cumulative = self._cumulative_rewards
        for agent, reward in self.rewards.items():
            cumulative[agent] += reward

    # What `raw_env` defines (in Python, or PettingZoo's).

    def _select(self) -> None:
        raise NotImplementedError

    def _was_dead_step(self, action: object) -> None:
        raise NotImplementedError

    def render(self) -> str | None:
        raise NotImplementedError


def _index(action: object) -> int:
    """An action given as another integer type (numpy's) as an int; a `ValueError` if it is none."""
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"action {action!r} is not an index of the action space") from None


@mypyc_attr(allow_interpreted_subclasses=True)
class OrderChecks:
    """The per-step methods of PettingZoo's order checks (its `OrderEnforcingWrapper`) around a
    `DealLoop`, with the same checks; `pettingzoo.OrderEnforcing` derives from it and from the
    wrapper, and raises PettingZoo's errors (`_error`, `_warn_finished`)."""

    env: DealLoop
    _has_reset: bool
    _has_updated: bool

    def agent_iter(self, max_iter: int = 2**63) -> AgentIterator:
        if not self._has_reset:
            self._error("agent_iter")
        return AgentIterator(self.env, max_iter, self)

    def last(self, observe: bool = True) -> tuple[dict[str, Any] | None, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: object) -> None:
        if not self._has_reset:
            self._error("step")
        self._has_updated = True
        if not self.env.agents:
            self._warn_finished()
        else:
            self.env.step(action)

    def _error(self, method: str) -> None:
        """Raise PettingZoo's error for `method` called before `reset`."""
        raise NotImplementedError

    def _warn_finished(self) -> None:
        """PettingZoo's warning of a `step` after every agent finished."""
        raise NotImplementedError


class AgentIterator:
    """`agent_iter()`'s iterator: the agent to act, while there are agents. With `wrapper` (PettingZoo's
    order checks), it asserts a `step` or `reset` since the last one, as PettingZoo's
    `AECOrderEnforcingIterator` does."""

    def __init__(self, loop: DealLoop, max_iter: int, wrapper: OrderChecks | None) -> None:
        self.loop = loop
        self.iters_til_term = max_iter
        self.wrapper = wrapper

    def __iter__(self) -> AgentIterator:
        return self

    def __next__(self) -> str:
        loop = self.loop
        if not loop.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        wrapper = self.wrapper
        if wrapper is not None:
            assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
            wrapper._has_updated = False
        return loop.agent_selection
