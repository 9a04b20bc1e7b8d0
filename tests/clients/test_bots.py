"""The Python SDK (clients/python): card helpers, the random and heuristic bots, the stream loop.

The SDK is imported from its source tree, as a bot author would after `pip install clients/python`.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from typing import Any, ClassVar, TypeVar

import grpc
import pytest
from arena_bot import (
    Bot,
    BotError,
    action_text,
    heuristic_bot,
    make_action,
    play_sequence,
    random_bot,
    run_bot,
)
from arena_bot import cards as C
from arena_bot.lobby import Lobby
from arena_bot.match import open_channel
from arena_bot.v1 import arena_pb2 as pb
from support import SDK, in_thread

from arena.engine import DealState, deck_for, find_variant, observation
from arena.protocol import action_from_message, legal_messages, view_message
from arena.v1 import arena_pb2 as server_pb

T = TypeVar("T")
Decide = Callable[[pb.DecisionRequest], pb.Action]


# --------------------------------------------------------------------------- cards


def test_card_codes_suits_numbers_points() -> None:
    assert len(C.ALL_CARDS) == 78 and len(set(C.ALL_CARDS)) == 78
    assert [C.suit(c) for c in ("SA", "HK", "D10", "CC", "T1", "T21", "EX")] == [
        "S",
        "H",
        "D",
        "C",
        "T",
        "T",
        "",
    ]
    assert [C.number(c) for c in ("SA", "H10", "DJ", "CC", "SQ", "HK", "T7", "EX")] == [
        1,
        10,
        11,
        12,
        13,
        14,
        7,
        0,
    ]
    assert sum(C.points(c) for c in C.ALL_CARDS) == 130  # G-CP-1
    assert C.pile_points(C.ALL_CARDS) == 78
    assert C.pile_points(["SQ", "SJ", "S7"]) == 4 + 2 + 1 - 2
    assert [c for c in C.ALL_CARDS if C.is_counting(c)].__len__() == 19
    with pytest.raises(ValueError):
        C.suit("S11")
    with pytest.raises(ValueError):
        C.number("T22")
    # The cards of each suit, in canonical order: the suits in the order of ALL_CARDS, the Fool last.
    assert [c for codes in C.CARDS_BY_SUIT.values() for c in codes] == list(C.ALL_CARDS)
    assert all(C.suit(c) == s for s, codes in C.CARDS_BY_SUIT.items() for c in codes)
    assert [len(codes) for codes in C.CARDS_BY_SUIT.values()] == [14, 14, 14, 14, 21, 1]


def test_trick_ranking_per_variant() -> None:
    red = ["HA", "H2", "H10", "HJ", "HK"]
    reversed_order = ["H10", "H2", "HA", "HJ", "HK"]
    straight_order = ["HA", "H2", "H10", "HJ", "HK"]
    for variant in ("grosstarock", "german-1754", "danish", "danish-pots"):
        assert sorted(red, key=lambda c: C.rank(variant, c)) == reversed_order
    assert sorted(red, key=lambda c: C.rank("danish-pots", c, {"red_pips": "straight"})) == straight_order
    assert sorted(red, key=lambda c: C.rank("american", c)) == straight_order
    black = ["SA", "S2", "S10", "SK"]
    assert sorted(black, key=lambda c: C.rank("grosstarock", c)) == black
    assert C.rank("danish", "T1") > C.rank("danish", "SK")
    assert C.red_pips_reversed("danish-pots", {"red_pips": "reversed"})


def test_led_suit_and_trick_winner() -> None:
    assert C.led_suit(["H3", "T2"]) == "H"
    assert C.led_suit(["EX", "S4"]) == "S"  # next_card
    assert C.led_suit(["EX"], designation="D") == "D"
    assert C.led_suit(["EX", "T5"], designation="D", redesignation="T") == "T"
    plays = [(0, "H3"), (1, "HA"), (2, "H9")]
    assert C.trick_winner("grosstarock", plays) == 1  # A high in red (reversed)
    assert C.trick_winner("danish-pots", plays, options={"red_pips": "straight"}) == 2
    assert C.trick_winner("grosstarock", [(0, "SK"), (1, "T1"), (2, "EX")]) == 1
    assert C.trick_winner("grosstarock", [(0, "EX"), (1, "C4"), (2, "C9")]) == 2
    assert C.trick_winner("grosstarock", [(0, "D4"), (1, "S9")]) == 0
    assert not C.beats("grosstarock", "EX", "S2", "S")


def test_action_text_forms() -> None:
    assert make_action("play EX s") == pb.Action(type="play", card="EX", suit="S")
    assert make_action("declare cavallerie H") == pb.Action(type="declare", name="cavallerie", suit="H")
    assert make_action("pass") == pb.Action(type="pass")
    assert action_text(pb.Action(type="play", card="EX", suit="S")) == "play EX S"
    action = pb.Action(type="call", card="HK")
    assert make_action(action) is action
    with pytest.raises(ValueError):
        make_action("play SK H extra")
    with pytest.raises(TypeError):
        make_action(42)


# --------------------------------------------------------------------------- hand-built requests


def A(text: str) -> pb.Action:
    return make_action(text)


def request(
    hand: Sequence[str],
    legal: Sequence[str] | None = None,
    *,
    variant: str = "grosstarock",
    phase: str = "play",
    trick: Sequence[tuple[int, str]] = (),
    tricks: Sequence[Sequence[tuple[int, str]]] = (),
    trick_number: int | None = None,
    seat: int = 0,
    dealer: int = 2,
    options: dict[str, str] | None = None,
) -> pb.DecisionRequest:
    """A request for `seat` at a three-seat table; `tricks` are completed tricks (the winner is
    not needed by the bot and is set to their leader)."""
    order = [0, 1, 2]
    number = trick_number if trick_number is not None else len(tricks) + 1
    done = {s for s, _ in trick}
    sizes = [len(hand) + (1 if s in done and s != seat else 0) for s in order]
    view = pb.View(
        variant=variant,
        seat=seat,
        dealer=dealer,
        forehand=0,
        order=order,
        phase=phase,
        to_act=seat,
        trick_number=number if phase == "play" else 0,
        hand=list(hand),
        hand_sizes=sizes,
        tricks_won=[0, 0, 0],
        options=options or {},
        sitting_out=-1,
    )
    for i, plays in enumerate(tricks):
        view.tricks.append(
            pb.Trick(
                number=i + 1,
                leader=plays[0][0],
                winner=plays[0][0],
                cards=[pb.Play(seat=s, card=c) for s, c in plays],
            )
        )
    view.trick.number = number
    view.trick.winner = -1
    view.trick.leader = trick[0][0] if trick else seat
    view.trick.cards.extend(pb.Play(seat=s, card=c) for s, c in trick)
    if legal is None:
        legal = [f"play {c}" for c in hand]
    return pb.DecisionRequest(
        request_id=1, view=view, legal_actions=[A(t) for t in legal], time_limit_ms=1000
    )


def choose(req: pb.DecisionRequest) -> str:
    before = req.SerializeToString()
    chosen = heuristic_bot.decide(req)
    assert chosen in req.legal_actions
    assert req.SerializeToString() == before  # the request is not touched
    assert heuristic_bot.decide(req) == chosen  # a pure function
    return action_text(chosen)


PIPS = ["S2", "S3", "S4", "H5", "H6", "D7", "D8", "C9", "C10", "S5", "S6", "C2", "C3", "C4", "C5"]


def test_discards_low_blanks_never_a_king() -> None:
    hand = ["SK", "HK", "SQ", "HJ", "S2", "S3", "H9", "C5", "C6", "C7", "C8", "T5", "T9", *PIPS[3:8]]
    # Kings offered only to check the preference (the engine never offers them).
    legal = [
        "discard SK",
        "discard HK",
        "discard SQ",
        "discard HJ",
        "discard S2",
        "discard H9",
        "discard C5",
        "discard T5",
    ]
    chosen = choose(request(hand, legal, phase="discard", dealer=0))
    assert chosen in ("discard S2", "discard H9", "discard C5")
    assert (
        choose(request(hand, ["discard SK", "discard HK", "discard SQ"], phase="discard", dealer=0))
        == "discard SQ"
    )


def test_declares_everything_and_passes_on_announcements_and_rounds() -> None:
    hand = PIPS[:10]
    declare = ["declare taroks", "declare cavallerie S", "pass"]
    assert choose(request(hand, declare, phase="declare")) == "declare taroks"
    assert choose(request(hand, ["declare cavallerie S", "pass"], phase="declare")) == "declare cavallerie S"
    assert choose(request(hand, ["announce vole", "announce nolo", "pass"], phase="announce")) == "pass"
    assert choose(request(hand, ["redeal", "pass"], variant="danish", phase="redeal")) == "pass"
    assert choose(request(hand, ["demand", "pass"], variant="danish", phase="demand")) == "pass"
    assert choose(request(hand, ["bid rufer", "bid solo"], variant="american", phase="bid")) == "bid rufer"


def test_keeps_the_pagat_home_while_it_has_other_legal_taroks() -> None:
    hand = ["T1", "T4", "T9", "S3", "H5"]
    assert (
        choose(request(hand, ["play T1", "play T4", "play T9"], trick=[(2, "T15")], trick_number=10))
        != "play T1"
    )
    # Void in the suit led: trump, but not with the Pagat.
    assert choose(
        request(hand, ["play T1", "play T4", "play T9"], trick=[(1, "C3"), (2, "C7")], trick_number=10)
    ) in (
        "play T4",
        "play T9",
    )
    for t in (5, 12, 20, 24):
        req = request(["T1", "T3"], ["play T1", "play T3"], trick=[(2, "T8")], trick_number=t)
        assert choose(req) == "play T3"
    assert choose(request(["T1"], ["play T1"], trick=[(2, "T8")], trick_number=25)) == "play T1"


def test_draws_the_taroks_of_the_others_for_the_pagat_ultimo() -> None:
    # Taroks T2…T16 are out; the others hold at most T21: lead a tarok, never the Pagat.
    tricks = [
        [
            (1, f"T{2 + i}"),
            (2, f"S{2 + i}" if i < 9 else f"C{i - 7}"),
            (0, f"D{2 + i}" if i < 9 else f"H{i - 7}"),
        ]
        for i in range(14)
    ]
    tricks.append([(1, "T16"), (2, "SK"), (0, "SQ")])
    hand = ["T1", "T17", "T18", "T19", "T20", "C8", "C9", "C10", "CJ", "CQ"]
    chosen = choose(request(hand, tricks=tricks))
    assert chosen.startswith("play T") and chosen != "play T1"


def test_throws_its_lowest_blank_when_void_never_a_king() -> None:
    hand = ["SK", "HK", "HQ", "D9", "D2", "S3"]
    chosen = choose(request(hand, trick=[(1, "C3"), (2, "C7")]))
    assert chosen == "play D9"  # the lowest red pip (reversed), not a King nor a court
    assert choose(request(hand, trick=[(2, "C7")])) == "play D9"


def test_plays_a_king_when_it_wins() -> None:
    # Last to play and the King wins.
    assert (
        choose(request(["SK", "S2", "H4"], ["play SK", "play S2"], trick=[(1, "S5"), (2, "S9")])) == "play SK"
    )
    # Last to play, trumped already: keep the King.
    assert (
        choose(request(["SK", "S2", "H4"], ["play SK", "play S2"], trick=[(1, "S5"), (2, "T3")])) == "play S2"
    )
    # Second to play early in the deal: the third is very likely to follow.
    req = request(["SK", "S2", "H4", *PIPS[3:10]], ["play SK", "play S2"], trick=[(2, "S5")], trick_number=1)
    assert choose(req) == "play SK"
    # Second to play, but the third player is known to be void in spades (he trumped them before).
    tricks = [[(0, "S3"), (1, "T2"), (2, "S4")]]
    req = request(["SK", "S2", "H4", *PIPS[3:10]], ["play SK", "play S2"], trick=[(2, "S5")], tricks=tricks)
    assert choose(req) == "play S2"


def test_leads_a_king_only_when_nobody_is_likely_to_trump_it() -> None:
    others = [f"{s}{n}" for s in "HD" for n in range(2, 11)] + [f"C{n}" for n in range(2, 7)]
    hand = ["SK", "S2", *others]  # 25 cards at trick 1: nobody is likely to be void in spades
    assert choose(request(hand, trick_number=1)) == "play SK"
    tricks = [[(0, "S3"), (1, "T2"), (2, "S4")]]  # seat 1 trumped a spade
    assert choose(request(hand[:-1], tricks=tricks)) != "play SK"


def test_trumps_low() -> None:
    hand = ["T1", "T3", "T10", "T18", "C5"]
    legal = ["play T1", "play T3", "play T10", "play T18"]
    assert choose(request(hand, legal, trick=[(1, "H4"), (2, "H9")])) == "play T3"
    assert choose(request(hand, legal, trick=[(2, "H9")])) == "play T3"


def test_plays_the_fool_into_a_lost_trick_while_it_is_retained() -> None:
    hand = ["HQ", "HC", "EX", "S2"]
    legal = ["play HQ", "play HC", "play EX"]
    lost = [(1, "H7"), (2, "T20")]
    assert choose(request(hand, legal, trick=lost, trick_number=8)) == "play EX"
    assert choose(request(hand, legal, trick=lost, trick_number=8, variant="danish")) == "play EX"
    # grosstarock 23–25 and danish 25: the Fool would be captured; give the cheaper court instead.
    assert choose(request(hand, legal, trick=lost, trick_number=23)) == "play HC"
    # The last trick in which it is retained: play it rather than lose it later.
    assert choose(
        request(["S2", "EX", "H3", "C4"], ["play S2", "play EX"], trick=[(2, "S9")], trick_number=22)
    ) == ("play EX")
    # Not into a trick it can win cheaply as the last player.
    assert choose(request(hand, legal, trick=[(1, "H7"), (2, "H9")], trick_number=8)) != "play EX"


# --------------------------------------------------------------------------- full deals with the engine


def wire(message: Any, cls: Any) -> Any:
    """A server-side message as the bot receives it (through its bytes)."""
    return cls.FromString(message.SerializeToString())


def play_deal(
    name: str, options: dict[str, str], deck_index: int, dealer: int, policies: Sequence[Decide]
) -> Any:
    """One deal: every decision goes observation() → view_message → decide → action_from_message."""
    variant = find_variant(name, options)
    state = DealState(variant, dealer, deck_for(2024, deck_index), pots={p: 60 for p in variant.pot_names})
    request_id = 0
    while not state.is_terminal():
        seat = state.turn
        assert seat is not None
        req = pb.DecisionRequest(
            request_id=request_id,
            view=wire(view_message(observation(state, seat)), pb.View),
            legal_actions=[wire(m, pb.Action) for m in legal_messages(state.legal_actions())],
            time_limit_ms=1000,
        )
        request_id += 1
        action = policies[seat](req)
        state.apply(action_from_message(wire(action, server_pb.Action)))  # illegal → IllegalActionError
    return state


STRENGTH = [
    # (variant, options, decks, required margin in game points per deal). Margins measured with
    # these deck counts over 11 deck seeds (min / mean / max): grosstarock 99 / 104 / 107,
    # danish 39 / 51 / 68, danish-pots 33 / 49 / 60, german-1754 (4 seats) 12 / 19 / 21.
    ("grosstarock", {}, 30, 50.0),
    ("danish", {}, 40, 25.0),
    ("danish-pots", {}, 30, 20.0),
    ("german-1754", {"players": "4"}, 20, 8.0),
]


@pytest.mark.parametrize(("name", "options", "decks", "margin"), STRENGTH)
def test_heuristic_beats_random_in_duplicate(
    name: str, options: dict[str, str], decks: int, margin: float
) -> None:
    """Each deck is played once per seat with the heuristic in that seat and random bots in the others."""
    variant = find_variant(name, options)
    heuristic: list[int] = []
    randoms: list[int] = []
    discards: list[str] = []

    def recording(req: pb.DecisionRequest) -> pb.Action:
        action = heuristic_bot.decide(req)
        if action.type == "discard":
            discards.append(action.card)
        return action

    for k in range(decks):
        dealer = k % variant.seats
        for seat in range(variant.seats):
            if variant.seats == 4 and seat == (dealer + 2) % 4:
                continue  # sitting out
            rng = random_bot.RandomBot(f"{name}:{k}:{seat}")
            policies = [recording if s == seat else rng.decide for s in range(variant.seats)]
            state = play_deal(name, options, k, dealer, policies)
            deltas = state.result().deltas
            heuristic.append(deltas[seat])
            randoms.extend(deltas[s] for s in state.order if s != seat)
    h = sum(heuristic) / len(heuristic)
    r = sum(randoms) / len(randoms)
    assert h - r > margin, f"{name}: heuristic {h:.1f}, random {r:.1f} per deal"
    assert discards and not any(C.is_king(c) for c in discards)


def test_random_bot_is_legal_and_seeded_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    req = request(["S2", "S3", "S4", "S5", "S6"])
    monkeypatch.setenv("ARENA_BOT_SEED", "17")
    first = importlib.reload(random_bot)
    picks = [action_text(first.decide(req)) for _ in range(20)]
    second = importlib.reload(random_bot)
    assert [action_text(second.decide(req)) for _ in range(20)] == picks
    assert len(set(picks)) > 1
    monkeypatch.delenv("ARENA_BOT_SEED")
    importlib.reload(random_bot)


# --------------------------------------------------------------------------- the stream loop


def out(**fields: Any) -> bytes:
    return pb.ServerMessage(**fields).SerializeToString()


UNKNOWN_FIELD = b"\x7a\x00"  # field 15, length 0: what a later minor version might add


class Scripted:
    """A real gRPC server on a free local port whose BotService.Play runs `script(call_index, ...)`."""

    def __init__(
        self, script: Callable[[int, Iterator[pb.BotMessage], grpc.ServicerContext], Iterator[bytes]]
    ):
        self.script = script
        self.calls: list[dict[str, str]] = []
        self.peers: list[str] = []  # by call: the client's address and port, one per connection
        self.received: list[pb.BotMessage] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.method_handlers_generic_handler(
            "grosstarock.arena.v1.BotService",
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play, request_deserializer=pb.BotMessage.FromString, response_serializer=lambda b: b
                )
            },
        )
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.address = f"127.0.0.1:{self.port}"

    def _play(self, requests: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        index = len(self.calls)
        self.calls.append(dict(context.invocation_metadata()))  # type: ignore[arg-type]
        self.peers.append(context.peer())

        def recording() -> Iterator[pb.BotMessage]:
            for message in requests:
                self.received.append(message)
                yield message

        yield from self.script(index, recording(), context)

    def stop(self) -> None:
        self.server.stop(0)


@pytest.fixture
def serve() -> Iterator[Callable[..., Scripted]]:
    servers: list[Scripted] = []

    def start(script: Any) -> Scripted:
        servers.append(Scripted(script))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()



def engine_request(request_id: int) -> pb.DecisionRequest:
    """A real first decision of a grosstarock deal (the dealer's discard)."""
    state = DealState(find_variant("grosstarock"), 0, deck_for(1, 0))
    return pb.DecisionRequest(
        request_id=request_id,
        deal=0,
        view=wire(view_message(observation(state, 0)), pb.View),
        legal_actions=[wire(m, pb.Action) for m in legal_messages(state.legal_actions())],
        time_limit_ms=5000,
        bank_ms=10000,
    )


START = {"match_id": "m1", "variant": "grosstarock", "seat": 0, "seat_names": ["a", "b", "c"], "deals": 3}


def test_conversation_with_rejection_and_retry(serve: Callable[..., Scripted]) -> None:
    req = engine_request(7)
    with_events = pb.DecisionRequest()
    with_events.CopyFrom(req)
    with_events.events.append(pb.Event(deal=0, deal_started=pb.DealStarted(dealer=0)))
    legal = list(req.legal_actions)
    replies: list[pb.ActionReply] = []

    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        hello = next(bot)
        assert hello.WhichOneof("kind") == "hello"
        yield out(match_start=pb.MatchStart(**START))
        yield UNKNOWN_FIELD  # an unknown oneof case
        yield out(request=with_events) + UNKNOWN_FIELD  # and an unknown field
        replies.append(next(bot).action)
        yield out(rejected=pb.ActionRejected(request_id=7, reason="no", rule="DUM-DISC-2", time_left_ms=900))
        replies.append(next(bot).action)
        taken = pb.Event(deal=0, action_taken=pb.ActionTaken(seat=0, action=pb.Action(type="discard")))
        yield out(events=pb.EventBatch(events=[taken, pb.Event(deal=0, trick_completed=pb.TrickCompleted())]))
        yield out(match_end=pb.MatchEnd(scores=[5, -2, -3], termination="completed", replay="m1.jsonl"))

    server = serve(script)
    calls: list[pb.DecisionRequest] = []

    def decide(request: pb.DecisionRequest) -> pb.Action | str:
        calls.append(request)
        return "play SK" if len(calls) == 1 else request.legal_actions[-1]  # a bad first answer

    result = in_thread(
        lambda: run_bot(decide, address=server.address, token="s3cret", name="t", version="9")
    , "run_bot")
    assert server.calls[0]["authorization"] == "Bearer s3cret"
    hello = server.received[0].hello
    assert (hello.bot_name, hello.bot_version, hello.protocol_version) == ("t", "9", 1)
    assert [r.request_id for r in replies] == [7, 7]
    assert replies[0].action == pb.Action(type="play", card="SK") and replies[1].action == legal[-1]
    assert len(calls) == 2 and calls[0] == calls[1] == with_events
    assert calls[0].time_limit_ms == 5000 and calls[0].view.hand and calls[0].legal_actions == legal
    assert result.scores == [5, -2, -3] and result.termination == "completed" and result.replay == "m1.jsonl"
    assert result.seat == 0 and result.my_score == 5 and result.match_start is not None
    kinds = [e.WhichOneof("kind") for e in result.events]
    assert kinds == ["deal_started", "action_taken", "trick_completed"]
    assert [r.rule for r in result.rejections] == ["DUM-DISC-2"]
    assert result.decisions == 2 and result.reconnects == 0


def test_repeated_rejections_fall_back_to_the_legal_actions(serve: Callable[..., Scripted]) -> None:
    req = engine_request(3)
    sent: list[pb.Action] = []

    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        yield out(match_start=pb.MatchStart(**START))
        yield out(request=req)
        for _ in range(4):
            sent.append(next(bot).action.action)
            yield out(rejected=pb.ActionRejected(request_id=3, reason="no", rule="X"))
        sent.append(next(bot).action.action)
        yield out(match_end=pb.MatchEnd(scores=[0, 0, 0], termination="completed"))

    server = serve(script)
    result = in_thread(lambda: run_bot(lambda r: "pass", address=server.address, token="t"), "run_bot")
    assert sent[0] == pb.Action(type="pass")
    assert sent[1:] == list(req.legal_actions)[:4]  # never the same answer twice
    assert result.decisions == 5 and len(result.rejections) == 4


def test_reconnects_after_a_broken_stream_and_answers_the_resent_request(
    serve: Callable[..., Scripted],
) -> None:
    req = engine_request(1)
    seen: list[tuple[int, int]] = []

    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        yield out(match_start=pb.MatchStart(**START))
        yield out(request=req)
        if index == 0:
            context.abort(grpc.StatusCode.UNAVAILABLE, "server restarting")
        if index == 1:
            return  # closed without MatchEnd: also a broken stream
        reply = next(bot).action
        seen.append((index, reply.request_id))
        yield out(match_end=pb.MatchEnd(scores=[1, 1, -2], termination="completed"))

    server = serve(script)
    decisions: list[int] = []

    def decide(request: pb.DecisionRequest) -> pb.Action:
        decisions.append(request.request_id)
        return heuristic_bot.decide(request)

    result = in_thread(
        lambda: run_bot(decide, address=server.address, token="tok", reconnect_seconds=10), "run_bot"
    )
    assert [c["authorization"] for c in server.calls] == ["Bearer tok"] * 3
    assert seen == [(2, 1)]
    assert decisions == [1, 1, 1] and result.reconnects == 2
    assert result.scores == [1, 1, -2]


def test_a_sequence_of_matches_keeps_its_connection_until_a_stream_breaks(
    serve: Callable[..., Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`play_sequence` (a ladder's persistent process) plays its matches on one connection; a
    broken stream is dialled again on a new one, which the next matches keep."""
    req = engine_request(2)

    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        yield out(match_start=pb.MatchStart(**START))
        yield out(request=req)
        if index == 1:  # the second match's first stream
            context.abort(grpc.StatusCode.UNAVAILABLE, "server restarting")
        next(bot)
        yield out(match_end=pb.MatchEnd(scores=[index, 0, 0], termination="completed"))

    server = serve(script)
    for name in ("ARENA_ADDRESS", "ARENA_TOKEN"):  # play_sequence sets them: restored after the test
        monkeypatch.setenv(name, "")
    lines = [json.dumps({"ARENA_ADDRESS": server.address, "ARENA_TOKEN": f"match-{n}"}) for n in (1, 2, 3)]
    results = in_thread(lambda: play_sequence(lambda r: r.legal_actions[0], lines, name="seq"), "run_bot")
    tokens = [c["authorization"] for c in server.calls]
    assert tokens == ["Bearer match-1", "Bearer match-2", "Bearer match-2", "Bearer match-3"]
    peers = server.peers
    assert peers[0] == peers[1], "the second match dials no new connection"
    assert peers[2] != peers[1], "a broken stream is dialled again on a new connection"
    assert peers[3] == peers[2], "which the next match keeps"
    assert [r.scores[0] for r in results] == [0, 2, 3] and [r.reconnects for r in results] == [0, 1, 0]


def _ends_at_once(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
    next(bot)
    yield out(match_end=pb.MatchEnd(scores=[index, 0, 0], termination="completed"))


def _say_hello(channel: grpc.Channel) -> pb.ServerMessage:
    """A `Play` stream on `channel` that says Hello; the one message the server answers."""
    play = channel.stream_stream(
        "/grosstarock.arena.v1.BotService/Play",
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ServerMessage.FromString,
    )
    [answer] = list(play(iter([pb.BotMessage(hello=pb.Hello(bot_name="b"))]), timeout=10))
    return answer


def test_every_channel_the_sdk_opens_has_a_connection_of_its_own(serve: Callable[..., Scripted]) -> None:
    """Live channels to one address, two from `open_channel` and the balanced channels of two
    lobbies: without a subchannel pool of their own, gRPC's core would carry them on one
    connection, and a bot dialling again after a broken stream would get the old connection back."""
    server = serve(_ends_at_once)
    lobbies = [Lobby(random_bot.decide, address=[server.address] * 2, bot_token="t") for _ in range(2)]
    channels = [open_channel(server.address) for _ in range(2)]
    channels += [lobby._lobby_channel() for lobby in lobbies]
    try:
        for channel in channels:  # all stay open: each is dialled while the others live
            assert _say_hello(channel).WhichOneof("kind") == "match_end"
    finally:
        for channel in channels:
            channel.close()
    assert len(server.peers) == 4 and len(set(server.peers)) == 4, server.peers


def test_a_lobby_s_first_join_goes_to_the_first_of_its_shuffled_addresses(
    serve: Callable[..., Scripted],
) -> None:
    """Bots given the same servers spread over them: each lobby's first join goes to the first
    address of its own shuffled list, not where `round_robin` would send a new channel's first
    call (the server it reached first, the same one for most bots that start together); the later
    joins share the balanced channel."""
    servers = [serve(_ends_at_once) for _ in range(2)]
    by_address = {server.address: server for server in servers}
    for _ in range(8):
        lobby = Lobby(random_bot.decide, address=list(by_address), bot_token="t")
        first = lobby._lobby_channel()
        called = {address: len(server.calls) for address, server in by_address.items()}
        try:
            _say_hello(first)
        finally:
            first.close()
        reached = [a for a, server in by_address.items() if len(server.calls) > called[a]]
        assert reached == [lobby.addresses[0]], (reached, lobby.addresses)
        lobby.result.joins = 1  # a join was made: the next ones balance over both servers
        assert lobby._lobby_channel() is lobby._channel is not None
        lobby._channel.close()


@pytest.mark.parametrize(
    "code",
    [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT],
)
def test_authentication_and_protocol_errors_are_final(
    serve: Callable[..., Scripted], code: grpc.StatusCode
) -> None:
    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        context.abort(code, "bad token")
        yield b""  # pragma: no cover

    server = serve(script)
    with pytest.raises(BotError, match="bad token") as info:
        in_thread(lambda: run_bot(lambda r: r.legal_actions[0], address=server.address, token="x"), "run_bot")
    assert info.value.code == code
    assert len(server.calls) == 1


def test_gives_up_after_the_reconnection_window() -> None:
    with pytest.raises(BotError, match="no stream"):
        in_thread(
            lambda: run_bot(
                lambda r: r.legal_actions[0], address="127.0.0.1:1", token="x", reconnect_seconds=0.5
            )
        , "run_bot")


def test_address_and_token_come_from_the_environment(
    serve: Callable[..., Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        yield out(match_end=pb.MatchEnd(scores=[0, 0, 0], termination="aborted"))

    server = serve(script)
    monkeypatch.setenv("ARENA_ADDRESS", server.address)
    monkeypatch.setenv("ARENA_TOKEN", "from-env")

    class Quiet(Bot):
        name = "quiet"
        ended: ClassVar[list[str]] = []

        def decide(self, request: pb.DecisionRequest) -> pb.Action:
            return request.legal_actions[0]

        def on_match_end(self, end: pb.MatchEnd) -> None:
            self.ended.append(end.termination)

    bot = Quiet()
    result = in_thread(bot.run, "run_bot")
    assert result.termination == "aborted" and bot.ended == ["aborted"]
    assert server.calls[0]["authorization"] == "Bearer from-env"
    assert server.received[0].hello.bot_name == "quiet"
    monkeypatch.delenv("ARENA_ADDRESS")
    with pytest.raises(BotError, match="ARENA_ADDRESS"):
        run_bot(lambda r: r.legal_actions[0])


@pytest.mark.parametrize("module", ["arena_bot.heuristic_bot", "arena_bot.random_bot"])
def test_the_bots_run_as_modules_the_way_arena_play_launches_them(
    serve: Callable[..., Scripted], module: str
) -> None:
    req = engine_request(4)
    answers: list[pb.ActionReply] = []

    def script(index: int, bot: Iterator[pb.BotMessage], context: grpc.ServicerContext) -> Iterator[bytes]:
        next(bot)
        yield out(match_start=pb.MatchStart(**START))
        yield out(request=req)
        answers.append(next(bot).action)
        yield out(match_end=pb.MatchEnd(scores=[2, -1, -1], termination="completed"))

    server = serve(script)
    env = {**os.environ, "ARENA_ADDRESS": server.address, "ARENA_TOKEN": "seat-0", "PYTHONPATH": str(SDK)}
    done = subprocess.run([sys.executable, "-m", module], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "completed" in done.stderr
    assert len(answers) == 1 and answers[0].request_id == 4 and answers[0].action in req.legal_actions
