"""Clocks fair to distant bots: a real bot process behind a delaying TCP proxy (tests/delay_proxy.py)
plays the real server. Without a latency allowance its network round trip drains its bank until it
times out; with one, the same bot on the same network finishes the match without a fault, and the
replay records each decision's round-trip estimate and allowance."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio
from delay_proxy import delay_proxy
from support.server import bot

from arena.engine import find_variant
from arena.referee.runner import MatchConfig, MatchRunner
from arena.referee.seat import RTT_MIN_SAMPLES, RoundTrip, TimeControl
from arena.replay.html import replay_data
from arena.replay.verify import verify_replay
from arena.server.app import serve
from arena.server.local import launch_bot

DELAY_MS = 100  # each way: a round trip of at least 200 ms for seat 0
# 150 ms per decision and a 600 ms bank: the slow seat overruns by at least 50 ms a decision, and
# has more than 20 decisions in the deal; with the allowance, a stall of half a second still fits.
PER_DECISION_MS, BANK_MS = 150, 600


async def play_behind_proxy(replay_dir: Path, allowance_ms: int) -> MatchRunner:
    """One grosstarock deal; seat 0's bot dials through the proxy, the others directly."""
    variant = find_variant("grosstarock")
    config = MatchConfig(
        variant,
        deals=1,
        seed=5,
        seat_names=("far", "near1", "near2"),
        time_control=TimeControl(PER_DECISION_MS, BANK_MS, 0, latency_allowance_ms=allowance_ms),
        fault_policy="forfeit",
    )
    async with trio.open_nursery() as nursery:
        hub, port = await nursery.start(serve, "127.0.0.1", 0, replay_dir)
        proxy_port = await nursery.start(delay_proxy, port, DELAY_MS)
        runner = hub.create_match(config)
        for seat in range(variant.seats):
            address = f"127.0.0.1:{proxy_port if seat == 0 else port}"
            nursery.start_soon(launch_bot, runner, seat, runner.seats[seat].token, bot("random"), address)
        with trio.fail_after(120):
            await runner.done.wait()
        nursery.cancel_scope.cancel()
    return runner


def action_lines(runner: MatchRunner) -> list[dict[str, Any]]:
    assert runner.replay_path is not None
    lines = [json.loads(line) for line in runner.replay_path.read_text().splitlines()]
    return [line for line in lines if line["type"] == "action"]


def test_a_distant_bot_times_out_without_the_allowance_and_not_with_it(tmp_path: Path) -> None:
    without = trio.run(play_behind_proxy, tmp_path / "without", 0)
    assert without.termination == "forfeit" and without.forfeited == 0
    assert [f.kind for f in without.seats[0].faults] == ["timeout"]
    assert all("rtt_ms" not in line for line in action_lines(without))  # off: the lines as before

    allowed = trio.run(play_behind_proxy, tmp_path / "with", 500)
    assert allowed.termination == "completed"
    assert [s.faults for s in allowed.seats] == [[], [], []]
    lines = action_lines(allowed)
    far = [line for line in lines if line["seat"] == 0]
    near = [line for line in lines if line["seat"] != 0]
    # No estimate before RTT_MIN_SAMPLES answers, and so no allowance.
    assert all(line["rtt_ms"] is None and line["allowance_ms"] == 0 for line in far[:RTT_MIN_SAMPLES])
    estimates = [line["rtt_ms"] for line in far[RTT_MIN_SAMPLES:]]
    assert estimates and all(2 * DELAY_MS <= rtt < 2 * DELAY_MS + 250 for rtt in estimates)
    # The allowance used is the estimate, never more than the decision took.
    for line in far[RTT_MIN_SAMPLES:]:
        assert line["allowance_ms"] == min(line["rtt_ms"], line["think_ms"])
    assert all(line["rtt_ms"] is None or line["rtt_ms"] < 2 * DELAY_MS for line in near)

    assert allowed.replay_path is not None
    assert verify_replay(allowed.replay_path).ok
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "show", str(allowed.replay_path), "--deal", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "latency allowance up to 500 ms per decision" in shown.stdout
    assert f"rtt {estimates[0]} ms" in shown.stdout and "no estimate yet" in shown.stdout

    # The HTML page carries the same per decision (arena/replay/viewer.py prints it beside the think time).
    data = replay_data(verify_replay(allowed.replay_path, collect=True))
    assert data["clock"]["latencyAllowance"] == 500
    decisions = [frame["decision"] for frame in data["deals"][0]["frames"] if "decision" in frame]
    assert [(d["latency"]["rtt"], d["latency"]["allowed"]) for d in decisions] == [
        (line["rtt_ms"], line["allowance_ms"]) for line in lines
    ]
    assert all(d["latency"]["charged"] == d["think"] - d["latency"]["allowed"] for d in decisions)


def test_the_round_trip_is_the_windowed_minimum_of_several_samples() -> None:
    rtt = RoundTrip()
    for sample in (250.0, 180.5)[: RTT_MIN_SAMPLES - 1]:
        rtt.add(sample)
    assert rtt.estimate_ms() is None  # too few samples to trust
    rtt.add(900.0)  # a slow answer raises nothing
    assert rtt.estimate_ms() == 180
    for _ in range(16):
        rtt.add(300.0)  # the window moves on: the old minimum is forgotten
    assert rtt.estimate_ms() == 300
