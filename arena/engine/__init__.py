"""The pure rules engine: no I/O, no clocks, no network; same deck and actions, same deal."""

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
