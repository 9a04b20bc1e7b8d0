from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("bot_name", "bot_version", "protocol_version")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    protocol_version: int
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("type", "card", "suit", "name")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    type: str
    card: str
    suit: str
    name: str
    def __init__(self, type: _Optional[str] = ..., card: _Optional[str] = ..., suit: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("match_start", "request", "rejected", "events", "match_end")
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    match_start: MatchStart
    request: DecisionRequest
    rejected: ActionRejected
    events: EventBatch
    match_end: MatchEnd
    def __init__(self, match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., events: _Optional[_Union[EventBatch, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_decision_ms", "bank_ms", "increment_ms", "latency_allowance_ms")
    PER_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_ALLOWANCE_MS_FIELD_NUMBER: _ClassVar[int]
    per_decision_ms: int
    bank_ms: int
    increment_ms: int
    latency_allowance_ms: int
    def __init__(self, per_decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ..., latency_allowance_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "variant", "options", "seat", "seat_names", "time_control", "deals", "server_version")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    options: _containers.ScalarMap[str, str]
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    time_control: TimeControl
    deals: int
    server_version: str
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., deals: _Optional[int] = ..., server_version: _Optional[str] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "deal", "view", "legal_actions", "time_limit_ms", "bank_ms", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    deal: int
    view: View
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    time_limit_ms: int
    bank_ms: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., deal: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., time_limit_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "reason", "rule", "time_left_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    reason: str
    rule: str
    time_left_ms: int
    def __init__(self, request_id: _Optional[int] = ..., reason: _Optional[str] = ..., rule: _Optional[str] = ..., time_left_ms: _Optional[int] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("variant", "seat", "dealer", "forehand", "order", "phase", "to_act", "trick_number", "hand", "hand_sizes", "tricks_won", "declarations", "tricks", "trick", "skat", "skat_public", "announcements", "round_answers", "pots_start", "sitting_out", "options", "contract", "declarer", "called", "partner", "talon", "petit_sec")
    class PotsStartEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    FOREHAND_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    SKAT_FIELD_NUMBER: _ClassVar[int]
    SKAT_PUBLIC_FIELD_NUMBER: _ClassVar[int]
    ANNOUNCEMENTS_FIELD_NUMBER: _ClassVar[int]
    ROUND_ANSWERS_FIELD_NUMBER: _ClassVar[int]
    POTS_START_FIELD_NUMBER: _ClassVar[int]
    SITTING_OUT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    CALLED_FIELD_NUMBER: _ClassVar[int]
    PARTNER_FIELD_NUMBER: _ClassVar[int]
    TALON_FIELD_NUMBER: _ClassVar[int]
    PETIT_SEC_FIELD_NUMBER: _ClassVar[int]
    variant: str
    seat: int
    dealer: int
    forehand: int
    order: _containers.RepeatedScalarFieldContainer[int]
    phase: str
    to_act: int
    trick_number: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    declarations: _containers.RepeatedCompositeFieldContainer[Declaration]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    trick: Trick
    skat: _containers.RepeatedScalarFieldContainer[str]
    skat_public: SkatInfo
    announcements: _containers.RepeatedCompositeFieldContainer[Announcement]
    round_answers: _containers.RepeatedCompositeFieldContainer[RoundAnswer]
    pots_start: _containers.ScalarMap[str, int]
    sitting_out: int
    options: _containers.ScalarMap[str, str]
    contract: str
    declarer: int
    called: str
    partner: int
    talon: _containers.RepeatedScalarFieldContainer[str]
    petit_sec: int
    def __init__(self, variant: _Optional[str] = ..., seat: _Optional[int] = ..., dealer: _Optional[int] = ..., forehand: _Optional[int] = ..., order: _Optional[_Iterable[int]] = ..., phase: _Optional[str] = ..., to_act: _Optional[int] = ..., trick_number: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., declarations: _Optional[_Iterable[_Union[Declaration, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ..., skat: _Optional[_Iterable[str]] = ..., skat_public: _Optional[_Union[SkatInfo, _Mapping]] = ..., announcements: _Optional[_Iterable[_Union[Announcement, _Mapping]]] = ..., round_answers: _Optional[_Iterable[_Union[RoundAnswer, _Mapping]]] = ..., pots_start: _Optional[_Mapping[str, int]] = ..., sitting_out: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., contract: _Optional[str] = ..., declarer: _Optional[int] = ..., called: _Optional[str] = ..., partner: _Optional[int] = ..., talon: _Optional[_Iterable[str]] = ..., petit_sec: _Optional[int] = ...) -> None: ...

class Declaration(_message.Message):
    __slots__ = ("seat", "name", "suit", "size", "value", "with_fool", "with_pagat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WITH_FOOL_FIELD_NUMBER: _ClassVar[int]
    WITH_PAGAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    suit: str
    size: int
    value: int
    with_fool: bool
    with_pagat: bool
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., suit: _Optional[str] = ..., size: _Optional[int] = ..., value: _Optional[int] = ..., with_fool: _Optional[bool] = ..., with_pagat: _Optional[bool] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("number", "leader", "cards", "winner", "designation", "redesignation")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    DESIGNATION_FIELD_NUMBER: _ClassVar[int]
    REDESIGNATION_FIELD_NUMBER: _ClassVar[int]
    number: int
    leader: int
    cards: _containers.RepeatedCompositeFieldContainer[Play]
    winner: int
    designation: str
    redesignation: str
    def __init__(self, number: _Optional[int] = ..., leader: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., winner: _Optional[int] = ..., designation: _Optional[str] = ..., redesignation: _Optional[str] = ...) -> None: ...

class SkatInfo(_message.Message):
    __slots__ = ("taroks", "shown")
    TAROKS_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    taroks: int
    shown: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, taroks: _Optional[int] = ..., shown: _Optional[_Iterable[str]] = ...) -> None: ...

class Announcement(_message.Message):
    __slots__ = ("seat", "name", "trick")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    trick: int
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., trick: _Optional[int] = ...) -> None: ...

class RoundAnswer(_message.Message):
    __slots__ = ("round", "seat", "answer")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    round: str
    seat: int
    answer: str
    def __init__(self, round: _Optional[str] = ..., seat: _Optional[int] = ..., answer: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("deal", "deal_started", "action_taken", "trick_completed", "deal_ended", "fault")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DEAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    ACTION_TAKEN_FIELD_NUMBER: _ClassVar[int]
    TRICK_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    DEAL_ENDED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    deal: int
    deal_started: DealStarted
    action_taken: ActionTaken
    trick_completed: TrickCompleted
    deal_ended: DealEnded
    fault: Fault
    def __init__(self, deal: _Optional[int] = ..., deal_started: _Optional[_Union[DealStarted, _Mapping]] = ..., action_taken: _Optional[_Union[ActionTaken, _Mapping]] = ..., trick_completed: _Optional[_Union[TrickCompleted, _Mapping]] = ..., deal_ended: _Optional[_Union[DealEnded, _Mapping]] = ..., fault: _Optional[_Union[Fault, _Mapping]] = ...) -> None: ...

class DealStarted(_message.Message):
    __slots__ = ("dealer", "pots")
    class PotsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DEALER_FIELD_NUMBER: _ClassVar[int]
    POTS_FIELD_NUMBER: _ClassVar[int]
    dealer: int
    pots: _containers.ScalarMap[str, int]
    def __init__(self, dealer: _Optional[int] = ..., pots: _Optional[_Mapping[str, int]] = ...) -> None: ...

class ActionTaken(_message.Message):
    __slots__ = ("seat", "action")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: Action
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class TrickCompleted(_message.Message):
    __slots__ = ("number", "winner")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    number: int
    winner: int
    def __init__(self, number: _Optional[int] = ..., winner: _Optional[int] = ...) -> None: ...

class DealEnded(_message.Message):
    __slots__ = ("annulled", "card_points", "deltas", "pots", "scores")
    class PotsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ANNULLED_FIELD_NUMBER: _ClassVar[int]
    CARD_POINTS_FIELD_NUMBER: _ClassVar[int]
    DELTAS_FIELD_NUMBER: _ClassVar[int]
    POTS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    annulled: bool
    card_points: _containers.RepeatedScalarFieldContainer[int]
    deltas: _containers.RepeatedScalarFieldContainer[int]
    pots: _containers.ScalarMap[str, int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, annulled: _Optional[bool] = ..., card_points: _Optional[_Iterable[int]] = ..., deltas: _Optional[_Iterable[int]] = ..., pots: _Optional[_Mapping[str, int]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "kind", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: str
    detail: str
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("scores", "termination", "replay", "reason")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    termination: str
    replay: str
    reason: str
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ..., replay: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("variant", "options", "deals", "seed", "time_control", "fault_policy", "seat_names", "max_invalid", "reconnect_grace_ms", "start_timeout_ms")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_INVALID_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    START_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    options: _containers.ScalarMap[str, str]
    deals: int
    seed: int
    time_control: TimeControl
    fault_policy: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    max_invalid: int
    reconnect_grace_ms: int
    start_timeout_ms: int
    def __init__(self, variant: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., deals: _Optional[int] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., fault_policy: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., max_invalid: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., start_timeout_ms: _Optional[int] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "seat_tokens")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "variant", "state", "seat_names", "deals_done", "deals", "scores")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    DEALS_DONE_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    variant: str
    state: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    deals_done: int
    deals: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_id: _Optional[str] = ..., variant: _Optional[str] = ..., state: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., deals_done: _Optional[int] = ..., deals: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("replay",)
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    replay: str
    def __init__(self, replay: _Optional[str] = ...) -> None: ...

class SpectateRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class RegisterBotRequest(_message.Message):
    __slots__ = ("name", "variants")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("bot", "token")
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot: BotInfo
    token: str
    def __init__(self, bot: _Optional[_Union[BotInfo, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class BotNameRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("name", "variants", "state", "reason", "paused_until_ms", "registered_ms", "connected")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PAUSED_UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_MS_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    name: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    state: str
    reason: str
    paused_until_ms: int
    registered_ms: int
    connected: bool
    def __init__(self, name: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., paused_until_ms: _Optional[int] = ..., registered_ms: _Optional[int] = ..., connected: _Optional[bool] = ...) -> None: ...

class GetStandingsRequest(_message.Message):
    __slots__ = ("variant", "recent")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    variant: str
    recent: int
    def __init__(self, variant: _Optional[str] = ..., recent: _Optional[int] = ...) -> None: ...

class GetStandingsResponse(_message.Message):
    __slots__ = ("standings",)
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    def __init__(self, standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("bot", "variant", "rating", "mu", "sigma", "matches", "deals", "mean_score_per_deal", "decisions", "faults", "fault_rate", "state", "recent", "hello_name", "hello_version", "hosted_version", "mean_adjusted_score_per_deal", "adjusted_deals")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FAULT_RATE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    HELLO_NAME_FIELD_NUMBER: _ClassVar[int]
    HELLO_VERSION_FIELD_NUMBER: _ClassVar[int]
    HOSTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    MEAN_ADJUSTED_SCORE_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    ADJUSTED_DEALS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    variant: str
    rating: float
    mu: float
    sigma: float
    matches: int
    deals: int
    mean_score_per_deal: float
    decisions: int
    faults: int
    fault_rate: float
    state: str
    recent: _containers.RepeatedCompositeFieldContainer[RecentMatch]
    hello_name: str
    hello_version: str
    hosted_version: int
    mean_adjusted_score_per_deal: float
    adjusted_deals: int
    def __init__(self, bot: _Optional[str] = ..., variant: _Optional[str] = ..., rating: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., matches: _Optional[int] = ..., deals: _Optional[int] = ..., mean_score_per_deal: _Optional[float] = ..., decisions: _Optional[int] = ..., faults: _Optional[int] = ..., fault_rate: _Optional[float] = ..., state: _Optional[str] = ..., recent: _Optional[_Iterable[_Union[RecentMatch, _Mapping]]] = ..., hello_name: _Optional[str] = ..., hello_version: _Optional[str] = ..., hosted_version: _Optional[int] = ..., mean_adjusted_score_per_deal: _Optional[float] = ..., adjusted_deals: _Optional[int] = ...) -> None: ...

class RecentMatch(_message.Message):
    __slots__ = ("match_id", "finished_ms", "seat", "seats", "scores", "termination", "replay", "adjusted_scores")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    ADJUSTED_SCORES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    finished_ms: int
    seat: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    scores: _containers.RepeatedScalarFieldContainer[int]
    termination: str
    replay: str
    adjusted_scores: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, match_id: _Optional[str] = ..., finished_ms: _Optional[int] = ..., seat: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., scores: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ..., replay: _Optional[str] = ..., adjusted_scores: _Optional[_Iterable[float]] = ...) -> None: ...

class LobbyJoin(_message.Message):
    __slots__ = ("variants", "max_matches", "bot_version", "protocol_version")
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    variants: _containers.RepeatedScalarFieldContainer[str]
    max_matches: int
    bot_version: str
    protocol_version: int
    def __init__(self, variants: _Optional[_Iterable[str]] = ..., max_matches: _Optional[int] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class LobbyMessage(_message.Message):
    __slots__ = ("welcome", "seated", "paused")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SEATED_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    seated: Seated
    paused: Paused
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., seated: _Optional[_Union[Seated, _Mapping]] = ..., paused: _Optional[_Union[Paused, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_name", "variants", "max_matches")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    max_matches: int
    def __init__(self, bot_name: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., max_matches: _Optional[int] = ...) -> None: ...

class Seated(_message.Message):
    __slots__ = ("match_id", "seat_token", "seat", "variant", "seat_names", "address")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_token: str
    seat: int
    variant: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    address: str
    def __init__(self, match_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., seat: _Optional[int] = ..., variant: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., address: _Optional[str] = ...) -> None: ...

class Paused(_message.Message):
    __slots__ = ("reason", "until_ms")
    REASON_FIELD_NUMBER: _ClassVar[int]
    UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    until_ms: int
    def __init__(self, reason: _Optional[str] = ..., until_ms: _Optional[int] = ...) -> None: ...

class SubmitVersionRequest(_message.Message):
    __slots__ = ("archive",)
    ARCHIVE_FIELD_NUMBER: _ClassVar[int]
    archive: bytes
    def __init__(self, archive: _Optional[bytes] = ...) -> None: ...

class BotVersion(_message.Message):
    __slots__ = ("bot", "version", "digest", "language", "state", "reason", "submitted_ms", "report")
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_MS_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    bot: str
    version: int
    digest: str
    language: str
    state: str
    reason: str
    submitted_ms: int
    report: str
    def __init__(self, bot: _Optional[str] = ..., version: _Optional[int] = ..., digest: _Optional[str] = ..., language: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., submitted_ms: _Optional[int] = ..., report: _Optional[str] = ...) -> None: ...

class SubmitVersionResponse(_message.Message):
    __slots__ = ("version", "created")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    version: BotVersion
    created: bool
    def __init__(self, version: _Optional[_Union[BotVersion, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class ListVersionsRequest(_message.Message):
    __slots__ = ("reports",)
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    reports: bool
    def __init__(self, reports: _Optional[bool] = ...) -> None: ...

class ListVersionsResponse(_message.Message):
    __slots__ = ("versions",)
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[BotVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[BotVersion, _Mapping]]] = ...) -> None: ...
