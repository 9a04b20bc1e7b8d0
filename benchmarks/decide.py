"""The adaptive ladder against the fixed schedule: deals to decide search > heuristic > random.

`python -m benchmarks decide --dir DIR` plays two ladders of the SDK's search bot (seeded, a fixed
number of sampled deals per decision), heuristic bot and random bot in grosstarock, with the same
seed and so the same deal sets: a fixed one of `--deal-sets` deal sets, and the same file with
`[decide]` (the ranking, at `--confidence`, `--effect`, `--min-deal-sets`), which stops when both
adjacent pairs are separated (docs/LADDER.md, "Ladders that stop when they know"). Then, from the
fixed ladder, the deal sets after which

* the adaptive rule (`sprt.PairTest` over deal sets) separates both pairs: what the adaptive ladder
  should have played, checked against what it did play;
* the paired 95% interval (Student's t over deal sets) of each pair excludes zero;
* the standings' per-bot 95% intervals of points per deal no longer overlap;

and the deal sets a fixed schedule must commit to beforehand for the adaptive test's guarantee
(equal bots told apart with probability α = 1 − confidence, a difference of `effect` standard
deviations missed with probability α): ⌈((z(1 − α/2) + z(1 − α)) / effect)²⌉, z the normal
quantiles. A DIR that holds the ladders from an
earlier run is reused: each ladder goes on where it stopped.

`--calibrate RUNS` plays nothing: it simulates the pair test's error rates from the fixed ladder
in DIR (benchmarks/sprt_calibration.py).
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

from arena.ladder.decide import Decide, SeatDeal, pair_observations, seat_deals, verdict
from arena.ladder.stats import standings
from arena.ladder.store import connect
from arena.ratings import mean_ci

BOTS = (
    ("search", "{python} -m arena_bot.search_bot --iterations {iterations} --think-ms 4000"),
    ("heuristic", "{python} -m arena_bot.heuristic_bot"),
    ("random", "{python} -m arena_bot.random_bot"),
)
ARRANGEMENTS = 6  # three bots, three seats, every permutation


def ladder_text(name: str, deal_sets: int, seed: int, iterations: int, decide: Decide | None) -> str:
    text = (
        f'name = "{name}"\nvariant = "grosstarock"\nseed = {seed}\ndeal_sets = {deal_sets}\ndeals = 3\n'
        'concurrency = 2\nprocesses = "persistent"\n'
        "[time_control]\nper_decision_ms = 10000\nbank_ms = 60000\n[faults]\nreconnect_grace_ms = 2000\n"
    )
    for bot, command in BOTS:
        line = command.format(python="{python}", iterations=iterations)
        text += f'[[bots]]\nname = "{bot}"\ncommand = "{line}"\n'
    if decide is not None:
        text += (
            f"[decide]\nconfidence = {decide.confidence}\neffect = {decide.effect}\n"
            f"min_deal_sets = {decide.min_deal_sets}\n"
        )
    return text


def play(path: Path) -> float:
    """Run the ladder to its end (or its decision); the wall-clock seconds."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "arena", "ladder", "run", str(path), "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{path}: arena ladder run exited {done.returncode}: {done.stderr[-2000:]}")
    return time.monotonic() - started


def first_separated(rows: list[SeatDeal], order: list[str], deal_sets: int, decide: Decide) -> dict[str, Any]:
    """For each criterion, the first number of deal sets after which both adjacent pairs of
    `order` are separated (None: not within `deal_sets`)."""
    pairs = list(itertools.pairwise(order))
    test = decide.test()
    found: dict[str, int | None] = {"sprt": None, "paired_t95": None, "per_bot_ci95": None}
    for n in range(1, deal_sets + 1):
        prefix = [r for r in rows if r.deal_set < n]
        paired = [mean_ci(pair_observations(prefix, a, b)) for a, b in pairs]
        per_bot = {bot: mean_ci([float(r.points) for r in prefix if r.bot == bot]) for bot in order}
        checks = {
            "sprt": all(verdict(prefix, a, b, test).separated for a, b in pairs),
            "paired_t95": all(ci.n >= 2 and (ci.low > 0 or ci.high < 0) for ci in paired),
            "per_bot_ci95": all(per_bot[a].low > per_bot[b].high for a, b in pairs),
        }
        for key, ok in checks.items():
            if ok and found[key] is None:
                found[key] = n
    return found


def run(directory: Path, deal_sets: int, seed: int, iterations: int, decide: Decide) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    fixed_path, adaptive_path = directory / "fixed.toml", directory / "adaptive.toml"
    fixed_path.write_text(ladder_text("decide-fixed", deal_sets, seed, iterations, None))
    adaptive_path.write_text(ladder_text("decide-adaptive", deal_sets, seed, iterations, decide))
    fixed_seconds = play(fixed_path)
    adaptive_seconds = play(adaptive_path)
    fixed_conn = connect(directory / "fixed.sqlite", readonly=True)
    adaptive_conn = connect(directory / "adaptive.sqlite", readonly=True)
    try:
        fixed_table = standings(fixed_conn, decide)
        adaptive_table = standings(adaptive_conn, decide)
        order = [b.name for b in sorted(fixed_table.bots, key=lambda b: -b.points_per_deal)]
        rows = seat_deals(fixed_conn, ARRANGEMENTS)
        played = adaptive_conn.execute("SELECT COUNT(DISTINCT deal_set) FROM matches").fetchone()[0]
        same = dict(adaptive_conn.execute("SELECT key, scores FROM matches").fetchall())
        fixed_scores = dict(fixed_conn.execute("SELECT key, scores FROM matches").fetchall())
        first = first_separated(rows, order, deal_sets, decide)
    finally:
        fixed_conn.close()
        adaptive_conn.close()
    per_set = ARRANGEMENTS * 3
    # One-sided tests at α/2 each way with power 1 − β at the effect, as the adaptive test's sides.
    error = 1 - decide.confidence
    z = NormalDist().inv_cdf(1 - error / 2) + NormalDist().inv_cdf(1 - error)
    design = math.ceil((z / decide.effect) ** 2)
    return {
        "order": order,
        "decide": {
            "confidence": decide.confidence,
            "effect": decide.effect,
            "min_deal_sets": decide.min_deal_sets,
        },
        "deals_per_deal_set": per_set,
        "fixed": {
            "deal_sets": deal_sets,
            "deals": fixed_table.deals,
            "seconds": round(fixed_seconds, 1),
            "pairs": [_pair(p) for p in fixed_table.pairs],
        },
        "adaptive": {
            "deal_sets": played,
            "deals": adaptive_table.deals,
            "seconds": round(adaptive_seconds, 1),
            "separated": all(p.separated for p in adaptive_table.pairs),
            "pairs": [_pair(p) for p in adaptive_table.pairs],
            "same_results_as_fixed": all(fixed_scores.get(k) == v for k, v in same.items()),
        },
        "first_deal_sets_separating": first,
        "fixed_design_deal_sets": design,
        "fixed_design_deals": design * per_set,
    }


def _pair(p: Any) -> dict[str, Any]:
    return {
        "pair": f"{p.higher} > {p.lower}",
        "separated": p.separated,
        "deal_sets": p.deal_sets,
        "diff_per_deal": round(p.diff_per_deal, 2),
        "ci95": None if p.ci95 is None else round(p.ci95, 2),
        "within_effect": p.within_effect,
        "llr_higher": round(p.llr_higher, 2),
        "llr_lower": round(p.llr_lower, 2),
    }
