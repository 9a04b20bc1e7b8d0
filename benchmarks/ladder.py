"""`python -m benchmarks ladder`: ladder throughput on this machine, against `python -m benchmarks server`.

Three measurements at the same concurrency K, each a real ladder (fresh bot processes for
every match, results written to a scratch database as each match ends):

1. the example ladder — heuristic, random, random-2 — played through, with short matches
   (`deals`, default 3): matches per minute and decisions per second, start-up and tail
   included;
2. the same bots in long matches (`long_deals`), decisions per second in the steady state
   (all K matches running), against `python -m benchmarks server` with K matches: the example bots
   think, and on a small machine they take CPU time from the referee;
3. the quick bot (`quick_bot.py`: the bench driver's bot, first legal action at once) in
   long matches, in the steady state: the same bots as `python -m benchmarks server`, so the ratio
   of the two rates is what the ladder itself costs over the bare referee;
4. the example ladder in short matches once more in each way of running it: per-match
   processes, persistent processes, and (with the [ray] extra) persistent processes on a local
   Ray with 1 worker playing K matches at once and with 2 workers playing K/2 each (the same
   matches in flight): deals per second after the first wave of matches (`recorded_rate`: so
   neither Ray's start nor the bots' first start-up is counted), each also as a ratio to the
   server bench's decisions per second converted to deals (by the decisions per deal of the
   per-match run).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import resource
import sqlite3
import statistics
import sys
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.engine import find_variant
from arena.ladder.config import BotSpec, LadderConfig
from arena.ladder.player import MatchPlayer
from arena.ladder.run import Player, RayOptions, run_ladder
from arena.referee.seat import TimeControl

from .common import Window, pauses, rate, ratio
from .server import decisions_per_s

EXAMPLES = (
    ("heuristic", "arena_bot.heuristic_bot"),
    ("random", "arena_bot.random_bot"),
    ("random-2", "arena_bot.random_bot"),
)
QUICK = (
    ("quick", "benchmarks.quick_bot"),
    ("quick-2", "benchmarks.quick_bot"),
    ("quick-3", "benchmarks.quick_bot"),
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
    # 4: deals per second of the example ladder, by way of running it (None: Ray not installed)
    decisions_per_deal: float = 0.0
    server_deals_per_s: float = 0.0
    rounds: int = 1  # section 4 played this many times, alternating the order; medians below
    per_match_deals_per_s: float = 0.0
    persistent_deals_per_s: float = 0.0  # one referee process
    referees_2_deals_per_s: float = 0.0  # two referee processes
    ray_1_worker_deals_per_s: float | None = None
    ray_2_workers_deals_per_s: float | None = None
    per_match_server_ratio: float = 0.0
    persistent_server_ratio: float = 0.0
    referees_2_server_ratio: float = 0.0
    ray_1_worker_server_ratio: float | None = None
    ray_2_workers_server_ratio: float | None = None
    # Ray / local at the same referee count and matches in flight: 1 worker / 1 referee process,
    # 2 workers / 2 referee processes; the median of the rounds' ratios, and their range.
    ray_1_worker_to_local: float | None = None
    ray_2_workers_to_local: float | None = None
    ray_1_worker_to_local_range: list[float] | None = None
    ray_2_workers_to_local_range: list[float] | None = None
    referees_2_to_persistent: float = 0.0  # 2 referee processes / 1, the median of the rounds
    referees_2_to_persistent_range: list[float] | None = None
    # CPU ms per decision (CPU_KEYS): of the bots with per-match and with persistent processes,
    # and of the ladder process (the referee, recording) with persistent ones; of these, the
    # system (kernel) time, and the voluntary context switches per decision; medians.
    per_match_bots_cpu_ms: float | None = None
    persistent_bots_cpu_ms: float | None = None
    persistent_ladder_cpu_ms: float | None = None
    persistent_bots_sys_ms: float | None = None
    persistent_ladder_sys_ms: float | None = None
    persistent_bots_switches: float | None = None
    persistent_ladder_switches: float | None = None
    per_round: list[dict[str, float | None]] = dataclasses.field(default_factory=list)

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


def recorded_rate(database: Path, slots: int) -> tuple[float, float]:
    """(deals per second after the first wave, decisions per deal).

    The first `slots` matches start together and end at about the same time: counted from the
    first of them to end, their deals would arrive almost at once and inflate the rate by about
    (slots - 1) / matches. So the rate counts the matches that end after the `slots`-th, over the
    time from its end to the last one's: a wave of matches per slot later, the steady state (a
    Ray's start and the bots' first start-up are left out with it). A ladder of no more matches
    than slots has no such span: its rate is then its deals from the first match's start."""
    with sqlite3.connect(database) as conn:
        rows = conn.execute(
            "SELECT m.finished, m.decisions, "
            "(SELECT COUNT(DISTINCT deal) FROM deals d WHERE d.match_seq = m.seq), m.started "
            "FROM matches m ORDER BY m.finished"
        ).fetchall()
    deals = sum(row[2] for row in rows)
    per_deal = sum(row[1] for row in rows) / deals if deals else 0.0
    if not rows:
        return 0.0, per_deal
    if len(rows) <= slots:
        return rate(deals, rows[-1][0] - min(row[3] for row in rows)), per_deal
    return rate(sum(row[2] for row in rows[slots:]), rows[-1][0] - rows[slots - 1][0]), per_deal


def ray_installed() -> bool:
    # Not imported here: a local Ray's environment is set before Ray is first imported.
    return importlib.util.find_spec("ray") is not None


MODES = ("per_match", "persistent", "referees_2", "ray_1_worker", "ray_2_workers")


# CPU milliseconds per decision in the runs with one referee, this process (the referee and the
# recording) and its children (the bots), from getrusage: where the time goes; with persistent
# processes also its system part and the voluntary context switches (a thread that waits: most
# are hand-offs between grpc's threads and the Python ones), per decision.
CPU_KEYS = (
    "per_match_bots_cpu_ms",
    "persistent_bots_cpu_ms",
    "persistent_ladder_cpu_ms",
    "persistent_bots_sys_ms",
    "persistent_ladder_sys_ms",
    "persistent_bots_switches",
    "persistent_ladder_switches",
)


def usage_of(who: int) -> tuple[float, float, int]:
    """(user + system seconds, system seconds, voluntary context switches) of getrusage(who)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_nvcsw


def play_mode(
    base: Path, mode: str, concurrency: int, deal_sets: int, deals: int, cpu: dict[str, float | None]
) -> tuple[float | None, float]:
    """The example ladder in short matches played one way (`MODES`): (deals per second, decisions
    per deal); None when the way is Ray and Ray is not installed. For the runs with one referee
    (in this process), the CPU per decision into `cpu` (CPU_KEYS)."""
    config = bench_config(base / mode, EXAMPLES, concurrency, deal_sets, deals)
    ray: RayOptions | None = None
    slots = concurrency  # matches in flight at once
    if mode != "per_match":
        bots = tuple(dataclasses.replace(bot, processes="persistent") for bot in config.bots)
        config = dataclasses.replace(config, bots=bots)
    if mode == "referees_2":
        config = dataclasses.replace(config, referees=2)
    elif mode.startswith("ray_"):
        if not ray_installed():
            return None, 0.0
        workers = 1 if mode == "ray_1_worker" else 2
        config = dataclasses.replace(config, concurrency=math.ceil(concurrency / workers))
        ray = RayOptions(None, workers)
        slots = workers * config.concurrency
    before = usage_of(resource.RUSAGE_SELF), usage_of(resource.RUSAGE_CHILDREN)
    summary = trio.run(partial(run_ladder, config, ray=ray))
    ladder_used = [b - a for a, b in zip(before[0], usage_of(resource.RUSAGE_SELF), strict=True)]
    bots_used = [b - a for a, b in zip(before[1], usage_of(resource.RUSAGE_CHILDREN), strict=True)]
    if mode in ("per_match", "persistent") and summary.decisions:
        decisions = summary.decisions
        cpu[f"{mode}_bots_cpu_ms"] = round(bots_used[0] * 1000 / decisions, 3)
        if mode == "persistent":
            cpu["persistent_ladder_cpu_ms"] = round(ladder_used[0] * 1000 / decisions, 3)
            cpu["persistent_bots_sys_ms"] = round(bots_used[1] * 1000 / decisions, 3)
            cpu["persistent_ladder_sys_ms"] = round(ladder_used[1] * 1000 / decisions, 3)
            cpu["persistent_bots_switches"] = round(bots_used[2] / decisions, 2)
            cpu["persistent_ladder_switches"] = round(ladder_used[2] / decisions, 2)
    return recorded_rate(config.database, slots)


def bench_modes(
    base: Path, concurrency: int, deal_sets: int, deals: int, rounds: int
) -> tuple[list[dict[str, float | None]], float]:
    """Section 4 of the module docstring, `rounds` times, in the order of MODES and then reversed
    (ABBA), so that a machine getting busier or quieter weighs on every way alike: the deals per
    second of each way in each round, and the decisions per deal (of the per-match runs)."""
    found: list[dict[str, float | None]] = []
    per_deal: list[float] = []
    for number in range(rounds):
        one: dict[str, float | None] = {}
        cpu: dict[str, float | None] = dict.fromkeys(CPU_KEYS)
        for mode in MODES if number % 2 == 0 else reversed(MODES):
            one[mode], decisions = play_mode(base / str(number), mode, concurrency, deal_sets, deals, cpu)
            if mode == "per_match":
                per_deal.append(decisions)
        found.append({**{mode: one[mode] for mode in MODES}, **cpu})
    return found, statistics.median(per_deal)


def median_of(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 3) if known else None


def ratios(rounds: list[dict[str, float | None]], mode: str, base: str) -> list[float]:
    return [ratio(r[mode] or 0.0, r[base] or 0.0) for r in rounds if r[mode] is not None and r[base]]


def bench_ladder(
    concurrency: int, deal_sets: int, deals: int, long_deals: int, seconds: float, rounds: int = 1
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
        per_round, per_deal = bench_modes(base / "modes", concurrency, deal_sets, deals, rounds)
    server = decisions_per_s(concurrency, seconds, bar="s bench server")
    server_deals = rate(server, per_deal)
    modes = {mode: median_of([r[mode] for r in per_round]) for mode in MODES}

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 1)

    def to_server(value: float | None) -> float | None:
        return None if value is None else ratio(value, server_deals)

    def median_ratio(mode: str, base: str) -> float | None:
        found = ratios(per_round, mode, base)
        return round(statistics.median(found), 3) if found else None

    def ratio_range(mode: str, base: str) -> list[float] | None:
        found = ratios(per_round, mode, base)
        return [min(found), max(found)] if found else None

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
        server_decisions_per_s=round(server, 1),
        example_ratio=ratio(example, server),
        ratio=ratio(quick, server),
        decisions_per_deal=round(per_deal, 1),
        server_deals_per_s=round(server_deals, 1),
        rounds=rounds,
        per_match_deals_per_s=rounded(modes["per_match"]) or 0.0,
        persistent_deals_per_s=rounded(modes["persistent"]) or 0.0,
        referees_2_deals_per_s=rounded(modes["referees_2"]) or 0.0,
        ray_1_worker_deals_per_s=rounded(modes["ray_1_worker"]),
        ray_2_workers_deals_per_s=rounded(modes["ray_2_workers"]),
        per_match_server_ratio=to_server(modes["per_match"]) or 0.0,
        persistent_server_ratio=to_server(modes["persistent"]) or 0.0,
        referees_2_server_ratio=to_server(modes["referees_2"]) or 0.0,
        ray_1_worker_server_ratio=to_server(modes["ray_1_worker"]),
        ray_2_workers_server_ratio=to_server(modes["ray_2_workers"]),
        ray_1_worker_to_local=median_ratio("ray_1_worker", "persistent"),
        ray_2_workers_to_local=median_ratio("ray_2_workers", "referees_2"),
        ray_1_worker_to_local_range=ratio_range("ray_1_worker", "persistent"),
        ray_2_workers_to_local_range=ratio_range("ray_2_workers", "referees_2"),
        referees_2_to_persistent=median_ratio("referees_2", "persistent") or 0.0,
        referees_2_to_persistent_range=ratio_range("referees_2", "persistent"),
        per_match_bots_cpu_ms=median_of([r["per_match_bots_cpu_ms"] for r in per_round]),
        persistent_bots_cpu_ms=median_of([r["persistent_bots_cpu_ms"] for r in per_round]),
        persistent_ladder_cpu_ms=median_of([r["persistent_ladder_cpu_ms"] for r in per_round]),
        persistent_bots_sys_ms=median_of([r["persistent_bots_sys_ms"] for r in per_round]),
        persistent_ladder_sys_ms=median_of([r["persistent_ladder_sys_ms"] for r in per_round]),
        persistent_bots_switches=median_of([r["persistent_bots_switches"] for r in per_round]),
        persistent_ladder_switches=median_of([r["persistent_ladder_switches"] for r in per_round]),
        per_round=[
            {key: rounded(value) if key in MODES else value for key, value in r.items()} for r in per_round
        ],
    )


# The example bots as in-process specs (docs/LADDER.md, "In-process bots").
INPROCESS = {"arena_bot.heuristic_bot": "inprocess:heuristic", "arena_bot.random_bot": "inprocess:random"}
INPROCESS_WAYS = ("inprocess_referees_2", "inprocess_ray_2_workers")


def play_inprocess(base: Path, way: str, concurrency: int, deal_sets: int, deals: int) -> tuple[float, float]:
    """The example ladder with in-process bots, K matches in flight: on two local referee
    processes, or on a local Ray's two workers playing K/2 each; (deals per second after the
    first wave, `recorded_rate`, so not counting Ray's start, and decisions per deal)."""
    config = bench_config(base / way, EXAMPLES, concurrency, deal_sets, deals)
    bots = tuple(
        BotSpec(b.name, INPROCESS[b.argv[-1]], inprocess=INPROCESS[b.argv[-1]], cwd=b.cwd)
        for b in config.bots
    )
    config = dataclasses.replace(config, bots=bots, referees=2)
    ray: RayOptions | None = None
    if way == "inprocess_ray_2_workers":
        config = dataclasses.replace(config, concurrency=math.ceil(concurrency / 2))
        ray = RayOptions(None, 2)
    trio.run(partial(run_ladder, config, ray=ray))
    return recorded_rate(config.database, concurrency if ray is None else 2 * config.concurrency)


def bench_inprocess_ray(concurrency: int, deal_sets: int, deals: int, rounds: int) -> dict[str, Any]:
    """`--inprocess-ray`: the example ladder in-process on a local Ray (2 workers) against in-process
    on two local referee processes, `rounds` times alternating which goes first (ABBA): the
    medians of the deals per second, and of the rounds' ratios Ray / local with their range."""
    if not ray_installed():
        raise SystemExit("--inprocess-ray needs Ray, an optional extra: pip install -e '.[ray]'")
    per_round: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-inprocess-ray-") as tmp:
        for number in range(rounds):
            one: dict[str, float] = {}
            for way in INPROCESS_WAYS if number % 2 == 0 else reversed(INPROCESS_WAYS):
                one[way], one["decisions_per_deal"] = play_inprocess(
                    Path(tmp) / str(number), way, concurrency, deal_sets, deals
                )
            per_round.append({key: round(value, 1) for key, value in one.items()})
    found = [ratio(r["inprocess_ray_2_workers"], r["inprocess_referees_2"]) for r in per_round]
    return {
        "concurrency": concurrency,
        "matches": deal_sets * 6,
        "deals_per_match": deals,
        "rounds": rounds,
        **{
            f"{way}_deals_per_s": round(statistics.median(r[way] for r in per_round), 1)
            for way in INPROCESS_WAYS
        },
        "ray_to_local": round(statistics.median(found), 3),
        "ray_to_local_range": [min(found), max(found)],
        "decisions_per_deal": per_round[0]["decisions_per_deal"],
        "per_round": per_round,
    }
