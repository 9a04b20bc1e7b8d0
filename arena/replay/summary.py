"""A finished match's results as read back from its replay log (replays/FORMAT.md).

Both services that rate matches (the ladder and the standing arena) read them here, with the bots
that played each seat as their Hellos named them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class DealRow:
    deal: int
    points: list[int]  # game points per seat (the deal's deltas)
    card_points: list[int]
    annulled: bool
    active: list[bool]  # seats that played the deal (german-1754 with four seats sits one out)


@dataclass
class FaultRow:
    seat: int
    kind: str
    detail: str
    deal: int | None = None
    step: int | None = None


@dataclass
class Results:
    deals: list[DealRow]
    faults: list[FaultRow]
    decisions: list[int]  # by seat
    # By seat, the (bot_name, bot_version) of the last Hello the referee accepted; ("", "") for a
    # seat that never said Hello, and for every seat of a version 1 log, which has no hello lines.
    hellos: list[tuple[str, str]]

    @classmethod
    def empty(cls, seats: int) -> Results:
        return cls([], [], [0] * seats, [("", "")] * seats)

    def add(self, line: dict[str, Any]) -> None:
        """Count one line of the log (decoded); lines of other types change nothing. The referee
        counts the lines it writes here too (`MatchRunner.results`), as it writes them."""
        kind = line["type"]
        if kind == "deal":
            record = line["record"]
            self.add_deal(line["deal"], record["result"], {action["seat"] for action in record["actions"]})
        elif kind == "action":
            self.decisions[line["seat"]] += 1
            if "fault" in line:
                fault = line["fault"]
                row = FaultRow(line["seat"], fault["kind"], fault["detail"], line["deal"], line["step"])
                self.faults.append(row)
        elif kind == "fault":
            self.faults.append(FaultRow(line["seat"], line["kind"], line["detail"]))
        elif kind == "hello" and 0 <= line["seat"] < len(self.hellos):
            self.hellos[line["seat"]] = (str(line["bot_name"]), str(line["bot_version"]))

    def add_deal(self, deal: int, result: dict[str, Any], acted: set[int]) -> None:
        """A `deal` line: its index, its record's `result` and the seats that acted in it."""
        self.deals.append(
            DealRow(
                deal=deal,
                points=list(result["deltas"]),
                card_points=list(result["card_points"]),
                annulled=bool(result["annulled"]),
                active=[seat in acted for seat in range(len(self.decisions))],
            )
        )


_ACTION = '{"type":"action","deal":'


def read_results(path: Path, seats: int) -> Results:
    """The deals, the faults, each seat's decisions and its bot's last Hello of a finished match,
    from its replay log (replays/FORMAT.md), in one pass."""
    results = Results.empty(seats)
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if text.startswith(_ACTION) and '"fault":' not in text:
                # A decision without a fault, as the referee writes it (`type`, `deal`, `step`,
                # `seat` first): most of a log, counted without decoding it.
                seat = text.partition('"seat":')[2].partition(",")[0]
                if seat.isdigit() and int(seat) < seats:
                    results.decisions[int(seat)] += 1
                    continue
            results.add(json.loads(text))
    return results
