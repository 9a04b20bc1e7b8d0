"""`python -m benchmarks inprocess`: ladders whose bots play in the referee's process.

In one run, alternating sides where they are compared:

1. the example ladder (heuristic, random, random-2) with in-process bots, on one referee process
   and on two, against the same ladder with persistent bot processes over gRPC (the fastest
   way of running bot processes): deals per second after the first wave of matches
   (`benchmarks.ladder.recorded_rate`), and the ratio; and the CPU each way spends per deal,
   its referee processes and bots included (a busy machine's scheduler gives four busy
   processes more of its cores than one, which skews the rates, not the CPU per deal);
2. three in-process random bots on one referee process (one core, two matches at a time)
   against the engine's own random play (`benchmarks.engine.bench_engine`, one core), twice each
   in ABBA order: deals per second (means), and the ratio;
3. where an in-process deal's time goes: one match of the random bots (a `MatchRunner` and its
   in-process seats, no server), timed, then played again under cProfile, whose split of the time
   into the engine, building requests, the bot (parsing the request and the SDK's logic
   included), the referee's bookkeeping (the runner, seats, trio) and the replay writer is
   applied to the timed run's milliseconds per deal (cProfile slows small calls the most, so the
   split is an estimate);
4. the bare loop: the same deals with the same bots doing only what no referee can skip while
   its bots receive the protocol's messages (`bare_loop`): the engine, each request's bytes, their
   parse, the bot, the answer's check and the action lines and events. Its milliseconds per
   deal, and its ratio to the engine's, are the ceiling of the second ratio for this protocol:
   what the referee's bookkeeping and the ladder add comes on top.
"""

from __future__ import annotations

import cProfile
import dataclasses
import pstats
import resource
import sqlite3
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.engine import Match, find_variant
from arena.ladder.config import BotSpec, LadderConfig
from arena.ladder.run import run_ladder
from arena.protocol import ViewEncoder, action_from_message, action_taken_event, request_message
from arena.referee.record import action_line
from arena.referee.runner import MatchConfig, MatchRunner
from arena.referee.seat import TimeControl
from arena.server.inprocess import load_bot, seat_inprocess
from arena.v1 import arena_pb2 as pb

from .common import rate, ratio
from .engine import bench_engine
from .ladder import EXAMPLES, bench_config, recorded_rate

INPROCESS = {"arena_bot.heuristic_bot": "inprocess:heuristic", "arena_bot.random_bot": "inprocess:random"}
RANDOMS = (
    ("random", "arena_bot.random_bot"),
    ("random-2", "arena_bot.random_bot"),
    ("random-3", "arena_bot.random_bot"),
)

# Where a profiled function's time is counted (the first part of its key that matches), else "referee".
PARTS = (
    ("bot", ("arena_bot", "inprocess.py", "FromString", "CopyFrom", "random.py", "_random")),
    ("request building", ("arena/protocol", "arena.protocol", "ViewEncoder", "request_message")),
    ("replay writer", ("arena/replay", "arena.replay", "record.py", "json", "write", "flush")),
    ("engine", ("arena/engine", "arena.engine", "arena/engine", "DealState", "Match")),
)


def ladder_config(
    base: Path, name: str, bots: tuple[tuple[str, str], ...], way: str, **kw: Any
) -> LadderConfig:
    config = bench_config(base / name, bots, kw.pop("concurrency"), kw.pop("deal_sets"), kw.pop("deals"))
    if way == "inprocess":
        specs = tuple(
            BotSpec(b.name, INPROCESS[b.argv[-1]], inprocess=INPROCESS[b.argv[-1]], cwd=b.cwd)
            for b in config.bots
        )
    else:
        specs = tuple(dataclasses.replace(b, processes="persistent") for b in config.bots)
    return dataclasses.replace(config, bots=specs, **kw)


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (bots, referee processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def deals_per_s(config: LadderConfig) -> float:
    return ladder_rates(config)[0]


def ladder_rates(config: LadderConfig) -> tuple[float, float]:
    """(deals per second after the first wave, CPU milliseconds per deal of the whole ladder: its
    referee processes and bots included, which the wall-clock rate of a busy machine is not)."""
    cpu = _cpu_s()
    trio.run(partial(run_ladder, config))
    cpu = _cpu_s() - cpu
    with sqlite3.connect(config.database) as conn:
        deals = conn.execute("SELECT COUNT(*) FROM (SELECT DISTINCT match_seq, deal FROM deals)").fetchone()
    return recorded_rate(config.database, config.concurrency)[0], cpu * 1000 / max(1, deals[0])


async def play_random(deals: int, replay_dir: Path, profile: cProfile.Profile | None = None) -> float:
    """Seconds of one match of three in-process random bots (the match alone: no server)."""
    config = MatchConfig(
        find_variant("grosstarock"),
        deals=deals,
        seed=3,
        seat_names=("a", "b", "c"),
        time_control=TimeControl(per_decision_ms=10_000, bank_ms=0),
    )
    runner = MatchRunner(f"bench{deals}{profile is not None:d}", config, replay_dir)
    bot = load_bot("inprocess:random")
    for seat in range(3):
        seat_inprocess(runner, seat, bot, f"bench:{seat}")
    start = time.perf_counter()
    if profile is not None:
        profile.enable()
    await runner.run()
    if profile is not None:
        profile.disable()
    return time.perf_counter() - start


def bare_loop(deals: int) -> tuple[float, list[str]]:
    """Seconds of `play_random`'s deals played by a bare loop, and its action lines (think_ms 0).

    Same engine match, same bots and seeds, so the same actions; per decision only the legal
    actions, the request's bytes (the view, the events since the seat's last request), their
    parse, the bot's choice, its check, the engine's move, the action line and the event."""
    match = Match(find_variant("grosstarock"), seed=3, deals=deals)
    bot = load_bot("inprocess:random")
    decide = [bot.new(f"bench:{seat}")[0] for seat in range(3)]
    parse = pb.ServerMessage.FromString
    lines: list[str] = []
    events: list[list[bytes]] = [[], [], []]
    request_id = 0
    start = time.perf_counter()
    while not match.is_over():
        deal = match.deal_index
        state = match.start_deal()
        views = ViewEncoder(state)
        step = 0
        while not state.is_terminal():
            seat = state.current_player
            assert seat is not None
            legal = state.legal_actions()
            request_id += 1
            data = request_message(request_id, deal, views.view(seat), legal, 10_000, 0, events[seat])
            events[seat] = []
            action = action_from_message(decide[seat](parse(data).request))
            if action not in legal:
                raise AssertionError(f"the bot chose {action}, not a legal action")
            state.apply(action)
            lines.append(action_line(deal, step, seat, action, 0))
            step += 1
            event = action_taken_event(deal, seat, action)
            for queued in events:
                queued.append(event)
        match.finish_deal(state)
    return time.perf_counter() - start, lines


def where_time_goes(deals: int) -> dict[str, float]:
    """Milliseconds per deal of an in-process match of random bots, timed, and split by part
    (PARTS) in the shares a profiled run of it gives."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-inprocess-") as tmp:
        seconds = trio.run(play_random, deals, Path(tmp))
        profile = cProfile.Profile()
        trio.run(play_random, deals, Path(tmp), profile)
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    parts = {name: 0.0 for name, _ in PARTS} | {"referee": 0.0}
    for (filename, _, function), (_, _, tottime, _, _) in stats.items():
        where = f"{filename} {function}"
        part = next((name for name, marks in PARTS if any(m in where for m in marks)), "referee")
        parts[part] += tottime
    total = sum(parts.values()) or 1.0
    ms = seconds * 1000 / deals
    return {"total": round(ms, 3)} | {name: round(ms * spent / total, 3) for name, spent in parts.items()}


def bench_inprocess(deal_sets: int, deals: int, engine_s: float, profile_deals: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="arena-bench-inprocess-") as tmp:
        base = Path(tmp)
        common = {"concurrency": 2, "deal_sets": deal_sets, "deals": deals}
        example: dict[str, list[float]] = {
            "persistent_grpc": [],
            "inprocess_1_referee": [],
            "inprocess_2_referees": [],
        }
        cpu: dict[str, list[float]] = {way: [] for way in example}
        for round_ in range(2):  # ABBA
            order = list(example) if round_ == 0 else list(reversed(example))
            for way in order:
                name = f"{way}-{round_}"
                if way == "persistent_grpc":
                    config = ladder_config(base, name, EXAMPLES, "persistent", referees=1, **common)
                else:
                    config = ladder_config(
                        base, name, EXAMPLES, "inprocess", referees=1 if "1" in way else 2, **common
                    )
                found, spent = ladder_rates(config)
                example[way].append(found)
                cpu[way].append(spent)
        # One referee process (one core) with two matches at a time: one plays while the other's
        # finished replay is synced to disk. Alternated with the engine's random play (ABBA): a
        # shared machine's speed drifts by a fifth within minutes.
        random_rates: list[float] = []
        engine_rates: list[float] = []
        for round_ in range(2):
            for side in ("engine", "ladder") if round_ == 0 else ("ladder", "engine"):
                if side == "ladder":
                    name = f"randoms-{round_}"
                    randoms = ladder_config(base, name, RANDOMS, "inprocess", referees=1, **common)
                    random_rates.append(deals_per_s(randoms))
                else:
                    engine = bench_engine(find_variant("grosstarock"), engine_s, anchor=False)
                    engine_rates.append(rate(engine.deals, engine.seconds))
    random_rate = sum(random_rates) / len(random_rates)
    engine_rate = sum(engine_rates) / len(engine_rates)
    bare_ms = min(bare_loop(profile_deals)[0] for _ in range(3)) * 1000 / profile_deals
    rates = {way: round(sum(found) / len(found), 1) for way, found in example.items()}
    cpu_ms = {way: round(sum(found) / len(found), 2) for way, found in cpu.items()}
    return {
        "example_deals_per_s": rates,
        "example_cpu_ms_per_deal": cpu_ms,
        "example_grpc_cpu_to_inprocess_1": ratio(cpu_ms["persistent_grpc"], cpu_ms["inprocess_1_referee"]),
        "example_inprocess_2_to_grpc": ratio(rates["inprocess_2_referees"], rates["persistent_grpc"]),
        "example_inprocess_1_to_grpc": ratio(rates["inprocess_1_referee"], rates["persistent_grpc"]),
        "random_inprocess_deals_per_s": round(random_rate, 1),
        "engine_random_deals_per_s": round(engine_rate, 1),
        "random_inprocess_to_engine": ratio(random_rate, engine_rate),
        "ms_per_deal_by_part": where_time_goes(profile_deals),
        "bare_loop_ms_per_deal": round(bare_ms, 3),
        "bare_loop_to_engine": ratio(1000 / bare_ms, engine_rate),
    }
