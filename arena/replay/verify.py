"""`arena replay verify`: every deal of a replay log re-run through the engine, in one pass.

What is checked (the log format is in replays/FORMAT.md, "Replay logs"):

* the header: the format, a version this arena reads, a known variant with valid options, one
  name per seat, the time control and the fault policy;
* each `deal_start` against a `Match` rebuilt from the header's seed: deal index, dealer, pots,
  stakes and the shuffled deck;
* each action: its deal and step, that the seat to act acted, that the action is legal, and for
  an action the fault policy chose, that it is the substitute the referee draws;
* each `deal` line: its record agrees with the `deal_start` and `action` lines, the replayed
  result equals the recorded one, and so do the running scores;
* the `match_end` line: termination, forfeiting seat, pot split, final scores, fault counts.

The first problem ends the check, so everything before it holds. A problem is *damage* (the
file cannot be read from that line on: invalid JSON, a line of the wrong shape, a missing line)
or a *discrepancy* (the file reads, but the engine disagrees). A `.jsonl.part` file is the log
of a match that has not ended (or crashed): it may stop anywhere, and its last line may be cut.

Speed: a replay is read once, and a deal the referee wrote is checked as text. The engine
replays the deal record's actions (looked up by their text in a table of the few hundred there
are), then the `deal_start` line, the action lines and the `deal` line must each be exactly the
text the referee writes for what the engine did, with the think times the record gives; only the
result is parsed as JSON. A completed match's `match_end` line is compared as text too. Any
difference (a fault, a connection line inside the deal, a changed or reformatted line) sends the
deal or the line to the line-by-line check, which reads every line as JSON and names the first
problem: the text check only ever accepts what that check accepts (the tests compare the two).
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, NoReturn, TypeGuard

from ..engine import (
    CARDS,
    Action,
    Card,
    ConfigError,
    DealState,
    EngineError,
    Match,
    Variant,
    find_variant,
)
from ..files import InputFileError, read_input
from .log import REPLAY_FORMAT, REPLAY_VERSION

# The referee's vocabulary (arena.referee.runner), kept here so that reading a replay needs no gRPC.
FAULT_KINDS = ("illegal", "timeout", "disconnect", "crash", "protocol")
CONNECTION_EVENTS = ("disconnected", "reconnected", "crashed")
FAULT_POLICIES = ("substitute", "forfeit")
TERMINATIONS = ("completed", "forfeit")

_ACTION_PREFIX = '{"type":"action",'
_ACTION_LINE_KEYS = frozenset({"type", "deal", "step", "seat", "action", "think_ms", "fault"})
# Canonical actions met so far, by (type, card, suit, name) as a record spells them: the action, its
# JSON text as the referee writes it, and its number of fields. A few hundred at most.
_KNOWN: dict[tuple[Any, Any, Any, Any], tuple[Action, str, int]] = {}
_RESULT_ORDER = ("card_points", "deltas", "pots", "annulled", "tricks_won", "ledger")

# The text check of whole deals (`_Checker._fast_deal`). A record entry is
# `{"seat":S,<action fields>,"think_ms":T}`; its *key* is the text between `{"seat":` and
# `,"think_ms":`. Per canonical key (seats times actions: hundreds in practice): the action, the
# (seat, action) pair the engine's history holds, and the action line's text from the seat to the
# think time. Only canonical keys of seats 0-3 are kept, and at most 8192 of them.
_DEAL_START_PREFIX = '{"type":"deal_start",'
_MATCH_END_PREFIX = '{"type":"match_end",'
_THINK = ',"think_ms":'
_NEXT_ENTRY = '},{"seat":'
_ACTIONS: dict[str, Action] = {}
_PAIRS: dict[str, tuple[int, Action]] = {}
_LINE_MIDDLES: dict[str, str] = {}
_STEPS: list[str] = []  # '"step":N,"seat":' by step
_CODES = tuple(str(card) for card in CARDS)
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode  # as the referee writes
# Variants by header (name, options): building one is a good part of reading a short file.
_VARIANTS: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Variant, str]] = {}
_TEXT_CHECK = True  # False: every line is read as JSON (the tests compare both ways)


def substitute_action(seed: int, deal: int, step: int, legal: Sequence[Action]) -> Action:
    """The action the referee plays for a faulting seat under the `substitute` policy."""
    return random.Random(f"{seed}:substitute:{deal}:{step}").choice(legal)


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
        if self.line is not None and not text.startswith("line "):
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
    def time_control(self) -> tuple[int, int, int]:
        tc = self.header.get("time_control", {})
        return (tc.get("per_decision_ms", 0), tc.get("bank_ms", 0), tc.get("increment_ms", 0))

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


class _Stop(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


# --------------------------------------------------------------------------- entry points


def read_replay_bytes(path: Path) -> bytes:
    try:
        return read_input(path, "a replay log")
    except InputFileError as exc:
        raise ReplayReadError(str(exc)) from None


def verify_replay(path: Path, collect: bool = False) -> Replay:
    """Check the replay log at `path`; with `collect`, keep its deals and decisions for display."""
    return verify_bytes(read_replay_bytes(path), str(path), collect)


def verify_bytes(data: bytes, name: str, collect: bool = False) -> Replay:
    checker = _Checker(Replay(name, name.endswith(".part")), collect)
    checker.run(data)
    return checker.replay


# --------------------------------------------------------------------------- the check


class _Checker:
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
        self.ended = False
        self.variant_text = ""  # '"variant":…,"options":…,"seats":N', as a deal record spells them
        # The deal in progress as the `deal_start` line spells it, set when that line was read as
        # text: its pots, stakes and deck, for the text of its `deal` line. Empty otherwise.
        self.start_texts: tuple[str, str, str] = ("", "", "")

    # ---------------------------------------------------------------- reading lines

    def run(self, data: bytes) -> None:
        replay = self.replay
        try:
            text, bad_utf8 = _decode(data)
            if not text and bad_utf8 is None:
                raise _Stop(Problem("damage", "the file is empty: a replay log starts with its header line"))
            texts, numbers = self.texts, self.numbers
            as_text = _TEXT_CHECK
            whole_deals = as_text and not self.collect  # collecting keeps every decision: line by line
            # Lines are cut out one at a time: the action lines of a deal checked as text never are.
            number = start = 0  # lines read, and where the next one starts in `text`
            while (end := text.find("\n", start)) >= 0:
                line = text[start:end]
                number += 1
                start = end + 1
                if line.startswith(_ACTION_PREFIX) and self.state is not None:
                    texts.append(line)
                    numbers.append(number)
                elif as_text and line.startswith(_DEAL_START_PREFIX) and self._fast_deal_start(number, line):
                    if whole_deals:
                        covered = self._fast_deal(text, start)
                        if covered is not None:  # the action lines and the deal line hold
                            number, start = number + covered[0], covered[1]
                elif as_text and line.startswith(_MATCH_END_PREFIX) and self._fast_match_end(line):
                    pass
                else:
                    self._parsed_line(number, line)
            cut = text[start:]  # "" when the file ends with a newline, else a line without its end
            if cut:
                self._parsed_line(number + 1, cut, last=True)
            if bad_utf8 is not None:
                self._damage(bad_utf8 + 1, "is not UTF-8 text")
            self._end_of_file(number + (1 if cut else 0))
        except _Stop as stop:
            replay.problem = stop.problem
        replay.open_steps = self.steps if self.state is not None else 0
        replay.actions = self.done_actions + replay.open_steps

    def _parsed_line(self, number: int, text: str, last: bool = False) -> None:
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            if last and self.replay.partial_file:
                self.replay.cut_tail = True  # the match crashed while this line was written
                return
            self._damage(number, f"is not valid JSON{_where(exc)}")
        if not isinstance(obj, dict):
            self._damage(number, f"is a JSON {type(obj).__name__}, not an object")
        kind = obj.get("type")
        if number == 1:
            if obj.get("format") == "arena-deal":
                message = (
                    "line 1: not a replay log but a deal record (format 'arena-deal'): arena score reads it"
                )
                raise _Stop(Problem("unsupported", message, 1))
            if kind != "header":
                self._damage(1, f"is of type {kind!r}: a replay log starts with its header line")
            self._header(obj)
        elif self.ended:
            self._damage(number, "comes after the match_end line")
        elif kind == "action":
            if self.state is None:
                self._damage(number, "is an action line outside a deal")
            self.texts.append(text)
            self.numbers.append(number)
        elif kind == "deal_start":
            self._deal_start(number, obj)
        elif kind == "deal":
            self._deal_end(number, obj)
        elif kind in ("connection", "fault"):
            self._note(number, obj)
        elif kind == "match_end":
            self._match_end(number, obj)
        elif kind == "header":
            self._damage(number, "is a second header line")
        else:
            self._damage(number, f"has the unknown type {kind!r}")

    def _damage(self, number: int, reason: str) -> NoReturn:
        """Stop at a line that cannot be read, after checking the actions before it."""
        self._flush(before=number)
        _stop_damage(number, reason)

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
        raise _Stop(Problem("discrepancy", message, line, deal, step, seat, expected))

    # ---------------------------------------------------------------- header

    def _header(self, obj: dict[str, Any]) -> None:
        replay = self.replay
        fmt = obj.get("format")
        if fmt != REPLAY_FORMAT:
            message = f"line 1: not a replay log: format is {fmt!r}, expected {REPLAY_FORMAT!r}"
            raise _Stop(Problem("unsupported", message, 1))
        version = obj.get("version")
        if not _is_int(version) or version < 1:
            _stop_damage(1, f"has version {version!r}; expected a whole number from 1")
        if version > REPLAY_VERSION:
            message = (
                f"line 1: replay log version {version} is newer than this arena reads "
                f"(≤ {REPLAY_VERSION}); read it with a newer arena"
            )
            raise _Stop(Problem("unsupported", message, 1))
        options = obj.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            _stop_damage(1, "has options that are not an object of strings")
        key = (str(obj.get("variant")), tuple(options.items()))
        known = _VARIANTS.get(key)
        if known is None:
            try:
                variant = find_variant(key[0], options)
            except ConfigError as exc:
                raise _Stop(Problem("unsupported", f"line 1: {exc}", 1)) from None
            spelled = f'"variant":{_json(variant.name)},"options":{_json(dict(variant.options))}'
            known = _VARIANTS[key] = (variant, f'{spelled},"seats":{variant.seats}')
        variant, self.variant_text = known
        seed, deals, seats = obj.get("seed"), obj.get("deals"), obj.get("seats")
        if not _is_int(seed):
            _stop_damage(1, f"has seed {seed!r}; expected a whole number")
        if not _is_int(deals) or deals < 1:
            _stop_damage(1, f"has deals {deals!r}; expected a whole number from 1")
        if not (
            isinstance(seats, list) and len(seats) == variant.seats and all(isinstance(s, str) for s in seats)
        ):
            _stop_damage(1, f"must name {variant.seats} seats (a list of strings) for {variant.name}")
        tc = obj.get("time_control")
        keys = ("per_decision_ms", "bank_ms", "increment_ms")
        if not isinstance(tc, dict) or not all(_is_int(tc.get(k)) and tc[k] >= 0 for k in keys):
            _stop_damage(1, f"needs a time_control with whole numbers {', '.join(keys)}")
        policy = obj.get("fault_policy")
        if policy not in FAULT_POLICIES:
            _stop_damage(1, f"has fault_policy {policy!r}; expected substitute or forfeit")
        replay.header = obj
        replay.variant = variant
        self.seed = seed
        self.policy = str(policy)
        self.match = Match(variant, seed=seed, deals=deals)
        self.faults = [0] * variant.seats

    # ---------------------------------------------------------------- deals

    def _deal_start(self, number: int, obj: dict[str, Any]) -> None:
        match = self.match
        assert match is not None
        if self.state is not None:
            assert self.deal_log is not None
            self._damage(number, f"starts a deal before deal {self.deal_log.index} has its deal line")
        deal = obj.get("deal")
        if not _is_int(deal):
            self._damage(number, f"has deal {deal!r}; expected a whole number")
        if match.is_over():
            message = f"a deal_start after the match's {match.deals} dealer turns are over"
            self._discrepancy(message, number, expected="match_end", deal=deal)
        if deal != match.deal_index:
            expected = f"deal {match.deal_index}"
            self._discrepancy(f"deal_start of deal {deal}", number, expected=expected, deal=deal)
        state = match.start_deal()
        deck = [str(c) for c in state.deck]
        for key, recorded, replayed in (
            ("dealer", obj.get("dealer"), state.dealer),
            ("pots", obj.get("pots"), state.pots_start),
            ("stakes", obj.get("stakes"), state.stakes),
        ):
            if recorded != replayed or type(recorded) is not type(replayed):
                self._discrepancy(
                    f"{key} is {_brief(recorded)}", number, expected=_brief(replayed), deal=deal
                )
        if obj.get("deck") != deck:
            expected = "the deck the match's seed deals: " + " ".join(deck)
            self._discrepancy("the deck differs", number, expected=expected, deal=deal)
        self._begin_deal(state, deal, number)

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

    def _fast_deal_start(self, number: int, line: str) -> bool:
        """Start the next deal if `line` is exactly the `deal_start` line the referee writes for it.

        Otherwise nothing changes, and `_deal_start` reads the line and says what differs.
        """
        match = self.match
        if match is None or self.ended or self.state is not None or match.is_over():
            return False
        state = match.start_deal()
        deal = match.deal_index
        pots = _ENCODE(state.pots_start) if state.pots_start else "{}"
        stakes, deck = "true" if state.stakes else "false", '","'.join(map(_CODES.__getitem__, state.deck))
        expected = (
            f'{{"type":"deal_start","deal":{deal},"dealer":{state.dealer},"pots":{pots},'
            f'"stakes":{stakes},"deck":["{deck}"]}}'
        )
        if line != expected:
            return False
        self.start_texts = (pots, stakes, deck)
        self._begin_deal(state, deal, number)
        return True

    def _fast_deal(self, text: str, start: int) -> tuple[int, int] | None:
        """Check the deal whose action lines begin at `start` in `text` as a whole, as text.

        The engine replays the deal record's actions; then the record's entries, the action lines
        and the deal line must be exactly what the referee writes for them. Returns how many lines
        that covered and where the next line starts, or None, having changed nothing but dealt
        the deal again, so that the line-by-line check reads it and names what differs.
        """
        state, log, match = self.state, self.deal_log, self.match
        assert state is not None and log is not None and match is not None
        end = text.find('\n{"type":"deal",', start - 1)  # the newline before the deal line
        after = text.find("\n", end + 1) if end >= 0 else -1
        if after < 0:  # no deal line, or its end is cut: the line-by-line check reads what is there
            return None
        first = end + 1  # the deal line is text[first:after]; it is read in place, not copied
        pots, stakes, deck = self.start_texts
        head = (
            f'{{"type":"deal","deal":{log.index},"record":{{"format":"arena-deal","version":1,'
            f'{self.variant_text},"dealer":{state.dealer},"pots":{pots},"stakes":{stakes},'
            f'"deck":["{deck}"],"actions":['
        )
        marker = f'],"deal":{log.index},"result":'
        tail_at = text.rfind(marker, first, after)
        if tail_at < first + len(head) or not text.startswith(head, first):
            return None
        split = _split_entries(text, first + len(head), tail_at)
        if split is None:
            return None
        keys, thinks = split
        if not (all(map(_ACTIONS.__contains__, keys)) or all(map(_learn, keys))):
            return None
        # The action lines must be what the referee writes for these entries, and all there is
        # between the deal_start and deal lines (not, say, a connection or a fault line).
        if keys:
            line_head = f'{{"type":"action","deal":{log.index},'
            middles = map(_LINE_MIDDLES.__getitem__, keys)
            lines = "}\n".join(map("".join, zip(repeat(line_head), _steps(len(keys)), middles, thinks)))
            if end != start + len(lines) + 1 or text[end - 1] != "}" or not text.startswith(lines, start):
                return None
        elif end != start - 1:
            return None
        with suppress(EngineError):  # then the history is shorter than the record: see below
            deque(map(state.apply, map(_ACTIONS.__getitem__, keys)), 0)
        # The seats: the engine's history holds the seat that was to act at each step.
        holds = state.is_terminal() and state.history == list(map(_PAIRS.__getitem__, keys))
        if holds:
            # The result is read as JSON, as the line-by-line check reads it (cheaper than writing
            # the replayed one); the rest of the line is text again.
            result = state.result()
            replayed = result.to_dict()
            scores = map(int.__add__, match.scores, result.deltas)  # as finish_deal will make them
            ending = f'}},"scores":[{_ints(scores)}]}}'
            recorded = _loads(text[tail_at + len(marker) : after - len(ending)])
            holds = text.endswith(ending, first, after) and recorded == replayed
        if not holds:
            self.state = match.start_deal()  # the line-by-line check replays the deal again
            return None
        match.finish_deal(state)
        log.result = replayed
        log.scores = list(match.scores)
        self.replay.deals_done += 1
        self.done_actions += len(keys)
        self.state = None
        return len(keys) + 1, after + 1

    def _deal_end(self, number: int, obj: dict[str, Any]) -> None:
        state, log, match = self.state, self.deal_log, self.match
        if state is None or log is None:
            self._damage(number, "is a deal line outside a deal")
        assert match is not None
        record = obj.get("record")
        if obj.get("deal") != log.index:
            self._damage(number, f"has deal {obj.get('deal')!r} inside deal {log.index}")
        if not isinstance(record, dict) or not isinstance(record.get("actions"), list):
            self._damage(number, "has no deal record with an actions list")
        self._check_record_header(number, record)
        self._replay_record(number, record["actions"])
        if not state.is_terminal():
            legal = ", ".join(str(a) for a in state.legal_actions())
            message = f"the deal record ends after {self.steps} actions, before the deal is over"
            expected = f"an action of seat {state.turn}, one of: {legal}"
            self._discrepancy(message, number, self.steps, None, expected)
        replayed = state.result().to_dict()
        recorded = record.get("result")
        if recorded != replayed:
            replayed = json.loads(json.dumps(replayed))  # JSON's own types, for a fair comparison
            if not isinstance(recorded, dict):
                self._discrepancy("the deal record has no result object", number, expected=_brief(replayed))
            keys = sorted(set(recorded) | set(replayed), key=_result_key)
            key = next(k for k in keys if recorded.get(k) != replayed.get(k))
            message = f"the recorded result's {key} is {_brief(recorded.get(key))}"
            self._discrepancy(message, number, expected=f"{_brief(replayed.get(key))} (replayed)")
        match.finish_deal(state)
        scores = obj.get("scores")
        if scores != match.scores:
            message = f"the running scores are {_brief(scores)}"
            self._discrepancy(message, number, expected=_brief(match.scores))
        log.result = replayed
        log.scores = list(match.scores)
        self.replay.deals_done += 1
        self.done_actions += self.steps
        self.steps = 0
        self.state = None

    def _check_record_header(self, number: int, record: dict[str, Any]) -> None:
        state, log, variant = self.state, self.deal_log, self.replay.variant
        assert state is not None and log is not None and variant is not None
        if record.get("format") != "arena-deal" or record.get("version") != 1:
            self._damage(number, "has a record that is not an arena-deal record of version 1")
        for key, recorded, expected in (
            ("variant", record.get("variant"), variant.name),
            ("options", record.get("options"), dict(variant.options)),
            ("seats", record.get("seats"), variant.seats),
            ("dealer", record.get("dealer"), state.dealer),
            ("pots", record.get("pots"), state.pots_start),
            ("stakes", record.get("stakes"), state.stakes),
            ("deal", record.get("deal"), log.index),
            ("deck", record.get("deck"), [str(c) for c in log.deck]),
        ):
            if recorded != expected:
                message = f"the deal record's {key} is {_brief(recorded)}"
                self._discrepancy(message, number, expected=f"{_brief(expected)}, as the deal_start line")

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
                        f'"think_ms":{think!r},"fault":{_json(fault)}}}'
                    )
                    size += 3
                if text != expected or len(entry) != size or (fault is not None and not _is_fault(fault)):
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
        except _Stop:
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

    def _known_action(self, entry: dict[str, Any]) -> tuple[Action, str, int] | None:
        fields = {k: entry[k] for k in ("type", "card", "suit", "name") if entry.get(k) is not None}
        try:
            action = Action.from_dict(fields)
        except EngineError:
            return None
        canonical = action.to_dict()
        if canonical != fields:  # e.g. a lowercase card code: the slow path compares it
            return None
        hit = (action, _json(canonical), len(canonical))
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
            _stop_damage(line_no, f"is not valid JSON{_where(exc)}")
        log = self.deal_log
        assert log is not None
        if not isinstance(line, dict) or line.get("type") != "action":
            _stop_damage(line_no, "is not an action line")
        if set(line) - _ACTION_LINE_KEYS:
            _stop_damage(line_no, f"has unknown field(s) {sorted(set(line) - _ACTION_LINE_KEYS)}")
        if line.get("deal") != log.index or line.get("step") != step:
            where = f"deal {line.get('deal')!r} step {line.get('step')!r}"
            _stop_damage(line_no, f"is the action of {where}; expected deal {log.index} step {step}")
        seat, think = line.get("seat"), line.get("think_ms")
        fault, fields = line.get("fault"), line.get("action")
        if not (_is_int(seat) and _is_int(think) and think >= 0 and isinstance(fields, dict)):
            _stop_damage(line_no, "needs a whole-number seat, an action object and a think_ms of 0 or more")
        if fault is not None and not _is_fault(fault):
            kinds = ", ".join(FAULT_KINDS)
            _stop_damage(line_no, f"has a fault that is not {{kind, detail}} with a kind of {kinds}")
        if record_line is not None:
            mirrored: dict[str, Any] = {"seat": seat, **fields, "think_ms": think}
            if fault is not None:
                mirrored["fault"] = fault
            if entry != mirrored:
                message = f"the deal record (line {record_line}) has {_brief(entry)}"
                self._discrepancy(message, line_no, step, seat, f"{_brief(mirrored)}, as the action line")
        try:
            action = Action.from_dict(fields)
        except EngineError as exc:
            self._discrepancy(f"malformed action {_brief(fields)}: {exc}", line_no, step, seat)
        self._checked_apply(step, seat, action, think, fault)

    def _checked_apply(
        self, step: int, seat: int, action: Action, think: int, fault: dict[str, str] | None
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
            log.decisions.append(Decision(step, seat, action, think, fault, line_no))

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

    # ---------------------------------------------------------------- other lines

    def _note(self, number: int, obj: dict[str, Any]) -> None:
        seat = obj.get("seat")
        kind = str(obj.get("type"))
        if not _is_int(seat) or not 0 <= seat < self.replay.seats:
            self._damage(number, f"has seat {seat!r}; expected 0…{self.replay.seats - 1}")
        field_name = "event" if kind == "connection" else "kind"
        allowed = CONNECTION_EVENTS if kind == "connection" else ("protocol",)
        event = obj.get(field_name)
        if event not in allowed:
            self._damage(number, f"has {field_name} {event!r}; expected {' or '.join(allowed)}")
        detail = obj.get("detail", "")
        if not isinstance(detail, str):
            self._damage(number, "has a detail that is not a string")
        if kind == "fault":
            self.faults[seat] += 1
        if self.collect:
            if self.state is not None and self.deal_log is not None:
                deal, step = self.deal_log.index, len(self.texts)
            else:
                deal, step = (self.match.deal_index if self.match is not None else 0), 0
            self.replay.notes.append(Note(deal, step, seat, kind, str(event), detail, number))

    def _match_end(self, number: int, obj: dict[str, Any]) -> None:
        match = self.match
        assert match is not None
        self._flush()
        termination = obj.get("termination")
        forfeited = obj.get("forfeited")
        if termination not in TERMINATIONS:
            self._damage(number, f"has termination {termination!r}; expected completed or forfeit")
        state = self.state
        if termination == "completed":
            if state is not None or not match.is_over():
                expected = f"all {match.deals} dealer turns played out"
                self._discrepancy("the match_end says completed", number, expected=expected, deal=None)
            if forfeited is not None:
                message = f"a completed match names seat {forfeited} as forfeited"
                self._discrepancy(message, number, expected="null", deal=None)
        else:
            if self.policy != "forfeit":
                self._discrepancy("a forfeit under the substitute fault policy", number, expected="completed")
            if state is None or state.turn is None:
                message = "a forfeit outside a deal in progress"
                self._discrepancy(message, number, expected="a forfeit at a pending decision", deal=None)
            if forfeited != state.turn:
                expected = f"seat {state.turn}, whose decision was pending"
                self._discrepancy(f"seat {forfeited} forfeited", number, self.steps, expected=expected)
            self.faults[state.turn] += 1  # the forfeiting fault ends the match before its action line
        split = match.final_split()
        for key, recorded, replayed in (
            ("pot_split", obj.get("pot_split"), split),
            ("scores", obj.get("scores"), match.scores),
            ("faults", obj.get("faults"), {str(s): n for s, n in enumerate(self.faults)}),
        ):
            if recorded != replayed:
                message = f"the match_end's {key} is {_brief(recorded)}"
                self._discrepancy(message, number, expected=_brief(replayed), deal=None)
        self.replay.match_end = obj
        self.ended = True
        if state is not None:  # the deal a forfeit ended: its actions hold
            self.done_actions += self.steps
            self.steps = 0
            self.state = None

    def _fast_match_end(self, line: str) -> bool:
        """End a completed match if `line` is exactly the match_end line the referee writes for it.

        Otherwise nothing changes (the split is computed once), and `_match_end` reads the line.
        """
        match = self.match
        if match is None or self.ended or self.state is not None or not match.is_over():
            return False
        split = match.final_split()  # before the scores: it pays the pots out (DK-POT-6)
        faults = {str(seat): count for seat, count in enumerate(self.faults)}
        counts = ",".join(f'"{seat}":{count}' for seat, count in faults.items())
        expected = (
            f'{{"type":"match_end","termination":"completed","forfeited":null,"pot_split":[{_ints(split)}],'
            f'"scores":[{_ints(match.scores)}],"faults":{{{counts}}}}}'
        )
        if line != expected:
            return False
        self.replay.match_end = {
            "type": "match_end",
            "termination": "completed",
            "forfeited": None,
            "pot_split": list(split),
            "scores": list(match.scores),
            "faults": faults,
        }
        self.ended = True
        return True

    def _end_of_file(self, lines: int) -> None:
        if self.ended:
            return
        self._flush()
        if self.replay.partial_file:
            return  # the log of a match in progress, or of one that crashed: what is there holds
        raise _Stop(
            Problem(
                "damage",
                f"the file ends after line {lines} without a match_end line: it is truncated "
                "(a finished replay log ends with match_end; a match in progress writes to .jsonl.part)",
                lines,
            )
        )


def _split_entries(text: str, start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The keys and think times of the deal record's entries in `text[start:end]`, or None.

    `{"seat":0,"type":"pass","think_ms":7},{"seat":1,…` gives `('0,"type":"pass"', '1,…')` and
    `('7', …)`: the entries are exactly `{"seat":` key `,"think_ms":` think `}`, joined by commas,
    once the caller has checked that each key is a canonical one (none holds `,"think_ms":`).
    """
    if start == end:
        return (), ()
    if not (text.startswith('{"seat":', start) and text[end - 1] == "}"):
        return None
    pieces = text[start + 8 : end - 1].split(_NEXT_ENTRY)
    keys, _, thinks = zip(*map(str.rpartition, pieces, repeat(_THINK)), strict=True)
    digits = "".join(thinks)
    # Whole numbers as JSON writes them: ASCII digits, no empty one, no leading zero.
    if not (digits.isascii() and digits.isdigit() and all(thinks)):
        return None
    if ("," + ",".join(thinks)).count(",0") != thinks.count("0"):
        return None
    return keys, thinks


def _learn(key: str) -> bool:
    """Whether `key` is a canonical record entry of seat 0-3 without its think time; keeps it.

    A full table (only odd names can fill it) sends the deal line by line instead.
    """
    if key in _ACTIONS:
        return True
    if len(_ACTIONS) >= 8192:
        return False
    text = '{"seat":' + key + "}"
    try:
        entry = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    if not isinstance(entry, dict):
        return False
    seat = entry.pop("seat", None)
    if not _is_int(seat) or not 0 <= seat < 4:
        return False
    try:
        action = Action.from_dict(entry)
    except EngineError:
        return False
    fields = action.to_dict()
    if _json({"seat": seat, **fields}) != text:
        return False
    _ACTIONS[key] = action
    _PAIRS[key] = (seat, action)
    _LINE_MIDDLES[key] = f'{seat},"action":{_json(fields)}{_THINK}'
    return True


def _ints(values: Iterable[int]) -> str:
    """Whole numbers as JSON writes the items of a list."""
    return ",".join(map(str, values))


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _steps(count: int) -> list[str]:
    while len(_STEPS) < count:
        _STEPS.append(f'"step":{len(_STEPS)},"seat":')
    return _STEPS


def _stop_damage(number: int, reason: str) -> NoReturn:
    raise _Stop(Problem("damage", f"line {number} {reason}; nothing from it on is read", number))


# --------------------------------------------------------------------------- helpers


def _decode(data: bytes) -> tuple[str, int | None]:
    """The text up to the first line that is not UTF-8, and that line's index (or None)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        return data[:start].decode("utf-8"), data.count(b"\n", 0, start)


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int


def _is_fault(value: object) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"kind", "detail"}
        and value["kind"] in FAULT_KINDS
        and isinstance(value["detail"], str)
    )


def _where(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f" ({exc.msg} at column {exc.colno})"
    return " (nested too deeply)"


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _brief(value: object, limit: int = 160) -> str:
    text = _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_key(key: str) -> tuple[int, str]:
    return (_RESULT_ORDER.index(key) if key in _RESULT_ORDER else len(_RESULT_ORDER), key)
