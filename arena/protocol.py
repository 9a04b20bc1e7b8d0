"""Pure conversions between engine data and the wire messages of `arena.v1` (proto/arena/v1/arena.proto).

No I/O and no state: the server builds its messages with these functions.

* `view_message(view)`: an `observation(state, seat)` dict → `View`. Absent values get the
  wire's "absent" marks: `to_act` −1 when the deal is over, `sitting_out` −1 without a seat out,
  `trick.winner` −1 for the trick in progress; the optional Taroks flags only when published;
  american: `declarer` and `petit_sec` −1 when there is none, `partner` only when the seat knows it.
* `action_message(action)` / `action_from_message(message)`: engine `Action` ↔ wire `Action`;
  an empty string on the wire means an absent field. Malformed input raises `ActionError`.
* `legal_messages(actions)`: legal actions for a `DecisionRequest`.

The referee's hot path skips the message objects: `ViewEncoder(state).view(seat)` writes a
seat's `View` straight to wire bytes from the deal state, and `request_message`,
`event_batch_message`, `action_taken_event` and `trick_completed_event` wrap bytes the same
way. Building nested upb messages from an observation dict took most of a decision's CPU;
here the parts that do not change (a seat's fixed facts, completed tricks, declarations) are
encoded once per deal. The bytes parse to exactly the message `view_message(observation(…))`
builds: tests/test_protocol.py checks it for every seat at every step of every variant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Generic, TypeVar

from arena.engine import CARDS, Action, ActionError, DealState
from arena.engine.deal import BID, PLAY, Announcement, Declaration, Trick
from arena.engine.views import known_partner
from arena.v1 import arena_pb2

__all__ = [
    "ViewEncoder",
    "action_from_message",
    "action_message",
    "action_taken_event",
    "event_batch_message",
    "legal_messages",
    "request_message",
    "trick_completed_event",
    "view_message",
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


# --------------------------------------------------------------------------- wire bytes
#
# Protocol buffers' wire format: a field is a key (field number << 3 | wire type) and a value,
# a varint (type 0) or length-prefixed bytes (type 2); fields may come in any order and a
# message is the concatenation of its fields. Like protobuf's own serializer, these helpers
# leave out zero scalars and empty strings; submessages are written even when empty (presence).

_U64 = (1 << 64) - 1


def _encode_varint(value: int) -> bytes:
    """A varint; a negative int32 is sign-extended to ten bytes, as protobuf writes it."""
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


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


_HAND, _SKAT, _TALON = _card_fields(9), _card_fields(15), _card_fields(26)
_DECLARED_CARDS = _card_fields(8)
# Trick.cards items: a Play per seat and card.
_PLAYS = tuple(tuple(_sub(3, _int(1, seat) + _str(2, str(card))) for card in CARDS) for seat in range(4))
_NO_WINNER = _int(4, -1)
_NOT_AMERICAN = _int(23, -1) + _int(27, -1)  # no declarer, no petit sec


@lru_cache(maxsize=4096)  # the actions of every variant are a few hundred values
def _action_body(action: Action) -> bytes:
    card = str(action.card) if action.card is not None else ""
    return _str(1, action.type) + _str(2, card) + _str(3, action.suit or "") + _str(4, action.name or "")


@lru_cache(maxsize=4096)
def _legal_item(action: Action) -> bytes:
    return _sub(4, _action_body(action))


@lru_cache(maxsize=64)
def _phase(phase: str) -> bytes:
    return _str(6, phase)


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
            _int(1, number),
            _int(2, leader),
            *[_PLAYS[seat][card] for seat, card in plays],
            _NO_WINNER if winner == -1 else _int(4, winner),
            _str(5, designation or ""),
            _str(6, redesignation or ""),
        ]
    )


def _completed_trick_field(t: Trick) -> bytes:
    return _sub(13, _trick_body(t.number, t.leader, t.plays, t.winner, t.designation, t.redesignation))


def _declaration_field(declaration: Declaration) -> bytes:
    c = declaration.combination
    body = [_int(1, declaration.seat), _str(2, c.name), _str(3, c.suit or "")]
    body += [_int(4, c.size), _int(5, c.value)]
    if c.with_fool is not None:
        body.append(_present(6, int(c.with_fool)))
    if c.with_pagat is not None:
        body.append(_present(7, int(c.with_pagat)))
    body.extend(_DECLARED_CARDS[card] for card in sorted(c.shown))
    return _sub(12, b"".join(body))


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

    Holds what `observation(state, seat)` holds, nothing more (arena/engine/views.py is the
    definition of a seat's information set): its own hand, its own discard, the cards played,
    the public declarations, announcements and answers; `american`: the contract, the called
    card, the talon while shown, the partner once known (`known_partner`). One encoder serves
    every seat of the deal and keeps the unchanging parts encoded.
    """

    def __init__(self, state: DealState) -> None:
        self.state = state
        v = state.variant
        common = [_str(1, v.name), _int(3, state.dealer), _int(4, state.forehand), _packed(5, state.order)]
        if v.pots is not None:
            common += [_sub(19, _str(1, str(k)) + _int(2, int(n))) for k, n in state.pots_start.items()]
        common.append(_int(20, -1 if state.sitting_out is None else state.sitting_out))
        common += [_sub(21, _str(1, str(k)) + _str(2, str(o))) for k, o in v.options.items()]
        fixed = b"".join(common)
        self._fixed = [_int(2, seat) + fixed for seat in range(state.seats)]
        self._american = bool(v.contracts)
        self._tricks: _Appended[Trick] = _Appended(_completed_trick_field)
        self._declarations: _Appended[Declaration] = _Appended(_declaration_field)
        self._announcements: _Appended[Announcement] = _Appended(
            lambda a: _sub(17, _int(1, a.seat) + _str(2, a.name) + _int(3, a.trick))
        )
        self._answers: _Appended[tuple[str, int, str]] = _Appended(
            lambda r: _sub(18, _str(1, r[0]) + _int(2, r[1]) + _str(3, r[2]))
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
            _int(7, -1 if to_act is None else to_act),
            _int(8, s.trick_no),
            *[_HAND[card] for card in hands[seat]],
            _packed(10, [len(h) for h in hands]),
            _packed(11, s.tricks_won),
            self._declarations.of(s.declarations),
            self._tricks.of(s.tricks),
        ]
        if s.trick:
            current = _trick_body(s.trick_no, s.trick[0][0], s.trick, -1, s.designation, s.redesignation)
        else:  # no card played yet: an empty trick in progress, led by the seat to act in play
            leader = to_act if s.phase == PLAY and to_act is not None else 0
            current = _int(1, s.trick_no) + _int(2, leader) + _NO_WINNER
        parts.append(_sub(14, current))
        if seat == s.discarder and s.skat:
            parts += [_SKAT[card] for card in s.skat]  # his own discard
        if s.skat_public:
            shown: Iterable[Any] = s.skat_public.get("shown", ())  # type: ignore[assignment]
            taroks = s.skat_public.get("taroks", 0)
            assert isinstance(taroks, int)
            parts.append(_sub(16, _int(1, taroks) + b"".join([_str(2, str(c)) for c in shown])))
        if s.announcements:
            parts.append(self._announcements.of(s.announcements))
        if s.round_answers:
            parts.append(self._answers.of(s.round_answers))
        parts.append(self._american_fields(seat) if self._american else _NOT_AMERICAN)
        return b"".join(parts)

    def _american_fields(self, seat: int) -> bytes:
        s = self.state
        contract, declarer = "", -1
        if s.trischaken:
            contract = "trischaken"
        elif s.contract is not None and s.phase != BID:
            contract = s.contract.name
            declarer = -1 if s.declarer is None else s.declarer
        parts = [
            _str(22, contract),
            _int(23, declarer),
            _str(24, str(s.called) if s.called is not None else ""),
            _int(27, -1 if s.petit_sec is None else s.petit_sec),
        ]
        if s.talon_visible:
            parts += [_TALON[card] for card in s.talon]  # AM-TAL-1: shown to all
        partner = known_partner(s, seat)
        if partner is not None:
            parts.append(_present(25, partner))
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
    body = b"".join(
        [
            _int(1, request_id),
            _int(2, deal),
            _sub(3, view),
            *[_legal_item(a) for a in legal],
            _int(5, time_limit_ms),
            _int(6, bank_ms),
            *[_KEY2[7] + _varint(len(e)) + e for e in events],
        ]
    )
    return _sub(2, body)


def event_batch_message(events: Iterable[bytes]) -> bytes:
    """A `ServerMessage` holding an `EventBatch` of encoded `Event`s, as wire bytes."""
    return _sub(4, b"".join([_sub(1, e) for e in events]))


def action_taken_event(deal: int, seat: int, action: Action) -> bytes:
    """The `Event` of an action taken, as wire bytes (hide a discard's card before calling)."""
    return _int(1, deal) + _sub(3, _int(1, seat) + _sub(2, _action_body(action)))


def trick_completed_event(deal: int, number: int, winner: int) -> bytes:
    return _int(1, deal) + _sub(4, _int(1, number) + _int(2, winner))
