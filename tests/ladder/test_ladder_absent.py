"""A match whose seat the referee's substitute mostly played because its bot was not there (it
started too late, or never came) is not evidence: `arena ladder run` does not record it, says
so, and plays it again, a bounded number of times (docs/LADDER.md, "Matches that are not
evidence"). Real ladder runs, real bot processes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from support import arena
from support.ladder import RANDOM, RANDOM_2, ladder_file

# Sleeps before it starts the SDK's random bot: on its first start only (LATE=once), or always.
LATE_BOT = """\
import os, runpy, time
from pathlib import Path

marker = Path(os.environ["LATE_MARKER"])
if os.environ["LATE"] == "always" or not marker.exists():
    marker.touch()
    time.sleep(float(os.environ["LATE_S"]))
runpy.run_module("arena_bot.random_bot", run_name="__main__")
"""


def late_ladder(directory: Path, late: str, start_timeout_ms: int, late_s: float) -> Path:
    (directory / "late_bot.py").write_text(LATE_BOT)
    bot = (
        '[[bots]]\nname = "late"\ncommand = "{python} late_bot.py"\n'
        f'env = {{ LATE = "{late}", LATE_S = "{late_s}", LATE_MARKER = "{directory / "started"}" }}\n'
    )
    # The start waits `start_timeout_ms` for the bots' Hellos; then the substitute plays an
    # absent seat. The two other bots play in the referee's process: they are always there.
    head = "seed = 5\ndeal_sets = 1\ndeals = 1\nconcurrency = 1\nreferees = 1\n"
    head += f"[faults]\nreconnect_grace_ms = 300\nstart_timeout_ms = {start_timeout_ms}\n"
    others = [b.replace("{python} -m arena_bot.random_bot", "inprocess:random") for b in (RANDOM, RANDOM_2)]
    return ladder_file(directory, head, bot, *others)


def not_counted(stderr: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line["event"].startswith("match not counted")]


def test_a_bot_that_starts_late_once_has_its_match_played_again_and_counted(tmp_path: Path) -> None:
    # 4 s for a Python bot's start: ample, unless the machine is starved (as the test's point is).
    path = late_ladder(tmp_path, "once", 4000, 5)
    done = arena("ladder", "run", path, "--max-matches", "1", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    [line] = not_counted(done.stderr)
    assert line["match"] == "0:late,random,random-2" and line["bots"] == ["late"]
    assert "played again" in line["event"]
    with sqlite3.connect(tmp_path / "ladder.sqlite") as conn:
        assert conn.execute("SELECT key FROM matches").fetchall() == [("0:late,random,random-2",)]
        assert conn.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0  # the second play
    # The play not counted left its replay: every decision of the late seat a disconnect fault.
    replays = sorted((tmp_path / "ladder-replays").glob("*.jsonl"))
    assert len(replays) == 2
    voided = next(p for p in replays if p.stem + ".jsonl" == line["replay"])
    actions = [json.loads(text) for text in voided.read_text().splitlines()]
    late = [a for a in actions if a["type"] == "action" and a["seat"] == 0]
    assert late and sum(a.get("fault", {}).get("kind") == "disconnect" for a in late) > len(late) / 2


def test_a_bot_that_never_comes_in_time_leaves_its_match_unplayed_after_three_plays(tmp_path: Path) -> None:
    path = late_ladder(tmp_path, "always", 1000, 2)
    done = arena("ladder", "run", path, "--max-matches", "1", "--no-progress")
    assert done.returncode == 1, done.stderr[-3000:]  # as for a match that failed: tried next run
    lines = not_counted(done.stderr)
    assert [line["match"] for line in lines] == ["0:late,random,random-2"] * 3
    assert all(line["bots"] == ["late"] for line in lines)
    assert "stays unplayed" in lines[-1]["event"]
    with sqlite3.connect(tmp_path / "ladder.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 0
    standings = arena("ladder", "standings", tmp_path / "ladder.sqlite", "--json")
    assert json.loads(standings.stdout)["matches_done"] == 0
