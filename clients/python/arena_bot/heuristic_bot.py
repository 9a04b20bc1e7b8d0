"""A simple rule-of-thumb bot that plays sensibly from its view alone.

    python -m arena_bot.heuristic_bot [--address HOST:PORT] [--token TOKEN] [--name NAME]

`decide(request)` is a pure function of the `DecisionRequest` (no state, no randomness), so it
can be tested without a network. It never breaks a rule itself: it only ever picks one of
`request.legal_actions`, so every variant rule reaches it through the legal actions.

What it does:

* discard: lays away low blanks (never a King; never an honour or a tarok unless nothing else
  is legal), preferring short suits, to make voids;
* declares every combination it may; passes on Vole/Nolo, redeal and demand;
* keeps the Pagat (T1) home until the last trick and tries for the ultimo: while it holds
  enough taroks to exhaust the others', it leads high taroks to draw them;
* plays a King (or another counting card) only when it is likely to win the trick: leading it
  when no opponent is likely to trump, or when it wins as the last player; when void it throws
  its lowest blank, never a King; it trumps low;
* plays the Fool into a trick it would lose anyway, while the Fool is retained (not in captured
  tricks: ``grosstarock`` 23–25, ``danish`` 25), at the latest in the last retained trick;
* late in the deal it plays Kings that would otherwise face a failed ultimo in the last trick.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

from arena_bot import cards as C
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2

# The last trick in which a played Fool is retained, per variant (later it is captured).
FOOL_DEADLINE = {"grosstarock": 22, "danish": 23, "german-1754": 23, "danish-pots": 25}
LEAD_SAFE = 0.8  # lead a top card when it wins with at least this probability
SECOND_SAFE = 0.75  # second to play: play a top card when the third is this likely to follow


def _led(plays: Sequence[tuple[int, str]], designation: str, redesignation: str) -> str:
    """`C.led_suit` of the cards of `plays`, without making their list (asked for every trick)."""
    if redesignation:
        return redesignation
    if not plays:
        return ""
    first = plays[0][1]
    if first != C.FOOL:
        return C.suit(first)
    if designation:
        return designation
    return C.suit(plays[1][1]) if len(plays) > 1 else ""


# A completed trick is the same in every later request of its deal: what it shows is worked out once.
@functools.lru_cache(maxsize=4096)
def _voids_shown(
    plays: tuple[tuple[int, str], ...], designation: str, redesignation: str
) -> tuple[tuple[int, str], ...]:
    """The (seat, suit) voids a trick shows, in order: a player who did not follow the suit led is void
    in it (and in taroks, if he threw a suit card)."""
    led = _led(plays, designation, redesignation)
    if not led:
        return ()
    shown: list[tuple[int, str]] = []
    if redesignation and designation:
        shown += [(seat, designation) for seat, _ in plays[1:]]  # nobody could follow the designated suit
    # After a led Fool without designation the second card defines the suit.
    defining = 1 if plays and plays[0][1] == C.FOOL and not designation else 0
    for seat, card in plays[defining + 1 :]:
        if card == C.FOOL or C.suit(card) == led:
            continue
        shown.append((seat, led))
        if led != C.TAROK and not C.is_tarok(card):
            shown.append((seat, C.TAROK))
    return tuple(shown)


class Table:
    """What the seat knows, distilled from its view: unseen cards, known voids, the trick so far."""

    def __init__(self, view: arena_pb2.View) -> None:
        self.view = view
        self.variant = view.variant
        self.options = dict(view.options)
        self._reversed = C.red_pips_reversed(self.variant, self.options)  # asked for every card ranked
        self.seat = view.seat
        self.t = view.trick_number
        self.hand = list(view.hand)
        order = list(view.order) or [s for s in range(len(view.hand_sizes)) if s != view.sitting_out]
        self.order = order
        self.opponents = [s for s in order if s != self.seat]
        self.hand_sizes = list(view.hand_sizes)
        self.plays: list[tuple[int, str]] = [(p.seat, p.card) for p in view.trick.cards]
        self.led = C.led_suit([c for _, c in self.plays], view.trick.designation, view.trick.redesignation)

        # Each completed trick read from the message once (every field access builds an object).
        tricks = [
            (tuple([(p.seat, p.card) for p in t.cards]), t.designation, t.redesignation) for t in view.tricks
        ]
        played = {c for plays, _, _ in tricks for _, c in plays} | {c for _, c in self.plays}
        known = played | set(self.hand) | set(view.skat) | set(view.skat_public.shown)
        # Asked again and again, suit by suit: grouped once.
        self._unseen_by_suit = {
            s: [c for c in codes if c not in known] for s, codes in C.CARDS_BY_SUIT.items()
        }
        self.unseen = [c for cards in self._unseen_by_suit.values() for c in cards]  # canonical order
        self.skat_hidden = view.dealer != self.seat  # three unseen cards lie in the skat
        skat_taroks = view.skat_public.taroks if view.HasField("skat_public") and self.skat_hidden else 0
        self.unseen_taroks = sorted(self.unseen_in(C.TAROK), key=C.number)
        self.opp_taroks = max(0, len(self.unseen_taroks) - skat_taroks)

        self.voids: dict[int, set[str]] = {s: set() for s in order}
        voids = self.voids
        for trick in tricks:
            for seat, void in _voids_shown(*trick):
                voids.setdefault(seat, set()).add(void)
        current = (tuple(self.plays), view.trick.designation, view.trick.redesignation)
        for seat, void in _voids_shown(*current):
            voids.setdefault(seat, set()).add(void)

    # ---------------------------------------------------------------- estimates

    def rank(self, card: str) -> int:
        """`C.rank` in this table's variant (its red pips' order looked up once)."""
        s = C.suit(card)
        n = C.number(card)
        if s == C.TAROK:
            return 100 + n
        if s == "":
            return 0
        if self._reversed and n <= 10 and s in ("H", "D"):
            return 11 - n
        return n

    def unseen_in(self, suit: str) -> list[str]:
        """The unseen cards of `suit`, in canonical order (do not change the list)."""
        return self._unseen_by_suit.get(suit, [])

    def p_void(self, seat: int, suit: str) -> float:
        """Probability that `seat` holds no card of `suit` (hypergeometric over the unseen cards)."""
        if suit in self.voids.get(seat, ()):
            return 1.0
        u = len(self.unseen_in(suit))
        if u == 0:
            return 1.0
        others = [s for s in self.opponents if s != seat]
        if not self.skat_hidden and others and all(suit in self.voids[s] for s in others):
            return 0.0  # nobody else can hold them
        n = len(self.unseen)
        h = self.hand_sizes[seat] if seat < len(self.hand_sizes) else 0
        p = 1.0
        for i in range(h):
            if n - i <= 0:
                break
            p *= max(0.0, (n - u - i) / (n - i))
        return p

    def p_trumps(self, seat: int, suit: str) -> float:
        """Probability that `seat` is void in `suit` but can trump it."""
        if suit == C.TAROK:
            return 0.0
        return self.p_void(seat, suit) * (1.0 - self.p_void(seat, C.TAROK))

    def is_top(self, card: str) -> bool:
        """No unseen card of the card's suit ranks higher."""
        s = C.suit(card)
        return all(self.rank(c) < self.rank(card) for c in self.unseen_in(s))

    def p_lead_wins(self, card: str) -> float:
        """Probability that a led top card wins: nobody trumps it."""
        if not self.is_top(card):
            return 0.0
        p = 1.0
        for seat in self.opponents:
            p *= 1.0 - self.p_trumps(seat, C.suit(card))
        return p

    def still_to_play(self) -> list[int]:
        """Opponents who play after this seat in the current trick."""
        done = {s for s, _ in self.plays}
        start = self.order.index(self.seat)
        rotated = self.order[start + 1 :] + self.order[:start]
        return [s for s in rotated if s not in done and s != self.seat]

    # ---------------------------------------------------------------- card values

    def loss_cost(self, card: str) -> float:
        """How bad it is to give `card` away in a lost trick."""
        if card == C.PAGAT:
            return 30.0 if self.t < 25 else 15.0
        if C.is_king(card):
            if self.t >= 24 and self.opp_taroks > 0:
                return 4.0  # it would face a failed ultimo: shed it
            return 15.0
        if C.is_fool(card):
            return 0.5 if self.t <= FOOL_DEADLINE.get(self.variant, 22) else 5.0
        if C.is_tarok(card):
            return 1.0 + C.number(card) / 10.0  # control of the trick
        value = C.points(card)
        if value > 1:
            return float(value)
        return 1.0 + self.rank(card) / 30.0

    def fool_retained(self) -> bool:
        return self.t <= FOOL_DEADLINE.get(self.variant, 22)


def _cheapest(table: Table, actions: Sequence[arena_pb2.Action]) -> arena_pb2.Action:
    return min(actions, key=lambda a: (table.loss_cost(a.card), C.index(a.card)))


def _lowest_tarok(actions: Sequence[arena_pb2.Action], keep_pagat: bool = True) -> arena_pb2.Action | None:
    taroks = [a for a in actions if C.is_tarok(a.card) and not (keep_pagat and a.card == C.PAGAT)]
    return min(taroks, key=lambda a: C.number(a.card)) if taroks else None


# -------------------------------------------------------------------- phases


def _discard(view: arena_pb2.View, legal: Sequence[arena_pb2.Action]) -> arena_pb2.Action:
    variant, options = view.variant, dict(view.options)
    lengths = Counter(C.suit(c) for c in view.hand)  # each suit's cards in the hand

    def key(action: arena_pb2.Action) -> tuple[int, int, int, int, int]:
        card = action.card
        tarok_class = C.is_tarok(card) or C.is_fool(card)
        suit_length = lengths[C.suit(card)] if not tarok_class else 99
        return (
            int(C.is_king(card)),
            int(tarok_class),
            C.points(card),
            suit_length,
            C.rank(variant, card, options),
        )

    return min(legal, key=key)


def _play(table: Table, legal: Sequence[arena_pb2.Action]) -> arena_pb2.Action:
    fools = [a for a in legal if a.card == C.FOOL]
    others = [a for a in legal if a.card != C.FOOL]
    if not others:
        return _fool_lead(table, fools) if not table.plays else fools[0]
    if not table.plays:
        return _lead(table, others, fools)
    if any(a.suit for a in others):
        return _redesignate(table, others)
    return _follow(table, others, fools)


def _fool_lead(table: Table, fools: Sequence[arena_pb2.Action]) -> arena_pb2.Action:
    """A led Fool with a designation (Danish): taroks draw the others' trumps, else any."""
    for action in fools:
        if action.suit == C.TAROK and table.opp_taroks > 0:
            return action
    return fools[0]


def _lead(
    table: Table, options: Sequence[arena_pb2.Action], fools: Sequence[arena_pb2.Action]
) -> arena_pb2.Action:
    hand = table.hand
    t = table.t
    if fools and (t >= FOOL_DEADLINE.get(table.variant, 22) and table.fool_retained()):
        return _fool_lead(table, fools)

    # The Pagat ultimo: draw the others' taroks while we hold enough to exhaust them.
    if C.PAGAT in hand and t < 25 and table.opp_taroks > 0:
        mine = sorted(
            (a for a in options if C.is_tarok(a.card) and a.card != C.PAGAT), key=lambda a: C.number(a.card)
        )
        if mine and len(mine) >= table.opp_taroks:
            tops = [a for a in mine if table.is_top(a.card)]
            return tops[-1] if tops else mine[-1]

    # Top counting cards (Kings first) that nobody is likely to trump.
    late = t >= 22 and table.opp_taroks > 0
    best: tuple[float, arena_pb2.Action] | None = None
    for action in options:
        card = action.card
        if C.is_tarok(card) or C.points(card) < 3:
            continue
        p = table.p_lead_wins(card)
        threshold = 0.3 if late and C.is_king(card) else LEAD_SAFE
        if p >= threshold and (best is None or (C.points(card), p) > (C.points(best[1].card), best[0])):
            best = (p, action)
    if best is not None:
        return best[1]
    if late:
        kings = [a for a in options if C.is_king(a.card)]
        if kings:
            return max(kings, key=lambda a: table.p_lead_wins(a.card))

    # Otherwise a cheap card, preferably from a short suit without a King of ours.
    lengths = Counter(C.suit(c) for c in hand)

    def key(action: arena_pb2.Action) -> tuple[float, int, int]:
        card = action.card
        s = C.suit(card)
        length = lengths[s]
        guarded = int(s in C.SUITS and (s + "K") in hand)
        return (table.loss_cost(card) + guarded, length, C.index(card))

    choice = min(options, key=key)
    if fools and table.fool_retained() and table.loss_cost(choice.card) >= 4:
        return _fool_lead(table, fools)
    return choice


def _redesignate(table: Table, options: Sequence[arena_pb2.Action]) -> arena_pb2.Action:
    """After a led Fool nobody can follow: name the suit of our own (cheapest) card."""
    own = [a for a in options if a.suit == (C.suit(a.card) or a.suit)]
    return _cheapest(table, own or list(options))


def _follow(
    table: Table, options: Sequence[arena_pb2.Action], fools: Sequence[arena_pb2.Action]
) -> arena_pb2.Action:
    t = table.t
    variant, opts = table.variant, table.options
    plays = table.plays
    led = table.led
    best_i = C.trick_winner(variant, plays, led, opts)
    best = plays[best_i][1] if best_i is not None else ""
    winners = [a for a in options if C.beats(variant, a.card, best, led, opts)]
    trick_points = sum(C.points(c) for _, c in plays if c != C.FOOL)
    after = table.still_to_play()
    fool_ok = bool(fools) and table.fool_retained()
    keep = [a for a in options if a.card != C.PAGAT or t >= 25]
    pool = keep or list(options)

    def lose() -> arena_pb2.Action:
        losers = [a for a in pool if a not in winners] or pool
        choice = _cheapest(table, losers)
        if fool_ok and (table.loss_cost(choice.card) >= 2 or t >= FOOL_DEADLINE.get(variant, 22) - 1):
            return fools[0]
        if fools and not table.fool_retained() and len(table.hand) <= 1:
            return fools[0]
        return choice

    win_pool = [a for a in winners if a in pool]
    if fool_ok and t >= FOOL_DEADLINE.get(variant, 22):
        return fools[0]  # the last trick in which the Fool is retained
    if not win_pool:
        return lose()

    if not after:  # last to play: the trick is ours if we want it
        kings = [a for a in win_pool if C.is_king(a.card)]
        if kings:
            return kings[0]
        suit_wins = [a for a in win_pool if not C.is_tarok(a.card)]
        if suit_wins:
            return min(suit_wins, key=lambda a: table.rank(a.card))
        low = min(win_pool, key=lambda a: C.number(a.card))
        cheap = C.number(low.card) <= 12 or trick_points >= 5
        non_tarok_losers = [a for a in pool if not C.is_tarok(a.card)]
        if cheap or not non_tarok_losers:
            return low
        return lose()

    # Second to play.
    if led in C.SUITS and not C.is_tarok(options[0].card):  # following suit
        safe = all(table.p_trumps(s, led) < 1.0 - SECOND_SAFE for s in after)
        tops = [a for a in win_pool if table.is_top(a.card)]
        if safe and tops:
            valuable = [a for a in tops if C.points(a.card) >= 2] or tops
            if C.points(valuable[0].card) >= 2 or trick_points >= 2:
                return max(valuable, key=lambda a: (C.points(a.card), table.rank(a.card)))
        if t >= 24 and any(C.is_king(a.card) for a in win_pool) and table.opp_taroks > 0:
            return next(a for a in win_pool if C.is_king(a.card))
        return lose()
    if led in C.SUITS:  # trumping: low, unless the trick is rich and the third may overtrump
        low = min(win_pool, key=lambda a: C.number(a.card))
        if trick_points >= 4 and any(table.p_void(s, led) > 0.3 for s in after):
            tops = [a for a in win_pool if table.is_top(a.card)]
            if tops:
                return min(tops, key=lambda a: C.number(a.card))
        return low
    # Taroks led.
    if trick_points >= 5 or all(C.TAROK in table.voids[s] for s in after):
        tops = [a for a in win_pool if table.is_top(a.card)]
        return min(tops or win_pool, key=lambda a: C.number(a.card))
    return lose()


def decide(request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
    """The heuristic's choice: always one of `request.legal_actions`."""
    legal = list(request.legal_actions)
    if not legal:
        raise ValueError(f"request {request.request_id} offers no legal action")
    if len(legal) == 1:
        return legal[0]
    view = request.view
    phase = view.phase
    if phase == "discard":
        return _discard(view, legal)
    if phase == "declare":
        return next((a for a in legal if a.type == "declare"), legal[0])
    if phase == "play":
        return _play(Table(view), legal)
    # announce (vole, nolo), redeal, demand, and phases this bot does not know: pass when possible.
    return next((a for a in legal if a.type == "pass"), legal[0])


class HeuristicBot:
    """Object form, for symmetry with `RandomBot`."""

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
        return decide(request)


def run() -> None:
    """Console entry point: play one seat with this bot."""
    main(decide, name="heuristic")


if __name__ == "__main__":
    run()
