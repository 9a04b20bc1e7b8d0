"""`python -m benchmarks sandbox`, briefly, as a real subprocess: what it prints, never how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.sandbox import require_sandbox

ROOT = Path(__file__).resolve().parents[2]


def test_the_sandbox_bench_prints_both_sides_their_ratio_and_start_times() -> None:
    require_sandbox()
    args = ["sandbox", "--rounds", "1", "--matches", "1", "--deals", "1", "--bare", "2", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    inside, outside = measured["inside"], measured["outside"]
    for side in (inside, outside):
        assert side["decisions_per_s"] > 0 and len(side["round_rates"]) == 1
        assert side["start_s_median"] > 0
    assert measured["ratio_inside_outside"] == round(
        inside["decisions_per_s"] / outside["decisions_per_s"], 3
    )
    assert 0 < measured["bare_sandbox_start_stop_s_median"] < 30
