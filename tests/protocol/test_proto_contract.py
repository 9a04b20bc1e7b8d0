"""The protocol as a contract for bots in any language (docs/PROTOCOL.md).

* `proto/check_languages.sh` (a step of .ci/run too) generates the code of the .proto for every
  language with Debian's protoc and plugins. Without those tools the test skips, saying which are
  missing; with CI=true it fails instead (CI installs them from .ci/apt-packages).
* The status tables of docs/PROTOCOL.md name every status the server sends, and a real server ends
  bot streams with the statuses they document.
* `CreateMatchRequest.start_timeout_ms`: a match whose bots never come starts when it runs out.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import grpc
import pytest
import trio
from support import ROOT
from support.admin import OPERATOR_TOKEN, admin_channel
from support.server import faults_in

from arena.server.app import config_from_request, serve
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

CHECK = ROOT / "proto" / "check_languages.sh"
PROTO = ROOT / "proto" / "arena" / "v1" / "arena.proto"
PROTOCOL_DOC = ROOT / "docs" / "PROTOCOL.md"
IN_CI = os.environ.get("CI") == "true"
TARGETS = [
    *("cpp", "java", "python", "ruby", "csharp", "php", "objc"),
    *("cpp-grpc", "python-grpc", "ruby-grpc", "php-grpc", "java-grpc", "go", "go-grpc"),
]


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; with CI=true a missing tool is a failure."""
    if IN_CI:
        pytest.fail(f"{reason}, and CI=true: CI must provide it (.ci/apt-packages)", pytrace=False)
    pytest.skip(reason)


def check_languages(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(CHECK), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def language_tools() -> None:
    """protoc and every plugin the check runs (the script lists them with their Debian packages)."""
    listed = [line.split() for line in check_languages("--tools").stdout.splitlines()]
    assert listed and all(len(entry) == 2 for entry in listed), listed
    absent = [
        f"{program} (Debian: {package})" for program, package in listed if shutil.which(program) is None
    ]
    if absent:
        missing(f"cannot check the .proto for every language; not installed: {', '.join(absent)}")


def test_the_proto_compiles_for_every_language(language_tools: None) -> None:
    done = check_languages()
    assert done.returncode == 0, done.stdout + done.stderr
    compiled = re.findall(r"^ok +(\S+)$", done.stdout, re.M)
    assert compiled == TARGETS, done.stdout


def test_the_check_fails_and_names_the_target_that_does_not_compile(
    tmp_path: Path, language_tools: None
) -> None:
    copy = tmp_path / "arena" / "v1" / "arena.proto"
    copy.parent.mkdir(parents=True)
    text = PROTO.read_text(encoding="utf-8")
    copy.write_text(re.sub(r"^option go_package = .*\n", "", text, flags=re.M), encoding="utf-8")
    done = check_languages(str(tmp_path))
    assert done.returncode == 1
    assert re.findall(r"^FAIL +([^:]+):", done.stdout, re.M) == ["go", "go-grpc"], done.stdout
    assert "unable to determine Go import path" in done.stdout
    assert "does not compile for: go go-grpc" in done.stderr


def test_the_proto_names_a_package_for_every_language() -> None:
    options = pb.DESCRIPTOR.GetOptions()
    import_path, _, go_name = options.go_package.partition(";")
    assert import_path.endswith("/arena/v1") and go_name == "arenav1"
    assert options.java_package == "org.grosstarock.arena.v1" and options.java_multiple_files
    assert options.csharp_namespace == "Grosstarock.Arena.V1"
    assert options.ruby_package == "Grosstarock::Arena::V1"
    assert options.php_namespace == "Grosstarock\\Arena\\V1"
    assert options.objc_class_prefix == "GTA"


def test_the_status_tables_name_every_status_the_server_sends() -> None:
    sent = set()
    for path in (ROOT / "arena").rglob("*.py"):
        if "v1" not in path.relative_to(ROOT / "arena").parts:  # not the generated modules
            sent |= set(re.findall(r"StatusCode\.([A-Z_]+)", path.read_text(encoding="utf-8")))
    doc = PROTOCOL_DOC.read_text(encoding="utf-8")
    rows = "\n".join(line for line in doc.splitlines() if line.startswith("| `"))
    assert {"ABORTED", "UNAUTHENTICATED", "RESOURCE_EXHAUSTED"} <= sent
    assert not [code for code in sorted(sent) if f"`{code}`" not in rows], "a status without a row"
    for retry in ("UNAVAILABLE", "CANCELLED", "UNKNOWN", "INTERNAL", "DEADLINE_EXCEEDED", "OK"):
        assert f"`{retry}`" in rows


def test_the_start_timeout_comes_from_the_request() -> None:
    assert config_from_request(pb.CreateMatchRequest(variant="danish")).start_timeout_s == 30.0
    timed = config_from_request(pb.CreateMatchRequest(variant="danish", start_timeout_ms=500))
    assert timed.start_timeout_s == 0.5


def test_the_latency_allowance_comes_from_the_request() -> None:
    assert config_from_request(pb.CreateMatchRequest(variant="danish")).time_control.latency_allowance_ms == 0
    request = pb.CreateMatchRequest(variant="danish", time_control=pb.TimeControl(latency_allowance_ms=300))
    time_control = config_from_request(request).time_control
    assert time_control.latency_allowance_ms == 300
    assert time_control.message().latency_allowance_ms == 300  # as MatchStart tells the bots


# --------------------------------------------------------------------------- a real server


def on_server(tmp_path: Path, session: Any) -> Any:
    """Run `session(address)` on a thread against a real server with the operator token."""

    async def scenario() -> Any:
        async with trio.open_nursery() as nursery:
            start = functools.partial(serve, operator_token=OPERATOR_TOKEN)
            _hub, port = await nursery.start(start, "127.0.0.1", 0, tmp_path)
            result = await trio.to_thread.run_sync(session, f"127.0.0.1:{port}")
            nursery.cancel_scope.cancel()
            return result

    return trio.run(scenario)


def wait_for(admin: pb_grpc.AdminServiceStub, match_id: str, states: set[str], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while True:
        [info] = [m for m in admin.ListMatches(pb.ListMatchesRequest()).matches if m.match_id == match_id]
        if info.state in states or time.monotonic() > deadline:
            return info.state
        time.sleep(0.05)


def test_a_match_whose_bots_never_come_starts_after_its_start_timeout(tmp_path: Path) -> None:
    def session(address: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with admin_channel(address) as channel:
            admin = pb_grpc.AdminServiceStub(channel)
            for policy in ("substitute", "forfeit"):
                created = admin.CreateMatch(
                    pb.CreateMatchRequest(
                        variant="grosstarock",
                        deals=1,
                        seed=11,
                        seat_names=["ann", "bob", "cid"],
                        fault_policy=policy,
                        start_timeout_ms=500,
                    )
                )
                began = time.monotonic()
                out[policy, "first"] = wait_for(admin, created.match_id, set(), 0)
                out[policy, "started"] = wait_for(admin, created.match_id, {"running", "finished"}, 10)
                out[policy, "after_s"] = time.monotonic() - began
                out[policy, "last"] = wait_for(admin, created.match_id, {"finished"}, 10)
                replay = admin.GetReplay(pb.GetReplayRequest(match_id=created.match_id)).replay
                out[policy, "lines"] = [json.loads(line) for line in replay.splitlines()]
        return out

    out = on_server(tmp_path, session)
    for policy in ("substitute", "forfeit"):
        assert out[policy, "first"] == "waiting"
        assert out[policy, "started"] in ("running", "finished")
        assert 0.4 <= out[policy, "after_s"] < 5, out[policy, "after_s"]
        assert out[policy, "last"] == "finished"
        lines = out[policy, "lines"]
        end = lines[-1]
        assert end["type"] == "match_end"
        if policy == "substitute":  # the server played every seat, each decision a fault: a whole deal
            faults = faults_in(lines)
            assert {seat for seat, _kind in faults} == {0, 1, 2}
            assert {kind for _seat, kind in faults} == {"disconnect"}
            assert len(faults) == sum(1 for line in lines if line["type"] == "action")
            assert end["termination"] == "completed" and [line["type"] for line in lines].count("deal") == 1
        else:  # the first decision of a seat that never came ends the match
            assert end["termination"] == "forfeit" and end["forfeited"] in (0, 1, 2)
            assert sum(end["faults"].values()) == 1 and end["faults"][str(end["forfeited"])] == 1


def test_an_admin_created_match_keeps_its_latency_allowance(tmp_path: Path) -> None:
    def session(address: str) -> list[dict[str, Any]]:
        with admin_channel(address) as channel:
            admin = pb_grpc.AdminServiceStub(channel)
            created = admin.CreateMatch(
                pb.CreateMatchRequest(
                    variant="danish",
                    deals=1,
                    time_control=pb.TimeControl(per_decision_ms=500, latency_allowance_ms=250),
                    start_timeout_ms=100,  # no bot comes: the server plays the deal
                )
            )
            assert wait_for(admin, created.match_id, {"finished"}, 10) == "finished"
            replay = admin.GetReplay(pb.GetReplayRequest(match_id=created.match_id)).replay
            return [json.loads(line) for line in replay.splitlines()]

    lines = on_server(tmp_path, session)
    assert lines[0]["time_control"]["latency_allowance_ms"] == 250
    actions = [line for line in lines if line["type"] == "action"]
    assert actions and all(line["rtt_ms"] is None and line["allowance_ms"] == 0 for line in actions)


def converse(
    address: str,
    token: str | None,
    messages: list[pb.BotMessage],
    *,
    read: int | None = None,
    answered: threading.Event | None = None,
) -> tuple[list[str], grpc.StatusCode | None]:
    """Send `messages` on a Play stream and keep the sending side open; return the kinds of the
    messages received and the status the stream ended with (None: stopped after `read` messages).
    `answered` is set at the first message received."""
    finished = threading.Event()

    def outgoing() -> Iterator[pb.BotMessage]:
        yield from messages
        finished.wait(10)  # a half-closed stream would be a disconnect

    metadata = [("authorization", f"Bearer {token}")] if token is not None else []
    kinds: list[str] = []
    with grpc.insecure_channel(address) as channel:
        call = pb_grpc.BotServiceStub(channel).Play(outgoing(), metadata=metadata, timeout=10)
        try:
            for message in call:
                kinds.append(str(message.WhichOneof("kind")))
                if answered is not None:
                    answered.set()
                if read is not None and len(kinds) >= read:
                    call.cancel()
                    return kinds, None
            return kinds, grpc.StatusCode.OK
        except grpc.RpcError as error:
            return kinds, error.code()
        finally:
            finished.set()


HELLO = pb.BotMessage(hello=pb.Hello(bot_name="contract", bot_version="1", protocol_version=1))
ANSWER = pb.BotMessage(action=pb.ActionReply(request_id=1, action=pb.Action(type="pass")))


def test_bot_streams_end_with_the_documented_statuses(tmp_path: Path) -> None:
    def session(address: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with admin_channel(address) as channel:
            admin = pb_grpc.AdminServiceStub(channel)
            waiting = admin.CreateMatch(pb.CreateMatchRequest(variant="grosstarock", deals=1))
            ended = admin.CreateMatch(pb.CreateMatchRequest(variant="danish", deals=1, start_timeout_ms=100))
            seat0, seat1, seat2 = waiting.seat_tokens
            out["no token"] = converse(address, None, [HELLO])
            out["unknown token"] = converse(address, "not-a-seat-token", [HELLO])
            out["second Hello"] = converse(address, seat0, [HELLO, HELLO])
            out["answer before Hello"] = converse(address, seat1, [ANSWER])
            out["empty message"] = converse(address, seat1, [HELLO, pb.BotMessage()])
            future = pb.BotMessage(hello=pb.Hello(bot_name="contract", protocol_version=99))
            out["protocol 99"] = converse(address, seat1, [future])
            out["protocol 0"] = converse(address, seat1, [pb.BotMessage(hello=pb.Hello())], read=1)
            # A second connection with the same token takes the seat: the first ends ABORTED.
            first: dict[str, Any] = {}
            seated = threading.Event()
            thread = threading.Thread(
                target=lambda: first.update(result=converse(address, seat2, [HELLO], answered=seated))
            )
            thread.start()
            assert seated.wait(10)
            out["replacing"] = converse(address, seat2, [HELLO], read=1)
            thread.join(10)
            out["replaced"] = first.get("result")
            assert wait_for(admin, ended.match_id, {"finished"}, 10) == "finished"
            out["match over"] = converse(address, ended.seat_tokens[0], [HELLO])
        with grpc.insecure_channel(address) as channel:
            try:
                list(pb_grpc.LobbyServiceStub(channel).Join(pb.LobbyJoin(), timeout=10))
            except grpc.RpcError as error:
                out["lobby"] = error.code()
        return out

    out = on_server(tmp_path, session)
    code = grpc.StatusCode
    assert out["no token"] == ([], code.UNAUTHENTICATED)
    assert out["unknown token"] == ([], code.UNAUTHENTICATED)
    assert out["second Hello"] == (["match_start"], code.INVALID_ARGUMENT)
    assert out["answer before Hello"] == ([], code.INVALID_ARGUMENT)
    assert out["empty message"] == (["match_start"], code.INVALID_ARGUMENT)
    assert out["protocol 99"] == ([], code.FAILED_PRECONDITION)
    assert out["protocol 0"] == (["match_start"], None)  # 0 (unset) is taken as 1
    assert out["replacing"] == (["match_start"], None)
    assert out["replaced"] == (["match_start"], code.ABORTED)
    assert out["match over"] == ([], code.UNAUTHENTICATED)  # a seat token dies with its match
    assert out["lobby"] == code.UNIMPLEMENTED  # no standing arena on this server
