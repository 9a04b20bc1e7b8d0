"""A cheap policy that plays a deal to its end, for the rollouts of the search.

It decides from the whole `DealState` (a rollout runs inside a sampled deal, where every hand is
known), so it is fast rather than fair. The rules of thumb are those of the SDK's heuristic bot,
simplified: win a trick cheaply when it carries points or when playing last, otherwise throw the
cheapest card (the Fool while it is retained instead of a counting card), lead low; discard low
blanks; declare every combination; pass on every bid, announcement, redeal and demand; call a
King the declarer lacks. A little noise breaks ties so that rollouts from one deal differ.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final

from arena.engine import Action, DealState
from arena.engine.cards import FOOL, MOND, PAGAT

Policy = Callable[[DealState, random.Random], Action]
"""A rollout policy: one legal action of the player to act in a (fully known) deal."""

TAROK_FIRST: Final = 56


def _value(i: int) -> int:
    if i in (PAGAT, MOND, FOOL):
        return 5
    if i < 56:
        face = i % 14 + 1
        return max(0, face - 9)  # J 2, C 3, Q 4, K 5
    return 0


VALUE: Final[tuple[int, ...]] = tuple(_value(i) for i in range(78))
"""How much a card is worth keeping out of the opponents' tricks (Kings and honours 5 … blanks 0)."""


def _key(state: DealState, card: int) -> int:
    """Trick-taking strength: taroks above every suit card (the led suit is checked apart)."""
    return state.strength[card] + (1000 if TAROK_FIRST <= card < FOOL else 0)


def greedy(state: DealState, rng: random.Random) -> Action:
    """The rollout policy."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    phase = state.phase
    if phase == "play":
        return _play(state, legal, rng)
    if phase == "discard":
        return min(legal, key=lambda a: (VALUE[a.card or 0], (a.card or 0) >= TAROK_FIRST, rng.random()))
    if phase == "call":
        hand = state.hands[state.turn or 0]
        return next((a for a in legal if a.card is not None and a.card not in hand), legal[0])
    if phase in ("declare", "announce"):
        return next((a for a in legal if a.type == "declare"), next(a for a in legal if a.type == "pass"))
    return next((a for a in legal if a.type == "pass"), legal[0])


def _play(state: DealState, legal: list[Action], rng: random.Random) -> Action:
    trick = state.trick
    seat = state.turn or 0
    if not trick:
        # Lead a cheap card: low blanks first, keeping taroks and honours back.
        return min(
            legal,
            key=lambda a: (
                VALUE[a.card or 0] * 4 + (3 if (a.card or 0) >= TAROK_FIRST else 0) + rng.random() * 3,
                a.suit is not None,
            ),
        )
    led = state.led
    best_seat, best = -1, -1
    for who, card in trick:
        if card == FOOL:
            continue
        if card >= TAROK_FIRST or (card < 56 and card // 14 == led):
            k = _key(state, card)
            if k > best:
                best, best_seat = k, who
    points = sum(VALUE[c] for _s, c in trick)
    last = len(trick) == state.players - 1
    friendly = best_seat >= 0 and best_seat != seat and state.side[best_seat] == state.side[seat]
    winners: list[Action] = []
    losers: list[Action] = []
    for a in legal:
        if a.card is None or a.card == FOOL:
            continue
        played = int(a.card)
        beats = played >= TAROK_FIRST or (played < 56 and played // 14 == led)
        (winners if beats and _key(state, played) > best else losers).append(a)
    if friendly and last:
        pool = losers or winners
        return max(pool, key=lambda a: VALUE[a.card or 0]) if pool else legal[0]
    if winners and not friendly and (last or points > 0 or (winners[0].card or 0) < TAROK_FIRST):
        if last or (winners[0].card or 0) >= TAROK_FIRST:
            return min(winners, key=lambda a: _key(state, a.card or 0))
        return max(winners, key=lambda a: _key(state, a.card or 0))
    pool = losers or winners
    if not pool:
        return legal[0]
    cheapest = min(pool, key=lambda a: (VALUE[a.card or 0], _key(state, a.card or 0), rng.random()))
    fool = next((a for a in legal if a.card == FOOL), None)
    retained = state.variant.fool_captured_from is None or state.trick_no < state.variant.fool_captured_from
    if fool is not None and retained and VALUE[cheapest.card or 0] >= 2:
        return fool
    return cheapest


def play_out(state: DealState, seat: int, rng: random.Random, policy: Policy = greedy) -> float:
    """Play `state` to its end with `policy` for everyone; the deal's points for `seat`."""
    apply = state.apply
    while not state.is_terminal():
        apply(policy(state, rng))
    return float(state.result().deltas[seat])
