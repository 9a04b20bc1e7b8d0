"""Duplicate seating: which bots meet, in which seats, on which decks.

A *deal set* is one match's worth of decks. Decks depend only on the match seed and the deal
index (`arena.engine.deck_for`), so every match of a deal set gets the same seed and therefore
the same decks, and the same dealer on each deck (the first dealer is always seat 0).

Tables are every combination of `seats` bots out of the ladder's bots, so every two bots
meet equally often. At each table a deal set is played in every seat arrangement:

* ``permutations``: all orders of the table (6 for three seats, 24 for four);
* ``rotations``: the `seats` rotations of one order. For four seats the order cycles with
  the deal set through the three ways of pairing the bots across the table, so over every
  three deal sets each two bots sit opposite each other equally often.

Either way each bot sits in each seat equally often on each deck, and the luck of the cards
cancels. A match is named by its key, ``<deal set>:<bot>,<bot>,…`` (bots by seat): the key
is what makes recording a match idempotent.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

# For four seats, orders of positions 0-3 putting each pair of positions opposite once
# (seat k faces seat k+2): 0|2 1|3, then 0|3 1|2, then 0|1 2|3.
FOUR_SEAT_ORDERS = ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3))


@dataclass(frozen=True)
class ScheduledMatch:
    key: str
    deal_set: int
    table: int  # index of the table (a combination of bots) in `tables()`
    arrangement: int  # index of the seat arrangement within the table and deal set
    seed: int
    bots: tuple[str, ...]  # bot names by seat


def deal_set_seed(seed: int, deal_set: int) -> int:
    """The match seed of deal set `deal_set`: the same for every match of the set."""
    digest = hashlib.sha256(f"arena-ladder:{seed}:{deal_set}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_key(deal_set: int, bots: Sequence[str]) -> str:
    return f"{deal_set}:{','.join(bots)}"


def tables(bots: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Every combination of `seats` bots: each pair of bots meets at C(n-2, seats-2) tables."""
    if len(bots) < seats:
        raise ValueError(f"{seats} seats need at least {seats} bots, got {len(bots)}")
    return list(itertools.combinations(bots, seats))


def arrangements(table: Sequence[str], seating: str, deal_set: int = 0) -> list[tuple[str, ...]]:
    """The seat arrangements of one table for one deal set."""
    if seating == "permutations":
        return list(itertools.permutations(table))
    if seating != "rotations":
        raise ValueError(f"seating {seating!r}: expected permutations or rotations")
    order = tuple(table)
    if len(table) == 4:
        order = tuple(table[i] for i in FOUR_SEAT_ORDERS[deal_set % len(FOUR_SEAT_ORDERS)])
    return [order[k:] + order[:k] for k in range(len(order))]


def build_schedule(
    bots: Sequence[str], seats: int, deal_sets: int, seed: int, seating: str
) -> list[ScheduledMatch]:
    """Every match of the ladder, deal set by deal set (so a partial ladder stays balanced)."""
    result = []
    all_tables = tables(bots, seats)
    for deal_set in range(deal_sets):
        set_seed = deal_set_seed(seed, deal_set)
        for t, table in enumerate(all_tables):
            for a, order in enumerate(arrangements(table, seating, deal_set)):
                result.append(ScheduledMatch(match_key(deal_set, order), deal_set, t, a, set_seed, order))
    return result
