"""A replay log as `arena replay verify` reads it: what a check finds, and reading the bytes.

The data types the check fills (arena.replay.verify) and the other tools read: a `Replay`, with its
deals (`DealLog`), their decisions (`Decision`), the connection and protocol fault lines (`Note`),
the bots' accepted Hellos (`BotHello`), and the `Problem` that ends the check; `ReplayReadError`
for a file that cannot be read at all.
Then what the three parts of the check share (verify.py, actions.py, textcheck.py): the referee's
vocabulary, the decoding of a log's bytes into text, how a check stops at a problem (`Stop`), and
a few tests and spellings of JSON values. The format is in replays/FORMAT.md, "Replay logs".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeGuard

from ..engine import Action, Card, DealState, Variant
from .log import FAULT_KINDS

# --------------------------------------------------------------------------- what a check finds


@dataclass(frozen=True)
class Problem:
    """Why a replay does not hold from some point on."""

    kind: str  # "damage", "discrepancy" or "unsupported" (a header this arena cannot read)
    message: str
    line: int | None = None
    deal: int | None = None
    step: int | None = None
    seat: int | None = None
    expected: str | None = None

    def __str__(self) -> str:
        where = []
        if self.deal is not None:
            where.append(f"deal {self.deal}")
        if self.step is not None:
            where.append(f"step {self.step}")
        if self.seat is not None:
            where.append(f"seat {self.seat}")
        text = ", ".join(where) + ": " + self.message if where else self.message
        if self.expected is not None:
            text += f"; expected {self.expected}"
        if self.line is not None and not re.search(rf"\bline {self.line}\b", text):
            text += f" (line {self.line})"
        return text


@dataclass(frozen=True)
class Decision:
    """One recorded decision: who acted, what, how long it took, and the fault if the policy chose."""

    step: int
    seat: int
    action: Action
    think_ms: int
    fault: dict[str, str] | None
    line: int
    rtt_ms: int | None = None  # the seat's round-trip estimate, with a latency allowance (version 3)
    allowance_ms: int = 0  # the part of think_ms not charged to the seat's clock
    cpu_ms: int | None = None  # the CPU charged, for a seat on a CPU clock (header `cpu_clock`)


@dataclass(frozen=True)
class Note:
    """A `connection` or protocol `fault` line, placed in the match: before `step` of `deal`."""

    deal: int
    step: int
    seat: int
    type: str  # "connection" or "fault"
    event: str  # a connection event, or the fault kind
    detail: str
    line: int


@dataclass(frozen=True)
class BotHello:
    """A `hello` line (version 2 on): what a seat's bot said in a Hello the referee accepted, placed
    in the match as a `Note` is: before `step` of `deal`."""

    deal: int
    step: int
    seat: int
    bot_name: str
    bot_version: str
    protocol_version: int  # as the bot sent it: 0 is unset, which the referee takes for 1
    line: int

    @property
    def bot(self) -> str:
        """The bot as it named itself, e.g. ``heuristic 1.2``."""
        name = self.bot_name or "(no name)"
        return f"{name} {self.bot_version}" if self.bot_version else f"{name} (no version)"


@dataclass
class DealLog:
    index: int
    dealer: int
    pots: dict[str, int]
    stakes: bool
    deck: list[Card]
    line: int
    decisions: list[Decision] = field(default_factory=list)
    result: dict[str, Any] | None = None  # the verified result, once the deal line is read
    scores: list[int] | None = None  # running match scores after the deal


@dataclass
class Replay:
    """What `verify_replay` read and checked; `problem` is None when everything holds."""

    name: str
    partial_file: bool  # a `.jsonl.part`: the match had not ended when it was read
    header: dict[str, Any] = field(default_factory=dict)
    variant: Variant | None = None
    deals: list[DealLog] = field(default_factory=list)  # filled when collecting
    notes: list[Note] = field(default_factory=list)  # filled when collecting
    hellos: list[BotHello] = field(default_factory=list)  # always filled: a few lines a match
    match_end: dict[str, Any] | None = None
    problem: Problem | None = None
    actions: int = 0  # actions verified
    deals_done: int = 0  # deals verified up to their deal line
    open_steps: int = 0  # actions verified in a deal without its deal line
    cut_tail: bool = False  # a `.part` file whose last line was cut off (ignored)

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def complete(self) -> bool:
        return self.match_end is not None and self.problem is None

    @property
    def seats(self) -> int:
        return self.variant.seats if self.variant is not None else 0

    @property
    def latency_allowance_ms(self) -> int:
        """The time control's latency allowance (0: none, as in every log before version 3)."""
        value = self.header.get("time_control", {}).get("latency_allowance_ms", 0)
        return value if is_int(value) and value > 0 else 0

    @property
    def time_control(self) -> tuple[int, int, int]:
        tc = self.header.get("time_control", {})
        return (tc.get("per_decision_ms", 0), tc.get("bank_ms", 0), tc.get("increment_ms", 0))

    def first_hellos(self) -> list[BotHello | None]:
        """Each seat's first accepted Hello (None: none in the log, or a version 1 log)."""
        first: list[BotHello | None] = [None] * self.seats
        for hello in reversed(self.hellos):
            first[hello.seat] = hello
        return first

    def bot_changes(self) -> list[tuple[BotHello, BotHello]]:
        """(Hello, the seat's Hello before it) for each Hello that names another bot or version."""
        last: dict[int, BotHello] = {}
        changes = []
        for hello in self.hellos:
            before = last.get(hello.seat)
            said = (hello.bot_name, hello.bot_version)
            if before is not None and (before.bot_name, before.bot_version) != said:
                changes.append((hello, before))
            last[hello.seat] = hello
        return changes

    def deal(self, index: int) -> DealLog:
        for deal in self.deals:
            if deal.index == index:
                return deal
        raise KeyError(index)

    def position(self, deal: int, step: int) -> tuple[DealState, Decision]:
        """Deal `deal`'s state before decision `step`, and that recorded decision (needs `collect`)."""
        assert self.variant is not None
        log = self.deal(deal)
        state = DealState(self.variant, log.dealer, log.deck, pots=log.pots, stakes=log.stakes)
        for decision in log.decisions[:step]:
            state.apply(decision.action)
        return state, log.decisions[step]

    def summary(self) -> str:
        """What holds: e.g. ``deals 0–1 complete, deal 2 steps 0–16 (191 actions)``."""
        parts = []
        if self.deals_done:
            last = self.deals_done - 1
            parts.append(f"deal{'s 0–' if last else ' '}{last} complete")
        if self.open_steps:
            parts.append(f"deal {self.deals_done} steps 0–{self.open_steps - 1}")
        if not parts:
            parts.append("no deal")
        return f"{', '.join(parts)} ({self.actions} actions)"


class ReplayReadError(Exception):
    """The file cannot be read at all (missing, a directory, no permission)."""


class Stop(Exception):
    """The check stops at `problem`: everything before it holds."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def stop_damage(number: int, reason: str) -> NoReturn:
    raise Stop(Problem("damage", f"line {number} {reason}; nothing from it on is read", number))


# --------------------------------------------------------------------------- reading


def decode(data: bytes) -> tuple[str, int | None]:
    """The text up to the first line that is not UTF-8, and that line's index (or None)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        return data[:start].decode("utf-8"), data.count(b"\n", 0, start)


# --------------------------------------------------------------------------- JSON values


def is_int(value: object) -> TypeGuard[int]:
    """A whole number as JSON reads it (not a bool)."""
    return type(value) is int


def is_fault(value: object) -> bool:
    """An action's `fault` as the referee writes it: `{kind, detail}` with a known kind."""
    return (
        isinstance(value, dict)
        and set(value) == {"kind", "detail"}
        and value["kind"] in FAULT_KINDS
        and isinstance(value["detail"], str)
    )


def json_error(exc: Exception) -> str:
    """Where a line is not valid JSON, to follow "is not valid JSON"."""
    if isinstance(exc, json.JSONDecodeError):  # json's message may end in "at" ("…string starting at")
        return f" ({exc.msg}{'' if exc.msg.endswith(' at') else ' at'} column {exc.colno})"
    return " (nested too deeply)"


def to_json(value: object) -> str:
    """`value` as the referee writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def brief(value: object, limit: int = 160) -> str:
    """`value` as JSON, cut to `limit` characters, for a message."""
    text = to_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
