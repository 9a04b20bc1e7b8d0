"""A standing arena in a thread of the test process, and bots that join its lobby."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from pathlib import Path

import trio

from arena.server.app import serve
from arena.server.local import bot_environment
from arena.standing.lobby import ArenaConfig
from arena.standing.service import StandingArena
from arena.standing.store import Store
from support import BOTS
from support.admin import OPERATOR_TOKEN

LOBBY_BOT = BOTS / "lobby_bot.py"


FAST = ArenaConfig(
    variants=("grosstarock",),
    deals=1,
    per_decision_ms=2_000,
    bank_ms=2_000,
    tick_s=0.05,
    revocation_poll_s=0.2,
    reconnect_grace_s=0.5,
    start_timeout_s=10.0,
)


class ServerThread:
    """`serve` with a store, on its own thread with its own trio run, until `stop`."""

    def __init__(self, store: Store, replay_dir: Path, config: ArenaConfig) -> None:
        self.port = 0
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self.thread = threading.Thread(
            target=trio.run, args=(self._main, store, replay_dir, config), daemon=True
        )

    async def _main(self, store: Store, replay_dir: Path, config: ArenaConfig) -> None:
        with trio.CancelScope() as self._cancel:
            async with trio.open_nursery() as nursery:
                start = lambda task_status: serve(  # noqa: E731
                    "127.0.0.1",
                    0,
                    replay_dir,
                    service=StandingArena(store, config),
                    operator_token=OPERATOR_TOKEN,
                    task_status=task_status,
                )
                _hub, self.port = await nursery.start(start)
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()

    def __enter__(self) -> ServerThread:
        self.thread.start()
        assert self._ready.wait(30), "the server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None and self._cancel is not None:
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._cancel.cancel)
        self.thread.join(30)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def lobby_bot(address: str, token: str, **env: str) -> subprocess.Popen[str]:
    environment = bot_environment(address, "", 0)
    del environment["ARENA_TOKEN"]
    environment.update(ARENA_BOT_TOKEN=token, **env)
    return subprocess.Popen(
        [sys.executable, str(LOBBY_BOT)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
