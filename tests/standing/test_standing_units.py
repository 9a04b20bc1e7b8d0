"""The standing arena's store (on SQLite and on a real PostgreSQL), matchmaking and settings."""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
from structlog.testing import capture_logs

from arena.standing.config import ArenaConfig
from arena.standing.joining import JoinBucket
from arena.standing.matchmaking import Candidate, form_tables, pair_key
from arena.standing.pending import Journal, PendingRecord
from arena.standing.results import Results
from arena.standing.store import (
    MatchResult,
    SeatResult,
    Store,
    StoreError,
    StoreUnavailableError,
    hash_token,
)


@pytest.fixture
def store(any_store: Store) -> Store:
    """Each store test runs on SQLite and on PostgreSQL (`any_store`, tests/conftest.py)."""
    return any_store


def result(match_id: str, bots: list[str], scores: list[int], faults: list[int]) -> MatchResult:
    return MatchResult(
        match_id=match_id,
        variant="grosstarock",
        termination="completed",
        replay=f"{match_id}.jsonl",
        seats=[
            SeatResult(bot, score, deals=3, decisions=70, faults=f, fault_kinds=["timeout: slow"] * f)
            for bot, score, f in zip(bots, scores, faults, strict=True)
        ],
        ratings={bot: (25.0 + score / 10, 8.0) for bot, score in zip(bots, scores, strict=True)},
    )


def test_tokens_are_kept_only_as_hashes(store: Store, tmp_path: Path) -> None:
    bot, token = store.register_bot("alpha", ["danish"])
    assert bot.variants == ("danish",) and token.startswith("gta_") and len(token) > 40
    assert store.bot_by_token(token) == store.bot("alpha")
    assert store.bot_by_token(token + "x") is None
    with store.transaction() as db:
        stored = db.execute("SELECT token_hash FROM bots").fetchall()
    assert [row[0] for row in stored] == [hash_token(token)]
    if not store.postgres:
        assert token.encode() not in (tmp_path / "arena.db").read_bytes()


def test_registration_errors(store: Store) -> None:
    store.register_bot("alpha")
    with pytest.raises(StoreError, match="already registered"):
        store.register_bot("alpha")
    with pytest.raises(StoreError, match="bot name"):
        store.register_bot("no spaces")
    with pytest.raises(StoreError, match="no bot named"):
        store.revoke_bot("ghost")


def test_revocation_and_resume(store: Store) -> None:
    _, token = store.register_bot("alpha")
    store.register_bot("beta")
    revoked = store.revoke_bot("alpha")
    assert revoked.state() == "revoked" and store.revoked_bots() == {"alpha"}
    found = store.bot_by_token(token)
    assert found is not None and found.revoked  # the lobby refuses it
    assert store.resume_bot("beta").state() == "active"


def test_finished_matches_rate_count_and_pause(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.register_bot(name)
    for number in range(3):
        match_id = f"m{number}"
        store.start_match(match_id, "grosstarock", seed=number, deals=3, bots=["a", "b", "c"])
        pauses = store.finish_match(
            result(match_id, ["a", "b", "c"], [30, -10, -20], [0, 1, 0]), pause_after=3, pause_ms=60_000
        )
    assert [p.bot for p in pauses] == ["b"] and "3 matches in a row" in pauses[0].reason
    assert store.bot("b").state() == "paused" and "timeout: slow" in store.bot("b").pause_reason
    table = store.standings("grosstarock", recent=2)
    assert [s.bot for s in table] == ["a", "b", "c"]  # by conservative rating
    a = table[0]
    assert (a.matches, a.deals, a.score, a.decisions) == (3, 9, 90, 210)
    assert a.mean_score_per_deal == pytest.approx(10.0)
    assert table[1].fault_rate == pytest.approx(3 / 210) and table[1].state == "paused"
    assert [m.match_id for m in a.recent] == ["m2", "m1"]  # newest first
    assert a.recent[0].seats == ["a", "b", "c"] and a.recent[0].scores == [30, -10, -20]
    assert store.ratings("grosstarock", ["a", "z"]) == {"a": (28.0, 8.0)}
    assert store.pair_counts() == {("grosstarock", x, y): 3 for x, y in (("a", "b"), ("a", "c"), ("b", "c"))}
    assert store.standings("danish") == []


def test_a_clean_match_ends_a_fault_streak(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.register_bot(name)
    faults = [[1, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0]]
    for number, row in enumerate(faults):
        store.start_match(f"m{number}", "grosstarock", number, 3, ["a", "b", "c"])
        assert store.finish_match(result(f"m{number}", ["a", "b", "c"], [0, 0, 0], row), 3, 60_000) == []
    assert store.bot("a").state() == "active"


def test_a_restart_marks_cut_off_matches_aborted_and_unrated(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.register_bot(name)
    store.start_match("done", "grosstarock", 1, 3, ["a", "b", "c"])
    store.finish_match(result("done", ["a", "b", "c"], [5, 0, -5], [0, 0, 0]), 3, 60_000)
    store.start_match("cut", "grosstarock", 2, 3, ["a", "b", "c"])
    reopened = Store(store.url)
    try:
        assert reopened.abort_unfinished() == 1
        assert reopened.match_states() == {"done": "finished", "cut": "aborted"}
        assert [s.matches for s in reopened.standings()] == [1, 1, 1]
        assert [(m.match_id, m.termination) for m in reopened.standings()[0].recent] == [
            ("cut", "aborted"),
            ("done", "completed"),
        ]
    finally:
        reopened.close()


# --------------------------------------------------------------------------- matchmaking


def test_tables_seat_distinct_bots_longest_waiting_first() -> None:
    pool = [
        Candidate("a", 1, 25.0, 0.0),
        Candidate("a", 2, 25.0, 0.5),  # a second stream of the same bot
        Candidate("b", 3, 25.0, 1.0),
        Candidate("c", 4, 25.0, 2.0),
    ]
    tables = form_tables(pool, 3, {})
    assert len(tables) == 1
    assert tables[0][0].stream == 1 and len({c.bot for c in tables[0]}) == 3
    assert form_tables(pool[:3], 3, {}) == []  # only two distinct bots


def test_similar_ratings_sit_together() -> None:
    mus = {"low1": 10.0, "low2": 11.0, "low3": 12.0, "high1": 40.0, "high2": 41.0, "high3": 42.0}
    pool = [Candidate(bot, i, mu, float(i)) for i, (bot, mu) in enumerate(mus.items())]
    tables = form_tables(pool, 3, {})
    assert sorted(sorted(c.bot for c in t) for t in tables) == [
        ["high1", "high2", "high3"],
        ["low1", "low2", "low3"],
    ]


def test_no_pair_meets_far_more_often_than_others() -> None:
    rng = random.Random(3)
    bots = {f"bot{i}": 15.0 + 2 * i for i in range(8)}  # a spread of ratings
    meetings: Counter[tuple[str, str]] = Counter()
    clock = 0.0
    waiting = {bot: rng.random() for bot in bots}
    for _ in range(400):
        pool = [Candidate(bot, i, bots[bot], waiting[bot]) for i, bot in enumerate(bots)]
        table = form_tables(pool, 3, meetings)[0]
        for i, one in enumerate(table):
            clock += 1
            waiting[one.bot] = clock
            for other in table[i + 1 :]:
                meetings[pair_key(one.bot, other.bot)] += 1
    counts = [meetings[pair_key(x, y)] for x in bots for y in bots if x < y]
    average = sum(counts) / len(counts)
    assert min(counts) > 0  # everyone meets everyone
    assert max(counts) <= 2 * average, (max(counts), average)
    # ... yet neighbours in rating meet more often than the extremes
    assert meetings[pair_key("bot0", "bot1")] > meetings[pair_key("bot0", "bot7")]


# --------------------------------------------------------------------------- settings


def test_arena_config_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "arena.toml"
    path.write_text('[arena]\nvariants = ["danish"]\ndeals = 2\nmax_matches_per_bot = 2\n')
    config = ArenaConfig.from_toml(path)
    assert config.variants == ("danish",) and config.deals == 2 and config.max_matches_per_bot == 2
    path.write_text("[arena]\nmax_matchez = 2\n")
    with pytest.raises(ValueError, match="unknown \\[arena\\] keys max_matchez"):
        ArenaConfig.from_toml(path)
    path.write_text("[arena]\nlatency_allowance_ms = 300\n")
    assert ArenaConfig.from_toml(path).time_control.latency_allowance_ms == 300
    path.write_text("[arena]\nlatency_allowance_ms = -1\n")
    with pytest.raises(ValueError, match="latency_allowance_ms is 0 or more"):
        ArenaConfig.from_toml(path)
    path.write_text("[arena]\njoin_burst = 0\n")
    with pytest.raises(ValueError, match="join_burst is at least 1"):
        ArenaConfig.from_toml(path)


def test_join_bucket_allows_a_burst_then_says_when() -> None:
    bucket = JoinBucket(burst=2, per_minute=6)
    assert bucket.take() == 0 and bucket.take() == 0
    wait = bucket.take()
    assert 9_000 <= wait <= 10_000  # one join per 10 s


# --------------------------------------------------------------------------- the operator's commands


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd)


def test_bots_commands_work_on_the_store(tmp_path: Path) -> None:
    registered = arena("bots", "register", "alpha", "--variants", "danish,grosstarock", cwd=tmp_path)
    assert registered.returncode == 0, registered.stderr
    token = registered.stdout.strip()
    assert token.startswith("gta_") and "shown only this once" in registered.stderr
    with contextlib.closing(Store(str(tmp_path / "arena.db"))) as store:
        assert store.bot_by_token(token) == store.bot("alpha")
    listed = json.loads(arena("bots", "list", "--json", cwd=tmp_path).stdout)["bots"]
    assert [(b["name"], b["variants"], b["state"]) for b in listed] == [
        ("alpha", ["danish", "grosstarock"], "active")
    ]
    assert arena("bots", "revoke", "alpha", cwd=tmp_path).stdout == "revoked alpha\n"
    assert "revoked" in arena("bots", "list", cwd=tmp_path).stdout
    assert arena("standings", cwd=tmp_path).stdout == "no rated matches yet\n"


def test_bots_commands_explain_bad_input(tmp_path: Path) -> None:
    missing = arena("bots", "list", "--store", "nowhere.db", cwd=tmp_path)
    assert missing.returncode == 1 and "nowhere.db: no arena store here" in missing.stderr
    assert not (tmp_path / "nowhere.db").exists()
    arena("bots", "register", "alpha", cwd=tmp_path)
    again = arena("bots", "register", "alpha", cwd=tmp_path)
    assert again.returncode == 1 and "already registered" in again.stderr and not again.stdout
    revoke_ghost = arena("bots", "revoke", "ghost", cwd=tmp_path)
    assert revoke_ghost.stderr == "arena bots revoke: no bot named 'ghost'\n"
    wrong_variant = arena("bots", "register", "beta", "--variants", "skat", cwd=tmp_path)
    assert wrong_variant.returncode == 2 and "unknown variant 'skat'" in wrong_variant.stderr
    assert arena("standings", "--variant", "skat", cwd=tmp_path).returncode == 2
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("hello")
    broken = arena("standings", "--store", str(not_a_db), cwd=tmp_path)
    assert broken.returncode == 1 and "cannot open the arena store" in broken.stderr


def test_a_bot_on_several_streams_never_exceeds_its_match_limit() -> None:
    """Streams that outlived their matches' lobby stream count too: the limit is per bot."""
    from arena.standing.lobby import Lobby
    from arena.standing.state import LobbyStream

    class Link:
        def __init__(self, number: int) -> None:
            self.id = number
            self.sent: list[Any] = []

        def send(self, message: Any) -> None:
            self.sent.append(message)

    class Hub:
        def __init__(self) -> None:
            self.started: list[tuple[str, ...]] = []
            self.replay_dir = Path("replays")  # never written: no match ends here

        def create_match(self, config: Any) -> Any:
            self.started.append(config.seat_names)
            seat = SimpleNamespace(token="t")
            return SimpleNamespace(
                match_id=f"m{len(self.started)}",
                seats=[seat] * 3,
                log=SimpleNamespace(info=lambda *a, **k: None),
            )

    hub = Hub()
    nursery = SimpleNamespace(start_soon=lambda *args: None)
    lobby = Lobby(hub, None, ArenaConfig(variants=("grosstarock",), max_matches_per_bot=2), nursery)  # type: ignore[arg-type]
    lobby.running_by_bot["greedy"] = 1  # a match seated through a lobby stream closed since
    for number, bot in enumerate(["greedy", "greedy", "b", "c", "d", "e"]):
        lobby.streams[number] = LobbyStream(
            Link(number), bot, ("grosstarock",), 2, waiting_since=float(number)
        )  # type: ignore[arg-type]

    async def seat() -> None:
        lobby.form_tables()

    trio.run(seat)
    assert len(hub.started) == 1  # the second table, with greedy again, waits
    assert "greedy" in hub.started[0] and lobby.running_by_bot["greedy"] == 2


def test_a_store_gone_while_a_refused_result_is_looked_at_keeps_it_on_disk(tmp_path: Path) -> None:
    """The store refuses a pending record (its match is not running there) and is gone before the
    look at what it has: the record stays in the journal, as for any record the store did not
    answer, with a warning; not an error out of the settling loop (a database outage is waited
    out, and the next pass retries)."""

    class Gone:  # the store's edge: it answers the record, then nothing
        def abort_match(self, *args: Any) -> bool:
            return False  # "not running": the look at the match comes next

        def match_state(self, match_id: str) -> str:
            raise StoreUnavailableError("cannot connect: the database system is shutting down")

    async def db(fn: Any, *args: Any) -> Any:
        return fn(*args)

    state: Any = SimpleNamespace(store=Gone(), cluster=None, db=db)
    journal = Journal(tmp_path)
    record = PendingRecord(match_id="m1", kind="abort", variant="grosstarock", bots=["a", "b"], ended_ms=1)
    journal.save(record)
    results = Results(state, journal)
    with capture_logs() as logs:
        assert trio.run(results.settle_all) is False
    assert [r.match_id for r in journal.load()] == ["m1"]
    assert [(entry["log_level"], entry["event"]) for entry in logs] == [
        ("warning", "result kept on disk until the store answers")
    ]
