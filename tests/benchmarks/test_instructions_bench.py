"""`python -m benchmarks instructions`, briefly, as a real subprocess: its counts and ratios, and a
clear error without valgrind. Counts are not times: the same deals give the same count."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "instructions", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (.ci/apt-packages)")
def test_the_instructions_bench_counts_each_workload_and_its_ratio_to_the_engine() -> None:
    done = bench("--deals", "1", "--json")
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    per_deal = measured["instructions_per_deal"]
    assert measured["deals"] == 1 and set(per_deal) == {"engine", "bare loop", "match", "ladder"}
    # Each does what the one before does and more: the bare loop plays the engine's deals with
    # the protocol's messages, the match adds the referee, the ladder (a deal set of 18 deals)
    # its matches' set-up and records; the count covers the deals alone.
    assert 0 < per_deal["engine"] < per_deal["bare loop"] < min(per_deal["match"], per_deal["ladder"])
    assert per_deal["engine"] < 50_000_000  # a deal, not the interpreter's start-up (hundreds of millions)
    for workload, ratio in measured["to_engine"].items():
        assert ratio == round(per_deal["engine"] / per_deal[workload], 4)


def test_without_valgrind_the_bench_says_so_in_one_line(tmp_path: Path) -> None:
    env = os.environ | {"PATH": str(tmp_path)}  # no valgrind on it
    done = bench("--deals", "1", env=env)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "python -m benchmarks instructions: valgrind is not installed (Debian's valgrind package)"
    )
