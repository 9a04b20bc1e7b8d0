"""Engine throughput: random legal play through the public engine API on one core.

The loop is what a referee or a search bot does, minus everything else: deal a
fresh shuffled deck, pick a uniformly random legal action until the deal ends,
score it.  Only the engine is measured; there is no I/O inside the loop.

The anchor is OpenSpiel's C++ `hearts` (pyspiel, when installed) driven by the same
loop from Python: its player actions per second, in slices that alternate with each
variant's, so that a machine that gets busier or quieter affects both alike.  Its
deal (chance actions) is timed but not counted, as ours is.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.engine import BUILD, Card, DealState, Variant

from .common import Timed, alternate, rate, ratio, run_for

SLICE_S = 0.25
ANCHOR = "hearts"


@dataclass(frozen=True, slots=True)
class EngineBench:
    """What one variant's run measured, and the anchor in the same slices (None: no pyspiel)."""

    variant: str
    options: dict[str, str]
    deals: int
    actions: int
    seconds: float
    anchor: Timed | None = None

    @property
    def actions_per_s(self) -> float:
        return rate(self.actions, self.seconds)

    @property
    def deals_per_s(self) -> float:
        return rate(self.deals, self.seconds)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "variant": self.variant,
            "options": dict(self.options),
            "deals": self.deals,
            "actions": self.actions,
            "seconds": round(self.seconds, 3),
            "actions_per_s": round(self.actions_per_s, 1),
            "deals_per_s": round(self.deals_per_s, 2),
        }
        if self.anchor is not None:
            out[f"{ANCHOR}_actions_per_s"] = round(self.anchor.rate, 1)
            out[f"ratio_to_{ANCHOR}"] = ratio(self.actions_per_s, self.anchor.rate)
        return out


def bench_engine(variant: Variant, seconds: float, seed: int = 0, anchor: bool = True) -> EngineBench:
    """Play random deals for about `seconds` (whole deals only) and count them; with `anchor` and
    pyspiel installed, OpenSpiel's `hearts` for as long, in alternating slices."""
    ours = fresh_deal(variant, seed)
    hearts = hearts_deal(seed) if anchor else None
    if hearts is None:
        timed = run_for(seconds, ours)
        return EngineBench(variant.name, dict(variant.options), timed.steps, timed.count, timed.seconds)
    both = alternate(seconds, {"ours": ours, ANCHOR: hearts}, SLICE_S)
    timed = both["ours"]
    return EngineBench(
        variant.name, dict(variant.options), timed.steps, timed.count, timed.seconds, both[ANCHOR]
    )


def engine_report(benches: list[EngineBench]) -> dict[str, Any]:
    """The runs of `python -m benchmarks engine`, with the build and the anchor."""
    anchored = [b.anchor for b in benches if b.anchor is not None]
    return {
        "build": BUILD,
        "anchor": f"open_spiel {open_spiel_version()} {ANCHOR}" if anchored else None,
        f"{ANCHOR}_actions_per_s": round(sum(anchored, Timed()).rate, 1) if anchored else None,
        "variants": [b.to_dict() for b in benches],
    }


def open_spiel_version() -> str | None:
    """The installed open_spiel's version, or None without pyspiel."""
    if importlib.util.find_spec("pyspiel") is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("open_spiel")
    except PackageNotFoundError:
        return "?"


def hearts_deal(seed: int = 0) -> Callable[[], int] | None:
    """A step of the anchor: a deal of OpenSpiel's `hearts`, dealt and played at random through
    pyspiel; the step returns the player actions.  None without pyspiel."""
    if importlib.util.find_spec("pyspiel") is None:
        return None
    game = importlib.import_module("pyspiel").load_game(ANCHOR)
    choice = random.Random(f"{seed}:{ANCHOR}").choice

    def step() -> int:
        state = game.new_initial_state()
        actions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])  # the deal: uniform outcomes
            else:
                state.apply_action(choice(state.legal_actions()))
                actions += 1
        state.returns()
        return actions

    return step


def fresh_deal(variant: Variant, seed: int = 0) -> Callable[[], int]:
    """A step of the bench: shuffle the deck, deal it (the dealer rotating), play the deal out at
    random and score it; the step returns the actions played."""
    rng = random.Random(f"{seed}:bench")
    shuffle = rng.shuffle
    choice = rng.choice
    deck = [Card(i) for i in range(78)]
    dealers = itertools.cycle(range(variant.seats))

    def step() -> int:
        shuffle(deck)
        state = DealState(variant, dealer=next(dealers), deck=list(deck))
        actions = play_out(state, choice)
        state.result()
        return actions

    return step


def play_out(state: DealState, choice: Callable[[Any], Any]) -> int:
    """Apply a uniformly random legal action until the deal ends; the number of actions."""
    legal_actions = state.legal_actions
    apply = state.apply
    is_terminal = state.is_terminal
    actions = 0
    while not is_terminal():
        apply(choice(legal_actions()))
        actions += 1
    return actions
