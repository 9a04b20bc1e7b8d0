"""`python -m benchmarks arena`'s handles on its processes: the server (`arena serve`) and the drivers.

`ArenaServer` starts the real server in a scratch directory (store, replays, log, an `[arena]`
table that never throttles the benchmark), stops it with SIGTERM, and reads its log for errors.
Given a postgresql:// store and a port, several of them form one arena (`arena.standing.cluster`):
each has its own log and config file (`name`), and they may share the replay directory.
`Drivers` starts the driver processes (`arena_driver.py`), sends them commands on stdin and reads
their replies on stdout. Both are context managers that kill whatever still runs on the way out.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from arena.standing.store import Store

from .common import driver_command

SERVER_START_S = 30.0
SERVER_STOP_S = 30.0
ERROR_SAMPLES = 5  # server log errors quoted in the result
DRIVER = "benchmarks.arena_driver"


class ArenaServer:
    """`arena serve` on loopback, as a subprocess, with its store, replays and log in `directory`."""

    def __init__(
        self,
        directory: Path,
        variants: Sequence[str],
        deals: int,
        max_matches: int,
        *,
        store: str | None = None,
        port: int = 0,
        name: str = "server",
        settings: str = "",
    ) -> None:
        self.directory = directory
        self.db = store or str(directory / "arena.db")
        self.port = port
        self.replay_dir = directory / "replays"
        self.log_path = directory / f"{name}.log"
        self.config = directory / f"{name}.toml"
        self.process: subprocess.Popen[bytes] | None = None
        listed = ", ".join(f'"{v}"' for v in variants)
        self.config.write_text(
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
            + settings
        )

    @contextlib.contextmanager
    def store(self) -> Iterator[Store]:
        store = Store(self.db)
        try:
            yield store
        finally:
            store.close()

    def register_bots(self, count: int) -> list[str]:
        """Register `count` bots in the store (before the server starts); their tokens."""
        with self.store() as store:
            return [store.register_bot(f"bench{i:03d}")[1] for i in range(count)]

    def start(self) -> int:
        """Start the server; the port it listens on, once it does."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "arena", "serve"),
                    *("--host", "127.0.0.1", "--port", str(self.port)),
                    *("--store", str(self.db), "--replay-dir", str(self.replay_dir)),
                    *("--arena-config", str(self.config)),
                    *("--operator-token-file", str(self.directory / "operator-token")),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            for line in self.log_path.read_text(errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    if isinstance(entry, dict) and entry.get("event") == "server listening":
                        return int(entry["port"])
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"the server did not start listening within {SERVER_START_S:g} s:\n{tail}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: the server dies at once, as on a crash."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def log_entries(self) -> list[dict[str, Any]]:
        """The server's structured log lines."""
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    entries.append(entry)
        return entries

    def stop(self) -> None:
        """SIGTERM, and wait for the server to exit."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(SERVER_STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"the server did not stop within {SERVER_STOP_S:g} s of SIGTERM") from None

    def log_problems(self) -> tuple[int, int, list[str]]:
        """Errors (level error or critical, or an exception), warnings, and the first errors' events."""
        errors = warnings = 0
        samples: list[str] = []
        for line in self.log_path.read_text(errors="replace").splitlines():
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

    def __enter__(self) -> ArenaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            _end(self.process)


class Drivers:
    """The driver processes, numbered from 0: their specs, logs and results are files in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.processes: list[subprocess.Popen[str]] = []
        self.logs: list[Path] = []
        self.results: list[Path] = []
        self._lines: queue.Queue[tuple[int, str]] = queue.Queue()

    def start(self, spec: dict[str, Any]) -> None:
        """Start one more driver; `spec` without the `result` file, which this adds."""
        number = len(self.processes)
        self.logs.append(self.directory / f"driver-{number}.log")
        self.results.append(self.directory / f"driver-{number}.json")
        command = driver_command(
            DRIVER, {**spec, "result": str(self.results[-1])}, self.directory / f"driver-{number}.spec.json"
        )
        with self.logs[-1].open("wb") as log:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
            )
        self.processes.append(process)
        assert process.stdout is not None
        self._follow(number, process.stdout)

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def tell(self, command: str) -> None:
        """Send every driver a command line."""
        for process in self.processes:
            assert process.stdin is not None
            with contextlib.suppress(OSError):  # a driver that died is reported when its result is missing
                process.stdin.write(command + "\n")
                process.stdin.flush()

    def _follow(self, number: int, stream: IO[str]) -> None:
        """Read a driver's stdout lines on a thread, into the one queue of all drivers."""

        def read() -> None:
            for line in stream:
                self._lines.put((number, line.strip()))
            self._lines.put((number, ""))  # end of output

        threading.Thread(target=read, daemon=True).start()

    def wait_all(self, prefix: str, timeout_s: float) -> dict[int, str]:
        """Each driver's first line starting with `prefix`, for up to `timeout_s` (fewer if some
        drivers ended or did not answer in time)."""
        deadline = time.monotonic() + timeout_s
        seen: dict[int, str] = {}
        ended: set[int] = set()
        while len(set(seen) | ended) < len(self.processes):
            try:
                number, line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line.startswith(prefix):
                seen.setdefault(number, line)
            elif not line:
                ended.add(number)
            if time.monotonic() > deadline:
                break
        return seen

    def stats(self) -> list[dict[str, Any]]:
        """What every driver wrote at its end (see `arena_driver._Driver.stats`)."""
        return [json.loads(path.read_text()) for path in self.results]

    def failure(self, what: str) -> RuntimeError:
        """An error saying `what`, with the tails of the drivers' logs."""
        tails = []
        for path in self.logs:
            lines = path.read_text(errors="replace").splitlines() if path.exists() else []
            if lines:
                tails.append(f"{path.name}:\n" + "\n".join(lines[-15:]))
        return RuntimeError(what + ("\n" + "\n".join(tails) if tails else ""))

    def wait(self, timeout_s: float) -> None:
        for process in self.processes:
            process.wait(timeout_s)

    def __enter__(self) -> Drivers:
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            _end(process)


def _end(process: subprocess.Popen[Any]) -> None:
    """Kill a process that still runs, reap it and close its pipes."""
    if process.poll() is None:
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
