"""`arena ladder benchmark --bot CMD --variant V`: one bot's score on a frozen benchmark.

The bot plays a versioned pack of deals (`frozen-pack-v1.json` beside this module: per variant,
match seeds and the sha256 of the decks they deal) against frozen reference opponents — the
heuristic bot and the search bot at fixed iterations and seed, and in four-seat variants the random
bot — in every rotation of the seats, so that it holds every seat's cards of every deck once.
The score is its mean points per deal, with a 95% interval over the pack's deal sets (the
independent unit). Nothing depends on the time: the opponents are deterministic for a seed, the
clock is generous, the decks are the pack's. A deterministic bot gets the same number on any
machine, this month or the next; a bot that faults (a timeout) gets a warning with its number.

The pack's version is part of the number: a new pack (another file, another version) is another
benchmark, and its reference scores are published again (docs/LADDER.md, "Frozen benchmark").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..engine import Variant, deck_for
from ..ratings import mean_ci
from ..referee.runner import MatchConfig
from ..referee.seat import TimeControl
from .config import BotSpec, bot_from_text
from .player import ClusterError
from .run import dispatch, open_player
from .schedule import ScheduledMatch, match_key
from .store import MatchRecord

PACK_VERSION = 1
PACK_FILE = Path(__file__).with_name(f"frozen-pack-v{PACK_VERSION}.json")
PACK_FORMAT = "arena-frozen-pack"
# The reference bots' own results on the pack, as published (docs/LADDER.md): what a new bot's number
# is compared with, and what any machine must reproduce (tests/ladder/test_frozen.py).
REFERENCES_FILE = Path(__file__).with_name(f"frozen-references-v{PACK_VERSION}.json")
REFERENCES_FORMAT = "arena-frozen-references"
SEARCH_ITERATIONS = 5  # the reference search bot's sampled deals per decision
SEARCH_SEED = "frozen-v1"
# A clock no bot that answers at all runs out of on any machine, so nothing depends on the time.
TIME_CONTROL = TimeControl(120_000, 600_000, 0)
REFERENCES = {
    "heuristic": "inprocess:heuristic",
    "search": "inprocess:arena.ladder.frozen:ReferenceSearch",
    "random": "inprocess:random",
}
OPPONENTS = {3: ("heuristic", "search"), 4: ("heuristic", "search", "random")}


class ReferenceSearch:
    """The SDK's search bot at SEARCH_ITERATIONS sampled deals a decision, its seed fixed by the
    match (never the time): the frozen benchmark's strongest opponent."""

    def __init__(self, seed: str | None = None) -> None:
        from arena_bot.search_bot import SearchBot

        self.bot = SearchBot(
            think_ms=float(TIME_CONTROL.per_decision_ms),
            iterations=SEARCH_ITERATIONS,
            seed=f"{SEARCH_SEED}:{seed or ''}",
        )

    def decide(self, request: Any) -> Any:
        return self.bot.decide(request)


class PackError(Exception):
    """The pack file is missing, damaged, or deals other cards than when it was frozen."""


@dataclass(frozen=True)
class Pack:
    version: int
    variant: str
    seeds: tuple[int, ...]  # one match seed per deal set
    deals: int  # deals per match
    sha256: str  # of the decks the seeds deal (`decks_digest`)


def decks_digest(seeds: tuple[int, ...], deals: int) -> str:
    """The sha256 of every deck the seeds deal, in order: the pack's cards, checked at each run."""
    digest = hashlib.sha256()
    for seed in seeds:
        for deal in range(deals):
            digest.update((" ".join(map(str, deck_for(seed, deal))) + "\n").encode())
    return digest.hexdigest()


def pack_seeds(variant: str, count: int, version: int = PACK_VERSION) -> tuple[int, ...]:
    """How the pack's seeds were made (kept to document the file; the file is what counts)."""
    return tuple(
        int.from_bytes(hashlib.sha256(f"arena-frozen-v{version}:{variant}:{i}".encode()).digest()[:8], "big")
        >> 1
        for i in range(count)
    )


def _read(path: Path, form: str, what: str) -> dict[str, Any]:
    """A JSON file of the benchmark (`what`, for the error), checked to be of the format `form`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PackError(f"cannot read {what} {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != form:
        raise PackError(f"{path}: not {what}")
    return data


def load_pack(variant: Variant, path: Path = PACK_FILE) -> Pack:
    """The pack's deal sets of `variant`, checked against the decks they deal here."""
    data = _read(path, PACK_FORMAT, "the benchmark pack")
    entry = data.get("variants", {}).get(variant.name)
    if entry is None:
        known = ", ".join(sorted(data.get("variants", {})))
        raise PackError(f"the benchmark pack v{data.get('version')} has no {variant.name} (it has {known})")
    pack = Pack(
        int(data["version"]), variant.name, tuple(entry["seeds"]), int(entry["deals"]), entry["sha256"]
    )
    if decks_digest(pack.seeds, pack.deals) != pack.sha256:
        raise PackError(
            f"{path}: the {variant.name} seeds no longer deal the decks frozen in the pack (sha256 differs): "
            "the engine's shuffle changed, and scores are not comparable with the published ones"
        )
    return pack


def published(variant: str, path: Path = REFERENCES_FILE) -> dict[str, dict[str, Any]]:
    """The reference bots' published results on the pack's `variant`, by reference name (each as
    `BenchmarkResult.to_dict` printed it); empty when none were published."""
    data = _read(path, REFERENCES_FORMAT, "the published reference scores")
    found = data.get("variants", {}).get(variant, {})
    return dict(found) if isinstance(found, dict) else {}


def published_line(variant: str, deal_sets: int | None = None, path: Path = REFERENCES_FILE) -> str:
    """One line naming the published reference scores, to read a bot's number against: over the
    same first `deal_sets` of the pack as the bot's run (all of them by default)."""
    scores = published(variant, path)
    if not scores:
        return f"no reference scores are published for {variant} on pack v{PACK_VERSION}"
    shown = []
    for name, entry in sorted(scores.items()):
        ci = mean_ci([float(x) for x in entry["per_deal_set"][:deal_sets]])
        half = "" if math.isinf(ci.half_width) else f" ± {ci.half_width:.1f}"
        shown.append(f"{name} {ci.mean:+.1f}{half}")
    sets = "" if deal_sets is None else f", first {deal_sets} deal sets"
    return f"the references' own published scores (pack v{PACK_VERSION}, {variant}{sets}): {', '.join(shown)}"


@dataclass
class BenchmarkResult:
    bot: str
    variant: str
    pack_version: int
    deal_sets: int
    deals: int  # the bot's deals played (not annulled)
    points_per_deal: float  # the number
    ci95: float  # half width of its 95% interval over the deal sets
    per_deal_set: list[float] = field(default_factory=list)
    opponents: dict[str, float] = field(default_factory=dict)  # each reference's points per deal
    faults: int = 0  # the bot's faulted decisions (any: its number may depend on the machine)

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["ci95"] = None if math.isinf(self.ci95) else round(self.ci95, 4)
        data["points_per_deal"] = round(self.points_per_deal, 4)
        data["per_deal_set"] = [round(x, 4) for x in self.per_deal_set]
        data["opponents"] = {k: round(v, 4) for k, v in self.opponents.items()}
        return data

    def summary(self) -> str:
        ci = "" if math.isinf(self.ci95) else f" ± {self.ci95:.1f}"
        others = ", ".join(f"{name} {value:+.1f}" for name, value in self.opponents.items())
        line = (
            f"{self.bot}: {self.points_per_deal:+.2f}{ci} points per deal (95% CI) on the frozen benchmark "
            f"v{self.pack_version}, {self.variant}: {self.deal_sets} deal sets, {self.deals} deals; "
            f"the references at its table: {others}"
        )
        if self.faults:
            line += (
                f"\nwarning: the bot faulted {self.faults} times (a timeout depends on the machine): "
                "this number may not be comparable"
            )
        return line


def schedule(pack: Pack, deal_sets: int, candidate: str, opponents: tuple[str, ...]) -> list[ScheduledMatch]:
    """Every deal set's matches: the seats' rotations of (candidate, opponents…)."""
    order = (candidate, *opponents)
    out = []
    for deal_set, seed in enumerate(pack.seeds[:deal_sets]):
        for r in range(len(order)):
            bots = tuple(order[(i - r) % len(order)] for i in range(len(order)))
            out.append(ScheduledMatch(match_key(deal_set, bots), deal_set, 0, r, seed, bots))
    return out


def score(records: list[MatchRecord], candidate: str, opponents: tuple[str, ...]) -> BenchmarkResult:
    """The candidate's per-deal-set means and the result (variant and pack filled in by the caller)."""
    points: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    faults = 0
    for record in sorted(records, key=lambda m: (m.deal_set, m.arrangement)):
        for deal in record.deals:
            if deal.annulled:
                continue
            for seat, name in enumerate(record.seats):
                if deal.active[seat]:
                    points[name][record.deal_set].append(deal.points[seat])
        faults += sum(1 for f in record.faults if record.seats[f.seat] == candidate)
    mine = points[candidate]
    per_set = [sum(v) / len(v) for _, v in sorted(mine.items()) if v]
    ci = mean_ci(per_set)
    others = {}
    for name in opponents:
        every = [p for values in points[name].values() for p in values]
        others[name] = sum(every) / len(every) if every else 0.0
    return BenchmarkResult(
        bot=candidate,
        variant="",
        pack_version=PACK_VERSION,
        deal_sets=len(per_set),
        deals=sum(len(v) for v in mine.values()),
        points_per_deal=ci.mean,
        ci95=ci.half_width,
        per_deal_set=per_set,
        opponents=others,
        faults=faults,
    )


async def run_benchmark(
    variant: Variant,
    bot: BotSpec,
    *,
    deal_sets: int | None = None,
    concurrency: int = 2,
    replay_dir: Path | None = None,
    pack_path: Path = PACK_FILE,
) -> BenchmarkResult:
    """Play the frozen benchmark of `variant` with `bot`; `deal_sets` takes the pack's first ones."""
    pack = load_pack(variant, pack_path)
    count = len(pack.seeds) if deal_sets is None else min(deal_sets, len(pack.seeds))
    opponents = OPPONENTS[variant.seats]
    if bot.name in opponents:
        bot = dataclasses.replace(bot, name=f"{bot.name}-candidate")
    references = [bot_from_text(REFERENCES[name], name=name) for name in opponents]
    pending = schedule(pack, count, bot.name, opponents)
    records: list[MatchRecord] = []

    def match_config(scheduled: ScheduledMatch) -> MatchConfig:
        return MatchConfig(
            variant=variant,
            deals=pack.deals,
            seed=scheduled.seed,
            seat_names=scheduled.bots,
            time_control=TIME_CONTROL,
            reconnect_grace_s=2.0,
        )

    with tempfile.TemporaryDirectory(prefix="arena-benchmark-") as scratch:
        directory = replay_dir or Path(scratch)
        async with open_player([bot, *references], None, match_config, directory, concurrency) as player:

            async def work(scheduled: ScheduledMatch) -> None:
                played = await player.play_record(scheduled)
                if played is None:
                    raise ClusterError(f"match {scheduled.key} failed inside the referee; see the log")
                records.append(played)

            await dispatch(pending, concurrency, lambda m: set(), work)
    result = score(records, bot.name, opponents)
    result.variant = variant.name
    result.pack_version = pack.version
    return result


def run(variant: Variant, bot: BotSpec, **kwargs: Any) -> BenchmarkResult:
    return trio.run(lambda: run_benchmark(variant, bot, **kwargs))
