"""Full deals consistent with one seat's information: the hidden cards, sampled.

The input is what the server sends a seat: the observation dict of `arena.engine.observation`
(the Python SDK's `View`, turned back into that dict by the bot). A sample is a `DealState`
at the same point of the same deal, built by dealing a deck and replaying the public history
with the engine, whose other hands are one possible placement of the cards the seat cannot see.

Sampling is exact, in two stages:

1. **Placement.** Every card the seat has not seen gets the set of places it may lie in (another
   seat's hand, the hidden discard, the unseen talon) from what the view says for sure: cards
   shown by a declaration, the discard's published facts, the partner once known, voids shown by
   failing to follow suit or to trump (and, in Trischaken, failing to beat). Declarations add
   counts (a seat that declared 12 taroks held exactly 12 of the tarok class). The cards are
   placed one at a time in random order, each in a place drawn in proportion to its free room,
   and after each step a check keeps the rest placeable: Hall's condition on the places (at most
   five, so every subset is tried) and the bounds of every count. A dead end starts over.
2. **Proof.** The placed deal is dealt and the public history replayed through the engine, which
   checks every action against the rules (the Fool's timing, the demand, a compulsory declaration
   that must or must not be there, the legal discards); the seat's observation of the result must
   equal the view. Only a deal that passes is returned, so no sample contradicts the view, and
   since stage 1 only drops placements the view rules out for certain, every consistent deal can
   be drawn.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from arena.engine import (
    CARDS,
    Card,
    DealState,
    IllegalActionError,
    Variant,
    find_variant,
    observation,
)
from arena.engine.cards import FOOL, KINGS, MOND, PAGAT, SUIT_OF, TAROKS, suit_card
from arena.engine.combos import (
    COURTS,
    FACES_OF_FOUR,
    KINGS_AND_TRULL,
    PIPS,
    PIPS_AND_BLANK_TAROKS,
    TAROK_CLASS,
)
from arena.engine.options import Ladons
from arena.engine.play import STRENGTH

from .history import Mismatch, deck_of, parse_card, public, replay

# The cards of each suit and of the taroks, by the letter of a led suit or a designation.
SUIT_CARDS: Final = {
    **{suit: frozenset(CARDS[i * 14 : i * 14 + 14]) for i, suit in enumerate("SHDC")},
    "T": TAROKS,
}


class NoConsistentDeal(RuntimeError):
    """The view admits no deal (a view that no real deal produced), or none was found in the tries allowed."""


class Count:
    """At least `lo` and at most `hi` of `cards` among the unseen cards placed in `places` (a bit mask)."""

    __slots__ = ("cards", "hi", "lo", "places")

    def __init__(self, places: int, cards: frozenset[int], lo: int, hi: int) -> None:
        self.places = places
        self.cards = cards
        self.lo = lo
        self.hi = hi


class Sampler:
    """The information set of one view, ready to draw consistent deals from.

    `Sampler(view).sample(rng)` is one `Sample`; `deals(rng, n)` yields `n` `DealState`s. Raises
    `NoConsistentDeal` when the view is impossible (it never is for a view the server sent).
    """

    def __init__(self, view: Mapping[str, Any], max_tries: int = 20000) -> None:
        self.view = view
        self.max_tries = max_tries
        self.variant: Variant = find_variant(str(view["variant"]), dict(view.get("options") or {}))
        v = self.variant
        self.seat = seat = int(view["seat"])
        self.dealer = int(view["dealer"])
        pots = view.get("pots_start")
        self.pots: dict[str, int] | None = {str(k): int(n) for k, n in pots.items()} if pots else None
        self.expected = public(view)
        self.tricks = [t for t in view.get("tricks", ())]
        current = view.get("trick")
        self.current = current if current and current.get("cards") else None

        hand = [parse_card(c) for c in view.get("hand", ())]
        own_skat = [parse_card(c) for c in view.get("skat", ())]
        self.own_skat = own_skat
        played: dict[int, list[Card]] = {s: [] for s in range(v.seats)}
        for trick in [*self.tricks, *([self.current] if self.current else [])]:
            for s, c in trick["cards"]:
                played[int(s)].append(parse_card(c))
        self.played = played
        hand_sizes = [int(n) for n in view["hand_sizes"]]
        talon_seen = [parse_card(c) for c in view.get("talon", ())]
        self.talon_seen = talon_seen

        # The discarder: the dealer, or the American declarer once he took the talon.
        declarer = view.get("declarer")
        self.discarder = int(declarer) if v.contracts and talon_seen and declarer is not None else self.dealer
        known = set(hand) | set(own_skat) | {c for cards in played.values() for c in cards}
        others = [s for s in range(v.seats) if s != seat and hand_sizes[s] > 0]
        unseen_talon = v.talon_size if v.contracts and not talon_seen else 0
        unknown = [c for c in CARDS if c not in known]
        hidden_skat = len(unknown) - sum(hand_sizes[s] for s in others) - unseen_talon
        if hidden_skat < 0 or (hidden_skat > 0 and self.discarder == seat):
            raise NoConsistentDeal("the view's hand sizes do not add up to the cards it has not seen")

        # Places: the other hands, then the hidden discard and the unseen talon where they exist.
        self.places: list[int] = list(others)  # a seat, or SKAT / TALON below
        self.capacity: list[int] = [hand_sizes[s] for s in others]
        self.skat_place = self.talon_place = -1
        if hidden_skat:
            self.skat_place = len(self.places)
            self.places.append(-1)
            self.capacity.append(hidden_skat)
        if unseen_talon:
            self.talon_place = len(self.places)
            self.places.append(-2)
            self.capacity.append(unseen_talon)
        self.place_of_seat = {s: i for i, s in enumerate(self.places) if s >= 0}
        self.unknown = unknown
        self.counts: list[Count] = []
        self.domain: dict[int, int] = {c: (1 << len(self.places)) - 1 for c in unknown}
        self._constrain()
        # First tries assume the likely case that the hidden discard holds no card of the tarok class
        # (the rules allow it only with very few taroks: DUM-DISC-3, G54-DISC-2, DUM-DISC-4); after
        # `patience` failures in a row the sampler drops the assumption and draws from every placement.
        self.likely = dict(self.domain)
        if self.skat_place >= 0 and v.family in ("dummett", "german"):
            for c in TAROK_CLASS:
                if c in self.likely:
                    self.likely[c] &= ~(1 << self.skat_place)
        self.patience = 200
        self._failures = 0
        # Attempts so far: placements tried, dead ends of placing, deals the replay refuted, deals drawn.
        self.tries = self.dead_ends = self.refuted = self.drawn = 0

    # ------------------------------------------------------------------ what the view rules out

    def _bit(self, seat: int) -> int:
        place = self.place_of_seat.get(seat)
        return 0 if place is None else 1 << place

    def _restrict(self, cards: Iterable[int], allowed: int) -> None:
        for c in cards:
            if c in self.domain:
                self.domain[c] &= allowed

    def _forbid(self, cards: Iterable[int], places: int) -> None:
        for c in cards:
            if c in self.domain:
                self.domain[c] &= ~places

    def _constrain(self) -> None:
        v, view = self.variant, self.view
        skat_bit = 1 << self.skat_place if self.skat_place >= 0 else 0
        if skat_bit:
            # No discard plan of any variant lays away a King (DUM-DISC-2, G54-DISC-1, DK-SKAT-2, AM-TAL-1).
            self._forbid(KINGS, skat_bit)
            if v.contracts or v.family == "danish":
                self._forbid((FOOL, PAGAT, MOND), skat_bit)  # AM-TAL-1, DK-SKAT-2
            public = view.get("skat_public") or {}
            if public:
                shown = {parse_card(c) for c in public.get("shown", ())}
                self._restrict(shown, skat_bit)
                n = int(public["taroks"])
                self.counts.append(Count(skat_bit, frozenset(c for c in TAROKS if c in self.domain), n, n))
        if self.talon_seen:
            holder = self._bit(self.discarder) | skat_bit
            self._restrict(self.talon_seen, holder)
            if self.talon_place >= 0:
                self._forbid(self.unknown, 1 << self.talon_place)
        self._constrain_partner()
        self._constrain_plays()
        self._constrain_answers()
        self._constrain_declarations()

    def _constrain_partner(self) -> None:
        view = self.view
        called, partner = view.get("called"), view.get("partner")
        if called is None or partner is None:
            return
        card = parse_card(called)
        if card not in self.domain:
            return
        if partner >= 0:
            self._restrict((card,), self._bit(int(partner)))
        else:  # AM-CALL-2: alone: the declarer called his own card, or it lies in the talon
            declarer = int(view["declarer"])
            allowed = self._bit(declarer)
            if self.skat_place >= 0 and self.discarder == declarer:
                allowed |= 1 << self.skat_place
            if self.talon_place >= 0:
                allowed |= 1 << self.talon_place
            self._restrict((card,), allowed)

    def _constrain_plays(self) -> None:
        """Voids from failing to follow suit or to trump; in Trischaken, from failing to beat."""
        v = self.variant
        strength = STRENGTH[v.red_pips_reversed]
        tricks = [*self.tricks, *([self.current] if self.current else [])]
        trischaken = self.view.get("contract") == "trischaken"
        for trick in tricks:
            plays = [(int(s), parse_card(c)) for s, c in trick["cards"]]
            designation = trick.get("designation") or None
            redesignation = trick.get("redesignation") or None
            led: str | None = designation
            best: Card | None = None
            for i, (s, card) in enumerate(plays):
                bit = self._bit(s)
                suit = SUIT_OF[card]
                if i == 0:
                    if card != FOOL:
                        led = suit
                        best = card
                    continue
                if i == 1 and redesignation:
                    if designation:  # G-TRICK-3: nobody but the leader held the designated suit
                        for other in self.view.get("order", ()):
                            if int(other) != plays[0][0]:
                                self._forbid(SUIT_CARDS[designation], self._bit(int(other)))
                    led = redesignation
                    if card != FOOL and suit in (led, "T"):
                        best = card
                    continue
                if card == FOOL:
                    continue
                if led is None:
                    led, best = suit, card
                    continue
                if bit and suit != led:
                    self._forbid(SUIT_CARDS[led], bit)
                    if suit != "T":
                        self._forbid(TAROKS, bit)
                if trischaken and bit and best is not None:
                    if not _beats(card, best, led, strength):
                        if suit == led and SUIT_OF[best] == led:
                            self._forbid([c for c in SUIT_CARDS[led] if strength[c] > strength[best]], bit)
                        elif suit == "T" and SUIT_OF[best] == "T":
                            self._forbid([c for c in TAROKS if c > best], bit)
                    if card == PAGAT:  # AM-TRI-4: T1 only as the last tarok
                        self._forbid(TAROKS, bit)
                if best is None or _beats(card, best, led, strength):
                    best = card

    def _constrain_answers(self) -> None:
        for answer in self.view.get("round_answers", ()):
            if answer["round"] == "demand" and answer["answer"] == "demand":
                self._forbid((FOOL,), self._bit(int(answer["seat"])))  # DK-FOOL-3: only without the Fool

    def _constrain_declarations(self) -> None:
        """Each declaration publishes facts of the declarer's hand when he made it: counts and cards."""
        v = self.variant
        by_seat: dict[int, list[Mapping[str, Any]]] = {}
        for d in self.view.get("declarations", ()):
            by_seat.setdefault(int(d["seat"]), []).append(d)
        compulsory = v.declarations == "compulsory" and self.view["phase"] not in ("redeal", "discard")
        for s in range(v.seats):
            if s == self.seat or (self._bit(s) == 0 and not self.played[s]):
                continue
            places = self._bit(s)
            if compulsory and s == self.dealer and self.skat_place >= 0:
                places |= 1 << self.skat_place  # DK-DECL-2: the dealer is judged on 28 cards
            played = set(self.played[s])
            declared = by_seat.get(s, [])
            names = {d["name"] for d in declared}
            for d in declared:
                self._declaration(places, played, d)
            if compulsory:
                # DK-DECL-1: every combination is declared, so one not declared is not held in full.
                if "taroks" not in names:
                    self._count(places, played, TAROK_CLASS, 0, 9)
                if "matadors" not in names:
                    self._count(places, played, frozenset((PAGAT, FOOL, MOND)), 0, 2)
                if not names & {"full_kings", "overfull_kings"}:
                    self._count(places, played, KINGS, 0, 3)
                suits = {d.get("suit") for d in declared if d["name"] in ("full", "overfull")}
                for suit in "SHDC":
                    if suit not in suits:
                        self._count(places, played, COURTS[suit], 0, 3)

    def _count(self, places: int, played: set[Card], cards: frozenset[Card], lo: int, hi: int) -> None:
        done = len(played & cards)
        unseen = frozenset(c for c in cards if c in self.domain)
        self.counts.append(Count(places, unseen, lo - done, hi - done))

    def _holds(self, cards: Iterable[int], places: int) -> None:
        self._restrict(cards, places)

    def _declaration(self, places: int, played: set[Card], d: Mapping[str, Any]) -> None:
        name, size, suit = d["name"], int(d["size"]), str(d.get("suit") or "")
        if d.get("cards"):
            self._holds([parse_card(c) for c in d["cards"]], places)
        if d.get("with_fool") is not None:
            (self._holds if d["with_fool"] else self._forbid)((FOOL,), places)
        if d.get("with_pagat") is not None:
            (self._holds if d["with_pagat"] else self._forbid)((PAGAT,), places)
        if name in ("taroks", "trumps"):
            self._count(places, played, TAROK_CLASS, size, size)
        elif name == "matadors":
            # DUM-DECL-3: the Trull and T20, T19, … down to the first tarok missing.
            following = 20 - (size - 3)
            self._holds([PAGAT, FOOL, MOND, *(CARDS[55 + n] for n in range(20, following, -1))], places)
            if following > 1:
                self._forbid((CARDS[55 + following],), places)
        elif name == "kings" and self.variant.family == "dummett":
            self._count(places, played, KINGS_AND_TRULL, size, size)
        elif name == "ladons":
            pool = PIPS_AND_BLANK_TAROKS if self.variant.ladons is Ladons.ALL_BLANKS else PIPS
            self._count(places, played, pool, size, size)
        elif name in ("cavallerie", "whole_cavalry", "full", "full_cavallerie"):
            self._holds(COURTS[suit], places)
            if name == "full":
                self._forbid((FOOL,), places)
        elif name in ("overfull", "abundant_cavallerie"):
            self._holds([*COURTS[suit], FOOL], places)
        elif name in ("half_cavallerie", "half_cavalry", "half"):
            self._holds((FOOL,), places)
            self._count(places, played, COURTS[suit], 3, 3)
        elif name in ("four_queens", "four_cavaliers", "four_jacks"):
            face = {"four_queens": 13, "four_cavaliers": 12, "four_jacks": 11}[name]
            self._holds(FACES_OF_FOUR[face], places)
        elif name in ("four_kings", "full_kings"):
            self._holds(KINGS, places)
            if self.variant.family == "danish":
                self._forbid((FOOL,), places)
        elif name in ("overfull_kings", "abundant_kings"):
            self._holds([*KINGS, FOOL], places)
        elif name in ("three_kings", "half_kings"):
            self._holds((FOOL,), places)
            self._count(places, played, KINGS, 3, 3)
            if suit:  # AM-COMB-1: the King missing from the half kings is named
                self._forbid((suit_card(suit, 14),), places)

    # ------------------------------------------------------------------ placing the cards

    def _counts_hold(self, inside: list[int], open_: list[int], forced: list[int], room: list[int]) -> bool:
        """Every count can still be met: not over its maximum, enough cards and room for its minimum."""
        for i, k in enumerate(self.counts):
            if inside[i] + forced[i] > k.hi:
                return False
            free = 0
            for p in range(len(room)):
                if k.places >> p & 1:
                    free += room[p]
            if inside[i] + min(open_[i], free) < k.lo:
                return False
        return True

    def _placeable(self, groups: dict[int, int], room: list[int]) -> bool:
        """Hall's condition: every set of places has room for the cards that can go nowhere else."""
        n = len(room)
        for subset in range(1, 1 << n):
            need = 0
            for mask, k in groups.items():
                if mask & ~subset == 0:
                    need += k
            if need:
                free = 0
                for i in range(n):
                    if subset >> i & 1:
                        free += room[i]
                if need > free:
                    return False
        return True

    def place(self, rng: random.Random, domain: Mapping[int, int] | None = None) -> dict[int, int] | None:
        """One placement of the unseen cards (card → place), or None at a dead end."""
        if domain is None:
            domain = self.domain
        cards = list(self.unknown)
        rng.shuffle(cards)
        room = list(self.capacity)
        groups: dict[int, int] = {}
        for c in cards:
            groups[domain[c]] = groups.get(domain[c], 0) + 1
        if 0 in groups:
            return None
        counts = self.counts
        inside = [0] * len(counts)  # cards of each count placed inside its places so far
        # Unplaced cards of each count that may go inside its places, and those that must.
        open_ = [sum(1 for c in k.cards if domain.get(c, 0) & k.places) for k in counts]
        forced = [sum(1 for c in k.cards if domain.get(c, 0) & ~k.places == 0) for k in counts]
        member = {c: [i for i, k in enumerate(counts) if c in k.cards] for c in cards}
        out: dict[int, int] = {}
        for c in cards:
            mask = domain[c]
            groups[mask] -= 1
            if not groups[mask]:
                del groups[mask]
            mine = member[c]
            for i in mine:
                places = counts[i].places
                if mask & places:
                    open_[i] -= 1
                    if mask & ~places == 0:
                        forced[i] -= 1
            options = [i for i in range(len(room)) if mask >> i & 1 and room[i]]
            placed = False
            while options:
                choice = rng.choices(options, [room[i] for i in options])[0]
                options.remove(choice)
                bit = 1 << choice
                for i in mine:
                    if bit & counts[i].places:
                        inside[i] += 1
                room[choice] -= 1
                if self._counts_hold(inside, open_, forced, room) and self._placeable(groups, room):
                    out[c] = choice
                    placed = True
                    break
                room[choice] += 1
                for i in mine:
                    if bit & counts[i].places:
                        inside[i] -= 1
            if not placed:
                return None
        return out

    # ------------------------------------------------------------------ the deal and its history

    def deal(self, placement: Mapping[int, int], rng: random.Random) -> DealState | None:
        """The deal of a placement with the public history replayed, or None if the engine refutes it."""
        v = self.variant
        holdings: dict[int, list[Card]] = {s: [] for s in range(v.seats)}
        skat: list[Card] = list(self.own_skat)
        talon: list[Card] = list(self.talon_seen)
        for c, place in placement.items():
            who = self.places[place]
            if who >= 0:
                holdings[who].append(CARDS[c])
            elif who == -1:
                skat.append(CARDS[c])
            else:
                talon.append(CARDS[c])
        for c in self.view.get("hand", ()):
            holdings[self.seat].append(parse_card(c))
        for s, cards in self.played.items():
            holdings[s].extend(cards)
        if skat:
            holdings[self.discarder].extend(skat)
        if self.talon_seen:
            taken = set(self.talon_seen)
            holdings[self.discarder] = [c for c in holdings[self.discarder] if c not in taken]
        # The skat's order is the order of its discard; a hidden one in any order the rules allow.
        hidden_skat = [c for c in skat if c not in self.own_skat]
        rng.shuffle(hidden_skat)
        discards = self.own_skat or hidden_skat
        deck = deck_of(v, self.dealer, holdings, talon)
        try:
            state = DealState(v, self.dealer, deck, self.pots)
            replay(state, self.view, discards)
        except (IllegalActionError, Mismatch):
            return None
        if public(observation(state, self.seat)) != self.expected:
            return None
        return state

    def sample(self, rng: random.Random) -> DealState:
        """One deal consistent with the view."""
        for _ in range(self.max_tries):
            self.tries += 1
            placement = self.place(rng, self.likely if self._failures < self.patience else self.domain)
            if placement is None:
                self.dead_ends += 1
                self._failures += 1
                continue
            state = self.deal(placement, rng)
            if state is not None:
                self.drawn += 1
                self._failures = 0 if self._failures < self.patience else self._failures
                return state
            self.refuted += 1
            self._failures += 1
        raise NoConsistentDeal(f"no deal consistent with the view in {self.max_tries} tries")

    def deals(self, rng: random.Random, n: int | None = None) -> Iterator[DealState]:
        """`n` consistent deals (endless when `n` is None)."""
        k = 0
        while n is None or k < n:
            yield self.sample(rng)
            k += 1


def sample_deals(view: Mapping[str, Any], rng: random.Random, n: int | None = None) -> Iterator[DealState]:
    """`n` full deals (`DealState`s at the view's point of the deal) consistent with the seat's view."""
    return Sampler(view).deals(rng, n)


# ---------------------------------------------------------------------- helpers


def _beats(card: Card, best: Card, led: str | None, strength: Sequence[int]) -> bool:
    if card == FOOL:
        return False
    suit, top = SUIT_OF[card], SUIT_OF[best]
    if suit == "T":
        return top != "T" or card > best
    return suit == top == led and strength[card] > strength[best]
