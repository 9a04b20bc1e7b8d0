"""The text check: a deal the referee wrote, checked as text in one piece.

A replay is read once, and a deal the referee wrote is checked as text. The engine replays the
deal record's actions (looked up by their text in a table of the few hundred there are), then the
`deal_start` line, the action lines and the `deal` line must each be exactly the text the
referee writes for what the engine did, with the think times the record gives; only the result is
parsed as JSON. A completed match's `match_end` line is compared as text too. Any difference (a
fault, a connection line inside the deal, a changed or reformatted line) sends the deal or the
line to the line-by-line check (arena.replay.verify and arena.replay.actions), which reads every
line as JSON and names the first problem: the text check only ever accepts what that check
accepts (the tests compare the two).

`TextCheck` adds these shortcuts to `ActionCheck`; the checker of arena.replay.verify is built on
it, and tries each one before it reads a line as JSON.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from contextlib import suppress
from itertools import repeat

from ..engine import CARDS, Action, EngineError
from .actions import ActionCheck
from .read import Replay, is_int, to_json

# A record entry is `{"seat":S,<action fields>,"think_ms":T}`; its *key* is the text between
# `{"seat":` and `,"think_ms":`. Per canonical key (seats times actions: hundreds in practice): the
# action, the (seat, action) pair the engine's history holds, and the action line's text from the
# seat to the think time. Only canonical keys of seats 0-3 are kept, and at most 8192 of them.
_THINK = ',"think_ms":'
_NEXT_ENTRY = '},{"seat":'
_ACTIONS: dict[str, Action] = {}
_PAIRS: dict[str, tuple[int, Action]] = {}
_LINE_MIDDLES: dict[str, str] = {}
_STEPS: list[str] = []  # '"step":N,"seat":' by step
_CODES = tuple(str(card) for card in CARDS)
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode  # as the referee writes


class TextCheck(ActionCheck):
    """Whole deals, and a completed match's end, checked as the text the referee writes."""

    def __init__(self, replay: Replay, collect: bool) -> None:
        super().__init__(replay, collect)
        self.variant_text = ""  # '"variant":…,"options":…,"seats":N', as a deal record spells them
        # The deal in progress as the `deal_start` line spells it, set when that line was read as
        # text: its pots, stakes and deck, for the text of its `deal` line. Empty otherwise.
        self.start_texts: tuple[str, str, str] = ("", "", "")

    def _fast_deal_start(self, number: int, line: str) -> bool:
        """Start the next deal if `line` is exactly the `deal_start` line the referee writes for it.

        Otherwise nothing changes, and `_deal_start` reads the line and says what differs.
        """
        match = self.match
        if match is None or self.ended or self.state is not None or match.is_over() or self.cpu is not None:
            return False  # (a CPU clock's cpu_ms is checked line by line)
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
    if not is_int(seat) or not 0 <= seat < 4:
        return False
    try:
        action = Action.from_dict(entry)
    except EngineError:
        return False
    fields = action.to_dict()
    if to_json({"seat": seat, **fields}) != text:
        return False
    _ACTIONS[key] = action
    _PAIRS[key] = (seat, action)
    _LINE_MIDDLES[key] = f'{seat},"action":{to_json(fields)}{_THINK}'
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
