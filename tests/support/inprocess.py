"""Replays of in-process seats and of bot processes, compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def normalised(path: Path) -> list[Any]:
    """The replay's lines without what differs from run to run: times, the match id, the order of
    the Hellos (bots dial in when they are ready) and of a crashed bot's two connection lines (its
    stream's end and its process's end are seen in either order)."""
    lines: list[Any] = []
    for text in path.read_text().splitlines():
        line = json.loads(text)
        line.pop("think_ms", None)
        line.pop("match_id", None)
        line.pop("server_version", None)
        if line["type"] == "deal":
            for action in line["record"]["actions"]:
                action.pop("think_ms", None)
        lines.append(line)
    hellos = sorted((line for line in lines if line["type"] == "hello"), key=lambda line: line["seat"])
    rest = [line for line in lines if line["type"] != "hello"]
    out: list[Any] = [rest[0], *hellos]
    run: list[Any] = []
    for line in [*rest[1:], None]:
        if line is not None and line["type"] == "connection":
            run.append(line)
            continue
        out.extend(sorted(run, key=lambda line: line["event"]))
        run = []
        if line is not None:
            out.append(line)
    return out
