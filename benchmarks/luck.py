"""How much luck the control variate of `arena.ladder.luck` takes out, and that it adds no bias.

`python -m benchmarks luck` does two things per variant:

1. **A/A calibration**: `--ladders` simulated ladders of identical bots (the search's rollout
   policy with a seed of its own per bot, or uniform random play), played in this process on the
   engine (no referee), each of `--deal-sets` deal sets, seated in the duplicate format (every
   arrangement of each deck) or singly (one arrangement per deck, as an arena without duplicate
   seating plays). Per ladder, bot 0 against bot 1: a two-sided Student-t test at 5% of their
   per-deal-set score difference, plain and luck-adjusted. The false-positive rates must lie in
   the binomial 95% interval of 5%.
2. **Real ladders** (`--db DB --replay-dir DIR`, repeatable, or `--play` to play them first with
   `arena ladder run` and in-process bots): the per-deal-set variance of bot A's score minus bot
   B's (search − heuristic by default) with and without the adjustment, and the deal sets needed
   for a 95% interval clear of zero, in the duplicate format and taking one arrangement per deck.
"""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.engine import Action, DealState, Match, deck_for, find_variant
from arena.ladder.luck import (
    EXPECTATION_DECKS,
    FOLDS,
    ROLLOUTS,
    SeatDeal,
    adjusted_points,
    control,
    deal_set_scores,
    expectation,
    ladder_deals,
)
from arena.ladder.store import connect
from arena.ratings import Z95, t95
from arena.search import greedy

VARIANTS = ("grosstarock", "danish", "german-1754", "american")

Policy = Callable[[DealState, random.Random], Action]


def _random_policy(state: DealState, rng: random.Random) -> Action:
    legal = state.legal_actions()
    return legal[int(rng.random() * len(legal))]


POLICIES: dict[str, Policy] = {"greedy": greedy, "random": _random_policy}


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson 95% interval of a binomial proportion."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def binomial_interval(p: float, n: int) -> tuple[int, int]:
    """The counts k whose probability under Binomial(n, p) lies within the central 95%."""
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    low = high = 0
    total = 0.0
    for k, q in enumerate(pmf):
        total += q
        if total >= 0.025:
            low = k
            break
    total = 0.0
    for k in range(n, -1, -1):
        total += pmf[k]
        if total >= 0.025:
            high = k
            break
    return low, high


def _arrangements(bots: list[str], seats: int) -> list[tuple[str, ...]]:
    if seats == 3:
        return list(itertools.permutations(bots))
    return [tuple(bots[(i + r) % seats] for i in range(seats)) for r in range(seats)]


def simulate_ladder(
    variant_name: str,
    ladder: int,
    deal_sets: int,
    seating: str,
    policy: Policy,
    decks: int = EXPECTATION_DECKS,
) -> list[SeatDeal]:
    """One simulated ladder of identical bots (different seeds), one deal per match."""
    variant = find_variant(variant_name)
    seats = variant.seats
    bots = [f"bot{i}" for i in range(seats)]
    expected = expectation(variant, decks)
    first = Match(variant, 0, 1).start_deal()
    order = random.Random(f"aa-order:{variant_name}:{ladder}")
    out: list[SeatDeal] = []
    seq = 0
    for deal_set in range(deal_sets):
        deck = deck_for(10_000_000 + ladder, deal_set)
        start = DealState(variant, 0, deck, pots=first.pots_start, stakes=first.stakes)
        luck = control(start)
        options = _arrangements(bots, seats)
        chosen = options if seating == "duplicate" else [options[order.randrange(len(options))]]
        for index, arrangement in enumerate(chosen):
            seq += 1
            state = DealState(variant, 0, deck, pots=first.pots_start, stakes=first.stakes)
            rngs = {b: random.Random(f"aa:{ladder}:{deal_set}:{index}:{b}") for b in bots}
            while not state.is_terminal():
                actor = state.current_player
                assert actor is not None
                state.apply(policy(state, rngs[arrangement[actor]]))
            deltas = state.result().deltas
            for seat, bot in enumerate(arrangement):
                out.append(
                    SeatDeal(deal_set, seq, 0, seat, bot, float(deltas[seat]), luck[seat], expected[seat])
                )
    return out


def paired(
    deals: Sequence[SeatDeal], adjusted: Sequence[float], a: str, b: str
) -> tuple[list[float], list[float]]:
    """Per deal set, A's mean points minus B's: raw and adjusted (deal sets where both played)."""
    by: dict[int, dict[str, tuple[float, float]]] = defaultdict(dict)
    for s in deal_set_scores(deals, adjusted):
        by[s.deal_set][s.bot] = (s.raw, s.adjusted)
    raw, adj = [], []
    for scores in by.values():
        if a in scores and b in scores:
            raw.append(scores[a][0] - scores[b][0])
            adj.append(scores[a][1] - scores[b][1])
    return raw, adj


def _mean_var(xs: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    return mean, sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else math.nan


def rejects(xs: Sequence[float]) -> bool:
    """A two-sided Student-t test at 5% of mean zero."""
    mean, var = _mean_var(xs)
    if not var > 0:
        return mean != 0
    return abs(mean) > t95(len(xs) - 1) * math.sqrt(var / len(xs))


def aa_calibration(
    variant: str, ladders: int, deal_sets: int, seating: str, policy: str, decks: int = EXPECTATION_DECKS
) -> dict[str, Any]:
    """A/A: the false-positive rate of bot0 vs bot1 over `ladders` simulated ladders."""
    started = time.perf_counter()
    plain = adjusted = 0
    var_raw = var_adj = 0.0
    for ladder in range(ladders):
        deals = simulate_ladder(variant, ladder, deal_sets, seating, POLICIES[policy], decks)
        raw, adj = paired(deals, adjusted_points(deals), "bot0", "bot1")
        plain += rejects(raw)
        adjusted += rejects(adj)
        var_raw += _mean_var(raw)[1]
        var_adj += _mean_var(adj)[1]
    low, high = binomial_interval(0.05, ladders)
    return {
        "variant": variant,
        "seating": seating,
        "policy": policy,
        "ladders": ladders,
        "deal_sets": deal_sets,
        "false_positives_plain": plain,
        "false_positives_adjusted": adjusted,
        "rate_plain": round(plain / ladders, 4),
        "rate_adjusted": round(adjusted / ladders, 4),
        "binomial_95_counts": [low, high],
        "within_plain": low <= plain <= high,
        "within_adjusted": low <= adjusted <= high,
        "variance_ratio": round(var_adj / var_raw, 4) if var_raw else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


# --------------------------------------------------------------------------- real ladders


def _needed(mean: float, var: float) -> float:
    """Deal sets for a 95% interval of the mean clear of zero (normal approximation)."""
    return math.inf if mean == 0 else (Z95 * Z95 * var) / (mean * mean)


def measure_ladder(db: Path, replay_dir: Path, a: str, b: str) -> dict[str, Any]:
    conn = connect(db, readonly=True)
    try:
        deals = ladder_deals(conn, replay_dir)
        variant = conn.execute("SELECT json_extract(identity, '$.variant') FROM ladder").fetchone()[0]
        rows = conn.execute("SELECT seq, deal_set, arrangement FROM matches WHERE table_no = 0").fetchall()
        count = 1 + max(arrangement for _, _, arrangement in rows)
        # One arrangement per deck, taking each in turn over the deal sets (as random seating would).
        single_matches = {seq for seq, deal_set, arrangement in rows if arrangement == deal_set % count}
    finally:
        conn.close()
    adjusted = adjusted_points(deals)
    result: dict[str, Any] = {"ladder": db.name, "variant": variant, "a": a, "b": b}
    views: dict[str, tuple[Sequence[SeatDeal], Sequence[float]]] = {
        "duplicate": (deals, adjusted),
    }
    single = [(d, x) for d, x in zip(deals, adjusted, strict=True) if d.match_seq in single_matches]
    views["single"] = ([d for d, _ in single], [x for _, x in single])
    # β = 1 for every bot, as the standing arena adjusts (no fit: docs/ARENA.md).
    one = adjusted_points(deals, beta={(d.bot, fold): 1.0 for d in deals for fold in range(FOLDS)})
    views["single_beta_one"] = (
        views["single"][0],
        [x for d, x in zip(deals, one, strict=True) if d.match_seq in single_matches],
    )
    # The deal sets needed are taken for the duplicate's mean difference (the best estimate of the
    # true one) in every view: a few deal sets of one arrangement estimate their own mean poorly.
    effect = 0.0
    for name, (ds, xs) in views.items():
        raw, adj = paired(ds, xs, a, b)
        if len(raw) < 2:
            continue
        mean_raw, var_raw = _mean_var(raw)
        mean_adj, var_adj = _mean_var(adj)
        effect = effect or mean_raw
        per_deal_raw = _mean_var([d.points for d in ds if d.bot == a])[1]
        per_deal_adj = _mean_var([x for d, x in zip(ds, xs, strict=True) if d.bot == a])[1]
        result[name] = {
            "deal_sets": len(raw),
            "diff_raw": round(mean_raw, 2),
            "diff_adjusted": round(mean_adj, 2),
            "var_raw": round(var_raw, 1),
            "var_adjusted": round(var_adj, 1),
            "variance_ratio": round(var_adj / var_raw, 3) if var_raw else None,
            "needed_raw": round(_needed(effect, var_raw), 1),
            "needed_adjusted": round(_needed(effect, var_adj), 1),
            "factor_saved": round(var_raw / var_adj, 2) if var_adj else None,
            "a_per_deal_var_raw": round(per_deal_raw, 1),
            "a_per_deal_var_adjusted": round(per_deal_adj, 1),
        }
    return result


LADDER = """name = "luck-{variant}"
variant = "{variant}"
seed = {seed}
deal_sets = {deal_sets}
deals = 1
concurrency = 2
referees = 1

[time_control]
per_decision_ms = 600000
bank_ms = 600000

[[bots]]
name = "search"
command = "inprocess:bots.py:Search"

[[bots]]
name = "heuristic"
command = "inprocess:heuristic"

[[bots]]
name = "random"
command = "inprocess:random"
{extra}"""

BOTS = """from arena_bot.search_bot import SearchBot


class Search(SearchBot):
    def __init__(self, seed: str | None = None) -> None:
        super().__init__(think_ms=600_000, iterations={iterations}, seed=seed)
"""


def play_ladder(workdir: Path, variant: str, deal_sets: int, iterations: int, seed: int) -> tuple[Path, Path]:
    """Play (or go on playing) the measurement's ladder of `variant` with `arena ladder run`."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "bots.py").write_text(BOTS.format(iterations=iterations), encoding="utf-8")
    extra = '\n[[bots]]\nname = "random-2"\ncommand = "inprocess:random"\n' if variant == "american" else ""
    path = workdir / f"luck-{variant}.toml"
    path.write_text(
        LADDER.format(variant=variant, seed=seed, deal_sets=deal_sets, extra=extra), encoding="utf-8"
    )
    arena = Path(sys.executable).with_name("arena")
    subprocess.run(
        [str(arena), "ladder", "run", str(path), "--no-progress"], check=True, stdout=subprocess.DEVNULL
    )
    return workdir / f"luck-{variant}.sqlite", workdir / f"luck-{variant}-replays"


def run(args: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rollouts": ROLLOUTS,
        "expectation_decks": EXPECTATION_DECKS,
        "aa": [],
        "ladders": [],
    }
    for variant in args.variants:
        for seating in args.seatings:
            row = aa_calibration(variant, args.ladders, args.deal_sets, seating, args.policy)
            out["aa"].append(row)
            print(row, file=sys.stderr)
    pairs: list[tuple[Path, Path]] = list(zip(args.db, args.replay_dir, strict=True))
    if args.play is not None:
        for variant in args.variants:
            pairs.append(play_ladder(args.play, variant, args.play_deal_sets, args.iterations, args.seed))
    for db, replays in pairs:
        row = measure_ladder(db, replays, args.a, args.b)
        out["ladders"].append(row)
        print(row, file=sys.stderr)
    return out
