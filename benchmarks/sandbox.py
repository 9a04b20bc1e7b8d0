"""`python -m benchmarks sandbox`: bots in the sandbox (arena.sandbox) against the same bots outside it.

In one run, alternating rounds of each side:

1. decisions per second: K matches at once of the example random bot in every seat, each bot a
   process of its own, reaching the server over TCP (outside) or in a sandbox of its own through
   the server's Unix socket, its seat on a CPU clock (inside). The rate is a round's decisions over
   the time from its first match's start (every seat has said Hello) to its last match's end, so
   the bots' start-up is not in it; the ratio inside/outside is the sandbox's cost per decision
   (goal: at least 0.9);
2. start time: from starting a bot to its seat's Hello (the match starting), inside and outside;
   and a bare sandbox's start and stop (``/bin/true`` in it, from `start` to its verdict).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.engine import find_variant
from arena.referee.runner import MatchConfig, MatchRunner
from arena.referee.seat import MatchState
from arena.sandbox import Limits, start
from arena.server.app import serve
from arena.server.local import EXAMPLE_BOTS, launch_bot
from arena.server.sandboxed import Sandboxing, start_sandboxed, watch_sandboxed

from .common import rate, ratio


@dataclass
class Side:
    """What one side (inside or outside the sandbox) measured over its rounds."""

    decisions: int = 0
    seconds: float = 0.0
    rates: list[float] = field(default_factory=list)  # per round
    starts: list[float] = field(default_factory=list)  # seconds from launch to the match's start

    @property
    def rate(self) -> float:
        return round(rate(self.decisions, self.seconds), 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decisions_per_s": self.rate,
            "round_rates": [round(r) for r in self.rates],
            "start_s_median": round(statistics.median(self.starts), 3) if self.starts else None,
        }


async def _watch(
    runner: MatchRunner, launched: float, times: list[tuple[float, float]], starts: list[float]
) -> None:
    while runner.state is MatchState.WAITING:
        await trio.sleep(0.005)
    running = trio.current_time()
    starts.append(running - launched)
    await runner.done.wait()
    times.append((running, trio.current_time()))


async def _round(
    sandboxed: bool, matches: int, deals: int, directory: Path, side: Side, limits: Limits
) -> None:
    variant = find_variant("grosstarock")
    config = MatchConfig(variant, deals, 1, ("a", "b", "c"))
    bot = EXAMPLE_BOTS["random"]
    socket = directory / "referee.sock" if sandboxed else None
    logs = directory / "logs"
    logs.mkdir(exist_ok=True)
    times: list[tuple[float, float]] = []
    runners = []
    async with trio.open_nursery() as nursery:
        hub, port = await nursery.start(partial(serve, "127.0.0.1", 0, directory, unix=socket))
        for _ in range(matches):
            runner = hub.create_match(config)
            runners.append(runner)
            launched = trio.current_time()
            for seat in range(variant.seats):
                log = logs / f"{runner.match_id}-{seat}.log"
                if socket is not None:
                    box = start_sandboxed(runner, seat, bot, socket, log, Sandboxing(limits=limits))
                    nursery.start_soon(watch_sandboxed, runner, seat, box)
                else:
                    token = runner.seats[seat].token
                    nursery.start_soon(launch_bot, runner, seat, token, bot, f"127.0.0.1:{port}", log)
            nursery.start_soon(_watch, runner, launched, times, side.starts)
        for runner in runners:
            await runner.done.wait()
        nursery.cancel_scope.cancel()
    decisions = sum(r.decisions for r in runners)
    seconds = max(end for _, end in times) - min(begin for begin, _ in times)
    side.decisions += decisions
    side.seconds += seconds
    side.rates.append(rate(decisions, seconds))


def bare_start_s(count: int, directory: Path) -> float:
    """The median seconds from `start` of ``/bin/true`` in a sandbox to its verdict."""
    spans = []
    for n in range(count):
        began = time.perf_counter()
        verdict = start(["/bin/true"], output=directory / f"true-{n}.log").wait()
        assert verdict is not None and verdict.ok, verdict
        spans.append(time.perf_counter() - began)
    return statistics.median(spans)


def bench_sandbox(
    rounds: int, matches: int, deals: int, bare: int, cpus: float | None = 1.0
) -> dict[str, Any]:
    inside, outside = Side(), Side()
    limits = Limits(cpus=cpus)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        for n in range(rounds):
            for sandboxed, side in ((False, outside), (True, inside)):
                directory = Path(scratch) / f"{n}-{'in' if sandboxed else 'out'}"
                directory.mkdir()
                trio.run(_round, sandboxed, matches, deals, directory, side, limits)
        bare_s = bare_start_s(bare, Path(scratch))
    return {
        "bot": "the example random bot (Python SDK), one process per seat",
        "matches_at_once": matches,
        "deals_per_match": deals,
        "rounds_per_side": rounds,
        "cpu_quota_cores": cpus,
        "outside": outside.to_dict(),
        "inside": inside.to_dict(),
        "ratio_inside_outside": ratio(inside.rate, outside.rate),
        "bare_sandbox_start_stop_s_median": round(bare_s, 4),
    }
