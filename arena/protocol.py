"""Pure conversions between engine data and the wire messages of `arena.v1` (proto/arena/v1/arena.proto).

No I/O and no state: the server builds its messages with these functions.

* `view_message(view)`: an `observation(state, seat)` dict → `View`. Absent values get the
  wire's "absent" marks: `to_act` −1 when the deal is over, `sitting_out` −1 without a seat out,
  `trick.winner` −1 for the trick in progress; the optional Taroks flags only when published;
  american: `declarer` and `petit_sec` −1 when there is none, `partner` only when the seat knows it.
* `action_message(action)` / `action_from_message(message)`: engine `Action` ↔ wire `Action`;
  an empty string on the wire means an absent field. Malformed input raises `ActionError`.
* `legal_messages(actions)`: legal actions for a `DecisionRequest`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.engine import Action, ActionError
from arena.v1 import arena_pb2

__all__ = ["action_from_message", "action_message", "legal_messages", "view_message"]

# Action types whose `suit` field has a meaning: a Danish Fool's (re)designation, a per-suit declaration.
_SUIT_TYPES = frozenset({"play", "declare"})


# --------------------------------------------------------------------------- actions


def action_message(action: Action) -> arena_pb2.Action:
    """The wire form of an engine action (absent fields are empty strings)."""
    return arena_pb2.Action(
        type=action.type,
        card=str(action.card) if action.card is not None else "",
        suit=action.suit or "",
        name=action.name or "",
    )


def action_from_message(message: arena_pb2.Action) -> Action:
    """The engine action a bot sent; raises `ActionError` when it is malformed.

    Malformed means: an unknown type, a bad card code or suit, a missing or superfluous
    field for the type (e.g. ``play`` without a card, ``pass`` with a name). Whether the
    action is *legal* is the engine's business (`DealState.apply`).
    """
    if not isinstance(message, arena_pb2.Action):
        raise ActionError(f"not an Action message: {type(message).__name__}")
    fields: dict[str, Any] = {"type": message.type}
    if message.card:
        fields["card"] = message.card
    if message.name:
        fields["name"] = message.name
    if message.suit:
        if message.type not in _SUIT_TYPES:
            raise ActionError(f"a {message.type or 'typeless'} action takes no suit (got {message.suit!r})")
        fields["suit"] = message.suit
    return Action.from_dict(fields)


def legal_messages(actions: Iterable[Action | str]) -> list[arena_pb2.Action]:
    """Wire forms of legal actions; text forms (as in `observation()["legal_actions"]`) are parsed."""
    return [action_message(a if isinstance(a, Action) else Action.parse(a)) for a in actions]


# --------------------------------------------------------------------------- views


def _plays(cards: Sequence[Sequence[Any]]) -> list[arena_pb2.Play]:
    return [arena_pb2.Play(seat=int(seat), card=str(card)) for seat, card in cards]


def _trick(data: Mapping[str, Any], number: int, winner: int) -> arena_pb2.Trick:
    return arena_pb2.Trick(
        number=number,
        leader=int(data["leader"]),
        cards=_plays(data.get("cards", ())),
        winner=winner,
        designation=data.get("designation") or "",
        redesignation=data.get("redesignation") or "",
    )


def _declaration(data: Mapping[str, Any]) -> arena_pb2.Declaration:
    message = arena_pb2.Declaration(
        seat=int(data["seat"]),
        name=str(data["name"]),
        suit=data.get("suit") or "",
        size=int(data["size"]),
        value=int(data["value"]),
    )
    if data.get("with_fool") is not None:
        message.with_fool = bool(data["with_fool"])
    if data.get("with_pagat") is not None:
        message.with_pagat = bool(data["with_pagat"])
    message.cards.extend(str(c) for c in data.get("cards", ()))
    return message


def view_message(view: Mapping[str, Any], trick_cache: list[arena_pb2.Trick] | None = None) -> arena_pb2.View:
    """The `View` message of an `observation(state, seat)` dict.

    Every field of `View` is filled. Keys of the dict that are not part of a view
    (`legal_actions`, sent in the `DecisionRequest`; `result`, sent in `DealEnded`) are ignored.
    `trick_cache`, one list per deal shared by all seats, keeps the completed tricks encoded:
    they never change and every view holds them all, so each is encoded once.
    """
    tricks = view.get("tricks", ())
    if trick_cache is None:
        encoded = [_trick(t, int(t["number"]), int(t["winner"])) for t in tricks]
    else:
        trick_cache.extend(_trick(t, int(t["number"]), int(t["winner"])) for t in tricks[len(trick_cache) :])
        encoded = trick_cache[: len(tricks)]
    to_act = view.get("to_act")
    sitting_out = view.get("sitting_out")
    trick_number = int(view.get("trick_number", 0))
    message = arena_pb2.View(
        variant=str(view["variant"]),
        seat=int(view["seat"]),
        dealer=int(view["dealer"]),
        forehand=int(view["forehand"]),
        order=[int(s) for s in view.get("order", ())],
        phase=str(view["phase"]),
        to_act=-1 if to_act is None else int(to_act),
        trick_number=trick_number,
        hand=[str(c) for c in view.get("hand", ())],
        hand_sizes=[int(n) for n in view.get("hand_sizes", ())],
        tricks_won=[int(n) for n in view.get("tricks_won", ())],
        declarations=[_declaration(d) for d in view.get("declarations", ())],
        tricks=encoded,
        skat=[str(c) for c in view.get("skat", ())],
        announcements=[
            arena_pb2.Announcement(seat=int(a["seat"]), name=str(a["name"]), trick=int(a["trick"]))
            for a in view.get("announcements", ())
        ],
        round_answers=[
            arena_pb2.RoundAnswer(round=str(r["round"]), seat=int(r["seat"]), answer=str(r["answer"]))
            for r in view.get("round_answers", ())
        ],
        pots_start={str(k): int(v) for k, v in view.get("pots_start", {}).items()},
        sitting_out=-1 if sitting_out is None else int(sitting_out),
        options={str(k): str(v) for k, v in view.get("options", {}).items()},
    )
    current = view.get("trick")
    if current:
        message.trick.CopyFrom(_trick(current, trick_number, -1))
    else:  # no card played yet: an empty trick in progress, led by the seat to act in play
        message.trick.number = trick_number
        message.trick.winner = -1
        if view.get("phase") == "play" and to_act is not None:
            message.trick.leader = int(to_act)
    skat_public = view.get("skat_public")
    if skat_public:
        message.skat_public.taroks = int(skat_public.get("taroks", 0))
        message.skat_public.shown.extend(str(c) for c in skat_public.get("shown", ()))
    # american (AM-BID, AM-CALL, AM-TAL, AM-DEAL-2)
    message.contract = str(view.get("contract", ""))
    declarer, petit_sec = view.get("declarer"), view.get("petit_sec")
    message.declarer = -1 if declarer is None else int(declarer)
    message.petit_sec = -1 if petit_sec is None else int(petit_sec)
    message.called = str(view.get("called", ""))
    message.talon.extend(str(c) for c in view.get("talon", ()))
    if view.get("partner") is not None:
        message.partner = int(view["partner"])
    return message
