"""`arena bench replay`: how fast `arena replay verify` checks actions, next to the engine bench.

First both sides run in this process on one core, in alternating slices of at most a quarter
second, so that a machine that gets busier or quieter during the run affects them alike: the
verifier on the given replay logs (read into memory once, checked again and again), and
`bench_engine`'s random legal play for the same variant and options. Then the verifier runs in
`jobs` processes at once, as `arena replay verify` checks many files, for the rate of the whole
machine.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..bench import bench_engine
from ..engine import Variant
from .verify import read_replay_bytes, verify_bytes

SLICE_S = 0.25


def bench_replay(files: list[Path], seconds: float, jobs: int = 1) -> dict[str, Any]:
    """Actions per second of replay verification and of the engine bench, per variant and in all."""
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Variant, list[tuple[str, bytes]]]] = {}
    for path in files:
        data = read_replay_bytes(path)
        replay = verify_bytes(data, str(path))
        if not replay.ok or replay.variant is None:
            raise ValueError(f"{path} does not verify: {replay.problem}")
        variant = replay.variant
        key = (variant.name, tuple(sorted(variant.options.items())))
        groups.setdefault(key, (variant, []))[1].append((str(path), data))
    rows = []
    for variant, logs in groups.values():
        share = seconds / len(groups)
        slice_s = min(SLICE_S, share / 2)
        verified = engine_actions = 0
        verify_s = engine_s = 0.0
        seed = 0
        while verify_s < share or engine_s < share:
            if verify_s < share:
                start = time.perf_counter()
                while time.perf_counter() - start < slice_s:
                    for name, data in logs:
                        verified += verify_bytes(data, name).actions
                verify_s += time.perf_counter() - start
            if engine_s < share:
                measured = bench_engine(variant, slice_s, seed=seed)
                seed += 1
                engine_actions += measured.actions
                engine_s += measured.seconds
        rows.append(
            _row(
                variant.name,
                dict(variant.options),
                sum(_actions(d, n) for n, d in logs),
                verified,
                verify_s,
                engine_actions,
                engine_s,
            )
        )
    total = _row(
        "all",
        {},
        sum(r["actions"] for r in rows),
        sum(r["_verified"] for r in rows),
        sum(r["_verify_s"] for r in rows),
        sum(r["_engine"] for r in rows),
        sum(r["_engine_s"] for r in rows),
    )
    for row in [*rows, total]:
        for field in ("_verified", "_verify_s", "_engine", "_engine_s"):
            del row[field]
    logs = [log for _, group in groups.values() for log in group]
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


def _row(
    variant: str,
    options: dict[str, str],
    actions: int,
    verified: int,
    verify_s: float,
    engine: int,
    engine_s: float,
) -> dict[str, Any]:
    verify_rate = verified / verify_s if verify_s > 0 else 0.0
    engine_rate = engine / engine_s if engine_s > 0 else 0.0
    return {
        "variant": variant,
        "options": options,
        "actions": actions,  # actions in the replay logs of this variant
        "verify_actions_per_s": round(verify_rate, 1),
        "engine_actions_per_s": round(engine_rate, 1),
        "ratio": round(verify_rate / engine_rate, 3) if engine_rate > 0 else 0.0,
        "_verified": verified,
        "_verify_s": verify_s,
        "_engine": engine,
        "_engine_s": engine_s,
    }
