"""A deal rebuilt from a seat's view: the deck that deals given hands, and the public history replayed.

`Sampler` (sampler.py) places the hidden cards; this module turns a placement into a `DealState`
at the view's point of the deal, through the engine, which checks every action on the way, and
says what of a view a rebuilt deal must reproduce (`public`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine import CARDS, Action, Card, DealState, Variant


def parse_card(code: str) -> Card:
    return Card.parse(code)


def public(view: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a view that a sample must reproduce, in one form whatever built the view."""
    trick = view.get("trick") or None
    current = None
    if trick and trick.get("cards"):
        current = (
            tuple((int(s), str(c)) for s, c in trick["cards"]),
            trick.get("designation") or None,
            trick.get("redesignation") or None,
        )
    return {
        "phase": view["phase"],
        "to_act": view.get("to_act"),
        "trick_number": int(view.get("trick_number", 0)),
        "hand": sorted(str(c) for c in view.get("hand", ())),
        "hand_sizes": [int(n) for n in view.get("hand_sizes", ())],
        "tricks_won": [int(n) for n in view.get("tricks_won", ())],
        "declarations": [dict(d) for d in view.get("declarations", ())],
        "tricks": [
            (
                int(t["number"]),
                int(t["leader"]),
                tuple((int(s), str(c)) for s, c in t["cards"]),
                int(t["winner"]),
                t.get("designation") or None,
                t.get("redesignation") or None,
            )
            for t in view.get("tricks", ())
        ],
        "trick": current,
        "skat": sorted(str(c) for c in view.get("skat", ())),
        "skat_public": dict(view.get("skat_public") or {}) or None,
        "announcements": [dict(a) for a in view.get("announcements", ())],
        "round_answers": [dict(r) for r in view.get("round_answers", ())],
        "contract": view.get("contract"),
        "declarer": view.get("declarer"),
        "called": view.get("called"),
        "talon": sorted(str(c) for c in view.get("talon", ())),
        "partner": view.get("partner"),
        "petit_sec": view.get("petit_sec"),
        "legal_actions": sorted(view.get("legal_actions", ())),
    }


_POSITIONS: dict[tuple[str, int], tuple[dict[int, list[int]], list[int]]] = {}


def deck_of(v: Variant, dealer: int, holdings: Mapping[int, list[Card]], talon: Sequence[Card]) -> list[Card]:
    """A deck that deals `holdings` (seat → its cards as dealt) and `talon`."""
    key = (v.name, dealer)
    positions = _POSITIONS.get(key)
    if positions is None:
        # Deal the unshuffled deck: card i lies at position i, so the hands are the positions.
        probe = DealState(v, dealer, list(CARDS))
        hands = {s: [int(c) for c in probe.hands[s]] for s in range(v.seats)}
        positions = (hands, [int(c) for c in probe.talon])
        _POSITIONS[key] = positions
    seats, talon_positions = positions
    deck: list[Card] = [CARDS[0]] * 78
    for s, where in seats.items():
        cards = holdings[s]
        if len(cards) != len(where):
            raise Mismatch(f"seat {s} holds {len(cards)} cards, dealt {len(where)}")
        for p, c in zip(where, cards, strict=True):
            deck[p] = c
    if len(talon) != len(talon_positions):
        raise Mismatch("talon size")
    for p, c in zip(talon_positions, talon, strict=True):
        deck[p] = c
    return deck


class Mismatch(Exception):
    """The candidate cannot replay the view's history."""


def replay(state: DealState, view: Mapping[str, Any], discards: Sequence[Card]) -> None:
    """Apply the public history of `view` to a freshly dealt `state`, up to the view's point."""
    answers = list(view.get("round_answers", ()))
    declarations = [d for d in view.get("declarations", ())]
    compulsory = state.variant.declarations == "compulsory"
    announcements = list(view.get("announcements", ()))
    plays: list[Action] = []
    for trick in [*view.get("tricks", ()), *([view["trick"]] if view.get("trick") else [])]:
        for i, (_s, code) in enumerate(trick["cards"]):
            suit = None
            if i == 0 and trick.get("designation"):
                suit = trick["designation"]
            elif i == 1 and trick.get("redesignation"):
                suit = trick["redesignation"]
            plays.append(Action("play", parse_card(code), suit))
    called = view.get("called")
    discard_i = answer_i = play_i = 0
    decl_done: set[int] = set()
    ann_done: set[int] = set()
    target = (view["phase"], view.get("to_act"), int(view.get("trick_number", 0)))
    pending_plays = len(plays)
    limit = 2000
    while not state.is_terminal():
        limit -= 1
        if limit < 0:
            raise Mismatch("history does not converge")
        phase, seat = state.phase, state.turn
        done = (
            answer_i == len(answers)
            and play_i == pending_plays
            and discard_i >= len(discards)
            and len(decl_done) == (0 if compulsory else len(declarations))
            and len(ann_done) == len(announcements)
        )
        if done and (phase, seat, state.trick_no) == target:
            return
        action: Action
        if phase in ("redeal", "demand", "bid"):
            if answer_i >= len(answers):
                raise Mismatch("a round answer is missing")
            a = answers[answer_i]
            if a["round"] != phase or int(a["seat"]) != seat:
                raise Mismatch("round answers out of order")
            answer_i += 1
            text = a["answer"]
            action = Action("bid", name=text) if phase == "bid" and text != "pass" else Action(text)
        elif phase == "call":
            if called is None:
                raise Mismatch("no call")
            action = Action("call", parse_card(called))
        elif phase == "discard":
            if discard_i >= len(discards):
                raise Mismatch("discard ahead of the view")
            action = Action("discard", discards[discard_i])
            discard_i += 1
        elif phase in ("declare", "announce"):
            action = Action("pass")
            if phase == "announce":
                trick_no = max(1, state.trick_no)  # `american` announces before trick 1, as trick 1
                for i, a in enumerate(announcements):
                    if i not in ann_done and int(a["seat"]) == seat and int(a["trick"]) == trick_no:
                        ann_done.add(i)
                        action = Action("announce", name=a["name"])
                        break
            if action.type == "pass" and (phase == "declare" or state.variant.contracts):
                for i, d in enumerate(declarations):
                    if i not in decl_done and int(d["seat"]) == seat:
                        decl_done.add(i)
                        action = Action("declare", None, d.get("suit"), d["name"])
                        break
        elif phase == "play":
            if play_i >= pending_plays:
                raise Mismatch("play ahead of the view")
            action = plays[play_i]
            play_i += 1
        else:
            raise Mismatch(f"unknown phase {phase}")
        state.apply(action)
    if not (view["phase"] == "end" or view.get("result")):
        raise Mismatch("the deal ended before the view's point")
