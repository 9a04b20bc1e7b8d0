"""Trick play, and the turn from one trick to the next: the hot path of every deal.

`TrickPlay` is the bottom layer of `DealState`: the cards a seat may play
(G-TRICK-3…5 with each variant's Fool rules), playing a card, completing a
trick (G-TRICK-5…7), and starting the next one, which may first open a round of
announcements (DUM-ANN-3) or the Fool's demand (DK-FOOL-3).  It also holds the
machinery of the rounds every phase uses.  It calls nothing above it.

Each rule of trick play is written once, as a predicate: `suit_to_play` (G-TRICK-4),
`_plain_suit` (a trick that G-TRICK-4 alone decides), `_must_redesignate`
(G-TRICK-3) and the Fool's timing (`_fool_overdue`, `_fool_barred`,
`_fool_demanded_now`).  `_playable` lists the cards from them, `DealState._allows`
decides one card with the same ones, and `explain` asks them which rule a rejected
card broke.
"""

from __future__ import annotations

from typing import Final

from . import actions as A
from .actions import Action
from .cards import DECK_SIZE, FOOL, PAGAT, Card
from .deal import (
    ANNOUNCE,
    DEMAND,
    DESIGNATION_NO,
    END,
    NO_DESIGNATION,
    PLAY,
    SUIT_NO,
    TAROK_NO,
    DealFields,
    Trick,
    holds,
)
from .options import FoolLead


def strength_table(red_pips_reversed: bool) -> tuple[int, ...]:
    """Trick-taking strength within a suit (G-RANK-1…3); taroks above every suit card."""
    out = []
    for i in range(DECK_SIZE):
        if i >= 56:
            out.append(100 + i)  # taroks by number; the Fool's value is never compared
            continue
        suit, face = divmod(i, 14)
        face += 1
        if red_pips_reversed and suit in (1, 2) and face <= 10:
            out.append(11 - face)  # G-RANK-3: A high … 10 low in H and D
        else:
            out.append(face)
    return tuple(out)


STRENGTH: Final = {flag: strength_table(flag) for flag in (True, False)}

# The members the trick-play tests compare with, as constants: reading a member off its Enum class
# is a slow attribute look-up, a `Final` name is a static of the compiled module.
_DESIGNATE: Final = FoolLead.DESIGNATE
_FORBIDDEN: Final = FoolLead.FORBIDDEN

ANY_SUIT: Final = -1
"""`suit_to_play`'s answer when G-TRICK-4 leaves the choice of card free."""


def suit_to_play(hand: list[Card], led: int) -> int:
    """G-TRICK-4: the suit a card must be of after `led` was led: that suit, else a tarok, else any.

    The Fool may always be played besides (G-TRICK-3); its timing rules are `_fool_timing`'s.
    """
    for held in hand:
        if SUIT_NO[held] == led:
            return led
    if led != TAROK_NO:
        for held in hand:
            if SUIT_NO[held] == TAROK_NO:
                return TAROK_NO
    return ANY_SUIT


class TrickPlay(DealFields):
    """Trick play and the rounds; `Phases` adds the other phases, `DealState` the setup and the dispatch."""

    _queue: list[int]  # the seats still to answer in the current round

    # ------------------------------------------------------------------ rounds

    def _begin_round(self, phase: str, seats: list[int]) -> None:
        self.phase = phase
        self._queue = seats
        self.turn = seats[0]

    def _next_in_round(self) -> bool:
        """Pop the round's queue; False when the round is over."""
        self._queue.pop(0)
        if self._queue:
            self.turn = self._queue[0]
            return True
        return False

    def _finish(self, annulled: bool) -> None:
        self.annulled = annulled
        self.phase = END
        self.turn = None
        self._queue = []

    # ------------------------------------------------------------------ between tricks

    def _start_trick(self) -> None:
        if self.trick_no == self.variant.trick_count:
            self._finish(annulled=False)
            return
        self.trick_no += 1
        t = self.trick_no
        self.leader = self.first_leader if t == 1 else self.tricks[-1].winner
        self.trick = []
        self.led = None
        self.designation = None
        self.redesignation = None
        v = self.variant
        if v.fool_last_trick == t and FOOL in self.hands[self.leader]:
            self.leader = self.next_seat[self.leader]  # G54-FOOL-2: the lead passes
        if v.announcements and t <= 20 and len(self.announcements) < 3:
            seats = [self.leader, self.next_seat[self.leader], self.next_seat[self.next_seat[self.leader]]]
            eligible = [s for s in seats if self._announceable(s)]
            if eligible:
                self._begin_round(ANNOUNCE, eligible)  # DUM-ANN-3
                return
        if v.fool_demand and t == 23 and self.fool_holder is not None:
            seats = [self.leader, self.next_seat[self.leader], self.next_seat[self.next_seat[self.leader]]]
            self._begin_round(DEMAND, seats)  # DK-FOOL-3
            return
        self._begin_play()

    def _begin_play(self) -> None:
        self.phase = PLAY
        self.turn = self.leader

    @property
    def fool_holder(self) -> int | None:
        for seat in self.order:
            if FOOL in self.hands[seat]:
                return seat
        return None

    def _announceable(self, seat: int) -> list[str]:
        """What `seat` may announce before the current trick: Vole, Nolo, both or nothing."""
        t = self.trick_no
        if any(a.seat == seat for a in self.announcements):
            return []
        out = []
        completed = t - 1
        vole_open = not any(a.name == "vole" for a in self.announcements)
        if t <= 20 and vole_open and self.tricks_won[seat] == completed:
            out.append("vole")
        if t <= 13 and self.tricks_won[seat] == 0:
            out.append("nolo")
        return out

    # ------------------------------------------------------------------ trick play

    def _legal_plays(self, seat: int) -> list[Action]:
        cards = self._playable(seat)
        return [A.PLAY[c] for c in cards] if cards is not None else self._designating_plays(seat)

    def _plain_suit(self, seat: int) -> int | None:
        """The suit G-TRICK-4 alone asks of `seat` (`ANY_SUIT`: any card of the hand), or None when
        the Fool's timing, Trischaken or a designation take part and `_playable` must look further.
        """
        hand = self.hands[seat]
        if self.trischaken or holds(hand, FOOL):
            return None
        trick = self.trick
        if not trick:
            return ANY_SUIT
        if len(trick) > 1 or self.designation is None:  # no re-designation can be due (G-TRICK-3)
            led = self.led  # None after a led Fool: the second card is free
            return ANY_SUIT if led is None else suit_to_play(hand, led)
        return None

    def _playable(self, seat: int) -> list[Card] | None:
        """The cards `seat` may play, or None when the legal plays name a suit (G-TRICK-3)."""
        hand = self.hands[seat]
        plain = self._plain_suit(seat)
        if plain is not None:
            return list(hand) if plain == ANY_SUIT else [c for c in hand if SUIT_NO[c] == plain]
        if self.trischaken:
            return self._trischaken_cards(hand)
        if not self.trick:
            cards = hand
            if FOOL in hand:
                cards = self._fool_timing(seat, hand, list(hand), leading=True)
                if self.variant.fool_lead is _DESIGNATE and FOOL in cards:
                    return None
            return cards
        if self._must_redesignate():
            return None
        led = self.led
        # G-TRICK-3 next_card: after a led Fool the second card is free.
        cards = list(hand) if led is None else self._followers(hand, led)
        if FOOL in hand:
            cards = self._fool_timing(seat, hand, cards, leading=False)
        return cards

    def _designating_plays(self, seat: int) -> list[Action]:
        """The legal plays when `_playable` gives None: they name a suit."""
        hand = self.hands[seat]
        play = A.PLAY
        if not self.trick:  # the Fool led with a designation, or any other legal card
            cards = self._fool_timing(seat, hand, list(hand), leading=True)
            out = [play[c] for c in cards if c != FOOL]
            out.extend(A.make("play", FOOL, s) for s in NO_DESIGNATION)
            return out
        # G-TRICK-3 (AMB-12): name Y and play a card legal for Y.
        out = []
        for suit in NO_DESIGNATION:
            for c in self._followers(hand, DESIGNATION_NO[suit]):
                out.append(A.make("play", c, suit))
        return out

    def _trischaken_cards(self, hand: list[Card]) -> list[Card]:
        """AM-TRI-3/4 on top of G-TRICK-4; after a led Excuse the second card is free (AMB-53)."""
        led = self.led
        cards = list(hand) if led is None else self._followers(hand, led)
        if PAGAT in cards and any(c != PAGAT and SUIT_NO[c] == TAROK_NO for c in hand):
            cards.remove(PAGAT)  # AM-TRI-4: T1 only as the last tarok
        best = self._winning_card()
        if best is not None:
            beaters = [c for c in cards if c != FOOL and self._beats(c, best)]
            if beaters:
                cards = [*beaters, FOOL] if FOOL in cards else beaters  # AM-TRI-3: the Excuse instead
        return cards

    def _winning_card(self) -> Card | None:
        """The card winning the trick in progress (G-TRICK-5), or None while nothing can win it."""
        best: Card | None = None
        led = self.led
        for _seat, card in self.trick:
            if card == FOOL or (SUIT_NO[card] != TAROK_NO and SUIT_NO[card] != led):
                continue
            if best is None or self._beats(card, best):
                best = card
        return best

    def _beats(self, card: Card, best: Card) -> bool:
        """Whether `card` would take the trick from `best` (G-TRICK-5)."""
        if SUIT_NO[card] == TAROK_NO:
            return SUIT_NO[best] != TAROK_NO or card > best
        return SUIT_NO[best] == SUIT_NO[card] == self.led and self.strength[card] > self.strength[best]

    @staticmethod
    def _followers(hand: list[Card], led: int) -> list[Card]:
        """The cards of `hand` that `suit_to_play` allows, and the Fool, which may always be played."""
        suit = suit_to_play(hand, led)
        if suit == ANY_SUIT:
            return list(hand)
        follow = [c for c in hand if SUIT_NO[c] == suit]
        if FOOL in hand:
            follow.append(FOOL)
        return follow

    def _fool_overdue(self, leading: bool) -> bool:
        """G54-FOOL-2: the Fool's holder must play it now (it is due by `fool_last_trick`)."""
        last = self.variant.fool_last_trick
        return not leading and last is not None and self.trick_no >= last

    def _fool_barred(self) -> bool:
        """DK-FOOL-2: the Fool may not be played to this trick."""
        return self.variant.fool_forbidden_trick == self.trick_no

    def _fool_demanded_now(self) -> bool:
        """DK-FOOL-3: the Fool was demanded, and this is the trick it must be played to."""
        return self.fool_demanded and self.trick_no == 23

    def _fool_timing(self, seat: int, hand: list[Card], cards: list[Card], leading: bool) -> list[Card]:
        """The variant's Fool rules applied to otherwise legal `cards` (seat holds the Fool)."""
        v = self.variant
        allowed = cards
        if leading and v.fool_lead is _FORBIDDEN:
            allowed = [c for c in cards if c != FOOL]  # G54-PLAY-1
        if v.fool_last_trick is not None:
            if not leading and FOOL not in cards:
                allowed = [*cards, FOOL]  # G54-FOOL-1: instead of a legal card
            if self._fool_overdue(leading):
                allowed = [FOOL]  # G54-FOOL-2
            elif not leading and v.fool_when_void and self.led is not None:
                void = not any(SUIT_NO[c] == self.led for c in hand)
                if void and not any(SUIT_NO[c] == TAROK_NO for c in hand):
                    allowed = [FOOL]  # G54-FOOL-3
        if self._fool_barred():
            allowed = [c for c in allowed if c != FOOL]  # DK-FOOL-2
        if self._fool_demanded_now():
            allowed = [FOOL]  # DK-FOOL-3
        return allowed or cards  # AMB-57: a timing rule never leaves no legal card

    def _must_redesignate(self) -> bool:
        """G-TRICK-3: the Fool led with X, and no other active player holds a card of X."""
        if len(self.trick) != 1 or self.designation is None or self.redesignation is not None:
            return False
        x = DESIGNATION_NO[self.designation]
        leader = self.trick[0][0]
        return not any(SUIT_NO[c] == x for s in self.order if s != leader for c in self.hands[s])

    def _apply_play(self, seat: int, action: Action) -> None:
        card = action.card
        assert card is not None
        self.hands[seat].remove(card)
        trick = self.trick
        if not trick:
            if card == FOOL:
                self.designation = action.suit
                if action.suit is not None:
                    self.led = DESIGNATION_NO[action.suit]
            else:
                self.led = SUIT_NO[card]
        elif action.suit is not None:
            self.redesignation = action.suit
            self.led = DESIGNATION_NO[action.suit]
        elif self.led is None:
            self.led = SUIT_NO[card]  # G-TRICK-3 next_card (a second Fool cannot occur)
        trick.append((seat, card))
        if len(trick) < self.players:
            self.turn = self.next_seat[seat]
            return
        self._complete_trick()

    def _complete_trick(self) -> None:
        trick = self.trick
        strength = self.strength
        winner = -1
        best = -1
        led = self.led
        for seat, card in trick:
            no = SUIT_NO[card]
            if no == TAROK_NO:
                s = strength[card] + 1000
            elif no == led:
                s = strength[card]
            else:
                continue
            if s > best:
                best, winner = s, seat
        if winner < 0:
            winner = trick[1][0]  # G-TRICK-5: after a re-designation nobody followed Y
        t = self.trick_no
        v = self.variant
        if t == v.trick_count and v.fool_wins_slam_lead and trick[0][1] == FOOL and not self.trischaken:
            side = self.side[trick[0][0]]
            if all(self.side[done.winner] == side for done in self.tricks):
                winner = trick[0][0]  # AM-FOOL-3: the Excuse led to the last trick completes a slam
        captured = False
        pile = self.piles[winner]
        for seat, card in trick:
            if card == FOOL:
                captured = v.fool_captured_from is not None and t >= v.fool_captured_from
                if captured:
                    pile.append(card)  # DUM-PLAY-2, DK-FOOL-2
                else:
                    self.piles[seat].append(card)  # G-TRICK-6: retained
                    if self.side[seat] != self.side[winner]:  # nothing owed to one's own side
                        self.fool_debts.append((seat, winner, t))
            else:
                pile.append(card)
        self.tricks_won[winner] += 1
        suit = None if led is None else NO_DESIGNATION[led]
        self.tricks.append(
            Trick(t, self.leader, tuple(trick), winner, suit, self.designation, self.redesignation, captured)
        )
        self._start_trick()
