"""An offline ladder with `sandbox = true` (the organiser's case: strangers' bots on equal compute),
through `arena ladder run` as a user runs it: the sandboxed bot plays every match from one
persistent sandbox, its seats on CPU clocks, and every replay verifies."""

from __future__ import annotations

import json
from pathlib import Path

from support import arena
from support.sandbox import require_sandbox

from arena.replay.verify import verify_replay

LADDER = """\
variant = "grosstarock"
deal_sets = 1
deals = 1
seating = "rotations"
concurrency = 1
[[bots]]
name = "boxed"
command = "{python} -m arena_bot.random_bot"
sandbox = true
processes = "persistent"
[[bots]]
name = "east"
command = "inprocess:random"
[[bots]]
name = "west"
command = "inprocess:random"
"""


def test_a_ladders_sandboxed_bot_plays_on_cpu_clocks(tmp_path: Path) -> None:
    require_sandbox()
    ladder = tmp_path / "boxed.toml"
    ladder.write_text(LADDER)
    done = arena("ladder", "run", ladder, "--no-progress", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    replays = sorted((tmp_path / "boxed-replays").glob("*.jsonl"))
    assert len(replays) == 3  # one table, three rotations
    for path in replays:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        boxed = lines[0]["seats"].index("boxed")
        assert lines[0]["cpu_clock"]["seats"] == [boxed]
        assert lines[-1]["termination"] == "completed" and lines[-1]["faults"][str(boxed)] == 0
        assert all("cpu_ms" in line for line in lines if line["type"] == "action" and line["seat"] == boxed)
        assert verify_replay(path).problem is None
    logs = sorted((tmp_path / "boxed-replays" / "bot-logs").glob("persistent-boxed-*.log"))
    assert len(logs) == 1  # one sandbox played the three matches
