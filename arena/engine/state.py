"""The state of one deal: whose turn it is, the legal actions, applying an action.

`DealState` is a phase machine in the spirit of OpenSpiel's tarok: every phase
has its legal-action and apply functions, and `legal_actions()` / `apply()`
dispatch on the phase.  `apply` verifies, then mutates; an illegal action raises
`IllegalActionError` naming the rule.  The deck is an explicit input, so the same
deck and the same actions always give the same deal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import actions as A
from .actions import Action
from .cards import CARDS, DECK_SIZE, FOOL, KINGS, PAGAT, SUITS, TAROK, Card, format_cards
from .combos import Combination
from .errors import ActionError, IllegalActionError
from .variants import Variant

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
    name: str  # "vole" or "nolo"
    trick: int  # announced before this trick (DUM-ANN-2)


class DealState:
    """One deal of a three-player variant, from the deal to the last trick."""

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
        self.sitting_out: int | None = (dealer + 2) % 4 if variant.seats == 4 else None
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
        self.order = (forehand, nxt[forehand], nxt[nxt[forehand]])  # F, M, D (G-SEAT-8)

        # G-DEAL-1: packets of five from forehand; the dealer takes the last three.
        hands: list[list[Card]] = [[] for _ in range(self.seats)]
        d = self.deck
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

        if variant.redeal == "claim":
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
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:
            self._reject(action)
        seat = self.turn
        assert seat is not None
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
        else:
            self._apply_round_answer(seat, action)

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
            return self._legal_plays(seat)
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
            return [*(A.make("announce", name=n) for n in self._announceable(seat)), A.PASS]
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

    # ------------------------------------------------------------------ discard

    def _begin_discard(self) -> None:
        self.phase = DISCARD
        self.turn = self.dealer
        hand = self.hands[self.dealer]
        plans = self.variant.discard_plans(hand)
        self._discard_plans = plans
        if self.variant.maximise_free_skat_cards:
            # DK-SKAT-4 (AMB-48, AMB-52): count the non-combination cards each plan can hold.
            comb: frozenset[Card] = frozenset()
            for combination in self.variant.combinations(hand):
                comb |= combination.cards
            self._combination_cards = comb
            self._discard_best = max(
                len(must - comb) + min(3 - len(must), len(pool - must - comb)) for must, pool in plans
            )

    def _legal_discards(self) -> list[Card]:
        plans = self._discard_plans
        if len(plans) == 1 and not plans[0][0] and not self.variant.maximise_free_skat_cards:
            pool = plans[0][1]  # no set constraint: every pooled card stays legal
            return [c for c in self.hands[self.dealer] if c in pool]
        chosen = frozenset(self.skat)
        return [c for c in self.hands[self.dealer] if self._discard_feasible(chosen | {c})]

    def _discard_feasible(self, chosen: frozenset[Card], maximise: bool | None = None) -> bool:
        """Can `chosen` be completed to a legal skat (ignoring DK-SKAT-4 when `maximise` is False)?"""
        if maximise is None:
            maximise = self.variant.maximise_free_skat_cards
        comb = self._combination_cards
        for must, pool in self._discard_plans:
            if not chosen <= must | pool:
                continue
            fixed = chosen | must
            places = 3 - len(fixed)
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
        if len(self.skat) < 3:
            return
        if self.variant.family == "danish":
            # DK-SKAT-3: the number of taroks laid away is public; DK-SKAT-4: combination cards are shown.
            self.skat_public = {
                "taroks": sum(1 for c in self.skat if SUIT_NO[c] == TAROK_NO),
                "shown": [str(c) for c in sorted(self.skat) if c in self._combination_cards],
            }
        self._after_discard()

    def _after_discard(self) -> None:
        if self.variant.declarations == "compulsory":
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
            self._end_of_play()
            return
        self.trick_no += 1
        t = self.trick_no
        self.leader = self.forehand if t == 1 else self.tricks[-1].winner
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
        hand = self.hands[seat]
        v = self.variant
        play = A.PLAY
        if not self.trick:
            cards = hand
            if FOOL in hand:
                cards = self._fool_timing(seat, hand, list(hand), leading=True)
                if v.fool_lead == "designate" and FOOL in cards:
                    out = [play[c] for c in cards if c != FOOL]
                    out.extend(A.make("play", FOOL, s) for s in NO_DESIGNATION)
                    return out
            return [play[c] for c in cards]
        if self._must_redesignate():
            # G-TRICK-3 (AMB-12): name Y and play a card legal for Y.
            out = []
            for suit in NO_DESIGNATION:
                for c in self._followers(hand, DESIGNATION_NO[suit]):
                    out.append(A.make("play", c, suit))
            return out
        led = self.led
        # G-TRICK-3 next_card: after a led Fool the second card is free.
        cards = list(hand) if led is None else self._followers(hand, led)
        if FOOL in hand:
            cards = self._fool_timing(seat, hand, cards, leading=False)
        return [play[c] for c in cards]

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
        if len(trick) < 3:
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
        captured = False
        pile = self.piles[winner]
        for seat, card in trick:
            if card == FOOL:
                captured = v.fool_captured_from is not None and t >= v.fool_captured_from
                if captured:
                    pile.append(card)  # DUM-PLAY-2, DK-FOOL-2
                else:
                    self.piles[seat].append(card)  # G-TRICK-6: retained
                    if seat != winner:
                        self.fool_debts.append((seat, winner, t))
            else:
                pile.append(card)
        self.tricks_won[winner] += 1
        suit = None if led is None else NO_DESIGNATION[led]
        self.tricks.append(
            Trick(t, self.leader, tuple(trick), winner, suit, self.designation, self.redesignation, captured)
        )
        self._start_trick()

    def _end_of_play(self) -> None:
        self._finish(annulled=False)

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
            DISCARD: {"dummett": "DUM-DISC-1", "german": "G54-DISC-1", "danish": "DK-SKAT-1"}[v.family],
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
            return "a holder without taroks must play the Excuse when void in the led suit", "G54-FOOL-3"
        if self._must_redesignate() and action.suit is None:
            return "nobody can follow the designated suit: name a new suit with the card", "G-TRICK-3"
        if action.suit is not None and not (leading and card == FOOL) and not self._must_redesignate():
            return "only a led Fool or a re-designation names a suit", "G-TRICK-3"
        led = self.led
        if action.suit is not None and not leading:
            led = DESIGNATION_NO[action.suit]
        if led is not None and any(SUIT_NO[c] == led for c in hand):
            return f"seat {seat} must follow {NO_DESIGNATION[led]}", "G-TRICK-4"
        return f"seat {seat} must play a tarok", "G-TRICK-4"

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

    def describe(self) -> str:
        lines = [repr(self)]
        for seat in range(self.seats):
            lines.append(f"  seat {seat}: {format_cards(self.hands[seat])}")
        return "\n".join(lines)


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
