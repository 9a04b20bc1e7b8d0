"""Information sets: what one seat may know, computed once as a typed value.

`seat_view(state, seat)` is the only definition of a seat's information: a `SeatView` holding the
seat's own hand, its own discard if it laid cards away, every card played, and every public fact
(declarations, announcements, round answers, designations, what the discard published) — never
another seat's hand, nor the skat of another seat. `american` adds the contract, the declarer,
the called card, the talon while it is shown (Rufer, Dreier) and the partner — only once the seat
knows who he is (AM-CALL-2).

`observation(state, seat)` is that value rendered as the compact JSON-able dict that bots, replays
and the SDK read (`SeatView.to_dict()`). Readers that work from the state itself for speed (the
referee's wire encoder, the research tensors) ask the small functions below (`own_discard`,
`public_contract`, `visible_talon`, `known_partner`) what a seat may see, so that there is one
answer to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Action
from .cards import Card
from .deal import BID, CALL, Announcement, Declaration, Trick
from .state import DealState
from .variants import find_variant

# The values below are plain slotted dataclasses, never changed once built: a frozen dataclass
# sets each field through object.__setattr__, several times slower to build, and a view is built
# per decision.

__all__ = [
    "CurrentTrick",
    "Outcome",
    "PublicDeclaration",
    "RoundAnswer",
    "SeatView",
    "SkatPublic",
    "known_partner",
    "observation",
    "own_discard",
    "public_contract",
    "seat_view",
    "visible_talon",
]


@dataclass(slots=True)
class PublicDeclaration:
    """What a declaration publishes (DUM-DECL-5, G54-DECL-2, DK-DECL-1, AM-COMB-1).

    Not the cards that form the combination: only those a declaration puts on the table (`shown`).
    """

    seat: int
    name: str
    size: int
    value: int
    suit: str | None
    with_fool: bool | None
    with_pagat: bool | None
    shown: tuple[Card, ...]  # sorted

    @staticmethod
    def of(declaration: Declaration) -> PublicDeclaration:
        c = declaration.combination
        return PublicDeclaration(
            declaration.seat,
            c.name,
            c.size,
            c.value,
            c.suit,
            c.with_fool,
            c.with_pagat,
            tuple(sorted(c.shown)),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "name": self.name, "size": self.size, "value": self.value}
        if self.suit is not None:
            out["suit"] = self.suit
        if self.with_fool is not None:
            out["with_fool"] = self.with_fool
        if self.with_pagat is not None:
            out["with_pagat"] = self.with_pagat
        if self.shown:
            out["cards"] = [str(c) for c in self.shown]
        return out


@dataclass(slots=True)
class RoundAnswer:
    """One answer in a round of the table: a redeal, a demand, a pass or a bid (`round` names it)."""

    round: str
    seat: int
    answer: str


@dataclass(slots=True)
class SkatPublic:
    """What a Danish discard publishes (DK-SKAT-3/4): its number of taroks, the combination cards in it."""

    taroks: int
    shown: tuple[str, ...]  # card codes, as the engine publishes them


@dataclass(slots=True)
class CurrentTrick:
    """The trick in progress, once a card is in it."""

    leader: int
    plays: tuple[tuple[int, Card], ...]
    designation: str | None
    redesignation: str | None


@dataclass(slots=True)
class Outcome:
    """The end of the deal, public to every seat."""

    annulled: bool
    card_points: list[int]
    deltas: list[int]
    pots: dict[str, int]


@dataclass(slots=True)
class SeatView:
    """One seat's information set at one point of a deal, plus its legal actions when it is to act.

    Absent facts are None (or empty): `sitting_out` without a seat out, `pots_start` in a variant
    without pots, `skat` unless the seat laid these cards away itself, `skat_public` before a Danish
    discard, `trick` before the first card of a trick; `american` only: `contract` (a contract's
    name or "trischaken"), `declarer`, `called`, `talon` while shown, `partner` once known (−1:
    the declarer plays alone), `petit_sec`. `result` once the deal is over, `legal_actions` when
    the seat is to act.
    """

    variant: str
    options: Mapping[str, str]
    seat: int
    dealer: int
    forehand: int
    order: tuple[int, ...]
    phase: str
    to_act: int | None
    trick_number: int
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    tricks_won: tuple[int, ...]
    declarations: tuple[PublicDeclaration, ...]
    tricks: tuple[Trick, ...]  # completed tricks: every field of one is public
    sitting_out: int | None
    pots_start: Mapping[str, int] | None
    skat: tuple[Card, ...]
    skat_public: SkatPublic | None
    announcements: tuple[Announcement, ...]
    round_answers: tuple[RoundAnswer, ...]
    american: bool
    petit_sec: int | None
    contract: str | None
    declarer: int | None
    called: Card | None
    talon: tuple[Card, ...] | None
    partner: int | None
    trick: CurrentTrick | None
    result: Outcome | None
    legal_actions: tuple[Action, ...] | None

    def to_dict(self) -> dict[str, Any]:
        """The view as the JSON-able dict of `observation()`: absent facts are absent keys."""
        view: dict[str, Any] = {
            "variant": self.variant,
            "options": dict(self.options),
            "seat": self.seat,
            "dealer": self.dealer,
            "forehand": self.forehand,
            "order": list(self.order),
            "phase": self.phase,
            "to_act": self.to_act,
            "trick_number": self.trick_number,
            "hand": [str(c) for c in self.hand],
            "hand_sizes": list(self.hand_sizes),
            "tricks_won": list(self.tricks_won),
            "declarations": [d.to_dict() for d in self.declarations],
            "tricks": [_trick_dict(t) for t in self.tricks],
        }
        if self.sitting_out is not None:
            view["sitting_out"] = self.sitting_out
        if self.pots_start is not None:
            view["pots_start"] = dict(self.pots_start)
        if self.skat:
            view["skat"] = [str(c) for c in self.skat]
        if self.skat_public is not None:
            view["skat_public"] = {"taroks": self.skat_public.taroks, "shown": list(self.skat_public.shown)}
        if self.announcements:
            view["announcements"] = [
                {"seat": a.seat, "name": a.name, "trick": a.trick} for a in self.announcements
            ]
        if self.round_answers:
            view["round_answers"] = [
                {"round": r.round, "seat": r.seat, "answer": r.answer} for r in self.round_answers
            ]
        if self.american:
            if self.petit_sec is not None:
                view["petit_sec"] = self.petit_sec
            if self.contract is not None:
                view["contract"] = self.contract
            if self.declarer is not None:
                view["declarer"] = self.declarer
            if self.called is not None:
                view["called"] = str(self.called)
            if self.talon is not None:
                view["talon"] = [str(c) for c in self.talon]
            if self.partner is not None:
                view["partner"] = self.partner
        if self.trick is not None:
            current: dict[str, Any] = {
                "leader": self.trick.leader,
                "cards": [[s, str(c)] for s, c in self.trick.plays],
            }
            if self.trick.designation is not None:
                current["designation"] = self.trick.designation
            if self.trick.redesignation is not None:
                current["redesignation"] = self.trick.redesignation
            view["trick"] = current
        if self.result is not None:
            view["result"] = {
                "annulled": self.result.annulled,
                "card_points": self.result.card_points,
                "deltas": self.result.deltas,
                "pots": self.result.pots,
            }
        elif self.legal_actions is not None:
            view["legal_actions"] = [str(a) for a in self.legal_actions]
        return view

    @staticmethod
    def from_dict(view: Mapping[str, Any]) -> SeatView:
        """The view an `observation()` dict renders (its inverse, for a caller that holds the dict).

        A completed trick read back from a dict has no `suit` and no `fool_captured`: the dict
        does not carry them, and no reader of a view needs them.
        """
        trick = view.get("trick")
        result = view.get("result")
        published = view.get("skat_public")
        talon = view.get("talon")
        called = view.get("called")
        legal = view.get("legal_actions")
        return SeatView(
            variant=str(view["variant"]),
            options=dict(view.get("options", {})),
            seat=int(view["seat"]),
            dealer=int(view["dealer"]),
            forehand=int(view["forehand"]),
            order=tuple(int(s) for s in view.get("order", ())),
            phase=str(view["phase"]),
            to_act=view.get("to_act"),
            trick_number=int(view.get("trick_number", 0)),
            hand=tuple(Card.parse(c) for c in view.get("hand", ())),
            hand_sizes=tuple(int(n) for n in view.get("hand_sizes", ())),
            tricks_won=tuple(int(n) for n in view.get("tricks_won", ())),
            declarations=tuple(
                PublicDeclaration(
                    int(d["seat"]),
                    str(d["name"]),
                    int(d["size"]),
                    int(d["value"]),
                    d.get("suit"),
                    d.get("with_fool"),
                    d.get("with_pagat"),
                    tuple(Card.parse(c) for c in d.get("cards", ())),
                )
                for d in view.get("declarations", ())
            ),
            tricks=tuple(
                Trick(
                    int(t["number"]),
                    int(t["leader"]),
                    tuple((int(s), Card.parse(c)) for s, c in t.get("cards", ())),
                    int(t["winner"]),
                    None,
                    t.get("designation"),
                    t.get("redesignation"),
                )
                for t in view.get("tricks", ())
            ),
            sitting_out=view.get("sitting_out"),
            pots_start=dict(view["pots_start"]) if "pots_start" in view else None,
            skat=tuple(Card.parse(c) for c in view.get("skat", ())),
            skat_public=SkatPublic(int(published["taroks"]), tuple(published["shown"]))
            if published
            else None,
            announcements=tuple(
                Announcement(int(a["seat"]), str(a["name"]), int(a["trick"]))
                for a in view.get("announcements", ())
            ),
            round_answers=tuple(
                RoundAnswer(str(r["round"]), int(r["seat"]), str(r["answer"]))
                for r in view.get("round_answers", ())
            ),
            american=bool(find_variant(str(view["variant"]), view.get("options")).contracts),
            petit_sec=view.get("petit_sec"),
            contract=view.get("contract"),
            declarer=view.get("declarer"),
            called=Card.parse(called) if called is not None else None,
            talon=tuple(Card.parse(c) for c in talon) if talon is not None else None,
            partner=view.get("partner"),
            trick=CurrentTrick(
                int(trick["leader"]),
                tuple((int(s), Card.parse(c)) for s, c in trick.get("cards", ())),
                trick.get("designation"),
                trick.get("redesignation"),
            )
            if trick
            else None,
            result=Outcome(
                bool(result["annulled"]),
                list(result["card_points"]),
                list(result["deltas"]),
                dict(result["pots"]),
            )
            if result is not None
            else None,
            legal_actions=tuple(Action.parse(a) for a in legal) if legal is not None else None,
        )


def _trick_dict(trick: Trick) -> dict[str, Any]:
    out: dict[str, Any] = {
        "number": trick.number,
        "leader": trick.leader,
        "cards": [[seat, str(card)] for seat, card in trick.plays],
        "winner": trick.winner,
    }
    if trick.designation is not None:
        out["designation"] = trick.designation
    if trick.redesignation is not None:
        out["redesignation"] = trick.redesignation
    return out


def seat_view(state: DealState, seat: int) -> SeatView:
    """The information set of `seat` now, plus its legal actions when it is to act."""
    if not 0 <= seat < state.seats:
        raise ValueError(f"seat {seat} is not at this table")
    v = state.variant
    american = bool(v.contracts)
    contract, declarer = public_contract(state) if american else (None, None)
    talon = visible_talon(state) if american else None
    published = state.skat_public
    skat_public = None
    if published:
        taroks, shown = published["taroks"], published["shown"]
        assert isinstance(taroks, int) and isinstance(shown, list)
        skat_public = SkatPublic(taroks, tuple(shown))
    current = None
    if state.trick:
        current = CurrentTrick(state.trick[0][0], tuple(state.trick), state.designation, state.redesignation)
    result = None
    legal = None
    if state.is_terminal():
        r = state.result()
        result = Outcome(r.annulled, r.card_points, r.deltas, r.pots)
    elif state.turn == seat:
        legal = tuple(state.legal_actions())
    return SeatView(
        variant=v.name,
        options=v.options,
        seat=seat,
        dealer=state.dealer,
        forehand=state.forehand,
        order=tuple(state.order),
        phase=state.phase,
        to_act=state.turn,
        trick_number=state.trick_no,
        hand=tuple(state.hands[seat]),
        hand_sizes=tuple([len(h) for h in state.hands]),
        tricks_won=tuple(state.tricks_won),
        declarations=tuple([PublicDeclaration.of(d) for d in state.declarations]),
        tricks=tuple(state.tricks),
        sitting_out=state.sitting_out,
        pots_start=dict(state.pots_start) if v.pots is not None else None,
        skat=tuple(own_discard(state, seat)),
        skat_public=skat_public,
        announcements=tuple(state.announcements),
        round_answers=tuple([RoundAnswer(r, s, a) for r, s, a in state.round_answers]),
        american=american,
        petit_sec=state.petit_sec if american else None,
        contract=contract,
        declarer=declarer,
        called=state.called if american else None,
        talon=tuple(talon) if talon is not None else None,
        partner=known_partner(state, seat) if american else None,
        trick=current,
        result=result,
        legal_actions=legal,
    )


def observation(state: DealState, seat: int) -> dict[str, Any]:
    """The view of `seat` as a JSON-able dict: `seat_view(state, seat).to_dict()`."""
    return seat_view(state, seat).to_dict()


# --------------------------------------------------------------------------- what a seat may see


def own_discard(state: DealState, seat: int) -> Sequence[Card]:
    """The cards `seat` laid away itself, in the order laid; empty for every other seat."""
    return state.skat if seat == state.discarder else ()


def public_contract(state: DealState) -> tuple[str | None, int | None]:
    """The contract's name ("trischaken" when all passed) and its declarer, once the bidding is over."""
    if state.trischaken:
        return "trischaken", None
    if state.contract is not None and state.phase != BID:
        return state.contract.name, state.declarer
    return None, None


def visible_talon(state: DealState) -> Sequence[Card] | None:
    """The talon while it is shown to all (AM-TAL-1), else None."""
    return state.talon if state.talon_visible else None


def known_partner(state: DealState, seat: int) -> int | None:
    """The declarer's partner as `seat` knows him: a seat, −1 for "plays alone", None while unknown.

    AM-CALL-2: public once the called card is played, shown in a combination or seen in the
    talon, and at the end of the deal; before that only its holder at the call knows (the partner,
    or a declarer who called his own card).  Dreier and Solodreier have no partner from the start.
    """
    contract = state.contract
    if contract is None or state.phase in (BID, CALL):
        return None
    partner = -1 if state.partner is None else state.partner
    if not contract.calls or state.is_terminal() or state.called_public or seat == state.called_holder:
        return partner
    called = state.called
    if any(card == called for trick in state.tricks for _s, card in trick.plays) or any(
        card == called for _s, card in state.trick
    ):
        return partner
    return None
