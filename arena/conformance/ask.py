"""`arena replay ask`: put a bot back into a recorded position and compare its answer.

The position is rebuilt by replaying the deal up to the decision (`Replay.position`); the bot
process is launched as `arena play` launches bots and asked over the real protocol (a server on
a free port, one `DecisionRequest` with the seat's `observation()`, the legal actions, and the
time the seat had then, or no clock) by a `PositionRunner`, as the conformance cases are.

`ask_suite` asks a bot every position of a position suite (`arena.replay.suite`, written by
`arena replay analyze --suite`) the same way and judges each answer by the search's values there.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ..engine import Action, DealState, observation
from ..referee.position import PositionRunner
from ..referee.seat import TimeControl
from ..replay.read import Decision, Replay
from ..replay.suite import SuitePosition
from ..replay.timeline import Clock, action_text, card_text, clocks, hand_text
from ..server.local import ask


@dataclass
class Asked:
    """The recorded decision and what the bot answered now."""

    deal: int
    step: int
    seat: int
    state: DealState
    recorded: Decision
    clock: Clock | None  # None: asked without a clock
    outcome: str = ""  # answered, illegal, timeout, gone, skipped (arena.referee.position)
    action: str = ""  # the bot's legal answer, as text ("play SK")
    think_ms: int = 0
    detail: str = ""
    rejected: list[str] | None = None  # the bot's invalid answers, with the reason
    bot_output: str = ""  # the end of the bot's output, when it gave no answer

    @property
    def same(self) -> bool:
        return self.outcome == "answered" and self.action == str(self.recorded.action)

    def to_dict(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "step": self.step,
            "seat": self.seat,
            "recorded": {
                "action": str(self.recorded.action),
                "think_ms": self.recorded.think_ms,
                "fault": self.recorded.fault,
            },
            "clock": None
            if self.clock is None
            else {"limit_ms": self.clock.limit_ms, "bank_ms": self.clock.bank_ms},
            "bot": {
                "outcome": self.outcome,
                "action": self.action or None,
                "think_ms": self.think_ms,
                "detail": self.detail,
                "rejected": self.rejected or [],
            },
            "same": self.same,
        }


def ask_bot(replay: Replay, deal: int, step: int, command: str, clock: bool = True) -> Asked:
    """Ask the bot `command` about decision `step` of `deal`, over the real protocol."""
    variant = replay.variant
    assert variant is not None
    state, recorded = replay.position(deal, step)
    seat = recorded.seat
    timing = clocks(replay)[deal, step] if clock else None
    per, _, increment = replay.time_control
    control = None if timing is None else TimeControl(per, timing.bank_ms, increment)
    names = [str(n) for n in replay.header.get("seats", [])]
    runner = PositionRunner(variant, seat, [state], control, seat_names=names)
    asked = Asked(deal, step, seat, state, recorded, timing)
    with tempfile.TemporaryDirectory(prefix="arena-ask-") as scratch:
        log_path = Path(scratch) / "bot.log"
        [result] = trio.run(partial(ask, command, runner, log_path=log_path))
        if result.outcome != "answered" and log_path.exists():
            asked.bot_output = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    asked.outcome = result.outcome
    asked.action = str(result.action) if result.action is not None else ""
    asked.think_ms = result.think_ms
    asked.detail = result.detail
    asked.rejected = [
        f"{_wire_text(a.action)}: {a.reason}" for a in result.answers if a.matched and not a.legal
    ]
    return asked


def _wire_text(action: Any) -> str:
    return " ".join(p for p in (action.type, action.card, action.name, action.suit) if p) or "(empty)"


def describe(replay: Replay, asked: Asked, command: str) -> list[str]:
    """The report of `arena replay ask`: the position as the seat saw it, then both answers."""
    view = observation(asked.state, asked.seat)
    lines = [
        f"deal {asked.deal}, decision {asked.step}: seat {asked.seat} to act ({view['phase']}"
        + (f", trick {view['trick_number']})" if view["phase"] in ("play", "announce") else ")"),
        f"  hand      {hand_text(view['hand'])}",
    ]
    if view.get("trick"):
        lines.append(
            "  trick     " + "  ".join(f"seat {s} {card_text(c)}" for s, c in view["trick"]["cards"])
        )
    offered = [action_text(Action.parse(a)) for a in view.get("legal_actions", [])]
    lines.append(f"  offered   ({len(offered)}) {', '.join(offered)}")
    per = replay.time_control[0]
    if asked.clock is not None:
        lines.append(
            f"  clock     {asked.clock.limit_ms} ms ({per} + bank {asked.clock.bank_ms}), as recorded"
        )
    else:
        lines.append("  clock     none (--no-clock)")
    recorded = asked.recorded
    fault = f" · {recorded.fault['kind']} fault: the referee chose it" if recorded.fault else ""
    lines.append(f"  recorded  {action_text(recorded.action):<24} {recorded.think_ms:>6} ms{fault}")
    if asked.outcome == "answered":
        verdict = "the same" if asked.same else "different"
        bot_action = action_text(Action.parse(asked.action))
        lines.append(f"  bot       {bot_action:<24} {asked.think_ms:>6} ms · {verdict}")
    else:
        lines.append(
            f"  bot       no answer: {asked.outcome}" + (f" ({asked.detail})" if asked.detail else "")
        )
    for rejected in asked.rejected or []:
        lines.append(f"            rejected: {rejected}")
    lines.append(f"  bot command: {command}")
    return lines


# --------------------------------------------------------------------------- position suites


@dataclass
class SuiteAnswer:
    """A suite position and the bot's answer to it now."""

    position: SuitePosition
    outcome: str = ""  # answered, illegal, timeout, gone, skipped (arena.referee.position)
    action: str = ""
    think_ms: int = 0
    detail: str = ""
    good: bool = False  # answered with an action the search values within the tolerance of its best

    @property
    def loss(self) -> float:
        return self.position.loss_of(self.action) if self.outcome == "answered" else math.inf

    def to_dict(self) -> dict[str, Any]:
        p = self.position
        return {
            "id": p.id,
            "seat": p.seat,
            "recorded": {"action": p.played, "loss": p.loss},
            "best": p.best,
            "bot": {"outcome": self.outcome, "action": self.action or None, "think_ms": self.think_ms},
            "loss": None if math.isinf(self.loss) else self.loss,
            "good": self.good,
            "detail": self.detail,
        }


def ask_suite(
    positions: Sequence[SuitePosition],
    command: str,
    *,
    tolerance: float = 0.0,
    per_decision_ms: int | None = None,
    log_dir: Path | None = None,
) -> list[SuiteAnswer]:
    """Ask the bot `command` every position, over the real protocol: one bot process for the
    positions of each variant (with its options) and seat, asked one after another; without
    `per_decision_ms`, with no clock. The answers in the positions' order."""
    groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for index, position in enumerate(positions):
        variant = position.state.variant
        options = json.dumps(dict(variant.options), sort_keys=True)
        groups[variant.name, options, position.seat].append(index)
    answers = [SuiteAnswer(p) for p in positions]
    control = None if per_decision_ms is None else TimeControl(per_decision_ms, 0, 0)
    with tempfile.TemporaryDirectory(prefix="arena-suite-") as scratch:
        logs = log_dir or Path(scratch)
        for n, ((_, _, seat), indices) in enumerate(sorted(groups.items())):
            variant = positions[indices[0]].state.variant
            runner = PositionRunner(variant, seat, [positions[i].state for i in indices], control)
            log_path = logs / f"bot-{n}.log"
            results = trio.run(partial(ask, command, runner, log_path=log_path))
            for index, result in zip(indices, results, strict=True):
                answer = answers[index]
                answer.outcome = result.outcome
                answer.action = str(result.action) if result.action is not None else ""
                answer.think_ms = result.think_ms
                answer.detail = result.detail
                answer.good = answer.outcome == "answered" and answer.position.good(answer.action, tolerance)
    return answers
