"""The `arena` command: simulate matches, score deal records, benchmark the engine.

Exit status: 0 on success, 1 for a bad input file (one line on stderr), 2 for a
wrong command line (argparse's usage message).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import random
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from arena import __version__
from arena.bench import bench_engine
from arena.engine import (
    ConfigError,
    DealResult,
    EngineError,
    Match,
    Variant,
    deal_record,
    find_variant,
    replay_record,
)
from arena.files import InputFileError, read_input_text


class CliError(Exception):
    """A user error that ends the command with exit status 1 and one line on stderr."""


# --------------------------------------------------------------------------- arguments


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number of seconds, got {text!r}")
    return value


def _add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, metavar="V", help="variant id, e.g. grosstarock, danish")
    parser.add_argument(
        "--option",
        action="append",
        type=_option,
        default=[],
        metavar="KEY=VALUE",
        help="variant option, repeatable (e.g. --option ladons=all_blanks)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Grosstarock Arena: rules engine tools for the Grosstarock family of tarot games.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    simulate = commands.add_parser(
        "simulate",
        help="play a match with uniformly random legal moves",
        description="Play one match of N dealer turns; every seat picks a uniformly random legal action.",
    )
    _add_variant_arguments(simulate)
    simulate.add_argument("--deals", required=True, type=_positive_int, metavar="N", help="dealer turns")
    simulate.add_argument("--seed", required=True, type=int, metavar="S", help="seed of deck and play")
    simulate.add_argument("--json", action="store_true", help="one JSON object per deal, one per line")
    simulate.add_argument(
        "--records", type=Path, metavar="DIR", help="write each deal's record to DIR/deal-NNNN.json"
    )
    simulate.set_defaults(run=_cmd_simulate, parser=simulate)

    score = commands.add_parser(
        "score",
        help="replay a deal record and print its result",
        description="Replay a deal record (see replays/FORMAT.md) through the engine and print the result.",
    )
    score.add_argument("file", type=Path, metavar="FILE", help="deal record (JSON)")
    score.add_argument("--json", action="store_true", help="print the result as one JSON line")
    score.set_defaults(run=_cmd_score, parser=score)

    bench = commands.add_parser("bench", help="measure throughput", description="Measure throughput.")
    targets = bench.add_subparsers(dest="target", metavar="TARGET", required=True)
    engine = targets.add_parser(
        "engine",
        help="random legal play through the engine API on one core",
        description="Random legal play through the public engine API, in a tight loop on one core.",
    )
    _add_variant_arguments(engine)
    engine.add_argument("--seconds", required=True, type=_seconds, metavar="S", help="how long to run")
    engine.add_argument("--seed", type=int, default=0, metavar="S", help="seed of decks and play")
    engine.add_argument("--json", action="store_true", help="print the measurement as JSON")
    engine.set_defaults(run=_cmd_bench_engine, parser=engine)
    server = targets.add_parser(
        "server",
        help="referee throughput against plain grpc.aio, and memory per idle bot",
        description="K concurrent matches with trivial bots in another process over real gRPC, against "
        "plain grpc.aio ping-pong with as many streams and the same message sizes; then the server's "
        "resident memory per connected idle bot.",
    )
    server.add_argument("--matches", type=_positive_int, default=16, metavar="K")
    server.add_argument("--seconds", type=_seconds, default=5.0, metavar="S")
    server.add_argument("--idle-bots", type=int, default=1000, metavar="N", help="0 skips the memory test")
    server.add_argument("--variant", default="grosstarock", metavar="V")
    server.add_argument("--json", action="store_true")
    server.set_defaults(run=_cmd_bench_server, parser=server)

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
    _add_variant_arguments(play)
    play.add_argument(
        "--deals", type=_positive_int, default=None, metavar="N", help="dealer turns (default: seats)"
    )
    play.add_argument("--seed", type=int, default=0, metavar="S")
    play.add_argument("--bot", action="append", default=[], metavar="CMD", help="bot command, once per seat")
    play.add_argument("--replay-dir", type=Path, default=Path("replays/matches"), metavar="DIR")
    play.add_argument("--per-decision-ms", type=_positive_int, default=10_000, metavar="MS")
    play.add_argument("--bank-ms", type=int, default=60_000, metavar="MS")
    play.add_argument("--increment-ms", type=int, default=0, metavar="MS")
    play.add_argument("--fault-policy", choices=("substitute", "forfeit"), default="substitute")
    play.add_argument("--json", action="store_true", help="print the result as one JSON object")
    play.set_defaults(run=_cmd_play, parser=play)

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands, targets)
    return parser


# Further commands live beside the code they drive; each module has
# `register(commands, bench_targets)` adding its subparsers (with `run` and `parser` defaults).
COMMAND_MODULES: tuple[str, ...] = (
    "arena.ladder.cli",
    "arena.conformance.cli",
    "arena.replay.cli",
    "arena.standing.cli",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CliError as exc:
        message = " ".join(str(exc).split())
        print(f"arena {args.command}: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the interpreter
        # from failing again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    return status


# --------------------------------------------------------------------------- shared


def _find_variant(args: argparse.Namespace) -> Variant:
    """Resolve --variant and --option; a bad name or option is a command-line error (exit 2)."""
    try:
        return find_variant(args.variant, dict(args.option))
    except ConfigError as exc:
        parser: argparse.ArgumentParser = args.parser
        parser.error(str(exc))


def _dump(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _brief(obj: Any, limit: int = 160) -> str:
    text = _dump(obj)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _deal_line(variant: str, deal: int, dealer: int, result: DealResult) -> dict[str, Any]:
    return {
        "variant": variant,
        "deal": deal,
        "dealer": dealer,
        "card_points": list(result.card_points),
        "deltas": list(result.deltas),
        "pots": dict(result.pots),
        "annulled": bool(result.annulled),
    }


def _num(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _signed(value: int) -> str:
    return f"{value:+d}" if value else "0"


def _row(values: Sequence[int | float], signed: bool = False) -> str:
    return " ".join((_signed(int(v)) if signed else _num(v)).rjust(4) for v in values)


def _pots_text(pots: dict[str, int], signed: bool = True) -> str:
    if not pots:
        return "-"
    return " ".join(f"{name}{_signed(v)}" if signed else f"{name}={v}" for name, v in pots.items())


# --------------------------------------------------------------------------- simulate


def _cmd_simulate(args: argparse.Namespace) -> int:
    variant = _find_variant(args)
    out = sys.stdout
    if args.records is not None:
        _make_dir(args.records)
    match = Match(variant, seed=args.seed, deals=args.deals, first_dealer=0)
    rng = random.Random(f"{args.seed}:play")
    choice = rng.choice
    if not args.json:
        _print_header(out, variant, args)
        if any(match.scores):
            print(
                f"{'antes':>11}  {'':{5 * variant.seats - 1}}  {'':{5 * variant.seats - 1}}  "
                f"{_row(match.scores)}  {_pots_text(match.pots, signed=False)}",
                file=out,
            )
    deal = 0
    while not match.is_over():
        state = match.start_deal()
        while not state.is_terminal():
            state.apply(choice(state.legal_actions()))
        if args.records is not None:
            _write_record(args.records / f"deal-{deal:04d}.json", deal_record(state, deal))
        result = match.finish_deal(state)
        line = _deal_line(variant.name, deal, state.dealer, result)
        line["scores"] = list(match.scores)
        if match.is_over():
            # The match pays each seat its pot share into its score (DK-POT-6, G-PAY-4).
            split = list(match.final_split())
            line["match_end"] = {"pot_split": split, "final_scores": list(match.scores)}
        if args.json:
            print(_dump(line), file=out)
        else:
            _print_row(out, line)
        deal += 1
    return 0


def _make_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create records directory {str(path)!r}: {exc.strerror or exc}") from None


def _write_record(path: Path, record: dict[str, Any]) -> None:
    try:
        path.write_text(_dump(record) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _print_header(out: TextIO, variant: Variant, args: argparse.Namespace) -> None:
    options = ", ".join(f"{k}={v}" for k, v in variant.options.items())
    print(f"{variant.name} ({options or 'no options'}), {args.deals} deals, seed {args.seed}", file=out)
    seats = variant.seats
    width = 5 * seats - 1
    print(
        f"{'deal':>4} {'dealer':>6}  {'card points':<{width}}  {'deltas':<{width}}  "
        f"{'scores':<{width}}  pots",
        file=out,
    )


def _print_row(out: TextIO, line: dict[str, Any]) -> None:
    note = "  (annulled)" if line["annulled"] else ""
    print(
        f"{line['deal']:>4} {line['dealer']:>6}  {_row(line['card_points'])}  "
        f"{_row(line['deltas'], signed=True)}  {_row(line['scores'])}  {_pots_text(line['pots'])}{note}",
        file=out,
    )
    end = line.get("match_end")
    if end is not None:
        print(f"pot split:    {_row(end['pot_split'])}", file=out)
        print(f"final scores: {_row(end['final_scores'])}", file=out)


# --------------------------------------------------------------------------- score


def _cmd_score(args: argparse.Namespace) -> int:
    path: Path = args.file
    record = _load_record(path)
    try:
        state = replay_record(record)
    except EngineError as exc:
        raise CliError(f"{path}: {exc}") from None
    if not state.is_terminal():
        raise CliError(f"{path}: the record ends after {len(state.history)} actions, before the deal is over")
    result = state.result()
    recorded = record.get("result")
    if recorded is not None:
        replayed = json.loads(json.dumps(result.to_dict()))
        differences = [
            f"{key}: recorded {_brief(recorded.get(key))}, replayed {_brief(replayed.get(key))}"
            for key in sorted(set(recorded) | set(replayed), key=_result_key_order)
            if recorded.get(key) != replayed.get(key)
        ]
        if differences:
            raise CliError(f"{path}: the recorded result differs from the replay: {'; '.join(differences)}")
    variant = str(record.get("variant"))
    deal = record.get("deal", 0)
    line = _deal_line(variant, deal if isinstance(deal, int) else 0, state.dealer, result)
    if args.json:
        print(_dump(line))
    else:
        _print_result(sys.stdout, line, result)
    return 0


def _result_key_order(key: str) -> tuple[int, str]:
    order = ("card_points", "deltas", "pots", "annulled", "ledger")
    return (order.index(key) if key in order else len(order), key)


def _load_record(path: Path) -> dict[str, Any]:
    try:
        text = read_input_text(path, "a deal record")
    except InputFileError as exc:
        raise CliError(str(exc)) from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(record, dict):
        raise CliError(f"{path}: a deal record must be a JSON object, got {type(record).__name__}")
    recorded = record.get("result")
    if recorded is not None and not isinstance(recorded, dict):
        raise CliError(f"{path}: 'result' must be a JSON object")
    return record


def _print_result(out: TextIO, line: dict[str, Any], result: DealResult) -> None:
    print(f"{line['variant']}, deal {line['deal']}, dealer {line['dealer']}", file=out)
    print(f"card points  {_row(line['card_points'])}", file=out)
    print(f"deltas       {_row(line['deltas'], signed=True)}", file=out)
    print(f"pots         {_pots_text(line['pots'])}", file=out)
    print(f"annulled     {'yes' if line['annulled'] else 'no'}", file=out)
    ledger = result.to_dict().get("ledger") or []
    if ledger:
        print("ledger", file=out)
        for entry in ledger:
            source, target = entry.get("from"), entry.get("to")
            payer = f"seat {source}" if isinstance(source, int) else str(source)
            payee = f"seat {target}" if isinstance(target, int) else str(target)
            rule = entry.get("rule", "")
            print(f"  {payer:>7} -> {payee:<7} {entry.get('amount'):>4}  {rule}", file=out)


# --------------------------------------------------------------------------- bench


def _cmd_bench_engine(args: argparse.Namespace) -> int:
    variant = _find_variant(args)
    measured = bench_engine(variant, args.seconds, seed=args.seed)
    if args.json:
        print(_dump(measured.to_dict()))
    else:
        options = ", ".join(f"{k}={v}" for k, v in measured.options.items())
        print(f"engine bench: {measured.variant} ({options or 'no options'})")
        print(f"deals          {measured.deals}")
        print(f"actions        {measured.actions}")
        print(f"seconds        {measured.seconds:.3f}")
        print(f"actions_per_s  {measured.actions_per_s:.0f}")
        print(f"deals_per_s    {measured.deals_per_s:.1f}")
    return 0


# --------------------------------------------------------------------------- serve and play


def _cmd_serve(args: argparse.Namespace) -> int:
    import trio

    from arena.logs import configure
    from arena.server.app import serve
    from arena.server.auth import load_operator_token
    from arena.standing.lobby import ArenaConfig
    from arena.standing.store import Store, StoreError

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
                        store=store,
                        arena=arena,
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

    from arena.logs import configure
    from arena.play import default_bots, play_match
    from arena.referee.runner import MatchConfig, TimeControl

    variant = _find_variant(args)
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
        print(_dump(summary))
    else:
        print(f"{variant.name}: match {runner.match_id}, {runner.termination}")
        for seat, name in enumerate(runner.config.seat_names):
            print(f"  seat {seat}  {runner.match.scores[seat]:>6}  faults {faults[seat]}  {name}")
        print(f"replay: {summary['replay']}")
    return 0 if runner.replay_path else 1


def _cmd_bench_server(args: argparse.Namespace) -> int:
    import logging

    from arena.bench_server import bench_server
    from arena.logs import configure

    configure(logging.WARNING)  # the numbers are the output
    _find_variant(argparse.Namespace(variant=args.variant, option=[], parser=args.parser))
    measured = bench_server(args.matches, args.seconds, args.idle_bots, args.variant)
    if args.json:
        print(_dump(measured.to_dict()))
    else:
        for key, value in measured.to_dict().items():
            print(f"{key:<22} {value}")
    return 0
