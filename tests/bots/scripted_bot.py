"""A bot for the server's end-to-end tests, misbehaving on purpose when asked.

Environment: ARENA_ADDRESS, ARENA_TOKEN (as `arena play` gives every bot), and
BEHAVIOUR, a comma-separated list of:
  random            answer with a random legal action (always, unless below)
  illegal           answer every request with an illegal action first
  illegal-always    only ever answer illegally
  sleep:N           sleep 2 s before answering request number N (from 1)
  exit:N            exit with status 3 on request N
  reconnect:N       drop the stream on request N, reconnect, answer the re-sent request
  oversize:N        send a 100 KB message on request N, then reconnect
  record:PATH       write every message received as a JSON line to PATH
  foreign           answer with another request's id (that of the next request)
  illegal-at:N      answer request N illegally first, then legally
  name:NAME         the Hello's bot_name (default "scripted")
  versions:A/B/...  the Hello's bot_version in each session (the last for the rest; default "")
  protocol:N        the Hello's protocol_version (default 1)
"""

from __future__ import annotations

import json
import os
import queue
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
from google.protobuf.json_format import MessageToDict

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

behaviour: dict[str, str] = {}
for part in os.environ.get("BEHAVIOUR", "random").split(","):
    key, _, value = part.partition(":")
    behaviour[key] = value
rng = random.Random(os.environ.get("ARENA_TOKEN", ""))
record = open(behaviour["record"], "a") if "record" in behaviour else None  # noqa: SIM115
requests_seen = 0
sessions = 0
versions = behaviour.get("versions", "").split("/")


def at(key: str) -> bool:
    return key in behaviour and int(behaviour[key]) == requests_seen


def illegal_action(request: pb.DecisionRequest) -> pb.Action:
    held = set(request.view.hand)
    missing = next(code for code in ("EX", "T21", "SK", "HA", "D5", "C10", "T2") if code not in held)
    return pb.Action(type="play", card=missing)


def session() -> str:
    """One stream; returns "end" at MatchEnd or "again" to reconnect."""
    global requests_seen
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    stream = pb_grpc.BotServiceStub(channel).Play(
        outgoing(), metadata=[("authorization", f"Bearer {os.environ['ARENA_TOKEN']}")]
    )
    hello = pb.Hello(
        bot_name=behaviour.get("name", "scripted"),
        bot_version=versions[min(sessions, len(versions) - 1)],
        protocol_version=int(behaviour.get("protocol", "1")),
    )
    outbox.put(pb.BotMessage(hello=hello))
    try:
        for message in stream:
            if record is not None:
                record.write(json.dumps(MessageToDict(message)) + "\n")
                record.flush()
            kind = message.WhichOneof("kind")
            if kind == "match_end":
                return "end"
            if kind == "rejected" and "illegal-always" in behaviour:
                outbox.put(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            request_id=message.rejected.request_id, action=pb.Action(type="pass", card="XX")
                        )
                    )
                )
            if kind != "request":
                continue
            request = message.request
            requests_seen += 1
            if at("exit"):
                os._exit(3)
            if at("reconnect"):
                stream.cancel()
                return "again"
            if at("oversize"):
                huge = pb.Action(type="play", name="x" * 100_000)
                outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=huge)))
                continue
            if at("sleep"):
                time.sleep(2)
            if "illegal" in behaviour or "illegal-always" in behaviour or at("illegal-at"):
                outbox.put(
                    pb.BotMessage(
                        action=pb.ActionReply(request_id=request.request_id, action=illegal_action(request))
                    )
                )
            if "foreign" in behaviour:
                action = rng.choice(list(request.legal_actions))
                reply = pb.ActionReply(request_id=request.request_id + 1, action=action)
                outbox.put(pb.BotMessage(action=reply))
                continue
            if "illegal-always" not in behaviour:
                action = rng.choice(list(request.legal_actions))
                outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=action)))
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.CANCELLED or error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return "again"
        print(f"stream ended: {error.code()} {error.details()}", file=sys.stderr)
        return "end"
    finally:
        outbox.put(None)
        channel.close()
    return "end"


while session() == "again":
    sessions += 1
    behaviour.pop("reconnect", None)
    behaviour.pop("oversize", None)
    time.sleep(0.1)
