"""The standing arena end to end: a real server, registered bots as real processes in its lobby.

Matches are formed and rated, standings update, a revoked bot is cut off at once, limits answer
RESOURCE_EXHAUSTED with a retry hint, a bot that keeps faulting is paused with a reason, and a
server killed mid-match loses nothing finished.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena_bot import Lobby, LobbyError
from support import free_port, wait_for
from support.admin import admin_channel
from support.standing import FAST, ServerThread, lobby_bot

from arena.standing.store import Store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


def finish(bot: subprocess.Popen[str], timeout: float = 60) -> tuple[int, dict[str, Any], str]:
    out, err = bot.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return bot.returncode, json.loads(lines[-1]) if lines else {}, err


def join(address: str, token: str, **request: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """One lobby join with plain gRPC: the status it ends with (OK after the Welcome if admitted)."""
    with grpc.insecure_channel(address) as channel:
        call = pb_grpc.LobbyServiceStub(channel).Join(
            pb.LobbyJoin(**request), metadata=(("authorization", f"Bearer {token}"),), timeout=5
        )
        try:
            first = next(iter(call))
            assert first.WhichOneof("kind") == "welcome"
            call.cancel()
            return grpc.StatusCode.OK, "", {}
        except grpc.RpcError as error:
            trailers = {key: value for key, value in (error.trailing_metadata() or ())}  # type: ignore[attr-defined]
            return error.code(), error.details(), trailers  # type: ignore[attr-defined]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(str(tmp_path / "arena.db"))
    yield opened
    opened.close()


def test_registered_bots_play_rated_matches_and_the_standings_update(
    any_store: Store, tmp_path: Path
) -> None:
    store = any_store
    tokens = {name: store.register_bot(name)[1] for name in ("ann", "bob", "cid", "dan")}
    with ServerThread(store, tmp_path / "replays", FAST) as server:
        bots = [lobby_bot(server.address, token, MAX_MATCHES="2") for token in tokens.values()]

        def everyone_played_three() -> bool:
            rated = {s.bot: s.matches for s in store.standings("grosstarock", recent=0)}
            return len(rated) == len(tokens) and min(rated.values()) >= 3

        wait_for(everyone_played_three, 60, "three rated matches for every bot")
        for bot in bots:  # leave the lobby; matches in flight are played out first
            bot.send_signal(signal.SIGINT)
        results = [finish(bot) for bot in bots]

        def every_match_recorded() -> bool:  # a result is recorded shortly after its bots hear of it
            with store.transaction() as db:
                return db.execute("SELECT COUNT(*) FROM matches WHERE state = 'running'").fetchone()[0] == 0

        wait_for(every_match_recorded, 30, "the last matches' results recorded")
        with admin_channel(server.address) as channel:
            admin = pb_grpc.AdminServiceStub(channel)
            standings = admin.GetStandings(pb.GetStandingsRequest(variant="grosstarock", recent=10)).standings
            listed = admin.ListBots(pb.ListBotsRequest()).bots
    for status, summary, err in results:
        assert status == 0, err
        assert len(summary["matches"]) >= 3 and set(summary["matches"]) == {"completed"}
        assert summary["stop_reason"] == "interrupted"
    assert {s.bot for s in standings} == set(tokens)
    ratings = [s.rating for s in standings]
    assert ratings == sorted(ratings, reverse=True)
    total_seats = sum(s.matches for s in standings)
    assert total_seats % 3 == 0 and total_seats >= 12  # three seats a table, each bot three or more
    for standing in standings:
        assert standing.sigma < 25 / 3  # rated: uncertainty went down from a new bot's
        assert standing.deals == standing.matches  # one deal each
        assert standing.decisions > 0
        assert standing.hello_name == standing.bot  # the SDK's Hello names the registered bot
        # No bot faults while it plays; but a table seated just as its bots leave the lobby (the
        # SIGINT above) can miss a bot, whose seat the fault policy then plays (docs/ARENA.md).
        assert standing.fault_rate < 0.5
        for match in standing.recent:
            assert len(set(match.seats)) == 3  # never the same bot twice at a table
            assert (tmp_path / "replays" / match.replay).is_file()
            assert match.termination == "completed"
    assert [(b.name, b.state) for b in listed] == [(n, "active") for n in sorted(tokens)]
    # The store has the same, for `arena standings` after the server stopped.
    assert {s.bot: s.matches for s in store.standings("grosstarock")} == {s.bot: s.matches for s in standings}
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "standings", "--store", store.url, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["bot"]: row for row in json.loads(shown.stdout)["standings"]}
    assert set(rows) == set(tokens)
    for standing in standings:  # grosstarock is rated on luck-adjusted points: GetStandings says so
        assert standing.HasField("mean_adjusted_score_per_deal")
        assert standing.adjusted_deals == standing.deals
        assert (
            round(standing.mean_adjusted_score_per_deal, 3)
            == rows[standing.bot]["mean_adjusted_score_per_deal"]
        )
        assert round(standing.mean_score_per_deal, 3) == rows[standing.bot]["mean_score_per_deal"]


def test_a_revoked_bot_is_cut_off_at_once(store: Store, tmp_path: Path) -> None:
    tokens = {name: store.register_bot(name)[1] for name in ("ann", "bob", "slow")}
    with ServerThread(store, tmp_path / "replays", FAST) as server:
        quick = [
            lobby_bot(server.address, tokens[n], MATCHES="1", RECONNECT_SECONDS="5") for n in ("ann", "bob")
        ]
        slow = lobby_bot(server.address, tokens["slow"], DELAY="0.2", RECONNECT_SECONDS="5")
        with admin_channel(server.address) as channel:
            admin = pb_grpc.AdminServiceStub(channel)

            def running_match() -> str:
                matches = admin.ListMatches(pb.ListMatchesRequest()).matches
                return next(
                    (m.match_id for m in matches if m.state == "running" and "slow" in m.seat_names), ""
                )

            match_id = wait_for(running_match, 30, "a match with the slow bot")
            revoked_at = time.monotonic()
            subprocess.run(
                [sys.executable, "-m", "arena", "bots", "revoke", "slow", "--store", store.url], check=True
            )
            status, summary, err = finish(slow, timeout=30)
            cut_off_after = time.monotonic() - revoked_at
            assert status == 2 and summary["code"] == "UNAUTHENTICATED", err
            assert "revoked" in summary["error"]
            assert cut_off_after < 10  # the CLI's start-up, a revocation poll (0.2 s), the close
            assert join(server.address, tokens["slow"])[0] == grpc.StatusCode.UNAUTHENTICATED
            # The match plays on without it, the fault policy acting for its seat.
            for bot in quick:
                assert finish(bot)[0] == 0
            replay = wait_for(
                lambda: admin.GetReplay(pb.GetReplayRequest(match_id=match_id)).replay, 30, "the replay"
            )
            listed = {b.name: b.state for b in admin.ListBots(pb.ListBotsRequest()).bots}
            with pytest.raises(grpc.RpcError) as unknown:
                admin.RevokeBot(pb.BotNameRequest(name="ghost"))
            assert unknown.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in replay.splitlines()]
    seat = lines[0]["seats"].index("slow")
    assert any(
        line.get("seat") == seat and line.get("fault", {}).get("kind") == "disconnect" for line in lines
    )
    assert lines[-1]["type"] == "match_end" and lines[-1]["termination"] == "completed"
    assert listed["slow"] == "revoked"


def test_limits_answer_resource_exhausted_with_a_retry_hint(store: Store, tmp_path: Path) -> None:
    _, token = store.register_bot("eager")
    config = replace(FAST, join_burst=2, joins_per_minute=6, max_matches_per_bot=2)
    with ServerThread(store, tmp_path / "replays", config) as server:
        # Two lobby streams may hold the bot's two matches at once; a third has no room left.
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.LobbyServiceStub(channel)
            auth = (("authorization", f"Bearer {token}"),)
            held = stub.Join(pb.LobbyJoin(max_matches=2), metadata=auth)
            welcome = next(iter(held))
            assert welcome.welcome.max_matches == 2
            code, details, trailers = join(server.address, token, max_matches=1)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "2 matches at once" in details
            assert int(trailers["retry-after-ms"]) > 0
            held.cancel()
        # The burst is spent (two joins); the next waits for the bucket: one join per 10 s.
        code, details, trailers = join(server.address, token)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "too many lobby joins" in details
        assert 5_000 <= int(trailers["retry-after-ms"]) <= 10_000
        code, details, _ = join(server.address, "gta_not-a-token")
        assert code == grpc.StatusCode.UNAUTHENTICATED
        _, other = store.register_bot("picky", ["danish"])
        code, details, _ = join(server.address, other)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "may play none" in details


def test_a_bot_that_keeps_faulting_is_paused_with_a_reason(store: Store, tmp_path: Path) -> None:
    tokens = {name: store.register_bot(name)[1] for name in ("ann", "bob", "late")}
    config = replace(FAST, per_decision_ms=300, bank_ms=0, pause_after=2, pause_s=60)
    with ServerThread(store, tmp_path / "replays", config) as server:
        good = [lobby_bot(server.address, tokens[n], RECONNECT_SECONDS="5") for n in ("ann", "bob")]
        late = lobby_bot(server.address, tokens["late"], SLOW_FIRST="0.8")
        status, summary, err = finish(late)
        code, details, trailers = join(server.address, tokens["late"])
        for bot in good:
            bot.send_signal(signal.SIGINT)
            bot.communicate(timeout=30)
        with admin_channel(server.address) as channel:
            listed = {
                b.name: b for b in pb_grpc.AdminServiceStub(channel).ListBots(pb.ListBotsRequest()).bots
            }
    assert status == 0, err
    assert summary["stop_reason"] == "paused" and summary["matches"] == ["completed", "completed"]
    assert (
        "a fault in 2 matches in a row" in summary["paused_reason"] and "timeout" in summary["paused_reason"]
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "paused" in details
    assert 50_000 <= int(trailers["retry-after-ms"]) <= 60_000
    assert listed["late"].state == "paused" and "timeout" in listed["late"].reason
    late_standing = next(s for s in store.standings() if s.bot == "late")
    assert late_standing.faults >= 2 and late_standing.state == "paused"


def test_a_server_killed_mid_match_loses_nothing_finished(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with contextlib.closing(Store(str(db))) as setup:
        tokens = {name: setup.register_bot(name)[1] for name in ("ann", "bob", "cid")}
    (tmp_path / "arena.toml").write_text('[arena]\nvariants = ["grosstarock"]\ndeals = 1\ntick_s = 0.05\n')
    port = free_port()
    command = [
        sys.executable, "-m", "arena", "serve", "--port", str(port), "--store", str(db),
        "--replay-dir", str(tmp_path / "replays"), "--arena-config", str(tmp_path / "arena.toml"),
    ]  # fmt: skip

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.DEVNULL)

    def snapshot() -> tuple[dict[str, str], list[tuple[str, int, float, float]]]:
        with contextlib.closing(Store(str(db))) as reader:
            rated = [(s.bot, s.matches, s.mu, s.sigma) for s in reader.standings()]
            return reader.match_states(), rated

    server = start()
    address = f"127.0.0.1:{port}"
    bots = [lobby_bot(address, token, DELAY="0.01", RECONNECT_SECONDS="60") for token in tokens.values()]
    try:
        wait_for(lambda: list(snapshot()[0].values()).count("finished") >= 2, 60, "two finished matches")
        wait_for(lambda: "running" in snapshot()[0].values(), 30, "a match in progress")
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        states_at_kill, rated_at_kill = snapshot()
        finished_at_kill = {m for m, state in states_at_kill.items() if state == "finished"}
        server = start()
        wait_for(
            lambda: len([s for s in snapshot()[0].values() if s == "finished"]) >= len(finished_at_kill) + 2,
            90,
            "the bots to reconnect and finish two more matches",
        )
        states_after, _ = snapshot()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
        for bot in bots:
            bot.send_signal(signal.SIGINT)
        for bot in bots:
            bot.wait(30)
            bot.stdout.close()  # type: ignore[union-attr]
            bot.stderr.close()  # type: ignore[union-attr]
    for match_id in finished_at_kill:
        assert states_after[match_id] == "finished"
    cut_off = {m for m, state in states_at_kill.items() if state == "running"}
    assert cut_off and all(states_after[m] == "aborted" for m in cut_off)
    with contextlib.closing(Store(str(db))) as reader:
        assert {b.name for b in reader.bots()} == set(tokens)
        after = {s.bot: s for s in reader.standings()}
    for bot, matches, _mu, _sigma in rated_at_kill:
        assert after[bot].matches >= matches + 2  # the cut-off match was not rated; later ones were
    assert sum(s.matches for s in after.values()) == 3 * len(
        [s for s in states_after.values() if s == "finished"]
    )
    for match_id in cut_off:  # its replay never completed; what was written is kept as .part
        assert not (tmp_path / "replays" / f"{match_id}.jsonl").exists()
        assert (tmp_path / "replays" / f"{match_id}.jsonl.part").exists()


def test_a_lobby_join_in_a_version_not_spoken_is_refused_for_good(store: Store, tmp_path: Path) -> None:
    _, token = store.register_bot("future")
    with ServerThread(store, tmp_path / "replays", FAST) as server:
        code, details, trailers = join(server.address, token, protocol_version=99)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details == "protocol version 99 is not spoken here; this server speaks 1"
        assert "retry-after-ms" not in trailers
        assert join(server.address, token, protocol_version=0)[0] == grpc.StatusCode.OK  # unset: 1
        # The Python SDK takes it as final: no waiting and joining again as after a pause.
        started = time.monotonic()
        lobby = Lobby(lambda request: request.legal_actions[0], address=server.address, bot_token=token)
        lobby.join.protocol_version = 99
        with pytest.raises(LobbyError) as raised:
            lobby.run()
        assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert time.monotonic() - started < 10
