"""`arena bench arena`: the standing arena under load, on loopback.

The real server (`arena serve` as a subprocess, with a SQLite store in a scratch directory)
and N registered bots, all connected at once, playing for a fixed time:

1. `bots` bots are registered in a fresh store and the server is started with an
   `[arena]` table whose join limits do not throttle the benchmark;
2. driver processes (`driver_main`: asyncio and grpc.aio, like `arena bench server`'s)
   each host a share of the bots. Every bot has its own channel and TCP connection, joins
   `LobbyService.Join` with its bot token, and on every `Seated` plays the match on its own
   `BotService.Play` stream, answering each request at once with a random legal action;
3. the measured window starts when every bot has its `Welcome`, and lasts `seconds`. Then
   every bot leaves the lobby right after its next `Seated` (see `_Driver.lobby`), the bots
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

import asyncio
import contextlib
import itertools
import json
import math
import queue
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import grpc

from ..engine import find_variant
from ..standing.store import Store
from ..v1 import arena_pb2 as pb
from ..v1 import arena_pb2_grpc as pb_grpc
from .server import process_cpu_s

SAMPLE_S = 0.5  # how often the server's memory is read
DRAIN_S = 60.0  # after the window, how long the matches in flight may take to finish
SERVER_START_S = 30.0
SERVER_STOP_S = 30.0
QUIET_ROUNDS = 3  # polls in a row with no match running or being played: the arena is quiet
QUIET_POLL_S = 0.2
RECORD_S = 30.0  # after the drivers, how long the server may take to record the results they saw
CONNECT_S = 60.0  # for every bot to get its Welcome (plus CONNECT_S_PER_BOT each)
CONNECT_S_PER_BOT = 0.1
ERROR_SAMPLES = 5
# Without it, channels to one address share a TCP connection; a bot has its own.
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)


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


# --------------------------------------------------------------------------- the driver (bot side)


class _Driver:
    """One driver process's bots, on one asyncio loop."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.address: str = spec["address"]
        self.variants: list[str] = spec["variants"]
        self.max_matches: int = spec["max_matches"]
        self.measuring = False
        self.stopping = asyncio.Event()
        self.connected = 0
        self.decisions = 0
        self.window_decisions = 0
        self.decide_ns: list[int] = []
        self.ended: dict[str, tuple[str, float]] = {}  # match id -> (termination, wall time)
        self.errors: Counter[str] = Counter()
        self.rejected = 0
        self.plays: set[asyncio.Task[None]] = set()
        self.open_seats: Counter[int] = Counter()  # by bot: Seated, and no MatchEnd yet
        self.seated: list[tuple[str, int, float]] = []  # (match id, seat, wall time) of every Seated

    async def lobby(self, channel: Any, index: int, token: str) -> None:
        """Wait in the lobby, starting a match for every Seated, until cancelled or, once
        stopping, until a Seated fills the bot's last free place.

        A bot cannot leave the lobby between two messages: a Seated the server sent as the
        bot cancels its stream would be lost, and its match would wait for a bot that never
        comes (until `start_timeout_s`, then the fault policy plays the seat). Right after a
        Seated that fills its places the server cannot seat it again until that match has
        been played and recorded: leaving then loses nothing.
        """
        stub = pb_grpc.LobbyServiceStub(channel)  # type: ignore[no-untyped-call]
        play_stub = pb_grpc.BotServiceStub(channel)  # type: ignore[no-untyped-call]
        rng = random.Random(index)
        welcomed = False
        places = self.max_matches
        join = pb.LobbyJoin(variants=self.variants, max_matches=self.max_matches, bot_version="bench")
        while not self.stopping.is_set():
            retry_s = 0.5
            call = stub.Join(join, metadata=(("authorization", f"Bearer {token}"),))
            try:
                async for message in call:
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        places = message.welcome.max_matches
                        if not welcomed:
                            welcomed = True
                            self.connected += 1
                    elif kind == "seated":
                        self.open_seats[index] += 1
                        seated = message.seated
                        self.seated.append((seated.match_id, seated.seat, time.time()))
                        task = asyncio.create_task(self.play(play_stub, seated, rng, index))
                        self.plays.add(task)
                        task.add_done_callback(self.plays.discard)
                        if self.stopping.is_set() and self.open_seats[index] >= places:
                            return
                    elif kind == "paused":
                        self.errors["lobby paused"] += 1
                self.errors["lobby ended by the server"] += 1
            except grpc.aio.AioRpcError as error:
                self.errors[f"lobby {error.code().name}"] += 1
                for key, value in error.trailing_metadata() or ():
                    if key == "retry-after-ms":
                        retry_s = min(int(value) / 1000, 5.0)
            finally:
                call.cancel()
            await asyncio.sleep(retry_s)

    async def play(self, stub: Any, seated: Any, rng: random.Random, index: int) -> None:
        """Play one seat: a random legal action for every request, at once."""
        call = stub.Play(metadata=(("authorization", f"Bearer {seated.seat_token}"),))
        seat_open = True
        try:
            await call.write(pb.BotMessage(hello=pb.Hello(bot_name=f"bench{index:03d}", protocol_version=1)))
            async for message in call:
                kind = message.WhichOneof("kind")
                if kind == "request":
                    received = time.perf_counter_ns()
                    request = message.request
                    action = rng.choice(request.legal_actions)
                    reply = pb.ActionReply(request_id=request.request_id, action=action)
                    await call.write(pb.BotMessage(action=reply))
                    took = time.perf_counter_ns() - received
                    self.decisions += 1
                    if self.measuring:
                        self.window_decisions += 1
                        self.decide_ns.append(took)
                elif kind == "rejected":
                    self.rejected += 1
                elif kind == "match_end":
                    self.ended.setdefault(seated.match_id, (message.match_end.termination, time.time()))
                    self.open_seats[index] -= 1
                    seat_open = False
                    await call.done_writing()
        except grpc.aio.AioRpcError as error:
            self.errors[f"play {error.code().name}"] += 1
        finally:
            if seat_open:
                self.open_seats[index] -= 1

    def stats(self, unfinished: int) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "decisions": self.decisions,
            "window_decisions": self.window_decisions,
            "decide_us": [ns // 1000 for ns in self.decide_ns],
            "ended": self.ended,
            "seated": self.seated,
            "errors": dict(self.errors),
            "rejected": self.rejected,
            "unfinished": unfinished,
        }


def _raise_file_limit() -> None:
    """Every bot holds a TCP connection: allow as many descriptors as the hard limit does."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(soft, 65536) if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


async def _drive(spec: dict[str, Any]) -> dict[str, Any]:
    """The driver's side of the run, driven by the parent's commands on stdin (see `_bench`):

    - connect every bot, then print "connected N";
    - "start": the window begins; "stop": it ends, and every bot leaves the lobby right after
      its next Seated (see `_Driver.lobby`);
    - "status R": print "status R <matches in flight> <bots still in the lobby>";
    - "leave": the arena is quiet (no match running, and too few bots left in the lobby to
      fill a table): leave, finish the matches in flight, write the result, print "done".
    """
    driver = _Driver(spec)
    loop = asyncio.get_running_loop()

    async def command() -> str:
        line: str = await loop.run_in_executor(None, sys.stdin.readline)
        return line.strip() or "leave"  # end of input: the parent is gone

    channels = [grpc.aio.insecure_channel(spec["address"], options=CHANNEL_OPTIONS) for _ in spec["tokens"]]
    lobbies = [
        asyncio.create_task(driver.lobby(channel, index, token))
        for channel, (index, token) in zip(channels, spec["tokens"], strict=True)
    ]
    try:
        deadline = time.monotonic() + spec["connect_timeout_s"]
        while driver.connected < len(lobbies) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        print(f"connected {driver.connected}", flush=True)
        if await command() == "start":
            driver.measuring = True
            await command()  # "stop"
        driver.measuring = False
        driver.stopping.set()
        while (line := await command()).startswith("status"):
            in_lobby = sum(not task.done() for task in lobbies)
            print(f"{line} {len(driver.plays)} {in_lobby}", flush=True)
        for task in lobbies:
            task.cancel()
        await asyncio.gather(*lobbies, return_exceptions=True)
        deadline = time.monotonic() + spec["drain_s"]
        while driver.plays and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        unfinished = len(driver.plays)
        for play in list(driver.plays):
            play.cancel()
        await asyncio.gather(*list(driver.plays), return_exceptions=True)
        return driver.stats(unfinished)
    finally:
        for task in lobbies:
            task.cancel()
        await asyncio.gather(*lobbies, return_exceptions=True)
        for channel in channels:
            await channel.close()


def driver_main(spec_path: str) -> None:
    """Entry point of a driver process: `python -m arena.bench.arena SPEC.json`."""
    _raise_file_limit()
    spec = json.loads(Path(spec_path).read_text())
    stats = asyncio.run(_drive(spec))
    Path(spec["result"]).write_text(json.dumps(stats))
    print("done", flush=True)


# --------------------------------------------------------------------------- the benchmark (server side)


def server_rss_kib(pid: int) -> int:
    """Resident memory of process `pid`, from /proc (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class _Sampler:
    """The server's RSS every SAMPLE_S, on a thread, as (monotonic time, KiB)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            kib = server_rss_kib(self.pid)
            if kib:
                self.samples.append((time.monotonic(), kib))
            self._stop.wait(SAMPLE_S)

    def __enter__(self) -> _Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(5)


class _Lines:
    """Every driver's stdout lines, read by one thread each, into one queue."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[int, str]] = queue.Queue()

    def follow(self, number: int, stream: IO[str]) -> None:
        def read() -> None:
            for line in stream:
                self.queue.put((number, line.strip()))
            self.queue.put((number, ""))  # end of output

        threading.Thread(target=read, daemon=True).start()

    def wait_all(self, count: int, prefix: str, deadline: float) -> dict[int, str]:
        """Each driver's first line starting with `prefix`, until `deadline` (monotonic)."""
        seen: dict[int, str] = {}
        ended: set[int] = set()
        while len(set(seen) | ended) < count:
            try:
                number, line = self.queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line.startswith(prefix):
                seen.setdefault(number, line)
            elif not line:
                ended.add(number)
            if time.monotonic() > deadline:
                break
        return seen


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)])


def _write_config(path: Path, variants: Sequence[str], deals: int, max_matches: int) -> None:
    listed = ", ".join(f'"{v}"' for v in variants)
    path.write_text(
        "[arena]\n"
        f"variants = [{listed}]\n"
        f"deals = {deals}\n"
        "tick_s = 0.05\n"
        "per_decision_ms = 10000\n"
        "bank_ms = 60000\n"
        f"max_matches_per_bot = {max_matches}\n"
        "join_burst = 1000\n"  # the benchmark is never throttled
        "joins_per_minute = 100000.0\n"
        "start_timeout_s = 10.0\n"  # a seat whose bot never comes is played by the fault policy
    )


def _wait_listening(server: subprocess.Popen[bytes], log_path: Path) -> int:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        for line in log_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict) and entry.get("event") == "server listening":
                    return int(entry["port"])
        if server.poll() is not None:
            break
        time.sleep(0.05)
    tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"the server did not start listening within {SERVER_START_S:g} s:\n{tail}")


def _driver_failure(what: str, logs: Sequence[Path]) -> RuntimeError:
    tails = []
    for path in logs:
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        if lines:
            tails.append(f"{path.name}:\n" + "\n".join(lines[-15:]))
    return RuntimeError(what + ("\n" + "\n".join(tails) if tails else ""))


def _server_log(log_path: Path) -> tuple[int, int, list[str]]:
    """Errors (level error or critical, or an exception), warnings, and the first errors' events."""
    errors = warnings = 0
    samples: list[str] = []
    for line in log_path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):  # not a structured line: something wrote to stderr
            errors += 1
            if len(samples) < ERROR_SAMPLES:
                samples.append(f"stderr: {line[:200]}")
            continue
        level = str(entry.get("level", ""))
        if level in ("error", "critical") or "exception" in entry:
            errors += 1
            if len(samples) < ERROR_SAMPLES:
                samples.append(f"{level}: {entry.get('event')}")
        elif level == "warning":
            warnings += 1
    return errors, warnings, samples


def _ended(stats: Sequence[dict[str, Any]]) -> dict[str, tuple[str, float]]:
    """Every match some bot saw end: its termination, and when the first bot saw it (wall time)."""
    ended: dict[str, tuple[str, float]] = {}
    for report in stats:
        for match_id, (termination, at) in report["ended"].items():
            if match_id not in ended or at < ended[match_id][1]:
                ended[match_id] = (termination, at)
    return ended


def _quiesce(
    db: Path, drivers: Sequence[subprocess.Popen[str]], lines: _Lines, server: subprocess.Popen[bytes]
) -> None:
    """After the window: until no bot plays a match and none is running in the store, for
    QUIET_ROUNDS polls in a row (bounded by DRAIN_S). Then the bots still in the lobby are
    free and too few to fill a table: they may leave without a Seated in flight."""
    store = Store(str(db))
    try:
        deadline = time.monotonic() + DRAIN_S
        quiet = 0
        for round_ in itertools.count(1):
            if quiet >= QUIET_ROUNDS or time.monotonic() > deadline or server.poll() is not None:
                return
            time.sleep(QUIET_POLL_S)
            for driver in drivers:
                _tell(driver, f"status {round_}")
            replies = lines.wait_all(len(drivers), f"status {round_} ", time.monotonic() + 10)
            counts = [[int(n) for n in reply.split()[2:4]] for reply in replies.values()]
            playing = sum(c[0] for c in counts)
            in_lobby = sum(c[1] for c in counts)
            running = sum(1 for state in store.match_states().values() if state == "running")
            if len(replies) == len(drivers) and in_lobby == 0 and playing == 0:
                return
            quiet = quiet + 1 if len(replies) == len(drivers) and playing == 0 and running == 0 else 0
    finally:
        store.close()


def _wait_recorded(db: Path, ended: dict[str, tuple[str, float]], server: subprocess.Popen[bytes]) -> float:
    """Seconds until every match the bots saw end with a result is finished in the store, and no
    match is running (bounded by RECORD_S)."""
    wanted = {m for m, (termination, _) in ended.items() if termination in ("completed", "forfeit")}
    started = time.monotonic()
    while time.monotonic() < started + RECORD_S and server.poll() is None:
        store = Store(str(db))
        try:
            states = store.match_states()
        finally:
            store.close()
        if all(states.get(m) == "finished" for m in wanted) and "running" not in states.values():
            break
        time.sleep(0.1)
    return time.monotonic() - started


def _think_ms(replay: Path) -> list[int]:
    times = []
    with replay.open() as lines:
        for line in lines:
            entry = json.loads(line)
            if entry.get("type") == "action":
                times.append(int(entry["think_ms"]))
    return times


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
    drivers = min(drivers, bots)
    with tempfile.TemporaryDirectory(prefix="arena-bench-arena-") as tmp:
        return _bench(Path(tmp), bots, seconds, drivers, tuple(variants), deals, max_matches)


def _bench(
    tmp: Path,
    bots: int,
    seconds: float,
    drivers: int,
    variants: tuple[str, ...],
    deals: int,
    max_matches: int,
) -> ArenaBench:
    db, replay_dir, log_path = tmp / "arena.db", tmp / "replays", tmp / "server.log"
    store = Store(str(db))
    try:
        tokens = [store.register_bot(f"bench{i:03d}")[1] for i in range(bots)]
    finally:
        store.close()
    config = tmp / "arena.toml"
    _write_config(config, variants, deals, max_matches)
    processes: list[subprocess.Popen[Any]] = []
    files: list[IO[Any]] = []
    try:
        server_log = log_path.open("wb")
        files.append(server_log)
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "arena", "serve", "--host", "127.0.0.1", "--port", "0"),
                *("--store", str(db), "--replay-dir", str(replay_dir), "--arena-config", str(config)),
                *("--operator-token-file", str(tmp / "operator-token")),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=server_log,
        )
        processes.append(server)
        port = _wait_listening(server, log_path)
        with _Sampler(server.pid) as sampler:
            time.sleep(SAMPLE_S * 2)  # a couple of samples of the idle server
            baseline = min((kib for _, kib in sampler.samples), default=server_rss_kib(server.pid))
            lines = _Lines()
            driver_logs = [tmp / f"driver-{n}.log" for n in range(drivers)]
            results = [tmp / f"driver-{n}.json" for n in range(drivers)]
            connect_timeout = CONNECT_S + CONNECT_S_PER_BOT * bots
            started = time.monotonic()
            for number in range(drivers):
                spec = {
                    "address": f"127.0.0.1:{port}",
                    "tokens": [[i, tokens[i]] for i in range(number, bots, drivers)],
                    "variants": list(variants),
                    "max_matches": max_matches,
                    "connect_timeout_s": connect_timeout,
                    "drain_s": DRAIN_S,
                    "result": str(results[number]),
                }
                spec_path = tmp / f"driver-{number}.spec.json"
                spec_path.write_text(json.dumps(spec))
                driver_log = driver_logs[number].open("wb")
                files.append(driver_log)
                driver = subprocess.Popen(
                    [sys.executable, "-m", "arena.bench.arena", str(spec_path)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=driver_log,
                    text=True,
                )
                processes.append(driver)
                assert driver.stdout is not None
                lines.follow(number, driver.stdout)
            driver_processes = processes[1:]
            reports = lines.wait_all(drivers, "connected", time.monotonic() + connect_timeout + 30)
            if len(reports) < drivers:
                raise _driver_failure(f"{drivers - len(reports)} bench drivers did not start", driver_logs)
            connected = sum(int(line.split()[1]) for line in reports.values())
            connect_s = time.monotonic() - started

            # The measured window: every bot connected, playing.
            cpu_before = [process_cpu_s(p.pid) for p in processes]
            window_start, window_start_wall = time.monotonic(), time.time()
            for driver in driver_processes:
                _tell(driver, "start")
            time.sleep(seconds)
            for driver in driver_processes:
                _tell(driver, "stop")
            window_end, window_end_wall = time.monotonic(), time.time()
            cpu_after = [process_cpu_s(p.pid) for p in processes]
            _quiesce(db, driver_processes, lines, server)
            for driver in driver_processes:
                _tell(driver, "leave")
            done = lines.wait_all(drivers, "done", time.monotonic() + DRAIN_S + 30)
            drain_s = time.monotonic() - window_end
            if len(done) < drivers:
                raise _driver_failure(f"{drivers - len(done)} bench drivers did not finish", driver_logs)
            stats = [json.loads(path.read_text()) for path in results]
            ended = _ended(stats)
            # The server records a result after the bots got MatchEnd; a stop before that
            # would leave the match unfinished in the store. Wait for the results to land.
            record_wait_s = _wait_recorded(db, ended, server)
            samples = list(sampler.samples)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(SERVER_STOP_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise RuntimeError(f"the server did not stop within {SERVER_STOP_S:g} s of SIGTERM") from None
        for driver in driver_processes:
            driver.wait(10)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for file in files:
            file.close()

    elapsed = window_end - window_start
    # What the bots saw: matches ended, decisions, their own decide time.
    in_window = [
        m
        for m, (termination, at) in ended.items()
        if termination in ("completed", "forfeit") and window_start_wall <= at <= window_end_wall
    ]
    decisions = sum(report["window_decisions"] for report in stats)
    decide_us = [us for report in stats for us in report["decide_us"]]
    stream_errors: Counter[str] = Counter()
    for report in stats:
        stream_errors.update(report["errors"])
        if report["rejected"]:
            stream_errors["rejected actions"] += report["rejected"]

    # What the store recorded, after the stop.
    store = Store(str(db))
    try:
        with store.transaction() as session:
            rows = session.execute("SELECT match_id, state, finished_ms, replay FROM matches").fetchall()
            seat_rows = session.execute("SELECT match_id, seat FROM match_seats").fetchall()
            faults_row = session.execute(
                "SELECT COALESCE(SUM(s.faults), 0) FROM match_seats s "
                "JOIN matches m ON m.match_id = s.match_id WHERE m.state = 'finished'"
            ).fetchone()
    finally:
        store.close()
    recorded = {row[0]: row for row in rows}
    seen_seats = {(match_id, seat) for report in stats for match_id, seat, _ in report["seated"]}
    seated_at: dict[str, float] = {}  # when the first bot got its Seated
    playing_s = 0.0  # bot-seconds within the window between Seated and MatchEnd
    for report in stats:
        for match_id, _, at in report["seated"]:
            seated_at[match_id] = min(at, seated_at.get(match_id, at))
            end = ended[match_id][1] if match_id in ended else window_end_wall
            playing_s += max(0.0, min(end, window_end_wall) - max(at, window_start_wall))
    lost = 0
    for match_id, (termination, _) in ended.items():
        if termination not in ("completed", "forfeit"):
            continue
        row = recorded.get(match_id)
        if row is None or row[1] != "finished" or not row[3] or not (replay_dir / row[3]).is_file():
            lost += 1
    round_trips: list[int] = []
    lags: list[float] = []
    window = set(in_window)
    for match_id, state, finished_ms, replay in rows:
        if state != "finished" or match_id not in window:
            continue
        lags.append(finished_ms - ended[match_id][1] * 1000)
        path = replay_dir / replay
        if seated_at.get(match_id, 0) >= window_start_wall and path.is_file():  # wholly in the window
            round_trips.extend(_think_ms(path))

    window_samples = [kib for at, kib in samples if window_start <= at <= window_end]
    peak = max((kib for _, kib in samples), default=0)
    errors, warnings, error_events = _server_log(log_path)
    cpu = [after - before for before, after in zip(cpu_before, cpu_after, strict=True)]
    p99 = percentile(round_trips, 99)
    return ArenaBench(
        bots=bots,
        drivers=drivers,
        variants=list(variants),
        deals=deals,
        max_matches_per_bot=max_matches,
        connected=connected,
        connect_s=round(connect_s, 2),
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
        bots_playing_fraction=round(playing_s / (bots * elapsed), 3),
        result_lag_ms_p50=round(percentile(lags, 50)),
        result_lag_ms_p99=round(percentile(lags, 99)),
        drain_s=round(drain_s, 2),
        record_wait_s=round(record_wait_s, 2),
        server_cpu_percent=round(cpu[0] / elapsed * 100, 1),
        drivers_cpu_percent=round(sum(cpu[1:]) / elapsed * 100, 1),
        rss_baseline_mib=round(baseline / 1024, 1),
        rss_peak_mib=round(peak / 1024, 1),
        rss_mean_mib=round(sum(window_samples) / len(window_samples) / 1024, 1) if window_samples else 0.0,
        rss_peak_kib_per_bot=round((peak - baseline) / connected, 1) if connected else 0.0,
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


def _tell(driver: subprocess.Popen[str], command: str) -> None:
    assert driver.stdin is not None
    with contextlib.suppress(OSError):  # a driver that died is reported when its result is missing
        driver.stdin.write(command + "\n")
        driver.stdin.flush()


if __name__ == "__main__":
    driver_main(sys.argv[1])
