"""A referee server with scripted bots: the match configuration, its replay and faults."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from arena.engine import find_variant
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from support import BOTS

SCRIPTED = BOTS / "scripted_bot.py"


FAST = TimeControl(per_decision_ms=5_000, bank_ms=5_000, increment_ms=0)


def bot(behaviour: str = "random") -> str:
    return (
        f"env BEHAVIOUR={shlex.quote(behaviour)} {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))}"
    )


def config(variant: str, deals: int = 1, seed: int = 1, **kwargs: Any) -> MatchConfig:
    options = kwargs.pop("options", {})
    v = find_variant(variant, options)
    names = tuple(f"bot{i}" for i in range(v.seats))
    return MatchConfig(
        variant=v, deals=deals, seed=seed, seat_names=names, **{"time_control": FAST, **kwargs}
    )


def read_replay(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def faults_in(lines: list[dict[str, Any]]) -> list[tuple[int, str]]:
    found = [
        (line["seat"], line["fault"]["kind"])
        for line in lines
        if line["type"] == "action" and "fault" in line
    ]
    found += [(line["seat"], line["kind"]) for line in lines if line["type"] == "fault"]
    return found
