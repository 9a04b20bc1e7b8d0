"""The end of a deal as data: a ledger of `Transfer`s and the `DealResult` that sums it up.

These are plain values: `scoring` computes them, `DealState.result()` and `Match` hand them on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Account = int | str  # a seat, a pot name ("king", "pagat"), or PENALTY
PENALTY = "penalty"  # AM-TRI-6 literal: card points lost to nobody


@dataclass(frozen=True, slots=True)
class Transfer:
    source: Account
    target: Account
    amount: int
    rule: str

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
