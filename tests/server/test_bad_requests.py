"""Bad input on the wire, through a real server on a real port: bytes that are no message on
every method of every service (INVALID_ARGUMENT naming the message type), garbage on a bot
stream after its Hello (the seat's protocol fault), and which token error a call made."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from support import wait_for
from support.server import config

from arena.live import Hub
from arena.server.app import serve
from arena.v1 import arena_pb2 as pb

OPERATOR = "operator-secret"
# Each is no protobuf message: a tag of field 0, a truncated length-delimited field, an unended varint.
GARBAGE = [b"\x00", b"\x0a\xff", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"]


class Server:
    """`serve` on a thread of its own with its own trio run (no store), until the `with` ends."""

    def __init__(self, replay_dir: Path) -> None:
        self.replay_dir = replay_dir
        self.hub: Hub | None = None
        self.port = 0
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope = trio.CancelScope()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)

    async def _main(self) -> None:
        with self._scope:
            async with trio.open_nursery() as nursery:
                start = lambda task_status: serve(  # noqa: E731
                    "127.0.0.1", 0, self.replay_dir, operator_token=OPERATOR, task_status=task_status
                )
                self.hub, self.port = await nursery.start(start)
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()

    def run(self, fn: Callable[[], Any]) -> Any:
        """`fn()` on the server's trio thread."""
        assert self._token is not None
        return trio.from_thread.run_sync(fn, trio_token=self._token)

    def __enter__(self) -> Server:
        self._thread.start()
        assert self._ready.wait(30), "the server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            self._token.run_sync_soon(self._scope.cancel)
        self._thread.join(30)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path / "replays") as running:
        yield running


def every_method() -> list[tuple[str, str, bool, bool]]:
    """(path, request type, client streaming, server streaming) of every method the server answers."""
    services = [
        pb.DESCRIPTOR.services_by_name[name] for name in ("BotService", "AdminService", "LobbyService")
    ]
    services.append(health_pb2.DESCRIPTOR.services_by_name["Health"])
    services.append(reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"])
    return [
        (f"/{s.full_name}/{m.name}", m.input_type.full_name, m.client_streaming, m.server_streaming)
        for s in services
        for m in s.methods
    ]


def call_raw(channel: grpc.Channel, path: str, data: bytes, streaming: tuple[bool, bool], **kw: Any) -> Any:
    """Send `data` as the request bytes of `path` (no serializer); the first reply's bytes."""
    client_streaming, server_streaming = streaming
    if client_streaming:
        call = channel.stream_stream(path) if server_streaming else channel.stream_unary(path)
        replies = call(iter([data]), timeout=10, **kw)
    else:
        call = channel.unary_stream(path) if server_streaming else channel.unary_unary(path)
        replies = call(data, timeout=10, **kw)
    return next(iter(replies)) if server_streaming else replies


def test_the_class_covers_every_service() -> None:
    paths = {path for path, *_ in every_method()}
    assert len(paths) >= 15
    assert "/grosstarock.arena.v1.BotService/Play" in paths
    assert "/grosstarock.arena.v1.LobbyService/Join" in paths
    assert "/grpc.health.v1.Health/Watch" in paths


@pytest.mark.parametrize("garbage", GARBAGE, ids=["field-0", "truncated", "endless-varint"])
def test_bytes_that_are_no_message_are_invalid_argument_naming_the_type_on_every_method(
    server: Server, garbage: bytes
) -> None:
    operator = [("authorization", f"Bearer {OPERATOR}")]
    seen: dict[str, tuple[grpc.StatusCode, str]] = {}
    with grpc.insecure_channel(server.address) as channel:
        for path, type_name, *streaming in every_method():
            metadata = operator if "AdminService" in path else []
            with pytest.raises(grpc.RpcError) as raised:
                call_raw(channel, path, garbage, (streaming[0], streaming[1]), metadata=metadata)
            seen[path] = (raised.value.code(), raised.value.details())
            if path.endswith("/Play"):  # the bot stream asks for its seat token first
                assert seen[path][0] == grpc.StatusCode.UNAUTHENTICATED, (path, seen[path])
                continue
            assert seen[path][0] == grpc.StatusCode.INVALID_ARGUMENT, (path, seen[path])
            assert seen[path][1].startswith(f"malformed {type_name}: "), (path, seen[path])
        # The server took no harm: a good call still works.
        listed = call_raw(channel, "/grosstarock.arena.v1.AdminService/ListMatches", b"", (False, False),
                          metadata=operator)  # fmt: skip
        assert pb.ListMatchesResponse.FromString(listed).matches == []


def test_a_wrong_operator_token_is_refused_before_the_bytes_are_read(server: Server) -> None:
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as raised:
        call = channel.unary_unary("/grosstarock.arena.v1.AdminService/CreateMatch")
        call(GARBAGE[1], timeout=10, metadata=[("authorization", "Bearer not-it")])
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert raised.value.details().startswith("wrong operator token")


def play(
    address: str, token: str, frames: list[bytes]
) -> tuple[list[pb.ServerMessage], grpc.StatusCode, str]:
    """A bot stream sending `frames` (raw bytes) one after the other, each after the server's
    answer to the one before; every message received and how the stream ended."""
    answered = threading.Semaphore(0)
    received: list[pb.ServerMessage] = []

    def outgoing() -> Iterator[bytes]:
        for frame in frames:
            yield frame
            answered.acquire(timeout=5)
        answered.acquire(timeout=5)  # the stream stays open until the server ends it

    with grpc.insecure_channel(address) as channel:
        stream = channel.stream_stream("/grosstarock.arena.v1.BotService/Play")(
            outgoing(), metadata=[("authorization", f"Bearer {token}")], timeout=20
        )
        try:
            for data in stream:
                received.append(pb.ServerMessage.FromString(data))
                answered.release()
        except grpc.RpcError as error:
            answered.release()
            return received, error.code(), error.details()
    return received, grpc.StatusCode.OK, ""


def test_garbage_on_a_bot_stream_after_hello_is_the_seats_protocol_fault(server: Server) -> None:
    runner = server.run(lambda: server.hub.create_match(config("grosstarock", deals=1)))  # type: ignore[union-attr]
    hello = pb.BotMessage(hello=pb.Hello(bot_name="garbler", protocol_version=1)).SerializeToString()
    received, code, details = play(server.address, runner.seats[1].token, [hello, b"\x0a\xff"])
    assert [m.WhichOneof("kind") for m in received][:1] == ["match_start"]
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("malformed grosstarock.arena.v1.BotMessage: "), details
    assert [(f.seat, f.kind) for f in runner.seats[1].faults] == [(1, "protocol")]
    assert runner.seats[1].faults[0].detail == details
    part = Path(server.replay_dir, f"{runner.match_id}.jsonl.part")

    def recorded() -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in part.read_text().splitlines()]
        return [line for line in lines if line["type"] == "fault"]

    faults = wait_for(recorded, 10, "the fault in the replay")
    assert [(f["seat"], f["kind"], f["detail"]) for f in faults] == [(1, "protocol", details)]
    # The seat may come back with a fresh stream: the fault ended that stream, not the seat.
    received, code, _ = play(server.address, runner.seats[1].token, [hello])
    assert received and received[0].WhichOneof("kind") == "match_start"


def test_garbage_before_hello_is_a_protocol_fault_too(server: Server) -> None:
    runner = server.run(lambda: server.hub.create_match(config("grosstarock", deals=1)))  # type: ignore[union-attr]
    received, code, details = play(server.address, runner.seats[0].token, [b"\xff\xff"])
    assert (received, code) == ([], grpc.StatusCode.INVALID_ARGUMENT)
    assert details.startswith("malformed grosstarock.arena.v1.BotMessage: ")
    assert [f.kind for f in runner.seats[0].faults] == ["protocol"]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ([], "missing seat token: no `authorization: Bearer` metadata"),
        ([("authorization", "Basic dXNlcjpwYXNz")], "wrong authorization scheme 'Basic': expected"),
        ([("authorization", "Bearer")], "missing seat token: nothing follows `Bearer`"),
        ([("authorization", "Bearer not-a-seat")], "unknown seat token: no match on this server has it"),
    ],
    ids=["missing", "wrong-scheme", "empty", "unknown"],
)
def test_a_seat_token_error_says_which(
    server: Server, metadata: list[tuple[str, str]], expected: str
) -> None:
    hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as raised:
        next(iter(channel.stream_stream(
            "/grosstarock.arena.v1.BotService/Play", request_serializer=pb.BotMessage.SerializeToString
        )(iter([hello]), metadata=metadata, timeout=10)))  # fmt: skip
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert raised.value.details().startswith(expected), raised.value.details()


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ([], "missing operator token: no `authorization: Bearer` metadata"),
        ([("authorization", f"Token {OPERATOR}")], "wrong authorization scheme 'Token': expected"),
        ([("authorization", "Bearer guessed")], "wrong operator token: not this server's"),
        ([("authorization", f"bearer {OPERATOR}")], ""),  # the scheme's name is case-insensitive
    ],
    ids=["missing", "wrong-scheme", "unknown", "lower-case-scheme"],
)
def test_an_operator_token_error_says_which(
    server: Server, metadata: list[tuple[str, str]], expected: str
) -> None:
    with grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(
            "/grosstarock.arena.v1.AdminService/ListMatches",
            request_serializer=pb.ListMatchesRequest.SerializeToString,
            response_deserializer=pb.ListMatchesResponse.FromString,
        )
        if not expected:
            assert call(pb.ListMatchesRequest(), metadata=metadata, timeout=10).matches == []
            return
        with pytest.raises(grpc.RpcError) as raised:
            call(pb.ListMatchesRequest(), metadata=metadata, timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert raised.value.details().startswith(expected), raised.value.details()
