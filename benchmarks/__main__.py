"""`python -m benchmarks TARGET ...`: every benchmark's command line, run from the repository's root.

The experiments live in the modules beside this one; they drive the product through its public API
and are not installed with it. `python -m benchmarks --help` lists the targets.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.cli.common import (
    CliError,
    add_variant_arguments,
    cores,
    positive_int,
    seconds,
    variant_list,
    variant_of,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Measure the throughput of Grosstarock Arena's engine, referee, ladders and arena "
        "(benchmarks/README.md). Run from the repository's root.",
    )
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    engine = targets.add_parser(
        "engine",
        help="random legal play through the engine API on one core, against OpenSpiel's hearts",
        description="Random legal play through the public engine API, in a tight loop on one core, in "
        "slices alternating with OpenSpiel's C++ hearts played at random through pyspiel (when open_spiel "
        "is installed); prints which engine build ran (compiled or pure).",
    )
    add_variant_arguments(engine, required=False, help="variant id (default: every variant)")
    engine.add_argument(
        "--seconds", required=True, type=seconds, metavar="S", help="how long each variant runs (and hearts)"
    )
    engine.add_argument("--seed", type=int, default=0, metavar="S", help="seed of decks and play")
    engine.add_argument("--no-anchor", action="store_true", help="leave OpenSpiel's hearts out")
    engine.add_argument("--json", action="store_true", help="print the measurement as JSON")
    engine.set_defaults(run=_cmd_bench_engine, parser=engine)
    server = targets.add_parser(
        "server",
        help="referee throughput against plain grpc.aio, and memory per idle bot",
        description="K concurrent matches with trivial bots in another process over real gRPC, against "
        "plain grpc.aio ping-pong with as many streams, the same message sizes and as many round trips "
        "in flight (rings of one match's streams taking turns; also unpaced, every stream at once); then "
        "the server's resident memory per connected idle bot.",
    )
    server.add_argument("--matches", type=positive_int, default=16, metavar="K")
    server.add_argument("--seconds", type=seconds, default=5.0, metavar="S")
    server.add_argument("--idle-bots", type=int, default=1000, metavar="N", help="0 skips the memory test")
    server.add_argument("--variant", default="grosstarock", metavar="V")
    server.add_argument("--json", action="store_true")
    server.set_defaults(run=_cmd_bench_server, parser=server)

    bench = targets.add_parser(
        "ladder",
        help="ladder throughput with the example bots, against `python -m benchmarks server`",
        description="Matches per minute of a ladder of three example bots (heuristic, random, random-2), "
        "and ladders' decisions per second in the steady state against `python -m benchmarks server` at "
        "the same concurrency (with the example bots, and with bots as quick as the server bench's); then "
        "the example ladder's deals per second with per-match processes, persistent processes (with one "
        "and with two referee processes), and on a local Ray (the [ray] extra) with 1 and 2 workers.",
    )
    bench.add_argument("--concurrency", type=positive_int, default=4, metavar="K")
    bench.add_argument("--deal-sets", type=positive_int, default=2, metavar="N")
    bench.add_argument("--deals", type=positive_int, default=3, metavar="N", help="deals per match")
    bench.add_argument(
        "--long-deals",
        type=positive_int,
        default=30,
        metavar="N",
        help="deals per match in the steady state",
    )
    bench.add_argument(
        "--seconds", type=seconds, default=5.0, metavar="S", help="of each steady-state window"
    )
    bench.add_argument(
        "--rounds",
        type=positive_int,
        default=1,
        metavar="R",
        help="play the ways of running the example ladder R times, alternating their order; medians",
    )
    bench.add_argument(
        "--inprocess-ray",
        action="store_true",
        help="only the example ladder in-process on a local Ray (2 workers) against 2 referee processes",
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_ladder, parser=bench)

    bench = targets.add_parser(
        "inprocess",
        help="ladders with in-process bots against persistent gRPC bots and the engine's random play",
        description="The example ladder's deals per second with in-process bots (one and two referee "
        "processes) against persistent bot processes over gRPC, alternating; in-process random bots on one "
        "referee against the engine's random play; where an in-process deal's time goes (cProfile).",
    )
    bench.add_argument("--deal-sets", type=positive_int, default=4, metavar="N", help="per ladder (4)")
    bench.add_argument("--deals", type=positive_int, default=3, metavar="N", help="per match (default 3)")
    bench.add_argument("--seconds", type=_window, default=3.0, metavar="S", help="of engine play (default 3)")
    bench.add_argument(
        "--profile-deals", type=positive_int, default=30, metavar="N", help="deals profiled (default 30)"
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_inprocess, parser=bench)

    bench = targets.add_parser(
        "instructions",
        help="instructions per deal (valgrind's callgrind): engine, bare loop, in-process match and ladder",
        description="Instructions per deal, counted by callgrind in a process of its own for each: the "
        "engine's random play, the bare loop, a MatchRunner of three in-process random bots and their "
        "ladder; and each to the engine's. Unlike a rate, a count does not drift with a shared machine's "
        "load. Needs valgrind.",
    )
    bench.add_argument("--deals", type=positive_int, default=40, metavar="N", help="per workload (40)")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_instructions, parser=bench)

    bench = targets.add_parser(
        "replay",
        help="`arena replay verify` against `python -m benchmarks engine`, in actions per second",
        description="Verify replay logs in a loop and play random deals through the engine for as long, "
        "in alternating slices, and print both rates in actions per second.",
    )
    bench.add_argument(
        "files",
        type=Path,
        nargs="*",
        metavar="FILE",
        help="replay logs (default: the samples in replays/samples)",
    )
    bench.add_argument("--seconds", type=_window, default=3.0, metavar="S", help="per side (default 3)")
    bench.add_argument(
        "--jobs", type=positive_int, default=cores(), metavar="N", help="processes for the all-cores rate"
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_replay, parser=bench)

    bench = targets.add_parser(
        "arena",
        help="load test of the standing arena: many lobby bots playing at once on loopback",
        description="Register N bots, start `arena serve`, connect every bot to the lobby and let them "
        "play for S seconds: matches per minute, decisions per second, the decision round trip's "
        "overhead, the server's memory, lost results and server errors (see docs/ARENA.md).",
    )
    bench.add_argument("--bots", type=positive_int, default=200, metavar="N")
    bench.add_argument("--seconds", type=positive_int, default=60, metavar="S", help="measured window")
    bench.add_argument("--drivers", type=positive_int, default=4, metavar="K", help="bot processes")
    bench.add_argument("--variants", type=variant_list, default=("grosstarock",), metavar="V,V")
    bench.add_argument("--deals", type=positive_int, default=1, metavar="N", help="dealer turns per match")
    bench.add_argument("--max-matches", type=positive_int, default=1, metavar="N", help="at once per bot")
    bench.add_argument(
        "--servers",
        type=positive_int,
        metavar="N",
        help="instead: runs with 1, 2, … N servers sharing one throwaway PostgreSQL (Debian's "
        "postgresql): matches/min, decisions/s, each server's CPU and the database's cost per match",
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_arena, parser=bench)

    bench = targets.add_parser(
        "research",
        help="the research extra's environment and OpenSpiel game against the engine, and OpenSpiel's hearts",
        description="Random play in alternating slices: the engine's own loop, the PettingZoo environment "
        "(observation and mask at every decision), the OpenSpiel game, and OpenSpiel's C++ hearts as an "
        "anchor; steps per second and ratios to the engine. Needs the rl extra (pip install -e '.[rl]').",
    )
    add_variant_arguments(bench)
    bench.add_argument("--seconds", type=seconds, default=5.0, metavar="S", help="per loop")
    bench.add_argument("--seed", type=int, default=0, metavar="S")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_research, parser=bench)

    bench = targets.add_parser(
        "web",
        help="the referee's decisions/s with 0 and with N live web viewers, in one run",
        description="K matches of quick bots on a server with the web site (`arena serve --http`), "
        "measured in alternating windows without and with N live-table viewers connected: the "
        "referee's decisions per second on each side, their ratio, and the memory per viewer.",
    )
    bench.add_argument("--matches", type=positive_int, default=4, metavar="K")
    bench.add_argument("--viewers", type=positive_int, default=200, metavar="N")
    bench.add_argument("--seconds", type=_window, default=10.0, metavar="S", help="per window")
    bench.add_argument("--rounds", type=positive_int, default=1, metavar="R", help="times 0, N, N, 0")
    bench.add_argument(
        "--frame",
        type=_window,
        default=None,
        metavar="S",
        help="the least seconds between two updates to a viewer",
    )
    bench.add_argument(
        "--updates-per-s",
        type=_budget,
        default=None,
        metavar="U",
        help="the site's budget of live updates a second, all viewers together (beyond it frames grow)",
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_web, parser=bench)

    bench = targets.add_parser(
        "bot",
        help="the search bot's samples, copies, rollouts and decisions per second, on one core",
        description="The search layer (arena.search) on decisions of seeded random deals, each loop for "
        "about S seconds on one core: sampled deals per second, deal copies (replays) per second, "
        "rollouts per second (copy, play out, score), and decisions per second at a think budget with "
        "the samples each completed; prints which engine build ran.",
    )
    add_variant_arguments(bench, required=False, help="variant id (default: every variant)")
    bench.add_argument("--seconds", type=seconds, default=3.0, metavar="S", help="per loop")
    bench.add_argument("--think-ms", type=float, default=200.0, metavar="MS", help="budget of a decision")
    bench.add_argument("--seed", type=int, default=0, metavar="S")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_bot, parser=bench)

    bench = targets.add_parser(
        "strength",
        help="bot A's points per deal over bot B's in finished duplicate ladders, with 95%% intervals",
        description="For each ladder database (e.g. of ladders/strength*.toml): the deals, every bot's "
        "points per deal, and A's points per deal minus B's with a Student-t 95% interval over the "
        "complete deal sets; with --logs naming the ladder's bot logs (its replay directory's bot-logs), "
        "the search bot's time per decision.",
    )
    bench.add_argument("db", nargs="+", type=Path, metavar="DB")
    bench.add_argument("-a", default="search", metavar="A", help="default: search")
    bench.add_argument("-b", default="heuristic", metavar="B", help="default: heuristic")
    bench.add_argument("--logs", type=Path, action="append", default=[], metavar="DIR", help="once per DB")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_strength, parser=bench)

    bench = targets.add_parser(
        "luck",
        help="luck-adjusted scores (arena.ladder.luck): A/A calibration and the variance saved on ladders",
        description="A/A calibration of plain and luck-adjusted scores over simulated ladders of identical "
        "bots, then, for real ladders (--db/--replay-dir, or --play DIR to play them), the per-deal-set "
        "variance of A minus B with and without the adjustment and the deal sets needed at 95%% "
        "(benchmarks/luck.py).",
    )
    bench.add_argument("--variant", dest="variants", action="append", metavar="V", help="default: four")
    bench.add_argument("--ladders", type=positive_int, default=200, metavar="N", help="A/A ladders per row")
    bench.add_argument("--deal-sets", type=positive_int, default=20, metavar="N", help="per A/A ladder")
    bench.add_argument("--seating", dest="seatings", action="append", choices=["duplicate", "single"])
    bench.add_argument("--policy", choices=["greedy", "random"], default="greedy", help="the A/A bots")
    bench.add_argument("--db", type=Path, action="append", default=[], metavar="DB", help="a ladder database")
    bench.add_argument("--replay-dir", type=Path, action="append", default=[], metavar="DIR", help="per --db")
    bench.add_argument("--play", type=Path, metavar="DIR", help="play a ladder per variant here")
    bench.add_argument("--play-deal-sets", type=positive_int, default=8, metavar="N")
    bench.add_argument("--iterations", type=positive_int, default=5, metavar="N", help="the search bot's")
    bench.add_argument("--seed", type=int, default=34, metavar="S", help="the played ladders' seed")
    bench.add_argument("-a", default="search", metavar="A")
    bench.add_argument("-b", default="heuristic", metavar="B")
    bench.set_defaults(run=_cmd_bench_luck, parser=bench)

    bench = targets.add_parser(
        "decide",
        help="the adaptive ladder against the fixed schedule: deals to decide search > heuristic > random",
        description="Plays a fixed ladder and an adaptive one ([decide]) of the search, heuristic and random "
        "bots on the same deal sets, and prints the deals each played and when each way of judging the "
        "fixed ladder separates both pairs (benchmarks/decide.py).",
    )
    bench.add_argument("--dir", type=Path, required=True, metavar="DIR", help="the ladders (reused if there)")
    bench.add_argument("--deal-sets", type=positive_int, default=32, metavar="N", help="the fixed ladder's")
    bench.add_argument("--seed", type=int, default=18, metavar="S")
    bench.add_argument("--iterations", type=positive_int, default=5, metavar="N", help="the search bot's")
    bench.add_argument("--confidence", type=float, default=0.95, metavar="P")
    bench.add_argument(
        "--effect", type=float, default=0.3, metavar="E", help="in sd of a deal set's observation"
    )
    bench.add_argument("--min-deal-sets", type=positive_int, default=6, metavar="N")
    bench.add_argument(
        "--calibrate", type=positive_int, metavar="RUNS", help="simulate the error rates from DIR"
    )
    bench.set_defaults(run=_cmd_bench_decide, parser=bench)

    bench = targets.add_parser(
        "sandbox",
        help="bots in the sandbox against the same bots outside it: decisions per second, start time",
        description="Alternating rounds of K matches of the example random bot, every bot in a sandbox "
        "(Unix socket, CPU clocks) or a plain process (TCP): decisions per second and their ratio, "
        "the time from launch to the match's start, and a bare sandbox's start and stop "
        "(benchmarks/sandbox.py). Needs bwrap and cgroups (docs/SANDBOX.md).",
    )
    bench.add_argument("--rounds", type=positive_int, default=3, metavar="N", help="per side (default 3)")
    bench.add_argument("--matches", type=positive_int, default=2, metavar="K", help="at once (default 2)")
    bench.add_argument("--deals", type=positive_int, default=6, metavar="N", help="per match (default 6)")
    bench.add_argument("--bare", type=positive_int, default=20, metavar="N", help="bare sandboxes (20)")
    bench.add_argument(
        "--cpus",
        type=lambda text: None if text == "none" else float(text),
        default=1.0,
        metavar="C|none",
        help="the sandboxes' CPU quota in cores, or none (default 1)",
    )
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=_cmd_bench_sandbox, parser=bench)
    return parser


def _cmd_bench_sandbox(args: argparse.Namespace) -> int:
    from arena.logs import configure
    from arena.sandbox import unavailable

    from .common import report
    from .sandbox import bench_sandbox

    why = unavailable()
    if why is not None:
        raise CliError(f"sandboxes cannot run here: {why}")
    configure(logging.WARNING)  # the numbers are the output
    report(bench_sandbox(args.rounds, args.matches, args.deals, args.bare, args.cpus), args.json)
    return 0


def _cmd_bench_decide(args: argparse.Namespace) -> int:
    from arena.ladder.decide import Decide

    from .decide import run

    decide = Decide(None, args.confidence, args.effect, args.min_deal_sets)
    if args.calibrate:
        from .sprt_calibration import calibrate

        print(json.dumps(calibrate(args.dir, args.calibrate, decide.test()), indent=1))
        return 0
    print(json.dumps(run(args.dir, args.deal_sets, args.seed, args.iterations, decide), indent=1))
    return 0


def _cmd_bench_luck(args: argparse.Namespace) -> int:
    from .luck import VARIANTS, run

    if len(args.db) != len(args.replay_dir):
        args.parser.error("give --replay-dir once per --db")
    args.variants = args.variants or list(VARIANTS)
    args.seatings = args.seatings or ["duplicate", "single"]
    print(json.dumps(run(args), indent=1))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one benchmark: 0 once it printed its figures, 1 with one line on stderr for a bad input
    or a benchmark that could not run, 2 for a wrong command line, 130 when interrupted."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except CliError as exc:
        print(f"python -m benchmarks {args.target}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return status


def _cmd_bench_engine(args: argparse.Namespace) -> int:
    from arena.engine import VARIANT_NAMES, find_variant

    from .common import report
    from .engine import ANCHOR, bench_engine, engine_report

    if args.variant is None and args.option:
        args.parser.error("--option needs --variant")
    variants = [variant_of(args)] if args.variant else [find_variant(name) for name in VARIANT_NAMES]
    benches = [bench_engine(v, args.seconds, seed=args.seed, anchor=not args.no_anchor) for v in variants]
    measured = engine_report(benches)
    if measured["anchor"] is None:
        anchor = (
            "without an anchor (--no-anchor)"
            if args.no_anchor
            else ("open_spiel is not installed (pip install open-spiel): no hearts anchor")
        )
    else:
        anchor = f"alternating with {measured['anchor']}"
    title = f"engine bench: {measured['build']} build, {args.seconds:g} s per variant, {anchor}"
    header = f"{'variant':<40}{'deals':>8}{'actions/s':>12}"
    lines = [header if measured["anchor"] is None else f"{header}{f'{ANCHOR}/s':>12}{'ratio':>8}"]
    for row in measured["variants"]:
        options = " ".join(f"{k}={v}" for k, v in row["options"].items() if v != _default(row["variant"], k))
        label = f"{row['variant']} {options}".strip()
        line = f"{label:<40}{row['deals']:>8}{row['actions_per_s']:>12,.0f}"
        hearts = row.get(f"{ANCHOR}_actions_per_s")
        if hearts is not None:
            line += f"{hearts:>12,.0f}{row[f'ratio_to_{ANCHOR}']:>8.2f}"
        lines.append(line)
    report(measured, args.json, title, lines=lines)
    return 0


def _cmd_bench_bot(args: argparse.Namespace) -> int:
    from arena.engine import VARIANT_NAMES, find_variant

    from .bot import bench_bot, bot_report
    from .common import report

    if args.variant is None and args.option:
        args.parser.error("--option needs --variant")
    variants = [variant_of(args)] if args.variant else [find_variant(name) for name in VARIANT_NAMES]
    measured = bot_report([bench_bot(v, args.seconds, args.think_ms, seed=args.seed) for v in variants])
    title = (
        f"search bench: {measured['build']} build, {args.seconds:g} s per loop, "
        f"decisions at {args.think_ms:g} ms"
    )
    columns = [("samples/s", 11), ("copies/s", 10), ("rollouts/s", 12), ("decisions/s", 13)]
    columns.append(("samples/dec", 13))
    lines = [f"{'variant':<14}" + "".join(f"{name:>{width}}" for name, width in columns)]
    for row in measured["variants"]:
        lines.append(
            f"{row['variant']:<14}{row['samples_per_s']:>11,.0f}{row['copies_per_s']:>10,.0f}"
            f"{row['rollouts_per_s']:>12,.0f}{row['decisions_per_s']:>13.2f}{row['samples_per_decision']:>13.1f}"
        )
    report(measured, args.json, title, lines=lines)
    return 0


def _cmd_bench_strength(args: argparse.Namespace) -> int:
    from arena.ladder.store import StoreError

    from .strength import strength

    if args.logs and len(args.logs) != len(args.db):
        args.parser.error("give --logs once per DB, or not at all")
    rows = []
    for i, db in enumerate(args.db):
        try:
            rows.append(strength(db, args.a, args.b, args.logs[i] if args.logs else None))
        except StoreError as error:
            raise CliError(str(error)) from None
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], separators=(",", ":")))
        return 0
    print(
        f"| variant | deal sets | deals | {args.a} | {args.b} | others | {args.a} − {args.b} (95% CI) "
        "| ms per decision (mean, max) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        others = ", ".join(f"{bot} {p:+.1f}" for bot, p in r.points.items() if bot not in (r.a, r.b))
        time = f"{r.ms_mean:.0f}, {r.ms_max:.0f}" if r.decisions else "–"
        print(
            f"| {r.variant} | {r.deal_sets} | {r.deals} | {r.points.get(r.a, 0.0):+.1f} | "
            f"{r.points.get(r.b, 0.0):+.1f} | {others} | {r.diff:+.1f} ± {r.ci95:.1f} | {time} |"
        )
    return 0


def _cmd_bench_research(args: argparse.Namespace) -> int:
    try:
        from .research import bench_research, report_text
    except ImportError as error:  # the rl extra is not installed
        raise CliError(f"needs the rl extra (pip install -e '.[rl]'): {error}") from None
    variant = variant_of(args)
    try:
        measured = bench_research(variant, args.seconds, seed=args.seed)
    except ImportError as error:
        raise CliError(f"needs the rl extra (pip install -e '.[rl]'): {error}") from None
    print(json.dumps(measured) if args.json else report_text(measured))
    return 0


def _cmd_bench_server(args: argparse.Namespace) -> int:
    from arena.logs import configure

    from .common import report
    from .server import bench_server

    configure(logging.WARNING)  # the numbers are the output
    variant_of(args)
    measured = bench_server(args.matches, args.seconds, args.idle_bots, args.variant)
    report(measured.to_dict(), args.json)
    return 0


def _cmd_bench_ladder(args: argparse.Namespace) -> int:
    from arena.logs import configure

    from .common import report
    from .ladder import bench_ladder

    configure(logging.WARNING)  # the numbers are the output
    if args.inprocess_ray:
        from .ladder import bench_inprocess_ray

        report(bench_inprocess_ray(args.concurrency, args.deal_sets, args.deals, args.rounds), args.json)
        return 0
    measured = bench_ladder(
        args.concurrency, args.deal_sets, args.deals, args.long_deals, args.seconds, args.rounds
    )
    report(measured.to_dict(), args.json)
    return 0


def _cmd_bench_inprocess(args: argparse.Namespace) -> int:
    from arena.logs import configure

    from .common import report
    from .inprocess import bench_inprocess

    configure(logging.WARNING)  # the numbers are the output
    report(bench_inprocess(args.deal_sets, args.deals, args.seconds, args.profile_deals), args.json)
    return 0


def _cmd_bench_instructions(args: argparse.Namespace) -> int:
    from .common import report
    from .instructions import ValgrindMissing, bench_instructions

    try:
        measured = bench_instructions(args.deals)
    except ValgrindMissing as exc:
        raise CliError(str(exc)) from None
    report(measured, args.json)
    return 0


def _cmd_bench_replay(args: argparse.Namespace) -> int:
    from arena.replay.read import ReplayReadError
    from arena.replay.samples import SAMPLES_DIR

    from .common import report
    from .replay import bench_replay

    files = args.files or sorted(SAMPLES_DIR.glob("*.jsonl"))
    if not files:
        args.parser.error(f"no replay logs given and none in {SAMPLES_DIR}")
    try:
        measured = bench_replay(files, args.seconds, args.jobs)
    except (ReplayReadError, ValueError) as exc:
        print(f"python -m benchmarks replay: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    title = f"replay bench: {len(files)} replay logs, {args.seconds:g} s per side, alternating"
    report(measured, args.json, title, lines=_replay_table(measured))
    return 0


def _replay_table(measured: dict[str, Any]) -> list[str]:
    """`bench_replay`'s rates as a table: a row per variant, then all variants on one core and in
    `jobs` processes."""

    def line(label: str, row: dict[str, Any]) -> str:
        return (
            f"{label:<36}{row['actions']:>9}{row['verify_actions_per_s']:>12,.0f}"
            f"{row['engine_actions_per_s']:>12,.0f}{row['ratio']:>8.2f}"
        )

    lines = [f"{'variant':<36}{'actions':>9}{'verify/s':>12}{'engine/s':>12}{'ratio':>8}"]
    for row in measured["variants"]:
        options = " ".join(f"{k}={v}" for k, v in row["options"].items() if v != _default(row["variant"], k))
        lines.append(line(f"{row['variant']} {options}".strip(), row))
    total, many = measured["total"], measured["processes"]
    lines.append(line("all, one core each", total))
    if many["jobs"] > 1:
        verify = {
            "verify_actions_per_s": many["verify_actions_per_s"],
            "ratio": many["ratio_to_engine_one_core"],
        }
        lines.append(line(f"all, verify in {many['jobs']} processes", {**total, **verify}))
    return lines


def _cmd_bench_arena(args: argparse.Namespace) -> int:
    from .arena import bench_arena, bench_arena_servers
    from .common import report

    if args.servers is not None:
        try:
            runs = bench_arena_servers(
                args.servers, args.bots, args.seconds, args.drivers, args.variants, args.deals,
                args.max_matches,
            )  # fmt: skip
        except (RuntimeError, ValueError, OSError) as exc:
            raise CliError(str(exc)) from None
        if args.json:
            print(json.dumps([run.to_dict() for run in runs], indent=2))
            return 0
        for run in runs:
            report(run.to_dict(), False, f"{run.servers} server(s) on one PostgreSQL")
        return 0
    try:
        measured = bench_arena(
            args.bots, args.seconds, args.drivers, args.variants, args.deals, args.max_matches
        )
    except (RuntimeError, ValueError) as exc:
        raise CliError(str(exc)) from None
    title = "decisions/s: answered by the bots in the window; round trip: think_ms of the replays"
    report(measured.to_dict(), args.json, title)
    return 0


def _cmd_bench_web(args: argparse.Namespace) -> int:
    from arena.logs import configure
    from arena.web.feed import FRAME_S, UPDATES_PER_S

    from .common import report
    from .web import bench_web

    configure(logging.WARNING)  # the numbers are the output (the server runs in this process)
    try:
        frame = FRAME_S if args.frame is None else args.frame
        budget = UPDATES_PER_S if args.updates_per_s is None else args.updates_per_s
        measured = bench_web(args.matches, args.viewers, args.seconds, args.rounds, frame, budget)
    except (RuntimeError, ValueError, OSError) as exc:
        raise CliError(str(exc)) from None
    report(measured.to_dict(), args.json, "the referee's decisions/s without (_0) and with (_n) live viewers")
    return 0


def _default(variant: str, option: str) -> str | None:
    from arena.engine import OPTIONS

    spec = OPTIONS.get(variant, {}).get(option)
    return spec.choices[0] if spec is not None else None


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of updates a second above 0, got {text!r}")
    return value


def _window(text: str) -> float:
    value = seconds(text)
    if not 0 < value < 3600:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


if __name__ == "__main__":
    sys.exit(main())
