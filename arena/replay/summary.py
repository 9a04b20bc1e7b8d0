"""A finished match's results as read back from its replay log (replays/FORMAT.md).

Both services that rate matches (the ladder and the standing arena) read them here, and the bots
that played each seat (`read_hellos`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


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


def read_results(path: Path, seats: int) -> tuple[list[DealRow], list[FaultRow], list[int]]:
    """The deals, the faults and each seat's decisions of a finished match, from its replay log
    (replays/FORMAT.md)."""
    deals: list[DealRow] = []
    faults: list[FaultRow] = []
    decisions = [0] * seats
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            line = json.loads(text)
            kind = line["type"]
            if kind == "deal":
                record = line["record"]
                result = record["result"]
                acted = {action["seat"] for action in record["actions"]}
                deals.append(
                    DealRow(
                        deal=line["deal"],
                        points=list(result["deltas"]),
                        card_points=list(result["card_points"]),
                        annulled=bool(result["annulled"]),
                        active=[seat in acted for seat in range(seats)],
                    )
                )
            elif kind == "action":
                decisions[line["seat"]] += 1
                if "fault" in line:
                    fault = line["fault"]
                    faults.append(
                        FaultRow(line["seat"], fault["kind"], fault["detail"], line["deal"], line["step"])
                    )
            elif kind == "fault":
                faults.append(FaultRow(line["seat"], line["kind"], line["detail"]))
    return deals, faults, decisions


def read_hellos(path: Path, seats: int) -> list[tuple[str, str]]:
    """Per seat, the (bot_name, bot_version) of the last Hello the referee accepted, from the
    `hello` lines of a replay log (replays/FORMAT.md, version 2 on); ("", "") for a seat that never
    said Hello, and for every seat of a version 1 log, which has no hello lines."""
    bots = [("", "")] * seats
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if '"hello"' not in text:  # rare: a few lines a match; the rest is not parsed
                continue
            line = json.loads(text)
            if not isinstance(line, dict) or line.get("type") != "hello":
                continue
            seat = line.get("seat")
            if isinstance(seat, int) and 0 <= seat < seats:
                bots[seat] = (str(line.get("bot_name", "")), str(line.get("bot_version", "")))
    return bots
