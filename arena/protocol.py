"""Pure conversions between engine data and the wire messages of `arena.v1` (proto/arena/v1/arena.proto).

No I/O and no state: the server builds its messages with these functions.

* `view_message(view)`: a seat's `SeatView` (`arena.engine.views.seat_view`) → `View`, the
  reference encoder. Absent values get the wire's "absent" marks: `to_act` −1 when the deal
  is over, `sitting_out` −1 without a seat out, `trick.winner` −1 for the trick in progress;
  the optional Taroks flags only when published; american: `declarer` and `petit_sec` −1 when
  there is none, `partner` only when the seat knows it.
* `action_message(action)` / `action_from_message(message)`: engine `Action` ↔ wire `Action`;
  an empty string on the wire means an absent field. Malformed input raises `ActionError`.
* `legal_messages(actions)`: legal actions for a `DecisionRequest`.

The referee's hot path skips the message objects: `ViewEncoder(state).view(seat)` writes a
seat's `View` straight to wire bytes from the deal state, and `request_message`,
`event_batch_message`, `action_taken_event` and `trick_completed_event` wrap bytes the same
way. Building nested upb messages per decision would cost several times the encoding, and
building a `SeatView` first about as much again; so the parts that do not change (a seat's
fixed facts, completed tricks, declarations) are encoded once per deal, and what a seat may
see is asked of the functions `seat_view` uses (`own_discard`, `public_contract`,
`visible_talon`, `known_partner`). Every field number is read from the generated descriptor,
so arena.proto stays their only source. The bytes parse to exactly the message
`view_message(seat_view(…))` builds: tests/protocol/test_protocol.py checks it for every seat at every
step of every variant and option set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, Generic, TypeVar

from arena.engine import CARDS, Action, ActionError, DealState
from arena.engine.deal import PLAY, Announcement, Declaration, Trick
from arena.engine.views import (
    PublicDeclaration,
    SeatView,
    known_partner,
    own_discard,
    public_contract,
    visible_talon,
)
from arena.v1 import arena_pb2

__all__ = [
    "ViewEncoder", "action_from_message", "action_message", "action_taken_event", "event_batch_message",
    "legal_messages", "length_delimited", "request_message", "trick_completed_event", "view_message",
]

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
    kind, card, suit, name = message.type, message.card, message.suit, message.name
    if len(kind) + len(card) + len(suit) + len(name) <= 64:  # any well-formed action; bounds the cache
        return _action_from_fields(kind, card, suit, name)
    return _parse_action(kind, card, suit, name)


def _parse_action(kind: str, card: str, suit: str, name: str) -> Action:
    fields: dict[str, Any] = {"type": kind}
    if card:
        fields["card"] = card
    if name:
        fields["name"] = name
    if suit:
        if kind not in _SUIT_TYPES:
            raise ActionError(f"a {kind or 'typeless'} action takes no suit (got {suit!r})")
        fields["suit"] = suit
    return Action.from_dict(fields)


# Bots answer with the same few hundred actions: each is parsed once. A malformed one raises,
# and lru_cache keeps no exceptions.
_action_from_fields = lru_cache(maxsize=4096)(_parse_action)


def legal_messages(actions: Iterable[Action | str]) -> list[arena_pb2.Action]:
    """Wire forms of legal actions; text forms (as in `observation()["legal_actions"]`) are parsed."""
    return [action_message(a if isinstance(a, Action) else Action.parse(a)) for a in actions]


# --------------------------------------------------------------------------- views


def _trick(
    number: int,
    leader: int,
    plays: Iterable[tuple[int, Any]],
    winner: int,
    designation: str | None,
    redesignation: str | None,
) -> arena_pb2.Trick:
    return arena_pb2.Trick(
        number=number,
        leader=leader,
        cards=[arena_pb2.Play(seat=seat, card=str(card)) for seat, card in plays],
        winner=winner,
        designation=designation or "",
        redesignation=redesignation or "",
    )


def _declaration(d: PublicDeclaration) -> arena_pb2.Declaration:
    message = arena_pb2.Declaration(seat=d.seat, name=d.name, suit=d.suit or "", size=d.size, value=d.value)
    if d.with_fool is not None:
        message.with_fool = d.with_fool
    if d.with_pagat is not None:
        message.with_pagat = d.with_pagat
    message.cards.extend(str(c) for c in d.shown)
    return message


def view_message(view: SeatView | Mapping[str, Any]) -> arena_pb2.View:
    """The `View` message of a seat's view: the reference encoder (`ViewEncoder` must equal it).

    Every field of `View` is filled. What is not part of a view (`legal_actions`, sent in the
    `DecisionRequest`; `result`, sent in `DealEnded`) is left out. An `observation()` dict is
    read back into its `SeatView` first; callers that hold the state pass `seat_view(state, seat)`.
    """
    if not isinstance(view, SeatView):
        view = SeatView.from_dict(view)
    to_act = view.to_act
    message = arena_pb2.View(
        variant=view.variant,
        seat=view.seat,
        dealer=view.dealer,
        forehand=view.forehand,
        order=view.order,
        phase=view.phase,
        to_act=-1 if to_act is None else to_act,
        trick_number=view.trick_number,
        hand=[str(c) for c in view.hand],
        hand_sizes=view.hand_sizes,
        tricks_won=view.tricks_won,
        declarations=[_declaration(d) for d in view.declarations],
        tricks=[
            _trick(t.number, t.leader, t.plays, t.winner, t.designation, t.redesignation) for t in view.tricks
        ],
        skat=[str(c) for c in view.skat],
        announcements=[
            arena_pb2.Announcement(seat=a.seat, name=a.name, trick=a.trick) for a in view.announcements
        ],
        round_answers=[
            arena_pb2.RoundAnswer(round=r.round, seat=r.seat, answer=r.answer) for r in view.round_answers
        ],
        pots_start=view.pots_start or {},
        sitting_out=-1 if view.sitting_out is None else view.sitting_out,
        options=view.options,
    )
    current = view.trick
    if current is not None:
        message.trick.CopyFrom(
            _trick(
                view.trick_number,
                current.leader,
                current.plays,
                -1,
                current.designation,
                current.redesignation,
            )
        )
    else:  # no card played yet: an empty trick in progress, led by the seat to act in play
        message.trick.number = view.trick_number
        message.trick.winner = -1
        if view.phase == PLAY and to_act is not None:
            message.trick.leader = to_act
    if view.skat_public is not None:
        message.skat_public.taroks = view.skat_public.taroks
        message.skat_public.shown.extend(view.skat_public.shown)
    # american (AM-BID, AM-CALL, AM-TAL, AM-DEAL-2)
    message.contract = view.contract or ""
    message.declarer = -1 if view.declarer is None else view.declarer
    message.petit_sec = -1 if view.petit_sec is None else view.petit_sec
    message.called = "" if view.called is None else str(view.called)
    message.talon.extend(str(c) for c in view.talon or ())
    if view.partner is not None:
        message.partner = view.partner
    return message


# --------------------------------------------------------------------------- wire bytes
#
# Protocol buffers' wire format: a field is a key (field number << 3 | wire type) and a value,
# a varint (type 0) or length-prefixed bytes (type 2); fields may come in any order and a
# message is the concatenation of its fields. Like protobuf's own serializer, these helpers
# leave out zero scalars and empty strings; submessages are written even when empty (presence).


def _numbers(message: Any, *names: str) -> dict[str, int]:
    """Field numbers of a generated message class, by name: arena.proto is their one source."""
    fields = message.DESCRIPTOR.fields_by_name
    numbers = {name: int(fields[name].number) for name in names}
    assert all(0 < n < 32 for n in numbers.values()), "the key tables below cover fields 1…31"
    return numbers


_VIEW = arena_pb2.View
_V = _numbers(
    _VIEW,
    *("variant", "seat", "dealer", "forehand", "order", "phase", "to_act", "trick_number", "hand"),
    *("hand_sizes", "tricks_won", "declarations", "tricks", "trick", "skat", "skat_public"),
    *("announcements", "round_answers", "pots_start", "sitting_out", "options", "contract"),
    *("declarer", "called", "partner", "talon", "petit_sec"),
)
V_VARIANT: Final = _V["variant"]
V_SEAT: Final = _V["seat"]
V_DEALER: Final = _V["dealer"]
V_FOREHAND: Final = _V["forehand"]
V_ORDER: Final = _V["order"]
V_PHASE: Final = _V["phase"]
V_TO_ACT: Final = _V["to_act"]
V_TRICK_NUMBER: Final = _V["trick_number"]
V_HAND: Final = _V["hand"]
V_HAND_SIZES: Final = _V["hand_sizes"]
V_TRICKS_WON: Final = _V["tricks_won"]
V_DECLARATIONS: Final = _V["declarations"]
V_TRICKS: Final = _V["tricks"]
V_TRICK: Final = _V["trick"]
V_SKAT: Final = _V["skat"]
V_SKAT_PUBLIC: Final = _V["skat_public"]
V_ANNOUNCEMENTS: Final = _V["announcements"]
V_ROUND_ANSWERS: Final = _V["round_answers"]
V_POTS_START: Final = _V["pots_start"]
V_SITTING_OUT: Final = _V["sitting_out"]
V_OPTIONS: Final = _V["options"]
V_CONTRACT: Final = _V["contract"]
V_DECLARER: Final = _V["declarer"]
V_CALLED: Final = _V["called"]
V_PARTNER: Final = _V["partner"]
V_TALON: Final = _V["talon"]
V_PETIT_SEC: Final = _V["petit_sec"]
_POTS_ENTRY = _numbers(_VIEW.PotsStartEntry, "key", "value")
_OPTIONS_ENTRY = _numbers(_VIEW.OptionsEntry, "key", "value")
_TRICK = _numbers(arena_pb2.Trick, "number", "leader", "cards", "winner", "designation", "redesignation")
_PLAY = _numbers(arena_pb2.Play, "seat", "card")
_DECLARATION = _numbers(
    arena_pb2.Declaration, "seat", "name", "suit", "size", "value", "with_fool", "with_pagat", "cards"
)
_SKAT_INFO = _numbers(arena_pb2.SkatInfo, "taroks", "shown")
_ANNOUNCEMENT = _numbers(arena_pb2.Announcement, "seat", "name", "trick")
_ROUND_ANSWER = _numbers(arena_pb2.RoundAnswer, "round", "seat", "answer")
_ACTION = _numbers(arena_pb2.Action, "type", "card", "suit", "name")
_REQUEST = _numbers(
    arena_pb2.DecisionRequest,
    "request_id",
    "deal",
    "view",
    "legal_actions",
    "time_limit_ms",
    "bank_ms",
    "events",
)
_SERVER_MESSAGE = _numbers(arena_pb2.ServerMessage, "request", "events")
_EVENT_BATCH = _numbers(arena_pb2.EventBatch, "events")
_EVENT = _numbers(arena_pb2.Event, "deal", "action_taken", "trick_completed")
_ACTION_TAKEN = _numbers(arena_pb2.ActionTaken, "seat", "action")
_TRICK_COMPLETED = _numbers(arena_pb2.TrickCompleted, "number", "winner")
T_NUMBER: Final = _TRICK["number"]
T_LEADER: Final = _TRICK["leader"]
T_WINNER: Final = _TRICK["winner"]
T_DESIGNATION: Final = _TRICK["designation"]
T_REDESIGNATION: Final = _TRICK["redesignation"]


_U64 = (1 << 64) - 1
INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1


def _encode_varint(value: int) -> bytes:
    """A varint; a negative number is sign-extended to ten bytes, as protobuf writes it. The fields
    written are int32, int64 or uint32: a value beyond int64 would wrap silently, so it is refused."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"Value out of range: {value} does not fit a protobuf int64")
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(field: int, payload: bytes) -> bytes:
    """Field `field` holding `payload` as length-delimited wire bytes, for any field number."""
    return _encode_varint(field << 3 | 2) + _encode_varint(len(payload)) + payload


# Every varint a request needs but the odd large id: counts, lengths up to 4 KiB, and -1.
# A view is encoded from ~50 of them, so a table lookup beats computing each.
_VARINTS = tuple(_encode_varint(n) for n in range(4096))
_MINUS_ONE = _encode_varint(-1)
_KEY0 = tuple(_encode_varint(field << 3) for field in range(32))  # varint fields 0…31
_KEY2 = tuple(_encode_varint(field << 3 | 2) for field in range(32))  # length-delimited fields


_CONTINUED = tuple(bytes((n | 0x80,)) for n in range(128))  # a varint's low 7 bits, more to come


def _varint(value: int) -> bytes:
    if 0 <= value < 4096:
        return _VARINTS[value]
    if 0 < value < 1 << 19:  # time limits, request ids
        return _CONTINUED[value & 0x7F] + _VARINTS[value >> 7]
    return _MINUS_ONE if value == -1 else _encode_varint(value)


def _int(field: int, value: int) -> bytes:
    return _KEY0[field] + _varint(value) if value else b""


def _str(field: int, text: str) -> bytes:
    if not text:
        return b""
    data = text.encode()
    return _KEY2[field] + _varint(len(data)) + data


def _sub(field: int, body: bytes) -> bytes:
    return _KEY2[field] + _varint(len(body)) + body


def _packed(field: int, values: Iterable[int]) -> bytes:
    body = b"".join([_varint(v) for v in values])
    return _sub(field, body) if body else b""


def _present(field: int, value: int) -> bytes:
    """An `optional` scalar: written even when zero."""
    return _KEY0[field] + _varint(value)


def _card_fields(field: int) -> tuple[bytes, ...]:
    """A `repeated string` field's item for each card, indexed by the card."""
    return tuple(_str(field, str(card)) for card in CARDS)


_HAND, _SKAT, _TALON = _card_fields(V_HAND), _card_fields(V_SKAT), _card_fields(V_TALON)
_DECLARED_CARDS = _card_fields(_DECLARATION["cards"])
# Trick.cards items: a Play per seat and card.
_PLAYS = tuple(
    tuple(_sub(_TRICK["cards"], _int(_PLAY["seat"], seat) + _str(_PLAY["card"], str(card))) for card in CARDS)
    for seat in range(4)
)
_NO_WINNER = _int(T_WINNER, -1)
_NOT_AMERICAN = _int(V_DECLARER, -1) + _int(V_PETIT_SEC, -1)  # no declarer, no petit sec


@lru_cache(maxsize=4096)  # the actions of every variant are a few hundred values
def _action_body(action: Action) -> bytes:
    card = str(action.card) if action.card is not None else ""
    a = _ACTION
    return (
        _str(a["type"], action.type)
        + _str(a["card"], card)
        + _str(a["suit"], action.suit or "")
        + _str(a["name"], action.name or "")
    )


@lru_cache(maxsize=4096)
def _legal_item(action: Action) -> bytes:
    return _sub(_REQUEST["legal_actions"], _action_body(action))


@lru_cache(maxsize=64)
def _phase(phase: str) -> bytes:
    return _str(V_PHASE, phase)


def _trick_body(
    number: int,
    leader: int,
    plays: Iterable[tuple[int, Any]],
    winner: int,
    designation: str | None,
    redesignation: str | None,
) -> bytes:
    return b"".join(
        [
            _int(T_NUMBER, number),
            _int(T_LEADER, leader),
            *[_PLAYS[seat][card] for seat, card in plays],
            _NO_WINNER if winner == -1 else _int(T_WINNER, winner),
            _str(T_DESIGNATION, designation or ""),
            _str(T_REDESIGNATION, redesignation or ""),
        ]
    )


def _completed_trick_field(t: Trick) -> bytes:
    return _sub(V_TRICKS, _trick_body(t.number, t.leader, t.plays, t.winner, t.designation, t.redesignation))


def _declaration_field(declaration: Declaration) -> bytes:
    d = PublicDeclaration.of(declaration)  # what the table learns, never the cards that form it
    f = _DECLARATION
    body = [_int(f["seat"], d.seat), _str(f["name"], d.name), _str(f["suit"], d.suit or "")]
    body += [_int(f["size"], d.size), _int(f["value"], d.value)]
    if d.with_fool is not None:
        body.append(_present(f["with_fool"], int(d.with_fool)))
    if d.with_pagat is not None:
        body.append(_present(f["with_pagat"], int(d.with_pagat)))
    body.extend(_DECLARED_CARDS[card] for card in d.shown)
    return _sub(V_DECLARATIONS, b"".join(body))


T = TypeVar("T")


class _Appended(Generic[T]):
    """The encoding of an engine list that only grows, extended as it grows."""

    __slots__ = ("count", "data", "encode")

    def __init__(self, encode: Callable[[T], bytes]) -> None:
        self.encode = encode
        self.count = 0
        self.data = b""

    def of(self, items: Sequence[T]) -> bytes:
        n = len(items)
        if n != self.count:
            if n < self.count:  # never happens in the engine; stay correct if it ever does
                self.count, self.data = 0, b""
            self.data += b"".join([self.encode(item) for item in items[self.count :]])
            self.count = n
        return self.data


class ViewEncoder:
    """The wire bytes of `View` for any seat of one deal, straight from its `DealState`.

    Holds what `seat_view(state, seat)` holds, nothing more, and asks the same functions of
    arena/engine/views.py what is the seat's own (its discard) and what is public now (the
    contract, the talon, the partner as the seat knows him). One encoder serves every seat of the
    deal and keeps the unchanging parts encoded.
    """

    def __init__(self, state: DealState) -> None:
        self.state = state
        v = state.variant
        common = [
            _str(V_VARIANT, v.name),
            _int(V_DEALER, state.dealer),
            _int(V_FOREHAND, state.forehand),
            _packed(V_ORDER, state.order),
        ]
        if v.pots is not None:
            key, value = _POTS_ENTRY["key"], _POTS_ENTRY["value"]
            common += [
                _sub(V_POTS_START, _str(key, str(k)) + _int(value, int(n)))
                for k, n in state.pots_start.items()
            ]
        common.append(_int(V_SITTING_OUT, -1 if state.sitting_out is None else state.sitting_out))
        key, value = _OPTIONS_ENTRY["key"], _OPTIONS_ENTRY["value"]
        common += [_sub(V_OPTIONS, _str(key, str(k)) + _str(value, str(o))) for k, o in v.options.items()]
        fixed = b"".join(common)
        self._fixed = [_int(V_SEAT, seat) + fixed for seat in range(state.seats)]
        self._american = bool(v.contracts)
        self._tricks: _Appended[Trick] = _Appended(_completed_trick_field)
        self._declarations: _Appended[Declaration] = _Appended(_declaration_field)
        a, r = _ANNOUNCEMENT, _ROUND_ANSWER
        self._announcements: _Appended[Announcement] = _Appended(
            lambda x: _sub(
                V_ANNOUNCEMENTS, _int(a["seat"], x.seat) + _str(a["name"], x.name) + _int(a["trick"], x.trick)
            )
        )
        self._answers: _Appended[tuple[str, int, str]] = _Appended(
            lambda x: _sub(
                V_ROUND_ANSWERS, _str(r["round"], x[0]) + _int(r["seat"], x[1]) + _str(r["answer"], x[2])
            )
        )

    def view(self, seat: int) -> bytes:
        """The `View` of `seat` now, as wire bytes."""
        s = self.state
        if not 0 <= seat < s.seats:
            raise ValueError(f"seat {seat} is not at this table")
        to_act = s.turn
        hands = s.hands
        parts = [
            self._fixed[seat],
            _phase(s.phase),
            _int(V_TO_ACT, -1 if to_act is None else to_act),
            _int(V_TRICK_NUMBER, s.trick_no),
            *[_HAND[card] for card in hands[seat]],
            _packed(V_HAND_SIZES, [len(h) for h in hands]),
            _packed(V_TRICKS_WON, s.tricks_won),
            self._declarations.of(s.declarations),
            self._tricks.of(s.tricks),
        ]
        if s.trick:
            current = _trick_body(s.trick_no, s.trick[0][0], s.trick, -1, s.designation, s.redesignation)
        else:  # no card played yet: an empty trick in progress, led by the seat to act in play
            leader = to_act if s.phase == PLAY and to_act is not None else 0
            current = _int(T_NUMBER, s.trick_no) + _int(T_LEADER, leader) + _NO_WINNER
        parts.append(_sub(V_TRICK, current))
        skat = own_discard(s, seat)
        if skat:
            parts += [_SKAT[card] for card in skat]
        if s.skat_public:
            shown: Iterable[Any] = s.skat_public.get("shown", ())  # type: ignore[assignment]
            taroks = s.skat_public.get("taroks", 0)
            assert isinstance(taroks, int)
            body = _int(_SKAT_INFO["taroks"], taroks) + b"".join(
                [_str(_SKAT_INFO["shown"], str(c)) for c in shown]
            )
            parts.append(_sub(V_SKAT_PUBLIC, body))
        if s.announcements:
            parts.append(self._announcements.of(s.announcements))
        if s.round_answers:
            parts.append(self._answers.of(s.round_answers))
        parts.append(self._american_fields(seat) if self._american else _NOT_AMERICAN)
        return b"".join(parts)

    def _american_fields(self, seat: int) -> bytes:
        s = self.state
        contract, declarer = public_contract(s)
        parts = [
            _str(V_CONTRACT, contract or ""),
            _int(V_DECLARER, -1 if declarer is None else declarer),
            _str(V_CALLED, str(s.called) if s.called is not None else ""),
            _int(V_PETIT_SEC, -1 if s.petit_sec is None else s.petit_sec),
        ]
        talon = visible_talon(s)
        if talon is not None:
            parts += [_TALON[card] for card in talon]  # AM-TAL-1: shown to all
        partner = known_partner(s, seat)
        if partner is not None:
            parts.append(_present(V_PARTNER, partner))
        return b"".join(parts)


def request_message(
    request_id: int,
    deal: int,
    view: bytes,
    legal: Iterable[Action],
    time_limit_ms: int,
    bank_ms: int,
    events: Iterable[bytes],
) -> bytes:
    """A `ServerMessage` holding a `DecisionRequest`, as wire bytes; `events` are encoded `Event`s."""
    r = _REQUEST
    event_key = _KEY2[r["events"]]
    body = b"".join(
        [
            _int(r["request_id"], request_id),
            _int(r["deal"], deal),
            _sub(r["view"], view),
            *[_legal_item(a) for a in legal],
            _int(r["time_limit_ms"], time_limit_ms),
            _int(r["bank_ms"], bank_ms),
            *[event_key + _varint(len(e)) + e for e in events],
        ]
    )
    return _sub(_SERVER_MESSAGE["request"], body)


def event_batch_message(events: Iterable[bytes]) -> bytes:
    """A `ServerMessage` holding an `EventBatch` of encoded `Event`s, as wire bytes."""
    batch = _EVENT_BATCH["events"]
    return _sub(_SERVER_MESSAGE["events"], b"".join([_sub(batch, e) for e in events]))


def action_taken_event(deal: int, seat: int, action: Action) -> bytes:
    """The `Event` of an action taken, as wire bytes (hide a discard's card before calling)."""
    taken = _int(_ACTION_TAKEN["seat"], seat) + _sub(_ACTION_TAKEN["action"], _action_body(action))
    return _int(_EVENT["deal"], deal) + _sub(_EVENT["action_taken"], taken)


def trick_completed_event(deal: int, number: int, winner: int) -> bytes:
    completed = _int(_TRICK_COMPLETED["number"], number) + _int(_TRICK_COMPLETED["winner"], winner)
    return _int(_EVENT["deal"], deal) + _sub(_EVENT["trick_completed"], completed)
