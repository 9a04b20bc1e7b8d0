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
* each `hello` line (version 2 on): a seat of the table, the bot's name and version as strings,
  the protocol version as a whole number;
* the `match_end` line: termination, forfeiting seat, pot split, final scores, fault counts.

The first problem ends the check, so everything before it holds. A problem is *damage* (the
file cannot be read from that line on: invalid JSON, a line of the wrong shape, a missing line)
or a *discrepancy* (the file reads, but the engine disagrees). A `.jsonl.part` file is the log
of a match that has not ended (or crashed): it may stop anywhere, and its last line may be cut.

The check is built in layers, each class on the one below: `_Checker` (this module) reads the
lines and checks the header, each deal's `deal_start` and `deal` lines, the connection and fault
lines, `match_end` and the end of the file; `TextCheck` (arena.replay.textcheck) first checks
each deal the referee wrote as text, in one piece, which keeps verify about as fast as the engine
(anything else is read line by line, as JSON); `ActionCheck` (arena.replay.actions) holds the
deal in progress and replays its actions through the engine one by one, with the referee's
substitute for a fault. The data types the check fills, and the decoding of the bytes, are in
arena.replay.read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

from ..engine import ConfigError, Match, Variant, find_variant
from ..files import InputFileError, read_input
from .cpucheck import CpuCheck
from .log import CONNECTION_EVENTS, FAULT_POLICIES, REPLAY_FORMAT, REPLAY_VERSION, TERMINATIONS
from .read import (
    BotHello,
    Note,
    Problem,
    Replay,
    ReplayReadError,
    Stop,
    brief,
    decode,
    is_int,
    json_error,
    stop_damage,
    to_json,
)
from .textcheck import TextCheck

_ACTION_PREFIX = '{"type":"action",'
_DEAL_START_PREFIX = '{"type":"deal_start",'
_MATCH_END_PREFIX = '{"type":"match_end",'
_RESULT_ORDER = ("card_points", "deltas", "pots", "annulled", "tricks_won", "ledger")
# Variants by header (name, options): building one is a good part of reading a short file.
_VARIANTS: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Variant, str]] = {}
_TEXT_CHECK = True  # False: every line is read as JSON (the tests compare both ways)


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


class _Checker(TextCheck):
    """The check of one replay log: its lines in order, each read as JSON unless `TextCheck` took it."""

    # ---------------------------------------------------------------- reading lines

    def run(self, data: bytes) -> None:
        replay = self.replay
        try:
            text, bad_utf8 = decode(data)
            if not text and bad_utf8 is None:
                raise Stop(Problem("damage", "the file is empty: a replay log starts with its header line"))
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
        except Stop as stop:
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
            self._damage(number, f"is not valid JSON{json_error(exc)}")
        if not isinstance(obj, dict):
            self._damage(number, f"is a JSON {type(obj).__name__}, not an object")
        kind = obj.get("type")
        if number == 1:
            if obj.get("format") == "arena-deal":
                message = (
                    "line 1: not a replay log but a deal record (format 'arena-deal'): arena score reads it"
                )
                raise Stop(Problem("unsupported", message, 1))
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
        elif kind == "hello":
            self._hello(number, obj)
        elif kind == "match_end":
            self._match_end(number, obj)
        elif kind == "header":
            self._damage(number, "is a second header line")
        else:
            self._damage(number, f"has the unknown type {kind!r}")

    def _damage(self, number: int, reason: str) -> NoReturn:
        """Stop at a line that cannot be read, after checking the actions before it."""
        self._flush(before=number)
        stop_damage(number, reason)

    # ---------------------------------------------------------------- header

    def _header(self, obj: dict[str, Any]) -> None:
        replay = self.replay
        fmt = obj.get("format")
        if fmt != REPLAY_FORMAT:
            message = f"line 1: not a replay log: format is {fmt!r}, expected {REPLAY_FORMAT!r}"
            raise Stop(Problem("unsupported", message, 1))
        version = obj.get("version")
        if not is_int(version) or version < 1:
            stop_damage(1, f"has version {version!r}; expected a whole number from 1")
        if version > REPLAY_VERSION:
            message = (
                f"line 1: replay log version {version} is newer than this arena reads "
                f"(≤ {REPLAY_VERSION}); read it with a newer arena"
            )
            raise Stop(Problem("unsupported", message, 1))
        options = obj.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            stop_damage(1, "has options that are not an object of strings")
        key = (str(obj.get("variant")), tuple(options.items()))
        known = _VARIANTS.get(key)
        if known is None:
            try:
                variant = find_variant(key[0], options)
            except ConfigError as exc:
                raise Stop(Problem("unsupported", f"line 1: {exc}", 1)) from None
            spelled = f'"variant":{to_json(variant.name)},"options":{to_json(dict(variant.options))}'
            known = _VARIANTS[key] = (variant, f'{spelled},"seats":{variant.seats}')
        variant, self.variant_text = known
        seed, deals, seats = obj.get("seed"), obj.get("deals"), obj.get("seats")
        if not is_int(seed):
            stop_damage(1, f"has seed {seed!r}; expected a whole number")
        if not is_int(deals) or deals < 1:
            stop_damage(1, f"has deals {deals!r}; expected a whole number from 1")
        if not (
            isinstance(seats, list) and len(seats) == variant.seats and all(isinstance(s, str) for s in seats)
        ):
            stop_damage(1, f"must name {variant.seats} seats (a list of strings) for {variant.name}")
        tc = obj.get("time_control")
        keys = ("per_decision_ms", "bank_ms", "increment_ms")
        if not isinstance(tc, dict) or not all(is_int(tc.get(k)) and tc[k] >= 0 for k in keys):
            stop_damage(1, f"needs a time_control with whole numbers {', '.join(keys)}")
        policy = obj.get("fault_policy")
        if policy not in FAULT_POLICIES:
            stop_damage(1, f"has fault_policy {policy!r}; expected substitute or forfeit")
        replay.header = obj
        replay.variant = variant
        self.seed = seed
        self.policy = str(policy)
        self.match = Match(variant, seed=seed, deals=deals)
        self.faults = [0] * variant.seats
        if "cpu_clock" in obj:
            self.cpu = CpuCheck(obj, variant.seats)

    # ---------------------------------------------------------------- deals

    def _deal_start(self, number: int, obj: dict[str, Any]) -> None:
        match = self.match
        assert match is not None
        if self.state is not None:
            assert self.deal_log is not None
            self._damage(number, f"starts a deal before deal {self.deal_log.index} has its deal line")
        deal = obj.get("deal")
        if not is_int(deal):
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
                self._discrepancy(f"{key} is {brief(recorded)}", number, expected=brief(replayed), deal=deal)
        if obj.get("deck") != deck:
            expected = "the deck the match's seed deals: " + " ".join(deck)
            self._discrepancy("the deck differs", number, expected=expected, deal=deal)
        self._begin_deal(state, deal, number)

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
                self._discrepancy("the deal record has no result object", number, expected=brief(replayed))
            keys = sorted(set(recorded) | set(replayed), key=_result_key)
            key = next(k for k in keys if recorded.get(k) != replayed.get(k))
            message = f"the recorded result's {key} is {brief(recorded.get(key))}"
            self._discrepancy(message, number, expected=f"{brief(replayed.get(key))} (replayed)")
        match.finish_deal(state)
        scores = obj.get("scores")
        if scores != match.scores:
            message = f"the running scores are {brief(scores)}"
            self._discrepancy(message, number, expected=brief(match.scores))
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
                message = f"the deal record's {key} is {brief(recorded)}"
                self._discrepancy(message, number, expected=f"{brief(expected)}, as the deal_start line")

    # ---------------------------------------------------------------- other lines

    def _note(self, number: int, obj: dict[str, Any]) -> None:
        seat = obj.get("seat")
        kind = str(obj.get("type"))
        if not is_int(seat) or not 0 <= seat < self.replay.seats:
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

    def _hello(self, number: int, obj: dict[str, Any]) -> None:
        if self.replay.header.get("version") == 1:
            self._damage(number, "is a hello line in a version 1 log (hello lines came with version 2)")
        seat = obj.get("seat")
        if not is_int(seat) or not 0 <= seat < self.replay.seats:
            self._damage(number, f"has seat {seat!r}; expected 0…{self.replay.seats - 1}")
        name, version, protocol = obj.get("bot_name"), obj.get("bot_version"), obj.get("protocol_version")
        if not isinstance(name, str) or not isinstance(version, str):
            self._damage(number, "needs the bot_name and bot_version strings the bot sent")
        if not is_int(protocol) or protocol < 0:
            self._damage(number, f"has protocol_version {protocol!r}; expected a whole number from 0")
        if self.state is not None and self.deal_log is not None:
            deal, step = self.deal_log.index, len(self.texts)
        else:
            deal, step = (self.match.deal_index if self.match is not None else 0), 0
        self.replay.hellos.append(BotHello(deal, step, seat, name, version, protocol, number))

    def _match_end(self, number: int, obj: dict[str, Any]) -> None:
        match = self.match
        assert match is not None
        self._flush()
        termination = obj.get("termination")
        forfeited = obj.get("forfeited")
        if termination not in TERMINATIONS:
            self._damage(number, f"has termination {termination!r}; expected completed, forfeit or aborted")
        state = self.state
        # DK-POT-6 pays the pots out at the end, and after a forfeit; an aborted match that is
        # not over keeps them (arena/referee/limits.py).
        split = match.final_split() if match.is_over() or termination != "aborted" else None
        if termination == "aborted":
            if state is not None or not _beyond_int64(match):
                message = "the match_end says aborted"
                expected = "a score, pot or delta beyond int64 after a deal"
                self._discrepancy(message, number, expected=expected, deal=None)
        elif termination == "completed":
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
        for key, recorded, replayed in (
            ("pot_split", obj.get("pot_split"), split),
            ("scores", obj.get("scores"), match.scores),
            ("faults", obj.get("faults"), {str(s): n for s, n in enumerate(self.faults)}),
        ):
            if recorded != replayed:
                message = f"the match_end's {key} is {brief(recorded)}"
                self._discrepancy(message, number, expected=brief(replayed), deal=None)
        self.replay.match_end = obj
        self.ended = True
        if state is not None:  # the deal a forfeit ended: its actions hold
            self.done_actions += self.steps
            self.steps = 0
            self.state = None

    def _end_of_file(self, lines: int) -> None:
        if self.ended:
            return
        self._flush()
        if self.replay.partial_file:
            return  # the log of a match in progress, or of one that crashed: what is there holds
        raise Stop(
            Problem(
                "damage",
                f"the file ends after line {lines} without a match_end line: it is truncated "
                "(a finished replay log ends with match_end; a match in progress writes to .jsonl.part)",
                lines,
            )
        )


def _result_key(key: str) -> tuple[int, str]:
    return (_RESULT_ORDER.index(key) if key in _RESULT_ORDER else len(_RESULT_ORDER), key)


def _beyond_int64(match: Match) -> bool:
    """Whether a running score or pot, or the last deal's deltas or pot changes, left int64:
    the one reason a referee ends a match aborted with a `match_end` line."""
    values = [*match.scores, *match.pots.values()]
    if match.results:
        values += [*match.results[-1].deltas, *match.results[-1].pots.values()]
    return any(not -(1 << 63) <= v < 1 << 63 for v in values)
