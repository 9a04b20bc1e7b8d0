"""Three real `arena serve` processes sharing one real PostgreSQL: one standing arena.

30 bots, in one driver process (`benchmarks.arena_driver`: every bot with its own channels,
answering at once), each given the three servers' addresses (its first lobby stream on a server
of its own, ten bots a server; later ones balanced by gRPC round_robin). Everything is then
checked from the store: no bot double-booked, every finished match rated once, standings equal
to a recomputation from the stored results (the replays, in the order the results were
recorded); and a server stopped with SIGKILL or SIGTERM mid-run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from arena_bot import Lobby
from arena_bot.address import balanced_target, split_addresses
from postgres import free_port
from support import ROOT, wait_for
from support.cluster import (
    DEAD_AFTER_S,
    HEARTBEAT_S,
    SEATS,
    arena,
    check_store,
    ended_replays,
    new_servers,
    running,
    stop,
)

from arena.standing.store import Store
from benchmarks.arena_processes import ArenaServer


def test_three_servers_play_100_rated_matches_as_one_arena(postgres_db: str, tmp_path: Path) -> None:
    with arena(postgres_db, tmp_path) as run:
        began = time.monotonic()
        wait_for(lambda: run.finished() >= 100, 180, "100 rated matches")
        print(f"100 rated matches in {time.monotonic() - began:.1f} s")
        stats = stop(run)
        for server in run.servers:
            assert server.process is not None and server.process.returncode == 0, server.log_path.read_text()[
                -2000:
            ]
        checked = check_store(run, run.servers[0].replay_dir)
        assert len(checked["finished"]) >= 100
        # One pool over the servers: every server hosted matches, and bots were sent across servers.
        hosts = Counter(row[7] for row in checked["finished"])
        assert set(hosts) == {run.server_id(s) for s in run.servers}, hosts
        assert len([address for address in stats["hosts"] if address]) == 3, stats["hosts"]
        joined = [run.lobby_bots(server) for server in run.servers]
        assert all(len(bots) >= 3 for bots in joined), [len(b) for b in joined]
        # Every match some bot saw end with a result is finished in the store.
        states = {row[0]: row[1] for row in checked["matches"]}
        seen = {
            m for m, (termination, _) in stats["ended"].items() if termination in ("completed", "forfeit")
        }
        assert {m for m in seen if states.get(m) != "finished"} == set()
        for server in run.servers:
            errors, _warnings, events = server.log_problems()
            assert errors == 0, events


def test_a_killed_server_s_matches_are_aborted_and_its_bots_play_on_elsewhere(
    postgres_db: str, tmp_path: Path
) -> None:
    with arena(postgres_db, tmp_path) as run:
        wait_for(lambda: run.finished() >= 20, 120, "20 rated matches")

        def busiest() -> tuple[ArenaServer, list[str]] | None:
            running = run.query("SELECT server_id, match_id FROM matches WHERE state = 'running'")
            for server in sorted(run.servers, key=lambda s: -sum(r[0] == run.server_id(s) for r in running)):
                live = [m for sid, m in running if sid == run.server_id(server)]
                return (server, live) if live else None
            return None

        victim, _ = wait_for(busiest, 30, "a server with live matches")
        finished_before = {
            row[0] for row in run.query("SELECT match_id FROM matches WHERE state = 'finished'")
        }
        victim.kill()
        killed_at = time.time() * 1000
        victim_id = run.server_id(victim)
        cut_off = [
            row[0]
            for row in run.query(
                "SELECT match_id FROM matches WHERE server_id = ? AND state = 'running'", (victim_id,)
            )
        ]
        assert cut_off, "the killed server had no live match"
        orphans = run.lobby_bots(victim)
        assert orphans

        def played_after_kill() -> set[str]:
            return {
                row[0]
                for row in run.query(
                    "SELECT s.bot FROM match_seats s JOIN matches m ON m.match_id = s.match_id "
                    "WHERE m.state = 'finished' AND m.started_ms > ?",
                    (int(killed_at),),
                )
            }

        count = run.finished()
        wait_for(lambda: run.finished() >= count + 40, 180, "40 more rated matches on the other servers")
        # Its bots play on on the other servers.
        wait_for(
            lambda: orphans <= played_after_kill(), 60, f"rated matches of {sorted(orphans)} after the kill"
        )
        stats = stop(run)
        checked = check_store(run, run.servers[0].replay_dir)

        rows = {row[0]: row for row in checked["matches"]}
        # A match that ended just before the kill (its replay complete, its bots told) is recorded
        # from the pending-results journal the servers share; the others are aborted.
        told = ended_replays(run.servers[0].replay_dir)
        for match_id in cut_off:
            _, state, _, _, finished_ms, seq, _, _, reason = rows[match_id]
            if match_id in told and state == "finished":
                continue
            assert (state, seq) == ("aborted", None)  # never rated
            assert "heartbeat" in reason and victim_id in reason, reason
            # Found by the others within the bound: the heartbeat timeout, a beat or two, and slack.
            assert finished_ms - killed_at <= (DEAD_AFTER_S + 2 * HEARTBEAT_S + 2.0) * 1000
        # No finished match lost, and nothing new on the dead server.
        assert finished_before <= {m for m, row in rows.items() if row[1] == "finished"}
        assert all(row[7] != victim_id for row in checked["finished"] if row[0] not in finished_before | told)
        assert stats["errors"].get("play UNAVAILABLE", 0) + stats["errors"].get("lobby UNAVAILABLE", 0) > 0


def test_a_server_stopped_with_sigterm_finishes_and_rates_its_live_matches(
    postgres_db: str, tmp_path: Path
) -> None:
    with arena(postgres_db, tmp_path) as run:
        wait_for(lambda: run.finished() >= 20, 120, "20 rated matches")
        victim = run.servers[0]
        victim_id = run.server_id(victim)

        def live() -> list[str]:
            return [
                row[0]
                for row in run.query(
                    "SELECT match_id FROM matches WHERE server_id = ? AND state = 'running'", (victim_id,)
                )
            ]

        wait_for(live, 30, "live matches on the server")
        assert victim.process is not None
        victim.process.send_signal(15)
        draining = live()
        assert victim.process.wait(60) == 0
        count = run.finished()
        wait_for(lambda: run.finished() >= count + 20, 120, "20 more rated matches on the other servers")
        stop(run)
        checked = check_store(run, run.servers[0].replay_dir)
        rows = {row[0]: row for row in checked["matches"]}
        assert draining
        for match_id in draining:
            assert rows[match_id][1] == "finished" and rows[match_id][5] is not None, rows[match_id]
        # Nothing the draining server hosted was cut off.
        assert {row[1] for row in rows.values() if row[7] == victim_id} == {"finished"}
        events = [e.get("event") for e in victim.log_entries()]
        assert "draining before the stop" in events and "drained" in events


def test_address_lists_for_several_servers() -> None:
    assert split_addresses("10.0.0.1:1, 10.0.0.2:2,") == ["10.0.0.1:1", "10.0.0.2:2"]
    assert split_addresses(["a:1", "b:2"]) == ["a:1", "b:2"]
    assert balanced_target(["127.0.0.1:1", "grpc://127.0.0.2:2"]) == "ipv4:127.0.0.1:1,127.0.0.2:2"
    assert balanced_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"
    # Host names, TLS, mixed families and one address: no round_robin target; the SDK rotates.
    assert balanced_target(["localhost:1", "127.0.0.1:2"]) is None
    assert balanced_target(["grpcs://127.0.0.1:1", "127.0.0.1:2"]) is None
    assert balanced_target(["[::1]:1", "127.0.0.1:2"]) is None
    assert balanced_target(["127.0.0.1:1"]) is None


def test_sdk_bots_given_several_addresses_play_on_any_server(postgres_db: str, tmp_path: Path) -> None:
    """Python SDK bots (run_lobby) with address lists that include a server that is down: round_robin
    over IP literals, the SDK's own rotation over host names; each plays its matches wherever its
    table is hosted (Seated.address)."""
    with running(new_servers(postgres_db, tmp_path, 2)) as servers:
        tokens = servers[0].register_bots(SEATS + 1)
        down = free_port()  # nothing listens here
        one, two = (server.port for server in servers)
        addresses = [
            f"127.0.0.1:{down},127.0.0.1:{one},127.0.0.1:{two}",  # round_robin
            f"localhost:{down},localhost:{one}",  # rotation
            [f"127.0.0.1:{two}", f"127.0.0.1:{down}"],
            f"localhost:{two},localhost:{down}",
        ]
        lobbies = [
            Lobby(
                lambda request: request.legal_actions[0],
                address=address,
                bot_token=token,
                reconnect_seconds=30,
            )
            for address, token in zip(addresses, tokens, strict=False)
        ]
        results: dict[int, Any] = {}

        def play(index: int) -> None:
            results[index] = lobbies[index].run()

        threads = [threading.Thread(target=play, args=(i,)) for i in range(len(lobbies))]
        for thread in threads:
            thread.start()
        # Every bot plays until each has 3 matches (a bot leaving earlier could leave too few to
        # fill a table for the others).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and min(len(lobby.result.matches) for lobby in lobbies) < 3:
            time.sleep(0.1)
        for lobby in lobbies:
            lobby.stop()
        for thread in threads:
            thread.join(60)
        assert len(results) == len(addresses)
        for result in results.values():
            assert len(result.matches) >= 3, result.failures
            assert all(match.termination == "completed" for match in result.matches)
        # Every seat names its host, one of the two servers (whichever server's round formed it).
        hosts = {seated.address for result in results.values() for seated in result.seated}
        assert hosts and hosts <= {f"127.0.0.1:{one}", f"127.0.0.1:{two}"}


NODE_DIR = ROOT / "clients" / "node"
NODE_LOBBY_BOT = """
const { runLobby } = require(process.argv[1]);
runLobby((request) => request.legal_actions[0], { matches: 3, reconnectSeconds: 30 }).then(
  (out) => console.log(JSON.stringify({
    bot: out.botName,
    ended: out.matches.map((m) => m.termination),
    failures: out.failures.map((f) => f[1]),
    hosts: out.seated.map((s) => s.address),
  })),
  (error) => { console.error(String(error)); process.exitCode = 2; },
);
"""


def node() -> str:
    found, npm = shutil.which("node"), shutil.which("npm")
    if found is None or npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js and npm are not installed, and CI=true: CI must provide them")
        pytest.skip("Node.js and npm are not installed")
    installed = NODE_DIR / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < (NODE_DIR / "package-lock.json").stat().st_mtime:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, capture_output=True)
    return found


def test_node_sdk_bots_given_several_addresses_play_on_any_server(postgres_db: str, tmp_path: Path) -> None:
    """The Node SDK's runLobby, given address lists with a server that is down (round_robin over IP
    literals, its own rotation over host names), plays its matches on the servers hosting them."""
    node_binary = node()
    with running(new_servers(postgres_db, tmp_path, 2)) as servers:
        tokens = servers[0].register_bots(SEATS)
        down = free_port()
        one, two = (server.port for server in servers)
        addresses = [
            f"127.0.0.1:{down},127.0.0.1:{one},127.0.0.1:{two}",
            f"localhost:{down},localhost:{two}",
            f"127.0.0.1:{one},127.0.0.1:{down}",
        ]
        bots = [
            subprocess.Popen(
                [node_binary, "-e", NODE_LOBBY_BOT, str(NODE_DIR / "sdk.js")],
                env={**os.environ, "ARENA_ADDRESS": address, "ARENA_BOT_TOKEN": token},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for address, token in zip(addresses, tokens, strict=True)
        ]
        outputs = []
        for bot in bots:
            out, err = bot.communicate(timeout=120)
            assert bot.returncode == 0, err
            outputs.append(json.loads(out.strip().splitlines()[-1]))
        for output in outputs:
            assert output["ended"] == ["completed"] * 3 and output["failures"] == [], output
        assert {host for output in outputs for host in output["hosts"]} <= {
            f"127.0.0.1:{one}",
            f"127.0.0.1:{two}",
        }


def test_a_server_frozen_past_the_limit_is_taken_for_dead_and_stops(postgres_db: str, tmp_path: Path) -> None:
    with running(new_servers(postgres_db, tmp_path, 2)) as servers:
        frozen = servers[0]
        assert frozen.process is not None
        frozen.process.send_signal(signal.SIGSTOP)
        time.sleep(DEAD_AFTER_S + 2 * HEARTBEAT_S + 1.0)
        store = Store(postgres_db)
        try:
            with store.transaction() as db:
                states = dict(db.execute("SELECT address, state FROM arena_servers").fetchall())
        finally:
            store.close()
        assert states == {f"127.0.0.1:{frozen.port}": "gone", f"127.0.0.1:{servers[1].port}": "serving"}
        frozen.process.send_signal(signal.SIGCONT)
        assert frozen.process.wait(30) == 1
        lines = frozen.log_path.read_text().splitlines()
        assert lines[-1].startswith("arena serve: server ") and "was taken for dead" in lines[-1], lines[-3:]
        assert servers[1].running()


def test_a_transaction_left_waiting_past_the_limit_frees_its_locks_and_the_store_connects_again(
    postgres_db: str,
) -> None:
    """A server frozen inside a transaction (a heartbeat's row, the reaper's lock) must not hold
    its locks for as long as it is frozen: PostgreSQL ends its connection past the limit, and the
    store's next transaction opens a new one."""
    import psycopg

    frozen, other = Store(postgres_db), Store(postgres_db)
    frozen.limit_idle_transactions(0.5)
    lock = 74_700_99
    try:
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout), frozen.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (lock,))
            with other.transaction() as mine:  # held while the frozen one's transaction is open
                assert mine.execute("SELECT pg_try_advisory_xact_lock(?)", (lock,)).fetchone()[0] is False
            time.sleep(1.5)  # frozen, as it were, past the limit
            with other.transaction() as mine:  # its connection was ended: the lock is free
                assert mine.execute("SELECT pg_try_advisory_xact_lock(?)", (lock,)).fetchone()[0] is True
            db.execute("SELECT 1")  # woken: its connection is gone
        with frozen.transaction() as db:  # a new connection, with the same limit
            assert db.execute("SHOW idle_in_transaction_session_timeout").fetchone()[0] == "500ms"
    finally:
        frozen.close()
        other.close()
