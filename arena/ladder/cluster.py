"""A ladder's matches on a Ray cluster: `arena ladder run|ab --ray [ADDRESS]`.

Each Ray worker is an actor (`MatchWorker`, one CPU) holding, on its node, a referee process
(a referee server on a loopback port and the bots of its matches, per-match or persistent
processes), the same unit as a local ladder's referee processes; it plays up to `concurrency`
matches at once and returns each finished match as a `MatchRecord` with its replay log. The
driver alone writes the database, one transaction per match as results arrive (`run.py`), and
the replays into its replay directory.

A worker that dies (its process killed, its node gone) fails the calls in flight on it: the
driver sends those matches again, to the worker Ray restarts or to another; a match is
recorded only once (its key is unique). Bots reach the workers as their commands, resolved on
the worker (`{python}` is the worker's interpreter) in the ladder file's directory, which Ray
ships to every node as the job's working directory.

Without an address a local Ray is started, bound to the loopback (`start_local`); with one,
the running cluster is joined as it is.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import trio

from ..referee.runner import MatchConfig
from .config import BotSpec, local_bot
from .player import ClusterError
from .referees import PoolError, RefereePool, referee_pool
from .schedule import ScheduledMatch
from .store import MatchRecord

log = structlog.get_logger(component="ladder")

RAY_MISSING = (
    "--ray needs Ray, an optional extra: pip install 'grosstarock-arena[ray]' (in a checkout: -e '.[ray]')"
)
MAX_ATTEMPTS = 5  # a match whose worker died is sent again, up to this many times in all
# Never uploaded to the workers with the ladder's directory.
EXCLUDES = [".git", ".venv", "venv", "node_modules", "__pycache__", "*.sqlite", "*.sqlite-*", "*.lock"]


@dataclass(frozen=True)
class BotRecipe:
    """A local bot as the worker rebuilds it: the command as written, its directory relative to
    the working directory Ray gives the worker."""

    name: str
    command: str
    env: tuple[tuple[str, str], ...]
    cwd: str
    processes: str

    @classmethod
    def of(cls, bot: BotSpec, base: Path) -> BotRecipe:
        try:
            cwd = str(bot.cwd.resolve().relative_to(base.resolve()))
        except ValueError:
            cwd = str(bot.cwd)  # outside the shipped directory: the same path on every node
        return cls(bot.name, bot.command, tuple(sorted(bot.env.items())), cwd, bot.processes)

    def build(self) -> BotSpec:
        # Absolute: an in-process bot's module is imported from it (put on `sys.path`) in the
        # worker and again in its referee process, whatever their working directories then.
        cwd = Path(self.cwd).resolve()
        return local_bot(self.name, self.command, dict(self.env), cwd, self.processes)


def import_ray(local: bool = False) -> Any:
    """Ray, or ClusterError naming the extra; `local`: for a Ray this command starts itself, with
    its environment (`local_ray_environment`) set first."""
    if local:
        local_ray_environment()
    try:
        import ray
    except ImportError:
        raise ClusterError(RAY_MISSING) from None
    if local:
        loopback_only()
    return ray


def loopback_only() -> None:
    """Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once, when this process first imports it
    (`ray._private.ray_constants`): a process that imported Ray before it was set (the command
    line checks that Ray is installed first; a benchmark) would start its control store on
    the machine's network address. So that reading is set here too."""
    with contextlib.suppress(ImportError):
        constants = importlib.import_module("ray._private.ray_constants")
        if hasattr(constants, "ENABLE_RAY_CLUSTER"):
            setattr(constants, "ENABLE_RAY_CLUSTER", False)  # noqa: B010 (no stub for it)


# What a Ray started by this command leaves out (Ray reads each as RAY_<name> in every process it
# starts): metrics collection and export, task events (Ray's state API and dashboard, which are
# off), usage statistics, and the Python workers Ray starts ahead of need (one per CPU, which
# the ladder's actors, started with the job's working directory, never use).
LEAN_LOCAL_RAY = {
    "RAY_enable_metrics_collection": "0",
    "RAY_enable_task_events": "0",
    "RAY_enable_timeline": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_enable_worker_prestart": "0",
    "RAY_prestart_worker_first_driver": "0",
}


def local_ray_environment() -> None:
    """The environment of a Ray this command starts itself. RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
    keeps it on the loopback: without it Ray on Linux takes the machine's network address for
    its control store even when given 127.0.0.1 as node address. RAY_worker_niceness=0: Ray
    runs its workers at niceness 15 by default, which on a machine shared with the driver and
    other work (where a local Ray runs) leaves the referee and the bots only what is idle. And
    `LEAN_LOCAL_RAY`: Ray's own work that a ladder does not use, which costs CPU its matches need."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_worker_niceness"] = "0"  # noqa: SIM112 (Ray reads this spelling)
    os.environ.update(LEAN_LOCAL_RAY)


def connect(
    address: str | None, working_dir: Path | None, cpus: int | None = None, excludes: tuple[str, ...] = ()
) -> Any:
    """`ray.init`: a local instance on the loopback when `address` is None, else the cluster at
    `address`; the ladder's directory (if any) as the job's working directory."""
    ray = import_ray(local=address is None)
    if address is not None:
        check_reachable(address)
    runtime_env: dict[str, Any] = {}
    if working_dir is not None:
        runtime_env = {"working_dir": str(working_dir), "excludes": [*EXCLUDES, *excludes]}
    try:
        if address is None:
            start_local(ray, cpus, runtime_env)
        else:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False, logging_level="ERROR")
    except ConnectionError as exc:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {first_line(exc)}") from None
    except Exception as exc:  # Ray raises many kinds; the first line says what went wrong
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise ClusterError(f"cannot start {where}: {type(exc).__name__}: {first_line(exc)}") from None
    return ray


# How many times a local Ray is started before its failure is the command's. Ray 2.60's raylet
# waits 15 s (a fixed wait, no setting changes it) for the port of its node's agent, a Python
# process that it starts and that imports much of Ray: on a machine busy with other work that
# can take longer, and the raylet then stops with "Timed out waiting for file
# …/metrics_agent_port_…" in /tmp/ray/session_*/logs/raylet.out, which `ray.init` reports after
# 30 s as "The current node timed out during startup". The next start usually makes it.
LOCAL_STARTS = 3


def start_local(ray: Any, cpus: int | None, runtime_env: dict[str, Any]) -> None:
    """`ray.init` of a Ray on this machine, on the loopback; started again (up to LOCAL_STARTS
    times in all) when its start timed out, the failure of a busy machine rather than of the
    ladder. Any other failure is raised at once."""
    for attempt in range(1, LOCAL_STARTS + 1):
        before = child_processes()
        try:
            ray.init(
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                num_cpus=cpus,
                runtime_env=runtime_env,
                log_to_driver=False,
                logging_level="ERROR",
                configure_logging=True,
            )
            return
        except Exception as exc:
            if attempt == LOCAL_STARTS or "timed out" not in str(exc).lower():
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()
            # A node that failed to start is not Ray's to shut down: the processes it started
            # (its control store, monitors) would run on beside the next start, until this
            # process exits.
            for pid in child_processes() - before:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            log.warning(
                "a local Ray did not start in time; starting it again", attempt=attempt, error=first_line(exc)
            )


def child_processes() -> set[int]:
    """This process's children (Linux's /proc; none found elsewhere)."""
    found = set()
    me = str(os.getpid())
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError):
                    # pid (comm) state ppid …: the command may hold spaces and brackets
                    if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                        found.add(int(entry.name))
    return found


REACH_TIMEOUT_S = 5.0


def check_reachable(address: str) -> None:
    """A TCP connection to `host:port` (the head's control store), so that an address with no
    Ray behind it is an error at once: `ray.init` would go on dialling it for minutes."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto", ray://…: Ray resolves those itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cause_line(exc: BaseException) -> str:
    """The last `SomeError: message` line of an error that carries a remote traceback."""
    causes = [line.strip() for line in str(exc).splitlines() if CAUSE.match(line.strip())]
    return causes[-1] if causes else first_line(exc)


CAUSE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b.*:")


class MatchWorker:
    """The body of the Ray actor: on its node, one referee process (`arena.ladder.referees`, the
    unit of a local ladder's pool: a referee server on a loopback port and the bots of its
    matches), driven from a trio loop in a thread of the actor's own, which lives as long as the
    actor (the referee's parent-death signal belongs to it).

    The referee runs in a process of its own, not in the actor's: that process starts a session
    of its own, as a local ladder's referees do, and Linux's scheduler (its autogroups, one per
    session) shares the cores between sessions first. Ray starts its workers in the session of
    whoever started Ray, so referees inside the actors would share one share with every other
    worker of the node, Ray's own processes and the driver, and a ladder on Ray would play slower
    than the same referees without Ray (benchmarks/RESULTS.md, "Sessions and the scheduler").

    No `async def` among its methods: Ray would make it an asyncio actor and run `play`, which
    blocks until its match ends, on that actor's event loop, one match at a time. As a threaded
    actor its `play` calls wait in Ray's threads while their matches run together."""

    def __init__(
        self, recipes: list[BotRecipe], match_config: Callable[[ScheduledMatch], MatchConfig]
    ) -> None:
        import ray

        # The node's id; the driver names it by address (`node_names`).
        self.node = ray.get_runtime_context().get_node_id()
        self.error: str | None = None
        bots: list[BotSpec] = []
        for recipe in recipes:
            try:
                bots.append(recipe.build())
            except ValueError as exc:
                self.error = f"on a Ray worker ({self.node[:8]}): {exc} (in {Path.cwd()})"
                return
        self.replay_dir = Path(tempfile.mkdtemp(prefix="arena-ray-")) / "replays"
        self.match_config = match_config
        self.ready = threading.Event()
        self.pool: RefereePool | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        loop = threading.Thread(
            target=trio.run, args=(referee_loop, self, bots), daemon=True, name="arena-referee"
        )
        loop.start()
        self.ready.wait()

    def check(self) -> tuple[str, str | None]:
        """(this worker's node, an error that keeps it from playing or None)."""
        return self.node, self.error

    def play(self, scheduled: ScheduledMatch) -> tuple[MatchRecord, str] | None:
        """Play one match; its record and replay log, or None when it failed in the referee."""
        assert self.pool is not None and self.token is not None
        record = trio.from_thread.run(self.pool.play_record, scheduled, trio_token=self.token)
        if record is None or record.replay is None:
            return None
        path = self.replay_dir / record.replay
        text = path.read_text(encoding="utf-8")
        path.unlink(missing_ok=True)  # the driver keeps it
        return record, text


async def referee_loop(worker: MatchWorker, bots: list[BotSpec]) -> None:
    """The worker's trio loop: its referee process, for the actor's life."""
    try:
        async with referee_pool(1, bots, worker.match_config, worker.replay_dir) as pool:
            worker.pool = pool
            worker.token = trio.lowlevel.current_trio_token()
            worker.ready.set()
            await trio.sleep_forever()
    except PoolError as exc:
        worker.error = f"on a Ray worker ({worker.node[:8]}): {exc}"
    finally:
        worker.ready.set()


def node_names(ray: Any) -> dict[str, str]:
    """Each node's id → `address/id` (its first 8 hex digits: the nodes of one machine share an address)."""
    return {n["NodeID"]: f"{n['NodeManagerAddress']}/{n['NodeID'][:8]}" for n in ray.nodes()}


class RayPlayer:
    """The driver's side: matches sent to the workers, least busy first, sent again when the
    worker dies; each finished match's replay written into `replay_dir`."""

    def __init__(
        self, ray: Any, workers: list[Any], nodes: list[str], replay_dir: Path, concurrency: int
    ) -> None:
        self.ray = ray
        self.workers = workers
        self.slots = len(workers) * concurrency  # matches in flight at once
        self.nodes = nodes
        self.busy = [0] * len(workers)
        self.replay_dir = replay_dir
        replay_dir.mkdir(parents=True, exist_ok=True)
        self.limiter = trio.CapacityLimiter(1024)
        self.lost = 0  # calls that failed with their worker

    def in_use(self) -> int:
        return sum(1 for b in self.busy if b)

    async def play_record(self, scheduled: ScheduledMatch) -> MatchRecord | None:
        from ray.exceptions import ActorUnavailableError, RayActorError, WorkerCrashedError

        for attempt in range(1, MAX_ATTEMPTS + 1):
            index = min(range(len(self.workers)), key=self.busy.__getitem__)
            self.busy[index] += 1
            try:
                ref = self.workers[index].play.remote(scheduled)
                result = await trio.to_thread.run_sync(
                    self.ray.get, ref, abandon_on_cancel=True, limiter=self.limiter
                )
            except (RayActorError, ActorUnavailableError, WorkerCrashedError) as exc:
                self.lost += 1
                log.warning(
                    "worker lost; the match is played again",
                    match=scheduled.key,
                    node=self.nodes[index],
                    attempt=attempt,
                    error=first_line(exc),
                )
                await trio.sleep(0.5 * attempt)  # while Ray restarts the worker
                continue
            finally:
                self.busy[index] -= 1
            if result is None:
                return None
            record, text = result
            record.node = self.nodes[index]
            assert record.replay is not None
            (self.replay_dir / record.replay).write_text(text, encoding="utf-8")
            return record  # type: ignore[no-any-return]
        raise ClusterError(f"match {scheduled.key} failed on {MAX_ATTEMPTS} workers in a row; see the log")

    async def close(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(Exception):
                self.ray.kill(worker)


@contextlib.contextmanager
def cluster_player(
    address: str | None,
    workers: int | None,
    concurrency: int,
    bots: list[BotSpec],
    base: Path | None,
    match_config: Callable[[ScheduledMatch], MatchConfig],
    replay_dir: Path,
) -> Iterator[RayPlayer]:
    """Ray started or joined, `workers` actors (default: one per CPU of the cluster) each playing
    up to `concurrency` matches at once; Ray shut down (this driver's part of it) at the end."""
    excludes: tuple[str, ...] = ()
    if base is not None and replay_dir.resolve().is_relative_to(base.resolve()):
        excludes = ("/" + str(replay_dir.resolve().relative_to(base.resolve())),)
    ray = connect(address, base, cpus=workers if address is None else None, excludes=excludes)
    try:
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        recipes = [BotRecipe.of(bot, base or Path.cwd()) for bot in bots if not bot.remote]
        actor = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=concurrency + 1)(
            MatchWorker
        )
        handles = [actor.remote(recipes, match_config) for _ in range(count)]
        try:
            checks = ray.get([h.check.remote() for h in handles], timeout=120)
        except Exception as exc:
            if isinstance(exc, ray.exceptions.GetTimeoutError):
                why = "none was ready after 120 s (more --ray-workers than the cluster's CPUs?)"
            else:  # an error in a worker's start: its own last line says what it was
                why = f"{type(exc).__name__}: {cause_line(exc)}"
            raise ClusterError(f"the Ray workers did not start: {why}") from None
        for _, error in checks:
            if error is not None:
                raise ClusterError(error)
        names = node_names(ray)
        nodes = [names.get(node, node[:8]) for node, _ in checks]
        log.info("ray workers ready", workers=count, nodes=sorted(set(nodes)), address=address or "local")
        yield RayPlayer(ray, handles, nodes, replay_dir, concurrency)
    finally:
        ray.shutdown()
