"""The end of a deal as data: a ledger of `Transfer`s and the `DealResult` that sums it up.

These are plain values: `scoring` computes them, `DealState.result()` and `Match` hand them on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

Account = int | str  # a seat, a pot name ("king", "pagat"), or PENALTY
PENALTY = "penalty"  # AM-TRI-6 literal: card points lost to nobody


class Transfer:
    """A payment of the ledger.  A value (`Final` fields, compared and hashed by them); a plain
    class rather than a frozen dataclass because scoring makes many, and mypyc compiles this
    `__init__` but not the one a dataclass generates."""

    __slots__ = ("amount", "rule", "source", "target")

    def __init__(self, source: Account, target: Account, amount: int, rule: str) -> None:
        self.source: Final = source
        self.target: Final = target
        self.amount: Final = amount
        self.rule: Final = rule

    def _fields(self) -> tuple[Account, Account, int, str]:
        return (self.source, self.target, self.amount, self.rule)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transfer) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Transfer{self._fields()!r}"

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "amount": self.amount, "rule": self.rule}


@dataclass(frozen=True)
class DealResult:
    card_points: list[int]
    deltas: list[int]
    pots: dict[str, int]
    ledger: list[Transfer]
    annulled: bool = False
    tricks_won: list[int] = field(default_factory=list)
    breakdown: dict[str, Any] | None = None  # `american`: the terms of AM-SC-5 or AM-TRI-6

    def to_dict(self) -> dict[str, Any]:
        out = {
            "card_points": list(self.card_points),
            "deltas": list(self.deltas),
            "pots": dict(self.pots),
            "annulled": self.annulled,
            "tricks_won": list(self.tricks_won),
            "ledger": [t.to_dict() for t in self.ledger],
        }
        if self.breakdown is not None:
            out["breakdown"] = self.breakdown
        return out
