"""`arena serve`: the referee server, with the standing arena, until it is stopped."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

from ..engine import EngineError
from .common import (
    CliError,
    address,
    host_name,
    input_kind,
    listen_address,
    listen_port,
    output_dir,
    run_until_signalled,
)

EPILOG = """\
The server runs until it is stopped by Ctrl-C (SIGINT) or SIGTERM: it stops taking calls, ends
its streams, closes the replay logs of the matches still running as .jsonl.part files, and exits
with status 0. A port already in use (--port's or --http's, by another server or any other
process) is an error: one line on stderr and exit status 1, as for an unreadable --arena-config
or --operator-token-file or a store that cannot be opened.

With a postgresql:// store, several servers share one arena (docs/ARENA.md): there SIGTERM (or
SIGINT) drains the server first: it takes no new tables, sends the bots waiting in its lobby to
the other servers, finishes and records the matches it hosts, then exits with status 0. A second
signal stops it at once, as above; the other servers then record its running matches as
aborted."""


def register(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the referee server",
        description="Run the gRPC referee server: bots dial in, the admin service creates matches.",
        epilog=EPILOG,
    )
    serve.add_argument(
        "--host", type=host_name, default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    serve.add_argument(
        "--port", type=listen_port, default=50051, help="port, 0-65535 (default 50051; 0 picks a free one)"
    )
    serve.add_argument(
        "--unix",
        type=Path,
        metavar="PATH",
        help="also listen on this Unix socket (bots dial unix:PATH; a sandboxed bot's only way in, "
        "docs/SANDBOX.md); a stale socket there is replaced",
    )
    serve.add_argument(
        "--hosted",
        type=Path,
        metavar="DIR",
        help="also build, test and play the bots' submitted versions in the sandbox (docs/SUBMIT.md); "
        "DIR keeps their built trees and logs; needs --unix",
    )
    serve.add_argument(
        "--replay-dir",
        type=Path,
        default=Path("replays/matches"),
        metavar="DIR",
        help="where the matches' replay logs are written (default replays/matches)",
    )
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
        "--advertise",
        metavar="HOST:PORT",
        type=address,
        help="with a postgresql:// store: the address the arena's other servers send bots to for the "
        "matches hosted here (default --host:--port)",
    )
    serve.add_argument(
        "--operator-token-file",
        type=Path,
        default=Path("arena.operator-token"),
        metavar="FILE",
        help="the admin service's credential; created with a new token if missing (default "
        "arena.operator-token)",
    )
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=listen_address,
        help="also serve the read-only web site (leaderboard, bots, matches, live tables, JSON API) "
        "on this address, e.g. 127.0.0.1:8080 (default: off; docs/ARENA.md)",
    )
    serve.add_argument(
        "--play",
        action="store_true",
        help="with --http: people may start matches against the example bots (run in this process), "
        "wait in the lobby with a registered player's token to be seated like a bot, and play on from a "
        "replay's position, on the site's /play page (default: off; docs/PLAY.md)",
    )
    serve.set_defaults(run=_cmd_serve, parser=serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    """`_serve`; a token file it created is removed again when the server could not start (a port
    in use, a store it cannot open), so that only a server that ran leaves one."""
    token_file: Path = args.operator_token_file
    created = not token_file.exists()
    try:
        return _serve(args)
    except CliError:
        if created:
            token_file.unlink(missing_ok=True)
        raise


def _check_paths(args: argparse.Namespace) -> None:
    """The files and folders the server reads and writes, before it starts."""
    from ..files import ARENA_SETTINGS, ARENA_STORE

    output_dir(args.replay_dir, "--replay-dir")
    if args.arena_config is not None:
        input_kind(args.arena_config, ARENA_SETTINGS, "--arena-config")
    if "://" not in args.store and Path(args.store).exists():
        input_kind(Path(args.store), ARENA_STORE, "--store")


def _serve(args: argparse.Namespace) -> int:
    import structlog

    from ..logs import configure
    from ..server.app import ListenError, serve
    from ..server.auth import load_operator_token
    from ..standing.lobby import ArenaConfig
    from ..standing.service import StandingArena
    from ..standing.store import Store, StoreError

    configure()
    _check_paths(args)
    try:
        arena = ArenaConfig.from_toml(args.arena_config) if args.arena_config else ArenaConfig()
    except (OSError, ValueError, EngineError) as exc:
        raise CliError(_problem("--arena-config", args.arena_config, exc)) from None
    try:
        operator_token = load_operator_token(args.operator_token_file)
    except (OSError, ValueError) as exc:
        raise CliError(_problem("--operator-token-file", args.operator_token_file, exc)) from None
    if args.play and args.http is None:
        raise CliError("--play needs --http HOST:PORT (the page people play on)")
    advertise = args.advertise or ""
    if args.store.startswith(("postgresql://", "postgres://")) and not advertise:
        if args.port == 0 or args.host in ("0.0.0.0", "::", ""):
            raise CliError(
                "with a postgresql:// store and --port 0 or a wildcard --host, give --advertise HOST:PORT"
            )
        advertise = f"[{args.host}]:{args.port}" if ":" in args.host else f"{args.host}:{args.port}"
    try:
        store = Store(args.store)
        hosting = None
        if args.hosted is not None:
            from ..submissions.runtime import hosting_for

            hosting = hosting_for(store, args.hosted, args.unix, arena)
        service = StandingArena(store, arena, advertise, hosting)
    except (OSError, ValueError, StoreError) as exc:
        raise CliError(str(exc)) from None
    cut_off: list[str] = []
    server = functools.partial(
        serve,
        args.host,
        args.port,
        args.replay_dir,
        service=service,
        operator_token=operator_token,
        on_stop=lambda hub: cut_off.extend(hub.cut_off()),
        unix=args.unix,
    )
    if args.http is not None:
        from ..web.app import serve_with_site

        host, port = args.http
        server = functools.partial(serve_with_site, server, service, host, port, play=args.play)
    try:
        if service.cluster is not None:
            signal = run_draining(server, service)
        else:
            stopped = run_until_signalled(server)  # matches still running are aborted, their logs kept
            signal = stopped.signal.name if stopped.signal else None
    except (ListenError, OSError, StoreError) as exc:
        raise CliError(str(exc)) from None
    finally:
        if service.cluster is None:  # a cluster's other servers record its matches (docs/ARENA.md)
            _record_cut_off(store, cut_off)
        store.close()
    structlog.get_logger().info("server stopped", signal=signal)
    return 0


def _record_cut_off(store: Any, match_ids: list[str]) -> None:
    """The matches a stop cut off, recorded as aborted now rather than at the next start (only
    those the store holds as running: a match created by the admin service is not the store's)."""
    import structlog

    log = structlog.get_logger()
    if match_ids:
        log.info("matches cut off by the stop", matches=match_ids)
    for match_id in match_ids:
        try:
            store.abort_match(match_id, "the server stopped before the match ended")
        except Exception as exc:  # the store's trouble: the next start records it (`abort_unfinished`)
            log.warning("cut-off match not recorded as aborted", match_id=match_id, error=str(exc))


def run_draining(server: Any, service: Any) -> str | None:
    """Run `server` until a signal; the first SIGTERM or SIGINT drains the standing arena
    (`StandingArena.drain`) and then stops the server, a second one stops it at once.
    Returns the first signal's name (None if the server returned by itself)."""
    import signal as signals

    import structlog
    import trio

    received: list[str] = []
    error: list[Exception] = []

    async def main() -> None:
        work = trio.CancelScope()

        async def drain_then_stop() -> None:
            await service.drain()
            work.cancel()

        async def watch(incoming: Any) -> None:
            async with trio.open_nursery() as draining:
                async for number in incoming:
                    received.append(signals.Signals(number).name)
                    if len(received) == 1:
                        structlog.get_logger().info("draining before the stop", signal=received[0])
                        draining.start_soon(drain_then_stop)
                    else:
                        work.cancel()

        with trio.open_signal_receiver(signals.SIGINT, signals.SIGTERM) as incoming:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch, incoming)
                try:
                    with work:
                        await server()
                except Exception as exc:  # raised below, not wrapped in the nursery's group
                    error.append(exc)
                finally:
                    nursery.cancel_scope.cancel()

    trio.run(main)
    if error:
        raise _leaf(error[0])
    return received[0] if received else None


def _leaf(exc: BaseException) -> BaseException:
    """The first exception that is not a group (a trio nursery wraps what its tasks raise)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _problem(option: str, path: Path, exc: BaseException) -> str:
    """One line: the option, its file, and what is wrong with it (an OSError without its errno)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    text = text.removeprefix(f"{path}: ")
    return f"{option} {path}: {text[:1].lower()}{text[1:]}"
