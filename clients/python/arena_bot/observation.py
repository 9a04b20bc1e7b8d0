"""A protocol `View` as the observation dict the server built it from.

The server encodes `arena.engine.observation(state, seat)` into the `View` it sends
(arena/protocol.py); `view_observation` is the way back, key for key, so that code written
against the engine's information sets (the search layer, the research environments) can be fed
what a seat receives over the wire and nothing else. A test checks the two are equal at every
decision of every variant (tests/search/test_search_bot.py).
"""

from __future__ import annotations

from typing import Any

from arena_bot.match import action_text
from arena_bot.v1 import arena_pb2


def view_observation(view: arena_pb2.View) -> dict[str, Any]:
    """The observation dict (`arena.engine.observation`'s keys) of a protocol `View`."""
    out: dict[str, Any] = {
        "variant": view.variant,
        "options": dict(view.options),
        "seat": view.seat,
        "dealer": view.dealer,
        "forehand": view.forehand,
        "order": list(view.order),
        "phase": view.phase,
        "to_act": view.to_act if view.to_act >= 0 else None,
        "trick_number": view.trick_number,
        "hand": list(view.hand),
        "hand_sizes": list(view.hand_sizes),
        "tricks_won": list(view.tricks_won),
        "declarations": [_declaration(d) for d in view.declarations],
        "tricks": [_trick(t, completed=True) for t in view.tricks],
    }
    if view.sitting_out >= 0:
        out["sitting_out"] = view.sitting_out
    if view.pots_start:
        out["pots_start"] = dict(view.pots_start)
    if view.skat:
        out["skat"] = list(view.skat)
    if view.HasField("skat_public"):
        out["skat_public"] = {"taroks": view.skat_public.taroks, "shown": list(view.skat_public.shown)}
    if view.announcements:
        out["announcements"] = [
            {"seat": a.seat, "name": a.name, "trick": a.trick} for a in view.announcements
        ]
    if view.round_answers:
        out["round_answers"] = [
            {"round": r.round, "seat": r.seat, "answer": r.answer} for r in view.round_answers
        ]
    if view.petit_sec >= 0:
        out["petit_sec"] = view.petit_sec
    if view.contract:
        out["contract"] = view.contract
        if view.declarer >= 0:
            out["declarer"] = view.declarer
    if view.called:
        out["called"] = view.called
    if view.talon:
        out["talon"] = list(view.talon)
    if view.HasField("partner"):
        out["partner"] = view.partner
    if view.trick.cards:
        out["trick"] = _trick(view.trick, completed=False)
    return out


def request_observation(request: arena_pb2.DecisionRequest) -> dict[str, Any]:
    """`view_observation` of a decision request, with its legal actions as the engine writes them."""
    out = view_observation(request.view)
    out["legal_actions"] = [action_text(a) for a in request.legal_actions]
    return out


def _declaration(d: arena_pb2.Declaration) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": d.seat, "name": d.name, "size": d.size, "value": d.value}
    if d.suit:
        out["suit"] = d.suit
    if d.HasField("with_fool"):
        out["with_fool"] = d.with_fool
    if d.HasField("with_pagat"):
        out["with_pagat"] = d.with_pagat
    if d.cards:
        out["cards"] = list(d.cards)
    return out


def _trick(t: arena_pb2.Trick, completed: bool) -> dict[str, Any]:
    """A completed trick carries its number and winner; the trick in progress does not."""
    out: dict[str, Any] = {"leader": t.leader, "cards": [[p.seat, p.card] for p in t.cards]}
    if completed:
        out = {"number": t.number, **out, "winner": t.winner}
    if t.designation:
        out["designation"] = t.designation
    if t.redesignation:
        out["redesignation"] = t.redesignation
    return out
