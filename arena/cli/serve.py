"""`arena serve`: the referee server, with the standing arena, until it is stopped."""

from __future__ import annotations

import argparse
import functools
import signal
from pathlib import Path
from typing import Any

from ..engine import EngineError
from .common import CliError


def register(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the referee server",
        description="Run the gRPC referee server: bots dial in, the admin service creates matches.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=50051, help="port (default 50051; 0 picks a free one)")
    serve.add_argument("--replay-dir", type=Path, default=Path("replays/matches"), metavar="DIR")
    serve.add_argument(
        "--store",
        default="arena.db",
        metavar="PATH|URL",
        help="the standing arena's store: a SQLite file (default arena.db) or a postgresql:// URL",
    )
    serve.add_argument(
        "--arena-config", type=Path, metavar="TOML", help="the standing arena's settings ([arena] table)"
    )
    serve.add_argument(
        "--operator-token-file",
        type=Path,
        default=Path("arena.operator-token"),
        metavar="FILE",
        help="the admin service's credential; created with a new token if missing (default "
        "arena.operator-token)",
    )
    serve.set_defaults(run=_cmd_serve, parser=serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    import trio

    from ..logs import configure
    from ..server.app import serve
    from ..server.auth import load_operator_token
    from ..standing.lobby import ArenaConfig
    from ..standing.service import StandingArena
    from ..standing.store import Store, StoreError

    configure()
    try:
        arena = ArenaConfig.from_toml(args.arena_config) if args.arena_config else ArenaConfig()
        operator_token = load_operator_token(args.operator_token_file)
        store = Store(args.store)
    except (OSError, ValueError, EngineError, StoreError) as exc:
        raise CliError(str(exc)) from None

    async def serve_until_signalled() -> None:
        async with trio.open_nursery() as nursery:
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                nursery.start_soon(
                    functools.partial(
                        serve,
                        args.host,
                        args.port,
                        args.replay_dir,
                        service=StandingArena(store, arena),
                        operator_token=operator_token,
                    )
                )
                async for _ in signals:  # a graceful stop: running matches are aborted, logs kept
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio.run(serve_until_signalled)
    finally:
        store.close()
    return 0
