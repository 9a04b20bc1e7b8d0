"""`arena play` as a bot author meets it: real subprocesses (`python -m arena play ...`), one deal.

What a seat did is in the summary (the bot's Hello name, faults by kind, rejected answers, its
log when something went wrong); a seat that faulted or never said Hello fails the command (exit
3) with the cause on one line of stderr; Ctrl-C and SIGTERM end it cleanly.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import BOTS

from arena.cli.play import seat_label

PYTHON = shlex.quote(sys.executable)
ARENA_PLAY = [sys.executable, "-m", "arena", "play", "--variant", "grosstarock"]


def bot(script: str, behaviour: str = "") -> str:
    command = f"{PYTHON} {shlex.quote(str(BOTS / script))}"
    return f"env BEHAVIOUR={shlex.quote(behaviour)} {command}" if behaviour else command


def play(replays: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA_PLAY, "--deals", "1", "--replay-dir", str(replays), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cause_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 3, no traceback, and stderr is the one line saying why, with every needle."""
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("arena play: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def log_named(line: str) -> Path:
    found = re.search(r"; log: (\S+\.log)", line)
    assert found, line
    return Path(found.group(1))


def seat_row(stdout: str, seat: int) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(f"  seat {seat} "))


def unplayed(replays: Path) -> None:
    """The match a bot that died before its Hello stopped: no replay, at most its `.jsonl.part`
    (the header and the crash: the match may be stopped before its log is opened), no deal."""
    assert not list(replays.glob("*.jsonl"))
    parts = list(replays.glob("*.jsonl.part"))
    assert len(parts) <= 1
    for part in parts:
        lines = [json.loads(text) for text in part.read_text().splitlines()]
        assert not [line for line in lines if line["type"] in ("deal_start", "action")]


def test_missing_bot_stops_the_match_at_once_and_says_why(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = play(tmp_path, "--bot", "nosuchbot", "--per-decision-ms", "100", "--deals", "3")
    line = cause_line(
        proc, "seat 0 (nosuchbot)", "never said Hello", "cannot start the bot 'nosuchbot': no such program"
    )
    assert "Errno" not in line and "match was stopped unplayed" in line
    assert proc.stdout == ""
    unplayed(tmp_path)
    assert time.monotonic() - started < 30


def test_bot_crashing_at_import_stops_the_match_and_names_its_log(tmp_path: Path) -> None:
    proc = play(tmp_path, "--bot", bot("import_error_bot.py"), "--per-decision-ms", "100", "--json")
    line = cause_line(proc, "seat 0 (", "import_error_bot.py", "never said Hello", "exited with status 1")
    assert "ImportError: this bot fails at import" in line  # the last line of the bot's traceback
    log = log_named(line)
    assert log.is_file()
    assert "Traceback" in log.read_text() and "ImportError" in log.read_text()
    summary = json.loads(proc.stdout)
    assert summary["stopped_seat"] == 0 and summary["exit_status"] == 3
    assert summary["termination"] == "aborted" and summary["problem"] == line.removeprefix("arena play: ")
    unplayed(tmp_path)


def test_every_answer_rejected_counts_and_faults(tmp_path: Path) -> None:
    rejecting = bot("scripted_bot.py", "illegal-always")
    proc = play(tmp_path, "--bot", rejecting, "--per-decision-ms", "500", "--json")
    line = cause_line(proc, "seat 0 (scripted)", "illegal", "invalid answers")
    summary: dict[str, Any] = json.loads(proc.stdout)
    assert {"match_id", "variant", "termination", "scores", "faults", "replay"} <= set(summary)
    seat = summary["seats"][0]
    assert seat["hello"] is True and seat["bot_name"] == "scripted"
    assert seat["label"] == "scripted_bot.py"
    assert set(seat["fault_kinds"]) == {"illegal"}
    assert summary["faults"][0] == seat["faults"] == seat["fault_kinds"]["illegal"] > 0
    assert seat["rejected"] >= 3 * seat["faults"]  # max_invalid answers rejected before each fault
    assert seat["log"] == str(log_named(line))
    assert summary["exit_status"] == 3 and summary["problem"] == line.removeprefix("arena play: ")
    assert all(other["faults"] == other["rejected"] == 0 for other in summary["seats"][1:])


def test_rejected_answers_alone_are_shown_but_pass(tmp_path: Path) -> None:
    proc = play(tmp_path, "--bot", bot("scripted_bot.py", "illegal"))  # illegal first, then legal
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    row = seat_row(proc.stdout, 0)
    rejected = re.search(r"rejected (\d+)", row)
    assert rejected and int(rejected.group(1)) > 0, row
    assert "faults 0" in row and "scripted" in row and "log: " in row


def test_one_bot_and_the_examples(tmp_path: Path) -> None:
    proc = play(tmp_path, "--bot", "random")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # The names the bots said in their Hello (the Python SDK sends the bot's name).
    names = [seat_row(proc.stdout, seat).split()[3] for seat in range(3)]
    assert names == ["random", "heuristic", "random"]
    for seat in range(3):
        row = seat_row(proc.stdout, seat)
        assert "faults 0" in row and "rejected 0" in row and "log:" not in row
    assert proc.stdout.splitlines()[-1].startswith("replay: ")


def test_json_of_a_clean_match(tmp_path: Path) -> None:
    proc = play(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert list(summary)[:6] == ["match_id", "variant", "termination", "scores", "faults", "replay"]
    assert summary["faults"] == [0, 0, 0] and summary["termination"] == "completed"
    assert [s["bot_name"] for s in summary["seats"]] == ["heuristic", "random", "random"]
    assert all(s["hello"] and s["log"] is None and s["fault_kinds"] == {} for s in summary["seats"])
    assert summary["exit_status"] == 0 and summary["problem"] is None
    assert Path(summary["replay"]).is_file()


def test_more_bots_than_seats_is_a_usage_error(tmp_path: Path) -> None:
    proc = play(tmp_path, *["--bot", "random"] * 4)
    assert proc.returncode == 2
    assert "3 seats, got 4 --bot" in proc.stderr
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_help_documents_the_exit_statuses() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    epilog = proc.stdout.split("exit status:", 1)[1]
    for code in ("0", "1", "2", "3", "130", "143"):
        assert re.search(rf"(^|\s){code}\s", epilog), code
    assert "random, heuristic" in proc.stdout


@pytest.mark.parametrize(("number", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_match_keeps_its_part_file(tmp_path: Path, number: signal.Signals, status: int) -> None:
    slow = f"env BROKEN=slow:play {PYTHON} {shlex.quote(str(BOTS / 'broken_bot.py'))}"
    process = subprocess.Popen(
        [*ARENA_PLAY, "--deals", "3", "--replay-dir", str(tmp_path), "--bot", slow],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not any('"deal_start"' in p.read_text() for p in tmp_path.glob("*.jsonl.part")):
            assert process.poll() is None and time.monotonic() < deadline, "the match never started"
            time.sleep(0.1)
        process.send_signal(number)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena play: interrupted ({number.name})"), stderr
    part = Path(lines[0].rsplit(" ", 1)[1])
    assert part.name.endswith(".jsonl.part") and part.is_file()
    assert not list(tmp_path.glob("*.jsonl"))
    assert stdout == ""


@pytest.mark.parametrize(
    ("command", "label"),
    [
        ("python mybot.py", "mybot.py"),
        ("python3 -u bots/mybot.py --level 3", "mybot.py"),
        ("/usr/bin/python3.12 -m arena_bot.random_bot", "random_bot"),
        ("env BEHAVIOUR=illegal python3 tests/bots/scripted_bot.py", "scripted_bot.py"),
        ("java -jar target/bot.jar", "bot.jar"),
        ("node bot.js", "bot.js"),
        ("./mybot --fast", "mybot"),
        ("nosuchbot", "nosuchbot"),
        ('python "unbalanced', 'python "unbalanced'),
    ],
)
def test_seat_labels(command: str, label: str) -> None:
    assert seat_label(command) == label
