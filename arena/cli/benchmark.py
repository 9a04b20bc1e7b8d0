"""`arena ladder benchmark --bot CMD --variant V`: the frozen benchmark (registered by
arena.cli.ladder; docs/LADDER.md, "Frozen benchmark").

Exit status: 0 with the bot's number printed, 1 when the pack cannot be read or checked or a
match failed inside the referee (one line on stderr), 2 for a wrong command line.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from .common import CliError, output_dir, positive_int


def register(sub: Any) -> None:
    bench = sub.add_parser(
        "benchmark",
        help="score a bot on the frozen benchmark: a versioned pack of deals against frozen reference bots",
        description="Play the bot against the frozen reference opponents (the heuristic bot, the search bot "
        "at fixed iterations and seed, and the random bot with four seats) on the versioned pack of deals "
        "of the variant (its default options), in every rotation of the seats, and print its mean points "
        "per deal with a 95% interval over the pack's deal sets. Nothing depends on the time: the same "
        "deterministic bot gets the same number on any machine.",
    )
    bench.add_argument("--bot", required=True, metavar="CMD", help="an example bot's name or a bot command")
    bench.add_argument(
        "--variant", required=True, metavar="V", help="a variant of the pack, e.g. grosstarock"
    )
    bench.add_argument(
        "--deal-sets", type=positive_int, metavar="N", help="only the pack's first N deal sets (default: all)"
    )
    bench.add_argument("--concurrency", type=positive_int, default=2, metavar="K", help="matches at once")
    bench.add_argument("--replay-dir", type=Path, metavar="DIR", help="keep the matches' replays here")
    bench.add_argument("--json", action="store_true", help="print the result as one JSON object")
    bench.set_defaults(run=_cmd_benchmark, parser=bench)


def _cmd_benchmark(args: argparse.Namespace) -> int:
    from ..engine import ConfigError, find_variant
    from ..ladder.config import bot_from_text
    from ..ladder.frozen import PackError, published_line, run
    from ..ladder.player import ClusterError
    from ..logs import configure
    from ..progress import route_logs

    try:
        variant = find_variant(args.variant)
    except ConfigError as exc:
        args.parser.error(str(exc))
    if args.replay_dir is not None:
        output_dir(args.replay_dir, "--replay-dir")
    try:
        bot = bot_from_text(args.bot)
    except ValueError as exc:
        args.parser.error(str(exc))
    configure(logging.WARNING)
    route_logs("ladder")
    try:
        result = run(
            variant, bot, deal_sets=args.deal_sets, concurrency=args.concurrency, replay_dir=args.replay_dir
        )
    except (PackError, ClusterError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot run the benchmark: {exc}") from None
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    print(result.summary())
    try:
        print(published_line(variant.name, args.deal_sets))
    except PackError as exc:
        raise CliError(str(exc)) from None
    return 0
