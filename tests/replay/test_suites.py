"""Position suites: `arena replay analyze --suite` exports a seat's costliest decisions, and
`arena replay suite` asks a bot every position again, over the real protocol.

The sample grosstarock replay's seat 1 (the random example bot) announced a Vole it could not make
at step 6 of deal 0: the search's costliest decision of the seat. The heuristic bot, asked again,
passes there (good); the planted-blunder bot (tests/bots/blunder_bot.py) announces the Vole again
(bad), which fails the command, as a bot author's CI would see it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import BOTS

from arena.replay.suite import SuiteError, read_suite
from arena.replay.verify import verify_replay
from arena.server.local import EXAMPLE_BOTS

SAMPLE = Path(__file__).resolve().parents[2] / "replays" / "samples" / "grosstarock.jsonl"
BLUNDER = f"{shlex.quote(sys.executable)} {shlex.quote(str(BOTS / 'blunder_bot.py'))}"
VOLE = "909e237a1a08e86d:0:6"  # the sample match's id, deal 0, step 6


def arena(*args: str | Path | int, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    directory = tmp_path_factory.mktemp("suites")
    replay = directory / SAMPLE.name
    shutil.copy(SAMPLE, replay)
    suite = directory / "mistakes.json"
    proc = arena(
        "replay", "analyze", replay, "--seat", 1, "--iterations", 3, "--jobs", 1, "--suite", suite,
        "--suite-size", 3,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return replay, suite, proc.stdout


def test_the_suite_holds_the_seats_costliest_decisions(exported: tuple[Path, Path, str]) -> None:
    replay_path, suite, stdout = exported
    assert f"{suite}: 3 positions of seat 1 (3 in the suite)" in stdout
    positions = read_suite(suite)
    assert positions[0].id == VOLE
    assert [p.loss for p in positions] == sorted((p.loss for p in positions), reverse=True)
    replay = verify_replay(replay_path, collect=True)
    for position in positions:
        deal, step = position.source["deal"], position.source["step"]
        state, decision = replay.position(deal, step)
        assert position.state.history == state.history and position.state.deck == state.deck
        assert position.played == str(decision.action) and position.seat == decision.seat == 1
        assert position.loss == position.loss_of(position.played) > 0
        assert position.good(position.best)
    assert positions[0].played == "announce vole" and positions[0].best == "pass"


def _answers(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {str(row["id"]): row for row in rows}


def test_a_bot_that_learned_passes_where_the_blunder_fails(exported: tuple[Path, Path, str]) -> None:
    _, suite, _ = exported
    fixed = arena("replay", "suite", suite, "--bot", EXAMPLE_BOTS["heuristic"], "--json")
    answers = _answers(fixed)
    assert len(answers) == 3, fixed.stdout + fixed.stderr
    assert answers[VOLE]["good"] is True and answers[VOLE]["bot"] == {
        "outcome": "answered",
        "action": "pass",
        "think_ms": answers[VOLE]["bot"]["think_ms"],  # type: ignore[index]
    }
    # The exit status says whether every position was answered well.
    assert fixed.returncode == (0 if all(a["good"] for a in answers.values()) else 1), fixed.stdout

    again = arena("replay", "suite", suite, "--bot", BLUNDER)
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"BAD  {VOLE} seat 1: now announces vole (loss " in again.stdout, again.stdout
    assert again.stdout.splitlines()[-1].endswith("positions answered well (tolerance 0 points)")


def test_append_keeps_a_position_once(exported: tuple[Path, Path, str], tmp_path: Path) -> None:
    replay, suite, _ = exported
    copy = tmp_path / "suite.json"
    shutil.copy(suite, copy)
    proc = arena(
        "replay", "analyze", replay, "--seat", 1, "--iterations", 3, "--jobs", 1, "--suite", copy,
        "--suite-size", 4, "--append", "-o", tmp_path / "a.analysis.json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"{copy}: 4 positions of seat 1 (4 in the suite)" in proc.stdout
    assert [p.id for p in read_suite(copy)][:3] == [p.id for p in read_suite(suite)]


def test_bad_input_is_one_clear_line(exported: tuple[Path, Path, str], tmp_path: Path) -> None:
    replay, suite, _ = exported
    proc = arena("replay", "analyze", replay, "--iterations", 1, "--suite", tmp_path / "x.json")
    assert proc.returncode == 2 and "--suite needs --seat" in proc.stderr
    data = json.loads(suite.read_text(encoding="utf-8"))
    data["positions"][0]["seat"] = 0
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SuiteError, match="position 0: its deal record does not leave seat 0 to act"):
        read_suite(damaged)
    proc = arena("replay", "suite", damaged, "--bot", EXAMPLE_BOTS["heuristic"])
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "position 0" in proc.stderr
    (tmp_path / "other.json").write_text('{"format": "arena-analysis"}', encoding="utf-8")
    proc = arena("replay", "suite", tmp_path / "other.json", "--bot", EXAMPLE_BOTS["heuristic"])
    assert proc.returncode == 1 and "not a position suite" in proc.stderr
