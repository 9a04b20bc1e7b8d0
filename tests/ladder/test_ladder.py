"""Ladders end to end: `arena ladder …` as real processes, a real server on a real port, real
bot processes (the SDK's example bots, the scripted bot), a real SQLite file."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import SDK, arena, free_port
from support.ladder import HEURISTIC, RANDOM, RANDOM_2, crasher, ladder_file

from arena.ladder.config import load_ladder
from arena.ladder.schedule import build_schedule, match_key


def log_lines(stderr: str) -> list[dict[str, Any]]:
    """The JSON log lines (standard error is not a terminal here)."""
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def replays(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Every complete replay log in `directory`, by match id."""
    return {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in directory.glob("*.jsonl")
    }


def replay_key(lines: list[dict[str, Any]], deal_sets: int, seed: int) -> str:
    """The ladder key of a replayed match, from its header (seat names are bot names)."""
    header = lines[0]
    from arena.ladder.schedule import deal_set_seed

    deal_set = next(d for d in range(deal_sets) if deal_set_seed(seed, d) == header["seed"])
    return match_key(deal_set, header["seats"])


# --------------------------------------------------------------------------- a ladder with a crashing bot


@dataclass
class Ran:
    path: Path
    db: Path
    run: subprocess.CompletedProcess[str]
    standings: dict[str, Any]


@pytest.fixture(scope="module")
def crash_ladder(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """Heuristic, two random bots and one that crashes in every match: 24 matches of 2 deals."""
    directory = tmp_path_factory.mktemp("ladder")
    head = "name = 'e2e'\nseed = 11\ndeal_sets = 1\ndeals = 2\nconcurrency = 3\n"
    head += "[faults]\nreconnect_grace_ms = 300\n"
    path = ladder_file(directory, head, HEURISTIC, RANDOM, RANDOM_2, crasher(6))
    run = arena("ladder", "run", path, "--json")
    assert run.returncode == 0, run.stderr
    return Ran(path, directory / "ladder.sqlite", run, json.loads(run.stdout))


def by_name(standings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {bot["name"]: bot for bot in standings["bots"]}


def test_a_ladder_of_the_example_bots_runs_end_to_end(crash_ladder: Ran) -> None:
    table = crash_ladder.standings
    assert table["matches_done"] == table["matches_planned"] == 24  # 4 tables × 6 arrangements
    bots = by_name(table)
    assert {name: bot["matches"] for name, bot in bots.items()} == dict.fromkeys(bots, 18)
    assert {name: bot["deals"] for name, bot in bots.items()} == dict.fromkeys(bots, 36)
    conn = sqlite3.connect(crash_ladder.db)
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM matches").fetchone() == (24, 24)
    assert conn.execute("SELECT COUNT(*) FROM deals").fetchone()[0] == 24 * 2 * 3
    # Every deal is zero-sum (grosstarock has no pots), as recorded.
    sums = conn.execute("SELECT SUM(points) FROM deals GROUP BY match_seq, deal").fetchall()
    assert {s for (s,) in sums} == {0}
    assert all(row["ci95"] is not None and row["ci95"] > 0 for row in table["bots"])
    logs = log_lines(crash_ladder.run.stderr)
    events = Counter(line["event"] for line in logs)
    assert events["ladder started"] == 1 and events["ladder finished"] == 1 and events["match recorded"] == 24
    assert all(line.get("component") == "ladder" for line in logs)  # concise: the ladder's lines only
    recorded = [line for line in logs if line["event"] == "match recorded"]
    assert [line["done"] for line in recorded] == list(range(1, 25))
    assert all(line["total"] == 24 and line["leader"] for line in recorded)

    text = arena("ladder", "standings", crash_ladder.db)
    assert text.returncode == 0, text.stderr
    assert "24/24 matches" in text.stdout and "crosstable" in text.stdout
    for name in bots:
        assert name in text.stdout


def test_the_heuristic_bot_ranks_above_the_random_ones(crash_ladder: Ran) -> None:
    bots = by_name(crash_ladder.standings)
    heuristic = bots["heuristic"]
    assert heuristic["rank"] == 1
    for other in ("random", "random-2", "crasher"):
        assert heuristic["rating"] > bots[other]["rating"]
        assert heuristic["points_per_deal"] > bots[other]["points_per_deal"]
        assert crash_ladder.standings["crosstable"]["heuristic"][other]["diff_per_deal"] > 0
    # Its interval lies above zero: better than break-even, not only better than the others.
    assert heuristic["points_per_deal"] - heuristic["ci95"] > 0


def test_each_bot_sits_in_each_seat_equally_often_on_identical_decks(crash_ladder: Ran) -> None:
    conn = sqlite3.connect(crash_ladder.db)
    rows = conn.execute("SELECT seats, match_id, seed FROM matches").fetchall()
    assert len({seed for _, _, seed in rows}) == 1  # one deal set: one deck sequence
    seats_by_table: dict[frozenset[str], Counter[tuple[str, int]]] = defaultdict(Counter)
    for seats, _, _ in rows:
        names = json.loads(seats)
        for seat, name in enumerate(names):
            seats_by_table[frozenset(names)][(name, seat)] += 1
    assert len(seats_by_table) == 4
    for table, counts in seats_by_table.items():
        assert counts == Counter({(name, seat): 2 for name in table for seat in range(3)})
    # The decks the referee dealt, from the replays: the same in every match.
    config = load_ladder(crash_ladder.path)
    logs = replays(config.replay_dir)
    decks = {
        match_id: [line["deck"] for line in logs[match_id] if line["type"] == "deal_start"]
        for _, match_id, _ in rows
    }
    assert len(decks) == 24 and all(len(d) == 2 for d in decks.values())
    assert len({json.dumps(d) for d in decks.values()}) == 1


def test_a_crashing_bot_has_its_faults_counted_and_the_ladder_goes_on(crash_ladder: Ran) -> None:
    bots = by_name(crash_ladder.standings)
    crashed = bots["crasher"]
    assert crashed["crashes"] == 18  # it died in each of its matches ...
    assert crashed["faults"]["crash"] >= 18  # ... and the referee played for it from then on
    assert crashed["deals"] == 36  # its matches still count: every one of them completed
    for name in ("heuristic", "random", "random-2"):
        assert bots[name]["crashes"] == 0 and sum(bots[name]["faults"].values()) == 0
    conn = sqlite3.connect(crash_ladder.db)
    # A fresh process in every match: it ran (and died, status 3) 18 times.
    exits = conn.execute("SELECT status, crashed FROM exits WHERE bot = 'crasher'").fetchall()
    assert exits == [(3, 1)] * 18
    assert {t for (t,) in conn.execute("SELECT termination FROM matches")} == {"completed"}
    crashes = [line for line in log_lines(crash_ladder.run.stderr) if line["event"] == "bot crashed"]
    assert len(crashes) == 18 and {line["bot"] for line in crashes} == {"crasher"}


def test_the_report_has_the_standings_and_the_plots(crash_ladder: Ran, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = arena("ladder", "report", crash_ladder.db, "-o", out)
    assert done.returncode == 0, done.stderr
    page = (out / "index.html").read_text()
    for name in ("heuristic", "random-2", "crasher", "ratings.png", "scores.png", "points.png", "Crosstable"):
        assert name in page
    for png in ("ratings.png", "scores.png", "points.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


# --------------------------------------------------------------------------- SIGKILL and resume


def started_at(pid: int) -> int:
    """When process `pid` started, in clock ticks since boot (/proc/PID/stat, field 22)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def bot_processes_dialling(address: str, since: int = 0) -> list[int]:
    """Processes started at or after `since` (clock ticks since boot) whose environment points them
    at `address` (the bots of one ladder run). `since` keeps out a process of an earlier test that
    dialled a server which had the same port before this one."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            if f"ARENA_ADDRESS={address}".encode() in environ and started_at(int(entry.name)) >= since:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def describe(pids: list[int]) -> list[str]:
    """Each process's state and command line, for a failure message; one that has ended meanwhile
    is left out."""
    said = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        said.append(f"{pid} {state} {command}")
    return said


def referee_processes(parent: int) -> list[int]:
    """The referee processes (`python -m arena.ladder.referees`) whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"arena.ladder.referees" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("referees", [1, 2])
def test_a_ladder_killed_with_sigkill_resumes_without_losing_or_repeating_a_match(
    tmp_path: Path, referees: int
) -> None:
    # With 2, the matches are spread over two referee processes, which die with the ladder.
    head = f"seed = 5\ndeal_sets = 2\ndeals = 2\nconcurrency = 2\nreferees = {referees}\n"
    path = ladder_file(tmp_path, head, HEURISTIC, RANDOM, RANDOM_2)
    db = tmp_path / "ladder.sqlite"
    errors = (tmp_path / "first.log").open("w")
    first = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "run", str(path)], stderr=errors)
    since = started_at(first.pid)
    try:
        deadline = time.monotonic() + 120
        recorded = 0
        while recorded < 3 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
            if db.exists():
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    try:
                        recorded = conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
                    except sqlite3.OperationalError:  # the schema is not there yet
                        recorded = 0
        children = referee_processes(first.pid)
        assert len(children) == (referees if referees > 1 else 0)
        first.send_signal(signal.SIGKILL)
        assert first.wait(10) == -signal.SIGKILL
    finally:
        if first.poll() is None:
            first.kill()
        errors.close()
    started = [
        line for line in log_lines((tmp_path / "first.log").read_text()) if line["event"] == "ladder started"
    ]
    addresses = started[0]["referees"] if referees > 1 else [started[0]["address"]]
    assert len(addresses) == referees

    conn = sqlite3.connect(db)
    before = conn.execute("SELECT seq, key, match_id, scores FROM matches ORDER BY seq").fetchall()
    conn.close()
    assert 3 <= len(before) < 12, "the run was to be killed in the middle"
    # The killed run's referees and bots died with it (parent-death signal) instead of dialling
    # a dead server.
    def left() -> list[int]:
        return [pid for a in addresses for pid in bot_processes_dialling(a, since)] + [
            pid for pid in children if Path(f"/proc/{pid}").exists()
        ]

    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert describe(left()) == []
    # A database left by a killed run can be read as it is.
    standings = arena("ladder", "standings", db, "--json")
    assert standings.returncode == 0, standings.stderr
    assert json.loads(standings.stdout)["matches_done"] == len(before)

    second = arena("ladder", "run", path)
    assert second.returncode == 0, second.stderr
    resumed = next(line for line in log_lines(second.stderr) if line["event"] == "ladder started")
    assert resumed["recorded"] == len(before) and resumed["to_play"] == 12 - len(before)

    conn = sqlite3.connect(db)
    after = conn.execute("SELECT seq, key, match_id, scores FROM matches ORDER BY seq").fetchall()
    config = load_ladder(path)
    planned = {m.key for m in build_schedule(["heuristic", "random", "random-2"], 3, 2, 5, "permutations")}
    assert len(after) == 12 and {row[1] for row in after} == planned  # none lost, none twice
    assert after[: len(before)] == before  # the matches recorded before the kill are untouched
    per_match = conn.execute("SELECT COUNT(*) FROM deals GROUP BY match_seq").fetchall()
    assert per_match == [(6,)] * 12
    # No finished match was played again: one complete replay per key recorded before the kill.
    logs = replays(config.replay_dir)
    keys = Counter(replay_key(lines, 2, 5) for lines in logs.values())
    assert all(keys[key] == 1 for _, key, _, _ in before)
    assert {match_id for _, _, match_id, _ in after} <= set(logs)


def test_a_referee_process_killed_mid_run_loses_and_duplicates_no_match(tmp_path: Path) -> None:
    head = "seed = 3\ndeal_sets = 2\ndeals = 2\nconcurrency = 2\nreferees = 2\nprocesses = 'persistent'\n"
    path = ladder_file(tmp_path, head, HEURISTIC, RANDOM, RANDOM_2)
    db = tmp_path / "ladder.sqlite"
    ladder = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "run", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and ladder.poll() is None:
            time.sleep(0.05)
            with contextlib.suppress(sqlite3.OperationalError), sqlite3.connect(
                f"file:{db}?mode=ro", uri=True
            ) as conn:
                if conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] >= 3:
                    break
        victims = referee_processes(ladder.pid)
        assert len(victims) == 2
        os.kill(victims[0], signal.SIGKILL)
        _, err = ladder.communicate(timeout=180)
    finally:
        if ladder.poll() is None:
            ladder.kill()
    assert ladder.returncode == 0, err[-2000:]
    events = [line["event"] for line in log_lines(err)]
    assert "referee process started again" in events, err[-2000:]
    with sqlite3.connect(db) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM matches")]
        per_match = conn.execute("SELECT COUNT(*) FROM deals GROUP BY match_seq").fetchall()
    planned = {m.key for m in build_schedule(["heuristic", "random", "random-2"], 3, 2, 3, "permutations")}
    assert len(keys) == 12 and set(keys) == planned  # none lost, none twice
    assert per_match == [(6,)] * 12


def test_matches_sent_to_one_referee_process_at_once_each_come_back_as_themselves(tmp_path: Path) -> None:
    import trio

    from arena.ladder.referees import referee_pool
    from arena.ladder.run import ladder_match_config

    path = ladder_file(tmp_path, "seed = 4\ndeal_sets = 1\ndeals = 1\n", RANDOM, RANDOM_2, crasher(1000))
    config = load_ladder(path)
    schedule = build_schedule([b.name for b in config.bots], 3, 1, config.seed, "permutations")

    async def play_all() -> dict[str, str]:
        found: dict[str, str] = {}
        with trio.fail_after(120):
            async with referee_pool(1, config.bots, ladder_match_config(config), config.replay_dir) as pool:

                async def one(index: int) -> None:
                    record = await pool.play_record(schedule[index])
                    assert record is not None
                    found[schedule[index].key] = record.key

                async with trio.open_nursery() as nursery:
                    for index in range(len(schedule)):  # six at once, all on the one referee
                        nursery.start_soon(one, index)
        return found

    found = trio.run(play_all)
    assert found == {m.key: m.key for m in schedule}


ENV_BOT = """import os, sys
print("GRPC_EXPERIMENTS=" + os.environ.get("GRPC_EXPERIMENTS", "(unset)"), file=sys.stderr, flush=True)
from arena_bot.random_bot import run
run()
"""


def test_local_bots_get_the_ladders_grpc_settings_unless_their_env_sets_them(tmp_path: Path) -> None:
    """`LOCAL_BOT_ENV` reaches per-match and persistent processes; a bot's own `env` wins."""
    from arena.ladder.player import LOCAL_BOT_ENV

    (tmp_path / "env_bot.py").write_text(ENV_BOT)
    told = '[[bots]]\nname = "told"\ncommand = "{python} env_bot.py"\nprocesses = "persistent"\n'
    own = (
        '[[bots]]\nname = "own"\ncommand = "{python} env_bot.py"\n'
        'env = { GRPC_EXPERIMENTS = "-tcp_rcv_lowat" }\n'
    )
    head = "seed = 2\ndeal_sets = 1\ndeals = 1\nseating = 'rotations'\n"
    path = ladder_file(tmp_path, head, told, own, RANDOM)
    done = arena("ladder", "run", path, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    logs = tmp_path / "ladder-replays" / "bot-logs"
    said = {log.name: log.read_text() for log in logs.glob("*.log")}
    told_logs = [text for name, text in said.items() if "-told" in name]
    own_logs = [text for name, text in said.items() if name.endswith("-own.log")]
    assert told_logs and own_logs
    assert all(f"GRPC_EXPERIMENTS={LOCAL_BOT_ENV['GRPC_EXPERIMENTS']}\n" in text for text in told_logs)
    assert all("GRPC_EXPERIMENTS=-tcp_rcv_lowat\n" in text for text in own_logs)


@pytest.mark.parametrize("referees", [1, 2])
def test_a_host_that_is_not_this_machines_is_one_line_with_one_referee_or_several(
    tmp_path: Path, referees: int
) -> None:
    head = f"host = '192.0.2.1'\ndeal_sets = 1\ndeals = 1\nconcurrency = 2\nreferees = {referees}\n"
    path = ladder_file(tmp_path, head, RANDOM, RANDOM_2, crasher(1))
    done = arena("ladder", "run", path, "--no-progress")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("arena ladder run: cannot listen on 192.0.2.1:0: "), done.stderr[-2000:]


# --------------------------------------------------------------------------- a remote bot, the forfeit policy

REMOTE_BOT = """
import sys, time
import grpc
from arena_bot.random_bot import decide
from arena_bot import BotError, run_bot

address, token, matches = sys.argv[1], sys.argv[2], int(sys.argv[3])
played = 0
while played < matches:
    try:
        result = run_bot(decide, address=address, token=token, name="remote")
    except BotError as error:
        # Between matches its token speaks for no seat: wait for the next one.
        if error.code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION):
            time.sleep(0.1)
            continue
        raise
    played += 1
print(played)
"""




@pytest.fixture
def remote_bot(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int, str]]:
    port, token = free_port(), "remote-bot-token-0123456789"
    script = tmp_path / "remote.py"
    script.write_text(REMOTE_BOT)
    env = {**os.environ, "PYTHONPATH": str(SDK)}
    process = subprocess.Popen(
        [sys.executable, str(script), f"127.0.0.1:{port}", token, "6"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    yield process, port, token
    if process.poll() is None:
        process.kill()
    process.communicate()


def test_a_remote_bot_plays_its_matches_with_its_own_token(
    tmp_path: Path, remote_bot: tuple[subprocess.Popen[str], int, str]
) -> None:
    process, port, token = remote_bot
    head = f"seed = 2\ndeals = 1\nconcurrency = 3\nport = {port}\n"
    remote = f'[[bots]]\nname = "remote"\ntoken = "{token}"\n'
    path = ladder_file(tmp_path, head, HEURISTIC, RANDOM, remote)
    run = arena("ladder", "run", path, "--json")
    assert run.returncode == 0, run.stderr
    bots = by_name(json.loads(run.stdout))
    assert bots["remote"]["matches"] == 6 and bots["remote"]["remote"] is True
    assert sum(bots["remote"]["faults"].values()) == 0
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and out.strip() == "6"


def test_under_the_forfeit_policy_a_crashing_bot_forfeits_and_ranks_last(tmp_path: Path) -> None:
    head = "seed = 4\ndeals = 2\nconcurrency = 3\n[faults]\npolicy = 'forfeit'\nreconnect_grace_ms = 300\n"
    path = ladder_file(tmp_path, head, HEURISTIC, RANDOM, crasher(3))
    run = arena("ladder", "run", path, "--json")
    assert run.returncode == 0, run.stderr
    table = json.loads(run.stdout)
    bots = by_name(table)
    assert table["matches_done"] == 6
    assert bots["crasher"]["forfeits"] == 6 and bots["crasher"]["crashes"] == 6, table
    assert bots["heuristic"]["forfeits"] == bots["random"]["forfeits"] == 0, table
    assert bots["crasher"]["rank"] == 3 and bots["crasher"]["rating"] < bots["random"]["rating"]
    conn = sqlite3.connect(tmp_path / "ladder.sqlite")
    assert {t for (t,) in conn.execute("SELECT termination FROM matches")} == {"forfeit"}
    # It crashed in the first deal of each match: that deal is void, and nothing else was played.
    assert conn.execute("SELECT COUNT(*) FROM deals").fetchone()[0] == 0


# --------------------------------------------------------------------------- A/B


def test_ab_decides_that_the_heuristic_bot_is_stronger_than_random(tmp_path: Path) -> None:
    kept = tmp_path / "replays"
    done = arena(
        "ladder", "ab", "heuristic", "random", "--against", "random", "random",
        "--deals", "2", "--concurrency", "3", "--max-deal-sets", "6",
        "--min-deal-sets", "3", "--effect", "1", "--replay-dir", kept, "--json",
        "--processes", "persistent",  # 36 matches: a third of the time of per-match processes
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["decision"] == "A", result
    assert result["a"] == "heuristic" and result["b"] == "random"
    # One observation per deal set, each of its two decks' differences; none before three.
    assert result["llr_a"] >= result["upper"] and result["llr_b"] < result["upper"]
    assert 3 <= result["deal_sets"] == len(result["observations"])
    assert result["deals"] == 2 * result["deal_sets"]
    assert result["mean_diff"] > 0 and result["alpha"] == result["beta"] == 0.05
    # A and B played the same seats on the same decks against the same opponents.
    twins: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for lines in replays(kept).values():
        seats = ["*" if name in ("heuristic", "random") else name for name in lines[0]["seats"]]
        twins[json.dumps([lines[0]["seed"], seats])].append(lines)
    complete = [pair for pair in twins.values() if len(pair) == 2]
    assert len(complete) >= 18  # three deal sets at least, six arrangements each
    for a, b in complete:
        assert {n for n in a[0]["seats"] + b[0]["seats"] if n not in ("random-2", "random-3")} == {
            "heuristic",
            "random",
        }
        assert [x["deck"] for x in a if x["type"] == "deal_start"] == [
            x["deck"] for x in b if x["type"] == "deal_start"
        ]
