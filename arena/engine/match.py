"""A match of many deals: dealer rotation, pots across deals, running scores, the final split."""

from __future__ import annotations

import random

from .cards import CARDS, Card
from .result import DealResult, Transfer
from .state import DealState
from .variants import Variant


def deck_for(seed: int, deal_index: int) -> list[Card]:
    """The shuffled deck of deal `deal_index` of the match with `seed` (G-CODE-6).

    Each deal draws from its own string-seeded generator, so any deal can be
    rebuilt alone and every table of a duplicate ladder can play the same decks.
    """
    deck = list(CARDS)
    random.Random(f"arena-deck:{seed}:{deal_index}").shuffle(deck)
    return deck


class Match:
    """Deals in turn until `deals` dealer turns have passed (G-SEAT-7)."""

    def __init__(self, variant: Variant, seed: int, deals: int, first_dealer: int = 0) -> None:
        if deals < 1:
            raise ValueError("a match has at least one deal")
        if not 0 <= first_dealer < variant.seats:
            raise ValueError(f"first dealer {first_dealer} is not a seat (0…{variant.seats - 1})")
        self.variant = variant
        self.seed = seed
        self.deals = deals
        self.dealer = first_dealer  # G-SEAT-6
        self.deal_index = 0
        self.turns_done = 0
        self.scores = [0] * variant.seats
        self.pots = {name: 0 for name in variant.pot_names}
        self.results: list[DealResult] = []
        self.match_ledger: list[Transfer] = []
        self.last_forehand: int | None = None
        self._stakes_paid = False
        self._split: list[int] | None = None
        if variant.pots is not None:
            for pot in variant.pot_names:  # DK-POT-2: antes at the start of the match
                for seat in range(variant.seats):
                    self._transfer(seat, pot, variant.pots.ante, "DK-POT-2")

    def _transfer(self, source: int | str, target: int | str, amount: int, rule: str) -> None:
        if amount <= 0:
            return
        self.match_ledger.append(Transfer(source, target, amount, rule))
        for account, sign in ((source, -1), (target, 1)):
            if isinstance(account, int):
                self.scores[account] += sign * amount
            else:
                self.pots[account] += sign * amount

    def is_over(self) -> bool:
        return self.turns_done >= self.deals

    def start_deal(self) -> DealState:
        if self.is_over():
            raise ValueError("the match is over")
        return DealState(
            self.variant,
            self.dealer,
            deck_for(self.seed, self.deal_index),
            pots=self.pots,
            stakes=not self._stakes_paid,
        )

    def finish_deal(self, state: DealState) -> DealResult:
        result = state.result()
        self.results.append(result)
        for seat, delta in enumerate(result.deltas):
            self.scores[seat] += delta
        for pot, change in result.pots.items():
            self.pots[pot] += change
        self.deal_index += 1
        self.last_forehand = state.forehand
        if result.annulled and self.variant.redeal is not None:
            self._stakes_paid = True  # DK-DEAL-2: same dealer, no pot payment repeated (G-SEAT-5, G-SEAT-7)
            return result
        # Any other deal, an annulled `american` one (AM-DEAL-2) included, is a dealer turn (G-SEAT-7).
        self._stakes_paid = False
        self.turns_done += 1
        step = 1 if self.variant.clockwise else -1
        self.dealer = (self.dealer + step) % self.variant.seats  # G-SEAT-5
        return result

    def final_split(self) -> list[int]:
        """DK-POT-6: each pot in equal shares; the remainder one each from the last forehand on."""
        if self._split is not None:
            return self._split
        shares = [0] * self.variant.seats
        if self.variant.pots is not None:
            forehand = self.last_forehand if self.last_forehand is not None else 0
            players = [s for s in range(self.variant.seats)]
            step = 1 if self.variant.clockwise else -1
            order = [(forehand + step * k) % len(players) for k in range(len(players))]
            for pot in self.variant.pot_names:
                value = self.pots[pot]
                for k, seat in enumerate(order):
                    share = value // 3 + (1 if k < value % 3 else 0)
                    shares[seat] += share
                    self._transfer(pot, seat, share, "DK-POT-6")
        self._split = shares
        return shares
