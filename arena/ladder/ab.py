"""`arena ladder ab A B --against X Y …`: is A stronger than B?

A and B take turns in the same place at the same table: for each deal set and each seat
arrangement of (candidate, X, Y, …) two matches are played, one with A as the candidate and
one with B, on the same decks, with the opponents in the same seats and started from the same
seeds. A deck's difference is A's points minus B's on it, averaged over the seat arrangements
(a duplicate board score); the observation is one per deal set, the mean of its decks'
differences, as for a ladder's pairs (`decide.py`): deal sets are independent of each other.
After each deal set, taken in order, `sprt.PairTest` (is either stronger by the effect or more,
or are the two closer than it?) decides or asks for more; the test stops at a verdict or after
`max_deal_sets`.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import trio

from ..engine import Variant
from ..ratings import mean_ci
from ..referee.runner import MatchConfig
from ..referee.seat import TimeControl
from ..replay.summary import DealRow
from .cluster import RayPlayer
from .config import BotSpec
from .player import ClusterError
from .run import RayOptions, dispatch, open_player, play_counted
from .schedule import ScheduledMatch, arrangements, deal_set_seed, match_key
from .sprt import PairTest
from .store import MatchRecord

log = structlog.get_logger(component="ladder")

CANDIDATE = "\0candidate"  # the place at the table that A and B take in turn


def unique_names(bots: list[BotSpec]) -> list[BotSpec]:
    """Bots with distinct names (the second "random" becomes "random-2"): names key the seeds."""
    seen: dict[str, int] = defaultdict(int)
    result = []
    for bot in bots:
        seen[bot.name] += 1
        if seen[bot.name] > 1:
            bot = dataclasses.replace(bot, name=bot.name + f"-{seen[bot.name]}")
        result.append(bot)
    return result


@dataclass(frozen=True)
class ABConfig:
    variant: Variant
    a: BotSpec
    b: BotSpec
    against: tuple[BotSpec, ...]
    deals: int = 3
    seed: int = 0
    concurrency: int = 2
    referees: int = 1  # referee processes on this machine (`referees.py`)
    alpha: float = 0.05  # P(either declared stronger when they are equal), α/2 each way
    beta: float = 0.05  # P(a difference of the effect missed)
    effect: float = 0.3  # in standard deviations of a deal set's observation
    min_deal_sets: int = 6  # no verdict on fewer observations (the least evidence accepted)
    max_deal_sets: int = 100
    per_decision_ms: int = 5_000
    bank_ms: int = 30_000

    def __post_init__(self) -> None:
        if len(self.against) != self.variant.seats - 1:
            raise ValueError(f"{self.variant.name} needs {self.variant.seats - 1} opponents")

    def test(self) -> PairTest:
        return PairTest(self.alpha, self.beta, self.effect, self.min_deal_sets)


@dataclass
class ABResult:
    a: str
    b: str
    decision: str | None  # "A" or "B" (stronger by the effect), "equal" (closer), None (undecided)
    llr_a: float  # LLR of "A stronger by the effect" against "equal"
    llr_b: float  # LLR of "B stronger by the effect" against "equal"
    lower: float
    upper: float
    alpha: float
    beta: float
    effect: float
    deals: int  # decks with a paired score difference
    deal_sets: int  # deal sets played in order (an observation each, unless none of its deals paired)
    matches: int
    mean_diff: float
    ci95: float
    seconds: float
    interrupted: bool = False
    stopped_by: int = 0  # the signal that interrupted it (SIGINT or SIGTERM), for the exit status
    observations: list[float] = field(default_factory=list)  # one per deal set

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        del data["stopped_by"]  # the exit status says it
        for key in ("llr_a", "llr_b"):
            if math.isinf(data[key]):
                data[key] = math.copysign(1e308, data[key])
        data["ci95"] = None if math.isinf(self.ci95) else self.ci95
        return data

    def summary(self) -> str:
        rates = f"α = {self.alpha:g}, β = {self.beta:g}, effect {self.effect:g} sd"
        sets, matches = _count(self.deal_sets, "deal set"), _count(self.matches, "match")
        played = f"{sets} ({_count(self.deals, 'deck')}, {matches})"
        llrs = f"LLR A {self.llr_a:.2f}, B {self.llr_b:.2f}"
        if self.decision in ("A", "B"):
            winner, loser = (self.a, self.b) if self.decision == "A" else (self.b, self.a)
            verdict = f"{self.decision}: {winner} is stronger than {loser}, decided after {played}"
            verdict += f"; {llrs} (decides at ≥ {self.upper:.2f}; {rates})."
        elif self.decision == "equal":
            verdict = f"equal: {self.a} and {self.b} are closer than the effect, decided after {played}"
            verdict += f"; {llrs} (both ≤ {self.lower:.2f}; {rates})."
        else:
            why = "interrupted" if self.interrupted else "the limit was reached"
            verdict = f"undecided after {played}, {why}; {llrs} "
            verdict += f"(bounds {self.lower:.2f}, {self.upper:.2f}; {rates})."
        ci = "" if math.isinf(self.ci95) else f" ± {self.ci95:.1f}"
        return (
            f"{verdict}\nmean score difference per deal, A ({self.a}) − B ({self.b}): "
            f"{self.mean_diff:+.1f}{ci} (95% CI over deal sets)"
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('ch') else 's'}"


# A seat's score in one deal of a played match (by default its game points): the seam for
# scores with the luck taken out.
DealScore = Callable[[MatchRecord, DealRow, int], float]


def deal_points(match: MatchRecord, deal: DealRow, seat: int) -> float:
    return float(deal.points[seat])


def observations(
    set_matches: list[MatchRecord], a: str, b: str, score: DealScore = deal_points
) -> list[float]:
    """One deal set's observations: per deck, A's score minus B's in the same seat, averaged
    over the arrangements in which both deals were played (not annulled, not sat out)."""
    by_key = {p.key: p for p in set_matches}
    diffs: dict[int, list[float]] = defaultdict(list)
    for played in set_matches:
        bots = tuple(played.seats)
        if a not in bots:
            continue
        seat = bots.index(a)
        twin = by_key[match_key(played.deal_set, [b if n == a else n for n in bots])]
        twin_deals = {d.deal: d for d in twin.deals}
        for deal in played.deals:
            other = twin_deals.get(deal.deal)
            if (
                other is None
                or deal.annulled
                or other.annulled
                or not (deal.active[seat] and other.active[seat])
            ):
                continue
            diffs[deal.deal].append(score(played, deal, seat) - score(twin, other, seat))
    return [sum(values) / len(values) for _, values in sorted(diffs.items())]


@dataclass
class ABTally:
    """The test so far: deal sets added in order, one observation each (the mean of its decks'
    differences; none when no deck of it paired), and the verdict after each."""

    test: PairTest
    a: str
    b: str
    score: DealScore = deal_points
    xs: list[float] = field(default_factory=list)
    deals: int = 0  # decks with a paired difference

    def add(self, set_matches: list[MatchRecord]) -> str | None:
        decks = observations(set_matches, self.a, self.b, self.score)
        if decks:
            self.xs.append(sum(decks) / len(decks))
            self.deals += len(decks)
        return self.test.decide(self.xs)


def schedule_ab(config: ABConfig, a: str, b: str, others: list[str]) -> list[ScheduledMatch]:
    seating = "permutations" if config.variant.seats == 3 else "rotations"
    result = []
    for deal_set in range(config.max_deal_sets):
        seed = deal_set_seed(config.seed, deal_set)
        for index, order in enumerate(arrangements([CANDIDATE, *others], seating, deal_set)):
            for name in (a, b):
                bots = tuple(name if n == CANDIDATE else n for n in order)
                result.append(ScheduledMatch(match_key(deal_set, bots), deal_set, 0, index, seed, bots))
    return result


async def run_ab(
    config: ABConfig,
    replay_dir: Path | None = None,
    ray: RayOptions | None = None,
    score: DealScore = deal_points,
) -> ABResult:
    """The A/B test of the module docstring, played here or, with `ray`, on a Ray cluster
    (the bots' commands must then exist on its workers: nothing is shipped to them); `score`
    gives each seat's score in a deal (game points unless told)."""
    bots = unique_names([config.a, config.b, *config.against])
    a, b = bots[0].name, bots[1].name
    others = [bot.name for bot in bots[2:]]
    by_name = {bot.name: bot for bot in bots}
    test = config.test()
    tally = ABTally(test, a, b, score)
    pending = schedule_ab(config, a, b, others)
    per_set = len(pending) // config.max_deal_sets
    time_control = TimeControl(config.per_decision_ms, config.bank_ms, 0)
    started = time.monotonic()
    finished_sets: dict[int, list[MatchRecord]] = defaultdict(list)
    state: dict[str, Any] = {"next": 0, "decision": None, "matches": 0, "interrupted": False, "signal": 0}

    def match_config(scheduled: ScheduledMatch) -> MatchConfig:
        return MatchConfig(
            variant=config.variant,
            deals=config.deals,
            seed=scheduled.seed,
            seat_names=scheduled.bots,
            time_control=time_control,
            reconnect_grace_s=2.0,
        )

    with tempfile.TemporaryDirectory(prefix="arena-ab-") as scratch:
        directory = replay_dir or Path(scratch)
        log.info(
            "a/b test started",
            a=a,
            b=b,
            against=others,
            deals=config.deals,
            alpha=config.alpha,
            beta=config.beta,
            effect=config.effect,
        )
        async with (
            open_player(
                list(by_name.values()),
                ray,
                match_config,
                directory,
                config.concurrency,
                referees=config.referees,
            ) as player,
            trio.open_nursery() as nursery,
        ):

            async def work(scheduled: ScheduledMatch) -> None:
                counted = await play_counted(player, scheduled, lambda name: not by_name[name].remote)
                played = counted.record
                if played is None:
                    why = "was not evidence in any play" if counted.voided else "failed inside the referee"
                    raise ClusterError(f"match {scheduled.key} {why}; see the log")
                state["matches"] += 1
                finished_sets[scheduled.deal_set].append(played)
                # Deal sets enter the test in order, whatever order their matches end in.
                while len(finished_sets.get(state["next"], ())) == per_set:
                    done = finished_sets.pop(state["next"])
                    decision = tally.add(done)
                    state["next"] += 1
                    llr_a, llr_b = test.llrs(tally.xs)
                    log.info(
                        "deal set done",
                        deal_set=state["next"] - 1,
                        observations=len(tally.xs),
                        llr_a=round(llr_a, 3),
                        llr_b=round(llr_b, 3),
                        decision=decision,
                    )
                    if decision is not None:
                        state["decision"] = decision
                        nursery.cancel_scope.cancel()
                        return

            async def watch_signals() -> None:
                with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        state["interrupted"], state["signal"] = True, int(signum)
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(watch_signals)
            slots = player.slots if isinstance(player, RayPlayer) else config.concurrency
            await dispatch(pending, slots, lambda m: set(), work)
            nursery.cancel_scope.cancel()
    xs = tally.xs
    ci = mean_ci(xs)
    llr_a, llr_b = test.llrs(xs)
    return ABResult(
        a=a,
        b=b,
        decision=state["decision"],
        llr_a=llr_a,
        llr_b=llr_b,
        lower=test.lower,
        upper=test.upper,
        alpha=config.alpha,
        beta=config.beta,
        effect=config.effect,
        deals=tally.deals,
        deal_sets=state["next"],
        matches=state["matches"],
        mean_diff=ci.mean,
        ci95=ci.half_width,
        seconds=round(time.monotonic() - started, 2),
        interrupted=state["interrupted"],
        stopped_by=state["signal"],
        observations=xs,
    )
