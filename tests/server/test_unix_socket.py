"""The server's Unix socket (`serve(unix=…)`, `arena serve --unix`): a stale socket is replaced, a
live one or another file in the way refused with one clear line, the socket removed at the stop."""

from __future__ import annotations

import functools
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.server.app import ListenError, claim_unix_socket, serve


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory whose paths fit a Unix socket's address (at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp"))
    yield path
    shutil.rmtree(path)


def test_a_stale_socket_is_replaced_and_a_live_one_or_a_file_refused(short_dir: Path) -> None:
    path = short_dir / "referee.sock"
    claim_unix_socket(path)  # nothing there: nothing to do
    with socket.socket(socket.AF_UNIX) as live:
        live.bind(str(path))
        live.listen()
        with pytest.raises(ListenError, match="another server listens on this socket") as refused:
            claim_unix_socket(path)
        assert str(refused.value) == f"cannot listen on unix:{path}: another server listens on this socket"
    assert path.exists()  # closed without removing its file: stale
    claim_unix_socket(path)
    assert not path.exists()
    path.write_text("not a socket")
    with pytest.raises(ListenError, match="a file that is not a socket is in the way"):
        claim_unix_socket(path)
    with pytest.raises(ListenError, match="no such directory"):
        claim_unix_socket(short_dir / "missing" / "referee.sock")


def test_the_server_answers_on_its_unix_socket_and_removes_it_when_it_stops(short_dir: Path) -> None:
    path = short_dir / "referee.sock"

    async def main() -> str:
        async with trio.open_nursery() as nursery:
            await nursery.start(functools.partial(serve, "127.0.0.1", 0, short_dir, unix=path))
            assert path.is_socket()

            def check() -> str:
                with grpc.insecure_channel(f"unix:{path}") as channel:
                    stub = health_pb2_grpc.HealthStub(channel)
                    answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
                    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)

            status = await trio.to_thread.run_sync(check)
            nursery.cancel_scope.cancel()
        return status

    assert trio.run(main) == "SERVING"
    assert not path.exists()
