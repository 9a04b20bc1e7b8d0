"""`arena play`: one match between bot processes on this machine."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import CliError, add_variant_arguments, dump, positive_int, variant_of


def register(commands: Any) -> None:
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
