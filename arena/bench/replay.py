"""`arena bench replay`: how fast `arena replay verify` checks actions, next to the engine bench.

Per variant, three sides run in this process on one core, in alternating slices of at most a
quarter second, so that a machine that gets busier or quieter during the run affects them alike:

* verify: the verifier on the given replay logs (read into memory once, checked again and again);
* engine (`engine_actions_per_s`, the ratio's): `arena bench engine`'s loop (a uniformly random
  legal action until the deal ends, then the result) on the same deals as the logs: each log's
  match is rebuilt from its seed, so the decks, the dealer rotation and the dealing are the
  verifier's;
* fresh (`fresh_engine_actions_per_s`): `bench_engine` itself, which shuffles one generator's deck
  for each deal instead of dealing a match's (a little cheaper per deal), for comparison with
  `arena bench engine`.

Then the verifier runs in `jobs` processes at once, as `arena replay verify` checks many files,
for the rate of the whole machine.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import Match, Variant
from ..replay.verify import read_replay_bytes, verify_bytes
from .engine import bench_engine

SLICE_S = 0.25


@dataclass
class _Group:
    """The replay logs of one variant (with its options), and what each side measured on them."""

    variant: Variant
    logs: list[tuple[str, bytes]]
    matches: list[tuple[int, int, int]]  # per log: seed, dealer turns, deals verified
    verified: int = 0
    verify_s: float = 0.0
    engine: int = 0
    engine_s: float = 0.0
    fresh: int = 0
    fresh_s: float = 0.0


def bench_replay(files: list[Path], seconds: float, jobs: int = 1) -> dict[str, Any]:
    """Actions per second of replay verification and of the engine bench, per variant and in all."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], _Group] = {}
    for path in files:
        data = read_replay_bytes(path)
        replay = verify_bytes(data, str(path))
        if not replay.ok or replay.variant is None:
            raise ValueError(f"{path} does not verify: {replay.problem}")
        variant = replay.variant
        key = (variant.name, tuple(sorted(variant.options.items())))
        group = groups.setdefault(key, _Group(variant, [], []))
        group.logs.append((str(path), data))
        deals = replay.deals_done + (1 if replay.open_steps else 0)
        group.matches.append((replay.header["seed"], replay.header["deals"], deals))
    for group in groups.values():
        _measure(group, seconds / len(groups))
    rows = [
        _row(g.variant.name, dict(g.variant.options), sum(_actions(d, n) for n, d in g.logs), [g])
        for g in groups.values()
    ]
    total = _row("all", {}, sum(r["actions"] for r in rows), list(groups.values()))
    logs = [log for group in groups.values() for log in group.logs]
    parallel = _all_cores(logs, seconds, jobs) if jobs > 1 else total["verify_actions_per_s"]
    engine = total["engine_actions_per_s"]
    return {
        "seconds_per_side": seconds,
        "files": [str(f) for f in files],
        "variants": rows,
        "total": total,
        "processes": {
            "jobs": jobs,
            "verify_actions_per_s": round(parallel, 1),
            "ratio_to_engine_one_core": round(parallel / engine, 3) if engine > 0 else 0.0,
        },
    }


def _measure(group: _Group, share: float) -> None:
    """`share` seconds for each side, in alternating slices."""
    slice_s = min(SLICE_S, share / 2)
    deals = _deals(group.variant, group.matches)
    choice = random.Random("0:bench").choice  # as bench_engine's first run
    seed = 0
    while group.verify_s < share or group.engine_s < share or group.fresh_s < share:
        if group.verify_s < share:
            start = time.perf_counter()
            while time.perf_counter() - start < slice_s:
                for name, data in group.logs:
                    group.verified += verify_bytes(data, name).actions
            group.verify_s += time.perf_counter() - start
        if group.engine_s < share:
            # bench_engine's loop, whole deals, on the next deals of the logs' matches.
            start = time.perf_counter()
            while time.perf_counter() - start < slice_s:
                match = next(deals)
                state = match.start_deal()
                legal_actions = state.legal_actions
                apply = state.apply
                is_terminal = state.is_terminal
                while not is_terminal():
                    apply(choice(legal_actions()))
                    group.engine += 1
                match.finish_deal(state)
            group.engine_s += time.perf_counter() - start
        if group.fresh_s < share:
            measured = bench_engine(group.variant, slice_s, seed=seed)
            seed += 1
            group.fresh += measured.actions
            group.fresh_s += measured.seconds


def _deals(variant: Variant, matches: list[tuple[int, int, int]]) -> Iterator[Match]:
    """The logs' matches again and again, each yielded once per deal it is to play.

    Each is rebuilt from its seed, so that deal k has the deck of the log's deal k (G-CODE-6);
    with random play the results, and so the pots and an annulled deal's dealer, may differ.
    """
    while True:
        for seed, turns, played in matches:
            match = Match(variant, seed=seed, deals=turns)
            for _ in range(played):
                if match.is_over():
                    break
                yield match


def _all_cores(logs: list[tuple[str, bytes]], seconds: float, jobs: int) -> float:
    """Actions verified per second by `jobs` processes at once, each going through every log."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start at once with the logs in memory; the bench starts no thread.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        shifts = [logs[k % len(logs) :] + logs[: k % len(logs)] for k in range(jobs)]
        start = time.perf_counter()
        counts = list(pool.map(_verify_for, shifts, [seconds] * jobs))
        wall = time.perf_counter() - start
    return sum(counts) / wall if wall > 0 else 0.0


def _verify_for(logs: list[tuple[str, bytes]], seconds: float) -> int:
    verified = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for name, data in logs:
            verified += verify_bytes(data, name).actions
    return verified


def _actions(data: bytes, name: str) -> int:
    return verify_bytes(data, name).actions


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


def _row(variant: str, options: dict[str, str], actions: int, groups: list[_Group]) -> dict[str, Any]:
    verify = _rate(sum(g.verified for g in groups), sum(g.verify_s for g in groups))
    engine = _rate(sum(g.engine for g in groups), sum(g.engine_s for g in groups))
    fresh = _rate(sum(g.fresh for g in groups), sum(g.fresh_s for g in groups))
    return {
        "variant": variant,
        "options": options,
        "actions": actions,  # actions in the replay logs of this variant
        "verify_actions_per_s": round(verify, 1),
        "engine_actions_per_s": round(engine, 1),
        "ratio": round(verify / engine, 3) if engine > 0 else 0.0,
        "fresh_engine_actions_per_s": round(fresh, 1),
        "ratio_to_fresh": round(verify / fresh, 3) if fresh > 0 else 0.0,
    }
