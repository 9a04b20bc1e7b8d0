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
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import actions as A
from .actions import Action
from .cards import (
    CARDS,
    CAVALIER,
    DECK_SIZE,
    FOOL,
    JACK,
    KING,
    KINGS,
    MOND,
    PAGAT,
    QUEEN,
    SUITS,
    TAROK,
    Card,
)
from .combos import Combination
from .errors import ActionError, IllegalActionError
from .variants import Contract, Variant

if TYPE_CHECKING:
    from .scoring import DealResult

# Suit numbers: 0-3 the suits S H D C, 4 the taroks, 5 the Fool.
TAROK_NO = 4
FOOL_NO = 5
SUIT_NO: tuple[int, ...] = tuple(
    i // 14 if i < 56 else (TAROK_NO if i < 77 else FOOL_NO) for i in range(DECK_SIZE)
)
DESIGNATION_NO = {s: i for i, s in enumerate((*SUITS, TAROK))}
NO_DESIGNATION = (*SUITS, TAROK)

REDEAL = "redeal"
BID = "bid"
CALL = "call"
DISCARD = "discard"
DECLARE = "declare"
ANNOUNCE = "announce"
DEMAND = "demand"
PLAY = "play"
END = "end"


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


_STRENGTH = {flag: strength_table(flag) for flag in (True, False)}


@dataclass(frozen=True, slots=True)
class Trick:
    """A completed trick: who led, the cards in playing order, the winner."""

    number: int
    leader: int
    plays: tuple[tuple[int, Card], ...]
    winner: int
    suit: str | None  # the suit L that was followed (None: only the Fool and no card defined it)
    designation: str | None = None  # the Fool leader's designation (G-TRICK-3)
    redesignation: str | None = None  # the second player's re-designation (AMB-12)
    fool_captured: bool = False

    def card_of(self, seat: int) -> Card | None:
        for who, card in self.plays:
            if who == seat:
                return card
        return None


@dataclass(frozen=True, slots=True)
class Declaration:
    seat: int
    combination: Combination

    def public(self) -> dict[str, object]:
        return {"seat": self.seat, **self.combination.public()}


@dataclass(frozen=True, slots=True)
class Announcement:
    seat: int
    name: str  # "vole" or "nolo"; an American bonus (AMERICAN_BONUSES)
    trick: int  # announced before this trick (DUM-ANN-2); 1 in `american` (AM-ANN-1)


# AM-BON-1, in the order they are offered.
AMERICAN_BONUSES = (
    "trull",
    "four_kings",
    "capture_called",
    "petit_ultimo",
    "king_ultimo_called",
    "king_ultimo_other",
    "slam",
)
DECLARER_SIDE, DEFENDERS = 0, 1  # AM-SIDE-1
# AM-CALL-1: Kings, Queens, Cavaliers, Jacks, then T2…T20.
_CALL_LADDER: tuple[tuple[Card, ...], ...] = (
    *(tuple(CARDS[s * 14 + face - 1] for s in range(4)) for face in (KING, QUEEN, CAVALIER, JACK)),
    tuple(CARDS[57:76]),
)


class DealState:
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
        self.deck: tuple[Card, ...] = tuple(CARDS[c] for c in deck)
        self.pots_start: dict[str, int] = {name: int((pots or {}).get(name, 0)) for name in variant.pot_names}
        self.stakes = stakes
        self.seats = variant.seats
        self.strength = _STRENGTH[variant.red_pips_reversed]

        # G-SEAT-2, G54-TAB-2: the active seats and the playing order.
        step = 1 if variant.clockwise else -1
        self.sitting_out: int | None = (dealer + 2) % 4 if variant.seats > variant.players else None
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
        self.talon: tuple[Card, ...] = ()
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

        self.history: list[tuple[int, Action]] = []
        self.skat: list[Card] = []
        self.skat_public: dict[str, object] = {}  # DK-SKAT-3/4: what the discard publishes
        self.declarations: list[Declaration] = []
        self.announcements: list[Announcement] = []
        self.round_answers: list[tuple[str, int, str]] = []  # (round, seat, answer): redeal and demand rounds
        self.tricks: list[Trick] = []
        self.tricks_won = [0] * self.seats
        self.piles: list[list[Card]] = [[] for _ in range(self.seats)]
        self.fool_debts: list[tuple[int, int, int]] = []  # (owner, creditor, trick number)
        self.annulled = False
        self.fool_demanded = False

        # `american`: the contract and the sides (AM-BID, AM-CALL, AM-SIDE-1).
        self.contract: Contract | None = None
        self.declarer: int | None = None
        self.trischaken = False
        self.called: Card | None = None
        self.called_holder: int | None = None  # who held the called card when it was called (None: talon)
        self.partner: int | None = None
        self.called_public = False  # the called card was seen in the talon or in a shown combination
        self.talon_visible = False
        self.petit_sec: int | None = None
        self.side: tuple[int, ...] = tuple(range(self.seats))  # everyone for himself unless partnered
        self.side_announced: tuple[set[str], set[str]] = (set(), set())
        self.discarder = dealer
        self.first_leader = forehand

        self.trick_no = 0
        self.leader = forehand
        self.trick: list[tuple[int, Card]] = []
        self.led: int | None = None  # suit number of L
        self.designation: str | None = None
        self.redesignation: str | None = None

        self.phase = DISCARD
        self.turn: int | None = dealer
        self._queue: list[int] = []
        self._discard_plans: list[tuple[frozenset[Card], frozenset[Card]]] = []
        self._discard_best = 0
        self._combination_cards: frozenset[Card] = frozenset()
        self._combinations: dict[int, list[Combination]] = {}
        self._legal: list[Action] | None = None
        self._result: DealResult | None = None

        if variant.contracts:
            self.petit_sec = next((s for s in self.order if self._petit_sec(s)), None)
            if self.petit_sec is not None:
                self._finish(annulled=True)  # AM-DEAL-2 (AMB-44)
            else:
                self._begin_round(BID, list(self.order))  # AM-BID-2
        elif variant.redeal == "claim":
            self._begin_round(REDEAL, list(self.order))  # DK-DEAL-2
        elif variant.redeal == "auto" and any(not self._holds_tarok(s) for s in self.order):
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
            from .scoring import score_deal

            self._result = score_deal(self)
        return self._result

    @property
    def fool_holder(self) -> int | None:
        for seat in self.order:
            if FOOL in self.hands[seat]:
                return seat
        return None

    # ------------------------------------------------------------------ apply

    def apply(self, action: Action) -> None:
        """Verify `action` for the current player, then carry it out."""
        if self.phase == END:
            raise IllegalActionError("the deal is over", "G-TRICK-1")
        seat = self.turn
        assert seat is not None
        legal = self._legal
        if legal is None:
            # Nobody asked for legal_actions() (a replay, a record): decide this action alone.
            if not self._allows(seat, action):
                self._reject(action)
        elif action not in legal:
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
        """Whether `action` is in `legal_actions()`, without listing them when one test settles it.

        A card play or a discard is legal when its card passes the test that picks the cards of
        the list, an announcement when its name is among those open: the same functions decide, so
        the answer is the list's. Anything else is looked up in the list.
        """
        if type(action) is Action and action.suit is None:
            card, phase = action.card, self.phase
            if action.name is None and type(card) is Card:
                if phase == PLAY and action.type == PLAY:
                    hand = self.hands[seat]
                    if FOOL not in hand and not self.trischaken:
                        # Without the Fool's timing (or Trischaken) any card may lead, and following
                        # suit is legal (G-TRICK-4) unless a re-designation is due (G-TRICK-3).
                        trick = self.trick
                        if not trick:
                            return card in hand
                        if self.led == SUIT_NO[card] and (len(trick) > 1 or self.designation is None):
                            return card in hand
                    cards = self._playable(seat)
                    if cards is not None:
                        return card in cards
                elif phase == DISCARD and action.type == DISCARD:
                    return card in self.hands[self.discarder] and self._discardable(card)
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
        message, rule = self._explain(action)
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

    # ------------------------------------------------------------------ rounds (redeal, demand)

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
            if self.variant.options.get("trischaken_leader", "dealer") == "dealer":
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

    def bonuses_for_side(self, side: int) -> list[str]:
        """AM-ANN-1, AM-BON-1: the bonuses that exist for `side` (DECLARER_SIDE or DEFENDERS) in this deal."""
        contract = self.contract
        assert contract is not None
        suit_called = self.called is not None and SUIT_NO[self.called] < TAROK_NO
        out = []
        for name in AMERICAN_BONUSES:
            if name == "capture_called" and not (side == DEFENDERS and contract.calls):
                continue
            if name == "king_ultimo_called" and not suit_called:
                continue
            out.append(name)
        return out

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
        if self.variant.maximise_free_skat_cards:
            # DK-SKAT-4 (AMB-48, AMB-52): count the non-combination cards each plan can hold.
            comb: frozenset[Card] = frozenset()
            for combination in self.variant.combinations(hand):
                comb |= combination.cards
            self._combination_cards = comb
            count = self.variant.discard_count
            self._discard_best = max(
                len(must - comb) + min(count - len(must), len(pool - must - comb)) for must, pool in plans
            )

    def _legal_discards(self) -> list[Card]:
        pool = self._free_pool()
        if pool is not None:
            return [c for c in self.hands[self.discarder] if c in pool]
        chosen = frozenset(self.skat)
        return [c for c in self.hands[self.discarder] if self._discard_feasible(chosen | {c})]

    def _discardable(self, card: Card) -> bool:
        """`_legal_discards()`'s test of one card of the hand."""
        pool = self._free_pool()
        if pool is not None:
            return card in pool
        return self._discard_feasible(frozenset(self.skat) | {card})

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
        comb = self._combination_cards
        for must, pool in self._discard_plans:
            if not chosen <= must | pool:
                continue
            fixed = chosen | must
            places = self.variant.discard_count - len(fixed)
            free = pool - fixed
            if places < 0 or len(free) < places:
                continue
            if maximise and len(fixed - comb) + min(places, len(free - comb)) != self._discard_best:
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
        if self.variant.family == "danish":
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

    def _announceable(self, seat: int) -> list[str]:
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

    def _apply_announce(self, seat: int, action: Action) -> None:
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

    # ------------------------------------------------------------------ trick play

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

    def _legal_plays(self, seat: int) -> list[Action]:
        cards = self._playable(seat)
        return [A.PLAY[c] for c in cards] if cards is not None else self._designating_plays(seat)

    def _playable(self, seat: int) -> list[Card] | None:
        """The cards `seat` may play, or None when the legal plays name a suit (G-TRICK-3)."""
        hand = self.hands[seat]
        if self.trischaken:
            return self._trischaken_cards(hand)
        if not self.trick:
            cards = hand
            if FOOL in hand:
                cards = self._fool_timing(seat, hand, list(hand), leading=True)
                if self.variant.fool_lead == "designate" and FOOL in cards:
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
        """G-TRICK-4: follow suit, else play a tarok, else anything; the Fool may always be played."""
        follow = [c for c in hand if SUIT_NO[c] == led]
        if not follow and led != TAROK_NO:
            follow = [c for c in hand if SUIT_NO[c] == TAROK_NO]
        if not follow:
            return list(hand)
        if FOOL in hand:
            follow.append(FOOL)
        return follow

    def _fool_timing(self, seat: int, hand: list[Card], cards: list[Card], leading: bool) -> list[Card]:
        """The variant's Fool rules applied to otherwise legal `cards` (seat holds the Fool)."""
        v = self.variant
        t = self.trick_no
        allowed = cards
        if leading and v.fool_lead == "forbidden":
            allowed = [c for c in cards if c != FOOL]  # G54-PLAY-1
        if v.fool_last_trick is not None:
            if not leading and FOOL not in cards:
                allowed = [*cards, FOOL]  # G54-FOOL-1: instead of a legal card
            if not leading and t >= v.fool_last_trick:
                allowed = [FOOL]  # G54-FOOL-2
            elif not leading and v.fool_when_void and self.led is not None:
                void = not any(SUIT_NO[c] == self.led for c in hand)
                if void and not any(SUIT_NO[c] == TAROK_NO for c in hand):
                    allowed = [FOOL]  # G54-FOOL-3
        if v.fool_forbidden_trick == t:
            allowed = [c for c in allowed if c != FOOL]  # DK-FOOL-2
        if self.fool_demanded and t == 23:
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


    def _finish(self, annulled: bool) -> None:
        self.annulled = annulled
        self.phase = END
        self.turn = None
        self._queue = []

    # ------------------------------------------------------------------ explanations of illegal actions

    def _explain(self, action: Action) -> tuple[str, str]:
        phase = self.phase
        seat = self.turn
        assert seat is not None
        v = self.variant
        if v.contracts and phase != PLAY:
            return self._explain_american(action)
        expected = {
            PLAY: ("play",),
            DISCARD: ("discard",),
            DECLARE: ("declare", "pass"),
            ANNOUNCE: ("announce", "pass"),
            REDEAL: ("redeal", "pass"),
            DEMAND: ("demand", "pass"),
        }[phase]
        phase_rule = {
            PLAY: "G-TRICK-1",
            DISCARD: {"dummett": "DUM-DISC-1", "german": "G54-DISC-1"}.get(v.family, "DK-SKAT-1"),
            DECLARE: {"dummett": "DUM-DECL-1", "german": "G54-DECL-1"}.get(v.family, "DK-DECL-1"),
            ANNOUNCE: "DUM-ANN-3",
            REDEAL: "DK-DEAL-2",
            DEMAND: "DK-FOOL-3",
        }[phase]
        if action.type not in expected:
            return f"the phase is {phase}; expected {' or '.join(expected)}", phase_rule
        hand = self.hands[seat]
        if phase == DISCARD:
            return self._explain_discard(action)
        if phase == DECLARE:
            return (
                f"seat {seat} does not hold an undeclared {action.name} {action.suit or ''}".strip(),
                phase_rule,
            )
        if phase == ANNOUNCE:
            name = action.name or ""
            rule = "DUM-ANN-1" if name in ("vole", "nolo") else "DUM-ANN-3"
            return f"{name} is not open to seat {seat} before trick {self.trick_no}", rule
        if phase == REDEAL:
            return "only a player holding no tarok may claim a redeal", "DK-DEAL-2"
        if phase == DEMAND:
            return "the holder of the Fool cannot demand it", "DK-FOOL-3"
        card = action.card
        assert card is not None
        if card not in hand:
            return f"{card} is not in the hand of seat {seat}", "G-TRICK-1"
        leading = not self.trick
        if card == FOOL and leading:
            if v.fool_lead == "forbidden":
                return "the Excuse may not be led", "G54-PLAY-1"
            if v.fool_lead == "designate" and action.suit is None:
                return "a led Fool needs a designated suit (S, H, D, C or T)", "G-TRICK-3"
        if self.fool_demanded and self.trick_no == 23 and FOOL in hand:
            return "the Fool was demanded for trick 23", "DK-FOOL-3"
        if card == FOOL and v.fool_forbidden_trick == self.trick_no:
            return "the Fool may not be played to trick 24", "DK-FOOL-2"
        if FOOL in hand and v.fool_last_trick is not None and not leading:
            if self.trick_no >= v.fool_last_trick:
                return "the Excuse must be played no later than trick 23", "G54-FOOL-2"
            if self._legal_plays(seat) == [A.PLAY[FOOL]]:
                return "a holder without taroks must play the Excuse when void in the led suit", "G54-FOOL-3"
        if self._must_redesignate() and action.suit is None:
            return "nobody can follow the designated suit: name a new suit with the card", "G-TRICK-3"
        if action.suit is not None and not (leading and card == FOOL) and not self._must_redesignate():
            return "only a led Fool or a re-designation names a suit", "G-TRICK-3"
        led = self.led
        if action.suit is not None and not leading:
            led = DESIGNATION_NO[action.suit]
        if self.trischaken and (led is None or card in self._followers(hand, led)):
            if card == PAGAT:
                return "T1 may be led or played only as the player's last tarok", "AM-TRI-4"
            return f"seat {seat} must beat {self._winning_card()} with a card that can", "AM-TRI-3"
        if led is not None and any(SUIT_NO[c] == led for c in hand):
            return f"seat {seat} must follow {NO_DESIGNATION[led]}", "G-TRICK-4"
        return f"seat {seat} must play a tarok", "G-TRICK-4"

    def _explain_american(self, action: Action) -> tuple[str, str]:
        """The rule an illegal action breaks in the bidding, the call, the talon or the announcements."""
        phase = self.phase
        seat = self.turn
        assert seat is not None
        expected = {
            BID: ("bid", "pass"),
            CALL: ("call",),
            DISCARD: ("discard",),
            ANNOUNCE: ("announce", "declare", "pass"),
        }[phase]
        phase_rule = {BID: "AM-BID-2", CALL: "AM-CALL-1", DISCARD: "AM-TAL-1", ANNOUNCE: "AM-ANN-1"}[phase]
        if action.type not in expected:
            return f"the phase is {phase}; expected {' or '.join(expected)}", phase_rule
        card = action.card
        if phase == BID:
            names = [c.name for c in self.variant.contracts]
            if action.name not in names:
                return f"unknown contract {action.name!r} (one of {', '.join(names)})", "AM-BID-1"
            assert self.contract is not None
            return f"a bid must be higher than {self.contract.name}", "AM-BID-2"
        if phase == CALL:
            assert card is not None
            if (SUIT_NO[card] < TAROK_NO and card % 14 >= 10) or PAGAT < card < MOND:
                return "a lower rank may be called only when every higher court is in hand", "AM-CALL-1"
            return "only a King, Queen, Cavalier, Jack or T2…T20 can be called", "AM-CALL-1"
        if phase == DISCARD:
            assert card is not None
            if card not in self.hands[self.discarder]:
                return f"{card} is not in the declarer's hand", "AM-TAL-1"
            return "Kings, EX, T1 and T21 are never laid away", "AM-TAL-1"
        if action.type == "declare":
            return (
                f"seat {seat} does not hold an undeclared {action.name} {action.suit or ''}".strip(),
                "AM-COMB-1",
            )
        name = action.name
        if name not in AMERICAN_BONUSES:
            return f"unknown bonus {name!r} (one of {', '.join(AMERICAN_BONUSES)})", "AM-ANN-1"
        if any(a.seat == seat and a.name == name for a in self.announcements):
            return f"seat {seat} has already announced {name}", "AM-ANN-1"
        if name == "capture_called":
            return "only the defenders may announce capture_called, and only in Rufer and Solorufer", (
                "AM-ANN-1"
            )
        return "king_ultimo_called needs a called King, Queen, Cavalier or Jack", "AM-ANN-1"

    def _explain_discard(self, action: Action) -> tuple[str, str]:
        card = action.card
        assert card is not None
        fam = self.variant.family
        if card not in self.hands[self.dealer]:
            return f"{card} is not in the dealer's hand", {
                "dummett": "DUM-DISC-1",
                "german": "G54-DISC-1",
            }.get(fam, "DK-SKAT-1")
        if fam == "dummett":
            if card in KINGS or card == CARDS[76]:
                return "a King or T21 is never laid away", "DUM-DISC-2"
            return "taroks and the Sküs may go only with the Pagat and at most two others", "DUM-DISC-3"
        if fam == "german":
            if card in KINGS:
                return "a King is never laid away", "G54-DISC-1"
            return "taroks and the Excuse may not be laid away here", "G54-DISC-2"
        if card in KINGS or card in (PAGAT, CARDS[76], FOOL):
            return "a King, T1, T21 or the Fool is never laid away", "DK-SKAT-2"
        if self._discard_feasible(frozenset(self.skat) | {card}, maximise=False):
            return "the skat must hold as many non-combination cards as possible", "DK-SKAT-4"
        return "middle taroks go into the skat all together, and only if the dealer keeps none", "DK-SKAT-3"

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
