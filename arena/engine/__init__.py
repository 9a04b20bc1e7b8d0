"""The pure rules engine: no I/O, no clocks, no network; same deck and actions, same deal."""

from typing import Final

from .actions import Action
from .cards import CARDS, Card
from .combos import Combination
from .deal import Trick
from .errors import ActionError, CardError, ConfigError, EngineError, IllegalActionError
from .match import Match, deck_for
from .record import RecordError, deal_record, replay_record
from .result import DealResult, Transfer
from .state import DealState
from .variants import OPTIONS, VARIANT_NAMES, Variant, find_variant
from .views import observation

__all__ = [
    "BUILD",
    "CARDS",
    "OPTIONS",
    "VARIANT_NAMES",
    "Action",
    "ActionError",
    "Card",
    "CardError",
    "Combination",
    "ConfigError",
    "DealResult",
    "DealState",
    "EngineError",
    "IllegalActionError",
    "Match",
    "RecordError",
    "Transfer",
    "Trick",
    "Variant",
    "deal_record",
    "deck_for",
    "find_variant",
    "observation",
    "replay_record",
]

from . import state as _state

BUILD: Final = "pure" if _state.__file__.endswith(".py") else "compiled"
"""Which engine runs: "compiled" (mypyc, see setup.py) or "pure" (the .py sources: no compiler at
install time, or ARENA_PURE_PYTHON=1; docs/ARCHITECTURE.md)."""
