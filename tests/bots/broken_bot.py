"""A bot with one deliberate flaw, for the conformance kit's tests; otherwise a random legal bot.

Environment: ARENA_ADDRESS, ARENA_TOKEN (as every launcher gives them), and BROKEN, one of:
  double-ids        keeps request ids in a float, as a careless JSON client would: ids above
                    2**53 come back as another number
  ignore-follow     plays a card of another suit while holding the suit led, then corrects
                    itself after the rejection
  no-reconnect      exits when its stream breaks instead of dialling again
  crash-on-unknown  exits on a message of a kind it does not know
  slow:PHASE        sleeps 1.5 s before answering any request in PHASE (e.g. redeal)
  none              no flaw
"""

from __future__ import annotations

import os
import queue
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

flaw, _, argument = os.environ.get("BROKEN", "none").partition(":")
rng = random.Random(os.environ.get("ARENA_TOKEN", ""))
SUITS = "SHDC"


def led_suit(view: pb.View) -> str:
    """The plain suit to follow in the trick in progress, or "" (nothing led, taroks, the Fool)."""
    cards = [p.card for p in view.trick.cards]
    if view.trick.redesignation or view.trick.designation:
        return view.trick.redesignation or view.trick.designation
    if cards and cards[0] == "EX":
        cards = cards[1:]
    return cards[0][0] if cards and cards[0][0] in SUITS else ""


def choose(request: pb.DecisionRequest) -> pb.Action:
    legal = list(request.legal_actions)
    if flaw == "ignore-follow" and request.view.phase == "play":
        led = led_suit(request.view)
        hand = list(request.view.hand)
        others = [c for c in hand if c != "EX" and c[0] != led]
        if led in SUITS and any(c[0] == led for c in hand) and others:
            return pb.Action(type="play", card=others[0])
    return rng.choice(legal)


def session() -> str:
    """One stream: "end" at MatchEnd, "again" to dial again."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    def send(request_id: int, action: pb.Action) -> None:
        if flaw == "double-ids":
            request_id = int(float(request_id))
        outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action)))

    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    stream = pb_grpc.BotServiceStub(channel).Play(
        outgoing(), metadata=[("authorization", f"Bearer {os.environ['ARENA_TOKEN']}")]
    )
    outbox.put(pb.BotMessage(hello=pb.Hello(bot_name=f"broken-{flaw}", protocol_version=1)))
    pending: pb.DecisionRequest | None = None
    try:
        for message in stream:
            kind = message.WhichOneof("kind")
            if kind is None and flaw == "crash-on-unknown":
                raise SystemExit("a message of an unknown kind")
            if kind == "match_end":
                return "end"
            if kind == "request":
                pending = message.request
                if flaw == "slow" and pending.view.phase == argument:
                    time.sleep(1.5)
                send(pending.request_id, choose(pending))
            elif kind == "rejected" and pending and message.rejected.request_id == pending.request_id:
                send(pending.request_id, rng.choice(list(pending.legal_actions)))
    except grpc.RpcError as error:
        if flaw == "no-reconnect":
            raise SystemExit(f"stream broken ({error.code()}); not dialling again") from None
        if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.ABORTED):
            return "again"
        print(f"stream ended: {error.code()} {error.details()}", file=sys.stderr)
        return "end"
    finally:
        outbox.put(None)
        channel.close()
    return "again"  # closed without MatchEnd


while session() == "again":
    time.sleep(0.1)
