"""arena/protocol.py: engine actions and views ↔ wire messages (proto/arena/v1/arena.proto)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from engine_digest import option_sets
from support import new_deal

from arena.engine import Action, ActionError, DealState, deck_for, find_variant, observation
from arena.engine.views import SeatView, seat_view
from arena.protocol import (
    ViewEncoder,
    action_from_message,
    action_message,
    action_taken_event,
    event_batch_message,
    legal_messages,
    request_message,
    trick_completed_event,
    view_message,
)
from arena.v1 import arena_pb2 as pb

ACTIONS = [
    "play SK",
    "play T21",
    "play EX",
    "play EX S",
    "play EX T",
    "play H7 D",
    "discard H5",
    "declare taroks",
    "declare cavallerie S",
    "declare half_cavalry C",
    "announce vole",
    "announce nolo",
    "pass",
    "redeal",
    "demand",
    "bid rufer",
    "call HK",
]


@pytest.mark.parametrize("text", ACTIONS)
def test_action_round_trip(text: str) -> None:
    action = Action.parse(text)
    message = action_message(action)
    assert message.type == action.type
    assert message.card == (str(action.card) if action.card is not None else "")
    assert message.suit == (action.suit or "")
    assert message.name == (action.name or "")
    back = action_from_message(message)
    assert back == action and str(back) == text
    # Through the wire bytes as well.
    assert action_from_message(pb.Action.FromString(message.SerializeToString())) == action


def test_every_action_type_is_covered() -> None:
    from arena.engine.actions import ACTION_TYPES

    assert {Action.parse(t).type for t in ACTIONS} == set(ACTION_TYPES)


def test_card_codes_are_read_like_the_engine_reads_them() -> None:
    assert action_from_message(pb.Action(type="play", card="sk")) == Action.parse("play SK")


@pytest.mark.parametrize(
    "fields",
    [
        {},  # no type
        {"type": "jump"},
        {"type": "PLAY", "card": "SK"},
        {"type": "play"},  # missing card
        {"type": "play", "card": "ZZ"},
        {"type": "play", "card": "T22"},
        {"type": "play", "card": "S11"},
        {"type": "play", "card": "EX", "suit": "X"},
        {"type": "play", "card": "EX", "suit": "spades"},
        {"type": "play", "card": "SK", "name": "vole"},
        {"type": "discard"},
        {"type": "call"},
        {"type": "declare"},  # missing name
        {"type": "declare", "card": "SK", "name": "kings"},
        {"type": "announce"},
        {"type": "bid"},
        {"type": "pass", "card": "SK"},
        {"type": "pass", "name": "vole"},
        {"type": "pass", "suit": "S"},
        {"type": "redeal", "suit": "H"},
        {"type": "announce", "name": "vole", "suit": "S"},
        {"type": "discard", "card": "H5", "suit": "H"},
    ],
)
def test_malformed_action_messages_raise_action_error(fields: dict[str, str]) -> None:
    with pytest.raises(ActionError):
        action_from_message(pb.Action(**fields))


def test_a_message_of_another_type_is_malformed() -> None:
    with pytest.raises(ActionError):
        action_from_message(pb.Hello(bot_name="x"))  # type: ignore[arg-type]


def test_legal_messages_takes_actions_and_their_text_forms() -> None:
    actions = [Action.parse(t) for t in ("play SK", "play EX D", "pass")]
    expected = [
        pb.Action(type="play", card="SK"),
        pb.Action(type="play", card="EX", suit="D"),
        pb.Action(type="pass"),
    ]
    assert legal_messages(actions) == expected
    assert legal_messages([str(a) for a in actions]) == expected
    assert legal_messages([]) == []


# --------------------------------------------------------------------------- views


def view_dict(m: pb.View) -> dict[str, Any]:
    """Read a View message back into the shape of `observation()` (without legal actions, result)."""
    out: dict[str, Any] = {
        "variant": m.variant,
        "options": dict(m.options),
        "seat": m.seat,
        "dealer": m.dealer,
        "forehand": m.forehand,
        "order": list(m.order),
        "phase": m.phase,
        "to_act": None if m.to_act == -1 else m.to_act,
        "trick_number": m.trick_number,
        "hand": list(m.hand),
        "hand_sizes": list(m.hand_sizes),
        "tricks_won": list(m.tricks_won),
        "declarations": [],
        "tricks": [],
    }
    for d in m.declarations:
        decl: dict[str, Any] = {"seat": d.seat, "name": d.name, "size": d.size, "value": d.value}
        if d.suit:
            decl["suit"] = d.suit
        if d.HasField("with_fool"):
            decl["with_fool"] = d.with_fool
        if d.HasField("with_pagat"):
            decl["with_pagat"] = d.with_pagat
        out["declarations"].append(decl)

    def trick(t: pb.Trick) -> dict[str, Any]:
        data: dict[str, Any] = {"leader": t.leader, "cards": [[p.seat, p.card] for p in t.cards]}
        if t.designation:
            data["designation"] = t.designation
        if t.redesignation:
            data["redesignation"] = t.redesignation
        return data

    for t in m.tricks:
        assert t.winner >= 0
        out["tricks"].append({"number": t.number, **trick(t), "winner": t.winner})
    assert m.trick.winner == -1 and m.trick.number == m.trick_number  # the trick in progress
    if m.trick.cards:
        out["trick"] = trick(m.trick)
    if m.sitting_out != -1:
        out["sitting_out"] = m.sitting_out
    if m.pots_start:
        out["pots_start"] = dict(m.pots_start)
    if m.skat:
        out["skat"] = list(m.skat)
    if m.HasField("skat_public"):
        out["skat_public"] = {"taroks": m.skat_public.taroks, "shown": list(m.skat_public.shown)}
    if m.announcements:
        out["announcements"] = [{"seat": a.seat, "name": a.name, "trick": a.trick} for a in m.announcements]
    if m.round_answers:
        out["round_answers"] = [
            {"round": r.round, "seat": r.seat, "answer": r.answer} for r in m.round_answers
        ]
    return out


def cards_in_view(view: dict[str, Any]) -> Counter[str]:
    found: Counter[str] = Counter(view["hand"])
    for t in view["tricks"]:
        found.update(card for _, card in t["cards"])
    found.update(card for _, card in view.get("trick", {}).get("cards", ()))
    found.update(view.get("skat", ()))
    found.update(view.get("skat_public", {}).get("shown", ()))
    return found


def cards_in_message(m: pb.View) -> Counter[str]:
    found: Counter[str] = Counter(m.hand)
    for t in m.tricks:
        found.update(p.card for p in t.cards)
    found.update(p.card for p in m.trick.cards)
    found.update(m.skat)
    found.update(m.skat_public.shown)
    return found


def check_views(state: DealState) -> None:
    """Every seat's View message says exactly what its observation says, and no hidden card."""
    played = {str(c) for t in state.tricks for _, c in t.plays} | {str(c) for _, c in state.trick}
    for seat in range(state.seats):
        view = observation(state, seat)
        message = view_message(view)
        wire = pb.View.FromString(message.SerializeToString())
        expected = {k: v for k, v in view.items() if k not in ("legal_actions", "result")}
        assert view_dict(wire) == expected
        assert cards_in_message(wire) == cards_in_view(view)
        assert list(wire.hand) == [str(c) for c in state.hands[seat]]
        if seat == state.dealer:
            assert list(wire.skat) == [str(c) for c in state.skat]
        else:
            assert not wire.skat
        hidden = {str(c) for other in range(state.seats) if other != seat for c in state.hands[other]}
        if seat != state.dealer:
            hidden |= {str(c) for c in state.skat} - set(view.get("skat_public", {}).get("shown", ()))
        assert not (set(cards_in_message(wire)) & (hidden - played))


CONFIGS = [
    ("grosstarock", {}),
    ("german-1754", {}),
    ("german-1754", {"players": "4"}),
    ("danish", {}),
    ("danish-pots", {}),
    ("danish-pots", {"red_pips": "straight", "counting": "p001"}),
]


@pytest.mark.parametrize(("name", "options"), CONFIGS)
def test_view_messages_of_random_deals_carry_exactly_the_view(name: str, options: dict[str, str]) -> None:
    variant = find_variant(name, options)
    for deal in range(3):
        rng = random.Random(f"{name}:{deal}")
        pots = {pot: 60 for pot in variant.pot_names}
        state = DealState(variant, deal % variant.seats, deck_for(11, deal), pots=pots)
        check_views(state)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            check_views(state)
        final = view_message(observation(state, state.order[0]))
        assert final.to_act == -1 and final.phase == "end"
        assert final.sitting_out == (-1 if variant.seats == 3 else state.sitting_out)


def test_a_four_seat_view_names_the_seat_out() -> None:
    variant = find_variant("german-1754", {"players": "4"})
    state = DealState(variant, 1, deck_for(3, 0))
    message = view_message(observation(state, 3))  # seat 3 = dealer + 2 sits out
    assert message.sitting_out == 3 and not message.hand and list(message.hand_sizes)[3] == 0
    assert view_message(observation(state, 0)).sitting_out == 3


def test_taroks_flags_are_sent_only_where_published() -> None:
    # grosstarock (DUM-DECL-4): both flags. Seat 1 is forehand (clockwise).
    taroks = ["T1", *[f"T{n}" for n in range(5, 14)], "EX"]
    state = new_deal("grosstarock", {1: taroks}, dealer=0)
    while state.phase == "discard":
        state.apply(state.legal_actions()[0])
    while state.phase == "declare":
        options = state.legal_actions()
        chosen = next((a for a in options if state.turn == 1 and a.name == "taroks"), Action("pass"))
        state.apply(chosen)
    (decl,) = view_message(observation(state, 2)).declarations
    assert (decl.seat, decl.name, decl.size) == (1, "taroks", 11)
    assert decl.HasField("with_fool") and decl.with_fool
    assert decl.HasField("with_pagat") and decl.with_pagat

    # danish (DK-DECL-1): with or without the Pagat only.
    pips = [f"S{n}" for n in range(2, 11)] + [f"H{n}" for n in range(2, 7)]
    state = new_deal("danish", {1: [f"T{n}" for n in range(2, 13)] + pips}, dealer=0)
    while state.phase in ("redeal", "discard"):
        state.apply(next((a for a in state.legal_actions() if a.type == "pass"), state.legal_actions()[0]))
    decls = [d for d in view_message(observation(state, 0)).declarations if d.name == "taroks"]
    assert decls and not decls[0].HasField("with_fool")
    assert decls[0].HasField("with_pagat") and not decls[0].with_pagat

    # Other declarations carry no flag.
    state = new_deal("grosstarock", {1: ["SK", "SQ", "SC", "SJ"]}, dealer=0)
    while state.phase == "discard":
        state.apply(state.legal_actions()[0])
    state.apply(Action("pass"))
    state.apply(Action.parse("declare cavallerie S"))
    (decl,) = view_message(observation(state, 1)).declarations
    assert decl.suit == "S" and not decl.HasField("with_fool") and not decl.HasField("with_pagat")


def test_designations_and_the_empty_trick_in_progress() -> None:
    variant = find_variant("danish")
    rng = random.Random(5)
    seen_designation = False
    for deal in range(40):
        state = DealState(variant, 0, deck_for(5, deal), pots={"king": 60, "pagat": 60})
        while not state.is_terminal():
            actions = state.legal_actions()
            led_fool = [a for a in actions if a.card is not None and str(a.card) == "EX" and a.suit]
            action = led_fool[0] if led_fool and not state.trick else rng.choice(actions)
            if state.phase == "redeal":
                action = Action("pass")
            state.apply(action)
            if len(state.trick) == 1 and state.designation:
                seen_designation = True
                message = view_message(observation(state, state.turn))
                assert message.trick.designation == state.designation
                assert message.trick.leader == state.trick[0][0]
                check_views(state)
            if state.phase == "play" and not state.trick:
                message = view_message(observation(state, 0))
                assert not message.trick.cards and message.trick.winner == -1
                assert message.trick.leader == state.turn
        if seen_designation:
            break
    assert seen_designation


def test_a_view_and_its_dict_give_the_same_message() -> None:
    """`view_message` of an `observation()` dict reads it back into the `SeatView` it renders."""
    rng = random.Random(11)
    for name in ("grosstarock", "danish", "american"):
        variant = find_variant(name)
        state = DealState(variant, 0, deck_for(11, 0), pots={pot: 60 for pot in variant.pot_names})
        while True:
            for seat in range(variant.seats):
                view = seat_view(state, seat)
                data = view.to_dict()
                assert data == observation(state, seat)
                assert SeatView.from_dict(data).to_dict() == data
                assert view_message(data) == view_message(view)
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))


# --------------------------------------------------------------------------- wire bytes of the referee


def same_message(data: bytes, expected: Any) -> None:
    """`data` parses to `expected`: every field, presence included, and the same size."""
    parsed = type(expected).FromString(data)
    assert parsed == expected
    assert parsed.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    assert len(data) == expected.ByteSize()


@pytest.mark.parametrize(("name", "options"), list(option_sets()))
def test_encoded_views_are_the_view_messages(name: str, options: dict[str, str]) -> None:
    """ViewEncoder gives every seat, at every step, exactly view_message(seat_view(...)).

    Every variant with every combination of its options (engine_digest.option_sets).
    """
    variant = find_variant(name, options)
    for deal in range(4):
        rng = random.Random(f"encoder:{name}:{deal}")
        pots = {pot: 60 for pot in variant.pot_names}
        state = DealState(variant, deal % variant.seats, deck_for(deal + 5, deal), pots=pots)
        encoder = ViewEncoder(state)
        while True:
            for seat in range(state.seats):
                same_message(encoder.view(seat), view_message(seat_view(state, seat)))
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
    with pytest.raises(ValueError):
        encoder.view(state.seats)


def test_encoded_american_views_reach_every_contract_and_the_partner() -> None:
    """Enough american deals that calls, talons, Trischaken and a known partner all occur."""
    variant = find_variant("american")
    seen: set[str] = set()
    for deal in range(40):
        rng = random.Random(f"american:{deal}")
        state = DealState(variant, deal % 4, deck_for(21, deal))
        encoder = ViewEncoder(state)
        while not state.is_terminal():
            actions = state.legal_actions()
            bids = [a for a in actions if a.type == "bid"]
            if bids and deal % 4 == 0:  # everybody passes: Trischaken
                action = Action("pass")
            else:
                action = rng.choice(bids) if bids and rng.random() < 0.5 else rng.choice(actions)
            state.apply(action)
            for seat in range(state.seats):
                expected = view_message(seat_view(state, seat))
                same_message(encoder.view(seat), expected)
                seen.add(expected.contract or "none")
                if expected.HasField("partner"):
                    seen.add("partner")
                if expected.talon:
                    seen.add("talon")
    assert {"partner", "talon", "trischaken"} <= seen


def test_the_wire_helpers_write_what_protobuf_writes() -> None:
    """Varints of every length, negative int32s, empty and nested messages."""
    view = pb.View(to_act=-1, trick_number=300, declarer=-5, seat=127, dealer=128)
    deal = 70_000
    action = Action.parse("play EX S")
    same_message(
        action_taken_event(deal, 2, action),
        pb.Event(deal=deal, action_taken=pb.ActionTaken(seat=2, action=action_message(action))),
    )
    same_message(
        trick_completed_event(3, 25, 0),
        pb.Event(deal=3, trick_completed=pb.TrickCompleted(number=25, winner=0)),
    )
    events = [trick_completed_event(0, 1, 2), action_taken_event(0, 0, Action("pass"))]
    same_message(
        event_batch_message(events),
        pb.ServerMessage(events=pb.EventBatch(events=[pb.Event.FromString(e) for e in events])),
    )
    legal = [Action.parse(t) for t in ("play SK", "play EX D", "pass", "declare cavallerie S")]
    same_message(
        request_message(2**40, 7, view.SerializeToString(), legal, 70_000, 0, events),
        pb.ServerMessage(
            request=pb.DecisionRequest(
                request_id=2**40,
                deal=7,
                view=view,
                legal_actions=legal_messages(legal),
                time_limit_ms=70_000,
                bank_ms=0,
                events=[pb.Event.FromString(e) for e in events],
            )
        ),
    )
    # An empty request still carries its (empty) view.
    assert pb.ServerMessage.FromString(request_message(0, 0, b"", [], 0, 0, [])).request.HasField("view")
