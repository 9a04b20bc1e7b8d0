"""`python -m benchmarks replay`: how fast `arena replay verify` checks actions, next to the engine bench.

Per variant, three sides run in this process on one core, in alternating slices of at most a
quarter second, so that a machine that gets busier or quieter during the run affects them alike:

* verify: the verifier on the given replay logs (read into memory once, checked again and again);
* engine (`engine_actions_per_s`, the ratio's): `python -m benchmarks engine`'s loop (a uniformly random
  legal action until the deal ends, then the result) on the same deals as the logs: each log's
  match is rebuilt from its seed, so the decks, the dealer rotation and the dealing are the
  verifier's;
* fresh (`fresh_engine_actions_per_s`): `bench_engine`'s own step, which shuffles one generator's
  deck for each deal instead of dealing a match's (a little cheaper per deal), for comparison with
  `python -m benchmarks engine`.

Then the verifier runs in `jobs` processes at once, as `arena replay verify` checks many files,
for the rate of the whole machine.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.engine import Match, Variant
from arena.replay.verify import read_replay_bytes, verify_bytes

from .common import Timed, alternate, rate, ratio, run_for
from .engine import fresh_deal, play_out

SLICE_S = 0.25
SIDES = ("verify", "engine", "fresh")


@dataclass
class _Group:
    """The replay logs of one variant (with its options), and what each side measured on them."""

    variant: Variant
    logs: list[tuple[str, bytes]] = field(default_factory=list)
    matches: list[tuple[int, int, int]] = field(default_factory=list)  # seed, dealer turns, deals verified
    timed: dict[str, Timed] = field(default_factory=dict)


def bench_replay(files: list[Path], seconds: float, jobs: int = 1) -> dict[str, Any]:
    """Actions per second of replay verification and of the engine bench, per variant and in all."""
    groups = _read(files)
    for group in groups:
        group.timed = alternate(
            seconds / len(groups),
            {
                "verify": _verify_all(group.logs),
                "engine": _match_deal(group.variant, group.matches),
                "fresh": fresh_deal(group.variant),
            },
            SLICE_S,
        )
    rows = [
        _row(g.variant.name, dict(g.variant.options), sum(_actions(d, n) for n, d in g.logs), [g])
        for g in groups
    ]
    total = _row("all", {}, sum(r["actions"] for r in rows), groups)
    logs = [log for group in groups for log in group.logs]
    parallel = _all_cores(logs, seconds, jobs) if jobs > 1 else total["verify_actions_per_s"]
    return {
        "seconds_per_side": seconds,
        "files": [str(f) for f in files],
        "variants": rows,
        "total": total,
        "processes": {
            "jobs": jobs,
            "verify_actions_per_s": round(parallel, 1),
            "ratio_to_engine_one_core": ratio(parallel, total["engine_actions_per_s"]),
        },
    }


def _read(files: list[Path]) -> list[_Group]:
    """The logs, verified once, by variant and options."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], _Group] = {}
    for path in files:
        data = read_replay_bytes(path)
        replay = verify_bytes(data, str(path))
        if not replay.ok or replay.variant is None:
            raise ValueError(f"{path} does not verify: {replay.problem}")
        variant = replay.variant
        group = groups.setdefault((variant.name, tuple(sorted(variant.options.items()))), _Group(variant))
        group.logs.append((str(path), data))
        deals = replay.deals_done + (1 if replay.open_steps else 0)
        group.matches.append((replay.header["seed"], replay.header["deals"], deals))
    return list(groups.values())


def _verify_all(logs: list[tuple[str, bytes]]) -> Callable[[], int]:
    """A step of the verify side: every log verified once; the actions checked."""
    return lambda: sum(verify_bytes(data, name).actions for name, data in logs)


def _match_deal(variant: Variant, matches: list[tuple[int, int, int]]) -> Callable[[], int]:
    """A step of the engine side: `bench_engine`'s loop on the next deal of the logs' matches."""
    deals = _deals(variant, matches)
    choice = random.Random("0:bench").choice  # as bench_engine's first run

    def step() -> int:
        match = next(deals)
        state = match.start_deal()
        actions = play_out(state, choice)
        match.finish_deal(state)
        return actions

    return step


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
    return rate(sum(counts), wall)


def _verify_for(logs: list[tuple[str, bytes]], seconds: float) -> int:
    return run_for(seconds, _verify_all(logs)).count


def _actions(data: bytes, name: str) -> int:
    return verify_bytes(data, name).actions


def _row(variant: str, options: dict[str, str], actions: int, groups: list[_Group]) -> dict[str, Any]:
    side = {name: sum((g.timed[name] for g in groups), Timed()).rate for name in SIDES}
    return {
        "variant": variant,
        "options": options,
        "actions": actions,  # actions in the replay logs of this variant
        "verify_actions_per_s": round(side["verify"], 1),
        "engine_actions_per_s": round(side["engine"], 1),
        "ratio": ratio(side["verify"], side["engine"]),
        "fresh_engine_actions_per_s": round(side["fresh"], 1),
        "ratio_to_fresh": ratio(side["verify"], side["fresh"]),
    }
