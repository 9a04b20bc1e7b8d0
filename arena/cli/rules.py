"""`arena simulate` and `arena score`: the rules engine from the command line."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..engine import DealResult, EngineError, Match, Variant, deal_record, replay_record
from ..files import DEAL_RECORD, InputFileError, json_error, read_input_text
from .common import CliError, add_variant_arguments, dump, input_kind, output_dir, positive_int, variant_of

if TYPE_CHECKING:
    from ..progress import Bar


def register(commands: Any) -> None:
    simulate = commands.add_parser(
        "simulate",
        help="play a match with uniformly random legal moves",
        description="Play one match of N dealer turns; every seat picks a uniformly random legal action.",
    )
    add_variant_arguments(simulate)
    simulate.add_argument("--deals", required=True, type=positive_int, metavar="N", help="dealer turns")
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


# --------------------------------------------------------------------------- shared


def _brief(obj: Any, limit: int = 160) -> str:
    text = dump(obj)
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
    from ..progress import Bar

    variant = variant_of(args)
    # On a terminal, a bar on stderr while the deals are played; stdout is as without it.
    with Bar("deals", transient=True).start(args.deals) as bar:
        return _simulate(args, variant, sys.stdout, bar)


def _simulate(args: argparse.Namespace, variant: Variant, out: TextIO, bar: Bar) -> int:
    if args.records is not None:
        output_dir(args.records, "--records")
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
            print(dump(line), file=out)
        else:
            _print_row(out, line)
        deal += 1
        bar.advance(done=match.turns_done)
    return 0


def _write_record(path: Path, record: dict[str, Any]) -> None:
    try:
        path.write_text(dump(record) + "\n", encoding="utf-8")
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
        print(dump(line))
    else:
        _print_result(sys.stdout, line, result)
    return 0


def _result_key_order(key: str) -> tuple[int, str]:
    order = ("card_points", "deltas", "pots", "annulled", "ledger")
    return (order.index(key) if key in order else len(order), key)


def _load_record(path: Path) -> dict[str, Any]:
    input_kind(path, DEAL_RECORD)
    try:
        text = read_input_text(path, "a deal record")
    except InputFileError as exc:
        raise CliError(str(exc)) from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: not a deal record: invalid JSON ({json_error(exc)})") from None
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
