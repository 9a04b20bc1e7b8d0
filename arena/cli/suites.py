"""Position suites on the command line: `arena replay analyze … --suite OUT` writes a seat's
costliest decisions to a suite file, `arena replay suite SUITE… --bot CMD` asks a bot every
position again (registered by arena.cli.replay).

`arena replay suite` exits 0 when every position was answered well (an action the search values
within --tolerance points of its best), 1 when one was not or a suite cannot be read, 2 for a
wrong command line: a bot author's CI runs it on the suites of the bot's past mistakes.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from .common import positive_int

SUITE_SIZE = 5  # costliest decisions exported per seat unless --suite-size says


def add_export_arguments(analyze: argparse.ArgumentParser) -> None:
    analyze.add_argument(
        "--suite",
        type=Path,
        metavar="OUT",
        help="also write the seat's costliest decisions to the position suite OUT (needs --seat)",
    )
    analyze.add_argument(
        "--suite-size",
        type=positive_int,
        default=SUITE_SIZE,
        metavar="K",
        help=f"how many of the seat's costliest decisions go to the suite (default {SUITE_SIZE})",
    )
    analyze.add_argument(
        "--append", action="store_true", help="add to the suite OUT if it exists instead of replacing it"
    )


def check_export_arguments(args: argparse.Namespace) -> None:
    if args.suite is not None and args.seat is None:
        args.parser.error("--suite needs --seat: a suite holds one seat's decisions")


def export(args: argparse.Namespace, replay: Any, analysis: Any) -> int:
    """Write the suite of `args.suite`; 0, or 1 after one line on stderr."""
    from ..replay.suite import SuiteError, costliest_positions, write_suite

    names = list(replay.header.get("seats", []))
    bot = str(names[args.seat]) if args.seat < len(names) else ""
    positions = costliest_positions(replay, analysis, args.seat, args.suite_size, bot)
    try:
        total = write_suite(args.suite, positions, append=args.append)
    except (OSError, SuiteError) as exc:
        message = getattr(exc, "strerror", None) or exc
        print(f"arena replay analyze: cannot write the suite {args.suite}: {message}", file=sys.stderr)
        return 1
    print(f"{args.suite}: {len(positions)} positions of seat {args.seat} ({total} in the suite)")
    return 0


def register(tools: Any) -> None:
    suite = tools.add_parser(
        "suite",
        help="ask a bot again every position of position suites; exit 1 unless it answers all well",
        description="Rebuild every position of the suites (written by arena replay analyze --suite), launch "
        "the bot command once per variant and seat, ask it each position over the real protocol, and say "
        "which it now answers well: an action the search valued within --tolerance points of its best. "
        "Exit 0 when every position is answered well, 1 otherwise (or when a suite cannot be read).",
    )
    suite.add_argument("files", type=Path, nargs="+", metavar="SUITE", help="position suite file")
    suite.add_argument("--bot", required=True, metavar="CMD", help="the bot command, e.g. 'python my_bot.py'")
    suite.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        metavar="P",
        help="points below the search's best value that still count as good (default 0)",
    )
    suite.add_argument(
        "--per-decision-ms",
        type=positive_int,
        metavar="MS",
        help="the bot's clock per position (default: none)",
    )
    suite.add_argument("--json", action="store_true", help="one JSON object per position")
    suite.set_defaults(run=_cmd_suite, parser=suite)


def _cmd_suite(args: argparse.Namespace) -> int:
    import logging

    from ..conformance.ask import ask_suite
    from ..engine import Action
    from ..logs import configure
    from ..replay.suite import SuiteError, read_suite
    from ..replay.timeline import action_text

    configure(logging.WARNING)
    if args.tolerance < 0:
        args.parser.error("--tolerance: a number of points from 0")
    try:
        shlex.split(args.bot)
    except ValueError as exc:
        args.parser.error(f"--bot: {exc}")
    positions = []
    for path in args.files:
        try:
            positions.extend(read_suite(path))
        except SuiteError as exc:
            print(f"arena replay suite: {exc}", file=sys.stderr)
            return 1
    try:
        answers = ask_suite(
            positions, args.bot, tolerance=args.tolerance, per_decision_ms=args.per_decision_ms
        )
    except OSError as exc:
        print(f"arena replay suite: cannot run the bot {args.bot!r}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for answer in answers:
        if args.json:
            print(json.dumps(answer.to_dict(), ensure_ascii=False))
            continue
        p = answer.position
        if answer.outcome == "answered":
            said = f"{action_text(Action.parse(answer.action))} (loss {answer.loss:.2f})"
        else:
            said = f"no answer: {answer.outcome}" + (f" ({answer.detail})" if answer.detail else "")
        verdict = "good" if answer.good else "BAD "
        recorded = f"{action_text(Action.parse(p.played))} (loss {p.loss:.2f})"
        print(f"{verdict} {p.id} seat {p.seat}: now {said}; recorded {recorded}")
    good = sum(a.good for a in answers)
    print(f"{good} of {len(answers)} positions answered well (tolerance {args.tolerance:g} points)")
    return 0 if good == len(answers) else 1
