"""`python -m benchmarks instructions`: instructions per deal, counted by valgrind's callgrind.

A shared machine's speed drifts by a fifth within minutes, and a ratio of two timed runs drifts
with it; the instructions a deal executes do not: with the same deals, seeds and hash seed the
engine and the bare loop count the same to the instruction, and a match within about 2% (when it
yields to trio and how its replay's sync overlaps go by the clock). Three workloads, each in a
process of its own under callgrind, counted only while their deals play (imports, set-up and a
warm-up deal outside the count):

- `engine`: the engine's random play, the loop `arena bench engine` times (`fresh_deal`);
- `bare loop`: `benchmarks.inprocess.bare_loop`, the same deals as the match with only what a
  decision cannot skip while its bots receive the protocol's messages;
- `match`: `benchmarks.inprocess.play_random`, a `MatchRunner` with three in-process random bots
  (its replay written to a temporary folder);
- `ladder`: the ladder of those bots that `python -m benchmarks inprocess` times (one referee, two
  matches at a time, 3 deals a match), about as many deals in whole deal sets of 18, its server,
  database and per-match work included.

Printed: instructions per deal of each, and each to the engine's (the instruction analogues of
`bare_loop_to_engine` and `random_inprocess_to_engine` in `python -m benchmarks inprocess`).
An instruction is not a fixed time: cache misses and waits on the disk (the replay's fsync) are
not in the count, so it is the CPU work, not the wall clock. Needs valgrind (`.ci/apt-packages`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

WORKLOADS = ("engine", "bare loop", "match", "ladder")
LADDER_DEAL_SET = 18  # deals: 6 seatings of 3 bots, 3 deals a match
ROOT = Path(__file__).resolve().parents[1]


class ValgrindMissing(RuntimeError):
    """valgrind is not installed: one line."""


def _callgrind_control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(os.getpid())], check=True, capture_output=True)


def ladder_deal_sets(deals: int) -> int:
    return max(1, round(deals / LADDER_DEAL_SET))


def workload_deals(workload: str, deals: int) -> int:
    """The deals `workload` plays when asked for `deals` (a ladder plays whole deal sets)."""
    return ladder_deal_sets(deals) * LADDER_DEAL_SET if workload == "ladder" else deals


def play(workload: str, deals: int) -> None:
    """In a process under callgrind: set up, warm up, then play `deals` deals of `workload` with
    the count on."""
    import logging
    from functools import partial

    import trio

    from arena.engine import find_variant
    from arena.ladder.run import run_ladder
    from arena.logs import configure

    from .engine import fresh_deal
    from .inprocess import RANDOMS, bare_loop, ladder_config, play_random

    configure(logging.WARNING)  # as `python -m benchmarks inprocess` runs them

    with tempfile.TemporaryDirectory(prefix="arena-bench-instructions-") as tmp:
        if workload == "engine":
            step = fresh_deal(find_variant("grosstarock"))
            step()

            def run() -> None:
                for _ in range(deals):
                    step()

        elif workload == "bare loop":
            bare_loop(1)

            def run() -> None:
                bare_loop(deals)

        elif workload == "match":
            trio.run(play_random, 1, Path(tmp))

            def run() -> None:
                trio.run(play_random, deals, Path(tmp))

        else:

            def ladder(name: str, deal_sets: int) -> None:
                common = {"concurrency": 2, "deal_sets": deal_sets, "deals": 3}
                config = ladder_config(Path(tmp), name, RANDOMS, "inprocess", referees=1, **common)
                trio.run(partial(run_ladder, config))

            ladder("warm-up", 1)

            def run() -> None:
                ladder("counted", ladder_deal_sets(deals))

        _callgrind_control("--instr=on")
        run()
        _callgrind_control("--instr=off")


def count(workload: str, deals: int) -> int:
    """The instructions `deals` deals of `workload` executed (callgrind's total)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise ValgrindMissing("valgrind is not installed (Debian's valgrind package)")
    with tempfile.TemporaryDirectory(prefix="arena-bench-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "benchmarks.instructions",
            workload,
            str(deals),
        ]
        env = os.environ | {"PYTHONHASHSEED": "0"}  # the same dicts, the same count
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{workload} under callgrind failed: {done.stderr.strip()[-2000:]}")
        for line in out.read_text().splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"{workload}: callgrind wrote no totals")


def bench_instructions(deals: int) -> dict[str, Any]:
    per_deal = {w: round(count(w, deals) / workload_deals(w, deals)) for w in WORKLOADS}
    engine = per_deal["engine"]
    return {
        "deals": deals,
        "instructions_per_deal": per_deal,
        "to_engine": {w: round(engine / per_deal[w], 4) for w in WORKLOADS if w != "engine"},
    }


if __name__ == "__main__":  # a workload's process, started by `count`
    play(sys.argv[1], int(sys.argv[2]))
