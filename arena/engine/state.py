"""The state of one deal: whose turn it is, the legal actions, applying an action.

`DealState` is a phase machine in the spirit of OpenSpiel's tarok: every phase
has its legal-action and apply functions, and `legal_actions()` / `apply()`
dispatch on the phase.  `apply` verifies, then mutates; an illegal action raises
`IllegalActionError` naming the rule.  The deck is an explicit input, so the same
deck and the same actions always give the same deal.

Phases: the three-player variants run [redeal] → discard → [declare] → play with
announce and demand rounds between tricks; `american` runs bid → [call] → [discard
(the talon exchange)] → announce (bonuses and combinations) → play, or bid → play
in Trischaken.

`DealState` is built in layers, each in its own module and each using only those
below it: the fields of a deal (`deal.DealFields`), trick play (`play.TrickPlay`),
the other phases (`phases.Phases`), and here the setup, the queries and the
dispatch.  `explain` tells why a rejected action is illegal; `scoring` scores the
deal at its end.

Legality is decided in one place, `_compute_legal`, from each phase's predicates; as in
pokerkit, `can(action)` asks whether the list holds an action (deciding it from the same
predicates when the list was not needed yet), `verify(action)` raises with the rule when it
does not, and `apply` verifies, then mutates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from . import actions as A
from .actions import Action
from .cards import CARDS, DECK_SIZE, FOOL, Card
from .deal import ANNOUNCE, BID, CALL, DECLARE, DEMAND, DISCARD, END, PLAY, REDEAL, SUIT_NO, holds
from .errors import ActionError, IllegalActionError
from .explain import explain
from .options import Redeal
from .phases import Phases
from .play import ANY_SUIT, STRENGTH
from .result import DealResult
from .scoring import score_deal
from .variants import Variant


class DealState(Phases):
    """One deal, from the deal to the last trick."""

    def __init__(
        self,
        variant: Variant,
        dealer: int,
        deck: Sequence[Card],
        pots: Mapping[str, int] | None = None,
        stakes: bool = True,
    ) -> None:
        if not 0 <= dealer < variant.seats:
            raise ActionError(f"dealer {dealer} is not a seat of {variant.name} (0…{variant.seats - 1})")
        check_deck(deck)
        self.variant = variant
        self.dealer = dealer
        self.deck = tuple(CARDS[c] for c in deck)
        self.pots_start = {name: int((pots or {}).get(name, 0)) for name in variant.pot_names}
        self.stakes = stakes
        self.seats = variant.seats
        self.strength = STRENGTH[variant.red_pips_reversed]

        # G-SEAT-2, G54-TAB-2: the active seats and the playing order.
        step = 1 if variant.clockwise else -1
        self.sitting_out = (dealer + 2) % 4 if variant.seats > variant.players else None
        nxt = [-1] * self.seats
        active = [s for s in range(self.seats) if s != self.sitting_out]
        for seat in active:
            following = (seat + step) % self.seats
            if following == self.sitting_out:
                following = (following + step) % self.seats
            nxt[seat] = following
        self.next_seat = tuple(nxt)
        forehand = nxt[dealer]
        self.forehand = forehand
        order = [forehand]
        while len(order) < variant.players:
            order.append(nxt[order[-1]])
        self.order = tuple(order)  # F, M, D (G-SEAT-8); american: forehand … dealer
        self.players = variant.players

        hands: list[list[Card]] = [[] for _ in range(self.seats)]
        d = self.deck
        self.talon = ()
        if variant.talon_size:
            # G-DEAL-2: rounds of 13 cards: 3 to forehand, 1 to the talon, 3 to each of the others.
            talon = []
            for r in range(6):
                base = 13 * r
                hands[order[0]].extend(d[base : base + 3])
                talon.append(d[base + 3])
                for k in range(1, 4):
                    hands[order[k]].extend(d[base + 3 * k + 1 : base + 3 * k + 4])
            self.talon = tuple(sorted(talon))
        else:
            # G-DEAL-1: packets of five from forehand; the dealer takes the last three.
            for r in range(5):
                for k, seat in enumerate(self.order):
                    hands[seat].extend(d[15 * r + 5 * k : 15 * r + 5 * k + 5])
            hands[dealer].extend(d[75:78])
        self.hands = [sorted(h) for h in hands]

        self.history = []
        self.skat = []
        self.skat_public = {}
        self.declarations = []
        self.announcements = []
        self.round_answers = []
        self.tricks = []
        self.tricks_won = [0] * self.seats
        self.piles = [[] for _ in range(self.seats)]
        self.fool_debts = []
        self.annulled = False
        self.fool_demanded = False

        # `american`: the contract and the sides (AM-BID, AM-CALL, AM-SIDE-1).
        self.contract = None
        self.declarer = None
        self.trischaken = False
        self.called = None
        self.called_holder = None
        self.partner = None
        self.called_public = False
        self.talon_visible = False
        self.petit_sec = None
        self.side = tuple(range(self.seats))
        self.side_announced = (set(), set())
        self.discarder = dealer
        self.first_leader = forehand

        self.trick_no = 0
        self.leader = forehand
        self.trick = []
        self.led = None
        self.designation = None
        self.redesignation = None

        self.phase = DISCARD
        self.turn = dealer
        self._queue = []
        self._discard_plans = []
        self._discard_best = 0
        self._combination_cards = frozenset()
        self._plan_masks = []
        self._combination_mask = 0
        self._combinations = {}
        self._legal: list[Action] | None = None
        self._result: DealResult | None = None

        if variant.contracts:
            self.petit_sec = next((s for s in self.order if self._petit_sec(s)), None)
            if self.petit_sec is not None:
                self._finish(annulled=True)  # AM-DEAL-2 (AMB-44)
            else:
                self._begin_round(BID, list(self.order))  # AM-BID-2
        elif variant.redeal is Redeal.CLAIM:
            self._begin_round(REDEAL, list(self.order))  # DK-DEAL-2
        elif variant.redeal is Redeal.AUTO and any(not self._holds_tarok(s) for s in self.order):
            self._finish(annulled=True)
        else:
            self._begin_discard()

    # ------------------------------------------------------------------ queries

    @property
    def current_player(self) -> int | None:
        """The seat to act, or None when the deal is over."""
        return self.turn

    def is_terminal(self) -> bool:
        return self.phase == END

    def legal_actions(self) -> list[Action]:
        """The legal actions of the current player, in a fixed order."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def hand(self, seat: int) -> list[Card]:
        return list(self.hands[seat])

    def result(self) -> DealResult:
        """The end of the deal as data: card points, ledger, deltas, pots."""
        if self.phase != END:
            raise ActionError("the deal is not over yet")
        if self._result is None:
            self._result = score_deal(self)
        return self._result

    # ------------------------------------------------------------------ apply

    def can(self, action: Action) -> bool:
        """Whether `action` is legal for the current player: whether `legal_actions()` lists it."""
        seat = self.turn
        if seat is None:
            return False
        legal = self._legal
        return self._allows(seat, action) if legal is None else action in legal

    def verify(self, action: Action) -> None:
        """Raise `IllegalActionError`, naming the rule, unless `can(action)`."""
        if self.phase == END:
            raise IllegalActionError("the deal is over", "G-TRICK-1")
        if not self.can(action):
            self._reject(action)

    def apply(self, action: Action) -> None:
        """`verify` `action` for the current player, then carry it out."""
        if self.phase == END:
            raise IllegalActionError("the deal is over", "G-TRICK-1")
        seat = self.turn
        assert seat is not None
        legal = self._legal
        # `verify` and `can` spelled out: apply runs once per action, and two calls fewer count there.
        if not (self._allows(seat, action) if legal is None else action in legal):
            self._reject(action)
        self.history.append((seat, action))
        self._legal = None
        phase = self.phase
        if phase == PLAY:
            self._apply_play(seat, action)
        elif phase == DISCARD:
            self._apply_discard(seat, action)
        elif phase == DECLARE:
            self._apply_declare(seat, action)
        elif phase == ANNOUNCE:
            self._apply_announce(seat, action)
        elif phase == BID:
            self._apply_bid(seat, action)
        elif phase == CALL:
            self._apply_call(seat, action)
        else:
            self._apply_round_answer(seat, action)

    def _allows(self, seat: int, action: Action) -> bool:
        """`can(action)` when nobody has asked for `legal_actions()` yet (a replay, a record).

        The answer is the list's (`test_apply_alone_accepts_exactly_the_legal_actions`), taken
        from the same predicates the list is built from, without building it where one of them
        settles the action: a card play by `_plain_suit` or `_playable`, a discard by
        `_discardable`, an announcement by the names open.  Anything else is looked up in the list.
        """
        if type(action) is Action and action.suit is None:
            card, phase = action.card, self.phase
            if action.name is None and type(card) is Card:
                if phase == PLAY and action.type == PLAY:
                    hand = self.hands[seat]
                    plain = self._plain_suit(seat)
                    if plain is not None:
                        return holds(hand, card) and (plain == ANY_SUIT or SUIT_NO[card] == plain)
                    cards = self._playable(seat)
                    if cards is not None:
                        return holds(cards, card)
                elif phase == DISCARD and action.type == DISCARD:
                    return holds(self.hands[self.discarder], card) and self._discardable(card)
            elif action is A.PASS and phase not in (PLAY, DISCARD, CALL):
                return True  # every other phase offers a pass
            elif phase == ANNOUNCE and action.type == ANNOUNCE and card is None:
                names = self._bonuses_open(seat) if self.variant.contracts else self._announceable(seat)
                return action.name in names
        legal = self._legal = self._compute_legal()
        return action in legal

    def _reject(self, action: Action) -> None:
        if not isinstance(action, Action):
            raise ActionError(f"not an action: {action!r}")
        message, rule = explain(self, action)
        raise IllegalActionError(f"seat {self.turn}: {action} is illegal: {message}", rule)

    # ------------------------------------------------------------------ legal actions per phase

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        seat = self.turn
        assert seat is not None
        if phase == PLAY:
            cards = self._playable(seat)
            return [A.PLAY[c] for c in cards] if cards is not None else self._designating_plays(seat)
        if phase == DISCARD:
            return [A.DISCARD[c] for c in self._legal_discards()]
        if phase == DECLARE:
            declared = {(d.combination.name, d.combination.suit) for d in self.declarations if d.seat == seat}
            options = [
                A.make("declare", None, c.suit, c.name)
                for c in self._combinations_of(seat)
                if (c.name, c.suit) not in declared
            ]
            return [*options, A.PASS]
        if phase == ANNOUNCE:
            if self.variant.contracts:
                return self._american_announcements(seat)
            return [*(A.make("announce", name=n) for n in self._announceable(seat)), A.PASS]
        if phase == BID:
            start = 0 if self.contract is None else self.variant.contracts.index(self.contract) + 1
            return [*(A.make("bid", name=c.name) for c in self.variant.contracts[start:]), A.PASS]
        if phase == CALL:
            return [A.make("call", c) for c in self._callable()]
        if phase == REDEAL:
            return [A.REDEAL, A.PASS] if not self._holds_tarok(seat) else [A.PASS]
        if phase == DEMAND:
            return [A.DEMAND, A.PASS] if FOOL not in self.hands[seat] else [A.PASS]
        return []

    # The same deal replayed to the same point stands for a copy and for a pickle: the engine is
    # deterministic, and mypyc's compiled classes cannot be rebuilt field by field.
    def __deepcopy__(self, memo: dict[int, object]) -> DealState:
        copy = replayed(*self.__reduce__()[1])
        memo[id(self)] = copy
        return copy

    def __reduce__(self) -> tuple[Callable[..., DealState], tuple[Any, ...]]:
        actions = [action for _, action in self.history]
        return replayed, (self.variant, self.dealer, self.deck, self.pots_start, self.stakes, actions)

    def __repr__(self) -> str:
        return (
            f"<DealState {self.variant.name} dealer={self.dealer} phase={self.phase} "
            f"trick={self.trick_no} turn={self.turn}>"
        )


def check_deck(deck: Iterable[object]) -> None:
    """G-CODE-6: a deck is a permutation of the 78 cards."""
    cards = list(deck)
    if len(cards) != DECK_SIZE:
        raise ActionError(f"a deck has 78 cards, got {len(cards)} (G-PACK-1)")
    seen: set[int] = set()
    for position, card in enumerate(cards):
        if not isinstance(card, int) or not 0 <= card < DECK_SIZE:
            raise ActionError(f"deck position {position}: {card!r} is not a card (G-CODE-1)")
        if card in seen:
            raise ActionError(f"deck position {position}: duplicate card {CARDS[card]} (G-PACK-1)")
        seen.add(card)


def replayed(
    variant: Variant,
    dealer: int,
    deck: Sequence[Card],
    pots: Mapping[str, int] | None,
    stakes: bool,
    actions: Iterable[Action],
) -> DealState:
    """A deal dealt as given, with `actions` applied in order."""
    state = DealState(variant, dealer, deck, pots, stakes)
    for action in actions:
        state.apply(action)
    return state
