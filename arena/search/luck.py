"""The luck of a deal: what the cards alone are worth to each seat (a control variate's core).

The *control* of a deal and seat is the seat's mean points when the rollout policy (`greedy`)
plays every seat of the deal from its start, over a few fixed rollout seeds: a function of the
deal (deck, dealer, pots) alone, the same on any machine. Its expectation per place after the
dealer is estimated out of sample on decks of a stream of its own. A score minus
β · (control − expectation) has the score's expectation whenever β does not depend on the deal:
spread is taken away, no bias is added. The ladder (`arena.ladder.luck`) and the standing arena
(`arena.standing.luck`) both use it.

The expectation for the variants the standing arena adjusts is shipped with the package
(`luck-expectation-v1.json`, made by `python -m arena.search.luck`): estimating it costs tens of
seconds of CPU per variant, which a server should not spend at each start nor a test at each run.
Any other (variant, options, decks, rollouts) is estimated once per process when first asked for.
"""

from __future__ import annotations

import functools
import json
import random
import sys
from importlib import resources

from ..engine import CARDS, Card, DealState, Match, Variant, find_variant
from ..engine.state import replayed
from .rollout import greedy

ROLLOUTS = 8  # self-play rollouts averaged into one deal's control
EXPECTATION_DECKS = 2000  # decks of the out-of-sample estimate of E[control]
TABLE = "luck-expectation-v1.json"
SHIPPED = ("grosstarock", "danish", "german-1754")  # at their default options


def control(state: DealState, rollouts: int = ROLLOUTS) -> tuple[float, ...]:
    """The points of each seat when the rollout policy plays every seat of `state` to its end,
    averaged over `rollouts` fixed seeds: a function of the deal alone."""
    args = state.__reduce__()[1]
    totals = [0.0] * state.seats
    for r in range(rollouts):
        play = replayed(*args)
        rng = random.Random(f"arena-luck:{r}")
        while not play.is_terminal():
            play.apply(greedy(play, rng))
        for seat, delta in enumerate(play.result().deltas):
            totals[seat] += delta
    return tuple(t / rollouts for t in totals)


def first_deal_state(variant: Variant, dealer: int, deck: list[Card]) -> DealState:
    """The deal of `deck` and `dealer` with the pots and stakes of a match's first deal: its
    control depends on the cards and the dealer only, never on what bots did before."""
    first = Match(variant, 0, 1).start_deal()
    return DealState(variant, dealer, deck, pots=first.pots_start, stakes=first.stakes)


def expectation_deck(index: int) -> list[Card]:
    """Deck `index` of the expectation's own stream (no match's or ladder's deck)."""
    deck = list(CARDS)
    random.Random(f"arena-luck-expectation:{index}").shuffle(deck)
    return deck


def _key(name: str, options: tuple[tuple[str, str], ...], decks: int, rollouts: int) -> str:
    opts = ",".join(f"{k}={v}" for k, v in options)
    return f"{name}[{opts}]/{decks}x{rollouts}"


@functools.cache
def _shipped() -> dict[str, list[float]]:
    try:
        text = resources.files(__package__).joinpath(TABLE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    table: dict[str, list[float]] = json.loads(text)["expectations"]
    return table


def estimate(variant: Variant, decks: int, rollouts: int) -> tuple[float, ...]:
    """E[control] by place after the dealer, estimated now on `decks` decks (the dealer takes
    every seat in turn)."""
    totals = [0.0] * variant.seats
    for index in range(decks):
        dealer = index % variant.seats
        values = control(first_deal_state(variant, dealer, expectation_deck(index)), rollouts)
        for seat, value in enumerate(values):
            totals[(seat - dealer) % variant.seats] += value
    return tuple(t / decks for t in totals)


@functools.lru_cache(maxsize=32)
def _expectation(
    name: str, options: tuple[tuple[str, str], ...], decks: int, rollouts: int
) -> tuple[float, ...]:
    shipped = _shipped().get(_key(name, options, decks, rollouts))
    if shipped is not None:
        return tuple(shipped)
    return estimate(find_variant(name, dict(options)), decks, rollouts)


def expectation(
    variant: Variant, decks: int = EXPECTATION_DECKS, rollouts: int = ROLLOUTS
) -> tuple[float, ...]:
    """E[control] by the seat's place after the dealer (0: the dealer): shipped, or estimated
    once per process."""
    options = tuple(sorted(variant.options.items()))
    return _expectation(variant.name, options, decks, rollouts)


def luck(variant: Variant, dealer: int, deck: list[Card], rollouts: int = ROLLOUTS) -> tuple[float, ...]:
    """Each seat's luck on a deal: control − E[control] for its place (pots of a first deal)."""
    values = control(first_deal_state(variant, dealer, deck), rollouts)
    expected = expectation(variant, rollouts=rollouts)
    return tuple(v - expected[(seat - dealer) % variant.seats] for seat, v in enumerate(values))


def main(argv: list[str]) -> None:
    """Write the shipped table: `python -m arena.search.luck [VARIANT ...] > luck-expectation-v1.json`."""
    expectations = {}
    for name in argv or SHIPPED:
        variant = find_variant(name, {})
        options = tuple(sorted(variant.options.items()))
        key = _key(variant.name, options, EXPECTATION_DECKS, ROLLOUTS)
        expectations[key] = list(estimate(variant, EXPECTATION_DECKS, ROLLOUTS))
        print(key, expectations[key], file=sys.stderr)
    json.dump(
        {"format": "arena-luck-expectation", "version": 1, "expectations": expectations}, sys.stdout, indent=1
    )
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
