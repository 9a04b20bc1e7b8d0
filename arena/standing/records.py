"""What the standing arena's store reads and writes: bots, results, pauses, standings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class BotRecord:
    name: str
    variants: tuple[str, ...]  # empty: every variant of the arena
    registered_ms: int
    revoked_ms: int | None
    paused_until_ms: int
    pause_reason: str

    @property
    def revoked(self) -> bool:
        return self.revoked_ms is not None

    def state(self, at_ms: int | None = None) -> str:
        if self.revoked:
            return "revoked"
        return "paused" if self.paused_until_ms > (now_ms() if at_ms is None else at_ms) else "active"

    def plays(self, variant: str) -> bool:
        return not self.variants or variant in self.variants


@dataclass
class SeatResult:
    bot: str
    score: int
    deals: int  # deals the seat played
    decisions: int
    faults: int
    fault_kinds: list[str] = field(default_factory=list)  # "kind: detail" of each fault
    # What the seat's last Hello said (bot_name, bot_version); None: the seat said no Hello.
    hello: tuple[str, str] | None = None
    # The seat's points with its cards' luck taken out (arena/standing/luck.py); None: the
    # variant is rated on raw points (american). `score` stays the raw match score.
    adjusted_score: float | None = None


@dataclass
class MatchResult:
    """A finished match as the arena records it."""

    match_id: str
    variant: str
    termination: str
    replay: str
    seats: list[SeatResult]
    ratings: dict[str, tuple[float, float]]  # bot -> (mu, sigma) after the match
    ended_ms: int = 0  # when the match ended on its server; 0: when it is recorded


@dataclass(frozen=True)
class Pause:
    bot: str
    reason: str
    until_ms: int


@dataclass
class RecentMatch:
    match_id: str
    finished_ms: int
    seat: int
    seats: list[str]
    scores: list[int]
    termination: str
    replay: str
    # By seat, the score less the cards' luck; None: not adjusted (american, older matches).
    adjusted_scores: list[float | None] = field(default_factory=list)


@dataclass
class Standing:
    bot: str
    variant: str
    mu: float
    sigma: float
    matches: int
    deals: int
    score: int
    decisions: int
    faults: int
    state: str
    recent: list[RecentMatch] = field(default_factory=list)
    # The name and version in the bot's latest recorded Hello (any variant); None: none recorded.
    hello_name: str | None = None
    hello_version: str | None = None
    # The submitted version the arena played the bot's latest recorded match with; None: dialled in.
    hosted_version: int | None = None
    # The luck-adjusted score summed over the deals of the matches that were adjusted (the
    # ratings rank by it where the variant is adjusted: docs/ARENA.md, "Ratings").
    adjusted_score: float = 0.0
    adjusted_deals: int = 0

    @property
    def rating(self) -> float:
        """The conservative rating the table is sorted by, as the ladder's (μ − 3σ)."""
        return self.mu - 3 * self.sigma

    @property
    def mean_score_per_deal(self) -> float:
        return self.score / self.deals if self.deals else 0.0

    @property
    def mean_adjusted_score_per_deal(self) -> float | None:
        """Mean luck-adjusted points per deal; None when no match of the bot was adjusted."""
        return self.adjusted_score / self.adjusted_deals if self.adjusted_deals else None

    @property
    def fault_rate(self) -> float:
        """Faults per decision."""
        return self.faults / self.decisions if self.decisions else 0.0

    def reported_version(self) -> str | None:
        """What the bot runs, as the table and the site say it: for a bot the arena runs, the
        submitted version that played ("hosted, version N"); else the version of its latest
        recorded Hello, and its name there when not the bot's; None when nothing is recorded."""
        if self.hosted_version is not None:
            return f"hosted, version {self.hosted_version}"
        if self.hello_version is None:
            return None
        version = self.hello_version or "(none)"
        return version if self.hello_name == self.bot else f"{version} (as {self.hello_name!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "variant": self.variant,
            "rating": round(self.rating, 3),
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "matches": self.matches,
            "deals": self.deals,
            "mean_score_per_deal": round(self.mean_score_per_deal, 3),
            "mean_adjusted_score_per_deal": None
            if (adjusted := self.mean_adjusted_score_per_deal) is None
            else round(adjusted, 3),
            "adjusted_deals": self.adjusted_deals,  # the deals that mean is over
            "decisions": self.decisions,
            "faults": self.faults,
            "fault_rate": round(self.fault_rate, 5),
            "state": self.state,
            "hello_name": self.hello_name,
            "hello_version": self.hello_version,
            "hosted_version": self.hosted_version,
            "recent": [vars(m) for m in self.recent],
        }
