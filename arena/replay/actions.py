"""The deal in progress of a replay check, its actions replayed through the engine one by one.

`ActionCheck`, the base of the checker (arena.replay.verify), holds the match rebuilt from the
header's seed and the deal in progress: its `DealState`, and its action lines (kept as read until
the deal's `deal` line comes). It checks each action: its deal and step, that the seat to act
acted, that the engine accepts the action, and for an action the fault policy chose, that it is
the substitute the referee draws (`substitute_action`).

When the `deal` line comes, `_replay_record` replays the deal record's actions, each against its
action line: the hot loop of the line-by-line check. An action line that is exactly the text the
referee writes for its record entry needs no JSON parse; any other takes `_slow_action`, which
reads it and names the first difference. The action lines of a deal whose `deal` line never
comes (a damaged or unfinished log) are checked one by one (`_flush`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, NoReturn

from ..engine import Action, DealState, EngineError, Match
from .cpucheck import CpuCheck
from .log import FAULT_KINDS
from .read import (
    DealLog,
    Decision,
    Problem,
    Replay,
    Stop,
    brief,
    is_fault,
    is_int,
    json_error,
    stop_damage,
    to_json,
)

_ACTION_LINE_KEYS = frozenset({"type", "deal", "step", "seat", "action", "think_ms", "fault"})
# Version 3 on, with a latency allowance in the time control: the seat's round-trip estimate
# (null before it had one) and the part of think_ms not charged to its clock.
_LATENCY_KEYS = frozenset({"rtt_ms", "allowance_ms"})
# Canonical actions met so far, by (type, card, suit, name) as a record spells them: the action, its
# JSON text as the referee writes it, and its number of fields. A few hundred at most.
_KNOWN: dict[tuple[Any, Any, Any, Any], tuple[Action, str, int]] = {}


def substitute_action(seed: int, deal: int, step: int, legal: Sequence[Action]) -> Action:
    """The action the referee plays for a faulting seat under the `substitute` policy."""
    return random.Random(f"{seed}:substitute:{deal}:{step}").choice(legal)


class ActionCheck:
    """The match being replayed and its deal in progress; the check of each action."""

    def __init__(self, replay: Replay, collect: bool) -> None:
        self.replay = replay
        self.collect = collect
        self.match: Match | None = None
        self.seed = 0
        self.policy = "substitute"
        self.state: DealState | None = None  # the deal in progress
        self.deal_log: DealLog | None = None
        # The action lines of the deal in progress, by step: their text and line number.
        self.texts: list[str] = []
        self.numbers: list[int] = []
        self.steps = 0  # actions of the deal in progress verified
        self.done_actions = 0  # actions of the deals verified up to their deal line
        self.faults: list[int] = []  # per seat
        self.cpu: CpuCheck | None = None  # a header with `cpu_clock`: its seats' clocks
        self.ended = False

    def _discrepancy(
        self,
        message: str,
        line: int | None,
        step: int | None = None,
        seat: int | None = None,
        expected: str | None = None,
        deal: int | None = -1,
    ) -> NoReturn:
        """Stop at a disagreement; `deal` -1 means the deal in progress, None no deal."""
        if deal == -1:
            deal = self.deal_log.index if self.deal_log is not None else None
        raise Stop(Problem("discrepancy", message, line, deal, step, seat, expected))

    def _begin_deal(self, state: DealState, deal: int, number: int) -> None:
        """Deal `deal` (from line `number`) is under way from `state`."""
        self.state = state
        self.steps = 0
        self.texts.clear()
        self.numbers.clear()
        log = DealLog(deal, state.dealer, dict(state.pots_start), state.stakes, list(state.deck), number)
        self.deal_log = log
        if self.collect:
            self.replay.deals.append(log)

    def _replay_record(self, number: int, entries: list[Any]) -> None:
        """Replay the deal record's actions, each checked against its action line (the hot loop).

        An entry whose action line is exactly the text the referee writes for it needs no JSON
        parse of that line; any other takes `_slow_action`, which explains the difference.
        """
        state, log = self.state, self.deal_log
        assert state is not None and log is not None
        texts = self.texts
        apply = state.apply
        known = _KNOWN
        head = f'{{"type":"action","deal":{log.index},"step":'
        collect = self.collect
        decisions = log.decisions
        numbers = self.numbers
        step = 0
        cpu_seats = self.cpu.seats if self.cpu is not None else frozenset()
        try:
            for step, (entry, text) in enumerate(zip(entries, texts, strict=False)):
                if type(entry) is not dict:
                    self._slow_action(step, text, entry, number)
                    continue
                try:
                    hit = known.get(
                        (entry.get("type"), entry.get("card"), entry.get("suit"), entry.get("name"))
                    )
                except TypeError:  # a list or an object where a code belongs: the slow path says so
                    hit = None
                if hit is None:
                    hit = self._known_action(entry)
                    if hit is None:  # malformed or not canonical: the slow path explains it
                        self._slow_action(step, text, entry, number)
                        continue
                action, action_json, size = hit
                # Whole numbers once the text matches: see the !r below.
                seat: Any = entry.get("seat")
                think: Any = entry.get("think_ms")
                fault = entry.get("fault")
                # !r: a seat or think time that is not a whole number cannot match the line's text.
                if fault is None:
                    expected = f'{head}{step},"seat":{seat!r},"action":{action_json},"think_ms":{think!r}}}'
                    size += 2
                else:
                    expected = (
                        f'{head}{step},"seat":{seat!r},"action":{action_json},'
                        f'"think_ms":{think!r},"fault":{to_json(fault)}}}'
                    )
                    size += 3
                if (
                    text != expected
                    or len(entry) != size
                    or (fault is not None and not is_fault(fault))
                    or seat in cpu_seats  # its line has a cpu_ms to check
                ):
                    self._slow_action(step, text, entry, number)
                elif fault is not None:
                    self._checked_apply(step, seat, action, think, fault)
                else:
                    if seat != state.turn:
                        self._wrong_seat(step, seat)
                    try:
                        apply(action)
                    except EngineError as exc:
                        self._illegal(step, seat, action, exc)
                    if collect:
                        decisions.append(Decision(step, seat, action, think, None, numbers[step]))
        except Stop:
            self.steps = step
            raise
        done = min(len(entries), len(texts))
        self.steps = done
        if len(entries) > done:
            message = f"the deal record (line {number}) has an action that no action line logged"
            self._discrepancy(message, number, done, expected=f"{done} actions, as the action lines")
        if len(texts) > done:
            message = f"the action line has no entry in the deal record (line {number})"
            self._discrepancy(message, numbers[done], done, expected=f"{done} actions, as the record")

    def _latency_fields(self) -> bool:
        """Whether action lines may carry `rtt_ms` and `allowance_ms` (version 3 on)."""
        version = self.replay.header.get("version")
        return is_int(version) and version >= 3

    def _known_action(self, entry: dict[str, Any]) -> tuple[Action, str, int] | None:
        fields = {k: entry[k] for k in ("type", "card", "suit", "name") if entry.get(k) is not None}
        try:
            action = Action.from_dict(fields)
        except EngineError:
            return None
        canonical = action.to_dict()
        if canonical != fields:  # e.g. a lowercase card code: the slow path compares it
            return None
        hit = (action, to_json(canonical), len(canonical))
        _KNOWN[(entry.get("type"), entry.get("card"), entry.get("suit"), entry.get("name"))] = hit
        return hit

    def _slow_action(
        self, step: int, text: str, entry: object = None, record_line: int | None = None
    ) -> None:
        """Check one action line read as JSON, against the deal record's entry if there is one.

        The actions before it are already checked, so a damaged line stops here without more.
        """
        line_no = self.numbers[step]
        try:
            line = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            stop_damage(line_no, f"is not valid JSON{json_error(exc)}")
        log = self.deal_log
        assert log is not None
        if not isinstance(line, dict) or line.get("type") != "action":
            stop_damage(line_no, "is not an action line")
        known_keys = _ACTION_LINE_KEYS | _LATENCY_KEYS if self._latency_fields() else _ACTION_LINE_KEYS
        if self.cpu is not None:
            known_keys = known_keys | {"cpu_ms"}
        if set(line) - known_keys:
            stop_damage(line_no, f"has unknown field(s) {sorted(set(line) - known_keys)}")
        if line.get("deal") != log.index or line.get("step") != step:
            where = f"deal {line.get('deal')!r} step {line.get('step')!r}"
            stop_damage(line_no, f"is the action of {where}; expected deal {log.index} step {step}")
        seat, think = line.get("seat"), line.get("think_ms")
        fault, fields = line.get("fault"), line.get("action")
        if not (is_int(seat) and is_int(think) and think >= 0 and isinstance(fields, dict)):
            stop_damage(line_no, "needs a whole-number seat, an action object and a think_ms of 0 or more")
        rtt, allowance = line.get("rtt_ms"), line.get("allowance_ms", 0)
        if not (
            (rtt is None or (is_int(rtt) and rtt >= 0))
            and is_int(allowance)
            and 0 <= allowance <= think
            and (rtt is not None or allowance == 0)
        ):
            stop_damage(
                line_no,
                "needs an rtt_ms of 0 or more (or null), and an allowance_ms from 0 to think_ms",
            )
        if fault is not None and not is_fault(fault):
            kinds = ", ".join(FAULT_KINDS)
            stop_damage(line_no, f"has a fault that is not {{kind, detail}} with a kind of {kinds}")
        if record_line is not None:
            mirrored: dict[str, Any] = {"seat": seat, **fields, "think_ms": think}
            if fault is not None:
                mirrored["fault"] = fault
            if entry != mirrored:
                message = f"the deal record (line {record_line}) has {brief(entry)}"
                self._discrepancy(message, line_no, step, seat, f"{brief(mirrored)}, as the action line")
        try:
            action = Action.from_dict(fields)
        except EngineError as exc:
            self._discrepancy(f"malformed action {brief(fields)}: {exc}", line_no, step, seat)
        cpu = line.get("cpu_ms")
        if self.cpu is not None:
            problem = self.cpu.problem(seat, think, cpu, fault)
            if problem is not None:
                self._discrepancy(f"the action line {problem}", line_no, step, seat)
        self._checked_apply(step, seat, action, think, fault, rtt, allowance, cpu)

    def _checked_apply(
        self,
        step: int,
        seat: int,
        action: Action,
        think: int,
        fault: dict[str, str] | None,
        rtt: int | None = None,
        allowance: int = 0,
        cpu: int | None = None,
    ) -> None:
        state, log = self.state, self.deal_log
        assert state is not None and log is not None
        line_no = self.numbers[step]
        if state.is_terminal() or seat != state.turn:
            self._wrong_seat(step, seat)
        legal = list(state.legal_actions())
        try:
            state.apply(action)
        except EngineError as exc:
            self._illegal(step, seat, action, exc)
        if fault is not None:
            kind = fault["kind"]
            if self.policy == "forfeit":
                message = f"{action} was played after a {kind} fault, but under the forfeit policy a fault "
                message += "ends the match"
                self._discrepancy(message, line_no, step, seat, "match_end with termination forfeit")
            substitute = substitute_action(self.seed, log.index, step, legal)
            if action != substitute:
                message = f"{action} was played after a {kind} fault"
                self._discrepancy(message, line_no, step, seat, f"the referee's substitute, {substitute}")
            self.faults[seat] += 1
        self.steps = step + 1
        if self.collect:
            log.decisions.append(Decision(step, seat, action, think, fault, line_no, rtt, allowance, cpu))

    def _wrong_seat(self, step: int, seat: object) -> NoReturn:
        state = self.state
        assert state is not None
        line_no = self.numbers[step]
        if state.is_terminal():
            self._discrepancy(
                f"seat {seat} acted after the deal is over", line_no, step, None, "no further action"
            )
        self._discrepancy(f"seat {seat} acted", line_no, step, None, f"seat {state.turn} to act (G-SEAT-4)")

    def _illegal(self, step: int, seat: int, action: Action, exc: EngineError) -> NoReturn:
        state = self.state
        assert state is not None
        message = str(exc)
        if message.startswith(f"seat {seat}: "):
            message = message[len(f"seat {seat}: ") :]
        legal = ", ".join(str(a) for a in state.legal_actions())  # at most 28: a dealer's discard
        self._discrepancy(message, self.numbers[step], step, seat, f"one of: {legal}")

    def _flush(self, before: int | None = None) -> None:
        """Check one by one the action lines of the deal in progress that wait for their deal line."""
        if self.state is None:
            return
        for step in range(self.steps, len(self.texts)):
            if before is not None and self.numbers[step] >= before:
                break
            self._slow_action(step, self.texts[step])
