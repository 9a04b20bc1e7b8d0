"""Play on from a recorded position: a new match that continues a replay from one of its decisions.

`PlayOnRunner` is the referee's own `MatchRunner` with one difference: the decisions recorded
before the chosen one are taken from the recording instead of being asked for. Every deal before
the chosen deal and the chosen deal's first `step` decisions are played again through the same
`_play` loop (the same `Match`, seed, dealer rotation, pots and scores), recorded in the new replay
with the recording's think times and faults, and broadcast to the seats as public events; from
the chosen decision on, the seats are asked as in any match. So the new replay verifies like any
other (`arena replay verify`: the header's seed deals the same decks), and the state at the
first decision asked is the recording's `Replay.position(deal, step)`, which `start_state` keeps
(a copy) for a check.

The match ends with the chosen deal (its header's `deals` counts the dealer turns up to it); a
`danish` redeal of that deal plays on into the next deal, as the rules say.
"""

from __future__ import annotations

import copy
from collections import deque
from pathlib import Path

from ..engine import DealState, Match
from ..protocol import ViewEncoder
from ..referee.runner import Decided, MatchConfig, MatchRunner
from ..referee.seat import Fault, Seat, TimeControl
from ..replay.log import FaultKind
from ..replay.read import Decision, Replay


class PlayOnError(ValueError):
    """The position cannot be played on from: one line saying why."""


def check_position(replay: Replay, deal: int, step: int) -> None:
    """PlayOnError unless `replay` holds a decision `step` of deal `deal` to play on from."""
    if replay.variant is None or not replay.ok:
        raise PlayOnError(f"the replay {replay.name} does not verify: {replay.problem}")
    if not 0 <= deal < len(replay.deals):
        raise PlayOnError(f"deal {deal}: the replay has deals 0 to {len(replay.deals) - 1}")
    decisions = replay.deals[deal].decisions
    if not 0 <= step < len(decisions):
        raise PlayOnError(f"deal {deal} has decisions 0 to {len(decisions) - 1}, not {step}")


def turns_before(replay: Replay, deal: int) -> int:
    """Dealer turns completed before deal `deal` (a `danish` redeal is no turn)."""
    assert replay.variant is not None
    match = Match(replay.variant, seed=replay.header["seed"], deals=len(replay.deals) + 1)
    for index in range(deal):
        state = match.start_deal()
        for decision in replay.deals[index].decisions:
            state.apply(decision.action)
        match.finish_deal(state)
    return match.turns_done


def play_on_config(
    replay: Replay,
    deal: int,
    seat_names: tuple[str, ...],
    time_control: TimeControl,
    max_invalid: int,
    start_timeout_s: float = MatchConfig.start_timeout_s,
) -> MatchConfig:
    """The new match's settings: the recording's variant and seed, up to the chosen deal."""
    check_position(replay, deal, 0)
    assert replay.variant is not None
    return MatchConfig(
        variant=replay.variant,
        deals=turns_before(replay, deal) + 1,
        seed=replay.header["seed"],
        seat_names=seat_names,
        time_control=time_control,
        max_invalid=max_invalid,
        start_timeout_s=start_timeout_s,
    )


class PlayOnRunner(MatchRunner):
    """A match that replays a recording's decisions up to (not including) decision `step` of deal
    `deal`, then asks its seats; see the module's docstring."""

    def __init__(
        self, match_id: str, config: MatchConfig, replay_dir: Path, replay: Replay, deal: int, step: int
    ) -> None:
        check_position(replay, deal, step)
        super().__init__(match_id, config, replay_dir)
        self.source = replay.header.get("match_id", "")
        self.fork = (deal, step)
        self._recorded: deque[tuple[int, Decision]] = deque(
            (index, decision)
            for index in range(deal + 1)
            for decision in replay.deals[index].decisions[: step if index == deal else None]
        )
        self.start_state: DealState | None = None  # a copy of the state at the first decision asked

    async def _decide(
        self, seat: Seat, state: DealState, views: ViewEncoder, deal: int, step: int
    ) -> Decided:
        if self._recorded:
            recorded_deal, decision = self._recorded.popleft()
            if (recorded_deal, decision.step, decision.seat) != (deal, step, seat.index):
                raise RuntimeError(  # the same seed and actions deal the same: a bug if not
                    f"the recording's deal {recorded_deal} step {decision.step} (seat {decision.seat}) "
                    f"is not this match's deal {deal} step {step} (seat {seat.index})"
                )
            fault = None
            if decision.fault is not None:
                fault = Fault(seat.index, FaultKind(decision.fault["kind"]), decision.fault.get("detail", ""))
                seat.faults.append(fault)
            return Decided(decision.action, decision.think_ms, fault, decision.rtt_ms, decision.allowance_ms)
        if self.start_state is None:
            self.start_state = copy.deepcopy(state, {id(state.variant): state.variant})
        return await super()._decide(seat, state, views, deal, step)
