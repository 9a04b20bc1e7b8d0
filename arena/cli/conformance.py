"""`arena conformance`: the command bot authors run against their bot before submitting it."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..conformance import DEFAULT_PER_DECISION_MS
from ..engine import VARIANT_NAMES
from .common import output_dir, positive_int


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "conformance",
        help="check a bot against scripted positions over the real protocol",
        description="Start a server on a free port and put the bot (one process per variant and seat, "
        "with ARENA_ADDRESS and ARENA_TOKEN in its environment) into scripted positions covering every "
        "decision kind and the edge cases of each variant; check that every answer is legal, on time and "
        "tagged with the right request id, that the bot dials again when its stream breaks and ignores "
        "what it does not know. Prints a pass/fail table; exit status 0 only when every case passes.",
    )
    parser.add_argument("--bot", required=True, metavar="CMD", help="the bot command, e.g. 'node my_bot.js'")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="V",
        help=f"only this variant, repeatable (default: all of {', '.join(VARIANT_NAMES)})",
    )
    parser.add_argument(
        "--per-decision-ms",
        type=positive_int,
        default=DEFAULT_PER_DECISION_MS,
        metavar="MS",
        help=f"time for each answer (default {DEFAULT_PER_DECISION_MS})",
    )
    parser.add_argument(
        "--log-dir",
        type=Path,
        metavar="DIR",
        help="keep the bot's output here (default: kept only on failure)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(run=_cmd_conformance, parser=parser)


def _cmd_conformance(args: argparse.Namespace) -> int:
    # The server's modules load only when the command runs, so other `arena` commands start fast.
    import trio

    from ..conformance.cases import cases_for
    from ..conformance.kit import run_cases, table
    from ..logs import configure
    from ..referee.seat import TimeControl

    parser: argparse.ArgumentParser = args.parser
    unknown = [v for v in args.variant if v not in VARIANT_NAMES]
    if unknown:
        parser.error(f"unknown variant {', '.join(map(repr, unknown))} (known: {', '.join(VARIANT_NAMES)})")
    if not args.bot.strip():
        parser.error("--bot needs a command")
    variants = list(dict.fromkeys(args.variant)) or list(VARIANT_NAMES)
    configure(logging.WARNING)  # the table is the output; the server's own lines would bury it
    try:
        cases = cases_for(variants)
    except LookupError as exc:  # a spec no deal reaches: the kit itself needs fixing for this engine
        from .common import CliError

        raise CliError(f"cannot build the cases: {exc}") from None
    keep = args.log_dir is not None
    if keep:
        output_dir(args.log_dir, "--log-dir")
    log_dir: Path = args.log_dir if keep else Path(tempfile.mkdtemp(prefix="arena-conformance-"))
    time_control = TimeControl(per_decision_ms=args.per_decision_ms, bank_ms=0, increment_ms=0)
    results = trio.run(lambda: run_cases(args.bot, cases, time_control=time_control, log_dir=log_dir))
    failed = sum(not r.passed for r in results)
    if failed:
        keep = True
    if args.json:
        out = {
            "bot": args.bot,
            "cases": [r.to_dict() for r in results],
            "passed": len(results) - failed,
            "failed": failed,
            "log_dir": str(log_dir) if keep else None,
        }
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"arena conformance: {args.bot}")
        print(table(results))
        if keep:
            print(f"bot output: {log_dir}")
    if not keep:
        shutil.rmtree(log_dir, ignore_errors=True)
    sys.stdout.flush()
    return 1 if failed else 0
