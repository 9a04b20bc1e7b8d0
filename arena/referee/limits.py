"""Where the engine's unbounded numbers meet the protocol's fixed-width fields.

The engine counts in Python integers: in `danish` a failed ultimo puts the pot's value into the
pot (DK-END-3, AMB-07), so pots, deltas and scores may double deal after deal without bound.
The protocol carries them as int64 (arena.proto). A number beyond int64 is never sent wrapped:
the referee ends the match there, aborted, with the reason in its log, its replay's `match_end`
line and `MatchEnd.reason` (docs/RULES-DECISIONS.md, "Numbers beyond int64").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..engine import Match
from ..engine.result import DealResult
from ..protocol import INT64_MAX, INT64_MIN
from ..v1 import arena_pb2 as pb


class OutOfRange(Exception):
    """A score, pot or delta of the match no longer fits the protocol's int64 fields."""


def _first_beyond(named: Iterable[tuple[str, int]]) -> str | None:
    for name, value in named:
        if not INT64_MIN <= value <= INT64_MAX:
            return f"{name} is {value}, beyond int64 (the protocol's widest integer)"
    return None


def beyond_int64(match: Match, result: DealResult | None = None) -> str | None:
    """Why the numbers the bots would be told next do not fit int64; None when they all do.

    `result`: the deal just finished (its deltas and pot changes); the match's running scores
    and pots are checked always.
    """
    named: list[tuple[str, int]] = [(f"seat {s}'s score", v) for s, v in enumerate(match.scores)]
    named += [(f"the {pot} pot", v) for pot, v in match.pots.items()]
    if result is not None:
        named += [(f"seat {s}'s delta", v) for s, v in enumerate(result.deltas)]
        named += [(f"the {pot} pot's change", v) for pot, v in result.pots.items()]
    return _first_beyond(named)


def check_deal(match: Match, result: DealResult, deal: int) -> None:
    """Raise `OutOfRange` when deal `deal`'s result cannot be sent to the bots."""
    reason = beyond_int64(match, result)
    if reason is not None:
        raise OutOfRange(f"after deal {deal}, {reason}: the match ends here, aborted")


def match_end_line(
    match: Match, termination: str, forfeited: int | None, faults: dict[int, int], reason: str
) -> tuple[dict[str, Any], str]:
    """The replay's `match_end` line, and the abort reason (empty unless aborted).

    The pots are split (DK-POT-6) when the match is over or forfeited; an aborted match that is
    not over keeps them unsplit (`pot_split` null). A split that leaves int64 aborts the match.
    """
    aborted = termination == "aborted"
    split = match.final_split() if match.is_over() or not aborted else None
    if not aborted:
        late = beyond_int64(match)
        if late is not None:
            aborted, termination = True, "aborted"
            reason = f"after the pot split, {late}: the match is aborted"
    line: dict[str, Any] = {
        "type": "match_end",
        "termination": termination,
        "forfeited": forfeited,
        "pot_split": split,
        "scores": list(match.scores),
        "faults": faults,
    }
    if aborted:
        line["reason"] = reason
    return line, reason if aborted else ""


def match_end_message(match: Match, termination: str, replay: str, reason: str) -> pb.MatchEnd:
    """The bots' `MatchEnd`: an aborted match's scores may not fit int64, so it sends none (its
    bots had every result that fits in a `DealEnded`; the replay has them all, exactly)."""
    scores = [] if reason else match.scores
    return pb.MatchEnd(scores=scores, termination=termination, replay=replay, reason=reason)
