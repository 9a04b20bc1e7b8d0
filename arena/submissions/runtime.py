"""Running versions in the sandbox: the standing arena's hosted processes and the builder.

`SandboxRuntime` is what `arena serve --hosted` gives the standing arena (`standing.hosted.Runtime`):
it starts a version's process in a sandbox whose only way out is this server's Unix socket, and,
while the server runs, builds and tests the versions waiting in the store (`accept.Builder`), so
any server of a cluster may take a submission (each one is claimed by one server at a time).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import structlog
import trio

from ..sandbox import SOCKET_PATH, Sandbox, unavailable
from ..standing.config import ArenaConfig
from ..standing.hosted import HostedConfig
from ..standing.store import Store
from ..standing.versions import VersionRecord, Versions
from .accept import Builder
from .processes import RuntimeConfig, Trees, next_name, start_version

log = structlog.get_logger(component="submissions")


class SandboxProcess:
    """A hosted version's process (`standing.hosted.HostedProcess`)."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box

    @property
    def alive(self) -> bool:
        return self.box.running

    def seat(self, env: dict[str, str]) -> None:
        if self.box.stdin is None or not self.box.running:
            raise OSError("the process has ended")
        self.box.stdin.write(json.dumps(env).encode() + b"\n")
        self.box.stdin.flush()

    def cpu_seconds(self) -> float:
        return self.box.cpu_seconds()

    def output_mark(self) -> int:
        try:
            return self.box.output.stat().st_size
        except OSError:
            return 0

    def output_from(self, mark: int) -> str:
        try:
            with self.box.output.open("rb") as file:
                file.seek(mark)
                return file.read().decode(errors="replace")
        except OSError:
            return ""

    async def wait(self) -> None:
        await trio.to_thread.run_sync(self.box.wait, abandon_on_cancel=True)

    async def stop(self) -> None:
        await trio.to_thread.run_sync(self.box.stop)


class SandboxRuntime:
    """This server's hosted processes (`standing.hosted.Runtime`) and its builder."""

    def __init__(self, store: Store, config: RuntimeConfig, socket: Path, worker: str = "") -> None:
        self.versions = Versions(store)
        self.config = config
        self.socket = socket
        self.trees = Trees(self.versions, config.work_dir / "trees")
        self.logs = config.work_dir / "logs"
        self.worker = worker or f"{os.uname().nodename}:{os.getpid()}:{secrets.token_hex(3)}"

    def address(self) -> str:
        return f"unix:{SOCKET_PATH}"

    async def launch(self, version: VersionRecord, env: dict[str, str] | None) -> SandboxProcess:
        tree = await trio.to_thread.run_sync(self.trees.tree, version)
        self.logs.mkdir(parents=True, exist_ok=True)
        label = env.get("ARENA_MATCH_ID", "") if env else "persistent"
        output = self.logs / f"{version.bot}-v{version.version}-{label}-{next_name()}.log"
        wall = self.config.per_match_wall_s if env is not None else None
        box = await trio.to_thread.run_sync(
            start_version, version, tree, self.config, self.socket, env, output, wall
        )
        log.info("hosted process started", bot=version.bot, version=version.version, sandbox=box.name)
        return SandboxProcess(box)

    def add_services(self, server: Any) -> list[str]:
        from .api import add_submission_service

        return [add_submission_service(self.versions.store, server)]

    async def work(self) -> None:
        """Build and test the versions waiting in the store, one at a time, until cancelled."""
        if self.config.build_poll_s <= 0:
            await trio.sleep_forever()
        builder = Builder(self.versions, self.config, self.worker)
        await builder.run(self.config.build_poll_s)


def hosting_for(
    store: Store, work_dir: Path, socket: Path | None, arena: ArenaConfig
) -> tuple[SandboxRuntime, HostedConfig]:
    """`arena serve --hosted DIR --unix PATH`: the standing arena's hosting of submitted bots.
    ValueError when this host cannot run them."""
    if socket is None:
        raise ValueError("--hosted needs --unix PATH: the sandboxed bots reach the server only there")
    why = unavailable()
    if why is not None:
        raise ValueError(f"--hosted: sandboxes cannot run on this host: {why}")
    config = RuntimeConfig(work_dir.resolve())
    hosted = HostedConfig(arena.hosted_matches, arena.hosted_idle_s, arena.hosted_poll_s)
    return SandboxRuntime(store, config, socket.resolve()), hosted
