"""Forming tables from the bots waiting in the lobby (pure: no I/O, no clock).

Each round takes the bot that has waited longest and seats beside it the waiting
bots that cost least, where the cost of a neighbour is how far its rating lies from
those already seated plus a penalty for each meeting of that pair beyond the
average.  So similar ratings meet first, yet a pair that has met far more often
than the others gives way, and every bot is seated at most once per table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PAIR_PENALTY = 2.0
"""Cost of one meeting beyond the average, in rating points (μ; a new bot has σ ≈ 8.3)."""


@dataclass(frozen=True)
class Candidate:
    """A free place at a table: one lobby stream of one bot with room for another match."""

    bot: str
    stream: int  # the lobby stream it came from
    mu: float
    waiting_since: float


def pair_key(one: str, other: str) -> tuple[str, str]:
    return (one, other) if one < other else (other, one)


def form_tables(
    candidates: Sequence[Candidate], seats: int, meetings: Mapping[tuple[str, str], int]
) -> list[list[Candidate]]:
    """Tables of `seats` distinct bots from `candidates`; each candidate is used at most once."""
    pool = sorted(candidates, key=lambda c: (c.waiting_since, c.bot, c.stream))
    tables: list[list[Candidate]] = []
    bots = sorted({c.bot for c in pool})
    if len(bots) < seats:
        return tables  # the common case between tables: no need for the pairs' average
    average = _average_meetings(bots, meetings)
    while len({c.bot for c in pool}) >= seats:
        table = [pool[0]]
        while len(table) < seats:
            seated = {c.bot for c in table}
            others = [c for c in pool if c.bot not in seated]
            table.append(min(others, key=lambda c: (_cost(c, table, meetings, average), c.waiting_since)))
        for member in table:
            pool.remove(member)
        tables.append(table)
    return tables


def _cost(
    candidate: Candidate, table: Sequence[Candidate], meetings: Mapping[tuple[str, str], int], average: float
) -> float:
    spread = sum(abs(candidate.mu - other.mu) for other in table)
    excess = sum(max(0.0, meetings.get(pair_key(candidate.bot, other.bot), 0) - average) for other in table)
    return spread + PAIR_PENALTY * excess


def _average_meetings(bots: Sequence[str], meetings: Mapping[tuple[str, str], int]) -> float:
    """Meetings per pair among `bots`, counting the pairs that never met."""
    pairs = len(bots) * (len(bots) - 1) // 2
    if pairs == 0:
        return 0.0
    total = sum(meetings.get((one, other), 0) for i, one in enumerate(bots) for other in bots[i + 1 :])
    return total / pairs
