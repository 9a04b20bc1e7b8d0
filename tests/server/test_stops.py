"""Clean stops, through real processes: SIGINT and SIGTERM to `arena serve` while its standing
arena plays (no traceback, exit status 0, the cut-off match aborted in the store and left
`.jsonl.part`), and to every other command that runs matches for a while (`ladder run`,
`ladder ab`, `conformance`): 130 after Ctrl-C, 143 after SIGTERM, no traceback."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import BOTS, SDK, free_port, wait_for
from support.ladder import ladder_file

ARENA = [sys.executable, "-m", "arena"]

# Touches DIR/deciding.<pid> at its first request, then never answers: the job is mid-match.
HANGING_BOT = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from arena_bot.match import run_bot

    def decide(request):
        Path(sys.argv[1], f"deciding.{os.getpid()}").touch()
        time.sleep(600)

    run_bot(decide)
    """
)


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
    assert "CancelledError" not in stderr, stderr


def started(args: list[str], cwd: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **env},
    )  # fmt: skip


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; whatever is still running at its end is killed."""
    running: list[subprocess.Popen[str]] = []
    yield running
    for process in running:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=20)


def register(store: Path, *names: str) -> list[str]:
    tokens = []
    for name in names:
        done = subprocess.run(
            [*ARENA, "bots", "register", name, "--store", str(store)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        tokens.append(done.stdout.split()[-1])
    return tokens


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_arena_serve_stopped_mid_match_aborts_it_in_the_store_without_a_traceback(
    tmp_path: Path, processes: list[subprocess.Popen[str]], number: signal.Signals
) -> None:
    store = tmp_path / "arena.db"
    tokens = register(store, "alpha", "beta", "gamma")
    (tmp_path / "arena.toml").write_text(
        '[arena]\nvariants = ["grosstarock"]\ndeals = 30\ntick_s = 0.05\n'
        "per_decision_ms = 60000\nbank_ms = 60000\n"
    )
    port = free_port()
    server = started(
        [*ARENA, "serve", "--port", str(port), "--store", str(store), "--arena-config", "arena.toml",
         "--replay-dir", "replays", "--operator-token-file", "op.tok"],
        tmp_path,
    )  # fmt: skip
    processes.append(server)
    for token in tokens:  # bots that think a little: the match is in play when the signal comes
        env = {"ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_BOT_TOKEN": token, "DELAY": "0.05"}
        env["PYTHONPATH"] = os.pathsep.join([str(SDK), os.environ.get("PYTHONPATH", "")])
        processes.append(started([sys.executable, str(BOTS / "lobby_bot.py")], tmp_path, **env))

    def in_play() -> Path | None:
        for part in (tmp_path / "replays").glob("*.jsonl.part"):
            lines = [json.loads(line) for line in part.read_text().splitlines() if line.endswith("}")]
            if sum(1 for line in lines if line["type"] == "action") >= 5:
                return part
        return None

    part = wait_for(in_play, 60, "a match with a few actions played")
    match_id = part.name.removesuffix(".jsonl.part")
    server.send_signal(number)
    assert server.wait(timeout=20) == 0
    stderr = server.stderr.read() if server.stderr else ""
    no_traceback(stderr)
    assert all(json.loads(line) for line in stderr.splitlines()), stderr  # log lines only
    assert json.loads(stderr.splitlines()[-1])["event"] == "server stopped"
    assert part.is_file() and not part.with_suffix("").exists()
    assert "match_end" not in {json.loads(line)["type"] for line in part.read_text().splitlines()}
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT state, termination, abort_reason FROM matches WHERE match_id = ?", (match_id,)
        )
        [(state, termination, reason)] = rows.fetchall()
        assert (state, termination) == ("aborted", "aborted") and "stopped" in reason, reason
        assert db.execute("SELECT COUNT(*) FROM matches WHERE state = 'running'").fetchone() == (0,)


def _ladder(tmp_path: Path, bot: str) -> list[str]:
    hanging = "\n".join(f'[[bots]]\nname = "h{i}"\ncommand = {json.dumps(bot)}\n' for i in range(3))
    path = ladder_file(tmp_path, "seed = 1\ndeal_sets = 1\ndeals = 3\n", hanging)
    return ["ladder", "run", str(path), "--no-progress"]


def _ab(tmp_path: Path, bot: str) -> list[str]:
    return ["ladder", "ab", bot, bot, "--against", bot, bot, "--deals", "3", "--concurrency", "1",
            "--replay-dir", str(tmp_path / "ab-replays")]  # fmt: skip


def _conformance(tmp_path: Path, bot: str) -> list[str]:
    return ["conformance", "--bot", bot, "--variant", "grosstarock", "--per-decision-ms", "60000"]


@pytest.mark.parametrize(("number", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize(
    "command", [_ladder, _ab, _conformance], ids=["ladder-run", "ladder-ab", "conformance"]
)
def test_a_long_command_stopped_mid_match_exits_with_the_signals_status(
    tmp_path: Path,
    processes: list[subprocess.Popen[str]],
    command: object,
    number: signal.Signals,
    status: int,
) -> None:
    script, marks = tmp_path / "hanging_bot.py", tmp_path / "marks"
    script.write_text(HANGING_BOT)
    marks.mkdir()
    bot = shlex.join([sys.executable, str(script), str(marks)])
    args = command(tmp_path, bot)  # type: ignore[operator]
    job = started(
        [*ARENA, *args], tmp_path, PYTHONPATH=os.pathsep.join([str(SDK), os.environ.get("PYTHONPATH", "")])
    )
    processes.append(job)
    wait_for(lambda: job.poll() is not None or any(marks.glob("deciding.*")), 60, "a bot asked to decide")
    assert job.poll() is None, job.communicate()
    stopping = time.monotonic()
    job.send_signal(number)
    assert job.wait(timeout=30) == status, job.communicate()
    assert time.monotonic() - stopping < 25
    _stdout, stderr = job.communicate()
    no_traceback(stderr)
    for mark in marks.glob("deciding.*"):  # the bots were stopped with the job
        pid = int(mark.suffix[1:])
        wait_for(lambda pid=pid: not _alive(pid), 10, f"bot process {pid} to end")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
