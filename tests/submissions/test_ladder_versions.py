"""An offline ladder that names a submitted version (docs/SUBMIT.md, docs/LADDER.md), through the
command line as an organiser runs it: the Python example bot submitted to a SQLite store with
`arena bot submit`, built and tested with `arena bot build`, then `arena ladder run` plays that
version's built tree in the sandbox on a CPU clock, as the standing arena hosts it."""

from __future__ import annotations

import json
from pathlib import Path

from support import arena
from support.sandbox import require_sandbox
from support.submissions import example_submissions

from arena.ladder.config import LadderFileError, parse_ladder
from arena.replay.verify import verify_replay
from arena.standing.store import Store

LADDER = """\
variant = "grosstarock"
deal_sets = 1
deals = 1
seating = "rotations"
concurrency = 1
store = "arena.db"
[[bots]]
name = "submitted"
version = "sub@1"
processes = "{processes}"
[[bots]]
name = "east"
command = "inprocess:random"
[[bots]]
name = "west"
command = "inprocess:random"
"""


def test_a_ladder_plays_a_submitted_version_in_the_sandbox(tmp_path: Path) -> None:
    require_sandbox()
    store = Store(str(tmp_path / "arena.db"))
    try:
        _bot, token = store.register_bot("sub", ["grosstarock"])
    finally:
        store.close()
    source = example_submissions(tmp_path / "bots")["python"]
    db = tmp_path / "arena.db"
    work = tmp_path / "work"
    ladder = tmp_path / "versions.toml"
    ladder.write_text(LADDER.format(processes="per-match"))

    # Not active yet (building): the ladder refuses it before anything runs.
    submitted = arena("bot", "submit", source, "--token", token, "--store", db)
    assert submitted.returncode == 0, submitted.stderr
    early = arena("ladder", "run", ladder, "--no-progress", "--work-dir", work)
    assert early.returncode != 0
    assert "sub@1 is building: only an active version plays" in early.stderr
    assert not (tmp_path / "versions.sqlite").exists()

    built = arena("bot", "build", "--store", db, "--work-dir", work, timeout=120)
    assert built.returncode == 0, built.stderr[-3000:]
    listed = arena("bot", "versions", "--token", token, "--store", db, "--json")
    assert [v["state"] for v in json.loads(listed.stdout)["versions"]] == ["active"]

    done = arena("ladder", "run", ladder, "--no-progress", "--work-dir", work, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    replays = sorted((tmp_path / "versions-replays").glob("*.jsonl"))
    assert len(replays) == 3  # one table, three rotations
    for path in replays:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        seat = lines[0]["seats"].index("submitted")
        assert lines[0]["cpu_clock"]["seats"] == [seat]
        assert lines[-1]["termination"] == "completed" and lines[-1]["faults"][str(seat)] == 0
        assert all("cpu_ms" in line for line in lines if line["type"] == "action" and line["seat"] == seat)
        assert verify_replay(path).problem is None
    # Its tree is the one `arena bot build` unpacked; its output is in the ladder's bot logs.
    assert len(list((work / "trees").iterdir())) == 1
    assert len(list((tmp_path / "versions-replays" / "bot-logs").glob("*-submitted.log"))) == 3

    # Persistent: one sandbox of the version plays the three matches, each seat on its CPU clock.
    (tmp_path / "warm.toml").write_text(LADDER.format(processes="persistent"))
    warm = arena("ladder", "run", tmp_path / "warm.toml", "--no-progress", "--work-dir", work, timeout=120)
    assert warm.returncode == 0, warm.stderr[-3000:]
    warm_replays = sorted((tmp_path / "warm-replays").glob("*.jsonl"))
    assert len(warm_replays) == 3
    for path in warm_replays:
        first = json.loads(path.read_text().splitlines()[0])
        assert first["cpu_clock"]["seats"] == [first["seats"].index("submitted")]
        assert verify_replay(path).problem is None
    assert len(list((tmp_path / "warm-replays" / "bot-logs").glob("persistent-submitted-*.log"))) == 1

    # A version that does not exist is named in one line.
    (tmp_path / "other.toml").write_text(LADDER.format(processes="persistent").replace("sub@1", "sub@2"))
    missing = arena("ladder", "run", tmp_path / "other.toml", "--no-progress", "--work-dir", work)
    assert missing.returncode != 0 and "bot 'sub' has no version 2" in missing.stderr


def test_a_ladder_file_checks_the_versions_it_names(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    base = {"variant": "grosstarock"}
    others = [{"name": n, "command": "inprocess:random"} for n in ("b", "c")]
    good = parse_ladder({**base, "store": "s.db", "bots": [{"name": "a", "version": "x@3"}, *others]}, path)
    assert good.bots[0].version == "x@3" and good.bots[0].sandbox and not good.bots[0].remote
    assert good.store == str(tmp_path / "s.db") and good.referees == 1
    assert good.bots[0].identity()["version"] == "x@3"
    for bot, message in (
        ({"name": "a", "version": "x"}, "expected a submitted version as NAME@N, got 'x'"),
        ({"name": "a", "version": "x@1", "command": "y"}, "give exactly one of command"),
        ({"name": "a", "version": "x@1", "sandbox": False}, "a submitted version runs in the sandbox only"),
        ({"name": "a", "version": "x@1", "cwd": "."}, "cwd and env are for command bots"),
    ):
        try:
            parse_ladder({**base, "bots": [bot, *others]}, path)
        except LadderFileError as exc:
            assert message in str(exc), str(exc)
        else:
            raise AssertionError(f"{bot} was accepted")
