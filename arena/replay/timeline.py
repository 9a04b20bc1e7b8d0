"""A verified replay as a sequence of positions: the deal state before each decision, the clock,
the events between decisions (connections, protocol faults, a seat's bot changing).

`verify_replay(path, collect=True)` gives the deals and their decisions; this module walks them
through the engine again for the renderers (`show`, `html`) and for `ask`. Only a verified
prefix is ever walked, so no action here can be illegal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..engine import Action, DealState, Trick
from ..engine.scoring import P78_VALUE
from .read import DealLog, Decision, Replay

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
PHASE_NAMES = {
    "redeal": "redeal round",
    "bid": "bidding",
    "call": "the call",
    "discard": "discard",
    "declare": "declarations",
    "announce": "announcements",
    "demand": "demand round",
    "play": "play",
    "end": "end",
}


@dataclass(frozen=True)
class Clock:
    """The time a seat had for one decision, as the referee computed it."""

    limit_ms: int  # per-decision limit plus the bank: `DecisionRequest.time_limit_ms`
    bank_ms: int  # the bank before the decision: `DecisionRequest.bank_ms`
    charged_ms: int  # charged to the clock: think_ms less the latency allowance used, or cpu_ms


def clocks(replay: Replay) -> dict[tuple[int, int], Clock]:
    """The clock of every decision, by (deal, step)."""
    return _clock(replay)[0]


def banks_after(replay: Replay) -> list[int]:
    """Each seat's bank after the last decision in the log."""
    return _clock(replay)[1]


def _clock(replay: Replay) -> tuple[dict[tuple[int, int], Clock], list[int]]:
    """The referee's clock, computed again from the think times in the log.

    The referee (`MatchRunner._decide` in arena.referee.runner) draws time beyond the
    per-decision limit from the seat's bank, empties the bank on a timeout, leaves it as it is
    on any other fault, and adds the increment after each answered decision. The log holds the
    think times it used (and, with a latency allowance, the part of each it did not charge), so
    the banks come out exactly.
    """
    per, bank, increment = replay.time_control
    banks = [bank] * replay.seats
    out: dict[tuple[int, int], Clock] = {}
    for deal in replay.deals:
        for decision in deal.decisions:
            seat = decision.seat
            before = banks[seat]
            # A seat on a CPU clock (the header's `cpu_clock`) was charged its CPU, not wall time.
            charged = (
                decision.think_ms - decision.allowance_ms if decision.cpu_ms is None else decision.cpu_ms
            )
            out[deal.index, decision.step] = Clock(per + before, before, charged)
            if decision.fault is not None:
                if decision.fault.get("kind") == "timeout":
                    banks[seat] = 0
                continue
            over = charged - per
            after = max(0, before - over) if over > 0 else before
            banks[seat] = after + increment
    return out, banks


@dataclass(frozen=True)
class Event:
    """A connection event, a protocol fault, or a bot that came back as another bot or version."""

    seat: int
    kind: str  # "connection", "fault" or "bot"
    text: str  # e.g. ``seat 1 disconnected``, ``seat 1 protocol fault: …``
    line: int


def events(replay: Replay) -> dict[tuple[int, int], list[Event]]:
    """The events before each (deal, step), in file order (needs `collect`)."""
    found = [
        Event(
            note.seat,
            note.type,
            f"seat {note.seat} {note.event}" + (f": {note.detail}" if note.detail else "")
            if note.type == "connection"
            else f"seat {note.seat} protocol fault: {note.detail}",
            note.line,
        )
        for note in replay.notes
    ]
    places = {note.line: (note.deal, note.step) for note in replay.notes}
    for hello, before in replay.bot_changes():
        text = f"seat {hello.seat} now runs {hello.bot} (was {before.bot})"
        found.append(Event(hello.seat, "bot", text, hello.line))
        places[hello.line] = (hello.deal, hello.step)
    out: dict[tuple[int, int], list[Event]] = {}
    for event in sorted(found, key=lambda e: e.line):
        out.setdefault(places[event.line], []).append(event)
    return out


def walk(replay: Replay, deal: DealLog) -> Iterator[tuple[DealState, Decision | None]]:
    """The deal's state before each recorded decision, then (state, None) where the log stops.

    The same state object is yielded each time, changed in place: read it before moving on.
    """
    variant = replay.variant
    assert variant is not None
    state = DealState(variant, deal.dealer, deal.deck, pots=deal.pots, stakes=deal.stakes)
    for decision in deal.decisions:
        yield state, decision
        state.apply(decision.action)
    yield state, None


def public_action(action: Action) -> Action:
    """What every seat is told of an action: all of it, except the card of a discard."""
    return Action("discard") if action.type == "discard" else action


def trick_points(trick: Trick) -> int:
    """The trick's card points: a trick of three counts 2 less than its cards' values (G-CP-1),
    and so does a trick of four in P91 (G-CP-4). A running count; the deal's result is exact."""
    return sum(P78_VALUE[card] for _, card in trick.plays) - 2


def running_points(state: DealState) -> list[int]:
    """Card points of the tricks each seat has won so far, counted trick by trick."""
    points = [0] * state.seats
    for trick in state.tricks:
        points[trick.winner] += trick_points(trick)
    return points


def card_text(code: str) -> str:
    """``SK`` → ``♠K``, ``H10`` → ``♥10``; taroks (``T21``) and the Fool (``EX``) keep their codes."""
    symbol = SUIT_SYMBOLS.get(code[:1])
    return symbol + code[1:] if symbol and not code.startswith("T") else code


def hand_text(codes: list[str]) -> str:
    """A hand grouped by suit, e.g. ``♠ A 7 K · ♥ 2 Q · T 1 15 21 · EX``."""
    groups: dict[str, list[str]] = {}
    for code in codes:
        if code == "EX":
            groups.setdefault("EX", [])
        elif code.startswith("T"):
            groups.setdefault("T", []).append(code[1:])
        else:
            groups.setdefault(code[0], []).append(code[1:])
    parts = []
    for key in ("S", "H", "D", "C", "T", "EX"):
        if key in groups:
            if key == "EX":
                parts.append("EX")
            else:
                parts.append(f"{SUIT_SYMBOLS.get(key, key)} {' '.join(groups[key])}")
    return " · ".join(parts) if parts else "–"


def action_text(action: Action) -> str:
    """An action in words, with suit symbols: ``♠K``, ``EX naming ♥``, ``declares kings``."""
    kind = action.type
    if kind == "play":
        text = card_text(str(action.card))
        if action.suit is not None:
            named = SUIT_SYMBOLS.get(action.suit, "taroks" if action.suit == "T" else action.suit)
            text += f" naming {named}"
        return text
    if kind == "discard":
        return f"lays away {card_text(str(action.card))}" if action.card is not None else "lays away a card"
    if kind == "declare":
        suit = f" {SUIT_SYMBOLS.get(action.suit, action.suit)}" if action.suit else ""
        return f"declares {action.name}{suit}"
    if kind == "announce":
        return f"announces {action.name}"
    if kind == "pass":
        return "passes"
    if kind == "redeal":
        return "claims a redeal"
    if kind == "demand":
        return "demands the Fool"
    if kind == "bid":
        return f"bids {action.name}"
    if kind == "call":
        return f"calls {card_text(str(action.card))}"
    return str(action)
