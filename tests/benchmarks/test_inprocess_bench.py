"""`python -m benchmarks inprocess`, briefly, as a real subprocess: what it prints, never how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from benchmarks.inprocess import bare_loop, play_random

ROOT = Path(__file__).resolve().parents[2]


def test_the_inprocess_bench_prints_its_rates_ratios_and_parts() -> None:
    args = [
        "inprocess",
        "--deal-sets",
        "1",
        "--deals",
        "1",
        "--seconds",
        "0.2",
        "--profile-deals",
        "2",
        "--json",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    rates = measured["example_deals_per_s"]
    assert set(rates) == {"persistent_grpc", "inprocess_1_referee", "inprocess_2_referees"}
    assert all(value > 0 for value in rates.values())
    assert measured["example_inprocess_2_to_grpc"] == round(
        rates["inprocess_2_referees"] / rates["persistent_grpc"], 3
    )
    cpu = measured["example_cpu_ms_per_deal"]
    assert set(cpu) == set(rates) and all(value > 0 for value in cpu.values())
    assert measured["example_grpc_cpu_to_inprocess_1"] == round(
        cpu["persistent_grpc"] / cpu["inprocess_1_referee"], 3
    )
    assert cpu["persistent_grpc"] > cpu["inprocess_1_referee"]  # the bots' processes are counted
    assert measured["random_inprocess_deals_per_s"] > 0 and measured["engine_random_deals_per_s"] > 0
    parts = measured["ms_per_deal_by_part"]
    assert set(parts) == {"total", "engine", "request building", "bot", "referee", "replay writer"}
    assert all(value >= 0 for value in parts.values()) and parts["total"] > 0
    assert abs(sum(parts.values()) - 2 * parts["total"]) < 0.01  # the parts add up to the whole
    bare_ms = measured["bare_loop_ms_per_deal"]
    assert bare_ms > 0  # its ratio to the engine: both rates, from the rounded figures printed
    expected = 1000 / bare_ms / measured["engine_random_deals_per_s"]
    assert measured["bare_loop_to_engine"] == pytest.approx(expected, rel=0.02, abs=0.002)


def test_the_bare_loop_plays_the_referees_match_move_for_move(tmp_path: Path) -> None:
    """The bare loop is a ceiling for the same work: the same actions as the match the referee
    plays with the same bots and seeds, line for line (think_ms aside)."""
    seconds, lines = bare_loop(2)
    assert seconds > 0
    trio.run(play_random, 2, tmp_path)
    [replay] = tmp_path.glob("*.jsonl")
    played = [json.loads(line) for line in replay.read_text().splitlines()]
    actions = [{**line, "think_ms": 0} for line in played if line["type"] == "action"]
    assert actions and [json.loads(line) for line in lines] == actions
