"""`arena replay verify|show|html|analyze|ask` (registered by arena.cli).

Exit status, as for every arena command: 0 when all holds, 1 for a replay that does not hold or
cannot be read (with what does hold still checked, shown or written), 2 for a wrong command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..replay.read import Replay, ReplayReadError
from ..replay.verify import verify_replay
from . import suites
from .common import cores, index, input_kind, output_file, positive_int

# `arena replay analyze`: the search's budget per decision unless --iterations or --think-ms says.
DEFAULT_ITERATIONS = 50


def register(commands: Any) -> None:
    replay = commands.add_parser(
        "replay",
        help="verify, show, draw or re-ask a match's replay log",
        description="Tools for the replay logs the referee writes (replays/FORMAT.md).",
    )
    tools = replay.add_subparsers(dest="tool", metavar="TOOL", required=True)

    verify = tools.add_parser(
        "verify",
        help="re-run every deal through the engine",
        description="Re-run every deal of each replay log through the engine: every action must be legal "
        "and every recorded result, score and fault substitute must match. Exit 0 when all holds; "
        "otherwise 1 with the first discrepancy (deal, step, seat, what was expected). A damaged or "
        "truncated file is checked up to the damage.",
    )
    verify.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="replay log (.jsonl or .jsonl.part)"
    )
    verify.add_argument("--json", action="store_true", help="one JSON object per file")
    verify.add_argument("--stats", action="store_true", help="also print the actions verified per second")
    verify.add_argument(
        "--jobs",
        type=positive_int,
        default=cores(),
        metavar="N",
        help=f"files checked at once, one process each (default: the cores here, {cores()})",
    )
    verify.set_defaults(run=_cmd_verify, parser=verify)

    show = tools.add_parser(
        "show",
        help="print a match trick by trick",
        description="Print the deals of a replay trick by trick: every hand, each decision with its think "
        "time and clock, faults, declarations, running card points and payments. With --seat only "
        "what that seat knew: its hand, the actions it was offered, its time.",
    )
    show.add_argument("file", type=Path, metavar="FILE", help="replay log (.jsonl or .jsonl.part)")
    show.add_argument("--deal", type=index, metavar="K", help="only deal K (from 0)")
    show.add_argument("--seat", type=index, metavar="N", help="only what seat N knew")
    show.add_argument(
        "--from",
        dest="start",
        type=index,
        default=0,
        metavar="STEP",
        help="start at decision STEP of each deal",
    )
    show.set_defaults(run=_cmd_show, parser=show)

    page = tools.add_parser(
        "html",
        help="write a self-contained page that steps through the match",
        description="Write one HTML file (no network needed) that steps through the match with the keyboard "
        "and buttons, with every hand or one seat's view.",
    )
    page.add_argument("file", type=Path, metavar="FILE", help="replay log (.jsonl or .jsonl.part)")
    page.add_argument(
        "-o", "--output", type=Path, required=True, metavar="OUT.html", help="the page to write"
    )
    page.add_argument(
        "--analysis",
        type=Path,
        metavar="FILE",
        help="the search's analysis to show (default: FILE's NAME.analysis.json beside it, if there is one)",
    )
    page.add_argument("--no-analysis", action="store_true", help="draw no analysis, even if there is one")
    page.set_defaults(run=_cmd_html, parser=page)

    analyze = tools.add_parser(
        "analyze",
        help="run the search at every recorded decision and write its opinion beside the replay",
        description="Run the search (arena.search) at every recorded decision of a seat, or of every seat, "
        "from that seat's view only, and write the estimated points of each legal action, the search's "
        "choice and the estimated loss of the action played to NAME.analysis.json beside the replay "
        "(replays/FORMAT.md). `arena replay html` then shows it and marks each seat's costliest decisions. "
        "One process per core; the same seed and iterations give the same file.",
    )
    analyze.add_argument("file", type=Path, metavar="FILE", help="replay log (.jsonl or .jsonl.part)")
    analyze.add_argument(
        "--seat", type=index, metavar="N", help="only seat N's decisions (default: every seat)"
    )
    budget = analyze.add_mutually_exclusive_group()
    budget.add_argument(
        "--iterations",
        type=positive_int,
        metavar="N",
        help=f"the search's budget per decision (default {DEFAULT_ITERATIONS}): deterministic",
    )
    budget.add_argument(
        "--think-ms",
        type=positive_int,
        metavar="MS",
        help="search each decision for MS milliseconds instead (the result depends on the machine)",
    )
    analyze.add_argument("--seed", type=int, default=0, metavar="S", help="the search's seed (default 0)")
    analyze.add_argument(
        "--jobs",
        type=positive_int,
        default=cores(),
        metavar="N",
        help=f"decisions searched at once, one process each (default: the cores here, {cores()})",
    )
    analyze.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT",
        help="the analysis file (default: NAME.analysis.json beside FILE)",
    )
    suites.add_export_arguments(analyze)
    analyze.set_defaults(run=_cmd_analyze, parser=analyze)

    ask = tools.add_parser(
        "ask",
        help="ask a bot again about a recorded decision",
        description="Rebuild the seat's view at decision STEP of deal K, launch the bot command (with "
        "ARENA_ADDRESS and ARENA_TOKEN, as arena play does), ask it over the real protocol with the time "
        "the seat had then (or no clock), and print its answer beside the recorded one. Exit 0 when "
        "the bot answered, 1 when it gave no legal answer.",
    )
    ask.add_argument("file", type=Path, metavar="FILE", help="replay log (.jsonl or .jsonl.part)")
    ask.add_argument("--deal", type=index, required=True, metavar="K", help="the deal (from 0)")
    ask.add_argument("--step", type=index, required=True, metavar="N", help="the decision's step in the deal")
    ask.add_argument("--bot", required=True, metavar="CMD", help="the bot command, e.g. 'python my_bot.py'")
    ask.add_argument("--no-clock", action="store_true", help="no time limit: wait for the bot")
    ask.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ask.set_defaults(run=_cmd_ask, parser=ask)
    suites.register(tools)


def _fail(args: argparse.Namespace, message: str) -> None:
    print(f"arena replay {args.tool}: {' '.join(message.split())}", file=sys.stderr)


def load(args: argparse.Namespace, path: Path) -> Replay | None:
    """The verified replay with its decisions, or None (after saying why) when nothing can be read."""
    try:
        replay = verify_replay(path, collect=True)
    except ReplayReadError as exc:
        _fail(args, str(exc))
        return None
    if replay.variant is None:  # the header itself is unusable
        _fail(args, f"{path}: {replay.problem}")
        return None
    return replay


def check_position(
    args: argparse.Namespace, replay: Replay, deal: int | None, seat: int | None, step: int | None
) -> None:
    """Exit 2 (argparse) when --deal, --seat or the step is not in this replay."""
    parser: argparse.ArgumentParser = args.parser
    if seat is not None and seat >= replay.seats:
        parser.error(f"--seat {seat}: the replay has seats 0–{replay.seats - 1}")
    indices = [d.index for d in replay.deals]
    if deal is not None and deal not in indices:
        known = f"deals 0–{indices[-1]}" if indices else "no deal"
        parser.error(f"--deal {deal}: the replay has {known}")
    if step is not None and step > 0:
        for log in replay.deals:
            if (deal is None or log.index == deal) and step > len(log.decisions):
                parser.error(f"--from {step}: deal {log.index} has decisions 0–{len(log.decisions) - 1}")


# --------------------------------------------------------------------------- verify


def _cmd_verify(args: argparse.Namespace) -> int:
    status = 0
    for verdict in _counted(verdicts(args.files, args.jobs), len(args.files)):
        if "read_error" in verdict:
            _fail(args, verdict["read_error"])
            status = 1
            continue
        what, summary, header = verdict.pop("_what"), verdict.pop("_summary"), verdict.pop("_header")
        if args.json:
            print(json.dumps(verdict, ensure_ascii=False))
        else:
            path, rate = verdict["file"], verdict["actions_per_s"]
            stats = f" · {rate:,.0f} actions/s" if args.stats and rate > 0 else ""
            if verdict["ok"]:
                print(f"{path}: ok · {what}{stats}")
            else:
                if header:
                    print(f"{path}: holds before the problem: {summary}{stats}")
                _fail(args, f"{path}: {verdict['problem']['text']}")
        if not verdict["ok"]:
            status = 1
    return status


def _counted(verdicts: Iterator[dict[str, Any]], files: int) -> Iterator[dict[str, Any]]:
    """With several files, on a terminal, a bar on stderr: files checked / total."""
    from ..progress import Bar

    with Bar("files", show=files > 1, transient=True).start(files) as bar:
        for verdict in verdicts:
            yield verdict
            bar.advance()


def verdicts(paths: list[Path], jobs: int) -> Iterator[dict[str, Any]]:
    """Each file's verdict, in order; with several files and jobs, checked in parallel."""
    if jobs <= 1 or len(paths) < 2:
        yield from map(check_file, paths)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start at once with the parent's imports; this command starts no thread.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=context) as pool:
        yield from pool.map(check_file, paths, chunksize=max(1, len(paths) // (4 * jobs)))


def check_file(path: Path) -> dict[str, Any]:
    """One file's verdict as plain data (it crosses from a worker process when files go in parallel)."""
    try:
        start = time.perf_counter()
        replay = verify_replay(path)
        seconds = time.perf_counter() - start
    except ReplayReadError as exc:
        return {"file": str(path), "read_error": str(exc)}
    rate = replay.actions / seconds if seconds > 0 else 0.0
    verdict = _verify_json(path, replay, seconds, rate)
    verdict.update(_what=_what(replay), _summary=replay.summary(), _header=replay.variant is not None)
    return verdict


def _what(replay: Replay) -> str:
    variant = replay.variant.name if replay.variant is not None else "?"
    text = f"{variant} · {replay.summary()}"
    if replay.match_end is not None:
        text += f" · match {replay.match_end.get('termination')}"
    elif replay.partial_file:
        text += " · the match has not ended (a .part log)"
        if replay.cut_tail:
            text += "; its last line was cut off and is not read"
    return text


def _verify_json(path: Path, replay: Replay, seconds: float, rate: float) -> dict[str, Any]:
    problem = replay.problem
    return {
        "file": str(path),
        "ok": replay.ok,
        "variant": replay.variant.name if replay.variant is not None else None,
        "deals": replay.deals_done,
        "actions": replay.actions,
        "complete": replay.complete,
        "cut_tail": replay.cut_tail,
        "problem": None
        if problem is None
        else {
            "kind": problem.kind,
            "message": problem.message,
            "line": problem.line,
            "deal": problem.deal,
            "step": problem.step,
            "seat": problem.seat,
            "expected": problem.expected,
            "text": str(problem),
        },
        "seconds": round(seconds, 6),
        "actions_per_s": round(rate, 1),
    }


# --------------------------------------------------------------------------- show and html


def _cmd_show(args: argparse.Namespace) -> int:
    from ..replay.show import render

    replay = load(args, args.file)
    if replay is None:
        return 1
    check_position(args, replay, args.deal, args.seat, args.start)
    render(replay, sys.stdout, deal=args.deal, seat=args.seat, start=args.start)
    if replay.problem is not None:
        sys.stdout.flush()
        _fail(args, f"{args.file}: shown up to the problem: {replay.problem}")
        return 1
    return 0


def _cmd_html(args: argparse.Namespace) -> int:
    from ..files import ANALYSIS
    from ..replay.analysis import AnalysisError, analysis_path, check_against, read_analysis
    from ..replay.html import render_html

    output_file(args.output, "--output")
    if args.analysis is not None:
        input_kind(args.analysis, ANALYSIS, "--analysis")
    replay = load(args, args.file)
    if replay is None:
        return 1
    analysis = None
    source = args.analysis or analysis_path(args.file)
    if not args.no_analysis and (args.analysis is not None or source.exists()):
        try:
            analysis = read_analysis(source, args.file)
            check_against(analysis, replay)
        except AnalysisError as exc:
            _fail(args, f"{exc} (or draw the page without it: --no-analysis)")
            return 1
    page = render_html(replay, analysis)
    try:
        args.output.write_text(page, encoding="utf-8")
    except OSError as exc:
        _fail(args, f"cannot write {args.output}: {exc.strerror or exc}")
        return 1
    shown = f", the analysis of {len(analysis.points)} decisions" if analysis is not None else ""
    print(
        f"{args.output}: {len(replay.deals)} deals, "
        f"{sum(len(d.decisions) for d in replay.deals)} decisions{shown}"
    )
    if replay.problem is not None:
        _fail(args, f"{args.file}: drawn up to the problem: {replay.problem}")
        return 1
    return 0


# --------------------------------------------------------------------------- analyze


def _cmd_analyze(args: argparse.Namespace) -> int:
    from ..engine import Action
    from ..progress import Bar
    from ..replay.analysis import AnalysisError, analyse, analysis_path, tasks, write_analysis
    from ..replay.timeline import action_text

    output = args.output or analysis_path(args.file)
    output_file(output, "--output")
    replay = load(args, args.file)
    if replay is None:
        return 1
    check_position(args, replay, None, args.seat, None)
    suites.check_export_arguments(args)
    seats = [args.seat] if args.seat is not None else list(range(replay.seats))
    iterations = None if args.think_ms is not None else (args.iterations or DEFAULT_ITERATIONS)
    todo = tasks(replay, seats, args.seed, iterations, args.think_ms)
    jobs = min(args.jobs, max(1, len(todo)))
    start = time.perf_counter()
    try:
        with Bar("decisions", transient=True).start(len(todo)) as bar:
            analysis = analyse(
                replay,
                args.file,
                seats,
                seed=args.seed,
                iterations=iterations,
                think_ms=args.think_ms,
                jobs=jobs,
                advance=bar.advance,
                todo=todo,
            )
    except AnalysisError as exc:
        _fail(args, f"{args.file}: {exc}")
        return 1
    seconds = time.perf_counter() - start
    try:
        write_analysis(output, analysis)
    except OSError as exc:
        _fail(args, f"cannot write {output}: {exc.strerror or exc}")
        return 1
    budget = f"{iterations} iterations" if iterations is not None else f"{args.think_ms} ms"
    searched = sum(1 for p in analysis.points if not p.forced)
    print(
        f"{output}: {len(analysis.points)} decisions of seat{'s' if len(seats) > 1 else ''} "
        f"{', '.join(map(str, seats))} ({searched} searched, {budget} each, seed {args.seed}) "
        f"in {seconds:.1f} s, {jobs} process{'es' if jobs > 1 else ''}"
    )
    names = list(replay.header.get("seats", []))
    for seat in seats:
        mine = [p for p in analysis.points if p.seat == seat]
        name = f" ({names[seat]})" if seat < len(names) else ""
        total = analysis.total_loss(seat)
        print(f"seat {seat}{name}: {len(mine)} decisions, estimated loss {total:.2f} points in all")
        for p in analysis.costliest(seat):
            played, best = action_text(Action.parse(p.played)), action_text(Action.parse(p.best))
            print(
                f"  deal {p.deal}, step {p.step}: played {played} ({p.values[p.played]:+.2f}), "
                f"the search prefers {best} ({p.values[p.best]:+.2f}): loss {p.loss:.2f}"
            )
    if args.suite is not None and suites.export(args, replay, analysis):
        return 1
    if replay.problem is not None:
        _fail(args, f"{args.file}: analysed up to the problem: {replay.problem}")
        return 1
    return 0


# --------------------------------------------------------------------------- ask


def _cmd_ask(args: argparse.Namespace) -> int:
    import logging
    import shlex

    from ..conformance.ask import ask_bot, describe
    from ..logs import configure

    configure(logging.WARNING)  # the answer is the output; the server's own lines would bury it

    replay = load(args, args.file)
    if replay is None:
        return 1
    check_position(args, replay, args.deal, None, None)
    decisions = len(replay.deal(args.deal).decisions)
    if args.step >= decisions:
        held = f"decisions 0–{decisions - 1}" if decisions else "no decision"
        args.parser.error(f"--step {args.step}: deal {args.deal} has {held}")
    try:
        shlex.split(args.bot)
    except ValueError as exc:
        args.parser.error(f"--bot: {exc}")
    try:
        asked = ask_bot(replay, args.deal, args.step, args.bot, clock=not args.no_clock)
    except OSError as exc:
        _fail(args, f"cannot run the bot {args.bot!r}: {exc.strerror or exc}")
        return 1
    if args.json:
        print(json.dumps(asked.to_dict(), ensure_ascii=False))
    else:
        print("\n".join(describe(replay, asked, args.bot)))
    if asked.outcome != "answered":
        tail = asked.bot_output.strip().splitlines()[-5:]
        output = ("; its last output: " + " | ".join(tail)) if tail else ""
        _fail(args, f"the bot gave no legal answer ({asked.outcome}: {asked.detail}){output}")
        return 1
    return 0
