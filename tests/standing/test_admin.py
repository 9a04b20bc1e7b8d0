"""The admin service, spectators, health and reflection over a real port; the forfeit policy."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from support.admin import OPERATOR_TOKEN, WithToken, admin_channel
from support.server import SCRIPTED, bot, config, read_replay

from arena.engine import Card, CardError
from arena.server.app import serve
from arena.server.local import play_matches
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


def _admin_session(address: str, replay_dir: Path) -> dict[str, Any]:
    """Everything a client does, on plain sync gRPC: create, spectate, play, list, fetch."""
    out: dict[str, Any] = {}
    with grpc.insecure_channel(address) as bare:
        for call in (
            lambda: pb_grpc.AdminServiceStub(bare).ListMatches(pb.ListMatchesRequest()),
            lambda: pb_grpc.AdminServiceStub(bare).CreateMatch(pb.CreateMatchRequest(variant="danish")),
            lambda: list(pb_grpc.AdminServiceStub(bare).Spectate(pb.SpectateRequest(match_id="0" * 16))),
        ):
            try:
                call()
            except grpc.RpcError as error:
                out.setdefault("without_token", []).append(error.code())
    with grpc.insecure_channel(address) as bare:
        wrong = grpc.intercept_channel(bare, WithToken("not-the-operator"))
        try:
            pb_grpc.AdminServiceStub(wrong).ListMatches(pb.ListMatchesRequest())
        except grpc.RpcError as error:
            out["wrong_token"] = error.code()
    with admin_channel(address) as channel:
        admin = pb_grpc.AdminServiceStub(channel)
        try:
            admin.CreateMatch(pb.CreateMatchRequest(variant="no-such-game"))
        except grpc.RpcError as error:
            out["bad_variant"] = error.code()
        created = admin.CreateMatch(
            pb.CreateMatchRequest(variant="danish", deals=1, seed=5, seat_names=["a", "b", "c"])
        )
        out["tokens"] = len(created.seat_tokens)
        events: list[pb.Event] = []
        spectate = admin.Spectate(pb.SpectateRequest(match_id=created.match_id))
        watcher = threading.Thread(target=lambda: events.extend(spectate), daemon=True)
        watcher.start()
        out["listed_running"] = [m.state for m in admin.ListMatches(pb.ListMatchesRequest()).matches]
        try:
            admin.GetReplay(pb.GetReplayRequest(match_id=created.match_id))
        except grpc.RpcError as error:
            out["replay_while_running"] = error.code()
        bots = [
            subprocess.Popen(
                [sys.executable, str(SCRIPTED)],
                env={**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token, "BEHAVIOUR": "random"},
            )
            for token in created.seat_tokens
        ]
        out["exit_codes"] = [b.wait(60) for b in bots]
        watcher.join(10)
        out["events"] = events
        out["listed_after"] = [
            (m.match_id, m.state, m.deals_done) for m in admin.ListMatches(pb.ListMatchesRequest()).matches
        ]
        out["replay"] = admin.GetReplay(pb.GetReplayRequest(match_id=created.match_id)).replay
        out["match_id"] = created.match_id
        for bad in ("../../etc/passwd", "0123456789abcdef"):
            try:
                admin.GetReplay(pb.GetReplayRequest(match_id=bad))
            except grpc.RpcError as error:
                out[f"replay_{bad}"] = error.code()
        health = health_pb2_grpc.HealthStub(channel)
        out["health"] = health.Check(health_pb2.HealthCheckRequest(service="")).status
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        answer = next(
            iter(
                reflect.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
            )
        )
        out["services"] = {s.name for s in answer.list_services_response.service}
    return out


def test_admin_service_spectators_health_and_reflection(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            start = functools.partial(serve, operator_token=OPERATOR_TOKEN)
            _hub, port = await nursery.start(start, "127.0.0.1", 0, tmp_path)
            result: dict[str, Any] = await trio.to_thread.run_sync(
                _admin_session, f"127.0.0.1:{port}", tmp_path
            )
            nursery.cancel_scope.cancel()
            return result

    out = trio.run(scenario)
    assert out["without_token"] == [grpc.StatusCode.UNAUTHENTICATED] * 3
    assert out["wrong_token"] == grpc.StatusCode.UNAUTHENTICATED
    assert out["bad_variant"] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["tokens"] == 3
    assert out["listed_running"] == ["waiting"]
    assert out["replay_while_running"] == grpc.StatusCode.FAILED_PRECONDITION
    assert out["exit_codes"] == [0, 0, 0]
    assert out["listed_after"] == [(out["match_id"], "finished", 1)]
    lines = [json.loads(line) for line in out["replay"].splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["variant"] == "danish"
    assert lines[-1]["type"] == "match_end"
    assert out["replay_../../etc/passwd"] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["replay_0123456789abcdef"] == grpc.StatusCode.NOT_FOUND
    assert out["health"] == health_pb2.HealthCheckResponse.SERVING
    assert {"grosstarock.arena.v1.BotService", "grpc.health.v1.Health"} <= out["services"]

    # The spectator saw the whole match, and only public information: no discarded card.
    kinds = [event.WhichOneof("kind") for event in out["events"]]
    assert kinds[0] == "deal_started" and "deal_ended" in kinds
    plays = [e.action_taken.action for e in out["events"] if e.WhichOneof("kind") == "action_taken"]
    assert sum(1 for a in plays if a.type == "play") == 75
    assert all(a.card == "" for a in plays if a.type == "discard")
    shown: set[Card] = set()
    for a in plays:
        if a.card:
            with contextlib.suppress(CardError):
                shown.add(Card.parse(a.card))
    assert len(shown) == 75  # the three cards of the skat were never shown


def test_forfeit_policy_ends_the_match_at_the_fault(tmp_path: Path) -> None:
    cfg = config("grosstarock", deals=3, fault_policy="forfeit")
    [played] = trio.run(play_matches, [(cfg, [bot(), bot(), bot("exit:5")])], tmp_path)
    assert played.runner.termination == "forfeit"
    assert played.runner.forfeited == 2
    lines = read_replay(played.runner.replay_path)  # type: ignore[arg-type]
    end = lines[-1]
    assert end["type"] == "match_end" and end["termination"] == "forfeit" and end["forfeited"] == 2
    assert not [line for line in lines if line["type"] == "deal"]  # the deal in progress is void
    assert end["scores"] == [0, 0, 0]


def test_arena_serve_answers_and_stops_on_sigterm(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--replay-dir", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # where the default store and operator token file go
    )
    try:
        assert server.stderr is not None
        listening = json.loads(server.stderr.readline())  # JSON log lines when not on a terminal
        assert listening["event"] == "server listening"
        token_file = tmp_path / "arena.operator-token"
        assert (tmp_path / "arena.db").is_file() and token_file.stat().st_mode & 0o777 == 0o600
        with grpc.insecure_channel(f"127.0.0.1:{listening['port']}") as channel:
            status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()
        server.wait()
        if server.stderr is not None:
            server.stderr.close()


def test_a_long_running_server_keeps_only_recent_ended_matches_in_memory(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[str], list[str], tuple[str, Path | None]]:
        async with trio.open_nursery() as nursery:
            hub, _port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            hub.keep_ended = 2
            created = []
            for seed in range(3):  # no bot ever comes: the referee substitutes every decision
                runner = hub.create_match(config("grosstarock", seed=seed, start_timeout_s=0.01))
                await runner.done.wait()
                created.append(runner.match_id)
            kept = list(hub.matches)
            evicted = hub.replay_path(created[0])
            nursery.cancel_scope.cancel()
            return created, kept, evicted

    created, kept, (state, path) = trio.run(scenario)
    assert kept == created[1:]
    assert state == "finished" and path == tmp_path / f"{created[0]}.jsonl" and path.is_file()


def test_a_killed_server_loses_at_most_the_move_in_flight(tmp_path: Path) -> None:
    """Every answered decision is in the replay's .part file once the next request is out."""
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--replay-dir", str(tmp_path / "r")],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert server.stderr is not None
        address = f"127.0.0.1:{json.loads(server.stderr.readline())['port']}"
        token = (tmp_path / "arena.operator-token").read_text().strip()
        with admin_channel(address, token) as channel:
            created = pb_grpc.AdminServiceStub(channel).CreateMatch(
                pb.CreateMatchRequest(variant="grosstarock", deals=1, seed=3)
            )
        logs = [tmp_path / f"seat{seat}.jsonl" for seat in range(3)]
        for seat, seat_token in enumerate(created.seat_tokens):
            behaviour = f"random,record:{logs[seat]}" + (",sleep:20" if seat == 1 else "")
            env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": seat_token, "BEHAVIOUR": behaviour}
            bots.append(subprocess.Popen([sys.executable, str(SCRIPTED)], env=env))

        def requests(log: Path) -> int:
            text = log.read_text() if log.exists() else ""
            return sum('"request"' in line for line in text.splitlines())

        deadline = time.monotonic() + 60
        while requests(logs[1]) < 20:  # seat 1 now sleeps 2 s on its 20th request
            assert time.monotonic() < deadline, "seat 1 never got its 20th request"
            time.sleep(0.02)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        sent = sum(requests(log) for log in logs)
    finally:
        server.kill()
        server.wait()
        if server.stderr is not None:
            server.stderr.close()
        for each in bots:
            each.kill()
            each.wait()
    [partial] = (tmp_path / "r").glob("*.jsonl.part")
    lines = [json.loads(line) for line in partial.read_text().splitlines()]
    assert sum(line["type"] == "action" for line in lines) == sent - 1  # all but the pending one
