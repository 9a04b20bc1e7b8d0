"""Each seat's observation tensor of one deal, kept up to date in place as the deal goes on.

`spaces.encode_observation(observation(state, seat))` is the definition of the tensor: the seat's
view (the dict the server sends a bot) encoded block by block. Building it that way at every
decision is slow, so the environment and the OpenSpiel game use a `SeatTensor` per seat instead:
a row written in place, where `sync()` writes only the entries that changed since its last sync.
It reads exactly the fields `observation` puts in the seat's view, and asks arena/engine/views.py
what the seat may see (its own discard, the public contract, the shown talon, the partner);
tests/research/test_research.py holds the two equal at every decision, and the compiled and pure builds
equal byte for byte.

How a change is found, block by block: what only grows (finished tricks, declarations,
announcements, round answers) by the count already written; the hand, the trick in progress,
the own discard by comparing the engine's list with a copy of the last one written (a C-level
comparison, nearly free when nothing changed); one-hot entries (whose turn, the phase, the
partner) by the index last written; counts by the value last written.

Plain Python without numpy: mypyc compiles it with the engine (setup.py), in a build that has no
numpy; the arrays are made by functions the caller gives (`spaces.deal_observations`), and written
through their memoryviews.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arena.engine import Action, Card, DealState
from arena.engine.views import known_partner, own_discard, public_contract, visible_talon

from .layout import (
    ANNOUNCE_NAMES,
    CONTRACTS,
    DECLARE_NAMES,
    DESIGNATIONS,
    OFFSETS,
    PHASES,
    POTS,
    SUITS,
    action_index,
)

SEAT: Final = OFFSETS["seat"]
DEALER: Final = OFFSETS["dealer"]
FOREHAND: Final = OFFSETS["forehand"]
TO_ACT: Final = OFFSETS["to_act"]
SITTING_OUT: Final = OFFSETS["sitting_out"]
PHASE: Final = OFFSETS["phase"]
TRICK_NUMBER: Final = OFFSETS["trick_number"]
HAND: Final = OFFSETS["hand"]
OWN_SKAT: Final = OFFSETS["own_skat"]
PLAYED_BY: Final = OFFSETS["played_by"]
TRICK_CARDS: Final = OFFSETS["trick_cards"]
TRICK_LEADER: Final = OFFSETS["trick_leader"]
TRICK_DESIGNATION: Final = OFFSETS["trick_designation"]
TRICK_REDESIGNATION: Final = OFFSETS["trick_redesignation"]
HAND_SIZES: Final = OFFSETS["hand_sizes"]
TRICKS_WON: Final = OFFSETS["tricks_won"]
DECLARED: Final = OFFSETS["declared"]
SHOWN_CARDS: Final = OFFSETS["shown_cards"]
SKAT_PUBLIC_TAROKS: Final = OFFSETS["skat_public_taroks"]
SKAT_PUBLIC_SHOWN: Final = OFFSETS["skat_public_shown"]
ANNOUNCED: Final = OFFSETS["announced"]
ROUND_ANSWERS: Final = OFFSETS["round_answers"]
BIDS: Final = OFFSETS["bids"]
POTS_START: Final = OFFSETS["pots_start"]
CONTRACT: Final = OFFSETS["contract"]
DECLARER: Final = OFFSETS["declarer"]
CALLED: Final = OFFSETS["called"]
PARTNER: Final = OFFSETS["partner"]
TALON: Final = OFFSETS["talon"]
PETIT_SEC: Final = OFFSETS["petit_sec"]

_PHASE_INDEX: Final = {p: i for i, p in enumerate(PHASES)}
_DESIGNATION_INDEX: Final = {d: i for i, d in enumerate(DESIGNATIONS)}
_CONTRACT_INDEX: Final = {c: i for i, c in enumerate(CONTRACTS)}
_ANNOUNCE_INDEX: Final = {n: i for i, n in enumerate(ANNOUNCE_NAMES)}
_DECLARE_INDEX: Final = {n: i for i, n in enumerate(DECLARE_NAMES)}
_SUIT_SLOT: Final = {s: 1 + i for i, s in enumerate(SUITS)}
_ROUND_SLOT: Final = {"redeal": 0, "demand": 1, "pass": 2}
_CARD_INDEX: Final = {f"{c}": int(c) for c in (Card(i) for i in range(78))}
_DECLARE_COUNT: Final = len(DECLARE_NAMES)
_ANNOUNCE_COUNT: Final = len(ANNOUNCE_NAMES)
_CONTRACT_COUNT: Final = len(CONTRACTS)


class SeatTensor:
    """One seat's observation tensor of `state`'s deal, in `row`; `sync()` after the state changed.

    `row` is a flat float32 memoryview of `OBS_SIZE` entries, all zero when given. Each seat's
    tensor catches up by itself, when it is asked for: in a loop that observes only the seat to
    act, a public change is written once per seat that sees it, when that seat is next observed.
    """

    def __init__(self, state: DealState, seat: int, row: memoryview[float]) -> None:
        self.state = state
        self.seat = seat
        self.row = row
        self.seats = state.seats
        self.american = bool(state.variant.contracts)
        self.turn = -1
        self.phase = -1
        self.trick_no = 0
        self.hand: list[Card] = []
        self.sizes = [0] * self.seats
        self.won = [0] * self.seats
        self.skat: list[Card] = []
        self.trick: list[tuple[int, Card]] = []
        self.designation: str | None = None
        self.redesignation: str | None = None
        self.trick_ones: list[int] = []
        self.skat_public: dict[str, object] = {}
        self.skat_shown: list[int] = []
        self.american_ones: list[int] = []
        self.partner = -2  # the partner as the seat knows him (views.known_partner); -2: unknown
        self.tricks = 0
        self.declarations = 0
        self.announcements = 0
        self.answers = 0
        row[SEAT + seat] = 1.0
        row[DEALER + state.dealer] = 1.0
        row[FOREHAND + state.forehand] = 1.0
        if state.sitting_out is not None and state.sitting_out >= 0:
            row[SITTING_OUT + state.sitting_out] = 1.0
        if state.variant.pots is not None:
            for pot, value in state.pots_start.items():
                row[POTS_START + POTS.index(pot)] = value / 100
        self.sync()

    def ones(self, old: list[int], new: list[int]) -> None:
        """A set of entries that are 1: from `old` to `new`, writing only the difference."""
        row = self.row
        # The usual change keeps the start of the list (a trick growing by a card): skip it
        # with integer compares before the quadratic membership tests.
        k = 0
        common = min(len(old), len(new))
        while k < common and old[k] == new[k]:
            k += 1
        if k == len(old):
            for i in range(k, len(new)):
                row[new[i]] = 1.0
            return
        for i in range(k, len(old)):
            if old[i] not in new:
                row[old[i]] = 0.0
        for i in range(k, len(new)):
            if new[i] not in old:
                row[new[i]] = 1.0

    def cards(self, at: int, old: list[Card], new: list[Card]) -> None:
        """A card block (the hand, the own discard): from `old` to `new`, both sorted."""
        row = self.row
        if len(new) + 1 == len(old):  # the usual step: one card left the list, the rest stayed
            k = 0
            while k < len(new) and new[k] is old[k]:  # cards are interned: `is` is a quick `==`
                k += 1
            if new[k:] == old[k + 1 :]:
                row[at + old[k]] = 0.0
                return
        kept = set(new)
        for card in old:
            if card not in kept:
                row[at + card] = 0.0
        for card in new:
            row[at + card] = 1.0

    def sync(self) -> None:
        """Bring the row up to `encode_observation(observation(state, seat))`."""
        state = self.state
        row = self.row
        turn = -1 if state.turn is None else state.turn
        if turn != self.turn:
            if self.turn >= 0:
                row[TO_ACT + self.turn] = 0.0
            if turn >= 0:
                row[TO_ACT + turn] = 1.0
            self.turn = turn
        phase = _PHASE_INDEX[state.phase]
        if phase != self.phase:
            if self.phase >= 0:
                row[PHASE + self.phase] = 0.0
            row[PHASE + phase] = 1.0
            self.phase = phase
        if state.trick_no != self.trick_no:
            self.trick_no = state.trick_no
            row[TRICK_NUMBER] = state.trick_no / 78
        hand = state.hands[self.seat]
        if hand != self.hand:
            self.cards(HAND, self.hand, hand)
            self.hand = list(hand)
        hands = state.hands
        for seat in range(self.seats):
            size = len(hands[seat])
            if size != self.sizes[seat]:
                self.sizes[seat] = size
                row[HAND_SIZES + seat] = size / 78
            won = state.tricks_won[seat]
            if won != self.won[seat]:
                self.won[seat] = won
                row[TRICKS_WON + seat] = won / 78
        skat = own_discard(state, self.seat)  # an empty tuple for another seat: never equal to []
        if skat != self.skat and (skat or self.skat):
            self.cards(OWN_SKAT, self.skat, list(skat))
            self.skat = list(skat)
        trick = state.trick
        if (
            trick != self.trick
            or state.designation != self.designation
            or state.redesignation != self.redesignation
        ):
            self._trick()
        self._grown()
        if state.skat_public is not self.skat_public:
            self._skat_public()
        if self.american:
            self._american()

    def _trick(self) -> None:
        state = self.state
        trick = state.trick
        # The marks first, then the cards in play order: a growing trick extends the list.
        ones: list[int] = []
        if trick:
            ones.append(TRICK_LEADER + trick[0][0])
            if state.designation:
                ones.append(TRICK_DESIGNATION + _DESIGNATION_INDEX[state.designation])
            if state.redesignation:
                ones.append(TRICK_REDESIGNATION + _DESIGNATION_INDEX[state.redesignation])
        for seat, card in trick:
            ones.append(TRICK_CARDS + seat * 78 + card)
        self.ones(self.trick_ones, ones)
        self.trick, self.trick_ones = list(trick), ones
        self.designation, self.redesignation = state.designation, state.redesignation

    def _grown(self) -> None:
        """What only grows: finished tricks, declarations, announcements, round answers."""
        state = self.state
        row = self.row
        tricks = state.tricks
        while self.tricks < len(tricks):
            for seat, card in tricks[self.tricks].plays:
                row[PLAYED_BY + seat * 78 + card] = 1.0
            self.tricks += 1
        declarations = state.declarations
        while self.declarations < len(declarations):
            declaration = declarations[self.declarations]
            combination = declaration.combination
            slot = 0 if combination.suit is None else _SUIT_SLOT[combination.suit]
            k = _DECLARE_INDEX[combination.name]
            row[DECLARED + (declaration.seat * _DECLARE_COUNT + k) * 5 + slot] = 1.0
            for card in combination.shown:
                row[SHOWN_CARDS + card] = 1.0
            self.declarations += 1
        announcements = state.announcements
        while self.announcements < len(announcements):
            announcement = announcements[self.announcements]
            name = _ANNOUNCE_INDEX[announcement.name]
            row[ANNOUNCED + announcement.seat * _ANNOUNCE_COUNT + name] = 1.0
            self.announcements += 1
        answers = state.round_answers
        while self.answers < len(answers):
            kind, seat, said = answers[self.answers]
            if kind != "bid":
                row[ROUND_ANSWERS + seat * 3 + _ROUND_SLOT[said]] = 1.0
            elif said in _CONTRACT_INDEX:
                row[BIDS + seat * _CONTRACT_COUNT + _CONTRACT_INDEX[said]] = 1.0
            self.answers += 1

    def _skat_public(self) -> None:
        """What a Danish discard publishes: its number of taroks, the combination cards in it."""
        published = self.state.skat_public
        self.skat_public = published
        taroks = published.get("taroks", 0)
        assert isinstance(taroks, int)
        self.row[SKAT_PUBLIC_TAROKS] = taroks / 78
        shown = published.get("shown", [])
        assert isinstance(shown, list)
        ones = [SKAT_PUBLIC_SHOWN + _CARD_INDEX[str(code)] for code in shown]
        self.ones(self.skat_shown, ones)
        self.skat_shown = ones

    def _american(self) -> None:
        """The bidding's public facts, the talon while shown, and the partner as the seat knows him."""
        state = self.state
        ones: list[int] = []
        contract, declarer = public_contract(state)
        if contract is not None:
            ones.append(CONTRACT + _CONTRACT_INDEX[contract])
            if declarer is not None and declarer >= 0:
                ones.append(DECLARER + declarer)
        if state.called is not None:
            ones.append(CALLED + state.called)
        talon = visible_talon(state)
        if talon is not None:
            ones += [TALON + card for card in talon]
        if state.petit_sec is not None and state.petit_sec >= 0:
            ones.append(PETIT_SEC + state.petit_sec)
        if ones != self.american_ones:
            self.ones(self.american_ones, ones)
            self.american_ones = ones
        partner = known_partner(state, self.seat)
        slot = -2 if partner is None else partner
        if slot != self.partner:
            if self.partner != -2:
                self.row[PARTNER + self.partner + 1] = 0.0
            if slot != -2:
                self.row[PARTNER + slot + 1] = 1.0
            self.partner = slot


class DealObservations:
    """Every seat's observation tensor of one deal and the mask of the seat to act, as arrays.

    Each seat's tensor is a `SeatTensor` writing into its own row (a float32 array of `OBS_SIZE`
    zeros from `new_row`), brought up to date only when that seat's tensor is asked for and the
    deal moved on since (its history grew). `observation`, `mask` and `observe` return fresh
    arrays (the row's `copy()`, a mask from `new_mask`: int8 zeros of `NUM_ACTIONS`), which the
    caller may keep or change; `row` returns the kept row itself, valid until the deal moves on,
    for a caller that copies it. Compiled, so that a training loop's `last()` makes one call into
    C for the whole observation (docs/RESEARCH.md, "Throughput").
    """

    def __init__(self, state: DealState, new_row: Callable[[], Any], new_mask: Callable[[], Any]) -> None:
        self.state = state
        self.new_mask = new_mask
        self.rows: list[Any] = [new_row() for _ in range(state.seats)]
        self.tensors = [SeatTensor(state, seat, row.data) for seat, row in enumerate(self.rows)]
        self.synced = [len(state.history)] * state.seats

    def row(self, seat: int) -> Any:
        """`encode_observation(observation(state, seat))`, the kept row: not to be changed or kept."""
        moves = len(self.state.history)
        if moves != self.synced[seat]:
            self.tensors[seat].sync()
            self.synced[seat] = moves
        return self.rows[seat]

    def observation(self, seat: int) -> Any:
        """`encode_observation(observation(state, seat))`, a fresh array."""
        return self.row(seat).copy()

    def mask(self, seat: int) -> Any:
        """The legal-action mask of `seat`, a fresh array: all zeros unless it is to act."""
        mask = self.new_mask()
        state = self.state
        if seat == state.turn:
            mark_legal(mask.data, state.legal_actions())
        return mask

    def observe(self, seat: int) -> dict[str, Any]:
        """The environment's observation of `seat`: `{"observation": ..., "action_mask": ...}`."""
        return {"observation": self.row(seat).copy(), "action_mask": self.mask(seat)}


def mark_legal(mask: memoryview, legal: list[Action]) -> None:
    """Set the entries of the `legal` actions' indices to 1 in an int8 `mask`."""
    for action in legal:
        mask[action_index(action)] = 1
