"""Ladders at scale: persistent bot processes, and `arena ladder run --ray` on a real two-node Ray
cluster on this machine (`ray.cluster_utils.Cluster`, bound to the loopback), shared by the tests
of this module: a ladder runs to the end, a worker killed mid-run loses and duplicates nothing,
a driver killed by SIGKILL and started again completes the ladder, and deterministic bots give
the same results match by match locally, with persistent processes, in the referee's process
and on Ray."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import BOTS, arena

from arena.ladder.cluster import LOCAL_STARTS
from arena.ladder.store import MatchRecord, Store, StoreError

ray_cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the [ray] extra is not installed")

# Every Ray this module starts stays on the loopback (docs/LADDER.md); the drivers inherit it.
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

RANDOM_BOTS = "".join(
    f'[[bots]]\nname = "{name}"\ncommand = "{{python}} -m arena_bot.random_bot"\n'
    for name in ("random", "random-2", "random-3")
)


# The example ladder's bots: seeded (the random bots) or deterministic (the heuristic bot).
EXAMPLE_BOTS = "".join(
    f'[[bots]]\nname = "{name}"\ncommand = "{{python}} -m arena_bot.{program}"\n'
    for name, program in (
        ("heuristic", "heuristic_bot"),
        ("random", "random_bot"),
        ("random-2", "random_bot"),
    )
)


# The same bots in the referee's process (docs/LADDER.md, "In-process bots"): random-2 through a
# module beside the ladder file, which a worker finds only in its copy of the ladder's directory.
INPROCESS_BOTS = "".join(
    f'[[bots]]\nname = "{name}"\ncommand = "inprocess:{spec}"\n'
    for name, spec in (("heuristic", "heuristic"), ("random", "random"), ("random-2", "beside_bot:Random"))
)
BESIDE_BOT = (
    "from arena_bot.random_bot import RandomBot\n\n\n"
    "class Random(RandomBot):\n"
    '    name = "random"  # its Hello, as the random bot\'s process says\n'
)


def ladder_file(
    directory: Path,
    deal_sets: int,
    *,
    processes: str = "per-match",
    concurrency: int = 2,
    referees: int = 1,
    bots: str = RANDOM_BOTS,
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if bots is INPROCESS_BOTS:
        (directory / "beside_bot.py").write_text(BESIDE_BOT)
    path = directory / "ladder.toml"
    path.write_text(
        f'variant = "grosstarock"\nseed = 7\ndeal_sets = {deal_sets}\ndeals = 2\n'
        f'concurrency = {concurrency}\nreferees = {referees}\nprocesses = "{processes}"\n'
        "[time_control]\nper_decision_ms = 10000\nbank_ms = 10000\n"
        "[faults]\nreconnect_grace_ms = 2000\n" + bots
    )
    return path


def arena_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "arena", *map(str, args)]


def environment() -> dict[str, str]:
    return {**os.environ, **LOOPBACK}


def results(database: Path) -> dict[str, tuple[list[int], list[str]]]:
    """Per match key: the final scores and the seats' bots."""
    with sqlite3.connect(database) as conn:
        return {
            key: (json.loads(scores), json.loads(seats))
            for key, scores, seats in conn.execute("SELECT key, scores, seats FROM matches")
        }


def recorded(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(database, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def start_cluster() -> Any:
    """A head node and a worker node, one CPU each, every Ray process on 127.0.0.1; started again
    when a node's start timed out, as `arena ladder run --ray` starts a local Ray (a busy machine:
    `cluster.LOCAL_STARTS`)."""
    loopback = {"node_ip_address": "127.0.0.1", "num_cpus": 1}
    for attempt in range(1, LOCAL_STARTS + 1):
        cluster = ray_cluster_utils.Cluster()
        try:
            cluster.add_node(**loopback, include_dashboard=False)  # the first node is the head
            cluster.add_node(**loopback)
            cluster.wait_for_nodes()
            return cluster
        except Exception as exc:
            cluster.shutdown()
            if attempt == LOCAL_STARTS or "timed out" not in str(exc).lower():
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The module's Ray cluster (`start_cluster`)."""
    saved = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    os.environ.update(LOOPBACK)
    cluster = start_cluster()
    try:
        yield cluster.address
    finally:
        cluster.shutdown()
        if saved is None:
            os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)


def worker_pids() -> list[int]:
    """The processes of the ladder's Ray actors (Ray names them `ray::MatchWorker…`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::MatchWorker"):
                pids.append(int(entry.name))
    return pids


def standings_json(database: Path) -> str:
    done = arena("ladder", "standings", database, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def run_killed_and_resumed(path: Path) -> None:
    """Run the ladder, SIGKILL its driver once two matches are recorded, run it again to the end."""
    database = path.with_suffix(".sqlite")
    driver = subprocess.Popen(
        arena_command("ladder", "run", path, "--no-progress"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment(),
    )
    try:
        wait_for(lambda: recorded(database) >= 2, 120, "two matches recorded")
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        driver.kill()
    assert recorded(database) < 6, "the ladder ended before it was killed"
    again = arena("ladder", "run", path, "--no-progress")
    assert again.returncode == 0, again.stderr[-2000:]


def test_the_same_results_and_standings_locally_persistent_in_process_on_ray_and_resumed(
    tmp_path: Path, cluster: str
) -> None:
    """The example ladder's bots (seeded) in every way a ladder runs, their processes over gRPC
    or in the referee's process: the same results match by match, and byte-identical standings
    JSON, ratings included (docs/LADDER.md, "Standings"); how the bots ran is run information,
    in the standings' text, not in the JSON."""
    runs, tables = {}, {}
    for name, processes, referees, ray, bots in (
        ("local", "per-match", 1, [], EXAMPLE_BOTS),
        ("persistent", "persistent", 1, [], EXAMPLE_BOTS),
        ("referees", "per-match", 2, [], EXAMPLE_BOTS),  # two referee processes on this machine
        ("referees-persistent", "persistent", 2, [], EXAMPLE_BOTS),
        ("ray", "per-match", 1, ["--ray", cluster], EXAMPLE_BOTS),
        ("ray-persistent", "persistent", 1, ["--ray", cluster], EXAMPLE_BOTS),
        ("killed", "per-match", 1, None, EXAMPLE_BOTS),  # SIGKILLed after two matches, then run again
        ("in-process", "in-process", 1, [], INPROCESS_BOTS),
        ("in-process-ray", "in-process", 1, ["--ray", cluster], INPROCESS_BOTS),
    ):
        mode = "per-match" if processes == "in-process" else processes  # the file's default mode
        path = ladder_file(tmp_path / name, 1, processes=mode, referees=referees, bots=bots)
        database = path.with_suffix(".sqlite")
        if ray is None:
            run_killed_and_resumed(path)
        else:
            done = arena("ladder", "run", path, "--no-progress", *ray)
            assert done.returncode == 0, done.stderr[-2000:]
        runs[name] = results(database)
        tables[name] = standings_json(database)
        with sqlite3.connect(database) as conn:
            modes = {row[0] for row in conn.execute("SELECT mode FROM processes")}
            nodes = {row[0] for row in conn.execute("SELECT node FROM processes")}
            replays = [row[0] for row in conn.execute("SELECT replay FROM matches")]
            spans = conn.execute(
                "SELECT DISTINCT p.node, m.started, m.finished FROM matches m "
                "JOIN processes p ON p.match_seq = m.seq"
            ).fetchall()
        assert modes == {processes}
        # Every replay is in the driver's replay directory, wherever its match was played.
        assert all((path.parent / "ladder-replays" / r).is_file() for r in replays)
        if not ray:
            assert nodes == {"local"}
            continue
        assert len(nodes) == 2, nodes  # both nodes of the cluster played
        assert all(n.startswith("127.0.0.1/") for n in nodes), nodes
        if bots is EXAMPLE_BOTS:
            # Each worker plays its `concurrency` (2) matches at once, not one after the other:
            # its first two are sent together, so on every node two matches overlap in time.
            # (An in-process match can be over before its sibling's call reaches the worker.)
            assert all(overlapping([(s, f) for n, s, f in spans if n == node]) for node in nodes), spans
    assert len(runs["local"]) == 6
    for name in runs:
        assert runs[name] == runs["local"], name
    # Byte for byte across all nine, per-match, persistent and in-process alike.
    for name in tables:
        assert tables[name] == tables["local"], name
    assert json.loads(tables["local"])["bots"][0]["mu"] != 25.0  # rated, not the default
    assert "processes" not in tables["local"]
    text = arena("ladder", "standings", tmp_path / "persistent" / "ladder.sqlite")
    assert text.returncode == 0, text.stderr[-2000:]
    assert "processes: matches by how each bot ran" in text.stdout
    ran = text.stdout.split("processes: matches by how each bot ran")[-1].splitlines()[1:]
    expected = [[name, "persistent", "6"] for name in ("heuristic", "random", "random-2")]
    assert sorted(line.split() for line in ran) == expected, text.stdout
    local = arena("ladder", "standings", tmp_path / "local" / "ladder.sqlite")
    assert "processes:" not in local.stdout  # per-match, the default, goes unsaid


def overlapping(spans: list[tuple[float, float]]) -> bool:
    """Whether any two of these (started, finished) intervals overlap."""
    ordered = sorted(spans)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


def test_a_worker_killed_mid_run_loses_and_duplicates_no_match(tmp_path: Path, cluster: str) -> None:
    path = ladder_file(tmp_path, 4)  # 24 matches
    database = path.with_suffix(".sqlite")
    driver = subprocess.Popen(
        arena_command("ladder", "run", path, "--no-progress", "--ray", cluster),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        wait_for(lambda: recorded(database) >= 3, 120, "three matches recorded")
        victims = worker_pids()
        assert victims, "no Ray worker process found"
        os.kill(victims[0], signal.SIGKILL)
        _, err = driver.communicate(timeout=240)
    finally:
        driver.kill()
    assert driver.returncode == 0, err[-2000:]
    assert "worker lost" in err
    with sqlite3.connect(database) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM matches")]
    assert len(keys) == 24 and len(set(keys)) == 24


def test_a_driver_killed_by_sigkill_and_started_again_completes_the_ladder(
    tmp_path: Path, cluster: str
) -> None:
    path = ladder_file(tmp_path, 3)  # 18 matches
    database = path.with_suffix(".sqlite")
    driver = subprocess.Popen(
        arena_command("ladder", "run", path, "--no-progress", "--ray", cluster),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment(),
    )
    try:
        wait_for(lambda: recorded(database) >= 3, 120, "three matches recorded")
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        driver.kill()
    before = results(database)
    assert 3 <= len(before) < 18
    again = arena("ladder", "run", path, "--no-progress", "--ray", cluster)
    assert again.returncode == 0, again.stderr[-2000:]
    after = results(database)
    assert len(after) == 18
    assert {k: after[k] for k in before} == before  # nothing recorded before was played again
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT COUNT(DISTINCT key) FROM matches").fetchone()[0] == 18


def persistent_scripted_ladder(tmp_path: Path, behaviour: str) -> Path:
    """The one-deal-set ladder with its first bot the scripted test bot, persistent, acting out
    `behaviour` (tests/bots/scripted_bot.py)."""
    scripted = BOTS / "scripted_bot.py"
    path = ladder_file(tmp_path, 1)
    path.write_text(
        path.read_text().replace(
            'name = "random"\ncommand = "{python} -m arena_bot.random_bot"',
            f'name = "random"\ncommand = "{{python}} {scripted}"\nprocesses = "persistent"\n'
            f'env = {{ BEHAVIOUR = "{behaviour}" }}',
        )
    )
    return path


def test_a_persistent_bot_that_crashes_or_ignores_its_input_is_started_again(tmp_path: Path) -> None:
    # The scripted bot does not use the SDK: it plays the match of its environment and, here,
    # exits with status 3 at its 5th request. Each match records the crash; the ladder goes on.
    path = persistent_scripted_ladder(tmp_path, "random,exit:5")
    done = arena("ladder", "run", path, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(path.with_suffix(".sqlite")) as conn:
        crashed = conn.execute("SELECT status, crashed FROM exits WHERE bot = 'random'").fetchall()
        modes = dict(conn.execute("SELECT bot, mode FROM processes GROUP BY bot").fetchall())
    assert crashed == [(3, 1)] * 6
    assert modes == {"random": "persistent", "random-2": "per-match", "random-3": "per-match"}


def test_a_persistent_bot_whose_program_plays_one_match_is_started_per_match(tmp_path: Path) -> None:
    # The scripted bot ignores its input and exits after its match: no match waits for it.
    path = persistent_scripted_ladder(tmp_path, "random")
    done = arena("ladder", "run", path, "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(path.with_suffix(".sqlite")) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 6
        assert conn.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0
        modes = [row[0] for row in conn.execute("SELECT mode FROM processes WHERE bot = 'random'")]
    assert "per-match" in modes and len(modes) == 6


def test_a_bot_missing_on_the_workers_is_one_line(tmp_path: Path, cluster: str) -> None:
    # node_modules is never shipped to the workers (the bots' dependencies are installed there).
    path = ladder_file(tmp_path, 1)
    program = tmp_path / "node_modules" / "bot"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    path.write_text(
        path.read_text().replace(
            'name = "random"\ncommand = "{python} -m arena_bot.random_bot"',
            'name = "random"\ncommand = "node_modules/bot"',
        )
    )
    done = arena("ladder", "run", path, "--no-progress", "--ray", cluster)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "program 'node_modules/bot' not found" in last and "Ray worker" in last, done.stderr[-2000:]


def test_an_unreachable_ray_address_is_one_line(tmp_path: Path) -> None:
    path = ladder_file(tmp_path, 1)
    done = arena("ladder", "run", path, "--no-progress", "--ray", "127.0.0.1:9")
    assert done.returncode == 1
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in done.stderr.strip().splitlines()[-1]
    assert recorded(path.with_suffix(".sqlite")) == 0


def test_without_ray_installed_the_error_names_the_extra(tmp_path: Path) -> None:
    path = ladder_file(tmp_path, 1)
    hide_ray = "import sys; sys.modules['ray'] = None; from arena.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", hide_ray, "ladder", "run", str(path), "--ray"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    assert done.returncode == 1
    assert "[ray]" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_database_locked_by_another_program_is_one_error_and_keeps_what_was_recorded(
    tmp_path: Path,
) -> None:
    database = tmp_path / "x.sqlite"
    store = Store.open(database, "x", {}, [])
    seats = ["a", "b", "c"]
    record = MatchRecord("0:a,b,c", 0, 0, 0, 1, seats, "m1", "completed", None, [1, 2, 3], 9, 0.0, 1.0, None)
    store.record(record, {})
    store.conn.execute("PRAGMA busy_timeout = 100")
    other = sqlite3.connect(database)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="cannot record match 0:a,b,d: database is locked"):
            store.record(MatchRecord(**{**record.__dict__, "key": "0:a,b,d"}), {})
    finally:
        other.rollback()
        other.close()
    assert store.done_keys() == {"0:a,b,c"}
    store.close()


def test_ab_on_ray_observes_what_it_observes_locally(tmp_path: Path, cluster: str) -> None:
    common = ["heuristic", "random", "--against", "random", "random", "--deals", "1", "--max-deal-sets", "2"]
    local = arena("ladder", "ab", *common, "--json")
    on_ray = arena("ladder", "ab", *common, "--json", "--processes", "persistent", "--ray", cluster)
    assert local.returncode == 0, local.stderr[-2000:]
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    first, second = json.loads(local.stdout), json.loads(on_ray.stdout)
    assert first["matches"] == second["matches"] == 24
    assert first["observations"] == second["observations"]


def test_a_worker_that_fails_to_start_is_reported_by_its_own_error() -> None:
    from arena.ladder.cluster import cause_line

    remote = (
        "The actor died because of an error raised in its creation task, ray::MatchWorker.__init__()\n"
        "Traceback (most recent call last):\n"
        '  File "cluster.py", line 170, in __init__\n'
        "dataclasses.FrozenInstanceError: cannot assign to field 'name'"
    )
    last = "dataclasses.FrozenInstanceError: cannot assign to field 'name'"
    assert cause_line(RuntimeError(remote)) == last
    assert cause_line(RuntimeError("no traceback here\nsecond line")) == "no traceback here"


class StubRay:
    """`ray.init` failing with the given errors first (then starting), and `shutdown` counted."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.inits = 0
        self.shutdowns = 0

    def init(self, **options: object) -> None:
        self.inits += 1
        assert options["_node_ip_address"] == "127.0.0.1"
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_local_ray_whose_start_timed_out_is_started_again_and_other_errors_are_not() -> None:
    from arena.ladder.cluster import start_local

    timed_out = Exception("The current node timed out during startup. This could happen because …")
    ray = StubRay(timed_out, timed_out)
    start_local(ray, 2, {})
    assert (ray.inits, ray.shutdowns) == (3, 2)
    ray = StubRay(*[timed_out] * LOCAL_STARTS)
    with pytest.raises(Exception, match="timed out during startup"):
        start_local(ray, 2, {})
    assert ray.inits == LOCAL_STARTS
    ray = StubRay(ValueError("working_dir is too large"))
    with pytest.raises(ValueError, match="too large"):
        start_local(ray, 2, {})
    assert (ray.inits, ray.shutdowns) == (1, 0)


def test_a_local_ray_takes_the_loopback_even_when_ray_was_imported_first() -> None:
    # The command line imports Ray (is it installed?) before it sets Ray's environment: Ray
    # reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when first imported, and without it on Linux takes
    # the machine's network address for the node and its control store.
    code = (
        "import ray\n"
        "from arena.ladder.cluster import import_ray\n"
        "import_ray(local=True)\n"
        "print(ray.util.get_node_ip_address())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "127.0.0.1"
