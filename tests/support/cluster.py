"""Several real `arena serve` processes sharing one real PostgreSQL, and bots in a driver process
(`benchmarks.arena_driver`), for the cluster's tests (tests/standing/): start them, stop them, and
check the whole run's invariants from the store's rows."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from postgres import free_port

from arena.engine import find_variant
from arena.ratings import Ratings
from arena.replay.summary import read_results
from arena.standing.luck import adjusted_points
from arena.standing.store import Store
from benchmarks.arena_processes import ArenaServer, Drivers

BOTS = 30
SEATS = find_variant("grosstarock").seats
HEARTBEAT_S = 0.5
DEAD_AFTER_S = 3.0
SETTINGS = f"heartbeat_s = {HEARTBEAT_S}\nserver_dead_after_s = {DEAD_AFTER_S}\n"


@dataclass
class Arena:
    url: str
    servers: list[ArenaServer]
    drivers: Drivers

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        store = Store(self.url)
        try:
            with store.transaction() as db:
                return list(db.execute(sql, params).fetchall())
        finally:
            store.close()

    def finished(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM matches WHERE state = 'finished'")[0][0])

    def server_id(self, server: ArenaServer) -> str:
        for entry in server.log_entries():
            if entry.get("event") == "joined the arena's servers":
                return str(entry["server_id"])
        raise AssertionError(f"{server.log_path.name}: no server id in the log")

    def lobby_bots(self, server: ArenaServer) -> set[str]:
        """The bots that joined this server's lobby."""
        return {str(e["bot"]) for e in server.log_entries() if e.get("event") == "lobby join"}


def new_servers(url: str, directory: Path, count: int) -> list[ArenaServer]:
    """`count` servers of one-deal matches on the store at `url`, each on its own free port."""
    return [
        ArenaServer(
            directory,
            ["grosstarock"],
            deals=1,
            max_matches=1,
            store=url,
            port=free_port(),
            name=f"server{i}",
            settings=SETTINGS,
        )
        for i in range(count)
    ]


@contextlib.contextmanager
def running(servers: list[ArenaServer]) -> Iterator[list[ArenaServer]]:
    """The servers started; all stopped on the way out."""
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
        for server in servers:
            server.start()
        yield servers


@contextlib.contextmanager
def arena(url: str, directory: Path, servers: int = 3) -> Iterator[Arena]:
    started = new_servers(url, directory, servers)
    tokens = started[0].register_bots(BOTS)
    with contextlib.ExitStack() as stack:
        stack.enter_context(running(started))
        drivers = stack.enter_context(Drivers(directory))
        drivers.start(
            {
                "addresses": [f"127.0.0.1:{server.port}" for server in started],
                "tokens": [[i, token] for i, token in enumerate(tokens)],
                "variants": ["grosstarock"],
                "max_matches": 1,
                "connect_timeout_s": 30,
                "drain_s": 30,
            }
        )
        connected = drivers.wait_all("connected", 60)
        assert connected == {0: f"connected {BOTS}"}, drivers.failure("the bots did not all connect")
        drivers.tell("start")
        yield Arena(url, started, drivers)


def stop(run: Arena) -> dict[str, Any]:
    """Drain every server still running (SIGTERM: the matches in flight finish and are recorded),
    then let the bots go; the driver's counts."""
    for server in run.servers:
        if server.running():
            assert server.process is not None
            server.process.send_signal(15)
    for server in run.servers:
        if server.process is not None:
            server.process.wait(60)
    run.drivers.tell("stop")
    run.drivers.tell("leave")
    assert run.drivers.wait_all("done", 60), run.drivers.failure("the driver did not finish")
    [stats] = run.drivers.stats()
    return stats


def check_store(run: Arena, replay_dir: Path) -> dict[str, Any]:
    """The invariants of the whole run, from the store's rows; some numbers for the test's own checks."""
    matches = run.query(
        "SELECT match_id, state, started_ms, ended_ms, finished_ms, record_seq, replay, server_id, "
        "abort_reason FROM matches"
    )
    seats = run.query("SELECT match_id, seat, bot FROM match_seats ORDER BY match_id, seat")
    by_match: dict[str, list[str]] = defaultdict(list)
    for match_id, _seat, bot in seats:
        by_match[match_id].append(bot)
    # No table formed twice, no bot twice at one table.
    assert all(len(bots) == SEATS and len(set(bots)) == SEATS for bots in by_match.values())
    assert set(by_match) == {row[0] for row in matches}

    # No bot double-booked: each bot has one place (max_matches_per_bot = 1), so its matches never
    # overlap. A match holds its places from its start until it ended on its server (its places
    # are freed then, in the transaction that stores `ended_ms`), or, if its server died first,
    # until another server recorded it aborted.
    intervals: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    rows = {row[0]: row for row in matches}
    for match_id, state, started, ended, finished, *_ in matches:
        assert state in ("finished", "aborted"), f"match {match_id} still {state} after the stop"
        end = ended if ended is not None else finished
        for bot in by_match[match_id]:
            intervals[bot].append((int(started), int(end), match_id))
    for bot, spans in intervals.items():
        spans.sort()
        for (_, end, one), (start, _, other) in itertools.pairwise(spans):
            assert start >= end, (
                f"{bot} was booked for {other} while still in {one}: {rows[one]} {rows[other]}"
            )

    # Every finished match rated once: each has its record number (matches recorded at the same
    # time by different servers may share one, but only when no bot sits at both), and every bot's
    # rating counts each of its finished matches once.
    finished = [row for row in matches if row[1] == "finished"]
    assert None not in [row[5] for row in finished]
    same_seq: dict[int, list[str]] = defaultdict(list)
    for row in finished:
        same_seq[row[5]].extend(by_match[row[0]])
    assert all(len(bots) == len(set(bots)) for bots in same_seq.values())
    assert all(row[5] is None for row in matches if row[1] == "aborted")
    rated = dict(run.query("SELECT bot, matches FROM ratings WHERE variant = 'grosstarock'"))
    per_bot = Counter(bot for row in finished for bot in by_match[row[0]])
    assert rated == dict(per_bot)

    # The standings equal a recomputation from the stored results, in the order they were recorded.
    recomputed = Ratings(sorted(per_bot))
    for row in sorted(finished, key=lambda r: r[5]):
        bots = by_match[row[0]]
        results = read_results(replay_dir / row[6], SEATS)
        adjusted = adjusted_points(replay_dir / row[6], results.deals)  # the luck taken out
        recomputed.update(bots, results.deals, forfeited_seat(replay_dir / row[6]), adjusted)
    stored = {
        bot: (mu, sigma)
        for bot, mu, sigma in run.query("SELECT bot, mu, sigma FROM ratings WHERE variant = 'grosstarock'")
    }
    for bot, (mu, sigma) in stored.items():
        assert recomputed.of([bot])[bot] == pytest.approx((mu, sigma), abs=1e-9), bot
    return {"matches": matches, "by_match": by_match, "finished": finished}


def forfeited_seat(replay: Path) -> int | None:
    for line in replay.read_text().splitlines():
        entry = json.loads(line)
        if entry["type"] == "match_end":
            forfeited = entry["forfeited"]
            return None if forfeited is None else int(forfeited)
    raise AssertionError(f"{replay}: no match_end")


def ended_replays(replay_dir: Path) -> set[str]:
    """The matches whose replay is complete and ends 'completed' or 'forfeit': their bots were told."""
    ended = set()
    for path in replay_dir.glob("*.jsonl"):
        for line in reversed(path.read_text().splitlines()):
            entry = json.loads(line)
            if entry["type"] == "match_end":
                if entry["termination"] in ("completed", "forfeit"):
                    ended.add(path.stem)
                break
    return ended
