"""Information sets: what one seat may know, as a compact JSON-able dict.

`observation(state, seat)` is the only path from a deal's state to a player:
the server sends exactly this.  It holds the seat's own hand, its own discard if
it laid cards away, every card played, and every public fact (declarations,
announcements, round answers, designations, what the discard published) — never
another seat's hand, nor the skat of another seat.

`american` adds the contract, the declarer, the called card, the talon while it is
shown (Rufer, Dreier) and the partner — only once the seat knows who he is (AM-CALL-2).
"""

from __future__ import annotations

from typing import Any

from .deal import BID, CALL, Trick
from .state import DealState


def _trick(trick: Trick) -> dict[str, Any]:
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


def observation(state: DealState, seat: int) -> dict[str, Any]:
    """The view of `seat`: its information set, plus its legal actions when it is to act."""
    if not 0 <= seat < state.seats:
        raise ValueError(f"seat {seat} is not at this table")
    v = state.variant
    view: dict[str, Any] = {
        "variant": v.name,
        "options": dict(v.options),
        "seat": seat,
        "dealer": state.dealer,
        "forehand": state.forehand,
        "order": list(state.order),
        "phase": state.phase,
        "to_act": state.turn,
        "trick_number": state.trick_no,
        "hand": [str(c) for c in state.hands[seat]],
        "hand_sizes": [len(h) for h in state.hands],
        "tricks_won": list(state.tricks_won),
        "declarations": [d.public() for d in state.declarations],
        "tricks": [_trick(t) for t in state.tricks],
    }
    if state.sitting_out is not None:
        view["sitting_out"] = state.sitting_out
    if v.pots is not None:
        view["pots_start"] = dict(state.pots_start)
    if seat == state.discarder and state.skat:
        view["skat"] = [str(c) for c in state.skat]  # his own discard
    if state.skat_public:
        view["skat_public"] = state.skat_public
    if state.announcements:
        view["announcements"] = [
            {"seat": a.seat, "name": a.name, "trick": a.trick} for a in state.announcements
        ]
    if state.round_answers:
        view["round_answers"] = [{"round": r, "seat": s, "answer": a} for r, s, a in state.round_answers]
    if v.contracts:
        _american(state, seat, view)
    if state.trick:
        current: dict[str, Any] = {
            "leader": state.trick[0][0],
            "cards": [[s, str(c)] for s, c in state.trick],
        }
        if state.designation is not None:
            current["designation"] = state.designation
        if state.redesignation is not None:
            current["redesignation"] = state.redesignation
        view["trick"] = current
    if state.is_terminal():
        result = state.result()
        view["result"] = {
            "annulled": result.annulled,
            "card_points": result.card_points,
            "deltas": result.deltas,
            "pots": result.pots,
        }
    elif state.turn == seat:
        view["legal_actions"] = [str(a) for a in state.legal_actions()]
    return view


def _american(state: DealState, seat: int, view: dict[str, Any]) -> None:
    """The public facts of the bidding and the talon, and what `seat` knows of the partnership."""
    if state.petit_sec is not None:
        view["petit_sec"] = state.petit_sec  # AM-DEAL-2: declared to the table
    if state.trischaken:
        view["contract"] = "trischaken"
    elif state.contract is not None and state.phase != BID:
        view["contract"] = state.contract.name
        view["declarer"] = state.declarer
    if state.called is not None:
        view["called"] = str(state.called)
    if state.talon_visible:
        view["talon"] = [str(c) for c in state.talon]  # AM-TAL-1: shown to all
    partner = known_partner(state, seat)
    if partner is not None:
        view["partner"] = partner


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
