"""`arena ladder run|standings|report|ab`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, TextIO

from . import benchmark
from .common import (
    CliError,
    add_variant_arguments,
    address_problem,
    input_kind,
    milliseconds,
    output_dir,
    output_file,
    positive_int,
)

# The ladder's modules are imported by its commands only: `arena` starts for every command,
# and grpc and trio take a while to import.

PROBABILITY_HELP = "a probability strictly between 0 and 0.5"


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"expected {PROBABILITY_HELP}, got {text!r}")
    return value


def _effect(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 5:
        raise argparse.ArgumentTypeError(f"expected an effect size above 0 and at most 5, got {text!r}")
    return value


ALL_PAGES = -1  # `--replay-pages all`


def _ray_address(text: str) -> str:
    """`--ray`'s ADDRESS: HOST:PORT of the head (ray://HOST:PORT for Ray Client), or auto; empty
    (`--ray` alone: argparse passes the empty const through this too) for a local Ray."""
    if text in ("", "auto"):
        return text
    problem = address_problem(text.removeprefix("ray://"), unix=False)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}; expected HOST:PORT of `ray start --head`")
    return text


def _replay_pages(text: str) -> int:
    """`--replay-pages`: a number of 0 or more, or `all` (ALL_PAGES)."""
    if text == "all":
        return ALL_PAGES
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'all', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of 0 or more, got {value}")
    return value


def register(commands: Any) -> None:
    ladder = commands.add_parser(
        "ladder",
        help="offline ladders: many matches, duplicate seating, ratings, standings",
        description="Offline ladders between bot processes (see docs/LADDER.md).",
    )
    sub = ladder.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="play a ladder file's matches (resumes where a previous run stopped)",
        description="Play every match of LADDER.toml not yet in its database, recording each as it "
        "ends. Stopped at any moment and started again, it continues where it stopped.",
    )
    run.add_argument("ladder", type=Path, metavar="LADDER.toml", help="the ladder file (docs/LADDER.md)")
    run.add_argument("--db", type=Path, metavar="DB", help="database (default: the ladder file's `database`)")
    run.add_argument(
        "--concurrency", type=positive_int, metavar="K", help="matches at once (overrides the file)"
    )
    run.add_argument(
        "--referees",
        type=positive_int,
        metavar="N",
        help="referee processes the matches are spread over (overrides the file; default one per core)",
    )
    run.add_argument("--max-matches", type=positive_int, metavar="N", help="stop after N more matches")
    run.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    run.add_argument("--verbose", action="store_true", help="also the referee's log lines")
    run.add_argument("--json", action="store_true", help="print the final standings as JSON")
    run.add_argument(
        "--store",
        metavar="PATH|URL",
        help="the arena store of the submitted versions bots name (overrides the file's `store`)",
    )
    run.add_argument(
        "--work-dir",
        type=Path,
        default=Path("arena-work"),
        help="where submitted versions' trees are unpacked (as `arena bot build --work-dir`)",
    )
    _ray_options(run)
    run.set_defaults(run=_cmd_run, parser=run)

    standings = sub.add_parser(
        "standings",
        help="print a ladder database's standings",
        description="Print the standings: ratings, points per deal with 95% CI, faults, crosstable.",
    )
    standings.add_argument("db", type=Path, metavar="DB", help="the ladder's database")
    standings.add_argument("--json", action="store_true", help="one JSON object")
    standings.add_argument(
        "--pair", nargs=2, metavar=("A", "B"), help="the pair to decide (default: every two adjacent ranks)"
    )
    standings.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="the test's error rate, 1 − confidence",
    )
    standings.add_argument(
        "--effect", type=_effect, default=0.3, help="in standard deviations of a deal set's observation"
    )
    standings.add_argument(
        "--min-deal-sets", type=positive_int, default=6, metavar="N", help="no verdict on fewer deal sets"
    )
    standings.set_defaults(run=_cmd_standings, parser=standings)

    report = sub.add_parser(
        "report",
        help="write an HTML report with plots",
        description="Write "
        "DIR/index.html: standings, crosstable, faults, ratings over matches, score "
        "distributions, the bots' Hello names and versions, and every match, each linking to its "
        "replay in the viewer (DIR/replays/<match_id>.html).",
    )
    report.add_argument("db", type=Path, metavar="DB", help="the ladder's database")
    report.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="the report's folder (made if missing)",
    )
    report.add_argument(
        "--replay-dir",
        type=Path,
        metavar="DIR",
        help="the ladder's replay logs (default: DB's name with -replays, beside it, as a ladder "
        "file's default replay_dir)",
    )
    report.add_argument(
        "--replay-pages",
        type=_replay_pages,
        default=None,
        metavar="N|all",
        help="write viewer pages for the last N matches and the last N with a fault, crash or "
        "forfeit (default 50; 0: none; all: every match)",
    )
    report.set_defaults(run=_cmd_report, parser=report)

    ab = sub.add_parser(
        "ab",
        help="is bot A stronger than bot B? a sequential test on duplicate deals",
        description="Play A and B in the same seats, on the same decks, against the same opponents, "
        "until a sequential test on the score difference (one observation per deal set) finds one "
        "stronger by the effect or the two closer than it, or --max-deal-sets is reached. A bot is "
        "an example bot name (heuristic, random, search) or a command.",
    )
    ab.add_argument("a", metavar="A", help="the bot under test: an example bot's name or a command")
    ab.add_argument("b", metavar="B", help="the bot it is compared with: an example bot's name or a command")
    ab.add_argument("--against", nargs="+", required=True, metavar="X", help="the opponents (seats − 1)")
    add_variant_arguments(ab, required=False, help="variant id (default grosstarock)")
    ab.set_defaults(variant="grosstarock")
    ab.add_argument("--deals", type=positive_int, metavar="N", help="deals per match (default: seats)")
    ab.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the first deal set's decks")
    ab.add_argument(
        "--concurrency", type=positive_int, default=2, metavar="K", help="matches at once (default 2)"
    )
    ab.add_argument(
        "--referees",
        type=positive_int,
        default=max(1, os.cpu_count() or 1),
        metavar="N",
        help="referee processes the matches are spread over (default: one per core)",
    )
    ab.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="P(declaring either stronger when they are equal), half each way (default 0.05)",
    )
    ab.add_argument(
        "--beta", type=_probability, default=0.05, help="P(missing a difference of the effect) (default 0.05)"
    )
    ab.add_argument(
        "--effect",
        type=_effect,
        default=0.3,
        metavar="D",
        help="the difference to detect, in standard deviations of a deal set's score difference",
    )
    ab.add_argument(
        "--min-deal-sets",
        type=positive_int,
        default=6,
        metavar="N",
        help="no verdict before N deal sets (default 6, at least 2)",
    )
    # The old per-deck count, refused by name: the observations are per deal set now.
    ab.add_argument("--min-deals", help=argparse.SUPPRESS)
    ab.add_argument(
        "--max-deal-sets",
        type=positive_int,
        default=100,
        metavar="N",
        help="stop undecided after N deal sets (default 100)",
    )
    ab.add_argument(
        "--per-decision-ms",
        type=positive_int,
        default=5_000,
        metavar="MS",
        help="time per decision (default 5000)",
    )
    ab.add_argument(
        "--bank-ms",
        type=milliseconds,
        default=30_000,
        metavar="MS",
        help="each seat's time bank (default 30000)",
    )
    ab.add_argument(
        "--replay-dir", type=Path, metavar="DIR", help="keep the replays here (default: discarded)"
    )
    ab.add_argument("--verbose", action="store_true", help="also the referee's log lines")
    ab.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ab.add_argument(
        "--processes",
        choices=("per-match", "persistent"),
        default="per-match",
        help="a new process per bot and match (default), or processes that play match after match",
    )
    _ray_options(ab)
    ab.set_defaults(run=_cmd_ab, parser=ab)
    benchmark.register(sub)


def _ray_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray",
        nargs="?",
        type=_ray_address,
        const="",
        default=None,
        metavar="ADDRESS",
        help="play the matches on a Ray cluster (the [ray] extra): at ADDRESS (host:port of `ray start "
        "--head`), or without one on a local Ray started on the loopback",
    )
    parser.add_argument(
        "--ray-workers",
        type=positive_int,
        metavar="N",
        help="Ray workers, each playing --concurrency matches at once (default: one per CPU of the cluster)",
    )


def _ray(args: argparse.Namespace) -> Any:
    """The --ray options, with Ray importable (else one line naming the extra), or None."""
    from ..ladder.cluster import import_ray
    from ..ladder.player import ClusterError
    from ..ladder.run import RayOptions

    if args.ray is None:
        if args.ray_workers:
            args.parser.error("--ray-workers needs --ray")
        return None
    try:
        import_ray()
    except ClusterError as exc:
        raise CliError(str(exc)) from None
    return RayOptions(address=args.ray or None, workers=args.ray_workers)


# --------------------------------------------------------------------------- run


def _cmd_run(args: argparse.Namespace) -> int:
    import trio

    from ..files import LADDER_DB, LADDER_FILE
    from ..ladder.config import LadderFileError, load_ladder
    from ..ladder.player import ClusterError
    from ..ladder.run import run_ladder
    from ..ladder.store import StoreError
    from ..logs import configure
    from ..progress import route_logs

    input_kind(args.ladder, LADDER_FILE)
    try:
        config = load_ladder(args.ladder)
    except LadderFileError as exc:
        raise CliError(str(exc)) from None
    database = args.db or config.database
    option = "--db" if args.db else "database"
    if database.exists():
        input_kind(database, LADDER_DB, option)
    output_file(database, option)
    output_dir(config.replay_dir, "replay_dir")
    if args.concurrency:
        config = dataclasses.replace(config, concurrency=args.concurrency)
    if args.referees:
        if args.referees > 1 and config.port:
            raise CliError(f"{config.path}: a fixed port is one referee server: --referees must be 1")
        config = dataclasses.replace(config, referees=args.referees)
    ray = _ray(args)
    versions = _submitted(args, config, ray is not None)
    configure(logging.INFO)
    route_logs(None if args.verbose else "ladder")
    try:
        summary = trio.run(
            lambda: run_ladder(
                config,
                database=args.db,
                bar=not args.no_progress,
                max_matches=args.max_matches,
                ray=ray,
                verbose=args.verbose,
                versions=versions,
            )
        )
    except (StoreError, ClusterError) as exc:
        raise CliError(str(exc)) from None
    except sqlite3.Error as exc:
        raise CliError(f"{database}: cannot write the database: {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot run the ladder: {exc}") from None
    _print_standings(args.db or config.database, args.json, sys.stdout, config.decide)
    if summary.interrupted:
        return 128 + (summary.stopped_by or 2)  # 130 after Ctrl-C, 143 after SIGTERM
    return 1 if summary.failed else 0


def _submitted(args: argparse.Namespace, config: Any, on_ray: bool) -> Any:
    """The submitted versions the ladder's bots name, looked up and unpacked (None: none named)."""
    named = [bot.version for bot in config.bots if bot.version]
    if not named:
        return None
    store = args.store or config.store
    if not store:
        raise CliError(f"{config.path}: bots name submitted versions: give store = PATH or --store")
    if on_ray or config.referees > 1:
        raise CliError(f"{config.path}: submitted versions play on one referee process, not on Ray")
    from ..submissions.ladder import LadderVersionError, LadderVersions

    try:
        return LadderVersions(store, args.work_dir, named)
    except (LadderVersionError, OSError) as exc:
        raise CliError(str(exc)) from None


# --------------------------------------------------------------------------- standings


def _cmd_standings(args: argparse.Namespace) -> int:
    from ..ladder.decide import Decide

    if args.min_deal_sets < 2:
        raise CliError("--min-deal-sets: the test needs at least two deal sets")
    pair = (args.pair[0], args.pair[1]) if args.pair else None
    decide = Decide(pair, 1 - args.alpha, args.effect, args.min_deal_sets)
    _print_standings(args.db, args.json, sys.stdout, decide)
    return 0


def _print_standings(db: Path, as_json: bool, out: TextIO, decide: Any = None) -> None:
    from ..files import LADDER_DB
    from ..ladder.stats import process_modes, standings
    from ..ladder.store import StoreError, connect

    input_kind(db, LADDER_DB)
    try:
        conn = connect(db, readonly=True)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM bots")}
        missing = [name for name in (decide.pair or ()) if name not in names] if decide else []
        if missing:
            raise CliError(f"--pair: no bot {missing[0]!r} in {db}")
        table = standings(conn, decide)
        modes = process_modes(conn)
    finally:
        conn.close()
    if as_json:
        print(json.dumps(table.to_dict(), ensure_ascii=False), file=out)
    else:
        out.write(format_standings(table, modes))


def _signed(value: float, digits: int = 1) -> str:
    return f"{value:+.{digits}f}"


def format_standings(table: Any, modes: dict[str, dict[str, int]] | None = None) -> str:
    """The standings as text; `modes` (how each bot ran, by matches) said after them when some
    bot did not run as a new process per match."""
    modes = modes or {}
    options = ", ".join(f"{k}={v}" for k, v in table.options.items())
    lines = [
        f"{table.name}: {table.variant}{f' ({options})' if options else ''}, "
        f"{table.matches_done}/{table.matches_planned} matches, {table.deals} deals",
        "",
    ]
    width = max([len(b.name) for b in table.bots] + [3])
    kinds = ("illegal", "timeout", "crash", "disconnect", "protocol")
    header = (
        f"{'rank':>4}  {'bot':<{width}}  {'rating':>7} {'mu':>6} {'sigma':>5}  {'matches':>7} {'deals':>6}"
        f"  {'points/deal (95% CI)':>20}  " + " ".join(f"{k:>{len(k)}}" for k in kinds) + "  crashed"
    )
    lines.append(header)
    for b in table.bots:
        ci = "" if math.isinf(b.ci95) else f" ± {b.ci95:.1f}"
        points = f"{_signed(b.points_per_deal)}{ci}" if b.deals else "–"
        faults = " ".join(f"{b.faults.get(k, 0):>{len(k)}}" for k in kinds)
        lines.append(
            f"{b.rank:>4}  {b.name:<{width}}  {b.rating:>7.2f} {b.mu:>6.2f} {b.sigma:>5.2f}  {b.matches:>7} "
            f"{b.deals:>6}  {points:>20}  {faults}  {b.crashes:>7}"
        )
    names = [b.name for b in table.bots]
    cell = max([len(n) for n in names] + [7])
    lines += ["", "crosstable: mean points per deal of the row's bot minus the column's, at the same table"]
    lines.append(" " * (width + 2) + " ".join(f"{n:>{cell}}" for n in names))
    for a in names:
        cells = []
        for b in names:
            entry = table.crosstable.get(a, {}).get(b)
            cells.append(f"{'·' if a == b or entry is None else _signed(entry[0]):>{cell}}")
        lines.append(f"{a:<{width}}  " + " ".join(cells))
    if table.pairs:
        lines += [
            "",
            'separated: the paired test over deal sets (docs/LADDER.md, "Ladders that stop when they know")',
        ]
        for p in table.pairs:
            ci = "" if p.ci95 is None else f" ± {p.ci95:.1f}"
            verdict = (
                f"{p.stronger} stronger"
                if p.stronger
                else "within the effect"
                if p.within_effect
                else "not separated"
            )
            lines.append(
                f"{p.higher} > {p.lower}: {verdict}; {p.deal_sets} deal sets, {_signed(p.diff_per_deal)}{ci} "
                f"points per deal, LLR {p.llr_higher:.2f} / {p.llr_lower:.2f} "
                f"(bounds {p.lower_bound:.2f}, {p.upper_bound:.2f})"
            )
    reported = [b for b in table.bots if b.hello is not None]
    if reported:
        lines += ["", "Hello: the name and version each bot's latest recorded Hello gave"]
        for b in reported:
            said = f"{b.hello.name or '(no name)'} {b.hello.version or '(no version)'}"
            if b.hello.changed:
                said += f"  (changed over the ladder: {', '.join(v or '(none)' for v in b.hello.versions)})"
            lines.append(f"{b.name:<{width}}  {said}")
    if any(set(ran) != {"per-match"} for ran in modes.values() if ran):  # the default goes unsaid
        lines += ["", "processes: matches by how each bot ran in them (run information, not a result)"]
        for b in table.bots:
            ran = ", ".join(f"{mode} {n}" for mode, n in sorted(modes.get(b.name, {}).items())) or "–"
            lines.append(f"{b.name:<{width}}  {ran}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- report


def _cmd_report(args: argparse.Namespace) -> int:
    from ..files import LADDER_DB
    from ..ladder.report import DEFAULT_REPLAY_PAGES, write_report
    from ..ladder.store import StoreError, connect

    input_kind(args.db, LADDER_DB)
    output_dir(args.output, "--output")
    try:
        conn = connect(args.db, readonly=True)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    replay_dir = args.replay_dir or args.db.parent / f"{args.db.stem}-replays"
    pages = {None: DEFAULT_REPLAY_PAGES, ALL_PAGES: None}.get(args.replay_pages, args.replay_pages)
    try:
        index = write_report(conn, args.output, replay_dir, pages)
    except OSError as exc:
        raise CliError(f"cannot write the report to {str(args.output)!r}: {exc.strerror or exc}") from None
    finally:
        conn.close()
    print(index)
    return 0


# --------------------------------------------------------------------------- ab


def _cmd_ab(args: argparse.Namespace) -> int:
    import trio

    from ..engine import ConfigError, find_variant
    from ..ladder.ab import ABConfig, run_ab
    from ..ladder.config import bot_from_text
    from ..ladder.player import ClusterError
    from ..logs import configure
    from ..progress import route_logs

    try:
        variant = find_variant(args.variant, dict(args.option))
    except ConfigError as exc:
        args.parser.error(str(exc))
    if args.replay_dir is not None:
        output_dir(args.replay_dir, "--replay-dir")
    if args.min_deals is not None:
        args.parser.error("--min-deals is now --min-deal-sets (one observation per deal set)")
    if args.min_deal_sets < 2:
        args.parser.error("--min-deal-sets: the test needs at least two deal sets")
    if len(args.against) != variant.seats - 1:
        args.parser.error(
            f"{variant.name} has {variant.seats} seats: give {variant.seats - 1} --against bots"
        )
    try:
        bots = [bot_from_text(text, processes=args.processes) for text in (args.a, args.b, *args.against)]
    except ValueError as exc:
        args.parser.error(str(exc))
    configure(logging.INFO)
    route_logs(None if args.verbose else "ladder")
    config = ABConfig(
        variant=variant,
        a=bots[0],
        b=bots[1],
        against=tuple(bots[2:]),
        deals=args.deals or variant.seats,
        seed=args.seed,
        concurrency=args.concurrency,
        referees=args.referees,
        alpha=args.alpha,
        beta=args.beta,
        effect=args.effect,
        min_deal_sets=args.min_deal_sets,
        max_deal_sets=args.max_deal_sets,
        per_decision_ms=args.per_decision_ms,
        bank_ms=args.bank_ms,
    )
    try:
        result = trio.run(run_ab, config, args.replay_dir, _ray(args))
    except ClusterError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot run the A/B test: {exc}") from None
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print(result.summary())
    return 128 + (result.stopped_by or 2) if result.interrupted else 0  # 130 (Ctrl-C) or 143 (SIGTERM)
