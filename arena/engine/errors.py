"""The engine's exception tree: every error is an `EngineError` (a `ValueError`)."""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every error the engine raises."""


class CardError(EngineError):
    """A card code or index that does not name one of the 78 cards."""


class ActionError(EngineError):
    """An action that is malformed, whatever the state (unknown type, bad field)."""


class IllegalActionError(EngineError):
    """A well-formed action that the rules forbid in this state.

    `rule` names the rule of RULES.md that forbids it (e.g. ``DUM-DISC-2``).
    """

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(f"{message} ({rule})")
        self.rule = rule


class ConfigError(EngineError):
    """An unknown variant or option, or an option value out of range."""
