"""The pair test's error rates, simulated from a recorded ladder (`python -m benchmarks decide
--calibrate N --dir DIR`).

The observations of a pair (one per deal set, `arena.ladder.decide.pair_observations`) are read
from the fixed ladder that `python -m benchmarks decide` played in DIR, and redrawn with
replacement (a bootstrap): each simulated run draws deal sets until the test gives a verdict, with
no budget. A/A runs draw the pair's observations less their mean (bots of equal strength whose
deal sets vary as the real ones do); "real" runs draw them as recorded (the true difference).
Several statistics on the same draws:

* `plug-in` is the test before (σ estimated from the observations and plugged into the
  known-σ LLR ± effect · Σx / σ − n · effect² / 2, bounds ln((1 − β)/(α/2)) and ln(β/(1 − α/2)),
  at least `min_n` observations); `plug-in, min 15` the same with a later first look;
* `GSPRT` the generalized SPRT with σ's maximum-likelihood estimate under each hypothesis (as
  fishtest's normalized SPRT): n · (log w + θ r w / 2 − θ² / 2), r = mean / √(mean of squares),
  w = (θ r + √(θ² r² + 4)) / 2, the plug-in's bounds;
* `t-test at the effect` the invariant likelihood ratio (`sprt.t_llr`) at θ = effect alone;
* `pair test` `sprt.PairTest` as it is (the mixture over θ ≥ effect).

For each: the false-positive rate (either declared stronger) with its Wilson 95% interval, also
as if the budget were 40 deal sets (a run that declared one stronger within 40), the deal sets a
run took; for the real difference, how often the stronger bot was found and in how many deal sets;
and on normal observations whose difference is the effect exactly, the power (1 − β promised).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.ladder.decide import pair_observations, seat_deals
from arena.ladder.sprt import PairTest, t_llr
from arena.ladder.store import connect

from .luck import wilson

# (n, Σx, Σx²) → (LLR A, LLR B)
Statistic = Callable[[int, float, float], tuple[float, float]]


def plug_in(effect: float) -> Statistic:
    def llrs(n: int, total: float, squares: float) -> tuple[float, float]:
        mean = total / n
        var = max(0.0, (squares - n * mean * mean) / (n - 1))
        drift = n * effect**2 / 2
        if var <= 1e-12 * max(1.0, squares / n):
            if not mean:
                return -drift, -drift
            return (math.inf, -math.inf) if mean > 0 else (-math.inf, math.inf)
        signal = effect * total / math.sqrt(var)
        return signal - drift, -signal - drift

    return llrs


def gsprt(effect: float) -> Statistic:
    def side(n: int, total: float, squares: float) -> float:
        if squares <= 0:
            return -n * effect**2 / 2
        r = (total / n) / math.sqrt(squares / n)
        w = (effect * r + math.sqrt(effect * effect * r * r + 4)) / 2
        return n * (math.log(w) + effect * r * w / 2 - effect * effect / 2)

    return lambda n, total, squares: (side(n, total, squares), side(n, -total, squares))


def t_at_effect(effect: float) -> Statistic:
    return lambda n, t, q: (t_llr(n, t, q, effect), t_llr(n, -t, q, effect))


def pair_test(test: PairTest) -> Statistic:
    return test.sums_llrs


def run_once(
    stat: Statistic, draw: Callable[[], float], upper: float, lower: float, min_n: int
) -> tuple[str | None, int]:
    n, total, squares = 0, 0.0, 0.0
    while True:
        x = draw()
        n, total, squares = n + 1, total + x, squares + x * x
        if n < min_n:
            continue
        a, b = stat(n, total, squares)
        if a >= upper:
            return "A", n
        if b >= upper:
            return "B", n
        if a <= lower and b <= lower:
            return "equal", n


def _bounds(test: PairTest, method: str) -> tuple[float, float]:
    if method == "pair test":
        return test.upper, test.lower
    return math.log((1 - test.beta) / (test.alpha / 2)), math.log(test.beta / (1 - test.alpha / 2))


def methods(test: PairTest) -> dict[str, tuple[Statistic, int]]:
    """Each statistic with its least number of observations."""
    return {
        "plug-in (before)": (plug_in(test.effect), test.min_n),
        "plug-in, min 15": (plug_in(test.effect), 15),
        "GSPRT": (gsprt(test.effect), test.min_n),
        "t-test at the effect": (t_at_effect(test.effect), test.min_n),
        "pair test": (pair_test(test), test.min_n),
    }


def _drawer(pool: Sequence[float], rng: random.Random) -> Callable[[], float]:
    return lambda: pool[int(rng.random() * len(pool))]


def simulate(
    xs: Sequence[float], runs: int, test: PairTest, centre: bool, seed: int, budget: int = 40
) -> list[dict[str, Any]]:
    mean = sum(xs) / len(xs) if centre else 0.0
    pool = [x - mean for x in xs]
    rows = []
    for name, (stat, min_n) in methods(test).items():
        draw = _drawer(pool, random.Random(seed))  # the same draws for every statistic
        upper, lower = _bounds(test, name if name == "pair test" else "")
        started = time.perf_counter()
        said = [run_once(stat, draw, upper, lower, min_n) for _ in range(runs)]
        lengths = sorted(n for _, n in said)
        wrong = sum(v in ("A", "B") for v, _ in said)
        within = sum(v in ("A", "B") and n <= budget for v, n in said)
        row: dict[str, Any] = {
            "statistic": name,
            "runs": runs,
            "mean_deal_sets": round(sum(lengths) / runs, 1),
            "median_deal_sets": lengths[runs // 2],
            "p90_deal_sets": lengths[int(runs * 0.9)],
            "seconds": round(time.perf_counter() - started, 1),
        }
        if centre:
            low, high = wilson(wrong, runs)
            low40, high40 = wilson(within, runs)
            row |= {
                "false_positives": wrong,
                "rate": round(wrong / runs, 4),
                "wilson95": [round(low, 4), round(high, 4)],
                f"rate_within_{budget}": round(within / runs, 4),
                f"wilson95_within_{budget}": [round(low40, 4), round(high40, 4)],
            }
        else:
            found = sum(v == "A" for v, _ in said)
            row |= {
                "found": found,
                "power": round(found / runs, 4),
                "wrong_way": sum(v == "B" for v, _ in said),
            }
        rows.append(row)
    return rows


def at_the_effect(runs: int, test: PairTest, seed: int) -> list[dict[str, Any]]:
    """Normal observations whose difference is the effect exactly: the power the test promises
    (1 − β) and the deal sets it takes, for the plug-in statistic and the pair test."""
    rows = []
    for name, (stat, min_n) in methods(test).items():
        if name not in ("plug-in (before)", "pair test"):
            continue
        rng = random.Random(seed)
        upper, lower = _bounds(test, name)
        said = [run_once(stat, _normal(rng, test.effect), upper, lower, min_n) for _ in range(runs)]
        lengths = sorted(n for _, n in said)
        found = sum(v == "A" for v, _ in said)
        rows.append(
            {
                "statistic": name,
                "runs": runs,
                "power": round(found / runs, 4),
                "wilson95": [round(x, 4) for x in wilson(found, runs)],
                "equal": sum(v == "equal" for v, _ in said),
                "wrong_way": sum(v == "B" for v, _ in said),
                "mean_deal_sets": round(sum(lengths) / runs, 1),
                "median_deal_sets": lengths[runs // 2],
            }
        )
    return rows


def _normal(rng: random.Random, mean: float) -> Callable[[], float]:
    return lambda: rng.gauss(mean, 1.0)


def calibrate(directory: Path, runs: int, test: PairTest, seed: int = 34) -> dict[str, Any]:
    """A/A and real-difference runs for search − heuristic and heuristic − random, bootstrapped
    from the fixed ladder in `directory` (played by `python -m benchmarks decide`)."""
    conn = connect(directory / "fixed.sqlite", readonly=True)
    try:
        rows = seat_deals(conn, 6)
    finally:
        conn.close()
    out: dict[str, Any] = {
        "nominal_alpha": round(test.alpha, 4),
        "ville_bound": round(test.alpha / (1 - test.beta), 4),
        "effect": test.effect,
        "min_deal_sets": test.min_n,
        "pairs": [],
    }
    for a, b in (("search", "heuristic"), ("heuristic", "random")):
        xs = pair_observations(rows, a, b)
        mean = sum(xs) / len(xs)
        sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
        out["pairs"].append(
            {
                "pair": f"{a} - {b}",
                "recorded_deal_sets": len(xs),
                "mean": round(mean, 2),
                "sd": round(sd, 2),
                "difference_in_sd": round(mean / sd, 2),
                "aa": simulate(xs, runs, test, True, seed),
                "real": simulate(xs, runs, test, False, seed + 1),
            }
        )
    out["normal_at_the_effect"] = at_the_effect(runs // 4, test, seed + 2)
    return out
