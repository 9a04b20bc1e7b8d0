"""Submitted bots for the tests (tests/submissions/): the example bots as submissions, `arena serve
--hosted` servers as real processes, and waiting on the store for versions and matches."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.standing.store import Store
from support import ROOT

CPP_SDK = ROOT / "clients" / "cpp" / "build"  # the C++ protocol library the clients' tests build


def example_submissions(directory: Path, variants: tuple[str, ...] = ("grosstarock",)) -> dict[str, Path]:
    """The Python, Node and C++ example bots as submission directories (docs/SUBMIT.md)."""
    listed = ", ".join(f'"{v}"' for v in variants)
    python = directory / "python"
    python.mkdir(parents=True)
    (python / "arena-bot.toml").write_text(
        f'language = "python"\nentry = "bot.py"\npersistent = true\nvariants = [{listed}]\n'
    )
    (python / "bot.py").write_text("from arena_bot.random_bot import run\n\nrun()\n")
    node = directory / "node"
    node.mkdir()
    (node / "arena-bot.toml").write_text(
        f'language = "node"\nentry = "bot.js"\npersistent = true\nvariants = [{listed}]\n'
    )
    (node / "bot.js").write_text(
        "'use strict';\nconst { main } = require('arena-bot');\n"
        "const { decide, reseed } = require('arena-bot/random_bot.js');\n\n"
        "main(decide, { name: 'random-node', newMatch: reseed });\n"
    )
    cpp = directory / "cpp"
    cpp.mkdir()
    (cpp / "arena-bot.toml").write_text(f'language = "cpp"\nentry = "random_bot"\nvariants = [{listed}]\n')
    shutil.copy(ROOT / "clients" / "cpp" / "random_bot.cpp", cpp / "random_bot.cpp")
    return {"python": python, "node": node, "cpp": cpp}


class HostedServer:
    """`arena serve --hosted` on loopback and a Unix socket, as a subprocess."""

    def __init__(self, directory: Path, store: str, port: int, settings: str = "") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.store = store
        self.port = port
        self.log_path = directory / "server.log"
        self.config = directory / "arena.toml"
        self.config.write_text(
            '[arena]\nvariants = ["grosstarock"]\ndeals = 1\ntick_s = 0.05\nper_decision_ms = 5000\n'
            "bank_ms = 30000\nstart_timeout_s = 10.0\nheartbeat_s = 1.0\nserver_dead_after_s = 10.0\n"
            "hosted_poll_s = 0.2\n" + settings
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it; `wait_listening` waits until it listens."""
        env = dict(os.environ)
        if (CPP_SDK / "libarena_protocol.a").is_file():
            env["ARENA_CPP_SDK"] = str(CPP_SDK)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "arena", "serve", "--host", "127.0.0.1"),
                    *("--port", str(self.port), "--advertise", f"127.0.0.1:{self.port}"),
                    *("--store", self.store, "--replay-dir", str(self.directory / "replays")),
                    *("--arena-config", str(self.config), "--hosted", str(self.directory / "work")),
                    *("--unix", str(self.directory / "arena.sock")),
                    *("--operator-token-file", str(self.directory / "operator-token")),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
            )

    def wait_listening(self) -> None:
        wait_for(lambda: self.event("server listening") or self._exited(), 60, "the server to listen")

    def _exited(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited:\n{self.log_tail()}")
        return False

    def log_entries(self) -> list[dict[str, Any]]:
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    entries.append(entry)
        return entries

    def event(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.log_entries() if e.get("event") == name]

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.2)


def query(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    store = Store(url)
    try:
        with store.transaction() as db:
            return list(db.execute(sql, params).fetchall())
    finally:
        store.close()
