"""The same seeded ladder with in-process bots and with bot processes over gRPC: the same match
results, replays (times aside) and standings (`arena ladder run` as a real process)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from support import arena
from support.ladder import ladder_file

BOTS = {
    "processes": ("{python} -m arena_bot.heuristic_bot", "{python} -m arena_bot.random_bot"),
    "inprocess": ("inprocess:heuristic", "inprocess:random"),
}


def run(directory: Path, kind: str, head: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(standings, match rows by key, normalised replays by key) of the ladder played one way."""
    directory.mkdir()
    heuristic, random = BOTS[kind]
    bots = [
        f'[[bots]]\nname = "{name}"\ncommand = "{command}"\n'
        for name, command in (("heuristic", heuristic), ("random", random), ("random-2", random))
    ]
    path = ladder_file(directory, head, *bots)
    done = arena("ladder", "run", path, "--json")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(directory / "ladder.sqlite") as db:
        rows = db.execute("SELECT key, scores, termination, decisions, replay FROM matches").fetchall()
    matches = {key: (scores, termination, decisions) for key, scores, termination, decisions, _ in rows}
    replays = {key: replay_lines(directory / "ladder-replays" / name) for key, *_, name in rows}
    return json.loads(done.stdout), matches, replays


def replay_lines(path: Path) -> list[Any]:
    lines = []
    for text in path.read_text().splitlines():
        line = json.loads(text)
        for key in ("think_ms", "match_id", "server_version"):
            line.pop(key, None)
        if line["type"] == "deal":
            for action in line["record"]["actions"]:
                action.pop("think_ms", None)
        lines.append(line)
    hellos = sorted((line for line in lines if line["type"] == "hello"), key=lambda line: line["seat"])
    return [line for line in lines if line["type"] != "hello"] + hellos  # bots dial in in any order


def test_the_same_seeded_ladder_in_process_and_over_grpc_gives_the_same_results(tmp_path: Path) -> None:
    head = "seed = 5\ndeal_sets = 2\ndeals = 2\n"
    # Over gRPC one match at a time with persistent processes; in-process two at a time on two
    # referee processes: the matches are the same whatever plays them.
    grpc = run(
        tmp_path / "grpc", "processes", head + 'concurrency = 1\nreferees = 1\nprocesses = "persistent"\n'
    )
    inprocess = run(tmp_path / "inprocess", "inprocess", head + "concurrency = 2\nreferees = 2\n")
    assert len(inprocess[1]) == 12
    assert inprocess[1] == grpc[1]
    assert inprocess[2] == grpc[2]

    # The standings, ratings included (replayed in the plan's order); how the bots ran is not in them.
    assert inprocess[0] == grpc[0]
    with sqlite3.connect(tmp_path / "inprocess" / "ladder.sqlite") as db:
        modes = db.execute("SELECT bot, mode, COUNT(*) FROM processes GROUP BY bot, mode").fetchall()
    assert sorted(modes) == [(name, "in-process", 12) for name in ("heuristic", "random", "random-2")]


def test_in_process_and_over_grpc_one_at_a_time_give_the_same_ratings(tmp_path: Path) -> None:
    head = "seed = 9\ndeal_sets = 1\ndeals = 1\nconcurrency = 1\nreferees = 1\n"
    grpc = run(tmp_path / "grpc", "processes", head + 'processes = "persistent"\n')
    inprocess = run(tmp_path / "inprocess", "inprocess", head)
    ratings = [{k: bot[k] for k in ("name", "rank", "mu", "sigma")} for bot in grpc[0]["bots"]]
    assert [{k: bot[k] for k in ("name", "rank", "mu", "sigma")} for bot in inprocess[0]["bots"]] == ratings
