"""`python -m benchmarks arena`: the standing arena under load, on loopback.

The real server (`arena serve` as a subprocess, with a SQLite store in a scratch directory)
and N registered bots, all connected at once, playing for a fixed time:

1. `bots` bots are registered in a fresh store and the server is started with an
   `[arena]` table whose join limits do not throttle the benchmark;
2. driver processes (`arena_driver.py`: asyncio and grpc.aio, like `python -m benchmarks server`'s)
   each host a share of the bots. Every bot has its own channel and TCP connection, joins
   `LobbyService.Join` with its bot token, and on every `Seated` plays the match on its own
   `BotService.Play` stream, answering each request at once with a random legal action;
3. the measured window starts when every bot has its `Welcome`, and lasts `seconds`. Then
   every bot leaves the lobby right after its next `Seated` (see `arena_driver`), the bots
   never seated again leave once no match runs (`_quiesce`), the matches in flight are
   played to their end (giving up after `DRAIN_S`), the benchmark waits until the server
   has stored every result the bots saw, and stops it with SIGTERM;
4. the results are read back from the store and the replays: every match a bot saw end
   (completed or forfeit) must be `finished` with its replay file, or it is a lost result;
   the server's log must hold no error.

What is measured:

- `decisions_per_s`: decisions the bots answered during the window (counted by the
  drivers) / the window's seconds;
- `matches_per_min`: matches the bots saw end (completed or forfeit) during the window;
- `round_trip_ms_*`: the server-measured think time (`think_ms` of the replays' `action`
  lines, whole milliseconds) of every decision of the matches seated and ended within the
  window. The bots answer at once (`bot_decide_ms_p99`, measured by the drivers from
  receiving a request to having written the reply, is small beside it), so the round trip
  is the server's and the transport's overhead: `decision_overhead_ms_p99`;
- `result_lag_ms_*`: from a bot's MatchEnd to the result committed in the store (a bot is
  seated again only after that), and `bots_playing_fraction`, the part of the bots' time
  in the window spent between a Seated and its MatchEnd;
- the server's resident memory, sampled every `SAMPLE_S`: its peak over the whole run, its
  mean over the window, and the peak over the idle server's (before any bot connected) per
  connected bot.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.engine import find_variant
from arena.standing.store import Store

from .arena_processes import ArenaServer, Drivers
from .common import RssSampler, Window, pauses, percentile, rss_kib

SAMPLE_S = 0.5  # how often the server's memory is read
DRAIN_S = 60.0  # after the window, how long the matches in flight may take to finish
QUIET_ROUNDS = 3  # polls in a row with no match running or being played: the arena is quiet
QUIET_POLL_S = 0.2
RECORD_S = 30.0  # after the drivers, how long the server may take to record the results they saw
CONNECT_S = 60.0  # for every bot to get its Welcome (plus CONNECT_S_PER_BOT each)
CONNECT_S_PER_BOT = 0.1
RESULTS = ("completed", "forfeit")  # the terminations whose result the store must hold


@dataclass
class ArenaBench:
    bots: int
    drivers: int
    variants: list[str]
    deals: int
    max_matches_per_bot: int
    connected: int  # bots that got their Welcome
    connect_s: float  # from starting the drivers until every bot had its Welcome
    seconds: float  # the measured window
    matches_in_window: int
    matches_per_min: float
    decisions: int  # answered by the bots during the window
    decisions_per_s: float
    round_trip_decisions: int  # decisions of the matches played wholly within the window
    round_trip_ms_p50: float
    round_trip_ms_p99: float
    round_trip_ms_max: float
    decision_overhead_ms_p99: float
    bot_decide_ms_p99: float
    bots_playing_fraction: float  # of the bots' time in the window, seated at a match (Seated to MatchEnd)
    result_lag_ms_p50: float  # from a bot's MatchEnd to the result in the store, in the window
    result_lag_ms_p99: float
    drain_s: float  # from the window's end until the bots had left and played out their matches
    record_wait_s: float  # then until every result they saw was stored
    server_cpu_percent: float  # during the window; 100 = one core
    drivers_cpu_percent: float
    rss_baseline_mib: float  # the server before any bot connected
    rss_peak_mib: float
    rss_mean_mib: float  # during the window
    rss_peak_kib_per_bot: float  # (peak - baseline) / connected bots
    matches_by_state: dict[str, int]
    matches_seen_ended: int  # by the bots, over the whole run
    lost_results: int
    matches_cut_off: int  # not finished in the store: cut off by the stop, recorded aborted
    seats_never_joined: int  # seated by the server, but no bot got that Seated
    matches_unfinished: int  # still in flight when the drivers gave up
    faults: int  # in the finished matches
    stream_errors: dict[str, int]
    server_errors: int
    server_warnings: int
    server_error_events: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Run:
    """What a run observed, measured once the server has stopped (`_measure`)."""

    bots: int
    drivers: int
    variants: tuple[str, ...]
    deals: int
    max_matches: int
    baseline_kib: int = 0  # the idle server's resident memory
    connected: int = 0
    connect_s: float = 0.0
    window: Window = field(default_factory=Window)
    drain_s: float = 0.0
    record_wait_s: float = 0.0
    stats: list[dict[str, Any]] = field(default_factory=list)  # every driver's counts
    ended: dict[str, tuple[str, float]] = field(default_factory=dict)  # match id -> termination, wall time
    samples: list[tuple[float, int]] = field(default_factory=list)  # the server's memory


def bench_arena(
    bots: int = 200,
    seconds: float = 60,
    drivers: int = 4,
    variants: Sequence[str] = ("grosstarock",),
    deals: int = 1,
    max_matches: int = 1,
) -> ArenaBench:
    """Run the load test (see the module's docstring); raises RuntimeError if it cannot run."""
    seats = max(find_variant(v).seats for v in variants)
    if bots < seats:
        raise ValueError(f"{bots} bots cannot fill a table of {seats}")
    if seconds <= 0 or deals < 1 or max_matches < 1 or drivers < 1:
        raise ValueError("seconds, deals, max_matches and drivers must be positive")
    run = _Run(bots, min(drivers, bots), tuple(variants), deals, max_matches)
    with tempfile.TemporaryDirectory(prefix="arena-bench-arena-") as tmp:
        server = ArenaServer(Path(tmp), run.variants, deals, max_matches)
        with server, Drivers(Path(tmp)) as bots_side:
            _run(run, seconds, server, bots_side)
        return _measure(run, server)


def _run(run: _Run, seconds: float, server: ArenaServer, bots_side: Drivers) -> None:
    """Set up, connect every bot, the measured window, and the end of the run."""
    tokens = server.register_bots(run.bots)
    port = server.start()
    with RssSampler(server.pid, SAMPLE_S) as memory:
        time.sleep(SAMPLE_S * 2)  # a couple of samples of the idle server
        run.baseline_kib = min((kib for _, kib in memory.samples), default=rss_kib(server.pid))

        # Every bot connects to the lobby, from `drivers` processes.
        connect_timeout = CONNECT_S + CONNECT_S_PER_BOT * run.bots
        started = time.monotonic()
        for number in range(run.drivers):
            bots_side.start(
                {
                    "address": f"127.0.0.1:{port}",
                    "tokens": [[i, tokens[i]] for i in range(number, run.bots, run.drivers)],
                    "variants": list(run.variants),
                    "max_matches": run.max_matches,
                    "connect_timeout_s": connect_timeout,
                    "drain_s": DRAIN_S,
                }
            )
        reports = bots_side.wait_all("connected", connect_timeout + 30)
        if len(reports) < run.drivers:
            raise bots_side.failure(f"{run.drivers - len(reports)} bench drivers did not start")
        run.connected = sum(int(line.split()[1]) for line in reports.values())
        run.connect_s = time.monotonic() - started

        # The measured window: every bot connected, playing.
        with Window(pids=[server.pid, *bots_side.pids]) as run.window:
            bots_side.tell("start")
            for pause in pauses(seconds, bar="s measured"):
                time.sleep(pause)
            bots_side.tell("stop")

        # The end: the bots leave the lobby and play out their matches.
        _quiesce(server, bots_side)
        bots_side.tell("leave")
        done = bots_side.wait_all("done", DRAIN_S + 30)
        run.drain_s = time.monotonic() - run.window.ended
        if len(done) < run.drivers:
            raise bots_side.failure(f"{run.drivers - len(done)} bench drivers did not finish")
        run.stats = bots_side.stats()
        run.ended = _ended(run.stats)
        # The server records a result after the bots got MatchEnd; a stop before that
        # would leave the match unfinished in the store. Wait for the results to land.
        run.record_wait_s = _wait_recorded(server, run.ended)
        run.samples = list(memory.samples)
    server.stop()
    bots_side.wait(10)


def _quiesce(server: ArenaServer, bots_side: Drivers) -> None:
    """After the window: until no bot plays a match and none is running in the store, for
    QUIET_ROUNDS polls in a row (bounded by DRAIN_S). Then the bots still in the lobby are
    free and too few to fill a table: they may leave without a Seated in flight."""
    drivers = len(bots_side.processes)
    with server.store() as store:
        deadline = time.monotonic() + DRAIN_S
        quiet = 0
        for round_ in itertools.count(1):
            if quiet >= QUIET_ROUNDS or time.monotonic() > deadline or not server.running():
                return
            time.sleep(QUIET_POLL_S)
            bots_side.tell(f"status {round_}")
            replies = bots_side.wait_all(f"status {round_} ", 10)
            counts = [[int(n) for n in reply.split()[2:4]] for reply in replies.values()]
            playing = sum(c[0] for c in counts)
            in_lobby = sum(c[1] for c in counts)
            running = sum(1 for state in store.match_states().values() if state == "running")
            if len(replies) == drivers and in_lobby == 0 and playing == 0:
                return
            quiet = quiet + 1 if len(replies) == drivers and playing == 0 and running == 0 else 0


def _wait_recorded(server: ArenaServer, ended: dict[str, tuple[str, float]]) -> float:
    """Seconds until every match the bots saw end with a result is finished in the store, and no
    match is running (bounded by RECORD_S)."""
    wanted = {m for m, (termination, _) in ended.items() if termination in RESULTS}
    started = time.monotonic()
    while time.monotonic() < started + RECORD_S and server.running():
        with server.store() as store:
            states = store.match_states()
        if all(states.get(m) == "finished" for m in wanted) and "running" not in states.values():
            break
        time.sleep(0.1)
    return time.monotonic() - started


def _ended(stats: Sequence[dict[str, Any]]) -> dict[str, tuple[str, float]]:
    """Every match some bot saw end: its termination, and when the first bot saw it (wall time)."""
    ended: dict[str, tuple[str, float]] = {}
    for report in stats:
        for match_id, (termination, at) in report["ended"].items():
            if match_id not in ended or at < ended[match_id][1]:
                ended[match_id] = (termination, at)
    return ended


# --------------------------------------------------------------------------- the measurement


def _measure(run: _Run, server: ArenaServer) -> ArenaBench:
    window, stats, ended = run.window, run.stats, run.ended
    elapsed = window.seconds
    # What the bots saw: matches ended, decisions, their own decide time, their time seated.
    in_window = {
        m for m, (termination, at) in ended.items() if termination in RESULTS and window.contains_wall(at)
    }
    decisions = sum(report["window_decisions"] for report in stats)
    decide_us = [us for report in stats for us in report["decide_us"]]
    stream_errors: Counter[str] = Counter()
    for report in stats:
        stream_errors.update(report["errors"])
        if report["rejected"]:
            stream_errors["rejected actions"] += report["rejected"]
    seated_at: dict[str, float] = {}  # when the first bot got its Seated
    playing_s = 0.0  # bot-seconds within the window between Seated and MatchEnd
    for report in stats:
        for match_id, _, at in report["seated"]:
            seated_at[match_id] = min(at, seated_at.get(match_id, at))
            end = ended[match_id][1] if match_id in ended else window.ended_wall
            playing_s += max(0.0, min(end, window.ended_wall) - max(at, window.started_wall))
    seen_seats = {(match_id, seat) for report in stats for match_id, seat, _ in report["seated"]}

    # What the store recorded, after the stop.
    with server.store() as store, store.transaction() as session:
        rows = session.execute("SELECT match_id, state, finished_ms, replay FROM matches").fetchall()
        seat_rows = session.execute("SELECT match_id, seat FROM match_seats").fetchall()
        faults_row = session.execute(
            "SELECT COALESCE(SUM(s.faults), 0) FROM match_seats s "
            "JOIN matches m ON m.match_id = s.match_id WHERE m.state = 'finished'"
        ).fetchone()
    recorded = {row[0]: row for row in rows}
    lost = 0
    for match_id, (termination, _) in ended.items():
        row = recorded.get(match_id)
        if termination in RESULTS and (
            row is None or row[1] != "finished" or not row[3] or not (server.replay_dir / row[3]).is_file()
        ):
            lost += 1
    round_trips: list[int] = []
    lags: list[float] = []
    for match_id, state, finished_ms, replay in rows:
        if state != "finished" or match_id not in in_window:
            continue
        lags.append(finished_ms - ended[match_id][1] * 1000)
        path = server.replay_dir / replay
        if seated_at.get(match_id, 0) >= window.started_wall and path.is_file():  # wholly in the window
            round_trips.extend(_think_ms(path))

    # The server's memory and CPU, and its log.
    window_kib = [kib for at, kib in run.samples if window.contains(at)]
    peak = max((kib for _, kib in run.samples), default=0)
    errors, warnings, error_events = server.log_problems()
    server_cpu, *drivers_cpu = window.cpu_s
    p99 = percentile(round_trips, 99)
    return ArenaBench(
        bots=run.bots,
        drivers=run.drivers,
        variants=list(run.variants),
        deals=run.deals,
        max_matches_per_bot=run.max_matches,
        connected=run.connected,
        connect_s=round(run.connect_s, 2),
        seconds=round(elapsed, 2),
        matches_in_window=len(in_window),
        matches_per_min=round(len(in_window) / elapsed * 60, 1),
        decisions=decisions,
        decisions_per_s=round(decisions / elapsed, 1),
        round_trip_decisions=len(round_trips),
        round_trip_ms_p50=percentile(round_trips, 50),
        round_trip_ms_p99=p99,
        round_trip_ms_max=float(max(round_trips, default=0)),
        decision_overhead_ms_p99=p99,
        bot_decide_ms_p99=round(percentile(decide_us, 99) / 1000, 3),
        bots_playing_fraction=round(playing_s / (run.bots * elapsed), 3),
        result_lag_ms_p50=round(percentile(lags, 50)),
        result_lag_ms_p99=round(percentile(lags, 99)),
        drain_s=round(run.drain_s, 2),
        record_wait_s=round(run.record_wait_s, 2),
        server_cpu_percent=round(server_cpu / elapsed * 100, 1),
        drivers_cpu_percent=round(sum(drivers_cpu) / elapsed * 100, 1),
        rss_baseline_mib=round(run.baseline_kib / 1024, 1),
        rss_peak_mib=round(peak / 1024, 1),
        rss_mean_mib=round(sum(window_kib) / len(window_kib) / 1024, 1) if window_kib else 0.0,
        rss_peak_kib_per_bot=round((peak - run.baseline_kib) / run.connected, 1) if run.connected else 0.0,
        matches_by_state=dict(sorted(Counter(row[1] for row in rows).items())),
        matches_seen_ended=len(ended),
        lost_results=lost,
        matches_cut_off=sum(1 for row in rows if row[1] != "finished"),
        seats_never_joined=sum(1 for m, seat in seat_rows if (m, int(seat)) not in seen_seats),
        matches_unfinished=sum(report["unfinished"] for report in stats),
        faults=int(faults_row[0]),
        stream_errors=dict(sorted(stream_errors.items())),
        server_errors=errors,
        server_warnings=warnings,
        server_error_events=error_events,
    )


def _think_ms(replay: Path) -> list[int]:
    """The server-measured think time of every decision in a replay log."""
    times = []
    with replay.open() as lines:
        for line in lines:
            entry = json.loads(line)
            if entry.get("type") == "action":
                times.append(int(entry["think_ms"]))
    return times


# --------------------------------------------------------------------------- several servers


@dataclass
class ServersBench:
    """One run of `python -m benchmarks arena --servers N`: `servers` servers sharing one PostgreSQL."""

    servers: int
    bots: int
    connected: int
    seconds: float  # the measured window
    matches_in_window: int  # the bots saw them end (completed or forfeit) in the window
    matches_per_min: float
    decisions_per_s: float
    server_cpu_percent: list[float]  # each server's, in the window; 100 = one core
    drivers_cpu_percent: float
    database_cpu_percent: float  # PostgreSQL's processes (a throwaway cluster of the bench's own)
    database_cpu_ms_per_match: float
    # The database's work, whole run (start to drained stop), per match recorded:
    matches_recorded: int
    database_commits_per_match: float  # pg_stat_database: every commit, the bench's reads included
    hosted: list[int]  # finished matches per server
    lost_results: int  # a bot saw it end with a result; the store does not have it finished
    server_errors: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def bench_arena_servers(
    servers: int = 3,
    bots: int = 60,
    seconds: float = 20,
    drivers: int = 2,
    variants: Sequence[str] = ("grosstarock",),
    deals: int = 1,
    max_matches: int = 1,
) -> list[ServersBench]:
    """Runs with 1, 2, … `servers` servers against one throwaway PostgreSQL (a fresh database each)."""
    from .postgres import PostgresServer, PostgresUnavailable, create_database, find_bindir

    seats = max(find_variant(v).seats for v in variants)
    if bots < seats:
        raise ValueError(f"{bots} bots cannot fill a table of {seats}")
    if servers < 1 or seconds <= 0:
        raise ValueError("servers and seconds must be positive")
    try:
        database = PostgresServer(find_bindir())
        database.start()
    except (PostgresUnavailable, OSError) as exc:
        raise RuntimeError(f"cannot start PostgreSQL for the benchmark: {exc}") from None
    try:
        results = []
        for count in range(1, servers + 1):
            url = create_database(database, f"bench_{count}")
            with tempfile.TemporaryDirectory(prefix="arena-bench-servers-") as tmp:
                results.append(
                    _servers_run(
                        count, url, Path(tmp), database, bots, seconds, min(drivers, bots), variants, deals,
                        max_matches,
                    )
                )  # fmt: skip
        return results
    finally:
        database.stop()


def _servers_run(
    count: int,
    url: str,
    directory: Path,
    database: Any,
    bots: int,
    seconds: float,
    drivers: int,
    variants: Sequence[str],
    deals: int,
    max_matches: int,
) -> ServersBench:
    from .common import process_cpu_s
    from .postgres import free_port

    servers = [
        ArenaServer(directory, variants, deals, max_matches, store=url, port=free_port(), name=f"server{i}")
        for i in range(count)
    ]
    tokens = servers[0].register_bots(bots)
    commits_before = _commits(url)
    addresses = [f"127.0.0.1:{server.port}" for server in servers]
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
            server.start()
        bots_side = stack.enter_context(Drivers(directory))
        for number in range(drivers):
            bots_side.start(
                {
                    "addresses": addresses,
                    "tokens": [[i, tokens[i]] for i in range(number, bots, drivers)],
                    "variants": list(variants),
                    "max_matches": max_matches,
                    "connect_timeout_s": CONNECT_S,
                    "drain_s": DRAIN_S,
                }
            )
        reports = bots_side.wait_all("connected", CONNECT_S + 30)
        if len(reports) < drivers:
            raise bots_side.failure(f"{drivers - len(reports)} bench drivers did not start")
        connected = sum(int(line.split()[1]) for line in reports.values())
        postgres = _postgres_pids(database)
        database_cpu = sum(process_cpu_s(pid) for pid in postgres)
        with Window(pids=[*(s.pid for s in servers), *bots_side.pids]) as window:
            bots_side.tell("start")
            for pause in pauses(seconds, bar=f"s measured, {count} server(s)"):
                time.sleep(pause)
            bots_side.tell("stop")
        database_cpu = sum(_cpu_or_zero(pid) for pid in postgres) - database_cpu
        # The servers drain (their matches in flight end and are recorded), then the bots leave.
        for server in servers:
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
        for server in servers:
            assert server.process is not None
            server.process.wait(DRAIN_S)
        bots_side.tell("leave")
        if len(bots_side.wait_all("done", DRAIN_S + 30)) < drivers:
            raise bots_side.failure("bench drivers did not finish")
        stats = bots_side.stats()
    commits = _commits(url) - commits_before
    ended = _ended(stats)
    in_window = [m for m, (term, at) in ended.items() if term in RESULTS and window.contains_wall(at)]
    decisions = sum(report["window_decisions"] for report in stats)
    errors = 0
    ids: dict[str, int] = {}
    for number, server in enumerate(servers):
        errors += server.log_problems()[0]
        for entry in server.log_entries():
            if entry.get("event") == "joined the arena's servers":
                ids[str(entry["server_id"])] = number
    store = Store(url)
    try:
        with store.transaction() as db:
            rows = db.execute("SELECT match_id, state, server_id FROM matches").fetchall()
    finally:
        store.close()
    states = {row[0]: row[1] for row in rows}
    recorded = sum(1 for row in rows if row[1] == "finished")
    hosted = Counter(ids.get(row[2], -1) for row in rows if row[1] == "finished")
    lost = sum(1 for m, (term, _) in ended.items() if term in RESULTS and states.get(m) != "finished")
    cpu = window.cpu_s
    elapsed = window.seconds
    per = recorded or 1
    return ServersBench(
        servers=count,
        bots=bots,
        connected=connected,
        seconds=round(elapsed, 2),
        matches_in_window=len(in_window),
        matches_per_min=round(len(in_window) / elapsed * 60, 1),
        decisions_per_s=round(decisions / elapsed, 1),
        server_cpu_percent=[round(c / elapsed * 100, 1) for c in cpu[:count]],
        drivers_cpu_percent=round(sum(cpu[count:]) / elapsed * 100, 1),
        database_cpu_percent=round(database_cpu / elapsed * 100, 1),
        database_cpu_ms_per_match=round(database_cpu * 1000 / len(in_window), 2) if in_window else 0.0,
        matches_recorded=recorded,
        database_commits_per_match=round(commits / per, 2),
        hosted=[hosted.get(i, 0) for i in range(count)],
        lost_results=lost,
        server_errors=errors,
    )  # fmt: skip


def _commits(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def _postgres_pids(database: Any) -> list[int]:
    """The postmaster and its children (the backends of the servers' connections, the workers)."""
    master = int((database.data / "postmaster.pid").read_text().split()[0])
    pids = [master]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    pids.append(int(entry.name))
    return pids


def _cpu_or_zero(pid: int) -> float:
    from .common import process_cpu_s

    try:
        return process_cpu_s(pid)
    except OSError:
        return 0.0
