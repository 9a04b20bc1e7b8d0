"""Hostile bots in the sandbox, in real matches on one real server (`play_matches(sandbox=…)`): each
is contained, faulted with a named reason in its match's replay, and the other matches carry on.

One run plays every match at once (one deal each; the other seats are in-process bots); the tests
read what it left: replays, bot logs, the processes still running."""

from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from support.sandbox import bot_command, bot_copy, require_sandbox

from arena.engine import find_variant
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from arena.replay.verify import verify_replay
from arena.sandbox import Limits, MiB
from arena.server.local import PlayResult, play_matches
from arena.server.sandboxed import Sandboxing

CLOCK = TimeControl(per_decision_ms=1_000, bank_ms=1_000)
SLEEPY_CLOCK = TimeControl(per_decision_ms=200, bank_ms=0)  # its wall-clock backstop: 1.6 s
LIMITS = Limits(memory_bytes=192 * MiB, pids=48, scratch_bytes=8 * MiB, output_bytes=64 * 1024)
BEHAVIOURS = ("probe", "fork", "memory", "print", "sleep", "linger", "play")


@dataclass
class Run:
    directory: Path
    results: dict[str, PlayResult]
    listener_accepted: list[str]
    secret: str
    store: Path
    linger_seconds: str

    def replay(self, behaviour: str) -> list[dict[str, Any]]:
        path = self.results[behaviour].runner.replay_path
        assert path is not None, f"the {behaviour} match left no complete replay"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def log(self, behaviour: str) -> str:
        runner = self.results[behaviour].runner
        return (self.directory / "replays" / "bot-logs" / f"{runner.match_id}-seat0.log").read_text()

    def crash(self, behaviour: str) -> str:
        """The detail of seat 0's `crashed` connection line."""
        lines = [line for line in self.replay(behaviour) if line.get("event") == "crashed"]
        assert lines, f"the {behaviour} bot's seat never crashed"
        return str(lines[0]["detail"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    require_sandbox()
    directory = tmp_path_factory.mktemp("sandbox-matches")
    secret = secrets.token_hex(16)
    os.environ["ARENA_SANDBOX_TEST_SECRET"] = secret  # in the server's environment, never the bot's
    store = directory / "arena.db"
    store.write_text(f"the store {secret}")
    linger_seconds = str(3000 + secrets.randbelow(1000))
    bots = {b: bot_copy(directory / "bots", b) for b in BEHAVIOURS}
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    probe_reads = ":".join([str(store), str(bots["fork"]), "/proc/1/environ", "/etc/shadow"])
    commands = {
        "probe": bot_command(bots["probe"], "probe", PROBE_PORT=str(port), PROBE_READ=probe_reads),
        "linger": bot_command(bots["linger"], "linger", LINGER_SECONDS=linger_seconds),
        # Sleeping through its first decision only: each decision slept through costs the backstop's time.
        "sleep": bot_command(bots["sleep"], "sleep:5"),
        **{b: bot_command(bots[b], b) for b in ("fork", "memory", "print", "play")},
    }
    variant = find_variant("grosstarock")
    jobs = []
    for seed, behaviour in enumerate(BEHAVIOURS):
        clock = SLEEPY_CLOCK if behaviour == "sleep" else CLOCK
        config = MatchConfig(variant, 1, seed, ("hostile", "east", "west"), clock, reconnect_grace_s=1.0)
        jobs.append((config, [commands[behaviour], "inprocess:random", "inprocess:random"]))
    sandboxing = Sandboxing(limits=LIMITS)
    try:
        played = trio.run(play_matches, jobs, directory / "replays", "127.0.0.1", False, sandboxing)
        accepted = []
        try:
            while True:
                accepted.append(str(listener.accept()[1]))
        except OSError:
            pass
    finally:
        listener.close()
        del os.environ["ARENA_SANDBOX_TEST_SECRET"]
    return Run(directory, dict(zip(BEHAVIOURS, played, strict=True)), accepted, secret, store, linger_seconds)


def test_a_probing_bot_reaches_nothing_but_the_referee(run: Run) -> None:
    log = run.log("probe")
    assert run.listener_accepted == [] and "TCP refused" in log and "TCP connected" not in log
    for path in (
        run.store,
        run.directory / "bots" / "fork" / "bot.py",
        "/etc/shadow",
    ):  # the store, another bot's code
        assert f"NOREAD {path}: No such file or directory" in log, path
    assert run.secret not in log  # not in its environment, nor in any process's it can see
    assert "MYENV" in log and "ARENA_TOKEN" in log  # what it was given, and only that
    assert "WROTE" not in log and log.count("NOWRITE") == 2 and "Read-only file system" in log
    full = next(line for line in log.splitlines() if line.startswith(("FULL", "FILLED")))
    assert full.startswith("FULL after") and int(full.split()[2]) <= LIMITS.scratch_bytes
    # It then played its match out, on a CPU clock, and the replay checks.
    replay = run.replay("probe")
    assert replay[0]["cpu_clock"]["seats"] == [0] and replay[-1]["termination"] == "completed"
    assert run.results["probe"].runner.replay_path is not None
    assert verify_replay(run.results["probe"].runner.replay_path).problem is None


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("fork", "the sandbox ended: pids: over its limit of 48 processes"),
        ("memory", "the sandbox ended: memory: over its memory limit of 192 MiB"),
        ("print", f"the sandbox ended: output: more than {64 * 1024} bytes of output"),
    ],
)
def test_a_hostile_bot_is_stopped_and_its_seat_faulted_with_the_reason(
    run: Run, behaviour: str, reason: str
) -> None:
    assert run.crash(behaviour).startswith(reason)
    replay = run.replay(behaviour)
    assert replay[-1]["termination"] == "completed"  # substitutes played the seat to the end
    faults = [line["fault"]["kind"] for line in replay if line.get("seat") == 0 and "fault" in line]
    assert faults and set(faults) <= {"crash", "timeout"}
    if behaviour == "print":
        assert len(run.log("print").encode()) < 64 * 1024 + 200


def test_a_sleeping_bot_times_out_at_the_wall_clock_backstop(run: Run) -> None:
    replay = run.replay("sleep")
    first = next(line for line in replay if line.get("seat") == 0 and line["type"] == "action")
    assert first["fault"]["kind"] == "timeout"
    assert "wall-clock backstop" in first["fault"]["detail"]
    assert first["cpu_ms"] < 200 and first["think_ms"] >= 3 * 200 + 1_000
    assert replay[-1]["termination"] == "completed"


def test_no_process_outlives_its_match(run: Run) -> None:
    assert "LINGER started" in run.log("linger")
    assert run.replay("linger")[-1]["termination"] == "completed"
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        mine = any(str(run.directory).encode() in part for part in cmdline)
        if cmdline[:2] == [b"sleep", run.linger_seconds.encode()] or mine:
            left.append(pid)
    assert left == []


def test_the_other_matches_carry_on(run: Run) -> None:
    replay = run.replay("play")
    assert replay[-1]["termination"] == "completed" and replay[-1]["faults"] == {"0": 0, "1": 0, "2": 0}
    actions = [line for line in replay if line["type"] == "action" and line["seat"] == 0]
    assert actions and all(isinstance(line["cpu_ms"], int) for line in actions)
    for behaviour in BEHAVIOURS:
        assert run.results[behaviour].runner.termination == "completed", behaviour
