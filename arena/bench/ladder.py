"""`arena bench ladder`: ladder throughput on this machine, against `arena bench server`.

Three measurements at the same concurrency K, each a real ladder (fresh bot processes for
every match, results written to a scratch database as each match ends):

1. the example ladder — heuristic, random, random-2 — played through, with short matches
   (`deals`, default 3): matches per minute and decisions per second, start-up and tail
   included;
2. the same bots in long matches (`long_deals`), decisions per second in the steady state
   (all K matches running), against `arena bench server` with K matches: the example bots
   think, and on a small machine they take CPU time from the referee;
3. the quick bot (`quick_bot.py`: the bench driver's bot, first legal action at once) in
   long matches, in the steady state: the same bots as `arena bench server`, so the ratio
   of the two rates is what the ladder itself costs over the bare referee.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ..engine import find_variant
from ..ladder.config import BotSpec, LadderConfig
from ..ladder.player import MatchPlayer
from ..ladder.run import Player, run_ladder
from ..referee.seat import TimeControl
from .common import Window, pauses, rate, ratio
from .server import bench_server

EXAMPLES = (
    ("heuristic", "arena_bot.heuristic_bot"),
    ("random", "arena_bot.random_bot"),
    ("random-2", "arena_bot.random_bot"),
)
QUICK = (
    ("quick", "arena.bench.quick_bot"),
    ("quick-2", "arena.bench.quick_bot"),
    ("quick-3", "arena.bench.quick_bot"),
)
WARM_UP_S = 2.0


@dataclass
class LadderBench:
    concurrency: int
    matches: int
    deals_per_match: int
    seconds: float
    matches_per_min: float
    decisions_per_s: float
    long_deals_per_match: int
    example_steady_decisions_per_s: float
    quick_steady_decisions_per_s: float
    server_decisions_per_s: float
    example_ratio: float
    ratio: float  # quick-bot ladder / bench server: the ladder's own cost

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def bench_config(
    directory: Path, bots: tuple[tuple[str, str], ...], concurrency: int, deal_sets: int, deals: int
) -> LadderConfig:
    specs = tuple(
        BotSpec(name, f"{{python}} -m {module}", (sys.executable, "-m", module), cwd=Path.cwd())
        for name, module in bots
    )
    return LadderConfig(
        path=directory / "bench.toml",
        name="bench",
        variant=find_variant("grosstarock"),
        bots=specs,
        seed=1,
        deal_sets=deal_sets,
        deals=deals,
        concurrency=concurrency,
        time_control=TimeControl(per_decision_ms=10_000, bank_ms=0),
        database=directory / "bench.sqlite",
        replay_dir=directory / "replays",
    )


async def steady_rate(config: LadderConfig, seconds: float, bar: str | None = None) -> float:
    """Decisions per second of a ladder while all its match slots are busy."""
    players: list[Player] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(run_ladder, config, on_player=players.append))
        while not players or players[0].in_use() < config.concurrency:
            await trio.sleep(0.05)
        await trio.sleep(WARM_UP_S)
        assert isinstance(players[0], MatchPlayer)
        with Window(players[0].decisions) as window:
            for pause in pauses(seconds, bar):
                await trio.sleep(pause)
        nursery.cancel_scope.cancel()
    return window.rate


def bench_ladder(
    concurrency: int, deal_sets: int, deals: int, long_deals: int, seconds: float
) -> LadderBench:
    with tempfile.TemporaryDirectory(prefix="arena-bench-ladder-") as tmp:
        base = Path(tmp)
        short = bench_config(base / "short", EXAMPLES, concurrency, deal_sets, deals)
        with Window() as played:
            summary = trio.run(partial(run_ladder, short))
        # Enough deal sets that the ladder is still running when the measurement ends.
        many = max(2, concurrency)
        example = trio.run(
            steady_rate,
            bench_config(base / "example", EXAMPLES, concurrency, many, long_deals),
            seconds,
            "s steady, example bots",
        )
        quick = trio.run(
            steady_rate,
            bench_config(base / "quick", QUICK, concurrency, many, long_deals),
            seconds,
            "s steady, quick bots",
        )
    server = bench_server(concurrency, seconds, idle_bots=0, bar="s bench server").decisions_per_s
    return LadderBench(
        concurrency=concurrency,
        matches=summary.played,
        deals_per_match=deals,
        seconds=round(played.seconds, 2),
        matches_per_min=round(rate(summary.played * 60, played.seconds), 1),
        decisions_per_s=round(rate(summary.decisions, played.seconds), 1),
        long_deals_per_match=long_deals,
        example_steady_decisions_per_s=round(example, 1),
        quick_steady_decisions_per_s=round(quick, 1),
        server_decisions_per_s=server,
        example_ratio=ratio(example, server),
        ratio=ratio(quick, server),
    )
