"""`arena serve` and `arena play`: the referee server, and one match between local bot processes."""

from __future__ import annotations

import argparse
import functools
import signal
from pathlib import Path
from typing import Any

from ..engine import EngineError
from .common import CliError, add_variant_arguments, dump, positive_int, variant_of


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

    play = commands.add_parser(
        "play",
        help="play one match between bot processes on this machine",
        description="Start the server on a free port, launch one bot process per seat (each gets "
        "ARENA_ADDRESS and ARENA_TOKEN in its environment), play the match, print the result "
        "and the replay path. Without --bot the example bots play.",
    )
    add_variant_arguments(play)
    play.add_argument(
        "--deals", type=positive_int, default=None, metavar="N", help="dealer turns (default: seats)"
    )
    play.add_argument("--seed", type=int, default=0, metavar="S")
    play.add_argument("--bot", action="append", default=[], metavar="CMD", help="bot command, once per seat")
    play.add_argument("--replay-dir", type=Path, default=Path("replays/matches"), metavar="DIR")
    play.add_argument("--per-decision-ms", type=positive_int, default=10_000, metavar="MS")
    play.add_argument("--bank-ms", type=int, default=60_000, metavar="MS")
    play.add_argument("--increment-ms", type=int, default=0, metavar="MS")
    play.add_argument("--fault-policy", choices=("substitute", "forfeit"), default="substitute")
    play.add_argument("--json", action="store_true", help="print the result as one JSON object")
    play.set_defaults(run=_cmd_play, parser=play)


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


def _cmd_play(args: argparse.Namespace) -> int:
    import trio

    from ..logs import configure
    from ..referee.runner import MatchConfig
    from ..referee.seat import TimeControl
    from ..server.local import default_bots, play_match

    variant = variant_of(args)
    bots = args.bot or default_bots(variant.seats)
    if len(bots) != variant.seats:
        args.parser.error(f"{variant.name} needs {variant.seats} --bot commands, got {len(bots)}")
    configure()
    config = MatchConfig(
        variant=variant,
        deals=args.deals or variant.seats,
        seed=args.seed,
        seat_names=tuple(f"seat{i}:{bot.split()[-1]}" for i, bot in enumerate(bots)),
        time_control=TimeControl(args.per_decision_ms, args.bank_ms, args.increment_ms),
        fault_policy=args.fault_policy,
    )
    try:
        played = trio.run(play_match, config, bots, args.replay_dir)
    except OSError as exc:
        raise CliError(str(exc)) from None
    runner = played.runner
    faults = [len(seat.faults) for seat in runner.seats]
    summary = {
        "match_id": runner.match_id,
        "variant": variant.name,
        "termination": runner.termination,
        "scores": list(runner.match.scores),
        "faults": faults,
        "replay": str(runner.replay_path) if runner.replay_path else None,
    }
    if args.json:
        print(dump(summary))
    else:
        print(f"{variant.name}: match {runner.match_id}, {runner.termination}")
        for seat, name in enumerate(runner.config.seat_names):
            print(f"  seat {seat}  {runner.match.scores[seat]:>6}  faults {faults[seat]}  {name}")
        print(f"replay: {summary['replay']}")
    return 0 if runner.replay_path else 1
