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


def _keys(red_pips_reversed: bool) -> tuple[int, ...]:
    """Trick-taking strength (G-RANK-1…3), taroks above every suit card; the led suit is checked apart."""
    out = []
    for i in range(78):
        if i >= TAROK_FIRST:
            out.append(1000 + i)
            continue
        suit, face = divmod(i, 14)
        face += 1
        out.append(11 - face if red_pips_reversed and suit in (1, 2) and face <= 10 else face)
    return tuple(out)


KEYS: Final = {flag: _keys(flag) for flag in (True, False)}
# Leading: low blanks first, then counting cards, taroks and honours last.
LEAD: Final[tuple[int, ...]] = tuple(VALUE[i] * 4 + (3 if i >= TAROK_FIRST else 0) for i in range(78))


def greedy(state: DealState, rng: random.Random) -> Action:
    """The rollout policy."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    phase = state.phase
    if phase == "play":
        return _play(state, legal, rng)
    if phase == "discard":
        return _lowest(legal, LEAD, rng)
    if phase == "call":
        hand = state.hands[state.turn or 0]
        return next((a for a in legal if a.card is not None and a.card not in hand), legal[0])
    if phase in ("declare", "announce"):
        return next((a for a in legal if a.type == "declare"), next(a for a in legal if a.type == "pass"))
    return next((a for a in legal if a.type == "pass"), legal[0])


def _lowest(actions: list[Action], score: tuple[int, ...], rng: random.Random) -> Action:
    """One of the actions whose card scores lowest, at random."""
    best = 1 << 30
    pool: list[Action] = []
    for a in actions:
        s = score[a.card or 0]
        if s < best:
            best = s
            pool = [a]
        elif s == best:
            pool.append(a)
    return pool[int(rng.random() * len(pool))]


def _play(state: DealState, legal: list[Action], rng: random.Random) -> Action:
    trick = state.trick
    if not trick:
        return _lowest(legal, LEAD, rng)
    keys = KEYS[state.variant.red_pips_reversed]
    seat = state.turn or 0
    led = state.led
    top = top_seat = -1
    points = 0
    for who, card in trick:
        points += VALUE[card]
        if card != FOOL and (card >= TAROK_FIRST or card // 14 == led):
            k = keys[card]
            if k > top:
                top, top_seat = k, who
    last = len(trick) == state.players - 1
    side = state.side
    friendly = top_seat >= 0 and side[top_seat] == side[seat]
    winners: list[Action] = []
    losers: list[Action] = []
    fool: Action | None = None
    for a in legal:
        if a.card is None or a.card == FOOL:
            fool = a
            continue
        c = int(a.card)
        if (c >= TAROK_FIRST or c // 14 == led) and keys[c] > top:
            winners.append(a)
        else:
            losers.append(a)
    if friendly and last:
        pool = losers or winners
        return max(pool, key=lambda a: VALUE[a.card or 0]) if pool else legal[0]
    if winners and not friendly:
        first = winners[0].card or 0
        if last or first >= TAROK_FIRST:
            if last or points > 0:
                return min(winners, key=lambda a: keys[a.card or 0])  # the cheapest card that wins
        else:
            return max(winners, key=lambda a: keys[a.card or 0])  # the top of the suit led
    pool = losers or winners
    if not pool:
        return legal[0]
    cheapest = min(pool, key=lambda a: VALUE[a.card or 0] * 2000 + keys[a.card or 0])
    if fool is not None and VALUE[cheapest.card or 0] >= 2:
        v = state.variant
        if v.fool_captured_from is None or state.trick_no < v.fool_captured_from:
            return fool  # the Fool is retained: throw it instead of a counting card
    return cheapest


def play_out(state: DealState, seat: int, rng: random.Random, policy: Policy = greedy) -> float:
    """Play `state` to its end with `policy` for everyone; the deal's points for `seat`."""
    apply = state.apply
    while not state.is_terminal():
        apply(policy(state, rng))
    return float(state.result().deltas[seat])
