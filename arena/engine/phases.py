"""The phases before the first trick, and the announcements between tricks.

`Phases` builds on `TrickPlay`: the redeal and demand rounds (DK-DEAL-2,
DK-FOOL-3), the American bidding, call and talon (AM-BID, AM-CALL, AM-SIDE,
AM-TAL) with its announcements (AM-ANN, AM-COMB), the discard (DUM-DISC,
G54-DISC, DK-SKAT, AM-TAL-1), the declarations (DUM-DECL, G54-DECL, DK-DECL) and
the announcements of Vole and Nolo (DUM-ANN).  Each phase has the functions that
list its legal actions and apply one; `DealState` dispatches to them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Final

from . import actions as A
from .actions import Action
from .cards import CARDS, CAVALIER, JACK, KING, PAGAT, QUEEN, Card
from .combos import Combination
from .deal import (
    ANNOUNCE,
    BID,
    CALL,
    DECLARE,
    DECLARER_SIDE,
    DEFENDERS,
    DISCARD,
    PLAY,
    REDEAL,
    SUIT_NO,
    TAROK_NO,
    Announcement,
    Declaration,
)
from .options import Family, TrischakenLeader
from .play import TrickPlay

# AM-CALL-1: Kings, Queens, Cavaliers, Jacks, then T2…T20.
_CALL_LADDER: tuple[tuple[Card, ...], ...] = (
    *(tuple(CARDS[s * 14 + face - 1] for s in range(4)) for face in (KING, QUEEN, CAVALIER, JACK)),
    tuple(CARDS[57:76]),
)
CALLABLE_RANKS: Final = frozenset(card for rung in _CALL_LADDER for card in rung)
"""Every card of the call ladder: the cards a declarer may ever call (AM-CALL-1)."""


class Phases(TrickPlay):
    """Every phase but trick play; `DealState` adds the setup and the dispatch on the phase."""

    _discard_plans: list[tuple[frozenset[Card], frozenset[Card]]]
    _discard_best: int
    _combination_cards: frozenset[Card]
    # The same as bits (bit i: card i), for `_legal_discards`, which tests every card of the hand.
    _plan_masks: list[tuple[int, int]]
    _combination_mask: int
    _combinations: dict[int, list[Combination]]

    # ------------------------------------------------------------------ rounds (redeal, demand)

    def _apply_round_answer(self, seat: int, action: Action) -> None:
        phase = self.phase
        self.round_answers.append((phase, seat, action.type))
        if phase == REDEAL:
            if action.type == "redeal":
                self._finish(annulled=True)  # DK-DEAL-2: the same dealer deals again
            elif not self._next_in_round():
                self._begin_discard()
        else:  # DEMAND (DK-FOOL-3): the first demand ends the round
            if action.type == "demand":
                self.fool_demanded = True
                self._begin_play()
            elif not self._next_in_round():
                self._begin_play()

    def _holds_tarok(self, seat: int) -> bool:
        return any(SUIT_NO[c] == TAROK_NO for c in self.hands[seat])

    # ------------------------------------------------------------------ american: petit sec, bid, call, talon

    def _petit_sec(self, seat: int) -> bool:
        """AM-DEAL-2: `T1` with neither another tarok nor `EX` (the Excuse counts as a trump here)."""
        hand = self.hands[seat]
        return PAGAT in hand and not any(c != PAGAT and SUIT_NO[c] >= TAROK_NO for c in hand)

    def _apply_bid(self, seat: int, action: Action) -> None:
        """AM-BID-2: one round; each bid beats the highest so far; the highest bidder declares."""
        self.round_answers.append((BID, seat, action.name or action.type))
        if action.type == "bid":
            self.contract = next(c for c in self.variant.contracts if c.name == action.name)
            self.declarer = seat
        if self._next_in_round():
            return
        if self.contract is None:
            # AM-TRI-1/2 (AMB-27): all four passed; the dealer leads unless the option says forehand.
            self.trischaken = True
            if self.variant.trischaken_leader is TrischakenLeader.DEALER:
                self.first_leader = self.dealer
            self._start_trick()
        elif self.contract.calls:
            self.phase = CALL
            self.turn = self.declarer
        else:
            self._settle_sides()

    def _callable(self) -> list[Card]:
        """AM-CALL-1 (AMB-45): any King; each lower rank only when every higher court rank is complete."""
        assert self.declarer is not None
        hand = self.hands[self.declarer]
        out = list(_CALL_LADDER[0])
        for higher, lower in itertools.pairwise(_CALL_LADDER):
            if not all(card in hand for card in higher):
                break
            out.extend(lower)
        return sorted(out)

    def _apply_call(self, seat: int, action: Action) -> None:
        card = action.card
        assert card is not None
        self.called = card
        holder = next((s for s in self.order if card in self.hands[s]), None)
        self.called_holder = holder
        # AM-CALL-2 (AMB-35): in the declarer's hand or in the talon, the declarer plays alone.
        self.partner = holder if holder != seat else None
        self._settle_sides()

    def _settle_sides(self) -> None:
        """AM-SIDE-1; then AM-TAL-1 (talon shown and exchanged) or AM-TAL-2 (set aside unseen)."""
        contract, declarer = self.contract, self.declarer
        assert contract is not None and declarer is not None
        self.side = tuple(
            DECLARER_SIDE if s in (declarer, self.partner) else DEFENDERS for s in range(self.seats)
        )
        if not contract.exchange:
            self._begin_announcements()
            return
        self.talon_visible = True
        if self.called in self.talon:
            self.called_public = True  # AM-CALL-2: everyone saw it: the declarer plays alone
        self.hands[declarer] = sorted(self.hands[declarer] + list(self.talon))
        self.discarder = declarer
        self._begin_discard()

    def _begin_announcements(self) -> None:
        self._combinations = {}  # AM-COMB-1: judged on the hands after the talon exchange
        self._begin_round(ANNOUNCE, list(self.order))  # AM-ANN-1 (AMB-34)

    def _bonuses_open(self, seat: int) -> list[str]:
        """AM-ANN-1: each player may announce a bonus of his side once; it counts once per side.

        Refusing a bonus because a teammate already announced it would tell the player who his
        teammate is, which AM-ANN-1 forbids; so only the player's own announcements are excluded.
        """
        done = {a.name for a in self.announcements if a.seat == seat}
        return [name for name in self.bonuses_for_side(self.side[seat]) if name not in done]

    def _american_announcements(self, seat: int) -> list[Action]:
        """AM-ANN-1, AM-COMB-1: announce bonuses for one's side, declare combinations, then pass."""
        declared = {(d.combination.name, d.combination.suit) for d in self.declarations if d.seat == seat}
        return [
            *(A.make("announce", name=n) for n in self._bonuses_open(seat)),
            *(
                A.make("declare", None, c.suit, c.name)
                for c in self._combinations_of(seat)
                if (c.name, c.suit) not in declared
            ),
            A.PASS,
        ]

    def _apply_american_announce(self, seat: int, action: Action) -> None:
        if action.type == "announce":
            assert action.name is not None
            self.announcements.append(Announcement(seat, action.name, 1))
            self.side_announced[self.side[seat]].add(action.name)
        elif action.type == "declare":
            for combination in self._combinations_of(seat):
                if combination.name == action.name and combination.suit == action.suit:
                    self.declarations.append(Declaration(seat, combination))
                    if self.called in combination.shown:
                        self.called_public = True  # AM-CALL-2: shown in a combination
                    break
        elif not self._next_in_round():
            self._start_trick()

    # ------------------------------------------------------------------ discard

    def _begin_discard(self) -> None:
        self.phase = DISCARD
        self.turn = self.discarder
        hand = self.hands[self.discarder]
        plans = self.variant.discard_plans(hand)
        self._discard_plans = plans
        self._plan_masks = [(mask_of(must), mask_of(pool)) for must, pool in plans]
        if self.variant.maximise_free_skat_cards:
            # DK-SKAT-4 (AMB-48, AMB-52): count the non-combination cards each plan can hold.
            comb: frozenset[Card] = frozenset()
            for combination in self.variant.combinations(hand):
                comb |= combination.cards
            self._combination_cards = comb
            self._combination_mask = mask_of(comb)
            count = self.variant.discard_count
            self._discard_best = max(
                len(must - comb) + min(count - len(must), len(pool - must - comb)) for must, pool in plans
            )

    def _legal_discards(self) -> list[Card]:
        """The cards of the hand that pass `_discardable`, its test asked of each (once set up)."""
        pool = self._free_pool()
        if pool is not None:
            return [c for c in self.hands[self.discarder] if c in pool]
        chosen = mask_of(self.skat)
        maximise = self.variant.maximise_free_skat_cards
        return [c for c in self.hands[self.discarder] if self._skat_feasible(chosen | 1 << c, maximise)]

    def _discardable(self, card: Card) -> bool:
        """Whether the discarder may lay `card` (of his hand) away next: the test of the discard."""
        pool = self._free_pool()
        if pool is not None:
            return card in pool
        return self._skat_feasible(mask_of(self.skat) | 1 << card, self.variant.maximise_free_skat_cards)

    def _free_pool(self) -> frozenset[Card] | None:
        """The pool of the one plan when it has no set constraint: every pooled card stays legal."""
        plans = self._discard_plans
        if len(plans) == 1 and not plans[0][0] and not self.variant.maximise_free_skat_cards:
            return plans[0][1]
        return None

    def _discard_feasible(self, chosen: frozenset[Card], maximise: bool | None = None) -> bool:
        """Can `chosen` be completed to a legal skat (ignoring DK-SKAT-4 when `maximise` is False)?"""
        if maximise is None:
            maximise = self.variant.maximise_free_skat_cards
        return self._skat_feasible(mask_of(chosen), maximise)

    def _skat_feasible(self, chosen: int, maximise: bool) -> bool:
        """`_discard_feasible` on bits: `a & ~b` is a − b, `bit_count()` the number of cards."""
        comb = self._combination_mask
        for must, pool in self._plan_masks:
            if chosen & ~(must | pool):
                continue  # a chosen card outside the plan
            fixed = chosen | must
            places = self.variant.discard_count - fixed.bit_count()
            free = pool & ~fixed
            if places < 0 or free.bit_count() < places:
                continue
            if maximise and (fixed & ~comb).bit_count() + min(places, (free & ~comb).bit_count()) != (
                self._discard_best
            ):
                continue
            return True
        return False

    def _apply_discard(self, seat: int, action: Action) -> None:
        card = action.card
        assert card is not None
        self.hands[seat].remove(card)
        self.skat.append(card)
        if len(self.skat) < self.variant.discard_count:
            return
        if self.variant.family is Family.DANISH:
            # DK-SKAT-3: the number of taroks laid away is public; DK-SKAT-4: combination cards are shown.
            self.skat_public = {
                "taroks": sum(1 for c in self.skat if SUIT_NO[c] == TAROK_NO),
                "shown": [str(c) for c in sorted(self.skat) if c in self._combination_cards],
            }
        self._after_discard()

    def _after_discard(self) -> None:
        if self.variant.contracts:
            self._begin_announcements()  # AM-ANN-1: after the talon exchange
        elif self.variant.declarations == "compulsory":
            self._declare_automatically()
            self._start_trick()
        else:
            # DUM-DECL-1, G54-DECL-1: beginning with the dealer, in playing direction.
            d = self.dealer
            self._begin_round(DECLARE, [d, self.next_seat[d], self.next_seat[self.next_seat[d]]])

    # ------------------------------------------------------------------ declarations

    def _declare_automatically(self) -> None:
        """DK-DECL-1/2: every combination, from the dealer on; the dealer is judged on 28 cards."""
        seat = self.dealer
        for _ in range(3):
            cards = self.hands[seat] + (self.skat if seat == self.dealer else [])
            for combination in self.variant.combinations(cards):
                self.declarations.append(Declaration(seat, combination))
            seat = self.next_seat[seat]

    def _combinations_of(self, seat: int) -> list[Combination]:
        """The seat's combinations; its hand does not change during the declarations."""
        cached = self._combinations.get(seat)
        if cached is None:
            cached = self._combinations[seat] = self.variant.combinations(self.hands[seat])
        return cached

    def _apply_declare(self, seat: int, action: Action) -> None:
        if action.type == "pass":
            if not self._next_in_round():
                self._start_trick()
            return
        for combination in self._combinations_of(seat):
            if combination.name == action.name and combination.suit == action.suit:
                self.declarations.append(Declaration(seat, combination))
                return
        raise AssertionError("verified declaration not found")  # pragma: no cover

    # ------------------------------------------------------------------ announcements (DUM-ANN)

    def _apply_announce(self, seat: int, action: Action) -> None:
        """Vole, Nolo or a pass; then the next seat that may still announce, or the trick.

        `american` has its own round (`_apply_american_announce`).  Who may announce is
        `TrickPlay._announceable` (play.py), which `_start_trick` uses to open the round.
        """
        if self.variant.contracts:
            self._apply_american_announce(seat, action)
            return
        if action.type == "announce":
            assert action.name is not None
            self.announcements.append(Announcement(seat, action.name, self.trick_no))
        while self._next_in_round():
            if self._announceable(self.turn):  # type: ignore[arg-type]
                return
        self.phase = PLAY
        self.turn = self.leader


def mask_of(cards: Iterable[Card]) -> int:
    """A set of cards as bits: bit i for card i."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask
