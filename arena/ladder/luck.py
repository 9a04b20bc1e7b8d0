"""Luck taken out of ladder scores: a control variate from the cards alone.

For each deal and seat the *control* is what the cards alone are worth to that seat: the mean
points of the seat when the search's rollout policy (`arena.search.greedy`, the heuristic's rules
simplified) plays every seat of the same deal from its start, over a few fixed rollout seeds. It
depends on the deal (deck, dealer, pots) and nothing a bot did, and is the same on any machine.

A bot's adjusted points on a deal are

    adjusted = points − β · (control − E[control])

with E[control] the control's expectation for that seat's place relative to the dealer, estimated
out of sample on decks of their own (never the ladder's), and β the slope of points on the
control fitted on *other* deal sets (cross-fitting by folds of deal sets). β and E[control] are
then independent of the deal set they adjust, so the adjusted score's expectation is the raw
score's: nothing is added, only the part of the spread the cards explain is taken away.

What it can and cannot do (docs/LADDER.md, "Luck"): the duplicate format already gives every bot
every seat's cards on every deck, so over a complete deal set a control that depends only on the
cards sums to the same for every bot (exactly, where points are zero-sum) and the adjustment
changes a bot's per-deal-set score little. It matters where the seating is not balanced: single
deals, incomplete deal sets, an arena without duplicate seating.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..engine import DealState, find_variant
from ..search.luck import EXPECTATION_DECKS, ROLLOUTS, control, expectation, expectation_deck

# The control and its expectation live in `arena.search.luck` (the standing arena uses them too).
__all__ = [
    "EXPECTATION_DECKS",
    "FOLDS",
    "ROLLOUTS",
    "DealSetScore",
    "LuckError",
    "SeatDeal",
    "adjusted_points",
    "betas",
    "control",
    "deal_set_scores",
    "expectation",
    "expectation_deck",
    "fold_of",
    "ladder_deals",
    "slope",
]

FOLDS = 2  # deal sets are split into this many folds; β of a fold is fitted on the others


# --------------------------------------------------------------------------- a ladder's deals


@dataclass(frozen=True)
class SeatDeal:
    """One bot's deal in a ladder, with what the cards were worth to its seat."""

    deal_set: int
    match_seq: int
    deal: int
    seat: int
    bot: str
    points: float
    control: float  # control(deal)[seat]
    expected: float  # E[control] for the seat's place after the dealer

    @property
    def luck(self) -> float:
        return self.control - self.expected


def ladder_deals(
    conn: sqlite3.Connection, replay_dir: Path, decks: int = EXPECTATION_DECKS, rollouts: int = ROLLOUTS
) -> list[SeatDeal]:
    """Every played, not annulled, active seat's deal of the ladder, with its control, in the
    plan's order. The deals' cards are read from the matches' replays in `replay_dir`; a match
    whose replay is gone is left out (named in the `LuckError`'s message when every one is)."""
    from ..replay.verify import verify_replay

    identity = json.loads(conn.execute("SELECT identity FROM ladder WHERE id = 1").fetchone()[0])
    variant = find_variant(identity["variant"], identity.get("options") or {})
    expected = expectation(variant, decks, rollouts)
    rows: dict[int, list[tuple[int, int, str, int, int, int]]] = defaultdict(list)
    for seq, deal, seat, bot, points, annulled, active in conn.execute(
        "SELECT match_seq, deal, seat, bot, points, annulled, active FROM deals "
        "ORDER BY match_seq, deal, seat"
    ):
        rows[seq].append((deal, seat, bot, points, annulled, active))
    out: list[SeatDeal] = []
    missing = []
    for seq, deal_set, replay in conn.execute(
        "SELECT seq, deal_set, replay FROM matches ORDER BY deal_set, table_no, arrangement, key"
    ):
        path = replay_dir / replay if replay else None
        if path is None or not path.exists():
            missing.append(str(path or f"match {seq}"))
            continue
        logs = {log.index: log for log in verify_replay(path, collect=True).deals}
        values: dict[int, tuple[float, ...]] = {}
        for deal, seat, bot, points, annulled, active in rows.get(seq, []):
            log = logs.get(deal)
            if annulled or not active or log is None:
                continue
            if deal not in values:
                values[deal] = control(
                    DealState(variant, log.dealer, log.deck, log.pots, log.stakes), rollouts
                )
            place = (seat - log.dealer) % variant.seats
            out.append(
                SeatDeal(deal_set, seq, deal, seat, bot, float(points), values[deal][seat], expected[place])
            )
    if not out and missing:
        raise LuckError(f"no replay of the ladder's matches was found (first: {missing[0]})")
    return out


class LuckError(Exception):
    """The luck of a ladder's deals cannot be estimated (its replays are gone)."""


# --------------------------------------------------------------------------- adjusting


def slope(deals: Sequence[SeatDeal]) -> float:
    """The least-squares slope of points on luck (0 when the luck does not vary)."""
    n = len(deals)
    if n < 2:
        return 0.0
    mx = sum(d.luck for d in deals) / n
    my = sum(d.points for d in deals) / n
    sxx = sum((d.luck - mx) ** 2 for d in deals)
    sxy = sum((d.luck - mx) * (d.points - my) for d in deals)
    return sxy / sxx if sxx > 0 else 0.0


def fold_of(deal_set: int, folds: int = FOLDS) -> int:
    return deal_set % folds


def betas(deals: Sequence[SeatDeal], folds: int = FOLDS) -> dict[tuple[str, int], float]:
    """β for each (bot, fold): the bot's slope fitted on the deal sets of the other folds."""
    by_bot: dict[str, list[SeatDeal]] = defaultdict(list)
    for d in deals:
        by_bot[d.bot].append(d)
    out = {}
    for bot, mine in by_bot.items():
        for fold in range(folds):
            out[bot, fold] = slope([d for d in mine if fold_of(d.deal_set, folds) != fold])
    return out


def adjusted_points(
    deals: Sequence[SeatDeal], folds: int = FOLDS, beta: Mapping[tuple[str, int], float] | None = None
) -> list[float]:
    """Each deal's adjusted points, in the order given (β cross-fitted unless given)."""
    beta = betas(deals, folds) if beta is None else beta
    return [d.points - beta.get((d.bot, fold_of(d.deal_set, folds)), 0.0) * d.luck for d in deals]


@dataclass(frozen=True)
class DealSetScore:
    """A bot's mean points per deal over one deal set, raw and with the luck taken out."""

    bot: str
    deal_set: int
    deals: int
    raw: float
    adjusted: float


def deal_set_scores(deals: Sequence[SeatDeal], adjusted: Sequence[float]) -> list[DealSetScore]:
    """Per bot and deal set, the mean raw and adjusted points per deal (the independent unit)."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for d, a in zip(deals, adjusted, strict=True):
        entry = sums[d.bot, d.deal_set]
        entry[0] += 1
        entry[1] += d.points
        entry[2] += a
    return [
        DealSetScore(bot, deal_set, int(n), raw / n, adj / n)
        for (bot, deal_set), (n, raw, adj) in sorted(sums.items())
    ]
