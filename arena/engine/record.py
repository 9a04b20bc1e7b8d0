"""Deal records: a JSON-able document from which a deal is recomputed (replays/FORMAT.md).

A record holds the variant and options, the dealer, the pots before the deal,
the full shuffled deck and the ordered actions; the position is always
recomputed by replaying the actions through the engine, never trusted.
"""

from __future__ import annotations

from typing import Any

from .actions import Action
from .cards import Card
from .errors import EngineError, IllegalActionError
from .state import DealState
from .variants import find_variant

FORMAT = "arena-deal"
VERSION = 1


class RecordError(EngineError):
    """A deal record that cannot be replayed; `step` is the failing action's index, if any."""

    def __init__(self, message: str, step: int | None = None, rule: str | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.rule = rule


def deal_record(state: DealState, deal: int | None = None, *, actions: bool = True) -> dict[str, Any]:
    """The record of `state`; `deal` is its index in a match, if it belongs to one. With `actions`
    false its `actions` list is left empty, for a caller that encodes `state.history` in its place
    itself (the replay's deal line, arena/referee/record.py)."""
    record: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "variant": state.variant.name,
        "options": dict(state.variant.options),
        "seats": state.seats,
        "dealer": state.dealer,
        "pots": dict(state.pots_start),
        "stakes": state.stakes,
        "deck": [str(c) for c in state.deck],
        "actions": [{"seat": seat, **action.to_dict()} for seat, action in state.history] if actions else [],
    }
    if deal is not None:
        record["deal"] = deal
    if state.is_terminal():
        record["result"] = state.result().to_dict()
    return record


def replay_record(record: dict[str, Any]) -> DealState:
    """Rebuild a deal from its record; any problem raises `RecordError` naming the step."""
    if not isinstance(record, dict):
        raise RecordError("a deal record is a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a deal record: format is {record.get('format')!r}, expected {FORMAT!r}")
    version = record.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise RecordError(f"deal record version {version!r} is not supported (this engine reads ≤ {VERSION})")
    try:
        options = record.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise RecordError("options must be an object of strings")
        variant = find_variant(str(record.get("variant")), options)
        seats = record.get("seats", variant.seats)
        if seats != variant.seats:
            raise RecordError(f"seats is {seats!r}; {variant.name} with these options has {variant.seats}")
        deck_codes = record.get("deck")
        if not isinstance(deck_codes, list):
            raise RecordError("the record has no deck list")
        deck = [Card.parse(code) for code in deck_codes]
        dealer = record.get("dealer")
        if not isinstance(dealer, int) or isinstance(dealer, bool):
            raise RecordError("the record has no integer dealer")
        pots = record.get("pots", {})
        if not isinstance(pots, dict) or set(pots) - set(variant.pot_names):
            raise RecordError(f"pots must be an object with the keys {list(variant.pot_names)}")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pots.values()):
            raise RecordError("pot balances are whole numbers, never negative (DK-POT-4)")
        stakes = record.get("stakes", True)
        if not isinstance(stakes, bool):
            raise RecordError("stakes must be true or false")
        state = DealState(variant, dealer, deck, pots=pots, stakes=stakes)
    except RecordError:
        raise
    except EngineError as exc:
        raise RecordError(f"bad record header: {exc}") from None
    actions = record.get("actions")
    if not isinstance(actions, list):
        raise RecordError("the record has no actions list")
    for step, entry in enumerate(actions):
        if state.is_terminal():
            raise RecordError(f"step {step}: the deal is already over", step)
        try:
            if not isinstance(entry, dict):
                raise RecordError(f"step {step}: an action is a JSON object", step)
            action = Action.from_dict(entry)
            if entry.get("seat") != state.current_player:
                raise IllegalActionError(
                    f"seat {entry.get('seat')!r} acted but seat {state.current_player} is to act", "G-SEAT-4"
                )
            state.apply(action)
        except IllegalActionError as exc:
            raise RecordError(f"step {step}: {exc}", step, exc.rule) from None
        except RecordError:
            raise
        except EngineError as exc:
            raise RecordError(f"step {step}: {exc}", step) from None
    return state
