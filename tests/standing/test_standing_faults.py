"""Nothing lost when the database or a server misbehaves (issue 32): real `arena serve` processes,
a real PostgreSQL stopped and started under them, a server frozen with SIGSTOP, and two servers
pointed at one SQLite store.

- A database stopped for a few seconds mid-run: every server lives on, every match whose replay
  ended 'completed' or 'forfeit' is recorded exactly once (results wait in the pending-results
  journal meanwhile), nothing stays running or booked.
- A server frozen past the limit is taken for dead; when it wakes, it writes nothing: its matches
  keep what the others recorded, its state stays 'gone', and it exits without a traceback.
- A second server on a SQLite store another server holds is refused, in one line naming both.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres import start_database, stop_database, unavailable
from support import ROOT, wait_for
from support.cluster import DEAD_AFTER_S, Arena, arena, check_store, ended_replays, stop
from support.standing import FAST, ServerThread

from arena.standing.cluster import Cluster, TakenForDeadError
from arena.standing.pending import PENDING_DIR, Journal, PendingRecord
from arena.standing.store import Store, is_outage
from benchmarks.postgres import PostgresServer, PostgresUnavailable, create_database, find_bindir

OUTAGE_S = 5.0


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, which it may stop and start."""
    try:
        import psycopg  # noqa: F401
    except ImportError as e:
        unavailable(f"psycopg is not installed ({e})")
    server: PostgresServer | None = None
    try:
        server = PostgresServer(find_bindir())
        server.start()
    except (PostgresUnavailable, OSError, subprocess.SubprocessError) as e:
        if server is not None:
            server.stop()
        unavailable(str(e).strip() or repr(e))
    assert server is not None
    try:
        yield server
    finally:
        server.stop()


def states(run: Arena) -> dict[str, str]:
    return {row[0]: row[1] for row in run.query("SELECT match_id, state FROM matches")}


def stray_lines(log: Path) -> list[str]:
    """Lines of a server's log that are not structured entries (tracebacks, prints)."""
    stray = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):
            stray.append(line)
    return stray


def test_the_store_reconnects_after_a_database_restart_without_failing_a_transaction(
    own_postgres: PostgresServer,
) -> None:
    url = create_database(own_postgres, "arena_reconnect")
    store = Store(url)
    try:
        store.register_bot("alpha")
        stop_database(own_postgres)
        with pytest.raises(Exception) as down:
            store.bots()
        assert is_outage(down.value), repr(down.value)  # an outage, told apart from a bad statement
        start_database(own_postgres)
        assert [bot.name for bot in store.bots()] == ["alpha"]  # the first transaction after it
        stop_database(own_postgres)
        start_database(own_postgres)  # restarted while idle: psycopg has not noticed yet
        assert [bot.name for bot in store.bots()] == ["alpha"]
    finally:
        store.close()


def test_a_database_stopped_for_5_s_loses_no_result_and_no_server(
    own_postgres: PostgresServer, tmp_path: Path
) -> None:
    url = create_database(own_postgres, "arena_outage")
    with arena(url, tmp_path) as run:
        replay_dir = run.servers[0].replay_dir
        wait_for(lambda: run.finished() >= 15, 120, "15 rated matches")
        recorded_before = {m for m, state in states(run).items() if state == "finished"}
        stop_database(own_postgres)
        stopped_ms = time.time() * 1000  # once the database is down: a match recorded before was in time
        time.sleep(OUTAGE_S - 1)  # the outage itself (with the second below): the servers play on
        told_during = ended_replays(replay_dir) - recorded_before

        def waiting_now() -> set[str]:
            return {path.stem for path in (replay_dir / PENDING_DIR).glob("*.json")}

        # A replay is renamed complete a moment before its result is journalled (both come before
        # its bots are told the match ended): give the journal that moment (up to the outage's last
        # second), with the database still down, so nothing can be recorded instead.
        deadline = time.monotonic() + 1
        while not told_during <= waiting_now() and time.monotonic() < deadline:
            time.sleep(0.1)
        waiting = waiting_now()
        start_database(own_postgres)
        # Matches ended while the database was down; their results waited on disk. A match recorded
        # between the first look and the stop is not waiting: the store has it from before the stop.
        assert told_during, "no match ended during the outage"
        recorded_in_between = {
            match_id
            for match_id in told_during - waiting
            for state, finished_ms in run.query(
                "SELECT state, finished_ms FROM matches WHERE match_id = ?", (match_id,)
            )
            if state == "finished" and finished_ms is not None and finished_ms <= stopped_ms
        }
        unaccounted = told_during - recorded_in_between - waiting
        assert not unaccounted, sorted(unaccounted)

        count = run.finished()
        wait_for(lambda: run.finished() >= count + 30, 120, "30 more rated matches after the outage")
        assert all(server.running() for server in run.servers)
        # While the servers live, every match their bots were told ended is recorded.
        wait_for(
            lambda: told_during <= {m for m, s in states(run).items() if s == "finished"},
            30,
            "the results of the outage recorded",
        )
        stop(run)
        for server in run.servers:
            assert server.process is not None and server.process.returncode == 0, server.log_path.read_text()[
                -3000:
            ]
        checked = check_store(run, replay_dir)  # exactly once: each bot's rating counts each match once
        finished = {row[0] for row in checked["finished"]}
        assert ended_replays(replay_dir) == finished
        assert run.query("SELECT COUNT(*) FROM lobby_places WHERE match_id IS NOT NULL")[0][0] == 0
        assert {row[0] for row in run.query("SELECT state FROM arena_servers")} == {"stopped"}
        assert list((replay_dir / PENDING_DIR).glob("*.json")) == []
        for server in run.servers:
            events = [entry.get("event") for entry in server.log_entries()]
            assert "taken for dead by the other servers; stopping" not in events
            assert not any("match of a dead server" in str(event) for event in events)
            errors, _warnings, samples = server.log_problems()
            assert errors == 0, samples


def test_a_frozen_server_taken_for_dead_writes_nothing_when_it_wakes(
    postgres_db: str, tmp_path: Path
) -> None:
    with arena(postgres_db, tmp_path) as run:
        wait_for(lambda: run.finished() >= 10, 120, "10 rated matches")
        victim = run.servers[0]
        victim_id = run.server_id(victim)
        assert victim.process is not None
        columns = "match_id, state, termination, started_ms, ended_ms, finished_ms, record_seq, abort_reason"

        def hosted() -> dict[str, Any]:
            return {
                row[0]: row
                for row in run.query(f"SELECT {columns} FROM matches WHERE server_id = ?", (victim_id,))
            }

        wait_for(
            lambda: "running" in {row[1] for row in hosted().values()}, 30, "a match running on the server"
        )
        victim.process.send_signal(signal.SIGSTOP)
        try:
            wait_for(
                lambda: (
                    run.query("SELECT state FROM arena_servers WHERE server_id = ?", (victim_id,))[0][0]
                    == "gone"
                ),
                4 * DEAD_AFTER_S,
                "the frozen server taken for dead",
            )
            buried = hosted()
            places = run.query(
                "SELECT p.leaving, m.server_id FROM lobby_places p "
                "LEFT JOIN matches m ON m.match_id = p.match_id "
                "WHERE p.server_id = ?",
                (victim_id,),
            )
        finally:
            victim.process.send_signal(signal.SIGCONT)
        assert "running" not in {row[1] for row in buried.values()}
        aborted = [m for m, row in buried.items() if row[1] == "aborted"]
        assert aborted and all("heartbeat" in buried[m][7] for m in aborted)
        # Its places went, but those booked for a match another server runs, theirs until it ends.
        assert all(leaving == 1 and host not in (None, victim_id) for leaving, host in places), places
        assert victim.process.wait(60) == 1
        # Awake, it wrote nothing: its matches, its places and its state are as the others left them.
        assert hosted() == buried
        assert run.query("SELECT state FROM arena_servers WHERE server_id = ?", (victim_id,))[0][0] == "gone"
        assert run.query(
            "SELECT COUNT(*) FROM lobby_places WHERE server_id = ? AND leaving = 0", (victim_id,)
        ) == [(0,)]
        stray = stray_lines(victim.log_path)
        assert len(stray) == 1 and "was taken for dead" in stray[0], stray[-20:]
        count = run.finished()
        wait_for(lambda: run.finished() >= count + 10, 120, "10 more rated matches on the other servers")
        stop(run)
        check_store(run, victim.replay_dir)  # no bot in two matches at once, every result rated once


def test_a_server_taken_for_dead_cannot_write_to_shared_rows(postgres_db: str) -> None:
    """Every write of a server to the shared rows, tried after the others buried it."""
    store = Store(postgres_db)
    other = Store(postgres_db)
    dead = Cluster(store, "127.0.0.1:1", dead_after_s=2, max_matches_per_bot=2)
    alive = Cluster(other, "127.0.0.1:2", dead_after_s=2, max_matches_per_bot=2)
    try:
        store.register_bot("a")
        dead.register()
        alive.register()
        assert dead.claim_places("a", 1, ["grosstarock"], 1) == 1
        with dead.store.transaction() as db:
            db.execute(
                "INSERT INTO matches (match_id, variant, seed, deals, state, started_ms, server_id) "
                "VALUES ('m1', 'grosstarock', 1, 1, 'running', 1, ?)",
                (dead.server_id,),
            )
            db.execute("INSERT INTO match_seats (match_id, seat, bot) VALUES ('m1', 0, 'a')")
        # Silence that the reaper's own reconnection explains is not death...
        with other.transaction() as db:
            db.execute(
                "UPDATE arena_servers SET heartbeat_ms = heartbeat_ms - 60000 WHERE server_id = ?",
                (dead.server_id,),
            )
        alive._last_beat_ms = None  # its last heartbeat failed: it regains the database now
        alive.heartbeat()
        assert alive.reap() == []
        # ... silence over time it reached the database is.
        alive._reachable_since_ms = 0
        aborted: list[tuple[str, str]] = []
        wait_for(lambda: aborted.extend(alive.reap()) or aborted, 10, "the silent server buried")
        assert [m for m, _ in aborted] == ["m1"]
        before = other.match_state("m1")
        for write in (
            lambda: dead.heartbeat(),
            lambda: dead.claim_places("a", 2, ["grosstarock"], 1),
            lambda: dead.release("m1", None, 123),
            lambda: dead.publish([]),
            lambda: dead.book_round({"grosstarock": 3}, ["grosstarock"], lambda v: 1, lambda: 1),
            lambda: store.abort_match("m1", "late", dead.guard_live),
        ):
            with pytest.raises(TakenForDeadError):
                write()
        dead.set_state("stopped")
        with other.transaction() as db:
            row = db.execute(
                "SELECT state, ended_ms, abort_reason FROM matches WHERE match_id = 'm1'"
            ).fetchone()
            server = db.execute(
                "SELECT state FROM arena_servers WHERE server_id = ?", (dead.server_id,)
            ).fetchone()
            places = db.execute("SELECT COUNT(*) FROM lobby_places").fetchone()[0]
        assert before == "aborted" and row[0] == "aborted" and row[1] is None and "heartbeat" in row[2]
        assert server[0] == "gone" and places == 0
    finally:
        for opened in (store, other, dead.store, alive.store):
            with contextlib.suppress(Exception):
                opened.close()


@contextlib.contextmanager
def sqlite_server(db: Path, directory: Path, name: str) -> Iterator[subprocess.Popen[bytes]]:
    """`arena serve --port 0` on the SQLite store `db`, listening; stopped with SIGTERM on the way out."""
    log = directory / f"{name}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--port", "0", "--store", str(db),
             "--replay-dir", str(directory / f"{name}-replays"),
             "--operator-token-file", str(directory / f"{name}.token")],
            stderr=stderr,
        )  # fmt: skip
    try:
        wait_for(
            lambda: '"server listening"' in log.read_text() or process.poll() is not None,
            30,
            f"{name} listening",
        )
        assert process.poll() is None, log.read_text()
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


def test_a_second_server_on_one_sqlite_store_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with sqlite_server(db, tmp_path, "first") as first:
        # A match of the first server's, running in the store: the second must not touch it.
        with contextlib.closing(Store(str(db))) as store:
            store.register_bot("ann")
            store.start_match("m1", "grosstarock", 1, 1, ["ann"])
        second = subprocess.run(
            [sys.executable, "-m", "arena", "serve", "--port", "0", "--store", str(db),
             "--replay-dir", str(tmp_path / "r2"), "--operator-token-file", str(tmp_path / "t2")],
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
        assert second.returncode == 1, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert str(db) in lines[0] and f"pid {first.pid}" in lines[0], lines[0]
        assert "in use by another arena server" in lines[0]
        with contextlib.closing(Store(str(db))) as store:
            assert store.match_state("m1") == "running"
        assert first.poll() is None
    # Its lock goes with it: the next server starts (and records the match cut off as aborted).
    with sqlite_server(db, tmp_path, "next"), contextlib.closing(Store(str(db))) as store:
        assert store.match_state("m1") == "aborted"


def test_results_left_on_disk_by_an_earlier_run_are_recorded_once_at_the_next_start(tmp_path: Path) -> None:
    """A SQLite server: what an earlier run could not store waits in pending-results/ and is
    recorded when the next server starts, before the matches cut off are aborted."""
    replay_dir = tmp_path / "replays"
    replay_dir.mkdir()
    sample = ROOT / "replays" / "samples" / "grosstarock.jsonl"
    end = json.loads(sample.read_text().splitlines()[-1])
    bots = ["ann", "bob", "cid"]
    journal = Journal(replay_dir)
    told = PendingRecord(
        "told", "result", "grosstarock", bots, 1, "told.jsonl", "completed", None, end["scores"]
    )
    with contextlib.closing(Store(str(tmp_path / "arena.db"))) as store:
        for bot in bots:
            store.register_bot(bot)
        for match_id in ("told", "cut", "plain"):
            store.start_match(match_id, "grosstarock", 1, 1, bots)
        (replay_dir / "told.jsonl").write_text(sample.read_text())
        journal.save(told)
        journal.save(PendingRecord("cut", "abort", "grosstarock", bots, 1, reason="the match did not finish"))
        journal.save(PendingRecord("gone", "abort", "grosstarock", bots, 1, reason="never stored"))
        with ServerThread(store, replay_dir, FAST):
            wait_for(lambda: journal.load() == [], 10, "the journal emptied")
            states = store.match_states()
            assert states == {"told": "finished", "cut": "aborted", "plain": "aborted"}
            with store.transaction() as db:
                reasons = dict(db.execute("SELECT match_id, abort_reason FROM matches").fetchall())
            assert reasons["cut"] == "the match did not finish"
            standings = {s.bot: s for s in store.standings("grosstarock")}
            assert {bot: s.matches for bot, s in standings.items()} == dict.fromkeys(bots, 1)
            recorded = [m for bot in bots for m in standings[bot].recent if m.match_id == "told"]
            assert [m.scores for m in recorded] == [end["scores"]] * 3
            # Offered again (another server's copy, a retry after a lost reply): recorded once.
            journal.save(told)
            wait_for(lambda: journal.load() == [], 10, "the journal emptied again")
            assert {s.bot: s.matches for s in store.standings("grosstarock")} == dict.fromkeys(bots, 1)
